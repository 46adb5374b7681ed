r"""HDF5 output of a run, written as it goes, and read back (docs/output.md).

Layout (schema 2; schema 1 files, written before, lack the starred entries):

* ``/time`` ``(n,)``; ``/energy/<component>`` and ``/energy/total`` ``(n,)``;
  ``/energy/relative_error`` ``(n,)``;
* ``/momentum/linear`` ``(n, 3)``, ``/momentum/angular`` ``(n, 3)``;
* ``/bodies/position`` ``(frames, N, 3)``, ``/bodies/quaternion`` ``(frames, N, 4)``
  (scalar first), ``/bodies/omega`` ``(frames, N, 3)`` (spatial), ``/bodies/time``;
  ``/bodies/velocity`` ``(frames, N, 3)``\*, ``/bodies/momentum_body`` ``(frames, N, 3)``
  (``Π``)\*, ``/bodies/step`` and ``/bodies/dissipated`` ``(frames,)``\*; for contacts
  with history (friction springs, damping) ``/bodies/force`` and ``/bodies/moment``
  ``(frames, N, 3)``\* and the committed springs of each frame in ``/springs``\*:
  ``start``, ``count`` ``(frames,)`` into the lists ``sphere``, ``partner`` ``(k,)`` and
  ``xi`` ``(k, 4)`` (spring and damping force, ``engine.potentials.friction``);
  ``/generalized/q`` and ``/generalized/v`` ``(frames, 2)``\* (generalized models);
* ``/bodies/mass``, ``/bodies/inertia``, ``/bodies/diameter`` ``(N,)``; ``/model/bonds``\*;
* ``/events``: changes of integrator or step (``step``, ``t``, ``kind``, ``old``, ``new``);
* ``/checkpoint``\*: the complete state at the last flush, to resume the run
  bit-identically (:meth:`engine.simulation.Simulation.resume_state`);
* attributes: ``schema_version``\*, ``scenario``, ``model``, ``integrator``, ``h``,
  ``version``, ``parameters`` (JSON of the full resolved parameter set, also one
  attribute per parameter on ``/parameters``), ``status`` (``running``/``complete``/
  ``failed``/``interrupted``) and ``message``.

Frames (the ``(frames, N, w)`` datasets under ``/bodies``) are chunked one frame per
chunk (a large model's frame split into blocks of :data:`FRAME_BLOCK_BODIES` bodies, see
:func:`frame_chunks`) and compressed
with :data:`FRAME_COMPRESSION` (LZF, built into h5py: no plugin needed to read them);
readers see plain arrays, so the layout (and ``schema_version``) is unchanged.  At scale
the checkpoint is not rewritten at every flush but kept within
:data:`CHECKPOINT_BUDGET` of the run's wall-clock time (BENCHMARKS.md, "Issue #9: HDF5
output at scale").

The file is written to ``<name>.partial`` and renamed over ``<name>`` when closed, so
an existing file is never half-overwritten; every appended chunk is flushed, so a run
that blows up, is interrupted or killed still leaves a readable file with everything
up to the last good step (and a checkpoint to resume from).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from .. import __version__
from ..layout import ENERGY_NAMES
from ..simulation import Event, Simulation
from .verify import (
    DIGEST_ATTR,
    Integrity,
    check_run,
    checkpoint_digest,
    choose_checkpoint,
    row_count,
)

SCHEMA_VERSION = 2
"""The layout written by :class:`RunWriter` (1: the first one, without the state)."""

_STATE_COLS = (("velocity", "v", 3), ("momentum_body", "pi", 3), ("force", "force", 3),
               ("moment", "moment", 3))

_SPRING_ROWS = ("start", "count")
"""Per frame, in ``/springs``: where its springs start in the lists, and how many."""
_SPRING_LISTS = (("sphere", "i4", ()), ("partner", "i4", ()), ("xi", "f8", (4,)))
"""The lists of ``/springs``, one row a spring (the committed friction springs of the
frames, :meth:`engine.forcefield.ForceField.committed_springs_sparse`)."""


VARIABLE_CHECKPOINT_ARRAYS = frozenset(
    {"nl_pairs", "springs_sphere", "springs_partner", "springs_xi"})
"""Checkpoint arrays whose length changes from one checkpoint to the next (resume format
2): stored resizable and resized in place."""
CHECKPOINT_GROUPS = ("checkpoint", "checkpoint_alt")
"""The two groups the checkpoint alternates between (docs/output.md)."""
_CHECKPOINT_OWN_ATTRS = frozenset({"serial", "n_records", "version", DIGEST_ATTR})
"""Attributes of a checkpoint group set by the writer, not taken from the state."""

FRAME_COMPRESSION: dict[str, Any] = {"compression": "lzf"}
"""The filter of the frame datasets: LZF, the fastest filter h5py has without plugins.
Measured on tori-pile frames (BENCHMARKS.md, "Issue #9: HDF5 output at scale"): LZF
writes float64 frames at ≈ 170 MB/s to 0.67 of their size, gzip level 1 (with or
without shuffle) at ≈ 57 MB/s to 0.62-0.64: three times the time for 5 % less disk
(in a 10⁵-sphere run, gzip made the writer slower than the stepping, LZF did not)."""

FRAME_BLOCK_BODIES = 131072
"""Bodies per chunk of a frame of a large model (4 MB of quaternions)."""

CHECKPOINT_BUDGET = 0.05
"""At most this fraction of the wall-clock time since the writer started goes into
checkpoints: a flush skips the checkpoint while the checkpoints written so far already
took more (one that takes less than :data:`CHECKPOINT_CHEAP` seconds is always written,
so small models keep a checkpoint at every flush).  :meth:`RunWriter.close` always
writes one."""

CHECKPOINT_CHEAP = 0.05
"""Seconds below which the last checkpoint counts as cheap (see :data:`CHECKPOINT_BUDGET`)."""

_CHUNK_CACHE_BYTES = 16 * 1024 * 1024
"""Raw chunk cache of the writer's file (h5py's default is 1 MB): a frame's chunks of a
large model (up to 4 MB each) are compressed and written from the cache at the flush."""


def frame_chunks(n_bodies: int, width: int) -> tuple[int, int, int]:
    """The chunk shape of a ``(frames, n_bodies, width)`` frame dataset: one frame, in
    blocks of at most :data:`FRAME_BLOCK_BODIES` bodies.  Never several frames: a
    compressed chunk that takes one more frame is rewritten, in a new place in the file,
    and a writer killed meanwhile could leave the frames before it unreadable (seen with
    64-frame chunks in ``tests/test_resume.py``'s killed run); a chunk written once stays
    where it is."""
    n = max(1, int(n_bodies))
    return (1, min(n, FRAME_BLOCK_BODIES), int(width))


class RunFileError(ValueError):
    """A file that cannot be read as a run, or lacks what was asked of it; the message
    is one line naming the file and what is wrong."""


class RunWriter:
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
    of the new rows (and the checkpoint's state) and a thread writes them, compressing
    the frames while the caller steps on (``rrp run --out``; one write in flight, its
    error raised by the next flush or :meth:`close`).  ``seconds`` holds the time spent
    writing the records and the checkpoints, and ``blocked`` the caller's time in
    :meth:`flush` (``benchmarks/bench_io_scale.py``)."""

    def __init__(self, path: str | Path, sim: Simulation, *, scenario: str = "",
                 frames: bool = True, checkpoint: bool = True, keep_frames: bool = True,
                 checkpoint_budget: float = CHECKPOINT_BUDGET,
                 background: bool = False) -> None:
        self.path = Path(path)
        self.partial = self.path.with_name(self.path.name + ".partial")
        self.sim = sim
        self.frames = frames and sim.record_frames
        self.checkpoint = checkpoint
        self._init_accounting(keep_frames, checkpoint_budget, background)
        self.written = 0
        self.base = 0  # rows in the file before this writer's first (resume)
        self.events_written = 0
        if self.path.parent and not self.path.parent.exists():
            raise OSError(f"the output directory {str(self.path.parent)!r} does not exist")
        if self.frames:
            sim.set_record_state(True)
        self.f = h5py.File(self.partial, "w", rdcc_nbytes=_CHUNK_CACHE_BYTES)
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
        f.attrs["status"] = "running"
        f.attrs["message"] = ""
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
        for c in [*self.components, "total", "relative_error"]:
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
        bonds = np.asarray(model.forcefield.bonds).reshape(-1, 2)
        if len(bonds):
            f.create_group("model").create_dataset("bonds", data=bonds, fletcher32=True)
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
                                          chunks=(65536, *w), **FRAME_COMPRESSION,
                                          fletcher32=True)
            for c, w in cols:
                gb.create_dataset(c, (0, n, w), maxshape=(None, n, w), dtype="f8",
                                  chunks=frame_chunks(n, w), **FRAME_COMPRESSION,
                                  fletcher32=True)
            gb.create_dataset("time", (0,), maxshape=(None,), dtype="f8", chunks=(4096,),
                              fletcher32=True)
            gb.create_dataset("step", (0,), maxshape=(None,), dtype="i8", chunks=(4096,),
                              fletcher32=True)
            gb.create_dataset("dissipated", (0,), maxshape=(None,), dtype="f8",
                              chunks=(4096,), fletcher32=True)
        self.flush(checkpoint=True)

    def _init_accounting(self, keep_frames: bool, checkpoint_budget: float,
                         background: bool) -> None:
        self.background = bool(background)
        if not 0.0 < float(checkpoint_budget) <= 1.0:
            raise ValueError(f"checkpoint_budget must be in (0, 1], got {checkpoint_budget}")
        self.keep_frames = bool(keep_frames)
        self.checkpoint_budget = float(checkpoint_budget)
        self.seconds = {"records": 0.0, "checkpoint": 0.0, "blocked": 0.0}
        self.checkpoints_written = 0
        self._pending: threading.Thread | None = None
        self._error: BaseException | None = None
        self._failed: dict[str, Any] | None = None
        self._last_checkpoint_cost = 0.0
        self._t_start = time.perf_counter()

    @property
    def _generalized(self) -> bool:
        return getattr(self.sim.model, "coordinates", "bodies") == "generalized"

    @classmethod
    def resume(cls, path: str | Path, sim: Simulation, source: str | Path,
               n_records: int, *, checkpoint: bool = True, keep_frames: bool = True,
               checkpoint_budget: float = CHECKPOINT_BUDGET,
               background: bool = False) -> RunWriter:
        """Append ``sim`` (a run resumed from ``source``'s checkpoint, taken after
        ``n_records`` rows) to a copy of ``source`` written as ``path``: the rows the
        file holds beyond the checkpoint (a run killed between the two) are dropped.
        ``source`` may be ``path``, ``path.partial`` or another run file; it is left
        untouched until :meth:`close` renames the copy over ``path``.  The other
        arguments are the constructor's."""
        self = cls.__new__(cls)
        self.path = Path(path)
        self.partial = self.path.with_name(self.path.name + ".partial")
        self.sim = sim
        self.checkpoint = checkpoint
        self._init_accounting(keep_frames, checkpoint_budget, background)
        self.written = 0
        self.base = int(n_records)
        self.events_written = 0
        if self.path.parent and not self.path.parent.exists():
            raise OSError(f"the output directory {str(self.path.parent)!r} does not exist")
        source = Path(source)
        if source.resolve() != self.partial.resolve():
            shutil.copyfile(source, self.partial)
        self.f = h5py.File(self.partial, "r+", locking=False, rdcc_nbytes=_CHUNK_CACHE_BYTES)
        f = self.f
        self.frames = "position" in f["bodies"] and sim.record_frames
        if self.frames:
            sim.set_record_state(True)
        self.components = [c for c in ENERGY_NAMES if c in f["energy"]]
        # drop rows written after the checkpoint (a run killed between the two)
        for ds in _row_datasets(f):
            if ds.shape[0] > self.base:
                ds.resize(self.base, axis=0)
        if "springs" in f:
            gs = f["springs"]
            k = min(self.base, gs["start"].shape[0], gs["count"].shape[0])
            end = int(gs["start"][k - 1] + gs["count"][k - 1]) if k else 0
            for c, _, _ in _SPRING_LISTS:
                if gs[c].shape[0] > end:
                    gs[c].resize(end, axis=0)
        f.attrs["status"] = "running"
        f.attrs["message"] = ""
        self._mark_writer()
        self.flush(checkpoint=True)
        return self

    def _mark_writer(self) -> None:
        self.f.attrs["writer_pid"] = os.getpid()
        self.f.attrs["writer_host"] = socket.gethostname()

    def flush(self, *, checkpoint: bool | None = None) -> None:
        """Append the records not yet written and the events, write the checkpoint
        (``checkpoint=None``: when due, see :data:`CHECKPOINT_BUDGET`; ``True``: now;
        ``False``: not), flush to disk.  Only the new rows are concatenated
        (:meth:`~engine.simulation.TimeSeries.tail`), so a flush costs what it writes.

        With ``background``, the rows (copies) and the checkpoint are taken here and
        written by a thread while the caller goes on stepping; the next flush first
        waits for it (one write in flight) and raises what it raised (``OSError``)."""
        t0 = time.perf_counter()
        self._wait()
        job = self._collect(checkpoint)
        if self.background:
            self._pending = threading.Thread(target=self._write_job, args=(job,),
                                             name="rrp-run-writer")
            self._pending.start()
        else:
            self._write_job(job)
            self._raise_error()
        self.seconds["blocked"] += time.perf_counter() - t0

    def _wait(self) -> None:
        """Wait for the write in flight, if any, and raise its error; a write that
        failed before is taken again first (what it had not written yet), so that no
        rows are skipped once the cause is gone (a full disk)."""
        if self._pending is not None:
            self._pending.join()
            self._pending = None
        self._raise_error()
        if self._failed is not None:
            job, self._failed = self._failed, None
            self._write_job(job)
            self._raise_error()

    def _raise_error(self) -> None:
        if self._error is not None:
            exc, self._error = self._error, None
            raise exc

    def _collect(self, checkpoint: bool | None) -> dict[str, Any]:
        """What a flush writes, taken from the simulation now (copies): the new rows,
        their springs, the events, the checkpoint if due."""
        a = self.sim.series.tail(self.written)
        k = len(a["t"])
        job: dict[str, Any] = {"rows": a, "k": k, "events": None, "checkpoint": None,
                               "e_ref": (self.sim.e_ref, self.sim.e_scale)}
        if k and "springs" in self.f:
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
        return job

    def _write_job(self, job: dict[str, Any]) -> None:
        """Write what :meth:`_collect` took (on the caller's thread or the writer's;
        an exception is kept for :meth:`_raise_error`)."""
        try:
            t0 = time.perf_counter()
            if job["k"]:
                self._write_rows(job["rows"], job["k"], job.get("springs"), *job["e_ref"])
                job["k"] = 0
            if job["events"] is not None:
                self._write_events(job["events"])
                job["events"] = None
            self.f.flush()
            self.seconds["records"] += time.perf_counter() - t0
            if job["checkpoint"] is not None:
                t0 = time.perf_counter()
                self._write_checkpoint(*job["checkpoint"])
                self.f.flush()
                job["checkpoint"] = None
                self._last_checkpoint_cost = time.perf_counter() - t0
                self.seconds["checkpoint"] += self._last_checkpoint_cost
                self.checkpoints_written += 1
        except BaseException as exc:  # noqa: BLE001 - raised again by the caller
            self._error = exc
            self._failed = job

    def _write_rows(self, a: dict[str, np.ndarray], k: int, springs: list | None,
                    e_ref: float, e_scale: float) -> None:
        """Append ``k`` rows ``a`` of the series (and their springs) to the datasets
        (reads nothing of the simulation: it may be stepping meanwhile)."""
        idx = ENERGY_NAMES.index
        total = a["energy"].sum(axis=1)
        cols: dict[str, Any] = {c: a["energy"][:, idx(c)] for c in self.components}
        cols["total"] = total
        cols["relative_error"] = (total - e_ref) / e_scale
        self._append(self.f["time"], a["t"])
        for c, arr in cols.items():
            self._append(self.f["energy"][c], arr)
        self._append(self.f["momentum/linear"], a["P"])
        self._append(self.f["momentum/angular"], a["L"])
        if not self.frames:
            return
        gb = self.f["bodies"]
        self._append(gb["position"], a["x"])
        self._append(gb["quaternion"], a["q"])
        self._append(gb["omega"], a["omega"])
        self._append(gb["time"], a["t"])
        if "step" in gb:
            self._append(gb["step"], a.get("step", np.full(k, -1)))
        if "dissipated" in gb:
            self._append(gb["dissipated"], a["energy"][:, idx("dissipated")])
        for c, key, w in _STATE_COLS:
            if c in gb:
                self._append(gb[c], a.get(key, np.full((k, a["x"].shape[1], w), np.nan)))
        if "generalized" in self.f:
            for c in ("q", "v"):
                self._append(self.f["generalized"][c], a.get("g" + c, np.full((k, 2), np.nan)))
        if "springs" in self.f:
            self._append_springs(springs or [None] * k)

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
        self.f.flush()
        for k in [k for k in g if k not in d]:  # (a group of an older layout: resume)
            del g[k]
        for k in [k for k in g.attrs if k not in d and k not in _CHECKPOINT_OWN_ATTRS]:
            del g.attrs[k]
        arrays: dict[str, np.ndarray] = {}  # what is stored, for the digest
        attrs: dict[str, Any] = {"n_records": int(n_records), "version": __version__}
        for k, v in d.items():
            if isinstance(v, np.ndarray):
                arrays[k] = v
                old = g[k] if k in g else None
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
        self.f.flush()
        g.attrs["serial"] = newest + 1

    def close(self, status: str = "complete", message: str = "") -> Path:
        """Write the remaining records, the final status, and move the file in place."""
        if self.f.id.valid:
            background, self.background = self.background, False
            try:
                self.flush(checkpoint=True)
            finally:
                self.background = background
            self.f.attrs["status"] = status
            self.f.attrs["message"] = message
            self.f.attrs["steps"] = self.sim.step_index
            self.f.attrs["t_final"] = self.sim.t
            self.f.close()
            os.replace(self.partial, self.path)
        return self.path

    def __enter__(self) -> RunWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close("complete")
        elif issubclass(exc_type, KeyboardInterrupt):
            self.close("interrupted", "interrupted by the user")
        else:
            self.close("failed", f"{exc_type.__name__}: {exc}")

    def _append_springs(self, rows: list) -> None:
        """Append the springs of the rows (``None``: a row recorded without them)."""
        gs = self.f["springs"]
        at = gs["sphere"].shape[0]
        starts, counts, lists = [], [], [[] for _ in _SPRING_LISTS]
        for sp in rows:
            n = 0 if sp is None else len(sp[0])
            starts.append(at)
            counts.append(n)
            at += n
            if n:
                for out, a in zip(lists, sp, strict=True):
                    out.append(a)
        self._append(gs["start"], np.array(starts, dtype=np.int64))
        self._append(gs["count"], np.array(counts, dtype=np.int64))
        for (c, dt, _), parts in zip(_SPRING_LISTS, lists, strict=True):
            if parts:
                self._append(gs[c], np.concatenate(parts).astype(dt, copy=False))

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
        self.f.create_dataset("events", data=arr, fletcher32=True)
        self.events_written = len(events)


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
    return out


