"""Stages of a run (issue #44 item 5; docs/scenarios.md "Stages"): a run may be a list
of stages, each lasting a number of steps (or a duration, a whole number of steps at
the run's ``h``) with the fields and damping active in it — LAMMPS's ``run N`` after
``fix efield`` / ``fix viscous`` lines (``examples/bpm/metamaterial``: 100000 steps of a
field ramped from 0 to 0.25 on the magnets, then 50000 with it held and both
``viscous`` fixes on all).

The representation is plain dataclasses (:class:`Stage`, :class:`StageField`,
:class:`StageDamping`) that a scenario's ``[[stages]]`` tables map to
(:func:`stages_of`) and that code can write back (:meth:`Stage.to_toml`: a LAMMPS
deck's ``run N`` becomes one).  A stage's fields and damping *add* to the scenario's
top-level ``[[fields]]`` and ``[[damping]]``, which act in every stage.  A stage's
field ``ramp = [c0, c1]`` goes linearly from ``c0 E`` at the stage's start to ``c1 E``
at its end (LAMMPS's ``c*ramp(a, b)`` over a ``run``).

The driver (``engine.simulation.stages``) enters each stage at a step and puts its
rows and damping on its force field (:func:`stage_arrays`); the model built from a
scenario with stages carries them in :attr:`engine.models.base.Model.stages`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .assembly_fields import _group, _keys, _number, _tables, damping_of, field_vector
from .assembly_input import AssemblyError

STAGE_KEYS = ("name", "steps", "duration", "fields", "damping")
STAGE_FIELD_KEYS = ("group", "E", "B", "ramp")
STAGE_DAMPING_KEYS = ("group", "gamma", "gamma_rot")
MAX_STAGE_STEPS = 10**10
"""No stage takes more steps than a run may (``engine.run_steps.MAX_STEPS``)."""


@dataclass(frozen=True)
class StageField:
    """A uniform field ``E`` on ``group`` (``-1``: every sphere) during a stage;
    ``ramp = (c0, c1)``: ``c0 E`` at the stage's start to ``c1 E`` at its end."""

    E: tuple[float, float, float]
    group: int = -1
    ramp: tuple[float, float] | None = None


@dataclass(frozen=True)
class StageDamping:
    """Viscous damping on ``group`` during a stage: ``F = −γ v`` (``gamma``) and
    ``τ = −γ_r Ω`` (``gamma_rot``)."""

    group: int = -1
    gamma: float = 0.0
    gamma_rot: float = 0.0


@dataclass(frozen=True)
class Stage:
    """One stage: ``steps`` or ``duration`` (one of them), its fields and damping."""

    steps: int | None = None
    duration: float | None = None
    fields: tuple[StageField, ...] = ()
    damping: tuple[StageDamping, ...] = ()
    name: str = ""

    def label(self, k: int) -> str:
        """``"2"`` or ``"2 (load)"``: stage ``k`` (0-based) as the app and the CLI name it."""
        return f"{k + 1}" + (f" ({self.name})" if self.name else "")

    def to_toml(self) -> dict[str, Any]:
        """The ``[[stages]]`` table of this stage (what :func:`stages_of` reads back)."""
        d: dict[str, Any] = {}
        if self.name:
            d["name"] = self.name
        if self.steps is not None:
            d["steps"] = int(self.steps)
        else:
            d["duration"] = float(self.duration)
        if self.fields:
            d["fields"] = [{**({"group": f.group} if f.group >= 0 else {}),
                            "E": [float(c) for c in f.E],
                            **({"ramp": [float(c) for c in f.ramp]} if f.ramp else {})}
                           for f in self.fields]
        if self.damping:
            d["damping"] = [{**({"group": g.group} if g.group >= 0 else {}),
                             "gamma": float(g.gamma), "gamma_rot": float(g.gamma_rot)}
                            for g in self.damping]
        return d


def _toml_value(v: Any) -> str:
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return "{ " + ", ".join(f"{k} = {_toml_value(x)}" for k, x in v.items()) + " }"


def stages_toml(stages: tuple[Stage, ...] | list[Stage]) -> str:
    """The ``[[stages]]`` tables of ``stages`` as scenario TOML text (for a writer of
    scenarios, e.g. a LAMMPS deck's ``run N`` lines; :func:`stages_of` reads it back)."""
    out = []
    for s in stages:
        out.append("[[stages]]")
        out += [f"{k} = {_toml_value(v)}" for k, v in s.to_toml().items()]
    return "\n".join(out) + ("\n" if out else "")


