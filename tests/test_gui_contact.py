"""Hard contacts in the desktop window (issue 8 §5): the contact model in the scenario
panel, the schemes offered for it, the percussion solver in the status bar, the
``dissipated`` energy component and the spring pendulum.  pytest-qt on a real window (under
Xvfb in CI, like tests/test_gui.py; without a display these are skipped, never faked)."""

from __future__ import annotations

import numpy as np
import pytest
from gui_needs import skip_without_gui

skip_without_gui()

from PyQt6.QtWidgets import QComboBox  # noqa: E402

from app.gui.main_window import MainWindow  # noqa: E402
from app.gui.plots import DISSIPATED  # noqa: E402
from app.gui.worker import LoadRequest  # noqa: E402
from engine.integrators import INTEGRATORS  # noqa: E402
from engine.layout import ENERGY_NAMES  # noqa: E402
from engine.simulation import usable_integrators  # noqa: E402

pytestmark = pytest.mark.gui
WAIT = 180_000  # ms; the first load may compile the kernels (cold cache, loaded machine)
TORUS = LoadRequest("torus")
HARD_TORUS = LoadRequest("torus", {"contact": "hard"})


def _play_until(qtbot, w: MainWindow, t: float, *, allow_failure: bool = False) -> None:
    w.play()
    qtbot.waitUntil(lambda: (w.last_frame is not None and w.last_frame.t >= t)
                    or (allow_failure and w.failure is not None), timeout=WAIT)
    w.pause()
    qtbot.waitUntil(lambda: w.state in ("paused", "failed"), timeout=WAIT)


def _enabled(cb: QComboBox) -> dict[str, bool]:
    return {cb.itemData(i): cb.model().item(i).isEnabled() for i in range(cb.count())
            if cb.itemData(i)}


def test_contact_is_a_combo_and_hard_contact_offers_the_moreau_schemes(qtbot, make_window):
    w = make_window()
    c = w.controls
    p, editor = c.params.editors["contact"]
    assert p.kind == "choice" and isinstance(editor, QComboBox)
    assert [editor.itemData(i) for i in range(editor.count())] == ["penalty", "hard"]
    assert editor.currentData() == "penalty"
    for name in ("e_n", "mu", "e_t"):  # ordinary float fields
        assert c.params.editors[name][0].kind == "float"
        assert not isinstance(c.params.editors[name][1], QComboBox)
    # penalty: the smooth schemes, not the Moreau-type ones
    on = _enabled(c.integrator)
    assert on["rrp-newmark"] and not on["moreau-symmetric"] and not on["moreau"]
    tip = c.integrator.itemData(c.integrator.findData("moreau-symmetric"), 3)  # ToolTipRole
    assert "hard" in tip and "\n" not in tip

    # switch to hard and apply: rrp-newmark cannot drive it, the run goes on with
    # moreau-symmetric instead of failing
    editor.setCurrentIndex(editor.findData("hard"))
    c.apply_params.click()
    qtbot.waitUntil(lambda: w.loaded.model.contact == "hard" and w.last_frame is not None,
                    timeout=WAIT)
    assert w.loaded.integrators == ["moreau-symmetric"]
    assert c.integrator.currentData() == "moreau-symmetric"
    assert "switched to moreau-symmetric" in c.h_message.text()
    usable = set(usable_integrators(w.loaded.model))
    for cb in (c.integrator, *c.compare):
        on = _enabled(cb)
        assert on == {n: n in usable for n in INTEGRATORS}
        assert not on["rrp-newmark"] and on["moreau-symmetric"]
    tip = c.integrator.itemData(c.integrator.findData("rrp-newmark"), 3)
    assert "penalty" in tip and "rrp-newmark" in tip
    assert c.params.editors["contact"][1].currentData() == "hard"
    # it runs; switching mid-run between the Moreau-type schemes works, and asking for a
    # smooth one (a script) is refused with a message while the run goes on
    _play_until(qtbot, w, 0.02)
    w.set_integrator("moreau")
    qtbot.waitUntil(lambda: w.last_frame.integrator == "moreau", timeout=WAIT)
    w.set_integrator("rrp-newmark")
    qtbot.waitUntil(lambda: "penalty" in c.h_message.text(), timeout=WAIT)
    assert w.last_frame.integrator == "moreau"
    assert w.worker.primary is not None and not w.worker._failed
    # and back to penalty: the scenario's own smooth scheme again
    c.params.editors["contact"][1].setCurrentIndex(0)
    c.apply_params.click()
    qtbot.waitUntil(lambda: w.loaded.model.contact == "penalty" and w.last_frame is not None,
                    timeout=WAIT)
    assert w.loaded.integrators == ["rrp-newmark"]
    assert _enabled(c.integrator)["rrp-newmark"]


def test_a_hard_contact_torus_plays_and_the_status_bar_shows_the_percussions(qtbot,
                                                                              make_window):
    w = make_window(HARD_TORUS)
    assert w.loaded.integrators == ["moreau-symmetric"]
    assert "percussions" in w.status.text()
    frames = w.frames_drawn
    _play_until(qtbot, w, 0.1)  # the ring reaches the wall at t ≈ 0.06
    # frames were drawn on the way (how many depends on the machine: the worker skips a
    # frame while the window still draws the last one)
    assert w.frames_drawn > frames
    assert w.failure is None, w.failure
    fr = w.last_frame
    assert fr.contact is not None and fr.contact["impacts"] > 0
    text = w.status.text()
    assert "percussions" in text and "impacts" in text and "sweeps mean" in text
    assert "penetration" in w.status.toolTip()
    # the ring rebounds from the wall: no sphere behind it
    r = 0.5 * w.loaded.model.bodies.D
    assert (fr.x[:, 0] - r).min() > -0.01
    # the penalty torus has no such line
    w.load(LoadRequest("torus"))
    qtbot.waitUntil(lambda: w.loaded.model.contact == "penalty" and w.last_frame is not None,
                    timeout=WAIT)
    assert w.last_frame.contact is None
    assert "percussions" not in w.status.text()


