"""``rrp``: the command line of RRP Studio, one room (``app/cli/``): this module is
``rrp list`` and ``rrp run``; each further command is a module of its own here
(:data:`COMMAND_MODULES`), the argument types are :mod:`.args`, the summary and progress
:mod:`.report`, the resume :mod:`.resume`.

``rrp list`` · ``rrp run SCENARIO [...]`` — headless runs with a progress bar, HDF5
output and a summary.  Every error is one line on stderr and a non-zero exit code
(2: bad input or an output another run writes, 1: the run failed or its file could not
be written, 130/143: interrupted by SIGINT/SIGTERM, :mod:`app.run_signals`); no
tracebacks (``RRP_DEBUG=1`` shows them for bugs).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..cold_start import INTERPRETED_MAX_BODIES
from ..errors import EXIT_FAILED, EXIT_INPUT, EXIT_INTERRUPTED, UsageError

# the argument types (app.cli.args: also used by the sub-command modules, which import
# them from here), the summary and progress (app.cli.report), the resume (app.cli.resume)
from .args import _any_float, _Parser, _positive_float, _positive_int, threads_arg
from .report import _drive, _report, _write_vtk
from .resume import _cmd_resume

__all__ = ["EXIT_FAILED", "EXIT_INPUT", "EXIT_INTERRUPTED", "UsageError", "main",
           "threads_arg", "_any_float", "_positive_float", "_positive_int"]


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="rrp", description="RRP Studio: structure-preserving rigid-body "
                "dynamics (rescaled Rodrigues parameters). See README.md.")
    p.add_argument("--version", action="store_true", help="print the version and exit")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    ls = sub.add_parser("list", help="list scenarios and integrators with their properties")
    ls.add_argument("--json", action="store_true", help="machine-readable output")

    run = sub.add_parser("run", help="run a scenario headless and summarise it")
    run.add_argument("scenario", nargs="?",
                     help="built-in scenario name (see 'rrp list') or a .toml path")
    run.add_argument("--resume", metavar="FILE",
                     help="continue the run in FILE (.h5 or a killed run's .h5.partial) to "
                          "--t-end, appending to it (or to --out), with its integrator and "
                          "h (-i/--h change them, recorded as events)")
    run.add_argument("--integrator", "-i", help="integrator name (default: the scenario's)")
    run.add_argument("--h", type=_any_float, help="time step (default: the scenario's)")
    run.add_argument("--t-end", type=_positive_float, help="end time (default: the scenario's)")
    run.add_argument("--every", type=_positive_int,
                     help="record every N steps (default: the scenario's)")
    run.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                     help="override a scenario parameter; the value is TOML "
                          "(--set 'omega0=[3,1,2]', --set wall=false)")
    run.add_argument("--out", "-o", help="write the run to this HDF5 file")
    run.add_argument("--compress", action="store_true",
                     help="LZF-compress a large model's frames in the --out file (about "
                          "2/3 of the size, several times the writer's time; docs/output.md)")
    run.add_argument("--no-frames", action="store_true",
                     help="do not store body positions/attitudes in the output file")
    run.add_argument("--energy-tolerance", type=_positive_float,
                     help="relative energy error that counts as a blow-up (default 1.0)")
    run.add_argument("--vtk", metavar="DIR",
                     help="also write the frames for ParaView: a .vtp per frame and a .pvd "
                          "collection in DIR (as 'rrp convert')")
    run.add_argument("--threads", type=threads_arg, metavar="N",
                     help="threads of the parallel force kernels (models of 4096 bodies or "
                     "more; the results do not depend on it; default: all cores)")
    run.add_argument("--json", action="store_true", help="print the summary as JSON")
    run.add_argument("--quiet", "-q", action="store_true", help="no progress bar or notes")

    # Further commands live in their own modules: each has ``register(sub)``, which adds
    # its sub-parser (argparse only: nothing heavy is imported before the command runs)
    # with ``set_defaults(handler=fn)``, ``fn(args) -> exit code``.
    import importlib

    for mod in COMMAND_MODULES:
        importlib.import_module(mod).register(sub)
    return p


COMMAND_MODULES: tuple[str, ...] = (
    "app.cli.gui",
    "app.cli.export",
    "app.cli.studies",
    "app.cli.convert",
    "app.cli.compile",
    "app.cli.import_lammps",
)
"""Modules that add a sub-command (see :func:`build_parser`)."""


# ---------------------------------------------------------------------------- commands
def cmd_list(args: argparse.Namespace) -> int:
    from engine.integrators import INTEGRATORS
    from engine.scenarios import builtin_scenarios, load_scenario

    scen = []
    for name in builtin_scenarios():
        sc = load_scenario(name)
        scen.append({"name": name, "model": sc.model, "title": sc.title,
                     "integrator": sc.run.integrator, "h": sc.run.h, "t_end": sc.run.t_end})
    if args.json:
        print(json.dumps({"scenarios": scen,
                          "integrators": [i.as_dict() for i in INTEGRATORS.values()]},
                         indent=2))
        return 0
    print("Scenarios (rrp run NAME, or a path to your own .toml):")
    w = max(len(s["name"]) for s in scen)
    for s in scen:
        print(f"  {s['name']:<{w}}  {s['title']}  [{s['model']}; default "
              f"{s['integrator']}, h = {s['h']:g}, t_end = {s['t_end']:g}]")
    print("\nIntegrators (--integrator NAME):")
    w = max(len(n) for n in INTEGRATORS)
    for info in INTEGRATORS.values():
        print(f"  {info.name:<{w}}  {info.title} — {info.properties()}; {info.reference}")
    return 0


def _prime_in_a_subprocess(tty: bool, model, integrator: str) -> list:
    """When the kernel cache lacks this run's stepping loop (a fresh install, a new
    version, a scheme or model not run before), compile the run's kernels
    (``engine.priming``: its scheme and its model's terms only) in a process of their
    own, on a one-body stand-in (two processes: the chain of calls that must be
    compiled in order, and the kernels beside it), as Numba keeps ≈ 0.6 GB of the
    compiler's memory in the process that compiles, on top of the model's (a first
    10⁶-sphere run peaked at 2.43 GB instead of 1.91; BENCHMARKS.md).  This process
    then loads them from the cache.

    A model of at most ``INTERPRETED_MAX_BODIES`` bodies does not wait: the processes
    are returned, still compiling, and the run steps with the kernels' uncompiled twins
    meanwhile (``engine.interpreted``, the same bits), swapping to the compiled loop at
    the first chunk after it is in the cache (issue #45).  Else they are waited for and
    ``[]`` is returned."""
    from engine.integrators.registry import get_integrator
    from engine.priming import run_kernels_cached, spawn_priming

    if getattr(model, "coordinates", "bodies") != "bodies":
        return []  # (the generalized-coordinate kernels are small: compiled in the run)
    try:
        info = get_integrator(integrator)
    except KeyError:
        return []  # (the run reports it)
    if info.event_driven:  # (no stepping loop: energy-stepping's kernels are small, and
        return []  # its models at most a few thousand bodies; the run builds them)
    scheme = info.scheme_id
    family = model.forcefield.arrays[-1]
    if run_kernels_cached(scheme, family):
        return []
    small = model.forcefield.n_bodies <= INTERPRETED_MAX_BODIES
    if tty:
        print(f"compiling the kernels of {integrator} on this model (first use only)"
              + ("; stepping interpreted meanwhile…" if small else "…"),
              file=sys.stderr, flush=True)
    # the chain forces → step → loop in one process, the kernels beside it in another,
    # on the second core (engine.priming.prime_sibling_kernels); a failure here is the
    # main process's to report: it compiles what is missing itself
    procs = [spawn_priming(scheme, family, "run"), spawn_priming(scheme, family, "siblings")]
    if small:
        return procs
    for p in procs:
        p.wait()
    return []


def cmd_run(args: argparse.Namespace) -> int:
    """``rrp run``.  The output's lock is taken before anything slow (a second run on
    the same ``--out`` is refused at once); a signal raises at once only while no file
    is open (:meth:`~app.run_signals.RunSignals.immediate`), else it stops the run
    between chunks and the file is closed ``interrupted``."""
    from ..run_signals import RunSignals

    signals = getattr(args, "signals", None) or RunSignals()
    with signals.immediate():
        from engine.drivers import simulation_for
        from engine.io import OutputLock, RunWriter
        from engine.run_steps import step_count
        from engine.scenarios import parse_sets

        if args.threads is not None:
            from engine.parallel import set_threads

            set_threads(args.threads)
    if args.resume:
        return _cmd_resume(args, signals)
    if args.scenario is None:
        raise UsageError("give a scenario (see 'rrp list') or --resume FILE "
                         "(see 'rrp run --help')")
    with signals.immediate():
        overrides = parse_sets(args.set)
        sc = _load(args.scenario, overrides)
        run = sc.run
        h = args.h if args.h is not None else run.h
        # (without one: the stages' total at this h, issue #44 item 5)
        t_end = args.t_end if args.t_end is not None else sc.t_end_at(h)
        n_total = step_count(t_end, h)  # SimulationError: one line, exit 2
        vtk_dir, tmp = _vtk_target(args)
    out = args.out or (str(tmp / "run.h5") if tmp is not None else None)
    if out:
        from ..resume_checks import check_out

        check_out(Path(out))
    lock = OutputLock(out).acquire() if out else None
    writer = None
    stack = contextlib.ExitStack()
    try:
        from engine.interpreted import interpret_while_cold

        with signals.immediate():
            every = args.every or run.every
            tol = args.energy_tolerance or run.energy_tolerance
            with interpret_while_cold():  # (the model's own kernels, the look in the
                model = sc.build_model()  # cache: small arguments run uncompiled)
                integrator = _scheme(args, sc, model, bool(overrides))
                compiling = _prime_in_a_subprocess(sys.stderr.isatty() and not args.quiet,
                                                   model, integrator)
            if compiling:  # the kernels' twins step while those processes compile the
                stack.enter_context(interpret_while_cold())  # run's (issue #45)
            frames = bool(args.out or args.vtk) and not args.no_frames
            sim = simulation_for(model, integrator, h, record_every=every, record_frames=frames,
                             energy_tolerance=tol, record_state=frames)
            tty = sys.stderr.isatty() and not args.quiet
            if tty:
                print("preparing kernels (compiled once, then cached)…", file=sys.stderr,
                      flush=True)
            t_prep = time.perf_counter()
            sim.warm_up()
            t_prep = time.perf_counter() - t_prep
            sim.t_end = t_end  # (the estimate counts the wall impacts before it)
            stab = sim.stability()
            guide = sim.accuracy_guide()
        if h > stab.h_stable and not args.quiet:
            print(f"warning: h = {h:g} exceeds the {stab.describe()}; the run may blow up",
                  file=sys.stderr)
        elif h > guide and not args.quiet:
            print(f"warning: h = {h:g} is past the accuracy guide h ≈ {guide:.2g} for ≈ 1 % "
                  "energy error (docs/physics.md §7): expect a larger error", file=sys.stderr)
        signals.check()
        # the summary needs t, the energies and the momenta only: frames live in the file
        writer = (RunWriter(out, sim, scenario=sc.name, keep_frames=False, background=True,
                            lock=lock, t_end=t_end, compress=args.compress) if out else None)
        outcome = _drive(args, sim, writer, n_total, t_end, tty, signals)
        if outcome.error is not None:
            raise outcome.error
        a = sim.series.arrays()
        code = _report(args, sim, a, outcome, sc.name, sc.title, h, t_end, t_prep, stab,
                       guide)
        if vtk_dir is not None and outcome.path is not None and outcome.path.exists():
            _write_vtk(str(outcome.path), vtk_dir, args.quiet)
    finally:
        stack.close()
        if writer is None and lock is not None:
            lock.release()
        if tmp is not None:
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)
    return code


def _scheme(args: argparse.Namespace, sc, model, overridden: bool) -> str:
    """The run's scheme: ``-i`` (checked by the engine when the run is built), else the
    scenario's ``run.integrator``, refused as ``-i`` would be when it cannot drive the
    model the file describes (one line with the engine's reason).  Where ``--set``
    changed the model (``--set contact=hard``), the model's natural scheme replaces it,
    with a note saying why."""
    from engine.simulation import SimulationError, default_integrator, integrator_for

    if args.integrator:
        return args.integrator
    try:
        return integrator_for(model, sc.run.integrator).name
    except SimulationError as exc:
        if not overridden:
            raise UsageError(f"scenario {sc.name!r}, run.integrator: {exc} (in the file, "
                             "or with -i)") from None
        reason = str(exc).split(": choose one of")[0]
    integrator = default_integrator(model, sc.run.integrator)
    if not args.quiet:
        print(f"note: the scenario's {sc.run.integrator} cannot drive the model as --set "
              f"changed it: {reason}; using {integrator}", file=sys.stderr)
    return integrator


def _vtk_target(args: argparse.Namespace):
    """``(DIR, temporary directory or None)`` for ``--vtk DIR``: the frames go through an
    HDF5 run file (``--out``, or a temporary one), then ``engine.io.vtk.export_vtk``."""
    if not args.vtk:
        return None, None
    if args.no_frames:
        raise UsageError("--vtk needs the frames: leave out --no-frames")
    d = Path(args.vtk)
    if d.exists() and not d.is_dir():
        raise UsageError(f"--vtk {args.vtk!r} is a file, not a directory")
    if not d.parent.exists():
        raise UsageError(f"--vtk: the directory {str(d.parent)!r} does not exist")
    import pyvista  # noqa: F401  (the gui extra; fails before the run, not after)

    if args.out:
        return d, None
    import tempfile

    return d, Path(tempfile.mkdtemp(prefix="rrp-vtk-"))


EXTRAS: dict[str, tuple[str, ...]] = {
    "gui": ("PyQt6", "pyvista", "pyvistaqt", "pyqtgraph", "imageio", "imageio_ffmpeg", "vtk",
            "vtkmodules"),
    "studies": ("dask", "distributed", "pandas", "matplotlib"),
}
"""The optional dependency groups of pyproject.toml, by the top-level modules they bring."""


def missing_extra(module: str) -> str | None:
    """The extra (``gui`` or ``studies``) that installs ``module``, if any."""
    top = module.split(".", 1)[0]
    for extra, mods in EXTRAS.items():
        if top in mods:
            return extra
    return None


def _load(name: str, overrides: dict[str, Any]):
    from engine.scenarios import load_scenario

    return load_scenario(name, overrides)


# ---------------------------------------------------------------------------- entry
def main(argv: Sequence[str] | None = None, early: tuple | None = None) -> int:
    """Entry point of the ``rrp`` console script.  ``rrp run`` handles SIGINT and
    SIGTERM (:mod:`app.run_signals`): exit code 130/143 whatever the moment, also once
    the summary is printed.  Called as the program (``argv=None``), ``rrp run`` ends
    the process itself once all is written and closed (``os._exit``): the interpreter's
    own exit would reset the handlers (a signal then gave −2) and finalise h5py.
    Called with ``argv``, the previous handlers are restored and the code returned.
    ``early``: ``(signals received, handlers to restore)`` of ``python -m app``, which
    records SIGINT/SIGTERM while the command line is imported."""
    state: dict[str, Any] = {"early": early}
    code = _main(argv, state)
    signals = state.get("signals")
    if signals is None:
        return code
    if argv is not None:
        signals.restore()
        _print_late(signals)
        return signals.exit_code or code
    signals.finished()  # (from now a signal exits at once with its code)
    _print_late(signals)
    code = signals.exit_code or code
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


WRITERS = ("export", "convert", "import")
"""The commands that write outputs other than run files: they take SIGINT and SIGTERM
as ``rrp run`` does (:class:`~app.run_signals.RunSignals`), and end with 0, 1, 2, 130 or
143 and one line saying whether the output is whole, also for a signal that comes once
they are done (issue #46 item 5)."""


def _print_late(signals) -> None:
    line = signals.late_line()
    if line:
        print(line, file=sys.stderr)


def _main(argv: Sequence[str] | None, state: dict[str, Any]) -> int:
    from ..run_signals import RunSignals, Stopped

    early, old = state.get("early") or ([], {})
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command == "run":
            args.signals = state["signals"] = RunSignals().install(early, old)
        elif args.command in WRITERS:
            args.signals = state["signals"] = RunSignals().install(early, old)
            args.signals.after = ("rrp: stopped by {signal} as rrp " + args.command
                                  + " ended: nothing was written")
            args.signals.check()  # (one before now: Stopped, nothing started)
        else:
            for s, h in old.items():
                signal.signal(s, h)
            if early:
                raise Stopped(early[0])
        if args.version:
            from engine import __version__

            print(f"rrp-studio {__version__}")
            return 0
        if args.command is None:
            parser.print_help()
            return EXIT_INPUT
        handler = {"list": cmd_list, "run": cmd_run}.get(args.command) or args.handler
        return handler(args)
    except UsageError as exc:
        print(f"rrp: error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except Stopped as exc:
        what = "the run started (nothing was written)" if getattr(args, "command", "") \
            == "run" else "it started" + (" (nothing was written)" if getattr(
                args, "command", "") in WRITERS else "")
        print(f"rrp: stopped by {exc.name} before {what}", file=sys.stderr)
        if state.get("signals") is not None:
            state["signals"].reported = True
        return exc.exit_code
    except KeyboardInterrupt:
        print("rrp: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except ModuleNotFoundError as exc:
        stop = _stopped_in(exc)
        if stop is not None:
            print(f"rrp: stopped by {stop.name} before the run started (nothing was "
                  "written)", file=sys.stderr)
            return stop.exit_code
        extra = missing_extra(exc.name or "")
        if extra is None:
            raise_or_report = True
        else:
            what = f"rrp {getattr(args, 'command', '') or ''}".rstrip()
            print(f"rrp: error: {what} needs the optional package {exc.name!r}: install the "
                  f"{extra!r} extra, pip install 'rrp-studio[{extra}]' (in a source checkout: "
                  f"pip install -e '.[{extra}]')", file=sys.stderr)
            return EXIT_INPUT
        if raise_or_report and os.environ.get("RRP_DEBUG"):
            raise
        print(f"rrp: internal error: ModuleNotFoundError: {exc} (please report it; "
              "RRP_DEBUG=1 shows the traceback)", file=sys.stderr)
        return EXIT_FAILED
    except Exception as exc:  # one line, never a traceback
        stop = _stopped_in(exc)
        if stop is not None:  # (a signal raised in an import, and wrapped: still a stop)
            print(f"rrp: stopped by {stop.name} before the run started (nothing was "
                  "written)", file=sys.stderr)
            return stop.exit_code
        from engine.scenarios import ScenarioError
        from engine.simulation import SimulationError

        if isinstance(exc, ScenarioError | SimulationError):
            print(f"rrp: error: {exc}", file=sys.stderr)
            return EXIT_INPUT
        from engine.io import OutputWriteError
        from engine.io.atomic import OutputError

        if isinstance(exc, OutputWriteError | OutputError):  # (the file could not be
            # started; an output that could not be written whole: issue #46 item 2)
            print(f"rrp: error: {exc}", file=sys.stderr)
            return EXIT_FAILED
        if isinstance(exc, OSError):
            print(f"rrp: error: {exc.strerror or exc}: {getattr(exc, 'filename', '') or ''}"
                  .rstrip(": "), file=sys.stderr)
            return EXIT_INPUT
        if os.environ.get("RRP_DEBUG"):
            raise
        print(f"rrp: internal error: {type(exc).__name__}: {exc} "
              "(please report it; RRP_DEBUG=1 shows the traceback)", file=sys.stderr)
        return EXIT_FAILED


def _stopped_in(exc: BaseException):
    """The :class:`~app.run_signals.Stopped` that ``exc`` was raised from, if any (Python
    wraps an exception raised while a class is made, e.g. during an import)."""
    from ..run_signals import Stopped

    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, Stopped):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


if __name__ == "__main__":
    sys.exit(main())
