"""Cost per step of the compiled stepping kernel, every integrator, on the built-in scenarios.

For each model the built-in scenario of that name is loaded (``assets/scenarios``): its
parameters, step ``h``, end time and recording stride.  The torus is the B&G impact
(80 spheres, wall on, ``h = 1e-3``, 25 000 steps through the impact and the rebound,
a record with all frames every 10 steps); the pendulum runs ``h = 1e-2`` for 10 000
steps with a record every step.  Each run goes through
``engine.integrators.advance.advance_ws`` exactly as the simulation driver calls it
(with the force field's scratch made once): in chunks (``--chunk`` steps), frames
recorded, blow-up check on.  Only the kernel calls are timed, after the kernels have
been compiled or loaded from the Numba cache; the result is the best of ``--repeat``
complete runs, in µs per step.

    python benchmarks/bench_kernels.py [--repeat 3] [--chunk 1000] [--models torus pendulum]
                                       [--integrators rrp-newmark rk4] [--json]
    python benchmarks/bench_kernels.py --rounds 5 --save kernels   # for BENCHMARKS.md

With ``--rounds N`` every case is timed once a round, in turn, N rounds (a load that comes
and goes then hits every case alike), and ``--save NAME`` writes every time, the best and
the load after each round to ``benchmarks/results/NAME.json`` (issue #34 §5), from which
``benchmarks/report.py`` makes BENCHMARKS.md's per-step tables.

One core is used (the kernels are serial).  The machine's load shows up in the numbers:
compare runs on an idle machine.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _buffers import prepared  # noqa: E402  (benchmarks/ is this script's directory)

from engine.diagnostics import energy_scale, rotational_energy  # noqa: E402
from engine.forcefield import new_scratch  # noqa: E402
from engine.integrators import INTEGRATORS  # noqa: E402
from engine.integrators.advance import (  # noqa: E402
    advance_ws,
)
from engine.layout import N_ENERGY, NL_REBUILDS, OK  # noqa: E402
from engine.rotations import quat_to_matrix  # noqa: E402
from engine.scenarios import load_scenario  # noqa: E402

CLOCK = time.perf_counter
"""The clock of the kernel calls: wall (default) or, with ``--clock cpu``, the CPU time of
this thread (``time.thread_time``: the serial kernels run in it), which other jobs on a
shared machine inflate far less (issue #45: the pendulum's step before and after)."""


class Run:
    """The buffers of one run of a scenario, laid out as the simulation driver does."""

    def __init__(self, scenario_name: str) -> None:
        sc = load_scenario(scenario_name)
        self.model = sc.build_model()
        self.h = sc.run.h
        self.steps = int(math.ceil(sc.run.t_end / sc.run.h - 1e-9))
        self.every = sc.run.every
        self.tolerance = sc.run.energy_tolerance

    def time(self, scheme_id: int, chunk: int) -> tuple[float, int]:
        """Seconds spent in the kernel for the whole run, and neighbour-list rebuilds."""
        model = self.model
        ff = model.forcefield.copy()
        ff.invalidate_neighbours()
        st = model.initial_state.copy()
        n = st.n
        # Π = 𝕁 Rᵀ Ω, the state of the schemes that keep it (lgvi, rrp-implicit)
        pi = np.einsum("nij,nkj,nk->ni", ff.inertia, quat_to_matrix(st.q), st.omega)
        s0, s1, work, info = prepared(ff, st, scheme_id, pi)
        e = s0[6]
        e[0] = 0.5 * float(np.sum(ff.m * np.sum(st.v * st.v, axis=1)))
        e[1] = rotational_energy(ff.J, st.omega, st.q, None if ff.spherical else ff.inertia)
        e_ctrl = np.array([float(e.sum()), energy_scale(e), self.tolerance])
        rebuilds0 = int(ff.nl_state[NL_REBUILDS])
        ws = new_scratch(n, ff.arrays)
        seconds = 0.0
        done_total = 0
        while done_total < self.steps:
            k = min(chunk, self.steps - done_total)
            n_rec = (done_total + k) // self.every - done_total // self.every
            rec = (np.empty(n_rec), np.empty((n_rec, N_ENERGY)), np.empty((n_rec, 3)),
                   np.empty((n_rec, 3)), np.empty((n_rec, n, 3)), np.empty((n_rec, n, 4)),
                   np.empty((n_rec, n, 3)), np.empty((0, n, 3)), np.empty((0, n, 3)))
            t0 = CLOCK()
            ws[2][0][:] = 0  # (as Simulation._scratch)
            done, _, status = advance_ws(scheme_id, k, self.h, done_total * self.h,
                                         done_total, self.every, s0, s1, ff.arrays, work,
                                         e_ctrl, rec, True, info, ws)
            seconds += CLOCK() - t0
            done_total += done
            if status != OK:
                raise RuntimeError(f"the run stopped at step {done_total}: status {status}")
        return seconds, int(ff.nl_state[NL_REBUILDS]) - rebuilds0


def _cases(models: list[str], integrators: list[str]) -> tuple[dict[str, Run], list]:
    """The runs, and the (model, scheme) cases that each model accepts (a scheme that the
    model refuses, e.g. ``rrp-exact`` on non-spherical bodies, is left out)."""
    runs: dict[str, Run] = {}
    cases = []
    for name in models:
        runs[name] = run = Run(name)
        for integ in integrators:
            try:
                run.time(INTEGRATORS[integ].scheme_id, 10)  # compile / load the cache
            except Exception as exc:  # noqa: BLE001 (refused by the model: reported)
                print(f"  {name} {integ}: refused ({exc})", file=sys.stderr)
                continue
            cases.append((name, integ))
    return runs, cases


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs per case (the best counts)")
    ap.add_argument("--rounds", type=int, default=0,
                    help="instead of --repeat: N rounds, each timing every case once in "
                         "turn (alternating, so that a change of load hits every case "
                         "alike); the load average is recorded after each round")
    ap.add_argument("--chunk", type=int, default=1000, help="steps per kernel call")
    ap.add_argument("--models", nargs="+", default=["torus", "pendulum"],
                    help="built-in scenarios to run")
    ap.add_argument("--integrators", nargs="+", default=list(INTEGRATORS),
                    choices=list(INTEGRATORS))
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                    help="time the kernel calls by the wall clock or by this thread's "
                         "CPU time (less inflated by other jobs)")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    ap.add_argument("--save", metavar="NAME", default="",
                    help="write benchmarks/results/NAME.json (command, commit, date, "
                         "machine, load, every time) for benchmarks/report.py")
    args = ap.parse_args()
    global CLOCK
    CLOCK = time.thread_time if args.clock == "cpu" else time.perf_counter
    if args.rounds or args.save:
        _alternating(args)
        return

    results: dict[str, dict[str, float]] = {}
    for name in args.models:
        run = Run(name)
        t0 = time.perf_counter()
        run.time(INTEGRATORS[args.integrators[0]].scheme_id, 10)  # compile / load the cache
        warm = time.perf_counter() - t0
        if not args.json:
            print(f"{name}: {run.model.n_bodies} bodies, h = {run.h:g}, {run.steps} steps, "
                  f"record every {run.every} (kernels ready in {warm:.1f} s)")
        results[name] = {}
        for integ in args.integrators:
            sid = INTEGRATORS[integ].scheme_id
            best, rebuilds = math.inf, 0
            for _ in range(args.repeat):
                seconds, rebuilds = run.time(sid, args.chunk)
                best = min(best, seconds)
            us = best / run.steps * 1e6
            results[name][integ] = us
            if not args.json:
                extra = f"   ({rebuilds} neighbour-list rebuilds)" if rebuilds else ""
                print(f"  {integ:12s} {us:8.3f} µs/step{extra}")
    if args.json:
        print(json.dumps(results, indent=2))


