"""File → Export animation… (issue #37 item 4), driven through pytest-qt: an export
while the run plays (the window and the simulation go on; the frames are those of the
rule, from the watched run re-run bit for bit), Cancel half-way (no file, an existing
one untouched), a compare run (ghosts), a branch from a recorded frame (frames from the
branch's time), a replayed run file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gui_needs import skip_without_gui

skip_without_gui()

pytest.importorskip("matplotlib")
pytest.importorskip("imageio_ffmpeg")

from app.export import frame_count  # noqa: E402
from app.gui.worker import LoadRequest  # noqa: E402
from engine.io import RunFile, RunWriter  # noqa: E402
from engine.scenarios import load_scenario  # noqa: E402
from engine.simulation import Simulation  # noqa: E402

pytestmark = pytest.mark.gui
WAIT = 180_000
SMALL = LoadRequest("torus", {"n_particles": 12})


def _play_to(qtbot, w, t: float) -> None:
    w.play()
    qtbot.waitUntil(lambda: w.last_frame is not None and w.last_frame.t >= t, timeout=WAIT)


def _dialog(w, out: Path, fps: int = 10, size: str = "240x160", layout: str = "view+plots"):
    d = w.export_animation_dialog(show=False)
    assert d is not None
    d.out.setText(str(out))
    d.fps.setValue(fps)
    d.size.setText(size)
    d.layout_box.setCurrentText(layout)
    return d


def _files(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir() if p.name != "settings.ini")  # (the session's)


def _held_after(monkeypatch, frames: int):
    """The export job's cancel check, once ``frames`` frames are made, waits (up to a
    minute) until the returned event is set: a job busy where it does not look."""
    import threading

    from app.gui.export_dialog import ExportJob

    gate = threading.Event()
    check = ExportJob.check

    def held(self) -> None:
        if len(self.frames_seen) >= frames:
            gate.wait(60)
        check(self)

    monkeypatch.setattr(ExportJob, "check", held)
    return gate


def _finish(qtbot, d) -> None:
    qtbot.waitUntil(lambda: d.job is not None and d.job.isFinished(), timeout=WAIT)
    qtbot.wait(50)  # (the queued done/failed signal)


def test_export_while_playing_renders_the_watched_run(qtbot, make_window, tmp_path):
    w = make_window(SMALL)
    _play_to(qtbot, w, 0.1)
    w.set_h(5e-4)  # a switch, as watched
    qtbot.waitUntil(lambda: w.last_frame.h == 5e-4, timeout=WAIT)
    # past the next frame time (0.1 apart) after the switch, whenever it landed
    _play_to(qtbot, w, w.last_frame.t + 0.15)
    out = tmp_path / "live.mp4"
    d = _dialog(w, out)
    src = d.source
    assert src.events and src.events[0][1] == "h"
    t_watched = src.t_end
    d.start()
    t_play = w.last_frame.t
    _finish(qtbot, d)
    assert d.error is None and d.finished_path == str(out) and out.stat().st_size > 0
    assert w.last_frame.t > t_play and w.worker.playing  # the run went on meanwhile
    seen = d.job.frames_seen
    t_last = d.job.result.t_end  # the watched run's last record, at most a record before
    assert t_watched - 0.02 < t_last <= t_watched
    n = frame_count(0.0, t_last, 10, 1.0)
    assert len(seen) == n and d.job.result.frames == n
    np.testing.assert_allclose([s.t for s in seen], 0.1 * np.arange(n), atol=1e-12)
    assert seen[0].h == "0.001" and seen[-1].h == "0.0005"  # the overlay follows the switch
    np.testing.assert_array_equal(seen[0].centres, w.loaded.model.initial_state.x)
    assert _files(tmp_path) == ["live.mp4"]
    w.pause()


def test_cancel_half_way_leaves_no_file_and_keeps_the_old_one(qtbot, make_window, tmp_path,
                                                              monkeypatch):
    gate = _held_after(monkeypatch, 3)  # (the 4th frame waits until Cancel is pressed)
    w = make_window(SMALL)
    _play_to(qtbot, w, 0.3)
    w.pause()
    out = tmp_path / "keep.gif"
    out.write_bytes(b"precious")
    d = _dialog(w, out, fps=60, size="96x64", layout="view")
    d.start()
    qtbot.waitUntil(lambda: len(d.job.frames_seen) >= 3, timeout=WAIT)
    d.cancel()
    gate.set()
    _finish(qtbot, d)
    assert len(d.job.frames_seen) == 3 < frame_count(0.0, d.source.t_end, 60, 1.0) // 2
    assert "cancelled" in d.status.text() and d.finished_path is None
    assert out.read_bytes() == b"precious"
    assert _files(tmp_path) == ["keep.gif"]


def test_export_of_a_compare_run_draws_the_ghosts(qtbot, make_window, tmp_path):
    w = make_window(LoadRequest("torus", {"n_particles": 12}, compare=("campello",)))
    assert len(w.loaded.integrators) == 2
    _play_to(qtbot, w, 0.1)
    w.pause()
    d = _dialog(w, tmp_path / "cmp.gif", layout="view+plots")
    d.start()
    _finish(qtbot, d)
    assert d.error is None, d.error
    assert all(s.ghosts == 1 for s in d.job.frames_seen)


@pytest.fixture(scope="module")
def small_run(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("runs") / "small.h5"
    sim = Simulation(load_scenario("torus", {"n_particles": 12}).build_model(), "rrp-newmark",
                     1e-3, record_every=10)
    with RunWriter(path, sim, scenario="torus") as wr:
        assert sim.advance(200).ok
        wr.flush()
    return path


def test_export_of_a_replayed_file_and_after_a_branch(qtbot, make_window, tmp_path,
                                                      small_run):
    w = make_window(SMALL)
    assert w.open_run(small_run)
    d = _dialog(w, tmp_path / "replay.gif", layout="view")
    assert d.source == str(small_run)
    d.start()
    _finish(qtbot, d)
    assert d.error is None and d.job.result.frames == frame_count(0.0, 0.2, 10, 1.0) == 3
    # continue from frame 10 (t = 0.1), play on, export: the frames start at the branch
    w.timeline.slider.setValue(10)
    w.branch_here()
    qtbot.waitUntil(lambda: w.recording is None and w.loaded is not None
                    and w.loaded.branch and w.last_frame is not None, timeout=WAIT)
    _play_to(qtbot, w, 0.25)
    w.pause()
    qtbot.waitUntil(lambda: w.state == "paused", timeout=WAIT)
    d = _dialog(w, tmp_path / "branch.gif", layout="view")
    assert d.source.frame is not None and d.t0.value() == pytest.approx(0.1)
    d.start()
    _finish(qtbot, d)
    assert d.error is None, d.error
    seen = d.job.frames_seen
    assert seen[0].t == pytest.approx(0.1)
    with RunFile(small_run) as rf:
        np.testing.assert_array_equal(seen[0].centres, rf.frame(10).x)


def test_closing_the_window_cancels_a_running_export(qtbot, make_window, tmp_path,
                                                     monkeypatch):
    import threading
    import time

    from app.gui.export_dialog import ExportJob

    started = threading.Event()
    check = ExportJob.check

    def slow(self) -> None:  # (50 ms a frame: the export outlasts the close)
        if self.frames_seen:
            started.set()
            time.sleep(0.05)
        check(self)

    monkeypatch.setattr(ExportJob, "check", slow)
    w = make_window(SMALL)
    _play_to(qtbot, w, 0.5)
    w.pause()
    d = _dialog(w, tmp_path / "x.gif", fps=120, size="96x64", layout="view")
    job = d.start()
    qtbot.waitUntil(started.is_set, timeout=WAIT)
    w.close()
    assert job.isFinished()
    assert _files(tmp_path) == []


def test_an_export_that_outlasts_the_close_is_not_destroyed_running(qtbot, make_window,
                                                                    tmp_path, monkeypatch):
    """A job that does not look at its cancel within the wait (held in a step: a
    compile of the watched run's re-run) is left to end by itself: deleting its dialog
    does not destroy the running thread (Qt aborts the process on that), and once it
    looks it cancels and leaves nothing."""
    from PyQt6 import sip

    from app.gui import thread_keeper

    gate = _held_after(monkeypatch, 1)
    w = make_window(SMALL)
    _play_to(qtbot, w, 0.2)
    w.pause()
    d = _dialog(w, tmp_path / "x.gif", fps=60, size="96x64", layout="view")
    job = d.start()
    qtbot.waitUntil(lambda: len(job.frames_seen) >= 1, timeout=WAIT)
    d.stop(wait_ms=200)
    assert job.isRunning() and thread_keeper.is_held(job) and job.parent() is None
    d.deleteLater()
    qtbot.waitUntil(lambda: sip.isdeleted(d), timeout=5000)
    gate.set()
    qtbot.waitUntil(lambda: not thread_keeper.is_held(job), timeout=WAIT)
    assert job.isFinished() and job.result is None
    assert _files(tmp_path) == []
