"""``rrp convert RUN.h5 --to vtk DIR [--every N]`` — a run file's frames as ParaView
files: one ``.vtp`` per frame and a ``.pvd`` collection (docs/output.md, "ParaView /
VTK output").

Only argparse here: the engine and PyVista are imported when the command runs.
"""

from __future__ import annotations

import argparse
import sys

FORMATS = ("vtk", "lammps")
"""The formats of ``--to``."""


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``convert`` sub-command to the ``rrp`` parser."""
    from .cli import _positive_int

    p = sub.add_parser(
        "convert", help="convert a run file's frames for ParaView (--to vtk DIR)",
        description="Write the frames of a run file (rrp run --out, also a .h5.partial "
                    "file) as one VTK PolyData file (.vtp) per frame and a .pvd "
                    "collection with their times; open the .pvd in ParaView. See "
                    "docs/output.md.")
    p.add_argument("run_file", metavar="RUN.h5", help="a run file written by 'rrp run --out'")
    p.add_argument("directory", metavar="DIR",
                   help="output directory (created if missing; its parent must exist)")
    p.add_argument("--to", required=True, choices=FORMATS, metavar="FORMAT",
                   help="output format: vtk (ParaView .vtp files and a .pvd collection), "
                        "lammps (a data file and an input deck of one frame: app.cli_lammps)")
    p.add_argument("--frame", type=int, default=None,
                   help="--to lammps: the frame to write (negative from the end; default last)")
    p.add_argument("--every", type=_positive_int, default=1,
                   help="write every N-th frame of the file (default 1: all)")
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")
    p.set_defaults(handler=cmd_convert)


def cmd_convert(args: argparse.Namespace) -> int:
    from engine.io.vtk import VTKExportError, VTKReadError, export_vtk

    from .errors import UsageError

    def warn(message: str) -> None:
        if not args.quiet:
            print(f"rrp: warning: {message}", file=sys.stderr)

    lock, writer = _read_lock(args.run_file)
    try:
        _check_integrity(args.run_file, warn)
        if args.to == "lammps":  # (issue #35 item 4)
            from .cli_lammps import convert_lammps

            return convert_lammps(args)
        try:
            written = export_vtk(args.run_file, args.directory, every=args.every, warn=warn)
        except VTKReadError as exc:
            if writer:  # (not damage: it changed while it was read)
                raise UsageError(f"cannot convert: {args.run_file} is being written by "
                                 f"{writer} and changed while it was read: wait for it to "
                                 "finish, then convert it; nothing was converted") from None
            # a frame that cannot be read as written (a checksum, a digest, damaged metadata)
            _check_integrity(args.run_file, warn, deep=True)
            raise UsageError(f"cannot convert: {exc}; nothing was converted") from None
        except VTKExportError as exc:
            raise UsageError(str(exc)) from None
    finally:
        if lock is not None:
            lock.release()
    if not args.quiet:
        frames = written[:-1]
        names = frames[0].name if len(frames) == 1 else f"{frames[0].name} … {frames[-1].name}"
        print(f"wrote {len(frames)} frame{'s' * (len(frames) != 1)} to {args.directory}: "
              f"{names} and {written[-1].name} (open the .pvd in ParaView)")
    return 0


def _read_lock(run_file: str):
    """A shared lock of the run file's output while it is converted (issue #36 item 5):
    ``(lock, None)``; a file that ``rrp run --resume`` writes in place (it cuts and
    rewrites it) is refused in one line naming the process, as ``--resume`` refuses it;
    one that a run still appends to is read without the lock (its frames so far):
    ``(None, "rrp run (process N)")``."""
    from pathlib import Path

    from engine.io import OutputBusyError, OutputLock, output_for

    from .errors import UsageError

    if not Path(run_file).is_file():
        return None, ""
    try:
        lock = OutputLock(output_for(run_file), "rrp convert", "wait for it to finish",
                          shared=True).acquire()
    except OutputBusyError as exc:
        h = exc.holder
        who = (f"{h.get('what', 'another writer')} (process {h['pid']})" if h.get("pid")
               else "another process")
        if "--resume" in str(h.get("what", "")) and not h.get("shared"):
            raise UsageError(f"cannot convert: {run_file} is being written by {who}: wait "
                             "for it to finish, then convert it") from None
        return None, who
    except OSError:  # (a read-only directory: read without the lock)
        return None, ""
    return lock, ""


def _check_integrity(run_file: str, warn, *, deep: bool = False) -> None:
    """Refuse a run file whose frames, header or metadata are damaged (one line: what is
    wrong, what can still be read) before anything is written; damage elsewhere (the
    series, read whole here, a checkpoint) is one warning line, the frames being whole
    (docs/output.md, "Integrity"; issue #36 item 11).  ``deep``: read every chunk."""
    from pathlib import Path

    from engine.io import RunFileError
    from engine.io.verify import verify_run

    from .errors import UsageError

    path = Path(run_file)
    if path.is_dir():
        raise UsageError(f"cannot convert: {run_file} is a directory, not a run file")
    if not path.is_file():
        return  # export_vtk says so (after naming a missing extra)
    try:
        report = verify_run(run_file, deep=deep, series=True)
    except RunFileError as exc:
        raise UsageError(f"cannot convert: {exc}") from None
    if report.damaged("frames", "header", "metadata") or (report.problems
                                                          and not report.frames):
        raise UsageError(f"cannot convert: {report.line()}, but its frames are damaged: "
                         "nothing was converted" if report.damaged("frames") else
                         f"cannot convert: {report.line()}: nothing was converted")
    damaged = [c for c in report.checkpoints if c.state == "damaged"]
    if report.problems:
        warn(f"{report.line()}; its frames are whole and are converted")
    elif damaged:
        warn(f"{run_file}: its checkpoint /{damaged[0].name} is damaged ({damaged[0].why}); "
             "its frames are whole and are converted")
