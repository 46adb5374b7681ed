"""The assembly model (issue #35): ``build ring`` with the torus's numbers is the torus
bit for bit under every scheme; the ways in (inline tables, CSV, a LAMMPS data file,
builders, the Python API) give the same spheres and bonds; a free assembly keeps P and
L to round-off with the variational schemes and its energy error is O(h²)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from bits_matrix import fingerprint, run_case, schemes_for
from helpers import energy_error_slope

from engine.models import builders
from engine.models.assembly import model_of
from engine.scenarios import load_scenario

RING = """model = "assembly"
[run]
integrator = "{integ}"
[parameters]
contact = "{contact}"
mu = {mu}
[[build]]
kind = "ring"
n = 80
diameter = 3.0
mass = 1.0
inertia = 1.0
velocity = [-5.0, 0.0, 0.0]
[[walls]]
point = [0, 0, 0]
normal = [1, 0, 0]
"""


def ring_file(tmp_path: Path, contact: str = "penalty", mu: float = 0.0) -> Path:
    p = tmp_path / f"ring-{contact}.toml"
    p.write_text(RING.format(integ="rrp-newmark" if contact == "penalty"
                             else "moreau-symmetric", contact=contact, mu=mu))
    return p


@pytest.mark.slow
@pytest.mark.parametrize("torus, params, contact, mu", [
    ("torus", {"v0": 5.0}, "penalty", 0.0),
    ("torus-hard", {"v0": 5.0}, "hard", 0.5),
], ids=["penalty", "hard"])
def test_build_ring_is_the_torus_bit_for_bit(tmp_path, torus, params, contact, mu):
    """Acceptance: for every scheme that runs the torus, the ring builder with the
    torus's numbers gives the same final bits (300 steps in chunks of 7)."""
    ring = str(ring_file(tmp_path, contact, mu))
    ran = 0
    for scheme in schemes_for(None):
        want = run_case(torus, params, scheme, 300)
        got = run_case(ring, {}, scheme, 300)
        assert (want is None) == (got is None), scheme
        if want is None:
            continue
        ran += 1
        for k in want:
            assert fingerprint(got[k]) == fingerprint(want[k]), f"{scheme}: {k}"
    assert ran >= (2 if contact == "hard" else 10), ran


@pytest.mark.slow  # (energy-stepping on the ring: docs/testing.md)
def test_build_ring_runs_energy_stepping_as_the_torus(tmp_path):
    """Energy-stepping (event-driven, outside the fixture's matrix) on the ring: the same
    bits as on the torus, but for the sign of the zeros of Ω (the torus starts from
    ``0 · N(0, 1)``, zeros of either sign; the builder from +0)."""
    ring = str(ring_file(tmp_path))
    want = run_case("torus", {"v0": 5.0}, "energy-stepping", 50)
    got = run_case(ring, {}, "energy-stepping", 50)
    for k in want:
        if k == "omega":
            assert np.array_equal(got[k], want[k])
        else:
            assert fingerprint(got[k]) == fingerprint(want[k]), k


def test_ring_builds_the_torus_arrays(tmp_path):
    m = load_scenario(ring_file(tmp_path)).build_model()
    t = load_scenario("torus", {"v0": 5.0}).build_model()
    for a, b in ((m.initial_state.x, t.initial_state.x), (m.initial_state.v, t.initial_state.v),
                 (m.forcefield.bond_ref, t.forcefield.bond_ref),
                 (m.forcefield.fp, t.forcefield.fp), (m.forcefield.flags, t.forcefield.flags),
                 (m.forcefield.walls, t.forcefield.walls), (m.bodies.D, t.bodies.D)):
        assert a.tobytes() == b.tobytes()
    assert m.conserved == t.conserved and m.energy_components == t.energy_components
    assert m.groups.tolist() == [0] * 80


def _same(a, b):
    pa, pb = a.forcefield, b.forcefield
    assert np.array_equal(a.initial_state.x, b.initial_state.x)
    assert np.array_equal(a.initial_state.v, b.initial_state.v)
    assert np.array_equal(a.initial_state.omega, b.initial_state.omega)
    assert np.allclose(a.bodies.m, b.bodies.m, rtol=1e-15, atol=0)
    assert np.allclose(a.bodies.J, b.bodies.J, rtol=1e-15, atol=0)
    assert np.array_equal(a.bodies.D, b.bodies.D)
    assert np.array_equal(pa.bonds, pb.bonds)
    assert np.array_equal(pa.walls, pb.walls)
    assert np.array_equal(a.groups, b.groups)


TRIPLE_INLINE = """model = "assembly"
[parameters]
gravity = [0, 0, -9.81]
[[bodies]]
position = [0, 0, 1]
diameter = 1.0
mass = 2.0
inertia = 0.3
velocity = [1, 0, 0]
spin = [0, 0, 3]
group = 1
[[bodies]]
position = [1, 0, 1]
diameter = 1.0
density = 3.0
[[bodies]]
position = [2, 0, 1]
diameter = 1.0
mass = 1.5
group = 2
[[bonds]]
i = 0
j = 1
[[bonds]]
i = 1
j = 2
type = 1
[[walls]]
point = [0, 0, 0]
normal = [0, 0, 2]
"""


