"""Matplotlib figures (Agg, PNG) of :class:`~.energy_stepping.EnergySteppingData`
(issue #28): the energy error over a long run, the convergence as ``ε → 0``, the
accuracy/cost curve in ``REL``, the self-chosen steps and the cost against a
fixed-step scheme at equal max energy error.

Each ``fig_es_*`` function draws one figure from its study's data and returns the path
of the PNG.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from .energy_stepping import (
    Convergence,
    CostStudy,
    EnergySteppingData,
    LongEnergy,
    StepSizes,
    equal_error_costs,
)
from .figures import COLORS, _save, plt

ES_COLOR = "black"
SCHEME_COLORS = {**COLORS, "yoshida4:rrp-exact": "tab:cyan"}
MAX_SCATTER = 100_000
"""Points drawn in a scatter of steps (every k-th beyond that: the PNG stays small)."""


def _envelope(t: np.ndarray, y: np.ndarray, windows: int) -> tuple[np.ndarray, np.ndarray]:
    """``max |y|`` over ``windows`` consecutive windows, at each window's end."""
    b = max(1, len(t) // windows)
    n = len(t) // b
    return t[:n * b].reshape(n, b)[:, -1], np.abs(y[:n * b]).reshape(n, b).max(axis=1)


def fig_es_energy_long(d: LongEnergy, out: Path) -> Path:
    """``|E − E₀|/|E₀|`` over the long run (window maxima, log scale) for energy-stepping
    and the fixed-step schemes at equal max error; the first stretch signed; and
    ``T + V_ε − E_ε(0)`` of energy-stepping (round-off)."""
    es = d.es
    fig, axs = plt.subplots(1, 3, figsize=(17, 5.2), width_ratios=(5, 3, 3))
    half = 0.5 * es.eps / es.e_scale
    windows = int(min(500, max(100, es.t[-1] / 10)))  # windows of ≥ 10: a few periods
    label = (f"energy-stepping, REL = {es.rel:g} (ε = {es.eps:.3g}): max {es.max_energy_error:.2e},"
             f" {es.n_events:.3g} events")
    tw, env = _envelope(es.t, es.energy_error, windows)
    axs[0].semilogy(tw, env, color=ES_COLOR, lw=1.2, label=label)
    for name, r in d.schemes.items():
        tw, env = _envelope(r.t, r.energy_error, windows)
        axs[0].semilogy(tw, env, color=SCHEME_COLORS.get(name, "k"), lw=0.9,
                        label=f"{name}, h = {r.h:g}: max {r.max_energy_error:.2e}")
    axs[0].axhline(half, color="0.4", ls="--", lw=0.8, label="ε/2 (start mid-terrace: "
                   "|V − V_ε| ≤ ε/2)")
    axs[0].set_ylim(half * 1e-2, half * 10)
    axs[0].set_xlabel("time t")
    axs[0].set_ylabel(f"max |E − E₀|/|E₀| over windows of {es.t[-1] / windows:g}")
    axs[0].set_title(f"(a) {es.scenario}: energy error to t = {es.t[-1]:g}; steps chosen for "
                     f"the same max error\n(calibrated on t ≤ {d.match_t:g})")
    axs[0].legend(loc="lower right", fontsize=8)

    t_zoom = min(40.0, es.t[-1])
    for name, r in d.schemes.items():
        k = r.t <= t_zoom
        axs[1].plot(r.t[k], r.energy_error[k], color=SCHEME_COLORS.get(name, "k"), lw=0.9,
                    label=name)
    k = es.t <= t_zoom
    axs[1].plot(es.t[k], es.energy_error[k], ".", color=ES_COLOR, ms=1.5,
                label=f"energy-stepping (records every {es.t[1]:g})")
    for s in (-1, 1):
        axs[1].axhline(s * half, color="0.4", ls="--", lw=0.8)
    axs[1].set_xlabel("time t")
    axs[1].set_ylabel("(E − E₀)/|E₀|")
    axs[1].set_title(f"(b) t ≤ {t_zoom:g}, signed; dashed: ±ε/2")
    axs[1].legend(loc="lower right", fontsize=8)
    axs[1].ticklabel_format(axis="y", style="sci", scilimits=(0, 0))

    dev = es.energy_eps_error
    axs[2].plot(es.t, dev, ",", color=ES_COLOR, rasterized=True)
    axs[2].axhline(0.0, color="0.5", lw=0.6)
    m = float(np.max(np.abs(dev)))
    axs[2].set_title(f"(c) energy-stepping: (T + V_ε − E_ε(0))/|E₀|\nmax |·| = {m:.1e} "
                     f"over {es.n_events:.3g} events (round-off)")
    axs[2].set_xlabel("time t")
    axs[2].ticklabel_format(axis="y", style="sci", scilimits=(0, 0))
    lim = max(m, 1e-16) * 1.3
    axs[2].set_ylim(-lim, lim)
    return _save(fig, out, "fig_es_energy_long.png")


GUIDE_LABELS = {0.5: "∝ √ε", 1.0: "∝ ε", -1.0: "∝ 1/ε"}


def _guides(ax, x: np.ndarray, y: np.ndarray, powers=(0.5, 1.0)) -> None:
    """Dotted guides ∝ xᵖ through a point below the geometric middle of the data,
    labelled at their left end."""
    lo, hi = float(np.min(x)), float(np.max(x))
    xx = np.array([lo, hi])
    xm = math.sqrt(lo * hi)
    ym = math.exp(float(np.mean(np.log(y)))) / 4
    for p in powers:
        ax.loglog(xx, ym * (xx / xm) ** p, color="0.5", lw=0.8, ls=(0, (1, 2)))
        ax.annotate(GUIDE_LABELS.get(p, f"∝ ε^{p:g}"), (lo, ym * (lo / xm) ** p),
                    fontsize=8, color="0.35", ha="left", va="top")


def fig_es_convergence(c: Convergence, out: Path) -> Path:
    """Max attitude and ``Ω`` errors on ``t ≤ t_end`` against the reference vs ``ε``
    (log-log), with the fitted orders; and the number of events."""
    fig, axs = plt.subplots(1, 2, figsize=(14, 5.4), width_ratios=(3, 2))
    ax = axs[0]
    from .energy_stepping import fitted_order

    for y, mk, name in ((c.attitude, "o", "attitude |log(R R_refᵀ)| (rad)"),
                        (c.omega, "s", "|Ω − Ω_ref| (rad/s)")):
        ax.loglog(c.eps, y, "-", marker=mk, color=ES_COLOR if mk == "o" else "tab:purple",
                  label=f"max {name}: order {fitted_order(c.eps, y):.2f}")
    _guides(ax, c.eps, c.error)
    ax.set_xlabel("terrace height ε (energy units)")
    ax.set_ylabel(f"max error on t ≤ {c.t_end:g}")
    ax.set_title(f"(a) convergence as ε → 0: measured order {c.order:.2f} (both together)\n"
                 f"reference {c.ref_integrator}, h = {c.ref_h:g} (its own error ≤ "
                 f"{c.ref_error:.0e}: vs 2h)")
    ax.legend(loc="upper left", fontsize=8)
    secax = ax.secondary_xaxis("top", functions=(lambda e: e / c.eps[0] * c.rels[0],
                                                 lambda r: r / c.rels[0] * c.eps[0]))
    secax.set_xlabel("REL = ε/|E₀|")
    axs[1].loglog(c.eps, c.events, "o-", color=ES_COLOR,
                  label=f"events: order {fitted_order(c.eps, c.events):.2f} in ε")
    _guides(axs[1], c.eps, c.events.astype(float), powers=(-1.0,))
    axs[1].set_xlabel("terrace height ε")
    axs[1].set_ylabel(f"events on t ≤ {c.t_end:g}")
    axs[1].set_title("(b) cost: events (each a closed-form crossing)")
    axs[1].legend(loc="upper right", fontsize=8)
    return _save(fig, out, "fig_es_convergence.png")


def fig_es_rel_curve(cost: CostStudy, conv: Convergence | None, out: Path) -> Path:
    """The accuracy/cost curve in ``REL = ε/|E₀|``: max energy error (and the trajectory
    error on ``t ≤ 10`` where measured) and events and seconds per simulated second; the
    baseline at the scenario's own step for comparison."""
    rows = cost.es_rows
    rel = np.array([r["rel"] for r in rows])
    fig, axs = plt.subplots(1, 2, figsize=(14, 5.2))
    ax = axs[0]
    ax.loglog(rel, [r["max_error"] for r in rows], "o-", color=ES_COLOR,
              label=f"max |E − E₀|/|E₀| on t ≤ {cost.t_end:g}")
    ax.loglog(rel, rel / 2, ":", color="0.5", label="REL/2")
    if conv is not None:
        ax.loglog(conv.rels, conv.error, "s-", color="tab:purple",
                  label=f"max trajectory error on t ≤ {conv.t_end:g} (order "
                        f"{conv.order:.2f})")
    r = cost.default_row()
    if r is not None:
        ax.axhline(r["max_error"], color=COLORS.get(cost.baseline, "k"), ls=":", lw=1,
                   label=f"{cost.baseline}, h = {r['h']:g}: max |E − E₀|/|E₀|")
    ax.set_xlabel("REL = ε/|E₀|")
    ax.set_ylabel("error")
    ax.set_title(f"(a) {cost.scenario}: accuracy against REL")
    ax.legend(loc="upper left", fontsize=8)
    ax = axs[1]
    ax.loglog(rel, [r["events_per_time"] for r in rows], "o-", color=ES_COLOR,
              label="events per unit time")
    ax.loglog(rel, [r["seconds_per_time"] * 1e6 for r in rows], "^--", color="tab:blue",
              label=f"µs of wall time per simulated second (best of {cost.repeat})")
    r = cost.default_row()
    if r is not None:
        ax.axhline(r["seconds_per_time"] * 1e6, color=COLORS.get(cost.baseline, "k"), ls=":",
                   lw=1, label=f"{cost.baseline}, h = {r['h']:g}: µs per simulated second "
                               f"(max error {r['max_error']:.1e})")
    ax.set_xlabel("REL = ε/|E₀|")
    ax.set_title("(b) cost against REL")
    ax.legend(loc="upper right", fontsize=8)
    return _save(fig, out, "fig_es_rel_curve.png")


def fig_es_steps(s: StepSizes, out: Path) -> Path:
    """Histogram of the self-chosen steps (log bins), with the scenario's fixed step and
    the explicit schemes' stability limit; and the steps against time with the event
    rate."""
    dt = s.flight_times[s.flight_times > 0]
    fig, axs = plt.subplots(1, 2, figsize=(15, 5.2))
    lo, hi = (float(dt.min()), float(dt.max())) if len(dt) else (1e-6, 1.0)
    lo = min(lo, s.h_default, s.h_stable) / 2
    hi = max(hi, s.h_default, s.h_stable) * 2
    bins = np.geomspace(lo, hi, 80)
    axs[0].hist(dt, bins=bins, color="0.3")
    axs[0].set_xscale("log")
    axs[0].set_yscale("log")
    for h, name, c in ((s.h_default, f"{s.integrator_default}'s step h = {s.h_default:g}",
                        "tab:blue"),
                       (s.h_stable, f"stability limit 2/ω_max = {s.h_stable:.3g}", "tab:red")):
        if math.isfinite(h):
            axs[0].axvline(h, color=c, ls="--", lw=1, label=name)
    if len(dt):
        axs[0].axvline(float(np.median(dt)), color="k", ls=":", lw=1,
                       label=f"median step {np.median(dt):.2e}")
    axs[0].set_xlabel("self-chosen step (time between consecutive events)")
    axs[0].set_ylabel("count")
    kept = "" if s.complete else f" (the first {len(s.flight_times)})"
    axs[0].set_title(f"(a) {s.scenario}, REL = {s.rel:g}: {s.n_events} events on "
                     f"t ≤ {s.t_end:g}{kept}, {s.n_terms} terraced term(s)")
    axs[0].legend(loc="upper left", fontsize=8)
    ax = axs[1]
    t = s.event_times
    k = max(1, len(t) // MAX_SCATTER)
    ax.semilogy(t[::k], s.flight_times[::k], ",", color="0.3", rasterized=True)
    ax.set_xlabel("time t")
    ax.set_ylabel("self-chosen step" + (f" (every {k}th)" if k > 1 else ""))
    ax2 = ax.twinx()
    ax2.plot(s.t_windows, s.rate, color="tab:orange", lw=1.2)
    ax2.set_ylabel("events per unit time", color="tab:orange")
    ax2.grid(False)
    ax.set_title("(b) the steps against time; orange: events per unit time")
    return _save(fig, out, "fig_es_steps.png")


def fig_es_cost(cost: CostStudy, out: Path, name: str = "fig_es_cost.png") -> Path:
    """Seconds per simulated second against max energy error: energy-stepping per REL,
    the baseline per h, and the ratio at equal max energy error."""
    fig, ax = plt.subplots(figsize=(10, 6))
    es = cost.es_rows
    base = [r for r in cost.base_rows if math.isfinite(r["max_error"])]
    ax.loglog([r["max_error"] for r in es], [r["seconds_per_time"] for r in es], "o-",
              color=ES_COLOR, label="energy-stepping (labels: REL)")
    for r in es:
        ax.annotate(f"{r['rel']:g}", (r["max_error"], r["seconds_per_time"]), fontsize=8,
                    xytext=(4, 4), textcoords="offset points")
    ax.loglog([r["max_error"] for r in base], [r["seconds_per_time"] for r in base], "s-",
              color=COLORS.get(cost.baseline, "tab:orange"),
              label=f"{cost.baseline} (labels: h)")
    for r in base:
        ax.annotate(f"{r['h']:g}", (r["max_error"], r["seconds_per_time"]), fontsize=8,
                    xytext=(4, -10), textcoords="offset points")
    eq = [r for r in equal_error_costs(es, base) if math.isfinite(r["ratio"])]
    if eq:
        text = "\n".join(f"REL {r['rel']:g}: {r['ratio']:.3g}×"
                         + (" (extrapolated)" if r["extrapolated"] else "") for r in eq)
        ax.text(0.98, 0.98, f"energy-stepping / {cost.baseline}\nat equal max error:\n{text}",
                transform=ax.transAxes, ha="right", va="top", fontsize=8,
                bbox={"fc": "white", "ec": "0.6", "alpha": 0.9})
    ax.set_xlabel(f"max |E − E₀|/|E₀| on t ≤ {cost.t_end:g}")
    ax.set_ylabel(f"wall seconds per simulated second (best of {cost.repeat}, one core)")
    ax.set_title(f"{cost.scenario}: cost at equal max energy error")
    ax.legend(loc="lower left", fontsize=9)
    return _save(fig, out, name)


def draw_all(d: EnergySteppingData, out: Path) -> list[Path]:
    """Every energy-stepping figure whose study was computed, as PNGs in ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    if d.long is not None:
        paths.append(fig_es_energy_long(d.long, out))
    if d.convergence is not None:
        paths.append(fig_es_convergence(d.convergence, out))
    if d.cost is not None:
        paths.append(fig_es_rel_curve(d.cost, d.convergence, out))
        paths.append(fig_es_cost(d.cost, out))
    if d.cost_many is not None:
        paths.append(fig_es_cost(d.cost_many, out, f"fig_es_cost_{d.cost_many.scenario}.png"))
    if d.steps is not None:
        paths.append(fig_es_steps(d.steps, out))
    return paths
