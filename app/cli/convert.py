"""``rrp convert RUN.h5 [TARGET] --to vtk|xyz|lammps-dump|lammps [--every N] [--compress]`` — a
run file's frames for the tools DEM users render with (issue #37 item 7): ``vtk``, one
``.vtp`` per frame and a ``.pvd`` collection (OVITO and ParaView; ``--compress``: zlib
arrays with the bonds, ParaView only); ``xyz``, one extended XYZ file (OVITO, ASE);
``lammps-dump``, one LAMMPS text dump (OVITO).  docs/output.md, "ParaView / VTK output"
and "OVITO".

Only argparse here: the engine and PyVista are imported when the command runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

FORMATS = ("vtk", "xyz", "lammps-dump", "lammps")
"""The formats of ``--to`` (room for more: one entry and one branch in
:func:`cmd_convert`)."""


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``convert`` sub-command to the ``rrp`` parser."""
    from . import _positive_int

    p = sub.add_parser(
        "convert", help="convert a run file's frames for OVITO or ParaView "
                        "(--to vtk|xyz|lammps-dump), or one frame for LAMMPS (--to lammps)",
        description="Write the frames of a run file (rrp run --out, also a .h5.partial "
                    "file) for OVITO or ParaView: --to vtk, one VTK PolyData file (.vtp) "
                    "per frame and a .pvd collection with their times (open the .pvd); "
                    "--to xyz, one extended XYZ file (positions, radius, velocity, the "
                    "orientation quaternion as OVITO's Orientation X Y Z W, angular "
                    "velocity, group, the time in each frame's comment line); --to "
                    "lammps-dump, a LAMMPS text dump with the same columns. See "
                    "docs/output.md.")
    p.add_argument("run_file", metavar="RUN.h5", help="a run file written by 'rrp run --out'")
    p.add_argument("directory", metavar="TARGET", nargs="?", default=None,
                   help="vtk: the output directory (created if missing; default "
                        "<run>_vtk next to the run file); xyz, lammps-dump: the output "
                        "file or a directory (default <run>.xyz / <run>.dump next to it)")
    p.add_argument("--out", "-o", default=None, metavar="TARGET",
                   help="the same as TARGET (which must come right after RUN.h5)")
    p.add_argument("--to", required=True, nargs="+", metavar="FORMAT",
                   help="output format: vtk, xyz, lammps-dump or lammps (a LAMMPS data "
                        "file and an input deck of one frame, in a directory; TARGET may "
                        "follow it: '--to vtk DIR')")
    p.add_argument("--frame", type=int, default=None,
                   help="--to lammps: the frame to write (negative from the end; default "
                        "0, the run's reference state, which LAMMPS takes as stress-free)")
    p.add_argument("--every", type=_positive_int, default=1,
                   help="write every N-th frame of the file (default 1: all)")
    p.add_argument("--compress", action="store_true",
                   help="vtk: zlib-compressed arrays with the bonds as lines (ParaView "
                        "only: OVITO reads neither)")
    p.add_argument("--force", action="store_true",
                   help="write over a target that is a run file or ends in .h5 (never "
                        "over the run being converted)")
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")
    p.set_defaults(handler=cmd_convert)


