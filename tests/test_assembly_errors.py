"""Bad assembly input is refused in one line naming the file and the line (issue #35 item
5): through the loader (``ScenarioError``) for each case, and through ``rrp run``: exit 2,
one line on stderr, nothing written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.models import assembly
from engine.scenarios import ScenarioError, load_scenario

ROOT = Path(__file__).resolve().parent.parent
HEAD = 'model = "assembly"\n'
CSV_HEAD = "x,y,z,diameter,mass\n"
GOOD_CSV = CSV_HEAD + "0,0,0,1,1\n2,0,0,1,1\n4,0,0,1,1\n"


def refused(tmp_path: Path, toml: str, files: dict[str, str] | None = None) -> str:
    for name, text in (files or {}).items():
        (tmp_path / name).write_text(text)
    (tmp_path / "s.toml").write_text(toml)
    with pytest.raises(ScenarioError) as e:
        load_scenario(tmp_path / "s.toml")
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("s.toml: "), msg
    return msg


def test_missing_files(tmp_path):
    assert "spheres.csv: cannot read the file" in refused(
        tmp_path, HEAD + 'bodies = "spheres.csv"\n')
    assert "m.data: cannot read the LAMMPS data file" in refused(
        tmp_path, HEAD + 'source = "m.data"\n')
    assert "b.csv: cannot read" in refused(
        tmp_path, HEAD + 'bodies = "a.csv"\nbonds = "b.csv"\n', {"a.csv": GOOD_CSV})


def test_wrong_columns(tmp_path):
    m = refused(tmp_path, HEAD + 'bodies = "a.csv"\n',
                {"a.csv": "x,y,zz,diameter,mass\n1,2,3,4,5\n"})
    assert "a.csv line 1: unknown column 'zz'" in m
    m = refused(tmp_path, HEAD + 'bodies = "a.csv"\n',
                {"a.csv": "x,y,diameter,mass\n1,2,3,4\n"})
    assert "a.csv line 1: the column 'z' is missing" in m
    m = refused(tmp_path, HEAD + 'bodies = "a.csv"\n',
                {"a.csv": CSV_HEAD + "0,0,0,1,1\n2,0,0,1\n"})
    assert "a.csv line 3:" in m


def test_non_numeric_and_non_finite(tmp_path):
    m = refused(tmp_path, HEAD + 'bodies = "a.csv"\n',
                {"a.csv": CSV_HEAD + "0,0,0,1,1\n2,zero,0,1,1\n"})
    assert "a.csv line 3:" in m
    m = refused(tmp_path, HEAD + 'bodies = "a.csv"\n',
                {"a.csv": CSV_HEAD + "0,0,0,1,1\n# a comment\n2,0,inf,1,1\n"})
    assert "a.csv line 4: z = inf is not a finite number" in m
    m = refused(tmp_path, HEAD + "[[bodies]]\nposition = [0, 0, nan]\ndiameter = 1\nmass = 1\n")
    assert "[[bodies]] 0: position" in m and "finite" in m


BONDS = 'bodies = "a.csv"\nbonds = "b.csv"\n'


@pytest.mark.parametrize("rows, want", [
    ("0,1\n1,3\n", "b.csv line 3: bond (1, 3) names a sphere that does not exist"),
    ("0,1\n2,2\n", "b.csv line 3: sphere 2 is bonded to itself"),
    ("0,1\n1,2\n1,0\n", "b.csv line 4: spheres 1 and 0 are bonded twice (also at b.csv line 2)"),
])
def test_bad_bonds(tmp_path, rows, want):
    m = refused(tmp_path, HEAD + BONDS, {"a.csv": GOOD_CSV, "b.csv": "i,j\n" + rows})
    assert want in m, m


def test_unknown_bond_type(tmp_path):
    m = refused(tmp_path, HEAD + BONDS, {"a.csv": GOOD_CSV, "b.csv": "i,j,type\n0,1,1\n1,2,7\n"})
    assert "b.csv line 3: unknown bond type 7; add [bond_types.7]" in m
    m = refused(tmp_path, HEAD + "[[bodies]]\nposition = [0, 0, 0]\ndiameter = 1\nmass = 1\n"
                "[[bodies]]\nposition = [1, 0, 0]\ndiameter = 1\nmass = 1\n"
                "[[bonds]]\ni = 0\nj = 1\ntype = 2\n")
    assert "[[bonds]] bond 0: unknown bond type 2" in m


@pytest.mark.parametrize("col, row", [("mass", "2,0,0,1,0"), ("diameter", "2,0,0,-1,1"),
                                      ("inertia", "2,0,0,1,1,0")])
def test_non_positive_mass_diameter_inertia(tmp_path, col, row):
    head = CSV_HEAD.strip() + (",inertia\n" if col == "inertia" else "\n")
    first = "0,0,0,1,1" + (",0.1" if col == "inertia" else "")
    m = refused(tmp_path, HEAD + 'bodies = "a.csv"\n', {"a.csv": f"{head}{first}\n{row}\n"})
    assert f"a.csv line 3: {col} = " in m and "must be positive" in m


def test_overlap_at_t0_names_the_pair_and_amount(tmp_path):
    m = refused(tmp_path, HEAD + 'bodies = "a.csv"\n',
                {"a.csv": CSV_HEAD + "0,0,0,1,1\n5,0,0,1,1\n0.9,0,0,1,1\n"})
    assert ("spheres 0 (a.csv line 2) and 2 (a.csv line 4) overlap by 0.1 (10 % of the "
            "smaller diameter) at t = 0") in m
    m = refused(tmp_path, HEAD + 'bodies = "a.csv"\n[[walls]]\npoint = [0, 0, 0.2]\n'
                "normal = [0, 0, 1]\n", {"a.csv": GOOD_CSV})
    assert "a.csv line 2: sphere 0 cuts wall 0" in m
    # within the tolerance: spheres that touch to round-off load
    (tmp_path / "a.csv").write_text(CSV_HEAD + "0,0,0,1,1\n0.9999999999,0,0,1,1\n")
    (tmp_path / "s.toml").write_text(HEAD + 'bodies = "a.csv"\n')
    assert load_scenario(tmp_path / "s.toml").build_model().n_bodies == 2


def test_too_many_bodies(tmp_path, monkeypatch):
    monkeypatch.setattr(assembly, "MAX_BODIES", 2)
    m = refused(tmp_path, HEAD + 'bodies = "a.csv"\n', {"a.csv": GOOD_CSV})
    assert "3 spheres is more than 2e+00" in m and "Limits" in m


def test_unreadable_atom_style_is_named(tmp_path):
    data = ("title\n\n1 atoms\n1 atom types\n\n0 1 xlo xhi\n0 1 ylo yhi\n0 1 zlo zhi\n\n"
            "Atoms # full\n\n1 1 1 0.0 0.5 0.5 0.5\n")
    m = refused(tmp_path, HEAD + 'source = "m.data"\n', {"m.data": data})
    assert "m.data line 10: atom style 'full' cannot be read (readable: sphere, sphere/bpm" in m


def test_lammps_bad_rows_name_their_line(tmp_path):
    data = ("title\n\n2 atoms\n1 bonds\n\nAtoms # sphere\n\n1 1 1.0 1.0 0 0 0\n"
            "2 1 1.0 1.0 x 0 0\n\nBonds\n\n1 1 1 2\n")
    assert "m.data line 9: Atoms # sphere: 'x' is not a number" in refused(
        tmp_path, HEAD + 'source = "m.data"\n', {"m.data": data})
    data = data.replace(" x ", " 2 ").replace("1 1 1 2\n", "1 1 1 5\n")
    assert "m.data line 13: a bond to atom 5, which is not in Atoms" in refused(
        tmp_path, HEAD + 'source = "m.data"\n', {"m.data": data})


def test_unknown_keys(tmp_path):
    assert "[[build]] 0 (chain): unknown key 'colour'" in refused(
        tmp_path, HEAD + '[[build]]\nkind = "chain"\nn = 3\ndiameter = 1\ncolour = 1\n')
    assert "unknown key 'bodies' (a key of model = \"assembly\")" in refused(
        tmp_path, 'model = "torus"\nbodies = "a.csv"\n')


def test_the_cli_refuses_in_one_line_and_runs_nothing(tmp_path):
    (tmp_path / "a.csv").write_text(GOOD_CSV)
    (tmp_path / "b.csv").write_text("i,j\n0,1\n0,1\n")
    (tmp_path / "s.toml").write_text(HEAD + BONDS)
    out = tmp_path / "run.h5"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    res = subprocess.run([sys.executable, "-m", "app", "run", str(tmp_path / "s.toml"),
                          "--out", str(out)], capture_output=True, text=True, env=env,
                         timeout=300)
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "b.csv line 3: spheres 0 and 1 are bonded twice" in lines[0]
    assert not out.exists() and not list(tmp_path.glob("run*"))
