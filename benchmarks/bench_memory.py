"""What one core of this machine gets from its memory, and what that does to the pile's
neighbour search (issue #9: the cost per particle-step against N on one thread).

* **latency**: a dependent chain of loads (pointer chasing, one per cache line, random
  order) through buffers of 0.25 MB to 1 GB, ns per load: where the caches end;
* **bandwidth**: one sequential (vectorised) sum over 256 MB, GB/s;
* **neighbour search** of the tori-pile of ``bench_pile_scale.py`` at each ``--sizes``
  N (its initial state): the whole list build of ``engine.neighbours``, and its pair
  search over all spheres and over 1000 places of the cell order at a time repeated
  (their data stay in the caches), µs a sphere;
* **the step's passes** (``--passes``, at each ``--pass-sizes`` N, after 100 steps of
  ``rrp-newmark``): each per-sphere pass of the velocity-Verlet step and one force
  evaluation, over all spheres, against the same kernel over one chunk of ``CHUNK``
  spheres repeated (in the caches), µs a sphere; and how far apart in memory (in sphere
  indices) the two spheres of a bond or of a listed pair are: what a step that worked on
  one block of spheres at a time would have to keep in the caches;
* **the rebuild in the stepping loop** (``--in-situ``, at each ``--in-situ-sizes`` N):
  the ``bench_pile_scale.py`` window taken one step at a time, the median step that
  rebuilt the neighbour list against the median one that did not, µs a sphere, beside
  the same list build repeated on the state the window ends at.  The repeated build
  reads low at small N: run after run, the search meets the same sequence of tests, and
  the core learns its branches (its hot-block time rises sharply past ≈ 6000 spheres,
  which prefetching the rows it reads next does not change; BENCHMARKS.md).

    python benchmarks/bench_memory.py [--sizes 1000 1000000] [--passes --pass-sizes 1000000]
                                      [--in-situ --in-situ-sizes 1000 10000 1000000]
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

from _results import md_header, md_row  # noqa: E402


@njit(cache=True)
def _chase(nxt, steps):
    p = 0
    for _ in range(steps):
        p = nxt[p]
    return p


@njit(cache=True, fastmath=True)
def _stream(a):
    """``Σ a``, reassociated (``fastmath``) so that it vectorises over several partial
    sums.  As a strict left-to-right sum every add waits for the last one, and one core
    reads only ≈ 9.6 GB/s: the add's latency, not the memory's speed (31 GB/s here)."""
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


def _list_arrays(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The cell-list scratch, a list of 4 pairs a sphere, the list's state and its
    reference positions, for ``build_neighbours_ws`` on ``n`` spheres."""
    from engine.layout import N_NL_STATE
    from engine.neighbours import neighbour_scratch_size

    return (np.empty(neighbour_scratch_size(n), dtype=np.int64),
            np.zeros((4 * n, 2), dtype=np.int64), np.zeros(N_NL_STATE, dtype=np.int64),
            np.zeros((n, 3)))


