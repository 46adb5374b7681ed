"""What the GUI test modules need before they import the window (issue #34: the check
was repeated at the top of each of them): pytest-qt, pyvistaqt and, on Linux, an X
display (pytest-xvfb starts one).  Without them the module is skipped, never faked."""

from __future__ import annotations

import os
import sys

import pytest


def skip_without_gui() -> None:
    """Skip the calling test module (at its import) where the window cannot be shown."""
    pytest.importorskip("pytestqt")
    pytest.importorskip("pyvistaqt")
    if not os.environ.get("DISPLAY") and sys.platform.startswith("linux"):
        pytest.skip("the 3D view needs an X display (CI runs these under Xvfb)",
                    allow_module_level=True)
