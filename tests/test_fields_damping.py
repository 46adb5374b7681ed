"""Dipoles and charges in uniform fields, viscous damping (issue #44 items 3 and 4;
docs/physics.md §4.6): the field's loads against finite differences of its energy,
momentum where the field leaves it, and the two balances — ``E + field work`` for a
ramped field and ``E + dissipated`` for damping — constant to the scheme's second
order (the error at ``h`` about 4× that at ``h/2``, for ``rrp-newmark``).

Every run here is of one force-field family (bonds, contacts, field and damping), so
the file compiles one stepping loop."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import fd_loads

from engine.drivers import simulation_for
from engine.forcefield import evaluate
from engine.layout import (
    E_DISSIPATED,
    E_FIELD,
    E_FIELD_WORK,
    ENERGY_NAMES,
    T_BONDS,
    T_DAMPING,
    T_FIELD,
)
from engine.models.assembly import model_of
from engine.models.builders import chain
from engine.rotations import quat_from_rotvec

RNG = np.random.default_rng(44)
MU = RNG.normal(size=(4, 3))


def _model(field=(0.0, 0.0, 2.0), ramp=None, gamma=0.0, gamma_rot=0.0, charges=None):
    """Four bonded spheres in a chain, spinning, with body-frame dipoles; a field on
    group 1 (spheres 1..3) and damping on every sphere."""
    m = model_of([chain(4, 1.0, velocity=(0.2, -0.1, 0.05), spin=(0.4, -0.3, 0.6))])
    ff = m.forcefield
    ff.set_groups(np.array([0, 1, 1, 1]))
    ff.set_dipoles(MU)
    if charges is not None:
        ff.set_charges(charges)
    ff.add_field(field, group=1, ramp=ramp)
    ff.set_damping(np.full(4, gamma), np.full(4, gamma_rot))
    ff.flags[T_DAMPING] = 1  # (γ = 0 too: one family for the whole file)
    return m


def test_the_field_loads_are_minus_the_gradient_of_its_energy():
    m = _model(field=(0.3, -0.7, 1.1), ramp=(0.0, 1.0, 0.5, 2.0),
               charges=np.array([0.5, -0.3, 0.2, 0.7]))
    ff = m.forcefield.working_copy()
    ff.add_field((0.2, 0.1, -0.4))  # a second field, on every sphere, constant
    ff.flags[T_BONDS] = 0  # (the field's energy alone)
    ff.set_field_time(0.4)  # in the ramp: s = 0.5 + 1.5·0.4
    x = 1.5 * m.initial_state.x + RNG.normal(scale=0.05, size=(4, 3))  # (no contacts)
    q = quat_from_rotvec(RNG.normal(size=(4, 3)))
    F, RM, e = evaluate(ff, x, q)
    assert e[E_FIELD] != 0.0 and np.abs(RM).max() > 0.1 and np.abs(F).max() > 0.1
    f_fd, rm_fd = fd_loads(ff, x, q, E_FIELD, 1e-5, 1e-5)
    np.testing.assert_allclose(F, f_fd, atol=1e-8)
    np.testing.assert_allclose(RM, rm_fd, atol=1e-8)
    # −μ·E with the dipole turned by the body (R μ), the ramp's scale, sphere 0 outside
    from engine.rotations import quat_to_matrix
    s = 0.5 + 1.5 * 0.4
    mu_s = np.einsum("nij,nj->ni", quat_to_matrix(q), MU)
    e1 = np.array([0.3, -0.7, 1.1])
    e2 = np.array([0.2, 0.1, -0.4])
    charge = np.array([0.5, -0.3, 0.2, 0.7])
    u = (-s * (mu_s[1:] @ e1).sum() - s * (charge[1:] * (x[1:] @ e1)).sum()
         - (mu_s @ e2).sum() - (charge * (x @ e2)).sum())
    assert e[E_FIELD] == pytest.approx(u, rel=1e-12)
    assert "field" in ENERGY_NAMES and "field work" in ENERGY_NAMES


def _run(m, h, t_end, scheme="rrp-newmark"):
    sim = simulation_for(m, scheme, h, record_every=max(1, round(0.01 / h)),
                         record_frames=False, energy_tolerance=None)
    sim.run_until(t_end)
    return sim


def test_a_uniform_field_keeps_p_and_an_absent_one_keeps_l():
    """A uniform field exerts no force on dipoles: ``P`` stays; with the field zero,
    no damping, ``L`` stays too (variational scheme, round-off)."""
    on = _run(_model(field=(0.0, 0.0, 3.0)), 1e-3, 1.0).series.arrays()
    assert np.abs(on["P"] - on["P"][0]).max() < 1e-13
    assert np.abs(on["L"] - on["L"][0]).max() > 1e-3  # (the torque μ × E turns L)
    off = _run(_model(field=(0.0, 0.0, 0.0)), 1e-3, 1.0).series.arrays()
    assert np.abs(off["P"] - off["P"][0]).max() < 1e-13
    assert np.abs(off["L"] - off["L"][0]).max() < 1e-12


def _balance_error(m, h, t_end):
    e = _run(m, h, t_end).series.arrays()["energy"]
    total = e.sum(axis=1)
    return float(np.abs(total - total[0]).max()), e


def test_e_plus_field_work_is_constant_to_second_order():
    """A field ramped from 0.2 to 1.5 of ``E₀`` over ``[0.1, 0.6]``: ``E`` changes by
    what the ramp does, ``E + field work`` only by the scheme's error, O(h²)."""
    def m():
        return _model(field=(0.0, 1.0, 3.0), ramp=(0.1, 0.6, 0.2, 1.5),
                      charges=np.array([0.0, 0.4, -0.2, 0.3]))
    err_h, e = _balance_error(m(), 2e-3, 1.0)
    err_h2, _ = _balance_error(m(), 1e-3, 1.0)
    work = e[:, E_FIELD_WORK]
    assert abs(work[-1]) > 100 * err_h  # the field did work, and it is booked
    assert 3.0 < err_h / err_h2 < 5.0, (err_h, err_h2)
    print(f"field work {work[-1]:.4g}: balance error {err_h:.3e} at h, {err_h2:.3e} at h/2")


