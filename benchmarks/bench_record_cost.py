"""What recording a run to a file costs (issue #36, item 15; BENCHMARKS.md, "What a
record costs").

The same run with and without ``--out``, in one process, alternating (``--repeat``
pairs), as ``rrp run`` drives it: the scenario's model, scheme, ``h`` and recording,
:func:`app.run_loop.drive` with a :class:`engine.io.RunWriter` (``keep_frames=False``,
``background=True``, as ``rrp run --out`` creates it) or without one, after
``warm_up`` (kernels compiled or loaded from the cache).  The writer's creation (the
file's layout, frame 0 and the first checkpoint) is timed inside the run with ``--out``,
as the command pays it.  Reported per case: the wall time of each (median of the
repeats), their ratio, the cost of a record (the difference over the records written),
the "engine only" figure of the summary (µs a step in the compiled loop, wall clock)
and the stepping thread's own CPU a step (``us_per_step_cpu``) with and without the
file, and the writer's own account (its thread's time in records and
checkpoints, the stepping's time blocked in ``flush``, the datasets' write calls).

Cases (``--cases``): ``torus`` (the scenario's defaults, ``--t-end`` 10: 1 001
records), ``torus-every1`` and ``torus-every1000`` (10 001 and 11 records: the cost of a
record, against the cost of a flush), ``pile`` (10⁴ spheres of ``tori-pile``, box 8,
the scenario's ``every``: 51 records to ``t = 1``), ``pile-friction`` (the same with
``mu = 0.5``: its friction springs are written to ``/springs``; ``--pile-t-end 1.5``, once
the spheres have landed).  ``--commands``: the cases also
timed as the whole command in a fresh process (``rrp run torus --t-end 10 [--out]``:
start-up, compile cache, file creation and close included), as the issue timed them.
Each result is written as JSON to ``benchmarks/results/record_cost.json`` (with the
command, the commit, the date, the machine and the load average) unless ``--no-save``.

    python benchmarks/bench_record_cost.py [--cases torus pile ...] [--commands torus]
        [--repeat 5] [--t-end 10] [--pile-t-end 1] [--threads N] [--json] [--no-save]
        [--save-as record_cost.json]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.run_loop import drive  # noqa: E402
from engine.io import RunWriter  # noqa: E402
from engine.scenarios import load_scenario  # noqa: E402
from engine.simulation import Simulation  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
from _results import commit as _commit  # noqa: E402

CASES = {
    "torus": ("torus", {}, None, None),
    "torus-every1": ("torus", {}, 1, None),
    "torus-every1000": ("torus", {}, 1000, None),
    "pile": ("tori-pile", {"n_tori": 500, "box": 8.0}, None, "pile"),
    "pile-friction": ("tori-pile", {"n_tori": 500, "box": 8.0, "mu": 0.5}, None, "pile"),
}
"""name → (scenario, parameter overrides, ``--every`` (None: the scenario's), t-end
key (None: ``--t-end``; ``"pile"``: ``--pile-t-end``))."""


class _NoSignals:
    received: list = []
    name = ""
    exit_code = 0


def _args() -> argparse.Namespace:
    return argparse.Namespace(quiet=True)


def run_once(scenario: str, overrides: dict, every: int | None, t_end: float,
             out: Path | None) -> dict:
    """One run as ``rrp run`` drives it; ``out``: the file (``None``: no ``--out``)."""
    sc = load_scenario(scenario, overrides)
    model = sc.build_model()
    ev = every or sc.run.every
    frames = out is not None
    sim = Simulation(model, sc.run.integrator, sc.run.h, record_every=ev,
                     record_frames=frames, record_state=frames)
    sim.warm_up()
    n_total = max(1, round(t_end / sc.run.h))
    t0 = time.perf_counter()
    writer = (RunWriter(out, sim, scenario=scenario, keep_frames=False, background=True)
              if out is not None else None)
    o = drive(_args(), sim, writer, n_total, t_end, None, _NoSignals(), lambda f: f.message)
    wall = time.perf_counter() - t0
    if o.status != "complete":
        raise RuntimeError(f"{scenario}: {o.status}: {o.message}")
    r = {"wall_s": wall, "records": int(sim.series.n), "steps": int(sim.step_index),
         "engine_us_per_step": 1e6 * sim.kernel_seconds / max(1, sim.kernel_steps),
         "engine_cpu_us_per_step": 1e6 * sim.kernel_cpu_seconds / max(1, sim.kernel_steps)}
    if writer is not None:
        r.update({"writer_records_s": writer.seconds["records"],
                  "writer_records_cpu_s": writer.seconds.get("records_cpu"),
                  "writer_checkpoint_s": writer.seconds["checkpoint"],
                  "blocked_s": writer.seconds["blocked"],
                  "checkpoints": writer.checkpoints_written,
                  "flushes": getattr(writer, "flushes", None),
                  "dataset_writes": getattr(writer, "dataset_writes", None),
                  "file_kB": out.stat().st_size / 1e3})
        out.unlink()
    return r


def command_once(scenario: str, overrides: dict, every: int | None, t_end: float,
                 out: Path | None) -> dict:
    """The whole command ``rrp run SCENARIO --t-end T [--every N] [--set …] -q --json
    [--out FILE]`` in a fresh process: its wall time (start-up included) and the
    summary's "engine only" figure."""
    cmd = [sys.executable, "-m", "app", "run", scenario, "--t-end", f"{t_end:g}", "-q",
           "--json"]
    if every:
        cmd += ["--every", str(every)]
    for k, v in overrides.items():
        cmd += ["--set", f"{k}={v}"]
    if out is not None:
        cmd += ["--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.perf_counter()
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    wall = time.perf_counter() - t0
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {res.returncode}: {res.stderr[-500:]}")
    s = json.loads(res.stdout)
    if out is not None:
        out.unlink()
    return {"wall_s": wall, "records": int(s["records"]), "steps": int(s["steps"]),
            "engine_us_per_step": float(s["us_per_step"]),
            "engine_cpu_us_per_step": float(s["us_per_step_cpu"])}


def measure(case: str, repeat: int, t_end: float, directory: Path,
            command: bool = False) -> dict:
    """``repeat`` pairs of runs of ``case`` without and with ``--out``, alternating (so
    that the load of the machine hits both); ``command``: the whole command in a fresh
    process each time, else the run loop in this one."""
    scenario, overrides, every, key = CASES[case]
    runs: dict[str, list[dict]] = {"plain": [], "out": []}
    once = command_once if command else run_once
    once(scenario, overrides, every, min(t_end, 0.05), directory / "warm.h5")
    for _ in range(repeat):
        runs["plain"].append(once(scenario, overrides, every, t_end, None))
        runs["out"].append(once(scenario, overrides, every, t_end,
                                directory / f"{case}.h5"))

    def med(side, k):
        vals = [r[k] for r in runs[side] if r.get(k) is not None]
        return statistics.median(vals) if vals else None

    plain, out = med("plain", "wall_s"), med("out", "wall_s")
    ratios = [o["wall_s"] / p["wall_s"] for p, o in zip(runs["plain"], runs["out"],
                                                        strict=True)]
    records = runs["out"][0]["records"]
    writer = med("out", "writer_records_s")
    return {"case": case, "mode": "command" if command else "run loop",
            "scenario": scenario, "overrides": overrides,
            "every": every, "t_end": t_end, "repeat": repeat,
            "steps": runs["out"][0]["steps"], "records": records,
            "wall_plain_s": plain, "wall_out_s": out, "ratio": out / plain,
            "ratio_per_pair": ratios, "ratio_median_of_pairs": statistics.median(ratios),
            "us_per_record": 1e6 * (out - plain) / records,
            "engine_us_per_step_plain": med("plain", "engine_us_per_step"),
            "engine_us_per_step_out": med("out", "engine_us_per_step"),
            "engine_cpu_us_per_step_plain": med("plain", "engine_cpu_us_per_step"),
            "engine_cpu_us_per_step_out": med("out", "engine_cpu_us_per_step"),
            "writer_records_s": med("out", "writer_records_s"),
            "writer_us_per_record": None if writer is None else 1e6 * writer / records,
            "writer_cpu_us_per_record": (None if med("out", "writer_records_cpu_s") is None
                                         else 1e6 * med("out", "writer_records_cpu_s")
                                         / records),
            "writer_checkpoint_s": med("out", "writer_checkpoint_s"),
            "blocked_s": med("out", "blocked_s"),
            "checkpoints": med("out", "checkpoints"),
            "flushes": med("out", "flushes"),
            "dataset_writes": med("out", "dataset_writes"),
            "file_kB": med("out", "file_kB"),
            "runs": runs}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", nargs="+", choices=sorted(CASES),
                    default=["torus", "torus-every1", "torus-every1000", "pile"])
    ap.add_argument("--repeat", type=int, default=5, help="pairs (plain, --out) per case")
    ap.add_argument("--t-end", type=float, default=10.0, help="the torus cases' t_end")
    ap.add_argument("--pile-t-end", type=float, default=1.0,
                    help="the pile's t_end (its h is 1e-3)")
    ap.add_argument("--threads", type=int, default=None,
                    help="threads of the force kernels (default: Numba's)")
    ap.add_argument("--commands", nargs="*", choices=sorted(CASES), default=["torus"],
                    help="cases also timed as whole commands (rrp run … in a fresh "
                         "process, start-up included), as a user runs them")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--no-save", action="store_true",
                    help="do not write benchmarks/results/record_cost.json")
    ap.add_argument("--save-as", default="record_cost.json",
                    help="the file in benchmarks/results/ the result is written to")
    args = ap.parse_args()
    if args.threads is not None:
        from engine.parallel import set_threads

        set_threads(args.threads)
    directory = Path(tempfile.mkdtemp(prefix="rrp-rec-"))
    meta = {"command": "python " + " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
            "commit": _commit(),
            "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": f"{platform.node()}, {os.cpu_count()} cores, "
                       f"{platform.processor() or platform.machine()}",
            "load_before": os.getloadavg()}
    rows = []
    try:
        todo = [(c, False) for c in args.cases] + [(c, True) for c in args.commands]
        for case, command in todo:
            t_end = args.pile_t_end if CASES[case][3] == "pile" else args.t_end
            r = measure(case, args.repeat, t_end, directory, command)
            r["load"] = os.getloadavg()
            rows.append(r)
            if not args.json and command:
                print(f"{'rrp run ' + case:>24}: {r['records']} records: plain "
                      f"{r['wall_plain_s']:.3f} s, --out {r['wall_out_s']:.3f} s = "
                      f"{r['ratio']:.2f}× (pairs {min(r['ratio_per_pair']):.2f}–"
                      f"{max(r['ratio_per_pair']):.2f}); {r['us_per_record']:.1f} µs a "
                      f"record; engine {r['engine_us_per_step_plain']:.3g} → "
                      f"{r['engine_us_per_step_out']:.3g} µs/step (CPU "
                      f"{r['engine_cpu_us_per_step_plain']:.3g} → "
                      f"{r['engine_cpu_us_per_step_out']:.3g}); load "
                      f"{r['load'][0]:.2f}", flush=True)
            elif not args.json:
                print(f"{case:>24}: {r['records']} records, {r['steps']} steps: plain "
                      f"{r['wall_plain_s']:.3f} s, --out {r['wall_out_s']:.3f} s = "
                      f"{r['ratio']:.2f}× (pairs {min(r['ratio_per_pair']):.2f}–"
                      f"{max(r['ratio_per_pair']):.2f}); {r['us_per_record']:.1f} µs a "
                      f"record (writer thread {r['writer_us_per_record']:.1f}, its CPU "
                      f"{r['writer_cpu_us_per_record']:.1f}); engine "
                      f"{r['engine_us_per_step_plain']:.3g} → "
                      f"{r['engine_us_per_step_out']:.3g} µs/step (CPU "
                      f"{r['engine_cpu_us_per_step_plain']:.3g} → "
                      f"{r['engine_cpu_us_per_step_out']:.3g}); checkpoints "
                      f"{r['checkpoints']} ({r['writer_checkpoint_s']:.3f} s), blocked "
                      f"{r['blocked_s']:.3f} s, dataset writes {r['dataset_writes']}; "
                      f"load {r['load'][0]:.2f}", flush=True)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    meta["load_after"] = os.getloadavg()
    result = {**meta, "cases": rows}
    if not args.no_save:
        dest = ROOT / "benchmarks" / "results" / args.save_as
        dest.write_text(json.dumps(result, indent=1, default=float) + "\n")
    if args.json:
        print(json.dumps(result, indent=1, default=float))


if __name__ == "__main__":
    main()
