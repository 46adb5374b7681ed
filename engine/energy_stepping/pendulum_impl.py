"""The pendulum's event loop (``pendulum._run``) behind :class:`..stepper.EnergyStepper`.

Terraces: the levels are ``v₀ + kε`` with ``v₀ = V(0) − ε/2`` (the start in the middle of
its terrace: the placement whose convergence in ε is regular, docs/physics.md §3.10),
so ``V − V_ε ∈ [−ε/2, ε/2)`` with ``V_ε`` the middle of the terrace.  **A start from
rest** (``Ω = 0`` where gravity has a moment) would never move on a flat terrace: the
start is then put *on* a level (``v₀ = V(0)``) and the pendulum steps down it at
``t = 0``, gaining the kinetic energy ``ε/2`` (on the level ``V_ε`` is the level's value,
the mean of the terraces either side, so ``T + V_ε = V(0) = E₀`` as for a start
mid-terrace; issue #33 item 7), then the exact motion of ``T − V_ε``.
"""

from __future__ import annotations

import numpy as np

from ..layout import E_DISSIPATED, E_GRAVITY
from ..models.base import Model
from ..rotations import quat_rotate_t
from ..state import State
from .errors import EnergySteppingError
from .pendulum import (
    OFF_LEVEL,
    ON_UPPER,
    STATUS_MAX_EVENTS,
    STATUS_OK,
    PendulumParams,
    _flight,
    advance_packed,
    jump,
    potential,
)
from .pendulum_records import (
    F_T_EV,
    I_BUDGET,
    I_DONE,
    I_EVENTS,
    I_LEVEL,
    I_ON,
    I_RECORDS,
    I_REFL,
    I_STATUS,
    I_W_START,
    N_IV,
    RecordChunk,
    advance_records,
)


