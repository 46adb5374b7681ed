"""The pendulum's recording intervals a chunk at a time (issue #33 item 2): one compiled
call runs the events up to each of ``K`` record times in turn and reads each record on
the flight there — the attitude, the spin, ``V`` and the terrace gap, the kinetic
energies and the momenta — into preallocated arrays, so that a record costs about what
reading the flight costs instead of ~15 µs of Python per recording interval.

The numbers are those of the per-interval path (``PendulumImpl.advance``, ``sample``,
``record_potential`` and ``records.kinetic_and_momenta``), bit for bit: the same
kernels in the same order (the events never depend on the record times, issue #33
item 1), and the same event budget per call (``stepper.SLICE_SECONDS``: Python, its
signal handlers and ``poll``, gets control back several times a second, item 4).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..layout import E_DISSIPATED, E_GRAVITY, E_ROTATIONAL, E_TRANSLATIONAL
from ..rotations import quat_rotate_t
from .pendulum import STATUS_OK, _flight, _run
from .records import kinetic_and_momenta

R_V, R_GAP, R_T_TRANS, R_T_ROT = 0, 1, 2, 3
"""The columns of a chunk's scalars (:attr:`RecordChunk.s`)."""
N_R = 4

F_T_EV = 7
"""``fs[7]``: the time of the last event (in and out)."""
I_LEVEL, I_ON, I_BUDGET, I_STATUS, I_EVENTS, I_REFL, I_DONE, I_RECORDS, I_W_START = range(9)
"""The slots of ``iv``: the terrace (level, on flag; in and out), the event budget of the
call (in), its status, events and reflections (out), the record times reached and the
records written (in and out), and the events of the call before the time under way
began (out: where that interval's pace is judged from)."""
N_IV = 9


class RecordChunk:
    """The arrays one chunk of records is written into (:meth:`EnergyStepper.
    advance_records`): for record ``r < records``, ``q[r]``, ``om[r]`` (the body's
    attitude and spin), ``s[r]`` (``V``, the terrace gap, ``T_trans``, ``T_rot``:
    ``R_*``), ``P[r]``, ``L[r]``; ``m``, ``J``: the bodies' masses and inertias the
    kinetic energies and momenta are taken with (the simulation's force field's, as a
    per-interval record takes them)."""

    def __init__(self, capacity: int, m: np.ndarray, J: np.ndarray) -> None:
        self.q = np.empty((capacity, 4))
        self.om = np.empty((capacity, 3))
        self.s = np.empty((capacity, N_R))
        self.P = np.empty((capacity, 3))
        self.L = np.empty((capacity, 3))
        self.m = np.ascontiguousarray(m, dtype=float)
        self.J = np.ascontiguousarray(J, dtype=float)
        self.records = 0
        self.done = 0
        """The record times reached (of the chunk's ``times``)."""
        self.o1 = np.empty((1, 3))
        """The spin at the last time reached, as the one body's row."""
        self.q1 = np.empty((1, 4))
        """The attitude at the last time reached (recorded there or not)."""

        self.x = self.v = np.zeros((1, 3))
        """The body's position and velocity (the stepper's: fixed at the pivot)."""

    @property
    def capacity(self) -> int:
        return self.q.shape[0]

    def state_into(self, x: np.ndarray, v: np.ndarray, q: np.ndarray,
                   om: np.ndarray) -> None:
        """``(x, v, q, Ω)`` at the last time reached (``done > 0`` in this chunk or an
        earlier one), as ``PendulumImpl.sample`` reads it there, into the four arrays
        (valid also when the events have gone on past it: a stop on the way)."""
        x[...] = self.x
        v[...] = self.v
        q[...] = self.q1
        om[...] = self.o1

    def energies(self, e_now: np.ndarray) -> np.ndarray:
        """The records' energy components (``layout.ENERGY_NAMES`` order) as
        ``PendulumImpl.record_potential`` and the kinetic energies write them over the
        current ``e_now`` (gravity about the pivot, the model's only potential; the
        components no record writes, the dissipated energy, are ``e_now``'s)."""
        r = self.records
        e = np.empty((r, e_now.shape[0]))
        e[:] = e_now
        e[:, E_TRANSLATIONAL] = self.s[:r, R_T_TRANS]
        e[:, E_ROTATIONAL] = self.s[:r, R_T_ROT]
        e[:, E_GRAVITY:E_DISSIPATED] = 0.0
        e[:, E_GRAVITY] = self.s[:r, R_V]
        return e


