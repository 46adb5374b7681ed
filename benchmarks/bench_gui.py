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

``--replay [RUN.h5]``: scrubbing a recorded run instead (issue #10 §1: ≥ 20 fps): the
timeline slider is dragged over the frames (a new value per GUI event-loop turn, as a
mouse drag delivers them) for ``--seconds``, and the frames shown and rendered per
second are reported.  Without a file, the 80-sphere torus 0 → 2 (201 frames) is written
first.
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
    ap.add_argument("--replay", nargs="?", const="", default=None, metavar="RUN.h5",
                    help="scrub a recorded run (default: write a torus run first)")
    args = ap.parse_args()
    if args.replay is not None:
        return bench_replay(args)
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


def bench_replay(args) -> int:
    """Scrub fps of a recorded run; see the module docstring."""
    w_px, h_px = (int(v) for v in args.size.split("x"))
    path = args.replay
    if not path:
        from engine.io import RunWriter
        from engine.scenarios import load_scenario
        from engine.simulation import Simulation

        path = str(Path(tempfile.mkdtemp()) / "torus.h5")
        sim = Simulation(load_scenario(args.scenario).build_model(), "rrp-newmark", 1e-3,
                         record_every=10)
        w = RunWriter(path, sim, scenario=args.scenario)
        sim.run_until(2.0, callback=lambda s: w.flush())
        w.close()

    from PyQt6.QtCore import QSettings
    from PyQt6.QtWidgets import QApplication

    from app.gui.main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    ini = Path(tempfile.mkdtemp()) / "bench.ini"
    win = MainWindow(None, settings=QSettings(str(ini), QSettings.Format.IniFormat), run=path)
    win.resize(w_px, h_px)
    win.show()
    for _ in range(50):
        app.processEvents()
        time.sleep(0.01)
    rec = win.recording
    if rec is None:
        print("cannot open the run", file=sys.stderr)
        return 2
    n = rec.n_frames
    slider = win.timeline.slider
    r0, shown0 = win.renders, win.frames_drawn
    k, d, moves = 0, 1, 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < args.seconds:
        k += d
        if not 0 <= k < n:  # back and forth over the whole run
            d = -d
            k += 2 * d
        slider.setValue(k)
        moves += 1
        app.processEvents()
    dt = time.perf_counter() - t0
    renders, shown = win.renders - r0, win.frames_drawn - shown0
    win.close()
    res = {"run": str(path), "bodies": rec.model.n_bodies, "frames": n,
           "window": args.size, "seconds": round(dt, 2), "slider_moves": moves,
           "frames_shown_per_s": round(shown / dt, 1), "render_fps": round(renders / dt, 1)}
    if args.json:
        print(json.dumps(res, indent=1))
    else:
        print(f"replay scrub, {res['bodies']} bodies, {n} frames, window {args.size}: "
              f"{res['frames_shown_per_s']} frames shown/s, {res['render_fps']} fps "
              f"(3D renders) over {res['seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