def test_e_plus_dissipated_is_constant_to_second_order():
    """``F = −γ v``, ``τ = −γ_r Ω`` (fix viscous, fix viscous/sphere) in a constant
    field: the kinetic energy drains, ``E + dissipated`` stays to O(h²)."""
    def m():
        return _model(field=(0.0, 1.0, 3.0), gamma=0.3, gamma_rot=0.05)
    err_h, e = _balance_error(m(), 2e-3, 1.0)
    err_h2, _ = _balance_error(m(), 1e-3, 1.0)
    d = e[:, E_DISSIPATED]
    assert np.all(np.diff(d) >= 0.0) and d[-1] > 100 * err_h
    mechanical = e.sum(axis=1) - d
    assert mechanical[-1] < mechanical[0] - 100 * err_h  # (the energy drained)
    assert 3.0 < err_h / err_h2 < 5.0, (err_h, err_h2)
    print(f"dissipated {d[-1]:.4g}: balance error {err_h:.3e} at h, {err_h2:.3e} at h/2")


def test_a_model_without_fields_has_no_field_family():
    m = model_of([chain(2, 1.0)])
    fam = m.forcefield.arrays[-1]
    assert fam[T_FIELD] is None and fam[T_DAMPING] is None


# ------------------------------------------------------------------ the scenario keys
SCENARIO = '''model = "assembly"
bodies = "s.csv"
bonds = "b.csv"
[[fields]]
group = 1
B = [0.0, 0.0, 2.0]
ramp = [0.0, 0.04, 0.0, 1.0]
[[damping]]
gamma = 0.2
gamma_rot = 0.1
'''
CSV = ("x,y,z,diameter,mass,group,mux,muy,muz\n0,0,0,1,1,0,0,0,0\n1,0,0,1,1,1,1,0,0\n"
       "2,0,0,1,1,1,0,1,0\n3,0,0,1,1,1,0.5,0,0.5\n")


def _load(tmp_path, text=SCENARIO):
    from engine.scenarios import load_scenario
    (tmp_path / "s.csv").write_text(CSV)
    (tmp_path / "b.csv").write_text("i,j\n0,1\n1,2\n2,3\n")
    (tmp_path / "s.toml").write_text(text)
    return load_scenario(tmp_path / "s.toml")


def test_an_assembly_scenario_has_its_dipoles_field_and_damping(tmp_path):
    m = _load(tmp_path).build_model()
    ff = m.forcefield
    assert ff.flags[T_FIELD] and ff.flags[T_DAMPING]
    assert {"field", "field work", "dissipated"} <= set(m.energy_components)
    np.testing.assert_array_equal(ff.fields[0][1:], [[1, 0, 0], [0, 1, 0], [0.5, 0, 0.5]])
    assert m.carried["dipole"].shape == (4, 3)
    from engine.models.assembly import from_carried  # (what a run file rebuilds)
    again = from_carried(m.params, m.carried, ff.m, ff.J, ff.D, m.groups, ff.bonds)
    for a, b in zip(again.forcefield.fields, ff.fields, strict=True):
        np.testing.assert_array_equal(a, b)
    sim = _run(m, 1e-3, 0.05)
    e = sim.series.arrays()["energy"]
    assert e[-1, E_DISSIPATED] > 0.0 and e[-1, E_FIELD] < 0.0 and e[-1, E_FIELD_WORK] > 0.0


