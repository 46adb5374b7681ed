"""``rrp``: the command line of RRP Studio.

``rrp list`` · ``rrp run SCENARIO [...]`` — headless runs with a progress bar, HDF5
output and a summary.  Every error is one line on stderr and a non-zero exit code
(2: bad input or an output another run writes, 1: the run failed or its file could not
be written, 130/143: interrupted by SIGINT/SIGTERM, :mod:`app.run_signals`); no
tracebacks (``RRP_DEBUG=1`` shows them for bugs).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .errors import EXIT_FAILED, EXIT_INPUT, EXIT_INTERRUPTED, UsageError

__all__ = ["EXIT_FAILED", "EXIT_INPUT", "EXIT_INTERRUPTED", "UsageError", "main"]


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message} (see '{self.prog} --help')")


def _positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(v) or v <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return v


def _positive_int(text: str) -> int:
    from engine.run_steps import MAX_STEPS

    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if not 1 <= v <= MAX_STEPS:
        raise argparse.ArgumentTypeError(f"must be an integer from 1 to {MAX_STEPS:.0e} "
                                         f"(no run takes more steps), got {text[:40]}")
    return v


def threads_arg(text: str) -> int:
    """``--threads N``: 1 ≤ N ≤ NUMBA_NUM_THREADS (checked without compiling anything)."""
    from engine.parallel import max_threads

    top = max_threads()
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if not 1 <= v <= top:
        raise argparse.ArgumentTypeError(f"must be from 1 to {top} (the cores Numba may "
                                         f"use, NUMBA_NUM_THREADS), got {text}")
    return v


def _any_float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


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
    "app.cli_gui",
    "app.cli_export",
    "app.cli_studies",
    "app.cli_convert",
    "app.cli_compile",
    "app.cli_import",
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


def _prime_in_a_subprocess(tty: bool, model, integrator: str) -> None:
    """When the kernel cache lacks this run's stepping loop (a fresh install, a new
    version, a scheme or model not run before), compile the run's kernels
    (``engine.priming``: its scheme and its model's terms only) in a process of their
    own, on a one-body stand-in (two processes: the chain of calls that must be
    compiled in order, and the kernels beside it), as Numba keeps ≈ 0.6 GB of the
    compiler's memory in the process that compiles, on top of the model's (a first
    10⁶-sphere run peaked at 2.43 GB instead of 1.91; BENCHMARKS.md).  This process
    then loads them from the cache."""
    from engine.integrators.registry import get_integrator
    from engine.priming import run_kernels_cached, spawn_priming

    if getattr(model, "coordinates", "bodies") != "bodies":
        return  # (the generalized-coordinate kernels are small: compiled in the run)
    try:
        info = get_integrator(integrator)
    except KeyError:
        return  # (the run reports it)
    if info.event_driven:  # (no stepping loop: energy-stepping's kernels are small, and
        return  # its models at most a few thousand bodies; the run builds them)
    scheme = info.scheme_id
    family = model.forcefield.arrays[-1]
    if run_kernels_cached(scheme, family):
        return
    if tty:
        print(f"compiling the kernels of {integrator} on this model (first use only)…",
              file=sys.stderr, flush=True)
    # the chain forces → step → loop in one process, the kernels beside it in another,
    # on the second core (engine.priming.prime_sibling_kernels); a failure here is the
    # main process's to report: it compiles what is missing itself
    procs = [spawn_priming(scheme, family, "run"), spawn_priming(scheme, family, "siblings")]
    for p in procs:
        p.wait()


def cmd_run(args: argparse.Namespace) -> int:
    """``rrp run``.  The output's lock is taken before anything slow (a second run on
    the same ``--out`` is refused at once); a signal raises at once only while no file
    is open (:meth:`~app.run_signals.RunSignals.immediate`), else it stops the run
    between chunks and the file is closed ``interrupted``."""
    from .run_signals import RunSignals

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
        t_end = args.t_end if args.t_end is not None else run.t_end
        n_total = step_count(t_end, h)  # SimulationError: one line, exit 2
        vtk_dir, tmp = _vtk_target(args)
    out = args.out or (str(tmp / "run.h5") if tmp is not None else None)
    if out:
        from .resume_checks import check_out

        check_out(Path(out))
    lock = OutputLock(out).acquire() if out else None
    writer = None
    try:
        with signals.immediate():
            every = args.every or run.every
            tol = args.energy_tolerance or run.energy_tolerance
            model = sc.build_model()
            integrator = _scheme(args, sc, model, bool(overrides))
            _prime_in_a_subprocess(sys.stderr.isatty() and not args.quiet, model, integrator)
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


def _write_vtk(run_file: str, directory, quiet: bool) -> None:
    from engine.io.vtk import VTKExportError, export_vtk

    try:
        files = export_vtk(run_file, directory, warn=lambda m: print(f"rrp: warning: {m}",
                                                                    file=sys.stderr))
    except VTKExportError as exc:
        raise UsageError(f"--vtk: {exc}") from None
    if not quiet:
        n = sum(1 for f in files if f.suffix == ".vtp")
        pvd = [f for f in files if f.suffix == ".pvd"]
        print(f"  paraview    {n} frames in {directory}/ (open {pvd[0].name if pvd else ''})")


def _report(args, sim, a, outcome, scenario, title, h, t_end, t_prep,
            stab, guide: float | None = None) -> int:
    """Print the summary, then what ended the run (one line for an interrupted run or
    a file that could not be written, :func:`app.run_loop.outcome_line`); the exit
    code."""
    import numpy as np

    from .run_loop import outcome_line

    status, message, code = outcome.status, outcome.message, outcome.code
    if outcome.write_error is not None:
        message = outcome.write_error.message

    from engine import __version__
    from engine.diagnostics import fixed_momenta, momentum_drift

    model = sim.model
    total = a["energy"].sum(axis=1)
    rel = (total - sim.e_ref) / sim.e_scale
    drift = momentum_drift(a["P"], a["L"])
    scale = {k: (sim.p_scale if k.startswith("P") else sim.l_scale) for k in drift}
    us = 1e6 * sim.kernel_seconds / sim.kernel_steps if sim.kernel_steps else float("nan")
    cpu = (1e6 * sim.kernel_cpu_seconds / sim.kernel_steps if sim.kernel_steps
           else float("nan"))  # (the stepping thread's own CPU: issue #36 item 15)
    events = _event_summary(sim, a, total) if sim.integrator.event_driven else {}
    summary: dict[str, Any] = {
        "scenario": scenario,
        "model": model.name,
        "integrator": sim.integrator.name,
        "h": h,
        "t_end": t_end,
        "t_reached": sim.t,
        "steps": sim.step_index,
        "status": status,
        "message": message,
        "max_relative_energy_error": float(np.max(np.abs(rel))),
        "final_relative_energy_error": float(rel[-1]),
        "momentum_drift": drift,
        "momentum_drift_relative": {k: drift[k] / scale[k] for k in drift},
        "conserved": list(model.conserved),
        "identically_zero": list(fixed_momenta(model.forcefield)),
        "stability_limit_h": stab.h_stable,
        "accuracy_guide_h": sim.accuracy_guide() if guide is None else guide,
        "us_per_step": us,
        "us_per_step_cpu": cpu,
        "steps_per_second": 1e6 / us if us == us and us > 0 else None,
        "startup_seconds": t_prep,
        "records": int(len(a["t"])),
        "output": str(outcome.path) if outcome.path is not None else args.out,
        "version": __version__,
        "parameters": model.params,
        **events,
    }
    if args.json:
        print(json.dumps(summary, indent=2, default=float))
    else:
        _print_summary(summary, title, sim.integrator.properties())
    line = outcome_line(outcome, sim, t_end, getattr(outcome, "writer", None))
    if line is not None:
        print(line, file=sys.stderr)
    elif status == "failed":
        print(f"rrp: error: {message}", file=sys.stderr)
        if args.out:
            print(f"rrp: the output file {outcome.path or args.out} holds the run up to "
                  f"t = {sim.t:.6g}", file=sys.stderr)
    return code


def _cmd_resume(args: argparse.Namespace, signals) -> int:
    """``rrp run --resume FILE``: continue a run from its file's checkpoint, under the
    lock of the output (taken first: a second writer of it is refused at once)."""
    from pathlib import Path

    from engine.io import output_for

    from .resume_checks import check_out, resume_locks

    for flag, given in (("a scenario", args.scenario), ("--set", args.set),
                        ("--every", args.every), ("--no-frames", args.no_frames),
                        ("--compress", args.compress)):
        if given:
            raise UsageError(f"--resume continues the run as it was recorded: {flag} "
                             "cannot be given with it")
    src = Path(args.resume)
    try:
        str(src).encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(f"cannot resume: the name {ascii(str(src))} is not valid UTF-8: "
                         "rename the file") from None
    if not src.exists():
        raise UsageError(f"cannot resume: {src}: no such file")
    if args.out:
        check_out(Path(args.out))
    src_out = output_for(src, read=False)
    lock, source_lock, out = resume_locks(args, src, src_out)
    if output_for(src) != src_out:  # (a .partial whose name says less)
        lock.release()
        if source_lock is not None:
            source_lock.release()
        lock, source_lock, out = resume_locks(args, src, output_for(src))
    if not args.out:
        check_out(out)
    try:
        return _resume_locked(args, signals, src, out, lock, source_lock)
    finally:
        lock.release()  # (idempotent: the writer released it on close)
        if source_lock is not None:
            source_lock.release()


def _resume_locked(args: argparse.Namespace, signals, src, out, lock, source_lock) -> int:
    from engine import __version__
    from engine.drivers import simulation_from_resume_state
    from engine.io import RunFile, RunFileError, RunWriter
    from engine.run_steps import step_count
    from engine.scenarios import load_scenario
    from engine.simulation import SimulationError

    try:
        rf = RunFile(src)
    except RunFileError as exc:
        raise UsageError(f"cannot resume: {exc}") from None
    try:
        if rf.status == "running":
            raise UsageError(f"cannot resume: {src} is still being written (process "
                             f"{rf.writer_pid or '?'}); wait for it or stop it")
        for note in rf.check_resumable():  # a damaged file is refused before anything is written
            if not args.quiet:
                print(f"note: {note}", file=sys.stderr)
        d, n_records = rf.resume_state()
        model = rf.build_model()
        scenario, version = rf.scenario, str(d.get("version", rf.version))
        t_file = float(d["t"])
        target = rf._f.attrs.get("t_end")
        status = rf.status
    except RunFileError as exc:
        raise UsageError(f"cannot resume: {exc}") from None
    finally:
        rf.close()
    if version != __version__ and not args.quiet:
        print(f"note: {src} was written by RRP Studio {version}, this is {__version__}: the "
              "continuation may differ from an unbroken run in the last digits",
              file=sys.stderr)
    from .resume_checks import finish_or_continue

    finish = finish_or_continue(args, src, d, t_file, target, status)
    try:
        sim = simulation_from_resume_state(
            model, d, energy_tolerance=args.energy_tolerance or "keep")
    except SimulationError as exc:
        raise UsageError(f"cannot resume {src}: {exc}") from None
    if args.integrator or args.h is not None:
        name = args.integrator or sim.integrator.name
        h = args.h if args.h is not None else sim.h
        sim.check_h(h, name)  # SimulationError: one line, exit 2
        try:  # each change is recorded as an event
            sim.set_integrator(name)
        except SimulationError:  # the new scheme needs the new step first
            sim.set_h(h)
            sim.set_integrator(name)
        else:
            sim.set_h(h)
    n_total = 0 if finish else step_count(args.t_end, sim.h, sim._t_base,
                                          sim.step_index - sim._step_base)
    tty = sys.stderr.isatty() and not args.quiet
    with signals.immediate():
        t_prep = time.perf_counter()
        sim.warm_up()
        t_prep = time.perf_counter() - t_prep
        stab = sim.stability()
    if sim.h > stab.h_stable and not args.quiet:
        print(f"warning: h = {sim.h:g} exceeds the {stab.describe()}; the run may blow up",
              file=sys.stderr)
    signals.check()
    try:
        writer = RunWriter.resume(out, sim, src, n_records, keep_frames=False,
                                  background=True, lock=lock, t_end=args.t_end,
                                  source_lock=source_lock)
    except RunFileError as exc:  # (its copy failed its checks)
        raise UsageError(f"cannot resume: {exc}") from None
    if args.quiet:
        pass
    elif finish:
        print(f"finishing {src}: it holds the whole run, to t = {sim.t:.6g} (its writer "
              f"stopped while closing it) → {out}", file=sys.stderr)
    else:
        print(f"resuming {src} at t = {sim.t:.6g} (step {sim.step_index}) with "
              f"{sim.integrator.name}, h = {sim.h:g}, to t = {args.t_end:g} → {out}",
              file=sys.stderr)
    outcome = _drive(args, sim, writer, n_total, args.t_end, tty, signals)
    if outcome.error is not None:
        raise outcome.error
    title = load_scenario(scenario).title if _is_builtin(scenario) else scenario
    a = sim.series.arrays()
    try:  # the summary covers the whole run, as in the file
        with RunFile(outcome.path) as done:
            a = {"t": done.times, "energy": done.energy["total"][:, None], "P": done.P,
                 "L": done.L}
    except (RunFileError, TypeError, KeyError, OSError):
        pass  # (a file that could not be written: the summary of this part)
    args.out = str(outcome.path or out)
    return _report(args, sim, a, outcome, scenario, title, sim.h, args.t_end, t_prep, stab)


def _is_builtin(name: str) -> bool:
    from engine.scenarios import builtin_scenarios

    return name in builtin_scenarios()


def _event_summary(sim, a: dict, total) -> dict[str, Any]:
    """What an event-driven run (energy-stepping) adds to the summary: its events, ``ε``
    (absolute, and relative to the energy scale), the terraced terms and the largest
    ``|E − E₀| / ε`` of the records (the scheme bounds it by the number of terms)."""
    import numpy as np

    es = sim.event_stats()
    eps = es["eps"]
    err = np.abs(total - sim.e_ref)
    return {"events": es["events"], "reflections": es["reflections"],
            "events_per_unit_time": es["events_per_time"],
            "events_per_second": (es["events"] / sim.kernel_seconds
                                  if sim.kernel_seconds > 0 else None),
            "eps": eps, "eps_relative": sim.integrator.eps_rel, "terraced_terms": es["n_terms"],
            "max_energy_error_over_eps": float(np.max(err)) / eps if len(err) else 0.0}


def _print_summary(s: dict[str, Any], title: str, props: str) -> None:
    print(f"RRP Studio {s['version']} — {s['scenario']}: {title}")
    print(f"  integrator  {s['integrator']} ({props}), h = {s['h']:g}")
    print(f"  time        t = 0 → {s['t_reached']:.6g} of {s['t_end']:g} "
          f"({s['steps']} steps), status: {s['status']}")
    print(f"  energy      max |relative error| = {s['max_relative_energy_error']:.3e} "
          f"(final {s['final_relative_energy_error']:+.3e})")
    print("  momentum    max |c(t) − c(0)|, relative to Σm|v| or Σ|x × mv| + J|Ω|:")
    for k, v in s["momentum_drift"].items():
        # (a component an external force changes is physics, not error: say so; one
        # the model has not at all, the pendulum's P, is not "not conserved")
        tag = ("  (P ≡ 0: no translation, the pivot holds the body)"
               if k in s.get("identically_zero", ()) else
               "  (conserved by the variational schemes)" if k in s["conserved"]
               else "  (not conserved: external forces)")
        print(f"                {k} {v:10.3e}  rel {s['momentum_drift_relative'][k]:.2e}{tag}")
    if "events" in s:  # (event-driven: h is the recording interval)
        print(f"  events      {s['events']:,} ({s['reflections']:,} reflections), "
              f"{s['events_per_unit_time']:.3g} per unit time; ε = {s['eps']:.3g} "
              f"({s['eps_relative']:g} × energy scale), {s['terraced_terms']} terraced "
              "term(s)")
        print(f"  terraces    max |E − E₀| / ε = {s['max_energy_error_over_eps']:.3f} "
              f"(bounded by the number of terms, {s['terraced_terms']})")
        print("  stability   event-driven: no step limit (h is the recording interval)")
    else:
        print(f"  stability   h limit ≈ {s['stability_limit_h']:.3g} at the start of the "
              "run")
    g = s["accuracy_guide_h"]
    if g == g and g != float("inf"):
        past = "  — h is past it" if s["h"] > g else ""
        print(f"  accuracy    guide h ≈ {g:.2g} for ≈ 1 % energy error{past}")
    if "events" in s and s["events_per_second"]:
        print(f"  speed       {s['events_per_second']:,.0f} events/s, {s['us_per_step']:.3g} "
              "µs per recording interval (engine only: JIT and I/O excluded)")
    elif s["us_per_step"] == s["us_per_step"]:
        print(f"  speed       {s['us_per_step']:.3g} µs/step, {s['steps_per_second']:,.0f} "
              "steps/s (engine only: JIT and I/O excluded); "
              f"{s['us_per_step_cpu']:.3g} µs/step of the stepping thread's CPU")
    if s["output"]:
        print(f"  output      {s['output']} ({s['records']} records)")


def _drive(args, sim, writer, n_total: int, t_end: float, tty: bool, signals):
    """Advance ``sim`` by ``n_total`` steps, flushing ``writer`` and showing progress,
    and close the file with the status of what happened (:func:`app.run_loop.drive`)."""
    from .run_loop import drive

    bar = _progress(n_total, tty) if tty else (
        None if args.quiet else _LineProgress(n_total, sim, t_end))
    return drive(args, sim, writer, n_total, t_end, bar, signals,
                 lambda failure: _resume_hint(failure, args, writer, t_end))


def _resume_hint(failure, args, writer, t_end: float) -> str:
    """The failure's message, its "resume from the last good state" made a command."""
    msg = failure.message
    if writer is None:
        return msg.replace(", then resume from the last good state",
                           "; write the run with --out FILE to be able to resume from the "
                           "last good state")
    h_now, lim = writer.sim.h, failure.stability.h_stable
    info = writer.sim.integrator
    if failure.kind == "energy-stepping" and info.event_driven:  # (change ε, not h)
        from engine.integrators.registry import EPS_REL_MAX, EPS_REL_MIN, energy_stepping_name

        where = writer.destination("failed")
        # a broken bound (issue #33 item 3) or too many events for the clock (item 4):
        # a coarser ε; else a finer one
        if failure.details.get("raise_eps"):
            rel = min(EPS_REL_MAX, float(f"{100 * info.eps_rel:.1g}"))
        elif "makes no progress" in msg:
            rel = min(10.0 * info.eps_rel, EPS_REL_MAX)
        else:
            rel = max(EPS_REL_MIN, 0.5 * info.eps_rel)
        cmd = (f"rrp run --resume {where} -i {energy_stepping_name(rel)} "
               f"--t-end {t_end:g}")
        return f"{msg.rstrip('.')}; resume with {cmd}"
    if failure.kind == "rrp-limit":
        h_new = 0.9 * failure.details["h_max"]
    else:
        h_new = 0.8 * lim if h_now > lim else 0.5 * h_now
    where = writer.destination("failed")  # (where the file will be: see RunWriter.close)
    cmd = f"rrp run --resume {where} --h {float(f'{h_new:.2g}'):g} --t-end {t_end:g}"
    if ", then resume from the last good state" in msg:
        return msg.replace(", then resume from the last good state",
                           f", then resume from the last good state ({cmd})").replace(
                               ", kept).", f", kept in {where}).")
    return f"{msg.rstrip('.')}; resume with {cmd}"


