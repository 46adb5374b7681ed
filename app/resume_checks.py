"""The checks of ``rrp run --out`` / ``--resume`` before a run (issue #36 items 1, 3, 6,
7): the output's name, the locks of a resume (taken before its source is read), and
whether a resume continues its file or only finishes it.  One-line
:class:`~app.errors.UsageError` for bad input; nothing here imports ``app.cli``."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from .errors import UsageError

__all__ = ["check_out", "finish_or_continue", "resume_locks"]


def check_out(out: Path) -> None:
    """``--out`` refused before the run, in one line: a directory that does not exist,
    an existing directory, a name that is not UTF-8 (issue #36 items 6, 7)."""
    from engine.io.closing import OutputNameError, check_output_name

    try:
        check_output_name(out)
    except OutputNameError as exc:
        raise UsageError(f"--out: {exc}") from None
    if not out.parent.is_dir():
        raise UsageError(f"the output directory {str(out.parent)!r} does not exist")


def resume_locks(args: argparse.Namespace, src, src_out):
    """The locks of a resume, taken before anything of ``src`` is read (issue #36 item
    1): in place (``src`` is the output or one of its ``.partial`` files), the output's,
    exclusive; to another ``--out``, ``src``'s output's *shared* (no writer of it
    meanwhile; other copies and conversions may read it too) and the new output's
    exclusive.  Returns ``(lock, source_lock or None, out)``."""
    from engine.io import OutputLock
    from engine.io.paths import _same_file

    out = Path(args.out) if args.out else src_out
    if _same_file(src_out, out):
        return OutputLock(out, "rrp run --resume").acquire(), None, out
    source_lock = OutputLock(src_out, f"rrp run --resume (a copy of it to {out.name})",
                             "wait for it to finish", shared=True).acquire()
    try:
        lock = OutputLock(out, "rrp run --resume").acquire()
    except BaseException:
        source_lock.release()
        raise
    return lock, source_lock, out


def finish_or_continue(args: argparse.Namespace, src, d: dict, t_file: float, target,
                        status: str) -> bool:
    """Whether a resume only *finishes* its file (issue #36 item 3): a run stopped while
    its file was closed holds the whole run (its checkpoint at the end time) but is not
    marked and renamed; ``rrp run --resume FILE`` with no ``--t-end`` (the file's
    ``t_end``) or the same one then verifies, marks and renames it.  Else sets
    ``args.t_end`` (the file's ``t_end`` when not given) and says no; refuses an end
    time that is not after the run's, in one line."""
    h, t_base = float(d["h"]), float(d.get("t_base", 0.0))
    done = int(d["step_index"]) - int(d.get("step_base", 0))
    unfinished = status != "complete" or str(src).endswith(".partial")
    if args.t_end is None:
        if target is None or not unfinished:
            raise UsageError(f"give the new end time with --t-end (the run in {src} "
                             f"reached t = {t_file:.6g})")
        args.t_end = float(target)
    left = math.ceil((args.t_end - t_base) / h - 1e-9) - done
    if left <= 0 and unfinished and status != "failed" and \
            abs(args.t_end - t_file) <= 1e-9 * max(1.0, abs(t_file)) + h:
        return True
    if args.t_end <= t_file * (1 + 1e-12):
        raise UsageError(f"--t-end {args.t_end:g} is not after the end of the run in {src} "
                         f"(t = {t_file:.6g})")
    return False
