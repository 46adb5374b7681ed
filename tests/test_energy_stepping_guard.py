"""Energy-stepping's guards (issue #33 items 3 and 7): the floor of ``ε`` (refused in one
line by the registry, the stepper, the API, ``rrp run`` and ``rrp gui``), the run-time
check of the bound ``|E − E₀| ≤ ε`` per term (a failure, never ``complete``), and the
start from rest by ``ε/2`` (``T + V_ε = E₀`` exactly).  Derivation and measurements:
docs/physics.md §3.10, "The floor of ε" and "Levels"."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import engine
from engine.energy_stepping import EnergyStepper, EnergySteppingError, absolute_eps
from engine.energy_stepping.bound import bound_excess
from engine.integrators import get_integrator
from engine.integrators.registry import EPS_REL_MIN, eps_floor_message
from engine.models import MODELS
from engine.simulation import Simulation, SimulationError

ROOT = Path(__file__).resolve().parent.parent


def rrp(cwd, *args, timeout=600):
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "app", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, env=env)


# --------------------------------------------------------------------------------------
# item 3: the floor of ε
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["1e-20", "1e-30", "1e-13", "9.9e-13", "5e-324"])
def test_an_eps_below_the_round_off_floor_is_refused_in_one_line(text):
    """``energy-stepping:1e-20`` ran with 0 events (gravity never acted) and 1e-13 broke
    the bound by 6.4e3×, both reported ``complete``: below the floor the registry, the
    simulation and the API refuse with the same line, naming the range and an example."""
    with pytest.raises(KeyError) as err:
        get_integrator(f"energy-stepping:{text}")
    msg = err.value.args[0]
    assert msg == eps_floor_message(text)
    assert "\n" not in msg and "round-off" in msg and f"{EPS_REL_MIN:g}" in msg
    assert "energy-stepping:1e-6" in msg
    model = MODELS["pendulum"].make({})
    with pytest.raises(SimulationError) as err:
        Simulation(model, f"energy-stepping:{text}", 1e-2)
    assert str(err.value) == msg
    with pytest.raises(SimulationError) as err:  # the API: the engine's error, same line
        engine.run("pendulum", integrator=f"energy-stepping:{text}", t_end=0.1)
    assert str(err.value) == msg


def test_the_floor_itself_is_accepted():
    assert get_integrator(f"energy-stepping:{EPS_REL_MIN:g}").eps_rel == EPS_REL_MIN
    assert absolute_eps(EPS_REL_MIN, 2.0) == 2.0 * EPS_REL_MIN


def test_absolute_eps_refuses_below_the_floor_of_the_energies_involved():
    """``REL`` below the floor, and an ``ε`` above ``EPS_REL_MIN × scale`` but below
    ``EPS_REL_MIN ×`` the energies' magnitude (``T`` and ``V`` nearly cancelling in
    ``E``): the stepper's error, one line, naming a ``REL`` that is enough."""
    with pytest.raises(EnergySteppingError) as err:
        absolute_eps(1e-20, 1.0)
    assert str(err.value) == eps_floor_message("1e-20")
    with pytest.raises(EnergySteppingError) as err:
        absolute_eps(1e-12, 1.0, magnitude=1e3)
    msg = str(err.value)
    assert "\n" not in msg and "round-off floor" in msg and "REL ≥ 1e-09" in msg
    assert absolute_eps(1e-9, 1.0, magnitude=1e3) == 1e-9


def test_rrp_run_refuses_a_tiny_eps_with_exit_2(tmp_path):
    """The issue's reproduction: ``rrp run pendulum -i energy-stepping:1e-20 --t-end 1``
    exited 0, ``complete``; now one line and exit code 2 (bad input)."""
    res = rrp(tmp_path, "run", "pendulum", "-i", "energy-stepping:1e-20", "--t-end", "1")
    assert res.returncode == 2, res.stdout + res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and eps_floor_message("1e-20") in lines[0]
    assert "Traceback" not in res.stderr and "complete" not in res.stdout


