"""What the row digests of a run file cost the writer (issue #36 item 2a; BENCHMARKS.md,
"Row digests").

For a flush of ``k`` records of ``N`` bodies as the writer appends them (the frame
datasets of a run with the full state: position, quaternion, omega, velocity,
momentum_body; a frictional run adds force and moment; the series: time, the energy
components, total and relative error, the momenta, step, dissipated, time of the
frames), times :class:`engine.io.digests.RowDigests` (``add`` for each dataset, then
``write``; the HDF5 append of the digests themselves is not included: one small
dataset per flush), per flush and per record.  Best of ``--repeat`` runs (a loaded
machine inflates the others).

    python benchmarks/bench_row_digests.py [--bodies 80 10000] [--records 1 10 100 1000]
        [--repeat 7] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import timeit

import numpy as np

from engine.io.digests import RowDigests


class _Digests(RowDigests):
    """RowDigests over named columns without a file (the writer's own is the same)."""

    def __init__(self, names: list[str]) -> None:
        self.targets = [("checks", {n: i for i, n in enumerate(names)})]
        self._rows = {}


def rows(k: int, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    out = {f"bodies/{c}": rng.normal(size=(k, n, 3)) for c in
           ("position", "omega", "velocity", "momentum_body", "force", "moment")}
    out["bodies/quaternion"] = rng.normal(size=(k, n, 4))
    for c in ("time", "bodies/time", "bodies/dissipated", "energy/total",
              "energy/relative_error", *(f"energy/c{i}" for i in range(8))):
        out[c] = rng.normal(size=k)
    out["bodies/step"] = np.arange(k, dtype=np.int64)
    out["momentum/linear"] = rng.normal(size=(k, 3))
    out["momentum/angular"] = rng.normal(size=(k, 3))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bodies", type=int, nargs="+", default=[80, 10000])
    ap.add_argument("--records", type=int, nargs="+", default=[1, 10, 100, 1000])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    results = []
    for n in args.bodies:
        for k in args.records:
            if k * n > 2_000_000:
                continue
            data = rows(k, n, rng)
            dig = _Digests(list(data))

            def flush(dig=dig, data=data) -> None:
                for name, v in data.items():
                    dig.add(name, v, 100)
                dig.write(lambda p: None, lambda ds, block: None)

            number = max(1, 20 // k)
            best = min(timeit.repeat(flush, number=number, repeat=args.repeat)) / number
            results.append({"bodies": n, "records": k, "flush_us": best * 1e6,
                            "record_us": best * 1e6 / k})
    if args.json:
        print(json.dumps({"load": os.getloadavg(), "results": results}, indent=1))
        return
    print(f"load average {os.getloadavg()[0]:.2f}")
    print(f"{'bodies':>7} {'records/flush':>14} {'µs/flush':>10} {'µs/record':>10}")
    for r in results:
        print(f"{r['bodies']:>7} {r['records']:>14} {r['flush_us']:>10.0f} "
              f"{r['record_us']:>10.2f}")


if __name__ == "__main__":
    main()
