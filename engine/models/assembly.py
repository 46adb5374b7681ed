"""Your own assembly of bonded spheres (issue #35 item 1; docs/scenarios.md "assembly",
docs/physics.md §4.2).

``N`` spheres, each with its centre, diameter ``D``, mass ``m``, scalar inertia ``J``,
velocity, spin ``Ω`` and a group (for colouring); bonds ``(i, j, type)`` with the B&G §4
binder law (bending/torsion ``K^m``, axial ``K^a``, shear ``K^s``, docs/physics.md §4.2,
the reference directions from the positions at t = 0) whose coefficients come from a
table of bond types; any number of planar walls ``n̂·x ≥ c`` (``k_wall``); a gravity
vector; sphere–sphere contacts as the torus has them (Hertz penalty with optional
friction spring and damping, or hard constraints).  It runs on the torus's and the
pile's kernels (``engine.models.torus.bonded_spheres``): every scheme that runs the
torus runs an assembly, and ``build ring`` with the torus's numbers is the torus, bit for
bit (tests/test_assembly.py).

The geometry (``engine.models.assembly_input``) is the parameter ``geometry``: the
scenario's ``bodies``, ``bonds``, ``walls``, ``build``, ``source``, ``bond_types``, …
as JSON, with the folder its files are read from.  What they resolve to (the spheres,
the bonds' types, the walls) travels with the model (:func:`carried_arrays`): a run
file stores it under ``/model/assembly`` and rebuilds the model from it
(:func:`from_carried`), so its files may be moved or deleted (issue #43 item 4).

Bond types: type ``1`` has the parameters ``k_bend``, ``k_axial``, ``k_shear`` unless
``[bond_types.1]`` gives others; every other type must be in ``[bond_types]``.  When
the types a run uses share one set of coefficients, the kernels take it as the global
constants (the torus's kernels and bits); when they differ, each bond gets its type's
coefficients in the force field's per-bond table (``ForceField.set_bond_coefficients``,
the family slot ``engine.specialize.BOND_TYPES``: issue #35 item 1).  A type may follow
a LAMMPS BPM law instead (``law = "bpm/rotational" | "bpm/spring"``: issue #44 item 1,
``engine.models.bond_laws``): its bonds get zero binder coefficients and a row of the
force field's table of laws (``ForceField.set_bond_laws``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from scipy.spatial import cKDTree

from engine.io.lammps.read_data import LammpsData

from ..layout import P_K_WALL, T_HARD_WALL, T_WALL
from ..potentials.bpm_break import breakable
from ..state import Bodies, State
from .assembly_fields import apply_fields, check_dipoles, conserved_under_loads, fields_of
from .assembly_input import (
    BOND_COEFFS,
    AssemblyError,
    Geometry,
    data_type_origin,
    load_geometry,
    part_of_data,
)
from .base import BIG, TINY, Model, ModelSpec, Param, ParameterError
from .bond_laws import law_components, law_table, parse_law
from .builders import MAX_BONDS as _MAX_BONDS
from .builders import MAX_SPHERES, Part
from .stages import apply_stages, stages_of
from .torus import CONTACT_PARAMS, SPHERE_PARAMS, bonded_energy_components, bonded_spheres

SCHEMA = (
    *(p for p in SPHERE_PARAMS if p.name not in ("mass", "inertia")),
    Param("gravity", "vec3", [0.0, 0.0, 0.0], "gravity vector g (every sphere feels m g)",
          "m/s²"),
    Param("overlap_tolerance", "float", 1e-6, "the most two spheres may overlap at t = 0 "
          "(or a sphere cut a wall), as a fraction of the smaller diameter", lo=0.0),
    *CONTACT_PARAMS,
    Param("geometry", "text", "{}", "the spheres, bonds and walls: the scenario's bodies, "
          "bonds, walls, build, source and bond_types (set by the scenario loader)"),
)

MAX_BODIES = MAX_SPHERES
"""The most spheres an assembly may have (as the pile: about 2 kB a sphere in a run;
the builders check it before they allocate: ``engine.models.builders``)."""
MAX_BONDS = _MAX_BONDS
"""The most bonds (six times the spheres of the largest assembly: LAMMPS's fcc BPM)."""

_CACHE: dict[tuple, Geometry] = {}


def _files_stamp(g: dict[str, Any]) -> tuple:
    base = Path(g.get("dir", "."))
    out = []
    for key in ("bodies", "bonds", "source"):
        v = g.get(key)
        if isinstance(v, str):
            try:
                st = (base / v).stat()
                out.append((key, st.st_mtime_ns, st.st_size))
            except OSError:
                out.append((key, None, None))
    return tuple(out)


def geometry_of(p: dict[str, Any]) -> Geometry:
    """The geometry of the parameters ``p`` (read once per content of the files: the
    scenario loader builds a model to check it, the run builds it again)."""
    text = p["geometry"]
    try:
        g = json.loads(text)
    except json.JSONDecodeError as exc:
        raise AssemblyError(f"geometry is not JSON: {exc}") from None
    if not isinstance(g, dict):
        raise AssemblyError("geometry must be a JSON object")
    label = str(g.get("label", "assembly"))
    key = (text, _files_stamp(g))
    if key not in _CACHE:
        if len(_CACHE) >= 2:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = load_geometry(g, label)
    return _CACHE[key]


def coefficients(geo: Geometry, p: dict[str, Any]) -> tuple[tuple[float, float, float],
                                                          np.ndarray | None]:
    """The bonds' coefficients ``(k_bend, k_axial, k_shear)``: one set when every bond
    type the bonds use has the same (the global constants: the kernels and bits of
    before), else that of type 1 (or the first used) and the per-bond table ``(nb, 3)``
    (issue #35 item 1: ``engine.specialize.BOND_TYPES``).  Every type is known and in
    range (:func:`check_geometry`, called before)."""
    table = {"1": (p["k_bend"], p["k_axial"], p["k_shear"]), **geo.bond_types,
             **{t: (0.0, 0.0, 0.0) for t in geo.bond_laws}}  # (another law: no binder)
    types = geo.part.bond_type.astype(str)
    used = np.unique(types) if geo.part.bonds.shape[0] else []
    sets = {table[t] for t in used}
    if len(sets) <= 1:
        return (sets.pop() if sets else table["1"]), None
    names, index = np.unique(types, return_inverse=True)
    rows = np.array([table[t] for t in names], dtype=np.float64)
    return table["1"] if "1" in used else table[str(used[0])], rows[index.reshape(-1)]


MIN_BOND_LENGTH = 1e-6
"""The shortest bond, in the smaller diameter of its spheres: a bond's reference
direction is its spheres' centres' difference at t = 0 (a bond of length 0 has none:
NaN in the first step) and its axial stiffness ``K^a/r₀²`` (issue #42 item 6)."""

_COEFF_PARAMS = [next(q for q in SCHEMA if q.name == k) for k in BOND_COEFFS]


def _check_types(geo: Geometry) -> None:
    """Every bond type the bonds use is known, and every type's coefficients lie in
    the range of ``[parameters]`` ``k_bend``, ``k_axial``, ``k_shear`` (the same
    :class:`~engine.models.base.Param` check: ``[0, 1e30]``, finite; issue #46 item 6);
    a type of a BPM law is checked and normalised (``bond_laws.parse_law``)."""
    types = geo.part.bond_type.astype(str)
    used = np.unique(types) if geo.part.bonds.shape[0] else []
    for t in used:
        if t != "1" and t not in geo.bond_types and t not in geo.bond_laws:
            b = int(np.argmax(types == t))
            raise AssemblyError(f"{geo.where_bond(b)}: unknown bond type {t}; add "
                                f"[bond_types.{t}] with k_bend, k_axial, k_shear (or "
                                "another law: docs/scenarios.md \"Bond laws\")")
    for t, table in geo.bond_laws.items():  # (another law: issue #44 item 1)
        geo.bond_laws[t] = parse_law(table, geo.type_origin.get(t, f"bond type {t}"))
    for t, vals in geo.bond_types.items():
        where = geo.type_origin.get(t, f"bond type {t}")
        try:  # (the API may give a list or an array)
            seq = [v.item() if isinstance(v, np.generic) else v for v in vals]
        except TypeError:
            seq = []
        if isinstance(vals, str) or len(seq) != 3:
            raise AssemblyError(f"{where}: bond type {t}: give three coefficients "
                                f"(k_bend, k_axial, k_shear), got {vals!r}")
        for q, v in zip(_COEFF_PARAMS, seq, strict=True):
            try:
                q.coerce(v)
            except ParameterError as exc:
                span = q.describe_range()
                fix = ("" if "write 0" in str(exc) else "; give a value in that range"
                       if span in str(exc) else f"; give a number in {span}")
                raise AssemblyError(f"{where}: bond type {t}: {exc}{fix}") from None


def check_geometry(geo: Geometry, p: dict[str, Any]) -> None:
    """The one check of an assembly's model, whatever its route (``[[bodies]]``, CSV
    files, a LAMMPS data file by ``source =`` or ``rrp import lammps``, ``[[build]]``,
    the Python API: issue #46 item 6): refuse, in one line naming the file and line,
    what cannot run (issue #35 item 5) — no spheres, too many spheres or bonds, a
    position, velocity or spin beyond ``±1e30``, a mass, diameter or inertia outside
    ``[1e-30, 1e30]``, a bond to a missing sphere, of a sphere with itself or twice,
    shorter than :data:`MIN_BOND_LENGTH` of its smaller sphere, a bond type unknown or
    with a coefficient out of range, unbonded spheres overlapping at t = 0 by more than
    ``p["overlap_tolerance"]`` of the smaller diameter, a sphere cutting a wall."""
    tol = p["overlap_tolerance"]
    P = geo.part
    n = P.n
    if n == 0:
        where = geo.origin[0][2] if geo.origin else "assembly"
        raise AssemblyError(f"{where}: no spheres: an assembly needs at least one; give "
                            "[[bodies]], a bodies CSV, a source data file or [[build]]")
    if n > MAX_BODIES:
        raise AssemblyError(f"{n:.3g} spheres is more than {MAX_BODIES:.0e} (docs/scenarios.md "
                            "\"Limits\": a run needs about 2 kB a sphere); use fewer")
    if P.bonds.shape[0] > MAX_BONDS:
        raise AssemblyError(f"{P.bonds.shape[0]:.3g} bonds is more than {MAX_BONDS:.0e} "
                            "(docs/scenarios.md \"Limits\"); use fewer")
    for name, a in (("diameter", P.D), ("mass", P.m), ("inertia", P.J)):
        bad = ~(a >= TINY) | ~(a <= BIG)
        if bad.any():
            i = int(np.argmax(bad))
            raise AssemblyError(f"{geo.where_body(i)}: {name} = {a[i]:g} must be positive "
                                f"(at least {TINY:g}, at most {BIG:g}); give the sphere a "
                                f"{name} in that range")
    for name, a in (("position", P.x), ("velocity", P.v), ("spin", P.omega)):
        bad = ~(np.abs(a) <= BIG).all(axis=1)
        if bad.any():
            i = int(np.argmax(bad))
            raise AssemblyError(f"{geo.where_body(i)}: {name} {a[i].tolist()} is not finite "
                                f"or beyond ±{BIG:g} (docs/scenarios.md \"Limits\"); fix "
                                "the sphere")
    b = P.bonds
    if b.shape[0]:
        out = (b < 0).any(axis=1) | (b >= n).any(axis=1)
        if out.any():
            k = int(np.argmax(out))
            raise AssemblyError(f"{geo.where_bond(k)}: bond ({b[k, 0]}, {b[k, 1]}) names a "
                                f"sphere that does not exist (there are {n}, numbered from 0)")
        same = b[:, 0] == b[:, 1]
        if same.any():
            k = int(np.argmax(same))
            raise AssemblyError(f"{geo.where_bond(k)}: sphere {b[k, 0]} is bonded to itself")
        keys = np.minimum(b[:, 0], b[:, 1]) * n + np.maximum(b[:, 0], b[:, 1])
        order = np.argsort(keys, kind="stable")
        dup = np.flatnonzero(keys[order][1:] == keys[order][:-1])
        if dup.size:
            k = int(order[dup[0] + 1])
            raise AssemblyError(f"{geo.where_bond(k)}: spheres {b[k, 0]} and {b[k, 1]} are "
                                f"bonded twice (also at {geo.where_bond(int(order[dup[0]]))})"
                                "; keep one of the two bonds")
        r0 = np.linalg.norm(P.x[b[:, 0]] - P.x[b[:, 1]], axis=1)
        dmin = np.minimum(P.D[b[:, 0]], P.D[b[:, 1]])
        short = ~(r0 >= MIN_BOND_LENGTH * dmin)
        if short.any():
            k = int(np.argmax(short))
            raise AssemblyError(
                f"{geo.where_bond(k)}: bond ({b[k, 0]}, {b[k, 1]}) has length {r0[k]:.3g} "
                f"at t = 0 (its spheres' centres {'coincide' if r0[k] == 0 else 'nearly coincide'}"
                f"); a bond must be at least {MIN_BOND_LENGTH:g} of the smaller diameter "
                "long: move the spheres apart or remove the bond")
    _check_types(geo)
    check_dipoles(P.dipole, geo.where_body)
    fields_of(p, P.group)  # (the [[fields]] and [[damping]] tables: issue #44)
    stages_of(p, P.group)  # (and the [[stages]]: issue #44 item 5)
    if n >= 2:
        pairs = cKDTree(P.x).query_pairs(float(P.D.max()), output_type="ndarray")
        if pairs.size and b.shape[0]:  # (bonded spheres may overlap: their contact is
            # part of the bond, and a frame of a run under load starts so)
            bk = np.minimum(b[:, 0], b[:, 1]) * n + np.maximum(b[:, 0], b[:, 1])
            pk = np.minimum(pairs[:, 0], pairs[:, 1]) * n + np.maximum(pairs[:, 0], pairs[:, 1])
            pairs = pairs[~np.isin(pk, bk)]
        if pairs.size:
            i, j = pairs[:, 0], pairs[:, 1]
            r = np.linalg.norm(P.x[i] - P.x[j], axis=1)
            dmin = np.minimum(P.D[i], P.D[j])
            over = (0.5 * (P.D[i] + P.D[j]) - r) / dmin
            k = int(np.argmax(over))
            if over[k] > tol:
                a, c = sorted((int(i[k]), int(j[k])))
                raise AssemblyError(
                    f"spheres {a} ({geo.where_body(a)}) and {c} ({geo.where_body(c)}) overlap "
                    f"by {over[k] * dmin[k]:.3g} ({100 * over[k]:.3g} % of the smaller "
                    f"diameter) at t = 0, more than overlap_tolerance = {tol:g}; move them "
                    "apart")
    for w, (nrm, c) in enumerate(geo.walls):
        cut = -(P.x @ nrm - c - 0.5 * P.D) / P.D
        if n and cut.max() > tol:
            i = int(np.argmax(cut))
            raise AssemblyError(f"{geo.where_body(i)}: sphere {i} cuts wall {w} "
                                f"(n = {np.round(nrm, 6).tolist()}) by {cut[i] * P.D[i]:.3g} "
                                "at t = 0; move it or the wall")


def check_import(d: LammpsData, default: dict[str, float]) -> None:
    """:func:`check_geometry` of the scenario ``rrp import lammps`` writes from the data
    file ``d``: its spheres and bonds, each bond type with the coefficients its
    ``# rrp bond_type`` comment gives or ``default`` (``k_bend``, ``k_axial``,
    ``k_shear``), the default parameters.  The import refuses what the run would (one
    check for every route, issues #42 item 6, #46 item 6, #47 item 5), naming the data
    file's line."""
    from .base import resolve_parameters

    label = d.path.name
    types = {str(t) for t in range(1, d.n_bond_types + 1)} | set(
        np.unique(d.bond_type).astype(str).tolist())
    fallback = tuple(float(default[k]) for k in BOND_COEFFS)
    table = {t: d.bond_coeffs.get(t, fallback) for t in types}
    part = part_of_data(d)
    geo = Geometry(part, [], table, [(0, part.n, label, lambda: d.lines("Atoms"))],
                   [(0, part.bonds.shape[0], label, lambda: d.lines("Bonds"))],
                   data_type_origin(d, label))
    check_geometry(geo, resolve_parameters(SCHEMA, {}, "assembly"))


def conserved_of(walls: list[tuple[np.ndarray, float]], g: np.ndarray,
                 friction: bool = False) -> tuple[str, ...]:
    """The momentum components that the walls and gravity leave conserved: ``P_e`` for an
    axis ``e`` normal to every wall normal and to ``g``, ``L_e`` for one parallel to
    every wall normal and to ``g`` (the torus's wall x = 0: P_y, P_z, L_x); none where
    walls have friction (their tangential forces change every component)."""
    if walls and friction:
        return ()
    axes = np.eye(3)
    dirs = [n for n, _ in walls] + ([g] if np.any(g) else [])
    p = [f"P_{'xyz'[k]}" for k in range(3)
         if all(abs(float(d @ axes[k])) < 1e-15 * float(np.linalg.norm(d)) for d in dirs)]
    ll = [f"L_{'xyz'[k]}" for k in range(3)
          if all(float(np.linalg.norm(np.cross(d, axes[k]))) < 1e-15 * float(np.linalg.norm(d))
                 for d in dirs)]
    return tuple(p + ll)


def _conserved(ff, p: dict[str, Any], groups: np.ndarray, stages,
               base: tuple[str, ...]) -> tuple[str, ...]:
    """``base`` less what the fields and viscous damping of ``p`` and its stages change
    (``assembly_fields.conserved_under_loads``), read from the force field ``ff``."""
    from ..potentials.fields import FI_CHARGE, FI_GAMMA, FI_GAMMA_ROT, FI_MU

    fields, _ = fields_of(p, groups)
    dirs = [np.asarray(e) for _, e, _ in fields]
    dirs += [np.asarray(f.E) for s in stages for f in s.fields]
    f = ff.fields
    return conserved_under_loads(
        base, dirs, bool(f[FI_MU].shape[0] and np.any(f[FI_MU])),
        bool(f[FI_CHARGE].shape[0] and np.any(f[FI_CHARGE])),
        bool(np.any(f[FI_GAMMA]) or any(d.gamma > 0 for s in stages for d in s.damping)),
        bool(np.any(f[FI_GAMMA_ROT])
             or any(d.gamma_rot > 0 for s in stages for d in s.damping)),
        )


def model_from_part(P: Part, walls: list[tuple[np.ndarray, float]],
                    p: dict[str, Any], k: tuple[float, float, float],
                    per_bond: np.ndarray | None = None, *,
                    bond_types: dict[str, tuple[float, float, float]] | None = None,
                    bond_laws: dict[str, dict[str, Any]] | None = None
                    ) -> Model:
    """The :class:`Model` of the spheres and bonds ``P`` (copied), the walls and the
    parameters ``p``, the bonds' coefficients ``k = (k_bend, k_axial, k_shear)``, or
    each bond's own ``per_bond (nb, 3)`` when its types differ (issue #35 item 1);
    ``bond_types``: the coefficients of each named type, ``bond_laws`` the types of a
    LAMMPS BPM law (issue #44 item 1: ``engine.models.bond_laws``), both carried with
    the model (:func:`carried_arrays`)."""
    n = P.n
    bodies = Bodies(P.m.copy(), P.J.copy(), P.D.copy())
    x = P.x.copy()
    pk = {**p, "k_bend": k[0], "k_axial": k[1], "k_shear": k[2]}
    ff = bonded_spheres(bodies, x, P.bonds.copy(), pk)
    if per_bond is not None:
        ff.set_bond_coefficients(per_bond)
    q = np.zeros((n, 4))
    q[:, 0] = 1.0
    laws = law_table(P.bond_type, bond_laws or {}, x, q, ff.bonds)
    ff.set_bond_laws(laws)
    hard = p["contact"] == "hard"
    if walls:
        ff.flags[T_HARD_WALL if hard else T_WALL] = 1
        ff.fp[P_K_WALL] = p["k_wall"]
        ff.set_walls(walls)
    g = np.asarray(p["gravity"], dtype=np.float64)
    gn = float(np.linalg.norm(g))
    if gn > 0.0:
        ff.set_gravity(gn, g / gn)
    extra = apply_fields(ff, p, P.group, P.dipole)  # (issue #44 items 3 and 4)
    stages, staged = apply_stages(ff, p, P.group, P.dipole)  # (item 5)
    extra += tuple(c for c in staged if c not in extra)
    components = bonded_energy_components(ff, hard, bool(walls), gn > 0.0)
    binder_like, spring = law_components(laws)
    if not binder_like:
        components = tuple(c for c in components if c not in ("bending", "axial", "shear"))
    if spring:
        k = components.index("contact") if "contact" in components else \
            components.index("dissipated") if "dissipated" in components else len(components)
        components = components[:k] + ("spring",) + components[k:]
    if ff.bond_damped and "dissipated" not in extra:  # the bonds' own damping
        extra += ("dissipated",)  # (engine.potentials.bond_damping)
    components += tuple(c for c in extra if c not in components)
    if laws is not None and breakable(laws):  # (issue #44 item 2)
        components += ("broken",)
    return Model(
        name="assembly",
        title="Assembly of bonded spheres",
        params=p,
        bodies=bodies,
        forcefield=ff,
        initial_state=State(x, P.v.copy(), q, P.omega.copy()),
        energy_components=components,
        conserved=_conserved(ff, p, P.group, stages, conserved_of(walls, g, p["mu"] > 0.0)),
        draw_diameter=bodies.D.copy(),
        wall=walls[0] if walls else None,
        walls=list(walls),
        contact="hard" if hard else "penalty",
        groups=P.group.copy(),
        carried=carried_arrays(P, walls, bond_types or {}, bond_laws or {}),
        stages=stages,
    )


CARRIED = ("position", "velocity", "spin", "bond_type", "bond_type_names",
           "bond_type_coefficients", "walls")
"""The arrays of an assembly a run file carries under ``/model/assembly`` (issue #43
item 4); with ``/bodies`` (mass, inertia, diameter, group) and ``/model/bonds`` they are
the whole model, whatever files its parameters point to.  A model with bond types of a
BPM law also carries ``bond_type_laws`` (:data:`CARRIED_LAWS`), one with dipoles
``dipole``."""
CARRIED_LAWS = "bond_type_laws"
"""The BPM laws of the bond types, JSON bytes ``{type: law}`` (issue #44 item 1): only in
the files of models that have them (older files and binder models: none)."""
CARRIED_OPTIONAL = ("dipole", CARRIED_LAWS)
"""Carried only by a model that has them: the spheres' body-frame dipoles (issue #44
items 3-4) and the bond types' BPM laws (item 1)."""


def carried_arrays(P: Part, walls: list[tuple[np.ndarray, float]],
                   bond_types: dict[str, tuple[float, float, float]],
                   bond_laws: dict[str, dict[str, Any]] | None = None
                   ) -> dict[str, np.ndarray]:
    """The :data:`CARRIED` arrays of the spheres and bonds ``P`` (the reference state:
    positions, velocities and spins at t = 0; the bonds' rest vectors come from these
    positions), the walls ``(n, d)`` as rows ``(n_x, n_y, n_z, d)`` and the bond types:
    each bond's index into the type names (JSON bytes) and each named type's
    ``(k_bend, k_axial, k_shear)`` (a type not named takes the parameters')."""
    labels = np.asarray(P.bond_type).astype(str)
    names = sorted(set(labels.tolist()) | set(bond_types))
    index = {t: i for i, t in enumerate(names)}
    coeff = np.array([bond_types.get(t, (np.nan, np.nan, np.nan)) for t in names],
                     dtype=np.float64).reshape(-1, 3)
    out = {
        **({} if P.dipole is None else {
            "dipole": np.asarray(P.dipole, dtype=np.float64).copy()}),
        "position": np.asarray(P.x, dtype=np.float64).copy(),
        "velocity": np.asarray(P.v, dtype=np.float64).copy(),
        "spin": np.asarray(P.omega, dtype=np.float64).copy(),
        "bond_type": np.array([index[t] for t in labels.tolist()], dtype=np.int64),
        "bond_type_names": np.frombuffer(json.dumps(names).encode(), dtype=np.uint8).copy(),
        "bond_type_coefficients": coeff,
        "walls": np.array([[*np.asarray(nv, dtype=np.float64), float(d)] for nv, d in walls],
                          dtype=np.float64).reshape(-1, 4),
    }
    if bond_laws:
        out[CARRIED_LAWS] = np.frombuffer(json.dumps(bond_laws, sort_keys=True).encode(),
                                          dtype=np.uint8).copy()
    return out


def from_carried(p: dict[str, Any], arrays: dict[str, np.ndarray], m: np.ndarray,
                 J: np.ndarray, D: np.ndarray, group: np.ndarray, bonds: np.ndarray
                 ) -> Model:
    """The model a run file carries (:func:`carried_arrays`, with its ``/bodies`` and
    ``/model/bonds``) and its parameters ``p``: the same model, bit for bit, as the one
    the run was made with, without reading the files ``p`` points to (issue #43 item 4).
    The arrays were checked when the run was made and are under the file's header
    digest; their shapes are checked here (:class:`AssemblyError`, one line)."""
    geo = carried_geometry(arrays, m, J, D, group, bonds)
    return model_from_part(geo.part, geo.walls, p, *coefficients(geo, p),
                           bond_types=geo.bond_types, bond_laws=geo.bond_laws)


def carried_geometry(arrays: dict[str, np.ndarray], m: np.ndarray, J: np.ndarray,
                     D: np.ndarray, group: np.ndarray, bonds: np.ndarray) -> Geometry:
    """The :class:`Geometry` (spheres, bonds with their type labels, walls, named types'
    coefficients) of carried arrays (:func:`carried_arrays`) and the bodies' constants:
    what a run file's model was built from, for a writer that needs the bond types by
    name (the LAMMPS deck, issue #43 items 2 and 4)."""
    n = int(np.asarray(m).shape[0])
    names = json.loads(bytes(np.asarray(arrays["bond_type_names"], dtype=np.uint8)))
    bt = np.asarray(arrays["bond_type"], dtype=np.int64)
    bonds = np.asarray(bonds, dtype=np.int64).reshape(-1, 2)
    coeff = np.asarray(arrays["bond_type_coefficients"], dtype=np.float64).reshape(-1, 3)
    walls_a = np.asarray(arrays["walls"], dtype=np.float64).reshape(-1, 4)
    shapes_ok = (all(np.asarray(arrays[k]).shape == (n, 3)
                     for k in ("position", "velocity", "spin"))
                 and bt.shape == (bonds.shape[0],) and len(names) == coeff.shape[0]
                 and (bt.size == 0 or (bt.min() >= 0 and bt.max() < len(names))))
    if not shapes_ok:
        raise AssemblyError("the assembly carried by the run file does not fit its bodies "
                            "and bonds (/model/assembly)")
    labels = np.array([names[i] for i in bt.tolist()], dtype=object).astype(str) \
        if bt.size else np.zeros(0, dtype="<U1")
    P = Part(np.array(arrays["position"], dtype=np.float64), np.asarray(D, np.float64).copy(),
             np.asarray(m, np.float64).copy(), np.asarray(J, np.float64).copy(),
             np.array(arrays["velocity"], dtype=np.float64),
             np.array(arrays["spin"], dtype=np.float64),
             np.asarray(group, dtype=np.int64).copy(), bonds.copy(), labels)
    if "dipole" in arrays and np.asarray(arrays["dipole"]).shape == (n, 3):
        P.dipole = np.array(arrays["dipole"], dtype=np.float64)
    types = {t: tuple(float(x) for x in coeff[i]) for i, t in enumerate(names)
             if np.all(np.isfinite(coeff[i]))}
    walls = [(row[:3].copy(), float(row[3])) for row in walls_a]
    laws = {}
    if arrays.get(CARRIED_LAWS) is not None:
        laws = json.loads(bytes(np.asarray(arrays[CARRIED_LAWS], dtype=np.uint8)))
        types = {t: k for t, k in types.items() if t not in laws}
    geo = Geometry(P, walls, types, [(0, n, "run file", None)],
                   [(0, bonds.shape[0], "run file", None)], {}, laws)
    return geo


def build(p: dict[str, Any]) -> Model:
    geo = geometry_of(p)
    check_geometry(geo, p)
    k, per_bond = coefficients(geo, p)
    return model_from_part(geo.part, geo.walls, p, k, per_bond, bond_types=geo.bond_types,
                           bond_laws=geo.bond_laws)


def geometry_json(g: dict[str, Any], folder: str | Path, label: str = "assembly") -> str:
    """The ``geometry`` parameter of the scenario's geometry keys ``g``, its relative
    files read from ``folder`` (made absolute)."""
    return json.dumps({**g, "dir": str(Path(folder).resolve()), "label": label},
                      sort_keys=True)


def model_of(parts: list[Part], *, walls: list[tuple[Any, Any]] = (),
             bond_types: dict[str, tuple[float, float, float]] | None = None,
             **params: Any) -> Model:
    """The Python API (issue #35 item 3): an assembly of builder parts
    (``engine.models.builders``) with walls ``(point, normal)`` and any of the
    parameters of :data:`SCHEMA` (checked as in a scenario)."""
    from .base import resolve_parameters
    from .builders import join

    p = resolve_parameters(SCHEMA, params, "assembly")
    P = join(list(parts))
    ws = []
    for point, normal in walls:
        nv = np.asarray(normal, dtype=np.float64)
        nv = nv / float(np.linalg.norm(nv))
        ws.append((nv, float(nv @ np.asarray(point, dtype=np.float64))))
    types = {str(t): k for t, k in (bond_types or {}).items()}
    laws = {}
    for t, k in list(types.items()):  # (a dict: a law, docs/scenarios.md "Bond laws")
        if isinstance(k, dict):
            law = parse_law(k, f"bond_types[{t!r}]")
            del types[t]
            if law is None:
                types[t] = tuple(k.get(c) for c in BOND_COEFFS)
            else:
                laws[t] = law
    geo = Geometry(P, ws, types, [(0, P.n, "parts", None)],
                   [(0, P.bonds.shape[0], "parts", None)],
                   {t: f"bond_types[{t!r}]" for t in (*types, *laws)}, laws)
    check_geometry(geo, p)
    geo.bond_types = {t: tuple(float(x) for x in k) for t, k in types.items()}
    return model_from_part(P, ws, p, *coefficients(geo, p), bond_types=geo.bond_types,
                           bond_laws=laws)


SPEC = ModelSpec("assembly", "Your own assembly of bonded spheres (issue #35)", SCHEMA, build)