def search_us(n_spheres: int, repeat: int = 5) -> dict[str, float]:
    """µs a sphere of the pair search, over all spheres and over hot blocks of 1000."""
    from bench_pile_profile import best
    from bench_pile_scale import build_pile

    from engine.layout import P_SKIN
    from engine.neighbours import (
        _search,
        build_neighbours_ws,
        cell_list_ws,
        scratch_places,
    )

    model = build_pile(n_spheres, 1.0)
    ff = model.forcefield
    x = model.initial_state.x.copy()
    n = x.shape[0]
    iw, pairs, state, xref = _list_arrays(n)
    skin = ff.fp[P_SKIN]

    excl = ff.bonded  # (the bonded pairs, left out as by the engine)
    build = best(lambda: build_neighbours_ws(x, ff.D, skin, pairs, state, xref, iw, *excl),
                 1, repeat)
    # the search alone, on the cell list (the build's sort reuses its memory), over
    # all spheres and over 1000 places of the cell order at a time
    m0, m1, m2 = cell_list_ws(x, ff.D, skin, iw)
    order, _, at_xs, at_counts = scratch_places(n)[:4]
    xs = iw[at_xs:at_counts].view(np.float64)
    args = (skin, iw, order, xs, m0, m1, m2, pairs)
    whole = best(lambda: _search(0, n, *args, 0, pairs.shape[0], *excl), 1, repeat)

    def hot_us(b: int, places: int) -> float:
        """µs a sphere of the search over the ``b`` middle places, repeated over about
        ``places`` places in all."""
        k0 = n // 2 - b // 2
        return best(lambda: _search(k0, k0 + b, *args, 0, pairs.shape[0], *excl),
                    max(1, places // b), repeat) / b * 1e6

    # and over more places at a time: where the repeated search stops being fast
    blocks = {b: hot_us(b, 400_000) for b in (2000, 4000, 6000, 8000, 16000) if 4 * b <= n}
    return {"n": n, "build": build / n * 1e6, "search": whole / n * 1e6,
            "search_hot_block": hot_us(min(1000, n), 200_000), "search_hot_blocks": blocks}


def _repeaters():
    """The passes of the step, each repeated ``reps`` times inside one compiled loop (no
    interpreter between the repetitions)."""
    from engine.forcefield import compute_forces_ws
    from engine.integrators.advance import _kinetic_chunks
    from engine.integrators.verlet import _after_forces, _before_forces

    @njit
    def before(reps, i0, i1, h, rot_map, m, J, s0, s1):
        for _ in range(reps):
            _before_forces(h, rot_map, m, J, s0, s1, i0, i1)

    @njit
    def after(reps, i0, i1, h, m, J, s0, s1):
        for _ in range(reps):
            _after_forces(h, m, J, s0, s1, i0, i1)

    @njit
    def kinetic(reps, v, o, m, J, part):
        e = 0.0
        for _ in range(reps):
            a, b = _kinetic_chunks(v, o, m, J, part)
            e += a + b
        return e

    @njit
    def forces(reps, x, q, ff, F, RM, e, ws):
        for _ in range(reps):
            compute_forces_ws(x, q, ff, F, RM, e, ws)

    return before, after, kinetic, forces


def passes_us(n_spheres: int, repeat: int = 5) -> dict[str, float]:
    """µs a sphere of each pass of a ``rrp-newmark`` step of the pile, whole and on one
    chunk repeated; the spread of bonds and listed pairs in sphere indices."""
    from bench_pile_profile import best
    from bench_pile_scale import INTEGRATOR, H, build_pile

    from engine.forcefield import new_scratch
    from engine.integrators.verlet import ROT_RRP_NEWMARK
    from engine.layout import N_ENERGY, NL_COUNT
    from engine.parallel import CHUNK
    from engine.simulation import Simulation

    sim = Simulation(build_pile(n_spheres, 1.0), INTEGRATOR, H, record_every=10**9,
                     record_frames=False)
    sim.warm_up()
    sim.advance(100)
    n = sim.state.x.shape[0]
    s0 = tuple(a.copy() for a in sim._s0)
    s1 = tuple(a.copy() for a in sim._s1)
    ff = sim.ff.arrays
    m, J = ff[0], ff[1]
    ws = new_scratch(n, ff)
    c0 = (n // 2) // CHUNK * CHUNK  # a chunk in the middle of the pile
    c1 = min(n, c0 + CHUNK)
    whole = max(1, 4_000_000 // n)
    hot = max(1, 4_000_000 // (c1 - c0))
    r: dict[str, float] = {"n": n}
    _repeat_before, _repeat_after, _repeat_kinetic, _repeat_forces = _repeaters()

    def pair(name, fn_whole, fn_hot):
        r[name] = best(fn_whole, 1, repeat) / whole / n * 1e6
        r[name + "_hot"] = best(fn_hot, 1, repeat) / hot / (c1 - c0) * 1e6

    pair("before",
         lambda: _repeat_before(whole, 0, n, H, ROT_RRP_NEWMARK, m, J, s0, s1),
         lambda: _repeat_before(hot, c0, c1, H, ROT_RRP_NEWMARK, m, J, s0, s1))
    pair("after", lambda: _repeat_after(whole, 0, n, H, m, J, s0, s1),
         lambda: _repeat_after(hot, c0, c1, H, m, J, s0, s1))
    nc = (n + CHUNK - 1) // CHUNK
    part, part1 = np.zeros((nc, 2)), np.zeros((1, 2))
    sl = slice(c0, c1)
    pair("kinetic", lambda: _repeat_kinetic(whole, s1[1], s1[3], m, J, part),
         lambda: _repeat_kinetic(hot, s1[1][sl], s1[3][sl], m[sl], J[sl], part1))
    x, q = s1[0].copy(), s1[2].copy()
    F, RM, e = np.zeros((n, 3)), np.zeros((n, 3)), np.zeros(N_ENERGY)
    _repeat_forces(1, x, q, ff, F, RM, e, ws)  # (the list valid for x)
    r["forces"] = best(lambda: _repeat_forces(whole, x, q, ff, F, RM, e, ws), 1,
                       repeat) / whole / n * 1e6
    pairs = sim.ff.nl_pairs[:int(sim.ff.nl_state[NL_COUNT])]
    spread = np.abs(pairs[:, 1] - pairs[:, 0])
    bond_spread = np.abs(sim.ff.bonds[:, 1] - sim.ff.bonds[:, 0])
    r["pair_spread_p50"] = float(np.percentile(spread, 50))
    r["pair_spread_p99"] = float(np.percentile(spread, 99))
    r["pair_spread_max"] = float(spread.max())
    r["bond_spread_max"] = float(bond_spread.max())
    return r


def rebuild_in_situ_us(n_spheres: int, steps: int = 200) -> dict[str, float]:
    """µs a sphere of a step with and without a list rebuild inside the stepping loop
    (the ``bench_pile_scale.py`` window, one ``advance(1)`` at a time, medians over
    enough fresh runs for 2·10⁶ timed particle-steps), and of the list build repeated
    on the window's last state."""
    import gc
    import statistics

    from bench_pile_profile import best
    from bench_pile_scale import INTEGRATOR, H, build_pile

    from engine.layout import NL_REBUILDS, P_SKIN
    from engine.neighbours import build_neighbours_ws
    from engine.simulation import Simulation

    model = build_pile(n_spheres, 1.0)
    n = model.initial_state.x.shape[0]
    runs = 1 if n >= 1_000_000 else max(2, 2_000_000 // (steps * n))
    with_rb: list[float] = []
    without: list[float] = []
    for _ in range(runs):
        sim = Simulation(model, INTEGRATOR, H, record_every=10**9, record_frames=False)
        sim.warm_up()
        sim.advance(100)
        for _ in range(steps):
            r0 = int(sim.ff.nl_state[NL_REBUILDS])
            t0 = time.perf_counter()
            sim.advance(1)
            dt = time.perf_counter() - t0
            (with_rb if int(sim.ff.nl_state[NL_REBUILDS]) > r0 else without).append(dt)
        x = sim.state.x.copy()
        del sim
        gc.collect()
    ff = model.forcefield
    iw, pairs, state, xref = _list_arrays(n)
    repeated = best(lambda: build_neighbours_ws(x, ff.D, ff.fp[P_SKIN], pairs, state, xref,
                                                iw, *ff.bonded), max(1, 2_000_000 // n), 5)
    us = 1e6 / n
    w, wo = statistics.median(with_rb) * us, statistics.median(without) * us
    return {"n": n, "step": wo, "step_rebuilt": w, "rebuild": w - wo,
            "rebuilds": len(with_rb) / runs, "repeated": repeated * us}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 1000000])
    ap.add_argument("--passes", action="store_true",
                    help="also time the step's passes, whole and on one chunk")
    ap.add_argument("--pass-sizes", type=int, nargs="+", default=[1000000])
    ap.add_argument("--in-situ", action="store_true",
                    help="also time the list rebuild inside the stepping loop")
    ap.add_argument("--in-situ-sizes", type=int, nargs="+", default=[1000, 10000, 1000000])
    args = ap.parse_args(argv)
    import engine

    engine.set_threads(1)
    md_header("buffer", "ns per dependent load")
    for mb in (0.25, 1, 2, 4, 8, 64, 256, 1024):
        print(f"| {mb:g} MB | {latency_ns(mb):.1f} |", flush=True)
    print(f"\nsequential read, one core: {bandwidth_gbs():.1f} GB/s\n")
    md_header("spheres", "list build µs/sphere", "pair search µs/sphere",
            "the same, 1000 spheres at a time (hot)")
    for n in args.sizes:
        r = search_us(n)
        print(f"| {r['n']} | {r['build']:.3f} | {r['search']:.3f} | "
              f"{r['search_hot_block']:.3f} |", flush=True)
        if r["search_hot_blocks"]:
            blocks = ", ".join(f"{b}: {t:.3f}" for b, t in r["search_hot_blocks"].items())
            print(f"|   | (hot blocks of more places, µs/sphere: {blocks}) | | |", flush=True)
    if args.passes:
        print()
        md_header("spheres", "pass", "µs/sphere, all spheres", "one chunk in the caches")
        for n in args.pass_sizes:
            r = passes_us(n)
            for name in ("before", "after", "kinetic"):
                print(f"| {r['n']} | {name} | {r[name]:.4f} | {r[name + '_hot']:.4f} |")
            print(f"| {r['n']} | forces (list valid) | {r['forces']:.4f} | — |")
            print(f"\n{r['n']} spheres: listed pairs |i − j| median "
                  f"{r['pair_spread_p50']:.0f}, 99th percentile {r['pair_spread_p99']:.0f}, "
                  f"max {r['pair_spread_max']:.0f}; bonds max {r['bond_spread_max']:.0f}",
                  flush=True)
    if args.in_situ:
        print()
        md_header("spheres", "step, no rebuild", "step with a rebuild", "the rebuild in the loop",
                "rebuilds in 200 steps", "the build repeated")
        for n in args.in_situ_sizes:
            r = rebuild_in_situ_us(n)
            md_row(r["n"], r["step"], r["step_rebuilt"], r["rebuild"], f"{r['rebuilds']:.0f}",
                   r["repeated"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
