"""Digests a run file keeps beside its data, so that damage the checksums cannot see
reads as damage, not as other values (issue #36 items 2 and 8; docs/output.md,
"Integrity").

HDF5's Fletcher-32 covers the bytes of each chunk, not the file's metadata: a damaged
chunk index makes a chunk that was written read as the fill value (zeros), silently,
and no attribute is covered at all.  So the writer keeps, and every reader checks:

* **Row digests** (item 2a): for every row of every dataset with one row per record
  (the series, the frames) a 64-bit digest (:func:`row_digests`) in ``/checks/series``
  and ``/checks/frames`` (one column a dataset, named by the attribute ``columns``),
  and one for every row of the springs' lists in ``/checks/springs``.  The digest
  depends on the row's index, so a zero row where data was written, or another
  frame's chunk in its place, does not match.  Computed at the flush, in one
  vectorised pass over the new rows (a few µs a record for 80 bodies).
* **The header digest** (item 2b): SHA-256 over every root attribute a resume or a
  replay builds the model and its clock from (:data:`HEADER_ATTRS`: ``parameters``,
  ``h``, ``integrator``, …), the attributes of ``/parameters``, the constants
  (:data:`CONSTANTS`: masses, inertia, diameters, bonds) and ``layout`` (the datasets
  the file was created with, item 8: one missing later is damage), as the root
  attribute ``header_digest``, written once when the file is created; the attributes a
  writer changes (:data:`STATUS_ATTRS`: ``status``, ``message``, …) under
  ``status_digest``, stamped with each change (:func:`stamp_status`); ``/events``
  under its attribute ``digest``.

Since issue #46 item 3 (schema 3) no digest can be switched off by damage: the root
attribute ``digests`` (:data:`DIGESTS`, under the header digest) records which digests
the file is written with (:data:`KINDS`), and a file missing one of them is refused
(:func:`written_with`, :func:`header_problems`); the header digest also covers the
``columns`` attributes of ``/checks`` (what the row digests cover), which must name
exactly the row datasets of the ``layout`` (:func:`checks_problems`); a row digest
that reads 0 (the fill value) is a mismatch (:func:`strict_rows`), and ``t_end`` is
under the status digest.
Files of schema 2 written with the digests of issue #36 (they have a ``layout``) must
keep them too (no record: all of :data:`KINDS`); files written before have none of
these; they read and resume as before.  This module reads and writes only what it is
given (no import of the rest of :mod:`engine.io`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

import h5py
import numpy as np

HEADER_ATTRS = ("schema_version", "scenario", "model", "integrator", "h", "version",
                "parameters", "record_every", "energy_reference", "energy_scale",
                "conserved", "coordinates", "layout", "digests")
"""Root attributes written once, when the file is created, under ``header_digest``."""
STATUS_ATTRS = ("status", "message", "steps", "t_final", "writer_pid", "writer_host",
                "output_name")
"""Root attributes a writer changes (a resume, the close), under ``status_digest``."""
STATUS_ATTRS_2 = (*STATUS_ATTRS, "t_end")
"""The same since issue #46 item 3: with ``t_end`` (where a resume without ``--t-end``
goes); a status digest of either kind is read (files written before keep theirs)."""
CONSTANTS = ("bodies/mass", "bodies/inertia", "bodies/inertia_tensor", "bodies/diameter",
             "bodies/group", "model/bonds",
             *(f"model/assembly/{k}" for k in ("position", "velocity", "spin", "bond_type",
                                              "bond_type_names", "bond_type_coefficients",
                                              "walls", "bond_type_laws", "dipole")))
"""The model's constant datasets, under ``header_digest`` (``model/assembly``: the
assembly the file carries, issue #43 item 4, ``engine.models.assembly.CARRIED``)."""
SCHEMA_VERSION = 3
"""The newest layout of a run file (:class:`engine.io.RunWriter` writes it; 1: the first
one, without the state; 2: with the state, and since issue #36 the digests; 3: the record
of the digests, issue #46 item 3); a file of a newer one is refused in one line (item 8)."""
DIGESTS = "digests"
"""Root attribute (schema 3, under the header digest): JSON list of the digests the file
is written with (:data:`KINDS`); one missing later is damage, not a file without it."""
KINDS = ("header", "status", "rows", "events", "checkpoints")
"""``header_digest``, ``status_digest``, the row digests of ``/checks`` (every row dataset
of the ``layout`` has its column), ``/events``' ``digest``, each checkpoint's ``digest``."""
DIGEST_ATTR = "digest"
"""The attribute of ``/events`` (and of each checkpoint group) that holds its digest."""
HEADER_DIGEST = "header_digest"
STATUS_DIGEST = "status_digest"
LAYOUT = "layout"
"""Root attribute: JSON list of the datasets the file was created with."""
SERIES_CHECKS, FRAME_CHECKS, SPRING_CHECKS = "checks/series", "checks/frames", "checks/springs"
CHECK_GROUPS = ("checks",)
_NOT_IN_LAYOUT = ("checkpoint", "checkpoint_alt", "checks", "events")

