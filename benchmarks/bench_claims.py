"""The README's time claims, measured as a new user meets them: wall *and* CPU time,
cold (an empty kernel cache) and warm, on a quiet machine or with other jobs running
(issue #33 §9).

Each command runs in a fresh process with its own ``NUMBA_CACHE_DIR`` (a new temporary
directory for the cold run, the same one again for the warm run).  CPU time is
counted apart: the command's (user + system of it and every process it waited for,
from ``getrusage(RUSAGE_CHILDREN)``) and the background compile's (the priming processes
a cold start leaves running, waited for before the next run starts, each one's own
rusage: ``benchmarks/_background.py``, issue #45); peak memory is the largest resident
set of any of them.  The app's times come from
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
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # (benchmarks/, also when imported)
import _background  # noqa: E402

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


def measure(argv: list[str], cache: str, tmp: str, hogs: set[int] = frozenset()) -> dict:
    """Wall, CPU and peak RSS of one run of ``python argv`` with the kernel cache
    ``cache``; returns once the compile the command left running in the background is
    done (``_background.measure``; ``hogs``: the busy processes, not waited for).
    ``cpu_s``: user + system of the command and what it waited for; ``background_cpu_s``:
    of the processes it left compiling (issue #45)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(ROOT))
    res = _background.measure([sys.executable, *(a.format(tmp=tmp) for a in argv)],
                              env=env, cwd=ROOT, exclude=hogs)
    if res["returncode"] != 0:
        sys.exit(f"{' '.join(argv)} failed ({res['returncode']}):\n{res['stderr'][-3000:]}")
    out = {k: res[k] for k in ("wall_s", "cpu_s", "background_cpu_s",
                               "background_processes", "background_wall_s", "peak_rss_mb",
                               "load")}
    if argv[0].endswith("bench_compile.py"):
        out["inner"] = json.loads(res["stdout"][res["stdout"].index("{"):])
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
    pids = {h.pid for h in hogs}
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
                    cold = measure(argv, cache, tmp, pids)
                    if group == "gui":  # (bench_compile measures cold, then warm, itself)
                        record["results"][label] = cold
                        print(f"{label}: {cold['wall_s']} s wall / {cold['cpu_s']} s CPU "
                              f"in all: {json.dumps(cold['inner'])}", flush=True)
                        continue
                    warm = measure(argv, cache, tmp, pids)
                record["results"][label] = {"cold": cold, "warm": warm}
                print(f"{label}: cold {cold['wall_s']} s wall / {cold['cpu_s']} s CPU "
                      f"+ {cold['background_cpu_s']} s background compile, warm "
                      f"{warm['wall_s']} s / {warm['cpu_s']} s "
                      f"+ {warm['background_cpu_s']} s", flush=True)
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
