"""Speed of the 3D scene (app/scene/) and of ``rrp export``.

    python benchmarks/bench_render.py            # off-screen (EGL without DISPLAY)
    xvfb-run -a -s "-screen 0 1280x1024x24" python benchmarks/bench_render.py --qt

1. Scene: frames per second of ``BodyScene.update`` + render with the 80-sphere torus
   at 800x600, replaying states recorded from a real run (through the impact), with
   the frame completed each time (one pixel read back) and, separately, with all the
   pixels read back into numpy (what the export does).  ``--qt`` also measures the
   scene in a pyvistaqt ``QtInteractor`` (``plotter.update()`` + event processing;
   needs an X server).
2. Export: wall-clock time per frame of ``export_animation`` (MP4 and GIF, 800x600,
   2 s at 30 fps), split into simulation, render (+ readback) and encoding.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.export import export_animation  # noqa: E402  (sets EGL when there is no X)
from app.scene import BodyScene, make_plotter  # noqa: E402

SIZE = (800, 600)
WARM_UP = 20


def recorded_states(n_frames: int) -> tuple[object, list[tuple[np.ndarray, ...]]]:
    """The torus model and ``n_frames`` states ``(x, q, v, Ω)`` over t ∈ [0, 2.5]."""
    from engine.drivers import simulation_for
    from engine.scenarios import load_scenario

    sc = load_scenario("torus")
    model = sc.build_model()
    sim = simulation_for(model, sc.run.integrator, sc.run.h, record_every=10**9,
                     record_frames=False)
    states = []
    for k in range(n_frames):
        sim.run_until(2.5 * k / n_frames)
        s = sim.snapshot()
        states.append((s.x, s.q, s.v, s.omega))
    return model, states


def scene_fps(model, states, colour_by: str, readback: bool) -> float:
    from vtkmodules.vtkCommonCore import vtkUnsignedCharArray

    p = make_plotter(SIZE)
    scene = BodyScene(p, model, colour_by=colour_by)
    p.render()
    pixel = vtkUnsignedCharArray()
    for x, q, v, om in states[:WARM_UP]:  # shader compilation, first allocations
        scene.update(x, q, v, om)
        p.ren_win.Render()
        p.screenshot(return_img=True)
    t0 = time.perf_counter()
    for x, q, v, om in states:
        scene.update(x, q, v, om)
        p.ren_win.Render()  # Plotter.render() is a no-op until the plotter is shown
        if readback:
            p.screenshot(return_img=True)
        else:  # one pixel read back: waits for the frame to be drawn, copies nothing
            p.ren_win.GetPixelData(0, 0, 0, 0, 0, pixel, 0)
    fps = len(states) / (time.perf_counter() - t0)
    p.close()
    return fps


def qt_fps(model, states, colour_by: str) -> float:
    import pyvista as pv
    from PyQt6 import QtWidgets
    from pyvistaqt import QtInteractor

    pv.global_theme.multi_samples = 0
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([])
    win = QtWidgets.QMainWindow()
    win.resize(*SIZE)
    view = QtInteractor(win)
    win.setCentralWidget(view)
    win.show()
    app.processEvents()
    scene = BodyScene(view, model, colour_by=colour_by)
    for x, q, v, om in states[:WARM_UP]:
        scene.update(x, q, v, om)
        view.update()
        app.processEvents()
    t0 = time.perf_counter()
    for x, q, v, om in states:
        scene.update(x, q, v, om)
        view.update()
        app.processEvents()
    fps = len(states) / (time.perf_counter() - t0)
    view.close()
    win.close()
    return fps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--frames", type=int, default=300, help="frames per scene measurement")
    ap.add_argument("--qt", action="store_true", help="also measure a pyvistaqt QtInteractor")
    ap.add_argument("--no-export", action="store_true", help="skip the export timing")
    args = ap.parse_args()

    model, states = recorded_states(args.frames)
    print(f"## scene: torus, {model.n_bodies} spheres, {SIZE[0]}x{SIZE[1]}, "
          f"{args.frames} frames")
    for colour in ("none", "speed"):
        f_fin = scene_fps(model, states, colour, readback=False)
        f_read = scene_fps(model, states, colour, readback=True)
        print(f"  off-screen, colour {colour:<5}: {f_fin:6.1f} fps (update + render, "
              f"frame complete), {f_read:6.1f} fps (+ pixel readback)")
    if args.qt:
        for colour in ("none", "speed"):
            print(f"  QtInteractor, colour {colour:<5}: {qt_fps(model, states, colour):6.1f} fps"
                  " (update + plotter.update() + processEvents)")
    if args.no_export:
        return
    print("## export: torus, t = 0 → 2 at 30 fps (61 frames), 800x600")
    with tempfile.TemporaryDirectory() as tmp:
        for ext in ("mp4", "gif"):
            out = Path(tmp) / f"bench.{ext}"
            r = export_animation("torus", t_end=2.0, fps=30, size=SIZE, out=out,
                                 progress=False)
            n = r.frames
            setup = r.wall_seconds - r.sim_seconds - r.render_seconds - r.encode_seconds
            print(f"  {ext}: {r.wall_seconds:5.2f} s total, {1e3 * r.seconds_per_frame:5.1f} "
                  f"ms/frame (sim {1e3 * r.sim_seconds / n:4.1f}, render+readback "
                  f"{1e3 * r.render_seconds / n:4.1f}, encode {1e3 * r.encode_seconds / n:4.1f}"
                  f" ms/frame; set-up {setup:.2f} s), {out.stat().st_size / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
