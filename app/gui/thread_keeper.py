"""Closed windows' worker threads that are still busy, kept until they end.

A window's ``QThread`` is its child, and Qt aborts the process when a running
``QThread`` is destroyed (``qFatal``: "QThread: Destroyed while thread … is still
running").  Asking the thread to quit ends its event loop only once the slot it is in
returns, and a slot may run for a long time: the worker compiling a cold cache's
kernels can take tens of seconds (an export's re-run of a watched run compiles too).
So a window whose worker has not ended by the time it closes hands the thread and its
worker to this module (the export dialog its job likewise), which holds them (no
parent, one reference here) until the thread has finished, then lets them go.  A window
deleted meanwhile (``deleteLater``, the end of :func:`app.gui.launch.launch`) no longer
takes a running thread down with it.  At the application's end :func:`wait_released`
waits for what is still held, so that nothing is destroyed while it runs.
"""

from __future__ import annotations

import functools
import itertools
import time
from collections.abc import Iterable

from PyQt6.QtCore import QObject, QThread

_HELD: dict[int, tuple[QThread, QObject | None]] = {}
_KEYS = itertools.count()  # (never an id(): a key is never reused)


def is_held(thread: QThread) -> bool:
    """Whether ``thread`` is held here (its window closed while it ran)."""
    return any(held is thread for held, _ in _HELD.values())


def release_when_finished(thread: QThread, worker: QObject | None = None,
                          cut: Iterable = ()) -> None:
    """Keep ``thread`` (still running) and ``worker`` (living in it, if any) alive
    without a parent until the thread has finished; then drop them (in the GUI thread,
    where the ``finished`` signal is delivered).  ``cut``: bound signals of theirs to
    disconnect first (their window or dialog hears nothing more from them)."""
    for signal in cut:
        try:
            signal.disconnect()
        except TypeError:  # (nothing connected to it)
            pass
    key = next(_KEYS)
    thread.setParent(None)  # (its window may be deleted now: the thread is not its child)
    _HELD[key] = (thread, worker)
    # (only the key in the slot: the pair is referenced from here alone)
    thread.finished.connect(functools.partial(_release, key))
    if thread.isFinished():  # (it ended between the caller's check and the connection)
        _release(key)


def _release(key: int) -> None:
    pair = _HELD.pop(key, None)
    if pair is not None:
        pair[0].wait()  # (finished is sent just before the thread's end: wait for it)


def wait_released(timeout_ms: int) -> bool:
    """Wait up to ``timeout_ms`` (in all) for the held threads to end; True when none is
    running any more (the held pairs are then dropped)."""
    deadline = time.monotonic() + timeout_ms / 1000.0
    for thread, _worker in list(_HELD.values()):
        left = int(1000.0 * (deadline - time.monotonic()))
        if not thread.wait(max(1, left)):
            return False
    _HELD.clear()
    return True
