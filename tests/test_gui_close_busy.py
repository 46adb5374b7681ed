"""A window closed while its worker is in a long slot (a cold compile: tens of seconds).

Qt aborts the process when a running ``QThread`` is destroyed.  The window's thread was
its child, so a window closed while its worker was still compiling, then deleted (the
test's teardown deletes it; so does the end of ``rrp gui``), took the running thread
down with it: "QThread: Destroyed while thread 'rrp-simulation' is still running",
SIGABRT, the whole test run gone (CI, 2026-12-07).  Now the thread is handed to
``app.gui.thread_keeper`` until it ends, and ``rrp gui`` ends without destroying it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from gui_needs import skip_without_gui

skip_without_gui()

from PyQt6 import sip  # noqa: E402

from app.gui import thread_keeper  # noqa: E402
from app.gui.main_window import MainWindow  # noqa: E402
from app.gui.worker import LoadRequest, SimulationWorker  # noqa: E402

pytestmark = pytest.mark.gui
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def busy_after_load(monkeypatch):
    """The worker's first frame (just after ``loaded``) takes ``seconds`` more."""
    emit = SimulationWorker._emit_frame
    calls: list[float] = []

    def slow(self, *args, **kwargs):
        calls.append(time.monotonic())
        if len(calls) == 1:
            time.sleep(3.0)
        return emit(self, *args, **kwargs)

    monkeypatch.setattr(SimulationWorker, "_emit_frame", slow)
    monkeypatch.setattr(MainWindow, "STOP_WAIT_MS", 200)
    return calls


def test_a_window_deleted_while_its_worker_is_busy_leaves_the_thread_to_end(
        qtbot, settings, busy_after_load):
    w = MainWindow(LoadRequest("pendulum"), settings=settings)  # (deleted here, not
    w.show()  # by qtbot's teardown)
    try:
        qtbot.waitUntil(lambda: w.loaded is not None, timeout=300_000)
    finally:
        w.close()
    thread = w.thread
    assert thread.isRunning()  # (the worker is still in its slot)
    assert thread_keeper.is_held(thread) and thread.parent() is None
    frames = []
    w._on_frame = frames.append  # (nothing more reaches the closed window)
    w.deleteLater()
    qtbot.waitUntil(lambda: sip.isdeleted(w), timeout=5000)  # (no abort: not its child)
    qtbot.waitUntil(lambda: not thread_keeper.is_held(thread), timeout=60_000)
    assert thread.isFinished()
    assert not frames
    assert len(busy_after_load) == 1  # (the slot returned; shutdown ended the thread)


def test_rrp_gui_closed_while_the_worker_is_busy_exits_cleanly(tmp_path):
    """``rrp gui --quit-after 0`` with the worker busy for 12 s after ``loaded``: the
    window closes at once, the command ends with status 0 and without Qt's abort."""
    script = textwrap.dedent("""
        import sys, time
        from app.gui.main_window import MainWindow
        from app.gui.worker import SimulationWorker
        emit, calls = SimulationWorker._emit_frame, []
        def slow(self, *args, **kwargs):
            calls.append(1)
            if len(calls) == 1:
                time.sleep(12.0)
            return emit(self, *args, **kwargs)
        SimulationWorker._emit_frame = slow
        MainWindow.STOP_WAIT_MS = 200
        from app.cli import main
        sys.exit(main(["gui", "pendulum", "--quit-after", "0"]))
    """)
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                         text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stderr
    assert "Destroyed while thread" not in out.stderr, out.stderr