def _open(path: str | Path, mode: str = "r") -> h5py.File:
    """Open a run file (also one a writer still holds, or that a killed writer left)."""
    p = Path(path)
    if not p.exists():
        raise RunFileError(f"{p}: no such file")
    try:
        return h5py.File(p, mode, locking=False)
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


def read_run(path: str | Path) -> dict[str, Any]:
    """Read a run file back into plain arrays (for scripts and tests); a chunk that
    fails its checksum is a :class:`RunFileError` naming it."""
    with _open(path) as f:
        try:
            return _read_all(f)
        except OSError:
            report = check_run(f, path, deep=True)
            raise RunFileError(report.line() if report.problems else
                               f"{path}: the file is damaged (an HDF5 read error)") from None


def _read_all(f: h5py.File) -> dict[str, Any]:
    out: dict[str, Any] = {}
    out["attrs"] = dict(f.attrs)
    out["parameters"] = json.loads(f.attrs["parameters"])
    out["time"] = f["time"][()]
    out["energy"] = {k: f["energy"][k][()] for k in f["energy"]}
    out["momentum"] = {k: f["momentum"][k][()] for k in f["momentum"]}
    out["bodies"] = {k: f["bodies"][k][()] for k in f["bodies"]}
    for grp in ("generalized", "model", "springs"):
        if grp in f:
            out[grp] = {k: f[grp][k][()] for k in f[grp]}
    if "events" in f:
        out["events"] = f["events"][()]
    return out