def cmd_convert(args: argparse.Namespace) -> int:
    """The command: its outputs whole or absent (a write error: one line, exit 1, the
    target as it was), never over its source or a run file (issue #46 items 1, 2), a
    signal one line saying whether the output is whole (item 5)."""
    from engine.io.flushlock import hold_for_reading
    from engine.io.vtk import VTKExportError, VTKReadError

    from ..errors import UsageError
    from ..run_signals import Stopped

    def warn(message: str) -> None:
        if not args.quiet:
            print(f"rrp: warning: {message}", file=sys.stderr)

    signals = getattr(args, "signals", None)
    args.target = None
    lock, writer = _read_lock(args.run_file)
    # a file a run still writes is read as one of its flushes left it, whole: the
    # writer waits for us (issue #47 item 3)
    reading = hold_for_reading(args.run_file).__enter__()
    try:
        _check_integrity(args.run_file, warn)
        try:
            written = _convert(args, warn, None if signals is None else signals.check)
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
    except Stopped as stop:
        if signals is not None:
            signals.reported = True
        target = args.target or "the target"
        print(f"rrp: convert stopped by {stop.name}: nothing written ({target} was not "
              "created or changed)", file=sys.stderr)
        return stop.exit_code
    finally:
        reading.__exit__()
        if lock is not None:
            lock.release()
    if isinstance(written, int):  # (--to lammps: it printed what it wrote)
        pass
    elif not args.quiet and not isinstance(written, list):
        path, n = written
        print(f"wrote {n} frame{'s' * (n != 1)} to {path} (open it in OVITO)")
    elif not args.quiet:
        frames = written[:-1]
        names = frames[0].name if len(frames) == 1 else f"{frames[0].name} … {frames[-1].name}"
        print(f"wrote {len(frames)} frame{'s' * (len(frames) != 1)} to "
              f"{written[-1].parent}: {names} and {written[-1].name} (open the .pvd in "
              + ("ParaView)" if args.compress else "OVITO or ParaView; the bonds are in "
                 "ParaView files only: --compress)"))
    code = written if isinstance(written, int) else 0
    if signals is not None:  # (a signal once the output is in place: it is whole)
        return signals.end_with(f"rrp: convert stopped by {{signal}} after {args.target} "
                                "was written: it is whole", code)
    return code


RUN_NAMES = (".h5", ".hdf5", ".partial")
"""Target names refused without ``--force``: those of run files."""
HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


def _is_hdf5(path: Path) -> bool:
    """Whether ``path`` is an HDF5 file (its signature at 0, 512, 1024, … bytes)."""
    try:
        with open(path, "rb") as fh:
            for at in (0, 512, 1024, 2048, 4096):
                fh.seek(at)
                if fh.read(8) == HDF5_SIGNATURE:
                    return True
    except OSError:
        return False
    return False


def check_target(run_file: str | Path, target: Path, force: bool = False) -> None:
    """Refuse (one line, :class:`UsageError`) a target that is the run being converted
    (the same file through any path or link: even with ``--force``), and, unless
    ``force``, one that is a run file (HDF5) or whose name is a run file's (issue #46
    item 1)."""
    import os

    from ..errors import UsageError

    try:
        same = os.path.samefile(run_file, target)
    except OSError:
        same = False
    if same:
        raise UsageError(f"cannot convert: the target {target} is the run file being "
                         f"converted ({run_file}): give another target; nothing was "
                         "written")
    if force:
        return
    if target.is_file() and _is_hdf5(target):
        raise UsageError(f"cannot convert: the target {target} is a run file (HDF5): give "
                         "another target, or --force to replace it; nothing was written")
    if target.name.lower().endswith(RUN_NAMES):
        raise UsageError(f"cannot convert: the target {target} is named as a run file "
                         f"({', '.join(RUN_NAMES)}): give another name, or --force; nothing "
                         "was written")


def _convert(args: argparse.Namespace, warn, check=None):
    """The conversion itself: the paths written (vtk) or ``(path, frames)``; the target
    in ``args.target`` once known, checked (:func:`check_target`) before anything is
    written.  ``check()``: between frames and before the rename (a signal)."""
    from pathlib import Path

    from engine.io.vtk import VTKExportError, VTKReadError, export_vtk

    fmt, *rest = args.to
    if fmt not in FORMATS or len(rest) > 1:
        raise VTKExportError(f"--to takes a format ({', '.join(FORMATS)}) and at most one "
                             f"target, got {' '.join(args.to)!r}")
    args.to = fmt
    for extra in rest:
        if args.out is not None:
            raise VTKExportError(f"two targets: {extra} and --out {args.out}; give one")
        args.out = extra
    if args.directory is not None and args.out is not None:
        raise VTKExportError(f"two targets: {args.directory} and --out {args.out}; give one")
    args.directory = args.directory if args.directory is not None else args.out
    if args.to == "lammps":  # (issue #35 item 4)
        from .convert_lammps import convert_lammps

        if args.directory is None:
            from engine.io.text_frames import stem

            args.directory = str(Path(args.run_file).with_name(
                stem(Path(args.run_file)) + "_lammps"))
        args.target = Path(args.directory)
        check_target(args.run_file, args.target, args.force)
        return convert_lammps(args, check)
    if args.to == "vtk":
        out = args.directory
        if out is None:
            from engine.io.text_frames import stem

            out = Path(args.run_file).with_name(stem(Path(args.run_file)) + "_vtk")
        args.target = Path(out)
        check_target(args.run_file, args.target, args.force)
        return export_vtk(args.run_file, out, every=args.every, warn=warn,
                          ovito=not args.compress, check=check)
    from engine.io import RunFileError
    from engine.io.text_frames import TrajectoryError, target

    if args.to == "xyz":
        from engine.io.xyz import export_xyz as write
    else:
        from engine.io.lammps.dump import export_lammps_dump as write
    try:
        args.target = target(Path(args.run_file), args.directory,
                             ".xyz" if args.to == "xyz" else ".dump")
        check_target(args.run_file, args.target, args.force)
        return write(args.run_file, args.target, every=args.every, check=check)
    except TrajectoryError as exc:
        raise VTKExportError(str(exc)) from None
    except RunFileError as exc:  # a frame that cannot be read as written
        raise VTKReadError(str(exc)) from None


