"""A 16-run tori-pile sweep on Dask against the same sweep run serially (issue #9,
"sweeps past one machine"; BENCHMARKS.md, "a 16-run pile sweep on Dask").

The grid: ``tori-pile`` with ``--n-tori`` rings (20 spheres each), ``rrp-newmark``,
4 values of ``h`` (dividing the sampling interval ``--dt-sample``) × 4 seeds (the
rings' orientations and offsets), to ``--t-end``, no reference runs
(``ref_integrator=None``: each row has the energy error and the momentum drifts).
It runs through :func:`engine.studies.sweep.run_sweep`, as ``rrp sweep`` does:
serially in this process (its parallel force kernels on all the cores, or on
``--serial-threads``) and on a Dask
``LocalCluster`` (``--workers`` single-threaded processes; the wall clock includes the
cluster's start-up, reported apart from the runs by a trivial first sweep) or on a running
scheduler (``--scheduler tcp://host:8786``).  The rows of both must agree bit for bit
(the kernels are deterministic at any thread count; ``rows identical`` says whether they
did); timings are wall clock.

    python benchmarks/bench_sweep_pile.py [--n-tori 500] [--box 8] [--t-end 3]
        [--hs 1e-3 1.25e-3 2e-3 2.5e-3] [--dt-sample 0.01] [--seeds 0 1 2 3] [--workers 2]
        [--scheduler ADDRESS] [--serial-threads N] [--modes serial dask] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.studies import StudyError  # noqa: E402
from engine.studies.sweep import plan, run_sweep  # noqa: E402

RESULT_KEYS = ("status", "steps", "max_energy_error", "final_energy_error", "drift_P_x",
               "drift_L_z")
"""The columns compared between the serial and the Dask rows."""


def specs(n_tori: int, box: float, t_end: float, hs: list[float], seeds: list[int],
          dt_sample: float) -> list:
    """The ``len(hs) × len(seeds)`` run specs of the grid (16 by default)."""
    sets = [{"n_tori": n_tori, "box": box, "seed": s} for s in seeds]
    return plan(["tori-pile"], ["rrp-newmark"], hs, parameter_sets=sets, t_end=t_end,
                dt_sample=dt_sample, ref_integrator=None)


def timed_sweep(grid, mode: str, workers: int, scheduler: str | None,
                serial_threads: int | None = None) -> tuple[float, list]:
    """Wall seconds and rows of one sweep (``mode``: ``serial`` or ``dask``)."""
    t0 = time.perf_counter()
    if mode == "serial":
        rows = run_sweep(grid, None, scheduler="serial", threads=serial_threads)
    else:
        rows = run_sweep(grid, None, scheduler=scheduler, workers=workers)
    return time.perf_counter() - t0, rows


def _same(a: dict, b: dict) -> bool:
    for k in RESULT_KEYS:
        x, y = a.get(k), b.get(k)
        if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
            continue
        if x != y:
            return False
    return True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n-tori", type=int, default=500, help="rings per pile (20 spheres each)")
    ap.add_argument("--box", type=float, default=8.0)
    ap.add_argument("--t-end", type=float, default=3.0)
    ap.add_argument("--hs", type=float, nargs="+", default=[1e-3, 1.25e-3, 2e-3, 2.5e-3])
    ap.add_argument("--dt-sample", type=float, default=0.01)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                    help="LocalCluster worker processes (default: one per core)")
    ap.add_argument("--scheduler", default=None,
                    help="address of a running Dask scheduler instead of a LocalCluster")
    ap.add_argument("--serial-threads", type=int, default=None,
                    help="threads of the serial sweep's force kernels (default: all cores, "
                         "as rrp sweep --serial)")
    ap.add_argument("--modes", nargs="+", choices=("serial", "dask"),
                    default=["serial", "dask"])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    try:
        grid = specs(args.n_tori, args.box, args.t_end, args.hs, args.seeds, args.dt_sample)
        tiny = specs(2, args.box, 2 * args.dt_sample, args.hs[:1], args.seeds[:1],
                     args.dt_sample)
    except StudyError as exc:
        ap.error(str(exc))
    out: dict = {"runs": len(grid), "spheres": 20 * args.n_tori, "t_end": args.t_end,
                 "hs": args.hs, "seeds": args.seeds, "workers": args.workers,
                 "scheduler": args.scheduler or "LocalCluster", "cpu_count": os.cpu_count(),
                 "serial_threads": args.serial_threads or "all cores"}
    # warm the Numba cache in this process (a first compile would count against serial)
    run_sweep(tiny, None, scheduler="serial")
    rows = {}
    for mode in args.modes:
        if mode == "dask":  # start-up alone: a one-run sweep of a 2-ring pile
            out["dask_startup_s"], _ = timed_sweep(tiny, mode, args.workers, args.scheduler)
        load0 = os.getloadavg()[0]
        seconds, rows[mode] = timed_sweep(grid, mode, args.workers, args.scheduler,
                                          args.serial_threads)
        out[f"{mode}_s"] = seconds
        out[f"{mode}_load"] = [load0, os.getloadavg()[0]]
        out[f"{mode}_kernel_s"] = sum(r["kernel_seconds"] for r in rows[mode])
        out[f"{mode}_failed"] = sum(r["status"] != "complete" for r in rows[mode])
        if not args.json:
            print(f"{mode:>6}: {len(rows[mode])} runs in {seconds:.1f} s wall "
                  f"(kernels {out[f'{mode}_kernel_s']:.1f} s, "
                  f"{out[f'{mode}_failed']} failed; load {load0:.2f} → "
                  f"{os.getloadavg()[0]:.2f})", flush=True)
    if len(rows) == 2:
        out["rows_identical"] = all(_same(a, b) for a, b in zip(rows["serial"], rows["dask"],
                                                                 strict=True))
        out["speedup"] = out["serial_s"] / out["dask_s"]
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        if "dask_startup_s" in out:
            print(f"Dask start-up + a 1-run sweep: {out['dask_startup_s']:.1f} s")
        if "speedup" in out:
            print(f"serial / dask = {out['speedup']:.2f}; rows identical: "
                  f"{out['rows_identical']}")


if __name__ == "__main__":
    main()
