"""The main window: controls on the left, the 3D view and the live plots beside them,
a status bar; the simulation runs in :class:`app.gui.worker.SimulationWorker` in its own
thread.  The window computes no physics: it shows what the worker sends.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
from PyQt6.QtCore import QByteArray, QEvent, QSettings, Qt, QThread, QTimer, pyqtSignal
from PyQt6.QtGui import QAction, QActionGroup, QKeySequence
from PyQt6.QtWidgets import (
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QProgressBar,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from engine.integrators import INTEGRATORS
from engine.io import RunFileError
from engine.models.base import ParameterError

from ..scene import AXES_ALL_LIMIT, AXES_DETAILS, COLOUR_MODES, BodyScene
from .controls import ControlPanel
from .inspector import inspector_html
from .perf import perf_line
from .plots import PlotPanel, TimedPlotWidget, error_title
from .recorder import Recorder, RecorderError
from .replay import Recording, TimelineBar
from .startup import LoadStatus
from .worker import (
    BranchRequest,
    Frame,
    Loaded,
    LoadRequest,
    Preview,
    SimulationWorker,
    body_report,
    contact_details,
    contact_summary,
)

PLOT_HZ = 10
DEFAULT_REQUEST = LoadRequest("torus")
AXES_DETAIL_LABELS = {
    "auto": f"Automatic (all up to {AXES_ALL_LIMIT} bodies, else the inspected one)",
    "all": "All bodies",
    "inspected": "The inspected body only",
}
"""View → Axes detail: the menu's words for :data:`app.scene.AXES_DETAILS`."""


