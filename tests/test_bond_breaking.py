"""Breaking of BPM bonds (issue #44 item 2; ``engine.potentials.bpm_break``,
``engine.simulation.breaking``; docs/physics.md "Breaking").

Each law's criterion exactly at its threshold (``bpm/spring``: the strain ``|e| > ε_c``,
strict; ``bpm/rotational``: ``B ≥ 1``, tension only raising it); a pulled pair breaking
at the first step whose end state is past the criterion; ``E + broken`` constant across a
break to round-off (the bond's stored energy booked); a run resumed before and after a
break equal to the unbroken run bit for bit; the broken bonds kept in the run file's
``/events`` and out of a resumed model; the scenario's ``break = true`` and the deck's
``break yes`` (LAMMPS's impact example's ``store/local``) carried; a model whose bonds
never break compiling none of it."""

from __future__ import annotations

import gzip
import math
from pathlib import Path

import numpy as np
import pytest
from lammps_peer import requires_lammps, run_lammps

from engine.io.lammps.deck_bonds import bond_laws, bond_style
from engine.io.lammps.tables import LammpsDataError
from engine.io.lammps.units import UNITS
from engine.layout import E_AXIAL, E_BROKEN, E_SPRING
from engine.models import builders
from engine.models.assembly import model_of
from engine.potentials import bpm
from engine.potentials.bpm_break import ratios
from engine.rotations import quat_from_rotvec
from engine.simulation import Simulation
from engine.specialize import BREAKS

SPR = {"law": "bpm/spring", "k": 400.0, "eps_c": 0.03, "gamma": 0.0, "smooth": False,
       "break": True}
ROT = {"law": "bpm/rotational", "k_r": 400.0, "k_s": 200.0, "k_t": 2.0, "k_b": 4.0,
       "f_rc": 4.0, "f_sc": 3.0, "tau_bc": 0.05, "tau_tc": 0.04,
       "gamma_n": 0.0, "gamma_s": 0.0, "gamma_r": 0.0, "gamma_t": 0.0, "smooth": False,
       "break": True}


def _table(law: dict, x: np.ndarray, q: np.ndarray) -> np.ndarray:
    t = bpm.law_row(law["law"], law, law["smooth"], law["break"])[None].copy()
    bpm.reference(t, x, q, np.array([[0, 1]]))
    return t


def _pair(r: float, rotvec=(0.0, 0.0, 0.0)) -> tuple[np.ndarray, np.ndarray]:
    x = np.array([[r, 0.0, 0.0], [0.0, 0.0, 0.0]])
    q = np.zeros((2, 4))
    q[:, 0] = 1.0
    q[0] = quat_from_rotvec(np.asarray(rotvec, dtype=np.float64))
    return x, q


# -------------------------------------------------------------------- the criteria
def test_spring_breaks_strictly_past_its_critical_strain():
    """``|e| = ε_c`` holds (LAMMPS: ``fabs(e) > ecrit``); the next double up breaks;
    compression by ``ε_c`` likewise."""
    law = {**SPR, "eps_c": 0.25}  # (r₀ = 0.5, ε_c = 0.25: r = 0.625 is e = ε_c exactly)
    x0, q = _pair(0.5)
    t = _table(law, x0, q)
    bonds = np.array([[0, 1]])
    assert (0.625 - 0.5) / 0.5 == 0.25
    assert ratios(_pair(0.625)[0], q, bonds, t)[0] < 1.0
    assert ratios(_pair(np.nextafter(0.625, 1.0))[0], q, bonds, t)[0] >= 1.0
    assert ratios(_pair(0.375)[0], q, bonds, t)[0] < 1.0
    assert ratios(_pair(np.nextafter(0.375, 0.0))[0], q, bonds, t)[0] >= 1.0
    assert ratios(_pair(0.5)[0], q, bonds, t)[0] == 0.0
    t[0, bpm.C_BREAK] = 0.0  # (break = false: never)
    assert ratios(_pair(1.0)[0], q, bonds, t)[0] == 0.0


