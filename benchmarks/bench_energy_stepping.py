"""Energy-stepping (issue #28; docs/physics.md §3.10) against a fixed-step scheme at equal
max energy error: cost per simulated second.

For one scenario (its default parameters, the start's energy scale ``|E₀|``):

* energy-stepping at each ``REL = ε/|E₀|``: the max ``|E − E₀|/|E₀|`` over ``t ≤ T``
  (records every ``--dt``, through ``EnergyStepper``), the events per unit time, and the
  wall time per simulated second of a run without records (best of ``--repeat`` fresh
  runs, each lengthened until it takes ≥ 0.1 s);
* the baseline (``rrp-newmark`` by default) at each ``h``: the same, with steps;
* the baseline's cost interpolated (linear in log–log between the two bracketing ``h``)
  at each energy-stepping max error, and the ratio.

The code is ``engine.studies.energy_stepping.cost_study`` (the same numbers as
``rrp figures``' ``fig_es_cost.png``, there with one timing run).  The pendulum runs
today; the torus (``--scenario torus``) once the many-body core drives it (until then
the script says so in one line).

    python benchmarks/bench_energy_stepping.py [--scenario pendulum] [--rels 1e-2 …]
        [--hs 0.32 …] [--t-end 100] [--repeat 3] [--out FILE] [--json]

Writes the text to ``benchmarks/results/energy_stepping_<scenario>.txt`` by default.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.energy_stepping import EnergySteppingError  # noqa: E402
from engine.studies.energy_stepping import CostStudy, cost_study  # noqa: E402

RELS = (1e-2, 1e-3, 1e-4, 1e-5, 1e-6)


def machine() -> str:
    """CPU model and count (:func:`_results.cpu_model`)."""
    from _results import cpu_model  # (benchmarks/ is this script's directory)

    return cpu_model()


def commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def load() -> str:
    return ", ".join(f"{v:.2f}" for v in os.getloadavg())


def format_text(c: CostStudy, meta: dict) -> str:
    lines = [f"Energy-stepping against {c.baseline} at equal max energy error: "
             f"{c.scenario}, t <= {c.t_end:g}, best of {c.repeat}",
             f"{meta['machine']}; {meta['date']}; commit {meta['commit']}; load "
             f"{meta['load_start']} at the start, {meta['load_end']} at the end; "
             f"{meta['seconds']:.0f} s", "",
             f"{'REL':>8} {'eps':>10} {'max|dE|/E0':>11} {'events/t':>10} {'us/event':>9} "
             f"{'ms per sim s':>13}"]
    for r in c.es_rows:
        lines.append(f"{r['rel']:>8g} {r['eps']:>10.3g} {r['max_error']:>11.3e} "
                     f"{r['events_per_time']:>10.4g} {r['us_per_event']:>9.3f} "
                     f"{r['seconds_per_time'] * 1e3:>13.4g}")
    lines += ["", f"{'h':>8} {'max|dE|/E0':>11} {'us/step':>9} {'ms per sim s':>13}"]
    for r in c.base_rows:
        lines.append(f"{r['h']:>8g} {r['max_error']:>11.3e} {r['us_per_step']:>9.3f} "
                     f"{r['seconds_per_time'] * 1e3:>13.4g}")
    lines += ["", f"at equal max energy error ({c.baseline} interpolated in log-log):",
              f"{'REL':>8} {'max|dE|/E0':>11} {'ES ms/s':>10} {'base ms/s':>10} {'ratio':>8}"]
    for r in c.equal_error():
        lines.append(f"{r['rel']:>8g} {r['max_error']:>11.3e} "
                     f"{r['es_seconds_per_time'] * 1e3:>10.4g} "
                     f"{r['base_seconds_per_time'] * 1e3:>10.4g} {r['ratio']:>7.3g}x"
                     + (" (extrapolated)" if r["extrapolated"] else ""))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenario", default="pendulum")
    ap.add_argument("--rels", type=float, nargs="+", default=list(RELS))
    ap.add_argument("--hs", type=float, nargs="+", default=None,
                    help="baseline steps (default: the scenario's h × 32 … 0.125)")
    ap.add_argument("--baseline", default="rrp-newmark")
    ap.add_argument("--t-end", type=float, default=100.0)
    ap.add_argument("--dt", type=float, default=0.01, help="record interval of the "
                    "accuracy runs")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=None)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    hs = a.hs or []  # (the scenario's h × 32 … 0.125)
    meta = {"date": _dt.datetime.now().strftime("%Y-%m-%d %H:%M"), "machine": machine(),
            "commit": commit(), "load_start": load(),
            "command": " ".join(["python", *sys.argv])}
    t0 = time.perf_counter()
    try:
        c = cost_study(a.scenario, a.rels, a.baseline, hs, a.t_end, a.dt, a.repeat,
                       log=lambda m: print(m, file=sys.stderr, flush=True))
    except EnergySteppingError as exc:
        print(f"bench_energy_stepping: {exc}", file=sys.stderr)
        return 2
    meta.update(seconds=time.perf_counter() - t0, load_end=load())
    if a.json:
        print(json.dumps({"meta": meta, "es": c.es_rows, "baseline": c.base_rows,
                          "equal_error": c.equal_error()}, indent=1))
        return 0
    text = format_text(c, meta)
    print(text)
    out = Path(a.out) if a.out else (ROOT / "benchmarks" / "results"
                                     / f"energy_stepping_{a.scenario}.txt")
    out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
