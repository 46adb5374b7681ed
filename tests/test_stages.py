"""Stages of a run (issue #44 item 5): the ``[[stages]]`` keys, a boundary exactly on a
step, the balance across it, a duration refused in one line, resume bit-identical
across a stage change, a change of ``h`` or scheme inside a stage, ``rrp run``'s lines
and the run file's events."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from engine.layout import E_DISSIPATED, E_FIELD, E_FIELD_WORK
from engine.potentials.fields import FI_GAMMA, FI_ROWS, R_C0, R_C1, R_T0, R_T1

ROOT = Path(__file__).resolve().parent.parent
CSV = ("x,y,z,diameter,mass,group,mux,muy,muz\n0,0,0,1,1,0,0,0,0\n1,0,0,1,1,1,1,0,0\n"
       "2,0,0,1,1,1,0,1,0\n3,0,0,1,1,1,0.5,0,0.5\n")
HEAD = '''model = "assembly"
bodies = "s.csv"
bonds = "b.csv"
[run]
h = 1e-3
every = 5
'''
STAGES = '''[[stages]]
steps = 30
fields = [{ group = 1, B = [0, 0, 2.0], ramp = [0.0, 1.0] }]
[[stages]]
duration = 0.02
name = "hold"
fields = [{ group = 1, B = [0, 0, 1.0] }]
damping = [{ group = "all", gamma = 0.2, gamma_rot = 0.1 }]
'''


def _write(tmp_path: Path, text: str = HEAD + STAGES) -> Path:
    (tmp_path / "s.csv").write_text(CSV)
    (tmp_path / "b.csv").write_text("i,j\n0,1\n1,2\n2,3\n")
    (tmp_path / "s.toml").write_text(text)
    return tmp_path / "s.toml"


def _load(tmp_path: Path, text: str = HEAD + STAGES):
    from engine.scenarios import load_scenario
    return load_scenario(_write(tmp_path, text))


def _sim(model, h=1e-3, scheme="rrp-newmark", **kw):
    from engine.drivers import simulation_for
    return simulation_for(model, scheme, h, record_every=1, record_frames=False,
                          energy_tolerance=None, **kw)


def _state(sim) -> list[np.ndarray]:
    return [a.copy() for a in sim._s0]


# ------------------------------------------------------------------ the keys
def test_stages_map_to_dataclasses_and_back(tmp_path):
    from engine.models.stages import Stage, StageDamping, StageField
    sc = _load(tmp_path)
    assert sc.stages == sc.build_model().stages
    assert sc.stages == (
        Stage(steps=30, fields=(StageField((0.0, 0.0, 2.0), 1, (0.0, 1.0)),)),
        Stage(duration=0.02, name="hold", fields=(StageField((0.0, 0.0, 1.0), 1),),
              damping=(StageDamping(-1, 0.2, 0.1),)))
    assert sc.run.t_end == pytest.approx(0.05) and not sc.run.t_end_given
    assert sc.t_end_at(5e-4) == pytest.approx(0.035)  # (30 steps of 5e-4 + 0.02)
    from engine.models.stages import stages_toml
    text = HEAD + stages_toml(sc.stages)  # (what code writes, e.g. a deck's `run N`)
    assert _load(tmp_path, text).stages == sc.stages
    m = sc.build_model()
    assert {"field", "field work", "dissipated"} <= set(m.energy_components)


def test_a_given_t_end_is_kept(tmp_path):
    sc = _load(tmp_path, HEAD.replace("every = 5", "every = 5\nt_end = 0.04") + STAGES)
    assert sc.run.t_end == 0.04 and sc.t_end_at(5e-4) == 0.04


@pytest.mark.parametrize("table, words", [
    ("[[stages]]\nfields = []\n", "stages]] 1: give its length as steps = N or duration"),
    ("[[stages]]\nsteps = 10\nduration = 1.0\n", "(one of them)"),
    ("[[stages]]\nsteps = 0\n", "steps = 0 must be an integer from 1"),
    ("[[stages]]\nsteps = 5\n[[stages]]\nsteps = 5\nfields = [{ B = [0, 0, 1], "
     "ramp = [0, 1, 2, 3] }]\n", "stages]] 2 fields 1: ramp must be [c0, c1]"),
    ("[[stages]]\nsteps = 5\ndamping = [{ group = 9, gamma = 1 }]\n", "group 9 has no"),
    ("[[stages]]\nsteps = 5\nlength = 3\n", "unknown key 'length'"),
    ("[[stages]]\nduration = 0.0105\n", "stage 1: duration = 0.0105 is 10.5 steps of "
     "h = 0.001, not a whole number: give steps = "),
])
def test_bad_stages_are_refused_in_one_line(tmp_path, table, words):
    from engine.scenarios import ScenarioError
    with pytest.raises(ScenarioError) as exc:
        _load(tmp_path, HEAD + table).build_model()
    msg = str(exc.value)
    assert "\n" not in msg and words in msg, msg


def test_a_duration_that_h_does_not_divide_is_refused_by_the_driver(tmp_path):
    from engine.simulation import SimulationError
    m = _load(tmp_path).build_model()
    with pytest.raises(SimulationError, match=r"^stage 2: duration = 0.02 is 6.66667 steps "
                       r"of h = 0.003, not a whole number: give steps = 7 instead"):
        _sim(m, h=3e-3)


# ------------------------------------------------------------------ the driver
def test_the_boundary_falls_on_a_step_and_the_fields_change_there(tmp_path):
    m = _load(tmp_path).build_model()
    sim = _sim(m)
    assert sim.stage_index == 0 and sim.stage_span() == (0.0, 0.03)
    row = sim.ff.fields[FI_ROWS][0]
    assert (row[R_T0], row[R_T1], row[R_C0], row[R_C1]) == (0.0, 0.03, 0.0, 1.0)
    assert not sim.ff.fields[FI_GAMMA].any()
    for _ in range(5):  # (chunks that straddle the boundary: it is never crossed)
        assert sim.advance(7).ok
    assert sim.step_index == 35 and sim.stage_index == 1
    ev = [e for e in sim.events if e.kind == "stage"]
    assert [(e.step, e.t, e.old, e.new) for e in ev] == [(30, 0.03, "1", "2 (hold)")]
    assert sim.stage_span() == (0.03, pytest.approx(0.05))
    np.testing.assert_array_equal(sim.ff.fields[FI_GAMMA], 0.2)
    assert sim.ff.fields[FI_ROWS].shape[0] == 1  # (stage 1's ramp is gone)
    assert sim.advance(100).ok and sim.step_index == 135  # (the last stage goes on)
    assert len(sim.events) == 1 and sim.stage_index == 1


def _balance(sim, n):
    e0 = sim.energy.sum()
    assert sim.advance(n).ok
    return abs(sim.energy.sum() - e0)


def test_the_balance_closes_across_a_jump_of_the_field(tmp_path):
    """Stage 2 halves the field at once: its energy jumps, booked in ``field work``, so
    that ``E + field work + dissipated`` is constant to the scheme's order across it."""
    text = HEAD + STAGES.replace("steps = 30", "duration = 0.03").replace(
        "duration = 0.02", "duration = 0.03")
    m = _load(tmp_path, text).build_model()
    errs = []
    for h in (1e-3, 5e-4):
        sim = _sim(m, h=h)
        assert sim.advance(int(round(0.03 / h))).ok and sim.stage_index == 0
        u, w = sim.energy[E_FIELD], sim.energy[E_FIELD_WORK]
        assert sim.advance(1).ok and sim.stage_index == 1
        e = sim.energy
        assert e[E_FIELD] == pytest.approx(0.5 * u, rel=0.05)  # (2 B → 1 B)
        assert e[E_FIELD_WORK] - w == pytest.approx(0.5 * u, rel=0.05)  # (−ΔU booked)
        n = int(round(0.06 / h))
        errs.append(_balance(_sim(m, h=h), n))
        assert sim.advance(n - sim.step_index).ok and sim.energy[E_DISSIPATED] > 0
    assert errs[1] < errs[0] / 3.0, errs  # (second order: ≈ 4×)
    assert errs[0] < 1e-4, errs