def test_rrp_gui_refuses_a_tiny_eps_before_the_window(tmp_path):
    """The app: ``rrp gui -i energy-stepping:1e-20`` is refused in one line (exit 2),
    before any window or kernel; the window's own picker offers no such name, and its
    worker refuses a switch to it with the same ``SimulationError`` line
    (``sim.check_integrator``)."""
    res = rrp(tmp_path, "gui", "pendulum", "-i", "energy-stepping:1e-20")
    assert res.returncode == 2, res.stdout + res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and eps_floor_message("1e-20") in lines[0]
    sim = Simulation(MODELS["pendulum"].make({}), "rrp-newmark", 1e-2)
    with pytest.raises(SimulationError, match="round-off"):
        sim.check_integrator("energy-stepping:1e-20")


# --------------------------------------------------------------------------------------
# item 3: the bound checked as the run goes
# --------------------------------------------------------------------------------------


def test_bound_excess_counts_the_terms_and_the_round_off():
    assert bound_excess(1.0 + 2.9e-6, 1.0, 1e-6, 3, 1.0) is None
    assert bound_excess(1.0 + 3.1e-6, 1.0, 1e-6, 3, 1.0) == pytest.approx(3.1, rel=1e-6)
    assert bound_excess(float("nan"), 1.0, 1e-6, 3, 1.0) == float("inf")
    assert bound_excess(5.0, float("nan"), 1e-6, 3, 1.0) is None


def _break_the_bound(sim: Simulation) -> None:
    """Spin the stepper's pendulum up by 10 % behind its back: ``T`` then differs from
    the terraced energy by far more than ``ε``, as a run eaten by round-off would."""
    sim._stepper._impl.om *= 1.1


def test_a_run_that_breaks_its_bound_fails_with_one_line_and_keeps_the_state():
    sim = Simulation(MODELS["pendulum"].make({}), "energy-stepping:1e-4", 1e-2)
    assert sim.advance(10).ok
    _break_the_bound(sim)
    rep = sim.advance(10)
    assert not rep.ok
    f = rep.failure
    assert f.kind == "energy-stepping" and f.details["raise_eps"]
    assert "\n" not in f.message and "broke its bound" in f.message
    assert "use a larger ε, e.g. energy-stepping:0.01" in f.message
    assert f"t = {sim.t:.6g} is kept" in f.message
    assert f.details["bound"] > 1.0
    assert sim._stepper is None  # the next step places the terraces anew from here
    assert sim.advance(5).ok


def test_a_run_within_its_bound_passes_the_check_over_a_checkpoint_and_resume():
    """An honest run never trips the check, also after a restore and a resume (the
    ``E₀`` of the bound is saved with the stepper, ``bound_e0``)."""
    model = MODELS["pendulum"].make({})
    sim = Simulation(model, "energy-stepping:1e-4", 1e-2)
    assert sim.advance(50).ok
    e0 = sim._es_e0
    d = sim.resume_state()
    assert d["es_state_bound_e0"][0] == e0 == sim.e_ref
    cp = sim.checkpoint()
    assert sim.advance(50).ok
    sim.restore(cp)
    assert sim.advance(50).ok and sim._es_e0 == e0
    r = Simulation.from_resume_state(model, d)
    assert r.advance(50).ok and r._es_e0 == e0


