"""Start the desktop app: ``rrp gui [SCENARIO] [--integrator] [--h] [--compare NAME]…
[--set k=v] [--play] [--screenshot PATH --quit-after SECONDS] [--size WxH] [--threads N]``."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def _parse_size(text: str | None) -> tuple[int, int] | None:
    if not text:
        return None
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        w = h = 0
    if not (320 <= w <= 8000 and 240 <= h <= 8000):
        from ..errors import UsageError

        raise UsageError(f"--size {text!r}: expected WxH with 320 ≤ W, 240 ≤ H, e.g. 1400x900")
    return w, h


X11_LIBRARIES = {  # library (as ctypes finds it) → Debian package
    "xcb-cursor": "libxcb-cursor0",
    "xcb-icccm": "libxcb-icccm4",
    "xcb-keysyms": "libxcb-keysyms1",
    "xkbcommon-x11": "libxkbcommon-x11-0",
    "EGL": "libegl1",
    "GL": "libgl1",
}


def _missing_x11_libraries() -> list[str]:
    """Debian packages of the libraries Qt's xcb plugin loads, where they are missing
    (Qt would otherwise abort with a message that often names the wrong one)."""
    if not sys.platform.startswith("linux") or not os.environ.get("DISPLAY"):
        return []
    if not os.environ.get("QT_QPA_PLATFORM", "xcb").startswith("xcb"):
        return []
    from ctypes.util import find_library

    return [pkg for lib, pkg in X11_LIBRARIES.items() if find_library(lib) is None]


def launch(args: argparse.Namespace) -> int:
    """Open the window; with ``--screenshot``/``--quit-after`` run headless-friendly:
    play for that long, save a PNG of the whole window and exit."""
    from engine.scenarios import load_scenario, parse_sets

    from ..errors import UsageError

    size = _parse_size(args.size)
    if args.screenshot and args.quit_after is None:
        raise UsageError("--screenshot needs --quit-after SECONDS (how long to run first)")
    if args.quit_after is not None and not args.quit_after >= 0:
        raise UsageError(f"--quit-after must be ≥ 0 seconds, got {args.quit_after}")
    if args.screenshot:
        shot = Path(args.screenshot)
        if shot.suffix.lower() != ".png":
            raise UsageError(f"--screenshot {shot.name!r}: the file must end in .png")
        if not shot.parent.exists():
            raise UsageError(f"--screenshot: the directory {str(shot.parent)!r} does not exist")
    overrides = parse_sets(args.set)
    compare = list(getattr(args, "compare", None) or [])
    if len(compare) > 2:
        raise UsageError(f"--compare was given {len(compare)} times: compare mode runs at "
                         "most two schemes beside the primary one")
    request = None
    run = None
    from .replay import is_run_path

    if args.scenario and is_run_path(args.scenario):
        # a recorded run (replay): check it here, so that a bad file is one line
        from engine.io import RunFileError

        from .replay import Recording

        if overrides:
            raise UsageError("--set changes a scenario, not a recorded run (branch from a "
                             "frame with other settings in the window instead)")
        if compare:
            raise UsageError("--compare starts a scenario in compare mode; for a recorded "
                             "run choose the compare schemes in the window, then Continue "
                             "from here")
        from engine.run_steps import check_run_step
        from engine.simulation import integrator_for

        from .worker import scenario_t_end

        try:
            rec = Recording(args.scenario)
        except (RunFileError, OSError) as exc:
            raise UsageError(f"cannot open the run: {exc}") from None
        if rec.damage:  # damaged, but what can be read is shown: say what is wrong first
            print(f"rrp: warning: {rec.damage}", file=sys.stderr)
        try:  # --integrator/--h: the defaults of Continue from here
            if args.integrator:
                integrator_for(rec.model, args.integrator)
            if args.h is not None:
                check_run_step(args.h, scenario_t_end(rec.file.scenario))
        finally:
            rec.close()
        run = args.scenario
    elif args.scenario or overrides or args.integrator or args.h is not None or compare:
        # check what needs no kernel here, so that bad input is one line on the terminal;
        # the state-dependent checks (rrp-exact's h|w| < 1) run in the worker, which
        # compiles the kernels: no JIT before the window is up
        from engine.run_steps import check_run_step
        from engine.simulation import integrator_for

        from .worker import LoadRequest

        sc = load_scenario(args.scenario or "torus", overrides or None)
        # an explicit --integrator must drive the model; without one the worker takes the
        # scenario's, or one that can drive the model as built (``--set contact=hard``)
        model = sc.build_model()
        integ = integrator_for(model, args.integrator).name if args.integrator else None
        others = tuple(integrator_for(model, c).name for c in compare)
        h = check_run_step(args.h if args.h is not None else sc.run.h, sc.run.t_end)
        request = LoadRequest(args.scenario or "torus", overrides, integ, h, others)

    if (sys.platform.startswith("linux") and not os.environ.get("DISPLAY")
            and not os.environ.get("WAYLAND_DISPLAY")
            and os.environ.get("QT_QPA_PLATFORM", "xcb").startswith(("xcb", "wayland"))):
        raise UsageError("rrp gui needs a desktop session (no DISPLAY is set): run it on a "
                         "desktop, under xvfb-run, or use 'rrp export' for a headless video")
    missing = _missing_x11_libraries()
    if missing:
        raise UsageError("Qt's X11 platform needs system libraries that are missing: "
                         f"install them with 'sudo apt-get install {' '.join(missing)}'")
    os.environ.setdefault("QT_API", "pyqt6")
    from PyQt6.QtCore import QTimer
    from PyQt6.QtWidgets import QApplication

    from .main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("RRP Studio")
    app.setOrganizationName("RRP Studio")
    win = MainWindow(request, run=run, threads=getattr(args, "threads", None))
    if run is not None and win.recording is not None:
        if args.integrator:
            win.set_integrator(args.integrator)
        if args.h is not None:
            win.set_h(args.h)
    if size:
        win.resize(*size)
    win.show()
    status = {"code": 0}

    if args.play or args.quit_after is not None:
        def start() -> None:
            if win.loaded is None:
                QTimer.singleShot(100, start)
                return
            win.play()
        QTimer.singleShot(0, start)

    if args.quit_after is not None:
        def finish() -> None:
            if win.loaded is None:  # still compiling: wait for it
                QTimer.singleShot(250, finish)
                return
            if args.screenshot:
                try:
                    win.pause_and_settle()
                    out = win.save_screenshot(args.screenshot)
                    print(f"screenshot saved: {out}\n  status: {win.status_shown()}",
                          file=sys.stderr)
                except OSError as exc:
                    print(f"rrp: error: {exc}", file=sys.stderr)
                    status["code"] = 2
            win.close()
            app.quit()

        def arm() -> None:
            if win.loaded is None:
                QTimer.singleShot(250, arm)
                return
            QTimer.singleShot(int(1000 * args.quit_after), finish)
        QTimer.singleShot(0, arm)

    app.exec()
    from .thread_keeper import wait_released

    if not wait_released(3000):
        # the window closed while its worker was in a long slot (a cold compile): end
        # here without destroying that thread (Qt aborts on a running QThread destroyed);
        # the window has saved what it had, and Numba writes its cache files whole
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status["code"])
    return status["code"]
