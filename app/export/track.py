"""What an export draws at each of its frames (issue #37 items 1–2): the frame times of
the rule ``t_k = t0 + k · speed / fps``, ``k = 0 … floor((t1 − t0) · fps / speed)``,
and, for a run file, the bodies at any time between its recorded frames — positions,
velocities and angular velocities interpolated linearly, attitudes slerped (the
shorter arc of ``q`` and ``−q``), so that at a recorded frame's time the drawn state is
the recorded one exactly and in between every quaternion is unit.

No Qt, no VTK: the renderer (:mod:`app.export.render`) reads this.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.io import RunFile

TIME_EPS = 1e-9
"""Relative slack of the frame-count rule against rounding: ``(t1 − t0)·fps/speed``
within ``1e-9`` of an integer counts as that integer (``t1 = 2, fps = 30`` is 61
frames, not 60 because ``2·30`` came out as ``59.999…``)."""


class ExportInputError(ValueError):
    """Bad export input found while reading the source (one line)."""


def frame_count(t0: float, t1: float, fps: int, speed: float) -> int:
    """The number of frames of the window ``[t0, t1]``: ``floor((t1 − t0)·fps/speed) + 1``
    (issue #37 item 2; :data:`TIME_EPS` of slack)."""
    n = (t1 - t0) * fps / speed
    return int(math.floor(n * (1 + TIME_EPS) + TIME_EPS)) + 1


def frame_times(t0: float, t1: float, fps: int, speed: float) -> np.ndarray:
    """``t_k = t0 + k · speed / fps`` for the :func:`frame_count` frames (the last one
    clipped to ``t1`` when rounding put it a hair beyond)."""
    k = np.arange(frame_count(t0, t1, fps, speed), dtype=np.float64)
    return np.minimum(t0 + k * (speed / fps), max(t1, t0))


def slerp(q0: np.ndarray, q1: np.ndarray, a: float) -> np.ndarray:
    """Spherical linear interpolation of unit quaternions, row by row (scalar first),
    along the shorter arc; ``a = 0`` gives ``q0`` itself; the result is normalised."""
    if a == 0.0:
        return q0
    d = np.einsum("ij,ij->i", q0, q1)
    q1 = np.where(d[:, None] < 0, -q1, q1)
    d = np.clip(np.abs(d), 0.0, 1.0)
    theta = np.arccos(d)
    s = np.sin(theta)
    small = s < 1e-9
    safe = np.where(small, 1.0, s)
    w0 = np.where(small, 1.0 - a, np.sin((1.0 - a) * theta) / safe)
    w1 = np.where(small, a, np.sin(a * theta) / safe)
    q = w0[:, None] * q0 + w1[:, None] * q1
    return q / np.linalg.norm(q, axis=1, keepdims=True)


@dataclass
class State:
    """The bodies as drawn at ``t``: ``x``, ``q`` (unit, scalar first), ``v`` (or
    ``None``), ``omega``; ``frame``: the recorded frame at or before ``t``; ``exact``:
    ``t`` is that frame's time (the recorded state as it is)."""

    t: float
    x: np.ndarray
    q: np.ndarray
    v: np.ndarray | None
    omega: np.ndarray
    frame: int
    exact: bool


class RunTrack:
    """The bodies of an open :class:`~engine.io.RunFile` at any time within its frames,
    read frame by frame (two held at a time: memory does not grow with the run).
    ``interpolate=False``: the nearest earlier frame (``--no-interpolate``)."""

    def __init__(self, rf: RunFile, *, interpolate: bool = True) -> None:
        if not rf.n_frames:
            raise ExportInputError(f"{rf.path}: {rf._no_frames or 'the run holds no frames'}"
                                   ": nothing to draw (run it again with frames, e.g. "
                                   "'rrp run --out FILE' without --no-frames)")
        self.rf = rf
        self.interpolate = interpolate
        self.times = np.asarray(rf.frame_times, dtype=np.float64)
        self._cache: dict[int, object] = {}

    @property
    def t_first(self) -> float:
        return float(self.times[0])

    @property
    def t_last(self) -> float:
        return float(self.times[-1])

    def _frame(self, k: int):
        fr = self._cache.get(k)
        if fr is None:
            fr = self.rf.frame(k)
            if len(self._cache) >= 2:
                self._cache.pop(next(iter(self._cache)))
            self._cache[k] = fr
        return fr

    def index_at(self, t: float) -> int:
        """The last frame at or before ``t`` (the first one before the run)."""
        k = int(np.searchsorted(self.times, t, side="right")) - 1
        return min(max(k, 0), len(self.times) - 1)

    def state(self, t: float) -> State:
        """The bodies at ``t`` (see the module docstring)."""
        i = self.index_at(t)
        a = self._frame(i)
        ti = float(self.times[i])
        if t == ti or not self.interpolate or i + 1 >= len(self.times) or t < ti:
            v = None if a.v is None else np.asarray(a.v)
            return State(t, np.asarray(a.x), np.asarray(a.q), v, np.asarray(a.omega), i,
                         t == ti)
        b = self._frame(i + 1)
        tj = float(self.times[i + 1])
        s = (t - ti) / (tj - ti) if tj > ti else 0.0
        x = a.x + s * (b.x - a.x)
        v = None if a.v is None or b.v is None else a.v + s * (b.v - a.v)
        om = a.omega + s * (b.omega - a.omega)
        return State(t, x, slerp(np.asarray(a.q, float), np.asarray(b.q, float), s), v, om,
                     i, False)

    def spacing(self) -> float:
        """The largest time between two recorded frames (0 for one frame)."""
        return float(np.diff(self.times).max()) if len(self.times) > 1 else 0.0


def schemes_at(rf: RunFile) -> tuple[str, str, list[tuple[float, str, str]]]:
    """The integrator and ``h`` at the start of the run and the switches
    ``(t, kind, new)`` from ``/events`` (``kind``: ``integrator`` or ``h``), so that the
    overlay can say which scheme drew each frame (issue #37 item 3)."""
    integ, h = rf.integrator, f"{rf.h:g}"
    first = {}
    for ev in rf.events:
        first.setdefault(ev.kind, ev.old)
    integ = first.get("integrator", integ)
    h = first.get("h", h)
    return integ, h, [(float(ev.t), ev.kind, ev.new) for ev in rf.events]


def scheme_at(start: tuple[str, str], switches: list[tuple[float, str, str]],
              t: float) -> tuple[str, str]:
    """The integrator and ``h`` in use at ``t`` (a switch at ``t`` counts from ``t``,
    within :data:`TIME_EPS` of rounding: a switch recorded at ``t = 1.0000000000000007``
    shows on the frame of ``t = 1``)."""
    integ, h = start
    for ts, kind, new in switches:
        if ts > t + TIME_EPS * max(1.0, abs(t)):
            break
        if kind == "integrator":
            integ = new
        elif kind == "h":
            h = new
    return integ, h


def fmt_h(h: str) -> str:
    """``h`` as the overlay prints it (a number in ``%g``, else as recorded)."""
    try:
        return f"{float(h):g}"
    except ValueError:
        return h