def test_the_api_raises_on_a_broken_bound(monkeypatch):
    """``engine.run`` reports a broken bound as it reports a blow-up: the engine's
    ``SimulationError`` with the one line, the simulation at the kept state."""
    real = EnergyStepper.advance_to
    calls = {"n": 0}

    def spun_up(self, t, poll=None):
        done = real(self, t, poll)
        calls["n"] += 1
        if calls["n"] == 30 and hasattr(self._impl, "om"):
            self._impl.om *= 1.1
        return done

    real_chunk = EnergyStepper.advance_records

    def spun_up_chunk(self, times, first, stride, out, poll=None):
        # (the pendulum's intervals a chunk at a time, issue #33 item 2: the same after
        # the chunk that reaches the 30th)
        done = real_chunk(self, times, first, stride, out, poll)
        calls["n"] += done
        if calls["n"] - done < 30 <= calls["n"] and hasattr(self._impl, "om"):
            self._impl.om *= 1.1
        return done

    monkeypatch.setattr(EnergyStepper, "advance_to", spun_up)
    monkeypatch.setattr(EnergyStepper, "advance_records", spun_up_chunk)
    with pytest.raises(SimulationError) as err:
        engine.run("pendulum", integrator="energy-stepping:1e-4", h=1e-2, t_end=1.0,
                   chunk=10)
    assert "broke its bound" in str(err.value) and "\n" not in str(err.value)
    assert err.value.simulation.t < 1.0


def test_rrp_run_fails_when_the_bound_breaks_at_the_floor(tmp_path):
    """At the floor itself the pendulum's round-off outgrows ``ε`` within a few
    thousandths of a time unit (≈ 1e7 events; docs/physics.md §3.10): ``rrp run`` then
    fails in one line, exit 1, status ``failed``, instead of ``complete``, and the line's
    resume command raises ε (100×), where a stuck run's halves it."""
    res = rrp(tmp_path, "run", "pendulum", "-i", f"energy-stepping:{EPS_REL_MIN:g}",
              "--t-end", "0.02", "--h", "0.002", "--quiet", "--out", "run.h5")
    assert res.returncode == 1, res.stdout + res.stderr
    err = [ln for ln in res.stderr.splitlines() if ln.startswith("rrp: error")]
    assert len(err) == 1 and "broke its bound" in err[0]
    assert "resume with rrp run --resume" in err[0] and "-i energy-stepping:1e-10 " in err[0]
    assert "status: failed" in res.stdout


# --------------------------------------------------------------------------------------
# item 7: a start from rest by ε/2
# --------------------------------------------------------------------------------------


def _kinetic(model, v, om) -> float:
    m, J = model.bodies.m, model.bodies.J
    return float(0.5 * np.sum(m * np.sum(v * v, axis=1))
                 + 0.5 * np.sum(J * np.sum(om * om, axis=1)))


def test_a_pile_at_rest_starts_within_half_eps_per_sphere():
    """Two rings of 8 at rest under gravity: each sphere's gravity term starts on its
    level and steps down by ``ε/2`` (the level's value is the mean of the terraces
    either side), so ``E(0+) − E₀ = T(0+) = 16 · ε/2`` and ``T + V_ε = E₀``; a step of
    a whole ``ε`` made it ``16 ε`` (+9 % of the energy for the 1000-sphere pile)."""
    model = MODELS["tori-pile"].make({"n_tori": 2, "n_particles": 8, "seed": 1})
    sim = Simulation(model, "rrp-newmark", 1e-3, record_every=10**9)
    e0, scale = sim.e_ref, sim.e_scale
    eps = 1e-3 * scale
    s = EnergyStepper(model, eps, model.initial_state)
    _, v, _, om = s.state_arrays()
    n = model.n_bodies
    assert s.n_events == n  # one kick per resting sphere
    assert _kinetic(model, v, om) == pytest.approx(0.5 * n * eps, rel=1e-9)
    assert abs(s.energy_eps() - e0) <= 1e-12 * scale


def test_a_pendulum_at_rest_starts_with_half_eps():
    model = MODELS["pendulum"].make({"omega0": [0.0, 0.0, 0.0]})
    st = model.initial_state
    eps = 1e-3
    s = EnergyStepper(model, eps, st)
    _, _, _, om = s.state_arrays()
    assert s.n_events == 1
    T = 0.5 * float(model.bodies.J[0]) * float(om[0] @ om[0])
    assert T == pytest.approx(0.5 * eps, rel=1e-9)
    sim = Simulation(model, "rrp-newmark", 1e-3, record_every=10**9)
    assert abs(s.energy_eps() - sim.e_ref) <= 1e-12 * sim.e_scale