def test_rotational_criterion_is_lammps_sum_at_its_threshold():
    """``B = f_r/f_rc + |f_s|/f_sc + |τ_b|/τ_bc + |τ_t|/τ_tc``: pure stretch to ``f_r =
    f_rc`` gives ``B = 1`` (breaks: ``≥ 1``), a twist adds ``k_t ψ/τ_tc``, compression
    takes off (clamped at 0)."""
    x0, q0 = _pair(0.5)
    t = _table(ROT, x0, q0)
    bonds = np.array([[0, 1]])
    s = ROT["f_rc"] / ROT["k_r"]  # f_r = f_rc
    assert ratios(_pair(0.5 + s)[0], q0, bonds, t)[0] == pytest.approx(1.0, abs=1e-14)
    below = ratios(_pair(0.5 + 0.999 * s)[0], q0, bonds, t)[0]
    assert below == pytest.approx(0.999, rel=1e-12) and below < 1.0
    psi = 0.004  # twist about the bond (x): |τ_t| = k_t ψ
    x, q = _pair(0.5, (psi, 0.0, 0.0))
    assert ratios(x, q, bonds, t)[0] == pytest.approx(ROT["k_t"] * psi / ROT["tau_tc"],
                                                      rel=1e-9)
    x, q = _pair(0.5 - 0.5 * s, (psi, 0.0, 0.0))  # compression lowers B
    assert ratios(x, q, bonds, t)[0] == pytest.approx(
        max(0.0, -0.5 + ROT["k_t"] * psi / ROT["tau_tc"]), abs=1e-9)
    theta = 0.01  # bending (about z): |τ_b| = k_b θ, plus the shear it makes
    x, q = _pair(0.5, (0.0, 0.0, theta))
    b = ratios(x, q, bonds, t)[0]
    alpha = 0.5 * theta  # (the mean carried direction turns by θ/2)
    assert b == pytest.approx(ROT["k_b"] * theta / ROT["tau_bc"]
                              + ROT["k_s"] * 0.25 * alpha / 0.5 / ROT["f_sc"], rel=1e-9)


def test_the_average_frame_law_breaks_by_its_own_loads():
    """``frame = "average"`` (``bpm_average``, what the deck import writes): the same
    ``B`` from that law's loads — pure stretch to ``f_r = f_rc`` is 1, a twist adds ``k_t
    ψ/τ_tc``, compression takes off; on the previous merge such a bond never broke."""
    x0, q0 = _pair(0.5)
    t = _table(ROT, x0, q0)
    t[0, bpm.C_LAW] = bpm.LAW_ROTATIONAL_AVERAGE
    bonds = np.array([[0, 1]])
    s = ROT["f_rc"] / ROT["k_r"]
    assert ratios(_pair(0.5 + s)[0], q0, bonds, t)[0] == pytest.approx(1.0, abs=1e-12)
    assert ratios(_pair(0.5 + 0.999 * s)[0], q0, bonds, t)[0] < 1.0
    psi = 0.004
    x, q = _pair(0.5, (psi, 0.0, 0.0))
    assert ratios(x, q, bonds, t)[0] == pytest.approx(ROT["k_t"] * psi / ROT["tau_tc"],
                                                      rel=1e-9)
    x, q = _pair(0.5 - 0.5 * s, (psi, 0.0, 0.0))
    assert ratios(x, q, bonds, t)[0] == pytest.approx(
        max(0.0, -0.5 + ROT["k_t"] * psi / ROT["tau_tc"]), abs=1e-9)


# --------------------------------------------------------------------- the driver
def _pulled(law: dict, n: int = 3, v: float = 0.5):
    """A chain of ``n`` spheres, its ends pulled apart (no contact)."""
    c = builders.chain(n, 0.5)
    c.v[0] = [-v, 0.0, 0.0]
    c.v[-1] = [v, 0.0, 0.0]
    return model_of([c], k_contact=0.0, bond_types={"1": law})


def test_a_model_whose_bonds_never_break_compiles_none_of_it():
    assert _pulled({**SPR, "break": False}).forcefield.arrays[-1][BREAKS] is None
    m = _pulled(SPR)
    assert m.forcefield.arrays[-1][BREAKS] == 0 and "broken" in m.energy_components
    assert "broken" not in _pulled({**SPR, "break": False}).energy_components


