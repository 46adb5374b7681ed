"""Whole or absent: how every output other than a run file is written (issue #46 items 1,
2, 8; docs/output.md, "Guarantees").

An output (an export's MP4 or GIF, a converted XYZ file or LAMMPS dump, a VTK
directory, a LAMMPS data file and deck, an imported scenario and its CSV files) is
written under a hidden temporary name in the same directory,
``.<stem>.part-<pid>-<hex><suffix>`` (a file, or for ``directory=True`` a directory of
files), then synced, checked, and renamed into place with ``os.replace``.  A write error
anywhere (a full disk, a quota, a file-size limit) is :class:`OutputError`, one line
naming the output and saying that nothing was written under its name (the previous
file, if any, is untouched); the temporary is removed on every error and on every
interruption.

The writing process holds an ``flock`` on its temporary while it writes: a temporary of
a process that is gone (killed: ``SIGKILL`` runs no clean-up) is *stale*, and the next
writer of the same output removes it (:func:`remove_stale`), as a run file's lock of a
dead writer is taken over (:mod:`.outlock`).
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import secrets
import shutil
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

__all__ = ["AtomicOutput", "OutputError", "commit_all", "open_atomic", "remove_stale",
           "temp_path"]

PART = ".part-"


class OutputError(OSError):
    """An output that could not be written whole; the message is one line that names it
    and says that nothing was written under its name."""

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(code or errno.EIO, message)
        self.message = message

    def __str__(self) -> str:
        return self.message


def temp_path(path: str | Path, pid: int | None = None) -> Path:
    """A fresh hidden temporary name next to ``path``, with its suffix (writers that
    pick the format by the extension need it): ``.<stem>.part-<pid>-<hex><suffix>``."""
    p = Path(path)
    return p.with_name(f".{p.stem}{PART}{os.getpid() if pid is None else pid}-"
                       f"{secrets.token_hex(4)}{p.suffix}")


def _temp_pattern(path: Path) -> re.Pattern:
    """A temporary of ``path``, this module's or an export's of before (``.<stem>
    .part-<pid><suffix>``); group 1 is the pid."""
    return re.compile(r"\." + re.escape(path.stem) + re.escape(PART) + r"(\d+)(?:-[0-9a-f]+)?"
                      + re.escape(path.suffix))


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # (EPERM: it exists)
        return True
    return True


def _unlocked(path: Path) -> bool:
    """Whether no process holds the writer's ``flock`` on ``path`` (taken and dropped)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | os.O_NOFOLLOW)
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


def remove_stale(path: str | Path) -> list[Path]:
    """Remove the temporaries of ``path`` left by processes that are gone (their pid not
    alive here, and no process holding their lock); returns those removed.  Errors are
    ignored (a temporary that cannot be removed stays, as before)."""
    p = Path(path)
    pat = _temp_pattern(p)
    removed = []
    try:
        entries = list(os.scandir(p.parent if str(p.parent) else "."))
    except OSError:
        return removed
    head = f".{p.stem}{PART}"
    for e in entries:
        m = pat.fullmatch(e.name) if e.name.startswith(head) else None
        if m is None or int(m[1]) == os.getpid() or _pid_alive(int(m[1])):
            continue
        q = p.parent / e.name
        if not _unlocked(q):
            continue
        try:
            if e.is_dir(follow_symlinks=False):
                shutil.rmtree(q)
            else:
                q.unlink()
            removed.append(q)
        except OSError:
            pass
    return removed


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.EROFS, errno.ENOTSUP):
            raise
    finally:
        os.close(fd)


