"""The window while kernels build (issue #25 §2): the scenario's initial state is drawn
before any kernel is built, the status bar says which kernels are being built (k of
n, with a bar), and a switch to a scheme whose kernels are not built yet says so with
a busy bar, then switches."""

from __future__ import annotations

import numpy as np
import pytest
from gui_needs import skip_without_gui

skip_without_gui()

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
    # forces, then each scheme's step: three stages (warm; on a cold cache one more a
    # kernel group, issue #33 item 8), in order, before "loaded"
    n = stages[0][2]
    assert [(e[1], e[2]) for e in stages] == [(k, n) for k in range(1, n + 1)] and n >= 3
    assert seen.index(stages[-1]) < seen.index(("loaded",))
    assert w.loaded.integrators == ["rrp-exact", "rk4"]  # (the scenario's, and the compare)
    assert "the forces of" in stages[0][3]
    assert "rrp-exact" in stages[-2][3] and "rk4" in stages[-1][3]
    for e in stages:  # the pendulum was on screen, with the bar and the text, all along
        assert e[4] is not None and e[4].name == "pendulum"
        assert e[5] and e[3] in e[6]  # (after what is loaded, before the seconds)
        assert e[7:] == ("pendulum", "rrp-exact")  # the panel shows what is being built
    assert not w.build_bar.isVisible()
    np.testing.assert_array_equal(w.last_frame.x, w.loaded.model.initial_state.x)
    w.close()


@pytest.fixture
def staged(monkeypatch):
    """A model too large for the twins (``app.cold_start``, issue #45): on a cold cache
    its kernels are built before it moves, one stage each, as before the twins."""
    import app.cold_start as cold_start

    monkeypatch.setattr(cold_start, "INTERPRETED_MAX_BODIES", 0)


@pytest.fixture
def spawned(monkeypatch):
    """The background compiles started (scheme id, part), each a process that stays
    until killed (nothing compiles: the kernels stay as they were)."""
    import subprocess

    import engine.priming as priming

    calls: list[tuple] = []

    def spawn(scheme, family, part="run"):
        proc = subprocess.Popen(["sleep", "600"])
        calls.append((scheme, part, proc))
        return proc

    monkeypatch.setattr(priming, "spawn_priming", spawn)
    yield calls
    for *_, proc in calls:
        proc.kill()
        proc.wait()


def test_a_switch_to_a_scheme_not_built_yet_says_so(qtbot, make_window, seen, monkeypatch,
                                                    staged):
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


# ---------------------------------------------------------------- issue #33 item 8
def _first_paint(w: MainWindow, tmp_path, name: str):
    """Paint the window now, before the event loop has run (no signal of the worker
    delivered yet: nothing of the load can have finished here), and keep the PNG."""
    img = w.grab()
    assert img.save(str(tmp_path / name), "PNG")
    return img


def test_the_first_paint_shows_the_load_asked_for(qtbot, settings, tmp_path):
    """A fresh config: the panel showed the combo boxes' first items ("dumbbells",
    "rrp-exact", an empty h) and the status bar nothing until the worker's preview."""
    w = MainWindow(None, settings=settings)  # (the default: the torus, its own settings)
    w.resize(1280, 800)
    w.show()
    qtbot.addWidget(w)
    _first_paint(w, tmp_path, "first-paint.png")
    assert w.loaded is None and w.scene is None  # before anything of the load arrived
    c = w.controls
    assert (c.scenario.currentData(), c.integrator.currentData()) == ("torus", "rrp-newmark")
    assert c.h_edit.text() == "0.001"
    assert w.status_shown().startswith("loading Particle-binder torus")
    assert "rrp-newmark, h = 0.001" in w.status_shown()
    assert w.build_bar.isVisible()
    qtbot.waitUntil(lambda: w.loaded is not None, timeout=WAIT)
    w.close()


def test_the_first_paint_shows_an_explicit_request(qtbot, settings, tmp_path):
    w = MainWindow(LoadRequest("pendulum", {}, "rk4", 0.002, ("lgvi",)), settings=settings)
    w.show()
    qtbot.addWidget(w)
    _first_paint(w, tmp_path, "first-paint-pendulum.png")
    c = w.controls
    assert w.loaded is None
    assert (c.scenario.currentData(), c.integrator.currentData()) == ("pendulum", "rk4")
    assert c.h_edit.text() == "0.002"
    assert "with rk4 vs lgvi, h = 0.002" in w.status_shown()
    assert c.params.editors["alpha0"][1].text() == "[0, 4.82843, 0]"
    editors = {k: e for k, (_, e) in c.params.editors.items()}
    qtbot.waitUntil(lambda: w.loaded is not None, timeout=WAIT)
    # the preview and the load showed the same form: not built again (it blinked empty)
    assert {k: e for k, (_, e) in c.params.editors.items()} == editors
    w.close()