@pytest.mark.parametrize("law", [SPR, ROT], ids=["spring", "rotational"])
def test_a_bond_breaks_at_the_first_step_past_its_criterion_and_books_its_energy(law):
    """The same pair unbreakable: the first step whose end state has the criterion
    past 1 is where the breakable one breaks; there ``E + broken`` is what it was the
    step before (to round-off: the bond's stored energy booked, ``E`` alone drops by
    it), and the pair flies apart freely after."""
    h = 1e-3
    free = Simulation(_pulled({**law, "break": False}, 2), "rrp-newmark", h=h)
    table = free.ff.bpm.copy()
    table[:, bpm.C_BREAK] = 1.0
    first = None
    for k in range(1, 400):
        assert free.advance(1).ok
        if ratios(free.state.x, free.state.q, free.ff.bonds, table)[0] >= 1.0:
            first = k
            break
    assert first is not None and first > 5
    sim = Simulation(_pulled(law, 2), "rrp-newmark", h=h)
    assert sim.advance(first - 1).ok and sim.n_broken == 0
    e_before = sim.energy.copy()
    assert sim.advance(1).ok
    assert sim.n_broken == 1 and sim.ff.bonds.shape[0] == 0
    # the family stays the model's (no compile when the last bond goes)
    assert sim.ff.arrays[-1] == sim.model.forcefield.arrays[-1]
    ev = sim.events[-1]
    assert (ev.kind, ev.step, ev.old, ev.new) == ("break", first, "1", "0")
    e = sim.energy
    stored = float(free.energy[E_SPRING] + free.energy[E_AXIAL:E_AXIAL + 2].sum()
                   + free.energy[3])
    assert e[E_BROKEN] == pytest.approx(stored, rel=1e-12)
    assert e[E_SPRING] == 0.0 and e[E_AXIAL] == 0.0
    # the step's own energy error, nothing from the break
    assert abs(e.sum() - e_before.sum()) < 1e-3 * e_before.sum()
    assert abs(e.sum() - free.energy.sum()) < 1e-14 * e_before.sum() + 1e-15
    v0 = sim.state.v.copy()
    assert sim.advance(50).ok
    assert np.array_equal(sim.state.v, v0)  # (no bond: free flight)
    assert sim.energy.sum() == pytest.approx(e.sum(), rel=1e-14)


def _series_of(sim: Simulation) -> np.ndarray:
    return np.concatenate([np.ravel(a) for a in sim._s0])


def test_resume_is_bit_identical_across_breaks():
    """A chain of five pulled apart: through 300 steps and two breaks in one run, and
    the same stopped before the first break, after it, and resumed from each
    (``resume_state``) — the same bits, the same events, the same bonds held."""
    m = _pulled(SPR, 5, 0.8)
    m.initial_state.v[-1] = [0.6, 0.0, 0.0]  # (the two ends break at different steps)
    through = Simulation(m, "rrp-newmark", h=1e-3)
    assert through.advance(300).ok
    steps = [ev.step for ev in through.events if ev.kind == "break"]
    assert len(steps) >= 2, through.events
    for stop in (steps[0] - 1, steps[0], steps[0] + 3):
        a = Simulation(m, "rrp-newmark", h=1e-3)
        assert a.advance(stop).ok
        b = Simulation.from_resume_state(m, a.resume_state())
        assert np.array_equal(b.bond_ids, a.bond_ids)
        assert b.advance(300 - stop).ok
        assert np.array_equal(_series_of(b), _series_of(through)), stop
        assert [e for e in b.events if e.kind == "break"] == \
            [e for e in through.events if e.kind == "break"]
        assert np.array_equal(b.ff.bonds, through.ff.bonds)
    # a restore to a checkpoint before the break holds the bonds again
    c = Simulation(m, "rrp-newmark", h=1e-3)
    cp = c.checkpoint()
    assert c.advance(300).ok and c.n_broken >= 2
    c.restore(cp)
    assert c.n_broken == 0 and c.ff.bonds.shape[0] == 4