def _read_lock(run_file: str, verb: str = "convert"):
    """A shared lock of the run file's output while it is converted (issue #36 item 5):
    ``(lock, None)``; a file that ``rrp run --resume`` writes in place (it cuts and
    rewrites it) is refused in one line naming the process, as ``--resume`` refuses it;
    one that a run still appends to is read without the lock (its frames so far):
    ``(None, "rrp run (process N)")``."""
    from pathlib import Path

    from engine.io import OutputBusyError, OutputLock, output_for

    from ..errors import UsageError

    if not Path(run_file).is_file():
        return None, ""
    try:
        lock = OutputLock(output_for(run_file), f"rrp {verb}", "wait for it to finish",
                          shared=True).acquire()
    except OutputBusyError as exc:
        h = exc.holder
        who = (f"{h.get('what', 'another writer')} (process {h['pid']})" if h.get("pid")
               else "another process")
        if "--resume" in str(h.get("what", "")) and not h.get("shared"):
            raise UsageError(f"cannot {verb}: {run_file} is being written by {who}: wait "
                             f"for it to finish, then {verb} it") from None
        return None, who
    except OSError:  # (a read-only directory: read without the lock)
        return None, ""
    return lock, ""


def _check_integrity(run_file: str, warn, *, deep: bool = False, verb: str = "convert",
                     needs_series: str = "") -> None:
    """Refuse a run file whose frames, header or metadata are damaged (one line: what is
    wrong, what can still be read) before anything is written; damage elsewhere (the
    series, read whole here, a checkpoint) is one warning line, the frames being whole
    (docs/output.md, "Integrity"; issue #36 item 11).  ``deep``: read every chunk;
    ``needs_series``: the fix to name when the series are damaged and the caller draws
    them (an export's plots), refused then."""
    from pathlib import Path

    from engine.io import RunFileError
    from engine.io.verify import verify_run

    from ..errors import UsageError

    path = Path(run_file)
    if path.is_dir():
        raise UsageError(f"cannot {verb}: {run_file} is a directory, not a run file")
    if not path.is_file():
        return  # export_vtk says so (after naming a missing extra)
    try:
        report = verify_run(run_file, deep=deep, series=True)
    except RunFileError as exc:
        raise UsageError(f"cannot {verb}: {exc}") from None
    if report.damaged("frames", "header", "metadata") or (report.problems
                                                          and not report.frames):
        raise UsageError(f"cannot {verb}: {report.line()}, but its frames are damaged: "
                         f"nothing was {verb}ed" if report.damaged("frames") else
                         f"cannot {verb}: {report.line()}: nothing was {verb}ed")
    if needs_series and report.damaged("series"):  # (one line, not a note then a refusal)
        raise UsageError(f"cannot {verb}: {report.line()}: {needs_series}")
    damaged = [c for c in report.checkpoints if c.state == "damaged"]
    if report.problems:
        warn(f"{report.line()}; its frames are whole and are {verb}ed")
    elif damaged:
        warn(f"{run_file}: its checkpoint /{damaged[0].name} is damaged ({damaged[0].why}); "
             f"its frames are whole and are {verb}ed")
