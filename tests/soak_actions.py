"""The random actions of the window soak (issue #10 §6), shared by
``tests/test_gui_soak.py`` (what must hold on any machine) and
``benchmarks/bench_gui_soak.py`` (how fast the window answers: worst and median
response).

:func:`soak` applies ``n`` random actions with a fixed seed to a running window — switch
integrator (usable and not), change ``h`` (fine, beyond the stability limit, invalid
text), toggle compare, reset, load another scenario, step, play/pause, view options,
picking, open and scrub a recorded run, Continue from here — and after each one sends a
ping through the worker's event loop back to the GUI's (answered only while both run),
then checks that the worker thread is alive and that the scheme the window shows is the
one the worker runs.  It records each ping's round trip and the RSS; it asserts no time.

Replay / branch: add actions to :data:`ACTIONS` (``(name, weight, fn(window, rng))``)
when the window gains them — the checks after each action stay as they are.

No pytest here: the caller passes ``wait_until(predicate, seconds)`` (raises on timeout)
and ``wait(ms)`` (pytest-qt's ``qtbot`` in the test, an event-loop spin in the benchmark).
"""

from __future__ import annotations

import gc
import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from app.gui.main_window import MainWindow
from app.gui.worker import LoadRequest

SEED = 20261110
N_ACTIONS = 1000
HANG_LIMIT = 120.0
"""Seconds a ping may take before the window counts as frozen: a hang guard, not a
speed requirement (the benchmark reports the response times)."""
WAIT = 180.0  # s: a first load may compile kernels (cold cache)

WaitUntil = Callable[[Callable[[], bool], float], None]
"""``wait_until(predicate, seconds)``: run the event loop until ``predicate()``; raise
on timeout."""
Wait = Callable[[int], None]
"""``wait(ms)``: run the event loop for ``ms`` milliseconds."""

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
SCHEMES = ("rrp-exact", "rrp-newmark", "rk4", "lgvi", "pfc-buss2", "yoshida4:rrp-newmark",
           "moreau", "moreau-symmetric", "moreau-variational")
"""The schemes the soak switches between (of those usable on the model): one of each
family of kernels.  Each scheme's loop is compiled for each model on first use (issue
#25), so the soak keeps to these; every scheme is stepped on every model it can drive
by ``tests/test_bits.py``."""


def _usable(w: MainWindow) -> list[str]:
    return [n for n in w.controls.usable if n in SCHEMES]


def _integrator(w: MainWindow, rng: np.random.Generator) -> None:
    c = w.controls
    if rng.random() < 0.1:  # one it cannot run: refused, the old one stays
        bad = [c.integrator.itemData(i) for i in range(c.integrator.count())
               if c.integrator.itemData(i) not in c.usable]
        if bad:
            w.set_integrator(str(rng.choice(bad)))
            return
    name = str(rng.choice(_usable(w)))
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
        idx = cb.findData(str(rng.choice(_usable(w))))
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
    if _usable(w):
        idx = c.integrator.findData(str(rng.choice(_usable(w))))
        if w.recording is not None:
            w.set_integrator(c.integrator.itemData(idx))
        else:
            c.integrator.setCurrentIndex(idx)
    if rng.random() < 0.3:
        for cb in c.compare:  # off (index 0) or one of the soak's schemes
            names = [None, *_usable(w)]
            name = names[int(rng.integers(len(names)))]
            cb.setCurrentIndex(0 if name is None else max(0, cb.findData(name)))
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

    def __init__(self, w: MainWindow, wait_until: WaitUntil) -> None:
        self.w = w
        self.wait_until = wait_until
        self.token = 0
        self.answered = 0
        w.worker.pong.connect(self._pong)

    def _pong(self, token: int) -> None:
        self.answered = max(self.answered, token)

    def round_trip(self, timeout: float) -> float:
        """Seconds until the worker answered (``wait_until``'s error after ``timeout``)."""
        self.token += 1
        token = self.token
        t0 = time.perf_counter()
        self.w.request_ping.emit(token)
        self.wait_until(lambda: self.answered >= token, timeout)
        return time.perf_counter() - t0


