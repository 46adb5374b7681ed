"""Penalty contacts with friction springs and normal damping (issue #9 §1,
``engine.potentials.friction``, docs/physics.md §4.5): the laws on one sphere, the
energy balance ``E + D ≈ E₀``, the slots that survive neighbour-list rebuilds, and
checkpoints that carry the springs (resume bit-identical)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.forcefield import ForceField
from engine.layout import ENERGY_NAMES, P_K_WALL, T_CONTACT, T_HISTORY, T_WALL
from engine.models import MODELS
from engine.models.base import Model
from engine.simulation import Simulation
from engine.state import Bodies, State

PILE = MODELS["tori-pile"]
D_IDX = ENERGY_NAMES.index("dissipated")


def one_sphere(v=(0.0, 0.0, 0.0), omega=(0.0, 0.0, 0.0), *, mu=0.5, damping=0.0, k_t=4000.0,
               z=None, g=1.0, g_dir=(0.0, 0.0, -1.0), mass=1.0, inertia=1e-3, d=0.2,
               k_wall=2100.0) -> Model:
    """A sphere on (or above) the floor ``z ≥ 0`` under gravity ``g`` along ``g_dir``."""
    bodies = Bodies(np.array([mass]), np.array([inertia]), np.array([d]))
    ff = ForceField(bodies.m, bodies.J, bodies.D)
    ff.flags[T_WALL] = 1
    ff.fp[P_K_WALL] = k_wall
    ff.set_walls([((0.0, 0.0, 1.0), 0.0)])
    ff.set_gravity(g, g_dir)
    ff.set_friction(mu, k_t, damping)
    if z is None:  # resting: the Hertz force of the wall carries m g's normal part
        rad = 0.5 * d
        load = -mass * g * g_dir[2] / np.linalg.norm(g_dir)
        delta = (load * rad / k_wall) ** (2.0 / 3.0)
        z = rad * (1.0 - delta)
    x = np.array([[0.0, 0.0, z]])
    q = np.array([[1.0, 0.0, 0.0, 0.0]])
    return Model(name="one-sphere", title="a sphere on the floor", params={}, bodies=bodies,
                 forcefield=ff, initial_state=State(x, np.array([v], float), q,
                                                    np.array([omega], float)),
                 energy_components=("translational", "rotational", "gravity", "wall",
                                    "dissipated"),
                 conserved=(), walls=[((0.0, 0.0, 1.0), 0.0)], contact="penalty")


def test_the_flags_follow_the_parameters():
    assert not PILE.make({"n_tori": 2}).forcefield.flags[T_HISTORY]
    for kw in ({"mu": 0.3}, {"damping": 0.2}):
        m = PILE.make({"n_tori": 2, **kw})
        assert m.forcefield.flags[T_HISTORY] and m.forcefield.flags[T_CONTACT]
        assert "dissipated" in m.energy_components
    assert not PILE.make({"n_tori": 2, "mu": 0.3, "k_t": 0.0}).forcefield.flags[T_HISTORY]
    with pytest.raises(ValueError, match="mu"):
        ForceField(np.ones(1), np.ones(1), np.ones(1)).set_friction(-1.0, 1.0)


def test_a_sliding_sphere_spins_up_and_rolls_at_the_predicted_speed():
    """Coulomb friction at the contact point decelerates the sphere and spins it up
    until it rolls: the angular momentum about the contact point is kept, so
    ``v_roll = v₀ / (1 + J/(m a²))`` (``a`` the lever), and ``Ω_y a = v`` then.  The
    sliding phase lasts ``t_s = (v₀ − v_roll)/(μ g)``."""
    m, J, d, mu, g, v0 = 1.0, 1e-3, 0.2, 0.5, 1.0, 0.3
    model = one_sphere(v=(v0, 0.0, 0.0), mu=mu, mass=m, inertia=J, d=d, g=g)
    h = 2e-4
    sim = Simulation(model, "rrp-newmark", h, record_every=5)
    a = 0.5 * d  # (the lever to the middle of the overlap, to 1e-3)
    v_roll = v0 / (1.0 + J / (m * a * a))
    t_slide = (v0 - v_roll) / (mu * g)
    assert sim.advance(int((t_slide + 1.0) / h)).ok
    # rolling, the sphere rocks on the tangential spring (period ≈ 0.1): averages over
    # the last 0.5 s
    r = sim.series.arrays()
    late = r["t"] > sim.t - 0.5
    v = r["P"][late, 0] / m
    w = r["omega"][late, 0, 1]
    assert v.mean() == pytest.approx(v_roll, rel=2e-3)
    assert (w * a).mean() == pytest.approx(v.mean(), rel=2e-3)  # Ω along +y: rolling
    assert np.ptp(v) < 0.1 * v_roll
    # half way through the sliding phase: the Coulomb deceleration μ g
    sim2 = Simulation(model, "rrp-newmark", 2e-4, record_every=50, record_frames=False)
    sim2.advance(int(0.5 * t_slide / 2e-4))
    assert sim2.state.v[0, 0] == pytest.approx(v0 - mu * g * sim2.t, rel=1e-2)
    # the work of friction is in D: E + D is E₀
    D = sim.energy[D_IDX]
    assert D == pytest.approx(0.5 * m * (v0 ** 2 - v_roll ** 2)
                              - 0.5 * J * (v_roll / a) ** 2, rel=0.1)
    assert abs(sim.relative_energy_error) < 2e-3


@pytest.mark.parametrize("tan_alpha,rolls", [(0.2, True), (10.0, False)])
def test_on_an_incline_the_sphere_rolls_below_the_limit_and_slides_above(tan_alpha, rolls):
    """Gravity tilted by ``α`` off the floor's normal (μ = 0.5, ``J/(m a²) = 0.1``).
    Rolling needs ``f = m g sin α · κ/(1 + κ)`` (``κ = J/(m a²)``) within ``μ m g cos α``,
    i.e. ``tan α ≤ μ (1 + 1/κ) = 5.5``: below, it rolls without slipping with
    ``ẍ = g sin α/(1 + κ)`` and dissipates nothing; above, it slides with
    ``ẍ = g (sin α − μ cos α)`` and ``D`` is the friction work ``μ m g cos α · slip``."""
    mu, d, J = 0.5, 0.2, 1e-3
    a = 0.5 * d
    kappa = J / a ** 2
    alpha = np.arctan(tan_alpha)
    model = one_sphere(mu=mu, inertia=J, d=d, g_dir=(np.sin(alpha), 0.0, -np.cos(alpha)))
    h = 2e-4
    sim = Simulation(model, "rrp-newmark", h, record_every=100, record_frames=False)
    assert sim.advance(5000).ok  # t = 1
    x, v, w = sim.state.x[0, 0], sim.state.v[0, 0], sim.state.omega[0, 1]
    if rolls:
        acc = np.sin(alpha) / (1.0 + kappa)
        assert x == pytest.approx(0.5 * acc * sim.t ** 2, rel=1e-2)
        assert w * a == pytest.approx(v, rel=1e-2)
        assert sim.energy[D_IDX] < 1e-3 * 0.5 * v * v  # no slip (the start's settling)
    else:
        acc = np.sin(alpha) - mu * np.cos(alpha)
        assert v == pytest.approx(acc * sim.t, rel=1e-2)
        w_expected = mu * np.cos(alpha) * a / J * sim.t  # spun up by the friction moment
        assert w == pytest.approx(w_expected, rel=2e-2)
        slip = x - a * w_expected * sim.t / 2.0
        assert sim.energy[D_IDX] == pytest.approx(mu * np.cos(alpha) * slip, rel=2e-2)


def test_damping_makes_a_dropped_sphere_bounce_lower_and_d_balances():
    hs = []
    for zeta in (0.0, 0.4):
        model = one_sphere(mu=0.0, damping=zeta, z=0.3)
        sim = Simulation(model, "rrp-newmark", 1e-4, record_every=10, record_frames=False)
        assert sim.advance(12_000).ok
        hs.append((sim, sim.series.arrays()["energy"]))
    (s0, e0), (s1, e1) = hs
    assert not e0[:, D_IDX].any() and abs(s0.relative_energy_error) < 1e-4
    assert e1[-1, D_IDX] > 0.1 * abs(e1[0].sum() - e1[0, ENERGY_NAMES.index("gravity")])
    assert (np.diff(e1[:, D_IDX]) >= 0.0).all()
    assert abs(s1.relative_energy_error) < 5e-3
    # the damped sphere has lost most of its bounce: it ends lower (less kinetic energy)
    assert e1[-1, 0] + e1[-1, ENERGY_NAMES.index("gravity")] < \
        e0[-1, 0] + e0[-1, ENERGY_NAMES.index("gravity")]


def test_e_plus_d_balances_to_second_order_in_h():
    """The work of slip and damping is taken as the kicks apply it: ``E + D − E₀`` is
    second order in ``h`` (a pile with friction and damping: halving h about quarters
    it; were D not the work removed, the error would tend to ``D/E₀``, not 0)."""
    errs = []
    for h in (1e-3, 5e-4):
        model = PILE.make({"n_tori": 6, "mu": 0.5, "damping": 0.2, "box": 4.0})
        sim = Simulation(model, "rrp-newmark", h, record_every=100, record_frames=False)
        assert sim.advance(int(3.0 / h)).ok
        errs.append(abs(sim.relative_energy_error))
        d_rel = sim.energy[D_IDX] / abs(sim.e_ref)
    assert d_rel > 0.2  # much was dissipated
    assert errs[0] < 0.1 * d_rel
    assert errs[0] / errs[1] > 3.0, errs


def test_springs_outlive_neighbour_list_rebuilds_and_grow_their_slots():
    model = PILE.make({"n_tori": 10, "mu": 0.5, "damping": 0.5, "box": 3.0})
    sim = Simulation(model, "rrp-newmark", 2e-3, record_every=100, record_frames=False)
    rebuilds0 = int(sim.ff.nl_state[1])
    assert sim.advance(2500).ok
    assert int(sim.ff.nl_state[1]) > rebuilds0 + 5  # the list was rebuilt many times
    partner, xi = sim.ff.committed_springs()
    live = partner >= 0
    assert live.sum() > 30  # resting on the floor and on each other
    # a sticking contact keeps its spring across a rebuild: force one and step once
    before = {(i, int(partner[i, s])): xi[i, s].copy() for i, s in zip(*np.nonzero(live),
                                                                         strict=True)}
    sim.ff.invalidate_neighbours()
    assert sim.advance(1).ok
    p2, x2 = sim.ff.committed_springs()
    after = {(i, int(p2[i, s])): x2[i, s] for i, s in zip(*np.nonzero(p2 >= 0), strict=True)}
    kept = [k for k in before if k in after]
    assert len(kept) > 0.8 * len(before)
    moved = np.array([np.linalg.norm(after[k] - before[k]) for k in kept])
    sizes = np.array([np.linalg.norm(before[k]) for k in kept])
    assert np.median(moved) < 0.5 * np.median(sizes)  # continued, not restarted from 0


def test_too_few_slots_are_grown_without_changing_the_run():
    runs = []
    for slots in (1, None):
        model = PILE.make({"n_tori": 10, "mu": 0.5, "damping": 0.5, "box": 3.0})
        sim = Simulation(model, "rrp-newmark", 2e-3, record_every=100, record_frames=False)
        if slots:
            sim.ff.reset_history(sim.state.x, sim.state.q,
                                 (np.full((model.n_bodies, slots), -1, np.int32),
                                  np.zeros((model.n_bodies, slots, 4))))
        assert sim.advance(2500).ok
        runs.append(sim)
    assert runs[0].ff.history[2].shape[2] >= 2  # grown
    np.testing.assert_allclose(runs[0].state.x, runs[1].state.x, rtol=0, atol=1e-10)


@pytest.mark.parametrize("integrator", ["rrp-newmark", "yoshida4:rrp-newmark"])
def test_resume_and_restore_with_springs_are_bit_identical(integrator):
    model = PILE.make({"n_tori": 6, "mu": 0.5, "damping": 0.2, "box": 4.0})
    ref = Simulation(model, integrator, 2e-3, record_every=50, record_frames=False)
    assert ref.advance(1200).ok  # in contact, springs loaded
    assert np.abs(ref.ff.committed_springs()[1]).max() > 0.0
    d = ref.resume_state()
    cp = ref.checkpoint()
    assert ref.advance(300).ok
    res = Simulation.from_resume_state(model, d)
    assert res.advance(300).ok
    for k in ("x", "v", "q", "omega"):
        assert np.array_equal(getattr(res.state, k), getattr(ref.state, k)), k
    assert np.array_equal(res.energy, ref.energy)
    # in memory: back to the checkpoint, the same 300 steps again
    end = ref.state.x.copy()
    ref.restore(cp)
    assert ref.advance(300).ok
    np.testing.assert_allclose(ref.state.x, end, rtol=0, atol=1e-9)


def test_saved_state_lists_the_live_springs_and_format_1_still_resumes():
    """A checkpoint (format 2) keeps the committed springs as a list and the used part of
    the neighbour list; a format-1 checkpoint (the full slot table and list) of the
    same instant resumes to the same bits."""
    model = PILE.make({"n_tori": 6, "mu": 0.5, "damping": 0.2, "box": 4.0})
    ref = Simulation(model, "rrp-newmark", 2e-3, record_every=50, record_frames=False)
    assert ref.advance(1200).ok
    d = ref.resume_state()
    partner, xi = ref.ff.committed_springs()
    live = np.logical_and.accumulate(partner >= 0, axis=1)
    assert d["format"] == 2 and len(d["springs_sphere"]) == live.sum() > 10
    assert len(d["nl_pairs"]) == ref.ff.nl_state[0] < d["nl_capacity"]
    old = {k: v for k, v in d.items() if not k.startswith("springs_") and k != "nl_capacity"}
    old.update(format=1, history_partner=partner, history_xi=xi,
               nl_pairs=ref.ff.nl_pairs.copy())
    runs = [Simulation.from_resume_state(model, s) for s in (d, old)]
    assert runs[0].ff.nl_pairs.shape == ref.ff.nl_pairs.shape
    for sim in runs:
        assert sim.advance(300).ok
    assert ref.advance(300).ok
    for sim in runs:
        for k in ("x", "v", "q", "omega"):
            assert np.array_equal(getattr(sim.state, k), getattr(ref.state, k)), k


def test_a_springs_list_ends_at_its_first_free_slot():
    """Slots after a sphere's ``-1`` may hold springs of a longer list of two steps
    before; the kernels never read them, and neither does the list a frame or a
    checkpoint keeps (they would come back as live springs)."""
    model = PILE.make({"n_tori": 2, "mu": 0.5, "box": 3.0})
    sim = Simulation(model, "rrp-newmark", 1e-3, record_every=50, record_frames=False)
    n = model.n_bodies
    partner = np.full((n, 6), -1, np.int32)
    xi = np.zeros((n, 6, 4))
    partner[0, :4] = [5, 7, -1, 9]  # 9: stale, past the end of the list
    xi[0, :4, 0] = [1.0, 2.0, 0.0, 3.0]
    sim.ff.reset_history(sim.state.x, sim.state.q, (partner, xi))
    sphere, part, xs = sim.ff.committed_springs_sparse()
    assert sphere.tolist() == [0, 0] and part.tolist() == [5, 7]
    assert xs[:, 0].tolist() == [1.0, 2.0]
    dense_p, dense_x = sim.ff.dense_springs(sphere, part, xs, slots=8)
    assert dense_p.shape == (n, 8) and dense_p[0, :3].tolist() == [5, 7, -1]
    assert (dense_p[1:] == -1).all()


@pytest.mark.slow  # every sphere scheme compiled for the friction family (docs/testing.md)
@pytest.mark.parametrize("damping", [0.0, 0.2])
def test_every_sphere_scheme_runs_the_frictional_pile(damping):
    """Every scheme usable on the penalty pile takes it with friction (and damping):
    finite, E + D within a few per cent of E₀ over the first impacts, D never falling."""
    from engine.simulation import usable_integrators

    model = PILE.make({"n_tori": 4, "mu": 0.5, "damping": damping, "box": 2.7,
                       "velocity_noise": 0.5, "seed": 3})
    names = usable_integrators(model)
    assert {"rrp-newmark", "rk4", "lgvi", "campello-implicit", "yoshida4:rrp-newmark"} <= \
        set(names)
    for name in names:
        sim = Simulation(model, name, 1e-3, record_every=20, record_frames=False)
        rep = sim.advance(1500)
        assert rep.ok, (name, rep.failure)
        e = sim.series.arrays()["energy"]
        assert e[-1, D_IDX] > 0.0 and (np.diff(e[:, D_IDX]) >= 0.0).all(), name
        # friction's and damping's work is taken as the kicks apply it: E + D is the
        # scheme's own accuracy
        # (campello-implicit, φ = ½, loses 40 % of E₀ on this pile without friction
        # too: its own numerical dissipation, not the contacts')
        tol = 0.5 if name == "campello-implicit" else 1e-2
        assert abs(sim.relative_energy_error) < tol, (name, sim.relative_energy_error)


def test_the_stability_estimate_sees_the_friction_spring_and_the_damping():
    """A sphere resting on the floor: the tangential spring bounds the rotation row by
    ``k_t (D/2)²/J`` (the stiffest here), and damping lowers the Hertz limit by
    ``sqrt(1 + ζ²) − ζ``."""
    rad, J = 0.1, 1e-3
    free = Simulation(one_sphere(mu=0.0), "rrp-newmark", 1e-4).stability()
    stiff = Simulation(one_sphere(mu=0.5, k_t=1e6), "rrp-newmark", 1e-4).stability()
    assert stiff.kind == "friction spring" and stiff.body == 0
    assert stiff.h_stable == pytest.approx(2.0 / np.sqrt(1e6 * rad * rad / J), rel=1e-12)
    assert free.kind == "wall contact"
    damped = Simulation(one_sphere(mu=0.0, damping=0.5), "rrp-newmark", 1e-4).stability()
    assert damped.h_stable == pytest.approx(free.h_stable * (np.sqrt(1.25) - 0.5), rel=1e-9)


def test_frames_keep_the_springs_a_branch_retraces_the_run_and_a_resume_keeps_them(
        tmp_path):
    """A frictional, damped pile recorded to a file: each frame holds the committed
    springs (and ``F``, ``RM``, whose damping depends on the step before), so a run
    branched from a frame retraces the recording bit for bit; without them it departs.
    A writer killed after its checkpoint and resumed leaves the same springs in the
    file as an unbroken run."""
    import dataclasses

    from engine.io import RunFile, RunWriter, read_run

    model = PILE.make({"n_tori": 6, "mu": 0.5, "damping": 0.2, "box": 4.0})
    h, every = 2e-3, 100
    straight = Simulation(model, "rrp-newmark", h, record_every=every, record_state=True)
    for chunk in (370, 430, 333, 467):  # chunks that end between records
        assert straight.advance(chunk).ok
    path = tmp_path / "run.h5"
    first = Simulation(model, "rrp-newmark", h, record_every=every)
    w = RunWriter(path, first, keep_frames=False)
    assert first.advance(800).ok
    w.flush(checkpoint=True)
    assert first.advance(200).ok  # rows after the checkpoint, then the writer dies
    w.flush(checkpoint=False)
    w.f.close()
    w._lock.release()  # (the writer dies: its lock on the output goes with its process)
    partial = w.partial  # (<name>.<pid>.partial)
    with RunFile(partial) as rf:
        d, n_records = rf.resume_state()
        assert rf.n_frames == 11 and n_records == 9
    resumed = Simulation.from_resume_state(model, d)
    w = RunWriter.resume(path, resumed, partial, n_records, keep_frames=False)
    assert resumed.advance(800).ok
    w.close()

    run = read_run(path)
    sp = run["springs"]
    assert len(sp["start"]) == len(sp["count"]) == 17
    np.testing.assert_array_equal(sp["start"][1:], sp["start"][:-1] + sp["count"][:-1])
    assert len(sp["sphere"]) == sp["start"][-1] + sp["count"][-1]
    assert sp["count"][-1] > 10  # the pile rests on springs
    rows = [straight.series.springs[r] for r in range(17)]
    for k, name in enumerate(("sphere", "partner", "xi")):
        np.testing.assert_array_equal(sp[name], np.concatenate([r[k] for r in rows]))
    np.testing.assert_array_equal(run["bodies"]["force"], straight.series.arrays()["force"])

    with RunFile(path) as rf:
        start, end = rf.frame(12), rf.frame(15)
    assert start.springs is not None and len(start.springs[0]) == sp["count"][12]
    for springs in (True, False):
        fr = start if springs else dataclasses.replace(start, springs=None, F=None, RM=None)
        b = Simulation.from_frame(model, fr, "rrp-newmark", h, record_frames=False)
        assert b.advance(end.step - start.step).ok
        gap = max(np.abs(getattr(b.state, k) - getattr(end, k)).max()
                  for k in ("x", "v", "q", "omega"))
        if springs:
            assert gap == 0.0
        else:  # the springs from zero: the pile slips and departs from the recording
            assert gap > 1e-4
