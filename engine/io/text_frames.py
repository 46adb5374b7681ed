"""The frames of a run file as the text trajectory writers need them (issue #37 item
7: :mod:`.xyz`, :mod:`.lammps.dump`): positions, radii, velocities, the orientation
quaternion, angular velocities, the body group, each frame's time — read one frame at a
time through :class:`~engine.io.RunFile` (its digests checked), written to a hidden
temporary file renamed into place at the end (a failure leaves nothing).

Numbers are printed with ``%.17g``: read back, every float is the one in the run file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import numpy as np

from ..models.base import body_groups
from .atomic import open_atomic
from .hdf5 import RunFile, RunFileError, output_of_partial

FLOAT = "%.17g"
"""Repr-exact: ``float(FLOAT % x) == x`` for every double."""


class TrajectoryError(ValueError):
    """A run file that cannot be converted, or a bad target (one line)."""


@dataclass
class TextFrame:
    """One frame: ``index`` in the file, ``t``, ``step`` (or the index), ``x``, ``v``
    (``None`` in files that lack it), ``q`` (scalar first, as in the file), ``omega``."""

    index: int
    t: float
    step: int
    x: np.ndarray
    v: np.ndarray | None
    q: np.ndarray
    omega: np.ndarray


@dataclass
class Bodies:
    """What does not change from frame to frame: ``radius`` and ``group`` (the ring of
    a body of a torus or a pile: ``i // n_particles``; else its own index)."""

    n: int
    radius: np.ndarray
    group: np.ndarray


def stem(path: Path) -> str:
    """The run file's name without ``.h5`` / ``.h5.partial``."""
    name = path.name
    if name.endswith(".partial"):
        name = output_of_partial(path).name
    for suffix in (".partial", ".h5", ".hdf5"):
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    return name


def target(run_path: Path, out: str | Path | None, ext: str) -> Path:
    """The file to write: ``out`` if it names a file, ``out/<stem><ext>`` if it is a
    directory, ``<stem><ext>`` next to the run file if ``None``."""
    if out is None:
        path = run_path.with_name(stem(run_path) + ext)
    else:
        path = Path(out)
        if path.is_dir():
            path = path / (stem(run_path) + ext)
    if not path.parent.is_dir():
        raise TrajectoryError(f"the directory of {str(path)!r} does not exist")
    return path


def open_run(run_path: str | Path) -> RunFile:
    path = Path(run_path)
    if path.is_dir():
        raise TrajectoryError(f"{str(path)!r} is a directory, not a run file")
    if not path.is_file():
        raise TrajectoryError(f"no such run file: {str(path)!r}")
    try:
        rf = RunFile(path, series=False)  # (frames only: issue #47 item 4)
    except RunFileError as exc:
        raise TrajectoryError(str(exc)) from None
    except OSError as exc:
        raise TrajectoryError(f"cannot read {str(path)!r} as an HDF5 run file "
                              f"({exc.strerror or exc})") from None
    if not rf.n_frames:
        rf.close()
        raise TrajectoryError(f"{str(path)!r} holds no frames (written with --no-frames, "
                              "or none yet); nothing to convert")
    return rf


def bodies(rf: RunFile) -> Bodies:
    """The radii (``/bodies/diameter``, else the rebuilt model's) and groups: the run
    file's ``/bodies/group`` (the groups the user set, issue #42 item 8), else, in files
    written before it, the rebuilt model's (:func:`engine.models.base.body_groups`), else
    each body its own."""
    ds = rf._f.get("bodies/diameter")
    model = None
    if ds is not None:
        diam = np.asarray(ds[()], dtype=np.float64).reshape(-1)
    else:
        model = rf.build_model()
        diam = np.asarray(model.bodies.D, dtype=np.float64)
    n = len(diam)
    gs = rf._f.get("bodies/group")
    if gs is not None and gs.shape == (n,):
        return Bodies(n, 0.5 * diam, np.asarray(gs[()], dtype=np.int64))
    try:
        model = model or rf.build_model()
    except Exception:  # noqa: BLE001 - (a model that cannot be rebuilt: its rings)
        model = None
    if model is not None and int(model.n_bodies) == n:
        return Bodies(n, 0.5 * diam, body_groups(model))
    return Bodies(n, 0.5 * diam, np.arange(n))  # (no model to ask: each body its own)


def frames(rf: RunFile, every: int = 1) -> Iterator[TextFrame]:
    """Every ``every``-th frame (the first always), one at a time."""
    for k in range(0, rf.n_frames, every):
        fr = rf.frame(k)
        yield TextFrame(k, float(fr.t), k if fr.step is None else int(fr.step),
                        np.asarray(fr.x, np.float64),
                        None if fr.v is None else np.asarray(fr.v, np.float64),
                        np.asarray(fr.q, np.float64), np.asarray(fr.omega, np.float64))


def write_atomic(path: Path, body: Callable[[TextIO], int],
                 before: Callable[[], None] | None = None) -> int:
    """Run ``body`` on a hidden temporary file next to ``path``, rename it into place
    when it returns (its return value is passed on); removed on any failure, a write
    error is :class:`~engine.io.atomic.OutputError` (one line: issue #46 item 2).
    ``before()``: called just before the rename (it may raise: a signal)."""
    with open_atomic(path, "w", encoding="ascii", newline="\n", before=before) as fh:
        n = body(fh)
    return n


def rows(*cols: np.ndarray) -> np.ndarray:
    """The columns side by side as float64 ``(n, k)``."""
    return np.column_stack([np.asarray(c, dtype=np.float64).reshape(len(c), -1)
                            for c in cols])


def convert(run_path: str | Path, out: str | Path | None, ext: str, every: int,
            header: Callable[[bool], str],
            write_frame: Callable[[TextIO, TextFrame, Bodies, np.ndarray, str], None],
            check: Callable[[], None] | None = None) -> tuple[Path, int]:
    """The shared frame of the text writers (issue #37 item 7; issue #34 item 4): open
    ``run_path``, write every ``every``-th frame with ``write_frame(fh, frame, bodies,
    ids, head)`` (``head = header(has_v)``) into :func:`target`'s file atomically;
    returns the path and the number of frames.  ``check()``: called between frames and
    before the rename (it may raise to stop: a signal; nothing is then written)."""
    run_path = Path(run_path)
    path = target(run_path, out, ext)
    rf = open_run(run_path)
    try:
        b = bodies(rf)
        head = header(rf.frame(0).v is not None)

        def body(fh: TextIO) -> int:
            ids = np.arange(b.n)
            n = 0
            for fr in frames(rf, every):
                if check is not None:
                    check()
                write_frame(fh, fr, b, ids, head)
                n += 1
            return n

        return path, write_atomic(path, body, check)
    finally:
        rf.close()
