"""The app draws an assembly coloured by its groups and inspects its bodies (issue #35
item 1): an assembly with more than one group opens with "colour by: body group", each
sphere in its group's colour."""

from __future__ import annotations

import numpy as np
import pytest
from gui_needs import skip_without_gui

skip_without_gui()

from app.gui.worker import LoadRequest  # noqa: E402
from app.scene import GROUP_COLOURS  # noqa: E402

pytestmark = pytest.mark.gui
WAIT = 180_000


def test_an_assembly_opens_coloured_by_group(qtbot, make_window):
    w = make_window(LoadRequest("assembly-drop"))
    assert w.controls.colour.currentText() == "body group"
    assert w.scene.colour_by == "body group" and w.colour_actions["body group"].isChecked()
    groups = w.scene.body_values()
    assert np.array_equal(groups, w.scene.model.groups) and set(groups.tolist()) == {1, 2}
    w.play()
    qtbot.waitUntil(lambda: w.last_frame is not None and w.last_frame.t >= 0.05, timeout=WAIT)
    w.pause()
    qtbot.waitUntil(lambda: w.state == "paused", timeout=WAIT)
    assert w.scene.colour_by == "body group"
    assert GROUP_COLOURS > 2
