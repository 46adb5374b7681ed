"""Bond types with their own binder coefficients (issue #35 item 1): the per-bond table
of the force field (``ForceField.set_bond_coefficients``, the family slot
``engine.specialize.BOND_TYPES``) gives the same bits as the global constants when every
bond has them; a two-type assembly differs from a one-type one only through its type-2
bonds; a free two-type assembly keeps P and L to round-off and its energy error is
O(h²) (energy-stepping terraces each bond's terms with its own coefficients:
``tests/test_energy_stepping_bond_types.py``); ``rrp convert --to lammps`` writes each
type's coefficients."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import energy_error_slope

from engine.forcefield import compute_forces
from engine.layout import E_AXIAL, E_BENDING, E_SHEAR, N_ENERGY, OK
from engine.models import builders
from engine.models.assembly import model_of
from engine.scenarios import load_scenario
from engine.specialize import BOND_TYPES

K1 = (10.0, 200.0, 200.0)
K2 = (25.0, 700.0, 90.0)


def _parts(t_ball: str = "1", t_chain: str = "2"):
    a = builders.ball(1.2, 0.5, velocity=(0.3, -0.2, 0.1), group=1, bond_type=t_ball)
    rng = np.random.default_rng(3)
    a.v += 0.3 * rng.standard_normal(a.v.shape)
    a.omega += 1.0 * rng.standard_normal(a.omega.shape)
    c = builders.chain(6, 0.5, start=(2.0, 0, 0), velocity=(-1.0, 0, 0), group=2,
                       bond_type=t_chain)
    return [a, c]


def _model(types: dict[str, tuple[float, float, float]], **kw):
    return model_of(_parts(**kw), k_contact=2100.0, bond_types=types)


def _forces(m, ff=None):
    """Forces, moments and energies at a perturbed configuration of ``m``."""
    s = m.initial_state
    rng = np.random.default_rng(7)
    q = s.q + 0.05 * rng.standard_normal(s.q.shape)
    q /= np.linalg.norm(q, axis=1)[:, None]
    x = s.x + 2e-3 * rng.standard_normal(s.x.shape)
    F, RM, E = np.zeros_like(x), np.zeros_like(x), np.zeros(N_ENERGY)
    assert compute_forces(x, q, (ff or m.forcefield).arrays, F, RM, E) == OK
    return F, RM, E


def test_one_set_of_coefficients_keeps_the_global_constants():
    """Types that share their coefficients: no table, the kernels (family) of before."""
    m = _model({"1": K1, "2": K1})
    assert not m.forcefield.per_bond
    assert m.forcefield.arrays[-1][BOND_TYPES] is None


def test_the_table_gives_the_bits_of_the_global_constants():
    """Every bond given type 2's coefficients in the table = the global constants set to
    type 2's values (all bonds type 2): the same bits of forces, moments, energies."""
    glob = _model({"1": K2, "2": K2})
    assert not glob.forcefield.per_bond
    tab = _model({"1": K1, "2": K2})
    ff = tab.forcefield
    assert ff.per_bond and ff.arrays[-1][BOND_TYPES] == 0
    ff.set_bond_coefficients(np.tile(K2, (ff.bonds.shape[0], 1)))
    ff.fp[4:7] = np.nan  # (the global ones must not be read)
    want, got = _forces(glob), _forces(tab)
    for a, b in zip(want, got, strict=True):
        assert np.array_equal(a, b)


def test_a_copy_of_the_force_field_keeps_each_bonds_coefficients():
    """``ForceField.copy()`` dropped ``bond_k``: the copy of a two-type model ran with the
    global coefficients (type 1's for every bond)."""
    m = _model({"1": K1, "2": K2})
    ff = m.forcefield.copy()
    assert ff.per_bond and np.array_equal(ff.bond_k, m.forcefield.bond_k)
    assert ff.bond_k is not m.forcefield.bond_k
    for a, b in zip(_forces(m), _forces(m, ff), strict=True):
        assert np.array_equal(a, b)