def test_the_jump_is_booked_exactly_at_the_boundary(tmp_path):
    m = _load(tmp_path).build_model()
    sim = _sim(m)
    assert sim.advance(30).ok
    before = sim.energy
    sim._next_stage()  # (what the next advance does first)
    after = sim.energy
    assert after[E_FIELD] != before[E_FIELD]  # (2 B → 1 B)
    assert after.sum() == pytest.approx(before.sum(), rel=0, abs=1e-14)


def test_resume_is_bit_identical_across_a_stage_change(tmp_path):
    from engine.simulation import Simulation
    m = _load(tmp_path).build_model()
    a = _sim(m)
    assert a.advance(50).ok
    b = _sim(m)
    assert b.advance(23).ok
    d = b.resume_state()
    c = Simulation.from_resume_state(_load(tmp_path).build_model(), d)
    assert c.advance(27).ok
    for x, y in zip(_state(a), _state(c), strict=True):
        np.testing.assert_array_equal(x, y)
    assert c.events == a.events and c.stage_index == 1
    # a resume from the boundary itself (saved before stage 2 is entered) too
    b = _sim(m)
    assert b.advance(30).ok
    c = Simulation.from_resume_state(m, b.resume_state())
    assert c.advance(20).ok
    for x, y in zip(_state(a), _state(c), strict=True):
        np.testing.assert_array_equal(x, y)
    # and from inside stage 2
    b = _sim(m)
    assert b.advance(41).ok
    c = Simulation.from_resume_state(m, b.resume_state())
    assert c.stage_index == 1 and c.stage_span() == a.stage_span()
    assert c.advance(9).ok
    for x, y in zip(_state(a), _state(c), strict=True):
        np.testing.assert_array_equal(x, y)


