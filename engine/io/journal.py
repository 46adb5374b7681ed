"""A rollback journal under a run file being written (issue #47 item 1): a SIGKILL at
any write of any thread leaves the file as its last whole flush left it.

HDF5 rewrites its metadata in place while it flushes (the superblock's end of
allocation, object headers, chunk indexes, the heap of attribute strings), in several
writes, in an order of its own: a writer killed between two of them leaves metadata
that points past the end of the file ("addr overflow"), an unreadable header or
checkpoint, or a chunk index that points at bytes since reused — though every record it
had written is still there.  So the writer reaches the file through
:class:`JournaledFile` (h5py's ``fileobj`` driver): before a write overwrites bytes that
the last *commit* left (or a truncation cuts them), their old contents are appended to
``<file>.journal``, each with its offset, length and CRC-32; writes past that end need
nothing.  :meth:`JournaledFile.commit`, called after each flush of the file (and after
its close), clears the journal's head: the file as it is now is the one to keep (the
journal is removed when the file is closed committed).

A journal found on disk therefore means a writer died (or failed) between two commits;
applying it backwards and cutting the file back to its committed length gives the
file exactly as the last commit left it — every byte, so what HDF5 reads is what a
whole flush wrote (SQLite's rollback journal, per file).  :func:`recover` does that in
place (``rrp run --resume``: under the output's lock, no writer alive);
:class:`RecoveredView` shows it to a reader without changing the file (``rrp convert``,
``rrp verify``, the app: :func:`engine.io.schema.open_run_file`).  A journal entry cut
short by the kill (its CRC does not match) had not been followed by its write, and is
ignored.  The guarantee is against the process being killed (the page cache keeps what
was written); it does not ``fsync`` the journal before each write, so a power cut in
the middle of a flush is not covered.
"""

from __future__ import annotations

import io
import os
import struct
import zlib
from pathlib import Path

import numpy as np

__all__ = ["JOURNAL_SUFFIX", "JournaledFile", "RecoveredView", "journal_name",
           "read_journal", "recover"]

JOURNAL_SUFFIX = ".journal"
_MAGIC = b"RRPJRNL1"
_HEAD = struct.Struct("<8sQQI")  # magic, committed length, epoch, CRC-32 of the three
_ENTRY = struct.Struct("<QQ")  # offset, length; then the bytes, then their CRC-32
_CRC = struct.Struct("<I")


def journal_name(path: str | Path) -> Path:
    """The journal of the run file ``path``: ``<path>.journal``."""
    p = Path(path)
    return p.with_name(p.name + JOURNAL_SUFFIX)


def read_journal(path: str | Path) -> tuple[int, list[tuple[int, bytes]]] | None:
    """The journal of ``path``: ``(committed length, [(offset, old bytes), ...])`` in the
    order written, its entries up to the first one cut short; ``None`` where there is
    none, or where even its head was cut short (then nothing had been overwritten)."""
    try:
        data = journal_name(path).read_bytes()
    except FileNotFoundError:
        return None
    if len(data) < _HEAD.size:
        return None
    magic, length, epoch, crc = _HEAD.unpack_from(data)
    if magic != _MAGIC or crc != zlib.crc32(data[:_HEAD.size - 4]):
        return None
    seed = epoch & 0xFFFFFFFF  # (an entry of an earlier epoch, left past this one's
    # entries, fails its CRC: the journal's room is reused, not given back)
    entries, at = [], _HEAD.size
    while at + _ENTRY.size <= len(data):
        off, n = _ENTRY.unpack_from(data, at)
        end = at + _ENTRY.size + n
        if end + _CRC.size > len(data):
            break
        if _CRC.unpack_from(data, end)[0] != zlib.crc32(data[at:end], seed):
            break
        entries.append((off, data[at + _ENTRY.size:end]))
        at = end + _CRC.size
    return length, entries