@pytest.mark.parametrize("table, words", [
    ("[[fields]]\nE = [0, 0, 1]\nB = [0, 0, 1]\n", "E = [x, y, z] (or B, one of them)"),
    ("[[fields]]\nE = [0, 1]\n", "E must be a list of three numbers"),
    ("[[fields]]\nE = [0, 0, 1]\ngroup = 7\n", "group 7 has no spheres"),
    ("[[fields]]\nE = [0, 0, 1]\nramp = [1.0, 0.5, 0, 1]\n", "give t1 > t0"),
    ("[[fields]]\nE = [0, 0, 1]\nstrength = 2\n", "unknown key 'strength'"),
    ("[[damping]]\ngamma = -1\n", "gamma = -1 must be a number in [0"),
    ("[[damping]]\ngroup = 1\n", "give gamma"),
])
def test_bad_fields_and_damping_are_refused_in_one_line(tmp_path, table, words):
    from engine.scenarios import ScenarioError
    head = SCENARIO.split("[[fields]]")[0]
    with pytest.raises(ScenarioError) as exc:
        _load(tmp_path, head + table).build_model()
    msg = str(exc.value)
    assert "\n" not in msg and words in msg, msg


def test_energy_stepping_refuses_fields_and_damping():
    from engine.energy_stepping.stepper import unsupported
    assert "no fields or damping" in unsupported(_model())
    assert unsupported(model_of([chain(2, 1.0)])) is None


def test_a_run_file_carries_the_dipoles_and_a_branch_keeps_the_balance(tmp_path):
    """``rrp run`` writes the dipoles and the tables with the model; a run branched from
    a frame in the ramp takes the field at the frame's time and the work booked so far:
    its total is the recorded one."""
    import subprocess
    import sys
    from pathlib import Path

    from engine.io.reader import RunFile
    from engine.simulation import Simulation
    (tmp_path / "s.csv").write_text(CSV)
    (tmp_path / "b.csv").write_text("i,j\n0,1\n1,2\n2,3\n")
    (tmp_path / "s.toml").write_text(SCENARIO + "[run]\nh = 1e-3\nt_end = 0.06\nevery = 10\n")
    root = Path(__file__).resolve().parent.parent
    r = subprocess.run([sys.executable, "-m", "app", "run", str(tmp_path / "s.toml"), "--out",
                        str(tmp_path / "r.h5")], capture_output=True, text=True, cwd=root)
    assert r.returncode == 0, r.stderr
    (tmp_path / "s.csv").unlink()  # (the file carries its model)
    with RunFile(tmp_path / "r.h5") as f:
        m = f.build_model()
        np.testing.assert_array_equal(m.forcefield.fields[0][3], [0.5, 0.0, 0.5])
        frame = f.frame(2)
        total = f.energy["total"][2]
    assert frame.W > 0.0 and frame.t == pytest.approx(0.02)
    sim = Simulation.from_frame(m, frame, "rrp-newmark", 1e-3, record_frames=False,
                                energy_tolerance=None)
    assert sim.energy.sum() == pytest.approx(total, rel=1e-12, abs=1e-15)


def test_a_resume_state_saved_with_fewer_energy_components_still_resumes():
    """A run saved before ``field`` and ``field work`` existed (11 components) resumes,
    the later components zero, and goes on with the same bits."""
    from engine.simulation import Simulation
    m = _model(field=(0.0, 0.0, 0.0))
    a = simulation_for(m, "rrp-newmark", 1e-3, record_frames=False, energy_tolerance=None)
    a.advance(20)
    d = a.resume_state()
    d["s0_6"] = d["s0_6"][:11].copy()
    b = Simulation.from_resume_state(m, d)
    a.advance(30)
    b.advance(30)
    assert np.array_equal(a.state.x, b.state.x) and np.array_equal(a.energy, b.energy)


ALL = ("P_x", "P_y", "P_z", "L_x", "L_y", "L_z")


@pytest.mark.parametrize("charges", [None, np.array([0.5, -0.3, 0.2, 0.7])])
def test_the_components_a_field_leaves_conserved_are_the_ones_the_run_keeps(charges):
    """The run summary's "conserved by the variational schemes" comes from
    ``conserved_under_loads``: a field along z on dipoles keeps ``P`` and ``L_z``
    only; with charges ``P_z`` goes too — what a run shows, component by component."""
    from engine.models.assembly_fields import conserved_under_loads

    kept = conserved_under_loads(ALL, [np.array([0.0, 0.0, 3.0])], True,
                                 charges is not None, False, False)
    assert kept == (("P_x", "P_y", "P_z", "L_z") if charges is None
                    else ("P_x", "P_y", "L_z"))
    a = _run(_model(field=(0.0, 0.0, 3.0), charges=charges), 1e-3, 1.0).series.arrays()
    for name in ALL:
        c = a[name[0]][:, "xyz".index(name[2])]
        drift = float(np.abs(c - c[0]).max())
        assert (drift < 1e-12) if name in kept else (drift > 1e-4), (name, drift)


def test_viscous_damping_and_stages_leave_nothing_conserved():
    from engine.models.assembly_fields import conserved_under_loads
    from engine.scenarios import load_scenario

    assert conserved_under_loads(ALL, [], False, False, True, False) == ()
    assert conserved_under_loads(ALL, [], False, False, False, True) == ALL[:3]
    # LAMMPS's metamaterial: a field on magnets, then fix viscous and viscous/sphere in
    # its second stage (before: all six were "conserved by the variational schemes")
    assert load_scenario("bpm-metamaterial").build_model().conserved == ()
