"""The ``rrp`` command line, run as a subprocess: listing, JSON summaries, the HDF5
layout of engine/io.py, one-line errors without tracebacks, and blow-ups that keep a
readable file with everything up to the last good step."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest
from helpers import assert_no_traceback, assert_one_line_error, rrp

from engine import __version__
from engine.integrators import INTEGRATORS
from engine.models import MODELS
from engine.scenarios import builtin_scenarios, load_scenario
from engine.simulation import energy_names

ROOT = Path(__file__).resolve().parent.parent
MOMENTA = ("P_x", "P_y", "P_z", "L_x", "L_y", "L_z")


# ------------------------------------------------------------------ rrp list
def test_list_shows_every_scenario_and_integrator_with_properties(tmp_path):
    res = rrp(tmp_path, "list")
    assert res.returncode == 0, res.stderr
    assert_no_traceback(res)
    lines = res.stdout.splitlines()
    for name in builtin_scenarios():
        sc = load_scenario(name)
        assert any(ln.split()[:1] == [name] and sc.title in ln for ln in lines), name
    for info in INTEGRATORS.values():
        assert any(ln.split()[:1] == [info.name] and info.properties() in ln
                   and info.reference in ln for ln in lines), info.name


def test_list_json(tmp_path):
    res = rrp(tmp_path, "list", "--json")
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert [s["name"] for s in data["scenarios"]] == builtin_scenarios()
    for s in data["scenarios"]:
        sc = load_scenario(s["name"])
        assert s["model"] == sc.model and s["integrator"] == sc.run.integrator
        assert s["h"] == sc.run.h and s["t_end"] == sc.run.t_end
    assert data["integrators"] == [i.as_dict() for i in INTEGRATORS.values()]


# ------------------------------------------------------------------ rrp run --json
@pytest.fixture(scope="module")
def pendulum_summary(tmp_path_factory):
    res = rrp(tmp_path_factory.mktemp("pend"), "run", "pendulum", "--t-end", "1", "--json")
    assert res.returncode == 0, res.stderr
    assert_no_traceback(res)
    return json.loads(res.stdout)


def test_run_json_summary(pendulum_summary):
    s = pendulum_summary
    assert s["scenario"] == "pendulum" and s["model"] == "pendulum"
    assert s["integrator"] == "rrp-exact" and s["h"] == 0.01  # the scenario's defaults
    assert s["status"] == "complete" and s["message"] == ""
    assert s["steps"] == 100 and s["t_reached"] == pytest.approx(1.0, abs=1e-12)
    assert s["records"] == 101  # every = 1, plus t = 0
    err = s["max_relative_energy_error"]
    assert isinstance(err, float) and 0.0 <= err < 1e-4
    assert abs(s["final_relative_energy_error"]) <= err
    drift = s["momentum_drift"]
    assert set(drift) == set(MOMENTA)
    assert all(isinstance(v, float) and math.isfinite(v) and v >= 0 for v in drift.values())
    assert drift["P_x"] == drift["P_y"] == drift["P_z"] == 0.0  # the pivot holds the body
    assert drift["L_z"] < 1e-12  # e₃·Ω conserved exactly (physics.md §4.1)
    assert drift["L_x"] > 1e-3  # gravity's moment does change L_x: a real measurement
    assert set(s["momentum_drift_relative"]) == set(MOMENTA)
    assert s["conserved"] == ["L_z"]
    assert s["identically_zero"] == ["P_x", "P_y", "P_z"]  # (issue #33 item 10)
    assert s["us_per_step"] > 0 and s["steps_per_second"] > 0
    assert s["steps_per_second"] == pytest.approx(1e6 / s["us_per_step"], rel=1e-9)
    # the stepping thread's own CPU a step (issue #36 item 15): not more than its wall time
    assert 0 < s["us_per_step_cpu"] <= 1.05 * s["us_per_step"] + 0.05
    assert s["version"] == __version__
    assert s["parameters"] == {p.name: p.default for p in MODELS["pendulum"].schema}


def test_run_summary_says_the_pendulum_has_no_P(tmp_path):
    """Issue #33 item 10: the pendulum's P is identically 0 (the pivot holds the body),
    so its lines say so, as the app's plot title does, and not "not conserved: external
    forces" (which stays for L_x, L_y, changed by gravity's moment)."""
    res = rrp(tmp_path, "run", "pendulum", "--t-end", "0.05")
    assert res.returncode == 0, res.stderr
    lines = {ln.split()[0]: ln for ln in res.stdout.splitlines()
             if ln.strip().startswith(("P_", "L_"))}
    for k in ("P_x", "P_y", "P_z"):
        assert "P ≡ 0: no translation" in lines[k] and "not conserved" not in lines[k]
    for k in ("L_x", "L_y"):
        assert "not conserved: external forces" in lines[k]
    assert "conserved by the variational schemes" in lines["L_z"]


