"""The velocity-Verlet family stepped in place on large models of spheres
(``engine.integrators.advance._advance_in_place``): the same scheme as the
double-buffered step to round-off, and a failed step rewound to the last good state
bit for bit (from the call's checkpoint, the good steps replayed)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.forcefield import new_scratch
from engine.integrators.advance import in_place_rot_map
from engine.layout import E_CONTACT, ERR_NEIGHBOUR_OVERFLOW, NL_COUNT
from engine.models import MODELS
from engine.parallel import PARALLEL_MIN_UPDATE
from engine.simulation import Simulation

PILE = MODELS["tori-pile"]
KEYS = ("x", "v", "q", "omega")


@pytest.fixture(scope="module")
def model():
    """A cube of rings just above the threshold, moving and spinning: the rings collide
    within the first steps."""
    n_tori = PARALLEL_MIN_UPDATE // 20 + 1
    dp = np.sin(np.pi / 20)
    box = np.ceil(n_tori ** (1 / 3)) * (1 + 2 * dp) + 0.5 * dp
    return PILE.make({"n_tori": n_tori, "box": box, "velocity_noise": 2.0,
                      "spin_noise": 2.0, "seed": 7})


def _state(sim) -> dict[str, np.ndarray]:
    return {k: getattr(sim.state, k).copy() for k in KEYS}


def _after(model, integrator: str, steps: int, every: int = 1, **kw) -> Simulation:
    sim = Simulation(model, integrator, 1e-3, record_every=every, record_frames=False, **kw)
    if steps:
        rep = sim.advance(steps)
        assert rep.ok, rep.failure
    return sim


@pytest.mark.slow  # (the 10⁵-sphere pile; rrp-newmark in place stays: docs/testing.md)
def test_the_large_pile_steps_in_place(model):
    sim = _after(model, "rrp-newmark", 0)
    ff = sim.ff.arrays
    assert in_place_rot_map(1, sim._s0, ff, new_scratch(sim.ff.n_bodies, ff)) >= 0
    sim.ff.set_friction(0.5, 1e4)  # springs: double-buffered
    ff = sim.ff.arrays
    assert in_place_rot_map(1, sim._s0, ff, new_scratch(sim.ff.n_bodies, ff)) == -1


@pytest.mark.parametrize("integrator", [  # (one scheme in the default run: docs/testing.md)
    "rrp-newmark", *(pytest.param(s, marks=pytest.mark.slow) for s in ("rrp-exact", "pfc-verlet"))])
def test_in_place_equals_the_double_buffered_step(model, integrator):
    """The half kick kept in ``v`` instead of ``F₀``: the same scheme as
    ``verlet_step_ws`` (``s0 → s1``), to round-off but not to the bit."""
    from engine.integrators.verlet import verlet_step_ws

    a = _after(model, integrator, 30)
    sim = _after(model, integrator, 0)
    s0, s1 = sim._s0, sim._s1
    ff, ws, info = sim.ff.arrays, sim._scratch(sim.ff.arrays), np.zeros(4)
    rot = {"rrp-exact": 0, "rrp-newmark": 1, "pfc-verlet": 2}[integrator]
    for _ in range(30):
        assert verlet_step_ws(1e-3, rot, s0, s1, ff, info, ws) == 0
        s0, s1 = s1, s0
    e = a.series.arrays()["energy"]
    assert e[:, E_CONTACT].max() > 0.0
    assert not np.array_equal(a.state.v, s0[1])  # (another rounding: another path)
    for k, arr in zip(KEYS, s0[:4], strict=True):
        ref = getattr(a.state, k)
        np.testing.assert_allclose(ref, arr, rtol=0, atol=1e-12 * max(1.0, np.abs(arr).max()))


@pytest.mark.parametrize("integrator", [  # (one scheme in the default run: docs/testing.md)
    "rrp-newmark", pytest.param("pfc-verlet", marks=pytest.mark.slow)])
def test_steps_joined_in_one_pass_give_the_same_bits(model, integrator):
    """Between two steps of a call, neither recorded nor the last, the kicks of the one
    and the first half of the next are one pass (``finish_in_place_ws``): 30 steps in one
    call, every 7th recorded, give the same bits as 30 calls of one step each (never
    joined), state, forces, energies and records."""
    joined = _after(model, integrator, 30, every=7)
    single = _after(model, integrator, 0, every=7)
    for _ in range(30):
        assert single.advance(1).ok
    for key, arr in _state(single).items():
        assert np.array_equal(getattr(joined.state, key), arr), key
    assert np.array_equal(joined._s0[4], single._s0[4])
    assert np.array_equal(joined.energy, single.energy)
    a, b = joined.series.arrays(), single.series.arrays()
    assert a["energy"].shape[0] == 5  # the start and steps 7, 14, 21, 28
    for key in a:
        assert np.array_equal(a[key], b[key]), key


def test_a_failed_step_leaves_the_last_good_state_bit_for_bit(model):
    """An energy tolerance first crossed at step ``k`` (mid-call, after the state has
    changed in place): the run stops with the state after ``k − 1`` steps, the same
    bits as a run of ``k − 1`` steps, and the records of those steps only."""
    ref = _after(model, "rrp-newmark", 40)
    e = ref.series.arrays()["energy"].sum(axis=1)  # (row k: step k; row 0 the start)
    err = np.abs(e - ref.e_ref) / ref.e_scale
    best = np.maximum.accumulate(err)
    records = [k for k in range(10, 41) if err[k] > best[k - 1] * 1.01]
    assert records, err  # (a new largest error after step 10)
    k = records[-1]
    tol = 0.5 * (err[k] + best[k - 1])
    # (every 4th step recorded: the steps between records are joined in one pass,
    # finish_in_place_ws, and the replay takes them one by one)
    sim = _after(model, "rrp-newmark", 0, every=4, energy_tolerance=tol)
    rep = sim.advance(40)
    assert not rep.ok and rep.failure.kind == "energy" and rep.steps == k - 1
    good = _after(model, "rrp-newmark", k - 1, every=4)
    for key, arr in _state(good).items():
        assert np.array_equal(getattr(sim.state, key), arr), key
    assert np.array_equal(sim._s0[4], good._s0[4])  # the forces too
    assert np.array_equal(sim.energy, good.energy)
    assert np.array_equal(sim.series.arrays()["energy"], good.series.arrays()["energy"])


def test_an_overflowing_list_rewinds_to_the_same_bits(model):
    """The neighbour list overflows at a rebuild inside a call: the call returns the
    state after the good steps, the same bits as a run whose list had room (the forces
    do not depend on which valid list holds the contacts)."""
    sim = _after(model, "rrp-newmark", 0, every=1000)
    count = int(sim.ff.nl_state[NL_COUNT])  # (the rings apart: maybe none listed)
    sim.ff.nl_pairs = np.zeros((max(count, 1), 2), dtype=np.int64)  # full: the next
    sim.ff.invalidate_neighbours()                                   # denser list overflows
    done, status = sim._call_kernel(60)
    assert status == ERR_NEIGHBOUR_OVERFLOW and 0 < done < 60
    good = _after(model, "rrp-newmark", done)
    for key, arr in _state(good).items():
        assert np.array_equal(getattr(sim.state, key), arr), key
    rep = sim.advance(60 - done)  # the list grown, the run goes on
    assert rep.ok and sim.step_index == 60
