"""The spring-pendulum table of issue 8 §4 (physics.md §4.4, §6; docs/physics.md §3.9, generalized):
``e_N = 1``, ``h ∈ {1e-2, 5e-3, 1e-3, 5e-4}``, ``t ∈ [0, 100]`` and ``[0, 1000]``, polar and
Cartesian coordinates, ``moreau``, ``moreau-symmetric`` and ``moreau-variational``: max and
final relative energy error (node energy, ``E + D``), drift per unit time (slope of the
least-squares line), impacts, max penetration; then the fitted orders in ``h`` of the
drift, of the max error and of the max penetration.

    python benchmarks/bench_spring_pendulum.py [--t-ends 100 1000] [--out FILE] [--json]

Writes the table to ``benchmarks/results/spring_pendulum.txt`` by default.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.studies.spring_pendulum import (  # noqa: E402
    COORDINATES,
    SCHEMES,
    STEPS,
    format_table,
    orders,
    rows_as_dicts,
    table,
)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--t-ends", type=float, nargs="+", default=[100.0, 1000.0])
    ap.add_argument("--steps", type=float, nargs="+", default=list(STEPS))
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" /
                                         "spring_pendulum.txt"))
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    rows = table(SCHEMES, COORDINATES, a.steps, a.t_ends)
    wall = time.perf_counter() - t0
    if a.json:
        print(json.dumps({"rows": rows_as_dicts(rows), "orders": orders(rows)}, indent=1))
        return 0
    text = ("Spring pendulum with a wall, e_N = 1, E0 = 10.5 (physics.md §4.4); relative "
            "energy error (E + D - E0)/E0 of the node energy\n"
            "(docs/physics.md §3.9, generalized §4); drift/t = slope of its least-squares line.\n\n"
            + format_table(rows) + f"\n\nwall time {wall:.1f} s (kernels included)\n")
    print(text)
    if a.out:
        Path(a.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
