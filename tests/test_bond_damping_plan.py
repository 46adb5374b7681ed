"""The bonds' damping swept by colours in vectorized chunks (issue #44 item 9:
``engine.potentials.bond_damping_plan``, ``engine.potentials.bond_damping``;
docs/physics.md §4.6 "Bond damping").

No sphere twice in a colour and every damped bond once in the plan; on a random
network of every law (``smooth`` yes and no, springs, undamped and binder bonds, more
bonds a chunk than its lanes) each sweep keeps ``P`` and ``L`` to round-off and books
the kinetic energy it removes; the backward sweep is the forward one's exact adjoint
(forward over ``τ`` then backward over ``−τ`` is the identity); the colour order agrees
with the former bond-after-bond order to second order in ``τ`` (the flows' commutators);
the twin (``engine.interpreted``) gives the compiled bits; a broken bond leaves its
colour and each working copy has its own scratch."""

from __future__ import annotations

import numpy as np
import pytest
from test_bond_damping import GAMMAS
from test_bond_laws import ROT, SPR

from engine.potentials import bpm
from engine.potentials.bond_damping import (
    C_GAMMA_ROT,
    C_GAMMA_SPRING,
    CHUNK_SPRING,
    LANES,
    bond_damp_half,
    damped_bonds,
)
from engine.potentials.bond_damping_plan import colour_bonds, plan_for
from engine.rotations import quat_from_rotvec

COEFFS = {"k_r": 2.0, "k_s": 1.5, "k_t": 0.7, "k_b": 1.3, "f_rc": 10.0, "f_sc": 10.0,
          "tau_bc": 10.0, "tau_tc": 10.0, "k": 3.0, "eps_c": 0.5, **GAMMAS, "gamma": 0.7}


