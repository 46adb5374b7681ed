"""Integrity of a run file (docs/output.md, "Integrity"): is its structure whole, do its
checksums and its checkpoint's digest hold, and what can still be read when they do not.

Run files carry two kinds of checks, both written by :class:`engine.io.RunWriter`:

* HDF5's Fletcher-32 checksum on every chunk of the chunked datasets (the series, the
  frames, the springs, the constants): HDF5 verifies it on every read, and a chunk whose
  bytes changed on disk cannot be read (an ``OSError``, which :func:`check_run` turns
  into a place: the dataset and its first bad row).  Files written before have no
  checksums and read as before.
* A SHA-256 digest of each checkpoint group (``/checkpoint``, ``/checkpoint_alt``), over
  all its datasets *and* attributes (:func:`checkpoint_digest`), stored as its attribute
  ``digest``: the checkpoint is what a resume continues from, and Fletcher-32 does not
  cover its small contiguous datasets nor any attribute.  A checkpoint without a digest
  (written before) is *not verifiable* and still used.
* Since issue #36 (:mod:`engine.io.digests`): a 64-bit digest of every row of the series
  and the frames (a written chunk that a damaged chunk index makes read as the fill
  value, or as another row, is damage), SHA-256 digests of the header (the attributes
  a resume or a replay reads, ``/parameters``, the constants, the ``layout``) and of
  the status, and the ``layout`` (the datasets the file was created with: one missing
  is damage).  A file of a newer schema is refused; HDF5 metadata that cannot be read
  is a problem of its own (``metadata``), never an exception.

:func:`check_run` checks an open file's structure (the required datasets exist, have
the right shapes, and their lengths agree), reads every checkpoint, and with
``deep=True`` every chunk of every dataset; it returns an :class:`Integrity` that says
what is wrong (:attr:`Integrity.problems`), what was worked around
(:attr:`Integrity.notes`), what can still be read, and gives the one line to show
(:meth:`Integrity.line`).  :func:`verify_run` does the same for a path.  Nothing here
writes to a file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from .. import __version__
from ..rotations import not_attitudes
from . import digests
from .checkpoints import (  # noqa: F401  (re-exported: the writer and readers use them)
    _PAST_THE_RECORDS,
    DIGEST_ATTR,
    UNDIGESTED_ATTRS,
    CheckpointCheck,
    checkpoint_digest,
    choose_checkpoint,
    read_checkpoint,
)
from .digests import SCHEMA_VERSION
from .schema import CHECKPOINT_GROUPS, open_run_file

READ_ERRORS = (OSError, RuntimeError, KeyError, ValueError, TypeError, IndexError,
               OverflowError, MemoryError, AttributeError)
"""What h5py raises when a file's HDF5 metadata is damaged (a bad heap or B-tree
signature, a link that leads nowhere, an attribute that does not decode): every read
path turns these into one line (issue #36 item 4)."""


def first_line(exc: BaseException) -> str:
    """The first line of an exception's text (h5py's can run to several)."""
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__

STRICT_STATUSES = ("complete", "paused")
"""Statuses of a file closed after everything was written: all its rows must agree.  A
file of a run that failed, was interrupted or killed may hold a row more in one dataset
than in another (a write cut short); such a ragged tail is not damage."""

SERIES_REQUIRED = ("time", "energy/total", "energy/relative_error", "momentum/linear",
                   "momentum/angular")
"""The series every run file has (schema 1 too)."""
FRAME_REQUIRED = ("bodies/position", "bodies/quaternion", "bodies/omega", "bodies/time")
"""The frame datasets a file with frames has (schema 1 too)."""
_FRAME_OPTIONAL = ("bodies/velocity", "bodies/momentum_body", "bodies/force",
                   "bodies/moment", "bodies/step", "bodies/dissipated", "generalized/q",
                   "generalized/v", "springs/start", "springs/count")
_WIDTH = {"momentum/linear": (3,), "momentum/angular": (3,), "bodies/position": (3,),
          "bodies/quaternion": (4,), "bodies/omega": (3,), "bodies/velocity": (3,),
          "bodies/momentum_body": (3,), "bodies/force": (3,), "bodies/moment": (3,),
          "generalized/q": (2,), "generalized/v": (2,)}
"""Row shape of the datasets whose rows are not scalars (frames: after the body axis)."""
_PER_BODY = frozenset({"bodies/position", "bodies/quaternion", "bodies/omega",
                       "bodies/velocity", "bodies/momentum_body", "bodies/force",
                       "bodies/moment"})
_SPRING_LISTS = ("springs/sphere", "springs/partner", "springs/xi")

SCAN_BLOCK_BYTES = 64 * 1024 * 1024
"""A deep check reads a dataset in blocks of about this size (a long run need not fit in
memory)."""


# ---------------------------------------------------------------------------- report
@dataclass(frozen=True)
class Problem:
    """What is wrong, and which part of the file it touches: ``series``, ``frames`` or
    ``checkpoint``."""

    part: str
    text: str
    row: int | None = None
    """The first record the damage touches where it lies in the bytes of a chunk of the
    series or the frames (a checksum error; its index whole): the first row of that
    chunk.  A checkpoint taken before it can still be resumed."""


@dataclass
class Integrity:
    """What :func:`check_run` found in a run file.

    ``problems``: damage (empty: the file is whole); ``notes``: what a reader should know
    but need not stop for (a checkpoint that cannot be verified, a fallback to the older
    checkpoint); ``series_rows`` and ``t_series``: the rows of the series that can be
    read and the time of the last; ``frames``: the frames that can be read (``None``: the
    file holds none); ``checkpoint``: the one a resume would use (``None``: none)."""

    path: Path
    status: str = ""
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    series_rows: int = 0
    t_series: float | None = None
    frames: int | None = None
    has_velocity: bool = False
    checkpoint: CheckpointCheck | None = None
    checkpoints: list[CheckpointCheck] = field(default_factory=list)
    deep: bool = False

    @property
    def ok(self) -> bool:
        """No damage found."""
        return not self.problems

    @property
    def resumable(self) -> bool:
        """Whole, with a usable checkpoint."""
        return self.ok and self.checkpoint is not None

    def damage_row(self) -> int | None:
        """The first record the damage touches where every problem lies in rows of the
        series or the frames (a resume from a checkpoint taken before it drops them,
        issue #47 item 1); ``None`` where there is none, or other damage."""
        rows = [p.row for p in self.problems]
        if not rows or any(r is None for r in rows):
            return None
        return min(rows)

    def resumable_before_damage(self) -> bool:
        """Damaged only in rows that the checkpoint a resume uses (:attr:`checkpoint`,
        chosen before them) was taken before: the resume drops them."""
        first = self.damage_row()
        ck = self.checkpoint
        return (first is not None and ck is not None and ck.n_records is not None
                and ck.n_records <= first)

    def damaged(self, *parts: str) -> bool:
        """Whether any problem touches one of ``parts`` (all parts when none given)."""
        return any(not parts or p.part in parts for p in self.problems)

    def readable(self) -> str:
        """What can still be read, as a clause (issue #36 item 14): "the series up to
        t = 3.2 (321 records) and 120 frames can still be read", "only 101 frames can
        still be read (none of the series)", "nothing of it can still be read"."""
        r = self.series_rows
        series = (f"the series up to t = {self.t_series:.6g} ({r} record{'s' * (r != 1)})"
                  if r and self.t_series is not None else "")
        n = self.frames
        frames = f"{n} frame{'s' * (n != 1)}" if n else ""
        if series and frames:
            return f"{series} and {frames} can still be read"
        if series:
            return f"only {series} can still be read" + (" (none of its frames)"
                                                         if n == 0 else "")
        if frames:
            return f"only {frames} can still be read (none of the series)"
        return "nothing of it can still be read"

    def what(self, limit: int = 3) -> str:
        """The problems as one phrase (the first ``limit``, then how many more)."""
        texts = [p.text for p in self.problems]
        more = len(texts) - limit
        out = "; ".join(texts[:limit])
        return out + (f" (and {more} more problem{'s' * (more != 1)})" if more > 0 else "")

    def line(self, purpose: str = "read") -> str:
        """The one line to show: ``resume`` (why the file cannot be resumed, what can
        still be read, what to do), ``read`` (what is wrong and what is shown)."""
        p = self.path
        if purpose == "resume":
            if self.ok and self.checkpoint is None:
                return f"{p}: no intact checkpoint to resume from"
            fix = "rerun it"
            if self.frames and self.has_velocity:
                fix += f", or continue from one of its frames in the app (rrp gui {p})"
            what = self.what() if self.problems else "its checkpoint is damaged"
            if not self.series_rows and not self.frames:  # (issue #47 item 8)
                return f"{p}: {what}; nothing of it can be read or resumed: {fix}"
            return f"{p}: {what}; {self.readable()}, but it cannot be resumed: {fix}"
        if not self.problems:
            return f"{p}: no damage found"
        return f"{p}: {self.what()}; {self.readable()}"


# ---------------------------------------------------------------------------- checks
def _dataset(f: h5py.File, name: str) -> h5py.Dataset | None:
    try:
        obj = f.get(name)
    except READ_ERRORS:
        return None
    return obj if isinstance(obj, h5py.Dataset) else None


def _first_bad_row(ds: h5py.Dataset, check: tuple | None = None, strict: int = 0,
                   valid=None) -> tuple[int, str] | None:
    """The first row of ``ds`` that cannot be read (``checksum``: a checksum error,
    damaged compressed data) or reads other values than were written (``digest``: its
    row digest, ``check`` = (checks dataset, column), differs: a damaged chunk index;
    ``strict``: :func:`~engine.io.digests.first_mismatch`), or that ``valid`` (rows →
    a mask of the bad ones) refuses (``value``), or ``None``; read in blocks of about
    :data:`SCAN_BLOCK_BYTES`."""
    if ds.shape is None:
        return None
    if ds.shape == ():
        try:
            ds[()]
        except OSError:
            return 0, "checksum"
        return None
    n = ds.shape[0]
    if n == 0:
        return None
    step = ds.chunks[0] if ds.chunks else n
    row = max(1, ds.dtype.itemsize * int(np.prod(ds.shape[1:], dtype=np.int64)))
    block = max(step, SCAN_BLOCK_BYTES // row // step * step)
    for a in range(0, n, block):
        try:
            values = ds[a:a + block]
        except OSError:
            for b in range(a, min(a + block, n), step):
                try:
                    ds[b:b + step]
                except OSError:
                    return b, "checksum"
            return a, "checksum"
        if check is not None:
            try:
                stored = check[0][a:a + len(values), check[1]]
            except OSError:
                continue  # (the checks' own scan names it)
            r = digests.first_mismatch(values, a, stored, strict)
            if r is not None:
                return a + r, "digest"
        if valid is not None:
            wrong = np.nonzero(valid(values))[0]
            if len(wrong):
                return a + int(wrong[0]), "value"
    return None


_VALID = {"bodies/quaternion": lambda q: not_attitudes(q).reshape(len(q), -1).any(axis=1)}
"""Rows a deep check refuses whatever their digests say (issue #46 item 3): a frame's
quaternions must be attitudes (zeros are the fill value of a damaged chunk index)."""


def overlaps(f: h5py.File) -> list[tuple[str, int, str]]:
    """Where the stored data of two objects of ``f`` overlap (issue #47 item 2): every
    chunk of every chunked dataset, every contiguous dataset's data, every object
    header's address and the superblock's, as byte ranges of the file; in a whole file
    none overlaps another, but a chunk index entry redirected onto other bytes that hold
    the same values (HDF5 writes edge chunks from an uninitialised buffer, so copies
    exist) reads, and passes its checksum and digests, until a write to either object
    damages the other.  A range past the end of the file counts too.  Returns
    ``(name, row, text)`` for each (``name``: a dataset whose data is in question from
    its row ``row`` on).  Metadata only: no value is read."""
    spans: list[tuple[int, int, str, Any, int]] = [(0, 1, "", "the superblock", 0)]

    def chunk(name: str, row: int) -> str:  # (its words: only for one that overlaps)
        top = name.split("/")[0]
        unit = ("record" if top in _SERIES_TOP else "frame"
                if top in ("bodies", "generalized") else "row")
        return f"the chunk of /{name} at {unit} {row}"

    def visit(name: str, obj: Any) -> None:
        try:
            addr = h5py.h5o.get_info(obj.id).addr
            spans.append((int(addr), int(addr) + 1, "", f"the object header of /{name}", 0))
        except READ_ERRORS:
            pass
        if not isinstance(obj, h5py.Dataset):
            return
        if obj.chunks:
            def add(info, name=name) -> None:
                if info.byte_offset is None or info.size == 0:
                    return
                row = int(info.chunk_offset[0]) if info.chunk_offset else 0
                spans.append((int(info.byte_offset), int(info.byte_offset + info.size), name,
                              chunk, row))
            try:
                obj.id.chunk_iter(add)
            except AttributeError:  # (an HDF5 without H5Dchunk_iter)
                for i in range(obj.id.get_num_chunks()):
                    add(obj.id.get_chunk_info(i))
        else:
            off = obj.id.get_offset()
            if off is not None and obj.id.get_storage_size():
                spans.append((int(off), int(off) + int(obj.id.get_storage_size()), name,
                              f"the data of /{name}", 0))

    def words(name: str, row: int, what: Any) -> str:
        return what(name, row) if callable(what) else what

    f.visititems(visit)
    spans.sort(key=lambda s: (s[0], s[1]))
    out: list[tuple[str, int, str]] = []
    end, owner = -1, None
    size = f.id.get_filesize()
    for a, b, name, what, row in spans:
        if b > size and name:
            out.append((name, row, f"{words(name, row, what)} lies past the end of the "
                                   "file (a damaged index)"))
        if a < end and owner is not None:
            bad = (name, row) if name else owner[:2]
            out.append((*bad, f"{words(name, row, what)} overlaps {words(*owner)} (a "
                              "damaged chunk index or object address: writing either "
                              "would damage the other)"))
        if b > end:
            end, owner = b, (name, row, what)
    return out


_SERIES_TOP = ("time", "energy", "momentum")
_MODEL = frozenset(digests.CONSTANTS)


def _part(name: str) -> str:
    """Which part of the file a dataset belongs to."""
    if name in _MODEL:
        return "model"
    return "series" if name.split("/")[0] in _SERIES_TOP else "frames"


def future_schema(f: h5py.File, path: Path) -> str | None:
    """The one line for a file of a schema newer than this version reads (item 8)."""
    raw = f.attrs.get("schema_version", 1)
    try:
        sv = int(raw)
    except (TypeError, ValueError):
        return f"{path}: its schema_version ({raw!r}) is not a number: the file is damaged"
    if sv <= SCHEMA_VERSION:
        return None
    if digests.header_problems(f):  # (a damaged byte, not a newer writer)
        return (f"{path}: its schema_version reads {sv}, but its header does not match "
                "its digest: the file is damaged")
    by = f.attrs.get("version", "?")
    by = by.decode() if isinstance(by, bytes) else str(by)
    return (f"{path}: written in run-file schema {sv} (by RRP Studio {by}); this version "
            f"({__version__}) reads schemas 1 to {SCHEMA_VERSION}: open it with a newer "
            "RRP Studio")


def check_run(f: h5py.File, path: str | Path, *, deep: bool = False,
              series: bool = False, closing: bool = False,
              checkpoints: bool = True) -> Integrity:
    """Check the open run file ``f`` (see the module docstring).  ``deep``: also read
    every chunk of every dataset (a resume does; a reader meets a bad chunk when it reads
    it) and compare every row with its digest; ``series``: the same for the series, the
    events and the constants only (``rrp convert``, which checks each frame as it
    reads it).  Reads only; never raises for damage (:class:`Integrity` says what it is),
    HDF5 metadata that cannot be read included (issue #36 item 4).  ``closing``: the
    file of a writer about to mark it ``complete`` (issue #47 item 2): checked as a
    closed one (every dataset's rows agree), whatever its status says yet;
    ``checkpoints=False``: the checkpoints are not read (a new file's writer wrote them,
    from the values it digested)."""
    out = Integrity(Path(path), deep=deep)
    try:
        _check_run(f, out, deep, series, closing, checkpoints)
    except READ_ERRORS as exc:
        out.problems.append(Problem("metadata", f"HDF5 cannot read its metadata "
                                                f"({type(exc).__name__}: {first_line(exc)})"))
        if out.frames:
            out.frames = 0
        _salvage(f, out)
    return out


def _salvage(f: h5py.File, out: Integrity) -> None:
    """After HDF5 failed to read the file's metadata: what can still be read, read
    directly (issue #47 item 8: "nothing of it can still be read" was said of files
    whose records all read): the series' times, and the frames where the first and
    the last of ``/bodies/position`` read."""
    if not out.series_rows:
        try:
            t = np.asarray(f["time"][...], dtype=np.float64)
        except READ_ERRORS:
            t = np.empty(0)
        if len(t):
            out.series_rows, out.t_series = len(t), float(t[-1])
    if not out.frames:
        try:
            ds = f["bodies/position"]
            n = int(ds.shape[0])
            if n:
                _ = (ds[0], ds[n - 1])  # (read: they must decode)
            out.frames = n
        except READ_ERRORS:
            pass


def _check_run(f: h5py.File, out: Integrity, deep: bool, scan_series: bool,
               closing: bool = False, checkpoints: bool = True) -> None:
    out.status = digests.read_status(f)[0]  # ("running" where unconfirmed: issue #36)
    strict = out.status in STRICT_STATUSES or closing
    bad = out.problems.append
    future = future_schema(f, out.path)
    if future is not None:
        bad(Problem("header", future.split(": ", 1)[1]))
        return
    for text in digests.header_problems(f):
        bad(Problem("header", text))
    for part, text in digests.checks_problems(f):  # (issue #46 item 3)
        bad(Problem(part, text))
    n_bodies = None  # the bodies of /bodies/mass: the frames' second axis
    mass = _dataset(f, "bodies/mass")
    if mass is not None and mass.shape is not None and len(mass.shape) == 1:
        n_bodies = int(mass.shape[0])

    def rows_of(names: list[str], part: str) -> dict[str, int]:
        lengths: dict[str, int] = {}
        for name in names:
            ds = _dataset(f, name)
            if ds is None:
                continue
            shape = ds.shape or ()
            width = _WIDTH.get(name, ())
            if name.startswith("checks/"):
                if len(shape) != 2:
                    bad(Problem(part, f"/{name} has the shape {shape}"))
                    continue
            elif part == "frames" and name in _PER_BODY:
                want = (n_bodies, *width) if n_bodies is not None else None
                if len(shape) != 2 + len(width) or (want is not None
                                                     and tuple(shape[1:]) != want):
                    bad(Problem(part, f"/{name} has the shape {shape}, not (frames, "
                                      f"{n_bodies if n_bodies is not None else 'N'}, "
                                      f"{width[0]})"))
                    continue
            elif len(shape) != 1 + len(width) or tuple(shape[1:]) != width:
                rows = "records" if part == "series" else "frames"
                bad(Problem(part, f"/{name} has the shape {shape}, not ({rows}"
                                  f"{''.join(f', {w}' for w in width)})"))
                continue
            lengths[name] = int(shape[0])
        return lengths

    # ---- what must be there: the layout written with the file (item 8), else the
    # datasets every run file has
    missing: list[str] = []
    gone = digests.missing_from_layout(f)
    if gone is None:  # (a file written before the layout was recorded)
        gone = [n for n in ("bodies/mass",) if _dataset(f, n) is None]
        if _dataset(f, "bodies/force") is not None:  # a run with friction springs
            gone += [f"springs/{c}" for c in ("start", "count", *(x.split("/")[1]
                     for x in _SPRING_LISTS)) if _dataset(f, f"springs/{c}") is None]
    missing += gone
    missing += [n for n in SERIES_REQUIRED if _dataset(f, n) is None and n not in missing]
    has_frames = (digests.in_layout(f, "bodies/position")
                  or _dataset(f, "bodies/position") is not None
                  or _dataset(f, "bodies/time") is not None)
    if has_frames:
        missing += [n for n in FRAME_REQUIRED if _dataset(f, n) is None and n not in missing]
    _report_missing(f, missing, bad)

    # ---- the series
    series_names = ["time"]
    for grp in ("energy", "momentum"):
        g = f.get(grp)
        if isinstance(g, h5py.Group):
            series_names += [f"{grp}/{k}" for k in g]
    series = rows_of(series_names, "series")
    n_time = series.get("time")
    _disagree(series, "time", strict, "records", "series", bad)
    series.update(rows_of([digests.SERIES_CHECKS], "series"))
    _disagree({k: v for k, v in series.items() if k in ("time", digests.SERIES_CHECKS)},
              "time", strict, "records", "series", bad)

    # ---- the frames
    frames: dict[str, int] = {}
    if has_frames:
        frames = rows_of([*FRAME_REQUIRED, *_FRAME_OPTIONAL, digests.FRAME_CHECKS], "frames")
        _disagree(frames, "bodies/time", strict, "frames", "frames", bad)
        if strict and n_time is not None and "bodies/time" in frames \
                and frames["bodies/time"] != n_time:
            bad(Problem("frames", f"/bodies/time holds {frames['bodies/time']} frames, "
                                  f"/time {n_time} records"))
        out.has_velocity = "bodies/velocity" in frames
    _check_springs(f, frames, strict, bad)

    # ---- every chunk (checksums) and every row (digests)
    series_rows = min(series.values()) if series else 0
    n_frames = None  # no frames (--no-frames); 0: none readable (a required one missing)
    if has_frames:
        n_frames = min(frames[k] for k in FRAME_REQUIRED) \
            if all(k in frames for k in FRAME_REQUIRED) else 0
        n_frames = min(n_frames, frames.get(digests.FRAME_CHECKS, n_frames))
    for name, row, text in overlaps(f):  # (metadata only: issue #47 item 2)
        part = "checkpoint" if name.split("/")[0] in CHECKPOINT_GROUPS else _part(name)
        bad(Problem(part, text))
        if name in series:
            series_rows = min(series_rows, row)
        elif name in frames and n_frames is not None:
            n_frames = min(n_frames, row)
    if deep or scan_series:
        small = {*series, "events", *_MODEL, digests.SERIES_CHECKS}
        strict = digests.strict_rows(f)
        for name, ds in _datasets(f):
            if not deep and name not in small:
                continue
            found = _first_bad_row(ds, digests.checks_for(f, name), strict,
                                   _VALID.get(name))
            if found is None:
                continue
            r, kind = found
            unit = ("record" if name in series else "frame" if name in frames else "row")
            at = f" at {unit} {r}" if ds.shape and len(ds.shape) and ds.shape[0] > 1 else ""
            part = "series" if name in series or name == "events" else _part(name)
            bad(Problem(part, f"a checksum error in /{name}{at}" if kind == "checksum" else
                        f"/{name} holds no attitude{at} (a quaternion of norm 0 or not "
                        "finite: zeros where data was written)" if kind == "value" else
                        f"/{name} reads other values than were written{at} (they do not "
                        "match their digest: damaged metadata)"))
            c0 = r - r % int(ds.chunks[0]) if ds.chunks else 0  # (its chunk's first row:
            # the resume's rows are written into that chunk again)
            record = (c0 if name in series or name in frames else
                      _frames_before_spring(f, c0) if part == "frames" else None)
            if record is not None and name != "events" and kind == "checksum":  # (a
                # chunk's bytes, its index whole: other values read are index damage)
                out.problems[-1] = Problem(part, out.problems[-1].text, record)
            if name in series:
                series_rows = min(series_rows, r)
            elif name in frames and n_frames is not None:
                n_frames = min(n_frames, r)
            elif part == "frames" and n_frames is not None:  # the springs' lists
                n_frames = min(n_frames, _frames_before_spring(f, r))
    events = _events_problem(f)  # (small: always read)
    if events:
        bad(Problem("series", events))
    out.series_rows = series_rows
    out.frames = n_frames
    if series_rows and n_time:
        try:
            out.t_series = float(f["time"][series_rows - 1])
        except OSError:
            out.t_series = None

    # ---- the checkpoints
    if not checkpoints:
        return
    rows = row_count(f)
    first = out.damage_row()  # (a checkpoint before the damage still resumes: item 1)
    _, choice, checks = choose_checkpoint(f, rows if first is None else min(rows, first))
    if first is not None:
        rows = min(rows, first)
    out.checkpoint, out.checkpoints = choice, checks
    damaged = [c for c in checks if c.state == "damaged"]
    if out.problems:  # the records are damaged: a checkpoint past them says nothing more
        damaged = [c for c in damaged if c.why != _PAST_THE_RECORDS.format(c.n_records, rows)]
    if choice is None and damaged:
        if len(damaged) == 1:
            text = f"its checkpoint /{damaged[0].name} is damaged: {damaged[0].why}"
        elif len({c.why for c in damaged}) == 1:
            text = f"both its checkpoints are damaged: {damaged[0].why}"
        else:
            text = "both its checkpoints are damaged: " + "; ".join(
                f"/{c.name}: {c.why}" for c in damaged)
        bad(Problem("checkpoint", text))
    elif choice is not None:
        newer = [c for c in damaged if c.serial > choice.serial]
        if newer:
            out.notes.append(
                f"{out.path}: the newest checkpoint, /{newer[0].name}, is damaged "
                f"({newer[0].why}); the previous one, /{choice.name} at t = "
                f"{choice.t:.6g}, is used")
        older = [c for c in damaged if c.serial < choice.serial]
        if older:
            out.notes.append(
                f"{out.path}: the previous checkpoint, /{older[0].name}, is damaged "
                f"({older[0].why}); the newest, /{choice.name}, is whole and is used")
        if choice.state == "unverifiable":
            out.notes.append(
                f"{out.path}: its checkpoint (/{choice.name}) carries no digest (written "
                "before checkpoints were verified): it is used unverified")


def _report_missing(f: h5py.File, missing: list[str], bad) -> None:
    """One problem per missing dataset, or per missing group when all of it is gone."""
    said: set[str] = set()
    for name in missing:
        top = name.split("/")[0]
        if "/" in name and not isinstance(f.get(top), h5py.Group):
            if top not in said:
                said.add(top)
                bad(Problem(_part(name), f"/{top} is missing"))
        elif name not in said:
            said.add(name)
            bad(Problem(_part(name), f"/{name} is missing"))


def _frames_before_spring(f: h5py.File, spring: int) -> int:
    """The frames before the first whose springs reach spring row ``spring``."""
    try:
        k = min(f["springs/start"].shape[0], f["springs/count"].shape[0])
        ends = f["springs/start"][:k] + f["springs/count"][:k]
    except READ_ERRORS:
        return 0
    return int(np.searchsorted(ends, spring, side="right"))


def _events_problem(f: h5py.File) -> str | None:
    """Whether ``/events`` reads what was written (its ``digest``, where it has one)."""
    ds = _dataset(f, "events")
    if ds is None:
        return None
    if digests.DIGEST_ATTR not in ds.attrs:  # (written before events had one?)
        return ("/events has lost its digest" if "events" in digests.written_with(f)
                else None)
    try:
        rows = ds[()]
    except OSError:
        return None  # (the checksum scan names it)
    stored = ds.attrs[digests.DIGEST_ATTR]
    stored = stored.decode() if isinstance(stored, bytes) else str(stored)
    if digests.events_digest((r["step"], r["t"], r["kind"], r["old"], r["new"])
                             for r in rows) != stored:
        return "/events does not match its digest (changed after writing)"
    return None


def _datasets(f: h5py.File) -> list[tuple[str, h5py.Dataset]]:
    """Every dataset of the file outside the checkpoint groups (read on their own)."""

    out: list[tuple[str, h5py.Dataset]] = []

    def visit(name: str, obj: Any) -> None:
        if isinstance(obj, h5py.Dataset) and name.split("/")[0] not in CHECKPOINT_GROUPS:
            out.append((name, obj))

    f.visititems(visit)
    return out


def _disagree(lengths: dict[str, int], ref: str, strict: bool, unit: str, part: str,
              bad) -> None:
    """In a closed file (``strict``), every length must be the reference's."""
    if not strict or ref not in lengths:
        return
    n = lengths[ref]
    for name, k in lengths.items():
        if k != n:
            bad(Problem(part, f"/{name} holds {k} {unit}, /{ref} {n}"))


def _check_springs(f: h5py.File, frames: dict[str, int], strict: bool, bad) -> None:
    """The springs of the frames must lie within the lists (all of them, when closed)."""
    g = f.get("springs")
    if not isinstance(g, h5py.Group):
        return
    for c in _SPRING_LISTS:
        if _dataset(f, c) is None:
            bad(Problem("frames", f"/{c} is missing"))
            return
    k = min(frames.get("springs/start", 0), frames.get("springs/count", 0))
    if not k:
        return
    try:
        end = int(f["springs/start"][k - 1]) + int(f["springs/count"][k - 1])
    except OSError:
        return  # the deep check names the chunk
    for c in (*_SPRING_LISTS, digests.SPRING_CHECKS):
        if c == digests.SPRING_CHECKS and _dataset(f, c) is None:
            continue
        n = f[c].shape[0]
        if n < end or (strict and n != end):
            bad(Problem("frames", f"/{c} holds {n} springs, the frames {end}"))


def row_count(f: h5py.File) -> int:
    """The fewest rows of any dataset with one row per record (the series, the frames):
    what a resume can keep (a checkpoint taken after more rows cannot be resumed)."""
    names = ["time", *_FRAME_OPTIONAL, *FRAME_REQUIRED, digests.SERIES_CHECKS,
             digests.FRAME_CHECKS]
    for grp in ("energy", "momentum"):
        g = f.get(grp)
        if isinstance(g, h5py.Group):
            names += [f"{grp}/{k}" for k in g]
    found = [_dataset(f, n) for n in names]
    lengths = [ds.shape[0] for ds in found if ds is not None and ds.shape]
    return int(min(lengths, default=0))


def verify_run(path: str | Path, *, deep: bool = False, series: bool = False) -> Integrity:
    """:func:`check_run` on the file at ``path`` (opened read-only).  Raises
    :class:`engine.io.RunFileError` (one line) for a file that cannot be opened at all:
    missing, not HDF5, truncated."""
    with open_run_file(path) as f:
        return check_run(f, path, deep=deep, series=series)
