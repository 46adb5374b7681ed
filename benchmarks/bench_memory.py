"""What one core of this machine gets from its memory, and what that does to the pile's
neighbour search (issue #9: the cost per particle-step against N on one thread).

* **latency**: a dependent chain of loads (pointer chasing, one per cache line, random
  order) through buffers of 0.25 MB to 1 GB, ns per load: where the caches end;
* **bandwidth**: one sequential sum over 256 MB, GB/s;
* **neighbour search** of the tori-pile of ``bench_pile_scale.py`` at each ``--sizes``
  N (its initial state): the pair search of ``engine.neighbours`` over all spheres, and
  over 1000 spheres at a time repeated (their data stay in the caches), µs a sphere.

    python benchmarks/bench_memory.py [--sizes 1000 1000000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


@njit(cache=True)
def _chase(nxt, steps):
    p = 0
    for _ in range(steps):
        p = nxt[p]
    return p


@njit(cache=True)
def _stream(a):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i]
    return s


def latency_ns(megabytes: float, loads: int = 2_000_000) -> float:
    """ns per load of a random cyclic chain through ``megabytes`` (one load a line)."""
    lines = max(2, int(megabytes * 2**20) // 64)
    perm = np.random.default_rng(1).permutation(lines)
    nxt = np.zeros(lines * 8, dtype=np.int64)
    nxt[perm * 8] = np.roll(perm, -1) * 8
    _chase(nxt, 10)
    t0 = time.perf_counter()
    _chase(nxt, loads)
    return (time.perf_counter() - t0) / loads * 1e9


def bandwidth_gbs(megabytes: float = 256.0) -> float:
    a = np.ones(int(megabytes * 2**20) // 8)
    _stream(a)
    t0 = time.perf_counter()
    _stream(a)
    return a.nbytes / (time.perf_counter() - t0) / 1e9


def search_us(n_spheres: int, repeat: int = 5) -> dict[str, float]:
    """µs a sphere of the pair search, over all spheres and over hot blocks of 1000."""
    from bench_pile_profile import best
    from bench_pile_scale import build_pile

    from engine.layout import P_SKIN
    from engine.neighbours import _search, build_neighbours_ws, neighbour_scratch_size

    model = build_pile(n_spheres, 1.0)
    ff = model.forcefield
    x = model.initial_state.x.copy()
    n = x.shape[0]
    iw = np.empty(neighbour_scratch_size(n), dtype=np.int64)
    pairs = np.zeros((4 * n, 2), dtype=np.int64)
    state = np.zeros(4, dtype=np.int64)
    xref = np.zeros((n, 3))
    skin = ff.fp[P_SKIN]

    build = best(lambda: build_neighbours_ws(x, ff.D, skin, pairs, state, xref, iw), 1,
                 repeat)
    # the cell list of the last build is in iw: search it again, whole and in hot blocks
    # (its grid, as build_neighbours_ws chooses it: cells of edge max D + skin, 1.5x
    # larger while there would be more than 8 n of them)
    cap = max(64, 8 * n)
    lo, hi = x.min(axis=0), x.max(axis=0)
    edge = ff.D.max() + skin
    while True:
        m = np.maximum(1, ((hi - lo) / edge).astype(int))
        if int(np.prod(m)) <= cap:
            break
        edge *= 1.5
    xs = iw[cap + 1 + 2 * n:cap + 1 + 6 * n].view(np.float64)
    args = (x, ff.D, skin, iw, cap + 1, cap + 1 + n, xs, int(m[0]), int(m[1]), int(m[2]),
            pairs)
    whole = best(lambda: _search(0, n, *args, 0, pairs.shape[0]), 1, repeat)
    blk = min(1000, n)
    hot = best(lambda: _search(n // 2 - blk // 2, n // 2 + blk - blk // 2, *args, 0,
                               pairs.shape[0]), max(1, 200_000 // blk), repeat)
    return {"n": n, "build": build / n * 1e6, "search": whole / n * 1e6,
            "search_hot_block": hot / blk * 1e6}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 1000000])
    args = ap.parse_args(argv)
    import engine

    engine.set_threads(1)
    print("| buffer | ns per dependent load |")
    print("|---|---|")
    for mb in (0.25, 1, 2, 4, 8, 64, 256, 1024):
        print(f"| {mb:g} MB | {latency_ns(mb):.1f} |", flush=True)
    print(f"\nsequential read, one core: {bandwidth_gbs():.1f} GB/s\n")
    print("| spheres | list build µs/sphere | pair search µs/sphere | the same, 1000 "
          "spheres at a time (hot) |")
    print("|---|---|---|---|")
    for n in args.sizes:
        r = search_us(n)
        print(f"| {r['n']} | {r['build']:.3f} | {r['search']:.3f} | "
              f"{r['search_hot_block']:.3f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