def _network(n: int = 90, nb: int = 260, seed: int = 7):
    """``n`` spheres and ``nb`` random bonds of every kind: rotational (smooth no and
    yes, both frames), spring, rotational without damping, the binder's; a deformed
    state with random velocities and spins."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 3.0, size=(n, 3))
    q = quat_from_rotvec(0.4 * rng.normal(size=(n, 3)))
    pairs = set()
    while len(pairs) < nb:
        i, j = (int(a) for a in rng.choice(n, 2, replace=False))
        pairs.add((min(i, j), max(i, j)))
    bonds = np.array(sorted(pairs, key=lambda p: rng.random()), dtype=np.int64)
    rows = []
    for k in range(nb):
        kind = k % 7
        law = "bpm/spring" if kind == 4 else "bpm/rotational"
        row = bpm.law_row(law, COEFFS, smooth=kind in (1, 3))
        if kind == 3:
            row[bpm.C_LAW] = bpm.LAW_ROTATIONAL_AVERAGE
        if kind == 5:
            row[C_GAMMA_ROT:C_GAMMA_ROT + 4] = 0.0
        if kind == 6:
            row[:] = 0.0  # (the binder's)
        rows.append(row)
    table = np.array(rows)
    bpm.reference(table, x, q, bonds)
    x = x + 0.02 * rng.normal(size=(n, 3))
    m = rng.uniform(0.5, 2.0, n)
    J = rng.uniform(0.05, 0.3, n)
    v = rng.normal(size=(n, 3))
    o = rng.normal(size=(n, 3))
    return x, v, q, o, m, J, bonds, table


def _kinetic(m, J, v, o):
    return 0.5 * (m @ (v * v).sum(1) + J @ (o * o).sum(1))


def _sweep(x, v, q, o, m, J, table, tau, forward, plan, pi=None):
    v, o = v.copy(), o.copy()
    keep = pi is not None
    pi = np.zeros_like(v) if pi is None else pi.copy()
    d = bond_damp_half(x, v, q, o, pi, m, J, table, tau, forward, keep, plan)
    return v, o, pi, d


def test_no_sphere_twice_in_a_colour_and_every_damped_bond_once():
    x, v, q, o, m, J, bonds, table = _network(nb=400)
    rot, spr = damped_bonds(table)
    colour = colour_bonds(bonds, len(m), rot | spr)
    assert (colour[~(rot | spr)] == -1).all() and (colour[rot | spr] >= 0).all()
    deg = np.bincount(bonds[rot | spr].ravel(), minlength=len(m)).max()
    assert colour.max() + 1 <= 2 * deg - 1  # (greedy: at most 2Δ − 1)
    for c in range(colour.max() + 1):
        ends = bonds[colour == c].ravel()
        assert len(ends) == len(set(ends.tolist())), c
    pairs, order, chunks = plan_for(bonds, table, m, J)[:3]
    assert sorted(order.tolist()) == np.flatnonzero(rot | spr).tolist()
    assert (pairs == bonds[order]).all()
    assert (chunks[:, 1] - chunks[:, 0] <= LANES).all() or (chunks[:, 2] == CHUNK_SPRING).any()
    assert chunks[0, 0] == 0 and chunks[-1, 1] == len(order)
    assert (chunks[1:, 0] == chunks[:-1, 1]).all()
    seen = np.concatenate([colour[order[a:b]] for a, b, _ in chunks])
    assert (np.diff(seen) >= 0).all()  # (colour by colour)
    for a, b, kind in chunks:  # (a chunk: one colour, one kind)
        assert len(set(colour[order[a:b]].tolist())) == 1
        is_spring = table[order[a:b], bpm.C_LAW] == bpm.LAW_SPRING
        assert is_spring.all() if kind == CHUNK_SPRING else not is_spring.any()


def test_the_metamaterial_takes_six_colours():
    """The LAMMPS metamaterial's 1440 bonds (spheres of up to 6 bonds) in 6 colours of
    about 240 bonds: chunks of 64 lanes, nearly all full."""
    import csv
    from pathlib import Path

    rows = list(csv.DictReader((Path(__file__).parent.parent / "assets" / "scenarios"
                                / "bpm-metamaterial-bonds.csv").open()))
    keys = [k for k in rows[0] if k not in ("type",)][:2]
    bonds = np.array([[int(r[keys[0]]), int(r[keys[1]])] for r in rows])
    colour = colour_bonds(bonds, int(bonds.max()) + 1, np.ones(len(bonds), dtype=bool))
    assert len(bonds) == 1440 and colour.max() + 1 == 6


@pytest.mark.parametrize("forward", [True, False])
def test_a_network_keeps_p_and_l_and_books_what_it_removes(forward):
    x, v, q, o, m, J, bonds, table = _network()
    plan = plan_for(bonds, table, m, J)
    P = m @ v
    L = (np.cross(x, v) * m[:, None]).sum(0) + J @ o
    for tau in (1e-3, 0.05, 3.0):  # (the Taylor sums and libm's expm1)
        v1, o1, _, d = _sweep(x, v, q, o, m, J, table, tau, forward, plan)
        assert d > 0.0 and d == pytest.approx(_kinetic(m, J, v, o) - _kinetic(m, J, v1, o1),
                                              rel=1e-12)
        np.testing.assert_allclose(m @ v1, P, rtol=0, atol=1e-13 * np.abs(m @ np.abs(v)).max())
        L1 = (np.cross(x, v1) * m[:, None]).sum(0) + J @ o1
        np.testing.assert_allclose(L1, L, rtol=0, atol=1e-12)


def test_the_backward_sweep_is_the_forward_one_s_adjoint():
    """Each mode's flow is exact, so ``D*_{−τ} ∘ D_τ`` is the identity: the forward
    sweep over ``τ``, then the backward one over ``−τ``, returns the velocities (to
    round-off), ``Π`` with them, and books minus the energy."""
    x, v, q, o, m, J, bonds, table = _network()
    plan = plan_for(bonds, table, m, J)
    pi = np.random.default_rng(1).normal(size=v.shape)
    for tau in (1e-3, 0.05):
        v1, o1, pi1, d1 = _sweep(x, v, q, o, m, J, table, tau, True, plan, pi)
        v2, o2, pi2, d2 = _sweep(x, v1, q, o1, m, J, table, -tau, False, plan, pi1)
        assert np.abs(v1 - v).max() > 1e3 * np.abs(v2 - v).max()
        np.testing.assert_allclose(v2, v, rtol=0, atol=1e-13)
        np.testing.assert_allclose(o2, o, rtol=0, atol=1e-13)
        np.testing.assert_allclose(pi2, pi, rtol=0, atol=1e-13)
        assert d1 + d2 == pytest.approx(0.0, abs=1e-12 * d1)


def _bond_by_bond(x, v, o, m, J, bonds, table, tau):
    """The former sweep, bond after bond in the bonds' order, each bond's modes in
    order (normal, sliding, rolling with twisting), rotational bonds with ``smooth no``
    (written from the module docstring's exact flows)."""
    v, o = v.copy(), o.copy()
    for b, (i, j) in enumerate(bonds):
        if table[b, bpm.C_LAW] not in (bpm.LAW_ROTATIONAL, bpm.LAW_ROTATIONAL_AVERAGE):
            continue
        gn, gs, gr, gt = table[b, C_GAMMA_ROT:C_GAMMA_ROT + 4]
        d = x[i] - x[j]
        r = np.linalg.norm(d)
        n = d / r
        mi, mj, Ji, Jj = 1 / m[i], 1 / m[j], 1 / J[i], 1 / J[j]
        k = mi + mj
        p = (n @ (v[i] - v[j])) * np.expm1(-gn * k * tau) / k * n
        v[i] += p * mi
        v[j] -= p * mj
        k = mi + mj + 0.25 * r * r * (Ji + Jj)
        dv = v[i] - v[j]
        u = dv - (n @ dv) * n + 0.5 * np.cross(d, o[i] + o[j])
        p = u * np.expm1(-gs * k * tau) / k
        v[i] += p * mi
        v[j] -= p * mj
        s = 0.5 * np.cross(p, d)
        o[i] += s * Ji
        o[j] += s * Jj
        k = Ji + Jj
        dw = o[i] - o[j]
        dn = (n @ dw) * n
        a = (np.expm1(-0.5 * gr * r * k * tau) * (dw - dn)
             + np.expm1(-0.5 * gt * k * tau) * dn) / k
        o[i] += a * Ji
        o[j] -= a * Jj
    return v, o


def test_the_colour_order_agrees_with_the_bond_order_to_second_order():
    """Both orders compose the same exact flows; they differ by the flows' commutators,
    ``O(τ²)``: halving ``τ`` quarters the difference (the bonds' own sweep, written
    apart, agrees with ours to round-off on a single bond)."""
    x, v, q, o, m, J, bonds, table = _network(nb=200, seed=3)
    keep = np.isin(table[:, bpm.C_LAW], (bpm.LAW_ROTATIONAL, bpm.LAW_ROTATIONAL_AVERAGE))
    keep &= table[:, bpm.C_SMOOTH] == 0.0
    bonds, table = bonds[keep], table[keep]
    plan = plan_for(bonds, table, m, J)
    one = plan_for(bonds[:1], table[:1], m, J)
    v1, o1, _, _ = _sweep(x, v, q, o, m, J, table[:1], 0.05, True, one)
    v2, o2 = _bond_by_bond(x, v, o, m, J, bonds[:1], table[:1], 0.05)
    np.testing.assert_allclose(np.c_[v1, o1], np.c_[v2, o2], rtol=1e-13, atol=1e-14)
    diffs = []
    for tau in (0.02, 0.01, 0.005):
        v1, o1, _, _ = _sweep(x, v, q, o, m, J, table, tau, True, plan)
        v2, o2 = _bond_by_bond(x, v, o, m, J, bonds, table, tau)
        assert np.abs(v1 - v).max() > 50 * np.abs(v1 - v2).max()
        diffs.append(max(np.abs(v1 - v2).max(), np.abs(o1 - o2).max()))
    slopes = np.log2(np.array(diffs[:-1]) / np.array(diffs[1:]))
    assert (slopes > 1.8).all() and (slopes < 2.2).all(), (diffs, slopes)


def test_the_twin_gives_the_compiled_bits():
    """``engine.interpreted``'s twin of the sweep (the kernel's source run by Python) on
    every kind of chunk, both directions, ``Π`` kept, at a step's ``τ`` and past every
    Taylor sum's range: the compiled kernel's bits."""
    from engine.interpreted import interpreted

    x, v, q, o, m, J, bonds, table = _network(nb=150)
    twin = interpreted(bond_damp_half)
    pi = np.random.default_rng(2).normal(size=v.shape)
    plans = plan_for(bonds, table, m, J), plan_for(bonds, table, m, J)
    for tau in (1e-3, 0.05, 3.0):
        for forward in (True, False, True):  # (the third: the geometry kept)
            a = [v.copy(), o.copy(), pi.copy()]
            b = [v.copy(), o.copy(), pi.copy()]
            da = bond_damp_half(x, a[0], q, a[1], a[2], m, J, table, tau, forward, True,
                                plans[0])
            db = twin(x, b[0], q, b[1], b[2], m, J, table, tau, forward, True, plans[1])
            assert np.array(da).tobytes() == np.array(db).tobytes()
            for s, t in zip(a, b, strict=True):
                assert s.tobytes() == t.tobytes(), (tau, forward)


def test_a_broken_bond_leaves_its_colour_and_each_copy_has_its_own_scratch():
    """``ForceField.take_bonds`` keeps the model's colours of the bonds left (a subset of
    a colouring is one, so a run resumed across a break sweeps in the same order) and
    the plan holds those bonds only; a working copy does not share the plan's scratch."""
    from test_bond_laws import _chain

    model = _chain({**ROT, **GAMMAS}, second={**SPR, "gamma": 0.5})
    ff = model.forcefield
    colours = ff.bond_colours
    assert (colours >= 0).all() and colours.max() >= 1
    work = ff.working_copy()
    assert work.damping_plan[5] is not ff.damping_plan[5]  # (the scratch)
    ids = np.array([0, 2, 3, 5, 8])
    work.take_bonds(ff, ids)
    assert (work.bond_colours == colours[ids]).all()
    order = work.damping_plan[1]
    assert sorted(order.tolist()) == list(range(len(ids)))
    assert work.arrays[-2] is work.damping_plan
    again = ff.working_copy()
    again.take_bonds(ff, ids)
    for a, b in zip(again.damping_plan[:4], work.damping_plan[:4], strict=True):
        assert np.array_equal(a, b)
    assert ff.copy().bond_colours.tolist() == colours.tolist()
    spring = work.bpm[:, bpm.C_LAW] == bpm.LAW_SPRING
    assert (work.bpm[spring, C_GAMMA_SPRING] == 0.5).all()


def test_the_geometry_kept_with_its_positions_gives_the_bits_of_a_fresh_plan():
    """The plan keeps each chunk's geometry with the positions and ``τ`` it was computed
    at (the backward sweep after a step and the forward one before the next share
    them): a sweep that takes it gives the bits of a fresh plan's, and one ulp of one
    coordinate, or another ``τ``, has it computed anew."""
    x, v, q, o, m, J, bonds, table = _network()
    kept = plan_for(bonds, table, m, J)
    x2 = x.copy()
    x2[17, 1] = np.nextafter(x2[17, 1], np.inf)
    for xs, tau, forward in ((x, 0.01, False), (x, 0.01, True), (x2, 0.01, True),
                             (x2, 0.02, True), (x, 0.02, False)):
        got = _sweep(xs, v, q, o, m, J, table, tau, forward, kept)
        want = _sweep(xs, v, q, o, m, J, table, tau, forward, plan_for(bonds, table, m, J))
        for a, b in zip(got, want, strict=True):
            assert np.asarray(a).tobytes() == np.asarray(b).tobytes(), (tau, forward)
        assert kept[-1][0] == tau and kept[-2].tobytes() == xs.tobytes()
