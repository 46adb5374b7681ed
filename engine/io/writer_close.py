"""The checkpoint and the close of a run file's writer (issue #36 items 3, 9, 12;
split from :mod:`engine.io.hdf5`'s ``RunWriter``, issue #34 item 3)."""

from __future__ import annotations

import errno
import json
import os
import time
from pathlib import Path
from typing import Any, Self

import h5py
import numpy as np

from .. import __version__
from .closing import _close_step, _sync_dir
from .file_layout import (
    _CHECKPOINT_OWN_ATTRS,
    _CHUNK_CACHE_BYTES,
    CHECKPOINT_CHEAP,
    VARIABLE_CHECKPOINT_ARRAYS,
)
from .journal import JournaledFile
from .paths import _is_complete_run
from .schema import CHECKPOINT_GROUPS, open_run_file
from .verify import DIGEST_ATTR, check_run, checkpoint_digest
from .writer_files import _ABANDONED, CLOSE_RESERVE, OutputWriteError, _first_line, mark_file


class WriterClosing:
    """The checkpoint and the close of a :class:`~engine.io.writer.RunWriter`
    (its mixin): when a checkpoint is due and its write, the close (write the
    data, ``fsync``, mark, rename: issue #36 item 3), where the file ends up, and
    the file given up after a failed write."""

    def _checkpoint_due(self) -> bool:
        """Whether a flush writes the checkpoint: always while the last one was cheap,
        else while the checkpoints, this one included, stay within the budget."""
        cost = self._last_checkpoint_cost
        if cost < CHECKPOINT_CHEAP:
            return True
        elapsed = time.perf_counter() - self._t_start
        return self.seconds["checkpoint"] + cost <= self.checkpoint_budget * elapsed

    def _write_checkpoint(self, d: dict, n_records: int) -> None:
        """Write the checkpoint ``d`` (:meth:`Simulation.resume_state`, taken after
        ``n_records`` rows) into the older of the two groups ``/checkpoint`` and
        ``/checkpoint_alt`` (ping-pong): its ``serial`` is cleared and flushed first and
        set last, after the data are flushed, so a writer killed at any point leaves the
        other group complete; readers take the complete one with the larger serial.  Its
        attribute ``digest`` (:func:`engine.io.verify.checkpoint_digest`, over the values
        as stored) lets a reader verify the whole group before resuming from it."""
        serials = {}
        for name in CHECKPOINT_GROUPS:
            serials[name] = int(self.f[name].attrs.get("serial", -1)) if name in self.f else -1
        target = min(CHECKPOINT_GROUPS, key=lambda n: (serials[n], n))
        newest = max(serials.values())
        g = self.f.require_group(target)
        g.attrs["serial"] = -1
        self._flush_file()
        for k in [k for k in g if k not in d]:  # (a group of an older layout: resume)
            self._forget(f"{target}/{k}")
            del g[k]
        for k in [k for k in g.attrs if k not in d and k not in _CHECKPOINT_OWN_ATTRS]:
            del g.attrs[k]
        arrays: dict[str, np.ndarray] = {}  # what is stored, for the digest
        attrs: dict[str, Any] = {"n_records": int(n_records), "version": __version__}
        for k, v in d.items():
            if isinstance(v, np.ndarray):
                arrays[k] = v
                old = self._d(f"{target}/{k}") if k in g else None
                if old is not None and old.dtype == v.dtype and (
                        old.shape == v.shape or (v.ndim and old.maxshape[0] is None
                                                 and old.shape[1:] == v.shape[1:])):
                    # (in place, resized where the length varies: replacing datasets at
                    # every checkpoint churns the file's metadata, which a writer killed
                    # mid-way can leave pointing past the end of the file)
                    if old.shape != v.shape:
                        old.resize(v.shape[0], axis=0)
                    old[...] = v
                else:
                    if old is not None:
                        self._forget(f"{target}/{k}")
                        del g[k]
                    if k in VARIABLE_CHECKPOINT_ARRAYS:
                        g.create_dataset(k, data=v, maxshape=(None, *v.shape[1:]),
                                         chunks=True, fletcher32=True)
                    else:
                        g.create_dataset(k, data=v)
            else:
                if k == "events":
                    v = json.dumps([[e.step, e.t, e.kind, e.old, e.new] for e in v])
                elif isinstance(v, bool):
                    v = int(v)
                g.attrs[k] = attrs[k] = v
        g.attrs["n_records"] = attrs["n_records"]
        g.attrs["version"] = attrs["version"]
        g.attrs[DIGEST_ATTR] = checkpoint_digest(arrays, attrs)
        self._flush_file()
        g.attrs["serial"] = newest + 1

    def close(self, status: str = "complete", message: str = "") -> Path:
        """Write the remaining records, a checkpoint and the final status, close the
        file and move it into place (:meth:`destination`); release the lock.  Returns
        where the file is.

        After a failed write the status is ``failed`` whatever was asked, with the
        reason: the file is cut back to its last complete write (it stays readable, and
        resumable from its last checkpoint, :attr:`checkpoint_t`) and the failure
        (:class:`OutputWriteError`, its ``path`` set) is raised once all is done.
        Where even that cannot be written, the h5py handle is given up unclosed
        (:func:`abandoned_files`) and the file keeps its ``.partial`` name.  Only
        :class:`OutputWriteError` leaves here; a second call returns at once.

        In this order (issue #36 item 3): the last rows and a checkpoint of the end are
        written and flushed, and the file is ``fsync``-ed (a kill from here on leaves a
        ``.partial`` that ``rrp run --resume`` finishes: verify, mark, rename); then the
        status is set (in place, :meth:`_mark_running`), the file closed and synced,
        and renamed (:meth:`_place`: only while this writer still holds the output's
        lock file, item 12).  ``RRP_TEST_KILL_AT_CLOSE`` names a step (:data:`CLOSE_STEPS`)
        at which the process kills itself, for the tests."""
        if self.closed:
            return self._where
        self.closed = True
        _close_step("start")
        try:
            self._wait()
        except OutputWriteError:
            pass
        self._flush_lock.__enter__()  # (held to the closed file; a reader of the file
        # meets it as it was before or after: issue #47 item 3; _place's close of the
        # reserve's descriptor drops it too, whatever happened)
        if self.failure is None:
            try:
                job = self._collect(True)
            except Exception as exc:  # noqa: BLE001 - (the state could not be taken)
                self._fail(None, f"cannot take the run's last records and checkpoint: "
                           f"{type(exc).__name__}: {_first_line(exc)}")
            else:
                self._write_job(job)
        _close_step("data")
        if self.failure is None:
            try:
                os.fsync(self._reserve.fd)
            except OSError as exc:
                self._fail(exc.errno, f"cannot write {self.partial}: {exc.strerror}")
        _close_step("synced")
        if self.failure is None and status == "complete":
            self._verify_written()  # (issue #47 item 2: before it is marked complete)
        if self.failure is None:
            try:
                self._write_status(status, message, self.sim.step_index, self.sim.t)
            except Exception as exc:  # noqa: BLE001
                self._fail(getattr(exc, "errno", None), f"cannot write {self.partial}: "
                           f"{_first_line(getattr(exc, 'strerror', None) or exc)}")
                self._healthy = False
        if self.failure is not None:
            status = "failed"
            self._describe_failure()
            if self._healthy:
                try:
                    self._reserve.ensure(CLOSE_RESERVE)
                    self._file.reserve(CLOSE_RESERVE)
                    self._trim_rows(self._rows_in_file)
                    self._write_status(status, self.failure.message, self._file_step,
                                       self._file_t)
                except Exception:  # noqa: BLE001
                    self._healthy = False
        _close_step("marked")
        if self._healthy:
            try:
                self._close_file()
                os.fsync(self._reserve.fd)
            except Exception as exc:  # noqa: BLE001
                self._healthy = False
                if self.failure is None:
                    self._fail(getattr(exc, "errno", None), f"cannot close {self.partial}: "
                               f"{_first_line(getattr(exc, 'strerror', None) or exc)}")
                    self._describe_failure()
        self._flush_lock.__exit__()
        if not self._healthy:
            self._abandon()
            raise self.failure
        _close_step("closed")
        self._where = self._place(status)
        _close_step("renamed")
        self._lock.release()
        if self.failure is not None:
            self.failure.path = self._where
            raise self.failure
        return self._where

    def _verify_written(self) -> None:
        """Before a file is marked ``complete`` (issue #47 item 2): close it, check it as
        a reader opening it anew does (no chunk comes from this writer's cache) and open
        it again to mark it.  Every writer checks the header and status digests, the
        structure and the lengths (as a closed file's) and that no two objects' data
        overlap (:func:`~engine.io.verify.overlaps`: metadata only); a writer that
        continued an existing file (a resume: it appended to chunks and rewrote
        checkpoints that file's index placed) also reads every chunk and row, and both
        checkpoints (``deep``), as the resume did before it wrote.  A file that fails is marked
        ``failed``, not ``complete``, with what is wrong (:attr:`failure`)."""
        t0 = time.perf_counter()
        report = why = None
        try:
            self._close_file()
        except Exception as exc:  # noqa: BLE001
            self._healthy = False
            self._fail(getattr(exc, "errno", None), f"cannot close {self.partial}: "
                       f"{_first_line(getattr(exc, 'strerror', None) or exc)}")
            return
        try:  # (a new file's datatypes and checkpoints are what this writer wrote)
            with (open_run_file(self.partial) if self._resumed else
                  h5py.File(self.partial, "r", locking=False)) as g:
                report = check_run(g, self.partial, deep=self._resumed, closing=True,
                                   checkpoints=self._resumed)
        except Exception as exc:  # noqa: BLE001 - (a RunFileError: one line)
            why = _first_line(exc)
        try:
            self._file = JournaledFile(self.partial)
            self.f = h5py.File(self._file, "r+", locking=False,
                               rdcc_nbytes=_CHUNK_CACHE_BYTES)
        except Exception as exc:  # noqa: BLE001
            self._healthy = False
            self._fail(getattr(exc, "errno", None), f"cannot open {self.partial} again "
                       f"to mark it: {_first_line(getattr(exc, 'strerror', None) or exc)}")
            return
        finally:
            self.seconds["verify"] = self.seconds.get("verify", 0.0) + (
                time.perf_counter() - t0)
        if report is not None and report.problems:
            why = report.what()
        if why is not None:
            self._fail(errno.EIO, f"{self.partial} fails its checks once written ({why}): "
                       "it is not marked complete")
            self.failure.damaged = True

    def _flush_file(self) -> None:
        """Flush the file and commit it (:meth:`~engine.io.journal.JournaledFile.commit`:
        a writer killed from here on leaves it as it is now, issue #47 item 1)."""
        self.f.flush()
        if not self._hold_commit:
            self._file.commit()

    def _close_file(self) -> None:
        """Close the file and commit what the close wrote."""
        self.f.close()
        self._ds.clear()
        self._file.commit()
        self._file.close()

    def _write_status(self, status: str, message: str, steps: int, t: float) -> None:
        mark_file(self.f, status, message, steps, t)

    def _describe_failure(self) -> None:
        """Complete the failure's message with what the file holds."""
        fl = self.failure
        fl.safe_t, fl.file_t = self.checkpoint_t, self._file_t
        ck = ("no checkpoint yet" if self.checkpoint_t is None else
              f"its last checkpoint at t = {self.checkpoint_t:.6g}")
        if "; the file holds" not in fl.message:
            fl.message = (f"{fl.message}; the file holds the run up to t = "
                          f"{self._file_t:.6g} ({ck})")
            fl.args = (fl.errno, fl.message)

    def _place(self, status: str) -> Path:
        """Release the space, restore a file removed while written, rename it."""
        res = self._reserve
        try:
            if res.removed():
                try:
                    res.copy_to(self.partial)
                except OSError as exc:
                    if self.failure is not None:
                        self.failure.message += (f"; it could not be restored "
                                                 f"({exc.strerror or exc}): it is lost")
                        self.failure.args = (self.failure.errno, self.failure.message)
                    return self.partial
        finally:
            res.close()
        if self.failure is not None and self.checkpoint_t is None and not self._extends:
            self.partial.unlink(missing_ok=True)  # (the first write failed: it holds nothing)
            self.failure.message = (self.failure.message.split("; the file holds")[0]
                                    + "; nothing was written")
            self.failure.args = (self.failure.errno, self.failure.message)
            return self.partial
        dest = self.destination(status)
        if dest != self.partial:
            if not self._lock.intact():  # (issue #36 item 12)
                if self.failure is None:
                    self._fail(errno.EBUSY, f"the lock file {self._lock.file} was removed "
                               f"or replaced while this run wrote {self.path}, and another "
                               f"writer may have written it since: {self.path} was not "
                               f"replaced; this run (status {status}) is in {self.partial}")
                    self.failure.safe_t = self.checkpoint_t
                    self.failure.file_t = self._file_t
                return self.partial
            try:
                os.replace(self.partial, dest)
            except OSError as exc:
                if self.failure is None:
                    self._fail(exc.errno, f"cannot rename {self.partial} to {dest}: "
                               f"{exc.strerror or exc}")
                return self.partial
            _sync_dir(dest.parent)
        return dest

    def destination(self, status: str) -> Path:
        """Where :meth:`close` puts a file that ends with ``status``: ``path``, except
        that a run that does not end ``complete`` keeps its ``.partial`` name where
        ``path`` holds a complete run it does not continue (``keep_complete``): a file
        is never replaced by a worse one."""
        if status == "complete" or not self.keep_complete or self._extends:
            return self.path
        return self.partial if _is_complete_run(self.path) else self.path

    def _abandon(self) -> None:
        """Give up the h5py handle after a write it could not finish: never closed or
        freed (that crashed HDF5); the file keeps its ``.partial`` name and status
        ``running`` (read as *interrupted (file not closed)* once this process ends)."""
        self.abandoned = True
        _ABANDONED.append((self.partial, (self.f, self._ds)))
        if "may be damaged" not in self.failure.message:
            self.failure.message += (f"; the file {self.partial} could not be closed and "
                                     "may be damaged past its last checkpoint")
            self.failure.args = (self.failure.errno, self.failure.message)
        self._where = self.partial
        self.failure.path = self.partial
        try:
            os.close(self._reserve.fd)
        except OSError:
            pass
        self._lock.release()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close("complete")
            return
        try:
            if issubclass(exc_type, KeyboardInterrupt):
                self.close("interrupted", "interrupted by the user")
            else:
                self.close("failed", f"{exc_type.__name__}: {exc}")
        except OutputWriteError:
            pass  # (the file says so; the exception that got here goes on)
