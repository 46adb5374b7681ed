"""The main window's replay of run files and *Continue from here* (issue #34: split out
of ``app/gui/main_window.py``).  :class:`ReplayMixin` is a part of
:class:`app.gui.main_window.MainWindow` and uses its widgets; the timeline and the file
are :mod:`app.gui.replay`'s.
"""

from __future__ import annotations

from pathlib import Path

from engine.io import RunFileError
from engine.models.field_view import stage_spans
from engine.simulation.breaking import broken_ids

from .inspector import inspector_html
from .messages import DEFAULT_REQUEST, BranchRequest
from .replay import Recording
from .reports import body_report


class ReplayMixin:
    """Replay mode: a run file shown frame by frame (the timeline under the view), and
    the branch of a live run from a recorded frame or from the live state."""

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
        if getattr(self, "field_scene", None) is not None:  # (the stages' spans: #44.7)
            self.field_scene.spans = stage_spans(ld.model, float(rec.file.h), rec.events)
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
        self._update_fields(fr.t, fr.x, fr.q)
        if "broken" in rec.model.energy_components:  # (issue #44 item 2: not drawn)
            self.scene.set_broken(broken_ids(rec.events, t=fr.t))
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
        self._count_fps()
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
