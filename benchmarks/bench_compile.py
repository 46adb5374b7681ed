"""Cold compile: how long a fresh install waits for its kernels, and where the time goes.

Runs in a child process with an empty Numba cache (a temporary ``NUMBA_CACHE_DIR``), the
way the first ``rrp run`` or the app's first start goes: import the engine, build the
scenario's model, ``Simulation(...)`` (the step kernels, compiled bottom-up by
``engine.integrators.advance.prime_kernels``), ``warm_up()`` and ten steps, each timed;
then the compile time of each Numba function, exclusive of the functions it compiled
in turn (Numba's ``numba:compile`` events), the largest first.

    python benchmarks/bench_compile.py [--scenario pendulum] [--integrator rrp-newmark]
        [--top 12]

Numba optimises each compiled function together with everything it calls, so a
dispatcher's own time includes another pass over its callees: that is what the
``inline="always"`` of ``step_ws`` and ``substep_ws`` saves (BENCHMARKS.md, "Cold
compile").
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def child(scenario: str, integrator: str) -> dict:
    """The timings, in this process (its Numba cache must be empty)."""
    from numba.core import event

    phases: dict[str, float] = {}
    per_function: collections.Counter = collections.Counter()
    with event.install_recorder("numba:compile") as rec:
        t0 = time.perf_counter()
        sys.path.insert(0, str(ROOT))
        from engine.scenarios import load_scenario
        from engine.simulation import Simulation

        phases["import"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        model = load_scenario(scenario, {}).build_model()
        phases["build the model"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        sim = Simulation(model, integrator, 1e-3)
        phases["Simulation(...)"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        sim.warm_up()
        phases["warm_up()"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        sim.advance(10)
        phases["advance(10)"] = time.perf_counter() - t0
    stack: list[tuple[str, float]] = []
    for ts, ev in rec.buffer:
        fn = ev.data["dispatcher"].py_func
        name = f"{fn.__module__.removeprefix('engine.')}.{fn.__qualname__}"
        if ev.is_start:
            stack.append((name, ts))
            continue
        name, start = stack.pop()
        per_function[name] += ts - start
        if stack:  # exclusive: not counted again in the caller that compiled it
            per_function[stack[-1][0]] -= ts - start
    return {"phases": phases, "functions": per_function.most_common()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenario", default="pendulum")
    ap.add_argument("--integrator", default="rrp-newmark")
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.scenario, args.integrator)))
        return
    with tempfile.TemporaryDirectory(prefix="rrp-cold-") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        out = subprocess.run([sys.executable, __file__, "--child", "--scenario",
                              args.scenario, "--integrator", args.integrator],
                             env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.exit(f"the child failed:\n{out.stderr}")
    r = json.loads(out.stdout.strip().splitlines()[-1])
    total = sum(r["phases"].values())
    print(f"cold start, {args.scenario} with {args.integrator}: {total:.1f} s")
    for name, sec in r["phases"].items():
        print(f"  {name:<18} {sec:8.1f} s")
    print(f"compile time per function (exclusive), the {args.top} largest:")
    for name, sec in r["functions"][:args.top]:
        print(f"  {sec:8.1f} s  {name}")


if __name__ == "__main__":
    main()
