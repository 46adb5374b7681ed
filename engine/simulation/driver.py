"""The simulation driver: one model, one current integrator and step, advanced in
chunks by the compiled loop, with recording, scheme/step changes between chunks and
blow-up detection that keeps the last good state.  Its event-driven part, its saved
states and its failure reports are the mixins of :mod:`.events`, :mod:`.resume` and
:mod:`.guards` (issue #34).

>>> from engine.scenarios import load_scenario
>>> sim = Simulation(load_scenario("pendulum").build_model(), "rrp-exact", h=1e-2)
>>> report = sim.advance(1000)
>>> report.ok, round(sim.t, 6)
(True, 10.0)
"""

from __future__ import annotations

import math
import time
from dataclasses import replace

import numpy as np

from ..contact import grown_contact_work
from ..diagnostics import energy_scale, momentum_scales, rotational_energy, spin_momentum
from ..forcefield import ForceField, compute_forces_ws, new_scratch
from ..integrators.advance import advance_ws as _advance_kernel
from ..integrators.advance import loop_kernel, needs_scratch, new_state_buffer, new_work
from ..integrators.registry import IntegratorInfo, get_integrator
from ..interpreted import interpreted, twin_calls
from ..layout import (
    BONDS_BREAK,
    E_ROTATIONAL,
    E_TRANSLATIONAL,
    ERR_HISTORY_OVERFLOW,
    ERR_NEIGHBOUR_OVERFLOW,
    IP_CONTACT_MAX_IT,
    IP_CONTACT_TOL,
    IP_PHI,
    IP_TOL,
    N_ENERGY,
    OK,
)
from ..models.base import Model
from ..neighbours import forget_grid
from ..rotations import quat_to_matrix
from ..solver_counts import contact_stats, iteration_stats
from ..stability import StabilityEstimate, accuracy_guide, estimate_stability, stiffness_energy
from ..state import State
from .breaking import BreakingMixin
from .choice import SimulationError, check_count, check_fraction, check_step, integrator_for
from .events import _EVENT_KERNELS_BUILT, EventDrivenMixin
from .guards import DEFAULT_ENERGY_TOLERANCE, GuardsMixin, _check_start
from .records import Event, Snapshot, StepReport, TimeSeries
from .resume import ResumeMixin
from .stages import StagesMixin


