"""``rrp export SCENARIO [--integrator] [--h] [--t-end] [--fps] [--speed] [--size WxH]
[--camera fixed|follow] [--set key=value ...] --out anim.mp4|anim.gif`` — headless
animation export.

Only argparse here: PyVista, imageio and the engine are imported when the command runs.
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

EXIT_FAILED = 1


def register(sub) -> None:
    """Add the ``export`` sub-command to the ``rrp`` parser."""
    from .cli import _any_float, _positive_float, _positive_int

    p = sub.add_parser("export", help="render a scenario headless to an MP4 or GIF animation")
    p.add_argument("scenario", help="built-in scenario name (see 'rrp list') or a .toml path")
    p.add_argument("--integrator", "-i", help="integrator name (default: the scenario's)")
    p.add_argument("--h", type=_any_float, help="time step (default: the scenario's)")
    p.add_argument("--t-end", type=_positive_float, default=2.0,
                   help="simulated time to show, from t = 0 (default 2)")
    p.add_argument("--fps", type=_positive_int, default=30,
                   help="frames per second of the video (default 30)")
    p.add_argument("--speed", type=_positive_float, default=1.0,
                   help="simulated seconds per video second (default 1)")
    p.add_argument("--size", default="800x600", metavar="WxH",
                   help="frame size in pixels (default 800x600)")
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
    p.set_defaults(handler=_run)


class _Stopped(BaseException):
    """SIGTERM or SIGINT during an export (not Exception: nothing may swallow it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class _Signals:
    """SIGTERM and SIGINT while :meth:`active`: the first one stops the export, so that the
    partial file is removed on the way out; later ones are ignored while it cleans up.
    Before the frames (loading, compiling) the handler raises :class:`_Stopped` at once;
    once the export calls :meth:`check` (between frames and chunks of steps) it raises
    there instead: raised inside VTK's rendering, VTK would print and swallow it."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self.polled = False

    def _handler(self, signum: int, _frame) -> None:
        if self.signum is None:
            self.signum = signum
            if not self.polled:
                raise _Stopped(signum)

    def check(self) -> None:
        """Raise :class:`_Stopped` if a signal came; from now on signals wait for this."""
        self.polled = True
        if self.signum is not None:
            raise _Stopped(self.signum)

    @contextmanager
    def active(self) -> Iterator[_Signals]:
        old = {s: signal.signal(s, self._handler) for s in (signal.SIGTERM, signal.SIGINT)}
        try:
            yield self
        finally:
            for s, h in old.items():
                signal.signal(s, h)


def _run(args: argparse.Namespace) -> int:
    try:
        with _Signals().active() as signals:
            return _export(args, signals.check)
    except _Stopped as stop:
        name = signal.Signals(stop.signum).name
        print(f"rrp: export stopped by {name}: nothing written ({args.out} was not "
              "created or changed; the partial file was removed)", file=sys.stderr)
        return 128 + stop.signum


def _export(args: argparse.Namespace, check: Callable[[], None]) -> int:
    from engine.io.outlock import OutputBusyError, OutputLock

    from .errors import UsageError
    from .export import ExportError, check_camera, check_output, export_animation, parse_size
    from .scene import COLOUR_MODES

    lock = None
    try:
        size = parse_size(args.size)
        out = check_output(args.out)
        check_camera(args.camera)
        if args.colour_by not in COLOUR_MODES:
            raise ExportError(f"unknown --colour-by {args.colour_by!r}; allowed: "
                              + ", ".join(COLOUR_MODES))
        from engine.scenarios import parse_sets

        overrides = parse_sets(args.set)
        # one writer per output, as rrp run: another export (or recording) of the same
        # file is refused at once
        lock = OutputLock(out, "rrp export").acquire()
        res = export_animation(args.scenario, integrator=args.integrator, h=args.h,
                               t_end=args.t_end, fps=args.fps, speed=args.speed, size=size,
                               out=out, overrides=overrides, colour_by=args.colour_by,
                               camera=args.camera,
                               progress=sys.stderr.isatty() and not args.quiet,
                               check=check)
    except (ExportError, OutputBusyError) as exc:
        raise UsageError(str(exc)) from None
    finally:
        if lock is not None:
            lock.release()
    if not args.quiet:
        print(f"wrote {res.path} ({res.frames} frames, {res.size[0]}x{res.size[1]}, "
              f"{res.fps} fps, t = 0 → {res.t_reached:.4g}) in {res.wall_seconds:.1f} s "
              f"({1e3 * res.seconds_per_frame:.0f} ms/frame)")
    if res.failure is not None:
        print(f"rrp: error: the export stopped at t = {res.t_reached:.6g} "
              f"({res.frames} frame{'s' * (res.frames != 1)} kept in {res.path}): "
              f"{res.failure}", file=sys.stderr)
        return EXIT_FAILED
    return 0