# ------------------------------------------------------------------ HDF5 output
@pytest.fixture(scope="module")
def torus_run(tmp_path_factory):
    d = tmp_path_factory.mktemp("torus")
    res = rrp(d, "run", "torus", "--t-end", "0.3", "--every", "10", "--out", "run.h5")
    assert res.returncode == 0, res.stderr
    assert_no_traceback(res)
    return d / "run.h5"


def test_torus_output_layout(torus_run):
    model = load_scenario("torus").build_model()
    n, comps = model.n_bodies, energy_names(model)
    assert not list(torus_run.parent.glob("run.h5*.partial"))
    with h5py.File(torus_run, "r") as f:
        assert {"time", "energy", "momentum", "bodies", "parameters"} <= set(f)
        assert set(f) <= {"time", "energy", "momentum", "bodies", "parameters", "events",
                          "model", "checkpoint", "checkpoint_alt",
                          "checks"}  # schema 2 (output.md); /checks: the row digests (#36)
        assert "checks" in f and {"series", "frames"} <= set(f["checks"])
        assert f.attrs["schema_version"] == 3  # (issue #46 item 3)
        np.testing.assert_array_equal(f["model/bonds"][()], model.forcefield.bonds)
        t = f["time"][()]
        k = len(t)
        assert k == 31  # t = 0, 0.01, …, 0.3
        assert set(f["energy"]) == {*comps, "total", "relative_error"}
        assert set(comps) == {"translational", "rotational", "bending", "axial", "shear",
                              "contact", "wall"}
        for c in f["energy"]:
            assert f["energy"][c].shape == (k,), c
        assert set(f["momentum"]) == {"linear", "angular"}
        assert f["momentum/linear"].shape == (k, 3)
        assert f["momentum/angular"].shape == (k, 3)
        b = f["bodies"]
        assert set(b) == {"position", "quaternion", "omega", "time", "mass", "inertia",
                          "inertia_tensor", "diameter", "group", "velocity",
                          "momentum_body", "step", "dissipated"}
        assert b["group"][()].tolist() == [0] * n  # (one ring: issue #42 item 8)
        assert b["velocity"].shape == b["momentum_body"].shape == (k, n, 3)
        np.testing.assert_array_equal(b["step"][()], 10 * np.arange(k))
        assert b["position"].shape == (k, n, 3)
        assert b["quaternion"].shape == (k, n, 4)
        assert b["omega"].shape == (k, n, 3)
        np.testing.assert_array_equal(b["time"][()], t)
        np.testing.assert_array_equal(b["mass"][()], model.bodies.m)
        np.testing.assert_array_equal(b["inertia"][()], model.bodies.J)
        np.testing.assert_array_equal(b["inertia_tensor"][()], model.bodies.inertia)
        np.testing.assert_array_equal(b["diameter"][()], model.bodies.D)
        for name, ds in (("time", f["time"]), *(("e/" + c, f["energy"][c]) for c in f["energy"]),
                         ("P", f["momentum/linear"]), ("L", f["momentum/angular"]),
                         ("x", b["position"]), ("q", b["quaternion"]), ("w", b["omega"])):
            assert np.isfinite(ds[()]).all(), name