PULL_TOML = """model = "assembly"
[run]
integrator = "rrp-newmark"
h = 1e-3
[parameters]
k_contact = 0.0
""" + "".join(f"""
[[bodies]]
position = [{0.5 * k}, 0.0, 0.0]
diameter = 0.5
mass = 1.0
velocity = [{0.5 * (k - 1)}, 0.0, 0.0]
""" for k in range(3)) + """
[[bonds]]
i = 0
j = 1
[[bonds]]
i = 1
j = 2

[bond_types.1]
law = "bpm/spring"
k = 400.0
eps_c = 0.03
gamma = 0.0
smooth = false
break = true
"""


def pull_toml(folder: Path) -> Path:
    """Three spheres in a row, the ends pulled apart: both bonds break at step 33."""
    p = folder / "pull.toml"
    p.write_text(PULL_TOML)
    return p


def test_a_scenario_breaks_and_the_run_file_keeps_which_bond_broke_when(tmp_path):
    """``break = true`` in ``[bond_types.N]`` of a binder-free model; the run file's
    ``/events`` (under its digest) holds each break, and a model resumed from the file
    holds the bonds left."""
    from engine.api import run
    from engine.io import RunFile
    from engine.scenarios import load_scenario

    p = pull_toml(tmp_path)
    sc = load_scenario(str(p))
    out = tmp_path / "pull.h5"
    run(sc, out=out, t_end=0.1, integrator="rrp-newmark", h=1e-3)
    with RunFile(out) as f:
        breaks = [e for e in f.events if e.kind == "break"]
        assert [e.new for e in breaks] == ["0 1"] and breaks[0].old == "2"
        assert breaks[0].step == 33
        booked = np.asarray(f.energy["broken"])
        assert booked[0] == 0.0 and booked[-1] > 0.0
        d, _ = f.resume_state()
        m = f.build_model()
        last = f.frame(f.n_frames - 1)
        first = f.frame(0)
    sim = Simulation.from_resume_state(m, d)
    assert sim.n_broken == 2 and sim.ff.bonds.shape[0] == 0
    # a branch from a frame after the break holds no bond, with the energy booked;
    # one from before it, every bond
    assert last.broken.tolist() == [0, 1] and last.B == booked[-1]
    br = Simulation.from_frame(m, last, "rrp-newmark", 1e-3)
    assert br.n_broken == 2 and br.energy[E_BROKEN] == booked[-1]
    assert br.energy.sum() == pytest.approx(booked[-1] + br.energy[:2].sum(), rel=1e-12)
    assert first.broken.size == 0 and Simulation.from_frame(m, first, "rrp-newmark",
                                                          1e-3).n_broken == 0


# -------------------------------------------------------------------- the deck
def test_the_impact_examples_bond_style_imports_with_break_yes():
    """``bond_style bpm/rotational store/local brkbond 100 time id1 id2`` (LAMMPS's
    ``examples/bpm/impact``): break yes and smooth yes by default, ``store/local`` noted
    and dropped; each type's table says ``break = true``."""
    bs = bond_style("in.bpm.impact.rotational line 40",
                    ("bpm/rotational", "store/local", "brkbond", "100", "time", "id1",
                     "id2"))
    assert bs.breaks and bs.smooth and len(bs.notes) == 1 and "store/local" in bs.notes[0]
    bs.coeffs["1"] = (41, tuple("1.0 0.2 0.02 0.02 0.05 0.01 0.01 0.01 0.0 0.0 0.0 0.0"
                                .split()))
    laws, notes = bond_laws(bs, [1], UNITS["si"], "in.bpm.impact.rotational")
    assert laws["1"]["break"] is True and laws["1"]["f_rc"] == 0.05
    assert any("store/local" in n for n in notes)
    assert not bond_style("x", ("bpm/spring", "break", "no")).breaks
    old = bond_style("x", ("bpm/rotational", "store/local", "2", "time", "id1", "id2"))
    assert old.breaks and "store/local 2 (time id1 id2)" in old.notes[0]  # (2022's)
    with pytest.raises(LammpsDataError, match="store/local needs a fix ID"):
        bond_style("x", ("bpm/spring", "store/local"))


