"""The flush lock of a run file being written (issue #47 item 3): readers never meet
the writer mid-flush.

A run file's writer changes HDF5's metadata (chunk indexes, object headers, the
superblock) in place while it writes a batch of records; a reader that opens the file in
the middle of that reads half-written metadata and takes the file as damaged (``rrp
convert`` of a ``.partial`` still being written was refused, or warned of damage that was
not there, in 5 of 22 tries).  So the writer holds this lock, exclusively, from the first
byte of a write to the end of its flush, and a reader of a file still being written
(``rrp convert``, ``rrp export``) holds it, shared, from before it opens the file until
it has read all it reads: it sees the file as a flush left it, whole, with the frame count
that flush published.  The writer waits for such a reader before its next write (its
run goes on stepping, then waits too; docs/output.md, "Guarantees").

The lock is an open-file-description byte-range lock (Linux ``F_OFD_SETLKW``) on one
byte far past the end of the run file itself: it is independent of HDF5's own
``flock`` on the file and of the output's lock file, other programs' readers (h5py,
h5dump) neither take nor see it, it is dropped when the descriptor is closed or the
process dies however it dies, and — unlike a classic POSIX lock — closing another
descriptor of the same file (h5py's) does not drop it.  Where the system has no OFD
locks, nothing is locked (the reader's checks still name damage it meets).
"""

from __future__ import annotations

import errno
import fcntl
import os
import struct
from pathlib import Path

__all__ = ["FLUSH_LOCK_OFFSET", "FlushLock", "hold_for_reading"]

FLUSH_LOCK_OFFSET = 1 << 62
"""The byte the lock covers: past the end of any run file (a lock needs no data there)."""

_SETLKW = getattr(fcntl, "F_OFD_SETLKW", None)


def _set(fd: int, kind: int) -> bool:
    """Take (``F_RDLCK``/``F_WRLCK``, waiting) or drop (``F_UNLCK``) the lock on ``fd``;
    whether the system could (``False``: no OFD locks here)."""
    if _SETLKW is None:
        return False
    # struct flock: short l_type, l_whence; off_t l_start, l_len; pid_t l_pid (0 for OFD)
    arg = struct.pack("hhqqi4x", kind, os.SEEK_SET, FLUSH_LOCK_OFFSET, 1, 0)
    while True:
        try:
            fcntl.fcntl(fd, _SETLKW, arg)
            return True
        except InterruptedError:  # (a signal while waiting: its handler ran; wait on)
            continue
        except OSError as exc:
            if exc.errno in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
                return False
            raise


class FlushLock:
    """The writer's side: ``with lock:`` holds the flush lock exclusively on the
    descriptor ``fd`` of the file being written (re-entrant: the outermost ``with``
    takes and drops it)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._depth = 0

    def __enter__(self) -> FlushLock:
        if self._depth == 0:
            _set(self.fd, fcntl.F_WRLCK)
        self._depth += 1
        return self

    def __exit__(self, *exc: object) -> None:
        self._depth -= 1
        if self._depth == 0:
            try:
                _set(self.fd, fcntl.F_UNLCK)
            except OSError:  # (a descriptor gone: the lock went with it)
                pass


class hold_for_reading:  # noqa: N801 - (used as a context manager, like open)
    """The reader's side: ``with hold_for_reading(path):`` waits for the flush in
    progress, if any, then holds the flush lock shared until the block ends, so that the
    writer does not write meanwhile.  A path that cannot be opened holds nothing (the
    reader's own open then says why)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.fd: int | None = None

    def __enter__(self) -> hold_for_reading:
        try:
            self.fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            return self
        try:
            _set(self.fd, fcntl.F_RDLCK)
        except OSError:
            os.close(self.fd)
            self.fd = None
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.close(self.fd)  # (drops the lock)
            self.fd = None