class _LineProgress:
    """Progress on stderr when it is not a terminal: a line every few seconds."""

    EVERY = 5.0
    """Seconds between lines (``RRP_PROGRESS_EVERY`` overrides it)."""

    def __init__(self, total: int, sim, t_end: float) -> None:
        self.total, self.sim, self.t_end = total, sim, t_end
        try:
            self.every = float(os.environ.get("RRP_PROGRESS_EVERY", self.EVERY))
        except ValueError:
            self.every = self.EVERY
        self.done = 0
        self.t0 = self.last = time.perf_counter()

    def update(self, n: int) -> None:
        self.done += n
        now = time.perf_counter()
        if now - self.last >= self.every:
            self.last = now
            rate = self.done / max(now - self.t0, 1e-9)
            left = (self.total - self.done) / rate if rate > 0 else math.inf
            pct = 100 * self.done / self.total
            print(f"rrp: t = {self.sim.t:.6g} of {self.t_end:g} ({pct:.1f} %, "
                  f"{rate:,.0f} steps/s, ≈ {left:.0f} s left)", file=sys.stderr, flush=True)

    def close(self) -> None:
        pass


def _progress(total: int, enabled: bool):
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit="step", unit_scale=True, file=sys.stderr, leave=False,
                dynamic_ncols=True)


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
        return signals.exit_code or code
    signals.finished()  # (from now a signal exits at once with its code)
    code = signals.exit_code or code
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def _main(argv: Sequence[str] | None, state: dict[str, Any]) -> int:
    from .run_signals import RunSignals, Stopped

    early, old = state.get("early") or ([], {})
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command == "run":
            args.signals = state["signals"] = RunSignals().install(early, old)
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
            == "run" else "it started"
        print(f"rrp: stopped by {exc.name} before {what}", file=sys.stderr)
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

        if isinstance(exc, OutputWriteError):  # (the file could not be started)
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
    from .run_signals import Stopped

    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, Stopped):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


if __name__ == "__main__":
    sys.exit(main())
