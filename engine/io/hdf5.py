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
failed write (that crashed HDF5).  The writer reaches its file through a rollback
journal (:mod:`.journal`, issue #47 item 1): a writer killed at any write leaves the
file as its last whole flush left it.  docs/output.md, "Guarantees".

This module is the package's face for the names above (issue #34 item 3: the code is
split by responsibility): :mod:`.file_layout` (chunking, filters, constants),
:mod:`.paths` (``.partial`` names, the output of a file), :mod:`.writer_files` (the
writer's failures, marking, room and verified copy), :mod:`.writer` and
:mod:`.writer_close` (:class:`RunWriter`, its checkpoint and close), :mod:`.reader`
(:func:`read_run`, :class:`RunFile`).  A test that replaces one of these names
patches the module that uses it.
"""

from __future__ import annotations

from .digests import SCHEMA_VERSION
from .file_layout import (
    CHECKPOINT_BUDGET,
    CHECKPOINT_CHEAP,
    FRAME_BLOCK_BODIES,
    FRAME_CHUNK_BYTES,
    FRAME_CHUNK_FRAMES,
    FRAME_COMPRESSION,
    TERRACE_GAP,
    VARIABLE_CHECKPOINT_ARRAYS,
    frame_chunks,
    frame_filters,
)
from .paths import is_partial_name, output_for, output_of_partial, partial_name
from .reader import Frame, RunFile, read_run
from .schema import RunFileError
from .writer import RunWriter
from .writer_files import CLOSE_RESERVE, OutputWriteError, abandoned_files, mark_file

__all__ = ["CHECKPOINT_BUDGET", "CHECKPOINT_CHEAP", "CLOSE_RESERVE", "FRAME_BLOCK_BODIES",
           "FRAME_CHUNK_BYTES", "FRAME_CHUNK_FRAMES", "FRAME_COMPRESSION", "SCHEMA_VERSION",
           "TERRACE_GAP", "VARIABLE_CHECKPOINT_ARRAYS", "Frame", "OutputWriteError",
           "RunFile", "RunFileError", "RunWriter", "abandoned_files", "frame_chunks",
           "frame_filters", "is_partial_name", "mark_file", "output_for",
           "output_of_partial", "partial_name", "read_run"]
