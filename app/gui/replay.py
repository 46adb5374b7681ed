"""Recorded runs in the window (issue #10 §1–2): a run file (``rrp run --out``, the
app's HDF5 export, or the ``.partial`` of a run still going or killed) as a second
*source of frames* for the same 3D view and plots.

:class:`Recording` reads the file (:class:`engine.io.RunFile`): the whole recorded
series at once for the plots, one frame at a time for the view (read on demand, so that
a long run costs no memory and scrubbing costs one small HDF5 read per frame).
:class:`TimelineBar` is the strip under the 3D view: play/pause of the replay, the
timeline slider, the playback speed and *Continue from here* (a branch: the worker
starts a live run at the shown frame with :meth:`engine.simulation.Simulation.
from_frame`).  Nothing here computes physics.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import numpy as np
from PyQt6.QtCore import Qt, QTimer, pyqtSignal
from PyQt6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSlider,
    QToolButton,
    QWidget,
)

from engine.diagnostics import error_scale_symbol
from engine.io import RunFile, RunFileError, output_of_partial
from engine.layout import ENERGY_NAMES

from .worker import Loaded, Series, scenario_t_end

RUN_SUFFIXES = (".h5", ".hdf5", ".h5.partial", ".hdf5.partial")
"""What ``rrp gui PATH`` and *File → Open run…* take as a run file."""

SPEEDS = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
"""Playback speeds (recorded time per second of wall-clock time: ×1 is real time)."""
OPEN_SPEED = 1.0
"""A recording opens at real time (it used to open at the speed that played it all in
about 20 s: ×0.03 for a 0.5 s run); the user picks another in the timeline."""

PLAYBACK_HZ = 30


def is_run_path(text: str | Path) -> bool:
    """Whether a command-line argument names a run file (by its ending; a writer's
    ``<name>.<pid>.partial`` too)."""
    low = str(text).lower()
    return low.endswith(RUN_SUFFIXES) or (
        low.endswith(".partial") and output_of_partial(Path(low)).name.endswith(RUN_SUFFIXES))


class _Stability:
    """What the controls show as the stability estimate of a recording (none: the
    estimate belongs to a live state; branching gives one)."""

    h_stable = math.inf
    h_accurate = math.inf

    @staticmethod
    def describe() -> str:
        return "stability limit: — (a recording; Continue from here to run it)"

    @staticmethod
    def describe_accuracy() -> str:
        return ""


class Recording:
    """An opened run file; see the module docstring.  :class:`RunFileError` (one line)
    when the file cannot be read, holds no frames, or its model cannot be built."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.file = RunFile(self.path)
        try:
            report = self.file.verify()  # the structure and checkpoints: one line if damaged
            if report.problems and (self.file.n_frames == 0 or report.damaged("frames")
                                    and not report.frames):
                raise RunFileError(report.line())
            # what is wrong (one line) with a damaged file whose frames can still be shown
            self.damage: str | None = report.line() if report.problems else None
            if self.file.n_frames == 0:
                raise RunFileError(f"{self.path}: the run holds no frames (written with "
                                   "--no-frames or exported from the app): nothing to replay")
            self.model = self.file.build_model()
        except RunFileError:
            self.file.close()
            raise
        except Exception as exc:  # a model that cannot be built from the stored parameters
            self.file.close()
            raise RunFileError(f"{self.path}: cannot build model {self.file.model_name!r}: "
                               f"{type(exc).__name__}: {exc}") from None
        f = self.file
        self.n_frames = f.n_frames
        self.frame_times = np.asarray(f.frame_times, float)
        self.events = list(f.events)
        self.status = f.status
        self.name = self.path.name
        # the velocities are read with the frame when the file holds them (colouring
        # by speed, the inspector); a schema-1 file has none
        self._cache: dict[int, Any] = {}

    # ------------------------------------------------------------------ views' data
    def loaded(self) -> Loaded:
        """What the views need to set themselves up (as for a live scenario)."""
        f, m = self.file, self.model
        used = [c for c in f.components if c in ENERGY_NAMES]
        return Loaded(f.scenario, m.title, m, dict(f.params), [f.integrator], f.h, used,
                      tuple(m.conserved), _Stability(), "",
                      energy_scale=error_scale_symbol(f.e_ref, f.e_scale),
                      t_end=scenario_t_end(f.scenario))

    def series(self) -> Series:
        """The whole recorded series (rows of the energy matrix in ENERGY_NAMES order)."""
        f = self.file
        t = np.asarray(f.times, float)
        n = len(t)
        e = np.zeros((n, len(ENERGY_NAMES)))
        for c in f.components:
            if c in ENERGY_NAMES:
                col = np.asarray(f.energy[c], float)[:n]
                e[: len(col), ENERGY_NAMES.index(c)] = col
        total = np.asarray(f.energy.get("total", e.sum(axis=1)), float)[:n]
        rel = np.asarray(f.energy.get("relative_error", np.full(n, np.nan)), float)[:n]
        P = np.zeros((n, 3)) if f.P is None else np.asarray(f.P, float)[:n]
        L = np.zeros((n, 3)) if f.L is None else np.asarray(f.L, float)[:n]
        m = min(n, len(total), len(rel), len(P), len(L))  # a killed writer's ragged rows
        gap = f.energy.get("terrace_gap")  # (energy-stepping's V − V_ε; issue #33 item 6)
        if gap is not None:
            gap = np.full(m, np.nan) if len(gap) < m else np.asarray(gap, float)[:m] / f.e_scale
        return Series(t[:m], e[:m], total[:m], rel[:m], P[:m], L[:m], terrace_gap=gap)

    def frame(self, k: int):
        """Frame ``k`` (:class:`engine.io.Frame`), the last few cached (a slider that
        hovers on one frame reads it once)."""
        k = int(k) % self.n_frames
        fr = self._cache.get(k)
        if fr is None:
            fr = self.file.frame(k)
            if len(self._cache) > 8:
                self._cache.pop(next(iter(self._cache)))
            self._cache[k] = fr
        return fr

    def index_at(self, t: float) -> int:
        """The last frame at or before time ``t``."""
        k = int(np.searchsorted(self.frame_times, t, side="right")) - 1
        return min(max(k, 0), self.n_frames - 1)

    def can_branch(self, k: int) -> tuple[bool, str]:
        return self.file.can_branch(int(k))

    @property
    def energy_reference(self) -> tuple[float, float] | None:
        e_ref, e_scale = self.file.e_ref, self.file.e_scale
        if math.isfinite(e_ref) and math.isfinite(e_scale) and e_scale > 0:
            return e_ref, e_scale
        return None

    def status_line(self) -> str:
        """The file's status in words: complete / running / interrupted / failed with
        its message."""
        f = self.file
        text = f.status_text or f.status
        if f.message and f.status != "complete":
            msg = f.message
            if msg.startswith(text):
                return msg
            return f"{text}: {msg}"
        return text

    def close(self) -> None:
        self.file.close()


