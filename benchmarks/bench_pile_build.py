"""Seconds to build the tori-pile model (``MODELS["tori-pile"].make``: ring placement,
bonds, walls) at a few sizes; a vectorised build stays ≈ linear in the spheres.  The
test suite only checks that 10⁵ spheres build (``tests/test_tori_pile.py``); how fast
is measured here (issue #27 §1: no wall-clock assertion in a test).

    python benchmarks/bench_pile_build.py [--tori 50 500 5000 50000] [--repeat 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tori", type=int, nargs="+", default=[50, 500, 5000, 50000])
    ap.add_argument("--repeat", type=int, default=3, help="the best of this many builds")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    from engine.models import MODELS

    pile = MODELS["tori-pile"]
    pile.make({"n_tori": 5})  # first-call costs (imports, compiled helpers) not timed
    rows = []
    for n_tori in args.tori:
        best = float("inf")
        for _ in range(max(1, args.repeat)):
            t0 = time.perf_counter()
            model = pile.make({"n_tori": n_tori})
            best = min(best, time.perf_counter() - t0)
        rows.append({"n_tori": n_tori, "spheres": model.n_bodies, "seconds": round(best, 4),
                     "us_per_sphere": round(1e6 * best / model.n_bodies, 3)})
        del model
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        for r in rows:
            print(f"{r['n_tori']:>7} tori, {r['spheres']:>9,} spheres: {r['seconds']:.3f} s "
                  f"({r['us_per_sphere']:.2f} µs/sphere)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
