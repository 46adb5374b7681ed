"""Start-up time of ``rrp run``: wall-clock seconds from process start to the end of a
one-step run (so: imports, scenario, JIT cache load, first step, summary), cold (empty
Numba cache, first time only) and warm (cache on disk).

    python benchmarks/bench_startup.py [--cold]

``--cold`` deletes the Numba cache of this source tree first (it is rebuilt).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def one_run(scenario: str) -> tuple[float, dict]:
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "app", "run", scenario, "--t-end", "0.001",
                          "--h", "0.001", "--json", "--quiet"], cwd=ROOT, capture_output=True,
                         text=True, check=True)
    return time.perf_counter() - t0, json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cold", action="store_true", help="clear the Numba cache first")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    if args.cold:
        for p in ROOT.rglob("*.nb[ic]"):
            p.unlink()
    for scenario in ("torus", "pendulum"):
        first, summary = one_run(scenario)
        warm = sorted(one_run(scenario)[0] for _ in range(args.repeat))
        print(f"{scenario:9s} first run {first:6.2f} s (kernel preparation "
              f"{summary['startup_seconds']:.2f} s); warm: median {warm[len(warm) // 2]:.2f} s, "
              f"best {warm[0]:.2f} s over {args.repeat} runs")


if __name__ == "__main__":
    main()
