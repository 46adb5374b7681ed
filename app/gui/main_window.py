"""The main window: controls on the left, the 3D view and the live plots beside them,
a status bar; the simulation runs in :class:`app.gui.worker.SimulationWorker` in its own
thread.  The window computes no physics: it shows what the worker sends.

Its menus, dialogs and remembered settings are in :mod:`app.gui.window_menus`, the
replay of run files in :mod:`app.gui.window_replay`, the screenshots and recordings of
the view in :mod:`app.gui.window_recording`, the 3D view, its display choices and
the inspector in :mod:`app.gui.window_view` (issue #34).
"""

from __future__ import annotations

import math
import time
from pathlib import Path

from PyQt6.QtCore import QEvent, QSettings, Qt, QThread, QTimer, pyqtSignal
from PyQt6.QtWidgets import (
    QLabel,
    QMainWindow,
    QProgressBar,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from engine.models.base import ParameterError

from ..scene import AXES_DETAILS, BodyScene
from .controls import ControlPanel
from .inspector import inspector_html
from .messages import DEFAULT_REQUEST
from .perf import kernels_line, perf_line
from .plot_items import TimedPlotWidget
from .plots import PlotPanel, error_title
from .recorder import Recorder
from .replay import Recording, TimelineBar
from .startup import ElidedLabel, LoadStatus
from .thread_keeper import release_when_finished
from .window_menus import AXES_DETAIL_LABELS, MenusMixin
from .window_recording import RecordingMixin
from .window_replay import ReplayMixin
from .window_view import ViewMixin
from .worker import (
    BranchRequest,
    Frame,
    Loaded,
    LoadRequest,
    Preview,
    SimulationWorker,
    contact_details,
    contact_summary,
)

__all__ = ["AXES_DETAIL_LABELS", "DEFAULT_REQUEST", "PLOT_HZ", "MainWindow"]

PLOT_HZ = 10


# what the window hears from its worker (``_stop_worker`` cuts them when it lets a busy
# worker finish on its own)
_WORKER_SIGNALS = ("state_changed", "preview", "progress", "loaded", "frame", "failed",
                   "rejected", "accepted", "saved", "pong", "threads_set")

class MainWindow(MenusMixin, ViewMixin, ReplayMixin, RecordingMixin, QMainWindow):
    """See the module docstring.  ``settings``: where geometry and last choices are kept
    (default: the user's ``QSettings``)."""

    STOP_WAIT_MS = 5000
    """How long a closing window waits for its worker's thread to end (``_stop_worker``)."""

    request_load = pyqtSignal(object)
    request_play = pyqtSignal()
    request_pause = pyqtSignal()
    request_step = pyqtSignal()
    request_reset = pyqtSignal()
    request_h = pyqtSignal(float)
    request_integrator = pyqtSignal(str)
    request_speed = pyqtSignal(int)
    request_save = pyqtSignal(str)
    request_shutdown = pyqtSignal()
    request_inspect = pyqtSignal(int)  # body index, -1: none
    request_ping = pyqtSignal(int)
    request_branch = pyqtSignal(object)  # BranchRequest
    request_branch_live = pyqtSignal(object, float)  # integrators, h
    request_threads = pyqtSignal(int)  # 0: all cores

    def __init__(self, request: LoadRequest | None = None, *,
                 settings: QSettings | None = None, run: str | Path | None = None,
                 threads: int | None = None) -> None:
        """``threads``: the engine's threads for this session (``rrp gui --threads``;
        remembered as the setting); ``None``: the setting, by default all cores."""
        super().__init__()
        self.setWindowTitle("RRP Studio")
        self.settings = settings or QSettings("RRP Studio", "rrp-studio")
        if threads is not None:
            self.settings.setValue("threads", int(threads))
        self.threads = self._threads_from_settings()
        """Threads asked of the engine: 0 means all cores."""
        self.axes_detail = str(self.settings.value("axes_detail", "auto"))
        if self.axes_detail not in AXES_DETAILS:
            self.axes_detail = "auto"
        self.loaded: Loaded | None = None
        self.last_frame: Frame | None = None
        self.failure: str | None = None
        self.state = "idle"
        self.scene: BodyScene | None = None
        self.recorder: Recorder | None = None
        self.frames_drawn = 0
        self.renders = 0
        self._fps = 0.0
        self._fps_mark = (time.perf_counter(), 0)
        self._request: LoadRequest | None = None
        self._good_request: LoadRequest | None = None
        self._notice: str | None = None
        self.picked: int | None = None
        self._follow_choice: dict[str, bool] = {}  # scenario → the user's Follow choice
        self._press_at: tuple[int, int] | None = None
        self.recording: Recording | None = None
        """The run file shown (replay mode), or ``None`` (live)."""
        self.replay_index = 0
        self._replay_h: float | None = None

        # widgets ----------------------------------------------------------------
        self.controls = ControlPanel()
        self.view = self._make_view()
        self.banner = QLabel()
        self.banner.setObjectName("banner")
        self.banner.setWordWrap(True)
        self.banner.setStyleSheet("background: #fde7ea; color: #7a0014; padding: 6px; "
                                  "border: 1px solid #e8a0aa;")
        self.banner.hide()
        self.plots = PlotPanel()
        self.inspector = self._make_inspector()
        self.timeline = TimelineBar()
        self.timeline.hide()
        self.timeline.frame_chosen.connect(self.show_replay_frame)
        self.timeline.branch_clicked.connect(self.branch_here)
        self.timeline.close_clicked.connect(self.close_recording)
        self.timeline.playing_changed.connect(self._on_replay_playing)
        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.setSpacing(0)
        lv.addWidget(self.banner)
        lv.addWidget(self.view, 1)
        lv.addWidget(self.timeline)
        lv.addWidget(self.inspector)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.controls)
        split.addWidget(left)
        split.addWidget(self.plots)
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 3)
        split.setStretchFactor(2, 2)
        split.setSizes([300, 620, 480])
        self.splitter = split
        self.setCentralWidget(split)
        self.status = ElidedLabel()  # (never wider than the bar leaves it, issue #42.7)
        self.statusBar().addWidget(self.status, 1)
        self.perf = QLabel()
        self.statusBar().addPermanentWidget(self.perf)
        self.build_bar = QProgressBar()  # kernels being built: k of n, or busy
        self.build_bar.setMaximumWidth(160)
        self.build_bar.setMinimumWidth(110)  # (room for "~55 s left" on it)
        self.build_bar.setTextVisible(False)
        self.build_bar.hide()
        self.statusBar().addPermanentWidget(self.build_bar)
        self._make_menus()
        self.load_status = LoadStatus(self)  # the panel and status while loading (#33.8)

        # worker -----------------------------------------------------------------
        self.thread = QThread(self)
        self.thread.setObjectName("rrp-simulation")
        self.worker = SimulationWorker(self.threads or None)
        self.worker.moveToThread(self.thread)
        # in the worker's thread (Numba's thread count is per calling thread)
        self.thread.started.connect(self.worker.start_thread)
        self.request_threads.connect(self.worker.set_threads)
        self.worker.threads_set.connect(self._on_threads_set)
        self.request_load.connect(self.worker.load)
        self.request_play.connect(self.worker.play)
        self.request_pause.connect(self.worker.pause)
        self.request_step.connect(self.worker.step_once)
        self.request_reset.connect(self.worker.reset)
        self.request_h.connect(self.worker.set_h)
        self.request_integrator.connect(self.worker.set_integrator)
        self.request_speed.connect(self.worker.set_steps_per_tick)
        self.request_save.connect(self.worker.save_data)
        self.request_shutdown.connect(self.worker.shutdown)
        self.request_inspect.connect(self.worker.set_inspect)
        self.request_ping.connect(self.worker.ping)
        self.request_branch.connect(self.worker.branch)
        self.request_branch_live.connect(self.worker.branch_live)
        self.worker.preview.connect(self._on_preview)
        self.worker.progress.connect(self._on_progress)
        self.worker.loaded.connect(self._on_loaded)
        self.worker.frame.connect(self._on_frame)
        self.worker.failed.connect(self._on_failed)
        self.worker.rejected.connect(self._on_rejected)
        self.worker.accepted.connect(self._on_accepted)
        self.worker.state_changed.connect(self._on_state)
        self.worker.saved.connect(lambda p: self.show_message(f"data written to {p}"))
        self.thread.start()

        # controls → worker ------------------------------------------------------
        c = self.controls
        c.scenario_chosen.connect(self._on_scenario_chosen)
        c.apply_parameters.connect(self._on_apply_parameters)
        c.integrator_chosen.connect(self.set_integrator)
        c.h_entered.connect(self.set_h)
        c.h_invalid.connect(lambda msg: self.show_message(msg))
        c.play_toggled.connect(lambda on: self.play() if on else self.pause())
        c.step_clicked.connect(self.step)
        c.reset_clicked.connect(self.reset)
        c.speed_changed.connect(self.request_speed)
        c.compare_changed.connect(self._on_compare_changed)
        c.colour_changed.connect(self._on_colour)
        c.trail_toggled.connect(lambda on: self.scene and self.scene.set_trail(on))
        c.axes_toggled.connect(self._on_axes)
        c.axis_scale_changed.connect(self._on_axis_scale)
        c.follow_toggled.connect(self._on_follow)
        c.ghosts_toggled.connect(self._on_ghosts)
        c.record_toggled.connect(self._on_record_toggled)

        self._plot_paint_mark = 0.0
        self._plot_redraws = 0
        self._plot_timer = QTimer(self)
        self._plot_timer.setInterval(1000 // PLOT_HZ)
        self._plot_timer.timeout.connect(self._redraw_plots)
        self._plot_timer.start()

        self._restore_settings()
        if run is None or not self.open_run(run):
            self.load(request or self._request_from_settings())

    # ------------------------------------------------------------------ public API
    def load(self, request: LoadRequest) -> None:
        """Build a scenario in the worker (a reset); the views follow on ``loaded``."""
        self._request = request
        self.failure = None
        self.banner.hide()
        self.controls.set_playing(False)
        self.load_status.announce(request)
        self.worker.ask_pause()  # (the run under way stops at once: the load follows)
        self.request_load.emit(request)

    def play(self) -> None:
        if self.recording is not None:  # replay: play the recording
            self.timeline.set_playing(True)
            return
        if self.loaded is None:
            return
        self.failure = None
        self.banner.hide()
        self.controls.set_playing(True)
        self.request_play.emit()

    def pause(self) -> None:
        self.controls.set_playing(False)
        if self.recording is not None:
            self.timeline.set_playing(False)
            return
        self.worker.ask_pause()  # (at once, from this thread: the run under way stops)
        self.request_pause.emit()

    def pause_and_settle(self, timeout_s: float = 5.0) -> None:
        """Pause and wait (handling events) until the worker says so, then drop any
        passing message: the status bar shows the paused state (a screenshot's; the
        worker answers a pause from its thread, after the next event loop turn)."""
        from PyQt6.QtWidgets import QApplication

        self.pause()
        deadline = time.perf_counter() + timeout_s
        while (self.recording is None and self.state == "running"
               and time.perf_counter() < deadline):
            QApplication.processEvents()
            time.sleep(0.005)
        QApplication.processEvents()
        self.statusBar().clearMessage()

    def status_shown(self) -> str:
        """What the status bar shows: a passing message, else the status line."""
        return self.statusBar().currentMessage() or self.status.text()

    def step(self) -> None:
        """One step (live) or the next frame (replay)."""
        if self.recording is not None:
            self.timeline.set_playing(False)
            self.timeline.slider.setValue(min(self.replay_index + 1,
                                              self.recording.n_frames - 1))
            return
        self.request_step.emit()

    def reset(self) -> None:
        if self.recording is not None:  # replay: back to the first frame
            self.timeline.set_playing(False)
            self.timeline.slider.setValue(0)
            return
        if self.scene is not None:
            self.scene.clear_trail()
        self.controls.set_playing(False)
        self.worker.ask_pause()
        self.request_reset.emit()

    def set_h(self, h: float) -> None:
        if self.recording is not None:  # kept for Continue from here
            self._replay_h = float(h)
            self.controls.show_h(h)
            self.controls.show_h_message(f"h = {h:g} will drive the run started by "
                                         "Continue from here", "note")
            return
        self.request_h.emit(float(h))

    def set_integrator(self, name: str) -> None:
        if self.recording is not None:  # kept for Continue from here
            c = self.controls
            if not c.offers(name):
                c.show_h_message(f"{name} cannot drive this model", "error")
                name = self.recording.file.integrator
            c.show_scheme(name)
            self.show_message(f"Continue from here will run {c.integrator.currentData()}")
            return
        self.request_integrator.emit(name)

    def set_compare(self, names: list[str]) -> None:
        """Compare mode: restart from t = 0 with these other integrators in lock-step
        (a run started from a frame restarts from that frame)."""
        if self.recording is not None:  # used by Continue from here
            return
        if self._request is None:
            return
        r = self._request
        if isinstance(r, BranchRequest):
            h = self.last_frame.h if self.last_frame else r.h
            self.request_branch.emit(BranchRequest(
                r.scenario, r.model, r.frame,
                (self.controls.integrator.currentData(), *names), h, r.energy_reference,
                r.record_every, r.source))
            return
        self.load(LoadRequest(r.scenario, r.overrides, self.controls.integrator.currentData(),
                              self.last_frame.h if self.last_frame else r.h, tuple(names)))

    def set_threads(self, n: int) -> None:
        """Run the engine's parallel kernels on ``n`` threads (``0``: all cores), from
        the next chunk on; remembered as the setting.  The worker applies it in its own
        thread and answers with the count the engine reports there."""
        self.threads = int(n)
        self.settings.setValue("threads", self.threads)
        if self.threads in self.threads_actions:
            self.threads_actions[self.threads].setChecked(True)
        self.request_threads.emit(self.threads)

    def _threads_from_settings(self) -> int:
        from engine.parallel import max_threads

        try:
            n = int(self.settings.value("threads", 0))
        except (TypeError, ValueError):
            n = 0
        return n if 0 <= n <= max_threads() else 0

    def _on_threads_set(self, n: int) -> None:
        if self.load_status.loading:  # (the start's: the load's status stays in view)
            return
        self.show_message(f"the engine runs its parallel kernels on {n} thread"
                          f"{'s' if n != 1 else ''}", 4000)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 (Qt name)
        """The view's first resize after a framing it did not have the size for: frame
        again, once the view has taken the size (after this event)."""
        if (obj is self.view and event.type() == QEvent.Type.Resize
                and self._frame_pending and not event.size().isEmpty()):
            QTimer.singleShot(0, self._frame_if_pending)
        return super().eventFilter(obj, event)

    def show_message(self, text: str, ms: int = 8000) -> None:
        self.statusBar().showMessage(text, ms)

    def _redraw_plots(self) -> None:
        """Push new data to the plots, pacing the redraws by what they cost: the interval
        is five times the painting time of the last redraw (≥ 1/PLOT_HZ), so the plots
        take at most ~1/5 of the GUI thread and the 3D view keeps its frame rate while long
        series get costlier to draw (painting happens later, in the event loop: its cost
        is measured by :class:`~app.gui.plot_items.TimedPlotWidget`)."""
        spent = TimedPlotWidget.paint_seconds - self._plot_paint_mark
        self._plot_paint_mark = TimedPlotWidget.paint_seconds
        if self._plot_redraws:
            interval = min(3000, max(1000 // PLOT_HZ, int(5000 * spent)))
            self._plot_timer.setInterval(interval)
        if not self.plots.dirty:
            return
        t0 = time.perf_counter()
        self.plots.redraw()
        self._plot_redraws += 1
        self._plot_paint_mark -= time.perf_counter() - t0  # count the data push too

    # ------------------------------------------------------------------ worker → views
    def _on_preview(self, pv: Preview) -> None:
        """A scenario's model, before its kernels are built: draw its initial state (the
        plots and controls follow with ``loaded``)."""
        if self.recording is not None:
            return
        self._make_scene(pv.model, pv.scenario)
        st = pv.model.initial_state
        self.scene.update(st.x, st.q, st.v, st.omega)
        self._update_fields(0.0, st.x, st.q)
        self.scene.reset_camera()
        self.view.update()
        c = self.controls  # (what is being built, not the last scenario's choices)
        c.show_scenario(pv.scenario, pv.model.name, dict(pv.model.params), pv.model)
        c.allow_integrators(pv.model)
        c.show_integrators(pv.integrators)
        c.show_h(pv.h)
        self.setWindowTitle(f"RRP Studio — {pv.title}")

    def _on_progress(self, k: int, n: int, text: str) -> None:
        """Kernels being built: stage ``k`` of ``n`` as a bar, or a busy bar (``n = 0``)."""
        self.load_status.progress(k, n, text)

    def _on_loaded(self, ld: Loaded) -> None:
        branched = self.recording is not None and bool(ld.branch)
        if self.recording is not None:  # a branch (or a scenario) replaces the replay
            self._leave_replay()
        self.loaded = ld
        self.load_status.finished()
        if ld.branch and isinstance(self.worker._request, BranchRequest):
            self._request = self.worker._request  # Reset: back to the branch frame
        self._good_request = self._request
        self.last_frame = None
        self.failure = None
        self.banner.hide()
        if self._notice:
            self._show_banner(self._notice)
            self._notice = None
        self._set_up_views(ld, keep_camera=branched)
        # a scheme asked for could not drive the model: say what runs instead
        if ld.note:
            self.controls.show_h_message(ld.note, "note")
            self.show_message(ld.note, 4000)
        elif self.controls.h_message_level == "note":
            self.controls.show_h_message("", "")
        self.controls.trail.setEnabled(ld.model.pivot is not None)
        # about real time at ~60 frames a second (the user may change it)
        sp = self.controls.speed  # (a tiny h asks for more than it offers)
        sp.setValue(int(min(sp.maximum(), max(1.0, round(1.0 / (60.0 * ld.h))))))
        title = f"RRP Studio — {ld.title}"
        if len(ld.integrators) > 1:
            title += f" — compare: {', '.join(ld.integrators)}"
        if ld.branch:
            title += f" — continued {ld.branch}"
            self.show_message(f"continued {ld.branch}: press Play", 8000)
        self.setWindowTitle(title)
        self._save_choices()

    def _show_stability(self, est) -> None:
        """The panel's stable and accurate steps of the estimate ``est``."""
        self.controls.show_stability(est.h_stable, est.describe(), est.h_accurate,
                                     est.describe_accuracy())

    def _set_up_views(self, ld: Loaded, keep_camera: bool = False) -> None:
        """Scene, plots and controls for a model (a live load, or a recording)."""
        camera = self.view.camera_position if keep_camera else None
        follow = self._make_scene(ld.model, ld.scenario)
        self._show_follow(follow)
        if camera is not None:  # a branch goes on where the replay was looking
            self.view.camera_position = camera
        else:
            self.scene.reset_camera()  # every load (and reset) starts framed
            # framed for the view's shape: a run opened before the window is shown (rrp
            # gui RUN.h5) is framed again once the view has its size
            self._frame_pending = not self._view_has_size()
        # the inspected body stays inspected through a reset of the same model
        keep = (self.picked is not None and self._good_request is not None
                and self.picked < ld.model.n_bodies)
        self.inspect(self.picked if keep else None)
        self.view.update()
        self.plots.reset(ld)
        self.controls.show_scenario(ld.scenario, ld.model.name, ld.params, ld.model)
        self.controls.allow_integrators(ld.model)
        self.controls.show_integrators(ld.integrators)
        self.controls.t_end = ld.t_end
        self.controls.show_h(ld.h)
        self._show_stability(ld.stability)

    def _on_frame(self, fr: Frame) -> None:
        if self.recording is not None:  # a live frame in flight when the run was opened
            self.worker.frame_done()
            return
        try:
            self.last_frame = fr
            if self.scene is not None:
                rows = next(iter(fr.series.values()), None)  # the primary run's
                by_rows = rows is not None and rows.x is not None
                self.scene.update(fr.x, fr.q, fr.v, fr.omega, trail=not by_rows)
                self._update_fields(fr.t, fr.x, fr.q, fr.stage_span)
                if fr.broken is not None:  # (issue #44 item 2: not drawn)
                    self.scene.set_broken(fr.broken)
                if by_rows:  # the trail through every recorded row, not the frames only
                    self.scene.extend_trail(rows.x, rows.q)
                if fr.inspect is not None and self.picked == fr.inspect.get("index"):
                    self.inspector_text.setText(inspector_html(fr.inspect, fr.t))
                if self.controls.ghosts.isChecked() and fr.ghosts:
                    self.scene.set_ghosts(fr.ghosts)
                self.view.update()
            self.plots.append(fr)
            self.frames_drawn += 1
            if fr.stability is not None:
                self._show_stability(fr.stability)
            self.controls.show_h(fr.h)
            self._update_status(fr)
            if self.recorder is not None:
                self._record_frame()
        finally:
            self.worker.frame_done()

    def _count_fps(self) -> None:
        """The view's frame rate (renders a second), counted over about a second."""
        now = time.perf_counter()
        t0, n0 = self._fps_mark
        if now - t0 >= 1.0:
            self._fps = (self.renders - n0) / (now - t0)
            self._fps_mark = (now, self.renders)

    def _update_status(self, fr: Frame) -> None:
        self._count_fps()
        rel = "—" if not math.isfinite(fr.rel_error) else f"{fr.rel_error:+.3e}"
        names = self.loaded.energy_names if self.loaded is not None else []
        scale = self.loaded.energy_scale if self.loaded is not None else "|E₀|"
        runs = len(self.loaded.integrators) if self.loaded is not None else 1
        cold = kernels_line(fr, runs)  # (issue #45: the twins step while compiling)
        text = (f"{cold + '   ' if cold else ''}"
                f"t = {fr.t:.4f}   step {fr.step}   {fr.integrator}, h = {fr.h:g}   "
                f"{error_title(names, scale)[1]}/{scale} = {rel}   [{self.state}]")
        if fr.stage:  # (issue #44 item 5)
            text += f"   {fr.stage}"
        if fr.broken is not None:  # (issue #44 item 2)
            text += f"   broken bonds {len(fr.broken)}"
        if fr.contact is not None:  # hard contacts: what the percussion solver does
            text += "   " + contact_summary(fr.contact)
        self.status.setText(text)
        self.status.setToolTip(contact_details(fr.contact))
        self.perf.setText(perf_line(fr, runs, self._fps))  # (per recording interval: #33.6)

    def _on_failed(self, message: str) -> None:
        self.failure = message
        self.controls.set_playing(False)
        self._show_banner(message)
        self.controls.show_h_message(message, "error")

    def _show_banner(self, text: str) -> None:
        self.banner.setText(text)
        self.banner.show()
        self.show_message(text, 15000)

    def _on_rejected(self, what: str, message: str) -> None:
        if what == "threads":
            self.show_message(message)
            return
        if what == "h":
            self.controls.show_h_message(message, "error")
            self.show_message(message)
        elif what == "integrator":
            self.controls.show_h_message(message, "error")
            if self.last_frame is not None:  # show the scheme that is still running
                self._show_scheme(self.last_frame.integrator)
            self.show_message(message)
        elif self.loaded is None and self._request != DEFAULT_REQUEST:
            # the first request cannot be built (a moved file, or an integrator/h the
            # initial state does not admit): say so and open the scenario with its own
            # settings, or the default scenario, instead of an empty window
            r = self._request
            if r.integrator is not None or r.h is not None or r.compare:
                self.load(LoadRequest(r.scenario, r.overrides))
                self._notice = f"{message} — opened {r.scenario} with its own settings"
            else:
                self.load(DEFAULT_REQUEST)
                self._notice = f"{message} — opened the default scenario instead"
        else:
            self.load_status.finished(ok=False)
            self._show_banner(message)
            self._request = self._good_request  # Reset goes back to what is running
            if self.loaded is not None:  # the old scenario is still there: show it
                self.controls.show_scenario(self.loaded.scenario, self.loaded.model.name,
                                            self.loaded.params, self.loaded.model)
                fr, ld = self.last_frame, self.loaded  # (and its scheme and h: #33.8)
                self._show_scheme(fr.integrator if fr else ld.integrators[0])
                self.controls.show_h(fr.h if fr else ld.h)

    def _show_scheme(self, name: str) -> None:
        """The scheme picker shows ``name``: the scheme the worker runs."""
        self.controls.show_scheme(name)

    def _on_accepted(self, what: str, value: str) -> None:
        if what == "integrator":  # (asked for by set_integrator, not only by the picker)
            self._show_scheme(value)
        self.controls.show_h_message("", "")
        self.failure = None
        self.banner.hide()
        self.show_message(f"{what} changed to {value} at t = "
                          f"{self.last_frame.t:.6g}" if self.last_frame else "")
        self._save_choices()

    def _on_state(self, state: str, text: str) -> None:
        self.state = state
        if self.recording is not None:  # the worker's state is not what is shown
            if state == "compiling":
                self.status.setText(f"compiling… {text}")
            return
        if state in ("paused", "failed", "idle"):
            self.controls.set_playing(False)
        if state == "compiling":
            self.load_status.state(text)
            return
        if not self.load_status.loading:  # (a switch's kernels: built)
            self.load_status.finished(ok=False)
        self.build_bar.hide()
        if self.last_frame is not None:
            self._update_status(self.last_frame)

    # ------------------------------------------------------------------ controls
    def _on_scenario_chosen(self, name: str) -> None:
        if not name:
            self.open_scenario_dialog()
            return
        self.load(LoadRequest(name, {}, None, None, tuple(self.controls.compare_integrators())))

    def _on_apply_parameters(self) -> None:
        if self._request is None:
            return
        try:
            overrides = self.controls.params.overrides()
        except ParameterError as exc:
            self.controls.param_error.setText(str(exc))
            self.controls.param_error.show()
            return
        self.controls.param_error.hide()
        r = self._request
        h = self.last_frame.h if self.last_frame else r.h
        self.load(LoadRequest(r.scenario, {**r.overrides, **overrides},
                              self.controls.integrator.currentData(), h,
                              tuple(self.controls.compare_integrators())))

    def _on_compare_changed(self) -> None:
        self.set_compare(self.controls.compare_integrators())
        if self.recording is not None:
            self.show_message("compare mode: Continue from here starts these runs "
                              "together from the shown frame")
        elif isinstance(self._request, BranchRequest):
            self.show_message("compare mode: the runs restart together from the frame "
                              "they were branched from")
        else:
            self.show_message("compare mode: the runs restart together from t = 0")

    # ------------------------------------------------------------------ closing
    def _stop_worker(self) -> None:
        """Ask the worker to stop its timer and end its thread, in that order and in its
        own thread (``shutdown``, queued after what it was asked before).  A worker still
        busy after ``STOP_WAIT_MS`` (a slot that has not returned: a cold compile) ends
        its thread by itself when the slot returns and ``shutdown`` runs; until then the
        thread is no child of this window, which may be deleted meanwhile (a running
        ``QThread`` destroyed aborts the process): ``thread_keeper`` holds it, and the
        window hears nothing more from its worker."""
        self.worker.ask_pause()  # (a long energy-stepping interval stops at once)
        self.request_shutdown.emit()
        if self.thread.wait(self.STOP_WAIT_MS):
            return
        release_when_finished(self.thread, self.worker,
                              [getattr(self.worker, n) for n in _WORKER_SIGNALS])

    def closeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        self.settings.setValue("geometry", self.saveGeometry())
        self._save_choices()
        self.settings.sync()
        if self.recorder is not None:
            self.stop_recording()
        self.stop_exports()  # (issue #37: a running export is cancelled, nothing left)
        self._stop_worker()
        self._plot_timer.stop()
        self.view.close()
        super().closeEvent(event)
