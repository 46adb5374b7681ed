"""``rrp sweep`` (grids of runs on Dask) and ``rrp figures`` (B&G Figs. 1, 4–7, the
spring pendulum of Capobianco et al. Fig. 2, the torus with hard contacts, the
energy-stepping figures of issue #28, and a report).  See docs/studies.md.

Only argparse here: the engine, Dask and matplotlib are imported when a command runs.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable

from ..errors import EXIT_INTERRUPTED, UsageError
from . import _positive_float, _positive_int, threads_arg

FIGURE_SETS = ("paper", "energy-stepping")


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``sweep`` and ``figures`` sub-commands to the ``rrp`` parser."""
    p = sub.add_parser(
        "sweep", help="run a grid scenario × integrator × h (× --set values) on Dask",
        description="Run every combination of scenarios, integrators, steps and parameter "
                    "values in parallel (a Dask LocalCluster by default), and write one row "
                    "per run (error measures, energy error, momentum drifts, run time) to "
                    "a CSV (or .parquet) table as the runs finish. Re-running the same "
                    "command resumes: rows already in the output are skipped.")
    p.add_argument("scenarios", nargs="+", metavar="SCENARIO",
                   help="built-in scenario names or .toml paths")
    p.add_argument("--integrators", "-i", required=True, metavar="NAME[,NAME…]",
                   help="comma-separated integrator names (see 'rrp list')")
    p.add_argument("--h", required=True, nargs="+", type=_positive_float, metavar="H",
                   help="time steps, e.g. --h 1e-3 5e-4 2.5e-4")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="scenario parameter (TOML value); repeat a key to sweep over its "
                        "values: --set v0=1 --set v0=2")
    p.add_argument("--t-end", type=_positive_float, help="end time (default: the scenario's)")
    p.add_argument("--dt-sample", type=_positive_float,
                   help="sampling interval of the error norms, a multiple of every h "
                        "(default: a multiple of the largest h, ≤ 2000 samples)")
    p.add_argument("--ref-integrator", default="rk4",
                   help="integrator of the reference runs: a name, 'same' (each scheme its "
                        "own), or 'none' (no trajectory errors). Default rk4")
    p.add_argument("--h-ref", type=_positive_float,
                   help="step of the reference runs (default: min(h)/8)")
    p.add_argument("--out", "-o", default="sweep.csv",
                   help="output table, .csv or .parquet (default sweep.csv)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="address of a running Dask scheduler (default: start a LocalCluster)")
    p.add_argument("--workers", type=_positive_int,
                   help="LocalCluster worker processes (default: one per core)")
    p.add_argument("--threads", type=threads_arg, metavar="N",
                   help="threads of each run's parallel force kernels (models of 4096 bodies "
                   "or more; default: all cores, shared among the LocalCluster's workers)")
    p.add_argument("--serial", action="store_true", help="run in this process, without Dask")
    p.add_argument("--cache-dir", help="reference-run cache (default $RRP_CACHE_DIR or "
                                       "~/.cache/rrp-studio/reference)")
    p.add_argument("--energy-tolerance", type=_positive_float, default=1.0,
                   help="relative energy error that counts as a blow-up (default 1.0)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar or summary")
    p.set_defaults(handler=cmd_sweep)

    f = sub.add_parser("figures", help="regenerate Baker & Gonzalez Figs. 1, 4–7, Capobianco et "
                                       "al. Fig. 2 (spring pendulum) and a report",
                       description="Compute the paper's studies, draw the figures (PNG) and "
                                   "write report.md stating, for each claim, whether it was "
                                   "reproduced and the measured number.")
    f.add_argument("--out", "-o", default="figures", metavar="DIR",
                   help="output directory (default ./figures)")
    f.add_argument("--quick", action="store_true",
                   help="fewer steps (a few minutes at most on 2 cores)")
    f.add_argument("--cache-dir", help="reference-run cache (default $RRP_CACHE_DIR or "
                                       "~/.cache/rrp-studio/reference)")
    f.add_argument("--only", choices=FIGURE_SETS, metavar="SET",
                   help="one set of figures: 'paper' (B&G, Capobianco et al., the "
                        "dumbbells; rewrites report.md) or 'energy-stepping' (issue #28; "
                        "replaces only its section of report.md). Default: both")
    f.add_argument("--quiet", "-q", action="store_true", help="no progress notes")
    f.set_defaults(handler=cmd_figures)


def _note(args: argparse.Namespace) -> Callable[[str], None]:
    return (lambda msg: None) if args.quiet else (
        lambda msg: print(msg, file=sys.stderr, flush=True))


def cmd_sweep(args: argparse.Namespace) -> int:
    from engine.scenarios import parse_set
    from engine.studies import StudyError
    from engine.studies.convergence import slopes
    from engine.studies.sweep import parameter_grid, plan, run_sweep

    integrators = [s.strip() for s in args.integrators.split(",") if s.strip()]
    ref = None if args.ref_integrator.lower() == "none" else args.ref_integrator
    note = _note(args)
    try:
        grid = parameter_grid(parse_set(e) for e in args.set) or [{}]
        specs = plan(args.scenarios, integrators, args.h, parameter_sets=grid,
                     t_end=args.t_end, dt_sample=args.dt_sample, h_ref=args.h_ref,
                     ref_integrator=ref, energy_tolerance=args.energy_tolerance)
    except StudyError as exc:
        raise UsageError(str(exc)) from None
    done = [0]

    def on_row(row: dict) -> None:
        done[0] += 1

    scheduler = "serial" if args.serial else args.scheduler
    t0 = time.perf_counter()
    try:
        rows = run_sweep(specs, args.out, scheduler=scheduler, workers=args.workers,
                         threads=args.threads, cache=args.cache_dir,
                         progress=sys.stderr.isatty() and not args.quiet,
                         on_row=on_row, log=note)
    except StudyError as exc:
        raise UsageError(str(exc)) from None
    except KeyboardInterrupt:
        print(f"rrp: interrupted; {done[0]} new row(s) kept in {args.out}; run the same "
              "command again to resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    if not args.quiet:
        _print_rows(rows, args.out, time.perf_counter() - t0)
        by_group: dict[tuple, list[dict]] = {}
        for r in rows:
            by_group.setdefault((r["scenario"], r["set"], r["t_end"]), []).append(r)
        for (scen, sets, t_end), rs in by_group.items():
            if len({r["h"] for r in rs}) > 1:
                print(f"fitted slopes, {scen} {sets if sets != '{}' else ''} t_end = {t_end:g}:")
                for s in slopes(rs):
                    if math.isfinite(s.slope):
                        print(f"  {s.integrator:<12} {s.measure:<14} {s.slope:6.3f}  "
                              f"(theory {s.expected:g})")
    failed = [r for r in rows if r["status"] != "complete"]
    if failed:
        print(f"rrp: {len(failed)} run(s) blew up (status 'failed' in {args.out}); e.g. "
              f"{failed[0]['message']}", file=sys.stderr)
    return 0


def _print_rows(rows: list[dict], out: str, seconds: float) -> None:
    print(f"{len(rows)} run(s) in {out} ({seconds:.1f} s)")
    print(f"  {'scenario':<10} {'integrator':<12} {'h':>10} {'E-error':>10} {'q-paper':>10} "
          f"{'H1':>10} {'max|dE|/E':>10}  status")
    for r in rows:
        print(f"  {r['scenario']:<10} {r['integrator']:<12} {r['h']:>10.4g} "
              f"{r['e_error']:>10.3e} {r['q_error_paper']:>10.3e} {r['h1_error']:>10.3e} "
              f"{r['max_energy_error']:>10.3e}  {r['status']}")


def cmd_figures(args: argparse.Namespace) -> int:
    from pathlib import Path

    note = _note(args)
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create the output directory {out}: {exc.strerror}") from None
    sets = FIGURE_SETS if args.only is None else (args.only,)
    t0 = time.perf_counter()
    printed: list[Path] = []
    es_block = None
    if "energy-stepping" in sets:
        from engine.studies import energy_stepping, figures_energy_stepping
        from engine.studies import report_energy_stepping as es_report

        note(f"energy-stepping studies ({'quick' if args.quick else 'full'} mode)…")
        t_es = time.perf_counter()
        es = energy_stepping.compute(energy_stepping.config(args.quick), cache=args.cache_dir,
                                     log=note)
        es_paths = figures_energy_stepping.draw_all(es, out)
        printed += es_paths
        command = "rrp figures" + ("" if args.only is None else f" --only {args.only}")
        es_block = es_report.section(es, es_paths, time.perf_counter() - t_es, command)
    if "paper" in sets:
        from engine.studies import dumbbells, figures, paper, report

        note(f"computing the studies ({'quick' if args.quick else 'full'} mode)…")
        data = paper.compute(paper.config(args.quick), cache=args.cache_dir, log=note)
        note("drawing the figures…")
        paths = figures.draw_all(data, out)
        note("the two-dumbbell runs (LLM Figs. 4–6)…")
        runs = dumbbells.compute()
        db_paths = dumbbells.draw(runs, out)
        db_rep = dumbbells.write(runs, db_paths, out)
        rep = report.write_report(data, paths, out, time.perf_counter() - t0, dumbbells=runs,
                                  sections=[es_block] if es_block else [])
        printed = [*paths, rep, *db_paths, db_rep, *printed]
    elif es_block is not None:
        printed.append(es_report.update(out / "report.md", es_block))
    if not args.quiet:
        for p in printed:
            print(p)
    return 0