def test_the_dissipated_energy_is_plotted_for_a_hard_run_with_restitution_below_one(
        qtbot, make_window):
    w = make_window(LoadRequest("torus", {"contact": "hard", "e_n": 0.5}))
    assert DISSIPATED in w.loaded.energy_names
    curves = w.plots._curves["energy"]
    assert DISSIPATED in curves
    # stacked on top of the other non-negative components, its legend says what it is
    stacked = [n for n in curves if n not in ("gravity", "mutual gravity")]
    assert stacked[-1] == DISSIPATED
    legend = [item[1].text for item in w.plots.energy_plot.getPlotItem().legend.items]
    assert "dissipated D (impacts, friction)" in legend and "total E + D" in legend
    _play_until(qtbot, w, 0.08, allow_failure=True)
    run = next(iter(w.plots.runs.values()))
    assert run.t.n >= 2
    w.plots.redraw()
    x, y = curves[DISSIPATED].getData()
    assert len(x) == run.t.n
    k = ENERGY_NAMES.index(DISSIPATED)
    # the top of the stack is the sum of the stacked components, D included
    others = [ENERGY_NAMES.index(n) for n in stacked]
    np.testing.assert_allclose(y, run.energy.data[:, others].sum(axis=1))
    assert (run.energy.data[:, k] >= -1e-9).all()


def test_the_spring_pendulum_loads_plays_and_dissipates_with_e_n_below_one(qtbot,
                                                                          make_window):
    w = make_window(LoadRequest("spring-pendulum", {"e_n": 0.5}))
    m = w.loaded.model
    assert m.coordinates == "generalized" and m.spring is not None
    assert w.controls.integrator.currentData() in usable_integrators(m)
    on = _enabled(w.controls.integrator)
    assert not on["rrp-newmark"] and on["moreau-symmetric"]
    # the view: the bob, the spring (a coil) from the pivot, the wall, looked at from +z
    s = w.scene
    assert s.planar and s._coil_mesh is not None
    cam = w.view.camera
    d = np.asarray(cam.position) - np.asarray(cam.focal_point)
    assert abs(d[2]) > 0.99 * np.linalg.norm(d)
    coil0 = s._coil_mesh.points.copy()
    np.testing.assert_allclose(coil0[0], m.spring[0])
    _play_until(qtbot, w, 1.5)  # the bob hits the wall at t ≈ 0.8
    assert w.failure is None, w.failure
    fr = w.last_frame
    assert np.isfinite(fr.x).all()
    assert fr.x[0, 0] >= m.wall[1] - 0.01  # not behind the wall
    coil = s._coil_mesh.points
    assert np.abs(coil - coil0).max() > 0.05  # the spring follows the bob
    np.testing.assert_allclose(coil[-1], fr.x[0] - 0.5 * s.diameter[0]
                               * fr.x[0] / np.linalg.norm(fr.x[0]), atol=1e-9)
    # everything the swing reaches is in view: the bob in the view's middle part
    assert "percussions" in w.status.text()
    run = next(iter(w.plots.runs.values()))
    D = run.energy.data[:, ENERGY_NAMES.index(DISSIPATED)]
    assert D[-1] > 0.01 and (np.diff(D) >= -1e-9).all()
    # E + D stays at E₀: the total curve is flat to the scheme's error
    tot = run.total.data
    assert abs(tot[-1] - tot[0]) < 0.05 * abs(tot[0])


def test_the_spring_pendulum_view_shows_the_wall_the_spring_and_the_bob(qtbot, make_window):
    w = make_window(LoadRequest("spring-pendulum"))
    qtbot.wait(200)
    ren = w.view.renderer
    h, wd = w.view.height(), w.view.width()

    def on_screen(p) -> tuple[float, float]:
        ren.SetWorldPoint(*p, 1.0)
        ren.WorldToDisplay()
        x, y, _ = ren.GetDisplayPoint()
        return x, y

    # the swing region (pivot, wall at x = -0.5, bob down to y = -1.6, out to x = 1.2)
    for p in ((0, 0, 0), (-0.5, -1.6, 0), (1.2, -1.6, 0), (-0.5, 0.2, 0), (1.2, 0.2, 0)):
        x, y = on_screen(p)
        assert 0 < x < wd and 0 < y < h, (p, x, y, wd, h)
    img = w.view_image()
    flat = img.reshape(-1, 3).astype(int)
    # the spring's blue-grey coil and the wall's slab are drawn
    spring = (np.abs(flat - [0x3D, 0x5A, 0x80]).sum(axis=1) < 40).sum()
    assert spring > 50, spring


def test_a_step_the_implicit_scheme_cannot_start_from_is_refused_not_raised(qtbot,
                                                                           make_window):
    w = make_window(LoadRequest("spring-pendulum", {}, "moreau-variational", 1e-3))
    _play_until(qtbot, w, 0.3)
    w.worker.primary.max_iterations = 1  # its velocity variable cannot be re-derived
    c = w.controls
    with qtbot.capture_exceptions() as errors:
        c.h_edit.setText("0.3")
        c.h_apply.click()
        qtbot.waitUntil(lambda: "lower h" in c.h_message.text(), timeout=WAIT)
    assert not errors
    assert w.worker.primary.h == 1e-3 and w.last_frame.h == 1e-3
    assert w.worker.thread().isRunning()
