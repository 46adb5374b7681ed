"""A frame of a run of bonded spheres as a LAMMPS data file and an input deck that real
LAMMPS runs as close to ours as LAMMPS can (issue #35 item 4, issue #43 item 2;
docs/scenarios.md "LAMMPS decks").

``DIR/<stem>.data``: atom style ``bpm/sphere`` (the group as molecule id, one atom type
per diameter), velocities with angular velocities, the bonds with one LAMMPS type per
(our type, rest length) (:mod:`.bond_map`), a box with room for LAMMPS's neighbour bins.
``DIR/in.<stem>``: its first lines say what LAMMPS takes as stress-free (each bond's
state when first computed: ours is the run's reference, t = 0, the frame written by
default) and the attitudes it cannot carry; then a comment block of what maps exactly
and what approximately; ``boundary m m m``, ``comm_modify vel yes cutoff`` from the
longest bond, ``bond_style bpm/rotational`` (bonded spheres keep their Hertz contact, as
ours: ``overlay/pair yes``), ``pair_style granular`` and ``fix wall/gran/region`` with
the contacts of :mod:`.contact_map` (Hertz, damping, friction), our neighbour-list skin
and rebuild rule, gravity, ``fix nve/bpm/sphere`` and a thermo line with LAMMPS's
rotational energy (``compute erotate/sphere``) whole, not per atom, to 15 digits.
Read back with ``source =`` or ``rrp import lammps``, the data file gives the same
spheres and bonds and each bond's coefficients (tests/test_assembly_lammps.py,
tests/test_lammps_decks.py).

:func:`write_lammps` (arrays) and :func:`write_lammps_model` (a built model at its
initial state) are the same writer for Python callers: the LAMMPS peer of the pile
benchmark, ``benchmarks/peers/lammps_pile.py``, makes its data file and deck with them
(issue #35 item 4).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .bond_map import bond_coeff_line, num, split_by_rest_length
from .contact_map import atom_types, contact_map
from .write_data import write_data

NO_DAMPING = (0.0, 0.0, 0.0, 0.0)
"""``γ_n γ_s γ_r γ_t`` of ``bpm/rotational`` by default: undamped, as our binder."""

SKIN_FRACTION = 0.5
"""The neighbour-list skin in the largest diameter (``engine.models.torus``'s)."""

GHOST_BONDS = 2.0
"""The communication cutoff in longest bonds (plus the skin): LAMMPS warns below its own
estimate, 1.5 longest bonds plus the skin, and a stretched bond needs more."""


def write_lammps(out: Path, stem: str, model_name: str, params: dict[str, Any],
                 x: np.ndarray, v: np.ndarray, omega: np.ndarray, m: np.ndarray,
                 J: np.ndarray, D: np.ndarray, bonds: np.ndarray, h: float, *,
                 title: str = "RRP Studio", bond_damping: tuple[float, ...] = NO_DAMPING,
                 run_steps: int | None = 10_000, before=None,
                 x_ref: np.ndarray | None = None, q: np.ndarray | None = None,
                 t: float = 0.0, groups: np.ndarray | None = None,
                 bond_k: np.ndarray | None = None,
                 walls: list[tuple[Any, float]] | None = None,
                 geometry: Any = None) -> tuple[Path, Path]:
    """Write ``out/<stem>.data`` and ``out/in.<stem>`` (the module docstring) for spheres
    at ``x`` with velocities ``v``, ``omega`` (at time ``t``; attitudes ``q (n, 4)`` if
    known) of the model ``model_name`` (``assembly``, ``torus``, ``tori-pile``) with
    parameters ``params``; ``x_ref``: the positions of the run's reference state (our
    bonds' rest lengths; default ``x``: this state is the reference); ``(data, deck)``.
    The ``rrp convert`` defaults are those of our model; ``bond_damping`` (``γ_n γ_s γ_r
    γ_t`` of ``bpm/rotational``) and ``run_steps`` (``None``: no ``run`` line, the caller
    runs) serve a caller such as ``benchmarks/peers/lammps_pile.py`` (issue #35 item 4).
    ``groups``, ``bond_k (nb, 3)``, ``walls`` (``(n, c)``: ``n·x ≥ c``): a built
    assembly's own; ``geometry``: the assembly a run file carries (its bond types by
    name: ``RunFile.carried_geometry``, issue #43 item 4); else rebuilt from ``params``
    (:class:`DeckError` in one line where its files are gone, before anything is
    written).  Both files are written into a
    temporary directory and renamed into ``out`` (created if missing) together, whole
    or not at all (:class:`~engine.io.atomic.AtomicOutput`: a write error is one line,
    :class:`~engine.io.atomic.OutputError`, issue #46 item 2);
    ``before()``: called just before (it may raise: a signal)."""
    from ..atomic import AtomicOutput

    params = dict(params)
    if model_name == "assembly" and "mu" not in params:
        params["mu"] = 0.0
    bonds = np.asarray(bonds, dtype=np.int64).reshape(-1, 2)
    x_ref = x if x_ref is None else np.asarray(x_ref, dtype=np.float64)
    n, nb = m.shape[0], bonds.shape[0]
    groups, our_type, coeffs = _groups_and_types(model_name, params, n, nb, groups=groups,
                                                 bond_k=bond_k, geometry=geometry)
    wall_list = (_walls(params, model_name, n, nb, geometry) if walls is None else
                 [(list(map(float, nv)), float(c)) for nv, c in walls])
    r0 = (np.linalg.norm(x_ref[bonds[:, 0]] - x_ref[bonds[:, 1]], axis=1)
          if bonds.size else np.zeros(0))
    btype, table = split_by_rest_length(our_type, r0, coeffs)
    atype, dias, exact_types = atom_types(D)
    plan = _Plan(params, model_name, x, x_ref, q, t, m, J, D, bonds, r0, btype, table,
                 atype, dias, exact_types, h)
    plan.walls = wall_list
    data, deck = out / f"{stem}.data", out / f"in.{stem}"
    with AtomicOutput(out, directory=True) as ao:
        write_data(ao.tmp / data.name, x, D, m, v, omega, bonds, bond_type=btype, mol=groups,
                   title=title, bond_coeffs={k: c[:3] for k, c in table.items()},
                   atom_type=atype, pad=plan.pad)
        (ao.tmp / deck.name).write_text(
            _deck(data.name, plan, bond_damping=bond_damping, run_steps=run_steps),
            encoding="ascii")
        ao.commit(before=before)
    return data, deck


def write_lammps_model(model: Any, out: Path, stem: str, h: float, *,
                       bond_damping: tuple[float, ...] = NO_DAMPING,
                       run_steps: int | None = 10_000) -> tuple[Path, Path]:
    """:func:`write_lammps` of a built engine model at its initial state (the pile of
    ``benchmarks/peers/lammps_pile.py``: issue #35 item 4)."""
    ff, st, b = model.forcefield, model.initial_state, model.bodies
    bonds = ff.bonds if ff.bonds.size else np.zeros((0, 2), dtype=np.int64)
    own: dict[str, Any] = {}
    if model.name == "assembly":  # (its own groups, coefficients and walls)
        own = {"groups": model.groups, "bond_k": ff.bond_k if ff.bond_k.size else None,
               "walls": list(model.walls)}
    return write_lammps(out, stem, model.name, dict(model.params), st.x, st.v, st.omega,
                        np.asarray(b.m, dtype=np.float64), np.asarray(b.J, dtype=np.float64),
                        np.asarray(b.D, dtype=np.float64), bonds, h,
                        title=f"RRP Studio: {model.name} (initial state)",
                        bond_damping=bond_damping, run_steps=run_steps, q=st.q, t=0.0,
                        **own)


class DeckError(ValueError):
    """The deck cannot be written as the run ran (an assembly whose files are gone or
    changed): one line naming the problem and the fix; nothing is written."""


def _geometry(params: dict[str, Any], n: int, nb: int, given: Any = None):
    """The assembly's geometry: ``given`` (the one a run file carries), else rebuilt
    from the parameters; checked against the run's ``n`` spheres and ``nb`` bonds
    (:class:`DeckError` where it cannot be: without it the bond types, coefficients,
    walls and groups would be lost, issue #43 item 6)."""
    from engine.models.assembly import geometry_of
    from engine.models.assembly_input import AssemblyError

    try:
        geo = given if given is not None else geometry_of(params)
    except AssemblyError as exc:
        raise DeckError(f"the assembly cannot be rebuilt ({str(exc).splitlines()[0]}), so "
                        "its bond types, coefficients, walls and groups would be lost: put "
                        "its files back where the run read them") from None
    if geo.part.n != n or geo.part.bonds.shape[0] != nb:
        raise DeckError(f"the assembly's files now give {geo.part.n} spheres and "
                        f"{geo.part.bonds.shape[0]} bonds, the run has {n} and {nb}: put "
                        "back the files the run read")
    return geo


def _groups_and_types(model: str, params: dict[str, Any], n: int, nb: int, *,
                      groups: np.ndarray | None = None, bond_k: np.ndarray | None = None,
                      geometry: Any = None
                      ) -> tuple[np.ndarray, np.ndarray, dict[int, tuple[float, float, float]]]:
    """Each sphere's group, each bond's type and each type's binder coefficients
    ``(k_bend, k_axial, k_shear)``: an assembly's own (``groups`` and each bond's
    coefficients ``bond_k (nb, 3)`` of a built model, else its geometry rebuilt from the
    parameters, its ``[bond_types]``: issue #35 item 1), the ring of each sphere and
    type 1 with the model's constants for the torus and pile."""
    glob = (float(params.get("k_bend", 10.0)), float(params.get("k_axial", 200.0)),
            float(params.get("k_shear", 200.0)))
    if model == "assembly" and groups is not None:
        if bond_k is None or not np.asarray(bond_k).size:
            return np.asarray(groups, dtype=np.int64), np.ones(nb, dtype=np.int64), {1: glob}
        rows, inv = np.unique(np.asarray(bond_k, dtype=np.float64), axis=0,
                              return_inverse=True)
        return (np.asarray(groups, dtype=np.int64), inv.reshape(-1).astype(np.int64) + 1,
                {i + 1: tuple(map(float, r)) for i, r in enumerate(rows)})
    if model == "assembly":
        geo = _geometry(params, n, nb, geometry)
        t = geo.part.bond_type.astype(str)
        names = sorted(set(t.tolist()), key=_type_key)
        ids = {s: i + 1 for i, s in enumerate(names)}
        table = {"1": glob, **geo.bond_types}
        coeffs = {ids[s]: tuple(map(float, table.get(s, glob))) for s in names}
        return (geo.part.group.copy(), np.array([ids[s] for s in t], dtype=np.int64), coeffs)
    if groups is not None:  # (the run file's /bodies/group: engine.models.base.body_groups)
        return np.asarray(groups, dtype=np.int64), np.ones(nb, dtype=np.int64), {1: glob}
    n_p = int(params.get("n_particles", n) or n)
    return np.arange(n) // max(n_p, 1), np.ones(nb, dtype=np.int64), {1: glob}


def _type_key(s: str) -> tuple:
    return (0, int(s), "") if s.isdigit() else (1, 0, s)


def _walls(params: dict[str, Any], model: str, n: int, nb: int, geometry: Any = None
           ) -> list[tuple[list[float], float]]:
    if model == "torus":
        return [([1.0, 0.0, 0.0], 0.0)] if params.get("wall", True) else []
    if model == "tori-pile":
        if not params.get("walls", True):
            return []
        h = 0.5 * float(params["box"])
        return [([0.0, 0.0, 1.0], 0.0), ([1.0, 0.0, 0.0], -h), ([-1.0, 0.0, 0.0], -h),
                ([0.0, 1.0, 0.0], -h), ([0.0, -1.0, 0.0], -h)]
    return [(list(map(float, nv)), float(c))
            for nv, c in _geometry(params, n, nb, geometry).walls]


def _gravity(params: dict[str, Any], model: str) -> list[float]:
    if model == "tori-pile":
        return [0.0, 0.0, -float(params.get("g", 0.0))]
    return [float(c) for c in params.get("gravity", [0.0, 0.0, 0.0])]




class _Plan:
    """What the deck is made of, computed once: the state, the reference, the types,
    the skin, the communication cutoff and the box's room."""

    def __init__(self, p: dict[str, Any], model: str, x: np.ndarray, x_ref: np.ndarray,
                 q: np.ndarray | None, t: float, m: np.ndarray, J: np.ndarray,
                 D: np.ndarray, bonds: np.ndarray, r0: np.ndarray, btype: np.ndarray,
                 table: dict[int, tuple[float, float, float, float]], atype: np.ndarray,
                 dias: np.ndarray, exact_types: bool, h: float) -> None:
        self.p, self.model, self.x, self.x_ref, self.q, self.t = p, model, x, x_ref, q, t
        self.m, self.J, self.D, self.bonds, self.r0 = m, J, D, bonds, r0
        self.btype, self.table, self.h = btype, table, h
        self.atype, self.dias, self.exact_types = atype, dias, exact_types
        d_max = float(D.max()) if D.size else 1.0
        self.skin = SKIN_FRACTION * d_max
        self.r_now = (np.linalg.norm(x[bonds[:, 0]] - x[bonds[:, 1]], axis=1)
                      if bonds.size else np.zeros(0))
        longest = max(float(self.r_now.max(initial=0.0)), float(r0.max(initial=0.0)))
        self.cutoff = max(GHOST_BONDS * longest, d_max) + self.skin
        self.pad = max(d_max, self.cutoff)
        self.walls: list[tuple[list[float], float]] = []

    def stress_free(self) -> list[str]:
        """The deck's first lines: what LAMMPS takes as stress-free, the attitudes."""
        same = self.x is self.x_ref or np.array_equal(self.x, self.x_ref)
        out = ["# Stress-free state: LAMMPS takes each bond's length and direction when it is",
               "# first computed (this data file's state) as the bond's rest state."]
        if same:
            out.append(f"# This is RRP Studio's reference state (t = {num(self.t)}): the same.")
        else:
            dev = (float(np.abs(self.r_now / self.r0 - 1.0).max()) if self.r0.size else 0.0)
            out += [f"# NOT ours: this frame is t = {num(self.t)}; RRP Studio's bonds rest at "
                    "the run's reference",
                    f"# state (t = 0), from which these bonds are up to {100 * dev:.3g} % "
                    "longer or shorter and",
                    "# bent as they are: LAMMPS starts them unstressed. Convert --frame 0 "
                    "for the same rest state."]
        if self.q is None:
            out.append("# Attitudes: not known here; bpm/sphere atoms start at the identity.")
        else:
            w = np.clip(np.abs(np.asarray(self.q, dtype=np.float64)[:, 0]), 0.0, 1.0)
            ang = np.degrees(2.0 * np.arccos(w)) if w.size else np.zeros(0)
            turned = int((ang > 1e-9).sum())
            out.append("# Attitudes: every sphere at the identity, as bpm/sphere atoms start: "
                       "carried." if turned == 0 else
                       f"# Attitudes NOT carried: {turned} spheres are turned (up to "
                       f"{float(ang.max()):.3g} deg); bpm/sphere atoms start at the identity.")
        return out


def _deck(data: str, pl: _Plan, *, bond_damping: tuple[float, ...] = NO_DAMPING,
          run_steps: int | None = 10_000) -> str:
    """The LAMMPS input deck (the module docstring) of the plan ``pl``."""
    p, model = pl.p, pl.model
    cm = contact_map(p, pl.atype, pl.dias, pl.exact_types, pl.walls, bool(pl.bonds.size))
    m, J, D = pl.m, pl.J, pl.D
    solid = np.allclose(J, 0.1 * m * D * D, rtol=1e-12, atol=0.0)
    lines = [
        f"# LAMMPS input deck written by 'rrp convert --to lammps' for {data}",
        f"# (RRP Studio model {model}: the B&G section 4 binder law; docs/scenarios.md,"
        " LAMMPS decks).",
        *pl.stress_free(),
        "#",
        "# What maps exactly and what approximately (RRP Studio's model against LAMMPS's):",
        "* binder: ours U = 1/2 Km |theta|^2 + 1/2 Ka (r/r0 - 1)^2",
        "  + 1/4 Ks [(1 - c_i)^2 + (1 - c_j)^2]; bpm/rotational is linear in each mode.",
        "  k_r = Ka/r0^2 (exact), k_b = k_t = Km (exact at small angles), k_s = Ks/r0^2",
        "  (approximate: our shear is quartic at small angles). One LAMMPS bond type per",
        f"  (our type, rest length), {len(pl.table)} here: each bond's k_r is its own.",
        "  Bonds never break (break no); no bond damping in ours.",
        *cm.notes,
        ("* inertia: J = m D^2/10 in ours as in LAMMPS's spheres (exact)." if solid else
         "* inertia NOT carried: LAMMPS's spheres have J = m D^2/10 (the data file holds "
         "diameter and"),
    ]
    if not solid:
        j = np.asarray(J, dtype=np.float64).reshape(m.shape[0], -1)[:, 0]
        lines.append(f"  density only); ours J = {float(j.min()):.6g} .. {float(j.max()):.6g}, "
                     f"LAMMPS {float((0.1 * m * D * D).min()):.6g} .. "
                     f"{float((0.1 * m * D * D).max()):.6g}: spins and rotational energies differ.")
    lines += [
        f"* integration: RRP Studio's scheme ({p.get('contact', 'penalty')} contacts); "
        "fix nve/bpm/sphere",
        "  is velocity Verlet.",
        "* neighbour list: our skin (half the largest diameter), rebuilt when a sphere has",
        "  moved half of it; the ghost cutoff covers twice the longest bond.",
        "* bond damping (gamma_n gamma_s gamma_r gamma_t): "
        + " ".join(f"{g:g}" for g in bond_damping)
        + (" (undamped, as ours)." if not any(bond_damping) else
           " (ours is undamped: this run dissipates)."),
        "* energies: ke (translational) and c_erot (rotational, compute erotate/sphere) are",
        "  ours; granular and BPM styles report no potential energy (pe is 0).",
        "",
    ]
    lines = [ln if ln.startswith("#") or not ln else "# " + ln for ln in lines]
    lines += [
        "units           si",
        "dimension       3",
        "boundary        m m m",
        "atom_style      bpm/sphere",
        "special_bonds   lj/coul 1 1 1",
        "newton          on off",
        f"comm_modify     vel yes cutoff {pl.cutoff:.10g}",
        f"read_data       {data} extra/special/per/atom 50",
        "",
        "pair_style      granular",
        *cm.pair_lines,
        f"neighbor        {pl.skin:.10g} bin",
        "neigh_modify    delay 0 every 1 check yes",
        "bond_style      bpm/rotational overlay/pair yes break no smooth no",
    ]
    for lt, (kb, ka, ks, r0) in sorted(pl.table.items()):
        lines.append(bond_coeff_line(lt, kb, ka, ks, r0, bond_damping))
    g = _gravity(p, model)
    lines += ["", "fix             1 all nve/bpm/sphere"]
    gn = float(np.linalg.norm(g))
    if gn > 0:
        lines.append(f"fix             2 all gravity {num(gn)} vector "
                     + " ".join(f"{num(c / gn)}" for c in g))
    lines += cm.wall_lines
    lines += ["", f"timestep        {num(pl.h)}",
              "compute         erot all erotate/sphere",
              "thermo_style    custom step time ke c_erot pe",
              "thermo_modify   norm no format float %.15g",
              "thermo          100"]
    if run_steps is not None:
        lines.append(f"run             {int(run_steps)}")
    lines.append("")
    return "\n".join(lines)
