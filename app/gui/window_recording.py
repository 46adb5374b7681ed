"""The main window's pictures of itself (issue #34: split out of
``app/gui/main_window.py``): screenshots of the window, File → Export animation… (issue
#37 item 4: the run as watched, rendered from its recorded data and paced by simulated
time, :mod:`app.gui.export_dialog`; the *Record* button opens it too) and the older
wall-clock recording of the 3D view (:class:`app.gui.recorder.Recorder`, kept for
scripts).  :class:`RecordingMixin` is a part of :class:`app.gui.main_window.MainWindow`
and uses its widgets.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from .export_dialog import ExportDialog
from .messages import BranchRequest, LoadRequest
from .recorder import Recorder, RecorderError


class RecordingMixin:
    """Screenshots (PNG of the window) and the recording of the 3D view."""

    def save_screenshot(self, path: str | Path) -> Path:
        """PNG of the whole window."""
        p = Path(path)
        self.plots.redraw()
        self.view.render()
        img = self.grab()
        import errno

        from engine.io.atomic import AtomicOutput

        with AtomicOutput(p) as out:  # whole or absent (issue #46 item 2)
            if not img.save(str(out.tmp), "PNG"):
                raise OSError(errno.EIO, "Qt could not write the PNG")
            out.commit()
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
        """*Record*: File → Export animation… (the wall-clock recording it replaced made
        videos whose pace was the machine's, not the simulation's; issue #37 item 4)."""
        if on:
            self.controls.record.setChecked(False)
            self.export_animation_dialog()
        elif self.recorder is not None:
            self.stop_recording()

    def stop_exports(self) -> None:
        """Cancel a running export and wait for it (the window is closing)."""
        dialog = getattr(self, "export_dialog", None)
        if dialog is not None:
            dialog.stop()

    def watched_source(self):
        """What File → Export animation… renders: the replayed run file's path, or the
        live run as a :class:`~app.export.watched.Watched` (its scenario or branch frame,
        schemes, ``h``, the primary's switches, the time reached); ``None`` when nothing
        has run yet."""
        from ..export.watched import Watched

        if self.recording is not None:
            return str(self.recording.path)
        req = getattr(self.worker, "_request", None) or self._request
        ld, last = self.loaded, self.last_frame
        if ld is None or last is None or req is None or not last.t > 0:
            return None
        events = [(int(e.step), e.kind, e.new) for e in self.plots.events]
        labels = tuple(self.plots.runs) or tuple(ld.integrators)
        if isinstance(req, BranchRequest):
            return Watched(req.scenario, tuple(ld.integrators), float(last.t), h=req.h,
                           events=events, model=req.model, frame=req.frame,
                           energy_reference=req.energy_reference,
                           record_every=req.record_every, labels=labels)
        if isinstance(req, LoadRequest):
            return Watched(req.scenario, tuple(ld.integrators), float(last.t), h=ld.h,
                           overrides=dict(req.overrides), events=events, labels=labels)
        return None

    def export_animation_dialog(self, show: bool = True) -> ExportDialog | None:
        """File → Export animation…: the dialog for the run as watched (not shown when
        ``show`` is false: tests drive it)."""
        source = self.watched_source()
        if source is None:
            self._show_banner("nothing to export yet: play the simulation (or open a run "
                              "file), then export it")
            return None
        if isinstance(source, str):
            times = self.recording.frame_times
            t_range = (float(times[0]), float(times[-1]))
        else:
            t0 = float(getattr(source.frame, "t", 0.0)) if source.frame is not None else 0.0
            t_range = (t0, source.t_end)
        old = getattr(self, "export_dialog", None)
        if old is not None and old.job is not None and old.job.isRunning():
            old.show()  # one export at a time: the running one's dialog
            old.raise_()
            return old
        dialog = ExportDialog(source, t_range, parent=self)
        self.export_dialog = dialog
        if show:
            dialog.show()
        return dialog

    def _record_frame(self) -> None:
        """Add the view to the recording, at most at the recording's frame rate."""
        now = time.perf_counter()
        if now - self._record_last >= self._record_every:
            self._record_last = now
            self.view.render()
            self.recorder.add(self.view_image())