def test_a_cold_compile_reports_each_kernel_group_with_an_estimate(qtbot, settings, seen,
                                                                   monkeypatch, staged):
    """A cold cache (simulated: the stepping loop reads as not cached, so the kernel
    groups are built, from the warm cache, one step each): more than two steps, each
    kernel group; the times of a load that took long are kept, and the next cold start
    shows what is left by them."""
    import app.gui.kernel_stages as ks
    import app.gui.startup as startup

    monkeypatch.setattr(ks, "run_kernels_cached", lambda scheme, family: False)
    monkeypatch.setattr(startup, "COLD_SECONDS", 0.0)  # (this load is warm: keep it)
    w = MainWindow(LoadRequest("torus"), settings=settings)
    w.show()
    qtbot.addWidget(w)
    qtbot.waitUntil(lambda: w.loaded is not None and w.last_frame is not None, timeout=WAIT)
    steps = [e for e in seen if e[0] == "progress"]
    assert [(e[1], e[2]) for e in steps] == [(1, 4), (2, 4), (3, 4), (4, 4)]
    texts = [e[3] for e in steps]
    assert "the forces of" in texts[0]
    assert "the rrp-newmark step and its stepping loop" in texts[1]
    assert "the stability estimate" in texts[2] and "the rrp-newmark run" in texts[3]
    assert all(e[7:] == ("torus", "rrp-newmark") for e in steps)
    assert "about" not in steps[0][6]  # (no cold start timed before)
    kept = settings.value("cold_start/torus|rrp-newmark|4")
    assert kept is not None and len(__import__("json").loads(kept)) == 4
    w.close()
    settings.setValue("cold_start/torus|rrp-newmark|4", "[20, 30, 5, 1]")
    del seen[:]
    # (a second name: the first window lives to the teardown, which deletes it with
    # deleteLater; dropped here, Python's collector deleted it at once, at whatever point
    # of a later event loop it ran: a segfault or abort in CI)
    w2 = MainWindow(LoadRequest("torus"), settings=settings)
    w2.show()
    qtbot.addWidget(w2)
    qtbot.waitUntil(lambda: w2.loaded is not None, timeout=WAIT)
    steps = [e for e in seen if e[0] == "progress"]
    assert "about 56 s left (the last cold start took 56 s)" in steps[0][6]
    assert "about 6 s left" in steps[2][6]
    w2.close()



def test_an_unknown_scheme_asked_for_is_not_shown_and_the_worker_says_why(qtbot, settings):
    w = MainWindow(LoadRequest("pendulum", {}, "no-such-scheme"), settings=settings)
    w.show()
    qtbot.addWidget(w)
    c = w.controls
    assert c.scenario.currentData() == "pendulum"
    assert c.integrator.findData("no-such-scheme") < 0  # (no bogus entry in the picker)
    qtbot.waitUntil(lambda: w.loaded is not None, timeout=WAIT)
    assert c.integrator.currentData() == w.loaded.integrators[0]
    w.close()