class MainWindow(QMainWindow):
    """See the module docstring.  ``settings``: where geometry and last choices are kept
    (default: the user's ``QSettings``)."""

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
        self.status = QLabel()
        self.statusBar().addWidget(self.status, 1)
        self.perf = QLabel()
        self.statusBar().addPermanentWidget(self.perf)
        self.build_bar = QProgressBar()  # kernels being built: k of n, or busy
        self.build_bar.setMaximumWidth(160)
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

    # ------------------------------------------------------------------ building
    def _make_view(self):
        import pyvista as pv
        from pyvistaqt import QtInteractor

        pv.global_theme.multi_samples = 0
        view = QtInteractor(self, multi_samples=0, auto_update=False)
        view.setMinimumSize(320, 240)
        self._frame_pending = False  # see eventFilter
        view.installEventFilter(self)
        view.ren_win.AddObserver("EndEvent", self._count_render)
        # picking: a click (press and release without a drag) on a body inspects it;
        # observers, so the camera's own mouse handling stays as it is
        # (pyvista registers the release on the interactor style: the interactor itself
        # swallows it)
        view.iren.add_observer("LeftButtonPressEvent", self._on_view_press)
        view.iren.add_observer("LeftButtonReleaseEvent", self._on_view_release)
        return view

    def _make_inspector(self) -> QFrame:
        box = QFrame()
        box.setObjectName("inspector")
        box.setFrameShape(QFrame.Shape.StyledPanel)
        box.setStyleSheet("#inspector { background: #fffaf0; border-top: 2px solid #ffb000; }")
        lay = QHBoxLayout(box)
        lay.setContentsMargins(8, 4, 4, 4)
        self.inspector_text = QLabel()
        self.inspector_text.setObjectName("inspector_text")
        self.inspector_text.setTextFormat(Qt.TextFormat.RichText)
        self.inspector_text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        close = QToolButton()
        close.setText("×")
        close.setToolTip("stop inspecting (Esc)")
        close.clicked.connect(lambda: self.inspect(None))
        lay.addWidget(self.inspector_text, 1)
        lay.addWidget(close, 0, Qt.AlignmentFlag.AlignTop)
        box.hide()
        return box

    def _count_render(self, *_args) -> None:
        self.renders += 1

    def _make_menus(self) -> None:
        fm = self.menuBar().addMenu("&File")
        self._add_action(fm, "&Open scenario file…", self.open_scenario_dialog,
                         QKeySequence.StandardKey.Open)
        self._add_action(fm, "Open &run (HDF5 recording)…", self.open_run_dialog,
                         "Ctrl+Shift+O")
        fm.addSeparator()
        self._add_action(fm, "Save &screenshot (PNG)…", self._screenshot_dialog, "Ctrl+Shift+S")
        self._add_action(fm, "Export &plots (PNG)…", self._plots_dialog)
        self._add_action(fm, "Export &data (CSV/HDF5)…", self._data_dialog, "Ctrl+E")
        fm.addSeparator()
        self._add_action(fm, "&Quit", self.close, QKeySequence.StandardKey.Quit)
        sm = self.menuBar().addMenu("&Simulation")
        self._add_action(sm, "Play / pause", lambda: self.controls.play.toggle(), "Space")
        self._add_action(sm, "Step", self.step, "S")
        self._add_action(sm, "Reset", self.reset, "R")
        sm.addSeparator()
        self.branch_action = self._add_action(sm, "&Continue from here", self.branch_here,
                                              "Ctrl+B")
        sm.addSeparator()
        from engine.parallel import max_threads

        tm = sm.addMenu("&Threads")
        tm.setToolTip("threads of the parallel force kernels (models of 4096 bodies or "
                      "more; the results do not depend on it)")
        group = QActionGroup(self)
        self.threads_actions: dict[int, QAction] = {}
        for n in range(max_threads() + 1):
            a = self._add_action(tm, f"All cores ({max_threads()})" if n == 0 else str(n),
                                 lambda k=n: self.set_threads(k))
            a.setCheckable(True)
            a.setChecked(n == self.threads)
            group.addAction(a)
            self.threads_actions[n] = a
        vm = self.menuBar().addMenu("&View")
        self._add_action(vm, "Reset camera", self.reset_camera, "Home")
        self.follow_action = self._add_action(vm, "&Follow the bodies", lambda: None, "F")
        self.follow_action.setCheckable(True)
        self.follow_action.toggled.connect(self.controls.follow.setChecked)
        self.controls.follow.toggled.connect(self.follow_action.setChecked)
        self.axes_action = self._add_action(vm, "Body &axes", lambda: None, "A")
        self.axes_action.setCheckable(True)
        self.axes_action.setChecked(True)
        self.axes_action.toggled.connect(self.controls.axes.setChecked)
        self.controls.axes.toggled.connect(self.axes_action.setChecked)
        sb = self.controls.axis_scale
        self._add_action(vm, "Longer axes", lambda: sb.setValue(sb.value() + sb.singleStep()),
                         "]")
        self._add_action(vm, "Shorter axes", lambda: sb.setValue(sb.value() - sb.singleStep()),
                         "[")
        dm = vm.addMenu("Axes &detail")
        dm.setToolTip("which bodies' axes are drawn (large models: the inspected one)")
        group = QActionGroup(self)
        self.axes_detail_actions: dict[str, QAction] = {}
        for mode in AXES_DETAILS:
            a = self._add_action(dm, AXES_DETAIL_LABELS[mode],
                                 lambda m=mode: self.set_axes_detail(m))
            a.setCheckable(True)
            a.setChecked(mode == self.axes_detail)
            group.addAction(a)
            self.axes_detail_actions[mode] = a
        cm = vm.addMenu("&Colour by")
        group = QActionGroup(self)
        self.colour_actions: dict[str, QAction] = {}
        combo = self.controls.colour
        for mode in COLOUR_MODES:
            a = self._add_action(cm, mode, lambda m=mode: combo.setCurrentText(m))
            a.setCheckable(True)
            a.setChecked(mode == combo.currentText())
            group.addAction(a)
            self.colour_actions[mode] = a
        combo.currentTextChanged.connect(
            lambda m: m in self.colour_actions and self.colour_actions[m].setChecked(True))
        vm.addSeparator()
        self._add_action(vm, "Clear trail", lambda: self.scene and self.scene.clear_trail())
        self._add_action(vm, "Stop inspecting", lambda: self.inspect(None), "Esc")

    def _add_action(self, menu, text, slot, shortcut=None) -> QAction:
        a = QAction(text, self)
        if shortcut is not None:
            a.setShortcut(QKeySequence(shortcut))
        a.triggered.connect(lambda _=False: slot())
        menu.addAction(a)
        return a

    # ------------------------------------------------------------------ public API
    def load(self, request: LoadRequest) -> None:
        """Build a scenario in the worker (a reset); the views follow on ``loaded``."""
        self._request = request
        self.failure = None
        self.banner.hide()
        self.controls.set_playing(False)
        self.load_status.announce(request)
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

    def set_axes_detail(self, mode: str) -> None:
        """View → Axes detail: which bodies' axes are drawn (see
        :data:`app.scene.AXES_DETAILS`); remembered."""
        if mode not in AXES_DETAILS:
            raise ValueError(f"unknown axes detail {mode!r}")
        self.axes_detail = mode
        self.axes_detail_actions[mode].setChecked(True)
        self.settings.setValue("axes_detail", mode)
        if self.scene is not None:
            self.scene.set_axes_detail(mode)
            self.view.update()

    def reset_camera(self) -> None:
        """Fit the camera to the scene (also done on every scenario load)."""
        self._frame_pending = False
        if self.scene is not None:
            self.scene.reset_camera()
            self.view.update()

    def _view_has_size(self) -> bool:
        rw = self.view.ren_win  # (None once the view is closed: a timer after close)
        width, height = rw.GetSize() if rw is not None else (0, 0)
        return self.view.isVisible() and width > 1 and height > 1

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 (Qt name)
        """The view's first resize after a framing it did not have the size for: frame
        again, once the view has taken the size (after this event)."""
        if (obj is self.view and event.type() == QEvent.Type.Resize
                and self._frame_pending and not event.size().isEmpty()):
            QTimer.singleShot(0, self._frame_if_pending)
        return super().eventFilter(obj, event)

    def _frame_if_pending(self) -> None:
        if self._frame_pending and self._view_has_size():
            self.reset_camera()

    def set_follow(self, on: bool) -> None:
        """View → Follow: the camera keeps the bodies' bounding box in view."""
        self.controls.follow.setChecked(bool(on))

    def inspect(self, body: int | None) -> None:
        """Show body ``body`` in the inspector (live, from the worker's frames) and
        highlight it in the view; ``None`` closes the inspector."""
        if self.scene is None or body is None or not 0 <= body < self.scene.n:
            body = None
        self.picked = body
        if self.scene is not None:
            self.scene.set_highlight(body)
            self.view.update()
        if body is None:
            self.inspector.hide()
        else:
            self.inspector_text.setText(f"body {body}: …")
            self.inspector.show()
        self.request_inspect.emit(-1 if body is None else int(body))

    def pick_at(self, x: float, y: float) -> int | None:
        """Inspect the body under the view's display point ``(x, y)`` (VTK pixels from
        the bottom left); a click on the background closes the inspector."""
        if self.scene is None:
            return None
        body = self.scene.pick(x, y)
        self.inspect(body)
        return body

    def _on_view_press(self, *_args) -> None:
        self._press_at = self.view.iren.interactor.GetEventPosition()

    def _on_view_release(self, *_args) -> None:
        at, self._press_at = self._press_at, None
        pos = self.view.iren.interactor.GetEventPosition()
        if at is not None and abs(pos[0] - at[0]) + abs(pos[1] - at[1]) <= 4:
            self.pick_at(*pos)

    def show_message(self, text: str, ms: int = 8000) -> None:
        self.statusBar().showMessage(text, ms)

    def save_screenshot(self, path: str | Path) -> Path:
        """PNG of the whole window."""
        p = Path(path)
        self.plots.redraw()
        self.view.render()
        img = self.grab()
        if not img.save(str(p), "PNG"):
            raise OSError(f"cannot write {p}")
        return p

    def view_image(self) -> np.ndarray:
        """The 3D view as an RGB array (what a recording stores)."""
        from PyQt6.QtGui import QImage

        img = self.view.grab().toImage().convertToFormat(QImage.Format.Format_RGB888)
        w, h = img.width(), img.height()
        ptr = img.constBits()
        ptr.setsize(img.sizeInBytes())
        a = np.frombuffer(ptr, np.uint8).reshape(h, img.bytesPerLine())[:, : 3 * w]
        return a.reshape(h, w, 3).copy()

    def start_recording(self, path: str | Path, fps: int = 30, camera: str = "fixed") -> None:
        """Record the 3D view; ``camera="fixed"`` (as ``rrp export``'s default, issue #33
        item 12): the camera stops following the bodies, so the wall stands still (View →
        Follow during the recording follows them again)."""
        self.recorder = Recorder(path, fps)
        self._record_every = 1.0 / fps
        self._record_last = 0.0
        fixed = camera == "fixed" and self.scene is not None and self.scene.follow
        if fixed:
            self.scene.set_follow(False)
            for w in (self.controls.follow, self.follow_action):
                w.blockSignals(True)
                w.setChecked(False)
                w.blockSignals(False)
        self.show_message(f"recording the 3D view to {path}"
                          f"{' with a fixed camera (View → Follow to follow)' if fixed else ''}…",
                          4000)

    def stop_recording(self) -> Path | None:
        rec, self.recorder = self.recorder, None
        if rec is None:
            return None
        try:
            out = rec.close()
        except RecorderError as exc:
            self._show_banner(str(exc))
            return None
        self.show_message(f"recording saved: {out} ({rec.frames} frames)")
        return out

    def _redraw_plots(self) -> None:
        """Push new data to the plots, pacing the redraws by what they cost: the interval
        is five times the painting time of the last redraw (≥ 1/PLOT_HZ), so the plots
        take at most ~1/5 of the GUI thread and the 3D view keeps its frame rate while long
        series get costlier to draw (painting happens later, in the event loop: its cost
        is measured by :class:`~app.gui.plots.TimedPlotWidget`)."""
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

    # ------------------------------------------------------------------ replay, branch
    def open_run_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Open a recorded run", str(Path.cwd()),
            "Run files (*.h5 *.hdf5 *.partial);;All files (*)")
        if path:
            self.open_run(path)

    def open_run(self, path: str | Path) -> bool:
        """Show a run file (replay): the recorded frames in the 3D view, the whole
        series in the plots, the timeline under the view.  A file that cannot be shown
        gives a one-line message and leaves the window as it was (``False``)."""
        try:
            rec = Recording(path)
        except (RunFileError, OSError) as exc:
            self._show_banner(f"cannot open the run: {exc}")
            return False
        self.pause()  # the live run (if any) stops where it is
        if self.recorder is not None:
            self.stop_recording()
        if self.recording is not None:
            self._leave_replay()
        self.recording = rec
        self._replay_h = rec.file.h
        self.failure = None
        self.banner.hide()
        ld = rec.loaded()
        self.loaded = ld
        self.last_frame = None
        self._set_up_views(ld)
        self.controls.trail.setEnabled(ld.model.pivot is not None)
        self.controls.set_playing(False)
        self.plots.show_recording({"energy": rec.series()}, rec.events)
        self.timeline.show_recording(rec)
        self.timeline.show()
        ok, why = rec.can_branch(0)
        self._show_branchable(ok, why)
        if rec.status == "failed":
            self._show_banner(f"recording of a failed run: {rec.status_line()}")
        elif rec.status == "interrupted":
            self.show_message(f"recording of an interrupted run: {rec.status_line()}", 15000)
        if rec.damage:
            self._show_banner(f"damaged run file: {rec.damage}")
        self.replay_index = -1
        self.show_replay_frame(0)
        self.setWindowTitle(f"RRP Studio — {ld.title} — recording {rec.name}")
        return True

    def _show_branchable(self, ok: bool, why: str) -> None:
        tip = ("start a live run at the shown frame with the integrator, h and compare "
               "schemes chosen on the left") if ok else f"cannot continue from here: {why}"
        self.timeline.branch.setEnabled(ok)
        self.timeline.branch.setToolTip(tip)
        self.branch_action.setToolTip(tip)

    def show_replay_frame(self, k: int) -> None:
        """Show recorded frame ``k`` (the timeline slider's value) in the view, the plots'
        cursor and the status bar."""
        rec = self.recording
        if rec is None or self.scene is None:
            return
        k = min(max(int(k), 0), rec.n_frames - 1)
        if self.timeline.slider.value() != k:
            self.timeline.slider.setValue(k)  # (comes back here)
            return
        try:
            fr = rec.frame(k)
        except RunFileError as exc:
            self._show_banner(str(exc))
            return
        if k < self.replay_index:  # back in time: the pendulum's trail starts over
            self.scene.clear_trail()
        self.replay_index = k
        self.scene.update(fr.x, fr.q, fr.v, fr.omega)
        self.view.update()
        self.frames_drawn += 1
        self.plots.set_cursor(fr.t)
        self.timeline.show_frame(k, fr.t)
        if self.picked is not None:
            if fr.v is None:
                self.inspector_text.setText(f"<b>body {self.picked}</b>: the file holds no "
                                            "velocities")
            else:
                try:
                    r = body_report(rec.model, self.picked, fr.x, fr.v, fr.q, fr.omega)
                except Exception as exc:  # the inspector never stops the replay
                    r = {"index": self.picked, "error": f"{type(exc).__name__}: {exc}"}
                self.inspector_text.setText(inspector_html(r, fr.t))
        self._replay_status(fr)

    def _replay_status(self, fr) -> None:
        rec = self.recording
        step = "" if fr.step is None else f"   step {fr.step}"
        state = "playing" if self.timeline.playing else "paused"
        self.status.setText(f"recording {rec.name} ({rec.status_line()})   frame "
                            f"{fr.index + 1}/{rec.n_frames}   t = {fr.t:.4f}{step}   "
                            f"recorded with {rec.file.integrator}, h = {rec.file.h:g}   "
                            f"[replay, {state}]")
        self.status.setToolTip(f"{rec.path}\n{rec.file!r}")
        now = time.perf_counter()
        t0, n0 = self._fps_mark
        if now - t0 >= 1.0:
            self._fps = (self.renders - n0) / (now - t0)
            self._fps_mark = (now, self.renders)
        self.perf.setText(f"replay · {self._fps:.0f} fps")

    def _on_replay_playing(self, on: bool) -> None:
        self.controls.set_playing(on)
        if self.recording is not None:
            try:
                self._replay_status(self.recording.frame(self.replay_index))
            except RunFileError:
                pass

    def branch_here(self) -> None:
        """*Continue from here*: on a recording, a live run from the shown frame (the
        worker builds each run, primary and compare, with ``Simulation.from_frame``); on
        a live run, the current state goes on with the chosen integrator, ``h`` and
        compare schemes (the plots restart at this instant)."""
        c = self.controls
        integrators = (c.integrator.currentData(), *c.compare_integrators())
        h = c.parse_h()
        rec = self.recording
        if rec is None:
            if self.loaded is None:
                return
            if not isinstance(h, float):
                h = self.last_frame.h if self.last_frame else self.loaded.h
            self.pause()
            self.request_branch_live.emit(tuple(integrators), float(h))
            return
        k = self.replay_index
        ok, why = rec.can_branch(k)
        if not ok:
            self._show_banner(f"cannot continue from frame {k + 1}: {why}")
            return
        if not isinstance(h, float):
            h = self._replay_h or rec.file.h
        self.timeline.set_playing(False)
        self.request_branch.emit(BranchRequest(
            rec.file.scenario, rec.model, rec.frame(k), tuple(integrators), float(h),
            rec.energy_reference, max(1, rec.file.record_every), rec.name))

    def close_recording(self) -> None:
        """Leave the replay: back to the live scenario (as it was)."""
        if self.recording is None:
            return
        self.load(self._good_request or self._request or DEFAULT_REQUEST)

    def _leave_replay(self) -> None:
        rec, self.recording = self.recording, None
        self.timeline.set_playing(False)
        self.timeline.recording = None
        self.timeline.hide()
        self.plots.set_cursor(None)
        self.branch_action.setToolTip("")
        if rec is not None:
            rec.close()

    # ------------------------------------------------------------------ worker → views
    def _on_preview(self, pv: Preview) -> None:
        """A scenario's model, before its kernels are built: draw its initial state (the
        plots and controls follow with ``loaded``)."""
        if self.recording is not None:
            return
        self._make_scene(pv.model, pv.scenario)
        st = pv.model.initial_state
        self.scene.update(st.x, st.q, st.v, st.omega)
        self.scene.reset_camera()
        self.view.update()
        c = self.controls  # (what is being built, not the last scenario's choices)
        c.show_scenario(pv.scenario, pv.model.name, dict(pv.model.params))
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

    def _make_scene(self, model, scenario: str) -> bool:
        """A new 3D scene of ``model`` in the view; returns whether it follows the bodies."""
        self.view.clear()
        try:
            self.view.clear_actors()
        except AttributeError:
            pass
        c = self.controls
        follow = self._follow_choice.get(scenario, model.pivot is None)
        self.scene = BodyScene(self.view, model, colour_by=c.colour.currentText(),
                               trail=c.trail.isChecked(), axes=c.axes.isChecked(),
                               axis_scale=c.axis_scale.value(), follow=follow)
        self.scene.set_axes_detail(self.axes_detail)
        return follow

    def _set_up_views(self, ld: Loaded, keep_camera: bool = False) -> None:
        """Scene, plots and controls for a model (a live load, or a recording)."""
        camera = self.view.camera_position if keep_camera else None
        c = self.controls
        follow = self._make_scene(ld.model, ld.scenario)
        c.follow.blockSignals(True)
        c.follow.setChecked(follow)
        c.follow.blockSignals(False)
        self.follow_action.blockSignals(True)
        self.follow_action.setChecked(follow)
        self.follow_action.blockSignals(False)
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
        self.controls.show_scenario(ld.scenario, ld.model.name, ld.params)
        self.controls.allow_integrators(ld.model)
        self.controls.show_integrators(ld.integrators)
        self.controls.t_end = ld.t_end
        self.controls.show_h(ld.h)
        self.controls.show_stability(ld.stability.h_stable, ld.stability.describe(),
                                     ld.stability.h_accurate,
                                     ld.stability.describe_accuracy())

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
                self.controls.show_stability(fr.stability.h_stable,
                                             fr.stability.describe(),
                                             fr.stability.h_accurate,
                                             fr.stability.describe_accuracy())
            self.controls.show_h(fr.h)
            self._update_status(fr)
            if self.recorder is not None:
                now = time.perf_counter()
                if now - self._record_last >= self._record_every:
                    self._record_last = now
                    self.view.render()
                    self.recorder.add(self.view_image())
        finally:
            self.worker.frame_done()

    def _update_status(self, fr: Frame) -> None:
        now = time.perf_counter()
        t0, n0 = self._fps_mark
        if now - t0 >= 1.0:
            self._fps = (self.renders - n0) / (now - t0)
            self._fps_mark = (now, self.renders)
        rel = "—" if not math.isfinite(fr.rel_error) else f"{fr.rel_error:+.3e}"
        names = self.loaded.energy_names if self.loaded is not None else []
        text = (f"t = {fr.t:.4f}   step {fr.step}   {fr.integrator}, h = {fr.h:g}   "
                f"{error_title(names)[1]}/|E₀| = {rel}   [{self.state}]")
        if fr.contact is not None:  # hard contacts: what the percussion solver does
            text += "   " + contact_summary(fr.contact)
        self.status.setText(text)
        self.status.setToolTip(contact_details(fr.contact))
        runs = len(self.loaded.integrators) if self.loaded is not None else 1
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
                                            self.loaded.params)
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

    def open_scenario_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open scenario", str(Path.home()),
                                              "Scenario files (*.toml)")
        if path:
            self.load(LoadRequest(path, {}, None, None))
        elif self.loaded is not None:
            self.controls.show_scenario(self.loaded.scenario, self.loaded.model.name,
                                        self.loaded.params)

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

    def _on_colour(self, mode: str) -> None:
        if self.scene is not None:
            self.scene.set_colour_by(mode)
            self.view.update()

    def _on_axes(self, on: bool) -> None:
        if self.scene is not None:
            self.scene.set_axes(on)
            self.view.update()

    def _on_axis_scale(self, scale: float) -> None:
        if self.scene is not None and scale > 0:
            self.scene.set_axis_scale(scale)
            self.view.update()

    def _on_follow(self, on: bool) -> None:
        if self._request is not None:
            self._follow_choice[self._request.scenario] = bool(on)
        if self.scene is not None:
            self.scene.set_follow(on)
            self.view.update()

    def _on_ghosts(self, on: bool) -> None:
        if self.scene is None:
            return
        if on and self.last_frame is not None:
            self.scene.set_ghosts(self.last_frame.ghosts)
        else:
            self.scene.set_ghosts([])
        self.view.update()

    def _on_record_toggled(self, on: bool) -> None:
        if on:
            path, _ = QFileDialog.getSaveFileName(self, "Record the 3D view", "rrp.mp4",
                                                  "Video (*.mp4);;Animated GIF (*.gif)")
            if not path:
                self.controls.record.setChecked(False)
                return
            try:
                self.start_recording(path)
            except RecorderError as exc:
                self._show_banner(str(exc))
                self.controls.record.setChecked(False)
        else:
            self.stop_recording()

    def _screenshot_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save screenshot", "rrp-studio.png",
                                              "PNG (*.png)")
        if path:
            try:
                self.save_screenshot(path)
                self.show_message(f"screenshot saved: {path}")
            except OSError as exc:
                self._show_banner(str(exc))

    def _plots_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export plots", "rrp-plots.png",
                                              "PNG (*.png)")
        if path:
            try:
                out = self.plots.export_png(path)
                self.show_message("plots saved: " + ", ".join(p.name for p in out))
            except Exception as exc:  # an unwritable place: say so, keep running
                self._show_banner(f"cannot export the plots: {exc}")

    def _data_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export data", "rrp-run.csv",
                                              "CSV (*.csv);;HDF5 (*.h5)")
        if path:
            self.request_save.emit(path)

    # ------------------------------------------------------------------ settings
    def _request_from_settings(self) -> LoadRequest:
        s = self.settings
        scenario = str(s.value("scenario", "torus"))
        integ = s.value("integrator", None)
        h = s.value("h", None)
        try:
            h = float(h) if h is not None else None
        except (TypeError, ValueError):
            h = None
        return LoadRequest(scenario, {}, str(integ) if integ in INTEGRATORS else None, h)

    def _restore_settings(self) -> None:
        geo = self.settings.value("geometry")
        if isinstance(geo, QByteArray) and not geo.isEmpty():
            self.restoreGeometry(geo)
        else:
            self.resize(1400, 860)
        colour = self.settings.value("colour")
        if colour:
            idx = self.controls.colour.findText(str(colour))
            if idx >= 0:
                self.controls.colour.setCurrentIndex(idx)
        self.request_speed.emit(self.controls.speed.value())

    def _save_choices(self) -> None:
        s = self.settings
        if self._request is not None:
            s.setValue("scenario", self._request.scenario)
        if self.last_frame is not None:
            s.setValue("integrator", self.last_frame.integrator)
            s.setValue("h", self.last_frame.h)
        elif self.loaded is not None:
            s.setValue("integrator", self.loaded.integrators[0])
            s.setValue("h", self.loaded.h)
        s.setValue("colour", self.controls.colour.currentText())

    def _stop_worker(self, wait_ms: int = 5000) -> None:
        """Ask the worker to stop its timer and end its thread, in that order and in its
        own thread (``shutdown``, queued after what it was asked before); a worker busy
        beyond ``wait_ms`` (a long compile) has its event loop ended from here."""
        self.request_shutdown.emit()
        if not self.thread.wait(wait_ms):
            self.thread.quit()
            self.thread.wait(wait_ms)

    def closeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        self.settings.setValue("geometry", self.saveGeometry())
        self._save_choices()
        self.settings.sync()
        if self.recorder is not None:
            self.stop_recording()
        self._stop_worker()
        self._plot_timer.stop()
        self.view.close()
        super().closeEvent(event)
