"""Frames per second of the desktop app's 3D view and simulation steps per second while
the GUI renders, with the 80-sphere torus (issue #3).

Opens the real window (under Xvfb where there is no screen: run it as
``xvfb-run -a -s "-screen 0 1600x1000x24" python benchmarks/bench_gui.py``), plays the
B&G torus impact for ``--seconds`` of wall-clock time at each ``--speed`` (steps per
frame) and reports, from the window's own counters:

* 3D view frames rendered per second (VTK render-window ``EndEvent``s),
* frames delivered by the worker per second,
* simulation steps per second and the real-time factor (``steps/s × h``).

    python benchmarks/bench_gui.py [--seconds 8] [--speed 20 200 2000] [--size 1400x860] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--speed", type=int, nargs="+", default=[20, 200, 2000])
    ap.add_argument("--size", default="1400x860")
    ap.add_argument("--scenario", default="torus")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    w_px, h_px = (int(v) for v in args.size.split("x"))

    from PyQt6.QtCore import QSettings
    from PyQt6.QtWidgets import QApplication

    from app.gui.main_window import MainWindow
    from app.gui.worker import LoadRequest

    app = QApplication.instance() or QApplication(sys.argv[:1])
    ini = Path(tempfile.mkdtemp()) / "bench.ini"
    win = MainWindow(LoadRequest(args.scenario), settings=QSettings(str(ini),
                                                                      QSettings.Format.IniFormat))
    win.resize(w_px, h_px)
    win.show()

    def spin(seconds: float, until=None) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            app.processEvents()
            if until is not None and until():
                return
            time.sleep(0.001)

    spin(120, lambda: win.loaded is not None and win.last_frame is not None)
    results = []
    for speed in args.speed:
        win.request_load.emit(LoadRequest(args.scenario))  # same start for each speed
        spin(60, lambda: win.last_frame is not None and win.last_frame.step == 0)
        win.controls.speed.setValue(speed)
        spin(0.3)
        r0, f0, p0 = win.renders, win.frames_drawn, win._plot_redraws
        step0 = win.last_frame.step
        t0 = time.perf_counter()
        win.play()
        spin(args.seconds)
        dt = time.perf_counter() - t0
        renders, frames = win.renders - r0, win.frames_drawn - f0
        plots = win._plot_redraws - p0
        steps = win.last_frame.step - step0
        win.pause()
        spin(0.5)
        h = win.last_frame.h
        results.append({"steps_per_frame": speed, "seconds": round(dt, 2),
                        "render_fps": round(renders / dt, 1),
                        "frames_per_s": round(frames / dt, 1),
                        "plot_redraws_per_s": round(plots / dt, 1),
                        "steps_per_s": round(steps / dt),
                        "real_time_factor": round(steps * h / dt, 3),
                        "failure": win.failure})
    win.close()
    if args.json:
        print(json.dumps(results, indent=1))
    else:
        print(f"{args.scenario}: window {args.size}")
        for r in results:
            print(f"  {r['steps_per_frame']:>5} steps/frame: {r['render_fps']:5.1f} fps "
                  f"(3D renders), {r['frames_per_s']:5.1f} frames/s from the worker, "
                  f"plots redrawn {r['plot_redraws_per_s']:4.1f}/s, "
                  f"{r['steps_per_s']:>8,} steps/s, ×{r['real_time_factor']} real time")
    return 0


if __name__ == "__main__":
    sys.exit(main())
