"""The data behind Baker & Gonzalez Figs. 1, 4–7 (docs/physics.md §4.1, §4.2, §6, §7).

:func:`compute` runs everything serially (each piece takes seconds) and returns a
:class:`PaperData`; :mod:`.figures` draws it and :mod:`.report` states the claims.
Reference runs go through the disk cache of :mod:`.reference`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..diagnostics import momentum_drift, pendulum_invariants
from ..drivers import simulation_for
from ..layout import ENERGY_NAMES
from ..scenarios import load_scenario
from ..simulation import Simulation, energy_names
from .convergence import Slope, slopes
from .runs import RunSpec, compute_reference, run_row, stopwatch


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
    # Fig. 2 analogue (Capobianco et al.): the spring pendulum with a wall, e_N = 1
    spring_h: float = 1e-3
    spring_t: float = 20.0
    spring_schemes: tuple[str, ...] = ("moreau", "moreau-symmetric", "moreau-variational")
    spring_coordinates: tuple[str, ...] = ("polar", "cartesian")
    # the torus with hard contacts (issue 8 §4): moreau-symmetric, e_N = 1, μ = 0 and 0.5
    hard_scheme: str = "moreau-symmetric"
    hard_h: float = 1e-3
    hard_t: float = 25.0
    hard_mus: tuple[float, ...] = (0.0, 0.5)
    hard_long_t: float = 0.0        # > 0: also a run of that length per μ (full mode: 500)


def config(quick: bool = True, **changes: Any) -> PaperConfig:
    """The quick (``rrp figures --quick``) or the full configuration."""
    base = PaperConfig(quick=True) if quick else PaperConfig(
        quick=False, pendulum_hs=(0.04, 0.02, 0.01, 0.005, 0.0025, 0.00125),
        conv_hs=(1e-3, 5e-4, 2.5e-4, 1.25e-4, 6.25e-5, 3.125e-5),
        window_hs=(2.5e-4, 1.25e-4, 6.25e-5, 3.125e-5, 1.5625e-5),
        spring_t=200.0, hard_long_t=500.0)
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
    spring: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    torus_hard: dict[float, dict[str, Any]] = field(default_factory=dict)
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


def spring_series(scheme: str, coordinates: str, h: float, t_end: float,
                  points: int = 2000) -> dict[str, Any]:
    """The spring pendulum with a wall (physics.md §4.4, ``e_N = 1``) run by ``scheme`` in
    ``coordinates`` to ``t_end``: the relative error ``(E + D − E₀)/E₀`` of the node energy
    recorded at every step, its max, final value and drift per unit time (slope of the
    least-squares line, fitted while ``|error| < 1``: ``t_exceeds`` is where it first reaches
    100 %, nan if never), impacts, max penetration, and for plotting the envelope
    ``max |error|`` over ``points`` windows.  A run that blows up keeps its last good
    state; ``t_reached`` says where."""
    from ..models import get_model_spec

    model = get_model_spec("spring-pendulum").make({"coordinates": coordinates, "e_n": 1.0})
    sim = simulation_for(model, scheme, h, record_every=1, record_frames=False,
                     energy_tolerance=None)
    rep = sim.advance(int(round(t_end / h)))
    a = sim.series.arrays()
    err = (a["energy"].sum(axis=1) - sim.e_ref) / sim.e_scale
    ok = np.isfinite(err)
    t, err = a["t"][ok], err[ok]
    big = np.flatnonzero(np.abs(err) >= 1.0)
    t_exceeds = float(t[big[0]]) if len(big) else float("nan")
    fit = slice(0, big[0] if len(big) else len(t))  # the drift of the part below 100 %
    drift = float(np.polyfit(t[fit], err[fit], 1)[0]) if fit.stop > 2 else float("nan")
    block = max(1, len(t) // points)
    nb = len(t) // block
    env = np.abs(err[:nb * block]).reshape(nb, block).max(axis=1)
    t_env = t[:nb * block].reshape(nb, block)[:, -1]
    cs = sim.contact_stats
    return {"scheme": scheme, "coordinates": coordinates, "h": h, "t_end": t_end,
            "max_error": float(np.max(np.abs(err))), "final_error": float(err[-1]),
            "drift": drift, "t_exceeds": t_exceeds, "impacts": int(cs["impacts"]),
            "penetration": float(cs["penetration"]), "ok": rep.ok and bool(ok.all()),
            "t_reached": float(t[-1]), "status": "ok" if rep.ok else rep.failure.kind,
            "t_env": t_env, "envelope": env, "window": block * h}


def hard_torus_run(mu: float, scheme: str, h: float, t_end: float,
                   every: int = 10) -> dict[str, Any]:
    """The torus with ``contact = "hard"``, ``e_N = 1`` and friction ``mu``: the error of
    ``E + D`` (the engine's total includes ``dissipated``), ``D`` itself, the relative
    drifts of ``P_y, P_z, L_x``, the sphere spins ``|Ω|`` (max and mean over the spheres,
    per recorded row) and the contact statistics."""
    model = load_scenario("torus", {"contact": "hard", "e_n": 1.0, "mu": float(mu),
                                    "e_t": 0.0}).build_model()
    sim = Simulation(model, scheme, h, record_every=every, record_frames=True,
                     energy_tolerance=None)
    rep = sim.run_until(t_end, chunk=50_000)
    a = sim.series.arrays()
    total = a["energy"].sum(axis=1)
    drift = momentum_drift(a["P"], a["L"])
    spin = np.linalg.norm(a["omega"], axis=2)
    return {"mu": float(mu), "scheme": scheme, "h": h, "t_end": t_end, "t": a["t"],
            "rel_error": (total - sim.e_ref) / sim.e_scale,
            "dissipated": a["energy"][:, ENERGY_NAMES.index("dissipated")] / sim.e_scale,
            "drift_rel": {k: drift[k] / (sim.p_scale if k.startswith("P") else sim.l_scale)
                          for k in ("P_y", "P_z", "L_x")},
            "spin_max": spin.max(axis=1), "spin_mean": spin.mean(axis=1),
            "contact": sim.contact_stats, "ok": rep.ok, "t_reached": sim.t,
            "message": "" if rep.ok else rep.failure.message,
            "us_per_step": 1e6 * sim.kernel_seconds / max(1, sim.kernel_steps)}


def compute(cfg: PaperConfig, cache: str | None = None,
            log: Callable[[str], None] | None = None) -> PaperData:
    """Every study behind the figures and the report."""
    say = log or (lambda msg: None)
    d = PaperData(cfg)
    timed = stopwatch(d.seconds, say)

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
    d.spring = timed("Fig. 2: spring pendulum with a wall", lambda: {
        c: {s: spring_series(s, c, cfg.spring_h, cfg.spring_t) for s in cfg.spring_schemes}
        for c in cfg.spring_coordinates})

    def hard() -> dict[float, dict[str, Any]]:
        out = {}
        for mu in cfg.hard_mus:
            r = hard_torus_run(mu, cfg.hard_scheme, cfg.hard_h, cfg.hard_t)
            if cfg.hard_long_t > 0:
                r["long"] = hard_torus_run(mu, cfg.hard_scheme, cfg.hard_h, cfg.hard_long_t,
                                           every=100)
            out[mu] = r
        return out

    d.torus_hard = timed("torus with hard contacts", hard)
    return d
