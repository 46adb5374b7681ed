"""The driver of models in generalized coordinates (the spring pendulum): the interface
of :class:`engine.simulation.Simulation` (whose shared parts it inherits: the settings,
the clock, the record bookkeeping, the checks and the blow-up report, issue #34 §4)
over the compiled loop of :mod:`.schemes`; made for a model with
``coordinates == "generalized"`` by :func:`engine.drivers.simulation_for`.

The physical state shared by all schemes is the node ``(q_k, v_k)``; each scheme keeps
its own velocity variable (``u_k`` for ``moreau``, ``u_{k−1}`` for the two-step schemes)
and is given it by :func:`.schemes.to_internal` when it takes over or the step changes
(docs/physics.md §3.9, generalized §5).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from ..integrators.registry import IntegratorInfo
from ..layout import (
    DEFAULT_MAX_ITERATIONS,
    DEFAULT_TOLERANCE,
    ERR_CONTACT,
    ERR_NO_CONVERGENCE,
    N_ENERGY,
    N_IS,
    OK,
)
from ..models.base import Model
from ..simulation import (
    DEFAULT_ENERGY_TOLERANCE,
    Event,
    Failure,
    Simulation,
    SimulationError,
    Snapshot,
    StepReport,
    TimeSeries,
    check_step,
)
from ..simulation.choice import check_count, check_fraction
from ..solver_counts import contact_stats
from ..stability import StabilityEstimate
from ..state import State
from . import schemes as S
from .spring_pendulum import SP_G, SP_K, SP_L0, SP_M, generalized

__all__ = ["GeneralizedSimulation"]


class GeneralizedSimulation(Simulation):
    """Drive a generalized-coordinate model (``model.system``) with a Moreau-type scheme.

    Same constructor and public interface as :class:`engine.simulation.Simulation`, plus
    :attr:`contact_stats` and :attr:`max_iterations`.  The view sees one body at
    ``(x, y, 0)`` turned about ``z`` by the pendulum angle.  Made for a model by
    :func:`engine.drivers.simulation_for`.
    """

    COORDINATES = "generalized"

    def __init__(self, model: Model, integrator: str = "moreau-symmetric", h: float = 1e-3,
                 *, record_every: int = 1, record_frames: bool = True,
                 energy_tolerance: float | None = DEFAULT_ENERGY_TOLERANCE,
                 state: State | None = None, record_state: bool = False) -> None:
        if getattr(model, "coordinates", "bodies") != self.COORDINATES:
            raise SimulationError(f"model {model.name!r} is not in generalized coordinates: "
                                  "make its simulation with engine.simulation_for(model, …)")
        self._init_settings(model, record_every, record_frames, energy_tolerance,
                            record_state)
        self.system = model.system
        self.sp = np.ascontiguousarray(self.system.sp, dtype=np.float64)
        self.ff = model.forcefield
        self.aux: dict[str, np.ndarray] = {}
        self._init_clock()
        self._stats = np.zeros(N_IS)
        self._ctrl = np.zeros(S.N_CTRL)
        self._ctrl[S.C_TOL] = DEFAULT_TOLERANCE
        self._ctrl[S.C_MAX_IT] = DEFAULT_MAX_ITERATIONS
        self._info = np.zeros(4)
        self._o = np.zeros(S.N_OUT)
        self._s = np.zeros(5)
        self._s1 = np.zeros(5)
        self._e_row = np.zeros(N_ENERGY)
        self._pl = np.zeros(6)
        self._frame = np.zeros(10)
        self._integrator: IntegratorInfo = self._check_integrator(integrator)
        self.h = self._check_h(h, self._integrator)
        st = state if state is not None else model.initial_state
        x, v = st.x[0], st.v[0]
        q0, q1, v0, v1 = generalized(self.sp, float(x[0]), float(x[1]), float(v[0]),
                                     float(v[1]))
        self._set_node(q0, q1, v0, v1, 0.0)
        e0 = self.energy
        self.e_ref = float(e0.sum())
        self.e_scale = _energy_scale(e0)
        snap = self.snapshot()
        m = self.system.mass
        self.p_scale = max(m * float(np.linalg.norm(snap.v[0])), m * math.sqrt(
            2.0 * max(self.e_ref, 0.0) / m), 1e-300)
        self.l_scale = max(float(np.linalg.norm(snap.L)), self.p_scale * float(
            np.linalg.norm(snap.x[0])), 1e-300)
        self.series = TimeSeries(1, self.record_frames)
        self._record_now()

    # ------------------------------------------------------------------ properties
    @property
    def _scheme(self) -> int:
        return S.SCHEME_IDS[self._integrator.name]

    @property
    def _statistics(self) -> np.ndarray:
        """The loop's statistics (``layout.IS_*``): Newton iterations of the smooth
        solves (steps of the implicit schemes) and the contact solves."""
        return self._stats

    @property
    def contact_stats(self) -> dict[str, float]:
        """``contacts`` and ``percussions`` (last step: active, with ``P_N > 0``),
        ``impacts`` (steps with ``P_N > 0`` so far), ``solves``/``iterations``/
        ``max_iterations`` of the contact solve (1 iteration for a closed form, Newton
        iterations on ``(u, P)`` otherwise) and ``penetration`` (largest ``−g_N`` seen)."""
        return contact_stats(self._stats, mean=False)

    @property
    def tolerance(self) -> float:
        """Newton tolerance on the size of the update relative to ``1 + |u|``."""
        return float(self._ctrl[S.C_TOL])

    @tolerance.setter
    def tolerance(self, tol: float) -> None:
        self._ctrl[S.C_TOL] = check_fraction(tol, "iteration tolerance", "1e-14")

    @property
    def max_iterations(self) -> int:
        """Iteration cap of the Newton solves."""
        return int(self._ctrl[S.C_MAX_IT])

    @max_iterations.setter
    def max_iterations(self, n: int) -> None:
        self._ctrl[S.C_MAX_IT] = check_count(n, "iteration cap")

    @property
    def node(self) -> tuple[np.ndarray, np.ndarray]:
        """``(q_k, v_k)``: the node configuration and physical node velocity (copies)."""
        v0, v1 = S.node_velocity(self._scheme, self.sp, self._s, self.h)
        return self._s[:2].copy(), np.array([v0, v1])

    @property
    def dissipated(self) -> float:
        return float(self._s[4])

    @property
    def state(self) -> State:
        """The drawn body (``x = (x, y, 0)``, attitude about ``z``), built from the node."""
        snap = self.snapshot()
        return State(snap.x, snap.v, snap.q, snap.omega, self.aux)

    @property
    def energy(self) -> np.ndarray:
        """Node energy components (``layout.ENERGY_NAMES`` order), a copy."""
        S.node_values(self._scheme, self.sp, self._s, self.h, self._e_row, self._pl,
                      self._frame)
        return self._e_row.copy()

    @property
    def relative_energy_error(self) -> float:
        return (float(self.energy.sum()) - self.e_ref) / self.e_scale

    # ------------------------------------------------------------------ control
    def _renode(self, attr: str, value: Any) -> Any:
        """Set ``attr`` (the scheme or the step) to ``value`` and re-derive the scheme's
        variables at the current node ``(q_k, v_k)``; the old value, returned, is put
        back where that fails (nothing changed: the state and the setting are the old
        ones)."""
        q, v = self.node
        old = getattr(self, attr)
        setattr(self, attr, value)
        try:
            self._set_node(q[0], q[1], v[0], v[1], self._s[4])
        except SimulationError:
            setattr(self, attr, old)
            raise
        return old

    def set_integrator(self, name: str) -> None:
        """Switch scheme at the current node: ``(q_k, v_k)`` carries over, the new
        scheme's velocity variable is derived from it (:func:`.schemes.to_internal`)."""
        info = self._check_integrator(name)
        self._check_h(self.h, info)
        if info.name != self._integrator.name:
            old = self._renode("_integrator", info)
            self.events.append(Event(self.step_index, self.t, "integrator", old.name,
                                     info.name))

    def set_h(self, h: float) -> None:
        """Change the step at the current node (the two-step schemes' ``u_{k−1}`` is
        re-derived for the new step so that the node velocity is unchanged)."""
        h = self._check_h(h, self._integrator)
        if h != self.h:
            old = self._renode("h", h)
            self.events.append(Event(self.step_index, self.t, "h", repr(float(old)),
                                     repr(float(h))))  # (exact: an export re-runs it)
            self._t_base, self._step_base = self.t, self.step_index

    def warm_up(self) -> None:
        """Compile (or load from the disk cache) the kernels without taking a step."""
        self._call_kernel(0)
        self.stability()

    def kernels_cached(self, integrator: str) -> bool:
        """Always true: one small loop serves every scheme of a generalized model, and
        :meth:`warm_up` has built it."""
        return True

    def build_kernels(self, integrator: str) -> None:
        """Nothing to build (see :meth:`kernels_cached`)."""

    def advance(self, n_steps: int) -> StepReport:
        """Take up to ``n_steps`` steps; on a failure the state is the last good one and
        the report carries a :class:`~engine.simulation.Failure`."""
        n_steps = int(n_steps)
        done, status = self._call_kernel(n_steps)
        if status != OK:
            return StepReport(done, self._failure(status))
        return StepReport(done)

    def snapshot(self) -> Snapshot:
        S.node_values(self._scheme, self.sp, self._s, self.h, self._e_row, self._pl,
                      self._frame)
        f = self._frame
        v0, v1 = S.node_velocity(self._scheme, self.sp, self._s, self.h)
        from .spring_pendulum import cartesian

        _, _, vx, vy = cartesian(self.sp, self._s[0], self._s[1], v0, v1)
        return Snapshot(self.t, self.step_index, self._integrator.name, self.h,
                        f[None, 0:3].copy(), np.array([[vx, vy, 0.0]]), f[None, 3:7].copy(),
                        f[None, 7:10].copy(), self._e_row.copy(), self._pl[:3].copy(),
                        self._pl[3:].copy())

    def stability(self) -> StabilityEstimate:
        """``h < 2/ω`` with ``ω² = k/m + g/l₀`` (spring and pendulum stiffness; the wall
        is hard and sets no limit)."""
        sp = self.sp
        om = math.sqrt(sp[SP_K] / sp[SP_M] + sp[SP_G] / sp[SP_L0])
        return StabilityEstimate(2.0 / om, om, "spring and gravity", 0, math.inf)

    def checkpoint(self) -> tuple:
        """Everything needed to come back to this instant (copies)."""
        return (self._s.copy(), self.t, self.step_index, self._integrator, self.h,
                self._stats.copy())

    def restore(self, cp: tuple) -> None:
        s, t, step, info, h, stats = cp
        self._s[:] = s
        self.t, self.step_index = t, step
        self._integrator, self.h = info, h
        self._stats[:] = stats
        self._t_base, self._step_base = t, step

    def rrp_exact_limit(self, h: float | None = None) -> tuple[float, int, float]:
        return math.inf, -1, 0.0

    # ------------------------------------------------------------------ resume
    _ARRAYS = ("_s", "_stats", "_ctrl", "_info")
    """The arrays that carry over from step to step (``_s1``, ``_o``, ``_e_row``, ``_pl``
    and ``_frame`` are scratch and outputs, rewritten by every step)."""

    def resume_state(self) -> dict:
        """As :meth:`engine.simulation.Simulation.resume_state`: the scheme's state
        ``_s = (q₀, q₁, u₀, u₁, D)`` with its scratch, statistics and controls, the clock,
        the integrator, the references and the recording settings."""
        d: dict = {"kind": "generalized", "format": self.RESUME_FORMAT}
        for name in self._ARRAYS:
            d[name.lstrip("_")] = getattr(self, name).copy()
        d.update(self._resume_scalars())
        return d

    def _init_resumed(self, model: Model, d: dict, kw: dict) -> None:
        GeneralizedSimulation.__init__(self, model, str(d["integrator"]), float(d["h"]), **kw)
        try:
            for name in self._ARRAYS:
                getattr(self, name)[...] = d[name.lstrip("_")]
        except KeyError as exc:
            raise SimulationError(f"the saved state lacks {exc.args[0]!r}") from None
        except ValueError as exc:
            raise SimulationError(f"the saved state does not fit model {model.name!r}: "
                                  f"{exc}") from None
        self._restore_scalars(d)

    def _start_from_frame(self, frame, keep_clock: bool, energy_reference) -> None:
        D = float(getattr(frame, "D", 0.0) or 0.0)
        gq, gv = getattr(frame, "gq", None), getattr(frame, "gv", None)
        if gq is not None and gv is not None and np.all(np.isfinite(gq)) and \
                np.all(np.isfinite(gv)):
            self._set_node(float(gq[0]), float(gq[1]), float(gv[0]), float(gv[1]), D)
        else:
            self._s[4] = D
        if energy_reference is None:
            self.e_scale = _energy_scale(self.energy)
        self._after_frame(keep_clock, energy_reference, frame)

    # ------------------------------------------------------------------ internals
    def _check_h(self, h: float, info: IntegratorInfo) -> float:
        return check_step(h)

    def _set_node(self, q0: float, q1: float, v0: float, v1: float, d: float) -> None:
        u0, u1, its, ok = S.to_internal(self._scheme, self.sp, q0, q1, v0, v1, self.h,
                                        self.tolerance, self.max_iterations)
        if not ok:
            raise SimulationError(
                f"{self._integrator.name} cannot start from the current state at h = "
                f"{self.h:g}: its velocity variable did not converge; lower h")
        self._s[:] = (q0, q1, u0, u1, d)

    def _stops_at_records(self) -> bool:
        """Recording the state, the loop stops at every record to keep the node state it
        does not write (:meth:`engine.simulation.Simulation._call_kernel`)."""
        return True

    def _state_row(self) -> dict[str, np.ndarray]:
        """The drawn body's velocity and the node ``(q, v)`` at the current step."""
        from .spring_pendulum import cartesian

        q, v = self.node
        _, _, vx, vy = cartesian(self.sp, q[0], q[1], v[0], v[1])
        return {"v": np.array([[[vx, vy, 0.0]]]), "gq": q[None], "gv": v[None]}

    def _call_kernel_chunk(self, n: int) -> tuple[int, int]:
        first, n_rec = self._records_ahead(n)
        nf = n_rec if self.record_frames else 0
        rec = (np.empty((n_rec, N_ENERGY)), np.empty((n_rec, 3)), np.empty((n_rec, 3)),
               np.empty((nf, 1, 3)), np.empty((nf, 1, 4)), np.empty((nf, 1, 3)))
        c = self._ctrl
        c[S.C_E_REF] = getattr(self, "e_ref", 0.0)
        c[S.C_E_SCALE] = getattr(self, "e_scale", 1.0)
        c[S.C_E_TOL] = self.energy_tolerance if self.energy_tolerance is not None else 0.0
        t0, c0 = time.perf_counter(), time.thread_time()
        done, nrec, status = S.run(self._scheme, n, self.h, self.step_index,
                                   self.record_every, self.sp,
                                   self._s, self._s1, c, self._stats, self._info, self._o,
                                   self._e_row, self._pl, self._frame, *rec,
                                   self.record_frames)
        self._after_kernel(n, done, t0, c0)
        r = slice(0, nrec)
        steps, times = self._record_steps(first, nrec)
        extra = {"step": steps}
        if self.record_state and self.record_frames:
            extra.update(self._state_row() if nrec else {
                "v": np.zeros((0, 1, 3)), "gq": np.zeros((0, 2)), "gv": np.zeros((0, 2))})
        self.series.append(times, rec[0][r], rec[1][r], rec[2][r], rec[3][r], rec[4][r],
                           rec[5][r], **extra)
        return done, status

    def _failure(self, status: int) -> Failure:
        stab = self.stability()
        t, step, h = self.t, self.step_index, self.h
        name = self._integrator.name
        keep = f"the state at t = {t:.6g} is kept"
        if status == ERR_NO_CONVERGENCE:
            its, upd = int(self._info[1]), float(self._info[2])
            msg = (f"{name} did not converge at t = {t:.6g}: Newton stopped after {its} "
                   f"iterations with an update of {upd:.3g} (tolerance {self.tolerance:g}, "
                   f"cap {self.max_iterations}); lower h (now {h:g}), loosen the tolerance "
                   f"or use moreau (explicit); {keep}.")
            return Failure("no-convergence", t, step, msg, stab,
                           {"iterations": its, "update": upd})
        if status == ERR_CONTACT:
            msg = (f"{name}: the contact solve at t = {t:.6g} gave a negative percussion "
                   f"(the impact law has no solution at h = {h:g}); lower h; {keep}.")
            return Failure("no-convergence", t, step, msg, stab, {})
        what, kind = self._what_failed(status)
        hint = (f"h = {h:g} exceeds the {stab.describe()}; lower h below "
                f"{stab.h_stable:.2g}" if h > stab.h_stable else
                f"h = {h:g} is within the {stab.describe()}; lower h or use "
                "moreau-symmetric (moreau is first order with a velocity-dependent h)")
        return self._blow_up(name, what, kind, hint, stab)


def _energy_scale(e: np.ndarray) -> float:
    """The energy scale of a generalized model from its energy components ``e``: ``|E|``,
    or ``max(1, Σ|eᵢ|)`` where ``E = 0``."""
    e_ref = float(e.sum())
    return abs(e_ref) if e_ref != 0.0 else max(1.0, float(np.abs(e).sum()))
