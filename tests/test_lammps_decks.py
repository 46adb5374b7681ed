"""Decks that run (issue #43 item 2, and the deck's share of items 3 and 6): ``rrp convert
--to lammps`` of every built-in bonded scenario gives a data file and deck that real
LAMMPS runs for 100 steps with no error and no warning, whose first-step kinetic
energies (translational and rotational) are ours; the contacts, damping, friction and
walls are mapped as LAMMPS's docs define them; one LAMMPS bond type per (type, rest
length); the frame written by default is the run's reference state; the round trip
(convert, ``rrp import lammps``) keeps every mass, inertia and coefficient it can and
the deck names what it cannot.  The laws are checked against LAMMPS's own formulas
(``doc/src/pair_granular.rst``, ``src/GRANULAR/gran_sub_mod_damping.cpp``)."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import h5py
import numpy as np
import pytest
from helpers import rrp
from lammps_peer import requires_lammps, run_lammps

from engine.scenarios import load_scenario

ROOT = Path(__file__).resolve().parent.parent

#: the built-in bonded scenarios and their steps (100 steps each: ``--t-end`` = 100 h)
SCENARIOS = {"torus": 1e-3, "torus-free": 1e-3, "torus-hard": 1e-3,
             "assembly-rope": 2.5e-4, "assembly-impact": 1e-3, "assembly-drop": 5e-4}


def run_and_convert(tmp: Path, scenario: str, h: float, frame: int | None = None
                    ) -> tuple[Path, Path, Path]:
    """``rrp run SCENARIO`` for 100 steps into ``tmp``, then ``convert --to lammps``
    (in this process: the same function as the CLI); the run, data and deck files."""
    run = tmp / f"{Path(scenario).stem}.h5"
    res = rrp(tmp, "run", str(scenario), "--t-end", repr(100 * h), "--out", str(run),
              "--quiet")
    assert res.returncode == 0, res.stderr
    from app.cli.convert_lammps import convert_lammps

    convert_lammps(argparse.Namespace(run_file=str(run), directory=str(tmp / "lmp"),
                                      frame=frame, quiet=True))
    stem = run.stem
    return run, tmp / "lmp" / f"{stem}.data", tmp / "lmp" / f"in.{stem}"


def ours_at_start(run: Path) -> tuple[float, float, float]:
    """Our translational and rotational energy at the first record, and the rotational
    energy the same spins have with LAMMPS's inertia ``m D²/10``."""
    with h5py.File(run, "r") as f:
        m = f["bodies/mass"][()]
        D = f["bodies/diameter"][()]
        om = f["bodies/omega"][0]
        return (float(f["energy/translational"][0]), float(f["energy/rotational"][0]),
                float((0.5 * 0.1 * m * D * D * (om * om).sum(axis=1)).sum()))


def assert_runs_and_starts_with_our_energies(run: Path, deck: Path) -> None:
    lmp = run_lammps(deck)
    assert lmp.returncode == 0 and not lmp.errors, lmp.describe()
    bad = [w for w in lmp.warnings if "ommunication cutoff" in w or "neighbor" in w
           or "sub-domain" in w]
    assert not bad and not lmp.warnings, lmp.describe()
    assert [r["Step"] for r in lmp.thermo][-1] == 100
    first = lmp.thermo[0]
    ke, er, er_lmp = ours_at_start(run)
    assert first["Step"] == 0
    assert first["KinEng"] == pytest.approx(ke, rel=1e-13, abs=1e-300)
    assert first["c_erot"] == pytest.approx(er_lmp, rel=1e-13, abs=1e-300)
    text = deck.read_text()
    if er != pytest.approx(er_lmp, rel=1e-13, abs=1e-300):  # (inertia not carried: said)
        assert "# * inertia NOT carried" in text
    else:
        assert first["c_erot"] == pytest.approx(er, rel=1e-13, abs=1e-300)


# ------------------------------------------------------------------ the laws, no LAMMPS
def test_hertz_and_walls_map_exactly_for_any_two_diameters():
    from engine.io.lammps.contact_map import pair_kn, wall_kn

    K = 2100.0
    for di, dj in ((0.1, 0.1), (0.4, 0.5), (0.3, 1.7)):
        sigma, r_eff = 0.5 * (di + dj), (di / 2) * (dj / 2) / (di / 2 + dj / 2)
        for ov in (1e-5, 3e-3):
            ours = K / sigma * (ov / sigma) ** 1.5
            assert pair_kn(K, di, dj) * math.sqrt(r_eff) * ov ** 1.5 == pytest.approx(
                ours, rel=1e-13)
        rad = di / 2
        ov = 1e-3
        assert wall_kn(K, di) * math.sqrt(rad) * ov ** 1.5 == pytest.approx(
            K / rad * (ov / rad) ** 1.5, rel=1e-13)


