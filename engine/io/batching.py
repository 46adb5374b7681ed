"""When ``rrp run --out`` hands its records to the file: in batches (issue #36, item 15).

A write to the run file has a fixed cost that does not depend on how many records it
holds: every dataset resized and written, the space for it held (:mod:`engine.io.reserve`),
HDF5's metadata flushed, the checkpoint (a few ms even for the 80-sphere torus).  Handed
over after every chunk of steps, as before, these fixed costs were most of a small
model's run: the torus to ``t = 10`` stepped for 0.07 s and wrote 102 times (1.7 s).
So the run loop calls :meth:`engine.io.RunWriter.flush_when_due` after each chunk, and
the records stay in the simulation's series (no copy) until :func:`batch_due` says that
they are due, and are then written as one batch: one resize and one write of each
dataset, one reservation, one flush of the file, the checkpoint (when
:data:`engine.io.hdf5.CHECKPOINT_BUDGET` allows) — ``RunWriter._write_job``, the one
place where a batch meets the file (a batch whose space cannot be held is written as
far as the space goes, ``RunWriter._write_head``).  A batch is due

* when the write before it has finished and :data:`BATCH_INTERVAL` has passed since it
  was handed over: the writer thread writes while the run steps on, and a batch holds
  what the run recorded meanwhile (a few records when the writer keeps up, more when it
  does not), so that the fixed costs are paid at most about ten times a second; a
  writer killed with SIGKILL loses about that much of the run, plus the write in
  flight (the file still opens up to its last whole write and resumes bit-identically
  from its last checkpoint, docs/output.md, "Guarantees");
* when the records held reach :data:`BATCH_BYTES` (a large model's frames are not kept
  in memory: at 10⁶ spheres one frame is 128 MB, so every frame is a batch, as before),
  then also waiting for the write in flight.

A batch takes the checkpoint along when :data:`CHECKPOINT_INTERVAL` has passed since
the last one (and :data:`engine.io.hdf5.CHECKPOINT_BUDGET` allows it): a checkpoint
costs a few ms even for the torus, more than a batch of its records.

``RunWriter.flush`` (and ``close``) still write at once whatever is held; at the end
of a run (complete, failed, interrupted) the loop calls ``flush`` before ``close``, so
that a complete run's two checkpoints are both at its end, as before.
"""

from __future__ import annotations

BATCH_INTERVAL = 0.1
"""Seconds (wall clock) from one batch to the next at least, unless the records held
reach :data:`BATCH_BYTES`."""

CHECKPOINT_INTERVAL = 1.0
"""Seconds (wall clock) from one checkpoint to the next at least, in the batches of
:meth:`engine.io.RunWriter.flush_when_due` (``close`` always writes one)."""

BATCH_BYTES = 64 * 1024 * 1024
"""Records held in memory for the next batch beyond this many bytes are written at once
(waiting for the write in flight first)."""


def record_bytes(n_bodies: int, frames: bool, n_series: int) -> int:
    """Bytes a record holds in memory: ``n_series`` float64 series columns (time,
    energies, momenta), and with ``frames`` the full state of every body (``x``, ``q``,
    ``Ω``, ``v``, ``Π``, ``F``, ``RM``: at most 22 float64)."""
    return 8 * (int(n_series) + (22 * int(n_bodies) if frames else 0))


def batch_due(pending: int, nbytes: int, since_last: float, in_flight: bool) -> bool:
    """Whether ``pending`` records (``nbytes`` bytes each), held while ``since_last``
    seconds passed since the last batch was handed over, are written now
    (``in_flight``: that batch is still being written)."""
    if pending <= 0:
        return False
    if pending * nbytes >= BATCH_BYTES:
        return True
    return not in_flight and since_last >= BATCH_INTERVAL

