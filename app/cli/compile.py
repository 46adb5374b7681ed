"""``rrp compile [SCENARIO…] [--all] [-i NAME…]`` — build the kernels ahead of time.

A run compiles the kernels of its own scheme and of its model's terms on first use
(seconds; issue #25) and loads them from the disk cache afterwards.  This command does
that work once, with a progress bar: for a Dask worker image, a CI image, or a user
who wants every later switch of scheme in the app to be instant.

Only argparse here: the engine is imported when the command runs.
"""

from __future__ import annotations

import argparse
import sys
import time


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``compile`` sub-command to the ``rrp`` parser."""
    p = sub.add_parser(
        "compile", help="build the kernels of scenarios ahead of time (then cached)",
        description="Compile (or find in the cache) the kernels of the scenarios' runs: by "
                    "default each built-in scenario with its own integrator; --all: every "
                    "integrator that can drive each scenario's model. Later runs and the "
                    "app load them from the cache in a fraction of a second.")
    p.add_argument("scenario", nargs="*",
                   help="built-in scenario names or .toml paths (default: every built-in "
                        "scenario)")
    p.add_argument("--all", action="store_true",
                   help="every integrator that can drive each scenario's model")
    p.add_argument("--integrator", "-i", action="append", default=[], metavar="NAME",
                   help="this integrator (repeatable) instead of the scenario's")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scenario parameter, as for 'rrp run' (e.g. --set "
                        "n_tori=5000 for the kernels of a large pile)")
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")
    p.set_defaults(handler=cmd_compile)


def plan(args: argparse.Namespace) -> list[tuple]:
    """``(scenario, model, integrator)`` for each run whose kernels to build."""
    from engine.integrators.registry import INTEGRATORS, get_integrator
    from engine.scenarios import builtin_scenarios, parse_sets
    from engine.simulation import default_integrator

    from ..errors import UsageError
    from . import _load

    for name in args.integrator:
        try:
            get_integrator(name)
        except KeyError as exc:
            raise UsageError(exc.args[0]) from None
    names = args.scenario or builtin_scenarios()
    jobs = []
    for name in names:
        sc = _load(name, parse_sets(args.set))
        model = sc.build_model()
        if args.all:
            schemes = list(INTEGRATORS)
        elif args.integrator:
            schemes = list(args.integrator)
        else:
            schemes = [default_integrator(model, sc.run.integrator)]
        jobs += [(sc, model, s) for s in schemes]
    return jobs


def cmd_compile(args: argparse.Namespace) -> int:
    from engine.api import compile_run
    from engine.priming import start_siblings
    from engine.simulation import SimulationError

    from ..errors import EXIT_FAILED

    jobs = plan(args)
    tty = sys.stderr.isatty() and not args.quiet
    t_all = time.perf_counter()
    built = cached = 0
    refused: list[str] = []
    for k, (sc, model, scheme) in enumerate(jobs, 1):
        what = f"{sc.name} · {scheme}"
        if tty:
            bar = "█" * (20 * (k - 1) // len(jobs))
            print(f"\r[{bar:<20}] {k}/{len(jobs)} compiling {what}…\033[K", end="",
                  file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        try:  # (the kernels beside the loop's chain on the second core)
            siblings = start_siblings(model, scheme)
        except OSError:
            siblings = None
        try:
            how = compile_run(model, scheme, sc.run.h)
        except SimulationError as exc:
            if args.integrator:  # asked for by name: say why not
                refused.append(f"{what}: {exc}")
            continue
        finally:
            if siblings is not None:
                siblings.wait()
        built += how == "compiled"
        cached += how == "cached"
        if not args.quiet:
            if tty:
                print("\r\033[K", end="", file=sys.stderr)
            print(f"{k}/{len(jobs)} {what}: {how} ({time.perf_counter() - t0:.1f} s)",
                  flush=True)
    if tty:
        print("\r\033[K", end="", file=sys.stderr)
    for line in refused:
        print(f"rrp: error: {line}", file=sys.stderr)
    if not args.quiet:
        print(f"{built} compiled, {cached} already cached in "
              f"{time.perf_counter() - t_all:.1f} s")
    return EXIT_FAILED if refused else 0
