"""File → Export animation… (issue #37 item 4): the run as watched — a replayed run
file as recorded, or the live run re-run bit for bit with its switches, its compare
runs and its branch frame (:mod:`app.export.watched`) — rendered from the recorded data
by :func:`app.export.export_run` in a worker thread, with a progress bar, the ETA and
Cancel; the window stays responsive and the simulation may keep running.  The target
is locked for the export (one writer, :mod:`engine.io.outlock`); a cancelled or failed
export leaves no file and never replaces an existing one (the video is written under a
temporary name, renamed at the end).
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PyQt6.QtCore import QThread, pyqtSignal
from PyQt6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ..export import LAYOUTS, ExportError, parse_size
from ..export.watched import Watched, write_watched
from .thread_keeper import release_when_finished


class Cancelled(Exception):
    """Raised inside the export by its ``check`` when Cancel was pressed."""


@dataclass
class ExportSettings:
    """What the dialog asks: the target, the window ``t0``/``t1`` (``None``: the whole
    run), the layout, fps, speed and size."""

    out: Path
    t0: float | None = None
    t1: float | None = None
    layout: str = "view+plots"
    fps: int = 30
    speed: float = 1.0
    size: tuple[int, int] = (1280, 720)
    title: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


class ExportJob(QThread):
    """The export in a thread: ``progress(done, total, text)``, then ``done(path,
    frames)``, ``failed(message)`` or ``cancelled()``.  ``source``: a run file path or
    a :class:`~app.export.watched.Watched`."""

    progress = pyqtSignal(int, int, str)
    done = pyqtSignal(str, int)
    failed = pyqtSignal(str)
    cancelled = pyqtSignal()

    def __init__(self, source: str | Path | Watched, settings: ExportSettings,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.source = source
        self.settings = settings
        self._cancel = False
        self.frames_seen: list = []
        """Each frame's :class:`app.export.render.FrameInfo` (for tests)."""
        self.result = None

    def cancel(self) -> None:
        self._cancel = True

    def check(self) -> None:
        if self._cancel:
            raise Cancelled

    def run(self) -> None:  # noqa: D102 (QThread)
        from engine.io.outlock import OutputBusyError, OutputLock

        from ..export import export_run

        s = self.settings
        lock = None

        def on_frame(info) -> None:
            self.frames_seen.append(info)
            k, n = info.k + 1, info.n
            spent = time.perf_counter() - t_frames
            eta = spent / k * (n - k)
            self.progress.emit(k, n, f"frame {k} of {n} · t = {info.t:.3f} s · "
                                     f"{eta:.0f} s left")

        try:
            lock = OutputLock(s.out, "an export of RRP Studio",
                              "export to another file, or wait for it to finish").acquire()
            with tempfile.TemporaryDirectory(prefix="rrp-export-") as tmp:
                compare: list[Path] = []
                labels: tuple[str, ...] = ()
                if isinstance(self.source, Watched):
                    self.progress.emit(0, 0, "re-running the watched run from its start…")
                    paths = write_watched(self.source, Path(tmp), self.check)
                    run, compare = paths[0], paths[1:]
                    labels = self.source.labels
                else:
                    run = Path(self.source)
                t0, t1 = _clip(run, s.t0, s.t1)
                t_frames = time.perf_counter()
                self.result = export_run(run, out=s.out, t0=t0, t1=t1, fps=s.fps,
                                         speed=s.speed, size=s.size, layout=s.layout,
                                         title=s.title, compare=compare, labels=labels,
                                         check=self.check, on_frame=on_frame)
        except Cancelled:
            self.cancelled.emit()
            return
        except (ExportError, OutputBusyError) as exc:
            self.failed.emit(str(exc))
            return
        except Exception as exc:  # noqa: BLE001 - one line in the window, not a crash
            self.failed.emit(f"{type(exc).__name__}: {exc}".splitlines()[0])
            return
        finally:
            if lock is not None:
                lock.release()
        self.done.emit(str(self.result.path), self.result.frames)


def _clip(run: Path, t0: float | None, t1: float | None
          ) -> tuple[float | None, float | None]:
    """The dialog's window within the run's recorded frames: the watched run's last
    frame is the last record before the time reached (records are ``every`` steps
    apart), so the default "to the end" is its time."""
    from engine.io import RunFile

    with RunFile(run) as rf:
        if not rf.n_frames:
            return t0, t1
        lo, hi = float(rf.frame_times[0]), float(rf.frame_times[rf.n_frames - 1])
    if t0 is not None:
        t0 = min(max(t0, lo), hi)
    if t1 is not None:
        t1 = min(max(t1, lo), hi)
    return t0, t1