_SERIES_GROUPS = ("time", "energy", "momentum")


class DigestMismatch(OSError):
    """Values read from a run file are not those written (their digest differs): a
    damaged chunk index, or bytes changed where no checksum looks.  Handled where a
    checksum error (``OSError``) is."""


# ---------------------------------------------------------------------------- hashing
def canon_array(v: Any) -> tuple[bytes, memoryview]:
    """An array as (dtype and shape, bytes), for a SHA-256 digest."""
    a = np.ascontiguousarray(np.asarray(v))
    head = b"a" + a.dtype.str.encode() + repr(a.shape).encode()
    return head, memoryview(a.reshape(-1).view(np.uint8)) if a.size else memoryview(b"")


def canon_attr(v: Any) -> tuple[bytes, memoryview]:
    """An attribute value as (kind, bytes): strings, integers, floats by their bits."""
    if isinstance(v, bytes):
        return b"s", memoryview(v)
    if isinstance(v, str):
        return b"s", memoryview(v.encode())
    if isinstance(v, bool | int | np.integer | np.bool_):
        return b"i", memoryview(str(int(v)).encode())
    if isinstance(v, float | np.floating):
        return b"f", memoryview(float(v).hex().encode())
    if isinstance(v, np.ndarray) and v.dtype.kind == "O":  # (strings)
        return b"o", memoryview(repr([canon_attr(x)[1].tobytes() for x in v.ravel()])
                                .encode())
    return canon_array(v)  # an array attribute


def sha_digest(domain: bytes, arrays: Mapping[str, Any], attrs: Mapping[str, Any],
               leave_out: Iterable[str] = ()) -> str:
    """SHA-256 over ``arrays`` (name → array) and ``attrs`` (name → value), in name
    order, each part preceded by its length (no ambiguity); ``sha256:<hex>``."""
    h = hashlib.sha256(domain)
    skip = frozenset(leave_out)
    for kind, items, canon in ((b"d", arrays, canon_array), (b"t", attrs, canon_attr)):
        for name in sorted(items):
            if kind == b"t" and name in skip:
                continue
            head, data = canon(items[name])
            for part in (kind + name.encode(), head, data):
                h.update(len(part).to_bytes(8, "little"))
                h.update(part)
    return "sha256:" + h.hexdigest()


_MASK = (1 << 64) - 1
_MUL = 0x9E3779B97F4A7C15
_ROW = 0xC2B2AE3D27D4EB4F
_BLOCK = 1 << 16
_W = (np.arange(_BLOCK, dtype=np.uint64) * np.uint64(2) + np.uint64(1)) * np.uint64(_MUL)
"""Odd weights of the positions in a row (a block of it): every single-bit change of a
row changes its digest."""


