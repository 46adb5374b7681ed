"""LAMMPS in and out (issue #35 items 2 and 4): ``rrp convert --to lammps`` writes a data
file that, read back with ``source =``, gives the same spheres and bonds (round trip),
and an input deck; ``rrp import lammps`` writes an equivalent scenario with CSVs and says
in one line that the bond types take the torus's binder constants."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
from test_assembly import lammps_text

from engine.scenarios import load_scenario

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def rrp(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app", *map(str, args)], capture_output=True,
                          text=True, env=ENV, timeout=600)


SCENARIO = """model = "assembly"
[run]
h = 1e-3
every = 5
[parameters]
gravity = [0.0, 0.0, -1.0]
[bond_types.7]
k_bend = 10.0
k_axial = 200.0
k_shear = 200.0
[[build]]
kind = "ball"
radius = 0.7
diameter = 0.5
centre = [0.0, 0.0, 1.5]
velocity = [0.2, 0.0, -0.5]
spin = [0.0, 0.0, 1.0]
group = 3
[[build]]
kind = "chain"
n = 4
diameter = 0.4
start = [2.0, 0.0, 1.0]
group = 4
bond_type = 7
[[walls]]
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
"""


def run_and_convert_to_lammps(tmp_path: Path, t_end: str) -> tuple[Path, Path, Path]:
    """``rrp run`` of ``tmp_path/a.toml`` to ``t_end``, then ``rrp convert --to lammps``
    into ``tmp_path/lmp``: the run file, the data file and the input deck."""
    run = tmp_path / "a.h5"
    res = rrp("run", tmp_path / "a.toml", "--t-end", t_end, "--out", run, "--quiet")
    assert res.returncode == 0, res.stderr
    res = rrp("convert", run, tmp_path / "lmp", "--to", "lammps")
    assert res.returncode == 0, res.stderr
    return run, tmp_path / "lmp" / "a.data", tmp_path / "lmp" / "in.a"


def test_convert_to_lammps_round_trip(tmp_path):
    (tmp_path / "a.toml").write_text(SCENARIO)
    run, data, deck = run_and_convert_to_lammps(tmp_path, "0.05")
    text = deck.read_text()
    for word in ("atom_style      bpm/sphere", "bond_style      bpm/rotational",
                 "pair_style      granular", "hertz", "What maps exactly and what approximately",
                 "fix             2 all gravity 1.0 vector 0.0 0.0 -1.0", "wall/gran/region",
                 "fix             1 all nve/bpm/sphere", "special_bonds   lj/coul 1 1 1",
                 "bond_style      bpm/rotational overlay/pair yes", "neigh_modify    delay 0"):
        assert word in text, word
    with h5py.File(run, "r") as f:  # (the deck runs as long as the run did: #42 item 11)
        steps = int(f.attrs["steps"])
    assert steps > 1 and f"run             {steps}\n" in text and "10000" not in text
    assert "Atoms # bpm/sphere" in data.read_text()
    # read back: the first frame's spheres and bonds (the reference: issue #43 item 2)
    (tmp_path / "lmp" / "b.toml").write_text(
        'model = "assembly"\nsource = "a.data"\n[bond_types.2]\nk_bend = 10.0\n'
        "k_axial = 200.0\nk_shear = 200.0\n")
    back = load_scenario(tmp_path / "lmp" / "b.toml").build_model()
    from engine.io.hdf5 import RunFile

    with RunFile(run) as rf:
        fr = rf.frame(0)
        bonds = np.asarray(rf.bonds)
    orig = load_scenario(tmp_path / "a.toml").build_model()
    assert np.array_equal(back.initial_state.x, fr.x)
    assert np.array_equal(back.initial_state.v, fr.v)
    assert np.array_equal(back.initial_state.omega, fr.omega)
    assert np.array_equal(back.bodies.D, orig.bodies.D)
    assert np.allclose(back.bodies.m, orig.bodies.m, rtol=4e-16, atol=0)
    assert np.allclose(back.bodies.J, orig.bodies.J, rtol=1e-15, atol=0)
    assert np.array_equal(back.forcefield.bonds, bonds)
    assert np.array_equal(back.groups, orig.groups)
    # the chain's bonds (type 7 here) are type 2 there, the ball's type 1
    chain = orig.groups[bonds[:, 0]] == 4
    assert chain.sum() == 3
    bt = np.loadtxt(data, skiprows=_line_of(data, "Bonds") + 1, dtype=np.int64)[:, 1]
    assert (bt[chain] == 2).all() and (bt[~chain] == 1).all()


def _line_of(path: Path, word: str) -> int:
    return next(k for k, ln in enumerate(path.read_text().splitlines()) if ln.strip() == word) + 1


def test_import_lammps_writes_an_equivalent_scenario(tmp_path):
    (tmp_path / "m.data").write_text(lammps_text("sphere/bpm"))
    out = tmp_path / "s.toml"
    res = rrp("import", "lammps", tmp_path / "m.data", "--out", out)
    assert res.returncode == 0, res.stderr
    notes = res.stderr.strip().splitlines()  # (the units note, then the binder's: #43)
    assert len(notes) == 2 and "torus's k_bend 10, k_axial 200, k_shear 200" in notes[1]
    assert "names no units" in notes[0] and "taken as SI" in notes[0]
    assert (tmp_path / "s-bodies.csv").is_file() and (tmp_path / "s-bonds.csv").is_file()
    a = load_scenario(out).build_model()
    (tmp_path / "d.toml").write_text(
        'model = "assembly"\nsource = "m.data"\n[bond_types.2]\nk_bend = 10.0\n'
        "k_axial = 200.0\nk_shear = 200.0\n")
    b = load_scenario(tmp_path / "d.toml").build_model()
    for u, w in ((a.initial_state.x, b.initial_state.x), (a.initial_state.v, b.initial_state.v),
                 (a.initial_state.omega, b.initial_state.omega), (a.bodies.m, b.bodies.m),
                 (a.bodies.J, b.bodies.J), (a.forcefield.bonds, b.forcefield.bonds),
                 (a.groups, b.groups)):
        assert np.array_equal(u, w)
    assert a.forcefield.walls.shape[0] == 0 and "gravity" not in a.energy_components


def test_import_refuses_an_unreadable_style_in_one_line(tmp_path):
    (tmp_path / "m.data").write_text("t\n\n1 atoms\n\nAtoms # ellipsoid\n\n1 1 1 0 0 0 0\n")
    res = rrp("import", "lammps", tmp_path / "m.data", "--out", tmp_path / "s.toml")
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "m.data line 5: atom style 'ellipsoid' cannot be read" in lines[0]
    assert not (tmp_path / "s.toml").exists()
