"""Deterministic parallel force kernels (issue #9 §2): the same bits for 1 and 2
threads, forces equal to the serial kernels' to round-off, ``--threads`` validated."""

from __future__ import annotations

import numpy as np
import pytest

from engine.forcefield import compute_forces_ws, new_scratch
from engine.layout import E_CONTACT, E_WALL, N_ENERGY, OK
from engine.models import MODELS
from engine.parallel import (
    PARALLEL_MIN_BODIES,
    PARALLEL_MIN_UPDATE,
    get_threads,
    max_threads,
    set_threads,
)
from engine.potentials.friction import H_DISSIPATED, H_TAU, HI_CURRENT, commit_history
from engine.simulation import Simulation

PILE = MODELS["tori-pile"]
N_TORI = 250  # 5,000 spheres: above the threshold
assert N_TORI * 20 >= PARALLEL_MIN_BODIES


def _pile(**kw):
    return PILE.make({"n_tori": N_TORI, "velocity_noise": 0.5, "spin_noise": 1.0, "seed": 4,
                      **kw})


@pytest.fixture
def restore_threads():
    before = get_threads()
    yield
    set_threads(before)


@pytest.mark.parametrize("friction", [{}, {"mu": 0.5, "damping": 0.3}])
def test_parallel_forces_equal_the_serial_ones(friction):
    """Gather per body (parallel) vs scatter per pair and bond (serial), on a perturbed
    pile pushed into the floor: bonds, contacts, walls and gravity all act (and friction
    springs and damping, anchored at the unperturbed pile, with committed springs)."""
    model = _pile(**friction)
    ff = model.forcefield
    rng = np.random.default_rng(1)
    x = model.initial_state.x.copy()
    x[:, 2] -= x[:, 2].min() - 0.01  # the lowest layer into the floor
    x += rng.normal(0.0, 0.02, x.shape)
    q = model.initial_state.q + rng.normal(0.0, 0.05, (x.shape[0], 4))
    q /= np.linalg.norm(q, axis=1)[:, None]
    n = x.shape[0]
    if friction:  # anchored at a nearby configuration, with springs of every contact
        ff.reset_history(model.initial_state.x + rng.normal(0.0, 0.002, x.shape),
                         model.initial_state.q)
        ff.invalidate_neighbours()
        F, RM, e = np.zeros((n, 3)), np.zeros((n, 3)), np.zeros(N_ENERGY)
        assert compute_forces_ws(x, q, ff.arrays, F, RM, e, new_scratch(n)) == OK
        commit_history(ff.history, x + rng.normal(0.0, 0.002, x.shape), q)
        partner, xi = ff.committed_springs()
        assert (partner >= 0).sum() > 10 and np.abs(xi).max() > 0.0
        ff.history[0][H_TAU] = 2e-3  # (the damping velocity is the displacement / τ)
    out = []
    for ws in (new_scratch(n), new_scratch(n, ff.arrays)):  # serial, parallel
        assert (ws[2][1].shape[0] > 0) == (len(out) == 1)
        F, RM, e = np.zeros((n, 3)), np.zeros((n, 3)), np.zeros(N_ENERGY)
        ff.invalidate_neighbours()
        assert compute_forces_ws(x, q, ff.arrays, F, RM, e, ws) == OK
        out.append((F, RM, e, ff.history[0][H_DISSIPATED], _trial(ff)))
    (F0, RM0, e0, d0, t0), (F1, RM1, e1, d1, t1) = out
    if friction:
        assert d0 > 0.0 and d1 == pytest.approx(d0, rel=1e-12)
        assert t0 == pytest.approx(t1, rel=1e-12, abs=1e-300)  # the same trial springs
    assert e0[E_CONTACT] > 0.0 and e0[E_WALL] > 0.0
    assert np.abs(F1 - F0).max() <= 1e-12 * np.abs(F0).max()
    assert np.abs(RM1 - RM0).max() <= 1e-12 * np.abs(RM0).max()
    np.testing.assert_allclose(e1, e0, rtol=1e-12, atol=0.0)
    # a second evaluation on the same scratch (adjacencies reused) gives the same bits
    F2, RM2, e2 = np.zeros((n, 3)), np.zeros((n, 3)), np.zeros(N_ENERGY)
    assert compute_forces_ws(x, q, ff.arrays, F2, RM2, e2, new_scratch(n, ff.arrays)) == OK
    assert np.array_equal(F2, F1) and np.array_equal(RM2, RM1) and np.array_equal(e2, e1)


