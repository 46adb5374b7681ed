"""Extended XYZ output of a run file (``rrp convert RUN.h5 --to xyz``, issue #37 item 7),
the format OVITO and ASE read natively.  One file, every frame: the number of bodies,
then a comment line (one line)::

    Properties=species:S:1:id:I:1:pos:R:3:radius:R:1:velo:R:3:orientation:R:4:omega:R:3
    :group:I:1 Time=t Timestep=step pbc="F F F"

and a line per body.  OVITO maps ``pos`` → Position, ``radius`` → Radius, ``velo`` →
Velocity, ``orientation`` → Orientation, ``omega`` → Angular Velocity, ``id`` →
Particle Identifier, and the ``Time`` key to the frame's time attribute.  OVITO's
Orientation is ``(X, Y, Z, W)``, scalar last; the run file's quaternion is scalar first
``(w, x, y, z)`` (docs/physics.md), so the columns are written as ``x y z w``.
``velo`` is left out of files written before velocities were recorded.  Numbers are
``%.17g`` (exact when read back).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TextIO

import numpy as np

from .text_frames import FLOAT, Bodies, TextFrame, TrajectoryError, convert, rows

__all__ = ["TrajectoryError", "export_xyz"]


def export_xyz(run_path: str | Path, out: str | Path | None = None, *,
               every: int = 1, check: Callable[[], None] | None = None
               ) -> tuple[Path, int]:
    """Write the frames of ``run_path`` (every ``every``-th) as extended XYZ to ``out``
    (a file, a directory, or ``None``: next to the run file); returns the path and the
    number of frames written.  Bad input: :class:`TrajectoryError` (one line)."""
    return convert(run_path, out, ".xyz", every, _properties, _write_frame, check)


def _properties(has_v: bool) -> str:
    return ("species:S:1:id:I:1:pos:R:3:radius:R:1" + (":velo:R:3" if has_v else "")
            + ":orientation:R:4:omega:R:3:group:I:1")


def _write_frame(fh: TextIO, fr: TextFrame, b: Bodies, ids: np.ndarray, props: str) -> None:
    fh.write(f"{b.n}\n")
    fh.write(f'Properties={props} Time={FLOAT % fr.t} Timestep={fr.step} '
             f'pbc="F F F"\n')
    q_xyzw = fr.q[:, [1, 2, 3, 0]]  # scalar first → OVITO's X Y Z W
    cols = [fr.x, b.radius, *([fr.v] if fr.v is not None else []), q_xyzw, fr.omega]
    num = rows(ids, *cols, b.group)
    fmt = "B %d " + " ".join([FLOAT] * (num.shape[1] - 2)) + " %d"
    np.savetxt(fh, num, fmt=fmt)
