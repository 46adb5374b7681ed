"""The simulation driver: one model, one current integrator and step, advanced in
chunks by the compiled loop, with recording, scheme/step changes between chunks and
blow-up detection that keeps the last good state.

>>> from engine.scenarios import load_scenario
>>> sim = Simulation(load_scenario("pendulum").build_model(), "rrp-exact", h=1e-2)
>>> report = sim.advance(1000)
>>> report.ok, round(sim.t, 6)
(True, 10.0)
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace

import numpy as np

from .contact import grown_contact_work
from .diagnostics import energy_scale, momentum_scales, rotational_energy, spin_momentum
from .forcefield import ForceField, compute_forces_ws, new_scratch
from .integrators.advance import advance_ws as _advance_kernel
from .integrators.advance import needs_scratch, new_state_buffer, new_work
from .integrators.registry import (
    DEFAULT_EPS_REL,
    ENERGY_STEPPING,
    INTEGRATORS,
    IntegratorInfo,
    energy_stepping_name,
    get_integrator,
)
from .layout import (
    ENERGY_NAMES,
    ERR_CONTACT,
    ERR_ENERGY,
    ERR_HISTORY_OVERFLOW,
    ERR_NEIGHBOUR_OVERFLOW,
    ERR_NO_CONVERGENCE,
    ERR_NONFINITE,
    ERR_RRP_LIMIT,
    IP_CONTACT_MAX_IT,
    IP_CONTACT_TOL,
    IP_PHI,
    IP_TOL,
    IS_CONTACT_ITERATIONS,
    IS_CONTACT_MAX,
    IS_CONTACT_SOLVES,
    IS_CONTACTS,
    IS_IMPACTS,
    IS_ITERATIONS,
    IS_MAX,
    IS_PENETRATION,
    IS_PERCUSSIONS,
    IS_SOLVES,
    N_ENERGY,
    NL_COUNT,
    OK,
)
from .models.base import Model
from .neighbours import forget_grid
from .rotations import quat_to_matrix
from .stability import StabilityEstimate, accuracy_guide, estimate_stability
from .state import State

H_MAX = 1.0
"""Largest step the driver accepts at all (every model here has time scales ≲ 1)."""

DEFAULT_ENERGY_TOLERANCE = 1.0
"""A relative energy error beyond this (100 %) counts as a blow-up."""


def _saved_pairs(d: dict) -> np.ndarray:
    """The neighbour list of a saved state (:meth:`Simulation.resume_state`): format 2
    keeps the used pairs and the capacity, format 1 the whole table."""
    pairs = np.ascontiguousarray(d["nl_pairs"], dtype=np.int64).reshape(-1, 2)
    capacity = int(d.get("nl_capacity", pairs.shape[0]))
    if capacity <= pairs.shape[0]:
        return pairs
    full = np.zeros((capacity, 2), dtype=np.int64)
    full[:pairs.shape[0]] = pairs
    return full


ES_STATE_PREFIX = "es_state_"
"""Keys of :meth:`Simulation.resume_state` holding the event-driven scheme's stepper."""


class SimulationError(ValueError):
    """Bad input to the driver (an unknown integrator, an inadmissible ``h``).  The
    message is one line that names the problem and the fix."""


def check_step(h: float) -> float:
    """``h`` as a float if it is a usable step for any model (positive, finite, at most
    :data:`H_MAX`); otherwise :class:`SimulationError`.  The state-dependent limits
    (``rrp-exact``'s ``h|w| < 1``) are :meth:`Simulation.check_h`'s."""
    try:
        h = float(h)
    except (TypeError, ValueError):
        raise SimulationError(f"h must be a number, got {h!r}") from None
    if not math.isfinite(h) or h <= 0.0:
        raise SimulationError(f"h must be a positive, finite time step, got {h:g}; "
                              "try e.g. h = 1e-3")
    if h > H_MAX:
        raise SimulationError(f"h = {h:g} is too large: the largest step accepted is "
                              f"{H_MAX:g}; try e.g. h = 1e-3")
    return h


def integrator_for(model: Model, name: str) -> IntegratorInfo:
    """The registry entry of ``name`` if it can drive ``model``; otherwise
    :class:`SimulationError` naming the schemes that can.  A spheres-only scheme cannot
    drive non-spherical bodies; a Moreau-type (hard-contact) scheme drives exactly the
    models with ``contact = "hard"`` and the smooth schemes the others; a model in
    generalized coordinates takes only the schemes written for them."""
    try:
        info = get_integrator(name)
    except KeyError as exc:
        raise SimulationError(str(exc.args[0])) from None
    if info.event_driven:  # (energy-stepping: its own one-line reason, naming the fix)
        why = event_driven_refusal(model)
        if why is not None:
            raise SimulationError(why)
        return info
    ok = usable_integrators(model)
    if info.name in ok or name in ok or (
            info.name.startswith("campello-implicit") and "campello-implicit" in ok):
        return info
    choose = ", ".join(n for n in ok if not n.startswith("yoshida4:"))
    if model.coordinates == "generalized" and info.coordinates == "bodies":
        why = (f"{name} integrates rigid bodies (x, v, q, Ω); model {model.name!r} is "
               "written in generalized coordinates")
    elif info.contact == "hard" and model.contact != "hard":
        why = (f"{name} is a Moreau-type scheme for hard contacts; model {model.name!r} "
               + ("has no contacts" if model.contact == "none"
                  else 'has penalty contacts (set contact = "hard" to use it)'))
    elif info.contact != "hard" and model.contact == "hard":
        why = (f"{name} needs smooth (penalty) contacts; model {model.name!r} has hard "
               'contacts (set contact = "penalty" to use it)')
    elif info.coordinates == "generalized":
        why = (f"{name} is written for models in generalized coordinates with a "
               f"configuration-dependent mass matrix; on model {model.name!r} use "
               "moreau-symmetric (the same scheme for a constant mass matrix)")
    elif info.spherical_only and not model.bodies.spherical:
        why = (f"{name} handles spherical bodies only (scalar inertia); model "
               f"{model.name!r} has non-spherical bodies")
    else:
        why = f"{name} cannot drive model {model.name!r}"
    raise SimulationError(f"{why}: choose one of {choose}")


def default_integrator(model: Model, preferred: str | None = None) -> str:
    """``preferred`` (a scenario's default) if it can drive ``model``, else the natural
    scheme of the model's kind: ``moreau-symmetric`` for hard contacts and generalized
    coordinates, ``rrp-newmark`` for spheres, ``lgvi`` for other bodies."""
    ok = usable_integrators(model)
    if preferred is not None:
        try:
            return integrator_for(model, preferred).name
        except SimulationError:
            pass
    for name in ("moreau-symmetric", "rrp-newmark", "lgvi"):
        if name in ok:
            return name
    return ok[0]