class Simulation(EventDrivenMixin, ResumeMixin, GuardsMixin, StagesMixin, BreakingMixin):
    """Drive ``model`` with the named integrator and step ``h``.

    ``record_every``: record a row of the time series every that many steps (and a
    frame of all bodies if ``record_frames``).  ``record_state``: the frames also hold
    ``v`` and ``Π`` (and the node of a generalized model), so that a run can be started
    from any of them (:meth:`from_frame`; the compiled loop records them with the frame).
    ``energy_tolerance``: relative energy
    error beyond which a step counts as a blow-up (``None``: only non-finite values do).

    A model in generalized coordinates (``model.coordinates == "generalized"``, the
    spring pendulum) is driven by :class:`engine.generalized.simulation.
    GeneralizedSimulation`, a subclass with the same interface; a caller that may hold
    either kind makes its simulation with :func:`engine.drivers.simulation_for` (a
    factory, issue #34), and ``Simulation(model, …)`` of such a model is refused.

    **Event-driven schemes** (``energy-stepping[:REL]``, physics.md §3.10): ``h`` is the
    recording interval, not a step.  Each "step" advances an
    ``engine.energy_stepping.EnergyStepper`` (made from the current ``(x, v, q, Ω)`` when
    the scheme is chosen, with ``ε = REL × e_scale``, and kept while it stays) to
    ``t + h``; the bodies are read there on their flights (each from its own clock, the
    stepper untouched), so a record is the exact motion of ``T − V_ε`` at ``t = k h``
    (energies, ``P``, ``L`` from that state as for any scheme), with the column
    ``terrace_gap`` (``V − V_ε``).  Neither the chunking of :meth:`advance` nor ``h``
    shows in the events: the same run gives the same bits at the times two ``h`` share
    (issue #33 item 1).  :attr:`stop_check` can end :meth:`advance` between compiled
    calls (within about 0.1 s, issue #33 item 4).  A switch away drops the stepper, the
    state carrying over as for any switch (the state read at ``t``).
    :meth:`checkpoint` and :meth:`resume_state` save the stepper itself
    (``EnergyStepper.export_state``: the bodies with their clocks, every term's terrace
    and predicted crossing, the contact list), and :meth:`restore` and a resume
    (:meth:`from_resume_state`) go on from it **bit for bit**, as an unbroken run.  After
    a failure, or from a frame (a branch: frames hold no stepper), the next step makes a
    new one from the kept state, its terraces placed anew (the exact motion of a new
    terraced potential; ``|E − E₀|`` may then grow by up to ``ε`` per term).  No stability
    limit, no energy tolerance check (the error is bounded by ``ε`` per term);
    :meth:`event_stats` counts the events.
    """

    COORDINATES = "bodies"
    """The kind of model this driver drives (``model.coordinates``)."""

    def __init__(self, model: Model, integrator: str = "rrp-newmark", h: float = 1e-3, *,
                 record_every: int = 1, record_frames: bool = True,
                 energy_tolerance: float | None = DEFAULT_ENERGY_TOLERANCE,
                 state: State | None = None, record_state: bool = False) -> None:
        coordinates = getattr(model, "coordinates", "bodies")
        if coordinates != self.COORDINATES:
            raise SimulationError(f"model {model.name!r} is in {coordinates} coordinates: "
                                  "make its simulation with engine.simulation_for(model, "
                                  "…), which picks its driver")
        self._init_settings(model, record_every, record_frames, energy_tolerance,
                            record_state)
        self.ff: ForceField = model.forcefield.working_copy()
        self.ff.invalidate_neighbours()
        self._init_breaking()  # (the bonds held: all of the model's, issue #44 item 2)
        st = (state or model.initial_state).copy()
        n = st.n
        pi = st.aux.get("pi")
        self._s0 = new_state_buffer(st.x, st.v, st.q, st.omega,
                                    pi if pi is not None and pi.shape == (n, 3) else None)
        self._s1 = tuple(a.copy() for a in self._s0)
        if self.ff.has_history:  # friction springs from zero, anchored at the start
            self.ff.reset_history(self._s0[0], self._s0[2])
        hard = getattr(model, "contact", "none") == "hard"
        # the percussion work arrays (≈ 4 kB a sphere) only where percussions are solved
        # (the per-body scratch of RK4, Yoshida and the Moreau schemes, ≈ 280 bytes a
        # body, is allocated when such a scheme first steps: _ensure_scratch)
        self._work = new_work(n, n_pairs_capacity=self.ff.nl_pairs.shape[0] if hard else 0,
                              n_walls=self.ff.n_walls if hard else 0, scratch=False)
        self._info = np.zeros(4)
        self._ws: tuple = ()
        self._ws_key: tuple = ()
        self.aux = {"pi": self._s0[7]}
        """Per-scheme state: the body angular momentum ``Π`` (a view of the buffer)."""
        if pi is None or pi.shape != (n, 3):
            self._sync_momentum()
        self._init_clock()
        # (the first stage's fields; a fresh run checks the durations: issue #44 item 5)
        self._init_stages(check_step(h), strict=state is None)
        with np.errstate(over="ignore", invalid="ignore"):  # (_check_start names it)
            self._evaluate_forces()
        e0 = self._s0[6]
        _check_start(self._s0, e0)
        self.e_ref = float(e0.sum())
        self.e_scale = self._energy_scale_of(e0)
        self.p_scale, self.l_scale = momentum_scales(self.ff.m, self.ff.J, st.x, st.v, st.omega,
                                                     st.q, self._tensors)
        self.series = TimeSeries(n, self.record_frames)
        self._integrator: IntegratorInfo = self._check_integrator(integrator)
        self.h = self._check_h(h, self._integrator)
        if self._integrator.event_driven:
            self._start_stepper()
        self._record_now()

    def _init_settings(self, model: Model, record_every: int, record_frames: bool,
                       energy_tolerance: float | None, record_state: bool) -> None:
        """The model and the recording settings (the constructor's arguments; both
        drivers, issue #34)."""
        self.model = model
        self.record_state = bool(record_state)
        if int(record_every) < 1:
            raise SimulationError(f"record_every must be a positive integer, got {record_every}")
        self.record_every = int(record_every)
        self.record_frames = bool(record_frames)
        self.energy_tolerance = energy_tolerance
        self.kernels = "compiled"
        """How the stepping loop runs: ``"compiled"`` (Numba's machine code; within
        ``engine.interpreted.interpret_while_cold``, its uncompiled twin until the disk
        cache holds the code, as on a cold start) or ``"interpreted"`` (always the twin:
        ``engine.interpreted``).  The same bits either way, so it may change between any
        two calls of :meth:`advance` (issue #45)."""
        self.stepped_by = ""
        """Which implementation took the last chunk's steps: ``"compiled"`` or
        ``"interpreted"`` (the twin: a cold start's first seconds)."""
        self.t_end = math.inf
        """Where the run is meant to end (``rrp run`` sets it; the app runs until paused):
        the stability estimate counts the wall impacts free flight reaches before it."""

    def _init_clock(self) -> None:
        """The clock at 0, no events, no kernel time yet (both drivers)."""
        self.t = 0.0
        self.step_index = 0
        self._t_base, self._step_base = 0.0, 0  # t = t_base + (step - step_base) h
        self.events: list[Event] = []
        self.kernel_seconds = 0.0
        self.kernel_cpu_seconds = 0.0
        """The stepping thread's own CPU time in the compiled calls (``time.thread_time``;
        issue #36 item 15: unlike :attr:`kernel_seconds`, the wall-clock time, it does not
        grow when another thread, a run file's writer, takes the core meanwhile; with the
        parallel kernels it is this thread's share only)."""
        self.kernel_steps = 0
        self.interpreted_steps = 0
        """The steps the loop's uncompiled twin took (:attr:`kernels`, issue #45)."""

    # ------------------------------------------------------------------ properties
    @property
    def integrator(self) -> IntegratorInfo:
        return self._integrator

    @property
    def _tensors(self) -> np.ndarray | None:
        return None if self.ff.spherical else self.ff.inertia

    @property
    def _statistics(self) -> np.ndarray:
        """The kernels' statistics (``layout.IS_*``), which they add to."""
        return self._work[6]

    @property
    def iteration_stats(self) -> dict[str, float]:
        """Iterations of the implicit schemes since the start (or the last
        :meth:`reset_iteration_stats`): ``solves`` (Newton: body-steps; fixed point:
        steps; a generalized model: steps of its smooth solves), ``iterations`` (total),
        ``mean`` and ``max`` per solve."""
        return iteration_stats(self._statistics)

    def reset_iteration_stats(self) -> None:
        self._statistics[:] = 0.0

    @property
    def contact_stats(self) -> dict[str, float]:
        """Hard contacts (Moreau-type schemes) since the start: active ``contacts`` and
        ``percussions`` (``P_N > 0``) in the last step, ``impacts`` (contact-steps with
        ``P_N > 0``, in total), the percussion solver's ``solves``, ``iterations``
        (sweeps), ``mean`` and ``max_iterations``, and the largest ``penetration``
        ``−g_N`` seen."""
        return contact_stats(self._work[6])

    @property
    def contact_tolerance(self) -> float:
        """Percussion solver: tolerance on the relative change of the percussions in a
        Gauss–Seidel sweep."""
        return float(self._work[5][IP_CONTACT_TOL])

    @contact_tolerance.setter
    def contact_tolerance(self, tol: float) -> None:
        self._work[5][IP_CONTACT_TOL] = check_fraction(tol, "contact tolerance", "1e-12")

    @property
    def contact_max_iterations(self) -> int:
        """Percussion solver: the sweep limit (non-convergence ends the run)."""
        return int(self._work[5][IP_CONTACT_MAX_IT])

    @contact_max_iterations.setter
    def contact_max_iterations(self, n: int) -> None:
        self._work[5][IP_CONTACT_MAX_IT] = check_count(n, "contact iteration limit")

    @property
    def tolerance(self) -> float:
        """Tolerance of the implicit schemes on the relative size of the update."""
        return float(self._work[5][IP_TOL])

    @tolerance.setter
    def tolerance(self, tol: float) -> None:
        self._work[5][IP_TOL] = check_fraction(tol, "iteration tolerance", "1e-14")

    @property
    def state(self) -> State:
        """The current physical state (views: copy before keeping)."""
        x, v, q, o = self._s0[:4]
        return State(x, v, q, o, self.aux)

    @property
    def energy(self) -> np.ndarray:
        """Current energy components (``layout.ENERGY_NAMES`` order), a copy."""
        return self._s0[6].copy()

    @property
    def relative_energy_error(self) -> float:
        return (float(self._s0[6].sum()) - self.e_ref) / self.e_scale

    # ------------------------------------------------------------------ control
    def set_integrator(self, name: str) -> None:
        """Switch scheme at the current step; the physical state ``(x, v, q, Ω)`` carries
        over unchanged (every registered scheme keeps exactly these variables).  To an
        event-driven scheme: its stepper starts from this state (refused in one line,
        nothing changed, if it cannot drive the model); away from one: it is dropped."""
        info = self._check_integrator(name)
        self._check_h(self.h, info)
        if info.name != self._integrator.name:
            stepper = self._new_stepper(info) if info.event_driven else None
            self._drop_stepper()
            self._es_saved = None
            self.events.append(Event(self.step_index, self.t, "integrator",
                                     self._integrator.name, info.name))
            if info.keeps_momentum and not self._integrator.keeps_momentum:
                self._sync_momentum()
            self._integrator = info
            if stepper is not None:
                self._use_stepper(stepper)

    def set_h(self, h: float) -> None:
        """Change the step at the current step (validated; the state is untouched)."""
        h = self._check_h(h, self._integrator)
        if h != self.h:
            self.events.append(Event(self.step_index, self.t, "h", repr(float(self.h)),
                                     repr(float(h))))  # (exact: an export re-runs it)
            self.h = h
            self._t_base, self._step_base = self.t, self.step_index
            self._stage_after_h()  # (a stage's end is a time: issue #44 item 5)
            if self._stepper is not None and self._stepper.stopped_on_its_way:
                # (its events went on past t towards the old t + h: new terraces from
                # the state at t, the next step)
                self._drop_stepper()

    def warm_up(self) -> None:
        """Compile (or load from the disk cache) the kernels without taking a step, and
        the attitude kernel the views draw snapshots with (so none compiles on a GUI
        thread)."""
        if self._integrator.event_driven:
            self._prime_event_kernels(self._integrator)
        else:
            self._call_kernel(0)
        self.stability()
        quat_to_matrix(self._s0[2][:1])

    def kernels_cached(self, integrator: str) -> bool:
        """Whether the stepping loop of ``integrator`` for this model's terms is compiled
        in this process or in the disk cache (then a switch to it is instant; else
        :meth:`build_kernels` takes seconds: issue #25).  An event-driven scheme: whether
        its kernels ran on this model in this process."""
        info = get_integrator(integrator)
        if info.event_driven:
            return self.model.name in _EVENT_KERNELS_BUILT
        from ..priming import run_kernels_cached

        return run_kernels_cached(info.scheme_id, self.ff.arrays[-1])

    def build_kernels(self, integrator: str) -> None:
        """Compile (or load) the stepping loop of ``integrator`` for this model's terms,
        without switching to it or touching the state (the app does this in its worker
        before a switch, saying so).  An event-driven scheme: a stepper on a copy of the
        state takes a tiny advance (:class:`SimulationError` if it cannot drive the
        model)."""
        info = get_integrator(integrator)
        if info.event_driven:
            self._prime_event_kernels(info)
            return
        from ..integrators.advance import prime_kernels

        prime_kernels(info.scheme_id, self.ff.arrays[-1])


    def advance(self, n_steps: int) -> StepReport:
        """Take up to ``n_steps`` steps.  On a blow-up or an inadmissible step the state
        is the last good one and the report carries a :class:`Failure`.  With stages,
        each is entered at its first step (:mod:`.stages`)."""
        n_steps = int(n_steps)
        if self.stages:
            return self._advance_staged(n_steps)
        return self._advance_steps(n_steps)

    def _advance_steps(self, n_steps: int) -> StepReport:
        """:meth:`advance` within a stage (or a run without stages)."""
        if self._integrator.event_driven:
            return self._advance_events(n_steps)
        done_total = 0
        while done_total < n_steps:
            done, status = self._call_kernel(n_steps - done_total)
            done_total += done
            if status == ERR_NEIGHBOUR_OVERFLOW:
                self._grow_neighbour_list()
                self._evaluate_forces()
                continue
            if status == ERR_HISTORY_OVERFLOW:  # (the step is taken again from s0)
                self.ff.grow_history()
                continue
            if status == BONDS_BREAK:  # (between this step and the next: .breaking)
                self._break_bonds()
                continue
            if status != OK:
                return StepReport(done_total, self._failure(status))
        return StepReport(done_total)

    def run_until(self, t_end: float, chunk: int = 1000, callback=None) -> StepReport:
        """Advance until ``t ≥ t_end`` (to within a step), in chunks; ``callback(sim)``
        after each chunk may return True to stop early."""
        total = 0
        while self.t < t_end - 1e-9 * max(1.0, abs(t_end)):
            n = min(chunk, max(1, int(math.ceil((t_end - self.t) / self.h - 1e-9))))
            rep = self.advance(n)
            total += rep.steps
            if not rep.ok:
                return StepReport(total, rep.failure)
            if callback is not None and callback(self):
                break
        return StepReport(total)

    def _momenta(self) -> tuple[np.ndarray, np.ndarray]:
        """``P`` and ``L`` (about the origin) of the current state."""
        x, v, q, o = self._s0[:4]
        m, J = self.ff.m, self.ff.J
        P = np.einsum("n,nk->k", m, v)
        L = np.cross(x, m[:, None] * v).sum(axis=0) + spin_momentum(J, o, q, self._tensors).sum(
            axis=0)
        return P, L

    def snapshot(self) -> Snapshot:
        x, v, q, o, F, RM, e = self._s0[:7]
        P, L = self._momenta()
        return Snapshot(self.t, self.step_index, self._integrator.name, self.h, x.copy(),
                        v.copy(), q.copy(), o.copy(), e.copy(), P, L)

    def stability(self) -> StabilityEstimate:
        """Largest stable ``h`` for the current state and the wall impacts to come before
        :attr:`t_end` (:mod:`engine.stability`), with the accuracy guide ``h_accurate``
        (≈ 1 % energy error) of the model's calibration.
        An event-driven scheme has no step limit (``h_stable = inf``) and reports its
        events per unit time instead (``events_per_time``)."""
        if self._integrator.event_driven:
            return StabilityEstimate(math.inf, 0.0, "none", -1, math.inf, math.inf,
                                     events_per_time=self.event_stats()["events_per_time"])
        x, v, q, o = self._s0[:4]
        est = estimate_stability(x, v, q, o, self.ff.arrays, self.t_end - self.t)
        guide = accuracy_guide(est.omega_max, self.model.accuracy_c, h_stable=est.h_stable)
        return replace(est, h_accurate=guide)

    def accuracy_guide(self, level: float = 0.01) -> float:
        """The ``h`` for a relative energy error of about ``level`` at the current state
        (:func:`engine.stability.accuracy_guide`; ``inf`` when the model has no guide)."""
        est = self.stability()
        return accuracy_guide(est.omega_max, self.model.accuracy_c, level, est.h_stable)

    def rrp_exact_limit(self, h: float | None = None) -> tuple[float, int, float]:
        """For ``rrp-exact`` at the current state: the largest admissible ``h`` (the
        smallest root of ``h|Ω + h RM/(2J)| = 1`` over bodies, B&G eq. (16)), that body,
        and the body with the largest ``h|w|`` at the step ``h`` (default: the current
        one), and that ``h|w|``."""
        h = self.h if h is None else h
        x, v, q, o, F, RM, e = self._s0[:7]
        a = RM / (2.0 * self.ff.J[:, None])
        hw = h * np.linalg.norm(o + h * a, axis=1)
        best = math.inf
        for i in range(o.shape[0]):
            c4 = float(a[i] @ a[i])
            c3 = 2.0 * float(o[i] @ a[i])
            c2 = float(o[i] @ o[i])
            # in u = σ h, σ the largest of the coefficients' scales (the root is then
            # u = O(1), and a term below 1e-15 cannot move it): a fast spin (|Ω| = 1e30)
            # left the companion matrix too ill-conditioned to find it ("≈ inf")
            sigma = max(math.sqrt(c2), math.sqrt(math.sqrt(c4)), abs(c3) ** (1.0 / 3.0))
            cu = [c / sigma**k for c, k in ((c4, 4), (c3, 3), (c2, 2))] if sigma else []
            cu = [c if abs(c) > 1e-15 else 0.0 for c in cu]
            roots = np.roots([*cu, 0.0, -1.0]) / sigma if any(cu) else []
            pos = [r.real for r in roots if abs(r.imag) < 1e-12 * max(1, abs(r)) and r.real > 0]
            if pos and min(pos) < best:
                best = min(pos)
        body = int(np.argmax(hw)) if hw.size else -1
        return best, body, float(hw.max(initial=0.0))

    def check_integrator(self, name: str) -> IntegratorInfo:
        """The registry entry of ``name`` if it can drive this model at the current ``h``;
        otherwise :class:`SimulationError` (one line: the problem and the fix)."""
        info = self._check_integrator(name)
        self._check_h(self.h, info)
        return info

    def check_h(self, h: float, integrator: str | None = None) -> float:
        """``h`` as a float if it is admissible here (for ``integrator``, default the
        current one); otherwise :class:`SimulationError`.  Changes nothing."""
        info = self._integrator if integrator is None else self._check_integrator(integrator)
        return self._check_h(h, info)


    def set_record_state(self, on: bool = True) -> None:
        """Record (or stop recording) the full state with every frame (see
        ``record_state``); turned on at the step of the last record, that record gets the
        state too (a writer created right after the simulation keeps a complete t = 0)."""
        self.record_state = bool(on)
        ser = self.series
        if on and self.record_frames and ser._extra:
            last = ser._extra[-1]
            if "v" not in last and len(ser._chunks[-1][0]) == 1 and \
                    int(last.get("step", [-1])[-1]) == self.step_index:
                last.update(self._state_row())
                self._keep_springs(ser.n - 1)
                ser._cache = None

    def _check_integrator(self, name: str) -> IntegratorInfo:
        return integrator_for(self.model, name)

    def _check_h(self, h: float, info: IntegratorInfo) -> float:
        h = check_step(h)
        if info.name == "rrp-exact":
            h_max, body, hw = self.rrp_exact_limit(h)
            if hw >= 1.0:
                raise SimulationError(
                    f"h = {h:g} is beyond rrp-exact's limit: body {body} would have "
                    f"h|w| = {hw:.3g} ≥ 1; the largest admissible h is ≈ {h_max:.3g} "
                    "(or use rrp-newmark, which has no such limit)")
        return h

    def _sync_momentum(self) -> None:
        """``Π = 𝕁 Rᵀ Ω`` from the physical state (when a scheme that keeps ``Π`` takes
        over)."""
        x, v, q, o = self._s0[:4]
        R = quat_to_matrix(q)
        self._s0[7][...] = np.einsum("nij,nkj,nk->ni", self.ff.inertia, R, o)

    def _grow_neighbour_list(self) -> None:
        """Double the neighbour list, and the contact arrays sized from it (with the
        percussions' warm starts: growing the list changes no step)."""
        self.ff.grow_neighbour_list()
        if self.model.contact == "hard":
            self._work = (*self._work[:7],
                          grown_contact_work(self._work[7], self.ff.n_bodies,
                                             self.ff.nl_pairs.shape[0], self.ff.n_walls))

    def _ensure_scratch(self) -> None:
        """Allocate the per-body scratch of ``work`` if the current scheme uses it."""
        n = self.ff.n_bodies
        if needs_scratch(self._integrator.scheme_id) and self._work[0].shape[0] != n:
            full = new_work(n, scratch=True, n_pairs_capacity=0, n_walls=0)
            self._work = (*full[:5], *self._work[5:])

    def _energy_scale_of(self, e: np.ndarray) -> float:
        """:func:`engine.diagnostics.energy_scale` of the energy components ``e`` of the
        current state (forces evaluated: the neighbour list is current), with the
        model's stiffness energy where the state is at rest (no kinetic energy: ``E₀``
        may then be round-off alone, issue #42 item 1)."""
        at_rest = e[E_TRANSLATIONAL] == 0.0 and e[E_ROTATIONAL] == 0.0
        x, v, q, o = self._s0[:4]
        return energy_scale(e, stiffness_energy(x, v, q, o, self.ff.arrays) if at_rest
                            else 0.0)

    def _evaluate_forces(self) -> None:
        x, v, q, o, F, RM, e = self._s0[:7]
        self.ff.set_field_time(self.t)  # (a time-dependent field: issue #44 item 3)
        while True:
            ff = self.ff.arrays  # (the kernel the loop inlines: nothing more to compile)
            st = compute_forces_ws(x, q, ff, F, RM, e, self._scratch(ff))
            if st == ERR_NEIGHBOUR_OVERFLOW:
                self.ff.grow_neighbour_list()
                continue
            if st == ERR_HISTORY_OVERFLOW:
                self.ff.grow_history()
                continue
            break
        if st != OK:
            raise SimulationError("the state has non-finite positions")
        e[0] = 0.5 * float(np.sum(self.ff.m * np.sum(v * v, axis=1)))
        e[1] = rotational_energy(self.ff.J, o, q, self._tensors)

    def _stops_at_records(self) -> bool:
        """Whether, recording the state with the frames, the compiled loop is called up
        to each record in turn, to keep what it does not write itself: for contacts with
        history, the forces and the committed friction springs."""
        return self.ff.has_history

    def _call_kernel(self, n: int) -> tuple[int, int]:
        """Run the compiled loop for up to ``n`` steps (up to each record in turn, see
        :meth:`_stops_at_records`: the result does not depend on the chunking)."""
        if not (self.record_state and self.record_frames and self._stops_at_records()) \
                or n <= 0:
            return self._call_kernel_chunk(n)
        total, status = 0, OK
        while total < n:
            to_record = self.record_every - self.step_index % self.record_every
            done, status = self._call_kernel_chunk(min(n - total, to_record))
            total += done
            if status != OK or done == 0:
                break
        return total, status

    def _scratch(self, ff: tuple) -> tuple:
        """The force field's scratch for the compiled loop (``engine.forcefield.
        new_scratch``), kept from call to call: made anew when the model's sizes change
        (a grown neighbour list), else with its headers cleared, so that the parallel
        kernels derive their pair runs, and the neighbour list its next update, from the
        list as it is now (it may have been replaced: a restore).  (Calling ``advance``
        instead, which allocates it, compiles one more level of the kernels' call tree:
        ≈ 50 s on a cold cache.)"""
        key = (ff[0].shape[0], ff[5].shape[0], ff[7].shape[0])
        if self._ws_key != key:
            self._ws = new_scratch(ff[0].shape[0], ff)
            self._ws_key = key
        else:
            self._ws[2][0][:] = 0
            forget_grid(self._ws[1], ff[0].shape[0])
        return self._ws

    def _state_row(self) -> dict[str, np.ndarray]:
        """The state columns of a record at the current step (see :class:`TimeSeries`)."""
        row = {"v": self._s0[1][None].copy(), "pi": self._s0[7][None].copy()}
        if self.ff.has_history:
            row.update(self._history_row())
        return row

    def _history_row(self) -> dict[str, np.ndarray]:
        """``F`` and ``RM`` at the current step, for a record of a model with history."""
        return {"force": self._s0[4][None].copy(), "moment": self._s0[5][None].copy()}

    def _keep_springs(self, row: int) -> None:
        """Keep the committed friction springs with record ``row`` (the current step)."""
        if self.ff.has_history:
            self.series.springs[row] = self.ff.committed_springs_sparse()

    def _records_ahead(self, n: int) -> tuple[int, int]:
        """The first of the next ``n`` steps and how many of them are recorded (both
        drivers' compiled calls)."""
        stride = self.record_every
        first = self.step_index + 1
        return first, (self.step_index + n) // stride - (first - 1) // stride

    def _after_kernel(self, n: int, done: int, t0: float, c0: float) -> None:
        """Count the compiled call (started at ``t0`` wall, ``c0`` this thread's CPU;
        ``done`` of ``n`` steps) and move the clock: ``t = t_base + (step − step_base) h``,
        whatever the chunking."""
        if n > 0:
            self.kernel_seconds += time.perf_counter() - t0
            self.kernel_cpu_seconds += time.thread_time() - c0
            self.kernel_steps += done
        if done:
            self.step_index += done
            self.t = self._t_base + (self.step_index - self._step_base) * self.h

    def _record_steps(self, first: int, nrec: int) -> tuple[np.ndarray, np.ndarray]:
        """The step indices and times of the ``nrec`` records of a call whose first step
        was ``first`` (times from step indices, so that they do not depend on the
        chunking)."""
        stride = self.record_every
        first_rec = ((first - 1) // stride + 1) * stride
        steps = first_rec + stride * np.arange(nrec)
        return steps, self._t_base + (steps - self._step_base) * self.h

    def _call_kernel_chunk(self, n: int) -> tuple[int, int]:
        first, n_rec = self._records_ahead(n)
        nb = self.ff.n_bodies
        nf = n_rec if self.record_frames else 0
        ns = nf if self.record_state else 0
        rec = (np.empty(n_rec), np.empty((n_rec, N_ENERGY)), np.empty((n_rec, 3)),
               np.empty((n_rec, 3)), np.empty((nf, nb, 3)), np.empty((nf, nb, 4)),
               np.empty((nf, nb, 3)), np.empty((ns, nb, 3)), np.empty((ns, nb, 3)))
        tol = self.energy_tolerance if self.energy_tolerance is not None else 0.0
        e_ctrl = np.array([self.e_ref, self.e_scale, tol])
        self._work[5][IP_PHI] = self._integrator.phi
        if not self._integrator.keeps_momentum:
            # Π is not this scheme's: it stays the last value kept (docs/output.md) in both
            # buffers, which the steps swap, so that the chunking does not show in it
            self._s1[7][...] = self._s0[7]
        self._ensure_scratch()
        t0, c0 = time.perf_counter(), time.thread_time()
        ff = self.ff.arrays
        done, nrec, status = self._stepping_loop(
            n, self.h, self.t, self.step_index, self.record_every,
            self._s0, self._s1, ff, self._work, e_ctrl, rec, self.record_frames,
            self._info, self._scratch(ff))
        self._after_kernel(n, done, t0, c0)
        if self.stepped_by == "interpreted":
            self.interpreted_steps += done
        r = slice(0, nrec)
        steps, times = self._record_steps(first, nrec)
        extra = {"step": steps}
        state = self.record_state and self.record_frames
        if state:
            extra.update({"v": rec[7][r], "pi": rec[8][r]})
            if self.ff.has_history and nrec:  # (one record, at the last step: _call_kernel)
                extra.update(self._history_row())
        self.series.append(times, rec[1][r], rec[2][r], rec[3][r], rec[4][r], rec[5][r],
                           rec[6][r], **extra)
        if state and nrec:
            self._keep_springs(self.series.n - 1)
        return done, status

    def _stepping_loop(self, *args) -> tuple[int, int, int]:
        """The stepping loop of the current scheme on ``args`` (after the scheme: see
        ``engine.integrators.advance.advance_ws``), compiled or its twin
        (:attr:`kernels`), noting which ran in :attr:`stepped_by`."""
        scheme = self._integrator.scheme_id
        if self.kernels == "interpreted":
            self.stepped_by = "interpreted"
            return interpreted(loop_kernel(scheme))(*args)
        before = twin_calls()
        out = _advance_kernel(scheme, *args)
        self.stepped_by = "interpreted" if twin_calls() != before else "compiled"
        return out

    def _record_now(self) -> None:
        snap = self.snapshot()
        state = self.record_state and self.record_frames
        extra = self._state_row() if state else {}
        if self._stepper is not None:
            extra["terrace_gap"] = np.array([self._stepper.terrace_gap(self._s0[:4])])
        self.series.append(np.array([self.t]), snap.energy[None], snap.P[None], snap.L[None],
                           snap.x[None], snap.q[None], snap.omega[None],
                           step=np.array([self.step_index]), **extra)
        if state:
            self._keep_springs(self.series.n - 1)
