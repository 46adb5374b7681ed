"""Measurements on the spring pendulum with a wall (issue 8 §4; physics.md §4.4, §6):
energy error statistics, drift per unit time, impacts and penetration for a scheme,
step and coordinate variant, and the table over all of them with the fitted orders.

>>> row = measure("moreau-symmetric", 1e-3, "cartesian", 5.0)
>>> row.impacts > 0 and abs(row.max_error) < 1e-3
True
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass

import numpy as np

from ..models import get_model_spec

SCHEMES = ("moreau", "moreau-symmetric", "moreau-variational")
COORDINATES = ("polar", "cartesian")
STEPS = (1e-2, 5e-3, 1e-3, 5e-4)
T_ENDS = (100.0, 1000.0)


@dataclass(frozen=True)
class Row:
    """One run: ``max_error``/``final_error`` of the relative energy error
    ``(E + D − E₀)/E₀`` (node energy, docs/physics.md §3.9, generalized §4), ``drift`` the slope
    of its least-squares line per unit time, ``impacts`` (steps with ``P_N > 0``),
    ``penetration`` (largest ``−g_N``), ``t_reached`` (< ``t_end`` if it failed)."""

    scheme: str
    coordinates: str
    h: float
    t_end: float
    max_error: float
    final_error: float
    drift: float
    impacts: int
    penetration: float
    t_reached: float
    seconds: float
    status: str


def measure(scheme: str, h: float, coordinates: str, t_end: float, *, e_n: float = 1.0,
            max_records: int = 200_000) -> Row:
    """Run the spring pendulum (default parameters, ``e_N = e_n``) with ``scheme`` at step
    ``h`` to ``t_end`` and measure its energy behaviour (no blow-up threshold: a run
    stops only on a non-finite state or a failed Newton solve)."""
    from ..drivers import simulation_for

    model = get_model_spec("spring-pendulum").make({"coordinates": coordinates, "e_n": e_n})
    n = int(round(t_end / h))
    every = max(1, -(-n // max_records))
    sim = simulation_for(model, scheme, h, record_every=every, record_frames=False,
                     energy_tolerance=None)
    t0 = time.perf_counter()
    rep = sim.advance(n)
    secs = time.perf_counter() - t0
    a = sim.series.arrays()
    err = (a["energy"].sum(axis=1) - sim.e_ref) / sim.e_scale
    ok = np.isfinite(err)
    t, err = a["t"][ok], err[ok]
    slope = float(np.polyfit(t, err, 1)[0]) if len(t) > 2 else math.nan
    cs = sim.contact_stats
    return Row(scheme, coordinates, h, t_end, float(np.max(np.abs(err))), float(err[-1]),
               slope, int(cs["impacts"]), cs["penetration"], sim.t, secs,
               "ok" if rep.ok else rep.failure.kind)


def fitted_order(hs: Iterable[float], values: Iterable[float]) -> float:
    """Slope of ``log|value|`` against ``log h`` (least squares; nan if < 2 usable)."""
    x, y = [], []
    for h, v in zip(hs, values, strict=True):
        if math.isfinite(v) and v != 0.0:
            x.append(math.log(h))
            y.append(math.log(abs(v)))
    if len(x) < 2:
        return math.nan
    return float(np.polyfit(x, y, 1)[0])


def table(schemes: Iterable[str] = SCHEMES, coordinates: Iterable[str] = COORDINATES,
          steps: Iterable[float] = STEPS, t_ends: Iterable[float] = T_ENDS) -> list[Row]:
    """Every combination (issue 8 §4)."""
    return [measure(s, h, c, t) for c in coordinates for t in t_ends for s in schemes
            for h in steps]


def orders(rows: list[Row]) -> list[dict]:
    """Per coordinate variant, end time and scheme: the fitted orders in ``h`` of
    ``|drift|``, of the max energy error and of the max penetration."""
    out = []
    keys = sorted({(r.coordinates, r.t_end, r.scheme) for r in rows},
                  key=lambda k: (COORDINATES.index(k[0]) if k[0] in COORDINATES else 9, k[1],
                                 SCHEMES.index(k[2]) if k[2] in SCHEMES else 9))
    for c, t, s in keys:
        sel = [r for r in rows if (r.coordinates, r.t_end, r.scheme) == (c, t, s)]
        hs = [r.h for r in sel]
        out.append({"coordinates": c, "t_end": t, "scheme": s,
                    "drift_order": fitted_order(hs, [r.drift for r in sel]),
                    "max_error_order": fitted_order(hs, [r.max_error for r in sel]),
                    "penetration_order": fitted_order(hs, [r.penetration for r in sel])})
    return out


def format_table(rows: list[Row]) -> str:
    """The rows as a fixed-width text table, then the fitted orders."""
    head = (f"{'coords':<9} {'t_end':>6} {'scheme':<18} {'h':>7} {'max |err|':>10} "
            f"{'final err':>10} {'drift/t':>10} {'impacts':>7} {'max pen':>9} {'status':<8}")
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r.coordinates:<9} {r.t_end:>6g} {r.scheme:<18} {r.h:>7g} "
                     f"{r.max_error:>10.3e} {r.final_error:>10.3e} {r.drift:>10.2e} "
                     f"{r.impacts:>7d} {r.penetration:>9.2e} {r.status:<8}"
                     + ("" if r.status == "ok" else f" (t = {r.t_reached:.4g})"))
    lines += ["", "fitted orders in h (least squares over the steps):",
              f"{'coords':<9} {'t_end':>6} {'scheme':<18} {'|drift|':>8} {'max|err|':>8} "
              f"{'max pen':>8}"]
    for o in orders(rows):
        lines.append(f"{o['coordinates']:<9} {o['t_end']:>6g} {o['scheme']:<18} "
                     f"{o['drift_order']:>8.2f} {o['max_error_order']:>8.2f} "
                     f"{o['penetration_order']:>8.2f}")
    return "\n".join(lines)


def rows_as_dicts(rows: list[Row]) -> list[dict]:
    return [asdict(r) for r in rows]
