"""A run file carries its model (issue #43 item 4): an assembly read from CSV files or a
LAMMPS data file is stored whole in the run file (``/model/assembly``, under the header
digest), so resume, export, convert and replay work with those files deleted; a file
written before, whose files are gone, is one line naming them."""

from __future__ import annotations

import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest
from helpers import assert_one_line_error, rrp
from test_resume import _same_runs

from engine.io import RunFile, RunFileError, RunWriter
from engine.io.digests import header_problems
from engine.models.assembly import CARRIED, model_of
from engine.models.builders import chain
from engine.scenarios import load_scenario
from engine.simulation import Simulation

RHO = "1.9098593171027443"  # (6/π: mass 1 for D = 1)

SCENARIO = """\
model = "assembly"
bodies = "spheres.csv"
bonds = "bonds.csv"
[[walls]]
point = [0, 0, -0.6]
normal = [0, 0, 1]
[bond_types.2]
k_bend = 30.0
k_axial = 900.0
k_shear = 300.0
[parameters]
gravity = [0, 0, -1]
[run]
integrator = "rrp-newmark"
h = 1e-3
t_end = 0.2
"""


def make_scenario(folder: Path) -> Path:
    """Five spheres in a chain over a wall, two bond types (one not the parameters'),
    two groups: the spheres and bonds from CSV files beside the scenario."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = "".join(f"{1.02 * k},0,{0.05 * k},1.0,1.0,0.1,0,0,0,0,0.3,{k // 3}\n"
                   for k in range(5))
    (folder / "spheres.csv").write_text("x,y,z,diameter,mass,vx,vy,vz,wx,wy,wz,group\n"
                                        + rows)
    (folder / "bonds.csv").write_text("i,j,type\n0,1,1\n1,2,2\n2,3,1\n3,4,2\n")
    path = folder / "chain.toml"
    path.write_text(SCENARIO)
    return path


def test_the_model_carried_is_the_model_run_bit_for_bit(tmp_path):
    scenario = make_scenario(tmp_path / "in")
    res = rrp(tmp_path, "run", str(scenario), "--out", "a.h5", "-q")
    assert res.returncode == 0, res.stderr
    built = load_scenario(scenario).build_model()
    shutil.rmtree(tmp_path / "in")
    with RunFile(tmp_path / "a.h5") as rf:
        assert sorted(rf._f["model/assembly"]) == sorted(CARRIED)
        model = rf.build_model()
    st, st0 = model.initial_state, built.initial_state
    for a, b in ((st.x, st0.x), (st.v, st0.v), (st.omega, st0.omega),
                 (model.bodies.m, built.bodies.m), (model.bodies.J, built.bodies.J),
                 (model.forcefield.bonds, built.forcefield.bonds),
                 (model.groups, built.groups), (model.forcefield.fp, built.forcefield.fp)):
        np.testing.assert_array_equal(a, b)
    assert [(tuple(n), d) for n, d in model.walls] == [(tuple(n), d) for n, d in built.walls]
    assert model.forcefield.bond_k.shape == (4, 3)  # (two types of other coefficients)
    np.testing.assert_array_equal(model.forcefield.bond_k, built.forcefield.bond_k)


def test_resume_export_and_convert_without_the_files(tmp_path):
    scenario = make_scenario(tmp_path / "in")
    for name, t in (("full.h5", "0.2"), ("half.h5", "0.1")):
        res = rrp(tmp_path, "run", str(scenario), "--t-end", t, "--out", name, "-q")
        assert res.returncode == 0, res.stderr
    res = rrp(tmp_path, "convert", "half.h5", "with.xyz", "--to", "xyz", "-q")
    assert res.returncode == 0, res.stderr
    gif = ("--size", "64x48", "--fps", "5", "-q")
    res = rrp(tmp_path, "export", "half.h5", "--out", "with.gif", *gif)
    assert res.returncode == 0, res.stderr
    shutil.rmtree(tmp_path / "in")
    res = rrp(tmp_path, "run", "--resume", "half.h5", "--t-end", "0.2", "--out", "res.h5",
              "-q")
    assert res.returncode == 0, res.stderr
    _same_runs(tmp_path / "full.h5", tmp_path / "res.h5")
    res = rrp(tmp_path, "convert", "half.h5", "without.xyz", "--to", "xyz", "-q")
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "without.xyz").read_bytes() == (tmp_path / "with.xyz").read_bytes()
    res = rrp(tmp_path, "export", "half.h5", "--out", "without.gif", *gif)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "without.gif").read_bytes() == (tmp_path / "with.gif").read_bytes()


def test_convert_to_lammps_without_the_files_keeps_types_walls_and_groups(tmp_path):
    scenario = make_scenario(tmp_path / "in")
    res = rrp(tmp_path, "run", str(scenario), "--t-end", "0.05", "--out", "a.h5", "-q")
    assert res.returncode == 0, res.stderr
    res = rrp(tmp_path, "convert", "a.h5", "with", "--to", "lammps", "-q")
    assert res.returncode == 0, res.stderr
    shutil.rmtree(tmp_path / "in")
    res = rrp(tmp_path, "convert", "a.h5", "without", "--to", "lammps", "-q")
    assert res.returncode == 0, res.stderr
    for name in ("a.data", "in.a"):
        assert (tmp_path / "without" / name).read_text() == \
            (tmp_path / "with" / name).read_text()
    data = (tmp_path / "without" / "a.data").read_text()
    assert "2 bond types" in data  # (the file's types, not type 1 for every bond)


def test_the_carried_model_is_under_the_header_digest(tmp_path):
    """The Python API's assembly (no files at all) is carried too, and a carried wall
    moved on disk is damage the header digest finds."""
    model = model_of([chain(4, 1.0, mass=1.0)], walls=[((0, 0, -1), (0, 0, 1))])
    sim = Simulation(model, "rrp-newmark", 1e-3)
    w = RunWriter(tmp_path / "a.h5", sim, scenario="api")
    assert sim.advance(20).ok
    w.close()
    with RunFile(tmp_path / "a.h5") as rf:
        again = rf.build_model()
    np.testing.assert_array_equal(again.initial_state.x, model.initial_state.x)
    with h5py.File(tmp_path / "a.h5", "r") as f:
        assert header_problems(f) == []
    with h5py.File(tmp_path / "a.h5", "r+") as f:
        f["model/assembly/walls"][0, 3] += 0.5  # (a wall moved: the same shape)
    with h5py.File(tmp_path / "a.h5", "r") as f:
        assert header_problems(f)


def test_an_old_file_whose_files_are_gone_names_them(tmp_path):
    """A run file written before issue #43 item 4 (no ``/model/assembly``) still opens
    and rebuilds from its files; with one gone, one line names it."""
    scenario = make_scenario(tmp_path / "in")
    model = load_scenario(scenario).build_model()
    model.carried = None  # (as every run file was written before)
    sim = Simulation(model, "rrp-newmark", 1e-3)
    w = RunWriter(tmp_path / "a.h5", sim, scenario=str(scenario))
    assert sim.advance(20).ok
    w.close()
    with RunFile(tmp_path / "a.h5") as rf:
        assert "model/assembly" not in rf._f
        np.testing.assert_array_equal(rf.build_model().initial_state.x,
                                      model.initial_state.x)
    (tmp_path / "in" / "spheres.csv").unlink()
    with RunFile(tmp_path / "a.h5") as rf, pytest.raises(RunFileError, match="spheres.csv"):
        rf.build_model()
    res = rrp(tmp_path, "run", "--resume", "a.h5", "--t-end", "0.1", "--out", "b.h5")
    assert "spheres.csv" in assert_one_line_error(res)
    assert not (tmp_path / "b.h5").exists()