class ExportDialog(QDialog):
    """The settings of an export and its progress (see the module docstring)."""

    def __init__(self, source: str | Path | Watched, t_range: tuple[float, float],
                 default_out: str = "rrp.mp4", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export animation")
        self.source = source
        self.job: ExportJob | None = None
        self.out = QLineEdit(default_out)
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.out, 1)
        row.addWidget(browse)
        lo, hi = t_range
        self.t0 = QDoubleSpinBox(decimals=4, minimum=lo, maximum=hi, value=lo)
        self.t1 = QDoubleSpinBox(decimals=4, minimum=lo, maximum=hi, value=hi)
        self.layout_box = QComboBox()
        self.layout_box.addItems(LAYOUTS)
        self.layout_box.setCurrentText("view+plots")
        self.fps = QSpinBox(minimum=1, maximum=120, value=30)
        self.speed = QDoubleSpinBox(decimals=3, minimum=0.001, maximum=1000.0, value=1.0)
        self.size = QLineEdit("1280x720")
        self.title_edit = QLineEdit("")
        form = QFormLayout()
        form.addRow("File (.mp4, .gif)", row)
        form.addRow("From t", self.t0)
        form.addRow("To t", self.t1)
        form.addRow("Layout", self.layout_box)
        form.addRow("Frames per second", self.fps)
        form.addRow("Speed (simulated s per video s)", self.speed)
        form.addRow("Size (WxH)", self.size)
        form.addRow("Title", self.title_edit)
        self.bar = QProgressBar()
        self.bar.setRange(0, 1)
        self.bar.setValue(0)
        self.status = QLabel("Frame k shows t = t0 + k · speed / fps.")
        self.buttons = QDialogButtonBox()
        self.export_button = self.buttons.addButton("Export",
                                                    QDialogButtonBox.ButtonRole.AcceptRole)
        self.cancel_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.export_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addWidget(self.bar)
        lay.addWidget(self.status)
        lay.addWidget(self.buttons)
        self.finished_path: str | None = None
        self.error: str | None = None

    def _browse(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export animation", self.out.text(),
                                              "Video (*.mp4);;Animated GIF (*.gif)")
        if path:
            self.out.setText(path)

    def settings(self) -> ExportSettings:
        """The settings as entered; :class:`ExportError` (one line) for a bad size."""
        t0, t1 = self.t0.value(), self.t1.value()
        return ExportSettings(Path(self.out.text()).expanduser(), t0, t1,
                              self.layout_box.currentText(), self.fps.value(),
                              self.speed.value(), parse_size(self.size.text()),
                              self.title_edit.text())

    def start(self) -> ExportJob | None:
        """Start the export (a second press while one runs does nothing)."""
        if self.job is not None and self.job.isRunning():
            return self.job
        try:
            s = self.settings()
        except ExportError as exc:
            self._fail(str(exc))
            return None
        self.error = self.finished_path = None
        self.job = ExportJob(self.source, s, self)
        self.job.progress.connect(self._progress)
        self.job.done.connect(self._done)
        self.job.failed.connect(self._fail)
        self.job.cancelled.connect(self._cancelled)
        self.export_button.setEnabled(False)
        self.status.setText("starting…")
        self.job.start()
        return self.job

    def cancel(self) -> None:
        """Cancel a running export (nothing is left), or close the dialog."""
        if self.job is not None and self.job.isRunning():
            self.job.cancel()
            self.status.setText("cancelling…")
        else:
            self.reject()

    def stop(self, wait_ms: int = 30_000) -> None:
        """Cancel a running export and wait for its thread (the dialog or the window is
        closing: a running QThread must not be destroyed); nothing is left behind.  A job
        still running after ``wait_ms`` is held by ``thread_keeper`` until it sees the
        cancel and ends (cleaning up as it does)."""
        if self.job is not None and self.job.isRunning():
            self.job.cancel()
            if not self.job.wait(wait_ms):  # (in a step that does not look: a compile)
                job = self.job  # (not destroyed with the dialog)
                release_when_finished(job, cut=(job.progress, job.done, job.failed,
                                                job.cancelled))

    def reject(self) -> None:  # (Escape, the close button, Cancel when idle)
        self.stop()
        super().reject()

    def closeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        self.stop()
        super().closeEvent(event)

    def _progress(self, k: int, n: int, text: str) -> None:
        self.bar.setRange(0, n)
        self.bar.setValue(k)
        self.status.setText(text)

    def _done(self, path: str, frames: int) -> None:
        self.finished_path = path
        self.export_button.setEnabled(True)
        self.status.setText(f"wrote {path} ({frames} frames)")

    def _fail(self, message: str) -> None:
        self.error = message
        self.export_button.setEnabled(True)
        self.status.setText(f"cannot export: {message}")

    def _cancelled(self) -> None:
        self.export_button.setEnabled(True)
        self.bar.setValue(0)
        self.status.setText("cancelled: nothing was written")