def stages_of(p: dict[str, Any], groups: np.ndarray) -> tuple[Stage, ...]:
    """The checked ``[[stages]]`` of an assembly's parameters ``p`` (its ``geometry``)
    for spheres of the groups ``groups``; :class:`AssemblyError` (one line naming the
    stage and the key) for what cannot run."""
    g = json.loads(p["geometry"])
    label = str(g.get("label", "assembly"))
    out = []
    for k, r in enumerate(_tables(g, "stages", label)):
        where = f"{label} [[stages]] {k + 1}"
        _keys(r, where, STAGE_KEYS)
        if ("steps" in r) == ("duration" in r):
            raise AssemblyError(f"{where}: give its length as steps = N or duration = T "
                                "(one of them)")
        steps = duration = None
        if "steps" in r:
            steps = r["steps"]
            if isinstance(steps, bool) or not isinstance(steps, int) or \
                    not 1 <= steps <= MAX_STAGE_STEPS:
                raise AssemblyError(f"{where}: steps = {steps!r} must be an integer from 1 "
                                    f"to {MAX_STAGE_STEPS:.0e}")
        else:
            duration = _number(r["duration"], where, "duration", 0.0)
            if not duration > 0.0:
                raise AssemblyError(f"{where}: duration = {duration!r} must be positive")
        name = r.get("name", "")
        if not isinstance(name, str):
            raise AssemblyError(f"{where}: name must be a string, got {name!r}")
        fields = []
        for j, f in enumerate(_tables(r, "fields", where)):
            fw = f"{where} fields {j + 1}"
            _keys(f, fw, STAGE_FIELD_KEYS)
            e = field_vector(f, fw)
            ramp = None
            if "ramp" in f:
                rr = f["ramp"]
                if not isinstance(rr, list) or len(rr) != 2:
                    raise AssemblyError(f"{fw}: ramp must be [c0, c1] (the field's factor "
                                        f"at the stage's start and end), got {rr!r}")
                ramp = tuple(_number(c, fw, "ramp") for c in rr)
            fields.append(StageField(tuple(e), _group(f, fw, groups), ramp))
        damping = []
        for j, d in enumerate(_tables(r, "damping", where)):
            dw = f"{where} damping {j + 1}"
            _keys(d, dw, STAGE_DAMPING_KEYS)
            damping.append(StageDamping(*damping_of(d, dw, groups)))
        out.append(Stage(steps, duration, tuple(fields), tuple(damping), name))
    return tuple(out)


def stage_steps(stage: Stage, h: float, k: int, *, exact: bool = True) -> int:
    """The steps stage ``k`` (0-based) takes at ``h``: its ``steps``, or its
    ``duration / h`` — a whole number (to a part in 10⁹) where ``exact``, else
    ``ValueError`` (one line naming the stage and the fix); rounded up otherwise (a
    stage entered after a change of ``h``: counted in time)."""
    if stage.steps is not None:
        return int(stage.steps)
    n = stage.duration / h
    whole = round(n)
    if abs(n - whole) <= 1e-9 * max(1.0, n) and whole >= 1:
        return int(whole)
    if exact:
        raise ValueError(
            f"stage {k + 1}: duration = {stage.duration:g} is {n:.6g} steps of h = {h:g}, "
            f"not a whole number: give steps = {max(1, round(n))} instead, or an h that "
            "divides it")
    return max(1, int(math.ceil(n - 1e-9)))


def stages_total(stages: tuple[Stage, ...], h: float) -> float:
    """The time the stages last at ``h`` (the run's ``t_end`` unless it is given);
    ``ValueError`` for a duration that is not a whole number of steps."""
    return sum(stage_steps(s, h, k) for k, s in enumerate(stages)) * h


def stage_arrays(stage: Stage, groups: np.ndarray, base: tuple, t0: float, t1: float
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The field rows (``engine.potentials.fields``: ``(group, E, t0, t1, c0, c1)``) and
    the per-sphere ``γ``, ``γ_r`` of ``stage`` running from ``t0`` to ``t1``: the
    top-level ones ``base = (rows, gamma, gamma_rot)`` and the stage's own (a ramp from
    ``c0`` at ``t0`` to ``c1`` at ``t1``; constant: ``s = 1``)."""
    rows, gamma, gamma_rot = (a.copy() for a in base)
    extra = []
    for f in stage.fields:
        r = np.zeros(rows.shape[1])
        ramp = (t0, t1, *f.ramp) if f.ramp is not None else (0.0, 0.0, 1.0, 1.0)
        r[:8] = (f.group, *f.E, *ramp)
        extra.append(r)
    if extra:
        rows = np.ascontiguousarray(np.vstack([rows, np.array(extra)]))
    for d in stage.damping:
        on = np.ones(groups.shape[0], dtype=bool) if d.group < 0 else groups == d.group
        gamma[on] += d.gamma
        gamma_rot[on] += d.gamma_rot
    return rows, gamma, gamma_rot


def apply_stages(ff, p: dict[str, Any], groups: np.ndarray, dipole: np.ndarray | None
                 ) -> tuple[tuple[Stage, ...], tuple[str, ...]]:
    """Prepare the force field ``ff`` (with the top-level fields and damping already on
    it) for the stages of ``p``: the groups and dipoles set, the field and damping terms
    switched on if any stage has them (one compiled family for the whole run: a stage
    change changes arrays, never the kernels), the damping at the top level's.  Returns
    the stages and the energy components they add."""
    from ..layout import T_DAMPING, T_FIELD
    from ..potentials.fields import FI_GAMMA, FI_GAMMA_ROT, FI_MU

    stages = stages_of(p, groups)
    if not stages:
        return (), ()
    fields = any(s.fields for s in stages)
    damped = any(d.gamma > 0 or d.gamma_rot > 0 for s in stages for d in s.damping)
    if not (fields or damped):
        return stages, ()
    if ff.fields[3].shape[0] != groups.shape[0]:
        ff.set_groups(groups)
    if dipole is not None and np.any(dipole) and ff.fields[FI_MU].shape[0] == 0:
        ff.set_dipoles(dipole)
    out: tuple[str, ...] = ()
    if fields:
        ff.flags[T_FIELD] = 1
        out += ("field", "field work")
    if damped:
        if any(d.gamma_rot > 0 for s in stages for d in s.damping) and not ff.spherical:
            raise AssemblyError("a stage's gamma_rot needs spheres (inertia J I)")
        ff.set_damping(ff.fields[FI_GAMMA], ff.fields[FI_GAMMA_ROT])
        ff.flags[T_DAMPING] = 1
        out += ("dissipated",)
    return stages, out
