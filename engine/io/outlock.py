"""One writer per output: an exclusive lock on an output's name (docs/output.md,
"Guarantees").

A writer (``rrp run --out``, ``--resume``, ``rrp export``, the app's recorder and *Save
data*) takes :class:`OutputLock` on its target before it creates anything: an
``fcntl.flock`` on the sidecar ``<name>.lock``, which records the holder (pid, host,
what, since when).  A second writer on the same name is refused at once with
:class:`OutputBusyError`, one line naming the holder and the fix.  The kernel drops the
lock when its process ends, however it ends (a killed writer leaves at most a stale,
unlocked ``.lock`` file, which the next writer takes over).  The lock file is removed
on release while still locked, and a writer that locked a file since removed takes the
lock again on the new one, so two writers never both hold the lock of one name.

A reader that must see a file that does not change under it (``rrp run --resume``
copying a run to another ``--out``, ``rrp convert``) takes the same lock *shared*
(``shared=True``, issue #36 item 1): readers share it, and a writer of the name is
refused while one reads (and a reader while one writes).  :meth:`OutputLock.intact`
says whether the lock file at the name is still the one held (a lock file deleted
under its holder lets a second writer in: the first must then not replace the
output, issue #36 item 12).
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import time
from pathlib import Path

__all__ = ["OutputBusyError", "OutputLock", "lock_path"]


class OutputBusyError(OSError):
    """Another process writes the same output; the message is one line naming it (its
    pid) and the fix.  ``holder``: what the lock file says of it (may be empty)."""

    def __init__(self, message: str, holder: dict | None = None) -> None:
        super().__init__(errno.EBUSY, message)
        self.message = message
        self.holder = holder or {}

    def __str__(self) -> str:
        return self.message


def lock_path(path: str | Path) -> Path:
    """The sidecar lock file of an output: ``<name>.lock`` next to it."""
    p = Path(path)
    return p.with_name(p.name + ".lock")


class OutputLock:
    """An exclusive, non-blocking lock on the output ``path`` (``what`` names the kind of
    writer in the refusal of a second one, ``fix`` the advice).  :meth:`acquire` raises
    :class:`OutputBusyError` at once when another process (or another lock in this
    process) holds it; :meth:`release` is idempotent.  A context manager."""

    def __init__(self, path: str | Path, what: str = "rrp run",
                 fix: str = "write to another --out, or wait for it to finish", *,
                 shared: bool = False) -> None:
        self.path = Path(path)
        self.file = lock_path(self.path)
        self.what = what
        self.fix = fix
        self.shared = bool(shared)
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> OutputLock:
        """Take the lock or raise :class:`OutputBusyError` (another writer) or
        ``OSError`` (the directory cannot hold the lock file)."""
        if self._fd is not None:
            return self
        for attempt in range(100):
            try:
                fd = os.open(self.file, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0),
                             0o644)
            except OSError as exc:  # (named by the output the user gave, its lock file
                raise OSError(     # beside: issue #42 item 11)
                    exc.errno, f"cannot write {self.path}: its lock file {self.file.name} "
                    f"cannot be made beside it ({exc.strerror or exc}); nothing was "
                    "written") from None
            try:
                fcntl.flock(fd, (fcntl.LOCK_SH if self.shared else fcntl.LOCK_EX)
                            | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read_holder(fd)
                os.close(fd)
                if self.shared and holder.get("shared") and attempt < 20:
                    time.sleep(0.01)  # (a reader releasing it holds it alone a moment)
                    continue
                raise OutputBusyError(self._busy_message(holder), holder) from None
            except BaseException:
                os.close(fd)
                raise
            try:  # the file we locked must still be the one at the name (see release)
                same = os.path.samestat(os.fstat(fd), os.stat(self.file))
            except FileNotFoundError:
                same = False
            if same:
                self._fd = fd
                self._record()
                return self
            os.close(fd)
        raise OSError(errno.EAGAIN, f"cannot lock {self.file}: it keeps being replaced")

    def intact(self) -> bool:
        """Whether the lock is held and the lock file at the name is still the one
        locked (not deleted or replaced meanwhile: then another writer may hold the
        name's lock now, issue #36 item 12)."""
        if self._fd is None:
            return False
        try:
            return os.path.samestat(os.fstat(self._fd), os.stat(self.file))
        except OSError:
            return False

    def _record(self) -> None:
        info = {"pid": os.getpid(), "host": socket.gethostname(), "what": self.what,
                "since": time.strftime("%Y-%m-%d %H:%M:%S")}
        if self.shared:  # (several readers: a reader's note stays, a dead writer's goes)
            info["shared"] = True
            if _read_holder(self._fd, tries=1).get("shared"):
                return
        try:
            os.ftruncate(self._fd, 0)
            os.pwrite(self._fd, (json.dumps(info) + "\n").encode(), 0)
        except OSError:  # (a full disk: the lock holds without the note)
            pass

    def _busy_message(self, holder: dict) -> str:
        who = "another process"
        if holder.get("pid"):
            who = f"{holder.get('what', 'another writer')} (process {holder['pid']}"
            if holder.get("host") and holder["host"] != socket.gethostname():
                who += f" on {holder['host']}"
            if holder.get("since"):
                who += f", since {holder['since']}"
            who += ")"
        verb = "read" if holder.get("shared") else "written"
        return f"{self.path} is being {verb} by {who}: {self.fix}"

    def release(self) -> None:
        """Remove the lock file and drop the lock (idempotent).  The file is removed
        only while it is still the one held (never another writer's since), and a
        shared lock's only while no other reader shares it (the lock is then taken
        exclusive first)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            mine = os.path.samestat(os.fstat(fd), os.stat(self.file))
        except OSError:
            mine = False
        if mine and self.shared:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:  # (another reader holds it: it removes the file)
                mine = False
        if mine:
            try:
                os.unlink(self.file)
            except OSError:
                pass
        os.close(fd)

    def __enter__(self) -> OutputLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()

    def __del__(self) -> None:  # (plain file descriptors only: no h5py here)
        fd = getattr(self, "_fd", None)
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass


def _read_holder(fd: int, tries: int = 20) -> dict:
    """What the holder wrote into the lock file (it may not have written it yet)."""
    for _ in range(tries):
        try:
            text = os.pread(fd, 4096, 0).decode(errors="replace").strip()
        except OSError:
            return {}
        if text:
            try:
                d = json.loads(text)
                return d if isinstance(d, dict) else {}
            except ValueError:
                return {}
        if tries > 1:
            time.sleep(0.005)
    return {}
