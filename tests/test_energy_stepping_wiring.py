"""Energy-stepping in the product (issue #28): the registry's ``energy-stepping[:REL]``,
the :class:`~engine.simulation.Simulation` driving an
:class:`~engine.energy_stepping.EnergyStepper` (``h`` the recording interval), the
``terrace_gap`` column, switches, chunking, checkpoint and resume, ``rrp run`` and the
per-run priming.  The scheme itself is tested in ``tests/test_energy_stepping.py``; the
app's picker and plots in ``tests/test_gui.py``."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from engine.energy_stepping import EnergySteppingError, unsupported
from engine.integrators import INTEGRATORS, get_integrator
from engine.integrators.registry import (
    DEFAULT_EPS_REL,
    EPS_REL_MAX,
    EPS_REL_MIN,
    S_EVENT_DRIVEN,
)
from engine.models import MODELS
from engine.scenarios import load_scenario
from engine.simulation import (
    H_MAX,
    Simulation,
    SimulationError,
    integrator_for,
    usable_integrators,
)
from engine.state import State

ROOT = Path(__file__).resolve().parent.parent
REL = 1e-3
H = 1e-2


def pendulum():
    return MODELS["pendulum"].make({})


def es_sim(rel: float = REL, h: float = H, **kw) -> Simulation:
    return Simulation(pendulum(), f"energy-stepping:{rel:g}", h, **kw)


def state_of(sim: Simulation) -> dict[str, np.ndarray]:
    s = sim.state
    return {"x": s.x.copy(), "v": s.v.copy(), "q": s.q.copy(), "omega": s.omega.copy()}


# ------------------------------------------------------------------------- registry
def test_the_registry_offers_energy_stepping_and_its_family():
    info = INTEGRATORS["energy-stepping"]
    assert info.event_driven and info.scheme_id == S_EVENT_DRIVEN
    assert info.eps_rel == DEFAULT_EPS_REL
    fam = get_integrator("energy-stepping:1e-3")
    assert fam.name == "energy-stepping:0.001" and fam.eps_rel == 1e-3 and fam.event_driven
    # the name reads back exactly, whatever the number
    for rel in (1e-3, 0.1, 1.234567891234e-5):
        name = get_integrator(f"energy-stepping:{rel!r}").name
        assert get_integrator(name).eps_rel == rel
    props = info.properties()
    for word in ("order ≈ ½ in ε (measured on the pendulum; many bodies: no clean order)",
                 "symplectic", "time-reversible", "energy-conserving", "explicit",
                 "event-driven", "spheres only"):
        assert word in props, word
    d = info.as_dict()
    assert d["event_driven"] and d["eps_rel"] == DEFAULT_EPS_REL and d["properties"] == props
    assert json.loads(json.dumps(d)) == d
    # not a composable smooth map: not offered to yoshida4
    assert not any(n.startswith("yoshida4:energy") for n in INTEGRATORS)
    with pytest.raises(KeyError):
        get_integrator("yoshida4:energy-stepping")


@pytest.mark.parametrize("text", ["0", "-1", "abc", "nan", "1", "inf", "", "0.2"])
def test_a_bad_eps_is_refused_in_one_line_naming_the_fix(text):
    with pytest.raises(KeyError) as err:
        get_integrator(f"energy-stepping:{text}")
    msg = err.value.args[0]
    assert "\n" not in msg and f"energy-stepping:{text}" in msg
    assert f"[{EPS_REL_MIN:g}, {EPS_REL_MAX:g}]" in msg and "energy-stepping:1e-4" in msg
    with pytest.raises(SimulationError, match="energy-stepping:1e-4"):
        Simulation(pendulum(), f"energy-stepping:{text}", H)


@pytest.mark.parametrize("scenario, params", [("dumbbells", {}),
                                              ("torus", {"contact": "hard"}),
                                              ("spring-pendulum", {})])
def test_models_it_cannot_drive_are_refused_with_the_steppers_reason(scenario, params):
    model = load_scenario(scenario, params or None).build_model()
    why = unsupported(model)
    assert why is not None
    assert "energy-stepping" not in usable_integrators(model)
    for name in ("energy-stepping", "energy-stepping:1e-3"):
        with pytest.raises(SimulationError) as err:
            integrator_for(model, name)
        assert str(err.value) == why and "\n" not in why
    assert "energy-stepping" in usable_integrators(pendulum())
    assert integrator_for(pendulum(), "energy-stepping:1e-3").eps_rel == 1e-3


# ------------------------------------------------------------------------- the driver
def test_records_at_k_h_with_the_energy_bounded_by_eps_and_the_terraced_energy_exact():
    sim = es_sim(record_every=3)
    rep = sim.advance(3000)
    assert rep.ok, rep.failure
    a = sim.series.arrays()
    steps = np.arange(0, 3001, 3)
    assert np.array_equal(a["step"], steps)
    assert np.array_equal(a["t"], steps * H)  # exactly t = k h (t_base = 0)
    assert sim.t == 3000 * H and sim.step_index == 3000
    es = sim.event_stats()
    eps, n = es["eps"], es["n_terms"]
    assert eps == REL * sim.e_scale and n == 1
    assert es["events"] > 1000 and es["time"] == sim.t
    assert es["events_per_time"] == es["events"] / sim.t
    total = a["energy"].sum(axis=1)
    assert np.abs(total - sim.e_ref).max() <= eps * n
    gap = a["terrace_gap"]
    assert np.all(np.isfinite(gap))
    assert np.abs(gap).max() <= 0.5 * eps * n * (1 + 1e-9)
    # T + V_ε = E − (V − V_ε): constant to round-off
    t_v_eps = total - gap
    assert np.abs(t_v_eps - t_v_eps[0]).max() <= 1e-12 * abs(t_v_eps[0])
    # the gap moves: the record really samples the terraces
    assert np.ptp(gap) > 0.5 * eps


def test_records_hold_the_state_columns_only_where_asked():
    bare = es_sim(record_frames=False)
    full = es_sim(record_state=True)
    for sim in (bare, full):
        assert sim.advance(50).ok
    a, b = bare.series.arrays(), full.series.arrays()
    assert len(a["x"]) == 0 and "v" not in a and len(a["terrace_gap"]) == 51
    assert b["x"].shape == (51, 1, 3) and b["v"].shape == (51, 1, 3) and "pi" in b
    assert np.array_equal(a["energy"], b["energy"])  # (the same run either way)
    assert np.array_equal(b["q"][-1], full.state.q)


def test_no_step_limit_and_the_events_per_unit_time_instead():
    sim = es_sim()
    st = sim.stability()
    assert st.h_stable == math.inf and st.h_accurate == math.inf
    assert st.describe() == "event-driven: no step limit"  # (no time has passed)
    sim.advance(100)
    text = sim.stability().describe()
    rate = sim.event_stats()["events_per_time"]
    assert text == f"event-driven: no step limit · {rate:.3g} events per unit time"
    assert sim.check_h(H_MAX) == H_MAX and sim.check_h(0.37) == 0.37
    for bad in (0.0, -1.0, 2 * H_MAX, math.nan):
        with pytest.raises(SimulationError):
            sim.check_h(bad)
    sim.set_h(0.05)  # a new recording interval: records at t_base + k h
    sim.advance(10)
    a = sim.series.arrays()
    assert np.allclose(a["t"][-10:], 1.0 + 0.05 * np.arange(1, 11), rtol=0, atol=1e-15)


def test_switching_to_and_from_energy_stepping_keeps_the_state():
    sim = Simulation(pendulum(), "rrp-newmark", H)
    sim.advance(150)
    before = state_of(sim)
    sim.set_integrator("energy-stepping:1e-3")
    after = state_of(sim)
    for k in before:  # bit for bit, as for every switch
        assert np.array_equal(after[k], before[k]), k
    e_switch = float(sim.energy.sum())
    sim.advance(200)
    a = sim.series.arrays()
    eps = sim.event_stats()["eps"]
    es_rows = a["step"] > 150
    assert np.all(np.isnan(a["terrace_gap"][~es_rows]))  # (rrp-newmark: no terraces)
    assert np.all(np.isfinite(a["terrace_gap"][es_rows]))
    assert np.abs(a["energy"][es_rows].sum(axis=1) - e_switch).max() <= eps
    before = state_of(sim)
    sim.set_integrator("rrp-newmark")
    for k, v in state_of(sim).items():
        assert np.array_equal(v, before[k]), k
    assert sim._stepper is None
    rep = sim.advance(100)
    assert rep.ok and sim.t == pytest.approx(4.5, abs=1e-12)
    assert [e.label for e in sim.events] == [
        "integrator: rrp-newmark → energy-stepping:0.001",
        "integrator: energy-stepping:0.001 → rrp-newmark"]
    assert sim.event_stats()["events"] > 0 and sim.event_stats()["time"] == pytest.approx(2.0)
    # and rrp-newmark's step after the switch is the one from the carried state
    ref = Simulation(pendulum(), "rrp-newmark", H, state=_state(before))
    ref.advance(100)
    np.testing.assert_allclose(sim.state.q, ref.state.q, rtol=0, atol=1e-14)


def _state(d):
    from engine.state import State

    return State(d["x"].copy(), d["v"].copy(), d["q"].copy(), d["omega"].copy(), {})


def _advance_in(sim: Simulation, chunks) -> None:
    for n in chunks:
        assert sim.advance(n).ok


NOT_STATE = ("nl_pairs", "nl_capacity", "nl_state", "nl_xref", "record_every",
             "record_frames", "record_state")


def test_the_chunking_does_not_show_in_the_result():
    straight = es_sim(record_every=5)
    _advance_in(straight, [1000])
    runs = []
    for chunks in ([1] * 1000, [7] * 142 + [6], [1, 7, 500, 13, 479]):
        sim = es_sim(record_every=5)
        _advance_in(sim, chunks)
        runs.append(sim)
    a0 = straight.series.arrays()
    d0 = straight.resume_state()
    for sim in runs:
        a = sim.series.arrays()
        assert a.keys() == a0.keys()
        for k in a0:
            assert np.array_equal(a[k], a0[k], equal_nan=True), k
        d = sim.resume_state()
        for k in d0:
            if k in NOT_STATE:
                continue
            if isinstance(d0[k], np.ndarray):
                assert np.array_equal(d[k], d0[k]), k
            else:
                assert d[k] == d0[k], k
        assert sim.event_stats() == straight.event_stats()


def test_a_stepper_error_is_a_failure_that_keeps_the_state():
    sim = es_sim()
    sim.advance(20)
    calls = {"n": 0}
    real = sim._stepper.advance_to

    def fail_on_the_fifth(t, poll=None):
        calls["n"] += 1
        if calls["n"] == 5:
            raise EnergySteppingError("energy-stepping stopped: stuck at a tangency "
                                      "(events without flight); change ε")
        return real(t, poll)

    sim._stepper.advance_to = fail_on_the_fifth
    chunked = sim._stepper.advance_records  # (the pendulum's records a chunk at a time:
    # the error comes in the fifth interval of its chunk, after four records)

    def fail_in_the_fifth(times, first, stride, out, poll=None):
        done = chunked(times[:4], first, stride, out, poll)
        assert done == 4
        raise EnergySteppingError("energy-stepping stopped: stuck at a tangency "
                                  "(events without flight); change ε")

    sim._stepper.advance_records = fail_in_the_fifth
    ref = es_sim()
    ref.advance(24)
    rep = sim.advance(10)
    assert not rep.ok and rep.steps == 4
    f = rep.failure
    assert f.kind == "energy-stepping" and "\n" not in f.message
    assert "stuck at a tangency" in f.message and f"t = {sim.t:.6g} is kept" in f.message
    assert sim.step_index == 24 and sim.t == 24 * H
    for k, v in state_of(ref).items():  # the state of the last good interval
        assert np.array_equal(state_of(sim)[k], v), k
    assert np.array_equal(sim.energy, ref.energy)
    # the run goes on: a new stepper from the kept state
    rep = sim.advance(10)
    assert rep.ok and sim.step_index == 34 and sim._stepper is not None


@pytest.mark.parametrize("scenario", ["pendulum", "torus"])
def test_checkpoint_restore_and_resume_go_on_bit_for_bit(scenario):
    """The stepper is saved with :meth:`checkpoint` and :meth:`resume_state`
    (``EnergyStepper.export_state``): a restore, and a resume from the saved dict, give
    the same bits as an unbroken run (state, energies, event count)."""
    model = pendulum() if scenario == "pendulum" else load_scenario("torus").build_model()
    h = H if scenario == "pendulum" else 1e-3

    def run(n):
        sim = Simulation(model, f"energy-stepping:{REL:g}", h, record_frames=False)
        sim.advance(n)
        return sim

    straight = run(200)
    sim = run(100)
    cp = sim.checkpoint()
    d = sim.resume_state()
    assert d["integrator"] == f"energy-stepping:{REL:g}"
    assert any(k.startswith("es_state_") for k in d)
    sim.advance(50)
    sim.restore(cp)
    assert sim._stepper is None and sim.t == 100 * h
    assert sim.advance(100).ok
    for k, v in state_of(straight).items():
        assert np.array_equal(state_of(sim)[k], v), k
    assert np.array_equal(sim.energy, straight.energy)
    assert sim.event_stats()["events"] == straight.event_stats()["events"]
    r = Simulation.from_resume_state(model, d)
    assert r.integrator.name == f"energy-stepping:{REL:g}" and r.step_index == 100
    assert r.advance(100).ok
    for k, v in state_of(straight).items():
        assert np.array_equal(state_of(r)[k], v), k
    assert r.event_stats()["events"] == straight.event_stats()["events"]


def test_a_branch_from_a_frame_places_the_terraces_anew():
    """A frame holds no stepper: a run started from one (a branch) makes a new one, its
    terraces placed at the frame's state, within ε of the frame's energy."""
    sim = es_sim()
    sim.advance(100)
    cp = sim.checkpoint()
    r = Simulation(pendulum(), f"energy-stepping:{REL:g}", H, state=State(*(
        a.copy() for a in cp[0][:4])))
    assert r.advance(300).ok
    total = r.series.arrays()["energy"].sum(axis=1)
    eps = r.event_stats()["eps"]
    assert np.abs(total - total[0]).max() <= eps


def test_a_resume_keeps_the_eps_of_a_run_saved_under_another_default(monkeypatch):
    sim = Simulation(pendulum(), "energy-stepping", H)
    sim.advance(5)
    d = sim.resume_state()
    assert d["es_eps_rel"] == DEFAULT_EPS_REL
    import engine.simulation.resume as resume  # (where the resume reads the default)

    monkeypatch.setattr(resume, "DEFAULT_EPS_REL", 10 * DEFAULT_EPS_REL)
    r = Simulation.from_resume_state(pendulum(), d)
    assert r.integrator.eps_rel == DEFAULT_EPS_REL


def test_a_frame_branch_starts_a_stepper_at_the_frames_time():
    src = Simulation(pendulum(), "rrp-newmark", H, record_state=True)
    src.advance(70)
    snap = src.snapshot()

    class Frame:
        t, step, x, v, q, omega, pi, D = (snap.t, snap.step, snap.x, snap.v, snap.q,
                                          snap.omega, None, 0.0)

    sim = Simulation.from_frame(pendulum(), Frame, "energy-stepping:1e-3", H,
                                energy_reference=(src.e_ref, src.e_scale))
    assert sim.t == snap.t and sim._stepper.t == snap.t
    assert sim.event_stats()["eps"] == 1e-3 * src.e_scale
    assert sim.advance(20).ok and sim.series.arrays()["t"][-1] == pytest.approx(0.9)


def test_warm_up_and_build_kernels_take_no_step():
    sim = Simulation(pendulum(), "rrp-newmark", H)
    before = state_of(sim)
    sim.build_kernels("energy-stepping:1e-3")
    sim.warm_up()
    assert sim.kernels_cached("energy-stepping")
    assert sim.t == 0.0 and sim.series.n == 1
    for k, v in before.items():
        assert np.array_equal(state_of(sim)[k], v), k
    es = es_sim()
    es.warm_up()
    assert es.t == 0.0 and es.event_stats()["events"] == 0 and es.series.n == 1


# ------------------------------------------------------------------------- rrp run
def rrp(cwd, *args, timeout=600):
    return subprocess.run([sys.executable, "-m", "app", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, env=_env())


def _env():
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def test_rrp_run_shows_the_events_and_the_energy_error_over_eps(tmp_path):
    """(A bad ε on the command line: ``tests/test_cli.py``.)"""
    res = rrp(tmp_path, "run", "pendulum", "-i", "energy-stepping:1e-4", "--t-end", "10")
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert "energy-stepping:0.0001 (order ≈ ½ in ε (measured on the pendulum" in out
    assert "event-driven: no step limit" in out
    line = next(ln for ln in out.splitlines() if "max |E − E₀| / ε" in ln)
    assert 0.0 < float(line.split("=")[1].split()[0]) <= 1.0
    assert any(ln.strip().startswith("events") for ln in out.splitlines())
    res = rrp(tmp_path, "run", "pendulum", "-i", "energy-stepping:1e-4", "--t-end", "10",
              "--json")
    s = json.loads(res.stdout)
    assert s["events"] > 1000 and s["terraced_terms"] == 1 and s["eps_relative"] == 1e-4
    assert 0.0 < s["max_energy_error_over_eps"] <= 1.0
    assert s["steps"] == 1000 and s["t_reached"] == 10.0


def test_rrp_run_resumes_an_energy_stepping_run_bit_for_bit(tmp_path):
    """``rrp run --resume`` of an energy-stepping run file goes on from the stepper in
    its checkpoint: the resumed file's last frame is the unbroken run's, bit for bit."""
    from engine.io.hdf5 import RunFile

    first, whole = tmp_path / "a.h5", tmp_path / "w.h5"
    for out, t_end in ((first, "2"), (whole, "4")):
        res = rrp(tmp_path, "run", "pendulum", "-i", "energy-stepping:1e-3", "--t-end",
                  t_end, "--out", str(out), "--quiet")
        assert res.returncode == 0, res.stderr
    res = rrp(tmp_path, "run", "--resume", str(first), "--t-end", "4", "--out",
              str(tmp_path / "b.h5"), "--json")
    assert res.returncode == 0, res.stderr
    s = json.loads(res.stdout)
    assert s["integrator"] == "energy-stepping:0.001" and s["t_reached"] == 4.0
    assert s["records"] == 401 and s["events"] > 0
    with RunFile(tmp_path / "b.h5") as b, RunFile(whole) as w:
        fb, fw = b.frame(len(b.times) - 1), w.frame(len(w.times) - 1)
        assert fb.t == fw.t == 4.0
        assert np.array_equal(fb.q, fw.q) and np.array_equal(fb.omega, fw.omega)
        # the terrace gap goes on in the resumed file as in the unbroken one (#33 item 6)
        gb, gw = b.energy["terrace_gap"], w.energy["terrace_gap"]
        assert len(gb) == len(gw) == 401 and np.array_equal(gb, gw)


def test_the_per_run_priming_spawns_nothing_for_energy_stepping(monkeypatch):
    import engine.api as api
    import engine.priming as priming
    from app.cli import _prime_in_a_subprocess

    def refuse(*_a, **_k):
        raise AssertionError("no stepping loop to prime for an event-driven scheme")

    monkeypatch.setattr(priming, "spawn_priming", refuse)
    monkeypatch.setattr(priming, "run_kernels_cached", refuse)
    _prime_in_a_subprocess(False, pendulum(), "energy-stepping:1e-3")
    assert priming.start_siblings(pendulum(), "energy-stepping") is None
    assert api.compile_run(pendulum(), "energy-stepping", H) == "compiled"


# ------------------------------------------------------------ issue #33 item 6
def _es_run_file(path: Path) -> Simulation:
    from engine.io import RunWriter

    sim = es_sim()
    w = RunWriter(path, sim)
    sim.advance(60)
    w.close()
    return sim


def test_a_replay_shows_the_recorded_terrace_gap_and_old_files_still_read(tmp_path):
    """The run file keeps ``V − V_ε`` (``/energy/terrace_gap``): a replay's series carry
    it in the error plot's units, as the live run's do; a file written before it (no
    such dataset) replays without it."""
    pytest.importorskip("PyQt6")
    import h5py

    from app.gui.replay import Recording

    path = tmp_path / "es.h5"
    sim = _es_run_file(path)
    gap = sim.series.arrays()["terrace_gap"]
    rec = Recording(path)
    try:
        s = rec.series()
        assert np.array_equal(s.terrace_gap, gap / sim.e_scale) and len(s.t) == 61
    finally:
        rec.close()
    with h5py.File(path, "r+") as f:  # (as written before issue #33)
        del f["energy/terrace_gap"]
    rec = Recording(path)
    try:
        s = rec.series()
        assert s.terrace_gap is None and len(s.t) == 61
    finally:
        rec.close()


def test_gui_replay_of_an_energy_stepping_run_draws_its_gap_under_the_error(
        qtbot, make_window, tmp_path):
    """``rrp gui es.h5``: the terrace gap's curve is drawn from the file, and the
    scheme's own error above it (the dashed gap hid it, issue #33 item 6)."""
    pytest.importorskip("pytestqt")
    path = tmp_path / "es.h5"
    _es_run_file(path)
    w = make_window(None, run=path, size=None)
    qtbot.waitUntil(lambda: w.recording is not None and bool(w.plots.runs), timeout=60_000)
    assert w.plots.gap_curve_labels() == ["energy"]
    w.plots.redraw()
    x, _ = w.plots._curves["gap"]["energy"].getData()
    assert x is not None and len(x) > 10
    err, gap = w.plots._curves["error"]["energy"], w.plots._curves["gap"]["energy"]
    assert err.zValue() > gap.zValue()
    w.close()
