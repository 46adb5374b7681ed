"""Shared pytest hooks.

Under ``CI=true`` a test or module skipped for want of a display (no ``DISPLAY``, no
Xvfb, no OpenGL context) FAILS the run instead: the GUI tests must never silently vanish
from a green CI run because Xvfb broke (issue #10 §6).  Locally such skips stay skips.
"""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path

import pytest
from slow_cases import SLOW_CASES

DISPLAY_SKIP = re.compile(r"display|xvfb|opengl|\bEGL\b|QT_QPA|xcb", re.IGNORECASE)
"""Skip reasons that mean "no screen to draw on"."""


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() == "true"


def _skip_reason(report) -> str:
    lr = report.longrepr
    if isinstance(lr, tuple) and len(lr) == 3:
        return str(lr[2])
    return str(lr)


def _fail_display_skip(report) -> None:
    reason = _skip_reason(report)
    if DISPLAY_SKIP.search(reason):
        report.outcome = "failed"
        report.longrepr = (f"CI=true: a skip for lack of a display is a failure (is Xvfb "
                           f"working? pytest-xvfb installed?): {reason}")


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    report = outcome.get_result()
    if _in_ci() and report.skipped:
        _fail_display_skip(report)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if _in_ci() and report.skipped and not hasattr(report, "wasxfail"):
        _fail_display_skip(report)


# ---------------------------------------------------------------- the default run's share
def _matches(nodeid: str, pattern: str) -> bool:
    """``file::test[params]``: fnmatch on the name part and, after ``[``, on the case id."""
    head, bracket, case = pattern.partition("[")
    name, _, nodecase = nodeid.partition("[")
    if not fnmatch.fnmatchcase(name, head):
        return False
    if not bracket:
        return True
    case = case[:-1] if case.endswith("]") else case
    return bool(nodecase) and fnmatch.fnmatchcase(nodecase[:-1], case)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Mark ``slow`` every test that ``tests/slow_cases.py`` lists (before ``-m`` selects).

    A pattern whose file was collected whole but that matches no test there is a usage
    error: the table names tests that exist.
    """
    root = config.rootpath
    picked = {Path(arg.split("::", 1)[0]).resolve() for arg in config.args if "::" in arg}
    files = {name for name in (item.nodeid.split("::", 1)[0] for item in items)
             if (root / name).resolve() not in picked}  # (files collected whole)
    unused = []
    for pattern, _reason in SLOW_CASES:
        hits = [item for item in items if _matches(item.nodeid, pattern)]
        for item in hits:
            item.add_marker(pytest.mark.slow)
        if not hits and pattern.split("::", 1)[0] in files:
            unused.append(pattern)
    if unused:
        raise pytest.UsageError("tests/slow_cases.py names tests that do not exist: "
                                + "; ".join(unused))


# ---------------------------------------------------------------- window fixtures
GUI_WAIT = 180_000  # ms; the first load may compile the kernels (cold cache, loaded box)
_TORUS = object()  # make_window's default: the torus (None: restore the session)


@pytest.fixture
def settings(tmp_path):
    """A QSettings file of the test's own (Qt imported only by the GUI tests)."""
    from PyQt6.QtCore import QSettings

    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def make_window(qtbot, settings):
    """``make(request=LoadRequest("torus"))``: a shown main window, loaded and with a
    first frame (``make(None)``: the session the settings remember); closed after the
    test.  ``run``: a run file to open (replay: not waited for); ``size``: the window's
    size (``None``: its own); ``timeout``: the wait for the first frame, in ms.  The
    one maker of the GUI tests' windows (issue #34)."""
    from app.gui.main_window import MainWindow
    from app.gui.worker import LoadRequest

    made = []

    def make(request=_TORUS, *, run=None, size=(1280, 800), timeout=GUI_WAIT):
        w = MainWindow(LoadRequest("torus") if request is _TORUS else request,
                       settings=settings, run=run)
        if size is not None:
            w.resize(*size)
        w.show()
        qtbot.addWidget(w)
        if run is None:
            qtbot.waitUntil(lambda: w.loaded is not None and w.last_frame is not None,
                            timeout=timeout)
        made.append(w)
        return w

    yield make
    for w in made:
        w.close()