def test_torus_output_contents(torus_run):
    model = load_scenario("torus").build_model()
    comps = energy_names(model)
    with h5py.File(torus_run, "r") as f:
        t = f["time"][()]
        np.testing.assert_allclose(np.diff(t), 10 * 1e-3, rtol=0, atol=1e-12)
        assert t[0] == 0.0 and t[-1] == pytest.approx(0.3, abs=1e-12)
        e = {c: f["energy"][c][()] for c in f["energy"]}
        np.testing.assert_allclose(e["total"], sum(e[c] for c in comps), rtol=1e-13, atol=1e-12)
        e0 = e["total"][0]
        np.testing.assert_allclose(e["relative_error"], (e["total"] - e0) / e0, atol=1e-12)
        assert e["translational"][0] == pytest.approx(0.5 * 80 * 1.0)
        assert e["wall"][0] == 0.0 and e["wall"].max() > 0  # the ring hits the wall by t=0.3
        q = f["bodies/quaternion"][()]
        np.testing.assert_allclose(np.linalg.norm(q, axis=2), 1.0, atol=1e-12)
        x = f["bodies/position"][()]
        np.testing.assert_array_equal(x[0], model.initial_state.x)
        np.testing.assert_array_equal(f["bodies/omega"][0], model.initial_state.omega)
        np.testing.assert_allclose(f["momentum/linear"][0], [-80.0, 0.0, 0.0], atol=1e-12)
        # P_y, P_z are conserved exactly by rrp-newmark with the wall (physics.md §4.2)
        P = f["momentum/linear"][()]
        assert np.abs(P[:, 1:]).max() < 1e-10
        assert P[-1, 0] > P[0, 0]  # the wall has pushed back


def test_torus_output_attributes(torus_run):
    schema = MODELS["torus"].schema
    with h5py.File(torus_run, "r") as f:
        a = f.attrs
        assert a["scenario"] == "torus" and a["model"] == "torus"
        assert a["integrator"] == "rrp-newmark"
        assert a["h"] == 1e-3
        assert a["version"] == __version__
        assert a["status"] == "complete"
        params = json.loads(a["parameters"])
        assert params == {p.name: p.default for p in schema}
        g = f["parameters"].attrs
        assert set(g) == {p.name for p in schema}
        assert g["n_particles"] == 80 and g["k_axial"] == 200.0 and bool(g["wall"]) is True


def test_set_is_reflected_in_the_output_file(tmp_path):
    res = rrp(tmp_path, "run", "pendulum", "--t-end", "0.05", "--set", "omega0=[3,1,2]",
              "--out", "p.h5", "--quiet")
    assert res.returncode == 0, res.stderr
    with h5py.File(tmp_path / "p.h5", "r") as f:
        params = json.loads(f.attrs["parameters"])
        assert params["omega0"] == [3.0, 1.0, 2.0]
        np.testing.assert_allclose(params["alpha0"], [0.0, 2 * math.tan(3 * math.pi / 8), 0.0],
                                   rtol=1e-14)
        np.testing.assert_array_equal(f["parameters"].attrs["omega0"], [3.0, 1.0, 2.0])
        np.testing.assert_array_equal(f["bodies/omega"][0], [[3.0, 1.0, 2.0]])
        assert set(f["energy"]) == {"rotational", "gravity", "total", "relative_error"}


def test_a_user_toml_file_runs_like_a_name(tmp_path):
    (tmp_path / "mine.toml").write_text(
        'model = "pendulum"\n[run]\nintegrator = "rrp-newmark"\nh = 2e-2\nt_end = 0.2\n'
        "[parameters]\ng = 2.0\n", encoding="utf-8")
    res = rrp(tmp_path, "run", "mine.toml", "--json")
    assert res.returncode == 0, res.stderr
    s = json.loads(res.stdout)
    assert s["scenario"] == "mine" and s["integrator"] == "rrp-newmark"
    assert s["h"] == 2e-2 and s["steps"] == 10 and s["parameters"]["g"] == 2.0


# ------------------------------------------------------------------ bad input
BAD_INPUT = {
    "malformed-toml": ["run", "broken.toml"],
    "unknown-integrator": ["run", "pendulum", "--integrator", "euler"],
    "unknown-scenario": ["run", "no-such-scenario"],
    "negative-h": ["run", "pendulum", "--h", "-0.01"],
    "zero-h": ["run", "pendulum", "--h", "0"],
    "h-not-a-number": ["run", "pendulum", "--h", "abc"],
    "h-beyond-rrp-exact": ["run", "pendulum", "--set", "omega0=[0,0,50]", "--h", "0.05",
                           "--integrator", "rrp-exact"],
    "set-unknown-key": ["run", "pendulum", "--set", "colour=3"],
    "set-without-equals": ["run", "pendulum", "--set", "omega0"],
    "out-in-missing-dir": ["run", "pendulum", "--t-end", "0.05", "--out", "nodir/run.h5"],
}
EXPECTED_IN_MESSAGE = {
    "malformed-toml": "broken.toml",
    "unknown-integrator": "euler",
    "unknown-scenario": "no-such-scenario",
    "negative-h": "h",
    "zero-h": "h",
    "h-not-a-number": "abc",
    "h-beyond-rrp-exact": "rrp-exact",
    "set-unknown-key": "colour",
    "set-without-equals": "omega0",
    "out-in-missing-dir": "nodir",
}