def test_break_yes_with_a_limit_of_minus_one_is_one_line():
    bs = bond_style("in line 20", ("bpm/rotational", "smooth", "no"))
    bs.coeffs["1"] = (21, tuple("1.0 1.0 0.1 0.5 -1 -1 -1 -1 0 0 0 0".split()))
    with pytest.raises(LammpsDataError) as err:
        bond_laws(bs, [1], UNITS["si"], "in.bpm.metamaterial")
    msg = str(err.value)
    assert "\n" not in msg and "f_rc -1 with bond_style bpm/rotational break yes" in msg
    assert "add 'break no'" in msg and "line 21" in msg


# -------------------------------------------------------------------- real LAMMPS
@requires_lammps
def test_a_pulled_spring_bond_breaks_at_the_same_step_as_in_lammps(tmp_path):
    """Two unit spheres (``m = 1``, ``D = 1``, ``r₀ = 1``) pulled apart at ±0.5, one
    ``bpm/spring`` bond ``k = 100``, ``ε_c = 0.05`` (``smooth no``, ``break yes``), ``h =
    1e-3``: LAMMPS's ``nve/bpm/sphere`` loses its bond at the step ours does (LAMMPS's
    bond count per step against our ``break`` event)."""
    lines = ["units lj", "atom_style bpm/sphere", "atom_modify map yes", "newton on off",
             "comm_modify vel yes cutoff 3.0", "region box block -5 5 -5 5 -5 5",
             "create_box 1 box bond/types 1 extra/bond/per/atom 2 extra/special/per/atom 2",
             "create_atoms 1 single 0.0 0.0 0.0", "create_atoms 1 single 1.0 0.0 0.0",
             "set group all diameter 1.0", f"set group all density {6.0 / math.pi!r}",
             "special_bonds lj 0 1 1 coul 1 1 1",
             "bond_style bpm/spring smooth no break yes", "bond_coeff 1 100.0 0.05 0.0",
             "create_bonds single/bond 1 1 2", "pair_style zero 2.0", "pair_coeff * *",
             "velocity all set -0.5 0.0 0.0", "set atom 2 vx 0.5",
             "fix 1 all nve/bpm/sphere", "compute nb all nbond/atom",
             "compute tb all reduce sum c_nb", "thermo_style custom step c_tb",
             "thermo 1", "timestep 0.001", "run 120"]
    (tmp_path / "in.pull").write_text("\n".join(lines) + "\n")
    res = run_lammps(tmp_path / "in.pull", cwd=tmp_path)
    assert res.returncode == 0 and not res.errors, res.describe()
    lammps_step = next(int(r["Step"]) for r in res.thermo if r["c_tb"] == 0.0)
    c = builders.chain(2, 1.0)
    c.v[0] = [-0.5, 0.0, 0.0]
    c.v[1] = [0.5, 0.0, 0.0]
    m = model_of([c], k_contact=0.0, bond_types={"1": {
        "law": "bpm/spring", "k": 100.0, "eps_c": 0.05, "gamma": 0.0, "smooth": False,
        "break": True}})
    sim = Simulation(m, "rrp-newmark", h=1e-3)  # (velocity Verlet in translation)
    assert sim.advance(120).ok
    ours = [e.step for e in sim.events if e.kind == "break"]
    assert ours == [lammps_step], (ours, lammps_step)
    assert 40 < lammps_step < 100, lammps_step