def event_driven_refusal(model: Model) -> str | None:
    """Why energy-stepping cannot drive ``model`` (``engine.energy_stepping.unsupported``:
    one line naming the fix), or ``None``."""
    from .energy_stepping import unsupported

    return unsupported(model)


def usable_integrators(model: Model) -> list[str]:
    """The registered schemes that can drive ``model`` (registry order)."""
    out = []
    for n, i in INTEGRATORS.items():
        if i.event_driven:
            if event_driven_refusal(model) is None:
                out.append(n)
            continue
        if i.spherical_only and not model.bodies.spherical:
            continue
        if (i.contact == "hard") != (model.contact == "hard"):
            continue
        if model.coordinates == "generalized" and i.coordinates == "bodies":
            continue
        if model.coordinates != "generalized" and i.coordinates == "generalized":
            continue
        out.append(n)
    return out


@dataclass(frozen=True)
class Failure:
    """Why a run stopped early.  The simulation holds the last good state."""

    kind: str  # "rrp-limit" | "non-finite" | "energy" | "no-convergence"
    t: float
    step: int
    message: str
    stability: StabilityEstimate
    details: dict = field(default_factory=dict)


@dataclass(frozen=True)
class StepReport:
    steps: int
    failure: Failure | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None


@dataclass(frozen=True)
class Event:
    """A change of integrator or step at ``(step, t)``, for plot markers and files."""

    step: int
    t: float
    kind: str  # "integrator" | "h"
    old: str
    new: str

    @property
    def label(self) -> str:
        return f"{self.kind}: {self.old} → {self.new}"


@dataclass
class Snapshot:
    """Copies of everything a view needs at one instant."""

    t: float
    step: int
    integrator: str
    h: float
    x: np.ndarray
    v: np.ndarray
    q: np.ndarray
    omega: np.ndarray
    energy: np.ndarray  # components, layout.ENERGY_NAMES order
    P: np.ndarray
    L: np.ndarray

    @property
    def total_energy(self) -> float:
        return float(self.energy.sum())


class TimeSeries:
    """Append-only recorded series: ``t``, energy components, ``P``, ``L`` and (when
    recording frames) ``x``, ``q``, ``Ω`` of every body.

    Optional columns given to :meth:`append` by keyword: ``step`` (the step index of
    each record), and with :attr:`Simulation.record_state` the rest of the state a run
    can be started from: ``v`` and ``pi`` (``Π``) per body, ``gq``/``gv`` (the node
    ``(q, v)`` of a model in generalized coordinates), and for contacts with history
    ``force``/``moment`` per body (``F``, ``RM``: their damping part depends on the step
    that led there) with :attr:`springs`; under an event-driven scheme (energy-stepping)
    ``terrace_gap``, the ``V − V_ε`` of each record (summed over the terraced terms).  A
    column given for some chunks only is filled with NaN in the others (a run that never
    used energy-stepping has no ``terrace_gap``)."""

    BASE = ("t", "energy", "P", "L", "x", "q", "omega")
    EXTRA = ("step", "v", "pi", "gq", "gv", "force", "moment", "terrace_gap")
    _PER_BODY_EXTRA = ("v", "pi", "gq", "gv", "force", "moment")

    def __init__(self, n_bodies: int, frames: bool) -> None:
        self.n_bodies = n_bodies
        self.frames = frames
        self._chunks: list[tuple[np.ndarray, ...]] = []
        self._extra: list[dict[str, np.ndarray]] = []
        self._cache: dict[str, np.ndarray] | None = None
        self.n = 0
        self.springs: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        """Record row → the committed friction springs at that record, as
        :meth:`engine.forcefield.ForceField.committed_springs_sparse` gives them (with
        :attr:`Simulation.record_state`, for contacts with history)."""

    def release_frames(self) -> None:
        """Drop the per-body columns (``x``, ``q``, ``Ω`` and the state ``v``, ``Π``,
        ``gq``, ``gv``, ``F``, ``RM``, the springs) of every chunk recorded so far,
        keeping ``t``, the energies, the momenta and ``step`` (a writer that streams the
        frames to a file calls it once they are written: a 10⁶-sphere run cannot keep
        them in memory)."""
        per_body = self._PER_BODY_EXTRA
        self.springs.clear()
        for i, c in enumerate(self._chunks):
            if c[4] is not None:
                self._chunks[i] = (*c[:4], None, None, None)
            ex = self._extra[i]
            if any(k in ex for k in per_body):
                self._extra[i] = {k: a for k, a in ex.items() if k not in per_body}
        self._cache = None

    def append(self, t, e, P, L, x, q, o, **extra) -> None:
        if len(t) == 0:
            return
        self._chunks.append((t.copy(), e.copy(), P.copy(), L.copy(),
                             x.copy() if self.frames else None,
                             q.copy() if self.frames else None,
                             o.copy() if self.frames else None))
        self._extra.append({k: np.array(a, copy=True) for k, a in extra.items()
                            if a is not None})
        self.n += len(t)
        self._cache = None

    def _widths(self) -> tuple:
        nb = self.n_bodies
        return ((), (N_ENERGY,), (3,), (3,), (nb, 3), (nb, 4), (nb, 3))

    def _extra_columns(self, chunks: list[tuple], extras: list[dict]) -> dict[str, np.ndarray]:
        out = {}
        for name in self.EXTRA:
            have = [x[name] for x in extras if name in x]
            if not have:
                continue
            if len(have) == len(extras):
                out[name] = np.concatenate(have)
                continue
            w, dt = have[0].shape[1:], have[0].dtype
            fill = -1 if dt.kind in "iu" else np.nan
            out[name] = np.concatenate([
                x[name] if name in x else np.full((len(c[0]), *w), fill, dtype=dt)
                for c, x in zip(chunks, extras, strict=True)])
        return out

    def arrays(self, start: int = 0) -> dict[str, np.ndarray]:
        """Concatenated series from record ``start`` on (copies)."""
        if self._cache is None:
            out = {}
            for k, (name, w) in enumerate(zip(self.BASE, self._widths(), strict=True)):
                parts = [c[k] for c in self._chunks if c[k] is not None]
                out[name] = np.concatenate(parts) if parts else np.zeros((0, *w))
            out.update(self._extra_columns(self._chunks, self._extra))
            self._cache = out
        return {k: a[start:] for k, a in self._cache.items()}

    def tail(self, start: int) -> dict[str, np.ndarray]:
        """Rows from ``start`` on, concatenating only the chunks that hold them (cheap for
        a live view that asks for the few new rows many times a second)."""
        first, base = len(self._chunks), self.n
        for k in range(len(self._chunks) - 1, -1, -1):
            if base <= start:
                break
            base -= len(self._chunks[k][0])
            first = k
        out = {}
        for k, (name, w) in enumerate(zip(self.BASE, self._widths(), strict=True)):
            parts = [c[k] for c in self._chunks[first:] if c[k] is not None]
            a = np.concatenate(parts) if parts else np.zeros((0, *w))
            out[name] = a[max(0, start - base):] if len(a) else a
        for name, a in self._extra_columns(self._chunks[first:], self._extra[first:]).items():
            out[name] = a[max(0, start - base):] if len(a) else a
        return out

    def energy_total(self) -> np.ndarray:
        return self.arrays()["energy"].sum(axis=1)


