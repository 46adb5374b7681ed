"""A run sampled on a fixed time grid, the raw material of the error norms.

:func:`sample_run` advances a :class:`engine.simulation.Simulation` and keeps a copy of
``x, v, q, Ω`` and the total energy every ``dt_sample`` (a whole number of steps), so
that runs with different ``h`` (and the reference run) are compared at the same
instants.  The full-resolution energy and momenta (every ``record_every`` steps) are
kept too, for the maximum energy error and the momentum drifts.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..diagnostics import momentum_drift
from ..drivers import simulation_for
from ..scenarios import load_scenario
from . import StudyError

MAX_FINE_RECORDS = 20_000
"""Cap on the full-resolution records (energy, P, L) kept per run."""


@dataclass
class Trajectory:
    """Samples ``t_j = j dt_sample`` of one run (arrays of shape ``(n, N, ·)``), and the
    run's summary.  ``status`` is ``complete`` or ``failed`` (then the samples stop at
    the last good instant and ``message`` says why)."""

    t: np.ndarray
    x: np.ndarray
    v: np.ndarray
    q: np.ndarray
    omega: np.ndarray
    energy: np.ndarray
    e0: float
    e_scale: float
    status: str = "complete"
    message: str = ""
    t_reached: float = 0.0
    steps: int = 0
    wall_seconds: float = 0.0
    kernel_seconds: float = 0.0
    fine: dict[str, np.ndarray] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "complete"

    def max_relative_energy_error(self) -> float:
        """``max |E(t) - E₀| / |E₀|`` over the full-resolution records."""
        e = self.fine.get("energy_total", self.energy)
        return float(np.max(np.abs(e - self.e0))) / self.e_scale if len(e) else math.nan

    def momentum_drift(self) -> dict[str, float]:
        """``max |c(t) - c(0)|`` of each component of ``P`` and ``L``."""
        return momentum_drift(self.fine["P"], self.fine["L"])


def steps_per(dt: float, h: float, what: str = "the sampling interval") -> int:
    """``dt / h`` as an integer, or :class:`StudyError` if ``h`` does not divide ``dt``."""
    if not (math.isfinite(h) and h > 0):
        raise StudyError(f"h must be a positive, finite time step, got {h:g}")
    k = round(dt / h)
    if k < 1 or abs(k * h - dt) > 1e-9 * dt:
        raise StudyError(f"h = {h:g} does not divide {what} {dt:g}; choose steps that do "
                         "(e.g. halvings of the largest) or set the sampling interval "
                         "(rrp sweep --dt-sample)")
    return int(k)


def sample_run(scenario: str, overrides: Mapping[str, Any] | None, integrator: str, h: float,
               t_end: float, dt_sample: float, *, energy_tolerance: float | None = 1.0,
               fine_every: int | None = None) -> Trajectory:
    """Run ``scenario`` (with parameter ``overrides``) with ``integrator`` and step ``h``
    up to ``t_end`` and sample it every ``dt_sample`` (a multiple of ``h``).

    A blow-up (relative energy error beyond ``energy_tolerance``, a non-finite state,
    ``rrp-exact``'s ``h|w| ≥ 1``) ends the run early with ``status = "failed"``.
    """
    k = steps_per(dt_sample, h)
    n_samples = int(math.floor(t_end / dt_sample + 1e-9))
    if n_samples < 1:
        raise StudyError(f"t_end = {t_end:g} is shorter than the sampling interval "
                         f"{dt_sample:g}")
    sc = load_scenario(scenario, dict(overrides or {}))
    model = sc.build_model()
    n_steps = n_samples * k
    if fine_every is None:
        fine_every = max(1, math.ceil(n_steps / MAX_FINE_RECORDS))
    wall = time.perf_counter()
    sim = simulation_for(model, integrator, h, record_every=fine_every, record_frames=False,
                     energy_tolerance=energy_tolerance)
    snaps = [sim.snapshot()]
    status, message = "complete", ""
    for _ in range(n_samples):
        rep = sim.advance(k)
        if not rep.ok:
            status, message = "failed", rep.failure.message
            break
        snaps.append(sim.snapshot())
    wall = time.perf_counter() - wall
    a = sim.series.arrays()
    fine = {"t": a["t"], "energy": a["energy"], "energy_total": a["energy"].sum(axis=1),
            "P": a["P"], "L": a["L"]}
    return Trajectory(
        t=np.array([s.t for s in snaps]),
        x=np.stack([s.x for s in snaps]),
        v=np.stack([s.v for s in snaps]),
        q=np.stack([s.q for s in snaps]),
        omega=np.stack([s.omega for s in snaps]),
        energy=np.array([s.total_energy for s in snaps]),
        e0=sim.e_ref,
        e_scale=sim.e_scale,
        status=status,
        message=message,
        t_reached=sim.t,
        steps=sim.step_index,
        wall_seconds=wall,
        kernel_seconds=sim.kernel_seconds,
        fine=fine,
        meta={"scenario": sc.name, "params": dict(model.params), "integrator": integrator,
              "h": h, "t_end": t_end, "dt_sample": dt_sample,
              "conserved": list(model.conserved), "p_scale": sim.p_scale,
              "l_scale": sim.l_scale},
    )
