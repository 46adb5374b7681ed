"""The data behind Baker & Gonzalez Figs. 1, 4–7 (docs/physics.md §4.1, §4.2, §6, §7).

:func:`compute` runs everything serially (each piece takes seconds) and returns a
:class:`PaperData`; :mod:`.figures` draws it and :mod:`.report` states the claims.
Reference runs go through the disk cache of :mod:`.reference`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..diagnostics import momentum_drift, pendulum_invariants
from ..layout import ENERGY_NAMES
from ..scenarios import load_scenario
from ..simulation import Simulation, energy_names
from .convergence import Slope, slopes
from .runs import RunSpec, compute_reference, run_row


@dataclass(frozen=True)
class PaperConfig:
    """Steps, times and sizes of every study (``quick`` shortens the long run)."""

    quick: bool = True
    pendulum_hs: tuple[float, ...] = (0.04, 0.02, 0.01, 0.005, 0.0025)
    pendulum_t: float = 10.0
    pendulum_dt: float = 0.04
    invariants_h: float = 1e-2
    invariants_t: float = 100.0
    torus: Mapping[str, Any] = field(default_factory=dict)
    energy_h: float = 1e-3          # Figs. 4 and 6
    energy_t: float = 25.0
    long_h: float = 1e-3            # Fig. 5 (physics.md §7: the paper's 1e-2 blows up)
    long_t: float = 500.0
    paper_long_h: float = 1e-2
    long_integrators: tuple[str, ...] = ("campello", "rrp-newmark")
    conv_integrators: tuple[str, ...] = ("rrp-exact", "rrp-newmark", "campello")
    conv_hs: tuple[float, ...] = (1e-3, 5e-4, 2.5e-4, 1.25e-4)   # Fig. 7, E-error
    conv_t: float = 10.0
    conv_dt: float = 0.01
    window_hs: tuple[float, ...] = (2.5e-4, 1.25e-4, 6.25e-5, 3.125e-5)
    window_t: float = 1.0           # trajectory errors: only meaningful for t ≤ 1
    window_dt: float = 0.01
    ref_integrator: str = "rk4"
    ref_factor: int = 4


def config(quick: bool = True, **changes: Any) -> PaperConfig:
    """The quick (``rrp figures --quick``) or the full configuration."""
    base = PaperConfig(quick=True) if quick else PaperConfig(
        quick=False, pendulum_hs=(0.04, 0.02, 0.01, 0.005, 0.0025, 0.00125),
        conv_hs=(1e-3, 5e-4, 2.5e-4, 1.25e-4, 6.25e-5, 3.125e-5),
        window_hs=(2.5e-4, 1.25e-4, 6.25e-5, 3.125e-5, 1.5625e-5))
    return replace(base, **changes)


@dataclass
class Convergence:
    rows: list[dict]
    slopes: list[Slope]
    t_end: float
    h_ref: float
    ref_integrator: str


@dataclass
class PaperData:
    cfg: PaperConfig
    pendulum: Convergence | None = None
    invariants: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    torus_run: dict[str, Any] = field(default_factory=dict)
    long_runs: dict[str, dict[str, Any]] = field(default_factory=dict)
    paper_long: dict[str, Any] = field(default_factory=dict)
    torus_energy: Convergence | None = None
    torus_window: Convergence | None = None
    seconds: dict[str, float] = field(default_factory=dict)


def convergence(scenario: str, params: Mapping[str, Any], integrators, hs, t_end: float,
                dt: float, *, ref_integrator: str | None, h_ref: float | None,
                cache: str | None) -> Convergence:
    """Runs of each integrator at each ``h`` against one reference; fitted slopes."""
    over = json.dumps(dict(params), sort_keys=True)
    rows = []
    ref = None
    for integ in integrators:
        for h in hs:
            spec = RunSpec(scenario, integ, h, t_end, dt, over, ref_integrator or "",
                           h_ref if ref_integrator else None)
            if ref is None and ref_integrator:
                ref = compute_reference(spec.reference_spec(), cache)
            rows.append(run_row(spec, ref))
    return Convergence(rows, slopes(rows), t_end, h_ref or float("nan"), ref_integrator or "")


def pendulum_invariant_series(integrator: str, h: float, t_end: float) -> dict[str, np.ndarray]:
    """``Rρ₀·Ω``, ``|Rρ₀| − 1``, ``e₃·Ω`` and ``‖RᵀR − I‖`` at every step (B&G Fig. 1)."""
    sim = Simulation(load_scenario("pendulum").build_model(), integrator, h, record_every=1)
    sim.run_until(t_end, chunk=10_000)
    a = sim.series.arrays()
    inv = pendulum_invariants(a["q"][:, 0], a["omega"][:, 0])
    e = a["energy"].sum(axis=1)
    return {"t": a["t"], "R_rho0_dot_omega": inv["R_rho0_dot_omega"],
            "norm_R_rho0_minus_1": inv["norm_R_rho0"] - 1.0,
            "e3_dot_omega_drift": inv["e3_dot_omega"] - inv["e3_dot_omega"][0],
            "orthogonality_error": inv["orthogonality_error"],
            "energy_error": (e - sim.e_ref) / sim.e_scale}


def torus_series(params: Mapping[str, Any], integrator: str, h: float, t_end: float,
                 every: int) -> dict[str, Any]:
    """Energy components, total energy error, ``P`` and ``L`` of one torus run."""
    model = load_scenario("torus", dict(params)).build_model()
    sim = Simulation(model, integrator, h, record_every=every, record_frames=False)
    rep = sim.run_until(t_end, chunk=50_000)
    a = sim.series.arrays()
    names = energy_names(model)
    idx = [ENERGY_NAMES.index(n) for n in names]
    total = a["energy"].sum(axis=1)
    drift = momentum_drift(a["P"], a["L"])
    return {"t": a["t"], "components": {n: a["energy"][:, i] for n, i in zip(names, idx,
                                                                               strict=True)},
            "total": total, "rel_error": (total - sim.e_ref) / sim.e_scale, "P": a["P"],
            "L": a["L"], "conserved": list(model.conserved), "drift": drift,
            "drift_rel": {k: v / (sim.p_scale if k.startswith("P") else sim.l_scale)
                          for k, v in drift.items()},
            "ok": rep.ok, "t_reached": sim.t,
            "message": "" if rep.ok else rep.failure.message,
            "us_per_step": 1e6 * sim.kernel_seconds / max(1, sim.kernel_steps),
            "integrator": integrator, "h": h}


def compute(cfg: PaperConfig, cache: str | None = None,
            log: Callable[[str], None] | None = None) -> PaperData:
    """Every study behind the figures and the report."""
    say = log or (lambda msg: None)
    d = PaperData(cfg)

    def timed(name: str, fn: Callable[[], Any]) -> Any:
        say(f"  {name} …")
        t0 = time.perf_counter()
        out = fn()
        d.seconds[name] = time.perf_counter() - t0
        return out

    hmin = min(cfg.pendulum_hs)
    d.pendulum = timed("Fig. 1: pendulum convergence", lambda: convergence(
        "pendulum", {}, ("rrp-exact", "rrp-newmark", "campello"), cfg.pendulum_hs,
        cfg.pendulum_t, cfg.pendulum_dt, ref_integrator=cfg.ref_integrator,
        h_ref=hmin / (2 * cfg.ref_factor), cache=cache))
    d.invariants = timed("Fig. 1: pendulum invariants", lambda: {
        i: pendulum_invariant_series(i, cfg.invariants_h, cfg.invariants_t)
        for i in ("rrp-exact", "rrp-newmark")})
    d.torus_run = timed("Figs. 4, 6: torus energy and momenta", lambda: torus_series(
        cfg.torus, "rrp-newmark", cfg.energy_h, cfg.energy_t, 10))
    d.long_runs = timed("Fig. 5: long runs", lambda: {
        i: torus_series(cfg.torus, i, cfg.long_h, cfg.long_t, 100)
        for i in cfg.long_integrators})
    d.paper_long = timed("Fig. 5: the paper's h", lambda: torus_series(
        cfg.torus, "rrp-newmark", cfg.paper_long_h, min(cfg.long_t, 5.0), 1))
    d.torus_energy = timed("Fig. 7: torus E-error", lambda: convergence(
        "torus", cfg.torus, cfg.conv_integrators, cfg.conv_hs, cfg.conv_t, cfg.conv_dt,
        ref_integrator=None, h_ref=None, cache=cache))
    d.torus_window = timed("Fig. 7: torus trajectory errors", lambda: convergence(
        "torus", cfg.torus, cfg.conv_integrators, cfg.window_hs, cfg.window_t, cfg.window_dt,
        ref_integrator=cfg.ref_integrator, h_ref=min(cfg.window_hs) / cfg.ref_factor,
        cache=cache))
    return d