def row_digests(a: np.ndarray, first_row: int) -> np.ndarray:
    """One 64-bit digest per row of ``a`` (its first axis), the rows being rows
    ``first_row, first_row + 1, …`` of their dataset: ``Σ_j w_j u_j + c (row + 1)``
    mod 2⁶⁴ over the row's 64-bit (or 32-bit) words ``u_j`` with odd weights
    ``w_j``, so that any one changed bit, a row of zeros where data was written, or
    another row's values show.  Vectorised: no Python work per row."""
    a = np.ascontiguousarray(a)
    k = a.shape[0] if a.ndim else 1
    u = a.reshape(k, -1)
    size = u.dtype.itemsize
    if size == 8:
        u = u.view(np.uint64)
    elif size in (1, 2, 4):
        u = u.view(f"u{size}").astype(np.uint64)
    else:  # (not a type a run file holds in its rows)
        u = np.frombuffer(u.tobytes(), np.uint8).reshape(k, -1).astype(np.uint64)
    n = u.shape[1]
    if n <= _BLOCK:
        h = np.einsum("ij,j->i", u, _W[:n]) if n else np.zeros(k, np.uint64)
    else:
        h = np.zeros(k, np.uint64)
        for b, s in enumerate(range(0, n, _BLOCK)):
            part = np.einsum("ij,j->i", u[:, s:s + _BLOCK], _W[:min(_BLOCK, n - s)])
            h += part * np.uint64(((2 * b + 1) * _ROW) & _MASK)
    return _finish(h, first_row)


def _finish(h: np.ndarray, first_row: int) -> np.ndarray:
    """Add the rows' own term (``h``: rows along the first axis) and mix."""
    rows = np.arange(first_row + 1, first_row + 1 + h.shape[0], dtype=np.uint64)
    h += (rows * np.uint64(_ROW)).reshape(-1, *([1] * (h.ndim - 1)))
    h ^= h >> np.uint64(29)
    return h


def _scalar_digests(columns: list[np.ndarray], first_row: int) -> np.ndarray:
    """:func:`row_digests` of several 1-D 64-bit arrays of the same rows at once
    (``(k, len(columns))``): the writer's series in one pass, not one each."""
    u = np.stack([np.asarray(c).view(np.uint64) for c in columns], axis=1)  # (bits)
    return _finish(u * _W[0], first_row)


