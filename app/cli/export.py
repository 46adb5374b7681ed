"""``rrp export SCENARIO [--integrator] [--h] [--t-end] [--fps] [--speed] [--size WxH]
[--camera fixed|follow] [--set key=value ...] --out anim.mp4|anim.gif`` — headless
animation export.

Only argparse here: PyVista, imageio and the engine are imported when the command runs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

EXIT_FAILED = 1


def register(sub) -> None:
    """Add the ``export`` sub-command to the ``rrp`` parser."""
    from . import _any_float, _positive_float
    from .args import _integer

    p = sub.add_parser(
        "export", help="render a scenario or a run file headless to an MP4 or GIF",
        description="Render SOURCE to a video. SOURCE is a built-in scenario, a scenario "
                    ".toml (simulated from t = 0) or a run file (.h5, also failed, "
                    "interrupted or .partial: nothing is simulated, the frames come from "
                    "the file; between its recorded frames positions follow the cubic "
                    "through the recorded velocities and attitudes are slerped, "
                    "--no-interpolate shows the nearest earlier frame). Frame k shows "
                    "t = t0 + k*speed/fps exactly (a scenario too), k = 0 .. "
                    "floor((t1 - t0)*fps/speed). See docs/export.md, 'rrp export'.")
    p.add_argument("scenario", metavar="SOURCE",
                   help="built-in scenario name (see 'rrp list'), a .toml path or a run "
                        "file (.h5 / .h5.partial)")
    p.add_argument("--integrator", "-i", help="integrator name (default: the scenario's)")
    p.add_argument("--h", type=_any_float, help="time step (default: the scenario's)")
    p.add_argument("--t-end", type=_positive_float, default=None,
                   help="a scenario: simulated time to show, from t = 0 (default 2); the "
                        "same as --t1")
    p.add_argument("--t0", type=_any_float, default=None,
                   help="first frame's time (default: the start of the run)")
    p.add_argument("--t1", type=_any_float, default=None,
                   help="last time shown (default: the end of the run file; 2 for a "
                        "scenario)")
    p.add_argument("--layout", default=None, metavar="LAYOUT",
                   help="view: the 3D view; view+plots: the view with the energy, energy "
                        "error and momentum plots beside it (default for run files; view "
                        "for scenarios)")
    p.add_argument("--no-interpolate", action="store_true",
                   help="a run file: show the nearest earlier recorded frame instead of "
                        "interpolating between frames")
    p.add_argument("--title", default="", help="a title line over the view")
    p.add_argument("--compare", nargs="+", default=[], metavar="RUN.h5",
                   help="run files drawn as ghosts beside SOURCE (a run file), with their "
                        "energy error curves")
    p.add_argument("--fps", type=_integer, default=30,
                   help="frames per second of the video (default 30)")
    p.add_argument("--speed", type=_positive_float, default=1.0,
                   help="simulated seconds per video second (default 1)")
    p.add_argument("--size", default=None, metavar="WxH",
                   help="frame size in pixels (default 800x600 for view, 1280x720 for "
                        "view+plots; odd sizes are rounded up for MP4)")
    p.add_argument("--colour-by", default="none", metavar="MODE",
                   help="colour the spheres by: none, speed, 'rotational energy', "
                        "'body group' (a pile's rings) (default none)")
    p.add_argument("--camera", default="fixed", metavar="MODE",
                   help="fixed: one framing of the whole run, the wall stands still "
                        "(default); follow: the camera follows the bodies")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scenario parameter; the value is TOML")
    p.add_argument("--out", "-o", required=True, help="output file: .mp4 or .gif")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar or summary")
    p.add_argument("--yes", "-y", action="store_true",
                   help="start an export estimated to take over an hour without asking "
                        "(asked only when stdin is a terminal)")
    p.set_defaults(handler=_run)


LONG_NOTE = 60.0
"""An export estimated to take longer (seconds) says its frame count and time first."""
LONG_ASK = 3600.0
"""An export estimated to take longer (seconds) needs ``--yes`` when stdin is a terminal
(issue #47 item 7: ``--speed 3.4e-5`` set off 882 000 frames, about 70 hours, without a
word)."""


def is_run_source(text: str) -> bool:
    """Whether an export's SOURCE names a run file (``.h5``, ``.hdf5``, ``.partial``)."""
    name = text.lower()
    return name.endswith((".h5", ".hdf5", ".h5.partial", ".partial"))