@pytest.mark.parametrize("case", list(BAD_INPUT))
def test_bad_input_is_one_line_on_stderr(tmp_path, case):
    (tmp_path / "broken.toml").write_text('model = "torus\n', encoding="utf-8")
    res = rrp(tmp_path, *BAD_INPUT[case])
    line = assert_one_line_error(res)
    assert res.returncode == 2, (res.returncode, line)
    assert EXPECTED_IN_MESSAGE[case] in line, line
    assert not (tmp_path / "nodir").exists()


def test_failed_validation_keeps_an_existing_output_file(tmp_path):
    res = rrp(tmp_path, "run", "pendulum", "--t-end", "0.05", "--out", "keep.h5", "--quiet")
    assert res.returncode == 0, res.stderr
    keep = tmp_path / "keep.h5"
    before = keep.read_bytes()
    for bad in (["--h", "-1"], ["--set", "colour=3"], ["--integrator", "euler"],
                ["--set", "omega0=[0,0,50]", "--h", "0.05", "--integrator", "rrp-exact"]):
        res = rrp(tmp_path, "run", "pendulum", "--t-end", "0.05", "--out", "keep.h5", *bad)
        assert_one_line_error(res)
        assert keep.read_bytes() == before, bad
        assert not list(tmp_path.glob("keep.h5*.partial")), bad
    with h5py.File(keep, "r") as f:
        assert f.attrs["status"] == "complete" and len(f["time"]) == 6


# ------------------------------------------------------------------ blow-up
@pytest.mark.parametrize("extra", [
    [],
    ["--every", "1", "--json"],
    ["--every", "1", "--energy-tolerance", "1e300"],  # caught as non-finite instead
], ids=["as-given", "every-step", "non-finite"])
def test_blow_up_keeps_a_readable_failed_file(tmp_path, extra):
    res = rrp(tmp_path, "run", "torus", "--h", "0.05", "--t-end", "1", "--out", "blow.h5",
              *extra)
    assert res.returncode == 1, res.stderr
    assert_no_traceback(res)
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("rrp: error:")]
    assert len(errors) == 1, res.stderr
    m = re.search(r"stability limit\D*?(\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)", errors[0])
    assert m, res.stderr
    assert 0 < float(m.group(1)) < 0.05  # the limit is below the step that blew up
    out = tmp_path / "blow.h5"
    assert out.is_file()
    assert not list(tmp_path.glob("blow.h5*.partial"))
    with h5py.File(out, "r") as f:
        assert f.attrs["status"] == "failed"
        assert "stability limit" in f.attrs["message"]
        t = f["time"][()]
        t_final = float(f.attrs["t_final"])
        assert len(t) >= 1 and t[0] == 0.0
        assert np.all(np.diff(t) > 0)
        assert t[-1] <= t_final + 1e-12 and t_final < 1.0
        datasets = []
        f.visititems(lambda name, o: datasets.append(name) if isinstance(o, h5py.Dataset)
                     else None)
        assert "bodies/position" in datasets and "energy/total" in datasets
        for name in datasets:
            assert np.isfinite(f[name][()]).all(), name
            if name.startswith(("energy/", "momentum/", "bodies/position", "bodies/quat",
                                "bodies/omega", "bodies/time")):
                assert f[name].shape[0] == len(t), name
        if "--every" in extra:
            # every step is recorded: the file ends exactly at the last good step
            assert t[-1] == pytest.approx(t_final, abs=1e-12)
            assert len(t) == int(f.attrs["steps"]) + 1 >= 2
            np.testing.assert_allclose(np.diff(t), 0.05, atol=1e-12)
    if "--json" in extra:
        s = json.loads(res.stdout)
        assert s["status"] == "failed" and s["t_reached"] == pytest.approx(t_final)