class Simulation:
    """Drive ``model`` with the named integrator and step ``h``.

    ``record_every``: record a row of the time series every that many steps (and a
    frame of all bodies if ``record_frames``).  ``record_state``: the frames also hold
    ``v`` and ``Π`` (and the node of a generalized model), so that a run can be started
    from any of them (:meth:`from_frame`; the compiled loop records them with the frame).
    ``energy_tolerance``: relative energy
    error beyond which a step counts as a blow-up (``None``: only non-finite values do).

    A model in generalized coordinates (``model.coordinates == "generalized"``, the
    spring pendulum) is driven by :class:`engine.generalized.simulation.
    GeneralizedSimulation`, a subclass with the same interface: ``Simulation(model, …)``
    returns one for such a model, so callers never dispatch on the model themselves.

    **Event-driven schemes** (``energy-stepping[:REL]``, physics.md §3.10): ``h`` is the
    recording interval, not a step.  Each "step" advances an
    ``engine.energy_stepping.EnergyStepper`` (made from the current ``(x, v, q, Ω)`` when
    the scheme is chosen, with ``ε = REL × e_scale``, and kept while it stays) to
    ``t + h``; the bodies are synchronised there, so a record is the exact motion of
    ``T − V_ε`` at ``t = k h`` (energies, ``P``, ``L`` from the synchronised state as for
    any scheme), with the column ``terrace_gap`` (``V − V_ε``).  The chunking of
    :meth:`advance` does not show in the result (the stepper is called at the same times
    whatever it is).  A switch away drops the stepper, the state carrying over as for
    any switch.  :meth:`checkpoint` and :meth:`resume_state` save the stepper itself
    (``EnergyStepper.export_state``: the bodies with their clocks, every term's terrace
    and predicted crossing, the contact list), and :meth:`restore` and a resume
    (:meth:`from_resume_state`) go on from it **bit for bit**, as an unbroken run.  After
    a failure, or from a frame (a branch: frames hold no stepper), the next step makes a
    new one from the kept state, its terraces placed anew (the exact motion of a new
    terraced potential; ``|E − E₀|`` may then grow by up to ``ε`` per term).  No stability
    limit, no energy tolerance check (the error is bounded by ``ε`` per term);
    :meth:`event_stats` counts the events.
    """

    _stepper = None
    """The ``EnergyStepper`` of an event-driven scheme, or ``None`` (a stepping scheme;
    an event-driven one after a restore, a resume or a failure, until its next step)."""
    _es_done: tuple[int, int, float] = (0, 0, 0.0)
    """Events, reflections and simulated time of the steppers dropped so far."""
    _es_t0 = 0.0
    """The time the current stepper started at."""
    _es_terms = 0
    """Terraced terms of the last stepper (each bounds its share of ``|E − E₀|`` by ε)."""
    _es_e0 = math.nan
    """``E`` where the current stepper started: its bound ``|E − E₀| ≤ ε`` per term is
    checked against it after each advance (issue #33 item 3; saved with the stepper as
    ``bound_e0``)."""
    _es_saved: dict | None = None
    """A saved stepper (``EnergyStepper.export_state``) to go on from at the next step
    (after :meth:`restore` or a resume), or ``None``."""

    def __new__(cls, model: Model, *args, **kwargs):
        if cls is Simulation and getattr(model, "coordinates", "bodies") == "generalized":
            from .generalized.simulation import GeneralizedSimulation

            return super().__new__(GeneralizedSimulation)
        return super().__new__(cls)

    def __init__(self, model: Model, integrator: str = "rrp-newmark", h: float = 1e-3, *,
                 record_every: int = 1, record_frames: bool = True,
                 energy_tolerance: float | None = DEFAULT_ENERGY_TOLERANCE,
                 state: State | None = None, record_state: bool = False) -> None:
        self.model = model
        self.record_state = bool(record_state)
        self.ff: ForceField = model.forcefield.working_copy()
        self.ff.invalidate_neighbours()
        if int(record_every) < 1:
            raise SimulationError(f"record_every must be a positive integer, got {record_every}")
        self.record_every = int(record_every)
        self.record_frames = bool(record_frames)
        self.energy_tolerance = energy_tolerance
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
        with np.errstate(over="ignore", invalid="ignore"):  # (_check_start names it)
            self._evaluate_forces()
        e0 = self._s0[6]
        _check_start(self._s0, e0)
        self.e_ref = float(e0.sum())
        self.e_scale = energy_scale(e0)
        self.p_scale, self.l_scale = momentum_scales(self.ff.m, self.ff.J, st.x, st.v, st.omega,
                                                     st.q, self._tensors)
        self.series = TimeSeries(n, self.record_frames)
        self._integrator: IntegratorInfo = self._check_integrator(integrator)
        self.h = self._check_h(h, self._integrator)
        if self._integrator.event_driven:
            self._start_stepper()
        self._record_now()

    # ------------------------------------------------------------------ properties
    @property
    def integrator(self) -> IntegratorInfo:
        return self._integrator

    @property
    def _tensors(self) -> np.ndarray | None:
        return None if self.ff.spherical else self.ff.inertia

    @property
    def iteration_stats(self) -> dict[str, float]:
        """Iterations of the implicit schemes since the start (or the last
        :meth:`reset_iteration_stats`): ``solves`` (Newton: body-steps; fixed point:
        steps), ``iterations`` (total), ``mean`` and ``max`` per solve."""
        st = self._work[6]
        solves = float(st[IS_SOLVES])
        return {"solves": solves, "iterations": float(st[IS_ITERATIONS]),
                "mean": float(st[IS_ITERATIONS]) / solves if solves else 0.0,
                "max": float(st[IS_MAX])}

    def reset_iteration_stats(self) -> None:
        self._work[6][:] = 0.0

    @property
    def contact_stats(self) -> dict[str, float]:
        """Hard contacts (Moreau-type schemes) since the start: active ``contacts`` and
        ``percussions`` (``P_N > 0``) in the last step, ``impacts`` (contact-steps with
        ``P_N > 0``, in total), the percussion solver's ``solves``, ``iterations``
        (sweeps), ``mean`` and ``max_iterations``, and the largest ``penetration``
        ``−g_N`` seen."""
        st = self._work[6]
        solves = float(st[IS_CONTACT_SOLVES])
        return {"contacts": float(st[IS_CONTACTS]), "percussions": float(st[IS_PERCUSSIONS]),
                "impacts": float(st[IS_IMPACTS]), "solves": solves,
                "iterations": float(st[IS_CONTACT_ITERATIONS]),
                "mean": float(st[IS_CONTACT_ITERATIONS]) / solves if solves else 0.0,
                "max_iterations": float(st[IS_CONTACT_MAX]),
                "penetration": float(st[IS_PENETRATION])}

    @property
    def contact_tolerance(self) -> float:
        """Percussion solver: tolerance on the relative change of the percussions in a
        Gauss–Seidel sweep."""
        return float(self._work[5][IP_CONTACT_TOL])

    @contact_tolerance.setter
    def contact_tolerance(self, tol: float) -> None:
        tol = float(tol)
        if not (math.isfinite(tol) and 0.0 < tol < 1.0):
            raise SimulationError(f"the contact tolerance must lie in (0, 1), got {tol:g}; "
                                  "try e.g. 1e-12")
        self._work[5][IP_CONTACT_TOL] = tol

    @property
    def contact_max_iterations(self) -> int:
        """Percussion solver: the sweep limit (non-convergence ends the run)."""
        return int(self._work[5][IP_CONTACT_MAX_IT])

    @contact_max_iterations.setter
    def contact_max_iterations(self, n: int) -> None:
        if isinstance(n, bool) or int(n) != n or int(n) < 1:
            raise SimulationError(f"the contact iteration limit must be a positive integer, "
                                  f"got {n!r}")
        self._work[5][IP_CONTACT_MAX_IT] = int(n)

    @property
    def tolerance(self) -> float:
        """Tolerance of the implicit schemes on the relative size of the update."""
        return float(self._work[5][IP_TOL])

    @tolerance.setter
    def tolerance(self, tol: float) -> None:
        tol = float(tol)
        if not (math.isfinite(tol) and 0.0 < tol < 1.0):
            raise SimulationError(f"the iteration tolerance must lie in (0, 1), got {tol:g}; "
                                  "try e.g. 1e-14")
        self._work[5][IP_TOL] = tol

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
            self.events.append(Event(self.step_index, self.t, "h", f"{self.h:g}", f"{h:g}"))
            self.h = h
            self._t_base, self._step_base = self.t, self.step_index

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
        from .priming import run_kernels_cached

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
        from .integrators.advance import prime_kernels

        prime_kernels(info.scheme_id, self.ff.arrays[-1])

    def event_stats(self) -> dict[str, float]:
        """The event-driven schemes' events since the start (all their steppers): ``events``
        (crossings and reflections), ``reflections``, ``time`` (simulated time under
        them), ``events_per_time``, and the current ``eps`` (absolute; NaN under another
        scheme) and ``n_terms`` (terraced terms of the last stepper; 0 before any)."""
        events, refl, span = self._es_done
        st = self._stepper
        if st is not None:
            events += st.n_events
            refl += st.n_reflections
            span += self.t - self._es_t0
        info = self._integrator
        return {"events": int(events), "reflections": int(refl), "time": float(span),
                "events_per_time": events / span if span > 0 else math.nan,
                "eps": info.eps_rel * self.e_scale if info.event_driven else math.nan,
                "n_terms": int(self._es_terms)}

    def advance(self, n_steps: int) -> StepReport:
        """Take up to ``n_steps`` steps.  On a blow-up or an inadmissible step the state
        is the last good one and the report carries a :class:`Failure`."""
        n_steps = int(n_steps)
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
        """Largest stable ``h`` for the current state (:mod:`engine.stability`), with the
        accuracy guide ``h_accurate`` (≈ 1 % energy error) of the model's calibration.
        An event-driven scheme has no step limit (``h_stable = inf``) and reports its
        events per unit time instead (``events_per_time``)."""
        if self._integrator.event_driven:
            return StabilityEstimate(math.inf, 0.0, "none", -1, math.inf, math.inf,
                                     events_per_time=self.event_stats()["events_per_time"])
        x, v, q, o = self._s0[:4]
        est = estimate_stability(x, v, q, o, self.ff.arrays)
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

    def checkpoint(self) -> tuple:
        """Everything needed to come back to this instant (copies; with the committed
        friction springs of a model with history)."""
        springs = self.ff.committed_springs() if self.ff.has_history else None
        stepper = self._export_stepper() if self._stepper is not None else \
            self._es_saved
        return (tuple(a.copy() for a in self._s0), self.t, self.step_index,
                {k: a.copy() for k, a in self.aux.items()}, springs, stepper,
                self._es_done, (self._t_base, self._step_base, self.h))

    def restore(self, cp: tuple) -> None:
        """Come back to a :meth:`checkpoint` (an event-driven scheme goes on from the
        stepper saved with it, bit for bit)."""
        self._drop_stepper()
        bufs, t, step, aux = cp[:4]
        springs = cp[4] if len(cp) > 4 else None
        self._es_saved = cp[5] if len(cp) > 5 else None
        if len(cp) > 6:
            self._es_done = cp[6]
        for dst, src in zip(self._s0, bufs, strict=True):
            dst[...] = src
        self.t, self.step_index = t, step
        # (the clock's base as it was, if h is too: the times to come are the unbroken
        # run's, which an event-driven scheme is advanced to)
        base = cp[7] if len(cp) > 7 else None
        if base is not None and base[2] == self.h:
            self._t_base, self._step_base = base[0], base[1]
        else:
            self._t_base, self._step_base = t, step
        self.aux = {"pi": self._s0[7]}
        self.ff.invalidate_neighbours()
        if self.ff.has_history:
            self.ff.reset_history(self._s0[0], self._s0[2], springs)
        self._evaluate_forces()
        if self.ff.has_history:  # the checkpoint's forces (with the damping of its step)
            for k in (4, 5, 6):
                self._s0[k][...] = bufs[k]

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

    # ------------------------------------------------------------------ resume
    RESUME_FORMAT = 2
    """Version of the :meth:`resume_state` layout (stored with it, checked on resume).
    Format 2 keeps the committed friction springs as a list (``springs_*``) and the
    used part of the neighbour list (``nl_pairs[:count]``, ``nl_capacity``); format 1
    held both as full tables (≈ 280 bytes a sphere at 10⁶ spheres), and is still read."""
    RESUME_FORMATS_READ = (1, 2)

    _SCRATCH_WORK = (0, 1, 2, 3, 4)
    """``work`` entries every step overwrites before reading (RK4's accumulators, the
    composition's buffer): not part of the resumable state (nor is the buffer ``s1``)."""

    def resume_state(self) -> dict:
        """Everything needed to continue this run bit-identically in another process:
        the state buffer (``s0_*`` = ``x, v, q, Ω, F, RM, e, Π``), the kernel work
        arrays that carry over from step to step (``work_5`` parameters, ``work_6``
        statistics, ``work_7_*`` the contact work with the percussion warm start), the
        neighbour list (``nl_pairs``, ``nl_state``, ``nl_xref``), the clock
        (``t``, ``step_index``, ``t_base``, ``step_base``, ``h``), the integrator, the
        energy and momentum references and the recording settings.  Arrays are copies;
        ``events`` is a list of :class:`Event`.  :meth:`from_resume_state` inverts it."""
        d: dict = {"kind": "bodies", "format": self.RESUME_FORMAT}
        for k, a in enumerate(self._s0):
            d[f"s0_{k}"] = a.copy()
        for k, a in enumerate(self._work):
            if k in self._SCRATCH_WORK:
                continue
            if isinstance(a, tuple):
                for j, b in enumerate(a):
                    d[f"work_{k}_{j}"] = b.copy()
            else:
                d[f"work_{k}"] = a.copy()
        count = int(self.ff.nl_state[NL_COUNT])
        d["nl_pairs"] = self.ff.nl_pairs[:count].copy()
        d["nl_capacity"] = int(self.ff.nl_pairs.shape[0])
        d["nl_state"] = self.ff.nl_state.copy()
        d["nl_xref"] = self.ff.nl_xref.copy()
        if self.ff.has_history:
            (d["springs_sphere"], d["springs_partner"],
             d["springs_xi"]) = self.ff.committed_springs_sparse()
            d["springs_slots"] = int(self.ff.history[2].shape[2])
        d["info"] = self._info.copy()
        d.update(self._resume_scalars())
        es = self.event_stats()
        if self._integrator.event_driven or es["events"]:
            d.update({"es_events": es["events"], "es_reflections": es["reflections"],
                      "es_time": es["time"], "es_terms": int(self._es_terms)})
            if self._integrator.event_driven:
                d["es_eps_rel"] = float(self._integrator.eps_rel)
                # the stepper itself (a resume goes on from it bit for bit); its counts
                # are in es_events … until it is dropped
                saved = self._export_stepper() if self._stepper is not None \
                    else self._es_saved
                if saved is not None:
                    d.update({ES_STATE_PREFIX + k: v for k, v in saved.items()})
                    if self._stepper is not None:
                        d["es_events"] -= int(self._stepper.n_events)
                        d["es_reflections"] -= int(self._stepper.n_reflections)
        return d

    def _resume_scalars(self) -> dict:
        return {"t": float(self.t), "step_index": int(self.step_index),
                "t_base": float(self._t_base), "step_base": int(self._step_base),
                "h": float(self.h), "integrator": self._integrator.name,
                "e_ref": float(self.e_ref), "e_scale": float(self.e_scale),
                "p_scale": float(self.p_scale), "l_scale": float(self.l_scale),
                "record_every": int(self.record_every),
                "record_frames": bool(self.record_frames),
                "record_state": bool(self.record_state),
                "energy_tolerance": (-1.0 if self.energy_tolerance is None
                                     else float(self.energy_tolerance)),
                "events": list(self.events)}

    @classmethod
    def from_resume_state(cls, model: Model, d: dict, *, record_every: int | None = None,
                          record_frames: bool | None = None,
                          energy_tolerance: float | None | str = "keep",
                          record_state: bool | None = None) -> Simulation:
        """A simulation continuing exactly where :meth:`resume_state` ``d`` was taken
        (on a model built from the same parameters).  Its series starts empty: the
        record at the resumed step belongs to the run that was resumed.  Settings left
        at ``None``/``"keep"`` are the stored ones.  :class:`SimulationError` (one line)
        when ``d`` does not fit the model."""
        kind = "generalized" if getattr(model, "coordinates", "bodies") == "generalized" \
            else "bodies"
        if str(d.get("kind")) != kind:
            raise SimulationError(f"the saved state is of a {d.get('kind')} model, model "
                                  f"{model.name!r} is of a {kind} one")
        if int(d.get("format", -1)) not in cls.RESUME_FORMATS_READ:
            raise SimulationError(f"the saved state has format {d.get('format')}, this "
                                  f"version reads formats "
                                  f"{', '.join(map(str, cls.RESUME_FORMATS_READ))}")
        tol = d["energy_tolerance"] if energy_tolerance == "keep" else energy_tolerance
        if tol is not None and float(tol) < 0:
            tol = None
        kw = {"record_every": int(d["record_every"]) if record_every is None else record_every,
              "record_frames": bool(d["record_frames"]) if record_frames is None
              else record_frames,
              "energy_tolerance": tol,
              "record_state": bool(d.get("record_state", False)) if record_state is None
              else record_state}
        sim = Simulation.__new__(Simulation, model)
        sim._init_resumed(model, d, kw)
        return sim

    def _init_resumed(self, model: Model, d: dict, kw: dict) -> None:
        n = model.n_bodies
        try:
            x, v, q, o = (np.asarray(d[f"s0_{k}"], dtype=np.float64) for k in range(4))
            if x.shape != (n, 3):
                raise SimulationError(f"the saved state has {x.shape[0]} bodies, model "
                                      f"{model.name!r} has {n}")
            st = State(x.copy(), v.copy(), q.copy(), o.copy(),
                       {"pi": np.asarray(d["s0_7"], dtype=np.float64).copy()})
            type(self).__init__(self, model, _resumed_integrator(d), float(d["h"]), state=st,
                                **kw)
            for k, a in enumerate(self._s0):
                a[...] = d[f"s0_{k}"]
            work = []
            for k, a in enumerate(self._work):
                if k in self._SCRATCH_WORK:
                    work.append(a)
                elif isinstance(a, tuple):
                    work.append(tuple(np.ascontiguousarray(d[f"work_{k}_{j}"], dtype=b.dtype)
                                      for j, b in enumerate(a)))
                else:
                    a[...] = d[f"work_{k}"]
                    work.append(a)
            self._work = tuple(work)
            self.ff.nl_pairs = _saved_pairs(d)
            self.ff.nl_state[...] = d["nl_state"]
            self.ff.nl_xref[...] = d["nl_xref"]
            self.ff.drop_excluded_pairs()
            if self.ff.has_history:
                self.ff.reset_history(self._s0[0], self._s0[2], self._saved_springs(d))
            self._info[...] = d["info"]
        except KeyError as exc:
            raise SimulationError(f"the saved state lacks {exc.args[0]!r}") from None
        except ValueError as exc:
            if isinstance(exc, SimulationError):
                raise
            raise SimulationError(f"the saved state does not fit model {model.name!r}: "
                                  f"{exc}") from None
        self._restore_scalars(d)

    def _saved_springs(self, d: dict) -> tuple | None:
        """The slot table of the committed springs of a saved state: the list of format
        2 (``springs_*``), the table of format 1 (``history_*``), or ``None``."""
        n = self.ff.n_bodies
        if "springs_sphere" in d:
            return self.ff.dense_springs(d["springs_sphere"], d["springs_partner"],
                                         d["springs_xi"], int(d.get("springs_slots", 0)))
        if "history_partner" not in d:
            return None
        springs = (np.ascontiguousarray(d["history_partner"], dtype=np.int32),
                   np.ascontiguousarray(d["history_xi"], dtype=np.float64))
        if springs[0].shape[0] != n or springs[1].shape[:2] != springs[0].shape:
            raise SimulationError("the saved friction springs do not fit the "
                                  f"model's {n} bodies")
        return springs

    def _restore_scalars(self, d: dict) -> None:
        self.t = float(d["t"])
        self.step_index = int(d["step_index"])
        self._t_base, self._step_base = float(d["t_base"]), int(d["step_base"])
        self.e_ref, self.e_scale = float(d["e_ref"]), float(d["e_scale"])
        self.p_scale, self.l_scale = float(d["p_scale"]), float(d["l_scale"])
        self.events = list(d.get("events", []))
        self._stepper = None  # (from the saved one, else made anew, at the next step)
        saved = {k[len(ES_STATE_PREFIX):]: v for k, v in d.items()
                 if k.startswith(ES_STATE_PREFIX)}
        self._es_saved = saved or None
        self._es_done = (int(d.get("es_events", 0)), int(d.get("es_reflections", 0)),
                         float(d.get("es_time", 0.0)))
        self._es_terms = int(d.get("es_terms", 0))
        self.series = TimeSeries(self.model.n_bodies if self.model.coordinates != "generalized"
                                 else 1, self.record_frames)

    @classmethod
    def from_frame(cls, model: Model, frame, integrator: str, h: float, *,
                   keep_clock: bool = True, energy_reference: tuple[float, float] | None = None,
                   **kwargs) -> Simulation:
        """A new run starting from a recorded frame (``engine.io.Frame`` or any object
        with ``t``, ``step``, ``x``, ``v``, ``q``, ``omega``, ``pi`` (may be ``None``: then
        ``Π = 𝕁 Rᵀ Ω``), ``D`` (dissipated energy, may be 0) and, for a generalized
        model, ``gq``/``gv``), driven by ``integrator`` with step ``h``.  For contacts
        with history, the frame's ``springs`` (``(sphere, partner, xi)``, see
        :meth:`engine.forcefield.ForceField.committed_springs_sparse`) and its ``F``,
        ``RM`` carry the friction springs and the damping over (``None``: the springs
        start from zero, as from a file written before frames kept them).

        ``keep_clock``: time and step index go on from the frame's (else from 0).
        ``energy_reference``: ``(E_ref, E_scale)`` of the recorded run, so that the
        relative energy error is measured as in it (default: from the frame).
        ``kwargs``: as for the constructor (``record_every`` …)."""
        if getattr(frame, "v", None) is None:
            raise SimulationError("the frame holds no velocities (a file of schema 1, or "
                                  "recorded without the state): it cannot start a run")
        pi = getattr(frame, "pi", None)
        aux = {} if pi is None or not np.all(np.isfinite(pi)) else {
            "pi": np.asarray(pi, dtype=np.float64).copy()}
        st = State(np.asarray(frame.x, dtype=np.float64).copy(),
                   np.asarray(frame.v, dtype=np.float64).copy(),
                   np.asarray(frame.q, dtype=np.float64).copy(),
                   np.asarray(frame.omega, dtype=np.float64).copy(), aux)
        sim = Simulation(model, integrator, h, state=st, **kwargs)
        sim._start_from_frame(frame, keep_clock, energy_reference)
        return sim

    def _start_from_frame(self, frame, keep_clock: bool,
                          energy_reference: tuple[float, float] | None) -> None:
        D = float(getattr(frame, "D", 0.0) or 0.0)
        springs = getattr(frame, "springs", None)
        if self.ff.has_history and springs is not None:
            try:
                dense = self.ff.dense_springs(*springs)
            except ValueError as exc:
                raise SimulationError(f"the frame's friction springs do not fit model "
                                      f"{self.model.name!r}: {exc}") from None
            self.ff.reset_history(self._s0[0], self._s0[2], dense)
            self._evaluate_forces()  # (the springs' energy and forces)
            F, RM = getattr(frame, "F", None), getattr(frame, "RM", None)
            if F is not None and RM is not None and np.all(np.isfinite(F)) and \
                    np.all(np.isfinite(RM)):  # the recorded ones: with the damping
                self._s0[4][...] = F
                self._s0[5][...] = RM
        e = self._s0[6]
        if D and "dissipated" in ENERGY_NAMES:
            e[ENERGY_NAMES.index("dissipated")] = D
        self._after_frame(keep_clock, energy_reference, frame)

    def _after_frame(self, keep_clock: bool, energy_reference, frame) -> None:
        e = self.energy
        if energy_reference is not None:
            self.e_ref, self.e_scale = (float(v) for v in energy_reference)
        else:
            self.e_ref = float(e.sum())
            self.e_scale = energy_scale(e) if self.model.coordinates != "generalized" \
                else self.e_scale
        if keep_clock:
            self.t = self._t_base = float(frame.t)
            self.step_index = self._step_base = int(frame.step)
        if self._integrator.event_driven:  # (at the frame's time, with its energy scale)
            self._stepper = None
            self._es_saved = None  # (a frame holds no stepper: its terraces anew)
            self._es_done = (0, 0, 0.0)
            self._start_stepper()
        self.series = TimeSeries(self.series.n_bodies, self.record_frames)
        self._record_now()

    # ------------------------------------------------------------------ internals
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

    # ------------------------------------------------------------------ event-driven
    def _new_stepper(self, info: IntegratorInfo):
        """An ``EnergyStepper`` for ``info`` from the current state at :attr:`t`, with
        ``ε = REL × e_scale``; :class:`SimulationError` (its one line) if it cannot
        drive the model."""
        from .energy_stepping import EnergyStepper, EnergySteppingError, absolute_eps

        x, v, q, o = (a.copy() for a in self._s0[:4])
        magnitude = float(np.abs(self._s0[6]).sum())  # (the floor of ε: issue #33 item 3)
        try:
            return EnergyStepper(self.model, absolute_eps(info.eps_rel, self.e_scale,
                                                          magnitude),
                                 State(x, v, q, o, {}), self.t)
        except EnergySteppingError as exc:
            raise SimulationError(str(exc)) from None

    def _start_stepper(self) -> None:
        saved, self._es_saved = self._es_saved, None
        if saved is not None and self._integrator.event_driven and \
                float(np.asarray(saved["t"]).reshape(-1)[0]) == self.t:
            from .energy_stepping import EnergyStepper, EnergySteppingError

            try:  # the saved stepper: the run goes on bit for bit
                stepper = EnergyStepper.from_state(self.model, saved)
            except EnergySteppingError as exc:
                raise SimulationError(str(exc)) from None
            self._use_stepper(stepper)
            if "bound_e0" in saved:  # (else: from here, as for a new stepper)
                self._es_e0 = float(np.asarray(saved["bound_e0"]).reshape(-1)[0])
            return
        self._use_stepper(self._new_stepper(self._integrator))

    def _use_stepper(self, stepper) -> None:
        """Make ``stepper`` (started at :attr:`t` from the state in the buffer) the
        current one.  The buffer is left as it is (the switch carries the state over
        bit for bit); the first interval synchronises it with the stepper's own (whose
        attitude is normalised, and which has stepped down a level at once from a start
        at rest: docs/physics.md §3.10)."""
        self._stepper = stepper
        self._es_t0 = self.t
        self._es_terms = int(stepper.n_terms)
        self._es_e0 = float(self._s0[6].sum())

    def _export_stepper(self) -> dict:
        """The current stepper's saved state, with the ``E₀`` of its bound."""
        d = self._stepper.export_state()
        d["bound_e0"] = np.array([self._es_e0])
        return d

    def _bound_failure(self) -> Failure | None:
        """After an advance (the state synchronised, its energy evaluated): a
        :class:`Failure` if the measured ``|E − E₀|`` exceeds the stepper's bound
        (``engine.energy_stepping.bound``, issue #33 item 3), the stepper then dropped
        (the next step starts the terraces anew from the kept state)."""
        from .energy_stepping.bound import bound_excess, bound_message

        st, e = self._stepper, self._s0[6]
        ratio = bound_excess(float(e.sum()), self._es_e0, st.eps, st.n_terms,
                             float(np.abs(e).sum()))
        if ratio is None:
            return None
        n = int(st.n_terms)
        self._drop_stepper()
        info = self._integrator
        return Failure("energy-stepping", self.t, self.step_index,
                       bound_message(self.t, ratio, n, info.eps_rel), self.stability(),
                       {"eps": info.eps_rel * self.e_scale, "bound": ratio,
                        "raise_eps": True})

    def _drop_stepper(self) -> None:
        """Forget the stepper (its counts kept in :meth:`event_stats`); the state in the
        buffer is synchronised at :attr:`t`."""
        st = self._stepper
        if st is not None:
            ev, refl, span = self._es_done
            self._es_done = (ev + int(st.n_events), refl + int(st.n_reflections),
                             span + (self.t - self._es_t0))
            self._stepper = None

    def _sync_from_stepper(self) -> None:
        x, v, q, o = self._s0[:4]
        sx, sv, sq, so = self._stepper.state_arrays()
        x[...] = sx
        v[...] = sv
        q[...] = sq
        o[...] = so

    def _prime_event_kernels(self, info: IntegratorInfo) -> None:
        """Compile (or load) the kernels of the event-driven ``info`` on this model: a
        stepper on a copy of the state takes a tiny advance (the state is untouched)."""
        from .energy_stepping import EnergySteppingError

        probe = self._new_stepper(info)
        try:
            probe.advance_to(self.t + 1e-3 * self.h)
        except EnergySteppingError as exc:
            raise SimulationError(str(exc)) from None
        probe.state_arrays()
        probe.terrace_gap()
        _EVENT_KERNELS_BUILT.add(self.model.name)

    def _advance_events(self, n: int) -> StepReport:
        """``n`` recording intervals of the event-driven scheme (see the class
        docstring): the stepper is advanced to each ``t = t_base + (k − k_base) h`` in
        turn, the bodies synchronised there; every ``record_every``-th is recorded.  An
        ``EnergySteppingError`` ends it with a :class:`Failure` (kind
        ``"energy-stepping"``), the state that of the last interval completed."""
        from .energy_stepping import EnergySteppingError

        if n <= 0:
            return StepReport(0)
        if self._stepper is None:
            try:
                self._start_stepper()
            except SimulationError as exc:
                return StepReport(0, self._event_failure(str(exc)))
        st = self._stepper
        rows: list[tuple] = []
        done, message = 0, None
        t0, c0 = time.perf_counter(), time.thread_time()
        try:
            for _ in range(n):
                step = self.step_index + 1
                t = self._t_base + (step - self._step_base) * self.h
                st.advance_to(t)
                self._sync_from_stepper()
                self.step_index, self.t = step, t
                done += 1
                if step % self.record_every == 0:
                    rows.append(self._event_row())
        except EnergySteppingError as exc:
            message = str(exc)
        finally:
            self.kernel_seconds += time.perf_counter() - t0
            self.kernel_cpu_seconds += time.thread_time() - c0
            self.kernel_steps += done
            self._append_event_rows(rows)
        self._evaluate_forces()
        if message is not None:
            self._drop_stepper()  # (its state is part-way: the next step makes a new one)
            return StepReport(done, self._event_failure(message))
        return StepReport(done, self._bound_failure())

    def _event_row(self) -> tuple:
        """One record of the event-driven scheme at the current (synchronised) state
        (the per-body columns only where they are recorded)."""
        self._evaluate_forces()
        x, v, q, o, F, RM, e = self._s0[:7]
        P, L = self._momenta()
        frames = (x.copy(), q.copy(), o.copy()) if self.record_frames else (None,) * 3
        state = (v.copy(), self._s0[7].copy()) if self.record_state and self.record_frames \
            else (None, None)
        return (self.t, e.copy(), P, L, *frames, self.step_index,
                self._stepper.terrace_gap(), *state)

    def _append_event_rows(self, rows: list[tuple]) -> None:
        if not rows:
            return
        cols = [None if c[0] is None else np.array(c) for c in zip(*rows, strict=True)]
        t, e, P, L, x, q, o, step, gap, v, pi = cols
        extra = {"step": step.astype(np.int64), "terrace_gap": gap.astype(np.float64)}
        if v is not None:
            extra.update({"v": v, "pi": pi})
        self.series.append(t, e, P, L, x, q, o, **extra)

    def _event_failure(self, message: str) -> Failure:
        t = self.t
        msg = (f"{message.rstrip('.')} (in the interval after t = {t:.6g}); the state at "
               f"t = {t:.6g} is kept, and the next step starts the terraces anew from it.")
        return Failure("energy-stepping", t, self.step_index, msg, self.stability(),
                       {"eps": self.event_stats()["eps"]})

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

    def _evaluate_forces(self) -> None:
        x, v, q, o, F, RM, e = self._s0[:7]
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

    def _call_kernel_chunk(self, n: int) -> tuple[int, int]:
        stride = self.record_every
        first = self.step_index + 1
        n_rec = (self.step_index + n) // stride - (first - 1) // stride
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
        done, nrec, status = _advance_kernel(
            self._integrator.scheme_id, n, self.h, self.t, self.step_index, stride,
            self._s0, self._s1, ff, self._work, e_ctrl, rec, self.record_frames,
            self._info, self._scratch(ff))
        if n > 0:
            self.kernel_seconds += time.perf_counter() - t0
            self.kernel_cpu_seconds += time.thread_time() - c0
            self.kernel_steps += done
        if done:
            self.step_index += done
            self.t = self._t_base + (self.step_index - self._step_base) * self.h
        r = slice(0, nrec)
        # times from step indices, so that they do not depend on the chunking
        first_rec = ((first - 1) // stride + 1) * stride
        steps = first_rec + stride * np.arange(nrec)
        times = self._t_base + (steps - self._step_base) * self.h
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

    def _record_now(self) -> None:
        snap = self.snapshot()
        state = self.record_state and self.record_frames
        extra = self._state_row() if state else {}
        if self._stepper is not None:
            extra["terrace_gap"] = np.array([self._stepper.terrace_gap()])
        self.series.append(np.array([self.t]), snap.energy[None], snap.P[None], snap.L[None],
                           snap.x[None], snap.q[None], snap.omega[None],
                           step=np.array([self.step_index]), **extra)
        if state:
            self._keep_springs(self.series.n - 1)

    def _failure(self, status: int) -> Failure:
        stab = self.stability()
        t, step, h = self.t, self.step_index, self.h
        limit = stab.describe()
        if status == ERR_RRP_LIMIT:
            body, hw = int(self._info[0]), float(self._info[1])
            h_max, _, _ = self.rrp_exact_limit()
            if math.isfinite(hw) and math.isfinite(h_max):
                msg = (f"rrp-exact cannot take the step at t = {t:.6g}: body {body} has "
                       f"h|w| = {hw:.3g} ≥ 1 (the attitude increment would reach π/2); the "
                       f"largest admissible h is ≈ {h_max:.3g}. Lower h or switch to "
                       f"rrp-newmark; the state at t = {t:.6g} is kept.")
            else:
                msg = (f"rrp-exact cannot take the step at t = {t:.6g}: the spin of body "
                       f"{body} is not finite (h|w| = {hw:.3g}), so no step is admissible; "
                       f"the state at t = {t:.6g} is kept: check the scenario's spins.")
            return Failure("rrp-limit", t, step, msg, stab,
                           {"body": body, "h_w": hw, "h_max": h_max})
        if status == ERR_NO_CONVERGENCE:
            body, its, upd = int(self._info[0]), int(self._info[1]), float(self._info[2])
            who = f"body {body}'s" if body >= 0 else "the step's"
            msg = (f"{self._integrator.name} did not converge at t = {t:.6g}: {who} "
                   f"iteration stopped after {its} iterations with an update of {upd:.3g} "
                   f"(tolerance {self.tolerance:g}); lower h (now {h:g}) or use an explicit "
                   f"scheme; the state at t = {t:.6g} is kept.")
            return Failure("no-convergence", t, step, msg, stab,
                           {"body": body, "iterations": its, "update": upd})
        if status == ERR_CONTACT:
            nc, its, res = int(self._info[0]), int(self._info[1]), float(self._info[2])
            msg = (f"the percussion solver did not converge at t = {t:.6g}: {nc} active "
                   f"contacts, {its} Gauss–Seidel sweeps, last relative change {res:.3g} "
                   f"(tolerance {self.contact_tolerance:g}); raise the iteration limit or "
                   f"the tolerance, or lower h (now {h:g}); the state at t = {t:.6g} is "
                   "kept.")
            return Failure("no-convergence", t, step, msg, stab,
                           {"contacts": nc, "iterations": its, "residual": res})
        if status == ERR_ENERGY:
            err = float(self._info[3])
            what = f"the relative energy error reached {err:.3g}"
            kind = "energy"
        elif status == ERR_NONFINITE:
            what = "the state became non-finite"
            kind = "non-finite"
        else:
            what = f"the kernel returned status {status}"
            kind = "error"
        tol = self.energy_tolerance
        if status == ERR_ENERGY and tol is not None and abs(err) < 0.01:
            msg = (f"the run stopped in the step after t = {t:.6g}: {what}, beyond the "
                   f"energy tolerance {tol:g} (the scheme's own error at h = {h:g}, not a "
                   "blow-up); raise the energy tolerance (rrp run --energy-tolerance) or "
                   f"lower h, then resume from the last good state (t = {t:.6g}, kept).")
            return Failure(kind, t, step, msg, stab, {"h": h})
        if h > stab.h_stable:
            hint = f"h = {h:g} exceeds the {limit}; lower h below {stab.h_stable:.2g}"
        elif not math.isfinite(stab.h_stable):
            hint = (f"no stiff interaction limits h = {h:g} here, yet the motion "
                    "outran the step; lower h")
        else:
            hint = (f"h = {h:g} is within the {limit}, but a stiffer interaction was "
                    "met; lower h")
        msg = (f"the run blew up in the step after t = {t:.6g} ({what}): {hint}, then "
               f"resume from the last good state (t = {t:.6g}, kept).")
        return Failure(kind, t, step, msg, stab, {"h": h})


def _check_start(s0: tuple, e0: np.ndarray) -> None:
    """Refuse an initial state that is not finite, or whose energy is not, naming the
    value (a velocity, spin or position too large for floating point, or not a number):
    no step size can run it, so "lower h" would be the wrong advice."""
    for name, a in (("position", s0[0]), ("velocity", s0[1]), ("attitude", s0[2]),
                    ("spin", s0[3])):
        bad = np.flatnonzero(~np.isfinite(a).all(axis=1))
        if bad.size:
            raise SimulationError(
                f"the initial {name} of body {int(bad[0])} is not finite ({a[bad[0]]}): "
                "check the scenario's parameters (too large a value, or not a number)")
    for k, name in enumerate(ENERGY_NAMES):
        if not math.isfinite(float(e0[k])):
            raise SimulationError(
                f"the initial {name} energy is not finite ({float(e0[k]):g}): a velocity, "
                "spin, mass or stiffness of the scenario is too large for floating point; "
                "check its parameters")


_EVENT_KERNELS_BUILT: set[str] = set()
"""The models (by name) whose event-driven kernels ran in this process
(:meth:`Simulation.kernels_cached`)."""


def _resumed_integrator(d: dict) -> str:
    """The scheme of a saved state: its name, except that ``energy-stepping`` saved with
    another ε than today's default resumes with its own (``energy-stepping:REL``)."""
    name = str(d["integrator"])
    rel = d.get("es_eps_rel")
    if name == ENERGY_STEPPING and rel is not None and float(rel) != DEFAULT_EPS_REL:
        return energy_stepping_name(float(rel))
    return name


def energy_names(model: Model) -> list[str]:
    """The names of the energy components the model reports (``layout.ENERGY_NAMES``)."""
    return [n for n in ENERGY_NAMES if n in model.energy_components]