def recover(path: str | Path) -> bool:
    """Roll the file ``path`` back to its last commit if a journal says a writer died
    between two (its old bytes written back, last entry first; the file cut to its
    committed length; synced), and remove the journal.  Only where no writer holds the
    file (the caller holds its output's lock).  Whether there was anything to undo."""
    j = read_journal(path)
    jp = journal_name(path)
    if j is None:
        jp.unlink(missing_ok=True)
        return False
    length, entries = j
    fd = os.open(path, os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
    try:
        for off, old in reversed(entries):
            _pwrite_all(fd, old, off)
        if os.fstat(fd).st_size > length:
            os.ftruncate(fd, length)
        os.fsync(fd)
    finally:
        os.close(fd)
    jp.unlink(missing_ok=True)
    return True


def _pwrite_all(fd: int, data, off: int) -> None:
    view = memoryview(data).cast("B")
    while len(view):
        n = os.pwrite(fd, view, off)
        view, off = view[n:], off + n


class JournaledFile(io.RawIOBase):
    """The run file ``path`` as its writer reaches it (``h5py.File(JournaledFile(...))``,
    the ``fileobj`` driver): every write and truncation of bytes below the committed
    length first saves, in the journal, the old contents of the bytes it changes (runs
    of differing bytes: a chunk rewritten with a few more rows saves those rows' bytes
    and its checksum, not the chunk); :meth:`commit` after each flush empties the
    journal.  ``create``: a new, empty file (a stale journal of the name removed; until
    the first commit, a kill leaves it empty); otherwise the file is rolled back first
    if a journal says so (:func:`recover`).  :meth:`reserve` holds room for the journal
    as :class:`~engine.io.reserve.SpaceReserve` does for the file (a full disk stops the
    writer before a write, never in the middle of one).  ``repr`` is the path: HDF5
    takes it as the file's name (``h5py.File.filename``)."""

    def __init__(self, path: str | Path, *, create: bool = False) -> None:
        super().__init__()
        self.path = Path(path)
        self.journal = journal_name(self.path)
        flags = os.O_RDWR | getattr(os, "O_CLOEXEC", 0)
        if create:
            flags |= os.O_CREAT | os.O_TRUNC
        else:
            recover(self.path)
        self.fd = os.open(self.path, flags, 0o666)
        self._pos = 0
        self._committed = os.fstat(self.fd).st_size
        self._jfd = os.open(self.journal, os.O_WRONLY | os.O_CREAT | os.O_TRUNC
                            | getattr(os, "O_CLOEXEC", 0), 0o666)
        self._room = 0  # (bytes of the journal's room held)
        self._epoch = 1
        self._jsize = 0  # (0: nothing saved since the last commit)
        self._saved: set[tuple[int, int]] = set()
        if create:  # (a file killed before its first commit is cut back to nothing)
            self._start_journal()

    def __repr__(self) -> str:
        return str(self.path)

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, off: int, whence: int = os.SEEK_SET) -> int:
        if whence == os.SEEK_SET:
            self._pos = int(off)
        elif whence == os.SEEK_CUR:
            self._pos += int(off)
        else:
            self._pos = os.fstat(self.fd).st_size + int(off)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def readinto(self, b) -> int:
        n = os.preadv(self.fd, [b], self._pos)
        self._pos += n
        return n

    def write(self, b) -> int:
        view = memoryview(b).cast("B")
        self._save(self._pos, view)
        _pwrite_all(self.fd, view, self._pos)
        self._pos += len(view)
        return len(view)

    def truncate(self, size: int | None = None) -> int:
        size = self._pos if size is None else int(size)
        if size < self._committed:
            self._save(size, None)
        os.ftruncate(self.fd, size)
        return size

    def flush(self) -> None:
        pass

    @property
    def committed(self) -> int:
        """The file's length at its last commit (0: a new file, nothing committed)."""
        return self._committed

    def reserve(self, nbytes: int) -> None:
        """Hold room for ``nbytes`` of journal past its head, kept from commit to commit
        (:class:`~engine.io.reserve.OutputSpaceError` if the disk lacks it)."""
        from .reserve import hold_room

        need = _HEAD.size + max(0, int(nbytes))
        if need > self._room:
            hold_room(self._jfd, need)
            self._room = need

    def _start_journal(self) -> None:
        """The journal's head: the committed length."""
        head = _HEAD.pack(_MAGIC, self._committed, self._epoch, 0)[:-4]
        _pwrite_all(self._jfd, head + _CRC.pack(zlib.crc32(head)), 0)
        self._jsize = _HEAD.size

    def _save(self, off: int, new) -> None:
        """Journal the committed bytes from ``off`` that ``new`` changes (``None``: a
        truncation, all of them to the committed length) before they change."""
        end = self._committed if new is None else min(off + len(new), self._committed)
        if off >= end or (off, end) in self._saved:
            return
        old = os.pread(self.fd, end - off, off)
        runs = [(0, len(old))]
        if new is not None:  # (only the runs of bytes that differ, gaps < 64 B joined)
            a = np.frombuffer(old, dtype=np.uint8)
            b = np.frombuffer(new[:len(old)], dtype=np.uint8)
            at = np.flatnonzero(a != b)
            if not len(at):
                return
            cut = np.flatnonzero(np.diff(at) > 64)
            runs = [(int(at[i]), int(at[j]) + 1) for i, j in
                    zip(np.r_[0, cut + 1], np.r_[cut, len(at) - 1], strict=True)]
        if not self._jsize:
            self._start_journal()
        for lo, hi in runs:
            entry = _ENTRY.pack(off + lo, hi - lo) + old[lo:hi]
            entry += _CRC.pack(zlib.crc32(entry, self._epoch & 0xFFFFFFFF))
            _pwrite_all(self._jfd, entry, self._jsize)
            self._jsize += len(entry)
        self._saved.add((off, end))

    def commit(self) -> None:
        """The file as it is now is the one to keep: the journal's head is cleared (one
        small write; its room stays held, and the entries left past it belong to an
        earlier epoch: they fail their CRC)."""
        if self._jsize:
            _pwrite_all(self._jfd, bytes(_HEAD.size), 0)
            self._jsize = 0
            self._epoch += 1
        self._saved.clear()
        self._committed = os.fstat(self.fd).st_size

    def close(self) -> None:
        """Close the file; the journal is removed if it holds nothing (committed), else
        kept for the rollback."""
        if not self.closed:
            os.close(self._jfd)
            if not self._jsize:
                self.journal.unlink(missing_ok=True)
            os.close(self.fd)
        super().close()