@njit(cache=True, nogil=True)
def advance_records(q_ev, om, fs, iv, dts, times, first, stride, m, Jb, x, v, q1, o1,
                    rq, rom, rs, rP, rL):
    """Run the events to ``times[k]`` for ``k = iv[I_DONE], …`` in turn (``_run`` with
    the packed scalars of ``pendulum.advance_packed``: ``fs = (m g, J, ρ₀ (3), ε, v₀,
    t_ev, ·)``), at most ``iv[I_BUDGET]`` events in all; at each time reached whose step
    ``first + k`` is a multiple of ``stride``, a record into row ``iv[I_RECORDS]`` of
    ``rq, rom, rs, rP, rL`` (as ``PendulumImpl.sample`` + ``record_potential`` +
    ``records.kinetic_and_momenta`` make it; ``x``, ``v``: the body's position and
    velocity); ``q1[0]``, ``o1[0]``: the attitude and spin at the last time reached.
    ``q_ev``, ``om``, ``fs[F_T_EV]`` and ``iv`` are left as after the last event;
    ``iv[I_STATUS]`` is ``STATUS_OK`` when every time was reached, else ``_run``'s
    (``STATUS_MAX_EVENTS``: the budget ran out on the way to ``times[iv[I_DONE]]``)."""
    rec_q = np.zeros((0, 4))
    rec_om = np.zeros((0, 3))
    rec_level = np.zeros(0, dtype=np.int64)
    mg, J, r0, r1, r2, eps, v0 = fs[0], fs[1], fs[2], fs[3], fs[4], fs[5], fs[6]
    t_ev = fs[F_T_EV]
    level, on, budget = iv[I_LEVEL], iv[I_ON], iv[I_BUDGET]
    k, r = iv[I_DONE], iv[I_RECORDS]
    used = 0
    refl = 0
    w_start = 0
    status = STATUS_OK
    n_dts = dts.shape[0]
    while k < times.shape[0]:
        t = times[k]
        w_start = used
        status, level, on, events, rk, _, t_ev = _run(
            q_ev, om, level, on, mg, J, r0, r1, r2, eps, v0, t, 1.0, budget - used,
            rec_q, rec_om, rec_level, dts[min(used, n_dts):], False, t_ev)
        used += events
        refl += rk
        if status != STATUS_OK:
            break
        _flight(q_ev, om, t - t_ev, q1[0])
        o1[0, 0], o1[0, 1], o1[0, 2] = om[0], om[1], om[2]
        if (first + k) % stride == 0:
            for c in range(4):
                rq[r, c] = q1[0, c]
            rom[r, 0], rom[r, 1], rom[r, 2] = om[0], om[1], om[2]
            V = -mg * quat_rotate_t(rq[r, 0], rq[r, 1], rq[r, 2], rq[r, 3], r0, r1, r2)[2]
            rs[r, R_V] = V
            rs[r, R_GAP] = V - (v0 + (level + 0.5) * eps)
            rs[r, R_T_TRANS], rs[r, R_T_ROT] = kinetic_and_momenta(m, Jb, x, v, o1, rP[r],
                                                                   rL[r])
            r += 1
        k += 1
    fs[F_T_EV] = t_ev
    iv[I_LEVEL], iv[I_ON] = level, on
    iv[I_STATUS], iv[I_EVENTS], iv[I_REFL] = status, used, refl
    iv[I_DONE], iv[I_RECORDS], iv[I_W_START] = k, r, w_start
