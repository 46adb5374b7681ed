"""What a run reports and records: :class:`Failure` and :class:`StepReport` (the outcome
of an advance), :class:`Event` (a change of scheme or step), :class:`Snapshot` (one
instant for a view) and :class:`TimeSeries` (the recorded series and frames), with
:func:`energy_names` (issue #34: split out of ``engine.simulation``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..layout import ENERGY_NAMES, N_ENERGY
from ..models.base import Model
from ..stability import StabilityEstimate


@dataclass(frozen=True)
class Failure:
    """Why a run stopped early.  The simulation holds the last good state."""

    kind: str  # "rrp-limit" | "non-finite" | "energy" | "no-convergence"
    t: float
    step: int
    message: str
    stability: StabilityEstimate
    details: dict = field(default_factory=dict)


@dataclass(frozen=True)
class StepReport:
    steps: int
    failure: Failure | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None


@dataclass(frozen=True)
class Event:
    """A change of integrator or step at ``(step, t)``, for plot markers and files."""

    step: int
    t: float
    kind: str  # "integrator" | "h"
    old: str
    new: str

    @property
    def label(self) -> str:
        return f"{self.kind}: {self.old} → {self.new}"


@dataclass
class Snapshot:
    """Copies of everything a view needs at one instant."""

    t: float
    step: int
    integrator: str
    h: float
    x: np.ndarray
    v: np.ndarray
    q: np.ndarray
    omega: np.ndarray
    energy: np.ndarray  # components, layout.ENERGY_NAMES order
    P: np.ndarray
    L: np.ndarray

    @property
    def total_energy(self) -> float:
        return float(self.energy.sum())


class TimeSeries:
    """Append-only recorded series: ``t``, energy components, ``P``, ``L`` and (when
    recording frames) ``x``, ``q``, ``Ω`` of every body.

    Optional columns given to :meth:`append` by keyword: ``step`` (the step index of
    each record), and with :attr:`Simulation.record_state` the rest of the state a run
    can be started from: ``v`` and ``pi`` (``Π``) per body, ``gq``/``gv`` (the node
    ``(q, v)`` of a model in generalized coordinates), and for contacts with history
    ``force``/``moment`` per body (``F``, ``RM``: their damping part depends on the step
    that led there) with :attr:`springs`; under an event-driven scheme (energy-stepping)
    ``terrace_gap``, the ``V − V_ε`` of each record (summed over the terraced terms).  A
    column given for some chunks only is filled with NaN in the others (a run that never
    used energy-stepping has no ``terrace_gap``)."""

    BASE = ("t", "energy", "P", "L", "x", "q", "omega")
    EXTRA = ("step", "v", "pi", "gq", "gv", "force", "moment", "terrace_gap")
    _PER_BODY_EXTRA = ("v", "pi", "gq", "gv", "force", "moment")

    def __init__(self, n_bodies: int, frames: bool) -> None:
        self.n_bodies = n_bodies
        self.frames = frames
        self._chunks: list[tuple[np.ndarray, ...]] = []
        self._extra: list[dict[str, np.ndarray]] = []
        self._cache: dict[str, np.ndarray] | None = None
        self.n = 0
        self.springs: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        """Record row → the committed friction springs at that record, as
        :meth:`engine.forcefield.ForceField.committed_springs_sparse` gives them (with
        :attr:`Simulation.record_state`, for contacts with history)."""

    def release_frames(self) -> None:
        """Drop the per-body columns (``x``, ``q``, ``Ω`` and the state ``v``, ``Π``,
        ``gq``, ``gv``, ``F``, ``RM``, the springs) of every chunk recorded so far,
        keeping ``t``, the energies, the momenta and ``step`` (a writer that streams the
        frames to a file calls it once they are written: a 10⁶-sphere run cannot keep
        them in memory)."""
        per_body = self._PER_BODY_EXTRA
        self.springs.clear()
        for i, c in enumerate(self._chunks):
            if c[4] is not None:
                self._chunks[i] = (*c[:4], None, None, None)
            ex = self._extra[i]
            if any(k in ex for k in per_body):
                self._extra[i] = {k: a for k, a in ex.items() if k not in per_body}
        self._cache = None

    def append(self, t, e, P, L, x, q, o, **extra) -> None:
        if len(t) == 0:
            return
        self._chunks.append((t.copy(), e.copy(), P.copy(), L.copy(),
                             x.copy() if self.frames else None,
                             q.copy() if self.frames else None,
                             o.copy() if self.frames else None))
        self._extra.append({k: np.array(a, copy=True) for k, a in extra.items()
                            if a is not None})
        self.n += len(t)
        self._cache = None

    def _widths(self) -> tuple:
        nb = self.n_bodies
        return ((), (N_ENERGY,), (3,), (3,), (nb, 3), (nb, 4), (nb, 3))

    def _extra_columns(self, chunks: list[tuple], extras: list[dict]) -> dict[str, np.ndarray]:
        out = {}
        for name in self.EXTRA:
            have = [x[name] for x in extras if name in x]
            if not have:
                continue
            if len(have) == len(extras):
                out[name] = np.concatenate(have)
                continue
            w, dt = have[0].shape[1:], have[0].dtype
            fill = -1 if dt.kind in "iu" else np.nan
            out[name] = np.concatenate([
                x[name] if name in x else np.full((len(c[0]), *w), fill, dtype=dt)
                for c, x in zip(chunks, extras, strict=True)])
        return out

    def arrays(self, start: int = 0) -> dict[str, np.ndarray]:
        """Concatenated series from record ``start`` on (copies)."""
        if self._cache is None:
            out = {}
            for k, (name, w) in enumerate(zip(self.BASE, self._widths(), strict=True)):
                parts = [c[k] for c in self._chunks if c[k] is not None]
                out[name] = np.concatenate(parts) if parts else np.zeros((0, *w))
            out.update(self._extra_columns(self._chunks, self._extra))
            self._cache = out
        return {k: a[start:] for k, a in self._cache.items()}

    def tail(self, start: int) -> dict[str, np.ndarray]:
        """Rows from ``start`` on, concatenating only the chunks that hold them (cheap for
        a live view that asks for the few new rows many times a second)."""
        first, base = len(self._chunks), self.n
        for k in range(len(self._chunks) - 1, -1, -1):
            if base <= start:
                break
            base -= len(self._chunks[k][0])
            first = k
        out = {}
        for k, (name, w) in enumerate(zip(self.BASE, self._widths(), strict=True)):
            parts = [c[k] for c in self._chunks[first:] if c[k] is not None]
            a = np.concatenate(parts) if parts else np.zeros((0, *w))
            out[name] = a[max(0, start - base):] if len(a) else a
        for name, a in self._extra_columns(self._chunks[first:], self._extra[first:]).items():
            out[name] = a[max(0, start - base):] if len(a) else a
        return out

    def energy_total(self) -> np.ndarray:
        return self.arrays()["energy"].sum(axis=1)

def energy_names(model: Model) -> list[str]:
    """The names of the energy components the model reports (``layout.ENERGY_NAMES``)."""
    return [n for n in ENERGY_NAMES if n in model.energy_components]
