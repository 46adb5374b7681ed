"""The energy-stepping section of ``report.md`` (issue #28): its claims with the measured
numbers, then each figure with its data table.

:func:`section` returns the section between two HTML-comment markers, so that
``rrp figures --only energy-stepping`` can replace it in an existing report
(:func:`update`) without redoing the paper's studies.
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .. import __version__
from .energy_stepping import EnergySteppingData, LongEnergy, fitted_order

BEGIN = "<!-- energy-stepping: begin -->"
END = "<!-- energy-stepping: end -->"
ORDER_TOL = 0.15
ROUND_OFF = 1e-12


def _table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |" for r in rows]
    return "\n".join(out)


def _tenths(t: np.ndarray, err: np.ndarray) -> tuple[float, float]:
    """``max |err|`` over the first and the last tenth of the run."""
    n = max(1, len(t) // 10)
    return float(np.max(np.abs(err[:n]))), float(np.max(np.abs(err[-n:])))


def claims(d: EnergySteppingData) -> list[tuple[str, str, str, str]]:
    """Rows ``(claim, theory, measured, holds?)``."""
    rows: list[tuple[str, str, str, str]] = []
    lg = d.long
    if lg is not None:
        es = lg.es
        dev = float(np.max(np.abs(es.energy_eps_error)))
        rows.append((f"`T + V_ε` conserved ({es.scenario}, REL = {es.rel:g}, "
                     f"t = {es.t[-1]:g}, {es.n_events:.3g} events)", "round-off",
                     f"max {dev:.1e} relative (at the records)",
                     "**yes**" if dev < ROUND_OFF else "**no**"))
        bound = es.n_terms * es.eps / es.e_scale
        worst = es.max_energy_error
        rows.append((f"`|E − E₀| ≤ ε · (terms)` at every record to t = {es.t[-1]:g}",
                     f"≤ {es.n_terms} ε = {bound:.2e} relative (start mid-terrace: ≤ ε/2)",
                     f"max {worst:.3e} = {worst / (es.eps / es.e_scale):.3f} ε",
                     "**yes**" if worst <= bound else "**no**"))
        first, last = _tenths(es.t, es.energy_error)
        rows.append(("No drift of `E` (energy-stepping)", "bounded for all time",
                     f"max over the first tenth {first:.3e}, the last tenth {last:.3e}",
                     "**yes**" if last <= bound else "**no**"))
    c = d.convergence
    if c is not None:
        pw = c.pairwise_orders()
        rows.append((f"Trajectory converges as ε → 0 ({c.ref_integrator} reference, "
                     f"t ≤ {c.t_end:g}, REL {c.rels.max():g} … {c.rels.min():g})",
                     "converges (GSO 2010, no rate); O(√ε) expected (docs/physics.md §3.10)",
                     f"order {c.order:.2f} (pairwise {pw.min():.2f}–{pw.max():.2f}); "
                     f"attitude {fitted_order(c.eps, c.attitude):.2f}, Ω "
                     f"{fitted_order(c.eps, c.omega):.2f}",
                     "**yes** (order ½)" if abs(c.order - 0.5) <= ORDER_TOL else "**no**"))
        rows.append(("Events ∝ 1/ε", "order −1",
                     f"order {fitted_order(c.eps, c.events):.2f}",
                     "**yes**" if abs(fitted_order(c.eps, c.events) + 1) <= ORDER_TOL
                     else "**no**"))
    if d.cost is not None:
        eq = [r for r in d.cost.equal_error() if math.isfinite(r["ratio"])]
        if eq:
            lo, hi = min(r["ratio"] for r in eq), max(r["ratio"] for r in eq)
            rows.append((f"Cost against `{d.cost.baseline}` at equal max energy error "
                         f"({d.cost.scenario})", "— (measured, no claim)",
                         f"energy-stepping costs {lo:.3g}–{hi:.3g}× as much (REL "
                         f"{eq[0]['rel']:g} … {eq[-1]['rel']:g})", "measured"))
    if d.cost_many is not None:
        eq = [r for r in d.cost_many.equal_error() if math.isfinite(r["ratio"])
              and not r["extrapolated"]]
        if eq:
            lo, hi = min(r["ratio"] for r in eq), max(r["ratio"] for r in eq)
            rows.append((f"Cost against `{d.cost_many.baseline}` at equal max energy error "
                         f"({d.cost_many.scenario})", "— (measured, no claim)",
                         f"energy-stepping costs {lo:.3g}–{hi:.3g}× as much (max error "
                         f"{max(r['max_error'] for r in eq):.2g} … "
                         f"{min(r['max_error'] for r in eq):.2g})", "measured"))
    s = d.steps
    if s is not None:
        dt = s.flight_times
        rows.append((f"Self-chosen steps ({s.scenario}, REL = {s.rel:g}, "
                     f"t ≤ {s.t_end:g})", "—",
                     f"{s.n_events} events; median step {np.median(dt):.2e}, min "
                     f"{dt.min():.2e}, max {dt.max():.2e} (`{s.integrator_default}`: "
                     f"h = {s.h_default:g})", "measured"))
    return rows


def _long_table(lg: LongEnergy) -> str:
    es = lg.es
    rows = []
    f, la = _tenths(es.t, es.energy_error)
    rows.append(["energy-stepping", f"REL = {es.rel:g} (ε = {es.eps:.3g})",
                 f"{es.max_energy_error:.3e}", f"{f:.3e}", f"{la:.3e}",
                 f"{es.n_events} events"])
    for name, r in lg.schemes.items():
        f, la = _tenths(r.t, r.energy_error)
        rows.append([f"`{name}`", f"h = {r.h:g}", f"{r.max_energy_error:.3e}", f"{f:.3e}",
                     f"{la:.3e}", f"{int(round(r.t[-1] / r.h))} steps"])
    return _table(["scheme", "step", "max \\|E − E₀\\|/\\|E₀\\|", "first tenth", "last tenth",
                   "work"], rows)


def _baseline_tables(cost) -> list[str]:
    """The baseline's rows and the cost at equal max energy error of a cost study."""
    return [
        _table(["h", "max \\|E − E₀\\|/\\|E₀\\|", "µs per step", "ms per simulated second"],
               [[f"{r['h']:g}", f"{r['max_error']:.3e}", f"{r['us_per_step']:.3f}",
                 f"{r['seconds_per_time'] * 1e3:.4g}"] for r in cost.base_rows]),
        "",
        f"`{cost.baseline}`'s cost at energy-stepping's max energy error, linear in "
        "log–log between the two bracketing steps:\n",
        _table(["REL", "max \\|E − E₀\\|/\\|E₀\\|", "energy-stepping ms/s",
                f"`{cost.baseline}` ms/s", "ratio"],
               [[f"{r['rel']:g}", f"{r['max_error']:.3e}",
                 f"{r['es_seconds_per_time'] * 1e3:.4g}",
                 f"{r['base_seconds_per_time'] * 1e3:.4g}",
                 f"{r['ratio']:.3g}×" + (" (extrapolated)" if r["extrapolated"] else "")]
                for r in cost.equal_error()]),
        "",
    ]