def test_a_run_whose_h_changed_resumes_though_it_divides_no_duration(tmp_path):
    """At h = 0.003 stage 2's 0.02 is no whole number of steps: a fresh run is refused
    (above), a run that changed to it resumes, its stages counted in time."""
    from engine.simulation import Simulation
    m = _load(tmp_path).build_model()
    a = _sim(m)
    assert a.advance(10).ok
    a.set_h(3e-3)
    b = Simulation.from_resume_state(m, a.resume_state())
    for s in (a, b):
        assert s.advance(20).ok
    for x, y in zip(_state(a), _state(b), strict=True):
        np.testing.assert_array_equal(x, y)
    ev = [e for e in b.events if e.kind == "stage"][0]
    assert ev.step == 17 and ev.t == pytest.approx(0.031)  # (first step past 0.03)
    assert b.stage_span() == (ev.t, pytest.approx(ev.t + 7 * 3e-3))  # (0.02 / h, up)


def test_a_checkpoint_restored_across_the_boundary_comes_back_to_its_stage(tmp_path):
    m = _load(tmp_path).build_model()
    sim = _sim(m)
    assert sim.advance(20).ok
    cp = sim.checkpoint()
    assert sim.advance(20).ok and sim.stage_index == 1
    sim.restore(cp)
    assert sim.stage_index == 0 and not sim.ff.fields[FI_GAMMA].any()
    assert sim.ff.fields[FI_ROWS][0, R_T1] == 0.03


def test_a_change_of_h_inside_a_stage_keeps_its_end_time(tmp_path):
    """Stage 1 ends at t = 0.03: after h → h/2 at step 10 it takes 40 more steps (the
    remaining time counted in the new step); after h → 0.0007 the first step past it."""
    m = _load(tmp_path).build_model()
    sim = _sim(m)
    assert sim.advance(10).ok
    sim.set_h(5e-4)
    assert sim.advance(39).ok and sim.stage_index == 0
    assert sim.advance(1).ok and sim.stage_index == 0 and sim.t == pytest.approx(0.03)
    assert sim.advance(1).ok and sim.stage_index == 1
    ev = [e for e in sim.events if e.kind == "stage"][0]
    assert ev.step == 50 and ev.t == pytest.approx(0.03, abs=1e-15)
    sim = _sim(m)
    assert sim.advance(10).ok
    sim.set_h(7e-4)  # (0.02 / 0.0007 = 28.57: 29 steps, to t = 0.0303)
    assert sim.advance(40).ok
    ev = [e for e in sim.events if e.kind == "stage"][0]
    assert ev.step == 39 and ev.t == pytest.approx(0.01 + 29 * 7e-4)
    assert sim.stage_span()[0] == ev.t  # (stage 2 starts where stage 1 ended)


def test_a_change_of_integrator_inside_a_stage_keeps_its_steps(tmp_path):
    m = _load(tmp_path).build_model()
    sim = _sim(m)
    assert sim.advance(10).ok
    sim.set_integrator("rk4")
    assert sim.advance(25).ok
    kinds = [(e.kind, e.step) for e in sim.events]
    assert kinds == [("integrator", 10), ("stage", 30)]


def test_a_branch_from_a_frame_takes_the_stage_of_its_step(tmp_path):
    from engine.simulation import Simulation
    m = _load(tmp_path).build_model()
    sim = _sim(m, record_state=True)
    sim.record_frames = True
    assert sim.advance(40).ok

    class Frame:
        t, step = sim.t, sim.step_index
        x, v, q, omega, pi = (a.copy() for a in (*sim._s0[:4], sim._s0[7]))
        D = float(sim.energy[E_DISSIPATED])
        W = float(sim.energy[E_FIELD_WORK])

    b = Simulation.from_frame(m, Frame, "rrp-newmark", 1e-3, record_frames=False)
    assert b.stage_index == 1 and b.stage_span()[0] == pytest.approx(0.03)
    assert b.energy.sum() == pytest.approx(sim.energy.sum(), rel=1e-12)


def test_a_model_without_stages_takes_the_old_path(tmp_path):
    sc = _load(tmp_path, HEAD)
    assert sc.stages == () and sc.run.t_end_given and sc.run.t_end == 10.0
    sim = _sim(sc.build_model())
    assert sim.stage_index == -1 and sim.stage_label() == ""
    assert "stage_index" not in sim.resume_state()


