"""The close of a run file and the bounds of its writes (issue #36 items 3, 6, 7, 13):
the close's steps and their test hook, ``fsync`` of a directory, the output names a run
file cannot have, and the chunks a write can touch (:meth:`engine.io.RunWriter._bound`).
Plain Python and NumPy: no HDF5 here."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import numpy as np

__all__ = ["CLOSE_STEPS", "OutputNameError", "check_output_name"]


CLOSE_STEPS = ("start", "data", "synced", "marked", "closed", "renamed")
"""The steps of :meth:`RunWriter.close`, in order, at which ``RRP_TEST_KILL_AT_CLOSE``
can kill the process (tests/test_run_races.py)."""


def _close_step(name: str) -> None:
    """Kill this process with SIGKILL at the close step ``name`` if
    ``RRP_TEST_KILL_AT_CLOSE`` names it (a test hook: nothing happens otherwise)."""
    if os.environ.get("RRP_TEST_KILL_AT_CLOSE") == name:
        import signal

        os.kill(os.getpid(), signal.SIGKILL)


def _sync_dir(path: Path) -> None:
    """``fsync`` a directory (a rename in it made durable); best effort."""
    try:
        fd = os.open(path if str(path) else ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class OutputNameError(OSError):
    """An output name a run file cannot have; the message is one line (``strerror``)."""

    def __init__(self, err: int, message: str) -> None:
        super().__init__(err, message)
        self.message = message

    def __str__(self) -> str:
        return self.message


def check_output_name(path: str | Path) -> None:
    """:class:`OutputNameError` (one line) for an output name a run file cannot have: an
    existing directory, a name that is not UTF-8 (HDF5 keeps it in the file's
    ``output_name``); checked before anything is created (issue #36 items 6, 7)."""
    p = Path(path)
    try:
        str(p).encode("utf-8")
    except UnicodeEncodeError:
        raise OutputNameError(errno.EILSEQ, f"the output name {ascii(str(p))} is not valid "
                              "UTF-8: give a name in UTF-8") from None
    if p.is_dir():
        raise OutputNameError(errno.EISDIR, f"the output {str(p)!r} is a directory: give a "
                              f"file name, e.g. {str(p / 'run.h5')!r}")


_METADATA_SLACK = 64 * 1024
"""Bytes a write may add besides its chunks: object headers, the chunk indexes' nodes."""

_CHUNK_OVERHEAD = 4 + 128
"""Stored bytes of a chunk besides its data: its Fletcher-32 checksum and (at most) its
share of the chunk index."""


def _chunk_layout(ds) -> tuple[int, int, bool]:
    """``(rows a chunk holds, stored bytes of one band of rows' chunks, whether a chunk
    rewritten with more rows can move)`` of a dataset chunked along its first axis (a
    frame of a large model is several chunks; a compressed chunk that grows is stored
    anew, elsewhere, one of a fixed size in place)."""
    rows = int(ds.chunks[0])
    per_band = 1
    for n, c in zip(ds.shape[1:], ds.chunks[1:], strict=True):
        per_band *= max(1, -(-int(n) // int(c)))
    chunk = int(np.prod(ds.chunks)) * ds.dtype.itemsize + _CHUNK_OVERHEAD
    return rows, per_band * chunk, ds.compression is not None and rows > 1


def _new_chunks(k: int, rows: int, moves: bool, n0: int | None) -> int:
    """Chunks that appending ``k`` rows to a dataset of ``n0`` rows (``None``: not
    known) in ``rows``-row chunks allocates: those past the ones it has, and the one
    under way again where a rewritten chunk can move."""
    if n0 is None:
        return -(-int(k) // rows) + 1
    new = -(-(int(n0) + int(k)) // rows) - -(-int(n0) // rows)
    return new + (1 if moves and n0 % rows else 0)