def test_two_types_differ_only_through_the_type_2_bonds():
    """Spheres with no type-2 bond feel the same bits as with one type; the binder
    energies are those of the type-1 bonds plus type 2's coefficients times those of
    the type-2 bonds (each term is linear in its coefficient)."""
    one = _model({"1": K1, "2": K1})
    two = _model({"1": K1, "2": K2})
    none2 = _model({"1": K1, "2": (0.0, 0.0, 0.0)})
    assert two.forcefield.per_bond and none2.forcefield.per_bond
    F1, R1, E1 = _forces(one)
    F2, R2, E2 = _forces(two)
    _, _, E0 = _forces(none2)
    bonds = two.forcefield.bonds
    kinds = np.asarray(two.forcefield.bond_k)
    typed2 = np.all(kinds == K2, axis=1)
    assert typed2.any() and (~typed2).any()
    touched = np.zeros(two.n_bodies, dtype=bool)
    touched[bonds[typed2].ravel()] = True
    assert np.array_equal(F1[~touched], F2[~touched])
    assert np.array_equal(R1[~touched], R2[~touched])
    assert not np.allclose(F1[touched], F2[touched])
    for slot, k in ((E_BENDING, 0), (E_AXIAL, 1), (E_SHEAR, 2)):
        type2_at_k1 = E1[slot] - E0[slot]
        want = E0[slot] + K2[k] / K1[k] * type2_at_k1
        assert E2[slot] == pytest.approx(want, rel=1e-12, abs=1e-15), slot


def test_a_scenario_with_two_types_of_different_coefficients_runs(tmp_path):
    """The one-line refusal of types with different coefficients is gone: the scenario
    builds with the per-bond table and steps."""
    from engine.drivers import simulation_for

    (tmp_path / "s.toml").write_text(
        'model = "assembly"\n'
        '[[build]]\nkind = "chain"\nn = 4\ndiameter = 0.5\n'
        '[[build]]\nkind = "chain"\nn = 4\ndiameter = 0.5\nstart = [0, 2, 0]\n'
        'bond_type = 2\n'
        '[bond_types.2]\nk_bend = 3.0\nk_axial = 50.0\nk_shear = 70.0\n')
    m = load_scenario(tmp_path / "s.toml").build_model()
    ff = m.forcefield
    assert ff.per_bond
    assert ff.bond_k.tolist() == [[10.0, 200.0, 200.0]] * 3 + [[3.0, 50.0, 70.0]] * 3
    sim = simulation_for(m, "rrp-newmark", 1e-3, record_every=10**9, record_frames=False)
    assert sim.advance(20).ok


@pytest.mark.parametrize("scheme", ["rrp-newmark", "lgvi"])
def test_a_free_two_type_assembly_keeps_p_and_l(scheme):
    from engine.diagnostics import angular_momentum, linear_momentum, momentum_scales
    from engine.drivers import simulation_for

    m = _model({"1": K1, "2": K2})
    assert m.conserved == ("P_x", "P_y", "P_z", "L_x", "L_y", "L_z")
    sim = simulation_for(m, scheme, 2e-3, record_every=10**9, record_frames=False,
                         energy_tolerance=None)

    def momenta():
        s, b = sim.state, sim.model.bodies
        return linear_momentum(b.m, s.v), angular_momentum(b.m, b.J, s.x, s.v, s.omega)

    p0, l0 = momenta()
    s, b = sim.state, sim.model.bodies
    sp, sl = momentum_scales(b.m, b.J, s.x, s.v, s.omega)
    assert sim.advance(600).ok
    p1, l1 = momenta()
    assert np.abs(p1 - p0).max() < 1e-13 * sp
    assert np.abs(l1 - l0).max() < 1e-13 * sl


def test_a_free_two_type_assembly_energy_error_is_second_order():
    slope, errs = energy_error_slope(  # (type 2 is stiffer than the one-type test: smaller h)
        lambda: _model({"1": K1, "2": K2}, t_ball="2", t_chain="1"), (2e-3, 1e-3, 5e-4))
    assert abs(slope - 2.0) < 0.1, (slope, errs)


