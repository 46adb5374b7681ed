"""The torus with hard contacts (issue 8 §4; docs/physics.md §3.9, §4.2, §7): stability,
energy, momenta, penetration, friction and cost of the Moreau-type schemes against the
penalty (Hertz) model.

Torus of B&G §4 (80 spheres, wall at x = 0, v₀ = 1) with ``contact = "hard"``, ``e_N = 1``:

* largest stable ``h``: bisection on ``h`` over ``t = 5`` (through the impact at t ≈ 1.2
  and the rebound): the largest ``h`` whose run ends without a blow-up (non-finite state
  or a failed solve) and with ``max |E + D − E₀|/E₀ < 10 %``; the same for the penalty
  model (``rrp-newmark``), and ``Simulation.stability().h_stable`` of each model at t = 0;
* energy error ``(E + D − E₀)/E₀`` over ``t = 500`` (max and final) at that ``h`` and at
  ``h = 1e-3`` (``moreau-symmetric``; ``moreau`` at 1e-3), and the relative drifts of
  the conserved ``P_y, P_z, L_x``;
* max penetration ``−g_N`` per scheme and ``h ∈ {2e-3, 1e-3, 5e-4, 2.5e-4}`` over
  ``t ≤ 4`` and its fitted order in ``h``;
* ``μ = 0.5``: max sphere spin ``|Ω|`` after the impact (``μ = 0``: the binder's spin
  only), and max ``|E + D − E₀|/E₀`` over ``t = 25`` and ``t = 500`` against ``μ = 0``;
* cost: µs/step of the kernel (after a warm-up run; best of ``--repeat`` runs of
  ``t = 25`` at ``h = 1e-3``, one row every 10 steps, no frames) for ``moreau-symmetric``,
  ``moreau`` and the penalty ``rrp-newmark``, their ratio (goal ≤ 2), and the cost per
  simulated second at each model's largest stable ``h``.

    python benchmarks/bench_hard_contact.py [--quick] [--repeat 3] [--out FILE] [--json]

``--quick``: t = 50 instead of 500, a coarser bisection, one timing run.  Writes the
text to ``benchmarks/results/hard_contact.txt`` by default (not in ``--quick`` mode).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.diagnostics import momentum_drift  # noqa: E402
from engine.scenarios import load_scenario  # noqa: E402
from engine.simulation import Simulation  # noqa: E402
from engine.studies.spring_pendulum import fitted_order  # noqa: E402

HARD = {"contact": "hard", "e_n": 1.0, "mu": 0.0, "e_t": 0.0}
PENALTY = {"contact": "penalty"}
PEN_STEPS = (2e-3, 1e-3, 5e-4, 2.5e-4)
STAB_T = 5.0
STAB_TOL = 0.10


def make(params: dict, scheme: str, h: float, *, every: int = 10,
         frames: bool = False) -> Simulation:
    model = load_scenario("torus", dict(params)).build_model()
    return Simulation(model, scheme, h, record_every=every, record_frames=frames,
                      energy_tolerance=None)


def run(params: dict, scheme: str, h: float, t_end: float, *, every: int | None = None,
        frames: bool = False) -> dict:
    """One run: energy error of ``E + D`` (the engine's total includes ``dissipated``),
    momentum drifts (relative), contact statistics, max spin, status."""
    every = every or max(1, int(round(0.01 / h)))
    sim = make(params, scheme, h, every=every, frames=frames)
    rep = sim.run_until(t_end, chunk=20_000)
    a = sim.series.arrays()
    err = (a["energy"].sum(axis=1) - sim.e_ref) / sim.e_scale
    fin = np.isfinite(err)
    drift = momentum_drift(a["P"], a["L"])
    rel = {k: drift[k] / (sim.p_scale if k.startswith("P") else sim.l_scale)
           for k in ("P_y", "P_z", "L_x")}
    out = {"scheme": scheme, "h": h, "t_end": t_end, "ok": rep.ok and bool(fin.all()),
           "t_reached": sim.t, "max_err": float(np.max(np.abs(err[fin]))) if fin.any()
           else math.inf, "final_err": float(err[fin][-1]) if fin.any() else math.nan,
           "drift_rel": rel, "contact": sim.contact_stats,
           "message": "" if rep.ok else rep.failure.message,
           "us_per_step": 1e6 * sim.kernel_seconds / max(1, sim.kernel_steps)}
    if frames:
        norms = np.linalg.norm(a["omega"], axis=2)
        out["spin_t"], out["spin"] = a["t"], norms.max(axis=1)  # max over spheres, per row
        out["spin_mean"] = norms.mean(axis=1)  # mean over spheres, per row
        spin = out["spin"]
        out["max_spin"] = float(np.max(spin))
    return out


def stable(params: dict, scheme: str, h: float, t_end: float = STAB_T) -> bool:
    r = run(params, scheme, h, t_end, every=max(1, int(round(0.005 / h))))
    return r["ok"] and r["max_err"] < STAB_TOL


def largest_stable_h(params: dict, scheme: str, lo: float, hi: float, rel: float,
                     t_end: float = STAB_T) -> float:
    """Bisection (geometric) between a stable ``lo`` and an unstable ``hi``."""
    assert stable(params, scheme, lo, t_end), (scheme, lo)
    while stable(params, scheme, hi, t_end):
        lo, hi = hi, 2 * hi
    while hi / lo > 1 + rel:
        mid = math.sqrt(lo * hi)
        if stable(params, scheme, mid, t_end):
            lo = mid
        else:
            hi = mid
    return lo


def cost(params: dict, scheme: str, h: float, t_end: float, repeat: int) -> float:
    """µs per step of the kernel, best of ``repeat`` runs after one warm-up run."""
    run(params, scheme, h, min(t_end, 1.0))
    return min(run(params, scheme, h, t_end)["us_per_step"] for _ in range(repeat))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="t = 50 long runs, one timing run")
    ap.add_argument("--repeat", type=int, default=3, help="timing runs (best counts)")
    ap.add_argument("--out", default=None, help="text output (default "
                    "benchmarks/results/hard_contact.txt; none with --quick)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    long_t = 50.0 if a.quick else 500.0
    repeat = 1 if a.quick else a.repeat
    rel = 0.05 if a.quick else 0.01
    t00 = time.perf_counter()
    res: dict = {"long_t": long_t, "repeat": repeat}
    lines: list[str] = []
    say = lines.append

    # -- stability
    m_hard = load_scenario("torus", HARD).build_model()
    m_pen = load_scenario("torus", PENALTY).build_model()
    est = {"hard": Simulation(m_hard, "moreau-symmetric", 1e-3).stability(),
           "penalty": Simulation(m_pen, "rrp-newmark", 1e-3).stability()}
    hmax = {"moreau-symmetric": largest_stable_h(HARD, "moreau-symmetric", 1e-3, 4e-3, rel),
            "moreau": largest_stable_h(HARD, "moreau", 1e-3, 4e-3, rel),
            "rrp-newmark": largest_stable_h(PENALTY, "rrp-newmark", 1e-3, 2e-3, rel)}
    hmax_long = {"moreau-symmetric": largest_stable_h(HARD, "moreau-symmetric", 1e-3,
                                                      hmax["moreau-symmetric"], rel, long_t),
                 "moreau": largest_stable_h(HARD, "moreau", 1e-3, hmax["moreau"], rel, long_t),
                 "rrp-newmark": largest_stable_h(PENALTY, "rrp-newmark", 1e-3,
                                                 hmax["rrp-newmark"], rel, long_t)}
    res["h_max"] = hmax
    res["h_max_long"] = hmax_long
    res["h_stable_estimate"] = {k: {"h_stable": v.h_stable, "kind": v.kind}
                                for k, v in est.items()}
    say(f"Largest stable h (bisection to {rel:.0%}, t = {STAB_T:g}, no blow-up and "
        f"max |E+D-E0|/E0 < {STAB_TOL:.0%}) vs Simulation.stability() at t = 0:")
    say(f"  {'model':<8} {'scheme':<17} {'h_max t=' + format(STAB_T, 'g'):>11} "
        f"{'h_max t=' + format(long_t, 'g'):>11} {'h_stable (estimate)':>20}  limiting")
    for scheme, h in hmax.items():
        key = "penalty" if scheme == "rrp-newmark" else "hard"
        say(f"  {key:<8} {scheme:<17} {h:>11.4g} {hmax_long[scheme]:>11.4g} "
            f"{est[key].h_stable:>20.4g}  {est[key].kind}")
    say(f"  (h_max t={long_t:g}: the same criterion over the long run)")

    # -- long runs
    say("")
    say(f"Energy error (E+D-E0)/E0 and relative momentum drifts over t = {long_t:g}, "
        "mu = 0, e_N = 1:")
    say(f"  {'scheme':<17} {'h':>8} {'max |err|':>10} {'final':>10} {'P_y':>9} {'P_z':>9} "
        f"{'L_x':>9} {'impacts':>8} {'sweeps mean/max':>16} status")
    longs = []
    # the bisected values themselves (each passed its criterion; rounding up may not)
    h_ms, h_ml = hmax["moreau-symmetric"], hmax_long["moreau-symmetric"]
    h_pl = hmax_long["rrp-newmark"]
    for scheme, h in (("moreau-symmetric", h_ms), ("moreau-symmetric", h_ml),
                      ("moreau-symmetric", 1e-3), ("moreau", 1e-3), ("rrp-newmark", h_pl),
                      ("rrp-newmark", 1e-3)):
        r = run(HARD if scheme != "rrp-newmark" else PENALTY, scheme, h, long_t,
                every=max(1, int(round(0.1 / h))))
        longs.append(r)
        d, c = r["drift_rel"], r["contact"]
        say(f"  {scheme:<17} {h:>8.4g} {r['max_err']:>10.3e} {r['final_err']:>+10.3e} "
            f"{d['P_y']:>9.1e} {d['P_z']:>9.1e} {d['L_x']:>9.1e} {int(c['impacts']):>8d} "
            f"{c['mean']:>8.2f}/{int(c['max_iterations']):<7d} "
            + (("bounded" if r["max_err"] < STAB_TOL else "finite, unbounded") if r["ok"]
               else f"stopped t = {r['t_reached']:.4g}"))
    say("  (rrp-newmark: the penalty model, for comparison; its E has no D; status 'bounded':"
        f" max |err| < {STAB_TOL:.0%})")
    res["long"] = [{k: v for k, v in r.items() if k != "message"} for r in longs]

    # -- penetration
    say("")
    say("Max penetration -g_N over t <= 4 (the impact), mu = 0, e_N = 1:")
    say(f"  {'scheme':<17} " + " ".join(f"{h:>10g}" for h in PEN_STEPS) + "   order")
    res["penetration"] = {}
    for scheme in ("moreau-symmetric", "moreau"):
        pens = [run(HARD, scheme, h, 4.0)["contact"]["penetration"] for h in PEN_STEPS]
        order = fitted_order(PEN_STEPS, pens)
        res["penetration"][scheme] = {"h": list(PEN_STEPS), "pen": pens, "order": order}
        say(f"  {scheme:<17} " + " ".join(f"{p:>10.3e}" for p in pens) + f"   {order:.2f}")

    # -- friction
    say("")
    say("Friction, e_N = 1, moreau-symmetric, h = 1e-3: sphere spin |Omega| for t in [1, 25] "
        "(max; mean over spheres and rows) and max |E+D-E0|/E0:")
    say(f"  {'mu':>4} {'max|Omega|':>11} {'mean|Omega|':>11} {'D(t=25)/E0':>11} "
        f"{'max|err| t<=25':>15} {'max|err| t<=' + format(long_t, 'g'):>16}")
    res["friction"] = {}
    for mu in (0.0, 0.5):
        p = {**HARD, "mu": mu}
        short = run(p, "moreau-symmetric", 1e-3, 25.0, every=10, frames=True)
        late = short["spin_t"] >= 1.0
        after = short["spin"][late]
        mean_after = float(short["spin_mean"][late].mean())
        sim_d = make(p, "moreau-symmetric", 1e-3)
        sim_d.run_until(25.0, chunk=20_000)
        from engine.layout import ENERGY_NAMES

        dis = float(sim_d.energy[ENERGY_NAMES.index("dissipated")]) / sim_d.e_scale
        lng = run(p, "moreau-symmetric", 1e-3, long_t, every=100)
        res["friction"][mu] = {"max_spin": float(after.max()), "mean_spin": mean_after,
                               "dissipated": dis,
                               "max_err_25": short["max_err"], "max_err_long": lng["max_err"],
                               "ok": short["ok"] and lng["ok"]}
        say(f"  {mu:>4g} {after.max():>11.4g} {mean_after:>11.4g} {dis:>11.3e} "
            f"{short['max_err']:>15.3e} "
            f"{lng['max_err']:>16.3e}" + ("" if lng["ok"] else " (stopped)"))

    # -- cost
    say("")
    say(f"Cost: kernel µs/step, t = 25, best of {repeat} after a warm-up; cost per simulated "
        "second at each model's largest stable h:")
    say(f"  {'scheme':<17} {'us/step h=1e-3':>15} {'ratio':>6} {'h_max':>8} "
        f"{'us/step h_max':>14} {'ms per sim. s':>14} {'h_max long':>11} {'us/step':>8} "
        f"{'ms per sim. s':>14}")
    res["cost"] = {}
    base = None
    for scheme in ("rrp-newmark", "moreau-symmetric", "moreau"):
        p = PENALTY if scheme == "rrp-newmark" else HARD
        us = cost(p, scheme, 1e-3, 25.0, repeat)
        hm = hmax[scheme]
        us_h = cost(p, scheme, hm, 25.0, repeat)
        hl = hmax_long[scheme]
        us_l = cost(p, scheme, hl, 25.0, repeat)
        base = base or us
        per_s, per_l = us_h / hm / 1e3, us_l / hl / 1e3
        res["cost"][scheme] = {"us_per_step": us, "ratio": us / base, "h_max": hm,
                               "us_per_step_hmax": us_h, "ms_per_sim_second": per_s,
                               "h_max_long": hl, "us_per_step_hmax_long": us_l,
                               "ms_per_sim_second_long": per_l}
        say(f"  {scheme:<17} {us:>15.2f} {us / base:>6.2f} {hm:>8.4g} {us_h:>14.2f} "
            f"{per_s:>14.2f} {hl:>11.4g} {us_l:>8.2f} {per_l:>14.2f}")
    wall = time.perf_counter() - t00
    say("")
    say(f"wall time {wall:.0f} s")
    res["wall_s"] = wall
    if a.json:
        print(json.dumps(res, indent=1, default=str))
    else:
        text = ("Torus (B&G §4, 80 spheres, wall) with contact = \"hard\" (issue 8 §4)"
                + (" [--quick]" if a.quick else "") + "\n\n" + "\n".join(lines) + "\n")
        print(text)
        out = a.out or (None if a.quick else str(ROOT / "benchmarks" / "results" /
                                                   "hard_contact.txt"))
        if out:
            Path(out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
