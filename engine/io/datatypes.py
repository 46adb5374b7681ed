"""The datatypes a run file's objects are stored with, checked before anything is read
(issue #36 item 4).

HDF5 converts every value it reads from the datatype stored in the file to the one
asked for.  A flipped byte in a datatype's description (a float whose bit offset says
28 416 in an 8-byte value: the seeded flip at byte 432 049 of the damage test's
pendulum) makes libhdf5's float conversion write far outside its buffer: the process
dies (SIGSEGV), with no Python exception to catch, in a read that no checksum or
digest could precede.  Reading the descriptions themselves is safe (no conversion),
so :func:`datatype_problem` looks at every dataset's and attribute's datatype when a
run file is opened and a description that is not one a run file is written with is
a one-line :class:`~engine.io.schema.RunFileError` instead of a crash.  The residual
risk (damage libhdf5 mishandles elsewhere in its metadata) is docs/output.md,
"Integrity"."""

from __future__ import annotations

import h5py
from h5py import h5a, h5o, h5t

__all__ = ["datatype_problem"]

_FLOATS = (h5t.IEEE_F64LE, h5t.IEEE_F32LE, h5t.IEEE_F64BE, h5t.IEEE_F32BE)
"""The float types a run file holds (numpy's; H5Tequal compares every field: size,
precision, offset, sign/exponent/mantissa positions, bias, padding)."""

_MAX_OBJECTS = 100_000
"""More objects than any run file holds: a damaged file that seems to hold more (a
loop of links) is not walked further."""


def _type_ok(t: h5t.TypeID, depth: int = 0) -> bool:
    """Whether ``t`` describes a value libhdf5 can convert safely: IEEE floats, whole
    integers, strings, and compounds / enums / variable-length / arrays of them whose
    members lie inside the value (a description h5py cannot even read: no)."""
    try:
        return _type_ok_(t, depth)
    except Exception:  # noqa: BLE001 - a description that does not decode is damaged
        return False


def _type_ok_(t: h5t.TypeID, depth: int) -> bool:
    if depth > 8:
        return False
    cls = t.get_class()
    if cls == h5t.FLOAT:
        return any(t.equal(s) for s in _FLOATS)
    if cls == h5t.INTEGER:
        size = t.get_size()
        return size in (1, 2, 4, 8) and t.get_offset() == 0 and t.get_precision() == 8 * size
    if cls == h5t.STRING:
        return t.is_variable_str() or 0 < t.get_size() < 1 << 20
    if cls == h5t.COMPOUND:
        size = t.get_size()
        for i in range(t.get_nmembers()):
            m = t.get_member_type(i)
            if t.get_member_offset(i) + m.get_size() > size or not _type_ok(m, depth + 1):
                return False
        return True
    if cls in (h5t.ENUM, h5t.VLEN, h5t.ARRAY):
        return _type_ok(t.get_super(), depth + 1)
    return cls in (h5t.OPAQUE, h5t.REFERENCE)


def _attr_problem(obj: h5py.HLObject, where: str) -> str | None:
    try:
        n = h5a.get_num_attrs(obj.id)
    except Exception:  # noqa: BLE001 - unreadable: the readers say what is wrong
        return None
    for i in range(n):
        try:
            a = h5a.open(obj.id, index=i)
            name, t = a.name.decode("utf-8", "replace"), a.get_type()
        except Exception:  # noqa: BLE001 - (as above)
            continue
        if not _type_ok(t):
            return f"the datatype of the attribute {name!r} of {where}"
    return None


def datatype_problem(f: h5py.File) -> str | None:
    """What, in ``f``, is stored with a datatype no run file is written with (``None``:
    nothing): every dataset and every attribute reachable from the root, walked without
    reading a value.  Objects that cannot be listed or opened are skipped: reading them
    fails with an exception, which the readers turn into one line."""
    seen: set[int] = set()
    stack: list[tuple[str, h5py.HLObject]] = [("/", f)]
    while stack and len(seen) < _MAX_OBJECTS:
        where, obj = stack.pop()
        try:
            addr = h5o.get_info(obj.id).addr
        except Exception:  # noqa: BLE001 - (as above)
            continue
        if addr in seen:
            continue
        seen.add(addr)
        bad = _attr_problem(obj, where)
        if bad:
            return bad
        if isinstance(obj, h5py.Dataset):
            try:
                t = obj.id.get_type()
            except Exception:  # noqa: BLE001 - (as above)
                continue
            if not _type_ok(t):
                return f"the datatype of {where}"
        elif isinstance(obj, h5py.Group):
            try:
                names = list(obj)
            except Exception:  # noqa: BLE001 - (as above)
                continue
            for name in names:
                try:
                    child = obj.get(name)
                except Exception:  # noqa: BLE001 - (as above)
                    continue
                if child is not None:
                    stack.append((f"{where.rstrip('/')}/{name}", child))
    return None
