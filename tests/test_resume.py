"""Resume (issue #10 §3): a run 0 → T and a run 0 → T/2 resumed from its file's
checkpoint to T end in bit-identical states, for every scheme on the torus (penalty and
hard contact) and on the spring pendulum — in process, through ``rrp run --resume``, and
from the ``.partial`` of a run killed with SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from helpers import rrp

from engine.drivers import simulation_for, simulation_from_resume_state
from engine.io import RunFile, RunWriter, read_run
from engine.scenarios import load_scenario
from engine.simulation import Simulation, SimulationError

ROOT = Path(__file__).resolve().parent.parent

EXPLICIT = ["rrp-exact", "rrp-newmark", "campello", "pfc-verlet", "rk4", "pfc-buss2",
            "pfc-rk4", "yoshida4:rrp-exact", "yoshida4:rrp-newmark", "yoshida4:pfc-verlet"]
IMPLICIT = ["lgvi", "rrp-implicit", "campello-implicit", "yoshida4:lgvi",
            "yoshida4:rrp-implicit"]
CASES = ([("torus", {}, n) for n in EXPLICIT + IMPLICIT]
         + [("torus", {"contact": "hard"}, n) for n in ("moreau-symmetric", "moreau")]
         + [("spring-pendulum", {}, n) for n in ("moreau", "moreau-symmetric",
                                                 "moreau-variational")])


def _state(sim) -> list[np.ndarray]:
    if hasattr(sim, "_s0"):  # x, v, q, Ω, F, RM, e (energy components), Π
        return [a.copy() for a in sim._s0]
    return [sim._s.copy()]  # the node (q, u) and D of a generalized model


@pytest.mark.parametrize("scenario, overrides, name", CASES,
                         ids=[f"{s}{'-hard' if o else ''}-{n}" for s, o, n in CASES])
def test_resumed_run_is_bit_identical_to_an_unbroken_one(tmp_path, scenario, overrides,
                                                         name):
    model = load_scenario(scenario, overrides).build_model()
    h, every = 1e-3, 7  # the torus hits the wall at t ≈ 0.06: contacts on both sides
    straight = simulation_for(model, name, h, record_every=every, record_state=True)
    for chunk in (37, 140, 123):  # another chunking than the resumed run's
        assert straight.advance(chunk).ok
    path = tmp_path / "run.h5"
    first = simulation_for(model, name, h, record_every=every)
    w = RunWriter(path, first)
    assert first.advance(150).ok
    w.close()
    with RunFile(path) as rf:
        d, n_records = rf.resume_state()
        rebuilt = rf.build_model()
    resumed = simulation_from_resume_state(rebuilt, d)
    assert resumed.t == first.t and resumed.step_index == 150
    w = RunWriter.resume(path, resumed, path, n_records)
    assert resumed.advance(150).ok
    w.close()
    # implicit schemes too: the iteration starts from stored state, nothing is re-derived
    for a, b in zip(_state(straight), _state(resumed), strict=True):
        np.testing.assert_array_equal(a, b)
    assert resumed.t == straight.t
    # the appended file holds the unbroken run's series and frames
    s = straight.series.arrays()
    run = read_run(path)
    np.testing.assert_array_equal(run["time"], s["t"])
    np.testing.assert_array_equal(run["energy"]["total"], s["energy"].sum(axis=1))
    np.testing.assert_array_equal(run["bodies"]["position"], s["x"])
    np.testing.assert_array_equal(run["bodies"]["velocity"], s["v"])
    np.testing.assert_array_equal(run["bodies"]["step"], s["step"])


def test_resume_with_another_step_is_an_event(tmp_path):
    model = load_scenario("torus").build_model()
    sim = Simulation(model, "rrp-newmark", 1e-3, record_every=10)
    with RunWriter(tmp_path / "r.h5", sim):
        sim.advance(100)
    with RunFile(tmp_path / "r.h5") as rf:
        d, n = rf.resume_state()
    res = Simulation.from_resume_state(model, d)
    res.set_h(5e-4)
    res.set_integrator("lgvi")
    with RunWriter.resume(tmp_path / "r.h5", res, tmp_path / "r.h5", n):
        assert res.advance(40).ok
    with RunFile(tmp_path / "r.h5") as rf:
        assert [(e.kind, e.old, e.new, e.step) for e in rf.events] == [
            ("h", "0.001", "0.0005", 100), ("integrator", "rrp-newmark", "lgvi", 100)]
        assert rf.times[-1] == pytest.approx(0.1 + 40 * 5e-4, abs=1e-14)
        assert rf.status == "complete"


def test_saved_state_of_another_model_is_refused():
    torus = load_scenario("torus").build_model()
    d = Simulation(torus, "rrp-newmark", 1e-3).resume_state()
    small = load_scenario("torus", {"n_particles": 40}).build_model()
    with pytest.raises(SimulationError, match="80 bodies"):
        Simulation.from_resume_state(small, d)
    spring = load_scenario("spring-pendulum").build_model()
    with pytest.raises(SimulationError, match="generalized"):
        Simulation.from_resume_state(spring, d)


# ------------------------------------------------------------------ command line
FINAL = ("position", "velocity", "quaternion", "omega", "momentum_body", "step",
         "dissipated", "time")


def _same_runs(a: Path, b: Path) -> None:
    ra, rb = read_run(a), read_run(b)
    for k in FINAL:
        np.testing.assert_array_equal(ra["bodies"][k], rb["bodies"][k], err_msg=k)
    for k in ra["energy"]:
        np.testing.assert_array_equal(ra["energy"][k], rb["energy"][k], err_msg=k)
    np.testing.assert_array_equal(ra["momentum"]["angular"], rb["momentum"]["angular"])


def test_cli_resume_matches_a_straight_run(tmp_path):
    res = rrp(tmp_path, "run", "torus", "--t-end", "1", "--out", "full.h5", "-q")
    assert res.returncode == 0, res.stderr
    res = rrp(tmp_path, "run", "torus", "--t-end", "0.5", "--out", "a.h5", "-q")
    assert res.returncode == 0, res.stderr
    res = rrp(tmp_path, "run", "--resume", "a.h5", "--t-end", "1", "--json")
    assert res.returncode == 0, res.stderr
    assert "resuming a.h5 at t = 0.5" in res.stderr
    _same_runs(tmp_path / "full.h5", tmp_path / "a.h5")
    assert not list(tmp_path.glob("a.h5*.partial"))
    # into another file: the source is left as it was
    res = rrp(tmp_path, "run", "torus", "--t-end", "0.5", "--out", "b.h5", "-q")
    before = (tmp_path / "b.h5").read_bytes()
    res = rrp(tmp_path, "run", "--resume", "b.h5", "--t-end", "1", "--out", "c.h5", "-q")
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "b.h5").read_bytes() == before
    _same_runs(tmp_path / "full.h5", tmp_path / "c.h5")


@pytest.mark.parametrize("case, args, expected", [
    ("no-file", ["--resume", "missing.h5", "--t-end", "2"], "no such file"),
    ("not-hdf5", ["--resume", "junk.h5", "--t-end", "2"], "not an HDF5 file"),
    ("no-t-end", ["--resume", "ok.h5"], "--t-end"),
    ("t-end-before", ["--resume", "ok.h5", "--t-end", "0.01"], "not after"),
    ("with-scenario", ["torus", "--resume", "ok.h5", "--t-end", "2"], "scenario"),
    ("schema-1", ["--resume", "old.h5", "--t-end", "2"], "no checkpoint"),
    ("other-version", ["--resume", "other.h5", "--t-end", "2"], "another version"),
    ("bad-h", ["--resume", "ok.h5", "--t-end", "2", "--h", "5"], "too large"),
])
def test_cli_resume_refusals_are_one_line(tmp_path, case, args, expected):
    import h5py

    (tmp_path / "junk.h5").write_text("not hdf5")
    res = rrp(tmp_path, "run", "pendulum", "--t-end", "0.1", "--out", "ok.h5", "-q")
    assert res.returncode == 0, res.stderr
    for name, edit in (("old.h5", "schema1"), ("other.h5", "params")):
        (tmp_path / name).write_bytes((tmp_path / "ok.h5").read_bytes())
        with h5py.File(tmp_path / name, "r+") as f:
            if edit == "schema1":
                for k in ("checkpoint", "checkpoint_alt", "bodies/velocity"):
                    if k in f:
                        del f[k]
                del f.attrs["schema_version"]
                for k in ("layout", "header_digest", "status_digest", "digests"):  # (#36)
                    del f.attrs[k]
                del f["checks"]
            else:
                import json

                p = json.loads(f.attrs["parameters"])
                p["colour"] = "red"
                f.attrs["parameters"] = json.dumps(p)
                from engine.io.digests import header_digest

                f.attrs["header_digest"] = header_digest(f)  # (as written by another version)
    res = rrp(tmp_path, "run", *args)
    lines = res.stderr.splitlines()
    assert res.returncode == 2, res.stderr
    assert len(lines) == 1 and "Traceback" not in res.stderr, res.stderr
    assert expected in lines[0], lines[0]


def test_killed_run_resumes_from_its_partial_file(tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    proc = subprocess.Popen([sys.executable, "-m", "app", "run", "torus", "--t-end", "1000",
                             "--out", "k.h5", "-q"], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    partial = tmp_path / f"k.h5.{proc.pid}.partial"  # (the writer's own name)
    deadline = time.monotonic() + 300
    n = 0
    try:
        while time.monotonic() < deadline and n < 60:
            time.sleep(0.2)
            if partial.exists():
                try:
                    with RunFile(partial) as rf:
                        n = len(rf.times)
                        assert rf.status == "running"  # its writer is alive
                except Exception:  # noqa: BLE001 - caught mid-write; look again
                    pass
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert n >= 60, proc.stderr.read().decode()
    assert partial.exists() and not (tmp_path / "k.h5").exists()
    with RunFile(partial) as rf:
        assert rf.status == "interrupted"
        assert rf.status_text == "interrupted (file not closed)"
        assert "not closed" in rf.message
        d, n_rec = rf.resume_state()
        t_ck = float(d["t"])
        assert rf.can_branch(n_rec - 1) == (True, "")
    t_end = round(t_ck + 0.2, 6)
    res = rrp(tmp_path, "run", "--resume", partial.name, "--t-end", f"{t_end}", "-q")
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "k.h5").exists() and not partial.exists()
    res = rrp(tmp_path, "run", "torus", "--t-end", f"{t_end}", "--out", "s.h5", "-q")
    assert res.returncode == 0, res.stderr
    _same_runs(tmp_path / "s.h5", tmp_path / "k.h5")
