"""Soak test of the desktop window (issue #10 §6): 1,000 random actions with a fixed seed
on a running window — switch integrator (usable and not), change ``h`` (fine, beyond the
stability limit, invalid text), toggle compare, reset, load another scenario, step,
play/pause, view options, picking — and then: no exception (in the GUI or the worker
thread), no dead worker, no frozen UI (each action answered within 2 s: a ping through
the worker's event loop back to the GUI's), memory growth over the last 500 actions
below 50 MB (RSS).

Cheap scenarios mostly (small tori, few steps per frame), so that it stays a CI test of
about a minute.  The figures are printed (``-s``) for BENCHMARKS.md.

Replay / branch: add actions to :data:`ACTIONS` (``(name, weight, fn(window, rng))``)
when the window gains them (e.g. ``"scrub"``: move the timeline slider of an opened run;
``"branch"``: *Continue from here* with a random integrator) — the checks after each
action stay as they are.
"""

from __future__ import annotations

import gc
import os
import sys
import time
from collections import Counter
from collections.abc import Callable

import numpy as np
import pytest

pytest.importorskip("pytestqt")
pytest.importorskip("pyvistaqt")
psutil = pytest.importorskip("psutil")

if not os.environ.get("DISPLAY") and sys.platform.startswith("linux"):
    pytest.skip("the 3D view needs an X display (CI runs these under Xvfb)",
                allow_module_level=True)

from PyQt6.QtCore import QSettings  # noqa: E402

from app.gui.main_window import MainWindow  # noqa: E402
from app.gui.worker import LoadRequest  # noqa: E402

pytestmark = [pytest.mark.gui, pytest.mark.slow]

SEED = 20261110
N_ACTIONS = 1000
RESPONSE_LIMIT = 2.0  # s
RSS_LIMIT = 50e6  # bytes, growth over the last half
WAIT = 180_000  # ms: a first load may compile kernels (cold cache)

SCENARIOS: tuple[tuple[LoadRequest, int], ...] = (  # (request, weight): cheap ones mostly
    (LoadRequest("pendulum"), 3),
    (LoadRequest("dumbbells"), 3),
    (LoadRequest("spring-pendulum"), 3),
    (LoadRequest("torus-free", {"n_particles": 12}), 2),
    (LoadRequest("torus", {"n_particles": 16}), 2),
    (LoadRequest("torus-hard", {"n_particles": 12}), 2),
    (LoadRequest("torus"), 1),
)
BAD_H = ("abc", "", "-1", "0", "nan", "1e-300", "5", "inf", "1e", "0x10")


def _integrator(w: MainWindow, rng: np.random.Generator) -> None:
    c = w.controls
    if rng.random() < 0.1:  # one it cannot run: refused, the old one stays
        bad = [c.integrator.itemData(i) for i in range(c.integrator.count())
               if c.integrator.itemData(i) not in c.usable]
        if bad:
            w.set_integrator(str(rng.choice(bad)))
            return
    name = str(rng.choice(c.usable))
    idx = c.integrator.findData(name)
    c.integrator.setCurrentIndex(idx)
    c.integrator.activated.emit(idx)


def _h(w: MainWindow, rng: np.random.Generator) -> None:
    c = w.controls
    h0 = w.loaded.h if w.loaded is not None else 1e-3
    u = rng.random()
    if u < 0.5:
        text = f"{h0 * rng.uniform(0.5, 1.5):.3g}"
    elif u < 0.75:  # beyond the stability limit (may blow up: pauses with a banner)
        lim = c.h_limit if np.isfinite(c.h_limit) else 10 * h0
        text = f"{lim * rng.uniform(1.2, 4.0):.3g}"
    else:
        text = str(rng.choice(BAD_H))
    c.h_edit.setText(text)
    c._check_h_text(text)  # what typing does
    c.h_edit.returnPressed.emit()


def _compare(w: MainWindow, rng: np.random.Generator) -> None:
    c = w.controls
    cb = c.compare[int(rng.integers(2))]
    if cb.currentData() and rng.random() < 0.5:
        idx = 0  # off
    else:
        idx = cb.findData(str(rng.choice(c.usable)))
    cb.setCurrentIndex(idx)
    cb.activated.emit(idx)


def _load(w: MainWindow, rng: np.random.Generator) -> None:
    reqs = [r for r, _ in SCENARIOS]
    p = np.array([k for _, k in SCENARIOS], float)
    w.load(reqs[int(rng.choice(len(reqs), p=p / p.sum()))])


def _play_pause(w: MainWindow, rng: np.random.Generator) -> None:
    w.controls.play.click()