def test_inline_and_csv_give_the_same_assembly(tmp_path):
    (tmp_path / "a.toml").write_text(TRIPLE_INLINE)
    (tmp_path / "spheres.csv").write_text(
        "x,y,z,diameter,mass,inertia,vx,vy,vz,wx,wy,wz,group\n"
        "0,0,1,1,2,0.3,1,0,0,0,0,3,1\n"
        f"1,0,1,1,{3.0 * math.pi / 6.0!r},{0.1 * 3.0 * math.pi / 6.0!r},0,0,0,0,0,0,0\n"
        "2,0,1,1,1.5,0.15000000000000002,0,0,0,0,0,0,2\n")
    (tmp_path / "bonds.csv").write_text("i,j,type\n0,1,1\n1,2,1\n")
    (tmp_path / "b.toml").write_text(
        'model = "assembly"\nbodies = "spheres.csv"\nbonds = "bonds.csv"\n'
        "[parameters]\ngravity = [0, 0, -9.81]\n"
        "[[walls]]\npoint = [0, 0, 0]\nnormal = [0, 0, 1]\n")
    a = load_scenario(tmp_path / "a.toml").build_model()
    b = load_scenario(tmp_path / "b.toml").build_model()
    _same(a, b)
    assert a.conserved == ("P_x", "P_y", "L_z")
    assert "gravity" in a.energy_components and "wall" in a.energy_components
    assert a.groups.tolist() == [1, 0, 2]


LAMMPS_STYLES = {
    "sphere": ("Atoms # sphere", ["1 1 1.0 {rho} 0 0 1 0 0 0", "2 1 1.0 {rho} 1 0 1 0 0 0",
                                   "3 1 1.0 {rho} 2 0 1 0 0 0"]),
    "sphere/bpm": ("Atoms # sphere/bpm", ["1 5 1 1.0 {rho} 0 0 1", "2 5 1 1.0 {rho} 1 0 1",
                                           "3 6 1 1.0 {rho} 2 0 1"]),
    "bpm/sphere": ("Atoms # bpm/sphere", ["1 5 1 1.0 {rho} 0 0 1", "2 5 1 1.0 {rho} 1 0 1",
                                           "3 6 1 1.0 {rho} 2 0 1"]),  # (LAMMPS's released name)
    "hybrid sphere bond": ("Atoms # hybrid sphere bond",
                           ["1 1 0 0 1 1.0 {rho} 5", "2 1 1 0 1 1.0 {rho} 5",
                            "3 1 2 0 1 1.0 {rho} 6"]),
    "bond": ("Atoms # bond", ["1 5 1 0 0 1", "2 5 1 1 0 1", "3 6 1 2 0 1"]),
}


def lammps_text(style: str, velocities: bool = True) -> str:
    head, rows = LAMMPS_STYLES[style]
    rho = 6.0 / math.pi  # mass 1 for D = 1
    sphere = style != "bond"
    out = ["LAMMPS data file written by hand", "", "3 atoms", "1 atom types", "2 bonds",
           "2 bond types", "", "-1 3 xlo xhi", "-1 1 ylo yhi", "0 2 zlo zhi", ""]
    if not sphere:
        out += ["Masses", "", "1 1.0", ""]
    out += [head, ""] + [r.format(rho=rho) for r in rows] + [""]
    if velocities:
        out += ["Velocities", ""]
        out += (["1 0.5 0 0 0 0 2", "2 0 0 0 0 0 0", "3 0 0 0 0 0 0"] if sphere
                else ["1 0.5 0 0", "2 0 0 0", "3 0 0 0"]) + [""]
    out += ["Bonds", "", "1 1 1 2", "2 2 3 2", ""]
    return "\n".join(out)


@pytest.mark.parametrize("style", list(LAMMPS_STYLES))
def test_a_hand_written_lammps_file_of_each_style_reads(tmp_path, style):
    (tmp_path / "m.data").write_text(lammps_text(style))
    extra = 'diameter = 1.0\n' if style == "bond" else ""
    (tmp_path / "s.toml").write_text(
        f'model = "assembly"\nsource = "m.data"\n{extra}walls_from_box = true\n'
        "[bond_types.2]\nk_bend = 10.0\nk_axial = 200.0\nk_shear = 200.0\n")
    m = load_scenario(tmp_path / "s.toml").build_model()
    assert m.n_bodies == 3
    assert np.allclose(m.bodies.m, 1.0, rtol=1e-15)
    assert np.allclose(m.bodies.J, 0.1, rtol=1e-15)
    assert m.forcefield.bonds.tolist() == [[0, 1], [2, 1]]
    assert m.initial_state.v[0].tolist() == [0.5, 0.0, 0.0]
    assert m.initial_state.omega[0].tolist() == ([0.0, 0.0, 2.0] if style != "bond"
                                                 else [0.0, 0.0, 0.0])
    assert m.forcefield.walls.shape == (6, 4)
    if style != "sphere":
        assert m.groups.tolist() == [5, 5, 6]


