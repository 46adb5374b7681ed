"""Disk space for a writer's next write, taken before HDF5 is asked to write it.

HDF5 does not survive a failed write well: a flush that fails for want of space leaves
its caches dirty, and closing the file (or letting Python free a dataset) while the
space is still lacking crashed the process (SIGSEGV, issue #26).  So the writer never
lets HDF5 meet a full disk: before each write it asks :meth:`SpaceReserve.ensure` for a
bound of what the write can add to the file, and only writes once the space is held.

* ``fallocate(FALLOC_FL_KEEP_SIZE)`` allocates the blocks past the end of the file for
  it (Linux): the space is the file's, no other process can take it, and HDF5's writes
  into it cannot fail with ``ENOSPC`` or ``EDQUOT``;
* where the file system lacks it, ``posix_fallocate`` probes the space (and the file is
  cut back to its size at once);
* the file-size limit (``RLIMIT_FSIZE``, ``EFBIG``) is checked against the same bound.

A refusal is :class:`OutputSpaceError` (an ``OSError`` with the errno of the fault),
raised before anything is written, so the file stays as it was after the last write.
:meth:`SpaceReserve.removed` says whether the file was unlinked while open.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import resource
from pathlib import Path

__all__ = ["OutputSpaceError", "SpaceReserve"]

FALLOC_FL_KEEP_SIZE = 0x01
FALLOC_FL_PUNCH_HOLE = 0x02


class OutputSpaceError(OSError):
    """Not enough room for the next write (disk full, quota, file-size limit); raised
    before the write, so the file is whole."""


def _libc_fallocate():
    """``fallocate(2)`` through ctypes, or ``None`` where there is none."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        fn = libc.fallocate
    except (OSError, AttributeError):
        return None
    fn.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.c_longlong, ctypes.c_longlong)
    fn.restype = ctypes.c_int
    return fn


_FALLOCATE = _libc_fallocate()


def _fsize_limit() -> int | None:
    soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    return None if soft == resource.RLIM_INFINITY else int(soft)


def hold_room(fd: int, nbytes: int) -> None:
    """Hold the first ``nbytes`` of the file ``fd`` (its blocks allocated, its size
    unchanged), or raise :class:`OutputSpaceError`; where the file system cannot,
    nothing (the writes themselves then say): the journal's room (issue #47 item 1)."""
    if _FALLOCATE is None:
        return
    if _FALLOCATE(fd, FALLOC_FL_KEEP_SIZE, 0, int(nbytes)) == 0:
        return
    err = ctypes.get_errno()
    if err not in (errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
        raise OutputSpaceError(err, os.strerror(err))


class SpaceReserve:
    """Holds space past the end of the file ``path`` (opened once, here; the file
    must exist).  Plain file descriptors only: safe from any thread, no HDF5."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.fd = os.open(self.path, os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
        self._keep_size = _FALLOCATE is not None
        self.reserved_to = 0  # the end of the space held (past the file's size)

    def size(self) -> int:
        return os.fstat(self.fd).st_size

    def ensure(self, nbytes: int) -> None:
        """Hold ``nbytes`` past the current end of the file, or raise
        :class:`OutputSpaceError` (nothing written)."""
        nbytes = max(0, int(nbytes))
        size = self.size()
        end = size + nbytes
        limit = _fsize_limit()
        if limit is not None and end > limit:
            raise OutputSpaceError(errno.EFBIG, f"{os.strerror(errno.EFBIG)} (the file-size "
                                   f"limit, ulimit -f, is {limit} bytes)")
        if end <= self.reserved_to:
            return
        if self._keep_size:
            if _FALLOCATE(self.fd, FALLOC_FL_KEEP_SIZE, size, nbytes) == 0:
                self.reserved_to = end
                return
            err = ctypes.get_errno()
            if err not in (errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
                raise OutputSpaceError(err, os.strerror(err))
            self._keep_size = False  # (this file system lacks it: probe instead)
        try:
            os.posix_fallocate(self.fd, size, nbytes)
        except OSError as exc:
            if exc.errno in (errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
                return  # nothing to probe with: the write itself will tell
            os.ftruncate(self.fd, size)
            raise OutputSpaceError(exc.errno, exc.strerror) from None
        os.ftruncate(self.fd, size)

    def release(self) -> None:
        """Give back the space held past the end of the file."""
        if self.reserved_to and _FALLOCATE is not None:
            size = self.size()
            if self.reserved_to > size:
                _FALLOCATE(self.fd, FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE, size,
                           self.reserved_to - size)
        self.reserved_to = 0

    def removed(self) -> bool:
        """Whether the file was deleted while open (its data then lives only here)."""
        try:
            return os.fstat(self.fd).st_nlink == 0
        except OSError:
            return True

    def copy_to(self, path: str | Path) -> None:
        """Copy the file's content (also after it was deleted) to the new file ``path``."""
        size = self.size()
        out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            pos = 0
            while pos < size:
                buf = os.pread(self.fd, min(1 << 24, size - pos), pos)
                if not buf:
                    break
                view = memoryview(buf)
                while view:
                    n = os.write(out, view)
                    view = view[n:]
                pos += len(buf)
            os.fsync(out)
        except BaseException:
            os.close(out)
            os.unlink(path)
            raise
        os.close(out)

    def close(self) -> None:
        if self.fd >= 0:
            try:
                self.release()
            except OSError:
                pass
            os.close(self.fd)
            self.fd = -1