class AtomicOutput:
    """One output written whole or not at all.  As a context manager::

        with AtomicOutput(path) as out:   # stale temporaries removed, out.tmp created
            write(out.tmp)                # a file (or with directory=True a directory)
            out.commit()                  # synced, checked, renamed to path

    Leaving the block without :meth:`commit` (an exception, a signal) removes the
    temporary; an ``OSError`` on the way (other than :class:`OutputError`) becomes an
    :class:`OutputError`.  ``directory=True``: ``tmp`` is an empty directory whose files
    replace those of the same names in ``path`` (``path`` itself, if it did not exist).
    ``check(tmp)`` (of :meth:`commit`): raise if the finished output is not whole."""

    def __init__(self, path: str | Path, *, directory: bool = False) -> None:
        self.path = Path(path)
        self.directory = directory
        self.tmp = temp_path(self.path)
        self._fd: int | None = None
        self.done = False

    # ---------------------------------------------------------------- life
    def __enter__(self) -> AtomicOutput:
        remove_stale(self.path)
        try:
            if self.directory:
                self.tmp.mkdir()
                self._fd = os.open(self.tmp, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            else:
                self._fd = os.open(self.tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL
                                   | getattr(os, "O_CLOEXEC", 0), 0o666)
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            self.discard()
            raise self.error(exc) from None
        return self

    def __exit__(self, typ, exc, tb) -> None:
        if not self.done:
            self.discard()
        if self._writing(exc):
            raise self.error(exc) from None

    def _writing(self, exc: BaseException | None) -> bool:
        """Whether ``exc`` is an error of writing this output (an ``OSError`` with an
        errno, of no file or of the temporary), not one of reading the input (h5py's
        have no errno) — those pass on as they are."""
        if not isinstance(exc, OSError) or isinstance(exc, OutputError) or exc.errno is None:
            return False
        if exc.filename is None:
            return True
        name = os.fsdecode(exc.filename)
        return name.startswith(os.fspath(self.tmp)) or Path(name) == self.path

    def error(self, exc: BaseException) -> OutputError:
        """The one line of a failed write of this output."""
        why = (getattr(exc, "strerror", None) or str(exc) or type(exc).__name__)
        why = why.strip().splitlines()[0] if why.strip() else type(exc).__name__
        return OutputError(f"cannot write {self.path}: {why}; nothing was written "
                           + (f"({self.path} is unchanged)" if self.path.exists()
                              else f"({self.path} was not created)"),
                           getattr(exc, "errno", None))

    # ---------------------------------------------------------------- the end
    def prepare(self, check: Callable[[Path], None] | None = None) -> None:
        """Sync the temporary to disk and ``check`` it (before :meth:`replace`)."""
        try:
            if self.directory:
                for f in sorted(self.tmp.iterdir()):
                    _fsync(f)
            _fsync(self.tmp)
            if check is not None:
                check(self.tmp)
        except OSError as exc:
            if isinstance(exc, OutputError):
                raise
            raise self.error(exc) from None

    def replace(self) -> None:
        """Rename the temporary into place (its files, for a directory that exists)."""
        try:
            if self.directory and self.path.is_dir():
                for f in sorted(self.tmp.iterdir()):
                    os.replace(f, self.path / f.name)
                self.tmp.rmdir()
            else:
                os.replace(self.tmp, self.path)
        except OSError as exc:
            raise self.error(exc) from None
        self.done = True
        self._unlock()
        try:
            _fsync(self.path.parent)
        except OSError:
            pass

    def commit(self, check: Callable[[Path], None] | None = None,
               before: Callable[[], None] | None = None) -> Path:
        """:meth:`prepare`, then ``before()`` (it may raise to keep the output from
        being replaced: a signal), then :meth:`replace`; returns the path."""
        self.prepare(check)
        if before is not None:
            before()
        self.replace()
        return self.path

    def discard(self) -> None:
        """Remove the temporary (whatever it holds by now); never raises."""
        try:
            if self.tmp.is_dir() and not self.tmp.is_symlink():
                shutil.rmtree(self.tmp, ignore_errors=True)
            else:
                self.tmp.unlink(missing_ok=True)
        except OSError:
            pass
        self._unlock()

    def _unlock(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


def commit_all(outputs: Sequence[AtomicOutput],
               checks: Sequence[Callable[[Path], None] | None] | None = None,
               before: Callable[[], None] | None = None) -> None:
    """Several outputs that belong together (a scenario and its CSV files): every one
    synced and checked before any is renamed."""
    for k, out in enumerate(outputs):
        out.prepare(None if checks is None else checks[k])
    if before is not None:
        before()
    for out in outputs:
        out.replace()


@contextmanager
def open_atomic(path: str | Path, mode: str = "w", *,
                check: Callable[[Path], None] | None = None,
                before: Callable[[], None] | None = None, **kw: Any) -> Iterator[IO]:
    """``open(path, mode)`` written whole or not at all (:class:`AtomicOutput`): the file
    is replaced when the block ends without an error."""
    with AtomicOutput(path) as out:
        with open(out.tmp, mode, **kw) as fh:
            yield fh
        out.commit(check, before)