def _run(args: argparse.Namespace) -> int:
    """SIGTERM and SIGINT (issue #46 item 5; :class:`~app.run_signals.RunSignals`, taken
    by ``main``): before the frames (loading, compiling) a signal stops the export at
    once; from the first frame it is recorded and acted on between frames and chunks of
    steps (raised inside VTK's rendering, VTK would print and swallow it), and before the
    finished file is renamed.  Either way the temporary file is removed and the target
    left as it was.  One that comes once the file is in place says that it is whole."""
    from ..run_signals import RunSignals, Stopped

    signals = getattr(args, "signals", None)
    own = signals is None
    if own:  # (a Python caller of the handler)
        signals = args.signals = RunSignals().install()
    try:
        signals.until_polled()
        code = _export(args, signals.poll)
    except Stopped as stop:
        signals.reported = True
        print(f"rrp: export stopped by {stop.name}: nothing written ({args.out} was not "
              "created or changed; the partial file was removed)", file=sys.stderr)
        return stop.exit_code
    finally:
        signals.recording()  # (no more raising at once)
        if own:
            signals.restore()
            args.signals = None
    if code in (0, EXIT_FAILED):  # the file is in place (a failed run: its frames so far)
        return signals.end_with(f"rrp: export stopped by {{signal}} after {args.out} was "
                                "written: the file is whole", code)
    return code


def _export(args: argparse.Namespace, check: Callable[[], None]) -> int:
    from engine.io import RunFileError
    from engine.io.outlock import OutputBusyError, OutputLock

    from ..errors import UsageError
    from ..export import ExportError, check_camera, check_layout, check_output, parse_size
    from ..export.common import check_fps
    from ..scene import COLOUR_MODES

    args.signals.check()  # (one recorded while VTK was imported: issue #46 item 5)
    run_src = is_run_source(args.scenario)
    lock = rlock = None
    reading: list = []

    def warn(message: str) -> None:
        if not args.quiet:
            print(f"rrp: note: {message}", file=sys.stderr)

    try:
        layout = check_layout(args.layout or ("view+plots" if run_src else "view"))
        size = parse_size(args.size or ("1280x720" if layout == "view+plots" else "800x600"))
        check_fps(args.fps)  # (before anything is simulated)
        args.before = _announcer(args, size, warn)
        out = check_output(args.out)
        check_camera(args.camera)
        if args.colour_by not in COLOUR_MODES:
            raise ExportError(f"unknown --colour-by {args.colour_by!r}; allowed: "
                              + ", ".join(COLOUR_MODES))
        if run_src:
            given = [o for o, v in (("--integrator", args.integrator), ("--h", args.h),
                                    ("--t-end", args.t_end), ("--set", args.set)) if v]
            if given:
                raise ExportError(f"{given[0]} applies to a scenario: a run file is drawn as "
                                  "it was recorded (choose its window with --t0/--t1)")
            from engine.io.flushlock import hold_for_reading

            from .convert import _check_integrity, _read_lock

            # (a file still being written is read as a flush left it: issue #47 item 3)
            reading = [hold_for_reading(src).__enter__() for src in
                       (args.scenario, *args.compare)]

            for src in (args.scenario, *args.compare):
                if not Path(src).exists():
                    raise ExportError(f"no such run file: {src}")
                _check_integrity(src, warn, verb="export", needs_series=(
                    "the plots of --layout view+plots draw its series; export its whole "
                    "frames with --layout view" if layout == "view+plots" else ""))
            rlock, _writer = _read_lock(args.scenario, verb="export")
            args.signals.check()  # (one recorded while h5py read the files)
        elif args.compare:
            raise ExportError("--compare needs a run file as SOURCE (compare runs are drawn "
                              "from their files: write each with 'rrp run --out')")
        # one writer per output, as rrp run: another export (or recording) of the same
        # file is refused at once
        lock = OutputLock(out, "rrp export").acquire()
        res = (_from_run(args, out, size, layout, check, warn) if run_src
               else _from_scenario(args, out, size, layout, check, warn))
    except (ExportError, OutputBusyError) as exc:
        raise UsageError(str(exc)) from None
    except RunFileError as exc:  # (a frame that cannot be read, met while drawing: what
        if run_src:              # the deep check names, as convert says it; issue #42
            from .convert import _check_integrity  # item 4)

            for src in (args.scenario, *args.compare):
                _check_integrity(src, warn, deep=True, verb="export")
        raise UsageError(f"cannot export: {exc}; nothing was written") from None
    finally:
        for r in reading:
            r.__exit__()
        for lk in (lock, rlock):
            if lk is not None:
                lk.release()
    if not args.quiet:
        print(f"wrote {res.path} ({res.frames} frames, {res.size[0]}x{res.size[1]}, "
              f"{res.fps} fps, t = {res.t_first:.4g} → {res.t_reached:.4g}) in "
              f"{res.wall_seconds:.1f} s ({1e3 * res.seconds_per_frame:.0f} ms/frame)")
    if res.failure is not None:
        print(f"rrp: error: the export stopped at t = {res.t_reached:.6g} "
              f"({res.frames} frame{'s' * (res.frames != 1)} kept in {res.path}): "
              f"{res.failure}", file=sys.stderr)
        return EXIT_FAILED
    return 0


