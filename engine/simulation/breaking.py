"""Breaking bonds in the driver (issue #44 item 2; docs/physics.md "Breaking"), mixed
into :class:`~.driver.Simulation` as :class:`BreakingMixin`.

The stepping loop of a model whose bonds break (family slot ``BREAKS``) tests LAMMPS's
criterion (``engine.potentials.bpm_break``) on the state at the end of each step and
stops there with ``BONDS_BREAK``; the step itself stays the scheme's.  Between that step
and the next the driver:

* takes every bond past its criterion out of the force field (``ForceField.take_bonds``:
  the model's bonds less the broken ones, so the pair may touch from now on);
* evaluates the forces, moments and energies anew at the same ``(x, q)`` (a model with
  contact history: only the broken bonds' own loads are taken off, the freed pair's
  contact comes with the next step) and books the stored energy that left the model,
  ``U_before − U_after``, in the ``broken`` component, so that ``E + broken`` is
  constant across the break (the kinetic energies are the step's, unchanged);
* records an :class:`~.records.Event` ``("break", <bonds before>, "<ids>")``, the ids the
  broken bonds' indices in the model's bond list; run files keep them in ``/events``
  (under its digest), and a resume, a restore or a branch from a frame takes the bonds
  broken up to its step out again (:meth:`_set_bond_ids`), so a run resumed across a
  break goes on bit for bit.
"""

from __future__ import annotations

import numpy as np

from ..layout import (
    E_BROKEN,
    E_DISSIPATED,
    E_FIELD_WORK,
    E_ROTATIONAL,
    E_TRANSLATIONAL,
    N_ENERGY,
)
from ..potentials.bpm import N_COLS, bpm_bonds_ws, new_bonds_scratch
from ..potentials.bpm_break import ratios
from .records import Event

BREAK_EVENT = "break"
_NOT_POTENTIAL = (E_TRANSLATIONAL, E_ROTATIONAL, E_DISSIPATED, E_FIELD_WORK, E_BROKEN)


def potential_energy(e: np.ndarray) -> float:
    """The configuration's energy in the components ``e`` (all but the kinetic ones and
    the booked ``dissipated``, ``field work``, ``broken``)."""
    keep = np.ones(e.shape[0], dtype=bool)
    keep[list(_NOT_POTENTIAL)] = False
    return float(e[keep].sum())


def broken_ids(events, step: int | None = None, t: float | None = None) -> np.ndarray:
    """The model's bond indices broken by the ``break`` events (up to ``step``, or up to
    the time ``t`` to a part in 10⁹: a replay's or an export's frame)."""
    ids: list[int] = []
    for ev in events:
        if ev.kind != BREAK_EVENT or (step is not None and int(ev.step) > step):
            continue
        if t is not None and float(ev.t) > t + 1e-9 * max(1.0, abs(t)):
            continue
        ids.extend(int(w) for w in str(ev.new).split())
    return np.asarray(sorted(ids), dtype=np.int64)


def breaks_over_time(events) -> list[tuple[int, float, int]]:
    """``(step, t, bonds broken so far)`` at each break (a plot of the count)."""
    out, n = [], 0
    for ev in events:
        if ev.kind == BREAK_EVENT:
            n += len(str(ev.new).split())
            out.append((int(ev.step), float(ev.t), n))
    return out


class BreakingMixin:
    """The broken bonds of :class:`~.driver.Simulation` (module docstring)."""

    bond_ids: np.ndarray = np.zeros(0, dtype=np.int64)
    """The model's index of each bond the force field holds now."""

    @property
    def n_broken(self) -> int:
        """How many of the model's bonds have broken."""
        return int(self.model.forcefield.bonds.shape[0] - self.bond_ids.shape[0])

    @property
    def broken_bonds(self) -> np.ndarray | None:
        """The model's indices of its broken bonds (``None``: its bonds never break)."""
        if "broken" not in self.model.energy_components:
            return None
        ids = np.arange(self.model.forcefield.bonds.shape[0], dtype=np.int64)
        return np.setdiff1d(ids, self.bond_ids)

    def _init_breaking(self) -> None:
        self.bond_ids = np.arange(self.ff.bonds.shape[0], dtype=np.int64)

    def _set_bond_ids(self, ids: np.ndarray) -> None:
        """Hold the model's bonds ``ids`` only (a resume, restore or branch)."""
        ids = np.asarray(ids, dtype=np.int64)
        if np.array_equal(ids, self.bond_ids):
            return
        self.ff.take_bonds(self.model.forcefield, ids)
        self.bond_ids = ids

    def _without_broken(self, broken: np.ndarray) -> None:
        """Hold the model's bonds less ``broken`` (their indices in the model)."""
        ids = np.arange(self.model.forcefield.bonds.shape[0], dtype=np.int64)
        self._set_bond_ids(np.setdiff1d(ids, broken))

    def _break_bonds(self) -> None:
        """Take out the bonds past their criterion at the current state and book their
        energy (module docstring)."""
        x, q, F, RM, e = self._s0[0], self._s0[2], self._s0[4], self._s0[5], self._s0[6]
        rows = np.flatnonzero(ratios(x, q, self.ff.bonds, self.ff.bpm) >= 1.0)
        if not rows.size:
            return
        before = self.bond_ids.shape[0]
        ids = self.bond_ids[rows]
        u_before = potential_energy(e)
        if self.ff.has_history:  # (the broken bonds' loads alone, off the state's)
            Fb, RMb, eb = self._bond_loads(rows)
            F -= Fb
            RM -= RMb
            e[:] = e - eb
            self._set_bond_ids(np.delete(self.bond_ids, rows))
        else:
            kinetic = e[E_TRANSLATIONAL], e[E_ROTATIONAL]
            self._set_bond_ids(np.delete(self.bond_ids, rows))
            self._evaluate_forces()
            e[E_TRANSLATIONAL], e[E_ROTATIONAL] = kinetic
        e[E_BROKEN] += u_before - potential_energy(e)
        self._s1[6][E_BROKEN] = e[E_BROKEN]
        self.events.append(Event(self.step_index, self.t, BREAK_EVENT, str(before),
                                 " ".join(str(int(i)) for i in ids)))

    def _bond_loads(self, rows: np.ndarray) -> tuple:
        """The forces, moments and energies of the bonds ``rows`` alone."""
        x, q = self._s0[0], self._s0[2]
        F = np.zeros_like(x)
        RM = np.zeros_like(x)
        eb = np.zeros(N_ENERGY)
        table = np.ascontiguousarray(self.ff.bpm[rows]).reshape(-1, N_COLS)
        bpm_bonds_ws(x, q, np.ascontiguousarray(self.ff.bonds[rows]), table, F, RM, eb,
                     new_bonds_scratch())
        return F, RM, eb
