"""What an export draws at each of its frames (issue #37 items 1–2): the frame times of
the rule ``t_k = t0 + k · speed / fps``, ``k = 0 … floor((t1 − t0) · fps / speed)``,
and, for a run file, the bodies at any time between its recorded frames
(:func:`between`, also used between a scenario's steps by :mod:`.sim_track`):
positions by the cubic Hermite curve through the two records' positions and
velocities where the file records velocities (issue #42 item 9), linearly otherwise;
velocities and angular velocities linearly; attitudes slerped (the shorter arc of
``q`` and ``−q``), so that at a recorded frame's time the drawn state is the recorded
one exactly and in between every quaternion is unit.

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


HERMITE_BULGE = 4.0 / 27.0
"""The most the cubic Hermite curve departs from the chord, per end: with ``c`` the
chord's velocity ``(x1 − x0)/dt``, ``p(s) − chord(s) = dt·(h10(s)(v0 − c) + h11(s)(v1 −
c))`` and ``max |h10| = max |h11| = 4/27`` (at ``s = 1/3``, ``2/3``), so every coordinate
stays within ``4/27 · dt · (|v0 − c| + |v1 − c|)`` of the records' box (what the fixed
camera's framing adds, :func:`app.export.render._extent`)."""


def hermite(x0: np.ndarray, v0: np.ndarray, x1: np.ndarray, v1: np.ndarray, dt: float,
            s: float) -> np.ndarray:
    """The cubic Hermite interpolant at ``s ∈ [0, 1]`` of ``x0 → x1`` over ``dt`` with
    the end slopes ``v0``, ``v1`` (``h00 = 2s³ − 3s² + 1``, ``h10 = s³ − 2s² + s``,
    ``h01 = −2s³ + 3s²``, ``h11 = s³ − s²``): exact for motion of constant acceleration
    (ballistic), error ``O(dt⁴)`` for smooth motion where linear is ``O(dt²)``."""
    s2 = s * s
    s3 = s2 * s
    return ((2 * s3 - 3 * s2 + 1) * x0 + (s3 - 2 * s2 + s) * dt * v0
            + (3 * s2 - 2 * s3) * x1 + (s3 - s2) * dt * v1)


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


def between(a, b, t: float) -> tuple[np.ndarray, np.ndarray | None, np.ndarray,
                                       np.ndarray]:
    """The bodies at ``t`` between two recorded states ``a`` and ``b`` (each with ``t``,
    ``x``, ``v`` (or ``None``), ``q``, ``omega``; ``a.t ≤ t ≤ b.t``): ``(x, v, q, ω)``,
    positions by :func:`hermite` when both hold (finite) velocities, else linearly; ``v`` and ``ω``
    linearly; ``q`` by :func:`slerp`."""
    ta, tb = float(a.t), float(b.t)
    dt = tb - ta
    s = (t - ta) / dt if dt > 0 else 0.0
    xa, xb = np.asarray(a.x, float), np.asarray(b.x, float)
    va = None if a.v is None else np.asarray(a.v, float)
    vb = None if b.v is None else np.asarray(b.v, float)
    if va is not None and vb is not None and np.isfinite(va).all() and np.isfinite(vb).all():
        x = hermite(xa, va, xb, vb, dt, s)
        v = va + s * (vb - va)
    else:
        x, v = xa + s * (xb - xa), None
    oa = np.asarray(a.omega, float)
    om = oa + s * (np.asarray(b.omega, float) - oa)
    return x, v, slerp(np.asarray(a.q, float), np.asarray(b.q, float), s), om


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
        x, v, q, om = between(a, b, t)  # (a frame's t is its entry of the times)
        return State(t, x, q, v, om, i, False)

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


def stage_at(first: str, switches: list[tuple[float, str, str]], t: float) -> str:
    """The stage at ``t`` (``""``: a run without stages), from the one it started in
    (``first``) and the switches of :func:`schemes_at` of kind ``stage`` (issue #44
    item 5).  A stage change at ``t`` counts from *after* ``t`` (within
    :data:`TIME_EPS`): the frame at ``t`` was recorded before the next stage was entered
    and holds the state and energies of the stage it ends, as the live window shows it
    (``engine.simulation.stages``: a boundary step belongs to the stage it ends).  A
    scheme's switch, unlike it, counts from ``t`` (:func:`scheme_at`)."""
    stage = first
    for ts, kind, new in switches:
        if ts >= t - TIME_EPS * max(1.0, abs(t)):
            break
        if kind == "stage":
            stage = new
    return stage


def first_stage(rf: RunFile, model) -> str:
    """The stage a run file's run started in: its first stage change's old one, ``"1"``
    for a model with stages and none, ``""`` without stages."""
    old = next((ev.old for ev in rf.events if ev.kind == "stage"), None)
    return old if old is not None else ("1" if getattr(model, "stages", ()) else "")


def fmt_h(h: str) -> str:
    """``h`` as the overlay prints it (a number in ``%g``, else as recorded)."""
    try:
        return f"{float(h):g}"
    except ValueError:
        return h
