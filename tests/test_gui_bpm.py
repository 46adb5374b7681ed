"""The window with a BPM model (issue #44 item 7): the stacked energy plot of the
metamaterial's components (the field's −μ·B below 0, never stacked under the others;
the dissipated energy's legend naming damping), the parameter panel (the bond law's
coefficients read-only, not the binder's k_*), and the view's dipole arrows, field
arrow and stage line following a live run."""

from __future__ import annotations

import numpy as np
import pytest
from gui_needs import skip_without_gui

skip_without_gui()

from app.gui.controls import ControlPanel  # noqa: E402
from app.gui.plots import PlotPanel  # noqa: E402
from app.gui.worker import Frame, Loaded, LoadRequest, Series  # noqa: E402
from engine.layout import ENERGY_NAMES  # noqa: E402
from engine.scenarios import load_scenario  # noqa: E402

pytestmark = pytest.mark.gui
WAIT = 240_000


@pytest.fixture(scope="module")
def meta():
    sc = load_scenario("bpm-metamaterial")
    return sc, sc.build_model()


def _meta_frame(meta, rows: int = 300) -> tuple[Loaded, Frame]:
    """The metamaterial's components over t ∈ [0, 15] as a ramp loads it: the field's
    energy down to −4, its work up to 2, the bonds' and the kinetic energy up, D after
    t = 10."""
    sc, model = meta
    names = [n for n in ENERGY_NAMES if n in model.energy_components]
    t = np.linspace(0.0, 15.0, rows)
    s = np.clip(t / 10.0, 0.0, 1.0)
    e = np.zeros((rows, len(ENERGY_NAMES)))
    for k, n in enumerate(("translational", "rotational", "bending", "axial", "shear")):
        e[:, ENERGY_NAMES.index(n)] = (0.1 + 0.05 * k) * s
    e[:, ENERGY_NAMES.index("field")] = -4.0 * s
    e[:, ENERGY_NAMES.index("field work")] = 2.0 * s
    e[:, ENERGY_NAMES.index("dissipated")] = 0.2 * np.clip(t - 10.0, 0.0, None)
    total = e.sum(axis=1)
    ld = Loaded(sc.name, sc.title, model, dict(model.params), ["rrp-newmark"], 1e-4, names,
                (), None)
    ser = Series(t, e, total, np.zeros(rows), np.zeros((rows, 3)), np.zeros((rows, 3)))
    fr = Frame(15.0, rows, "rrp-newmark", 1e-4, np.zeros((1, 3)), np.zeros((1, 4)),
               np.zeros((1, 3)), np.zeros((1, 3)), [], {"energy": ser}, [], None, 0.0, 0.0,
               0.0)
    return ld, fr


def test_the_field_energy_is_drawn_below_zero_and_nothing_is_stacked_on_it(qtbot, meta):
    panel = PlotPanel()
    qtbot.addWidget(panel)
    ld, fr = _meta_frame(meta)
    panel.reset(ld)
    panel.append(fr)
    panel.redraw()
    curves = panel._curves["energy"]
    names = list(curves)
    outer = {n: c.getData()[1] for n, c in curves.items()}
    inner = {n: c.getData()[1] for n, (_, c) in zip(names, panel._shadows, strict=True)}
    e = fr.series["energy"].energy
    for n in names:  # each band as thick as its value, on its side of 0
        v = e[:, ENERGY_NAMES.index(n)]
        np.testing.assert_allclose(outer[n] - inner[n], v, atol=1e-12)
        if (v < 0).any():
            assert n == "field"
            np.testing.assert_allclose(inner[n], 0.0)
        else:
            assert (inner[n] >= -1e-12).all(), n
    assert outer["field"].min() == pytest.approx(-4.0)
    legend = [item[1].text for item in panel.energy_plot.getPlotItem().legend.items]
    assert "dissipated D (damping)" in legend
    assert not any("impacts" in s for s in legend)
    _, line = panel._curves["total"].getData()
    np.testing.assert_allclose(line, fr.series["energy"].total)


def test_the_panel_shows_the_bond_law_not_the_binders_coefficients(qtbot, meta):
    sc, model = meta
    c = ControlPanel()
    qtbot.addWidget(c)
    c.show_scenario(sc.name, model.name, dict(model.params), model)
    shown = set(c.params.editors)
    assert not shown & {"k_bend", "k_axial", "k_shear"}, shown
    assert {"k_contact", "gravity"} <= shown
    row = c.params.law_rows["1"]
    assert row.text().startswith("bpm/rotational: k_r = 1, k_s = 1, k_t = 0.1, k_b = 0.5, ")
    assert c.params.overrides() == {}  # (nothing hidden is overridden)
    # a binder assembly keeps its coefficients and shows no law
    imp = load_scenario("assembly-impact")
    m2 = imp.build_model()
    c.show_scenario(imp.name, m2.name, dict(m2.params), m2)
    assert {"k_bend", "k_axial", "k_shear"} <= set(c.params.editors)
    assert c.params.law_rows == {}


def test_the_view_draws_the_dipoles_the_field_and_the_stage_of_a_live_run(qtbot,
                                                                          make_window):
    w = make_window(LoadRequest("bpm-metamaterial"), timeout=WAIT)
    fs = w.field_scene
    assert fs is not None and fs.dipole_bodies.size == 64
    w.play()
    qtbot.waitUntil(lambda: w.last_frame.t >= 0.05, timeout=WAIT)
    w.pause()
    qtbot.waitUntil(lambda: w.state == "paused", timeout=WAIT)
    fr = w.last_frame
    assert fr.stage_span == (0, 0.0, pytest.approx(10.0))
    assert f"stage 1 of 2 (field ramp): {fr.t:.3f} of 10 s" in fs.text
    assert f"field E = {0.025 * fr.t:.4g} " in fs.text
    assert fs.field_length > 0
