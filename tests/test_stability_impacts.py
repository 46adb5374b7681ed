"""The stability estimate counts the impacts to come (issue #42 item 2): a chain falling
on a wall from several diameters is estimated at its impact from the start of the run
(before, the binder's limit was reported and the guide blew up at the first impact), and
``rrp import`` writes a ``[run] h`` below the estimate of the imported state."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from engine.scenarios import load_scenario
from engine.simulation import Simulation

CHAIN = """title = "chain falling on a wall"
model = "assembly"
[run]
integrator = "rrp-newmark"
h = 1e-3
t_end = {t_end}
every = 10
[parameters]
gravity = [0.0, 0.0, -9.81]
[[build]]
kind = "chain"
n = 10
diameter = 0.1
start = [0.0, 0.0, 0.5]
direction = [1.0, 0.0, 0.0]
velocity = [0.0, 0.0, {vz}]
mass = 1.0
[[walls]]
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
"""
# 4.5 diameters of gap, 2 m/s down, g = 9.81: the impact at t ≈ 0.161 with ≈ 3.6 m/s
H_BLOWS_UP = 3.5e-3
"""Below today's binder-only estimate (7.07e-3) and its guide (3.5e-3): measured to blow up
at the first impact (the wall contact's limit there: ≈ 2.9e-3 at 2.4 m/s, lower at 3.6)."""


def chain(tmp_path, t_end=0.5, vz=-2.0):
    p = tmp_path / "chain.toml"
    p.write_text(CHAIN.format(t_end=t_end, vz=vz))
    return load_scenario(p)


def run_to_end(sc, h):
    sim = Simulation(sc.build_model(), "rrp-newmark", h, record_every=10,
                     record_frames=False)
    rep = sim.run_until(sc.run.t_end, chunk=5000)
    e = sim.series.arrays()["energy"].sum(axis=1)
    return rep, sim, float(np.abs((e - sim.e_ref) / sim.e_scale).max())


def test_a_chain_falling_on_a_wall_is_estimated_at_its_impact_from_the_start(tmp_path):
    sc = chain(tmp_path)
    sim = Simulation(sc.build_model(), "rrp-newmark", sc.run.h)
    sim.t_end = sc.run.t_end
    est = sim.stability()
    assert est.kind == "wall contact", est
    rep, blown, _ = run_to_end(sc, H_BLOWS_UP)
    assert not rep.ok and 0.1 < blown.t < 0.25, (rep, blown.t)  # at the first impact
    assert "wall contact" in rep.failure.message
    assert est.h_stable < H_BLOWS_UP, est
    assert est.h_stable < rep.failure.stability.h_stable * 1.3  # (the impact's limit)
    # the guide (half the estimate, no calibration for assemblies) runs through the impact
    # and the rebound
    rep, _, err = run_to_end(sc, est.h_accurate)
    assert rep.ok and err < 0.05, (est.h_accurate, err)


def test_the_summary_of_rrp_run_gives_the_impacts_limit(tmp_path, capsys):
    from app.cli import main

    chain(tmp_path)
    code = main(["run", str(tmp_path / "chain.toml"), "--json", "--quiet", "--h", "1e-3"])
    s = json.loads(capsys.readouterr().out)
    assert code == 0 and s["status"] == "complete"
    assert s["stability_limit_h"] < H_BLOWS_UP and s["stability_from"] == "wall contact"
    assert s["accuracy_guide_h"] <= 0.5 * s["stability_limit_h"]


def test_a_wall_out_of_reach_within_the_run_is_not_counted(tmp_path):
    """Free flight: the gap 0.45 takes ≈ 0.161 s; a run to t = 0.05 ends before (the
    binder's limit, as before); the app, which runs until paused (``t_end = inf``), and
    a chain thrown up that falls back later count the impact."""
    sc = chain(tmp_path, t_end=0.05)
    sim = Simulation(sc.build_model(), "rrp-newmark", sc.run.h)
    sim.t_end = 0.05
    short = sim.stability()
    assert short.kind == "axial binder"
    assert short.h_stable == pytest.approx(2.0 / math.sqrt(4 * 200.0 / 0.01), rel=1e-6)
    sim.t_end = math.inf
    assert sim.stability().kind == "wall contact"
    up = Simulation(chain(tmp_path, vz=2.0).build_model(), "rrp-newmark", sc.run.h)
    assert up.stability().kind == "wall contact"  # (back at sqrt(2² + 2 g 0.45))


@pytest.mark.parametrize("gap, u, a, horizon, margin, want", [
    (0.45, 2.0, 9.81, math.inf, 0.1, math.sqrt(4.0 + 2 * 9.81 * 0.45)),
    (0.45, 2.0, 9.81, 0.162, 0.1, math.sqrt(4.0 + 2 * 9.81 * 0.45)),  # (reached at 0.1613)
    (0.45, 2.0, 9.81, 0.16, 0.1, 0.0),
    (0.45, 2.0, 0.0, 0.3, 0.1, 2.0),
    (0.45, 2.0, 0.0, 0.2, 0.1, 0.0),
    (0.45, -1.0, 9.81, math.inf, 0.1, math.sqrt(1.0 + 2 * 9.81 * 0.45)),  # thrown away
    (0.45, 2.0, -9.81, math.inf, 0.1, 0.0),  # turns back at 0.204
    (0.15, 2.0, -9.81, math.inf, 0.1, math.sqrt(4.0 - 2 * 9.81 * 0.15)),
    (0.05, 0.5, 0.0, 0.0, 0.1, 0.5),  # within the margin: as soon as it approaches
    (0.05, -0.5, 0.0, math.inf, 0.1, 0.0),
    (0.05, 0.0, 0.0, math.inf, 0.1, 0.0),
])
def test_the_impact_speed_is_free_flights(gap, u, a, horizon, margin, want):
    from engine.stability import _impact_speed

    assert _impact_speed.py_func(gap, u, a, horizon, margin) == pytest.approx(want, rel=1e-12)


WIRE = 10


def wire_data() -> str:
    """A wire of 10 spheres of diameter 0.1 and density 1 (mass 5.2e-4), touching and
    bonded, one of them moving: LAMMPS's metamaterial's wires, where the default step
    1e-3 is ten times the limit."""
    rows = [f"{i + 1} 1 1 0.1 1.0 {0.1 * i:.1f} 0 0" for i in range(WIRE)]
    bonds = [f"{i + 1} 1 {i + 1} {i + 2}" for i in range(WIRE - 1)]
    return "\n".join(["wire", "", f"{WIRE} atoms", "1 atom types", f"{WIRE - 1} bonds",
                      "1 bond types", "", "-1 2 xlo xhi", "-1 1 ylo yhi", "-1 1 zlo zhi", "",
                      "Atoms # sphere/bpm", "", *rows, "", "Velocities", "",
                      *[f"{i + 1} {0.1 if i == 0 else 0} 0 0 0 0 0" for i in range(WIRE)],
                      "", "Bonds", "", *bonds, ""])


def test_import_writes_a_step_below_the_estimate_and_says_so(tmp_path, capsys):
    from app.cli import main

    (tmp_path / "w.data").write_text(wire_data())
    out = tmp_path / "w.toml"
    assert main(["import", "lammps", str(tmp_path / "w.data"), "--out", str(out)]) == 0
    said = capsys.readouterr().out
    sc = load_scenario(out)
    sim = Simulation(sc.build_model(), sc.run.integrator, sc.run.h, record_frames=False)
    sim.t_end = sc.run.t_end
    est = sim.stability()
    assert est.h_stable < 1e-3  # (the default step would blow up)
    assert sc.run.h <= 0.5 * est.h_stable and sc.run.h > 0.4 * est.h_stable
    line = next(ln for ln in said.splitlines() if ln.startswith("[run] h = "))
    assert f"[run] h = {sc.run.h:g}" in line and "stability limit h ≈" in line, said
    rep = sim.advance(2000)
    assert rep.ok and abs(sim.relative_energy_error) < 0.05
