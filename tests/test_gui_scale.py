"""The app at the pile's scale (issue #9 §3): the spheres of a large model as impostors
coloured from the frame's arrays, the level of detail of the body axes, the colour
modes in the View menu, the plots' decimation at 10⁶ samples and the engine's thread
count set inside the worker's thread (``rrp gui --threads``).  No timing asserts: the
frame rates are in BENCHMARKS.md (``benchmarks/bench_gui.py``)."""

from __future__ import annotations

import configparser
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from gui_needs import skip_without_gui

skip_without_gui()

from app.gui.plots import MAX_BUCKETS, PeakCache, PlotPanel, decimate  # noqa: E402
from app.gui.worker import Frame, Loaded, LoadRequest, Series  # noqa: E402
from app.scene import AXES_ALL_LIMIT, GROUP_COLOURS  # noqa: E402
from engine.layout import ENERGY_NAMES  # noqa: E402
from engine.parallel import get_threads, max_threads  # noqa: E402
from engine.rotations import quat_to_matrix  # noqa: E402

pytestmark = pytest.mark.gui
ROOT = Path(__file__).resolve().parent.parent
WAIT = 180_000
PILE = LoadRequest("tori-pile")  # 50 rings of 20 spheres: 1000 bodies


def _play_until(qtbot, w, t: float) -> None:
    w.play()
    qtbot.waitUntil(lambda: w.last_frame is not None and w.last_frame.t >= t, timeout=WAIT)
    w.pause()
    qtbot.waitUntil(lambda: w.state == "paused", timeout=WAIT)


def _drawn_is_last_frame(w) -> bool:
    pts = np.asarray(w.scene.sphere_mesh.points)
    return pts.shape == w.last_frame.x.shape and np.allclose(pts, w.last_frame.x,
                                                              rtol=0, atol=1e-12)


# ---------------------------------------------------------------- spheres and colours
def test_pile_spheres_are_points_coloured_by_each_spheres_speed(qtbot, make_window):
    w = make_window(PILE)
    n = w.loaded.model.n_bodies
    assert n == 1000 > AXES_ALL_LIMIT
    sc = w.scene
    assert sc.sprites and sc.points_per_sphere == 1
    assert sc.sphere_mesh.n_points == n  # one point per sphere, not a mesh each
    np.testing.assert_allclose(sc.sphere_mesh.point_data["radius"],
                               0.5 * w.loaded.model.bodies.D, rtol=1e-12)
    mesh_before = sc.sphere_mesh
    w.colour_actions["speed"].trigger()  # View → Colour by → speed
    assert w.controls.colour.currentText() == "speed" and sc.colour_by == "speed"
    # the lowest ring meets the floor at t ≈ 0.31 (until then every sphere falls at g t:
    # the same speed); by 0.45 the speeds spread by ≈ 0.5 (rrp-newmark, h = 1e-3)
    _play_until(qtbot, w, 0.45)
    qtbot.waitUntil(lambda: _drawn_is_last_frame(w), timeout=WAIT)
    speed = np.linalg.norm(w.last_frame.v, axis=1)
    vals = np.asarray(sc.sphere_mesh.point_data["value"])
    np.testing.assert_allclose(vals, speed, rtol=1e-12, atol=1e-15)
    assert speed.max() > 0.1 and np.ptp(speed) > 0.01
    assert sc.sphere_actor.mapper.scalar_visibility
    lo, hi = sc.colour_range
    assert lo == 0.0 and hi >= speed.max()
    # the same arrays, updated in place: no new mesh, no new actor per frame
    assert sc.sphere_mesh is mesh_before
    assert w.view.renderer.actors["rrp-spheres"] is sc.sphere_actor


