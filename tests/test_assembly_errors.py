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
    # (full is read since issue #43 item 1: a point style, its diameter from the scenario)
    assert "m.data line 10: atom style 'full' has no diameter: give the spheres' diameter " \
        "with diameter = … in the scenario" in m
    m = refused(tmp_path, HEAD + 'source = "m.data"\n',
                {"m.data": data.replace("# full", "# peri")})
    assert "m.data line 10: atom style 'peri' cannot be read (readable: atomic, charge" in m


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


MEMORY_LIMIT = 2 * 1024**3
"""The address space the children below may use (``RLIMIT_AS``): the imports need ~1 GB;
a builder that allocated before checking its limits ends in ``MemoryError`` there (on a
machine without the limit, main's ``chain`` with ``n = 10⁸`` was killed by the kernel
after 70 s: issue #42 item 5)."""
TOO_LARGE = {
    "chain": "chain(10**8, 1.0)",
    "chain, n a float": "chain(1e8, 1.0)",
    "ring": "ring(10**8, 3.0)",
    "lattice's bonds": "lattice('sc', 1.0, {'shape': 'box', 'lo': [0, 0, 0], "
                       "'hi': [99, 99, 99]}, bond_within=20.0)",
    "ball's bonds": "ball(40.0, 1.0, bond_within=12.0)",
}
"""Builders asked for more than an assembly may have (10⁷ spheres, 6·10⁷ bonds)."""


def _limited() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def test_builders_refuse_beyond_the_limits_before_allocating():
    """Issue #42 item 5: each builder checks its spheres and bonds (a lattice's estimated
    from its region and cutoff) against the documented limits before it allocates: one
    line, a ``ParameterError``, at once and within 2 GB (main: ``MemoryError`` for the
    chain and the ring, the lattice's and the ball's bonds too, after seconds of
    neighbour search)."""
    import json

    code = ("import json, time\nfrom engine.models import builders\nout = {}\n"
            f"for name, call in {TOO_LARGE!r}.items():\n"
            "    t = time.perf_counter()\n"
            "    try:\n"
            "        eval('builders.' + call)\n"
            "        out[name] = ('built', '', 0.0)\n"
            "    except Exception as exc:\n"
            "        out[name] = (type(exc).__name__, str(exc), time.perf_counter() - t)\n"
            "print(json.dumps(out))\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=300, preexec_fn=_limited)
    assert res.returncode == 0, res.stderr[-2000:]
    got = json.loads(res.stdout.strip().splitlines()[-1])
    for name, (kind, msg, took) in got.items():
        assert kind == "ParameterError", (name, kind, msg)
        assert "\n" not in msg and "an assembly may have" in msg and "Limits" in msg, msg
        assert took < 1.0, (name, took)
    assert got["chain"][1].startswith("chain: 1e+08 spheres, more than the 1e+07")
    assert "about 205 GB" in got["ring"][1]
    assert got["lattice's bonds"][1].startswith("lattice: about 1.7")


def test_an_assembly_s_builders_share_its_limits_in_the_cli(tmp_path):
    """The parts together: a second ``[[build]]`` is refused for what the first left
    (``rrp run``: exit 2, one line, before either is joined; main built both, 12·10⁶
    spheres, then refused — or, with the memory they take, was killed)."""
    (tmp_path / "s.toml").write_text(
        HEAD + '[[build]]\nkind = "chain"\nn = 100000000\ndiameter = 1.0\n')
    (tmp_path / "t.toml").write_text(
        HEAD + '[[build]]\nkind = "chain"\nn = 3\ndiameter = 1.0\n'
        '[[build]]\nkind = "ring"\nn = 9999999\ndiameter = 1e6\n')
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for name, want in (("s.toml", "s.toml [[build]] 0: chain: 1e+08 spheres, more than the "
                        "1e+07 an assembly may have (a run would need about 205 GB)"),
                       ("t.toml", "t.toml [[build]] 1: ring: 9,999,999 spheres, more than "
                        "the 9,999,997 left of the 1e+07 an assembly may have")):
        res = subprocess.run([sys.executable, "-m", "app", "run", str(tmp_path / name), "-q"],
                             capture_output=True, text=True, env=env, timeout=300,
                             preexec_fn=_limited)
        assert res.returncode == 2, res.stderr[-2000:]
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and want in lines[0], lines
