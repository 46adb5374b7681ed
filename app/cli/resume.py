"""``rrp run --resume FILE`` (issue #34 item 3: split out of ``app/cli/__init__``): continue a
run from its file's checkpoint, under the lock of its output."""

from __future__ import annotations

import argparse
import contextlib
import sys
import time

from ..errors import UsageError
from .report import _drive, _report


def _cmd_resume(args: argparse.Namespace, signals) -> int:
    """``rrp run --resume FILE``: continue a run from its file's checkpoint, under the
    lock of the output (taken first: a second writer of it is refused at once)."""
    from pathlib import Path

    from engine.io import output_for

    from ..resume_checks import check_out, resume_locks

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
    """The resume, under its locks; on a cold kernel cache, a small model steps with the
    kernels' uncompiled twins while its kernels compile in the background, as a fresh
    ``rrp run`` does (issue #45: the same bits)."""
    with contextlib.ExitStack() as stack:  # (engine imports: lazily, as the CLI's)
        return _resume_in(args, signals, src, out, lock, source_lock, stack)


def _resume_in(args: argparse.Namespace, signals, src, out, lock, source_lock,
               stack: contextlib.ExitStack) -> int:
    from engine import __version__
    from engine.drivers import simulation_from_resume_state
    from engine.interpreted import interpret_while_cold
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
        with interpret_while_cold():  # (the model's own kernels, on small arguments)
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
    from ..resume_checks import finish_or_continue

    finish = finish_or_continue(args, src, d, t_file, target, status)
    twins = stack.enter_context(contextlib.ExitStack())
    twins.enter_context(interpret_while_cold())  # (until the cache is known to be warm)
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
    from . import _prime_in_a_subprocess

    if not finish and not _prime_in_a_subprocess(tty, model, sim.integrator.name):
        twins.close()  # (warm, or a model compiled first: nothing steps interpreted)
    with signals.immediate():
        t_prep = time.perf_counter()
        sim.warm_up()
        t_prep = time.perf_counter() - t_prep
        if args.t_end is not None:  # (the estimate counts the wall impacts before it)
            sim.t_end = float(args.t_end)
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
