"""A :class:`~.deck_plan.DeckPlan` applied to the data file it reads (issue #44 item 6):
the spheres' groups, masses and diameters after ``set``, the bond laws, ``[run] h`` and
the ``[[stages]]`` (engine.models.stages) of an imported scenario.

Groups: a scenario's sphere has one integer group, a LAMMPS atom any number of named
ones, so each distinct membership of the deck's groups becomes one integer group, from 1
(the atoms in none first; ``examples/bpm/metamaterial``: 1 the rods, 2 the magnets), and
a fix on a named group acts on each integer group inside it (fields and damping on a
sphere add up).  Without ``group`` commands the data file's ``mol`` stays the group.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine.models.stages import Stage, StageDamping, StageField

from .deck_bonds import bond_laws
from .deck_plan import DeckPlan, field_parts
from .tables import LammpsDataError
from .units import Scales


@dataclass
class DeckScenario:
    """What the deck adds to an imported scenario (SI)."""

    laws: dict[str, dict[str, Any]] = field(default_factory=dict)
    stages: list[Stage] = field(default_factory=list)
    h: float | None = None
    every: tuple[int, int] | None = None
    """``(N, line)``: the deck's ``thermo N``, the run's record interval."""
    group_names: dict[int, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    lj: bool = False
    """The deck's units are lj, taken as they are (the caller sets it)."""
    runs: list = field(default_factory=list)
    """The deck's ``run`` lines (:class:`~.deck_plan.RunStage`), one a stage."""


def apply_plan(plan: DeckPlan, d, sc: Scales) -> DeckScenario:
    """Apply ``plan`` to the data ``d`` (its ``mol``, ``m``, ``D`` changed in place) and
    return the laws, stages, step and notes; :class:`LammpsDataError` in one line."""
    label = plan.deck.path.name
    out = DeckScenario(notes=list(plan.notes), runs=list(plan.runs))
    names = sorted(plan.groups)
    member = {g: np.isin(d.atom_type, sorted(plan.groups[g])) for g in names}
    ids: dict[str, list[int]] = {"all": [-1]}
    if names:
        sig = np.stack([member[g] for g in names], axis=1) if names else None
        keys = sorted({tuple(r) for r in sig.tolist()}, key=lambda r: (sum(r), r[::-1]))
        index = {k: i + 1 for i, k in enumerate(keys)}
        d.mol = np.array([index[tuple(r)] for r in sig.tolist()], dtype=np.int64)
        for k, i in index.items():
            out.group_names[i] = " ".join(g for g, on in zip(names, k, strict=True)
                                          if on) or "(no deck group)"
        for g in names:
            ids[g] = sorted({index[k] for k in keys if k[names.index(g)]})
    for g, key, v, _line in plan.sets:
        on = np.ones(d.m.shape[0], dtype=bool) if g == "all" else member[g]
        if key == "density":
            rho = v * sc.mass / sc.length ** 3
            d.m[on] = np.where(d.D[on] > 0.0, rho * math.pi / 6.0 * d.D[on] ** 3, rho)
        elif key == "diameter":
            d.D[on] = v * sc.length  # (LAMMPS's set diameter leaves the mass)
        else:
            d.m[on] = v * sc.mass
    types = sorted(set(range(1, d.n_bond_types + 1)) | set(np.unique(d.bond_type).tolist()))
    if plan.bonds is not None and types:
        out.laws, notes = bond_laws(plan.bonds, types, sc, label)
        out.notes += notes
    if plan.timestep is not None:
        out.h = plan.timestep * sc.time
    out.every = plan.thermo
    if d.mu is not None and np.any(d.mu) and not plan.update_dipole:
        out.notes.append(f"{label}: fix nve/bpm/sphere without 'update dipole': LAMMPS's "
                         "dipoles keep their direction in space, ours turn with the body")
    efield_units = d.units in (None, "si") or plan.deck.units == "lj"
    for r in plan.runs:
        fields: list[StageField] = []
        damping: list[StageDamping] = []
        for f in r.fixes:
            if f.style == "efield":
                if not efield_units:
                    raise LammpsDataError(f"{plan.deck.where(f.line)}: fix efield in units "
                                          f"{d.units}: a field is carried in lj or si "
                                          "units only")
                for e, ramp in field_parts(plan.deck, f, r.variables):
                    fields += [StageField(e, gid, ramp) for gid in ids[f.group]]
            elif f.style in ("viscous", "viscous/sphere"):
                g = float(f.args[0])
                if f.style == "viscous":
                    g *= sc.mass / sc.time
                    damping += [StageDamping(gid, g, 0.0) for gid in ids[f.group]]
                else:
                    g *= sc.energy * sc.time
                    damping += [StageDamping(gid, 0.0, g) for gid in ids[f.group]]
        merged: dict[int, tuple[float, float]] = {}  # (one table a group: they add up)
        for dmp in damping:
            g0, r0 = merged.get(dmp.group, (0.0, 0.0))
            merged[dmp.group] = (g0 + dmp.gamma, r0 + dmp.gamma_rot)
        out.stages.append(Stage(steps=r.steps, fields=tuple(fields), damping=tuple(
            StageDamping(gid, g, gr) for gid, (g, gr) in merged.items())))
    return out
