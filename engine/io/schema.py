"""The run file's names and its opening, at the bottom of ``engine.io`` (issue #34: the
writer and reader in :mod:`engine.io.hdf5` and the checks in :mod:`engine.io.verify`
both use them, neither imports the other's module for them).  The layout itself is
docs/output.md; the schema version and the digests are :mod:`engine.io.digests`."""

from __future__ import annotations

import re
from pathlib import Path

import h5py

from .datatypes import datatype_problem
from .journal import RecoveredView, read_journal

__all__ = ["CHECKPOINT_GROUPS", "RunFileError", "check_datatypes", "open_h5",
           "open_run_file"]

CHECKPOINT_GROUPS = ("checkpoint", "checkpoint_alt")
"""The two groups the checkpoint alternates between (docs/output.md)."""


class RunFileError(ValueError):
    """A file that cannot be read as a run, or lacks what was asked of it; the message
    is one line naming the file and what is wrong."""


def open_run_file(path: str | Path, mode: str = "r") -> h5py.File:
    """Open a run file (also one a writer still holds, or that a killed writer left);
    :class:`RunFileError` (one line) for one that cannot be opened at all: missing, not
    HDF5, truncated, or holding an object whose stored datatype is damaged (reading it
    could crash libhdf5, :mod:`engine.io.datatypes`, issue #36 item 4)."""
    p = Path(path)
    if not p.exists():
        raise RunFileError(f"{p}: no such file")
    j = read_journal(p)
    if (j is not None and j[0] == 0) or p.stat().st_size == 0:  # (issue #47 item 1)
        raise RunFileError(f"{p}: its run was stopped before its first records were "
                           "written whole: the file holds nothing; rerun it")
    try:
        f = open_h5(p, mode)
    except OSError as exc:
        if not h5py.is_hdf5(p):
            raise RunFileError(f"{p}: not an HDF5 file") from None
        m = re.search(r"truncated file: eof = (\d+).*stored_eof = (\d+)", str(exc))
        if m:
            raise RunFileError(
                f"{p}: the file is truncated ({int(m[1]):,} of {int(m[2]):,} bytes: a copy "
                "or a write cut short); HDF5 cannot open it, so nothing of it can be read: "
                "rerun it, or copy it again from where it came from") from None
        raise RunFileError(f"{p}: cannot open the HDF5 file ({exc})") from None
    check_datatypes(f, p)
    return f


def open_h5(p: Path, mode: str) -> h5py.File:
    """The HDF5 file ``p``; read where a writer died mid-flush (a journal beside it):
    as its last whole flush left it (:class:`~engine.io.journal.RecoveredView`, the file
    unchanged; issue #47 item 1)."""
    j = read_journal(p) if mode == "r" else None
    if j is None:
        return h5py.File(p, mode, locking=False)
    view = RecoveredView(p, j)
    try:
        return h5py.File(view, "r", locking=False)
    except BaseException:
        view.close()
        raise


def check_datatypes(f: h5py.File, path: str | Path) -> None:
    """:class:`RunFileError` (one line, ``f`` closed) if an object of the open file
    ``f`` is stored with a damaged datatype (:func:`~engine.io.datatypes.datatype_problem`):
    before any value is read, as libhdf5 may crash converting it (issue #36 item 4)."""
    bad = datatype_problem(f)
    if bad:
        f.close()
        raise RunFileError(f"{path}: the file is damaged: {bad} is not one a run file is "
                           "written with (its HDF5 metadata changed on disk); nothing of it "
                           "is read, since HDF5 could crash converting it: copy the file "
                           "again from where it came from, or rerun it")
