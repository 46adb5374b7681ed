r"""HDF5 output of a run, written as it goes, and read back (docs/output.md).

Layout (schema 2; schema 1 files, written before, lack the starred entries):

* ``/time`` ``(n,)``; ``/energy/<component>`` and ``/energy/total`` ``(n,)``;
  ``/energy/relative_error`` ``(n,)``; ``/energy/terrace_gap`` ``(n,)`` (energy-stepping);
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
:func:`frame_chunks`), uncompressed unless ``compress`` (``rrp run --compress``: then
with :data:`FRAME_COMPRESSION`, LZF, built into h5py: no plugin needed to read them;
issue #36 item 15); readers see plain arrays, so the layout (and ``schema_version``)
is unchanged.  At scale the checkpoint is not rewritten at every flush but kept within
:data:`CHECKPOINT_BUDGET` of the run's wall-clock time (BENCHMARKS.md, "Issue #9: HDF5
output at scale").

One writer per output: a writer takes :class:`~engine.io.outlock.OutputLock` on
``<name>`` before it creates anything (a second one is refused in one line), writes
``<name>.<pid>.partial`` and renames it over ``<name>`` (``os.replace``, same directory)
once it is closed; an existing complete run is never replaced by a run that did not
complete (that one keeps its ``.partial`` name).  Every appended chunk is flushed, so a
run that blows up, is interrupted or killed still leaves a readable file with
everything up to the last good step (and a checkpoint to resume from).  Before each
write the space for it is held (:mod:`engine.io.reserve`): a full disk, a quota or a
file-size limit stops the writer before HDF5 writes anything (:class:`OutputWriteError`,
the file whole up to its last write), and no h5py object is closed or freed after a
failed write (that crashed HDF5).  docs/output.md, "Guarantees".
"""

from __future__ import annotations

import errno
import functools
import json
import os
import re
import resource
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
from . import digests
from .batching import CHECKPOINT_INTERVAL, batch_due, record_bytes
from .closing import (
    _METADATA_SLACK,
    _chunk_layout,
    _close_step,
    _new_chunks,
    _sync_dir,
    check_output_name,
)
from .digests import SCHEMA_VERSION, DigestMismatch, read_status
from .outlock import OutputLock
from .reserve import OutputSpaceError, SpaceReserve
from .schema import CHECKPOINT_GROUPS, RunFileError, check_datatypes, open_run_file
from .verify import (
    DIGEST_ATTR,
    READ_ERRORS,
    Integrity,
    check_run,
    checkpoint_digest,
    choose_checkpoint,
    first_line,
    future_schema,
    row_count,
)

_STATE_COLS = (("velocity", "v", 3), ("momentum_body", "pi", 3), ("force", "force", 3),
               ("moment", "moment", 3))

TERRACE_GAP = "terrace_gap"
"""``/energy/terrace_gap``: ``V − V_ε`` of each record of an event-driven scheme
(energy-stepping), NaN in rows of another; written when the run uses one (issue #33
item 6, docs/output.md); files without it still read."""


def _terraced(sim: Simulation) -> bool:
    """Whether ``sim`` records a terrace gap: its scheme is event-driven, or a row of
    its series has one (an app export after a switch away from energy-stepping)."""
    extra = getattr(sim.series, "_extra", ())
    return bool(sim.integrator.event_driven or any(TERRACE_GAP in e for e in extra))


_SPRING_ROWS = ("start", "count")
"""Per frame, in ``/springs``: where its springs start in the lists, and how many."""
_SPRING_LISTS = (("sphere", "i4", ()), ("partner", "i4", ()), ("xi", "f8", (4,)))
"""The lists of ``/springs``, one row a spring (the committed friction springs of the
frames, :meth:`engine.forcefield.ForceField.committed_springs_sparse`)."""


VARIABLE_CHECKPOINT_ARRAYS = frozenset(
    {"nl_pairs", "springs_sphere", "springs_partner", "springs_xi",
     # energy-stepping's stepper (its terms and contact list grow and shrink)
     "es_state_TI", "es_state_TF", "es_state_tpred", "es_state_cidx"})
"""Checkpoint arrays whose length changes from one checkpoint to the next (resume format
2): stored resizable and resized in place."""
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