# ------------------------------------------------------------------ issue #10 §7
@pytest.mark.parametrize("args", [["--h", "1e-300"], ["--t-end", "1e9", "--h", "1e-3"]],
                         ids=["h-1e-300", "t-end-huge"])
def test_runs_that_can_never_finish_are_refused_naming_the_step_count(tmp_path, args):
    for quiet in ([], ["-q"]):
        res = rrp(tmp_path, "run", "pendulum", *args, *quiet)
        line = assert_one_line_error(res)
        assert res.returncode == 2
        assert "steps" in line and "limit is 1e+10" in line, line
        assert ("1e+302 steps" in line) if "1e-300" in args else "1e+12 steps" in line, line


def test_progress_lines_when_stderr_is_not_a_terminal(tmp_path):
    env = dict(os.environ, RRP_PROGRESS_EVERY="0",
               PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH"))
                                          if p))
    res = subprocess.run([sys.executable, "-m", "app", "run", "pendulum", "--t-end", "2"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("rrp: t = ")]
    assert len(lines) >= 10 and "steps/s" in lines[0], res.stderr
    res = subprocess.run([sys.executable, "-m", "app", "run", "pendulum", "--t-end", "2", "-q"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0 and res.stderr == "", res.stderr


def test_blow_up_names_the_resume_command_and_it_works(tmp_path):
    res = rrp(tmp_path, "run", "torus", "--h", "0.05", "--t-end", "1", "--out", "b.h5")
    assert res.returncode == 1, res.stderr
    err = [ln for ln in res.stderr.splitlines() if ln.startswith("rrp: error:")][0]
    m = re.search(r"\(rrp run --resume b\.h5 --h (\S+) --t-end 1\)", err)
    assert m and "kept in b.h5" in err, err
    res = rrp(tmp_path, "run", "--resume", "b.h5", "--h", m.group(1), "--t-end", "0.5", "-q")
    assert res.returncode == 0, res.stderr
    with h5py.File(tmp_path / "b.h5", "r") as f:
        assert f.attrs["status"] == "complete"
        assert f["events"][-1]["kind"] in (b"h", "h")
    res = rrp(tmp_path, "run", "torus", "--h", "0.05", "--t-end", "1")
    err = [ln for ln in res.stderr.splitlines() if ln.startswith("rrp: error:")][0]
    assert "write the run with --out FILE to be able to resume" in err, err


@pytest.mark.slow  # compiles in fresh caches (docs/testing.md)
def test_a_cache_is_told_to_hold_a_runs_loop_or_not(tmp_path):
    """``rrp run`` compiles the kernels in a process of their own when the cache lacks
    the run's stepping loop (the compiler's memory would stay with the run's): the check
    is per scheme and per force-field family."""
    code = ("import sys; from engine.priming import run_kernels_cached, prime_run_kernels; "
            "from engine.specialize import marker_of_code; f = marker_of_code(0); "
            "g = marker_of_code(2); print(run_kernels_cached(1, f), run_kernels_cached(3, f), "
            "run_kernels_cached(1, g)); sys.argv[1:] and prime_run_kernels(1, f)")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    first = subprocess.run([sys.executable, "-c", code, "prime"], env=env, cwd=ROOT,
                           capture_output=True, text=True, timeout=900)
    assert first.returncode == 0, first.stderr
    assert first.stdout.split() == ["False", "False", "False"]
    again = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT,
                           capture_output=True, text=True, timeout=900)
    assert again.returncode == 0, again.stderr
    assert again.stdout.split() == ["True", "False", "False"]


@pytest.mark.slow  # compiles into a fresh cache (docs/testing.md)
def test_rrp_compile_builds_a_runs_kernels_once(tmp_path, monkeypatch):
    """``rrp compile SCENARIO -i NAME``: the first call compiles the run's kernels, the
    next finds them cached; a scheme that cannot drive the model, or an unknown one, is
    one line (issue #25 §5)."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    first = rrp(tmp_path, "compile", "pendulum", "-i", "rrp-newmark")
    assert first.returncode == 0, first.stderr
    assert "pendulum · rrp-newmark: compiled" in first.stdout, first.stdout
    again = rrp(tmp_path, "compile", "pendulum", "-i", "rrp-newmark")
    assert again.returncode == 0, again.stderr
    assert "pendulum · rrp-newmark: cached" in again.stdout, again.stdout
    assert "0 compiled, 1 already cached" in again.stdout
    msg = assert_one_line_error(rrp(tmp_path, "compile", "pendulum", "-i", "moreau"))
    assert "moreau" in msg
    msg = assert_one_line_error(rrp(tmp_path, "compile", "pendulum", "-i", "nope", "-q"))
    assert "unknown integrator 'nope'" in msg


# ------------------------------------------------------------------ issue #27 §3, §5
def rrp_no_display(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """:func:`rrp` without a display: ``rrp gui`` input that passes its checks stops at
    "needs a desktop session" instead of opening a window."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return subprocess.run([sys.executable, "-m", "app", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("h", ["0", "nan", "-1", "inf"])
def test_a_step_that_is_no_step_is_named_so_by_run_and_gui(tmp_path, h):
    """``--h 0`` and ``--h nan`` said "infinitely many steps … raise h"."""
    for command in ("run", "gui"):
        res = rrp_no_display(tmp_path, command, "pendulum", "--h", h)
        line = assert_one_line_error(res)
        assert res.returncode == 2
        assert f"h must be a positive, finite time step, got {h}" in line, (command, line)


def test_rrp_gui_refuses_a_step_that_could_never_reach_the_end_as_rrp_run_does(tmp_path):
    gui = rrp_no_display(tmp_path, "gui", "pendulum", "--h", "1e-300")
    run = rrp_no_display(tmp_path, "run", "pendulum", "--h", "1e-300")
    line = assert_one_line_error(gui)
    assert gui.returncode == 2 and "1e+302 steps" in line, line
    assert gui.stderr == run.stderr


def test_a_scenario_whose_scheme_cannot_drive_its_model_is_refused_as_i_is(tmp_path):
    """A file's ``run.integrator`` that cannot drive its model used to be replaced (with
    a note naming the contact model, silently under -q); ``-i`` with it is refused."""
    text = (ROOT / "assets" / "scenarios" / "dumbbells.toml").read_text(encoding="utf-8")
    assert 'integrator = "lgvi"' in text
    (tmp_path / "db.toml").write_text(text.replace('integrator = "lgvi"',
                                                   'integrator = "rrp-newmark"'))
    for quiet in ([], ["-q"]):
        for args in (["db.toml"], ["dumbbells", "-i", "rrp-newmark"]):
            res = rrp(tmp_path, "run", *args, "--t-end", "0.01", *quiet)
            line = assert_one_line_error(res)
            assert res.returncode == 2, line
            assert "non-spherical bodies" in line and "contact" not in line, line
            assert "choose one of" in line and "lgvi" in line, line


def test_a_scheme_replaced_because_set_changed_the_model_is_noted_with_the_reason(tmp_path):
    res = rrp(tmp_path, "run", "torus", "--set", "contact=hard", "--t-end", "0.002")
    assert res.returncode == 0, res.stderr
    notes = [ln for ln in res.stderr.splitlines() if ln.startswith("note:")]
    assert len(notes) == 1 and "has hard contacts" in notes[0], res.stderr
    assert notes[0].endswith("using moreau-symmetric"), notes[0]
    assert "moreau-symmetric" in res.stdout


@pytest.mark.parametrize("args, named", [
    (("pendulum", "--set", "omega0=[1e300,0,0]"), "omega0[0] = 1e+300 is out of range"),
    (("torus", "--set", "v0=1e300"), "v0 = 1e+300 is out of range"),
])
def test_a_start_no_step_can_run_names_the_value_not_h(tmp_path, args, named):
    """An initial state whose energy overflows used to be "blown up … lower h" (or an
    internal error), with numpy warnings on stderr (issue #27, issue #26 §7); now the
    validator refuses the value itself (every number within ±1e30, docs/scenarios.md)."""
    res = rrp(tmp_path, "run", *args, "--t-end", "0.01", "-q")
    line = assert_one_line_error(res)
    assert named in line and "lower h" not in line, line
    assert "Warning" not in res.stderr


def test_a_too_strict_energy_tolerance_is_not_called_a_blow_up(tmp_path):
    res = rrp(tmp_path, "run", "pendulum", "--t-end", "0.1", "--energy-tolerance", "1e-300",
              "-q")
    line = assert_one_line_error(res)
    assert "beyond the energy tolerance 1e-300" in line and "blew up" not in line, line
    assert "stiff" not in line


@pytest.mark.parametrize("name", ["energy-stepping:0", "energy-stepping:abc",
                                  "energy-stepping:1", "energy-stepping:nan"])
def test_run_refuses_a_bad_energy_stepping_eps_in_one_line(tmp_path, name):
    """(energy-stepping's runs: ``tests/test_energy_stepping_wiring.py``.)"""
    res = rrp(tmp_path, "run", "pendulum", "-i", name, "--t-end", "1")
    assert res.returncode == 2
    line = assert_one_line_error(res)
    assert name in line and "energy-stepping:1e-4" in line, line


def test_run_refuses_energy_stepping_on_a_model_it_cannot_drive(tmp_path):
    res = rrp(tmp_path, "run", "dumbbells", "-i", "energy-stepping", "--t-end", "0.01")
    assert res.returncode == 2
    line = assert_one_line_error(res)
    assert "energy-stepping needs spherical bodies" in line and "use lgvi" in line


@pytest.mark.parametrize(("argv", "named"), [
    (["export", "pendulum", "--t0", "-1e300", "--out", "x.mp4"], "--t0 = -1e+300 must lie in"),
    (["export", "pendulum", "--size", "-5x5", "--out", "x.mp4"], "got '-5x5'"),
    (["run", "pendulum", "--h", "-.5"], "got -0.5"),
    (["run", "pendulum", "--h", "-1e-3"], "got -0.001"),
])
def test_a_negative_number_as_an_options_value_is_its_value(tmp_path, capsys, argv, named):
    """``--t0 -1e300`` is the value -1e300 refused by --t0's own check, not argparse's
    "expected one argument" (issue #47 item 8)."""
    from app.cli import main

    code = main([*argv[:-1], str(tmp_path / argv[-1])] if argv[-2] == "--out" else argv)
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1, err
    assert named in err and "expected one argument" not in err, err
    assert not (tmp_path / "x.mp4").exists()


@pytest.mark.parametrize("args", [("run", "pendulum", "--t-end", "0.1", "--out", "p.h5"),
                                  ("export", "pendulum", "--t-end", "0.1", "--out", "p.gif")])
def test_a_lock_file_that_cannot_be_made_names_the_output_given(tmp_path, args):
    """A refusal names the path the user gave, not an internal file alone: "Is a
    directory: p.h5.lock" said nothing of p.h5 (issue #42 item 11)."""
    out = args[-1]
    (tmp_path / f"{out}.lock").mkdir()
    res = rrp(tmp_path, *args, "-q")
    line = assert_one_line_error(res)
    assert res.returncode in (1, 2) and line.startswith(f"rrp: error: cannot write {out}: "
                                                        f"its lock file {out}.lock"), line
    assert not (tmp_path / out).exists()


def test_a_resumed_runs_summary_names_each_scheme_with_its_interval(tmp_path):
    """The summary's figures cover the whole file, so it names every scheme and step
    with the time each covered, those before the resume too (it named only the new one:
    issue #42 item 11)."""
    assert rrp(tmp_path, "run", "pendulum", "--t-end", "0.1", "--out", "r.h5",
               "-q").returncode == 0
    res = rrp(tmp_path, "run", "--resume", "r.h5", "-i", "rrp-newmark", "--t-end", "0.2",
              "--json")
    assert res.returncode == 0, res.stderr
    s = json.loads(res.stdout)
    assert s["integrator"] == "rrp-newmark"
    assert s["schemes"] == [
        {"integrator": "rrp-exact", "h": 0.01, "t0": 0.0, "t1": pytest.approx(0.1)},
        {"integrator": "rrp-newmark", "h": 0.01, "t0": pytest.approx(0.1),
         "t1": pytest.approx(0.2)}]
    res = rrp(tmp_path, "run", "--resume", "r.h5", "--h", "0.005", "--t-end", "0.3")
    line = next(ln for ln in res.stdout.splitlines() if ln.lstrip().startswith("schemes"))
    assert "rrp-exact, h = 0.01 (t = 0 → 0.1); rrp-newmark, h = 0.01 (t = 0.1 → 0.2); " \
        "rrp-newmark, h = 0.005 (t = 0.2 → 0.3)" in line, line
