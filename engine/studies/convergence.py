"""Convergence studies: errors against ``h`` and their fitted log-log slopes.

The expected slopes (docs/physics.md §5–6): the E-error (B&G eq. (38)) and the true H¹
distance converge with the order ``p`` of the method (2 for ``rrp-exact``,
``rrp-newmark``; 1 for ``campello``), the paper's q-error (eq. (36)) with ``p/2``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ..integrators import get_integrator

MEASURES = ("e_error", "q_error_paper", "h1_error")
MEASURE_LABELS = {
    "e_error": "E-error (B&G eq. 38)",
    "q_error_paper": "paper q-error (eq. 36)",
    "h1_error": "true H¹ distance",
}


def fit_slope(h: Sequence[float], err: Sequence[float]) -> float:
    """Least-squares slope of ``log err`` against ``log h`` (finite, positive points
    only; NaN when fewer than two remain)."""
    h = np.asarray(h, dtype=float)
    e = np.asarray(err, dtype=float)
    ok = np.isfinite(h) & np.isfinite(e) & (h > 0) & (e > 0)
    if ok.sum() < 2:
        return math.nan
    return float(np.polyfit(np.log(h[ok]), np.log(e[ok]), 1)[0])


def expected_slope(integrator: str, measure: str) -> float:
    """Theory: the order ``p`` of the scheme, ``p/2`` for the paper's q-error."""
    p = float(get_integrator(integrator).order)
    return p / 2.0 if measure == "q_error_paper" else p


@dataclass(frozen=True)
class Slope:
    """A fitted slope of one measure for one integrator, beside the theory."""

    integrator: str
    measure: str
    slope: float
    expected: float
    h: tuple[float, ...]
    errors: tuple[float, ...]

    @property
    def deviation(self) -> float:
        return self.slope - self.expected

    def agrees(self, tol: float = 0.15) -> bool:
        return math.isfinite(self.slope) and abs(self.deviation) <= tol


def slopes(rows: Iterable[dict], measures: Sequence[str] = MEASURES) -> list[Slope]:
    """One :class:`Slope` per (integrator, measure) of the tidy ``rows`` (sorted by h)."""
    by_int: dict[str, list[dict]] = {}
    for r in rows:
        by_int.setdefault(r["integrator"], []).append(r)
    out = []
    for name, rs in by_int.items():
        rs = sorted(rs, key=lambda r: r["h"])
        h = tuple(float(r["h"]) for r in rs)
        for m in measures:
            e = tuple(float(r[m]) for r in rs)
            out.append(Slope(name, m, fit_slope(h, e), expected_slope(name, m), h, e))
    return out