@pytest.mark.parametrize("zeta", [0.0, 0.05, 0.5, 0.9])
def test_damping_ratio_maps_to_coeff_restitution_exactly(zeta):
    """LAMMPS's coeff_restitution for Hertz: ``η = α sqrt(m* F/δ)``, ``α = −sqrt(3/2) 2
    sqrt(5/6) ln e / sqrt(π² + ln² e)``; ours ``2 ζ sqrt(m* k_N)``, ``k_N = 3/2 F/δ``."""
    from engine.io.lammps.contact_map import restitution_of_damping

    e = restitution_of_damping(zeta)
    assert 0.0 < e <= 1.0
    le = math.log(e)
    alpha = -math.sqrt(1.5) * 2.0 * math.sqrt(5.0 / 6.0) * le / math.sqrt(math.pi ** 2 + le * le)
    m_eff, f_over_delta = 0.37, 2.9e5
    theirs = alpha * math.sqrt(m_eff * f_over_delta)
    ours = 2.0 * zeta * math.sqrt(m_eff * 1.5 * f_over_delta)
    assert theirs == pytest.approx(ours, rel=1e-12, abs=1e-300)


def test_one_lammps_bond_type_per_type_and_rest_length():
    from engine.io.lammps.bond_map import split_by_rest_length

    r0 = np.array([0.4, 0.5, 0.4 * (1 + 1e-15), 0.5, 0.4])
    lt, table = split_by_rest_length(np.array([1, 1, 1, 7, 7]), r0,
                                     {1: (10.0, 200.0, 300.0), 7: (1.0, 2.0, 3.0)})
    assert lt.tolist() == [1, 2, 1, 4, 3]
    for b in range(5):  # each bond's k_r = K^a / r0² of its own rest length
        kb, ka, ks, rt = table[int(lt[b])]
        assert ka / rt ** 2 == pytest.approx(ka / r0[b] ** 2, rel=1e-14)
    assert table[3][:3] == (1.0, 2.0, 3.0) and table[2][:3] == (10.0, 200.0, 300.0)


