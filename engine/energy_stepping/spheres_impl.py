"""The spheres' event loop (``.spheres``) behind :class:`..stepper.EnergyStepper`: the
terms of a model of spheres (``.terms``), their arrays, and the growth of the contact
list."""

from __future__ import annotations

import numpy as np

from .. import layout as lay
from ..forcefield import ForceField
from ..models.base import Model
from ..state import State
from . import spheres as sp
from .errors import EnergySteppingError
from .terms import (
    B_KA,
    B_KB,
    B_KS,
    B_R0,
    BEND,
    C_A,
    C_I,
    C_J,
    C_KIND,
    C_SIDE,
    GRAVITY,
    N_BREF,
    N_Q,
    N_TF,
    N_TI,
    Q_EPS,
    Q_G,
    Q_GDIR,
    Q_KA,
    Q_KB,
    Q_KC,
    Q_KS,
    Q_KW,
    Q_SKIN,
    RADIAL,
    SHEAR,
    SKIN,
    WALL,
    radial_minimum,
)

HANDLED = (lay.T_BONDS, lay.T_CONTACT, lay.T_WALL, lay.T_GRAVITY_FIELD)

_WHY = {0: "", sp.ERR_STUCK: "stuck at a tangency (events without any flight between "
        "them); change ε slightly",
        sp.ERR_LOST_CONTACT: "a contact left the neighbour list while in contact (an "
        "internal error: please report it)",
        sp.ERR_NONFINITE: "the velocities became non-finite (a term's gradient is not "
        "finite: coincident spheres?)"}


def bond_rows(ff: ForceField) -> np.ndarray:
    """The bonds' rows ``(d̂₀, r₀, K^m, K^a, K^s)`` (``terms.B_*``): each bond's own
    coefficients from the force field's per-bond table when it carries one (bond types
    of different coefficients, issue #35 item 1: each bond's terms terraced with its own
    constants), else the global ``fp[P_K_BEND]``, ``fp[P_K_AXIAL]``, ``fp[P_K_SHEAR]`` in
    every row."""
    nb = ff.bonds.shape[0]
    out = np.zeros((nb, N_BREF))
    out[:, :B_KB] = ff.bond_ref[:, :B_KB]
    if ff.per_bond:
        out[:, B_KB], out[:, B_KA], out[:, B_KS] = ff.bond_k[:, 0], ff.bond_k[:, 1], \
            ff.bond_k[:, 2]
    else:
        out[:, B_KB], out[:, B_KA], out[:, B_KS] = ff.fp[lay.P_K_BEND], ff.fp[lay.P_K_AXIAL], \
            ff.fp[lay.P_K_SHEAR]
    return out