def test_the_cold_start_line_fits_the_status_bar_and_its_bar_moves_from_the_start(
        qtbot, settings, monkeypatch, staged):
    """Issue #42 item 7: on a cold start the status line with its estimate ran off the
    status bar (a QLabel of ~1100 pixels of text in a 900-pixel window), and the bar,
    at "step 1 of 4", stayed empty for the whole first step (~30 s).  The line is
    elided to the room it has (the start and the time left kept), never under the bar,
    and the bar shows progress from the first report: busy without an estimate,
    filled by the estimate's time with one."""
    import app.gui.kernel_stages as ks

    monkeypatch.setattr(ks, "run_kernels_cached", lambda scheme, family: False)
    seen: list[dict] = []
    progress = MainWindow._on_progress

    def on_progress(self, k, n, text):
        progress(self, k, n, text)
        st, bar = self.status, self.build_bar
        shown = getattr(st, "shown_text", st.text)()  # (what the label draws)
        seen.append({"k": k, "full": st.text(), "shown": shown,
                     "wide": st.fontMetrics().horizontalAdvance(shown),
                     "room": st.contentsRect().width(),
                     "right": st.mapTo(self, st.rect().topRight()).x(),
                     "bar_left": bar.mapTo(self, bar.rect().topLeft()).x(),
                     "bar": (bar.minimum(), bar.maximum(), bar.value()),
                     "window": self.width()})

    monkeypatch.setattr(MainWindow, "_on_progress", on_progress)
    windows = []  # (each lives to the teardown: see the test above)
    for estimate in (None, "[20, 30, 5, 1]"):
        if estimate:
            settings.setValue("cold_start/torus|rrp-newmark|4", estimate)
        del seen[:]
        w = MainWindow(LoadRequest("torus"), settings=settings)
        windows.append(w)
        w.resize(900, 700)
        w.show()
        qtbot.addWidget(w)
        qtbot.waitUntil(lambda w=w: w.loaded is not None, timeout=WAIT)
        w.close()
        assert [s["k"] for s in seen] == [1, 2, 3, 4]
        for s in seen:
            assert s["wide"] <= s["room"], s
            assert s["right"] < s["bar_left"] <= s["window"], s
            lo, hi, value = s["bar"]
            assert hi == 0 or value > lo, s  # busy, or some progress shown
        first = seen[0]
        assert first["shown"].startswith("loading Particle-binder torus")
        if estimate:
            assert "about 55 s left" in first["full"] or "about 56 s left" in first["full"]
            assert first["shown"].endswith("(the last cold start took 56 s)")
            assert first["bar"][1] > 0 and first["bar"][2] > 0  # (not busy: a share)
        else:
            assert first["bar"][1] == 0  # (busy: nothing to measure by yet)


# ---------------------------------------------------------------- issue #45
def test_a_cold_small_model_moves_at_once_while_its_kernels_compile_behind(
        qtbot, settings, seen, monkeypatch, spawned):
    """A cold cache (simulated: the stepping loop reads as not cached) on the torus: no
    kernel group is built before it moves; the processes that build its stepping loop
    (the chain and the kernels beside it) are started and left running, across a
    pause and after the window closes (the next start finds the cache filled).  (That
    the twins step meanwhile, with an empty cache: ``test_gui_cold_start.py``.)"""
    import app.gui.kernel_stages as ks
    from engine.integrators import get_integrator

    monkeypatch.setattr(ks, "run_kernels_cached", lambda scheme, family: False)
    w = MainWindow(LoadRequest("torus"), settings=settings)
    w.show()
    qtbot.addWidget(w)
    qtbot.waitUntil(lambda: w.loaded is not None and w.last_frame is not None, timeout=WAIT)
    scheme = get_integrator("rrp-newmark").scheme_id
    assert [c[:2] for c in spawned] == [(scheme, "run"), (scheme, "siblings")]
    texts = [e[3] for e in seen if e[0] == "progress"]
    assert not any("stepping loop" in t or "stability estimate" in t for t in texts), texts
    x0 = w.last_frame.x.copy()
    w.play()
    qtbot.waitUntil(lambda: w.last_frame.step > 0, timeout=WAIT)
    w.pause()
    qtbot.waitUntil(lambda: w.state == "paused", timeout=WAIT)
    assert not np.array_equal(w.last_frame.x, x0)
    assert w.worker.compiling() == ["rrp-newmark"]  # (a pause leaves the compile going)
    w.close()
    assert all(c[2].poll() is None for c in spawned)  # (left to finish the cache)


def test_a_first_switch_on_a_cold_cache_takes_effect_at_once(qtbot, make_window, seen,
                                                             monkeypatch, spawned):
    """A first switch to a scheme whose loop is not cached, on a small model: its
    loop is built in the background, nothing is built in the worker, and the run
    switches at once (no busy bar: it steps on the twins meanwhile, issue #45)."""
    from engine.integrators import get_integrator

    w = make_window(LoadRequest("pendulum"))
    built = []
    monkeypatch.setattr(Simulation, "kernels_cached", lambda self, name: False)
    monkeypatch.setattr(Simulation, "build_kernels", lambda self, name: built.append(name))
    del seen[:]
    w.set_integrator("rk4")
    qtbot.waitUntil(lambda: w.last_frame is not None and w.last_frame.integrator == "rk4",
                    timeout=WAIT)
    assert built == [] and not [e for e in seen if e[0] == "progress"]
    assert [c[:2] for c in spawned] == [(get_integrator("rk4").scheme_id, "run"),
                                         (get_integrator("rk4").scheme_id, "siblings")]
    assert w.worker.compiling() == ["rk4"]
