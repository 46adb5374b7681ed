"""An assembly's fields and damping (issue #44 items 3 and 4; docs/scenarios.md
"assembly"): the scenario's ``[[fields]]`` and ``[[damping]]`` tables, checked in one
line each and put on the force field (``engine.potentials.fields``,
``engine.potentials.damping``).

* ``[[fields]]``: ``group`` (optional: every sphere), ``E`` (or ``B``: the same action,
  a uniform field on the spheres' dipoles and charges; LAMMPS's ``fix efield``) three
  numbers, ``ramp = [t0, t1, c0, c1]`` (optional: the field is ``c0 E`` until ``t0``,
  linear to ``c1 E`` at ``t1``, ``c1 E`` after; LAMMPS's ``c*ramp(a,b)``).
* ``[[damping]]``: ``group`` (optional), ``gamma`` (``F = −γ v``, ``fix viscous``),
  ``gamma_rot`` (``τ = −γ_r Ω``, ``fix viscous/sphere``), each ``≥ 0``; tables on the
  same sphere add up.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from .assembly_input import AssemblyError
from .base import BIG

FIELD_KEYS = ("group", "E", "B", "ramp")
DAMPING_KEYS = ("group", "gamma", "gamma_rot")


def _tables(g: dict[str, Any], key: str, label: str) -> list[dict[str, Any]]:
    rows = g.get(key) or []
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise AssemblyError(f"{label}: {key} must be an array of tables [[{key}]]")
    return rows


def _number(v: Any, where: str, key: str, least: float = -BIG) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) \
            or not least <= v <= BIG:
        span = f"in [{least:g}, {BIG:g}]" if least > -BIG else f"finite, at most ±{BIG:g}"
        raise AssemblyError(f"{where}: {key} = {v!r} must be a number {span}")
    return float(v)


def _group(r: dict[str, Any], where: str, groups: np.ndarray) -> int:
    if "group" not in r:
        return -1
    gr = r["group"]
    if gr == "all":  # (LAMMPS's group all: every sphere, as without group)
        return -1
    if isinstance(gr, bool) or not isinstance(gr, int):
        raise AssemblyError(f"{where}: group must be an integer (or \"all\"), got {gr!r}")
    if not np.any(groups == gr):
        have = ", ".join(str(int(k)) for k in np.unique(groups)[:8])
        raise AssemblyError(f"{where}: group {gr} has no spheres (the groups are {have}); "
                            "give one of them or leave group out (every sphere)")
    return int(gr)


def _keys(r: dict[str, Any], where: str, allowed: tuple[str, ...]) -> None:
    for key in r:
        if key not in allowed:
            raise AssemblyError(f"{where}: unknown key {key!r}; allowed: {', '.join(allowed)}")


def fields_of(p: dict[str, Any], groups: np.ndarray
              ) -> tuple[list[tuple[int, list[float], tuple | None]],
                         list[tuple[int, float, float]]]:
    """The checked ``[[fields]]`` as ``(group, E, ramp or None)`` and ``[[damping]]`` as
    ``(group, γ, γ_r)`` of the parameters ``p`` (their ``geometry``) for spheres of the
    groups ``groups``; :class:`AssemblyError` (one line) for what cannot run."""
    g = json.loads(p["geometry"])
    label = str(g.get("label", "assembly"))
    fields = []
    for k, r in enumerate(_tables(g, "fields", label)):
        where = f"{label} [[fields]] {k}"
        _keys(r, where, FIELD_KEYS)
        e = field_vector(r, where)
        ramp = None
        if "ramp" in r:
            rr = r["ramp"]
            if not isinstance(rr, list) or len(rr) != 4:
                raise AssemblyError(f"{where}: ramp must be [t0, t1, c0, c1] (four numbers), "
                                    f"got {rr!r}")
            ramp = tuple(_number(c, where, "ramp") for c in rr)
            if not ramp[1] > ramp[0]:
                raise AssemblyError(f"{where}: ramp = {rr!r} ends at t1 = {ramp[1]:g}, not "
                                    f"after it starts (t0 = {ramp[0]:g}); give t1 > t0")
        fields.append((_group(r, where, groups), e, ramp))
    damping = []
    for k, r in enumerate(_tables(g, "damping", label)):
        where = f"{label} [[damping]] {k}"
        _keys(r, where, DAMPING_KEYS)
        damping.append(damping_of(r, where, groups))
    return fields, damping


def field_vector(r: dict[str, Any], where: str) -> list[float]:
    """The checked field ``E = [x, y, z]`` (or ``B``, one of them) of a ``[[fields]]``
    table or a stage's field ``r``; :class:`AssemblyError` (one line) otherwise."""
    if ("E" in r) == ("B" in r):
        raise AssemblyError(f"{where}: give the field as E = [x, y, z] (or B, one of them)")
    key = "E" if "E" in r else "B"
    e = r[key]
    if not isinstance(e, list) or len(e) != 3:
        raise AssemblyError(f"{where}: {key} must be a list of three numbers, got {e!r}")
    return [_number(c, where, key) for c in e]


