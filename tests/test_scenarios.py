"""Scenario files: the built-ins load, their defaults match docs/physics.md §4.1–4.2,
user files and ``--set`` overrides work, and every mistake is a one-line
:class:`ScenarioError` that names the offending key."""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pytest

from engine.integrators import INTEGRATORS
from engine.models import MODELS
from engine.rotations import quat_to_matrix
from engine.scenarios import (
    SCENARIO_DIR,
    RunSettings,
    ScenarioError,
    builtin_scenarios,
    load_scenario,
    parse_set,
    parse_sets,
    scenario_from_dict,
)

D_T = 3.0
N_P = 80
D_P = D_T * math.sin(math.pi / N_P)


@pytest.fixture(scope="module")
def torus():
    return load_scenario("torus").build_model()


@pytest.fixture(scope="module")
def pendulum():
    return load_scenario("pendulum").build_model()


def _write(tmp_path, text: str, name: str = "user.toml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p


# ------------------------------------------------------------------ built-ins
def test_the_builtin_scenarios_are_the_asset_files():
    names = builtin_scenarios()
    assert names == sorted(p.stem for p in SCENARIO_DIR.glob("*.toml"))
    assert {"pendulum", "torus", "torus-free"} <= set(names)


@pytest.mark.parametrize("name", builtin_scenarios())
def test_every_builtin_scenario_loads_and_builds(name):
    sc = load_scenario(name)
    assert sc.name == name
    assert sc.model in MODELS
    assert sc.title and isinstance(sc.title, str)
    assert sc.run.integrator in INTEGRATORS
    assert sc.run.h > 0 and sc.run.t_end > 0 and sc.run.every >= 1
    # every parameter of the model's schema is resolved, nothing else
    assert set(sc.params) == {p.name for p in MODELS[sc.model].schema}
    model = sc.build_model()
    st = model.initial_state
    n = model.n_bodies
    assert n >= 1
    assert st.x.shape == (n, 3) and st.q.shape == (n, 4)
    assert st.is_finite()
    np.testing.assert_allclose(np.linalg.norm(st.q, axis=1), 1.0, atol=1e-14)
    assert model.energy_components


def test_torus_scenario_file_lists_every_parameter_with_its_default():
    sc = load_scenario("torus")
    defaults = {p.name: p.default for p in MODELS["torus"].schema}
    assert sc.params == defaults
    assert sc.run == RunSettings("rrp-newmark", 1e-3, 25.0, 10, 1.0)


def test_torus_defaults_match_physics_md(torus):
    p = torus.params
    assert p["n_particles"] == N_P and p["ring_diameter"] == D_T
    assert p["mass"] == 1.0 and p["inertia"] == 1.0
    assert p["k_bend"] == 10.0 and p["k_axial"] == 200.0 and p["k_shear"] == 200.0
    assert p["k_contact"] == 2100.0 and p["k_wall"] == 2100.0
    assert p["v0"] == 1.0 and p["wall"] is True and p["tilt"] == 0.0
    assert torus.n_bodies == N_P
    np.testing.assert_allclose(torus.bodies.D, D_P, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(torus.bodies.m, 1.0)
    np.testing.assert_array_equal(torus.bodies.J, 1.0)


def test_torus_neighbours_touch_and_ring_geometry(torus):
    x = torus.initial_state.x
    gaps = np.linalg.norm(x - np.roll(x, -1, axis=0), axis=1)  # includes (N-1, 0)
    np.testing.assert_allclose(gaps, D_P, rtol=0, atol=1e-12)
    centre = np.array([D_T / 2 + D_P, 0.0, 0.0])
    np.testing.assert_allclose(x.mean(axis=0), centre, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(x - centre, axis=1), D_T / 2, atol=1e-12)
    np.testing.assert_array_equal(x[:, 2], 0.0)  # in the x–y plane
    # only one sphere comes within reach of the wall first, and it does not touch it
    assert x[:, 0].min() == pytest.approx(D_P, abs=1e-12)


def test_torus_initial_motion(torus):
    st = torus.initial_state
    np.testing.assert_array_equal(st.v, np.tile([-1.0, 0.0, 0.0], (N_P, 1)))
    np.testing.assert_array_equal(st.omega, 0.0)
    np.testing.assert_array_equal(st.q, np.tile([1.0, 0.0, 0.0, 0.0], (N_P, 1)))
    assert torus.wall is not None
    normal, xw = torus.wall
    np.testing.assert_array_equal(normal, [1.0, 0.0, 0.0])
    assert xw == 0.0
    assert set(torus.conserved) == {"P_y", "P_z", "L_x"}
    assert {"translational", "rotational", "bending", "axial", "shear", "contact",
            "wall"} == set(torus.energy_components)


def test_torus_free_has_no_wall_and_conserves_all_momenta():
    m = load_scenario("torus-free").build_model()
    assert m.wall is None
    assert "wall" not in m.energy_components
    assert set(m.conserved) == {"P_x", "P_y", "P_z", "L_x", "L_y", "L_z"}
    assert np.abs(m.initial_state.omega).max() > 0  # spin noise applied


def test_pendulum_defaults_match_physics_md(pendulum):
    p = pendulum.params
    assert p["mass"] == p["g"] == p["inertia"] == 1.0
    np.testing.assert_allclose(p["alpha0"], [0.0, 2 * math.tan(3 * math.pi / 8), 0.0],
                               rtol=1e-14)
    np.testing.assert_allclose(p["omega0"], [0.2, 0.0, 0.2], rtol=0, atol=1e-15)
    st = pendulum.initial_state
    assert pendulum.n_bodies == 1
    R = quat_to_matrix(st.q)[0]
    r_rho0 = R @ np.array([0.0, 0.0, 1.0])
    c = math.radians(135.0)
    np.testing.assert_allclose(r_rho0, [math.sin(c), 0.0, math.cos(c)], rtol=0, atol=1e-14)
    assert abs(float(r_rho0 @ st.omega[0])) < 1e-15
    np.testing.assert_array_equal(st.x, 0.0)
    np.testing.assert_array_equal(st.v, 0.0)
    assert pendulum.pivot is not None
    np.testing.assert_array_equal(pendulum.pivot, 0.0)
    assert set(pendulum.energy_components) == {"rotational", "gravity"}


# ------------------------------------------------------------------ user files
def test_a_user_toml_path_works_like_a_name(tmp_path):
    p = _write(tmp_path, """
        title = "My ring"
        model = "torus"
        [run]
        integrator = "pfc-verlet"
        h = 5e-4
        t_end = 2.0
        every = 3
        [parameters]
        n_particles = 12
        v0 = 0.5
        """, "my-ring.toml")
    for arg in (p, str(p)):
        sc = load_scenario(arg)
        assert sc.name == "my-ring" and sc.title == "My ring" and sc.model == "torus"
        assert sc.run == RunSettings("pfc-verlet", 5e-4, 2.0, 3, 1.0)
        assert sc.params["n_particles"] == 12 and sc.params["v0"] == 0.5
        assert sc.params["k_axial"] == 200.0  # unspecified: the default
        m = sc.build_model()
        assert m.n_bodies == 12
        np.testing.assert_array_equal(m.initial_state.v[:, 0], -0.5)


def test_a_minimal_user_file_gets_default_run_settings(tmp_path):
    p = _write(tmp_path, 'model = "pendulum"\n')
    sc = load_scenario(p)
    assert sc.run == RunSettings()
    assert sc.params == {q.name: q.default for q in MODELS["pendulum"].schema}


# ------------------------------------------------------------------ --set overrides
def test_parse_set_reads_values_as_toml():
    assert parse_set("omega0=[3,1,2]") == ("omega0", [3, 1, 2])
    key, val = parse_set("wall=false")
    assert key == "wall" and val is False
    key, val = parse_set("v0=2")
    assert key == "v0" and val == 2 and isinstance(val, int)
    assert parse_set(" tilt = 12.5 ") == ("tilt", 12.5)
    assert parse_set("name=hello world") == ("name", "hello world")
    assert parse_sets(["v0=2", "wall=false", "v0=3"]) == {"v0": 3, "wall": False}


@pytest.mark.parametrize("expr", ["v0", "=3", " =3"])
def test_parse_set_rejects_malformed_expressions(expr):
    with pytest.raises(ScenarioError) as ei:
        parse_set(expr)
    msg = str(ei.value)
    assert "\n" not in msg and "--set" in msg


def test_overrides_apply_and_are_validated():
    sc = load_scenario("pendulum", parse_sets(["omega0=[3,1,2]"]))
    assert sc.params["omega0"] == [3.0, 1.0, 2.0]
    assert all(isinstance(c, float) for c in sc.params["omega0"])
    assert sc.overrides == {"omega0": [3, 1, 2]}
    np.testing.assert_array_equal(sc.build_model().initial_state.omega, [[3.0, 1.0, 2.0]])

    sc = load_scenario("torus", parse_sets(["wall=false", "v0=2"]))
    assert sc.params["wall"] is False
    assert sc.params["v0"] == 2.0 and isinstance(sc.params["v0"], float)
    m = sc.build_model()
    assert m.wall is None
    np.testing.assert_array_equal(m.initial_state.v[:, 0], -2.0)


def test_with_overrides_keeps_the_original_untouched():
    base = load_scenario("torus")
    new = base.with_overrides({"v0": 3})
    assert base.params["v0"] == 1.0 and new.params["v0"] == 3.0


@pytest.mark.parametrize("overrides, key", [
    ({"nope": 1}, "nope"),
    ({"v0": "fast"}, "v0"),
    ({"wall": 1}, "wall"),
    ({"n_particles": 2}, "n_particles"),
])
def test_bad_overrides_raise_one_line_errors(overrides, key):
    with pytest.raises(ScenarioError) as ei:
        load_scenario("torus", overrides)
    msg = str(ei.value)
    assert "\n" not in msg and key in msg


# ------------------------------------------------------------------ perturbations
def _torus(**params):
    return MODELS["torus"].make(params).initial_state


def test_noise_is_reproducible_and_depends_on_the_seed():
    a = _torus(velocity_noise=0.3, spin_noise=2.0, seed=7)
    b = _torus(velocity_noise=0.3, spin_noise=2.0, seed=7)
    c = _torus(velocity_noise=0.3, spin_noise=2.0, seed=8)
    plain = _torus()
    np.testing.assert_array_equal(a.v, b.v)
    np.testing.assert_array_equal(a.omega, b.omega)
    assert not np.array_equal(a.v, c.v)
    assert not np.array_equal(a.omega, c.omega)
    assert not np.array_equal(a.v, plain.v)
    # the perturbation has about the requested size, and positions stay put
    dv = a.v - plain.v
    assert 0.2 < dv.std() < 0.4
    assert 1.5 < a.omega.std() < 2.5
    np.testing.assert_array_equal(a.x, plain.x)


def test_velocity_and_spin_noise_act_separately():
    v_only = _torus(velocity_noise=0.3, seed=3)
    s_only = _torus(spin_noise=2.0, seed=3)
    plain = _torus()
    assert not np.array_equal(v_only.v, plain.v)
    np.testing.assert_array_equal(v_only.omega, 0.0)
    np.testing.assert_array_equal(s_only.v, plain.v)
    assert np.abs(s_only.omega).max() > 0


def test_seed_without_noise_changes_nothing():
    np.testing.assert_array_equal(_torus(seed=5).v, _torus(seed=6).v)


@pytest.mark.parametrize("tilt", [30.0, -45.0])
def test_tilt_rotates_the_ring_about_y(tilt):
    flat = _torus().x
    tilted = _torus(tilt=tilt).x
    centre = np.array([D_T / 2 + D_P, 0.0, 0.0])
    t = math.radians(tilt)
    rot_y = np.array([[math.cos(t), 0.0, math.sin(t)], [0.0, 1.0, 0.0],
                      [-math.sin(t), 0.0, math.cos(t)]])
    np.testing.assert_allclose(tilted, centre + (flat - centre) @ rot_y.T, atol=1e-12)
    np.testing.assert_allclose(tilted.mean(axis=0), centre, atol=1e-12)
    np.testing.assert_array_equal(tilted[:, 1], flat[:, 1])
    # the ring's plane normal is R_y e3
    normal = np.cross(tilted[1] - centre, tilted[N_P // 4 + 1] - centre)
    normal /= np.linalg.norm(normal)
    assert abs(normal @ np.array([math.sin(t), 0.0, math.cos(t)])) == pytest.approx(1.0)
    gaps = np.linalg.norm(tilted - np.roll(tilted, -1, axis=0), axis=1)
    np.testing.assert_allclose(gaps, D_P, atol=1e-12)


# ------------------------------------------------------------------ errors
def _error_of(tmp_path, text: str) -> str:
    p = _write(tmp_path, text)
    with pytest.raises(ScenarioError) as ei:
        load_scenario(p)
    msg = str(ei.value)
    assert msg.strip() and "\n" not in msg, repr(msg)
    assert "user.toml" in msg  # names the file
    return msg


@pytest.mark.parametrize("text, needles", [
    ('model = "torus\n', ["invalid TOML"]),
    ('model = "torus"\n[parameters\n', ["invalid TOML"]),
    ('model = "torus"\ncolour = "red"\n', ["colour"]),
    ('model = "torus"\n[run]\nspeed = 3\n', ["run.speed"]),
    ('model = "torus"\n[parameters]\nradius = 3\n', ["radius"]),
    ('model = "torus"\n[parameters]\nn_particles = 2.5\n', ["n_particles"]),
    ('model = "torus"\n[parameters]\nwall = "yes"\n', ["wall"]),
    ('model = "pendulum"\n[parameters]\nomega0 = [1, 2]\n', ["omega0"]),
    ('model = "pendulum"\n[parameters]\nomega0 = [1, 2, "x"]\n', ["omega0"]),
    ('model = "torus"\n[parameters]\nmass = -1\n', ["mass", "range"]),
    ('model = "torus"\n[parameters]\nn_particles = 2\n', ["n_particles", "range"]),
    ('model = "torus"\n[parameters]\nseed = -1\n', ["seed", "range"]),
    ('model = "torus"\n[parameters]\ntilt = 91\n', ["tilt", "range"]),
    ('model = "spring"\n', ["spring", "model"]),
    ('title = "no model"\n', ["model"]),
    ('model = 3\n', ["model"]),
    ('model = "torus"\nparameters = 3\n', ["parameters"]),
    ('model = "torus"\nrun = 3\n', ["run"]),
    ('model = "torus"\ntitle = 3\n', ["title"]),
    ('model = "torus"\n[run]\nh = 0\n', ["run.h"]),
    ('model = "torus"\n[run]\nh = -1e-3\n', ["run.h"]),
    ('model = "torus"\n[run]\nh = "fast"\n', ["run.h"]),
    ('model = "torus"\n[run]\nh = nan\n', ["run.h"]),
    ('model = "torus"\n[run]\nt_end = 0\n', ["run.t_end"]),
    ('model = "torus"\n[run]\nevery = 0\n', ["run.every"]),
    ('model = "torus"\n[run]\nevery = 2.0\n', ["run.every"]),
    ('model = "torus"\n[run]\nintegrator = "euler"\n', ["run.integrator", "euler"]),
])
def test_bad_scenario_files_give_one_line_errors_naming_the_key(tmp_path, text, needles):
    msg = _error_of(tmp_path, text)
    for needle in needles:
        assert needle in msg, msg


@pytest.mark.parametrize("value", ['["rk4"]', "{ a = 1 }"])
def test_unhashable_run_integrator_is_a_scenario_error(tmp_path, value):
    msg = _error_of(tmp_path, f'model = "torus"\n[run]\nintegrator = {value}\n')
    assert "run.integrator" in msg


def test_unknown_scenario_name_lists_the_builtins():
    with pytest.raises(ScenarioError) as ei:
        load_scenario("no-such-scenario")
    msg = str(ei.value)
    assert "\n" not in msg and "no-such-scenario" in msg
    for name in builtin_scenarios():
        assert name in msg


@pytest.mark.parametrize("rel", ["missing.toml", "sub/missing", "missing-dir/x.toml"])
def test_missing_file_is_a_one_line_error(tmp_path, rel):
    with pytest.raises(ScenarioError) as ei:
        load_scenario(tmp_path / rel)
    msg = str(ei.value)
    assert "\n" not in msg and "not found" in msg and rel.split("/")[-1] in msg


def test_scenario_from_dict_validates_like_a_file():
    sc = scenario_from_dict({"model": "pendulum", "parameters": {"g": 9.81}})
    assert sc.params["g"] == 9.81
    with pytest.raises(ScenarioError, match="gravity"):
        scenario_from_dict({"model": "pendulum", "parameters": {"gravity": 9.81}})


def test_a_wall_with_friction_leaves_no_momentum_conserved():
    """The hard torus has μ = 0.5 at the wall: its tangential impulses change P_y (0.7 %
    of the momentum scale by t = 3), so the summary must not call it conserved."""
    hard = load_scenario("torus-hard").build_model()
    assert hard.params["mu"] > 0 and hard.conserved == ()
    free = load_scenario("torus-hard", {"mu": 0.0}).build_model()
    assert set(free.conserved) == {"P_y", "P_z", "L_x"}
