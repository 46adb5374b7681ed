"""Soak test of the desktop window (issue #10 §6): 1,000 random actions with a fixed seed
on a running window (:mod:`soak_actions`), and then what must hold on any machine: no
exception (in the GUI or the worker thread), no dead worker, no frozen UI (each action
answered by a ping through the worker's event loop back to the GUI's; the limit only
guards against a hang), the scheme shown is the one running after every action, and
memory growth over the last 500 actions below 50 MB (RSS).

How fast the window answers (worst and median response) is a measurement, not a test:
``benchmarks/bench_gui_soak.py`` runs the same actions and reports it.  The figures of
this run are printed (``-s``).
"""

from __future__ import annotations

import traceback

import pytest
from gui_needs import skip_without_gui

skip_without_gui()
pytest.importorskip("psutil")

from app.gui.worker import LoadRequest  # noqa: E402

pytestmark = [pytest.mark.gui, pytest.mark.slow]

RSS_LIMIT = 50e6  # bytes, growth over the last half


@pytest.fixture
def window(make_window):
    from soak_actions import WAIT

    return make_window(LoadRequest("pendulum"), size=(1100, 700), timeout=int(1000 * WAIT))


def test_a_thousand_random_actions(qtbot, window):
    from soak_actions import ACTIONS, soak

    w = window
    with qtbot.capture_exceptions() as errors:
        res = soak(w, lambda pred, s: qtbot.waitUntil(pred, timeout=int(1000 * s)),
                   qtbot.wait)
    assert not errors, "exceptions raised in slots:\n" + "\n".join(
        "".join(traceback.format_exception(*e)) for e in errors[:3])
    assert w.thread.isRunning()
    assert w.loaded is not None
    print("\n" + res.summary())
    assert res.growth < RSS_LIMIT, f"RSS grew by {res.growth / 1e6:.1f} MB over the last half"
    assert all(res.done[n] > 0 for n, _, _ in ACTIONS), res.done
