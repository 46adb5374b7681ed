"""The energy-stepping studies and figures of ``rrp figures`` (issue #28):
``engine.studies.energy_stepping`` (data), ``.figures_energy_stepping`` (PNGs),
``.report_energy_stepping`` (the report's section).  Small cases: short runs, coarse ε.
No timing assertions (the cost is measured in benchmarks/bench_energy_stepping.py)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from engine.scenarios import load_scenario
from engine.studies import energy_stepping as es
from engine.studies import figures_energy_stepping as esfig
from engine.studies import report_energy_stepping as esrep

ROOT = Path(__file__).resolve().parent.parent
PNG = b"\x89PNG\r\n\x1a\n"


def pendulum():
    return load_scenario("pendulum").build_model()


def tiny(**changes) -> es.EnergySteppingConfig:
    """Every study, seconds in all."""
    base = {"long_t": 20.0, "long_dt": 0.1, "match_t": 10.0, "conv_rels": (1e-2, 1e-3, 1e-4),
            "conv_t": 2.0, "conv_dt": 0.1, "steps_scenario": "pendulum", "steps_t": 2.0,
            "steps_keep": 5000, "cost_rels": (1e-2, 1e-3), "cost_hs": (0.04, 0.02, 0.01),
            "cost_t": 5.0, "cost_dt": 0.05, "many_rels": (1e-2,), "many_hs": (0.002, 0.001),
            "many_t": 0.3}
    base.update(changes)
    return es.config(True, **base)


def test_stepper_run_records_finite_arrays_within_the_terrace_bound():
    """``|E − E₀| ≤ ε/2`` (start mid-terrace) and ``T + V_ε`` at round-off at every
    record; shapes follow the record grid."""
    rel = 1e-2
    r = es.stepper_run(pendulum(), rel, 3.0, 0.1)
    n = 31
    assert r.t.shape == r.energy_error.shape == r.energy_eps_error.shape == (n,)
    assert r.q.shape == (n, 1, 4) and r.omega.shape == (n, 1, 3) and r.x.shape == (n, 1, 3)
    assert np.all(np.isfinite(r.energy_error)) and np.all(np.isfinite(r.q))
    assert np.all(np.diff(r.events) >= 0) and r.n_events > 50
    assert r.eps == pytest.approx(rel * r.e_scale)
    assert 0.2 * rel < r.max_energy_error <= 0.5 * rel * (1 + 1e-9)
    assert np.max(np.abs(r.energy_eps_error)) < 1e-12


def test_matching_step_finds_the_step_of_a_given_max_energy_error():
    model = pendulum()
    target = 2e-4
    h, e = es.matching_step(model, "rrp-exact", target, 20.0, 0.05, 0.02)
    assert 0 < h < 0.05
    assert 0.7 * target < e < 1.4 * target
    again = es.scheme_run(model, "rrp-exact", h, 20.0, h).max_energy_error
    assert again == pytest.approx(e, rel=0.3)


def test_convergence_order_on_a_small_run_is_about_one_half(tmp_path):
    """Three ε over two decades, t ≤ 2: the fitted order is within a sane band around ½
    (docs/physics.md §3.10: the flights near turning points last O(√ε))."""
    c = es.convergence(tiny(), cache=str(tmp_path))
    assert c.attitude.shape == c.omega.shape == c.events.shape == (3,)
    assert np.all(np.isfinite(c.error)) and np.all(np.diff(c.error) < 0)
    assert 0.3 < c.order < 0.75, c.order
    assert c.ref_error < 1e-6 < c.error.min()
    assert es.fitted_order(c.eps, c.events) == pytest.approx(-1.0, abs=0.15)


def test_self_chosen_steps_add_up_to_the_run():
    s = es.self_chosen_steps("pendulum", 1e-3, 2.0, 100_000, windows=20)
    assert s.complete and len(s.flight_times) == s.n_events
    assert np.all(s.flight_times > 0) and s.event_times[-1] <= 2.0
    assert s.rate.shape == s.t_windows.shape == (20,)
    assert np.sum(s.rate) * (2.0 / 20) == pytest.approx(s.n_events)
    assert s.h_default == 0.01 and s.h_stable > 0


def test_the_torus_steps_are_the_many_body_events():
    """The torus through the same API (the many-body core): the self-chosen steps of its
    first 0.3 s (the ring reaches the wall at t ≈ 0.06) are events of many terms, all
    steps ≥ 0, and they sum to less than the time run."""
    s = es.self_chosen_steps("torus", 1e-2, 0.3, 10_000, windows=5)
    assert s.scenario == "torus" and s.n_terms > 1 and s.n_events > 10
    assert np.all(s.flight_times >= 0)
    assert s.flight_times.sum() <= 0.3


def test_equal_error_cost_interpolates_in_log_log():
    """Baseline cost ∝ error^(−½): the interpolated cost is exact inside the range, and
    flagged (still on the end segment's line) outside."""
    base = [{"max_error": e, "seconds_per_time": e ** -0.5} for e in (1e-6, 1e-5, 1e-4)]
    es_rows = [{"rel": 1e-3, "max_error": 3e-5, "seconds_per_time": 1.0},
               {"rel": 1e-2, "max_error": 1e-3, "seconds_per_time": 1.0}]
    inside, outside = es.equal_error_costs(es_rows, base)
    assert inside["base_seconds_per_time"] == pytest.approx(3e-5 ** -0.5, rel=1e-12)
    assert not inside["extrapolated"] and outside["extrapolated"]
    assert outside["base_seconds_per_time"] == pytest.approx(1e-3 ** -0.5, rel=1e-12)
    assert inside["ratio"] == pytest.approx(3e-5 ** 0.5, rel=1e-12)


def test_cost_study_rows_are_finite_and_consistent():
    c = es.cost_study("pendulum", (1e-2, 1e-3), "rrp-newmark", (0.04, 0.02), 5.0, 0.05)
    assert [r["rel"] for r in c.es_rows] == [1e-2, 1e-3]
    for r in c.es_rows:
        assert all(math.isfinite(v) and v >= 0 for v in r.values())
        assert r["max_error"] <= 0.5 * r["rel"] * (1 + 1e-9)
    # 10× smaller ε: ≈ 10× the events (∝ 1/ε)
    ratio = c.es_rows[1]["events_per_time"] / c.es_rows[0]["events_per_time"]
    assert 7 < ratio < 14
    e = [r["max_error"] for r in c.base_rows]
    assert e[1] == pytest.approx(e[0] / 4, rel=0.1)  # rrp-newmark: O(h²)
    assert c.default_row()["h"] == 0.02  # nearest the pendulum's own h = 0.01
    assert len(c.equal_error()) == 2


def _drawn(path: Path) -> None:
    import matplotlib.image

    assert path.read_bytes()[:8] == PNG and 20_000 < path.stat().st_size < 300_000
    img = matplotlib.image.imread(path)[..., :3]
    assert float(np.mean(img < 0.9)) > 0.01, path  # ink, not only background


@pytest.mark.slow  # long runs for the figures (docs/testing.md)
def test_figures_and_report_section(tmp_path):
    """All studies on a tiny configuration → six PNGs (the cost on the pendulum and on
    the torus) and a report section naming each; the section replaces its previous copy
    in an existing report."""
    d = es.compute(tiny(), cache=str(tmp_path / "cache"))
    paths = esfig.draw_all(d, tmp_path)
    assert sorted(p.name for p in paths) == sorted(
        ["fig_es_energy_long.png", "fig_es_convergence.png", "fig_es_rel_curve.png",
         "fig_es_cost.png", "fig_es_cost_torus.png", "fig_es_steps.png"])
    assert d.cost_many.scenario == "torus" and d.cost_many.es_rows[0]["events_per_time"] > 0
    for p in paths:
        _drawn(p)
    block = esrep.section(d, paths, 1.0)
    for p in paths:
        assert f"]({p.name})" in block
    rows = [ln for ln in block.splitlines() if ln.startswith("| `T + V_ε` conserved")]
    assert len(rows) == 1 and rows[0].rstrip().endswith("**yes** |")
    report = tmp_path / "report.md"
    report.write_text("# paper\n\nbefore\n", encoding="utf-8")
    esrep.update(report, block)
    esrep.update(report, block.replace("Energy-stepping (issue #28)", "ES again"))
    text = report.read_text(encoding="utf-8")
    assert text.startswith("# paper\n\nbefore\n")
    assert text.count(esrep.BEGIN) == 1 and "ES again" in text


@pytest.mark.slow
def test_cli_figures_only_energy_stepping(tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env["RRP_CACHE_DIR"] = str(tmp_path / "cache")
    (tmp_path / "figs").mkdir()
    (tmp_path / "figs" / "report.md").write_text("# kept\n", encoding="utf-8")
    res = subprocess.run([sys.executable, "-m", "app", "figures", "--only", "energy-stepping",
                          "--quick", "--out", "figs", "-q"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    figs = tmp_path / "figs"
    assert len(list(figs.glob("fig_es_*.png"))) == 6  # (the cost twice: pendulum, torus)
    assert not list(figs.glob("fig[0-9]*.png"))  # the paper's figures were not redone
    text = (figs / "report.md").read_text(encoding="utf-8")
    assert text.startswith("# kept\n") and esrep.BEGIN in text
