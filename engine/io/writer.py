"""The run file's writer, :class:`RunWriter`: the layout, the records appended as a
run goes (in a thread, in batches: issue #36 item 15), a resume's continuation
(split from :mod:`engine.io.hdf5`, issue #34 item 3; its checkpoint and close are
:mod:`engine.io.writer_close`; docs/output.md)."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import socket
import threading
import time
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from .. import __version__
from ..layout import ENERGY_NAMES
from ..models.base import body_groups
from ..simulation import Event, Simulation
from . import digests
from .batching import CHECKPOINT_INTERVAL, batch_due, record_bytes
from .closing import _METADATA_SLACK, _chunk_layout, _new_chunks, check_output_name
from .digests import SCHEMA_VERSION
from .file_layout import (
    _CHUNK_CACHE_BYTES,
    _SPRING_LISTS,
    _SPRING_ROWS,
    _STATE_COLS,
    CHECKPOINT_BUDGET,
    FRAME_COMPRESSION,
    SPRING_CHUNK_ROWS,
    TERRACE_GAP,
    _terraced,
    frame_chunks,
    frame_filters,
)
from .flushlock import FlushLock
from .journal import JournaledFile
from .outlock import OutputLock
from .paths import _output_name_attr, _same_file, is_partial_name, output_of_partial, partial_name
from .reserve import OutputSpaceError, SpaceReserve
from .schema import RunFileError, check_datatypes
from .verify import DIGEST_ATTR
from .writer_close import WriterClosing
from .writer_files import (
    _SPACE_ERRNOS,
    CLOSE_RESERVE,
    OutputWriteError,
    _check_room,
    _copy_verified,
    _first_line,
    _row_datasets,
    _start_bound,
)


class RunWriter(WriterClosing):
    """Stream a :class:`Simulation`'s records into an HDF5 file.

    ``checkpoint``: (over)write ``/checkpoint`` with the simulation's
    :meth:`~engine.simulation.Simulation.resume_state` (``rrp run --resume``) at every
    flush while that is cheap, else as often as ``checkpoint_budget`` (a fraction of the
    wall-clock time, :data:`CHECKPOINT_BUDGET`) allows, and always at :meth:`close`.
    With frames, the simulation is switched to recording its full state
    (:meth:`~engine.simulation.Simulation.set_record_state`) so that a run can be
    started from any frame.  ``keep_frames=False``: drop the frames from the
    simulation's series once they are in the file (``rrp run --out``: a 10⁶-sphere
    frame is 128 MB; the series keeps ``t``, the energies and the momenta).
    :meth:`resume` continues an existing file.  ``background``: each flush takes copies
    of the new rows (and the checkpoint's state) and a thread writes them while the
    caller steps on (``rrp run --out``; one write in flight, its error raised by the
    next flush or :meth:`close`).  ``compress``: LZF on a large model's one-frame
    chunks and on the springs' lists (``rrp run --compress``; off by default, issue #36
    item 15, :func:`~engine.io.file_layout.frame_filters`).  ``seconds`` holds the time spent
    writing the records and the checkpoints, and ``blocked`` the caller's time in
    :meth:`flush` (``benchmarks/bench_io_scale.py``).

    One writer per output: ``lock`` (an :class:`~engine.io.outlock.OutputLock` on
    ``path`` the caller took already, released by :meth:`close`; ``None``: taken here)
    is held from before the file is created until it is renamed into place; another
    writer of ``path`` gets :class:`~engine.io.outlock.OutputBusyError`.  The file is
    written as ``<path>.<pid>.partial`` (:attr:`partial`).  ``keep_complete``: a run
    that does not end ``complete`` does not replace an existing complete run at
    ``path`` (it keeps its ``.partial`` name, :meth:`destination`).

    A write that fails (:class:`OutputWriteError`: the space for it could not be held,
    the file was removed, HDF5 failed) fails the writer: :meth:`flush` raises it, and
    :meth:`close` marks the file ``failed`` with the reason, keeps it readable up to its
    last complete write, and raises it again."""

    def __init__(self, path: str | Path, sim: Simulation, *, scenario: str = "",
                 frames: bool = True, checkpoint: bool = True, keep_frames: bool = True,
                 checkpoint_budget: float = CHECKPOINT_BUDGET,
                 background: bool = False, lock: OutputLock | None = None,
                 keep_complete: bool = True, t_end: float | None = None,
                 compress: bool = False) -> None:
        self.path = Path(path)
        check_output_name(self.path)
        self.sim = sim
        self.compress = bool(compress)  # (LZF frames and springs: item 15, frame_filters)
        self.t_end = t_end
        self.frames = frames and sim.record_frames
        self.checkpoint = checkpoint
        self._init_accounting(keep_frames, checkpoint_budget, background)
        self.written = 0
        self.base = 0  # rows in the file before this writer's first (resume)
        self.events_written = 0
        if self.path.parent and not self.path.parent.exists():
            raise OSError(f"the output directory {str(self.path.parent)!r} does not exist")
        self._start(lock, keep_complete, extends=False)
        self.partial = partial_name(self.path)
        try:
            _check_room(self.partial, _start_bound(sim))
        except BaseException:
            self._lock.release()
            raise
        if self.frames:
            sim.set_record_state(True)
        self._file = JournaledFile(self.partial, create=True)  # (issue #47 item 1)
        self._hold_commit = True  # (until the first checkpoint is written: _first_flush)
        self.f = h5py.File(self._file, "w", rdcc_nbytes=_CHUNK_CACHE_BYTES)
        self._reserve = SpaceReserve(self.partial)
        self._flush_lock = FlushLock(self._reserve.fd)
        with self._flush_lock:  # (the header and the first records and checkpoint are
            self._write_header(sim, scenario)  # written whole before a reader sees them,
            self.f.flush()  # issue #47 item 3, and committed together: a kill before
            self._first_flush()  # leaves an empty file, after, a resumable one: item 1)

    def _write_header(self, sim: Simulation, scenario: str) -> None:
        """The new file's attributes, constants and (empty) row datasets, sealed."""
        model = sim.model
        n = model.n_bodies
        f = self.f
        f.attrs["schema_version"] = SCHEMA_VERSION
        f.attrs["scenario"] = scenario or model.name
        f.attrs["model"] = model.name
        f.attrs["integrator"] = sim.integrator.name
        f.attrs["h"] = sim.h
        f.attrs["version"] = __version__
        f.attrs["parameters"] = json.dumps(model.params)
        f.attrs["record_every"] = sim.record_every
        f.attrs["energy_reference"] = sim.e_ref
        f.attrs["energy_scale"] = sim.e_scale
        self._mark_running()
        f.attrs["conserved"] = json.dumps(list(model.conserved))
        f.attrs["coordinates"] = getattr(model, "coordinates", "bodies")
        self._mark_writer()
        g = f.create_group("parameters")
        for k, v in model.params.items():
            g.attrs[k] = v
        f.create_dataset("time", (0,), maxshape=(None,), dtype="f8", chunks=(4096,),
                         fletcher32=True)
        ge = f.create_group("energy")
        self.components = [c for c in ENERGY_NAMES if c in model.energy_components]
        for c in [*self.components, "total", "relative_error",
                  *((TERRACE_GAP,) if _terraced(sim) else ())]:
            ge.create_dataset(c, (0,), maxshape=(None,), dtype="f8", chunks=(4096,),
                              fletcher32=True)
        gm = f.create_group("momentum")
        for c in ("linear", "angular"):
            gm.create_dataset(c, (0, 3), maxshape=(None, 3), dtype="f8", chunks=(1024, 3),
                              fletcher32=True)
        gb = f.create_group("bodies")
        gb.create_dataset("mass", data=model.bodies.m, fletcher32=True)
        gb.create_dataset("inertia", data=model.bodies.J, fletcher32=True)
        gb.create_dataset("inertia_tensor", data=model.bodies.inertia,  # body frame, (n, 3, 3)
                          fletcher32=True)
        gb.create_dataset("diameter", data=model.bodies.D, fletcher32=True)
        gb.create_dataset("group", data=body_groups(model).astype(np.int64),
                          fletcher32=True)  # (the user's groups: issue #42 item 8)
        bonds = np.asarray(model.forcefield.bonds).reshape(-1, 2)
        if len(bonds):
            f.create_group("model").create_dataset("bonds", data=bonds, fletcher32=True)
        if model.carried:  # (what files gave the model, carried: issue #43 item 4)
            gc = f.require_group("model").create_group("assembly")
            for k, a in model.carried.items():
                gc.create_dataset(k, data=a, fletcher32=True)
        if self.frames:
            cols = [("position", 3), ("quaternion", 4), ("omega", 3), ("velocity", 3)]
            if self._generalized:
                gg = f.create_group("generalized")
                for c in ("q", "v"):
                    gg.create_dataset(c, (0, 2), maxshape=(None, 2), dtype="f8",
                                      chunks=(1024, 2), fletcher32=True)
            else:
                cols.append(("momentum_body", 3))
                if sim.ff.has_history:  # F, RM (their damping part) and the springs
                    cols += [("force", 3), ("moment", 3)]
                    gs = f.create_group("springs")
                    for c in _SPRING_ROWS:
                        gs.create_dataset(c, (0,), maxshape=(None,), dtype="i8",
                                          chunks=(4096,), fletcher32=True)
                    for c, dt, w in _SPRING_LISTS:
                        gs.create_dataset(c, (0, *w), maxshape=(None, *w), dtype=dt,
                                          chunks=(SPRING_CHUNK_ROWS, *w),
                                          **(FRAME_COMPRESSION if self.compress else {}),
                                          fletcher32=True)
            for c, w in cols:
                ch = frame_chunks(n, w)
                gb.create_dataset(c, (0, n, w), maxshape=(None, n, w), dtype="f8",
                                  chunks=ch, **frame_filters(ch, self.compress),
                                  fletcher32=True)
            gb.create_dataset("time", (0,), maxshape=(None,), dtype="f8", chunks=(4096,),
                              fletcher32=True)
            gb.create_dataset("step", (0,), maxshape=(None,), dtype="i8", chunks=(4096,),
                              fletcher32=True)
            gb.create_dataset("dissipated", (0,), maxshape=(None,), dtype="f8",
                              chunks=(4096,), fletcher32=True)
        digests.seal(f)  # the layout, the header's digest, the row checks (issue #36)
        self._layout_known()

    def _first_flush(self) -> None:
        """The first write (layout and checkpoint), in line (never in the writer's thread:
        a new file's first commit holds a checkpoint to resume from, issue #47 item 1);
        if it fails, the file is closed (and removed: it holds nothing) before the
        failure is raised."""
        background, self.background = self.background, False
        try:
            self.flush(checkpoint=True)
        except OutputWriteError:
            self.close("failed")  # (raises the failure)
            raise
        finally:
            self.background = background
        self._hold_commit = False
        self._file.commit()

    def _start(self, lock: OutputLock | None, keep_complete: bool, extends: bool) -> None:
        """Take the output's lock (or adopt the caller's) before anything is created."""
        self._lock = lock if lock is not None else OutputLock(self.path)
        self._lock.acquire()
        self.keep_complete = bool(keep_complete)
        self._extends = extends  # the file continues the run now at ``path`` (resume)
        self._ds: dict[str, Any] = {}
        self._reserve: SpaceReserve | None = None
        self._flush_lock: FlushLock | contextlib.nullcontext = contextlib.nullcontext()
        self.failure: OutputWriteError | None = None
        self._healthy = True  # False: h5py failed mid-write; the handle is not touched
        self._hold_commit = False  # True: the flushes do not commit (a new file's start)
        self._file_t = float(self.sim.t)
        self._file_step = int(self.sim.step_index)
        self._rows_in_file = 0
        self.checkpoint_t: float | None = None
        """The time of the last checkpoint in the file (what a resume starts from)."""
        self.abandoned = False
        self.closed = False
        self._resumed = False  # (a resume: its close verifies every chunk, issue #47)

    def _init_accounting(self, keep_frames: bool, checkpoint_budget: float,
                         background: bool) -> None:
        self.background = bool(background)
        if not 0.0 < float(checkpoint_budget) <= 1.0:
            raise ValueError(f"checkpoint_budget must be in (0, 1], got {checkpoint_budget}")
        self.keep_frames = bool(keep_frames)
        self.checkpoint_budget = float(checkpoint_budget)
        self.seconds = {"records": 0.0, "checkpoint": 0.0, "blocked": 0.0,
                        "records_cpu": 0.0,  # (its thread's CPU in the records)
                        "verify": 0.0}  # (the close's check, issue #47 item 2)
        self.checkpoints_written = 0
        self._pending: threading.Thread | None = None
        self._error: BaseException | None = None
        self._failed: dict[str, Any] | None = None
        self._last_checkpoint_cost = 0.0
        self._t_start = time.perf_counter()
        self._handed = time.monotonic()  # when the last batch was handed over
        self._checkpoint_handed = self._handed  # ... and the last checkpoint
        self.batches = 0
        """Writes that appended records (:meth:`flush_when_due`: one per batch)."""
        self.dataset_writes = 0
        """Appends to a dataset (each resizes it once and writes its new rows once)."""

    @property
    def _generalized(self) -> bool:
        return getattr(self.sim.model, "coordinates", "bodies") == "generalized"

    @classmethod
    def resume(cls, path: str | Path, sim: Simulation, source: str | Path,
               n_records: int, *, checkpoint: bool = True, keep_frames: bool = True,
               checkpoint_budget: float = CHECKPOINT_BUDGET,
               background: bool = False, lock: OutputLock | None = None,
               keep_complete: bool = True, t_end: float | None = None,
               source_lock: OutputLock | None = None) -> RunWriter:
        """Append ``sim`` (a run resumed from ``source``'s checkpoint, taken after
        ``n_records`` rows) to ``source`` written as ``path``: the rows the file holds
        beyond the checkpoint (a run killed between the two) are dropped.  ``source`` may
        be ``path``, a ``.partial`` of ``path`` (a killed or failed run's, old names
        ``<path>.partial`` too: continued in place, under ``path``'s lock) or another
        run file (copied to ``<path>.<pid>.partial``, under a shared lock of ``source``'s
        output, ``source_lock``, taken here if not given, and the copy verified before it
        is written to: issue #36 item 1; left untouched).  The other arguments are the
        constructor's."""
        self = cls.__new__(cls)
        self.path = Path(path)
        check_output_name(self.path)
        self.sim = sim
        self.t_end = t_end
        self.checkpoint = checkpoint
        self._init_accounting(keep_frames, checkpoint_budget, background)
        self.written = 0
        self.base = int(n_records)
        self.events_written = 0
        if self.path.parent and not self.path.parent.exists():
            raise OSError(f"the output directory {str(self.path.parent)!r} does not exist")
        source = Path(source)
        in_place = is_partial_name(source) and _same_file(
            output_of_partial(source, _output_name_attr(source)), self.path)
        self._start(lock, keep_complete,
                    extends=in_place or _same_file(source, self.path))
        self._resumed = True
        try:
            if in_place:
                self.partial = source
                _check_room(self.partial, _start_bound(sim))
            else:
                self.partial = partial_name(self.path)
                _check_room(self.partial, source.stat().st_size + _start_bound(sim))
                _copy_verified(source, self.partial, n_records, source_lock,
                               locked=self._extends)
        except BaseException:
            self._lock.release()
            raise
        self._file = JournaledFile(self.partial)  # (rolled back to its last whole flush
        self.f = h5py.File(self._file, "r+", locking=False,  # if a writer died in one)
                           rdcc_nbytes=_CHUNK_CACHE_BYTES)
        try:  # (a copy was checked; a file extended in place is checked here: item 4)
            check_datatypes(self.f, self.partial)
        except RunFileError:
            self._file.close()
            self._lock.release()
            raise
        self._reserve = SpaceReserve(self.partial)
        self._flush_lock = FlushLock(self._reserve.fd)
        f = self.f
        self.frames = "position" in f["bodies"] and sim.record_frames
        if self.frames:
            sim.set_record_state(True)
        self.components = [c for c in ENERGY_NAMES if c in f["energy"]]
        try:  # (nothing is changed before the space for it is held)
            self._reserve.ensure(_start_bound(sim) + CLOSE_RESERVE)
        except OutputSpaceError as exc:
            self.f.close()
            self._file.close()
            self._reserve.close()
            self._lock.release()
            raise OutputWriteError(exc.errno, f"cannot write {self.partial}: "
                                   f"{exc.strerror}", self.partial) from None
        with self._flush_lock:  # drop rows written after the checkpoint (a run killed
            self._trim_rows(self.base)  # between the two); mark it as written again
            self._mark_running()
            self._mark_writer()
            self._flush_file()
        self._rows_in_file = self.base
        self._layout_known()
        self._first_flush()
        return self

    def _trim_rows(self, n: int) -> None:
        """Cut the row datasets (and the springs' lists) to ``n`` rows."""
        f = self.f
        for ds in _row_datasets(f):
            if ds.shape[0] > n:
                ds.resize(n, axis=0)
        if "springs" in f:
            gs = f["springs"]
            k = min(n, gs["start"].shape[0], gs["count"].shape[0])
            end = int(gs["start"][k - 1] + gs["count"][k - 1]) if k else 0
            for ds in [gs[c] for c, _, _ in _SPRING_LISTS] + (
                    [f[digests.SPRING_CHECKS]] if digests.SPRING_CHECKS in f else []):
                if ds.shape[0] > end:
                    ds.resize(end, axis=0)

    def _mark_running(self) -> None:
        """Status ``running``; the attributes :meth:`close` sets are made here, at their
        final size, so that marking the file at the close rewrites them in place (no
        metadata past the end of the file: a kill then cannot leave it unopenable,
        issue #36 item 3); ``t_end``: the end time the run is going to (what a resume
        without ``--t-end`` finishes it to)."""
        a = self.f.attrs
        a["status"] = "running"
        a["message"] = ""
        a["steps"] = np.int64(self.sim.step_index)
        a["t_final"] = np.float64(self.sim.t)
        if self.t_end is not None:
            a["t_end"] = np.float64(self.t_end)
        elif "t_end" in a:  # (a resume to no stated end: the old one no longer holds)
            del a["t_end"]

    def _mark_writer(self) -> None:
        self.f.attrs["writer_pid"] = os.getpid()
        self.f.attrs["writer_host"] = socket.gethostname()
        self.f.attrs["output_name"] = self.path.name
        digests.stamp_status(self.f)

    def _layout_known(self) -> None:
        """What the writes need to know of the file, read once (no h5py call on the
        caller's thread while a write is in flight): whether it keeps springs, and the
        slack of a write's bound (a new chunk of every dataset, metadata)."""
        self._springs = "springs" in self.f
        self._gap = TERRACE_GAP in self.f["energy"]  # (issue #33 item 6)
        rows = _row_datasets(self.f)
        if self._springs:
            rows += [self.f["springs"][c] for c, _, _ in _SPRING_LISTS]
        self._n_row_datasets = len(rows)
        self._record_bytes = record_bytes(self.sim.model.n_bodies, self.frames,
                                          len(self.components) + 9)
        self._digests = digests.RowDigests(self.f)
        self._row_chunks = [_chunk_layout(ds) for ds in _row_datasets(self.f) if ds.chunks]
        self._list_chunks = ([_chunk_layout(self.f["springs"][c]) for c, _, _ in _SPRING_LISTS]
                             if self._springs else [])

    def _d(self, name: str):
        """The dataset ``name``, opened once and kept open until :meth:`close`: h5py
        closes a dataset it frees, which writes its cached chunks, and a failure there
        is printed and lost (then HDF5 crashed, issue #26); kept open, every write
        happens in a call that raises."""
        ds = self._ds.get(name)
        if ds is None:  # (a dataset with row digests: its appended rows are digested)
            ds = self._ds[name] = self._digests.tracked(self.f[name], name)
        return ds

    def _forget(self, name: str) -> None:
        self._ds.pop(name, None)

    def flush(self, *, checkpoint: bool | None = None) -> None:
        """Append the records not yet written and the events, write the checkpoint
        (``checkpoint=None``: when due, see :data:`CHECKPOINT_BUDGET`; ``True``: now;
        ``False``: not), flush to disk.  Only the new rows are concatenated
        (:meth:`~engine.simulation.TimeSeries.tail`), so a flush costs what it writes.

        With ``background``, the rows (copies) and the checkpoint are taken here and
        written by a thread while the caller goes on stepping; the next flush first
        waits for it (one write in flight) and raises what it raised.  A failed write
        (:class:`OutputWriteError`) fails the writer: every later flush raises it, and
        the caller stops and calls :meth:`close`."""
        t0 = time.perf_counter()
        self._wait()
        job = self._collect(checkpoint)
        self._handed = time.monotonic()
        if job["checkpoint"] is not None:
            self._checkpoint_handed = self._handed
        if self.background:
            self._pending = threading.Thread(target=self._write_job, args=(job,),
                                             name="rrp-run-writer")
            self._pending.start()
        else:
            self._write_job(job)
            self._wait()
        self.seconds["blocked"] += time.perf_counter() - t0

    def flush_when_due(self) -> bool:
        """What the run loop calls after each chunk of steps (issue #36, item 15): the
        new records stay in the simulation's series until a batch is due
        (:func:`engine.io.batching.batch_due`: the last batch written and
        :data:`~engine.io.batching.BATCH_INTERVAL` passed since it was handed over, or
        :data:`~engine.io.batching.BATCH_BYTES` held), then :meth:`flush` writes them as
        one batch, with the checkpoint once
        :data:`~engine.io.batching.CHECKPOINT_INTERVAL` has passed since the last one.
        Never waits for the write in flight unless the records held reach
        ``BATCH_BYTES``; raises the writer's failure (:class:`OutputWriteError`) as soon
        as the write that failed has ended.  Returns whether a batch was handed over."""
        p = self._pending
        if p is not None and not p.is_alive():
            self._wait()  # (joins it; raises its failure)
            p = None
        if self.failure is not None:
            raise self.failure
        pending = self.sim.series.n - self.written
        if not batch_due(pending, self._record_bytes, time.monotonic() - self._handed,
                         p is not None):
            return False
        recent = time.monotonic() - self._checkpoint_handed < CHECKPOINT_INTERVAL
        self.flush(checkpoint=False if recent else None)
        return True

    def wait(self) -> None:
        """Wait for the write in flight, if any; raise the writer's failure
        (:class:`OutputWriteError`), if it failed."""
        self._wait()

    def _wait(self) -> None:
        """Wait for the write in flight, if any; raise the writer's failure."""
        if self._pending is not None:
            self._pending.join()
            self._pending = None
        if self.failure is not None:
            raise self.failure

    def _collect(self, checkpoint: bool | None) -> dict[str, Any]:
        """What a flush writes, taken from the simulation now (copies): the new rows,
        their springs, the events, the checkpoint if due."""
        a = self.sim.series.tail(self.written)
        k = len(a["t"])
        job: dict[str, Any] = {"rows": a, "k": k, "events": None, "checkpoint": None,
                               "e_ref": (self.sim.e_ref, self.sim.e_scale),
                               "t": float(self.sim.t), "step": int(self.sim.step_index)}
        if k and self._springs:
            job["springs"] = [self.sim.series.springs.get(row)
                              for row in range(self.written, self.written + k)]
        self.written += k
        if k and self.frames and not self.keep_frames:
            self.sim.series.release_frames()
        if len(self.sim.events) > self.events_written:
            job["events"] = list(self.sim.events)
            self.events_written = len(self.sim.events)
        if self.checkpoint and (self._checkpoint_due() if checkpoint is None else checkpoint):
            job["checkpoint"] = (self.sim.resume_state(), self.base + self.written)
        job["rows_end"] = self.base + self.written
        return job

    def _bound(self, job: dict[str, Any]) -> int:
        """At most what writing ``job`` adds to the file, counted from the chunks it
        can add (issue #36 item 13: what the write needs, not a multiple of it): in
        every row dataset, the chunks its ``k`` rows start (and the one under way again
        where a rewritten chunk can move: compressed), each at its full stored size (a
        chunk LZF cannot shrink is stored as it is; its checksum, and its entry in the
        chunk index); the springs' lists
        alike; the checkpoint's and the events' bytes (a dataset made anew takes its
        size; rewritten in place, nothing), and room for metadata."""
        k = job["k"]
        total = _METADATA_SLACK
        if k:
            n0 = self._rows_in_file
            total += sum(_new_chunks(k, c, moves, n0) * nbytes
                         for c, nbytes, moves in self._row_chunks)
            n_springs = sum(len(sp[0]) for sp in job.get("springs") or () if sp is not None)
            if n_springs:
                total += sum(_new_chunks(n_springs, c, moves, None) * nbytes
                             for c, nbytes, moves in self._list_chunks)
        if job["checkpoint"] is not None:
            d = job["checkpoint"][0]
            total += sum(v.nbytes + 4096 for v in d.values() if isinstance(v, np.ndarray))
            total += 256 * len(d.get("events", ())) + 65536
        if job["events"] is not None:
            total += 256 * len(job["events"]) + 65536
        return total

    def _journal_bound(self, job: dict[str, Any]) -> int:
        """At most what writing ``job`` saves in the journal (issue #47 item 1): the
        bytes its rows change in chunks already in the file, what its checkpoint and
        events rewrite in place, and metadata (the close's marking among it)."""
        if not self._file.committed:  # (a new file's first write: all of it appended)
            return 0
        n_springs = sum(len(sp[0]) for sp in job.get("springs") or () if sp is not None)
        rows = job["k"] * (self._record_bytes + 8 * self._n_row_datasets)  # (+ digests)
        return rows + 56 * n_springs + self._bound({**job, "k": 0})

    def _write_job(self, job: dict[str, Any]) -> None:
        """Write what :meth:`_collect` took (on the caller's thread or the writer's,
        never both: one write in flight).  The space is held first
        (:mod:`engine.io.reserve`); a failure is kept in :attr:`failure` for the caller
        (:meth:`_wait`), and after one nothing is written any more."""
        if self.failure is not None:
            return
        with self._flush_lock:  # (readers of the file wait for the whole write)
            self._write_job_held(job)

    def _write_job_held(self, job: dict[str, Any]) -> None:
        try:
            if self._reserve.removed():
                raise OutputSpaceError(errno.ENOENT, "the file was removed while the run "
                                       "wrote it")
            self._reserve.ensure(self._bound(job) + CLOSE_RESERVE)
            self._file.reserve(self._journal_bound(job))
        except OutputSpaceError as exc:  # nothing written: the file is whole
            if job["k"] > 1 and exc.errno in _SPACE_ERRNOS:  # (what fits is written)
                self._write_in_pieces(job)
                return
            self._fail(exc.errno, f"cannot write {self.partial}: {exc.strerror}")
            return
        except OSError as exc:
            self._fail(exc.errno, f"cannot write {self.partial}: {exc.strerror or exc}")
            return
        try:
            t0, c0 = time.perf_counter(), time.thread_time()
            if job["k"]:
                self._write_rows(job["rows"], job["k"], job.get("springs"), *job["e_ref"])
                self.batches += 1
            if job["events"] is not None:
                self._write_events(job["events"])
            self._flush_file()
            self._rows_in_file = job["rows_end"]
            self._file_t, self._file_step = job["t"], job["step"]
            self.seconds["records"] += time.perf_counter() - t0
            self.seconds["records_cpu"] += time.thread_time() - c0
            if job["checkpoint"] is not None:
                t0 = time.perf_counter()
                self._write_checkpoint(*job["checkpoint"])
                self._flush_file()
                self.checkpoint_t = float(job["checkpoint"][0].get("t", job["t"]))
                self._last_checkpoint_cost = time.perf_counter() - t0
                self.seconds["checkpoint"] += self._last_checkpoint_cost
                self.checkpoints_written += 1
        except Exception as exc:  # noqa: BLE001 - the writer fails; the caller says so
            why = getattr(exc, "strerror", None) or f"{type(exc).__name__}: {exc}"
            self._fail(getattr(exc, "errno", None), f"cannot write {self.partial}: "
                       f"{_first_line(why)}")
            self._healthy = self._flushes()

    def _write_in_pieces(self, job: dict[str, Any]) -> None:
        """A write whose space cannot be held whole: its rows in pieces, halved until
        the space of one is held, as far as they fit (issue #36 item 13: a small disk is
        filled before the run stops), then its events and checkpoint; the first piece
        whose space cannot be held (one row) fails the writer, the file whole up to the
        pieces written."""
        k, rows, springs = job["k"], job["rows"], job.get("springs")
        at, n = 0, k
        while at < k:
            n = min(n, k - at)
            sub = {**job, "k": n, "checkpoint": None, "events": None,
                   "rows": {c: v[at:at + n] for c, v in rows.items()},
                   "springs": springs[at:at + n] if springs else springs}
            try:
                self._reserve.ensure(self._bound(sub) + CLOSE_RESERVE)
                self._file.reserve(self._journal_bound(sub))
            except OutputSpaceError as exc:
                if n > 1:
                    n = (n + 1) // 2
                    continue
                self._fail(exc.errno, f"cannot write {self.partial}: {exc.strerror}")
                return
            try:
                self._write_rows(sub["rows"], n, sub["springs"], *job["e_ref"])
                self._flush_file()
            except Exception as exc:  # noqa: BLE001 - as in _write_job
                why = getattr(exc, "strerror", None) or f"{type(exc).__name__}: {exc}"
                self._fail(getattr(exc, "errno", None), f"cannot write {self.partial}: "
                           f"{_first_line(why)}")
                self._healthy = self._flushes()
                return
            at += n
            self._rows_in_file = job["rows_end"] - (k - at)
            self._file_t = float(sub["rows"]["t"][-1])
            if "step" in sub["rows"]:
                self._file_step = int(sub["rows"]["step"][-1])
        self._write_job({**job, "k": 0, "rows": {}, "springs": None})

    def _fail(self, err: int | None, message: str) -> None:
        self.failure = OutputWriteError(err, message, self.partial)

    def _flushes(self) -> bool:
        """After h5py failed mid-write: whether the file still flushes (then it can be
        cut back to its last complete write and marked); if not, the handle is given
        up (:meth:`_abandon`)."""
        try:
            self._reserve.ensure(CLOSE_RESERVE)
            self._file.reserve(CLOSE_RESERVE)
            self.f.flush()
        except Exception:  # noqa: BLE001
            return False
        return True

    def _write_rows(self, a: dict[str, np.ndarray], k: int, springs: list | None,
                    e_ref: float, e_scale: float) -> None:
        """Append ``k`` rows ``a`` of the series (and their springs) to the datasets
        (reads nothing of the simulation: it may be stepping meanwhile)."""
        idx = ENERGY_NAMES.index
        total = a["energy"].sum(axis=1)
        cols: dict[str, Any] = {c: a["energy"][:, idx(c)] for c in self.components}
        cols["total"] = total
        cols["relative_error"] = (total - e_ref) / e_scale
        d = self._d
        self._put(d("time"), a["t"])
        if self._gap:  # V − V_ε of an event-driven scheme's rows, NaN in the others
            cols[TERRACE_GAP] = a.get(TERRACE_GAP, np.full(k, np.nan))
        for c, arr in cols.items():
            self._put(d(f"energy/{c}"), arr)
        self._put(d("momentum/linear"), a["P"])
        self._put(d("momentum/angular"), a["L"])
        if not self.frames:
            self._digests.write(self._d, self._put)
            return
        gb = self.f["bodies"]
        self._put(d("bodies/position"), a["x"])
        self._put(d("bodies/quaternion"), a["q"])
        self._put(d("bodies/omega"), a["omega"])
        self._put(d("bodies/time"), a["t"])
        if "step" in gb:
            self._put(d("bodies/step"), a.get("step", np.full(k, -1)))
        if "dissipated" in gb:
            self._put(d("bodies/dissipated"), a["energy"][:, idx("dissipated")])
        for c, key, w in _STATE_COLS:
            if c in gb:
                self._put(d(f"bodies/{c}"),
                          a.get(key, np.full((k, a["x"].shape[1], w), np.nan)))
        if "generalized" in self.f:
            for c in ("q", "v"):
                self._put(d(f"generalized/{c}"), a.get("g" + c, np.full((k, 2), np.nan)))
        if self._springs:
            self._append_springs(springs or [None] * k)
        self._digests.write(self._d, self._put)  # (after the data: issue #36 item 2)

    def _append_springs(self, rows: list) -> None:
        """Append the springs of the rows (``None``: a row recorded without them)."""
        at = self._d("springs/sphere").shape[0]
        starts, counts, lists = [], [], [[] for _ in _SPRING_LISTS]
        for sp in rows:
            n = 0 if sp is None else len(sp[0])
            starts.append(at)
            counts.append(n)
            at += n
            if n:
                for out, a in zip(lists, sp, strict=True):
                    out.append(a)
        self._put(self._d("springs/start"), np.array(starts, dtype=np.int64))
        self._put(self._d("springs/count"), np.array(counts, dtype=np.int64))
        for (c, dt, _), parts in zip(_SPRING_LISTS, lists, strict=True):
            if parts:
                self._put(self._d(f"springs/{c}"),
                          np.concatenate(parts).astype(dt, copy=False))

    def _put(self, ds, arr: np.ndarray) -> None:
        """Append the rows of a batch to one dataset: one resize, one write."""
        self.dataset_writes += 1
        self._append(ds, arr)

    @staticmethod
    def _append(ds, arr: np.ndarray) -> None:
        n0 = ds.shape[0]
        ds.resize(n0 + len(arr), axis=0)
        ds[n0:] = arr

    def _write_events(self, events: list[Event]) -> None:
        if "events" in self.f:
            del self.f["events"]
        dt = np.dtype([("step", "i8"), ("t", "f8"), ("kind", h5py.string_dtype()),
                       ("old", h5py.string_dtype()), ("new", h5py.string_dtype())])
        arr = np.array([(e.step, e.t, e.kind, e.old, e.new) for e in events], dtype=dt)
        ds = self.f.create_dataset("events", data=arr, fletcher32=True)
        ds.attrs[DIGEST_ATTR] = digests.events_digest(
            (e.step, e.t, e.kind, e.old, e.new) for e in events)
        self.events_written = len(events)
