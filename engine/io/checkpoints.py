"""The checkpoints of a run file (docs/output.md, "Integrity"): each checkpoint group's
SHA-256 digest over all its datasets and attributes (:func:`checkpoint_digest`), reading
one back checked (:func:`read_checkpoint`) and choosing the newest usable one
(:func:`choose_checkpoint`).  Split out of :mod:`.verify`, which checks the whole file and
re-exports these names."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import h5py

from . import digests
from .digests import sha_digest
from .schema import CHECKPOINT_GROUPS

DIGEST_ATTR = "digest"
"""The checkpoint group's attribute that holds its digest (``sha256:<hex>``)."""
UNDIGESTED_ATTRS = frozenset({"serial", DIGEST_ATTR})
"""Attributes of a checkpoint group the digest leaves out: ``serial`` is set after the
digest (it marks the group complete), and the digest itself."""


# ---------------------------------------------------------------------------- digest
def checkpoint_digest(arrays: Mapping[str, Any], attrs: Mapping[str, Any]) -> str:
    """The digest of a checkpoint: SHA-256 over its datasets ``arrays`` (name → array:
    dtype, shape and bytes) and its attributes ``attrs`` (name → value as stored: ``str``,
    integers, floats by their exact bits), in name order, leaving out
    :data:`UNDIGESTED_ATTRS`.  The writer gives the values it stores, a reader the values
    it reads back: the same digest exactly when every bit is the same.  The arrays are
    hashed in place (no copy of a large checkpoint)."""
    return sha_digest(b"rrp-checkpoint-1", arrays, attrs, UNDIGESTED_ATTRS)


# ---------------------------------------------------------------------------- checkpoints
@dataclass(frozen=True)
class CheckpointCheck:
    """One checkpoint group as found: ``state`` is ``verified`` (its digest holds),
    ``unverifiable`` (written before checkpoints carried a digest), ``incomplete`` (a
    writer was killed while writing it: normal, the other group is used) or ``damaged``
    (``why`` says how); ``t`` and ``n_records`` as stored (``None`` where unreadable)."""

    name: str
    serial: int
    state: str
    why: str = ""
    t: float | None = None
    n_records: int | None = None

    @property
    def usable(self) -> bool:
        return self.state in ("verified", "unverifiable")


def _serial(g: h5py.Group) -> int:
    a = g.attrs
    default = 0 if g.name == "/checkpoint" and "n_records" in a else -1
    try:
        return int(a.get("serial", default))
    except (TypeError, ValueError):
        return -1


def read_checkpoint(g: h5py.Group, need_digest: bool = False,
                    ) -> tuple[dict[str, Any], dict[str, Any], CheckpointCheck]:
    """Read a checkpoint group: its datasets, its attributes (raw, as h5py gives them)
    and what was found (:class:`CheckpointCheck`; nothing is raised for a damaged one).
    ``need_digest``: the file was written with checkpoint digests (issue #46 item 3), so
    one without is damaged, not *unverifiable*."""
    name = g.name.lstrip("/")
    serial = _serial(g)
    arrays: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    t = n = None
    try:
        attrs = dict(g.attrs)
        t = float(attrs["t"]) if "t" in attrs else None
        n = int(attrs["n_records"]) if "n_records" in attrs else None
    except (OSError, TypeError, ValueError, KeyError) as exc:
        return arrays, attrs, CheckpointCheck(name, serial, "damaged",
                                              f"its attributes cannot be read ({exc})")
    if serial < 0:
        return arrays, attrs, CheckpointCheck(name, serial, "incomplete",
                                              "its writer stopped while writing it", t, n)
    for k in g:
        obj = g.get(k)
        if not isinstance(obj, h5py.Dataset):
            return arrays, attrs, CheckpointCheck(name, serial, "damaged",
                                                  f"{k} is not a dataset", t, n)
        try:
            arrays[k] = obj[()]
        except OSError:
            return arrays, attrs, CheckpointCheck(
                name, serial, "damaged", f"a checksum error in {k}", t, n)
    if n is None or t is None:
        return arrays, attrs, CheckpointCheck(
            name, serial, "damaged",
            f"it lacks the attribute {'n_records' if n is None else 't'}", t, n)
    stored = attrs.get(DIGEST_ATTR)
    if stored is None and need_digest:
        return arrays, attrs, CheckpointCheck(
            name, serial, "damaged", "its digest is missing (the file was written with "
            "one)", t, n)
    if stored is None:
        return arrays, attrs, CheckpointCheck(name, serial, "unverifiable", "", t, n)
    stored = stored.decode() if isinstance(stored, bytes) else str(stored)
    if checkpoint_digest(arrays, attrs) != stored:
        return arrays, attrs, CheckpointCheck(
            name, serial, "damaged", "the digest does not match (data or attributes changed "
            "after writing)", t, n)
    return arrays, attrs, CheckpointCheck(name, serial, "verified", "", t, n)


_PAST_THE_RECORDS = "taken after {} records, the file holds {}"


def choose_checkpoint(f: h5py.File, rows: int | None = None,
                      ) -> tuple[tuple[dict, dict] | None, CheckpointCheck | None,
                                 list[CheckpointCheck]]:
    """The checkpoint a resume continues from: the usable group (verified, or not
    verifiable) with the largest serial whose ``n_records`` the file's rows cover
    (``rows``: the fewest rows of any row dataset; ``None``: not checked).  Returns its
    ``(arrays, attrs)`` as read (``None`` when there is none), its check, and the checks
    of all groups newest first."""

    found = []
    for name in CHECKPOINT_GROUPS:
        g = f.get(name)
        if isinstance(g, h5py.Group):
            found.append(g)
    found.sort(key=_serial, reverse=True)
    checks: list[CheckpointCheck] = []
    chosen = None
    choice: CheckpointCheck | None = None
    need = "checkpoints" in digests.written_with(f)
    for g in found:
        arrays, attrs, c = read_checkpoint(g, need)
        if c.usable and rows is not None and c.n_records is not None and c.n_records > rows:
            c = CheckpointCheck(c.name, c.serial, "damaged",
                                _PAST_THE_RECORDS.format(c.n_records, rows), c.t, c.n_records)
        checks.append(c)
        if chosen is None and c.usable:
            chosen, choice = (arrays, attrs), c
    return chosen, choice, checks

