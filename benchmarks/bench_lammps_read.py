"""Reading a large LAMMPS data file (issue #35, "Speed and scale"): an fcc block of about
10⁶ spheres with its nearest-neighbour bonds (6 a sphere: 6·10⁶) written by
``engine.io.lammps.write_data.write_data``, then read by ``read_data`` in a fresh process:
its wall time and peak resident memory.  Goal: ≤ 10 s and ≤ 1.5 GB.

    python benchmarks/bench_lammps_read.py [--n 1000000] [--keep FILE]

(``--keep FILE``: write the file there and keep it; an existing one is read again.)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_READ = """
import json, resource, sys, time
sys.path.insert(0, {root!r})
t = time.perf_counter()
from engine.io.lammps.read_data import read_data
t_import = time.perf_counter() - t
t = time.perf_counter()
d = read_data({path!r})
t_read = time.perf_counter() - t
print(json.dumps({{"spheres": int(d.x.shape[0]), "bonds": int(d.bonds.shape[0]),
                  "read_s": t_read, "import_s": t_import,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""


def make_file(path: Path, n_target: int) -> tuple[int, int]:
    import numpy as np

    from engine.io.lammps.write_data import write_data
    from engine.models.builders import NEAREST, pairs_within

    side = round((n_target / 4) ** (1 / 3))
    g = np.stack(np.meshgrid(*[np.arange(side)] * 3, indexing="ij"), -1).reshape(-1, 3)
    basis = np.array([[0, 0, 0], [0.5, 0.5, 0], [0.5, 0, 0.5], [0, 0.5, 0.5]])
    x = (g[:, None, :] + basis[None]).reshape(-1, 3).astype(np.float64)
    d = NEAREST["fcc"]
    bonds = pairs_within(x, 1.01 * d)
    n = x.shape[0]
    rng = np.random.default_rng(0)
    write_data(path, x, np.full(n, d), np.ones(n), 0.01 * rng.standard_normal((n, 3)),
               np.zeros((n, 3)), bonds, mol=np.zeros(n, dtype=np.int64))
    return n, bonds.shape[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--keep", type=Path, default=None)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or Path(tmp) / "block.data"
        t = time.perf_counter()
        if not path.exists():
            make_file(path, args.n)
        t_write = time.perf_counter() - t
        size = path.stat().st_size / 2**20
        out = subprocess.run([sys.executable, "-c", _READ.format(root=str(ROOT),
                                                                 path=str(path))],
                             capture_output=True, text=True, check=True)
        r = json.loads(out.stdout)
        r.update(file_mb=size, write_s=t_write)
        print(json.dumps(r, indent=1))


if __name__ == "__main__":
    main()
