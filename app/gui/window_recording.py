"""The main window's pictures of itself (issue #34: split out of
``app/gui/main_window.py``): screenshots of the window and the recording of the 3D view
to a video (:class:`app.gui.recorder.Recorder`).  :class:`RecordingMixin` is a part of
:class:`app.gui.main_window.MainWindow` and uses its widgets.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from PyQt6.QtWidgets import QFileDialog

from .recorder import Recorder, RecorderError


class RecordingMixin:
    """Screenshots (PNG of the window) and the recording of the 3D view."""

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
            self._show_follow(False)
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

    def _record_frame(self) -> None:
        """Add the view to the recording, at most at the recording's frame rate."""
        now = time.perf_counter()
        if now - self._record_last >= self._record_every:
            self._record_last = now
            self.view.render()
            self.recorder.add(self.view_image())