class TimelineBar(QWidget):
    """Under the 3D view while a recording is shown: ▶/❚❚ (play the recording), the
    timeline slider, the playback speed, the frame/time label, *Continue from here* and
    ✕ (close the recording).  Signals carry plain values; the window does the rest."""

    frame_chosen = pyqtSignal(int)
    branch_clicked = pyqtSignal()
    close_clicked = pyqtSignal()
    playing_changed = pyqtSignal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("timeline")
        self.play = QToolButton()
        self.play.setObjectName("replay_play")
        self.play.setCheckable(True)
        self.play.setText("▶")
        self.play.setToolTip("play / pause the recording")
        self.play.toggled.connect(self._on_play)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setObjectName("timeline_slider")
        self.slider.setTracking(True)  # the view follows the drag
        self.slider.valueChanged.connect(self.frame_chosen)
        self.slider.setToolTip("recorded frames: drag to scrub")
        self.speed = QComboBox()
        self.speed.setObjectName("replay_speed")
        for s in SPEEDS:
            self.speed.addItem(f"×{s:g}", s)
        self.speed.setToolTip("playback speed: recorded time per second (×1: real time)")
        self.label = QLabel()
        self.label.setMinimumWidth(150)
        self.branch = QPushButton("Continue from here")
        self.branch.setObjectName("branch")
        self.branch.setToolTip("start a live run at the shown frame with the integrator "
                               "and h chosen on the left (and the compare schemes)")
        self.branch.clicked.connect(self.branch_clicked)
        close = QToolButton()
        close.setText("✕")
        close.setToolTip("close the recording (back to the live scenario)")
        close.clicked.connect(self.close_clicked)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(4, 2, 4, 2)
        lay.addWidget(self.play)
        lay.addWidget(self.slider, 1)
        lay.addWidget(self.label)
        lay.addWidget(self.speed)
        lay.addWidget(self.branch)
        lay.addWidget(close)
        self.recording: Recording | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(1000 // PLAYBACK_HZ)
        self._timer.timeout.connect(self._advance)
        self._t_play = 0.0
        self._wall = 0.0

    def show_recording(self, rec: Recording) -> None:
        self.set_playing(False)
        self.recording = rec
        self.slider.blockSignals(True)
        self.slider.setRange(0, rec.n_frames - 1)
        self.slider.setValue(0)
        self.slider.setPageStep(max(1, rec.n_frames // 20))
        self.slider.blockSignals(False)
        self.speed.setCurrentIndex(SPEEDS.index(OPEN_SPEED))

    def show_frame(self, k: int, t: float) -> None:
        n = self.recording.n_frames if self.recording else 0
        self.label.setText(f"frame {k + 1}/{n} · t = {t:.5g}")

    # ------------------------------------------------------------------ playback
    @property
    def playing(self) -> bool:
        return self._timer.isActive()

    def set_playing(self, on: bool) -> None:
        self.play.blockSignals(True)
        self.play.setChecked(on)
        self.play.setText("❚❚" if on else "▶")
        self.play.blockSignals(False)
        self._on_play(on, emit=True)

    def _on_play(self, on: bool, emit: bool = True) -> None:
        self.play.setText("❚❚" if on else "▶")
        rec = self.recording
        if on and rec is not None:
            if self.slider.value() >= rec.n_frames - 1:  # at the end: from the start
                self.slider.setValue(0)
            self._t_play = float(rec.frame_times[self.slider.value()])
            self._wall = time.perf_counter()
            self._timer.start()
        else:
            self._timer.stop()
        if emit:
            self.playing_changed.emit(bool(on and rec is not None))

    def _advance(self) -> None:
        rec = self.recording
        if rec is None:
            self._timer.stop()
            return
        now = time.perf_counter()
        self._t_play += float(self.speed.currentData()) * (now - self._wall)
        self._wall = now
        k = rec.index_at(self._t_play)
        if k != self.slider.value():
            self.slider.setValue(k)
        if k >= rec.n_frames - 1:
            self.set_playing(False)
