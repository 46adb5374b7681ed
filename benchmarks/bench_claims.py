"""The README's time claims, measured as a new user meets them: wall *and* CPU time,
cold (an empty kernel cache) and warm, on a quiet machine or with other jobs running
(issue #33 §9).

Each command runs in a fresh process with its own ``NUMBA_CACHE_DIR`` (a new temporary
directory for the cold run, the same one again for the warm run).  CPU time is the
user + system time of the command and every process it started (the priming process
that compiles beside it included), from ``getrusage(RUSAGE_CHILDREN)``; peak memory is
the largest resident set of any of them.  The app's times come from
``bench_compile.py --only gui`` (process start to the first moving frame, cold then warm,
and the first switch), with that benchmark's total CPU time.  ``--busy N`` starts N busy
processes (a pure Python loop each) for the duration, so a loaded measurement can be
repeated; the load average at the start and the end is recorded either way.

    python benchmarks/bench_claims.py [--busy 2] [--only run figures gui] [--out FILE.json]

Writes a JSON record (command, commit, date, machine, load, each measurement) to
``benchmarks/results/claims-<date>-<quiet|other-jobs|busyN>.json`` (quiet: the
1-minute load average under 1 at the start and at the end) unless ``--out`` says otherwise.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

COMMANDS = {
    "run": [("rrp run pendulum --t-end 1", ["-m", "app", "run", "pendulum", "--t-end", "1",
                                             "-q"]),
            ("rrp run torus --t-end 0.1", ["-m", "app", "run", "torus", "--t-end", "0.1",
                                           "-q"])],
    "figures": [("rrp figures --quick", ["-m", "app", "figures", "--quick", "--out",
                                         "{tmp}/figs"])],
    "gui": [("rrp gui (cold start to the first moving frame; first switch)",
             [str(ROOT / "benchmarks" / "bench_compile.py"), "--only", "gui", "--json"])],
}


def _busy() -> None:  # pragma: no cover - runs in a child process
    x = 0
    while True:
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF


def measure(argv: list[str], cache: str, tmp: str) -> dict:
    """Wall, CPU (user + system of the command and its children) and peak RSS of one run
    of ``python argv`` with the kernel cache ``cache``."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(ROOT))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, *(a.format(tmp=tmp) for a in argv)], cwd=ROOT,
                         env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({res.returncode}):\n{res.stderr[-3000:]}")
    out = {"wall_s": round(wall, 2),
           "cpu_s": round((after.ru_utime - before.ru_utime)
                          + (after.ru_stime - before.ru_stime), 2),
           "peak_rss_mb": round(after.ru_maxrss / 1024, 1)}
    if argv[0].endswith("bench_compile.py"):
        out["inner"] = json.loads(res.stdout[res.stdout.index("{"):])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--busy", type=int, default=0, metavar="N",
                    help="start N busy processes for the duration (other jobs)")
    ap.add_argument("--only", nargs="+", default=list(COMMANDS), choices=list(COMMANDS))
    ap.add_argument("--out", default="", help="the JSON file (default: benchmarks/results/)")
    args = ap.parse_args()
    hogs = [mp.Process(target=_busy, daemon=True) for _ in range(args.busy)]
    for h in hogs:
        h.start()
    try:
        record: dict = {
            "command": "python benchmarks/bench_claims.py " + " ".join(sys.argv[1:]),
            "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                     capture_output=True, text=True).stdout.strip(),
            "date": time.strftime("%Y-%m-%d %H:%M %Z"),
            "machine": f"{platform.node()}: {os.cpu_count()} cores, {platform.machine()}, "
                       f"Python {platform.python_version()}",
            "busy_processes": args.busy,
            "loadavg_at_start": [round(v, 2) for v in os.getloadavg()],
            "results": {},
        }
        for group in args.only:
            for label, argv in COMMANDS[group]:
                with tempfile.TemporaryDirectory(prefix="rrp-claims-") as tmp:
                    cache = os.path.join(tmp, "numba")
                    cold = measure(argv, cache, tmp)
                    if group == "gui":  # (bench_compile measures cold, then warm, itself)
                        record["results"][label] = cold
                        print(f"{label}: {cold['wall_s']} s wall / {cold['cpu_s']} s CPU "
                              f"in all: {json.dumps(cold['inner'])}", flush=True)
                        continue
                    warm = measure(argv, cache, tmp)
                record["results"][label] = {"cold": cold, "warm": warm}
                print(f"{label}: cold {cold['wall_s']} s wall / {cold['cpu_s']} s CPU, "
                      f"warm {warm['wall_s']} s / {warm['cpu_s']} s", flush=True)
        record["loadavg_at_end"] = [round(v, 2) for v in os.getloadavg()]
    finally:
        for h in hogs:
            h.terminate()
    loads = (record["loadavg_at_start"][0], record["loadavg_at_end"][0])
    tag = (f"busy{args.busy}" if args.busy
           else "quiet" if max(loads) < 1.0 else "other-jobs")
    out = Path(args.out or ROOT / "benchmarks" / "results"
               / f"claims-{time.strftime('%Y-%m-%d')}-{tag}.json")
    out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(f"written: {out}")


if __name__ == "__main__":
    main()
