"""The scale of the relative energy error (issue #42 item 1): a model at rest has ``E₀``
of round-off alone (LAMMPS's metamaterial: 7·10⁻³²), and dividing by it made round-off a
"blow-up" at any ``h``.  Its scale is now the model's stiffness energy at a diameter's
strain (``engine.diagnostics.energy_scale``, docs/physics.md §5), which the blow-up
check and every plot of the error divide by; a real blow-up is still caught at once."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from app.export.plots import run_series
from engine.diagnostics import energy_scale
from engine.io import RunFile, RunWriter
from engine.scenarios import load_scenario
from engine.simulation import Simulation

AT_REST_LATTICE = """model = "assembly"
[run]
integrator = "rrp-newmark"
h = 1e-3
[parameters]
gravity = [0.0, 0.0, 0.0]
k_bend = 100.0
k_axial = 200.0
k_shear = {k_shear}
k_contact = 2100.0
[[build]]
kind = "lattice"
style = "fcc"
a = 0.3
region = {{shape = "box", lo = [10.0, 3.0, 7.0], hi = [12.0, 5.0, 9.0]}}
bond_within = 0.22
origin = [10.1, 3.3, 7.7]
"""
"""An fcc block of bonded spheres, every one at rest, no gravity: ``E₀`` ≈ 1e-31 (the
contacts' round-off; with shear springs 1e-27 more), far below its stiffness energy."""


def _at_rest(tmp_path, h: float, k_shear: float = 0.0, **kw) -> Simulation:
    p = tmp_path / f"rest-{k_shear:g}.toml"
    p.write_text(AT_REST_LATTICE.format(k_shear=k_shear))
    return Simulation(load_scenario(p).build_model(), "rrp-newmark", h, **kw)


def test_a_model_at_rest_runs_to_its_end_and_a_real_blow_up_is_still_caught(tmp_path):
    """At h = 1e-3 (within the limit 2.7e-3) the block at rest runs to t = 10 with a
    relative error of round-off (main: "blew up … the relative energy error reached 1"
    at t = 7.91, ΔE ≈ 1.5e-31 over E₀ = 1.5e-31).  With its shear springs (round-off
    torques) at 10× the limit it is still caught within a few dozen steps, as an energy
    blow-up naming the limit."""
    sim = _at_rest(tmp_path, 1e-3, record_every=100)
    e0 = sim.energy
    assert 0.0 < float(np.abs(e0).sum()) < 1e-29  # (round-off: the case of the issue)
    x, v, q, o = (a.copy() for a in (sim.state.x, sim.state.v, sim.state.q,
                                     sim.state.omega))
    rep = sim.advance(10_000)
    assert rep.ok, rep.failure.message
    assert math.isclose(sim.t, 10.0)
    assert abs(sim.relative_energy_error) < 1e-20
    from engine.stability import stiffness_energy

    assert sim.e_scale == stiffness_energy(x, v, q, o, sim.ff.arrays) > 1e3
    fast = _at_rest(tmp_path, 1e-3, k_shear=200.0)
    h = 10.0 * fast.stability().h_stable
    fast.set_h(h)
    rep = fast.advance(500)
    assert not rep.ok and rep.failure.kind == "energy" and rep.steps < 60, rep
    assert "exceeds the stability limit" in rep.failure.message


def test_the_scale_the_guard_and_the_plots_divide_by(tmp_path):
    """``energy_scale``: ``|E₀|`` for a start with energy, ``Σ|components|`` where they
    cancel, the stiffness energy for a start at rest (round-off only), whatever the
    stiffness when the start has energy of its own.  The run file's relative error and
    the exported plot's curve are ``ΔE`` over that same scale, labelled ``E_s`` (main:
    ``E₀`` of round-off, labelled ``|E₀|``)."""
    from app.plot_style import error_labels
    from engine.diagnostics import AT_REST, error_scale_symbol

    e = np.zeros(11)
    e[0] = 40.0
    assert energy_scale(e) == 40.0 and energy_scale(e, 1e6) == 40.0
    c = np.zeros(11)
    c[2], c[0] = -5.0, 5.0 + 1e-12
    assert energy_scale(c) == 10.0 + 1e-12
    r = np.zeros(11)
    r[6] = 1.5e-31
    assert energy_scale(r, 4e5) == 4e5 and energy_scale(r) == 1.5e-31
    assert energy_scale(r, 1.5e-31 / AT_REST / 2) == 1.5e-31  # (not below the threshold)
    assert energy_scale(np.zeros(11)) == 1.0
    assert error_scale_symbol(40.0, 40.0) == "|E₀|"
    assert error_scale_symbol(-40.0, 40.0) == "|E₀|"
    assert error_scale_symbol(1.5e-31, 4e5) == "E_s"
    assert error_labels(False, "E_s") == ("Relative energy error (E − E₀)/E_s", "ΔE")

    sim = _at_rest(tmp_path, 1e-3, record_every=10)
    path = tmp_path / "rest.h5"
    with RunWriter(path, sim, scenario="rest", frames=False, checkpoint=False) as w:
        assert sim.advance(200).ok
        w.flush()
    with RunFile(path) as rf:
        assert rf.e_scale == sim.e_scale
        series = run_series(rf)
    assert series.scale == "E_s"
    want = (series.total - sim.e_ref) / sim.e_scale
    assert np.array_equal(series.rel, want)
    assert np.abs(series.rel).max() < 1e-20


def test_rrp_run_of_a_model_at_rest_says_its_scale(tmp_path):
    """``rrp run``'s summary names the scale where it is not ``|E₀|`` (the JSON carries
    it), and the run completes (main: the same block "blew up" by t = 7.91)."""
    (tmp_path / "rest.toml").write_text(AT_REST_LATTICE.format(k_shear=0.0))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    res = subprocess.run([sys.executable, "-m", "app", "run", "rest.toml", "--t-end", "0.1"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    line = next(ln for ln in res.stdout.splitlines() if ln.lstrip().startswith("energy"))
    assert " of E_s = " in line and "docs/physics.md §5" in line, line
