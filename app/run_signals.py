"""SIGINT and SIGTERM during ``rrp run``: the run stops cleanly, at any moment
(docs/output.md, "Guarantees").

A signal is only *recorded* (:attr:`RunSignals.received`) while the command works with
its run file: the run loop looks at it between chunks of steps and the writer closes the
file (status ``interrupted``, resumable), so that no exception is ever raised inside h5py
(an exception raised there left its lock held: the process hung for ever at exit) or in
the middle of a simulation's update.  Further signals during the clean-up are recorded
and ignored.  Only in phases that touch no file (loading, compiling: :meth:`immediate`)
does a signal raise :class:`Stopped` at once.  After the command, while the interpreter
exits (:meth:`finished`), a signal ends the process at once with its code.  The exit
code is ``128 + n`` for the first signal ``n``: 130 for SIGINT, 143 for SIGTERM.

``SIGXFSZ`` is ignored while the command runs, so that a file-size limit
(``ulimit -f``) reaches the writer as ``EFBIG`` instead of killing the process.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["RunSignals", "Stopped"]

HANDLED = (signal.SIGINT, signal.SIGTERM)


class Stopped(KeyboardInterrupt):
    """A run stopped by a signal before its file existed (raised in the phases of
    :meth:`RunSignals.immediate`).  ``exit_code``: ``128 + signum``."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name


class RunSignals:
    """The handlers of one ``rrp run``: :meth:`install`, then :meth:`restore` (or
    :meth:`finished` at the very end of the program)."""

    def __init__(self) -> None:
        self.received: list[int] = []
        self._mode = "record"  # "record", "raise" (immediate) or "exit" (finished)
        self._old: dict[int, object] = {}
        self._old_hook = None
        self.after: str | None = None
        """The one line of a signal that comes once the command's outcome is settled
        (``{signal}``: its name; set by the commands that write outputs: issue #46 item
        5); ``None``: nothing is printed (``rrp run``)."""
        self.reported = False
        """Whether the command printed the line of the signal it got."""

    # ------------------------------------------------------------------ setup
    def install(self, early: list[int] | None = None,
                previous: dict | None = None) -> RunSignals:
        """Take over SIGINT, SIGTERM (and ignore SIGXFSZ).  ``early``: signals recorded
        before (``python -m app``), ``previous``: the handlers to restore at the end
        instead of the ones found now."""
        for s in (*HANDLED, signal.SIGXFSZ):
            try:
                self._old[s] = signal.signal(s, signal.SIG_IGN if s == signal.SIGXFSZ
                                             else self._handler)
            except (ValueError, OSError):  # (not the main thread: nothing to do)
                pass
        self._old.update(previous or {})
        self.received.extend(early or ())
        if self._old_hook is None:
            self._old_hook = sys.unraisablehook
            sys.unraisablehook = self._unraisable
        return self

    def restore(self) -> None:
        for s, old in self._old.items():
            try:
                signal.signal(s, old)
            except (ValueError, OSError, TypeError):
                pass
        self._old.clear()
        if self._old_hook is not None:
            sys.unraisablehook = self._old_hook
            self._old_hook = None

    def finished(self) -> None:
        """The command is over (file closed, summary printed): from now a signal ends
        the process at once, with its exit code (and the line :attr:`after`)."""
        self._mode = "exit"

    def late_line(self) -> str | None:
        """:attr:`after` for the signal received, once, if the command did not report it."""
        if not self.received or self.reported or self.after is None:
            return None
        self.reported = True
        return self.after.format(signal=self.name)

    def end_with(self, after: str, code: int) -> int:
        """The command's exit code once its output is in place: ``after`` (a line with
        ``{signal}``) becomes :attr:`after`; a signal received meanwhile and not yet
        reported prints that line and gives the signal's code, else ``code``."""
        self.after = after
        line = self.late_line()
        if line is None:
            return code
        print(line, file=sys.stderr)
        return self.exit_code

    # ------------------------------------------------------------------ state
    @property
    def first(self) -> int | None:
        return self.received[0] if self.received else None

    @property
    def exit_code(self) -> int | None:
        return None if not self.received else 128 + self.received[0]

    @property
    def name(self) -> str:
        return signal.Signals(self.received[0]).name if self.received else ""

    def check(self) -> None:
        """Raise :class:`Stopped` if a signal came (for the phases between files)."""
        if self.received:
            raise Stopped(self.received[0])

    def until_polled(self, guarded: bool = True) -> RunSignals:
        """From now until :meth:`poll`: a signal raises :class:`Stopped` at once (an
        export before its first frame: loading, compiling).  ``guarded``: not while
        the code interrupted is importing a module or inside VTK, PyVista or h5py
        (raised there, it crashed the process with SIGSEGV, or turned into an
        ``ImportError``, or left h5py's lock held: issue #46 item 5): the signal is then
        recorded, and raised by the next :meth:`check` or :meth:`poll`."""
        self.check()
        self._mode = "raise"
        self._guarded = guarded
        return self

    def poll(self) -> None:
        """From now signals are recorded (raised inside VTK's rendering, VTK would print
        and swallow them), and raised here, between frames: :class:`Stopped`."""
        self.recording()
        self.check()

    def recording(self) -> None:
        """From now signals are recorded, not raised (the end of :meth:`until_polled`)."""
        if self._mode == "raise":
            self._mode = "record"

    @contextmanager
    def immediate(self) -> Iterator[None]:
        """A phase that touches no file: a signal raises :class:`Stopped` at once."""
        self.check()
        self._mode = "raise"
        try:
            yield
        finally:
            self._mode = "record"

    # ------------------------------------------------------------------ handler
    def _unraisable(self, u) -> None:
        """A :class:`Stopped` raised where Python cannot pass it on (the signal came
        while llvmlite ran a ctypes callback, loading a cached kernel): Python would
        print it with a traceback and go on.  It is recorded already, and the next
        :meth:`check` raises it, so nothing is printed; anything else goes to the hook
        that was there before."""
        if isinstance(u.exc_value, Stopped):
            return
        (self._old_hook or sys.__unraisablehook__)(u)

    def _handler(self, signum: int, _frame) -> None:
        self.received.append(signum)
        if self._mode == "exit":
            line = self.late_line()
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except Exception:  # noqa: BLE001 - (exiting: nothing to say it to)
                    pass
            if line:
                try:
                    os.write(2, (line + "\n").encode(errors="replace"))
                except OSError:
                    pass
            os._exit(128 + self.received[0])
        if self._mode == "raise" and len(self.received) == 1 and not (
                getattr(self, "_guarded", False) and not _safe_to_raise(_frame)):
            self._mode = "record"  # (once: the clean-up after it is not interrupted)
            raise Stopped(signum)


_UNSAFE = tuple(f"{os.sep}{m}{os.sep}" for m in ("vtkmodules", "pyvista", "h5py", "importlib"))


def _safe_to_raise(frame) -> bool:
    """Whether no frame of the interrupted stack imports a module or runs VTK, PyVista or
    h5py code (where an exception raised by a signal handler is not safe)."""
    for _ in range(1000):
        if frame is None:
            return True
        name = frame.f_code.co_filename
        if name.startswith("<frozen importlib") or any(u in name for u in _UNSAFE):
            return False
        frame = frame.f_back
    return False