def _from_run(args, out, size, layout, check, warn):
    from ..export import export_run

    return export_run(args.scenario, out=out, t0=args.t0, t1=args.t1, fps=args.fps,
                      speed=args.speed, size=size, layout=layout,
                      interpolate=not args.no_interpolate, title=args.title,
                      colour_by=args.colour_by, camera=args.camera, compare=args.compare,
                      progress=sys.stderr.isatty() and not args.quiet, check=check,
                      warn=warn, before=args.before)


def _announcer(args: argparse.Namespace, size: tuple[int, int],
               warn: Callable[[str], None]) -> Callable[[int], None]:
    """What an export calls with its frame count before it starts (issue #47 item 7):
    beyond :data:`LONG_NOTE` seconds of estimated work a note says how many frames and
    how long; beyond :data:`LONG_ASK` an export whose stdin is a terminal is refused in
    one line unless ``--yes`` (a script's export goes on, with the note)."""
    from ..export import MAX_FRAMES, ExportError
    from ..export.common import duration, estimate_seconds

    def before(n: int) -> None:
        secs = estimate_seconds(n, size)
        if secs < LONG_NOTE or n > MAX_FRAMES:  # (too many frames: refused as such)
            return
        what = (f"{n:,} frames of {size[0]}x{size[1]}, about {duration(secs)} to render "
                "and encode")
        if secs > LONG_ASK and not args.yes and _stdin_is_terminal():
            raise ExportError(f"this export would write {what}: pass --yes to start it, "
                              "or lower --fps, raise --speed or narrow --t0/--t1")
        warn(f"{what} (lower --fps, raise --speed or narrow --t0/--t1 for less)")

    return before


def _stdin_is_terminal() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (OSError, ValueError):
        return False


def _from_scenario(args, out, size, layout, check, warn):
    """A scenario, either layout: simulated as the frames ask and drawn at each frame's
    time exactly (issue #42 item 9: nothing written but the video)."""
    from engine.scenarios import parse_sets

    from ..export import MAX_FRAMES, ExportError, export_animation, frame_count

    overrides = parse_sets(args.set)
    t_end = args.t1 if args.t1 is not None else args.t_end if args.t_end is not None else 2.0
    t0 = 0.0 if args.t0 is None else args.t0
    if not t0 < t_end or t0 < 0:
        raise ExportError(f"--t0 = {t0:g} must lie in [0, t1 = {t_end:g})")
    if args.no_interpolate:
        warn("--no-interpolate applies to run files: a scenario is drawn at each frame's "
             "time")
    if t_end * args.fps / args.speed < 2 * MAX_FRAMES:  # (before simulating anything)
        args.before(frame_count(t0, t_end, args.fps, args.speed))
    return export_animation(args.scenario, integrator=args.integrator, h=args.h, t0=t0,
                            t_end=t_end, fps=args.fps, speed=args.speed, size=size,
                            out=out, overrides=overrides, colour_by=args.colour_by,
                            camera=args.camera, layout=layout,
                            progress=sys.stderr.isatty() and not args.quiet, check=check,
                            title=args.title, warn=warn)
