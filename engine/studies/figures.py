"""Matplotlib figures (Agg, PNG) of :class:`~.paper.PaperData`: B&G Figs. 1, 4–7, the
comparison of the paper's q-error with the true H¹ distance, and the spring-pendulum
Fig. 2 of Capobianco, Eugster & Leine.

Each ``fig_*`` function draws one figure and returns the path of the PNG.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ..layout import ENERGY_LABELS  # noqa: E402
from .convergence import MEASURE_LABELS, Slope  # noqa: E402
from .paper import Convergence, PaperData  # noqa: E402

DPI = 110
COLORS = {"rrp-exact": "tab:blue", "rrp-newmark": "tab:orange", "campello": "tab:green",
          "rk4": "tab:red", "pfc-verlet": "tab:purple"}
MARKERS = {"e_error": "o", "q_error_paper": "s", "h1_error": "^"}
STYLES = {"e_error": "-", "q_error_paper": "--", "h1_error": ":"}

plt.rcParams.update({"font.size": 10, "axes.grid": True, "grid.alpha": 0.3,
                     "legend.fontsize": 8, "figure.constrained_layout.use": True})


def _save(fig, out: Path, name: str) -> Path:
    path = Path(out) / name
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def _slope_of(conv: Convergence, integrator: str, measure: str) -> Slope | None:
    return next((s for s in conv.slopes if s.integrator == integrator and s.measure == measure),
                None)


def _loglog(ax, conv: Convergence, integrators: Sequence[str], measures: Sequence[str]) -> None:
    """Errors against h with the fitted slope (and the theory) in each legend entry,
    plus dotted guides ∝ h and ∝ h²."""
    hs = []
    for integ in integrators:
        for m in measures:
            s = _slope_of(conv, integ, m)
            if s is None:
                continue
            ok = [(h, e) for h, e in zip(s.h, s.errors, strict=True) if e > 0 and math.isfinite(e)]
            if not ok:
                continue
            h, e = zip(*ok, strict=True)
            hs.extend(h)
            ax.loglog(h, e, STYLES[m], marker=MARKERS[m], color=COLORS.get(integ, "k"),
                      mfc="none" if m == "q_error_paper" else None,
                      ms=9 if integ == "rrp-exact" else 6,
                      label=f"{integ}, {MEASURE_LABELS[m]}: slope {s.slope:.2f} "
                            f"(theory {s.expected:g})")
    if hs:
        lo, hi = min(hs), max(hs)
        ymin, ymax = ax.get_ylim()
        hh = np.array([lo, hi])
        mid = math.sqrt(lo * hi)
        for p in (1, 2):
            y0 = math.sqrt(ymin * ymax) / 3
            ax.loglog(hh, y0 * (hh / hi) ** p, color="0.5", lw=0.8, ls=(0, (1, 2)))
            ax.annotate(f"∝ h{'²' if p == 2 else ''}", (mid, y0 * (mid / hi) ** p),
                        fontsize=8, color="0.35", ha="left", va="top")
        ticks = sorted(set(hs))
        ax.set_xticks(ticks, [f"{h:g}" for h in ticks], rotation=30)
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), fontsize=8, ncol=1)
    ax.set_xlabel("time step h")
    ax.set_ylabel("relative error")


def fig1_pendulum(d: PaperData, out: Path) -> Path:
    """B&G Fig. 1: pendulum convergence, and ``Rρ₀·Ω``, ``|Rρ₀| − 1`` at round-off."""
    fig, axs = plt.subplots(1, 3, figsize=(16, 6.6))
    conv = d.pendulum
    _loglog(axs[0], conv, ("rrp-exact", "rrp-newmark"), ("e_error", "q_error_paper", "h1_error"))
    axs[0].set_title(f"(a) 3D pendulum, t_N = {conv.t_end:g}: errors vs h\n"
                     f"(reference: {conv.ref_integrator}, h = {conv.h_ref:.3g})")
    for integ, s in d.invariants.items():
        axs[1].plot(s["t"], s["R_rho0_dot_omega"], lw=0.7, color=COLORS[integ], label=integ)
        axs[2].plot(s["t"], s["norm_R_rho0_minus_1"], ls="none", marker=".", ms=1.5,
                    color=COLORS[integ], label=integ)
    h = d.cfg.invariants_h
    axs[1].set_title(f"(b) Rρ₀·Ω (exactly 0), h = {h:g}")
    axs[1].set_ylabel("Rρ₀·Ω")
    axs[2].set_title(f"(c) |Rρ₀| − 1 (exactly 0), h = {h:g}")
    axs[2].set_ylabel("|Rρ₀| − 1")
    for ax in axs[1:]:
        ax.set_xlabel("time t")
        ax.legend(loc="upper left")
        ax.ticklabel_format(axis="y", style="sci", scilimits=(0, 0))
    return _save(fig, out, "fig1_pendulum.png")


SPRING_STYLES = {"moreau": ("tab:red", "-", 1.0), "moreau-symmetric": ("tab:blue", "-", 1.0),
                 "moreau-variational": ("tab:green", "--", 1.0)}


def fig2_spring_pendulum(d: PaperData, out: Path) -> Path:
    """Capobianco et al. Fig. 2 analogue: relative energy error ``(E + D − E₀)/E₀`` of the
    spring pendulum with a wall (``e_N = 1``) vs t for the three Moreau-type schemes, polar
    and Cartesian coordinates (one panel each), drawn as its envelope ``max |error|`` over
    short windows on a log scale; a run that blows up ends with a cross."""
    fig, axs = plt.subplots(1, 2, figsize=(15, 5.4), sharey=True)
    lo = 1e-9
    for ax, (coords, runs) in zip(axs, d.spring.items(), strict=False):
        notes = []
        for scheme, r in runs.items():
            color, ls, lw = SPRING_STYLES.get(scheme, ("k", "-", 1.0))
            env = np.maximum(r["envelope"], lo)
            label = (f"{scheme}: max {r['max_error']:.2e}, final {r['final_error']:+.2e}, "
                     f"drift {r['drift']:+.1e}/s" if r["ok"] and r["max_error"] < 1 else
                     f"{scheme}: drift {r['drift']:+.1e}/s while |err| < 1")
            ax.semilogy(r["t_env"], env, ls=ls, lw=lw, color=color, label=label)
            if not r["ok"]:
                ax.plot(r["t_env"][-1], min(env[-1], 1e4), "x", color=color, ms=12, mew=2,
                        clip_on=False)
                notes.append(f"{scheme}: |err| ≥ 100 % from t ≈ {r['t_exceeds']:.4g}, "
                             f"blows up ({r['status']}) at t ≈ {r['t_reached']:.4g}")
            elif r["max_error"] >= 1:
                notes.append(f"{scheme}: |err| ≥ 100 % from t ≈ {r['t_exceeds']:.4g}")
            elif r["final_error"] > 0 and r["max_error"] > 1e-2:
                notes.append(f"{scheme} gains energy: +{r['final_error']:.1%} at "
                             f"t = {r['t_reached']:g}")
        if notes:
            ax.text(0.02, 0.97, "\n".join(notes), transform=ax.transAxes, va="top",
                    fontsize=9, color="tab:red",
                    bbox={"fc": "white", "ec": "0.6", "alpha": 0.9})
        r0 = next(iter(runs.values()))
        what = ("q = (r, φ): M(q), Coriolis terms, implicit steps" if coords == "polar"
                else "q = (x, y): constant M, h = f(q)")
        ax.set_title(f"({'ab'[list(d.spring).index(coords)]}) {coords}, {what}\n"
                     f"Δt = {r0['h']:g}, {r0['impacts']} impacts by t = {r0['t_end']:g}")
        ax.set_xlabel("time t")
        ax.legend(loc="lower right", fontsize=8)
    axs[0].set_ylabel(f"max |E + D − E₀|/E₀ over windows of {r0['window']:g}")
    top = max(max(r["envelope"].max() for r in runs.values()) for runs in d.spring.values())
    axs[0].set_ylim(lo, min(max(10 * top, 1e-1), 1e4))
    fig.suptitle("Spring pendulum with a rigid wall, e_N = 1 (Capobianco et al. Fig. 2): "
                 "relative energy error of the node energy")
    return _save(fig, out, "fig2_spring_pendulum.png")


def fig4_torus_energy(d: PaperData, out: Path) -> Path:
    """B&G Fig. 4: energy components of the torus impact vs time."""
    r = d.torus_run
    fig, axs = plt.subplots(1, 2, figsize=(14, 4.8), width_ratios=(3, 2))
    for name, e in r["components"].items():
        if np.max(np.abs(e)) > 0:
            axs[0].plot(r["t"], e, lw=1, label=ENERGY_LABELS.get(name, name))
    axs[0].plot(r["t"], r["total"], "k", lw=1.5, label="total E")
    axs[0].set_xlabel("time t")
    axs[0].set_ylabel("energy")
    axs[0].set_title(f"(a) torus impact, {r['integrator']}, h = {r['h']:g}: energy components")
    axs[0].legend(loc="center right")
    axs[1].plot(r["t"], r["rel_error"], "k", lw=0.8)
    axs[1].set_xlabel("time t")
    axs[1].set_ylabel("(E − E₀)/|E₀|")
    axs[1].set_title(f"(b) total energy error: max {np.max(np.abs(r['rel_error'])):.2e}")
    return _save(fig, out, "fig4_torus_energy.png")


def fig5_long_run(d: PaperData, out: Path) -> Path:
    """B&G Fig. 5: long-time total energy error at the largest stable h."""
    fig, ax = plt.subplots(figsize=(10, 4.8))
    for integ, r in d.long_runs.items():
        ax.plot(r["t"], r["rel_error"], lw=0.6, color=COLORS.get(integ, "k"),
                label=f"{integ}, h = {r['h']:g}: max |error| "
                      f"{np.max(np.abs(r['rel_error'])):.2e}")
    p = d.paper_long
    note = (f"the paper's h = {p['h']:g} blows up at t ≈ {p['t_reached']:.3g} "
            "with the model as printed (physics.md §7)" if not p["ok"] else
            f"h = {p['h']:g} ran to t = {p['t_reached']:g}")
    ax.text(0.02, 0.96, note, transform=ax.transAxes, va="top", fontsize=9,
            bbox={"fc": "white", "ec": "0.6", "alpha": 0.9})
    ax.set_xlabel("time t")
    ax.set_ylabel("(E − E₀)/|E₀|")
    ax.set_title(f"torus: long-time energy error, t_N = {d.cfg.long_t:g}"
                 + (" (shortened; the paper's run is t_N = 500)" if d.cfg.long_t < 500 else ""))
    ax.legend(loc="lower right")
    return _save(fig, out, "fig5_long_energy.png")


def fig6_momenta(d: PaperData, out: Path) -> Path:
    """B&G Fig. 6: linear and angular momentum components vs time; the conserved ones
    (P_y, P_z, L_x with the wall) as drifts on a log scale."""
    r = d.torus_run
    fig, axs = plt.subplots(1, 3, figsize=(16, 4.6))
    for k, c in enumerate("xyz"):
        axs[0].plot(r["t"], r["P"][:, k], lw=1, label=f"P_{c}")
        axs[1].plot(r["t"], r["L"][:, k], lw=1, label=f"L_{c}")
    axs[0].set_title("(a) linear momentum P")
    axs[1].set_title("(b) angular momentum L (about the origin)")
    for ax, lab in ((axs[0], "P"), (axs[1], "L")):
        ax.set_xlabel("time t")
        ax.set_ylabel(lab)
        ax.legend()
    tiny = 1e-18
    for name in r["conserved"]:
        a = r["P"] if name[0] == "P" else r["L"]
        k = "xyz".index(name[-1])
        axs[2].semilogy(r["t"], np.abs(a[:, k] - a[0, k]) + tiny, lw=0.8,
                        label=f"|{name}(t) − {name}(0)|, max {r['drift'][name]:.1e}")
    axs[2].set_ylim(1e-18, 1e-8)
    axs[2].set_xlabel("time t")
    axs[2].set_ylabel("drift (+1e-18 to show zeros)")
    axs[2].set_title("(c) conserved components: round-off")
    axs[2].legend(loc="upper left")
    return _save(fig, out, "fig6_momenta.png")


def fig7_torus_convergence(d: PaperData, out: Path) -> Path:
    """B&G Fig. 7: torus E-error at t_N = 10 and trajectory errors on t ≤ 1."""
    fig, axs = plt.subplots(1, 2, figsize=(15, 7.2))
    ints = d.cfg.conv_integrators
    _loglog(axs[0], d.torus_energy, ints, ("e_error",))
    axs[0].set_title(f"(a) torus, t_N = {d.torus_energy.t_end:g}: E-error vs h")
    w = d.torus_window
    _loglog(axs[1], w, ints, ("h1_error", "q_error_paper"))
    axs[1].set_title(f"(b) trajectory errors on t ≤ {w.t_end:g} (chaotic later; rrp-exact ≈ "
                     "rrp-newmark)\n"
                     f"reference: {w.ref_integrator}, h = {w.h_ref:.3g}")
    return _save(fig, out, "fig7_torus_convergence.png")


def fig8_q_error_vs_h1(d: PaperData, out: Path) -> Path:
    """Not in the paper: the paper's q-error (a difference of squared norms, slope p/2)
    beside the true H¹ distance (slope p)."""
    fig, axs = plt.subplots(1, 2, figsize=(15, 7.4))
    _loglog(axs[0], d.pendulum, ("rrp-exact", "rrp-newmark", "campello"),
            ("q_error_paper", "h1_error"))
    axs[0].set_title("(a) pendulum: paper q-error (dashed) vs true H¹ distance (dotted)")
    _loglog(axs[1], d.torus_window, d.cfg.conv_integrators, ("q_error_paper", "h1_error"))
    axs[1].set_title(f"(b) torus, t ≤ {d.torus_window.t_end:g}: the same two measures")
    fig.suptitle("Why the paper reports 'linear' convergence: |‖q_h‖² − ‖q‖²|^½ has half "
                 "the slope of ‖q_h − q‖")
    return _save(fig, out, "fig8_q_error_vs_h1.png")


FIGURES = (fig1_pendulum, fig2_spring_pendulum, fig4_torus_energy, fig5_long_run, fig6_momenta,
           fig7_torus_convergence, fig8_q_error_vs_h1)


def draw_all(d: PaperData, out: Path) -> list[Path]:
    """Every figure, as PNGs in ``out`` (created)."""
    Path(out).mkdir(parents=True, exist_ok=True)
    return [f(d, Path(out)) for f in FIGURES]
