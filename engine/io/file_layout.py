"""The layout of a run file's datasets that the writer and the reader share: the
frames' chunking and filters (issue #36 item 15), the state columns, the springs'
lists, the checkpoint's budget (split from :mod:`engine.io.hdf5`, issue #34 item 3;
the layout itself is docs/output.md)."""

from __future__ import annotations

from typing import Any

from ..simulation import Simulation
from .verify import DIGEST_ATTR

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

SPRING_CHUNK_ROWS = 8192
"""Rows a chunk of each ``/springs`` list (256 kB of ``xi``): uncompressed since issue #36
item 15, a chunk is allocated whole at its first row, and 65 536 rows (the LZF chunks'
size) made a small frictional run's file 2.6 MB of springs' chunks; a pile's frame of
10⁵ springs is then 13 chunks, each a fixed ≈ 30 µs."""


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
