"""``rrp convert RUN.h5 --to lammps DIR [--frame K]`` — a frame of a run of bonded spheres
as a LAMMPS data file and an input deck that runs it as close as LAMMPS can (issue #35
item 4; docs/scenarios.md "Assemblies").

``DIR/<stem>.data``: atom style ``bpm/sphere`` (the group as molecule id), velocities with
angular velocities, the bonds with their types (an assembly's own; 1 for the torus and
the pile).  ``DIR/in.<stem>``: ``bond_style bpm/rotational`` with coefficients mapped as
far as they map (bonded spheres keep their Hertz contact, as ours: ``overlay/pair yes``),
``pair_style granular`` Hertz with the stiffness mapped at the mean diameter, our
neighbour-list skin and rebuild rule, walls and gravity as fixes, ``fix nve/bpm/sphere``,
and a comment block listing what differs.  Read back with ``source =`` in an assembly
scenario, the data file gives the same spheres and bonds (tests/test_assembly_lammps.py).

:func:`write_lammps` (arrays) and :func:`write_lammps_model` (a built model at its
initial state) are the same writer for Python callers: the LAMMPS peer of the pile
benchmark, ``benchmarks/peers/lammps_pile.py``, makes its data file and deck with them
(issue #35 item 4).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from engine.models.lammps_data import write_data

NO_DAMPING = (0.0, 0.0, 0.0, 0.0)
"""``γ_n γ_s γ_r γ_t`` of ``bpm/rotational`` by default: undamped, as our binder."""

SKIN_FRACTION = 0.5
"""The neighbour-list skin in the largest diameter (``engine.models.torus``'s)."""


def convert_lammps(args: argparse.Namespace, check=None) -> int:
    """The ``--to lammps`` branch of ``rrp convert`` (``args.frame``: the frame, default
    the last; ``args.bond_damping``, ``args.run_steps`` where a Python caller sets them:
    :func:`write_lammps`; ``check()``: before the files are renamed into place)."""
    from engine.io import RunFileError
    from engine.io.hdf5 import RunFile
    from engine.io.schema import open_h5

    from .errors import UsageError

    run = Path(args.run_file)
    out = Path(args.directory)
    if not out.parent.is_dir():
        raise UsageError(f"cannot convert: the parent of {args.directory} does not exist")
    if out.exists() and not out.is_dir():
        raise UsageError(f"cannot convert: {args.directory} exists and is not a directory "
                         "(--to lammps writes a directory)")
    k = -1 if getattr(args, "frame", None) is None else int(args.frame)
    try:
        with RunFile(run, series=False) as rf:  # (frames only: issue #47 item 4)
            fr = rf.frame(k)
            params = dict(rf.params)
            model_name, h = rf.model_name, rf.h
            bonds = np.asarray(rf.bonds, dtype=np.int64).reshape(-1, 2)
            t_last = float(rf.frame_times[-1]) if len(rf.frame_times) else fr.t
        with open_h5(Path(run), "r") as f:  # (a killed writer's last commit: #47)
            steps = int(f.attrs.get("steps", 0) or 0)
            m = np.asarray(f["bodies/mass"][()], dtype=np.float64)
            J = np.asarray(f["bodies/inertia"][()], dtype=np.float64)
            D = np.asarray(f["bodies/diameter"][()], dtype=np.float64)
    except (RunFileError, OSError, KeyError) as exc:
        raise UsageError(f"cannot convert: {str(exc).splitlines()[0]}") from None
    if fr.v is None:
        raise UsageError(f"cannot convert: {run} holds no velocities in its frames")
    if model_name not in ("assembly", "torus", "tori-pile"):
        raise UsageError(f"cannot convert: --to lammps writes bonded spheres (assembly, "
                         f"torus, tori-pile), not {model_name!r}")
    data, deck = write_lammps(out, run.name.removesuffix(".partial").removesuffix(".h5"),
                              model_name, params, fr.x, fr.v, fr.omega, m, J, D, bonds, h,
                              title=f"RRP Studio: {run.name}, frame {k} (t = {fr.t:.17g})",
                              bond_damping=getattr(args, "bond_damping", NO_DAMPING),
                              run_steps=getattr(args, "run_steps", None)
                              or _run_length(steps, t_last, h), before=check)
    if not args.quiet:
        print(f"wrote {data} ({m.shape[0]} spheres, {bonds.shape[0]} bonds, t = {fr.t:.6g}) "
              f"and {deck.name} (run it with: lmp -in {deck.name})")
    return 0


def _run_length(steps: int, t_last: float, h: float) -> int:
    """The deck's ``run N``: as many steps as the run file's run took (its ``steps``,
    else its last frame's time over ``h``), at least one — ``run 10000`` was written
    whatever the run's length (issue #42 item 11)."""
    if steps <= 0 and h > 0 and np.isfinite(t_last):
        steps = int(round(t_last / h))
    return max(1, int(steps))


def write_lammps(out: Path, stem: str, model_name: str, params: dict[str, Any],
                 x: np.ndarray, v: np.ndarray, omega: np.ndarray, m: np.ndarray,
                 J: np.ndarray, D: np.ndarray, bonds: np.ndarray, h: float, *,
                 title: str = "RRP Studio", bond_damping: tuple[float, ...] = NO_DAMPING,
                 run_steps: int | None = 10_000, before=None) -> tuple[Path, Path]:
    """Write ``out/<stem>.data`` and ``out/in.<stem>`` (the module docstring) for spheres
    at ``x`` with velocities ``v``, ``omega`` of the model ``model_name`` (``assembly``,
    ``torus``, ``tori-pile``) with parameters ``params``; ``(data, deck)``.  The
    ``rrp convert`` defaults are those of our model; ``bond_damping`` (``γ_n γ_s γ_r
    γ_t`` of ``bpm/rotational``) and ``run_steps`` (``None``: no ``run`` line, the caller
    runs) serve a caller such as ``benchmarks/peers/lammps_pile.py`` (issue #35 item 4).
    Both files are written into a temporary directory and renamed into ``out`` (created
    if missing) together, whole or not at all (:class:`~engine.io.atomic.AtomicOutput`:
    a write error is one line, :class:`~engine.io.atomic.OutputError`, issue #46 item 2);
    ``before()``: called just before (it may raise: a signal)."""
    from engine.io.atomic import AtomicOutput

    params = dict(params)
    if model_name == "assembly" and "mu" not in params:
        params["mu"] = 0.0
    bonds = np.asarray(bonds, dtype=np.int64).reshape(-1, 2)
    groups, btype, coeffs = _groups_and_types(model_name, params, m.shape[0], bonds.shape[0])
    data, deck = out / f"{stem}.data", out / f"in.{stem}"
    with AtomicOutput(out, directory=True) as ao:
        write_data(ao.tmp / data.name, x, D, m, v, omega, bonds, bond_type=btype, mol=groups,
                   title=title, bond_coeffs=coeffs)
        (ao.tmp / deck.name).write_text(
            _deck(data.name, params, model_name, x, D, m, J, bonds, btype, h, coeffs,
                  bond_damping=bond_damping, run_steps=run_steps), encoding="ascii")
        ao.commit(before=before)
    return data, deck


def write_lammps_model(model: Any, out: Path, stem: str, h: float, *,
                       bond_damping: tuple[float, ...] = NO_DAMPING,
                       run_steps: int | None = 10_000) -> tuple[Path, Path]:
    """:func:`write_lammps` of a built engine model at its initial state (the pile of
    ``benchmarks/peers/lammps_pile.py``: issue #35 item 4)."""
    ff, st, b = model.forcefield, model.initial_state, model.bodies
    bonds = ff.bonds if ff.bonds.size else np.zeros((0, 2), dtype=np.int64)
    return write_lammps(out, stem, model.name, dict(model.params), st.x, st.v, st.omega,
                        np.asarray(b.m, dtype=np.float64), np.asarray(b.J, dtype=np.float64),
                        np.asarray(b.D, dtype=np.float64), bonds, h,
                        title=f"RRP Studio: {model.name} (initial state)",
                        bond_damping=bond_damping, run_steps=run_steps)


def _groups_and_types(model: str, params: dict[str, Any], n: int, nb: int
                      ) -> tuple[np.ndarray, np.ndarray, dict[int, tuple[float, float, float]]]:
    """Each sphere's group, each bond's type and each type's binder coefficients
    ``(k_bend, k_axial, k_shear)``: an assembly's own (its geometry rebuilt from the
    parameters, its ``[bond_types]``: issue #35 item 1), the ring of each sphere and
    type 1 with the model's constants for the torus and pile."""
    glob = (float(params.get("k_bend", 10.0)), float(params.get("k_axial", 200.0)),
            float(params.get("k_shear", 200.0)))
    if model == "assembly":
        try:
            from engine.models.assembly import geometry_of

            geo = geometry_of(params)
            if geo.part.n == n and geo.part.bonds.shape[0] == nb:
                t = geo.part.bond_type.astype(str)
                names = sorted(set(t.tolist()), key=_type_key)
                ids = {s: i + 1 for i, s in enumerate(names)}
                table = {"1": glob, **geo.bond_types}
                coeffs = {ids[s]: tuple(map(float, table.get(s, glob))) for s in names}
                return (geo.part.group.copy(), np.array([ids[s] for s in t], dtype=np.int64),
                        coeffs)
        except Exception:  # (its files gone: groups 0, type 1)
            pass
        return np.zeros(n, dtype=np.int64), np.ones(nb, dtype=np.int64), {1: glob}
    n_p = int(params.get("n_particles", n) or n)
    return np.arange(n) // max(n_p, 1), np.ones(nb, dtype=np.int64), {1: glob}


def _type_key(s: str) -> tuple:
    return (0, int(s), "") if s.isdigit() else (1, 0, s)


def _walls(params: dict[str, Any], model: str) -> list[tuple[list[float], float]]:
    if model == "torus":
        return [([1.0, 0.0, 0.0], 0.0)] if params.get("wall", True) else []
    if model == "tori-pile":
        if not params.get("walls", True):
            return []
        h = 0.5 * float(params["box"])
        return [([0.0, 0.0, 1.0], 0.0), ([1.0, 0.0, 0.0], -h), ([-1.0, 0.0, 0.0], -h),
                ([0.0, 1.0, 0.0], -h), ([0.0, -1.0, 0.0], -h)]
    try:
        from engine.models.assembly import geometry_of

        return [(n.tolist(), c) for n, c in geometry_of(params).walls]
    except Exception:
        return []


def _gravity(params: dict[str, Any], model: str) -> list[float]:
    if model == "tori-pile":
        return [0.0, 0.0, -float(params.get("g", 0.0))]
    return [float(c) for c in params.get("gravity", [0.0, 0.0, 0.0])]


def _deck(data: str, p: dict[str, Any], model: str, x: np.ndarray, D: np.ndarray,
          m: np.ndarray, J: np.ndarray, bonds: np.ndarray, btype: np.ndarray, h: float,
          coeffs: dict[int, tuple[float, float, float]] | None = None, *,
          bond_damping: tuple[float, ...] = NO_DAMPING, run_steps: int | None = 10_000
          ) -> str:
    """The LAMMPS input deck (the module docstring); ``coeffs``: each bond type's
    ``(k_bend, k_axial, k_shear)`` (default: the parameters' for every type)."""
    d_mean = float(D.mean()) if D.size else 1.0
    kpp = float(p.get("k_contact", 2100.0))
    kpw = float(p.get("k_wall", 2100.0))
    kn = 2.0 * kpp / d_mean ** 3  # Hertz: (K/σ)(δ/σ)^{3/2} = k_n √R_eff δ^{3/2}, R_eff = σ/4
    kw = 8.0 * kpw / d_mean ** 3  # wall: σ = D/2 = R_eff
    mu = float(p.get("mu", 0.0))
    r0 = (np.linalg.norm(x[bonds[:, 0]] - x[bonds[:, 1]], axis=1)
          if bonds.size else np.zeros(0))
    solid = np.allclose(J, 0.1 * m * D * D, rtol=1e-12, atol=0.0)
    lines = [
        f"# LAMMPS input deck written by 'rrp convert --to lammps' for {data}",
        "# (RRP Studio model: the B&G section 4 binder law; docs/scenarios.md, Assemblies).",
        "#",
        "# What differs from RRP Studio's model:",
        "# * binder: ours is U = 1/2 Km |theta|^2 + 1/2 Ka (r/r0 - 1)^2",
        "#   + 1/4 Ks [(1 - c_i)^2 + (1 - c_j)^2] (theta the relative rotation, c the",
        "#   cosine between the rotated reference direction and the bond); bpm/rotational",
        "#   is linear in each mode. Mapped: Kr = Ka/r0^2, Kb = Kt = Km (bending and",
        "#   torsion share Km in ours), Ks = Ks/r0^2 (our shear is quartic at small angles:",
        "#   no exact map); r0 per type is the mean bond length at this frame, LAMMPS's",
        "#   own r0 per bond its length when the bond is first computed. Bonds never break.",
        "# * contact: ours is U = 2/5 Kpp [1 - r/sigma]^(5/2), sigma = (D_i + D_j)/2;",
        "#   granular hertz is k_n sqrt(R_eff) delta^(3/2): k_n = 2 Kpp/D^3 at the mean",
        f"#   diameter D = {d_mean:.6g} (exact for equal spheres). Bonded spheres keep their",
        "#   Hertz contact in ours and here (overlay/pair yes, special_bonds 1 1 1).",
        "# * walls: Hertz with k_n = 8 Kpw/D^3 (sigma = D/2), as planes of wall/gran/region.",
        f"# * friction: mu = {mu:g}"
        + (" with our tangential spring k_t; LAMMPS's linear_history spring is used."
           if mu > 0 else " (frictionless: no tangential force)."),
        "# * inertia: LAMMPS's sphere has J = m D^2/10"
        + ("; ours too." if solid else "; ours differs (the data file cannot carry it)."),
        f"# * contacts were {p.get('contact', 'penalty')} in RRP Studio, integrated by its "
        "scheme;",
        "#   fix nve/bpm/sphere is velocity Verlet.",
        "# * neighbour list: our skin (half the largest diameter), rebuilt when a sphere"
        " has",
        "#   moved half of it (LAMMPS also sorts its atoms in space; we keep our order).",
        "# * bond damping (gamma_n gamma_s gamma_r gamma_t): "
        + " ".join(f"{g:g}" for g in bond_damping)
        + (" (undamped, as ours)." if not any(bond_damping) else
           " (ours is undamped: this run dissipates)."),
        "",
        "units           si",
        "dimension       3",
        "boundary        s s s",
        "atom_style      bpm/sphere",
        "special_bonds   lj/coul 1 1 1",
        "newton          on off",
        "comm_modify     vel yes",
        f"read_data       {data} extra/special/per/atom 50",
        "",
        "pair_style      granular",
        (f"pair_coeff      * * hertz {kn:.10g} 0.0 tangential "
         + (f"linear_history {kn:.10g} 0.0 {mu:g}" if mu > 0 else "linear_nohistory 0.0 0.0")
         + " damping viscoelastic"),
        f"neighbor        {SKIN_FRACTION * (float(D.max()) if D.size else 1.0):.10g} bin",
        "neigh_modify    delay 0 every 1 check yes",
        "bond_style      bpm/rotational overlay/pair yes break no smooth no",
    ]
    glob = (float(p.get("k_bend", 10.0)), float(p.get("k_axial", 200.0)),
            float(p.get("k_shear", 200.0)))
    for t in np.unique(btype).tolist() if btype.size else [1]:
        kb, ka, ks = (coeffs or {}).get(int(t), glob)  # (each type its own: issue #35)
        rt = float(r0[btype == t].mean()) if r0.size else 1.0
        lines.append(f"bond_coeff      {t} {ka / rt ** 2:.10g} {ks / rt ** 2:.10g} {kb:.10g} "
                     f"{kb:.10g} 1e30 1e30 1e30 1e30 "
                     + " ".join(f"{g:g}" for g in bond_damping))
    g = _gravity(p, model)
    lines += ["", "fix             1 all nve/bpm/sphere"]
    gn = float(np.linalg.norm(g))
    if gn > 0:
        lines.append(f"fix             2 all gravity {gn:.10g} vector "
                     + " ".join(f"{c / gn:.10g}" for c in g))
    for w, (n, c) in enumerate(_walls(p, model)):
        pt = [c * a for a in n]
        lines += [f"region          w{w} plane " + " ".join(f"{a:.10g}" for a in pt + n)
                  + " side in",
                  f"fix             w{w} all wall/gran/region granular hertz {kw:.10g} 0.0 "
                  "tangential linear_nohistory 0.0 0.0 region w" + str(w)]
    lines += ["", f"timestep        {h:.10g}", "thermo          100",
              "thermo_style    custom step time ke pe"]
    if run_steps is not None:
        lines.append(f"run             {int(run_steps)}")
    lines.append("")
    return "\n".join(lines)