def damping_of(r: dict[str, Any], where: str, groups: np.ndarray
               ) -> tuple[int, float, float]:
    """``(group, γ, γ_r)`` of a checked ``[[damping]]`` table or a stage's damping ``r``
    (LAMMPS's ``fix viscous`` and ``fix viscous/sphere``)."""
    if "gamma" not in r and "gamma_rot" not in r:
        raise AssemblyError(f"{where}: give gamma (F = −γ v) and/or gamma_rot "
                            "(τ = −γ_r Ω)")
    return (_group(r, where, groups),
            _number(r.get("gamma", 0.0), where, "gamma", 0.0),
            _number(r.get("gamma_rot", 0.0), where, "gamma_rot", 0.0))


def check_dipoles(dipole: np.ndarray | None, where_body) -> None:
    """Refuse a dipole that is not finite or beyond ``±BIG`` (one line, naming the
    sphere by ``where_body(i)``)."""
    if dipole is None:
        return
    bad = ~(np.abs(dipole) <= BIG).all(axis=1)
    if bad.any():
        i = int(np.argmax(bad))
        raise AssemblyError(f"{where_body(i)}: dipole {dipole[i].tolist()} is not finite or "
                            f"beyond ±{BIG:g}; fix the sphere's mux, muy, muz")


def apply_fields(ff, p: dict[str, Any], groups: np.ndarray,
                 dipole: np.ndarray | None) -> tuple[str, ...]:
    """Put the dipoles, fields and damping of ``p`` on the force field ``ff``; returns the
    energy components they add (``field``, ``field work``, ``dissipated``)."""
    fields, damping = fields_of(p, groups)
    if not fields and not damping:
        return ()
    ff.set_groups(groups)
    if dipole is not None and np.any(dipole):
        ff.set_dipoles(dipole)
    for group, e, ramp in fields:
        ff.add_field(e, group, ramp)
    n = groups.shape[0]
    gamma = np.zeros(n)
    gamma_rot = np.zeros(n)
    for group, ga, gr in damping:
        on = np.ones(n, dtype=bool) if group < 0 else groups == group
        gamma[on] += ga
        gamma_rot[on] += gr
    if damping:
        ff.set_damping(gamma, gamma_rot)
    out: tuple[str, ...] = ()
    if fields:
        out += ("field",) + (("field work",) if any(r is not None for _, _, r in fields)
                             else ())
    if damping and (gamma.any() or gamma_rot.any()):
        out += ("dissipated",)
    return out


def conserved_under_loads(conserved: tuple[str, ...], directions: list[np.ndarray],
                          dipoles: bool, charges: bool, viscous: bool,
                          viscous_rot: bool) -> tuple[str, ...]:
    """The components of ``conserved`` (what the walls and gravity leave:
    ``assembly.conserved_of``) that the fields and damping leave conserved too.  A uniform
    field along ``e`` (``directions``: every field of the run, its stages' included)
    turns a dipole with ``μ × E`` (``⊥ e``: only ``L`` along ``e`` is kept) and pushes a
    charge with ``qE`` (``P`` across ``e`` kept, ``L`` along ``e``); ``fix viscous``
    (``F = −γ v``) changes ``P`` and ``L``, ``fix viscous/sphere`` (``τ = −γ_r Ω``) ``L``.
    The bonds' own damping (``engine.potentials.bond_damping``) keeps both: not here."""
    out = []
    for name in conserved:
        kind, axis = name.split("_")
        a = np.eye(3)["xyz".index(axis)]
        keep = not (viscous or (viscous_rot and kind == "L"))
        for e in directions:
            e = np.asarray(e, dtype=np.float64)
            en = float(np.linalg.norm(e))
            if not keep or en == 0.0:
                continue
            along = float(np.linalg.norm(np.cross(e, a))) <= 1e-15 * en
            across = abs(float(e @ a)) <= 1e-15 * en
            if kind == "L" and (dipoles or charges) and not along:
                keep = False
            if kind == "P" and charges and not across:
                keep = False
        if keep:
            out.append(name)
    return tuple(out)
