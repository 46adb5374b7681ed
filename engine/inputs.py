"""What every reader of a user's input shares (a scenario's parameters, an assembly's CSV,
a LAMMPS data file): the one-line error of a bad parameter and the bounded read of an
input file (issue #46 item 7).  Lowest layer: the models and the LAMMPS room
(:mod:`engine.io.lammps.read_data`) both use it (issue #43 item 5)."""

from __future__ import annotations

import os
import stat
from pathlib import Path


class ParameterError(ValueError):
    """A scenario parameter is unknown, of the wrong type or out of range.  The message
    is one line that names the key and says what is allowed."""


MAX_INPUT_BYTES = 8 * 2**30
"""The largest CSV or LAMMPS data file an assembly reads (8 GiB): 10⁷ spheres with
6·10⁷ bonds, the assembly's limits, take about 5 GB in 17 digits; a larger file is
refused before it is read, where reading it would end in ``MemoryError``
(docs/scenarios.md, "Limits")."""


def read_input_bytes(path: str | Path, label: str, error: type[Exception],
                     what: str = "file") -> bytes:
    """The bytes of the input file ``path`` (a CSV or a LAMMPS data file), or one line
    ``error(f"{label}: …")``: a file that cannot be read, that is not a regular file
    (a device or a pipe: ``/dev/zero`` has no size and no end) or that is larger than
    :data:`MAX_INPUT_BYTES` — checked by ``stat`` before reading, and the read bounded
    (a file that grows while it is read is refused too, issue #46 item 7)."""
    limit = MAX_INPUT_BYTES
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            kind = "a folder" if stat.S_ISDIR(st.st_mode) else "a device or a pipe"
            raise error(f"{label}: cannot read the {what}: it is {kind}, not a regular file "
                        "(its size cannot be known before reading it); give a file")
        if st.st_size > limit:
            raise error(f"{label}: the {what} has {st.st_size:,} bytes, more than the "
                        f"{limit:,} an input file may have (docs/scenarios.md \"Limits\"); "
                        "use fewer spheres")
        with open(path, "rb") as f:
            buf = f.read(st.st_size + 1)  # (read(n) may allocate n bytes at once)
            if len(buf) > st.st_size:  # (it grew since stat: read on, to the limit)
                buf += f.read(limit + 1 - len(buf))
    except OSError as exc:
        raise error(f"{label}: cannot read the {what}: {exc.strerror or exc}") from None
    if len(buf) > limit:
        raise error(f"{label}: the {what} grew past {limit:,} bytes while it was read, more "
                    "than an input file may have (docs/scenarios.md \"Limits\")")
    return buf