def _step(w: MainWindow, rng: np.random.Generator) -> None:
    w.controls.step.click()


def _reset(w: MainWindow, rng: np.random.Generator) -> None:
    w.controls.reset.click()


def _speed(w: MainWindow, rng: np.random.Generator) -> None:
    w.controls.speed.setValue(int(rng.integers(1, 9)))


def _view(w: MainWindow, rng: np.random.Generator) -> None:
    c = w.controls
    what = int(rng.integers(5))
    if what == 0:
        c.colour.setCurrentIndex(int(rng.integers(c.colour.count())))
    elif what == 1:
        c.axes.toggle()
    elif what == 2:
        c.axis_scale.setValue(float(rng.uniform(0.25, 5.0)))
    elif what == 3:
        c.follow.toggle()
    else:
        w.reset_camera()


def _pick(w: MainWindow, rng: np.random.Generator) -> None:
    if w.scene is None:
        return
    if rng.random() < 0.7:  # on a body (where it is drawn), else anywhere
        body = int(rng.integers(w.scene.n))
        w.pick_at(*w.scene.display_position(body))
    else:
        size = w.view.ren_win.GetSize()
        w.pick_at(float(rng.uniform(0, size[0])), float(rng.uniform(0, size[1])))


def _plot_options(w: MainWindow, rng: np.random.Generator) -> None:
    p = w.plots
    (p.stacked, p.log_error, p.drift)[int(rng.integers(3))].toggle()


def _dwell(w: MainWindow, rng: np.random.Generator) -> None:
    """Let it run a little (frames drawn, plots redrawn)."""
    if w.loaded is not None and not w.worker.playing and rng.random() < 0.5:
        w.play()


RUN_FILE: dict[str, str] = {}  # the recorded run the soak opens (written once)


def _run_file() -> str:
    if "path" not in RUN_FILE:
        import tempfile

        from engine.io import RunWriter
        from engine.scenarios import load_scenario
        from engine.simulation import Simulation

        path = os.path.join(tempfile.mkdtemp(prefix="rrp-soak-"), "torus16.h5")
        model = load_scenario("torus", {"n_particles": 16}).build_model()
        sim = Simulation(model, "rrp-newmark", 1e-3, record_every=5)
        w = RunWriter(path, sim, scenario="torus")
        sim.run_until(0.1, callback=lambda s: w.flush())
        sim.set_h(5e-4)  # an event: a marker in the plots
        sim.run_until(0.2, callback=lambda s: w.flush())
        w.close()
        RUN_FILE["path"] = path
    return RUN_FILE["path"]


def _open_run(w: MainWindow, rng: np.random.Generator) -> None:
    if rng.random() < 0.1:  # not a run file: refused, the window stays as it is
        w.open_run(__file__)
        return
    w.open_run(_run_file())


def _scrub(w: MainWindow, rng: np.random.Generator) -> None:
    if w.recording is None:
        if rng.random() < 0.3:
            w.open_run(_run_file())
        return
    s = w.timeline.slider
    if rng.random() < 0.2:  # play the recording a moment
        w.timeline.set_playing(not w.timeline.playing)
        return
    for _ in range(int(rng.integers(1, 30))):  # a drag: many values in a row
        s.setValue(int(rng.integers(s.minimum(), s.maximum() + 1)))


def _branch(w: MainWindow, rng: np.random.Generator) -> None:
    """Continue from here, from a recorded frame or the live state, with a random
    usable scheme (and sometimes compare schemes)."""
    c = w.controls
    if c.usable:
        idx = c.integrator.findData(str(rng.choice(c.usable)))
        if w.recording is not None:
            w.set_integrator(c.integrator.itemData(idx))
        else:
            c.integrator.setCurrentIndex(idx)
    if rng.random() < 0.3:
        for cb in c.compare:
            cb.setCurrentIndex(int(rng.integers(0, cb.count())))
    w.branch_here()


ACTIONS: list[tuple[str, float, Callable[[MainWindow, np.random.Generator], None]]] = [
    ("integrator", 12, _integrator),
    ("h", 12, _h),
    ("compare", 3, _compare),
    ("load", 3, _load),
    ("play/pause", 14, _play_pause),
    ("step", 10, _step),
    ("reset", 3, _reset),
    ("speed", 4, _speed),
    ("view", 8, _view),
    ("pick", 8, _pick),
    ("plot options", 4, _plot_options),
    ("dwell", 6, _dwell),
    ("open run", 2, _open_run),
    ("scrub", 8, _scrub),
    ("branch", 3, _branch),
]


