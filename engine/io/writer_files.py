"""What a run file's writer does around its datasets: its failures
(:class:`OutputWriteError`), the close's marking, the room a run needs, the files a
failed write abandoned, and a resume's verified copy of its source (issue #36 items
1, 3, 13; split from :mod:`engine.io.hdf5`, issue #34 item 3)."""

from __future__ import annotations

import errno
import os
import resource
import shutil
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from ..simulation import Simulation
from . import digests
from .file_layout import _SPRING_ROWS
from .journal import journal_name, recover
from .outlock import OutputLock
from .paths import output_for
from .schema import RunFileError, open_run_file
from .verify import check_run


class OutputWriteError(OSError):
    """Writing a run file failed (disk full, quota, file too large, file removed, an
    I/O error).  One line: what failed.  ``safe_t``: the time of the last checkpoint in
    the file (``None``: none yet), ``file_t``: the time the file's records reach,
    ``path``: where the file is (set by :meth:`RunWriter.close`)."""

    def __init__(self, err: int | None, message: str, partial: Path) -> None:
        super().__init__(err or errno.EIO, message)
        self.message = message
        self.partial = partial
        self.path: Path = partial
        self.safe_t: float | None = None
        self.file_t: float | None = None
        self.damaged = False
        """The file was written but fails its checks (issue #47 item 2): not resumable
        as it is."""

    def __str__(self) -> str:
        return self.message


def mark_file(f: h5py.File, status: str, message: str, steps: int, t: float) -> None:
    """Mark the run file ``f``: the attributes made by ``RunWriter._mark_running``,
    rewritten in place (nothing past the end of the file), then flushed.  A kill in the
    middle can leave ``status`` or ``message`` unreadable (HDF5 rewrites the heap of
    their strings before the header that points into it): a reader then takes the
    file as not closed (:func:`read_status`), and ``rrp run --resume`` finishes it
    (issue #36 item 3; tests/test_run_races.py kills it at every write)."""
    a = f.attrs
    a.modify("steps", np.int64(steps))
    a.modify("t_final", np.float64(t))
    a.modify("message", message)
    a.modify("status", status)
    digests.stamp_status(f)  # (last: until it is written the status reads "not closed")
    f.flush()


_SPACE_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
"""A write refused for these is written in pieces, as far as they fit."""


CLOSE_RESERVE = 256 * 1024
"""Bytes always held past the end of a file being written, beyond each write's own
bound: what closing it (status, message) takes, even after a write was refused."""


_ABANDONED: list = []
"""h5py files a failed write left in an unknown state: kept referenced here, never
closed or freed (closing them crashed HDF5); see :func:`abandoned_files`."""


def abandoned_files() -> list[Path]:
    """Files whose h5py handle was given up after a failed write: the process must end
    with ``os._exit`` (no HDF5 finalisation), as ``rrp`` does."""
    return [p for p, _ in _ABANDONED]


def _row_datasets(f: h5py.File) -> list:
    """The datasets with one row per record."""
    out = [f["time"], *f["energy"].values(), *f["momentum"].values()]
    gb = f["bodies"]
    for c in ("position", "quaternion", "omega", "time", "step", "dissipated", "velocity",
              "momentum_body", "force", "moment"):
        if c in gb:
            out.append(gb[c])
    if "generalized" in f:
        out.extend(f["generalized"].values())
    if "springs" in f:
        out.extend(f["springs"][c] for c in _SPRING_ROWS)
    out.extend(f[c] for c in (digests.SERIES_CHECKS, digests.FRAME_CHECKS) if c in f)
    return out


def _first_line(text: Any) -> str:
    lines = str(text).strip().splitlines()
    return lines[0] if lines else ""


def _start_bound(sim: Simulation) -> int:
    """Bytes a run file needs to start: its layout, a first checkpoint, the close."""
    return 2 * 8 * 48 * int(sim.model.n_bodies) + (1 << 20) + CLOSE_RESERVE


def _check_room(path: Path, nbytes: int) -> None:
    """:class:`OutputWriteError` if the directory of ``path`` lacks ``nbytes`` free
    (or the file-size limit is below it): refused before anything is created."""
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    if limit != resource.RLIM_INFINITY and nbytes > limit:
        raise OutputWriteError(errno.EFBIG, f"cannot write {path}: the file-size limit "
                               f"(ulimit -f) is {limit} bytes, the run needs at least "
                               f"{nbytes} to start", path)
    try:
        st = os.statvfs(path.parent if str(path.parent) else ".")
    except OSError:
        return
    free = st.f_bavail * st.f_frsize
    if free < nbytes:
        raise OutputWriteError(errno.ENOSPC, f"cannot write {path}: "
                               f"{os.strerror(errno.ENOSPC)} ({free} bytes free, the run "
                               f"needs at least {nbytes} to start)", path)


def _copy(source: Path, dest: Path) -> None:
    """Copy a run file to a writer's name; on failure nothing is left behind."""
    try:
        shutil.copyfile(source, dest)
        if journal_name(source).exists():  # (a writer died mid-flush: the copy is rolled
            shutil.copyfile(journal_name(source), journal_name(dest))  # back, issue #47)
            recover(dest)
    except OSError as exc:
        journal_name(dest).unlink(missing_ok=True)
        dest.unlink(missing_ok=True)
        raise OutputWriteError(exc.errno, f"cannot copy {source} to {dest}: "
                               f"{exc.strerror or exc}", dest) from None


def _copy_verified(source: Path, dest: Path, n_records: int,
                   source_lock: OutputLock | None, locked: bool = False) -> None:
    """Copy the run file ``source`` to ``dest`` (a resume to another ``--out``) under a
    shared lock of ``source``'s output (``source_lock``, or one taken here: a writer of
    it is refused meanwhile, and this copy is refused while one writes it,
    :class:`~engine.io.outlock.OutputBusyError`), then verify the copy, every chunk and
    the checkpoint resumed from (taken after ``n_records`` rows): a copy that fails
    (the source changed while it was read, by a writer that takes no lock) is removed,
    :class:`RunFileError` (issue #36 item 1).  The lock is released once the copy is
    checked.  ``locked``: the caller holds ``source``'s own lock (a resume of the output
    itself, copied to its ``.partial``)."""
    lock = source_lock or OutputLock(output_for(source), "rrp run --resume (a copy of it)",
                                     "wait for it to finish", shared=True)
    if not locked:
        lock.acquire()
    try:
        _copy(source, dest)
        try:
            with open_run_file(dest) as f:  # (its datatypes checked: issue #36 item 4)
                report = check_run(f, dest, deep=True)
            ck = report.checkpoint
            same = ck is not None and ck.n_records == int(n_records)
        except Exception as exc:  # noqa: BLE001 - a copy HDF5 cannot read: refused below
            report, same = None, False
            why = _first_line(exc)
        else:
            why = report.what() if report.problems else (
                "its checkpoint is not the one resumed from")
        dropped = report is not None and report.resumable_before_damage()  # (damage only
        if report is None or (report.problems and not dropped) or not same:  # after the
            # checkpoint resumed from: the resume drops those records, issue #47 item 1)
            dest.unlink(missing_ok=True)
            raise RunFileError(f"{source}: its copy {dest} fails its checks ({why}): the "
                               "file changed while it was copied; nothing was written, "
                               "try again")
    finally:
        lock.release()