def test_a_deck_with_break_yes_imports_and_its_model_breaks(tmp_path):
    """LAMMPS's metamaterial deck with the impact example's bond style line (``break
    yes`` by default, ``store/local``) and positive limits: the deck's plan gives each
    type ``break = true`` (a note for ``store/local``), and the model built from the
    laws has the ``BREAKS`` family and the ``broken`` component."""
    from engine.io.lammps import units as un
    from engine.io.lammps.deck_plan import plan_of
    from engine.io.lammps.deck_scenario import apply_plan
    from engine.io.lammps.read_data import read_data
    from engine.io.lammps.read_deck import read_deck

    here = Path(__file__).resolve().parent / "data" / "lammps"
    src = tmp_path / "metamaterial.data"
    src.write_bytes(gzip.decompress((here / "metamaterial.data.gz").read_bytes()))
    text = (here / "in.bpm.metamaterial").read_text()
    text = text.replace("bond_style      bpm/rotational smooth no break no",
                        "bond_style      bpm/rotational store/local brkbond 100 time id1 id2")
    text = text.replace("bond_coeff      1 1.0 1.0 0.1 0.5  -1 -1 -1 -1  1e-3 1e-3 1e-3 1e-3",
                        "bond_coeff      1 1.0 1.0 0.1 0.5  0.05 0.01 0.01 0.01  0 0 0 0")
    deck = tmp_path / "in.bpm.metamaterial"
    deck.write_text(text)
    dk = read_deck(deck)
    d = read_data(src, atom_style=dk.atom_style, units="si")
    scen = apply_plan(plan_of(dk), d, un.UNITS["si"])
    law = scen.laws["1"]
    assert law["break"] is True and law["smooth"] is True and law["f_rc"] == 0.05
    assert any("store/local brkbond" in n for n in scen.notes)
    types = {"1": law}
    c = builders.chain(3, 0.5)
    m = model_of([c], k_contact=0.0, bond_types=types)
    assert m.forcefield.arrays[-1][BREAKS] == 0 and "broken" in m.energy_components


def test_the_balance_with_damping_closes_across_the_break(tmp_path):
    """The pulled row with viscous damping on all spheres (``[[damping]]``):
    ``E + dissipated + broken`` stays ``E₀`` to the scheme's accuracy through the break
    (each term non-zero), its error falling about 4× when ``h`` halves."""
    from engine.drivers import simulation_for
    from engine.layout import E_DISSIPATED
    from engine.scenarios import load_scenario

    p = pull_toml(tmp_path)
    p.write_text(PULL_TOML + '\n[[damping]]\ngroup = "all"\ngamma = 0.5\n')
    m = load_scenario(str(p)).build_model()
    errs = []
    for h in (1e-3, 5e-4):
        sim = simulation_for(m, "rrp-newmark", h, energy_tolerance=None)
        e0 = sim.energy.sum()
        worst = 0.0
        for _ in range(round(0.1 / h)):
            assert sim.advance(1).ok
            worst = max(worst, abs(sim.energy.sum() - e0))
        assert sim.n_broken == 2
        assert sim.energy[E_DISSIPATED] > 1e-3 * e0 and sim.energy[E_BROKEN] > 0.1 * e0
        errs.append(worst / e0)
    assert errs[0] < 1e-4 and 3.0 < errs[0] / errs[1] < 5.0, errs


@pytest.mark.parametrize("smooth", [True, False], ids=["smooth-yes", "smooth-no"])
def test_smooth_yes_gains_a_third_of_each_broken_bonds_energy(smooth):
    """Why ``E + D + broken`` rises in ``bpm-impact`` (docs/physics.md "Against LAMMPS's
    impact"): with ``smooth yes`` the forces are ``w ∇U``, ``w = 1 − B⁴``, while the
    energy (and what a break books) is ``U`` unsmoothed, so a bond loaded in proportion
    (``B = λ``, ``U = λ² U_c``) to its break has taken ``∫ w dU = ⅔ U_c`` from the kinetic
    energy and books ``U_c``: ``E + broken`` gains ``U_c/3`` per broken bond.  A pair pulled
    straight apart (``U_c = f_rc²/(2 k_r)``) at a fine step (the crossing of ``B = 1``
    within the last step adds ``≈ 2 δB U_c``, here ~1e-3 of it): ``U_c/3`` to 1 %; with
    ``smooth no``, nothing (the scheme's error only)."""
    h = 1e-5
    law = {**ROT, "smooth": smooth}
    sim = Simulation(_pulled(law, 2), "rrp-newmark", h=h)
    e0 = sim.energy.sum()
    for _ in range(5000):
        assert sim.advance(1).ok
        if sim.n_broken:
            break
    assert sim.n_broken == 1
    u_c = law["f_rc"] ** 2 / (2.0 * law["k_r"])
    gain = sim.energy.sum() - e0
    if smooth:
        assert sim.energy[E_BROKEN] == pytest.approx(u_c, rel=2e-2)
        assert gain == pytest.approx(u_c / 3.0, rel=1e-2)
    else:
        assert abs(gain) < 1e-4 * u_c