class Pinger:
    """Round trip GUI → worker thread → GUI: answered only while both event loops run."""

    def __init__(self, w: MainWindow) -> None:
        self.w = w
        self.token = 0
        self.answered = 0
        w.worker.pong.connect(self._pong)

    def _pong(self, token: int) -> None:
        self.answered = max(self.answered, token)

    def round_trip(self, qtbot, timeout: float) -> float:
        self.token += 1
        token = self.token
        t0 = time.perf_counter()
        self.w.request_ping.emit(token)
        qtbot.waitUntil(lambda: self.answered >= token, timeout=int(1000 * timeout))
        return time.perf_counter() - t0


@pytest.fixture
def window(qtbot, tmp_path):
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    w = MainWindow(LoadRequest("pendulum"), settings=settings)
    w.resize(1100, 700)
    w.show()
    qtbot.addWidget(w)
    qtbot.waitUntil(lambda: w.loaded is not None and w.last_frame is not None, timeout=WAIT)
    yield w
    w.close()


def _warm_up(qtbot, w: MainWindow, pinger: Pinger) -> None:
    """Load every scenario once and run one step of every usable scheme on it, so that
    the kernels are compiled (cold cache in CI) before the responses are timed."""
    for req, _ in SCENARIOS:
        w.load(req)
        qtbot.waitUntil(lambda r=req: w.loaded is not None and w._request == r
                        and w.loaded.scenario == r.scenario and w.last_frame is not None,
                        timeout=WAIT)
        for name in w.controls.usable:
            w.set_integrator(name)
            w.request_step.emit()
            pinger.round_trip(qtbot, WAIT / 1000)


def test_a_thousand_random_actions(qtbot, window):
    w = window
    proc = psutil.Process()
    pinger = Pinger(w)
    t_start = time.perf_counter()
    with qtbot.capture_exceptions() as errors:
        _warm_up(qtbot, w, pinger)
        t_warm = time.perf_counter() - t_start
        rng = np.random.default_rng(SEED)
        names = [a[0] for a in ACTIONS]
        weights = np.array([a[1] for a in ACTIONS], float)
        weights /= weights.sum()
        done: Counter[str] = Counter()
        responses = np.zeros(N_ACTIONS)
        rss = np.zeros(N_ACTIONS)
        t0 = time.perf_counter()
        for k in range(N_ACTIONS):
            i = int(rng.choice(len(ACTIONS), p=weights))
            ACTIONS[i][2](w, rng)
            done[names[i]] += 1
            if rng.random() < 0.15:  # let frames through now and then
                qtbot.wait(int(rng.integers(5, 30)))
            try:
                responses[k] = pinger.round_trip(qtbot, RESPONSE_LIMIT)
            except qtbot.TimeoutError:
                pytest.fail(f"action {k} ({names[i]}) not answered within {RESPONSE_LIMIT} s "
                            f"(worker thread running: {w.thread.isRunning()})")
            assert w.thread.isRunning(), f"the worker thread died at action {k} ({names[i]})"
            if k == N_ACTIONS // 2 - 1:
                gc.collect()
            rss[k] = proc.memory_info().rss
        t_actions = time.perf_counter() - t0
        w.pause()
        pinger.round_trip(qtbot, RESPONSE_LIMIT)
        gc.collect()
        rss_end = proc.memory_info().rss
    assert not errors, "exceptions raised in slots:\n" + "\n".join(
        "".join(__import__("traceback").format_exception(*e)) for e in errors[:3])
    assert w.thread.isRunning()
    assert w.loaded is not None
    # growth, not noise: the lowest RSS of the 50 actions after the first half against
    # that of the last 50 (a run's plot buffers come and go with each reset and load)
    half = N_ACTIONS // 2
    growth = min(rss[-50:].min(), rss_end) - rss[half:half + 50].min()
    print(f"\nsoak: {N_ACTIONS} actions in {t_actions:.1f} s (warm-up {t_warm:.1f} s); "
          f"response to each: median {1e3 * np.median(responses):.0f} ms, max "
          f"{1e3 * responses.max():.0f} ms; RSS {rss[half] / 1e6:.0f} → "
          f"{rss_end / 1e6:.0f} MB over the last {half} actions (growth of the floor "
          f"{growth / 1e6:+.1f} MB, peak {rss.max() / 1e6:.0f} MB); actions: "
          + ", ".join(f"{n} {done[n]}" for n in names))
    assert responses.max() < RESPONSE_LIMIT
    assert growth < RSS_LIMIT, f"RSS grew by {growth / 1e6:.1f} MB over the last half"
    assert all(done[n] > 0 for n in names), done
