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

``--scenario NAME --set KEY=VALUE``: another scenario, e.g. the pile of issue #9 §3
(``--scenario tori-pile --set n_tori=500 --set box=30``: 10⁴ spheres).  ``--draw``: the
3D view alone, without the simulation: the window's scene is moved to a new state (the
loaded one, shifted a little each time) and rendered as fast as the event loop allows,
for ``--seconds``; the frames rendered per second are what the view can draw, whatever
the engine's speed.

``--plots N``: the live plots with ``N`` recorded samples (issue #9 §3): the plot panel
alone is fed ``N`` rows of a torus-like series, then redrawn and repainted (a full
redraw: new data pushed, all four plots painted) repeatedly; reports the time per
redraw and the points drawn.

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
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--speed", type=int, nargs="+", default=[20, 200, 2000])
    ap.add_argument("--size", default="1400x860")
    ap.add_argument("--scenario", default="torus")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="override a scenario parameter (TOML value)")
    ap.add_argument("--threads", type=int, default=None,
                    help="threads of the engine's parallel kernels (default: all cores)")
    ap.add_argument("--colour", default="none", help="colour the spheres by (View → Colour by)")
    ap.add_argument("--draw", action="store_true",
                    help="the 3D view alone: move and render the scene, no simulation")
    ap.add_argument("--offscreen", action="store_true",
                    help="with --draw: the scene on an off-screen plotter of the 3D view's "
                         "size (620x780), no Qt: the rendering alone")
    ap.add_argument("--plots", type=int, default=None, metavar="N",
                    help="the live plots with N recorded samples")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--replay", nargs="?", const="", default=None, metavar="RUN.h5",
                    help="scrub a recorded run (default: write a torus run first)")
    args = ap.parse_args()
    if args.replay is not None:
        return bench_replay(args)
    if args.plots is not None:
        return bench_plots(args)
    if args.draw and args.offscreen:
        return bench_offscreen(args)
    w_px, h_px = (int(v) for v in args.size.split("x"))

    from PyQt6.QtCore import QSettings
    from PyQt6.QtWidgets import QApplication

    from app.gui.main_window import MainWindow
    from app.gui.worker import LoadRequest
    from engine.scenarios import parse_sets

    overrides = parse_sets(args.set)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    ini = Path(tempfile.mkdtemp()) / "bench.ini"
    win = MainWindow(LoadRequest(args.scenario, overrides),
                     settings=QSettings(str(ini), QSettings.Format.IniFormat),
                     threads=args.threads)
    win.resize(w_px, h_px)
    win.show()

    def spin(seconds: float, until=None) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            app.processEvents()
            if until is not None and until():
                return
            time.sleep(0.001)

    spin(600, lambda: win.loaded is not None and win.last_frame is not None)
    win.controls.colour.setCurrentText(args.colour)
    spheres = int(win.scene.n * win.scene.k)
    if args.draw:
        return bench_draw(args, app, win, spin, spheres)
    results = []
    for speed in args.speed:
        old = win.loaded
        win.request_load.emit(LoadRequest(args.scenario, overrides))  # same start each time
        spin(600, lambda old=old: win.loaded is not old and win.last_frame is not None
             and win.last_frame.step == 0)
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
        results.append({"steps_per_frame": speed, "spheres": spheres,
                        "seconds": round(dt, 2),
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
        print(f"{args.scenario} {' '.join(args.set)} ({spheres} spheres): window {args.size}")
        for r in results:
            print(f"  {r['steps_per_frame']:>5} steps/frame: {r['render_fps']:5.1f} fps "
                  f"(3D renders), {r['frames_per_s']:5.1f} frames/s from the worker, "
                  f"plots redrawn {r['plot_redraws_per_s']:4.1f}/s, "
                  f"{r['steps_per_s']:>8,} steps/s, ×{r['real_time_factor']} real time")
    return 0


def _emit(args: argparse.Namespace, res: dict, text: str) -> int:
    """Print ``res`` as JSON (``--json``) or ``text``; the exit code 0."""
    print(json.dumps(res, indent=1) if args.json else text)
    return 0


def bench_draw(args: argparse.Namespace, app: Any, win: Any, spin: Callable[..., None],
               spheres: int) -> int:
    """Frames per second of the 3D view alone; see the module docstring."""
    import numpy as np

    fr = win.last_frame
    scene = win.scene
    rng = np.random.default_rng(0)
    d = 0.02 * float(np.min(scene.diameter))
    r0, moves = win.renders, 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < args.seconds:
        x = fr.x + d * np.sin(0.3 * moves) + 0.1 * d * rng.standard_normal(fr.x.shape)
        v = fr.v + rng.standard_normal(fr.v.shape)  # (something to colour by)
        scene.update(x, fr.q, v, fr.omega)
        win.view.update()
        moves += 1
        app.processEvents()
    dt = time.perf_counter() - t0
    renders = win.renders - r0
    res = {"scenario": args.scenario, "set": args.set, "spheres": spheres,
           "window": args.size, "colour": scene.colour_by,
           "sprites": bool(getattr(scene, "sprites", False)),  # (older scenes: meshes)
           "axes_drawn": len(getattr(scene, "axes_bodies", range(scene.n))),
           "seconds": round(dt, 2),
           "updates_per_s": round(moves / dt, 1), "render_fps": round(renders / dt, 1)}
    win.close()
    return _emit(args, res, f"3D view alone, {args.scenario} {' '.join(args.set)} "
                 f"({spheres} spheres, "
                 f"{'impostors' if res['sprites'] else 'meshes'}, axes of "
                 f"{res['axes_drawn']} bodies, colour {res['colour']}), window {args.size}: "
                 f"{res['render_fps']} fps over {res['seconds']} s")


def bench_offscreen(args: argparse.Namespace) -> int:
    """``--draw --offscreen``: the scene alone on an off-screen plotter (EGL or Xvfb),
    moved and rendered (one pixel read back to finish the frame) for ``--seconds``."""
    import numpy as np

    from app.scene import BodyScene, make_plotter
    from engine.scenarios import load_scenario, parse_sets

    model = load_scenario(args.scenario, parse_sets(args.set) or None).build_model()
    plotter = make_plotter((620, 780))
    scene = BodyScene(plotter, model, colour_by=args.colour)
    st = model.initial_state
    rng = np.random.default_rng(0)
    d = 0.02 * float(np.min(scene.diameter))
    from vtkmodules.vtkCommonCore import vtkUnsignedCharArray

    pixel = vtkUnsignedCharArray()
    plotter.ren_win.Render()
    frames = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < args.seconds:
        x = st.x + d * np.sin(0.3 * frames)
        scene.update(x, st.q, st.v + rng.standard_normal(st.v.shape), st.omega)
        plotter.ren_win.Render()
        plotter.ren_win.GetPixelData(0, 0, 0, 0, 0, pixel, 0)  # waits for the frame
        frames += 1
    dt = time.perf_counter() - t0
    spheres = int(scene.n * scene.k)
    res = {"scenario": args.scenario, "set": args.set, "spheres": spheres, "size": "620x780",
           "sprites": bool(getattr(scene, "sprites", False)), "seconds": round(dt, 2),
           "fps": round(frames / dt, 1)}
    plotter.close()
    return _emit(args, res, "scene alone, off-screen 620x780, "
                 f"{args.scenario} {' '.join(args.set)} "
                 f"({spheres} spheres, colour {args.colour}): {res['fps']} fps over "
                 f"{res['seconds']} s")


def bench_plots(args: argparse.Namespace) -> int:
    """Redraw cost of the live plots with ``--plots N`` samples; see the docstring."""
    import numpy as np
    from PyQt6.QtWidgets import QApplication

    from app.gui.plot_items import TimedPlotWidget
    from app.gui.plots import PlotPanel
    from app.gui.worker import Frame, Loaded, Series
    from engine.layout import ENERGY_NAMES

    n = int(args.plots)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    panel = PlotPanel()
    w_px, h_px = (int(v) for v in args.size.split("x"))
    panel.resize(max(320, w_px // 3), h_px)
    panel.show()
    names = ["translational", "rotational", "bending", "axial", "shear", "contact", "wall"]
    loaded = Loaded("bench", "bench", None, {}, ["rrp-newmark"], 1e-3, names, (), None)
    panel.reset(loaded)
    t = 1e-3 * np.arange(n)
    rng = np.random.default_rng(0)
    e = np.zeros((n, len(ENERGY_NAMES)))
    for k, name in enumerate(names):
        e[:, ENERGY_NAMES.index(name)] = (1.0 + 0.5 * np.sin(t * (k + 1) * 0.7)
                                          + 0.01 * rng.standard_normal(n))
    total = e.sum(axis=1)
    rel = (total - total[0]) / total[0]
    pl = np.cumsum(rng.standard_normal((n, 6)), axis=0)
    chunk = 100_000
    for a in range(0, n, chunk):  # fed as frames, as the worker sends them
        b = min(n, a + chunk)
        s = Series(t[a:b], e[a:b], total[a:b], rel[a:b], pl[a:b, :3], pl[a:b, 3:])
        panel.append(Frame(t[b - 1], b, "rrp-newmark", 1e-3, None, None, None, None, [],
                           {"energy": s}, [], None, 0.0, 0.0, 0.0))
    for _ in range(5):
        app.processEvents()
    times = []
    p0 = TimedPlotWidget.paint_seconds
    t_end = time.perf_counter() + args.seconds
    while time.perf_counter() < t_end:
        t0 = time.perf_counter()
        panel._dirty = True
        panel.redraw()
        for w in panel.plots:
            w.repaint()
        app.processEvents()
        times.append(time.perf_counter() - t0)
    paint = TimedPlotWidget.paint_seconds - p0
    drawn = panel.drawn_points()
    res = {"samples": n, "redraws": len(times),
           "ms_per_redraw": round(1e3 * float(np.median(times)), 1),
           "ms_painting_per_redraw": round(1e3 * paint / max(1, len(times)), 1),
           "points_handed": panel.points_handed, "most_points_drawn_per_curve":
           max(drawn.values()), "curves": len(drawn)}
    panel.close()
    return _emit(args, res, f"plots with {n:,} samples: {res['ms_per_redraw']} ms per full redraw "
                 f"({res['ms_painting_per_redraw']} ms painting), {res['curves']} curves, "
                 f"at most {res['most_points_drawn_per_curve']} points drawn per curve "
                 f"({res['points_handed']} handed to pyqtgraph in all)")


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
    return _emit(args, res, f"replay scrub, {res['bodies']} bodies, {n} frames, "
                 f"window {args.size}: "
                 f"{res['frames_shown_per_s']} frames shown/s, {res['render_fps']} fps "
                 f"(3D renders) over {res['seconds']} s")


if __name__ == "__main__":
    sys.exit(main())