def events_digest(rows: Iterable[tuple]) -> str:
    """SHA-256 of the events ``(step, t, kind, old, new)`` (``/events``' ``digest``)."""
    text = json.dumps([[int(s), float(t).hex(), _s(k), _s(o), _s(n)]
                       for s, t, k, o, n in rows])
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def _s(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


# ---------------------------------------------------------------------------- header
def _header_parts(f: h5py.File) -> tuple[dict[str, Any], dict[str, Any]]:
    a = f.attrs
    attrs = {k: a[k] for k in HEADER_ATTRS if k in a}
    g = f.get("parameters")
    if isinstance(g, h5py.Group):
        attrs.update({f"parameters/{k}": v for k, v in g.attrs.items()})
    arrays = {}
    for name in CONSTANTS:
        ds = f.get(name)
        if isinstance(ds, h5py.Dataset):
            arrays[name] = ds[()]
    return arrays, attrs


def header_digest(f: h5py.File) -> str:
    """The digest of the header: :data:`HEADER_ATTRS`, ``/parameters``' attributes and
    the :data:`CONSTANTS`, as stored in ``f``; in a file with the record :data:`DIGESTS`
    (schema 3) also the ``columns`` attribute of each ``/checks`` dataset (what the row
    digests cover: its absence, or the dataset's, changes the digest)."""
    arrays, attrs = _header_parts(f)
    if DIGESTS not in f.attrs:
        return sha_digest(b"rrp-header-1", arrays, attrs)
    for path in (SERIES_CHECKS, FRAME_CHECKS, SPRING_CHECKS):
        ds = f.get(path)
        if isinstance(ds, h5py.Dataset) and "columns" in ds.attrs:
            attrs[f"{path}/columns"] = ds.attrs["columns"]
    return sha_digest(b"rrp-header-2", arrays, attrs)


def status_digest(f: h5py.File, legacy: bool = False) -> str:
    """The digest of :data:`STATUS_ATTRS_2` (``legacy``: of :data:`STATUS_ATTRS`, as
    files written before issue #46 item 3 keep it)."""
    a = f.attrs
    names, domain = ((STATUS_ATTRS, b"rrp-status-1") if legacy else
                     (STATUS_ATTRS_2, b"rrp-status-2"))
    return sha_digest(domain, {}, {k: a[k] for k in names if k in a})


def status_matches(f: h5py.File, stored: Any) -> bool:
    """Whether ``stored`` is the status digest of ``f`` (either kind)."""
    stored = _s(stored)
    return stored == status_digest(f) or stored == status_digest(f, legacy=True)


def written_with(f: h5py.File) -> frozenset[str]:
    """The digests (:data:`KINDS`) the run file ``f`` was written with, each of which it
    must still have: its record (:data:`DIGESTS`, schema 3); in a file of schema 2 with a
    ``layout`` or a ``header_digest`` (issue #36), all of them; else (written before, or
    a schema-3 file that lost its record: :func:`header_problems` says so) none, or all."""
    a = f.attrs
    raw = a.get(DIGESTS)
    if raw is not None:
        try:
            kinds = json.loads(_s(raw))
            return frozenset(str(k) for k in kinds)
        except (ValueError, TypeError):
            return frozenset(KINDS)  # (damaged: the header digest says so)
    if LAYOUT in a or HEADER_DIGEST in a or _schema(f) >= 3:
        return frozenset(KINDS)
    return frozenset()


ALL_ROWS = 1 << 62


def strict_rows(f: h5py.File) -> int:
    """The rows below which a row digest stored as 0 (the fill value: ``/checks`` read
    through a damaged index) is a mismatch, not "not checked": in files with the record
    :data:`DIGESTS` (their writer fills every column; files of issue #36 left a column it
    did not append to at 0: none), every row of a file closed ``complete`` or ``paused``
    (:data:`ALL_ROWS`), else the rows of its newest complete checkpoint: a writer killed
    while it appended the digests of its last rows (after them, before that write's
    checkpoint) may leave them 0, a ragged tail that a resume drops."""
    if DIGESTS not in f.attrs:
        return 0
    if read_status(f)[0] in ("complete", "paused"):
        return ALL_ROWS
    rows, newest = 0, -1
    for name in ("checkpoint", "checkpoint_alt"):
        g = f.get(name)
        if not isinstance(g, h5py.Group):
            continue
        try:
            serial, n = int(g.attrs.get("serial", -1)), int(g.attrs.get("n_records", 0))
        except (TypeError, ValueError, OSError):
            continue
        if serial > newest:
            rows, newest = n, serial
    return rows


def _schema(f: h5py.File) -> int:
    try:
        return int(f.attrs.get("schema_version", 1))
    except (TypeError, ValueError):
        return 1


def stamp_status(f: h5py.File) -> None:
    """Set ``status_digest`` after a change of the :data:`STATUS_ATTRS` (in the same
    flush as the change: on disk together); rewritten in place where it exists (the
    close marks the file in place: issue #36 item 3)."""
    a = f.attrs
    if STATUS_DIGEST in a:
        a.modify(STATUS_DIGEST, status_digest(f))
    else:
        a[STATUS_DIGEST] = status_digest(f)


def read_status(f: h5py.File) -> tuple[str, str]:
    """``(status, message)`` of the run file ``f`` as its writer left them;
    ``("running", "")`` — not closed — where they cannot be read or do not match
    ``status_digest`` (a writer killed while it marked the file: the attributes are
    rewritten before their digest, so a kill in between leaves them unconfirmed, and
    ``rrp run --resume`` verifies the data and finishes the file; issue #36 items 2b, 3;
    only a ``.partial`` can be left so: in a renamed file :func:`header_problems` calls
    it damage).  A file written before the digest is read as it says."""
    try:
        a = f.attrs
        status, message = _s(a.get("status", "unknown")), _s(a.get("message", ""))
        stored = a.get(STATUS_DIGEST)
        if stored is None and "status" in written_with(f):
            return "running", ""  # (its digest lost: unconfirmed; header_problems names it)
        if stored is not None and not status_matches(f, stored):
            return "running", ""
    except OSError:
        return "running", ""
    return status, message


def seal(f: h5py.File) -> None:
    """At a new file's creation, once its layout and constants are written: the
    ``layout`` (every dataset there now), the header digest, the status digest and the
    row checks (``/checks``: a column per row dataset now in the file)."""
    names: list[str] = []

    def visit(name: str, obj: Any) -> None:
        if isinstance(obj, h5py.Dataset) and name.split("/")[0] not in _NOT_IN_LAYOUT:
            names.append(name)

    f.visititems(visit)
    f.attrs[LAYOUT] = json.dumps(sorted(names))
    for path, cols in check_columns(names).items():
        if cols:
            ds = f.create_dataset(path, (0, len(cols)), maxshape=(None, len(cols)),
                                  dtype="u8", chunks=(256, len(cols)), fletcher32=True)
            ds.attrs["columns"] = json.dumps(cols)
    f.attrs[DIGESTS] = json.dumps(list(KINDS))  # (issue #46 item 3: before the digest)
    f.attrs[HEADER_DIGEST] = header_digest(f)
    stamp_status(f)


def check_columns(names: Iterable[str]) -> dict[str, list[str]]:
    """The columns of each ``/checks`` dataset of a file whose ``layout`` is ``names``:
    one for every dataset with one row per record (the series, the frames) or per
    spring (the springs' lists)."""
    names = list(names)
    return {SERIES_CHECKS: [n for n in names if n.split("/")[0] in _SERIES_GROUPS],
            FRAME_CHECKS: [n for n in names if n.split("/")[0] in ("bodies", "generalized")
                           and n not in CONSTANTS]
            + [n for n in ("springs/start", "springs/count") if n in names],
            SPRING_CHECKS: [n for n in ("springs/sphere", "springs/partner", "springs/xi")
                            if n in names]}


def checks_problems(f: h5py.File) -> list[tuple[str, str]]:
    """``(part, text)`` for each ``/checks`` dataset that a file written with row digests
    lacks, or whose ``columns`` do not name exactly the row datasets of its ``layout``
    (one changed byte there left a dataset unchecked: issue #46 item 3); ``part``:
    ``series`` or ``frames``."""
    if "rows" not in written_with(f) or f.attrs.get(LAYOUT) is None:
        return []
    try:
        expected = check_columns(json.loads(_s(f.attrs[LAYOUT])))
    except (ValueError, TypeError):
        return []  # (a damaged layout: the header digest says so)
    out = []
    for path, cols in expected.items():
        if not cols:
            continue
        part = "series" if path == SERIES_CHECKS else "frames"
        ds = f.get(path)
        if not isinstance(ds, h5py.Dataset):
            out.append((part, f"/{path} is missing (the row digests of {len(cols)} "
                              "datasets)"))
            continue
        try:
            got = json.loads(_s(ds.attrs["columns"]))
        except (KeyError, ValueError, TypeError, OSError):
            got = None
        if got != cols:
            out.append((part, f"/{path} does not name the datasets it checks (its "
                              "attribute columns is damaged)"))
    return out


def header_problems(f: h5py.File) -> list[str]:
    """What is wrong with the header of ``f`` (empty for a file written before it had a
    digest; a constant the layout lists but the file lacks is left to the structure
    check, which names it)."""
    out = []
    a = f.attrs
    kinds = written_with(f)
    if _schema(f) >= 3 and DIGESTS not in a:
        out.append(f"its record of the digests it is written with (the attribute "
                   f"{DIGESTS}) is missing")
    stored = a.get(HEADER_DIGEST)
    gone = missing_from_layout(f) or ()
    if stored is None and "header" in kinds:  # (issue #46 item 3: never skipped)
        out.append(f"its header digest ({HEADER_DIGEST}) is missing, and the file was "
                   "written with one: its attributes, parameters and constants cannot be "
                   "checked")
    elif any(c in gone for c in CONSTANTS):
        pass  # (a constant removed: the structure check names it)
    elif stored is not None and _s(stored) != header_digest(f):
        out.append("its header (the run's attributes, parameters and constants) does not "
                   "match its digest: changed after writing")
    if "status" in kinds and STATUS_DIGEST not in a:
        out.append(f"its status digest ({STATUS_DIGEST}) is missing, and the file was "
                   "written with one")
    elif not str(f.filename).endswith(".partial"):
        try:
            stored = a.get(STATUS_DIGEST)
            ok = stored is None or status_matches(f, stored)
        except OSError:
            ok = False
        if not ok:
            out.append("its status attributes do not match their digest: changed after "
                       "writing")
    # (a .partial's status may be unconfirmed by a writer killed while it marked the
    # file: read_status reads it as not closed, and --resume finishes it)
    return out


def missing_from_layout(f: h5py.File) -> list[str] | None:
    """The datasets of the file's ``layout`` that are gone (``None``: no layout)."""
    raw = f.attrs.get(LAYOUT)
    if raw is None:
        return None
    gone = []
    for name in json.loads(_s(raw)):
        try:
            ok = isinstance(f.get(name), h5py.Dataset)
        except (KeyError, ValueError, RuntimeError, OSError):
            ok = False
        if not ok:
            gone.append(name)
    return gone


def in_layout(f: h5py.File, name: str) -> bool | None:
    """Whether the file was created with dataset ``name`` (``None``: not recorded)."""
    raw = f.attrs.get(LAYOUT)
    return None if raw is None else name in json.loads(_s(raw))


# ---------------------------------------------------------------------------- rows
def columns(f: h5py.File, path: str) -> tuple[h5py.Dataset, dict[str, int]] | None:
    """The checks dataset ``path`` and its columns (name → index), or ``None``."""
    ds = f.get(path)
    if not isinstance(ds, h5py.Dataset):
        return None
    cols = json.loads(_s(ds.attrs["columns"]))
    return ds, {c: i for i, c in enumerate(cols)}


def checks_for(f: h5py.File, name: str) -> tuple[h5py.Dataset, int] | None:
    """The checks dataset and column of the row dataset ``name`` (``None``: unchecked)."""
    for path in (SERIES_CHECKS, FRAME_CHECKS, SPRING_CHECKS):
        found = columns(f, path)
        if found is not None and name in found[1]:
            return found[0], found[1][name]
    return None


def first_mismatch(values: np.ndarray, first_row: int, stored: np.ndarray,
                   strict: int = 0) -> int | None:
    """The first row of ``values`` (rows ``first_row…``) whose digest is not the one
    ``stored`` (offset in ``values``), or ``None``; rows past ``stored`` are not
    checked, nor rows from ``strict`` on (:func:`strict_rows`) stored as 0 (a dataset
    the writer did not append to, a digest a killed writer had not written)."""
    k = min(len(values), len(stored))
    if k == 0:
        return None
    stored = np.asarray(stored[:k], np.uint64)
    differ = row_digests(values[:k], first_row) != stored
    zero_ok = np.arange(first_row, first_row + k) >= strict
    bad = np.nonzero(differ & ((stored != 0) | ~zero_ok))[0]
    return int(bad[0]) if len(bad) else None


class RowDigests:
    """The writer's side: collects the digests of the rows appended in one flush
    (:meth:`add`, from the values as stored) and appends them to ``/checks``
    (:meth:`write`), after the data: a writer killed in between leaves rows without
    digests, a ragged tail that is not read."""

    def __init__(self, f: h5py.File) -> None:
        self.targets: list[tuple[str, dict[str, int]]] = []
        for path in (SERIES_CHECKS, FRAME_CHECKS, SPRING_CHECKS):
            found = columns(f, path)
            if found is not None:
                self.targets.append((path, found[1]))
        self._rows: dict[str, tuple[np.ndarray, int]] = {}

    @property
    def active(self) -> bool:
        return bool(self.targets)

    def tracked(self, ds: h5py.Dataset, name: str) -> Any:
        """``ds`` itself, or, for a dataset with a digest column, a :class:`Tracked`
        view of it whose appended rows are digested (the writer's ``_d``)."""
        if any(name in cols for _, cols in self.targets):
            return Tracked(ds, name, self)
        return ds

    def add(self, name: str, values: np.ndarray, first_row: int) -> None:
        """Rows ``first_row…`` of dataset ``name`` as written."""
        if self.targets and not name.startswith("checks/"):
            self._rows[name] = (values, first_row)  # (digests taken in write())

    def write(self, dataset, append) -> None:
        """Append the collected digests: ``dataset(path)`` opens a checks dataset,
        ``append(ds, rows)`` appends (the writer's own)."""
        rows, self._rows = self._rows, {}
        got: dict[str, np.ndarray] = {}
        scalars: dict[tuple[int, int], list[str]] = {}  # (first row, rows) → names
        for name, (v, r) in rows.items():
            if v.ndim == 1 and v.dtype.itemsize == 8:
                scalars.setdefault((r, len(v)), []).append(name)
            else:
                got[name] = row_digests(v, r)
        for (r, _), names in scalars.items():
            d = _scalar_digests([rows[n][0] for n in names], r)
            got.update({n: d[:, i] for i, n in enumerate(names)})
        for path, cols in self.targets:
            if not any(c in got for c in cols):
                continue
            k = max(len(got[c]) for c in cols if c in got)
            block = np.zeros((k, len(cols)), np.uint64)
            for c, i in cols.items():
                if c in got and len(got[c]) == k:
                    block[:, i] = got[c]
            append(dataset(path), block)


def check_series(f: h5py.File, arrays: Mapping[str, Any]) -> None:
    """:class:`DigestMismatch` if a series read whole (name → array) is not what was
    written."""
    found = columns(f, SERIES_CHECKS)
    if found is None:
        return
    ds, cols = found
    stored = ds[()]
    strict = strict_rows(f)
    for name, v in arrays.items():
        if v is not None and name in cols:
            r = first_mismatch(np.asarray(v), 0, stored[:, cols[name]], strict)
            if r is not None:
                raise DigestMismatch(f"/{name} reads other values than were written at "
                                     f"record {r}")


def check_rows(found: tuple[h5py.Dataset, dict[str, int]] | None, first_row: int,
               rows: Mapping[str, Any], strict: int = 0) -> None:
    """:class:`DigestMismatch` if rows ``first_row…`` read (name → rows, as read) are
    not what was written; ``found``: :func:`columns` of their checks; ``strict``: see
    :func:`first_mismatch`."""
    if found is None:
        return
    ds, cols = found
    k = max((len(v) for v in rows.values()), default=0)
    if first_row >= ds.shape[0] or k == 0:
        return  # (a ragged tail: rows past the checks are not read as checked)
    stored = ds[first_row:first_row + k]
    for name, v in rows.items():
        if name in cols:
            r = first_mismatch(np.asarray(v), first_row, stored[:, cols[name]], strict)
            if r is not None:
                raise DigestMismatch(f"/{name} reads other values than were written at "
                                     f"row {first_row + r} (they do not match their digest)")


class Tracked:
    """A dataset of the writer whose appended rows (``ds[n0:] = rows``) are handed to
    :meth:`RowDigests.add` as they are stored; everything else is the dataset's."""

    __slots__ = ("ds", "name", "sink")

    def __init__(self, ds: h5py.Dataset, name: str, sink: RowDigests) -> None:
        self.ds, self.name, self.sink = ds, name, sink

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.ds, attr)

    def __getitem__(self, key: Any) -> Any:
        return self.ds[key]

    def __setitem__(self, key: Any, value: Any) -> None:
        self.ds[key] = value
        if isinstance(key, slice) and key.stop is None and key.step is None:
            self.sink.add(self.name, np.asarray(value, dtype=self.ds.dtype),
                          int(key.start or 0))

    def __len__(self) -> int:
        return len(self.ds)