def test_bonds_in_any_order_give_the_same_forces():
    """The parallel kernels take each chunk's own bonds as one run of the bond array when
    the bonds are sorted by their first end (as the models build them) and through a
    per-chunk list otherwise: with the bonds shuffled, the forces still equal the
    serial kernels' to round-off."""
    model = _pile()
    ff = model.forcefield
    n = model.initial_state.n
    rng = np.random.default_rng(2)
    x = model.initial_state.x + rng.normal(0.0, 0.01, (n, 3))
    q = model.initial_state.q + rng.normal(0.0, 0.05, (n, 4))
    q /= np.linalg.norm(q, axis=1)[:, None]
    assert np.all(np.diff(ff.bonds[:, 0]) >= 0)

    def forces(ws):
        F, RM, e = np.zeros((n, 3)), np.zeros((n, 3)), np.zeros(N_ENERGY)
        ff.invalidate_neighbours()
        assert compute_forces_ws(x, q, ff.arrays, F, RM, e, ws) == OK
        return F, RM, e

    F0, RM0, e0 = forces(new_scratch(n))  # serial
    perm = rng.permutation(ff.bonds.shape[0])
    ff.bonds[:] = ff.bonds[perm]
    ff.bond_ref[:] = ff.bond_ref[perm]
    F1, RM1, e1 = forces(new_scratch(n, ff.arrays))  # parallel, bonds unsorted
    assert np.abs(F1 - F0).max() <= 1e-12 * np.abs(F0).max()
    assert np.abs(RM1 - RM0).max() <= 1e-12 * np.abs(RM0).max()
    np.testing.assert_allclose(e1, e0, rtol=1e-12, atol=0.0)


def _trial(ff) -> dict:
    """The trial springs of the last evaluation, by contact ``(i, partner)``."""
    b = 1 - int(ff.history[1][HI_CURRENT])
    partner, xi = ff.history[2][b], ff.history[3][b]
    out = {}
    for i, s in zip(*np.nonzero(partner >= 0), strict=True):
        out[(int(i), int(partner[i, s]))] = float(np.linalg.norm(xi[i, s]))
    return out


@pytest.mark.skipif(max_threads() < 2, reason="needs NUMBA_NUM_THREADS >= 2")
@pytest.mark.parametrize("integrator,friction", [  # (pfc-verlet: slow, docs/testing.md)
    ("rrp-newmark", {}), pytest.param("pfc-verlet", {}, marks=pytest.mark.slow),
    ("rrp-newmark", {"mu": 0.5, "damping": 0.3})])
def test_same_bits_for_one_and_two_threads(integrator, friction, restore_threads):
    states = []
    for threads in (1, 2):
        set_threads(threads)
        sim = Simulation(_pile(**friction), integrator, 2e-3, record_every=100,
                         record_frames=False)
        rep = sim.advance(1000)
        assert rep.ok, rep.failure
        states.append({k: getattr(sim.state, k).copy() for k in ("x", "v", "q", "omega")})
        if friction:
            states[-1]["springs"] = sim.ff.committed_springs()[1]
    e = sim.series.arrays()["energy"]
    assert e[:, E_CONTACT].max() > 0.0  # the rings collide
    for k in ("x", "v", "q", "omega"):
        assert np.array_equal(states[0][k], states[1][k]), k
    if friction:
        assert np.abs(states[0]["springs"]).max() > 0.0
        assert np.array_equal(states[0]["springs"], states[1]["springs"])


@pytest.mark.skipif(max_threads() < 2, reason="needs NUMBA_NUM_THREADS >= 2")
@pytest.mark.parametrize("integrator", [  # (one scheme in the default run: docs/testing.md)
    "rrp-newmark", *(pytest.param(s, marks=pytest.mark.slow) for s in ("pfc-verlet", "rrp-exact"))])
def test_same_bits_above_the_update_threshold(integrator, restore_threads):
    """From PARALLEL_MIN_UPDATE spheres the velocity-Verlet updates run chunk by chunk
    in parallel and the kinetic energy is summed per chunk: still the same bits, energies
    included, for 1 and 2 threads."""
    n_tori = PARALLEL_MIN_UPDATE // 20 + 1
    dp = np.sin(np.pi / 20)
    box = np.ceil(n_tori ** (1 / 3)) * (1 + 2 * dp) + 0.5 * dp  # (a cube of rings)
    model = PILE.make({"n_tori": n_tori, "box": box, "velocity_noise": 1.0,
                       "spin_noise": 2.0, "seed": 5})
    runs = []
    for threads in (1, 2):
        set_threads(threads)
        sim = Simulation(model, integrator, 1e-3, record_every=25, record_frames=False)
        rep = sim.advance(200)
        assert rep.ok, rep.failure
        runs.append(({k: getattr(sim.state, k).copy() for k in ("x", "v", "q", "omega")},
                     sim.series.arrays()["energy"].copy()))
    (s1, e1), (s2, e2) = runs
    assert s1["x"].shape[0] >= PARALLEL_MIN_UPDATE
    assert e1[:, E_CONTACT].max() > 0.0 and np.abs(s1["omega"]).max() > 0.0
    for k in s1:
        assert np.array_equal(s1[k], s2[k]), k
    assert np.array_equal(e1, e2)


def test_set_threads_validates(restore_threads):
    assert set_threads(1) == 1 and get_threads() == 1
    for bad in (0, -1, max_threads() + 1, 1.5, True):
        with pytest.raises(ValueError, match="threads must be an integer from 1 to"):
            set_threads(bad)


@pytest.mark.parametrize("command", [["run", "pendulum"], ["sweep", "pendulum", "-i",
                                                              "rk4", "--h", "0.01"]])
@pytest.mark.parametrize("value", ["0", "many", None])
def test_cli_threads_out_of_range_is_a_one_line_error(command, value, capsys):
    from app.cli import main

    value = str(max_threads() + 1) if value is None else value
    assert main([*command, "--threads", value]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--threads" in err[0], err
