"""The app follows a scenario's stages and shows the current one in its status line
(issue #44 item 5)."""

from __future__ import annotations

import pytest
from gui_needs import skip_without_gui

skip_without_gui()

from app.gui.worker import LoadRequest  # noqa: E402

pytestmark = pytest.mark.gui
WAIT = 180_000


def test_the_status_shows_the_stage_and_the_plots_mark_its_change(qtbot, make_window,
                                                                  tmp_path):
    from test_stages import _write
    path = _write(tmp_path)
    w = make_window(LoadRequest(str(path)))
    assert "stage 1 of 2 (t = 0 → 0.03)" in w.status_shown()
    w.play()
    qtbot.waitUntil(lambda: w.last_frame is not None and w.last_frame.t >= 0.04,
                    timeout=WAIT)
    w.pause()
    qtbot.waitUntil(lambda: w.state == "paused", timeout=WAIT)
    assert "stage 2 of 2 (hold) (t = 0.03 → 0.05)" in w.status.text()
    assert [e.label for e in w.plots.events if e.kind == "stage"] == ["stage: 1 → 2 (hold)"]
    shot = tmp_path.parent / "stages_status.png"
    w.grab().save(str(shot))