def _alternating(args: argparse.Namespace) -> None:
    """``--rounds``/``--save``: every case once a round, in turn; µs/step of every run
    kept, with the load average after each round (issue #34 §5)."""
    from _results import meta, save  # (benchmarks/ is this script's directory)

    record = meta()
    record["clock"] = "thread CPU" if args.clock == "cpu" else "wall"
    runs, cases = _cases(args.models, args.integrators)
    rounds = args.rounds or args.repeat
    times: dict[str, dict[str, list[float]]] = {m: {} for m in args.models}
    rebuilds: dict[str, dict[str, int]] = {m: {} for m in args.models}
    loads = []
    for k in range(rounds):
        for name, integ in cases:
            run = runs[name]
            seconds, nl = run.time(INTEGRATORS[integ].scheme_id, args.chunk)
            times[name].setdefault(integ, []).append(seconds / run.steps * 1e6)
            rebuilds[name][integ] = nl
        loads.append([round(v, 2) for v in os.getloadavg()])
        print(f"round {k + 1}/{rounds} done, load {loads[-1][0]:.2f}", file=sys.stderr)
    record["models"] = {
        name: {"bodies": runs[name].model.n_bodies, "h": runs[name].h,
               "steps": runs[name].steps, "every": runs[name].every}
        for name in args.models}
    record["load_per_round"] = loads
    record["us_per_step"] = {
        name: {integ: {"best": min(ts), "max": max(ts), "runs": ts,
                       "rebuilds": rebuilds[name][integ]}
               for integ, ts in per.items()}
        for name, per in times.items()}
    if args.save:
        print(f"written: {save(args.save, record)}", file=sys.stderr)
    if args.json or not args.save:
        print(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
