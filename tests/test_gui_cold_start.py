"""The window on an empty kernel cache (issue #45, "Moving in five seconds"): the torus
moves before its compiled kernels exist, on the kernels' uncompiled twins
(``engine.interpreted``), and the status bar says so.

A process of its own, with a kernel cache of its own that starts empty (as a fresh
install meets it); the processes that would build the stepping loop in the background
are stand-ins that compile nothing, so the motion seen is the twins' for certain.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from gui_needs import skip_without_gui

skip_without_gui()

pytestmark = pytest.mark.gui
ROOT = Path(__file__).resolve().parent.parent

COLD_GUI = """
import json, subprocess, sys, time
import engine.priming as priming
calls = []
procs = []
def spawn(scheme, family, part="run"):  # (a compile that never ends: nothing is built)
    calls.append(part)
    procs.append(subprocess.Popen(["sleep", "600"]))
    return procs[-1]
priming.spawn_priming = spawn
from PyQt6.QtCore import QSettings
from PyQt6.QtWidgets import QApplication
qapp = QApplication([])
from app.gui.main_window import MainWindow
from app.gui.worker import LoadRequest
w = MainWindow(LoadRequest("torus"),
               settings=QSettings(sys.argv[1], QSettings.Format.IniFormat))
w.show()
def until(cond):
    while not cond():
        qapp.processEvents()
        time.sleep(0.01)
until(lambda: w.loaded is not None and w.last_frame is not None)
x0 = w.last_frame.x.copy()
w.play()
until(lambda: w.last_frame.step > 0)
fr = w.last_frame
out = {"moved": bool((fr.x != x0).any()), "kernels": getattr(fr, "kernels", None),
       "status": w.status.text(), "calls": calls, "step": fr.step}
w.close()
for p in procs:
    p.kill()
print(json.dumps(out))
"""


def test_a_cold_start_moves_on_the_twins_and_says_so(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    env = dict(os.environ, PYTHONPATH=str(ROOT), NUMBA_CACHE_DIR=str(cache),
               XDG_CACHE_HOME=str(tmp_path / "xdg"))
    p = subprocess.run([sys.executable, "-c", COLD_GUI, str(tmp_path / "settings.ini")],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["calls"] == ["run", "siblings"]  # (the compile was started, not waited on)
    assert out["step"] > 0 and out["moved"]
    assert out["kernels"] == "interpreted"
    assert out["status"].startswith("interpreted, ") and "compiling rrp-newmark…" in \
        out["status"], out["status"]