class SpheresImpl:
    """Energy-stepping of a model of spheres: bonds (radial, bending, two shear ends
    each), Hertz contacts, walls, uniform gravity."""

    def __init__(self, model: Model, eps: float, state: State, keep_steps: int,
                 t0: float, start: bool = True) -> None:
        ff = model.forcefield
        flags, fp = ff.flags, ff.fp
        extra = [t for t in range(flags.shape[0]) if flags[t] and t not in HANDLED]
        if extra:
            raise EnergySteppingError(f"energy-stepping cannot terrace every term of "
                                      f"{model.name!r} (terms {extra}); use rrp-newmark")
        if ff.bpm_laws:  # (its terraces are the binder's: issue #44 item 1)
            raise EnergySteppingError(f"energy-stepping cannot terrace the BPM bond laws of "
                                      f"{model.name!r}; use rrp-newmark")
        n = model.n_bodies
        self.m = np.ascontiguousarray(ff.m, dtype=float)
        self.J = np.ascontiguousarray(ff.J, dtype=float)
        self.D = np.ascontiguousarray(ff.D, dtype=float)
        self.x = np.array(state.x, dtype=float)
        self.v = np.array(state.v, dtype=float)
        self.q = np.array(state.q, dtype=float)
        self.q /= np.linalg.norm(self.q, axis=1)[:, None]
        self.om = np.array(state.omega, dtype=float)
        if not all(np.all(np.isfinite(a)) for a in (self.x, self.v, self.q, self.om)):
            raise EnergySteppingError("energy-stepping: the start is not finite; check the "
                                      "scenario")
        self.tb = np.full(n, float(t0))
        self.xref = self.x.copy()
        prm = np.zeros(N_Q)
        prm[Q_EPS] = eps
        contacts = bool(flags[lay.T_CONTACT])
        if flags[lay.T_BONDS]:
            prm[Q_KB], prm[Q_KA] = fp[lay.P_K_BEND], fp[lay.P_K_AXIAL]
            prm[Q_KS] = fp[lay.P_K_SHEAR]
        if contacts:
            prm[Q_KC] = fp[lay.P_K_CONTACT]
        if flags[lay.T_WALL]:
            prm[Q_KW] = fp[lay.P_K_WALL]
        if flags[lay.T_GRAVITY_FIELD]:
            prm[Q_G] = fp[lay.P_G]
            prm[Q_GDIR:Q_GDIR + 3] = fp[lay.P_G_DIR:lay.P_G_DIR + 3]
        prm[Q_SKIN] = fp[lay.P_SKIN] if contacts else 0.0
        self.prm = prm
        self.bonds = np.ascontiguousarray(ff.bonds if flags[lay.T_BONDS] else
                                          np.zeros((0, 2)), dtype=np.int64)
        self.bref = bond_rows(ff) if flags[lay.T_BONDS] else np.zeros((0, N_BREF))
        self.walls = np.ascontiguousarray(ff.walls if flags[lay.T_WALL] else np.zeros((0, 4)),
                                          dtype=float)
        nb = self.bonds.shape[0]
        self.rstar = np.zeros(nb)
        self.vmin = np.zeros(nb)
        for b in range(nb):
            i, j = self.bonds[b]
            self.rstar[b], self.vmin[b] = radial_minimum(
                self.bref[b, B_R0], 0.5 * (self.D[i] + self.D[j]), self.bref[b, B_KA],
                prm[Q_KC])
        # bonded partners (CSR): the contact list leaves them out
        deg = np.zeros(n + 1, dtype=np.int64)
        np.add.at(deg, self.bonds[:, 0] + 1, 1)
        np.add.at(deg, self.bonds[:, 1] + 1, 1)
        self.bptr = np.cumsum(deg)
        self.bpart = np.zeros(max(2 * nb, 1), dtype=np.int64)
        fill = self.bptr[:-1].copy()
        for i, j in self.bonds:
            self.bpart[fill[i]] = j
            fill[i] += 1
            self.bpart[fill[j]] = i
            fill[j] += 1
        # static terms
        rows: list[tuple[int, int, int, int, int]] = []  # kind, i, j, a, side
        for b in range(nb):
            i, j = int(self.bonds[b, 0]), int(self.bonds[b, 1])
            if self.bref[b, B_KA] > 0.0 or prm[Q_KC] > 0.0:
                rows.append((RADIAL, i, j, b, 0))
            if self.bref[b, B_KB] > 0.0:
                rows.append((BEND, i, j, b, 0))
            if self.bref[b, B_KS] > 0.0:
                rows.append((SHEAR, i, j, b, 0))
                rows.append((SHEAR, i, j, b, 1))
        for i in range(n):
            if prm[Q_KW] > 0.0:
                rows.extend((WALL, i, i, w, 0) for w in range(self.walls.shape[0]))
            if prm[Q_G] > 0.0:
                rows.append((GRAVITY, i, i, 0, 0))
            if contacts:
                rows.append((SKIN, i, i, 0, 0))
        ns = len(rows)
        self.ctr = np.zeros(sp.N_CTR, dtype=np.int64)
        self.ctr[sp.N_STATIC] = ns
        self._alloc(ns + (8 * n + 64 if contacts else 0), n)
        for k, (kind, i, j, a, side) in enumerate(rows):
            self.TI[k, C_KIND], self.TI[k, C_I], self.TI[k, C_J] = kind, i, j
            self.TI[k, C_A], self.TI[k, C_SIDE] = a, side
        # each body's static terms (CSR)
        owners = [(k, r[1]) for k, r in enumerate(rows)] + \
            [(k, r[2]) for k, r in enumerate(rows) if r[2] != r[1]]
        owners.sort(key=lambda o: (o[1], o[0]))
        cnt = np.zeros(n + 1, dtype=np.int64)
        for _, i in owners:
            cnt[i + 1] += 1
        self.sptr = np.cumsum(cnt)
        self.sidx = np.array([k for k, _ in owners] or [0], dtype=np.int64)
        self.g = np.zeros((4, 3))
        self.clock = np.array([float(t0)])
        self.dts = np.zeros(max(int(keep_steps), 0))
        if not start:  # (restore: the terms' state comes from a saved stepper)
            return
        # origins: −ε/2 (the terms that vanish at rest: mid-terrace there); gravity:
        # mid-terrace from V(0), or on the level V(0) for a body at rest (it steps down)
        origins = np.full(ns, -0.5 * eps)
        rest = np.zeros(ns, dtype=np.bool_)
        for k, (kind, i, _, _, _) in enumerate(rows):
            if kind == GRAVITY:
                v0 = -self.m[i] * prm[Q_G] * float(prm[Q_GDIR:Q_GDIR + 3] @ self.x[i])
                at_rest = not np.any(self.v[i]) and not np.any(self.om[i])
                origins[k] = v0 if at_rest else v0 - 0.5 * eps
                rest[k] = at_rest
        self._call(lambda: sp.start(float(t0), *self._head(), self.g, origins, rest,
                                    *self._scratch()))

    # ------------------------------------------------------------------ resume
    def export(self) -> dict[str, np.ndarray]:
        nt = int(self.ctr[sp.N_STATIC] + self.ctr[sp.N_CONTACTS])
        nc = int(self.ctr[sp.N_CONTACTS])
        return {"kind": np.array([1]), "x": self.x, "v": self.v, "q": self.q,
                "om": self.om, "tb": self.tb, "xref": self.xref, "TI": self.TI[:nt],
                "TF": self.TF[:nt], "tpred": self.tpred[:nt], "ctr": self.ctr,
                "clock": self.clock, "cptr": self.cptr, "cidx": self.cidx[:2 * nc]}

    @classmethod
    def restore(cls, model: Model, eps: float, d: dict, t: float) -> SpheresImpl:
        """The stepper :meth:`export` saved: the model's structure built anew (the same
        static terms in the same order), the saved state, terms and contact list put
        back, the queue refilled from the predicted times."""
        x = np.asarray(d["x"], dtype=float)
        bad = int(np.asarray(d["kind"]).reshape(-1)[0]) != 1 or x.shape != (model.n_bodies, 3)
        if not bad:
            self = cls(model, eps, State(x, np.asarray(d["v"]), np.asarray(d["q"]),
                                         np.asarray(d["om"])), 0, t, start=False)
            ctr = np.asarray(d["ctr"], dtype=np.int64)
            if ctr.shape == (sp.N_REBUILD_WORK,):  # (saved before the rebuilds' work
                ctr = np.concatenate([ctr, np.zeros(sp.N_CTR - ctr.shape[0], np.int64)])
            bad = ctr.shape != self.ctr.shape or ctr[sp.N_STATIC] != self.ctr[sp.N_STATIC]
        if bad:
            raise EnergySteppingError("energy-stepping: the saved stepper does not fit this "
                                      "model; resume with the scenario it was run on")
        nt = int(ctr[sp.N_STATIC] + ctr[sp.N_CONTACTS])
        nc = int(ctr[sp.N_CONTACTS])
        self._alloc(max(self.TI.shape[0], nt + nc + 64), model.n_bodies)
        self.ctr[:] = ctr
        self.ctr[sp.N_HEAP] = 0
        for name in ("v", "q", "om", "tb", "xref"):  # (bit for bit: no normalising)
            getattr(self, name)[...] = np.asarray(d[name])
        self.x[...] = x
        self.TI[:nt] = np.asarray(d["TI"])
        self.TF[:nt] = np.asarray(d["TF"])
        self.tpred[:nt] = np.asarray(d["tpred"])
        self.clock[:] = np.asarray(d["clock"])
        self.cptr[:] = np.asarray(d["cptr"])
        self.cidx[:2 * nc] = np.asarray(d["cidx"])
        self.ctr[sp.N_HEAP] = sp.refill_queue(nt, self.tpred, self.heap, self.hpos)
        return self

    # ------------------------------------------------------------------ arrays
    def _alloc(self, cap: int, n: int) -> None:
        old = getattr(self, "TI", None)
        TI = np.zeros((cap, N_TI), dtype=np.int64)
        TF = np.zeros((cap, N_TF))
        tpred = np.full(cap, np.inf)
        heap = np.zeros(cap, dtype=np.int64)
        hpos = np.full(cap, -1, dtype=np.int64)
        if old is not None:
            used = old.shape[0]
            TI[:used], TF[:used], tpred[:used] = old, self.TF, self.tpred
            heap[:used], hpos[:used] = self.heap, self.hpos
        self.TI, self.TF, self.tpred, self.heap, self.hpos = TI, TF, tpred, heap, hpos
        cidx = np.zeros(2 * cap, dtype=np.int64)
        if old is None:
            self.cptr = np.zeros(n + 1, dtype=np.int64)
        else:  # (grown before a rebuild changed anything: the lists stay as they are)
            cidx[:self.cidx.shape[0]] = self.cidx
        self.cidx = cidx

    def _scratch(self) -> tuple:
        """The rebuild's scratch: the old contact terms and the CSR fill pointers."""
        cap = self.TI.shape[0] - int(self.ctr[sp.N_STATIC])
        if getattr(self, "_old", None) is None or self._old[0].shape[0] != cap:
            self._old = (np.zeros((cap, N_TI), dtype=np.int64), np.zeros((cap, N_TF)),
                         np.zeros(self.x.shape[0] + 1, dtype=np.int64))
        return self._old

    def _head(self) -> tuple:
        return (self.TI, self.TF, self.tpred, self.heap, self.hpos, self.ctr, self.sptr,
                self.sidx, self.cptr, self.cidx, self.x, self.v, self.q, self.om, self.tb,
                self.m, self.J, self.D, self.bonds, self.bref, self.rstar, self.vmin,
                self.walls, self.prm, self.xref, self.bptr, self.bpart)

    def _call(self, fn) -> int:
        while True:
            st = fn()
            if st == sp.ERR_CAPACITY:
                need = int(self.ctr[sp.N_NEED])
                self._alloc(int(self.ctr[sp.N_STATIC]) + 2 * need + 64, self.x.shape[0])
                continue
            if st not in (sp.OK, sp.ERR_MAX_EVENTS):
                raise EnergySteppingError(f"energy-stepping stopped at t = "
                                          f"{self.clock[0]:.6g}: {_WHY[st]}")
            return st

    # ------------------------------------------------------------------ stepping
    def advance(self, t_end: float, budget: int) -> bool:
        """At most ``budget`` events (and re-checks) towards ``t_end``: ``True`` when every
        event up to ``t_end`` is done, ``False`` when the budget ran out first (call
        again: the result does not depend on the budget)."""
        st = self._call(lambda: sp.run_events(
            t_end, budget, self.TI, self.TF, self.tpred, self.heap,
            self.hpos, self.ctr, self.sptr, self.sidx, self.cptr, self.cidx, self.x,
            self.v, self.q, self.om, self.tb, self.m, self.J, self.D, self.bonds,
            self.bref, self.rstar, self.vmin, self.walls, self.prm, self.xref, self.bptr,
            self.bpart, self.dts, self.clock, self.g, *self._scratch()))
        return st == sp.OK

    @property
    def work(self) -> int:
        """Events, re-checks and the rebuilds' predictions so far (what the budget
        counts: ``sp.work_done``)."""
        return int(self.ctr[sp.N_EVENTS] + self.ctr[sp.N_RECHECK]
                   + self.ctr[sp.N_REBUILD_WORK])

    @property
    def rebuild_work(self) -> int:
        """The part of :attr:`work` that rebuilt the contact list (moving no clock)."""
        return int(self.ctr[sp.N_REBUILD_WORK])

    def clock_now(self) -> float:
        """Up to where the events are done: the time of the next one in the queue
        (``inf``: none)."""
        return float(self.tpred[self.heap[0]]) if self.ctr[sp.N_HEAP] > 0 else np.inf

    # ------------------------------------------------------------------ state
    def sample(self, t: float, out: tuple | None = None) -> tuple:
        """``(x, v, q, Ω)`` at ``t`` read on the flights (``sp.sample``) into ``out``
        (default: the impl's scratch); the state itself is untouched."""
        if out is None:
            if getattr(self, "_out", None) is None:
                self._out = tuple(np.empty_like(a) for a in (self.x, self.v, self.q, self.om))
            out = self._out
        sp.sample(t, self.x, self.v, self.q, self.om, self.tb, *out)
        return out

    @property
    def n_events(self) -> int:
        return int(self.ctr[sp.N_EVENTS])

    @property
    def n_reflections(self) -> int:
        return int(self.ctr[sp.N_REFLECT])

    @property
    def n_terms(self) -> int:
        k = self.TI[:self.ctr[sp.N_STATIC] + self.ctr[sp.N_CONTACTS], C_KIND]
        return int(np.count_nonzero(k != SKIN))

    def events_by_kind(self) -> dict[str, int]:
        from .terms import KIND_NAMES

        return {name: int(self.ctr[sp.N_BY_KIND + k]) for k, name in enumerate(KIND_NAMES)
                if name != "skin"}

    @property
    def n_rebuilds(self) -> int:
        return int(self.ctr[sp.N_REBUILD])

    def _energies(self, t: float, state: tuple | None = None) -> tuple[float, float, float]:
        x, v, q, om = self.sample(t) if state is None else state
        return sp.energies(self.TI, self.TF, self.ctr, x, v, q, om,
                           self.m, self.J, self.D, self.bonds, self.bref, self.walls,
                           self.prm, self.xref)

    def terrace_gap(self, t: float, state: tuple | None = None) -> float:
        _, V, Ve = self._energies(t, state)
        return float(V - Ve)

    def record_potential(self, t: float, state: tuple, e: np.ndarray) -> tuple[float, bool]:
        return self.terrace_gap(t, state), False

    def energy_eps(self, t: float) -> float:
        T, _, Ve = self._energies(t)
        return float(T + Ve)

    def flight_times(self) -> np.ndarray:
        return self.dts[:min(self.n_events, self.dts.shape[0])].copy()