# --------------------------------------------------------------- the deck, no LAMMPS
@pytest.fixture(scope="module")
def rope(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("rope")
    return tmp, *run_and_convert(tmp, "assembly-rope", SCENARIOS["assembly-rope"])


def _words(deck: Path, head: str) -> list[list[str]]:
    return [ln.split() for ln in deck.read_text().splitlines() if ln.split()[:1] == [head]]


def test_the_deck_maps_the_ropes_contacts_and_walls(rope):
    """The rope (μ = 0.05, ζ = 0.05, two walls): k_t is the model's 4000 (not the Hertz
    stiffness), the damping is coeff_restitution, the walls carry both; the box has
    room (boundary m m m), the ghost cutoff covers the bonds, LAMMPS's rotational
    energy is printed whole."""
    from engine.io.lammps.contact_map import restitution_of_damping

    _, run, data, deck = rope
    text = deck.read_text()
    e = repr(restitution_of_damping(0.05))
    (pc,) = _words(deck, "pair_coeff")
    assert pc[3] == "hertz" and pc[5] == e
    assert pc[6:] == ["tangential", "linear_history", "4000.0", "0", "0.05", "damping",
                      "coeff_restitution", "limit_damping"]
    walls = [w for w in _words(deck, "fix") if w[3] == "wall/gran/region"]
    assert len(walls) == 2 and all(w[4:6] == ["granular", "hertz"] and w[7] == e
                                   and w[8:] == pc[6:] + ["region", w[-1]] for w in walls)
    assert _words(deck, "boundary") == [["boundary", "m", "m", "m"]]
    (cm,) = _words(deck, "comm_modify")
    with h5py.File(run, "r") as f:
        x = f["bodies/position"][0]
        b = f["model/bonds"][()]
    longest = float(np.linalg.norm(x[b[:, 0]] - x[b[:, 1]], axis=1).max())
    skin = float(_words(deck, "neighbor")[0][1])
    assert cm[1:3] == ["vel", "yes"] and float(cm[4]) >= 1.5 * longest + skin
    assert ["compute", "erot", "all", "erotate/sphere"] in _words(deck, "compute")
    assert "norm no format float %.15g" in text and "c_erot" in text
    # the first lines say what LAMMPS takes as stress-free: here ours, t = 0
    head = text.splitlines()[:6]
    assert any("Stress-free state" in ln for ln in head)
    assert any("RRP Studio's reference state (t = 0.0): the same" in ln for ln in head)
    assert any("Attitudes: every sphere at the identity" in ln for ln in head)
    for word in ("damping (exact)", "friction (approximate)", "contact (exact)"):
        assert word in text, word


def test_the_default_frame_is_the_reference_and_another_is_named(rope, tmp_path):
    """Frame 0 (t = 0) by default; ``--frame -1`` keeps our rest lengths (k_r from t = 0)
    and says in its first lines that LAMMPS rests at that frame."""
    from app.cli.convert_lammps import convert_lammps
    from engine.io.hdf5 import RunFile

    _, run, data, deck = rope
    with RunFile(run) as rf:
        x0, x1 = rf.frame(0).x, rf.frame(-1).x
    rows = _section(data, "Atoms")
    assert np.array_equal(rows[:, 5:8], x0) and not np.array_equal(x0, x1)
    convert_lammps(argparse.Namespace(run_file=str(run), directory=str(tmp_path / "last"),
                                      frame=-1, quiet=True))
    last = tmp_path / "last" / deck.name
    assert np.array_equal(_section(tmp_path / "last" / data.name, "Atoms")[:, 5:8], x1)
    head = "\n".join(last.read_text().splitlines()[:8])
    assert "NOT ours" in head and "Convert --frame 0" in head
    assert _words(last, "bond_coeff") == _words(deck, "bond_coeff")


def test_an_assembly_whose_files_are_gone_is_never_converted_with_defaults(rope, tmp_path):
    """The rope imported from its own data file (CSVs, bond type 1 with k_bend 100) and
    run; with its bodies CSV gone, ``convert --to lammps`` used to write every bond with
    the default coefficients (k_bend 10) and exit 0.  Now the run file carries its model
    (issue #43 item 4): the rope's own coefficients, with no file needed."""
    _, _, data, _ = rope
    res = rrp(tmp_path, "import", "lammps", str(data), "--out", "r.toml", "-q")
    assert res.returncode == 0, res.stderr
    res = rrp(tmp_path, "run", "r.toml", "--t-end", "0.0005", "--h", "2.5e-4", "--out",
              "r.h5", "-q")
    assert res.returncode == 0, res.stderr
    (tmp_path / "r-bodies.csv").unlink()
    res = rrp(tmp_path, "convert", "r.h5", "out", "--to", "lammps", "-q")
    assert res.returncode == 0, res.stderr
    head = (tmp_path / "out" / "r.data").read_text()
    assert "k_bend 100.0 k_axial 200.0 k_shear 200.0" in head, head[:400]


def _section(data: Path, name: str) -> np.ndarray:
    lines = data.read_text().splitlines()
    k = next(i for i, ln in enumerate(lines) if ln.split("#")[0].strip() == name) + 2
    rows = []
    while k < len(lines) and lines[k].strip():
        rows.append([float(w) for w in lines[k].split()])
        k += 1
    return np.array(rows)


# ----------------------------------------------------------------------- real LAMMPS
@requires_lammps
def test_lammps_runs_the_ropes_deck_from_our_energies(rope):
    _, run, _, deck = rope
    assert_runs_and_starts_with_our_energies(run, deck)


@requires_lammps
@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if s != "assembly-rope"])
def test_lammps_runs_every_bonded_scenarios_deck(scenario, tmp_path):
    run, _, deck = run_and_convert(tmp_path, scenario, SCENARIOS[scenario])
    assert_runs_and_starts_with_our_energies(run, deck)


FORCES = """units si
atom_style sphere
atom_modify map array
boundary m m m
comm_modify vel yes
read_data f.data
velocity all set 0 0 0
set atom 1 vx {v}
set atom 2 vx {mv}
set atom 3 vz {mv}
pair_style granular
{pairs}
{walls}
fix 1 all nve/sphere
variable f1 equal fx[1]
variable f3 equal fz[3]
thermo_style custom step v_f1 v_f3
thermo_modify format float %.15g
timestep 1e-9
run 0
"""