FRAME_CHUNK_BYTES = 256 * 1024
"""A chunk of a small model's frames holds as many frames as fit in this many bytes of
quaternions (the widest frame dataset), at most :data:`FRAME_CHUNK_FRAMES` (issue #36,
item 15)."""

FRAME_CHUNK_FRAMES = 64
"""At most this many frames a chunk (a pendulum's chunk would otherwise hold thousands
of frames, allocated whole at its first frame)."""

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
    """The chunk shape of a ``(frames, n_bodies, width)`` frame dataset (issue #36, item
    15): ``K`` frames, as many as fit in :data:`FRAME_CHUNK_BYTES` of quaternions (1 to
    :data:`FRAME_CHUNK_FRAMES`; the same ``K`` for every frame dataset of a model), in
    blocks of at most :data:`FRAME_BLOCK_BODIES` bodies.  A batch of records is then a
    few chunk writes, not one a frame (a chunk's fixed cost in HDF5 was most of a small
    model's record).  Chunks of several frames are stored without compression
    (:func:`frame_filters`), so every write of the chunk has the same length and HDF5
    rewrites it where it is, as the series' chunks are: a compressed chunk that takes
    one more frame grows, is moved elsewhere in the file and its old place freed for
    reuse before the chunk index on disk points at the new one, and a writer killed
    meanwhile could leave the frames before it unreadable (seen with 64-frame LZF chunks
    in ``tests/test_resume.py``'s killed run).  A large model's frame (over
    :data:`FRAME_CHUNK_BYTES` / 2 of quaternions: more than 4 096 bodies) is a chunk of its
    own, compressed, written once."""
    n = max(1, int(n_bodies))
    k = max(1, min(FRAME_CHUNK_FRAMES, FRAME_CHUNK_BYTES // (8 * 4 * n)))
    return (k, min(n, FRAME_BLOCK_BODIES), int(width))


def frame_filters(chunks: tuple[int, ...], compress: bool = False) -> dict[str, Any]:
    """The filters of a frame dataset chunked ``chunks`` (:func:`frame_chunks`): none
    by default (issue #36 item 15: LZF cost the writer of a 10⁴-sphere pile ≈ 10 ms a
    record against ≈ 2 ms uncompressed, and the run 2.1× its time without ``--out``);
    with ``compress`` (``rrp run --compress``), :data:`FRAME_COMPRESSION` for a chunk of
    one frame (written once), still none for a chunk of several frames (rewritten in
    place as it fills).  Fletcher-32 is the caller's, always."""
    return dict(FRAME_COMPRESSION) if compress and chunks[0] == 1 else {}


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


_PARTIAL_PID = re.compile(r"^(?P<out>.+)\.(?P<pid>\d+)\.partial$")


def partial_name(path: str | Path, pid: int | None = None) -> Path:
    """The temporary name a writer of ``path`` writes: ``<name>.<pid>.partial``."""
    p = Path(path)
    return p.with_name(f"{p.name}.{os.getpid() if pid is None else pid}.partial")


def is_partial_name(path: str | Path) -> bool:
    """Whether ``path`` names a writer's temporary file (``<name>[.<pid>].partial``)."""
    return Path(path).name.endswith(".partial") and len(Path(path).name) > len(".partial")


def output_for(path: str | Path, read: bool = True) -> Path:
    """The output a run continued from ``path`` (``rrp run --resume``) is written to:
    ``path`` itself, or for a ``.partial`` the output it was written for (its
    ``output_name`` attribute when ``read``, else its name alone)."""
    p = Path(path)
    if not is_partial_name(p):
        return p
    return output_of_partial(p, _output_name_attr(p) if read else None)


def output_of_partial(path: str | Path, output_name: str | None = None) -> Path:
    """The output a ``.partial`` file is written for: ``<name>`` of ``<name>.<pid>.partial``
    (and of ``<name>.partial``, the name before issue #26).  ``output_name``: the
    file's ``output_name`` attribute, where known (it settles names like
    ``data.7.partial``)."""
    p = Path(path)
    name = p.name[:-len(".partial")]
    if output_name and name.startswith(output_name + ".") and \
            name[len(output_name) + 1:].isdigit():
        return p.with_name(output_name)
    m = _PARTIAL_PID.match(p.name)
    if m and m["out"].lower().endswith((".h5", ".hdf5")):
        return p.with_name(m["out"])
    return p.with_name(name)


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
        self.f = h5py.File(self.partial, "w", rdcc_nbytes=_CHUNK_CACHE_BYTES)
        self._reserve = SpaceReserve(self.partial)
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
                                          chunks=(65536, *w),
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
        self._first_flush()

    def _first_flush(self) -> None:
        """The first write (layout and checkpoint); if it fails in line, the file is
        closed (and removed: it holds nothing) before the failure is raised."""
        try:
            self.flush(checkpoint=True)
        except OutputWriteError:
            self.close("failed")  # (raises the failure)
            raise

    def _start(self, lock: OutputLock | None, keep_complete: bool, extends: bool) -> None:
        """Take the output's lock (or adopt the caller's) before anything is created."""
        self._lock = lock if lock is not None else OutputLock(self.path)
        self._lock.acquire()
        self.keep_complete = bool(keep_complete)
        self._extends = extends  # the file continues the run now at ``path`` (resume)
        self._ds: dict[str, Any] = {}
        self._reserve: SpaceReserve | None = None
        self.failure: OutputWriteError | None = None
        self._healthy = True  # False: h5py failed mid-write; the handle is not touched
        self._file_t = float(self.sim.t)
        self._file_step = int(self.sim.step_index)
        self._rows_in_file = 0
        self.checkpoint_t: float | None = None
        """The time of the last checkpoint in the file (what a resume starts from)."""
        self.abandoned = False
        self.closed = False

    def _init_accounting(self, keep_frames: bool, checkpoint_budget: float,
                         background: bool) -> None:
        self.background = bool(background)
        if not 0.0 < float(checkpoint_budget) <= 1.0:
            raise ValueError(f"checkpoint_budget must be in (0, 1], got {checkpoint_budget}")
        self.keep_frames = bool(keep_frames)
        self.checkpoint_budget = float(checkpoint_budget)
        self.seconds = {"records": 0.0, "checkpoint": 0.0, "blocked": 0.0,
                        "records_cpu": 0.0}  # (its thread's CPU in the records)
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
        self.f = h5py.File(self.partial, "r+", locking=False, rdcc_nbytes=_CHUNK_CACHE_BYTES)
        try:  # (a copy was checked; a file extended in place is checked here: item 4)
            check_datatypes(self.f, self.partial)
        except RunFileError:
            self._lock.release()
            raise
        self._reserve = SpaceReserve(self.partial)
        f = self.f
        self.frames = "position" in f["bodies"] and sim.record_frames
        if self.frames:
            sim.set_record_state(True)
        self.components = [c for c in ENERGY_NAMES if c in f["energy"]]
        try:  # (nothing is changed before the space for it is held)
            self._reserve.ensure(_start_bound(sim) + CLOSE_RESERVE)
        except OutputSpaceError as exc:
            self.f.close()
            self._reserve.close()
            self._lock.release()
            raise OutputWriteError(exc.errno, f"cannot write {self.partial}: "
                                   f"{exc.strerror}", self.partial) from None
        # drop rows written after the checkpoint (a run killed between the two)
        self._trim_rows(self.base)
        self._mark_running()
        self._mark_writer()
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

    def _write_job(self, job: dict[str, Any]) -> None:
        """Write what :meth:`_collect` took (on the caller's thread or the writer's,
        never both: one write in flight).  The space is held first
        (:mod:`engine.io.reserve`); a failure is kept in :attr:`failure` for the caller
        (:meth:`_wait`), and after one nothing is written any more."""
        if self.failure is not None:
            return
        try:
            if self._reserve.removed():
                raise OutputSpaceError(errno.ENOENT, "the file was removed while the run "
                                       "wrote it")
            self._reserve.ensure(self._bound(job) + CLOSE_RESERVE)
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
            self.f.flush()
            self._rows_in_file = job["rows_end"]
            self._file_t, self._file_step = job["t"], job["step"]
            self.seconds["records"] += time.perf_counter() - t0
            self.seconds["records_cpu"] += time.thread_time() - c0
            if job["checkpoint"] is not None:
                t0 = time.perf_counter()
                self._write_checkpoint(*job["checkpoint"])
                self.f.flush()
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
            except OutputSpaceError as exc:
                if n > 1:
                    n = (n + 1) // 2
                    continue
                self._fail(exc.errno, f"cannot write {self.partial}: {exc.strerror}")
                return
            try:
                self._write_rows(sub["rows"], n, sub["springs"], *job["e_ref"])
                self.f.flush()
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
        self.f.flush()
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
                    self._trim_rows(self._rows_in_file)
                    self._write_status(status, self.failure.message, self._file_step,
                                       self._file_t)
                except Exception:  # noqa: BLE001
                    self._healthy = False
        _close_step("marked")
        if self._healthy:
            try:
                self.f.close()
                self._ds.clear()
                os.fsync(self._reserve.fd)
            except Exception as exc:  # noqa: BLE001
                self._healthy = False
                if self.failure is None:
                    self._fail(getattr(exc, "errno", None), f"cannot close {self.partial}: "
                               f"{_first_line(getattr(exc, 'strerror', None) or exc)}")
                    self._describe_failure()
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

    def __enter__(self) -> RunWriter:
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


def _same_file(a: Path, b: Path) -> bool:
    return Path(a).resolve() == Path(b).resolve()


def _output_name_attr(path: Path) -> str | None:
    """The ``output_name`` attribute of a run file (``None``: unreadable or absent)."""
    try:
        with open_run_file(path) as f:
            v = f.attrs.get("output_name")
    except Exception:  # noqa: BLE001 - (the caller reads the file and says what is wrong)
        return None
    return _s(v) if v is not None else None


def _is_complete_run(path: Path) -> bool:
    """Whether ``path`` holds a run file with status ``complete``."""
    if not path.is_file():
        return False
    try:
        with open_run_file(path) as f:
            return read_status(f)[0] == "complete"
    except Exception:  # noqa: BLE001 - not a run file: not a complete run
        return False


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
    except OSError as exc:
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
        if report is None or report.problems or not same:
            dest.unlink(missing_ok=True)
            raise RunFileError(f"{source}: its copy {dest} fails its checks ({why}): the "
                               "file changed while it was copied; nothing was written, "
                               "try again")
    finally:
        lock.release()


_open = open_run_file
"""(the name the readers here use)"""


def read_run(path: str | Path) -> dict[str, Any]:
    """Read a run file back into plain arrays (for scripts and tests), checked first
    (:func:`~engine.io.verify.check_run`, ``deep``): damage to what it returns (a chunk
    that fails its checksum, rows that do not match their digest, a damaged header or
    metadata) is a :class:`RunFileError` naming it."""
    with _open(path) as f:
        report = check_run(f, path, deep=True)
        if report.damaged("series", "frames", "header", "model", "metadata"):
            raise RunFileError(report.line())
        try:
            return _read_all(f)
        except READ_ERRORS as exc:
            raise _damaged(Path(path), "the run", exc) from None


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


def _damaged(path: Path, what: str, exc: BaseException) -> RunFileError:
    return RunFileError(f"{path}: {what} cannot be read: the file is damaged "
                        f"({type(exc).__name__}: {first_line(exc)})")


def _guarded(what: str):
    """A :class:`RunFile` method whose h5py errors (damaged HDF5 metadata: a bad heap
    signature, a link to nowhere) are one :class:`RunFileError` naming the file and
    ``what`` could not be read (issue #36 item 4)."""
    def wrap(method):
        @functools.wraps(method)
        def guarded(self, *args, **kwargs):
            try:
                return method(self, *args, **kwargs)
            except RunFileError:
                raise
            except READ_ERRORS as exc:
                raise _damaged(self.path, what.format(*args), exc) from None
        return guarded
    return wrap


class RunFile:
    """A run file (``.h5``, or the ``.h5.partial`` of a run still going or killed),
    open read-only: the series, the frames one at a time, the events, and what is
    needed to branch from a frame or resume the run.  Errors are :class:`RunFileError`
    (one line), whatever is damaged in the file.  Use as a context manager or
    :meth:`close` it."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._f = _open(self.path)
        try:
            self._read_header()
        except RunFileError:
            self._f.close()
            raise
        except OSError:  # a chunk that fails its checksum or its digest: say which
            report = self.verify(deep=True)
            self._f.close()
            raise RunFileError(report.line() if report.problems else
                               f"{self.path}: the file is damaged (an HDF5 read error)"
                               ) from None
        except READ_ERRORS as exc:
            self._f.close()
            raise _damaged(self.path, "the run's header", exc) from None

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
        future = future_schema(f, p)
        if future is not None:
            raise RunFileError(future)
        for text in digests.header_problems(f):  # (issue #36 item 2b)
            raise RunFileError(f"{p}: {text}: the file is refused (what it says of its "
                               "model and clock cannot be trusted)")
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
        status, message = read_status(f)
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
        self.components = [c for c in f["energy"]
                           if c not in ("total", "relative_error", TERRACE_GAP)]
        self.components.sort(key=lambda c: ENERGY_NAMES.index(c) if c in ENERGY_NAMES
                             else len(ENERGY_NAMES))
        self.energy = {k: f["energy"][k][()] for k in f["energy"]}
        self.P = f["momentum/linear"][()] if "linear" in f["momentum"] else None
        self.L = f["momentum/angular"][()] if "angular" in f["momentum"] else None
        gb = f.get("bodies")
        need = [f"/bodies/{c}" for c in ("position", "quaternion", "omega", "time")
                if gb is None or c not in gb]
        self._frames = len(need) < 4 or bool(digests.in_layout(f, "bodies/position"))
        self._no_frames = ("the run holds no frames (written with --no-frames)" if not
                           self._frames else f"{need[0]} is missing" if need else "")
        self._frames = self._frames and not need
        self._checks = digests.columns(f, digests.FRAME_CHECKS)
        self.frame_times = np.zeros(0)
        self.n_frames = 0
        # a file of a killed writer may hold a frame row more in one dataset than another
        if self._frames:
            self.n_frames = min([gb[c].shape[0] for c in ("position", "quaternion",
                                                          "omega", "time")]
                                + ([self._checks[0].shape[0]] if self._checks else []))
            self.frame_times = gb["time"][:self.n_frames]
        digests.check_series(f, {"time": self.times, "momentum/linear": self.P,
                                 "momentum/angular": self.L,
                                 **{f"energy/{k}": v for k, v in self.energy.items()}})
        self.events: list[Event] = []
        if "events" in f:
            for r in f["events"][()]:
                self.events.append(Event(int(r["step"]), float(r["t"]), _s(r["kind"]),
                                         _s(r["old"]), _s(r["new"])))
        self.bonds = f["model/bonds"][()] if "model" in f and "bonds" in f["model"] \
            else np.zeros((0, 2), dtype=np.int64)
        if "events" in f and (DIGEST_ATTR in f["events"].attrs or digests.HEADER_DIGEST
                              in a) and _s(f["events"].attrs.get(DIGEST_ATTR, "")) != \
                digests.events_digest((e.step, e.t, e.kind, e.old, e.new) for e in self.events):
            raise DigestMismatch("/events does not match its digest")

    # ------------------------------------------------------------------ frames
    def frame(self, k: int) -> Frame:
        """Frame ``k`` (negative counts from the end); a frame that cannot be read (a
        checksum error, values that do not match their digest, damaged metadata) is a
        :class:`RunFileError` that says so."""
        try:
            return self._frame(k)
        except RunFileError:
            raise
        except READ_ERRORS as exc:
            raise RunFileError(f"{self.path}: frame {k} cannot be read, the file is damaged "
                               f"there ({first_line(exc)}); the other frames may still be "
                               "read") from None

    def _frame(self, k: int) -> Frame:
        if not self._frames:
            raise RunFileError(f"{self.path}: {self._no_frames}")
        n = self.n_frames
        if not -n <= k < n:
            raise RunFileError(f"{self.path}: no frame {k} (the run has {n} frames)")
        k = k % n
        f = self._f
        raw = {}  # name → the row as read, checked against its digest (issue #36 item 2)
        for name in ("bodies/position", "bodies/quaternion", "bodies/omega", "bodies/time",
                     "bodies/step", "bodies/dissipated", "bodies/velocity",
                     "bodies/momentum_body", "bodies/force", "bodies/moment",
                     "generalized/q", "generalized/v", "springs/start", "springs/count"):
            ds = f.get(name)
            if ds is not None and ds.shape[0] > k:
                raw[name] = ds[k:k + 1]
        digests.check_rows(self._checks, k, raw)
        row = {name.split("/")[1] if name.startswith("bodies/") else name: v[0]
               for name, v in raw.items()}
        D = row.get("dissipated")
        if D is None and "dissipated" in self.energy and len(self.energy["dissipated"]) > k:
            D = self.energy["dissipated"][k] if len(self.times) == n else 0.0
        springs = None
        if "springs/start" in row and "springs/count" in row:
            gs = f["springs"]
            a = int(row["springs/start"])
            b = a + int(row["springs/count"])
            if all(gs[c].shape[0] >= b for c, _, _ in _SPRING_LISTS):
                lists = {f"springs/{c}": gs[c][a:b] for c, _, _ in _SPRING_LISTS}
                digests.check_rows(digests.columns(f, digests.SPRING_CHECKS), a, lists)
                springs = tuple(lists.values())
        step = row.get("step")
        return Frame(k, float(row["time"]), None if step is None else int(step),
                     row["position"], row.get("velocity"), row["quaternion"], row["omega"],
                     row.get("momentum_body"), float(D) if D is not None else 0.0,
                     row.get("generalized/q"), row.get("generalized/v"), springs,
                     row.get("force"), row.get("moment"))

    @_guarded("frame {0}")
    def can_branch(self, k: int) -> tuple[bool, str]:
        """Whether a run can start from frame ``k`` (:meth:`Simulation.from_frame`), and
        if not, why (one line)."""
        if not self._frames:
            return False, self._no_frames
        if not -self.n_frames <= k < self.n_frames:
            return False, f"no frame {k} (the run has {self.n_frames} frames)"
        gb = self._f["bodies"]
        if "velocity" not in gb:
            return False, (f"the file (schema {self.schema_version}, RRP Studio "
                           f"{self.version}) holds no velocities: it can be replayed, not "
                           "branched; run it again with this version to branch from it")
        try:
            fr = self.frame(k)
        except RunFileError as exc:
            return False, str(exc)
        if fr.v is None or not np.all(np.isfinite(fr.v)):
            return False, f"frame {k % self.n_frames} was recorded without its velocities"
        if fr.springs is None and ("force" in gb or digests.in_layout(self._f, "springs/xi")):
            return False, (f"frame {k % self.n_frames} has lost its friction springs (/springs "
                           "is missing or cut short): started without them, the contacts "
                           "would slip")
        return True, ""

    # ------------------------------------------------------------------ model, resume
    @_guarded("the run's model")
    def build_model(self):
        """The model of the run, built from the stored name and parameters; a
        :class:`RunFileError` when this version's model has other parameters, or the
        file lacks what the model needs (its constants, its bonds; issue #36 item 8)."""
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
            model = spec.make(self.params)
        except ParameterError as exc:
            raise RunFileError(f"{self.path}: written by RRP Studio {self.version}; its "
                               f"parameters do not fit this version: {exc}") from None
        mass, bonds = self._f.get("bodies/mass"), np.asarray(model.forcefield.bonds)
        why = ("/bodies/mass is missing" if not isinstance(mass, h5py.Dataset) else
               f"/bodies/mass holds {mass.shape} bodies, the model {model.n_bodies}"
               if mass.shape != (model.n_bodies,) else
               f"/model/bonds is missing (the model has {len(bonds.reshape(-1, 2))} bonds)"
               if self.schema_version >= 2 and bonds.size and "model/bonds" not in self._f
               else "")
        if why:
            raise RunFileError(f"{self.path}: {why}: the file is damaged")
        return model

    @property
    @_guarded("its checkpoint")
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

    @_guarded("its checks")
    def check_resumable(self) -> list[str]:
        """Verify the whole file before a resume (:meth:`verify` with ``deep``): a
        :class:`RunFileError` (one line: what is wrong, what can still be read) when it is
        damaged or its checkpoints are; else the notes to show (a checkpoint that cannot
        be verified, a fallback to the previous one)."""
        report = self.verify(deep=True)
        if report.problems:
            raise RunFileError(report.line("resume"))
        return report.notes

    @_guarded("its checkpoint")
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