def section(d: EnergySteppingData, figures: Sequence[Path], seconds: float | None = None,
            command: str = "rrp figures") -> str:
    """The section (markers included) for ``report.md``."""
    names = {Path(f).stem: Path(f).name for f in figures}
    cfg = d.cfg
    mode = "`--quick`" if cfg.quick else "full"
    lines = [
        BEGIN,
        "## Energy-stepping (issue #28)",
        "",
        f"Generated by `{command}` ({mode} mode) with RRP Studio {__version__} on "
        f"{_dt.date.today().isoformat()}" + (f" in {seconds:.0f} s" if seconds else "")
        + ". The scheme: docs/physics.md §3.10 (Gonzalez, Schmidt & Ortiz 2010); every run "
        "goes through `EnergyStepper`, the start mid-terrace; REL = ε/|E₀|.",
        "",
        _table(["claim", "theory", "measured", "holds?"], claims(d)),
        "",
        f"Orders count within ±{ORDER_TOL} of theory; round-off means below {ROUND_OFF:g}.",
        "",
    ]
    lg = d.long
    if lg is not None:
        lines += [
            f"### Energy error over t = {lg.es.t[-1]:g}\n\n"
            f"![energy error]({names.get('fig_es_energy_long', '')})\n",
            "Each fixed-step scheme runs at the step whose max energy error on "
            f"t ≤ {lg.match_t:g} equals energy-stepping's over the whole run (probes at the "
            "scenario's step and half of it, then two corrections along the measured "
            "order); all records every "
            f"{lg.es.t[1]:g}.\n",
            _long_table(lg),
            "",
        ]
    c = d.convergence
    if c is not None:
        pw = c.pairwise_orders()
        lines += [
            "### Convergence as ε → 0\n\n"
            f"![convergence]({names.get('fig_es_convergence', '')})\n",
            f"Max over t ∈ [0, {c.t_end:g}] (records every {cfg.conv_dt:g}) of the attitude "
            "angle `|log(R R_refᵀ)|` and of `|Ω − Ω_ref|`, against "
            f"`{c.ref_integrator}` at h = {c.ref_h:g} (its difference from the same scheme "
            f"at 2h: {c.ref_error:.1e}).\n",
            _table(["REL", "ε", "events", "attitude (rad)", "Ω (rad/s)", "pairwise order"],
                   [[f"{r:g}", f"{e:.3g}", str(int(n)), f"{a:.3e}", f"{o:.3e}",
                     f"{pw[k - 1]:.3f}" if k else "—"]
                    for k, (r, e, n, a, o) in enumerate(zip(c.rels, c.eps, c.events,
                                                            c.attitude, c.omega,
                                                            strict=True))]),
            "",
        ]
    cost = d.cost
    if cost is not None:
        traj = {} if c is None else dict(zip(c.rels.tolist(), c.error.tolist(), strict=True))
        lines += [
            "### Accuracy and cost against REL\n\n"
            f"![REL curve]({names.get('fig_es_rel_curve', '')})\n",
            f"{cost.scenario}, t ≤ {cost.t_end:g}; the max energy error from records every "
            f"{cfg.cost_dt:g}; wall time of a run without records, best of {cost.repeat}, "
            "one core (machine-dependent: BENCHMARKS.md has the quiet measurement).\n",
            _table(["REL", "ε", "max \\|E − E₀\\|/\\|E₀\\|", "events per unit time",
                    "µs per event", "ms per simulated second",
                    f"trajectory error, t ≤ {c.t_end:g}" if c else "trajectory error"],
                   [[f"{r['rel']:g}", f"{r['eps']:.3g}", f"{r['max_error']:.3e}",
                     f"{r['events_per_time']:.4g}", f"{r['us_per_event']:.3f}",
                     f"{r['seconds_per_time'] * 1e3:.4g}",
                     f"{traj[r['rel']]:.3e}" if r["rel"] in traj else "—"]
                    for r in cost.es_rows]),
            "",
            f"### Cost at equal max energy error against `{cost.baseline}`\n\n"
            f"![cost]({names.get('fig_es_cost', '')})\n",
            *_baseline_tables(cost),
        ]
    many = d.cost_many
    if many is not None:
        lines += [
            f"### Cost at equal max energy error on the {many.scenario}\n\n"
            f"![cost]({names.get(f'fig_es_cost_{many.scenario}', '')})\n",
            f"{many.scenario}, t ≤ {many.t_end:g} (through the impact), best of "
            f"{many.repeat}, one core.\n",
            _table(["REL", "ε", "max \\|E − E₀\\|/\\|E₀\\|", "events per unit time",
                    "µs per event", "ms per simulated second"],
                   [[f"{r['rel']:g}", f"{r['eps']:.3g}", f"{r['max_error']:.3e}",
                     f"{r['events_per_time']:.4g}", f"{r['us_per_event']:.3f}",
                     f"{r['seconds_per_time'] * 1e3:.4g}"] for r in many.es_rows]),
            "",
            *_baseline_tables(many),
        ]
    s = d.steps
    if s is not None:
        dt = s.flight_times
        lines += [
            "### Self-chosen steps\n\n"
            f"![steps]({names.get('fig_es_steps', '')})\n",
            _table(["scenario", "REL", "t", "events", "terms", "median step", "min", "max",
                    f"steps < `{s.integrator_default}`'s h", "stability limit 2/ω_max"],
                   [[s.scenario, f"{s.rel:g}", f"{s.t_end:g}", str(s.n_events),
                     str(s.n_terms), f"{np.median(dt):.3e}" if len(dt) else "—",
                     f"{dt.min():.3e}" if len(dt) else "—",
                     f"{dt.max():.3e}" if len(dt) else "—",
                     f"{np.mean(dt < s.h_default):.1%}" if len(dt) else "—",
                     f"{s.h_stable:.3g}"]]),
            "",
        ]
    if d.seconds:
        lines += [_table(["study", "seconds"], [[k, f"{v:.1f}"] for k, v in d.seconds.items()]),
                  ""]
    lines.append(END)
    return "\n".join(lines)


def update(report: Path, block: str) -> Path:
    """Put ``block`` (a :func:`section`) into ``report``: in place of its previous
    energy-stepping section, or at the end; a new file if there is none."""
    report = Path(report)
    text = report.read_text(encoding="utf-8") if report.exists() else ""
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        text = head + block + tail
    else:
        text = (text.rstrip("\n") + "\n\n" if text else "") + block + "\n"
    report.write_text(text, encoding="utf-8")
    return report