class RecoveredView(io.RawIOBase):
    """A run file as its last commit left it, read-only, without changing it (the
    journal's old bytes shown over the file's, nothing past the committed length):
    what a reader opens where a writer died mid-flush (``h5py.File(RecoveredView(p))``).
    ``repr`` is the path, as for :class:`JournaledFile`."""

    def __init__(self, path: str | Path, journal: tuple[int, list[tuple[int, bytes]]]) -> None:
        super().__init__()
        self.path = Path(path)
        self.fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        self._length, self._entries = journal
        self._pos = 0

    def __repr__(self) -> str:
        return str(self.path)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, off: int, whence: int = os.SEEK_SET) -> int:
        base = {os.SEEK_SET: 0, os.SEEK_CUR: self._pos, os.SEEK_END: self._length}[whence]
        self._pos = base + int(off)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def readinto(self, b) -> int:
        view = memoryview(b).cast("B")
        start = self._pos
        n = max(0, min(len(view), self._length - start))
        got = os.preadv(self.fd, [view[:n]], start) if n else 0
        if got < n:
            view[got:n] = bytes(n - got)
        end = start + n
        for off, old in reversed(self._entries):  # (the first saved is the oldest)
            lo, hi = max(off, start), min(off + len(old), end)
            if lo < hi:
                view[lo - start:hi - start] = old[lo - off:hi - off]
        self._pos = end
        return n

    def close(self) -> None:
        if not self.closed:
            os.close(self.fd)
        super().close()
