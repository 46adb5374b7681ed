"""The simulation driver: switching scheme and step mid-run, blow-up detection with
the last good state kept, the stability estimate, validation of h."""

from __future__ import annotations

import numpy as np
import pytest

from engine.integrators import INTEGRATORS
from engine.models import MODELS
from engine.simulation import H_MAX, Simulation, SimulationError


@pytest.fixture(scope="module")
def torus_model():
    return MODELS["torus"].make({})


def test_chunked_advance_equals_one_advance(torus_model):
    """Chunk boundaries (where the GUI and CLI look at the state) change nothing."""
    a = Simulation(torus_model, "rrp-newmark", 1e-3, record_every=5)
    b = Simulation(torus_model, "rrp-newmark", 1e-3, record_every=5)
    a.advance(600)
    for n in (1, 2, 7, 90, 500):
        b.advance(n)
    assert a.step_index == b.step_index == 600
    np.testing.assert_array_equal(a.state.x, b.state.x)
    np.testing.assert_array_equal(a.state.q, b.state.q)
    np.testing.assert_array_equal(a.series.arrays()["t"], b.series.arrays()["t"])
    np.testing.assert_array_equal(a.series.arrays()["energy"], b.series.arrays()["energy"])


@pytest.mark.parametrize("new", [n for n, i in INTEGRATORS.items() if n != "rrp-newmark"
                                 and n != "campello-implicit"  # (dissipative: its own test)
                                 and i.contact != "hard"])  # (refused: test_hard_contact.py)
def test_switching_integrator_keeps_the_state_and_adds_an_event(torus_model, new):
    sim = Simulation(torus_model, "rrp-newmark", 1e-3, record_every=1)
    sim.advance(300)
    before = sim.snapshot()
    sim.set_integrator(new)
    after = sim.snapshot()
    for name in ("x", "v", "q", "omega", "energy"):
        np.testing.assert_array_equal(getattr(before, name), getattr(after, name))
    assert sim.events[-1].kind == "integrator" and sim.events[-1].new == new
    assert sim.events[-1].step == 300
    sim.advance(300)
    a = sim.series.arrays()
    # continuity across the switch: one step moves a sphere by about h|v| ≈ 1e-3
    jumps = np.linalg.norm(np.diff(a["x"], axis=0), axis=2).max(axis=1)
    assert jumps.max() < 5e-3
    e = a["energy"].sum(axis=1)
    assert np.abs(e - e[0]).max() / sim.e_scale < 2e-2


def test_changing_h_keeps_time_consistent(torus_model):
    sim = Simulation(torus_model, "rrp-newmark", 1e-3, record_every=1)
    sim.advance(100)
    sim.set_h(5e-4)
    sim.advance(200)
    assert sim.t == pytest.approx(0.2, abs=1e-12)
    t = sim.series.arrays()["t"]
    dt = np.diff(t)
    np.testing.assert_allclose(dt[:100], 1e-3, rtol=1e-9)
    np.testing.assert_allclose(dt[100:], 5e-4, rtol=1e-9)
    assert [e.kind for e in sim.events] == ["h"]


@pytest.mark.parametrize("bad", [0.0, -1e-3, float("nan"), float("inf"), 2 * H_MAX, "abc"])
def test_invalid_h_is_refused_with_a_message(torus_model, bad):
    with pytest.raises(SimulationError) as exc:
        Simulation(torus_model, "rrp-newmark", bad)
    assert "h" in str(exc.value) and "\n" not in str(exc.value)
    sim = Simulation(torus_model, "rrp-newmark", 1e-3)
    sim.advance(10)
    x = sim.state.x.copy()
    with pytest.raises(SimulationError):
        sim.set_h(bad)
    assert sim.h == 1e-3 and not sim.events
    np.testing.assert_array_equal(sim.state.x, x)


def test_unknown_integrator_lists_the_known_ones(torus_model):
    with pytest.raises(SimulationError, match="rrp-newmark"):
        Simulation(torus_model, "verlet-magic", 1e-3)


def test_stability_estimate_matches_the_measured_limit(torus_model):
    """physics.md §7: h = 3e-3 runs, h ≥ 4e-3 blows up; the estimate must sit there."""
    sim = Simulation(torus_model, "rrp-newmark", 1e-3)
    est = sim.stability()
    assert 3e-3 <= est.h_stable <= 5e-3, est
    assert est.kind == "wall contact"
    pend = Simulation(MODELS["pendulum"].make({}), "rrp-exact", 1e-2).stability()
    assert pend.h_stable == pytest.approx(2.0)  # ω² = m g |ρ₀| / J = 1
    assert pend.h_rrp_exact == pytest.approx(1 / np.hypot(0.2, 0.2))


def test_blow_up_stops_with_the_last_good_state(torus_model):
    sim = Simulation(torus_model, "rrp-newmark", 0.05, record_every=1)
    rep = sim.advance(100)
    assert not rep.ok
    f = rep.failure
    assert f.kind in ("energy", "non-finite")
    assert "stability limit" in f.message and "0.0039" in f.message
    assert sim.state.is_finite()
    assert sim.step_index == rep.steps < 100
    # the kept state is the last good one: its energy is within the threshold
    assert abs(sim.relative_energy_error) < 1.0
    a = sim.series.arrays()
    assert np.isfinite(a["energy"]).all() and np.isfinite(a["x"]).all()
    # lower h and resume from there: the run goes on
    sim.set_h(1e-3)
    rep2 = sim.advance(200)
    assert rep2.ok and sim.state.is_finite()