@requires_lammps
def test_lammps_forces_with_our_damping_are_ours(tmp_path):
    """Spheres of diameters 0.4 and 0.5 overlapping and approaching, and one against a
    wall, with the deck's own ``pair_coeff`` and wall fix (ζ = 0.5): LAMMPS's forces at
    step 0 are ours, ``(K/σ) δ^{3/2} + 2 ζ sqrt(m* k_N) v_N``, ``k_N = 3/2 K δ^{1/2}/σ²``
    (``engine.potentials.friction``) — the Hertz and damping maps are exact."""
    from engine.io.lammps.contact_map import contact_map

    K, Kw, zeta, v, ov = 2100.0, 21000.0, 0.5, 0.3, 2e-3
    d1, d2, rho = 0.4, 0.5, 1000.0
    m1, m2 = rho * math.pi / 6 * d1 ** 3, rho * math.pi / 6 * d2 ** 3
    x2 = 0.5 * (d1 + d2) - ov
    (tmp_path / "f.data").write_text(
        "t\n\n3 atoms\n2 atom types\n\n-1 2 xlo xhi\n-1 1 ylo yhi\n-1 3 zlo zhi\n\n"
        f"Atoms # sphere\n\n1 1 {d1} {rho} 0 0 1.5\n2 2 {d2} {rho} {x2!r} 0 1.5\n"
        f"3 1 {d1} {rho} 0 0 {0.5 * d1 - ov!r}\n")
    cm = contact_map({"k_contact": K, "k_wall": Kw, "damping": zeta}, np.array([1, 2, 1]),
                     np.array([d1, d2]), True, [([0.0, 0.0, 1.0], 0.0)], False)
    (tmp_path / "in.f").write_text(FORCES.format(
        v=v / 2, mv=-v / 2, pairs="\n".join(cm.pair_lines), walls="\n".join(cm.wall_lines)))
    lmp = run_lammps(tmp_path / "in.f")
    assert lmp.returncode == 0 and not lmp.errors, lmp.describe()
    row = lmp.thermo[0]

    def ours(k, sigma, m_eff, speed):
        delta = ov / sigma
        k_n = 1.5 * k * math.sqrt(delta) / sigma ** 2
        return k / sigma * delta ** 1.5 + 2 * zeta * math.sqrt(m_eff * k_n) * speed

    pair = ours(K, 0.5 * (d1 + d2), m1 * m2 / (m1 + m2), v)
    wall = ours(Kw, 0.5 * d1, m1, v / 2)
    assert -row["v_f1"] == pytest.approx(pair, rel=1e-12)
    assert row["v_f3"] == pytest.approx(wall, rel=1e-12)


TWO_LENGTHS = """model = "assembly"
[run]
h = 1e-3
[parameters]
gravity = [0.0, 0.0, -1.0]
[bond_types.7]
k_bend = 3.0
k_axial = 50.0
k_shear = 70.0
[[build]]
kind = "chain"
n = 4
diameter = 0.4
start = [0.0, 0.0, 1.0]
velocity = [0.1, 0.0, 0.0]
spin = [0.0, 0.0, 1.0]
group = 1
[[build]]
kind = "chain"
n = 3
diameter = 0.5
start = [0.0, 2.0, 1.0]
group = 2
[[build]]
kind = "chain"
n = 3
diameter = 0.3
start = [0.0, 4.0, 1.0]
group = 3
bond_type = 7
[[walls]]
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
"""


def _per_bond(model) -> np.ndarray:
    from engine.layout import P_K_AXIAL, P_K_BEND, P_K_SHEAR

    ff = model.forcefield
    if ff.bond_k.size:
        return ff.bond_k
    k = [ff.fp[P_K_BEND], ff.fp[P_K_AXIAL], ff.fp[P_K_SHEAR]]
    return np.tile(np.array(k, dtype=np.float64), (ff.bonds.shape[0], 1))


@requires_lammps
def test_round_trip_keeps_masses_inertias_and_each_bonds_coefficients(tmp_path):
    """Bonds of one type at two rest lengths and of another type, three diameters:
    convert (three LAMMPS bond types of the first, one of the second; an atom type per
    diameter), LAMMPS runs it from our energies, and ``rrp import lammps`` of the data
    file gives the same masses, inertias and every bond's coefficients."""
    (tmp_path / "two.toml").write_text(TWO_LENGTHS)
    run, data, deck = run_and_convert(tmp_path, tmp_path / "two.toml", 1e-3)
    assert len(_words(deck, "bond_coeff")) == 3
    assert len(_words(deck, "pair_coeff")) == 6  # three diameters: 3·4/2 pairs
    assert_runs_and_starts_with_our_energies(run, deck)
    res = rrp(tmp_path, "import", "lammps", str(data), "--out", str(tmp_path / "back.toml"))
    assert res.returncode == 0, res.stderr
    back = load_scenario(tmp_path / "back.toml").build_model()
    orig = load_scenario(tmp_path / "two.toml").build_model()
    assert np.allclose(back.bodies.m, orig.bodies.m, rtol=4e-16, atol=0)
    assert np.allclose(back.bodies.J, orig.bodies.J, rtol=1e-15, atol=0)
    assert np.array_equal(back.forcefield.bonds, orig.forcefield.bonds)
    assert np.array_equal(_per_bond(back), _per_bond(orig))
    # the deck says the mapping of the binder, and for the torus the inertia it cannot carry
    assert "k_r = Ka/r0^2 (exact)" in deck.read_text()