@dataclass
class Frame:
    """The state recorded at one frame of a run file.  ``v`` and ``pi`` are ``None``
    where the file does not hold them (schema 1; ``Π`` in generalized coordinates),
    ``step`` is ``None`` in schema 1; ``gq``/``gv``: the node ``(q, v)`` of a model in
    generalized coordinates; ``springs``, ``F``, ``RM``: for contacts with history, the
    committed friction springs ``(sphere, partner, xi)`` and the forces and moments
    (``None`` in files written before frames kept them)."""

    index: int
    t: float
    step: int | None
    x: np.ndarray
    v: np.ndarray | None
    q: np.ndarray
    omega: np.ndarray
    pi: np.ndarray | None
    D: float
    gq: np.ndarray | None = None
    gv: np.ndarray | None = None
    springs: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    F: np.ndarray | None = None
    RM: np.ndarray | None = None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def _s(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


class RunFile:
    """A run file (``.h5``, or the ``.h5.partial`` of a run still going or killed),
    open read-only: the series, the frames one at a time, the events, and what is
    needed to branch from a frame or resume the run.  Errors are :class:`RunFileError`
    (one line).  Use as a context manager or :meth:`close` it."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._f = _open(self.path)
        try:
            self._read_header()
        except RunFileError:
            self._f.close()
            raise
        except (KeyError, ValueError, TypeError) as exc:
            self._f.close()
            raise RunFileError(f"{self.path}: not a complete RRP Studio run file "
                               f"({type(exc).__name__}: {exc})") from None
        except OSError:  # a chunk that fails its checksum: say which, and what is left
            report = self.verify(deep=True)
            self._f.close()
            raise RunFileError(report.line() if report.problems else
                               f"{self.path}: the file is damaged (an HDF5 read error)"
                               ) from None

    def _read_header(self) -> None:
        f, p = self._f, self.path
        a = f.attrs
        missing = [k for k in ("model", "parameters", "integrator", "h") if k not in a]
        if missing or "time" not in f:
            raise RunFileError(f"{p}: not an RRP Studio run file (no "
                               f"{'/time' if 'time' not in f else 'attribute ' + missing[0]})")
        for grp in ("energy", "momentum"):
            if grp not in f:
                raise RunFileError(f"{p}: the run file lacks /{grp}")
        self.schema_version = int(a.get("schema_version", 1))
        self.model_name = _s(a["model"])
        self.scenario = _s(a.get("scenario", self.model_name))
        self.params: dict[str, Any] = json.loads(_s(a["parameters"]))
        self.integrator = _s(a["integrator"])
        self.h = float(a["h"])
        self.version = _s(a.get("version", "?"))
        self.record_every = int(a.get("record_every", 1))
        self.e_ref = float(a.get("energy_reference", np.nan))
        self.e_scale = float(a.get("energy_scale", np.nan))
        self.coordinates = _s(a.get("coordinates", "bodies"))
        status, message = _s(a.get("status", "unknown")), _s(a.get("message", ""))
        self.status_text = status
        self.writer_pid = int(a["writer_pid"]) if "writer_pid" in a else None
        """The process that writes (or wrote) the file, if recorded."""
        if status == "running":
            pid, host = a.get("writer_pid"), _s(a.get("writer_host", ""))
            gone = self.path.name.endswith(".partial") and (
                pid is None or (host == socket.gethostname() and not _pid_alive(int(pid))))
            if gone:
                status = "interrupted"
                self.status_text = "interrupted (file not closed)"
                t = float(f["time"][-1]) if len(f["time"]) else 0.0
                message = (f"interrupted (file not closed): the run stopped at t = {t:.6g} "
                           "without closing its file")
        self.status, self.message = status, message
        self.times = f["time"][()]
        self.components = [c for c in f["energy"] if c not in ("total", "relative_error")]
        self.components.sort(key=lambda c: ENERGY_NAMES.index(c) if c in ENERGY_NAMES
                             else len(ENERGY_NAMES))
        self.energy = {k: f["energy"][k][()] for k in f["energy"]}
        self.P = f["momentum/linear"][()] if "linear" in f["momentum"] else None
        self.L = f["momentum/angular"][()] if "angular" in f["momentum"] else None
        gb = f.get("bodies")
        self._frames = gb is not None and "position" in gb
        self.frame_times = gb["time"][()] if self._frames else np.zeros(0)
        # a file of a killed writer may hold a frame row more in one dataset than another
        if self._frames:
            self.n_frames = min(gb[c].shape[0] for c in ("position", "quaternion", "omega",
                                                         "time"))
            self.frame_times = self.frame_times[:self.n_frames]
        else:
            self.n_frames = 0
        self.events: list[Event] = []
        if "events" in f:
            for r in f["events"][()]:
                self.events.append(Event(int(r["step"]), float(r["t"]), _s(r["kind"]),
                                         _s(r["old"]), _s(r["new"])))
        self.bonds = f["model/bonds"][()] if "model" in f and "bonds" in f["model"] \
            else np.zeros((0, 2), dtype=np.int64)

    # ------------------------------------------------------------------ frames
    def frame(self, k: int) -> Frame:
        """Frame ``k`` (negative counts from the end); a frame that cannot be read (a
        checksum error) is a :class:`RunFileError` that says so."""
        try:
            return self._frame(k)
        except OSError as exc:
            raise RunFileError(f"{self.path}: frame {k} cannot be read, the file is damaged "
                               f"there ({exc}); the other frames may still be read") from None

    def _frame(self, k: int) -> Frame:
        if not self._frames:
            raise RunFileError(f"{self.path}: the run holds no frames (written with "
                               "--no-frames)")
        n = self.n_frames
        if not -n <= k < n:
            raise RunFileError(f"{self.path}: no frame {k} (the run has {n} frames)")
        k = k % n
        gb = self._f["bodies"]

        def opt(name):
            return gb[name][k] if name in gb and gb[name].shape[0] > k else None

        step = opt("step")
        D = opt("dissipated")
        if D is None and "dissipated" in self.energy and len(self.energy["dissipated"]) > k:
            D = self.energy["dissipated"][k] if len(self.times) == n else 0.0
        gq = gv = None
        if "generalized" in self._f:
            g = self._f["generalized"]
            gq = g["q"][k] if g["q"].shape[0] > k else None
            gv = g["v"][k] if g["v"].shape[0] > k else None
        springs = None
        if "springs" in self._f:
            gs = self._f["springs"]
            if gs["start"].shape[0] > k and gs["count"].shape[0] > k:
                a = int(gs["start"][k])
                b = a + int(gs["count"][k])
                if all(gs[c].shape[0] >= b for c, _, _ in _SPRING_LISTS):
                    springs = tuple(gs[c][a:b] for c, _, _ in _SPRING_LISTS)
        return Frame(k, float(gb["time"][k]), None if step is None else int(step),
                     gb["position"][k], opt("velocity"), gb["quaternion"][k], gb["omega"][k],
                     opt("momentum_body"), float(D) if D is not None else 0.0, gq, gv,
                     springs, opt("force"), opt("moment"))

    def can_branch(self, k: int) -> tuple[bool, str]:
        """Whether a run can start from frame ``k`` (:meth:`Simulation.from_frame`), and
        if not, why (one line)."""
        if not self._frames:
            return False, "the run holds no frames (written with --no-frames)"
        if not -self.n_frames <= k < self.n_frames:
            return False, f"no frame {k} (the run has {self.n_frames} frames)"
        gb = self._f["bodies"]
        if "velocity" not in gb:
            return False, (f"the file (schema {self.schema_version}, RRP Studio "
                           f"{self.version}) holds no velocities: it can be replayed, not "
                           "branched; run it again with this version to branch from it")
        fr = self.frame(k)
        if fr.v is None or not np.all(np.isfinite(fr.v)):
            return False, f"frame {k % self.n_frames} was recorded without its velocities"
        return True, ""

    # ------------------------------------------------------------------ model, resume
    def build_model(self):
        """The model of the run, built from the stored name and parameters; a
        :class:`RunFileError` when this version's model has other parameters."""
        from ..models import get_model_spec
        from ..models.base import ParameterError

        try:
            spec = get_model_spec(self.model_name)
        except (KeyError, ValueError) as exc:
            raise RunFileError(f"{self.path}: {exc.args[0] if exc.args else exc}") from None
        known = {p.name for p in spec.schema}
        added, removed = sorted(known - set(self.params)), sorted(set(self.params) - known)
        if added or removed:
            what = "; ".join(x for x in (
                f"new parameters {', '.join(added)}" if added else "",
                f"parameters no longer known: {', '.join(removed)}" if removed else "") if x)
            raise RunFileError(
                f"{self.path}: written by RRP Studio {self.version} for another version of "
                f"model {self.model_name!r} ({what})")
        try:
            return spec.make(self.params)
        except ParameterError as exc:
            raise RunFileError(f"{self.path}: written by RRP Studio {self.version}; its "
                               f"parameters do not fit this version: {exc}") from None

    @property
    def _checkpoint_group(self):
        """The complete checkpoint group with the largest serial (see
        ``RunWriter._write_checkpoint``), or ``None``."""
        best, best_serial = None, -1
        for name in CHECKPOINT_GROUPS:
            if name in self._f:
                serial = int(self._f[name].attrs.get("serial", 0 if name == "checkpoint"
                                                     and "n_records" in self._f[name].attrs
                                                     else -1))
                if serial > best_serial:
                    best, best_serial = self._f[name], serial
        return best

    @property
    def has_checkpoint(self) -> bool:
        return self._checkpoint_group is not None

    def verify(self, *, deep: bool = False) -> Integrity:
        """Check the file's structure, checkpoints and (``deep``) every chunk's checksum
        (:func:`engine.io.verify.check_run`); reads only."""
        return check_run(self._f, self.path, deep=deep)

    def check_resumable(self) -> list[str]:
        """Verify the whole file before a resume (:meth:`verify` with ``deep``): a
        :class:`RunFileError` (one line: what is wrong, what can still be read) when it is
        damaged or its checkpoints are; else the notes to show (a checkpoint that cannot
        be verified, a fallback to the previous one)."""
        report = self.verify(deep=True)
        if report.problems:
            raise RunFileError(report.line("resume"))
        return report.notes

    def resume_state(self) -> tuple[dict, int]:
        """The checkpoint (:meth:`Simulation.resume_state`'s dict) and the number of rows
        the file held when it was taken: the newest checkpoint whose digest holds (or
        that has none, written before); :class:`RunFileError` when the file has none, or
        none intact."""
        if not self.has_checkpoint:
            why = (f"it was written by RRP Studio {self.version} (schema "
                   f"{self.schema_version}), before runs kept one" if self.schema_version < 2
                   else "the run was written without one")
            raise RunFileError(f"{self.path}: no checkpoint to resume from: {why}")
        chosen, _, checks = choose_checkpoint(self._f, row_count(self._f))
        if chosen is None:
            raise RunFileError(f"{self.path}: no intact checkpoint to resume from (" + "; ".join(
                f"/{c.name}: {c.why}" for c in checks) + ")")
        arrays, attrs = chosen
        d: dict[str, Any] = dict(arrays)
        for k, v in attrs.items():
            d[k] = _s(v) if isinstance(v, bytes | str) else v.item() if hasattr(v, "item") \
                else v
        d["events"] = [Event(int(s), float(t), str(k), str(o), str(n))
                       for s, t, k, o, n in json.loads(d.get("events", "[]"))]
        for b in ("record_frames", "record_state"):
            d[b] = bool(d.get(b, 0))
        d.pop("serial", None)
        d.pop(DIGEST_ATTR, None)
        n_records = int(d.pop("n_records"))
        if n_records > len(self.times):
            raise RunFileError(f"{self.path}: the checkpoint is newer than the records "
                               f"({n_records} > {len(self.times)}): the file is damaged")
        return d, n_records

    # ------------------------------------------------------------------ lifetime
    def close(self) -> None:
        if self._f.id.valid:
            self._f.close()

    def __enter__(self) -> RunFile:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"RunFile({str(self.path)!r}: {self.scenario}, {self.model_name}, "
                f"{self.integrator}, h = {self.h:g}, {len(self.times)} records, "
                f"{self.n_frames} frames, {self.status})")