# ------------------------------------------------------------------ rrp run, the file
def test_rrp_run_follows_the_stages_and_the_file_keeps_them(tmp_path):
    from engine.io import RunFile
    path = _write(tmp_path)
    r = subprocess.run([sys.executable, "-m", "app", "run", str(path), "--out",
                        str(tmp_path / "r.h5")], capture_output=True, text=True, cwd=ROOT,
                       env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr
    assert "rrp: t = 0: in stage 1 of 2 (t = 0 → 0.03)" in r.stderr
    assert "rrp: t = 0.03: stage 1 → 2 (hold); now in stage 2 of 2 (hold)" in r.stderr
    assert "stages      1: t = 0 → 0.03; 2 (hold): t = 0.03 → 0.05" in r.stdout
    assert "t = 0 → 0.05 of 0.05 (50 steps)" in r.stdout
    with RunFile(tmp_path / "r.h5") as f:
        assert [(e.kind, e.step, e.new) for e in f.events] == [("stage", 30, "2 (hold)")]
        assert f.build_model().stages == _load(tmp_path).stages
        d, _ = f.resume_state()
    assert d["stage_index"] == 1 and d["stage_t1"] == pytest.approx(0.05)
    from app.export.track import first_stage, schemes_at, stage_at
    with RunFile(tmp_path / "r.h5") as f:  # (what the export's caption says)
        first, switches = first_stage(f, f.build_model()), schemes_at(f)[2]
    # (the frame at the boundary, 0.03, holds stage 1's state: recorded before stage 2
    # was entered, as the live window shows it)
    assert [stage_at(first, switches, t) for t in (0.0, 0.029, 0.03, 0.030000000000000002,
                                                   0.031, 0.05)] == [
        "1", "1", "1", "1", "2 (hold)", "2 (hold)"]
    sim = _sim(_load(tmp_path).build_model())  # (the live window's: the simulation's own)
    assert sim.advance(30).ok and sim.t == pytest.approx(0.03)
    assert sim.stage_label().startswith("stage 1 of 2")  # (entered at the next advance)
    assert sim.advance(1).ok and sim.stage_label().startswith("stage 2 of 2")


def _rrp(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    import os
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True,
                          text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_cli_resume_across_a_stage_change_matches_an_unbroken_run(tmp_path):
    """A run stopped at t = 0.02 in stage 1 and resumed to the stages' end (0.05) is the
    unbroken run, bit for bit, with the same stage event."""
    from test_resume import _same_runs

    from engine.io import RunFile
    path = _write(tmp_path)
    for args in (("run", str(path), "--out", "full.h5", "-q"),
                 ("run", str(path), "--t-end", "0.02", "--out", "a.h5", "-q"),
                 ("run", "--resume", "a.h5", "--t-end", "0.05", "-q")):
        res = _rrp(tmp_path, *args)
        assert res.returncode == 0, res.stderr
    _same_runs(tmp_path / "full.h5", tmp_path / "a.h5")
    with RunFile(tmp_path / "a.h5") as a, RunFile(tmp_path / "full.h5") as b:
        assert a.events == b.events and len(a.events) == 1


def test_an_export_of_the_watched_run_follows_the_stages(tmp_path):
    """The app's watched run (its events include the stage change) re-run for an export:
    the stage change is the driver's own, not replayed as a switch."""
    from app.export.watched import Watched, write_watched
    from engine.io import RunFile
    path = _write(tmp_path)
    w = Watched(str(path), ("rrp-newmark",), 0.04, events=[(30, "stage", "2 (hold)")],
                record_every=5)
    (out,) = write_watched(w, tmp_path)
    with RunFile(out) as f:
        assert [(e.kind, e.step) for e in f.events] == [("stage", 30)]
        assert f.times[-1] == pytest.approx(0.04)


def test_an_exported_run_file_names_its_stage_in_the_caption(tmp_path):
    """``rrp export``'s overlay says the stage of each frame (from ``/events``)."""
    from helpers import require_offscreen_render
    require_offscreen_render()
    from app.export import export_run
    from engine.drivers import simulation_for
    from engine.io import RunWriter
    sim = simulation_for(_load(tmp_path).build_model(), "rrp-newmark", 1e-3, record_every=5,
                         record_frames=True, record_state=True)
    w = RunWriter(tmp_path / "r.h5", sim, scenario="s", checkpoint=False, t_end=0.05)
    assert sim.advance(50).ok
    w.flush()
    path = w.close("complete", "")
    seen = []
    export_run(path, out=tmp_path / "x.gif", on_frame=seen.append, size=(160, 120), fps=100)
    captions = {round(s.t, 6): s.caption for s in seen}
    assert captions[0.02].endswith("· stage 1") and "stage 2 (hold)" in captions[0.04]
