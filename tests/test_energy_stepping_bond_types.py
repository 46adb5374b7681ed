"""Energy-stepping of an assembly whose bond types have different binder coefficients
(issue #35 item 1: "every scheme that runs the torus runs an assembly; energy-stepping
too, each bond's terms terraced as today"): each bond's RADIAL, BEND and SHEAR terms
take that bond's own ``K^a``, ``K^m``, ``K^s`` (``engine.energy_stepping.terms.B_*``
columns of the bond rows, filled from the force field's per-bond table).  The terraced
terms sum to the force kernel's potential; a two-type run keeps ``|E − E₀|`` within its
bound ``n ε`` and ``T + V_ε`` to round-off; every bond given type 2's coefficients
through the table gives the bits of the one-type model with the global constants set to
type 2's values."""

from __future__ import annotations

import numpy as np
from helpers import assert_terraces_sum_to_the_potential, model_energy

from engine.energy_stepping import EnergyStepper
from engine.energy_stepping import terms as tm
from engine.models import builders
from engine.models.assembly import model_of

K1 = (10.0, 200.0, 200.0)
K2 = (25.0, 700.0, 90.0)
EPS = 1e-3


def _model(types: dict[str, tuple[float, float, float]]):
    """A ball of type-1 bonds flying into a chain of type-2 bonds (no friction, no
    damping, no gravity: a conservative model energy-stepping drives)."""
    a = builders.ball(1.2, 0.5, velocity=(0.3, -0.2, 0.1), group=1, bond_type="1")
    rng = np.random.default_rng(3)
    a.v += 0.3 * rng.standard_normal(a.v.shape)
    a.omega += 1.0 * rng.standard_normal(a.omega.shape)
    c = builders.chain(6, 0.5, start=(2.0, 0, 0), velocity=(-1.0, 0, 0), group=2,
                       bond_type="2")
    return model_of([a, c], k_contact=2100.0, bond_types=types)


def test_each_bond_row_carries_its_own_coefficients():
    from engine.energy_stepping.spheres_impl import bond_rows

    m = _model({"1": K1, "2": K2})
    ff = m.forcefield
    assert ff.per_bond
    rows = bond_rows(ff)
    assert np.array_equal(rows[:, :4], ff.bond_ref)
    assert np.array_equal(rows[:, [tm.B_KB, tm.B_KA, tm.B_KS]], ff.bond_k)
    one = _model({"1": K1, "2": K1}).forcefield
    assert not one.per_bond
    assert np.all(bond_rows(one)[:, tm.B_KB:] == np.array(K1))


def test_terraced_terms_sum_to_the_potential_of_two_types():
    assert_terraces_sum_to_the_potential(_model({"1": K1, "2": K2}), EPS, (0.0, 0.3))


def test_a_two_type_assembly_keeps_its_bound():
    """The ball hits the chain (contacts, every bond strained): ``|E − E₀| ≤ n ε`` at
    each of 40 records, ``T + V_ε`` constant to round-off, the terraces do show."""
    m = _model({"1": K1, "2": K2})
    st = m.initial_state
    s = EnergyStepper(m, EPS, st)
    e0 = model_energy(m, st.x, st.v, st.q, st.omega)
    ee0 = s.energy_eps()
    worst = 0.0
    for k in range(1, 41):
        assert s.advance_to(0.02 * k)
        x, v, q, om = s.state_arrays()
        worst = max(worst, abs(model_energy(m, x, v, q, om) - e0))
        assert abs(s.energy_eps() - ee0) <= 1e-12 * abs(ee0)
    assert s.n_events > 1000
    assert worst <= EPS * s.n_terms
    assert worst > 0.5 * EPS


def test_all_bonds_type_2_through_the_table_are_the_global_constants_bit_for_bit():
    glob = _model({"1": K2, "2": K2})
    assert not glob.forcefield.per_bond
    tab = _model({"1": K1, "2": K2})
    ff = tab.forcefield
    ff.set_bond_coefficients(np.tile(K2, (ff.bonds.shape[0], 1)))
    assert ff.per_bond
    ff.fp[4:7] = np.nan  # (the global ones must not be read)
    out = []
    for m in (glob, tab):
        s = EnergyStepper(m, EPS, m.initial_state)
        s.advance_to(0.4)
        out.append([np.array(a, copy=True) for a in s.state_arrays()]
                   + [s.n_events, s.energy_eps()])
    assert out[0][4] > 1000
    for a, b in zip(*out, strict=True):
        assert np.array_equal(a, b)


def test_the_run_goes_through_simulation_for():
    """No refusal any more: the scheme's simulation runs a two-type assembly."""
    from engine.drivers import simulation_for

    m = _model({"1": K1, "2": K2})
    sim = simulation_for(m, "energy-stepping", 1e-3, record_every=10**9,
                         record_frames=False)
    assert sim.advance(100).ok
