"""The app shows a model's broken bonds (issue #44 item 2): their count in the status
line, and the broken bonds no longer drawn in the view."""

from __future__ import annotations

import pytest
from gui_needs import skip_without_gui

skip_without_gui()

from app.gui.worker import LoadRequest  # noqa: E402

pytestmark = pytest.mark.gui
WAIT = 180_000


def test_the_status_counts_the_broken_bonds_and_the_view_drops_them(qtbot, make_window,
                                                                    tmp_path):
    from test_bond_breaking import pull_toml
    w = make_window(LoadRequest(str(pull_toml(tmp_path))))
    assert w.scene.bonds_drawn == 2
    w.play()
    qtbot.waitUntil(lambda: w.last_frame is not None and w.last_frame.t >= 0.05,
                    timeout=WAIT)
    w.pause()
    qtbot.waitUntil(lambda: w.state == "paused", timeout=WAIT)
    assert "broken bonds 2" in w.status.text()
    assert w.scene.bonds_drawn == 0
    assert not [e for e in w.plots.events if e.kind == "break"]  # (no markers)
