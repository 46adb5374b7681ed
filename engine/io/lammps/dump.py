"""LAMMPS text dump of a run file (``rrp convert RUN.h5 --to lammps-dump``, issue #37
item 7), as ``dump custom`` with ``dump_modify time yes`` writes it, which OVITO reads
natively::

    ITEM: TIME
    t
    ITEM: TIMESTEP
    step
    ITEM: NUMBER OF ATOMS
    n
    ITEM: BOX BOUNDS ff ff ff
    ...
    ITEM: ATOMS id type x y z radius vx vy vz quatw quati quatj quatk omegax omegay omegaz mol

``type`` and ``mol`` are the body's group (the run file's ``/bodies/group``: the groups the
user set, a torus's ring), shifted by one where the groups start at 0 or below (LAMMPS's
types start at 1: a torus's ring k is type k + 1); ``quatw quati quatj quatk``
is the run file's scalar-first quaternion as it is (OVITO maps it to its Orientation);
``omega*``: the spatial angular velocity.  The box is the bodies' extent with their
radii (free boundaries: no periodicity).  Numbers are ``%.17g`` (exact when read back).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TextIO

import numpy as np

from ..text_frames import FLOAT, Bodies, TextFrame, TrajectoryError, convert, rows

__all__ = ["TrajectoryError", "export_lammps_dump"]


def export_lammps_dump(run_path: str | Path, out: str | Path | None = None, *,
                       every: int = 1, check: Callable[[], None] | None = None
                       ) -> tuple[Path, int]:
    """Write the frames of ``run_path`` (every ``every``-th) as a LAMMPS text dump to
    ``out`` (a file, a directory, or ``None``: ``<stem>.dump`` next to the run file);
    returns the path and the number of frames.  Bad input: :class:`TrajectoryError`."""
    return convert(run_path, out, ".dump", every, _columns, _write_frame, check)


def _columns(has_v: bool) -> str:
    return ("id type x y z radius" + (" vx vy vz" if has_v else "")
            + " quatw quati quatj quatk omegax omegay omegaz mol")


def _write_frame(fh: TextIO, fr: TextFrame, b: Bodies, ids: np.ndarray, cols: str) -> None:
    ok = np.isfinite(fr.x).all(axis=1)
    r = b.radius if ok.all() else b.radius[ok]
    lo = (fr.x[ok] - r[:, None]).min(axis=0) if ok.any() else np.zeros(3)
    hi = (fr.x[ok] + r[:, None]).max(axis=0) if ok.any() else np.ones(3)
    fh.write(f"ITEM: TIME\n{FLOAT % fr.t}\nITEM: TIMESTEP\n{fr.step}\n"
             f"ITEM: NUMBER OF ATOMS\n{b.n}\nITEM: BOX BOUNDS ff ff ff\n")
    for k in range(3):
        fh.write(f"{FLOAT % lo[k]} {FLOAT % hi[k]}\n")
    fh.write(f"ITEM: ATOMS {cols}\n")
    g = b.group + (1 - int(b.group.min()) if len(b.group) and b.group.min() < 1 else 0)
    num = rows(ids + 1, g, fr.x, b.radius, *([fr.v] if fr.v is not None else []), fr.q,
               fr.omega, g)
    fmt = "%d %d " + " ".join([FLOAT] * (num.shape[1] - 3)) + " %d"
    np.savetxt(fh, num, fmt=fmt)
