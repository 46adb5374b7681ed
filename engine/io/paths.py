"""The names of run files: a writer's ``<name>.<pid>.partial``, the output a
``.partial`` or a resumed file is written for, and what is at such a name
(split from :mod:`engine.io.hdf5`, issue #34 item 3; docs/output.md)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from .digests import read_status
from .schema import open_run_file

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


def _s(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)