def test_builders_in_toml_and_python_agree(tmp_path):
    (tmp_path / "b.toml").write_text(
        'model = "assembly"\n'
        '[[build]]\nkind = "lattice"\nstyle = "fcc"\na = 1.0\nbond_within = 0.72\ngroup = 1\n'
        'region = {shape = "cylinder", centre = [0, 0, 0], radius = 2.0, length = 1.0}\n'
        '[[build]]\nkind = "ball"\nradius = 0.8\ndiameter = 0.5\ncentre = [0, 0, 3]\n'
        'velocity = [0, 0, -1]\ngroup = 2\n'
        '[[build]]\nkind = "chain"\nn = 5\ndiameter = 0.5\nstart = [4, 0, 0]\n'
        'direction = [0, 1, 0]\nspin = [0, 0, 1]\ngroup = 3\n')
    a = load_scenario(tmp_path / "b.toml").build_model()
    b = model_of([
        builders.lattice("fcc", 1.0, {"shape": "cylinder", "centre": [0, 0, 0],
                                      "radius": 2.0, "length": 1.0}, bond_within=0.72,
                         group=1),
        builders.ball(0.8, 0.5, centre=(0, 0, 3), velocity=(0, 0, -1), group=2),
        builders.chain(5, 0.5, start=(4, 0, 0), direction=(0, 1, 0), spin=(0, 0, 1),
                       group=3)])
    _same(a, b)
    g = a.groups
    assert set(g.tolist()) == {1, 2, 3} and (g == 3).sum() == 5
    # fcc: 12 nearest neighbours inside a ball; the ball's centre sphere has them all
    bonds = a.forcefield.bonds
    ball = np.flatnonzero(g == 2)
    centre = ball[np.argmin(np.linalg.norm(a.initial_state.x[ball] - [0, 0, 3], axis=1))]
    assert ((bonds == centre).any(axis=1)).sum() == 12
    assert ((g[bonds[:, 0]] == 3) & (g[bonds[:, 1]] == 3)).sum() == 4


def test_the_examples_load_and_the_view_colours_them_by_group():
    from app.scene import body_groups

    for name in ("assembly-rope", "assembly-impact", "assembly-drop"):
        m = load_scenario(name).build_model()
        assert m.n_bodies > 10 and m.forcefield.bonds.shape[0] > 10
        assert body_groups(m).tolist() == m.groups.tolist()
    drop = load_scenario("assembly-drop").build_model()
    assert set(drop.groups.tolist()) == {1, 2}
    assert drop.conserved == ()  # (walls with friction: nothing is conserved)
    assert load_scenario("assembly-impact").build_model().conserved == (
        "P_x", "P_y", "P_z", "L_x", "L_y", "L_z")


def _free_assembly():
    a = builders.ball(1.2, 0.5, velocity=(0.3, -0.2, 0.1), spin=(0.0, 0.0, 0.0), group=1)
    rng = np.random.default_rng(3)
    a.v += 0.3 * rng.standard_normal(a.v.shape)
    a.omega += 1.0 * rng.standard_normal(a.omega.shape)
    c = builders.chain(6, 0.5, start=(2.0, 0, 0), velocity=(-1.0, 0, 0), group=2)
    return model_of([a, c], k_contact=2100.0)


@pytest.mark.parametrize("scheme", ["rrp-newmark", "lgvi"])
def test_a_free_assembly_keeps_p_and_l(scheme):
    from engine.drivers import simulation_for

    m = _free_assembly()
    assert m.conserved == ("P_x", "P_y", "P_z", "L_x", "L_y", "L_z")
    sim = simulation_for(m, scheme, 2e-3, record_every=10**9, record_frames=False,
                         energy_tolerance=None)
    p0, l0 = _momenta(sim)
    sp, sl = _scales(sim)
    assert sim.advance(600).ok
    p1, l1 = _momenta(sim)
    assert np.abs(p1 - p0).max() < 1e-13 * sp
    assert np.abs(l1 - l0).max() < 1e-13 * sl


def _momenta(sim):
    from engine.diagnostics import angular_momentum, linear_momentum

    s, b = sim.state, sim.model.bodies
    return linear_momentum(b.m, s.v), angular_momentum(b.m, b.J, s.x, s.v, s.omega)


def _scales(sim):
    from engine.diagnostics import momentum_scales

    s, b = sim.state, sim.model.bodies
    return momentum_scales(b.m, b.J, s.x, s.v, s.omega)


def test_a_free_assembly_energy_error_is_second_order():
    slope, errs = energy_error_slope(_free_assembly, (4e-3, 2e-3, 1e-3))
    assert abs(slope - 2.0) < 0.1, (slope, errs)