class PendulumImpl:
    n_terms = 1

    def __init__(self, model: Model, eps: float, state: State, keep_steps: int,
                 t0: float = 0.0) -> None:
        self.params = p = PendulumParams.from_model(model)
        self.eps = eps
        self.J = p.J
        self.q_ev = np.array(state.q[0], dtype=float)
        self.q_ev /= np.linalg.norm(self.q_ev)
        self.q = self.q_ev[None].copy()
        """Scratch: the attitude read on the flight at a record's time (:meth:`sample`)."""
        self.t_ev = float(t0)
        """The time of the last event (where ``q_ev`` is), on the run's clock: the
        events' times are summed from it whatever the recording (issue #33 item 1)."""
        self.om = np.array(state.omega[0], dtype=float)
        if not (np.all(np.isfinite(self.q_ev)) and np.all(np.isfinite(self.om))):
            raise EnergySteppingError("energy-stepping: the start is not finite; check the "
                                      "scenario's attitude and spin")
        self.x = np.array(state.x, dtype=float)
        self.v = np.zeros_like(self.x)
        v = float(potential(self.q_ev, p))
        self.n_events = 0
        self.n_reflections = 0
        self._dts = np.zeros(max(int(keep_steps), 0))
        self._n_dts = 0
        self._no_dts = np.zeros(0)
        r = p.rho0
        u = np.array(quat_rotate_t(*self.q_ev, *r))
        moment = p.mg * np.array([u[1], -u[0], 0.0])
        if not np.any(self.om) and np.any(moment):  # at rest off an extremum: step down
            self.v0 = v
            self.level = 0
            self.on = OFF_LEVEL
            # (by ε/2: on the level V_ε is the level's value, so T + V_ε = V(0) = E₀;
            # issue #33 item 7, as spheres.half_kick)
            res = jump(self.q_ev, self.om, -1, p.mg, p.J, r[0], r[1], r[2], 0.5 * eps)
            self.level, self.on = -1, ON_UPPER
            self.n_events = 1
            assert res == -1
        else:
            self.v0 = v - 0.5 * eps
            self.level = 0
            self.on = OFF_LEVEL

    def export(self) -> dict[str, np.ndarray]:
        return {"kind": np.array([0]), "q_ev": self.q_ev, "q": self.q, "om": self.om,
                "x": self.x, "ints": np.array([self.level, self.on, self.n_events,
                                               self.n_reflections]),
                "floats": np.array([0.0, self.v0]), "t_ev": np.array([self.t_ev])}

    @classmethod
    def restore(cls, model: Model, eps: float, d: dict, t: float = 0.0) -> PendulumImpl:
        if int(np.asarray(d["kind"]).reshape(-1)[0]) != 0:
            raise EnergySteppingError("energy-stepping: the saved stepper is not the "
                                      "pendulum's; resume with the scenario it was run on")
        self = cls.__new__(cls)
        self.params = PendulumParams.from_model(model)
        self.eps, self.J = eps, self.params.J
        self.q_ev = np.array(d["q_ev"], dtype=float)
        self.q = np.array(d["q"], dtype=float)
        self.om = np.array(d["om"], dtype=float)
        self.x = np.array(d["x"], dtype=float)
        self.v = np.zeros_like(self.x)
        self.level, self.on, self.n_events, self.n_reflections = (
            int(v) for v in np.asarray(d["ints"]))
        t_since, self.v0 = (float(v) for v in np.asarray(d["floats"]))
        # (a stepper saved before issue #33 kept the time since the last event)
        self.t_ev = float(np.asarray(d["t_ev"]).reshape(-1)[0]) if "t_ev" in d \
            else t - t_since
        self._dts = np.zeros(0)
        self._n_dts = 0
        self._no_dts = np.zeros(0)
        return self

    def events_by_kind(self) -> dict[str, int]:
        return {"pivot gravity": int(self.n_events)}

    def advance(self, t_end: float, budget: int) -> bool:
        """At most ``budget`` events towards ``t_end`` (from the state just after the
        last event, whose ``on`` flag holds there): ``True`` when every event up to
        ``t_end`` is done, ``False`` when the budget ran out first."""
        room = self._dts.shape[0] - self._n_dts
        dts = self._dts[self._n_dts:] if room > 0 else self._no_dts
        fs, iv = self._packed()
        fs[7], fs[8] = t_end, self.t_ev
        iv[0], iv[1], iv[2] = self.level, self.on, budget
        advance_packed(self.q_ev, self.om, fs, iv, dts)
        t_last, (level, on, _, status, events, refl) = fs[8], iv
        if status not in (STATUS_OK, STATUS_MAX_EVENTS):
            raise EnergySteppingError("energy-stepping stopped: stuck at a tangency "
                                      "(events without flight); change ε")
        if room > 0:
            self._n_dts += min(int(events), room)
        self.level, self.on = int(level), int(on)
        self.t_ev = float(t_last)
        self.n_events += int(events)
        self.n_reflections += int(refl)
        return status == STATUS_OK

    def advance_records(self, times: np.ndarray, done: int, first: int, stride: int,
                        budget: int, out: RecordChunk) -> tuple[bool, int]:
        """:meth:`advance` to ``times[done]``, ``times[done + 1]``, … in turn in one
        compiled call (``pendulum_records.advance_records``, issue #33 item 2), at most
        ``budget`` events: a record into ``out`` at each time reached whose step
        ``first + k`` is a multiple of ``stride``.  Returns ``(all reached, events of
        the call before the time under way began)``; ``out.records`` and
        :attr:`n_events` move on with what was done (also when stuck: then
        :class:`EnergySteppingError`), the times reached are ``out.done``."""
        room = self._dts.shape[0] - self._n_dts
        dts = self._dts[self._n_dts:] if room > 0 else self._no_dts
        fs, _ = self._packed()
        fs[F_T_EV] = self.t_ev
        iv = self._iv_rec
        iv[:] = 0
        iv[I_LEVEL], iv[I_ON], iv[I_BUDGET] = self.level, self.on, budget
        iv[I_DONE], iv[I_RECORDS] = done, out.records
        out.x, out.v = self.x, self.v
        advance_records(self.q_ev, self.om, fs, iv, dts, times, first, stride, out.m, out.J,
                        self.x, self.v, out.q1, out.o1, out.q, out.om, out.s, out.P, out.L)
        events = int(iv[I_EVENTS])
        if room > 0:
            self._n_dts += min(events, room)
        self.level, self.on = int(iv[I_LEVEL]), int(iv[I_ON])
        self.t_ev = float(fs[F_T_EV])
        self.n_events += events
        self.n_reflections += int(iv[I_REFL])
        out.records, out.done = int(iv[I_RECORDS]), int(iv[I_DONE])
        status = int(iv[I_STATUS])
        if status not in (STATUS_OK, STATUS_MAX_EVENTS):
            raise EnergySteppingError("energy-stepping stopped: stuck at a tangency "
                                      "(events without flight); change ε")
        return status == STATUS_OK, int(iv[I_W_START])

    def _packed(self) -> tuple[np.ndarray, np.ndarray]:
        """The scalars of :func:`~.pendulum.advance_packed` (made once)."""
        if getattr(self, "_fs", None) is None:
            p = self.params
            self._fs = np.array([p.mg, p.J, *p.rho0, self.eps, self.v0, 0.0, 0.0])
            self._iv = np.zeros(6, dtype=np.int64)
            self._iv_rec = np.zeros(N_IV, dtype=np.int64)
        return self._fs, self._iv

    @property
    def work(self) -> int:
        return int(self.n_events)

    def clock_now(self) -> float:
        return self.t_ev

    def sample(self, t: float, out: tuple | None = None) -> tuple:
        """``(x, v, q, Ω)`` at ``t`` read on the flight from the last event (``q_ev``
        untouched)."""
        if out is None:
            _flight(self.q_ev, self.om, t - self.t_ev, self.q[0])
            return self.x, self.v, self.q, self.om[None]
        x, v, q, om = out
        _flight(self.q_ev, self.om, t - self.t_ev, q[0])
        x[...] = self.x
        v[...] = self.v
        om[0] = self.om
        return out

    def _v_eps(self) -> float:
        return self.v0 + (self.level + 0.5) * self.eps

    def _potential(self, q: np.ndarray) -> float:
        """``V = −m g e₃·Rρ₀`` (scalar arithmetic: a record's cost, issue #33 item 2)."""
        p = self.params
        return -p.mg * quat_rotate_t(q[0, 0], q[0, 1], q[0, 2], q[0, 3], *p.rho0)[2]

    def terrace_gap(self, t: float, state: tuple | None = None) -> float:
        """``V − V_ε`` at ``t``; ``state``: :meth:`sample` of ``t`` already made."""
        _, _, q, _ = self.sample(t) if state is None else state
        return self._potential(q) - self._v_eps()

    def record_potential(self, t: float, state: tuple, e: np.ndarray) -> tuple[float, bool]:
        """The gap, and ``e[2:]``: gravity about the pivot, the model's only potential
        (``potentials.gravity.pivot_gravity``'s ``E_GRAVITY``; the others 0)."""
        V = self._potential(state[2])
        e[2:E_DISSIPATED] = 0.0
        e[E_GRAVITY] = V
        return V - self._v_eps(), True

    def energy_eps(self, t: float) -> float:
        return 0.5 * self.J * float(self.om @ self.om) + self._v_eps()

    def flight_times(self) -> np.ndarray:
        return self._dts[:self._n_dts].copy()