def test_body_group_colours_each_ring_in_its_own_colour(qtbot, make_window):
    w = make_window(PILE)
    w.colour_actions["body group"].trigger()
    sc = w.scene
    assert sc.colour_by == "body group" and w.colour_actions["body group"].isChecked()
    n_p = w.loaded.model.params["n_particles"]
    want = (np.arange(w.loaded.model.n_bodies) // n_p) % GROUP_COLOURS
    np.testing.assert_array_equal(sc.sphere_mesh.point_data["value"], want)
    # one table entry per group: value k is drawn in colour k
    lut = sc.sphere_actor.mapper.lookup_table
    assert lut.n_values == GROUP_COLOURS
    assert sc.colour_range == (-0.5, GROUP_COLOURS - 0.5)
    rgb = [tuple(np.round(lut.map_value(float(k))[:3], 6)) for k in range(GROUP_COLOURS)]
    assert len(set(rgb)) == GROUP_COLOURS
    # the groups stay put as the rings move, and back to none switches the map off
    _play_until(qtbot, w, 0.05)
    np.testing.assert_array_equal(sc.sphere_mesh.point_data["value"], want)
    w.controls.colour.setCurrentText("none")
    assert w.colour_actions["none"].isChecked()
    assert not sc.sphere_actor.mapper.scalar_visibility


def test_colour_switches_between_screenshots_and_back_to_a_small_model(qtbot, make_window,
                                                                       tmp_path):
    # (PyVista's PointGaussianMapper crashed VTK at the first render after a screenshot
    # once its scalars were switched on: the scene uses VTK's class directly)
    w = make_window(PILE)
    for k, mode in enumerate(("none", "speed", "body group", "rotational energy", "none")):
        w.controls.colour.setCurrentText(mode)
        out = w.save_screenshot(tmp_path / f"{k}.png")
        assert out.stat().st_size > 10_000
    img = w.view_image()
    assert img.std() > 5  # the spheres, the box and the floor: not a blank view
    w.load(LoadRequest("torus"))
    qtbot.waitUntil(lambda: w.loaded.model.n_bodies == 80 and w.last_frame is not None,
                    timeout=WAIT)
    assert not w.scene.sprites and len(w.scene.axes_bodies) == 80
    w.save_screenshot(tmp_path / "torus.png")


# ---------------------------------------------------------------- axes: level of detail
def test_axes_of_a_large_model_only_for_the_inspected_body(qtbot, make_window):
    w = make_window(PILE)
    sc = w.scene
    assert w.axes_detail == "auto" and w.axes_detail_actions["auto"].isChecked()
    assert w.controls.axes.isChecked()  # axes are on, yet 1000 frames are not drawn
    assert not sc._axes_actor.GetVisibility() and len(sc.axes_bodies) == 0
    w.inspect(7)
    np.testing.assert_array_equal(sc.axes_bodies, [7])
    assert sc._axes_actor.GetVisibility()
    _play_until(qtbot, w, 0.05)
    qtbot.waitUntil(lambda: _drawn_is_last_frame(w), timeout=WAIT)
    fr = w.last_frame
    pts = np.asarray(sc.axes_mesh.points).reshape(-1, 4, 3)
    assert pts.shape[0] == 1
    R = quat_to_matrix(fr.q[7])
    np.testing.assert_allclose(pts[0, 0], fr.x[7], atol=1e-12)
    for j in range(3):
        np.testing.assert_allclose(pts[0, j + 1], fr.x[7] + sc.axis_length[7] * R[:, j],
                                   atol=1e-12)
    # View → Axes detail → All bodies: every frame, the option remembered
    w.axes_detail_actions["all"].trigger()
    assert len(sc.axes_bodies) == 1000 and sc.axes_mesh.n_points == 4000
    assert sc._axes_actor.GetVisibility()
    assert w.settings.value("axes_detail") == "all"
    w.axes_detail_actions["inspected"].trigger()
    np.testing.assert_array_equal(sc.axes_bodies, [7])
    w.inspect(None)
    assert not sc._axes_actor.GetVisibility() and len(sc.axes_bodies) == 0


def test_small_models_keep_every_bodys_axes_and_meshes(make_window):
    w = make_window()  # the 80-sphere torus draws as before
    sc = w.scene
    assert not sc.sprites and sc.points_per_sphere > 1
    assert len(sc.axes_bodies) == 80 and sc._axes_actor.GetVisibility()
    w.set_axes_detail("inspected")
    assert not sc._axes_actor.GetVisibility()
    w.inspect(3)
    np.testing.assert_array_equal(sc.axes_bodies, [3])
    w.set_axes_detail("auto")
    assert len(sc.axes_bodies) == 80
    w.controls.axes.setChecked(False)
    assert len(sc.axes_bodies) == 0 and not sc._axes_actor.GetVisibility()


# ---------------------------------------------------------------- plots at 10⁶ samples
def test_decimate_keeps_every_buckets_extremes():
    rng = np.random.default_rng(3)
    n, b = 10_007, 50
    t = np.sort(rng.uniform(0, 10, n))
    y = rng.standard_normal((n, 2))
    td, yd = decimate(t, y, buckets=b)
    assert len(td) == 2 * b and yd.shape == (2 * b, 2)
    starts = (np.arange(b) * n) // b
    ends = np.append(starts[1:], n)
    for k in range(b):
        seg = y[starts[k]:ends[k]]
        np.testing.assert_array_equal(yd[2 * k], seg.min(axis=0))
        np.testing.assert_array_equal(yd[2 * k + 1], seg.max(axis=0))
        assert td[2 * k] == t[starts[k]] and td[2 * k + 1] == t[ends[k] - 1]
    # a visible range: its rows (and one beyond each end) only
    td, yd = decimate(t, y, (2.0, 2.5), buckets=b)
    inside = (t >= 2.0) & (t <= 2.5)
    assert td[0] < 2.0 and td[-1] > 2.5 and yd[:, 0].max() == y[inside, 0].max()


def test_peak_cache_fed_in_chunks_equals_one_batch():
    rng = np.random.default_rng(4)
    n = 50_000
    t = np.arange(n) * 1e-3
    cols = [np.cumsum(rng.standard_normal(n)), rng.standard_normal(n)]
    cols[1][31_337] = 99.0  # a one-sample spike
    inc = PeakCache(buckets=300)
    a = 0
    for b in (100, 700, 5_000, 5_001, 20_000, 33_333, n):  # the buckets double as it grows
        td_i, yd_i = inc.get(t[:b], [c[:b] for c in cols])
        assert len(td_i) <= 2 * 300 + 2
        a = b
    td, yd = PeakCache(buckets=300).get(t[:a], cols)
    np.testing.assert_array_equal(td_i, td)
    np.testing.assert_array_equal(yd_i, yd)
    assert yd[:, 1].max() == 99.0 and yd[:, 0].min() == cols[0].min()
    assert np.all(np.diff(td) >= 0)


def test_plots_draw_a_bounded_number_of_points_at_a_million_samples(qtbot):
    panel = PlotPanel()
    qtbot.addWidget(panel)
    panel.resize(500, 900)
    panel.show()
    names = ["translational", "rotational", "bending", "contact"]
    panel.reset(Loaded("t", "t", None, {}, ["rrp-newmark"], 1e-3, names, (), None))
    n = 1_000_000
    t = 1e-3 * np.arange(n)
    e = np.zeros((n, len(ENERGY_NAMES)))
    for k, name in enumerate(names):
        e[:, ENERGY_NAMES.index(name)] = 1.0 + 0.5 * np.sin((k + 1) * t)
    total = e.sum(axis=1)
    rel = 1e-6 * np.sin(t)
    rel[654_321] = 3e-3  # one sample: must still be drawn
    pl = np.zeros((n, 6))
    for a in range(0, n, 250_000):
        b = a + 250_000
        panel.append(Frame(t[b - 1], b, "rrp-newmark", 1e-3, None, None, None, None, [],
                           {"energy": Series(t[a:b], e[a:b], total[a:b], rel[a:b],
                                             pl[a:b, :3], pl[a:b, 3:])},
                           [], None, 0.0, 0.0, 0.0))
    panel.redraw()
    qtbot.wait(50)
    drawn = panel.drawn_points()
    assert len(drawn) == len(names) + 1 + 1 + 6  # energies, total, error, P and L
    assert max(drawn.values()) <= 2 * MAX_BUCKETS + 2
    assert min(drawn.values()) > 100
    assert panel.points_handed <= len(drawn) * (2 * MAX_BUCKETS + 2)
    err = next(c for c in panel.error_plot.getPlotItem().listDataItems())
    x, y = err.getData()
    assert np.nanmax(y) == 3e-3  # the spike survived the decimation
    # the stacked top (the last stacked component) is the total of the stacked parts
    top = panel._curves["energy"][names[-1]]
    _, y_top = top.getData()
    assert np.isclose(np.nanmax(y_top), total.max(), rtol=1e-3)
    # zoomed in to one second: the rows there, every one of them
    panel.energy_plot.setXRange(500.0, 501.0, padding=0)
    assert panel.dirty
    panel.redraw()
    x, _ = panel._curves["total"].getData()
    inside = x[(x >= 500.0) & (x <= 501.0)]
    assert len(inside) >= 1000  # full resolution: 1000 samples in that second


# ---------------------------------------------------------------- threads
def test_the_worker_sets_the_engines_threads_in_its_own_thread(qtbot, settings,
                                                              make_window):
    settings.setValue("threads", 1)  # as `rrp gui --threads 1` stores it
    main_before = get_threads()
    w = make_window(LoadRequest("pendulum"))
    qtbot.waitUntil(lambda: w.worker.engine_threads is not None, timeout=WAIT)
    assert w.worker.engine_threads == 1  # read by engine.parallel.get_threads there
    assert w.threads_actions[1].isChecked()
    # Numba's count is per thread: the GUI thread's is untouched
    assert get_threads() == main_before
    w.set_threads(0)  # Simulation → Threads → All cores
    qtbot.waitUntil(lambda: w.worker.engine_threads == max_threads(), timeout=WAIT)
    assert int(w.settings.value("threads")) == 0 and w.threads_actions[0].isChecked()
    assert get_threads() == main_before


@pytest.mark.slow  # starts the app in a process of its own (docs/testing.md)
def test_rrp_gui_threads_option(tmp_path):
    bad = subprocess.run([sys.executable, "-m", "app", "gui", "pendulum", "--threads", "0"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert bad.returncode == 2 and "--threads" in bad.stderr and "from 1 to" in bad.stderr
    shot = tmp_path / "w.png"
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-m", "app", "gui", "pendulum", "--threads", "1",
                          "--screenshot", str(shot), "--quit-after", "0.5"],
                         cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stderr
    ini = next(tmp_path.rglob("rrp-studio.conf"))
    cfg = configparser.ConfigParser()
    cfg.read(ini)
    assert cfg["General"]["threads"] == "1"
