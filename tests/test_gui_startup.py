"""The window while kernels build (issue #25 §2): the scenario's initial state is drawn
before any kernel is built, the status bar says which kernels are being built (k of
n, with a bar), and a switch to a scheme whose kernels are not built yet says so with
a busy bar, then switches."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

pytest.importorskip("pytestqt")
pytest.importorskip("pyvistaqt")

if not os.environ.get("DISPLAY") and sys.platform.startswith("linux"):
    pytest.skip("the 3D view needs an X display (CI runs these under Xvfb)",
                allow_module_level=True)

from app.gui.main_window import MainWindow  # noqa: E402
from app.gui.worker import LoadRequest  # noqa: E402
from engine.simulation import Simulation  # noqa: E402

pytestmark = pytest.mark.gui
WAIT = 300_000


@pytest.fixture
def seen(monkeypatch):
    """What the window showed at each progress report, and when it was loaded."""
    log: list[tuple] = []
    progress = MainWindow._on_progress
    loaded = MainWindow._on_loaded

    def on_progress(self, k, n, text):
        progress(self, k, n, text)
        drawn = None if self.scene is None else self.scene.model
        log.append(("progress", k, n, text, drawn, self.build_bar.isVisible(),
                    self.status.text(), self.controls.scenario.currentData(),
                    self.controls.integrator.currentData()))

    def on_loaded(self, ld):
        log.append(("loaded",))
        loaded(self, ld)

    monkeypatch.setattr(MainWindow, "_on_progress", on_progress)
    monkeypatch.setattr(MainWindow, "_on_loaded", on_loaded)
    return log


def test_the_initial_state_is_drawn_while_the_kernels_build(qtbot, settings, seen):
    w = MainWindow(LoadRequest("pendulum", compare=("rk4",)), settings=settings)
    w.resize(1000, 700)
    w.show()
    qtbot.addWidget(w)
    qtbot.waitUntil(lambda: w.loaded is not None and w.last_frame is not None, timeout=WAIT)
    stages = [e for e in seen if e[0] == "progress"]
    # forces, then each scheme's step: three stages, in order, before "loaded"
    assert [(e[1], e[2]) for e in stages] == [(1, 3), (2, 3), (3, 3)]
    assert seen.index(stages[-1]) < seen.index(("loaded",))
    assert w.loaded.integrators == ["rrp-exact", "rk4"]  # (the scenario's, and the compare)
    assert "rrp-exact step" in stages[1][3] and "rk4 step" in stages[2][3]
    for e in stages:  # the pendulum was on screen, with the bar and the text, all along
        assert e[4] is not None and e[4].name == "pendulum"
        assert e[5] and e[6] == e[3]
        assert e[7:] == ("pendulum", "rrp-exact")  # the panel shows what is being built
    assert not w.build_bar.isVisible()
    np.testing.assert_array_equal(w.last_frame.x, w.loaded.model.initial_state.x)
    w.close()


def test_a_switch_to_a_scheme_not_built_yet_says_so(qtbot, make_window, seen, monkeypatch):
    w = make_window(LoadRequest("pendulum"))
    built = []
    monkeypatch.setattr(Simulation, "kernels_cached", lambda self, name: False)
    build = Simulation.build_kernels
    monkeypatch.setattr(Simulation, "build_kernels",
                        lambda self, name: (built.append(name), build(self, name)))
    del seen[:]
    w.set_integrator("rk4")
    qtbot.waitUntil(lambda: w.last_frame is not None and w.last_frame.integrator == "rk4",
                    timeout=WAIT)
    qtbot.waitUntil(lambda: not w.build_bar.isVisible(), timeout=WAIT)
    assert built == ["rk4"]
    busy = [e for e in seen if e[0] == "progress"]
    assert [(e[1], e[2]) for e in busy] == [(0, 0)]  # a busy bar: no count to show
    assert busy[0][3] == "compiling rk4 (first use)…" and busy[0][5]