def test_rrp_exact_refuses_an_inadmissible_step_mid_run():
    """A swinging pendulum with h|w| < 1 at the start and > 1 at the bottom: the step
    is refused (B&G eq. (16)) with the state before it kept, never NaN."""
    model = MODELS["pendulum"].make({"omega0": [0.0, 2.0, 0.0]})
    sim = Simulation(model, "rrp-exact", 0.45, record_every=1)
    rep = sim.advance(50)
    assert not rep.ok and rep.failure.kind == "rrp-limit"
    d = rep.failure.details
    assert d["body"] == 0 and d["h_w"] >= 1.0
    assert 0 < d["h_max"] < 0.45
    assert "rrp-exact" in rep.failure.message and "h|w|" in rep.failure.message
    assert sim.state.is_finite()
    # the same state continues with the step the message proposes, or with rrp-newmark
    sim.set_h(0.9 * d["h_max"])
    assert sim.advance(1).ok
    sim2 = Simulation(model, "rrp-newmark", 0.45)
    assert sim2.advance(50).ok


def test_rrp_exact_limit_is_checked_when_choosing_h():
    model = MODELS["pendulum"].make({"omega0": [0.0, 0.0, 50.0]})
    with pytest.raises(SimulationError, match="largest admissible h"):
        Simulation(model, "rrp-exact", 0.05)
    sim = Simulation(model, "rrp-newmark", 0.05)
    with pytest.raises(SimulationError):
        sim.set_integrator("rrp-exact")
    assert sim.integrator.name == "rrp-newmark"


def test_checkpoint_restore_reproduces_the_run(torus_model):
    sim = Simulation(torus_model, "rrp-exact", 1e-3)
    sim.advance(100)
    cp = sim.checkpoint()
    sim.advance(200)
    x1 = sim.state.x.copy()
    sim.restore(cp)
    assert sim.step_index == 100
    sim.advance(200)
    np.testing.assert_allclose(sim.state.x, x1, rtol=0, atol=1e-13)


def test_energy_tolerance_none_only_stops_on_non_finite(torus_model):
    sim = Simulation(torus_model, "rrp-newmark", 0.02, energy_tolerance=None)
    rep = sim.advance(2000)
    assert not rep.ok and rep.failure.kind == "non-finite"
    assert sim.state.is_finite()


def test_series_tail_equals_the_slice_of_the_whole():
    """``TimeSeries.tail(k)`` (what the live view asks for) is ``arrays()[k:]``."""
    sim = Simulation(MODELS["pendulum"].make({}), "rrp-newmark", 1e-2, record_every=3)
    for n in (5, 7, 1, 12, 30):
        sim.advance(n)
    whole = sim.series.arrays()
    for start in (0, 1, 2, 5, 9, sim.series.n - 1, sim.series.n, sim.series.n + 4):
        tail = sim.series.tail(start)
        for key in ("t", "energy", "P", "L", "x", "q"):
            np.testing.assert_array_equal(tail[key], whole[key][start:])


def test_check_h_and_check_integrator_change_nothing():
    sim = Simulation(MODELS["pendulum"].make({}), "rrp-newmark", 1e-2)
    assert sim.check_h(2e-2) == 2e-2
    with pytest.raises(SimulationError, match="positive"):
        sim.check_h(-1.0)
    with pytest.raises(SimulationError, match="unknown integrator"):
        sim.check_integrator("nope")
    assert sim.check_integrator("rk4").name == "rk4"
    assert sim.h == 1e-2 and sim.integrator.name == "rrp-newmark" and not sim.events


def test_the_driver_package_keeps_its_names_and_shares_its_parts():
    """Issue #34 §2, §4: ``engine.simulation`` is a package of modules under 800 lines,
    every name imported from it before the split still is, and the generalized driver
    inherits the shared parts instead of repeating them."""
    from pathlib import Path

    import engine.simulation as pkg
    from engine.generalized.simulation import GeneralizedSimulation

    for name in pkg.__all__:
        assert getattr(pkg, name) is not None
    for path in Path(pkg.__file__).parent.glob("*.py"):
        assert len(path.read_text(encoding="utf-8").splitlines()) <= 800, path.name
    own = vars(GeneralizedSimulation)
    for shared in ("check_h", "check_integrator", "_check_integrator", "iteration_stats",
                   "reset_iteration_stats", "_init_settings", "_init_clock",
                   "_records_ahead", "_after_kernel", "_record_steps", "_what_failed",
                   "_blow_up"):
        assert shared not in own and hasattr(GeneralizedSimulation, shared), shared


def test_a_switch_of_h_is_recorded_exactly(torus_model):
    """The event's text gives back the step bit for bit (an export of a watched run
    re-runs its switches from these events, issue #37 item 4); ``%g`` kept 6 digits."""
    sim = Simulation(torus_model, "rrp-newmark", 1e-3, record_every=1)
    sim.advance(3)
    h = 0.000123456789012345
    sim.set_h(h)
    (event,) = sim.events
    assert float(event.new) == h and float(event.old) == 1e-3