def test_convert_and_import_carry_each_types_coefficients(tmp_path):
    """``rrp convert --to lammps`` writes a ``bond_coeff`` line per type from its own
    coefficients and the types' coefficients in the data file's header; ``source =``
    and ``rrp import lammps`` read them back (no note: the file gives them)."""
    import tomllib

    from test_assembly_lammps import SCENARIO, rrp, run_and_convert_to_lammps

    (tmp_path / "a.toml").write_text(SCENARIO.replace(
        "[bond_types.7]\nk_bend = 10.0\nk_axial = 200.0\nk_shear = 200.0",
        "[bond_types.7]\nk_bend = 2.5\nk_axial = 640.0\nk_shear = 30.0"))
    orig = load_scenario(tmp_path / "a.toml").build_model()
    assert orig.forcefield.per_bond
    _, data, deck = run_and_convert_to_lammps(tmp_path, "0.02")
    coeff = [ln.split() for ln in deck.read_text().splitlines() if ln.startswith("bond_coeff")]
    assert [c[1] for c in coeff] == ["1", "2"]
    assert [float(c[4]) for c in coeff] == [10.0, 2.5]  # K^m of each type
    head = data.read_text().splitlines()[:5]
    assert "# rrp bond_type 2: k_bend 2.5 k_axial 640.0 k_shear 30.0" in head
    (tmp_path / "lmp" / "b.toml").write_text('model = "assembly"\nsource = "a.data"\n')
    back = load_scenario(tmp_path / "lmp" / "b.toml").build_model()
    assert np.array_equal(back.forcefield.bond_k, orig.forcefield.bond_k)
    out = tmp_path / "imp.toml"
    res = rrp("import", "lammps", data, "--out", out)
    assert res.returncode == 0 and res.stderr.strip() == "", res.stderr
    t = tomllib.loads(out.read_text())["bond_types"]
    assert t["2"] == {"k_bend": 2.5, "k_axial": 640.0, "k_shear": 30.0}
    assert np.array_equal(load_scenario(out).build_model().forcefield.bond_k,
                          orig.forcefield.bond_k)


def test_the_table_gives_the_bits_of_the_global_constants_in_parallel():
    """The parallel kernels (a model of at least ``PARALLEL_MIN_BODIES`` spheres): the
    table with every row the global constants gives their bits."""
    from engine.models import tori_pile
    from engine.models.base import resolve_parameters
    from engine.specialize import LARGE

    p = resolve_parameters(tori_pile.SCHEMA, {"n_tori": 210}, "tori-pile")
    glob, tab = tori_pile.build(p), tori_pile.build(p)
    ff = tab.forcefield
    ff.set_bond_coefficients(np.tile([p["k_bend"], p["k_axial"], p["k_shear"]],
                                     (ff.bonds.shape[0], 1)))
    ff.fp[4:7] = np.nan
    assert ff.arrays[-1][LARGE] == 0 and ff.arrays[-1][BOND_TYPES] == 0
    for a, b in zip(_forces(glob), _forces(tab), strict=True):
        assert np.array_equal(a, b)


def test_the_stability_estimate_reads_each_bonds_coefficients():
    """``engine.stability``: the table of the global constants gives their rows bit for
    bit; a stiffer type 2 raises the rows of its spheres, and only theirs."""
    from engine.stability import stiffness_rows

    def rows(m):
        s = m.initial_state
        r, k = np.zeros((m.n_bodies, 2)), np.zeros((m.n_bodies, 2), dtype=np.int64)
        stiffness_rows(s.x, s.v, s.q, s.omega, m.forcefield.arrays, r, k)
        return r

    glob = _model({"1": K1, "2": K1})
    tab = _model({"1": K1, "2": K2})
    ff = tab.forcefield
    table = ff.bond_k.copy()
    ff.set_bond_coefficients(np.tile(K1, (ff.bonds.shape[0], 1)))
    assert np.array_equal(rows(glob), rows(tab))
    ff.set_bond_coefficients(table)
    touched = np.zeros(tab.n_bodies, dtype=bool)
    touched[ff.bonds[np.all(table == K2, axis=1)].ravel()] = True
    r1, r2 = rows(glob), rows(tab)
    assert np.array_equal(r1[~touched], r2[~touched])
    assert (r2[touched, 0] > r1[touched, 0]).all()