def warm_up(w: MainWindow, pinger: Pinger, wait_until: WaitUntil) -> None:
    """Load every scenario once and run one step of every usable scheme on it, so that
    the kernels are compiled (cold cache in CI) before the actions start."""
    for req, _ in SCENARIOS:
        w.load(req)
        wait_until(lambda r=req: w.loaded is not None and w._request == r
                   and w.loaded.scenario == r.scenario and w.last_frame is not None, WAIT)
        for name in _usable(w):
            w.set_integrator(name)
            w.request_step.emit()
            pinger.round_trip(WAIT)


def shown_scheme_problem(w: MainWindow) -> str | None:
    """Where the scheme the window shows is not the one the worker runs, say so (a live
    run only: a replay shows the scheme Continue from here will take)."""
    sim = w.worker.primary
    if w.recording is not None or w.loaded is None or sim is None:
        return None
    shown = w.controls.integrator.currentData()
    if shown != sim.integrator.name:
        return f"the window shows {shown}, the worker runs {sim.integrator.name}"
    return None


@dataclass
class SoakResult:
    """What a soak measured: each action's ping round trip (s) and RSS after it (bytes),
    the RSS at the end, the actions done by name, the warm-up and actions' durations."""

    responses: np.ndarray
    rss: np.ndarray
    rss_end: float
    done: Counter[str] = field(default_factory=Counter)
    names: list[str] = field(default_factory=list)
    """The action of each response, in order."""
    t_warm: float = 0.0
    t_actions: float = 0.0

    @property
    def growth(self) -> float:
        """RSS growth over the second half, not noise: the lowest RSS of the 50 actions
        after the first half against that of the last 50 (a run's plot buffers come and
        go with each reset and load)."""
        half = len(self.rss) // 2
        return min(self.rss[-50:].min(), self.rss_end) - self.rss[half:half + 50].min()

    def summary(self) -> str:
        n, half = len(self.rss), len(self.rss) // 2
        r = self.responses
        return (f"soak: {n} actions in {self.t_actions:.1f} s (warm-up {self.t_warm:.1f} s); "
                f"response to each: median {1e3 * np.median(r):.0f} ms, max "
                f"{1e3 * r.max():.0f} ms; RSS {self.rss[half] / 1e6:.0f} → "
                f"{self.rss_end / 1e6:.0f} MB over the last {n - half} actions (growth of "
                f"the floor {self.growth / 1e6:+.1f} MB, peak {self.rss.max() / 1e6:.0f} MB);"
                " actions: " + ", ".join(f"{a} {self.done[a]}" for a, _, _ in ACTIONS))


def soak(w: MainWindow, wait_until: WaitUntil, wait: Wait, *, n_actions: int = N_ACTIONS,
         seed: int = SEED, timeout: float = HANG_LIMIT) -> SoakResult:
    """Warm up, then ``n_actions`` random actions on ``w``; an :class:`AssertionError`
    naming the action when a ping is not answered within ``timeout``, the worker thread
    died, or the window shows another scheme than the worker runs."""
    import psutil

    proc = psutil.Process()
    pinger = Pinger(w, wait_until)
    t_start = time.perf_counter()
    warm_up(w, pinger, wait_until)
    res = SoakResult(np.zeros(n_actions), np.zeros(n_actions), 0.0,
                     t_warm=time.perf_counter() - t_start)
    rng = np.random.default_rng(seed)
    weights = np.array([a[1] for a in ACTIONS], float)
    weights /= weights.sum()
    t0 = time.perf_counter()
    for k in range(n_actions):
        i = int(rng.choice(len(ACTIONS), p=weights))
        name = ACTIONS[i][0]
        ACTIONS[i][2](w, rng)
        res.done[name] += 1
        res.names.append(name)
        if rng.random() < 0.15:  # let frames through now and then
            wait(int(rng.integers(5, 30)))
        try:
            res.responses[k] = pinger.round_trip(timeout)
        except Exception:  # the caller's timeout error
            raise AssertionError(f"action {k} ({name}) not answered within {timeout:g} s "
                                 f"(worker thread running: {w.thread.isRunning()})") from None
        if not w.thread.isRunning():
            raise AssertionError(f"the worker thread died at action {k} ({name})")
        problem = shown_scheme_problem(w)
        if problem is not None:
            raise AssertionError(f"after action {k} ({name}): {problem}")
        if k == n_actions // 2 - 1:
            gc.collect()
        res.rss[k] = proc.memory_info().rss
    res.t_actions = time.perf_counter() - t0
    w.pause()
    pinger.round_trip(timeout)
    gc.collect()
    res.rss_end = proc.memory_info().rss
    return res
