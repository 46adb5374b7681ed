"""Every input route of an assembly goes through one check of the model, and input files
are read within a size limit (issues #42 items 4 and 6, #46 items 6 and 7, #47 item 5).

The same value is refused the same way from a ``[bond_types]`` table, a bodies or bonds
CSV, a LAMMPS data file read by ``source =``, ``rrp import lammps``, a ``[[build]]`` and
the Python API (``engine.models.assembly.check_geometry``); each refusal is one line
naming the file and line.  Parse-level tests through the loader, and one ``rrp``
subprocess per route (exit 2, one line on stderr, nothing written)."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from test_assembly_errors import refused

from engine import inputs
from engine.models.assembly import model_of
from engine.models.builders import chain, make_part
from engine.scenarios import load_scenario

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
HEAD = 'model = "assembly"\n'
RHO = "1.9098593171027443"  # (6/π: mass 1 for D = 1)


def rrp(*args: object, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app", *map(str, args)], capture_output=True,
                          text=True, env=ENV, timeout=300, cwd=cwd)


def data_text(*, comment: str = "", atoms: str | None = None, velocities: str = "",
              bonds: str = "1 1 1 2\n", masses: str = "", style: str = "sphere") -> str:
    """A LAMMPS data file of two spheres 1 apart and a bond (line 3: ``comment``; the
    Atoms rows on lines 14 and 15, the rows of the next section from line 19 on)."""
    nb = bonds.count("\n")
    rows = atoms if atoms is not None else (f"1 1 1.0 {RHO} 0 0 0\n2 1 1.0 {RHO} 1 0 0\n")
    text = (f"LAMMPS data file\n\n{comment}\n2 atoms\n1 atom types\n{nb} bonds\n"
            "1 bond types\n-2 2 xlo xhi\n-2 2 ylo yhi\n-2 2 zlo zhi\n\n"
            f"Atoms # {style}\n\n{rows}")
    if masses:
        text += f"\nMasses\n\n{masses}"
    if velocities:
        text += f"\nVelocities\n\n{velocities}"
    if nb:
        text += f"\nBonds\n\n{bonds}"
    return text


def source_refusal(tmp_path: Path, text: str, extra: str = "") -> str:
    return refused(tmp_path, HEAD + 'source = "m.data"\n' + extra, {"m.data": text})


def import_refusal(tmp_path: Path, text: str, *more: str) -> str:
    """``rrp import lammps``'s one line (exit 2), nothing written (in ``tmp_path/imp``)."""
    d = tmp_path / "imp"
    d.mkdir()
    (d / "m.data").write_text(text)
    res = rrp("import", "lammps", d / "m.data", "--out", d / "s.toml", *more)
    assert res.returncode == 2, (res.returncode, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rrp: error: "), res.stderr
    assert sorted(p.name for p in d.iterdir()) == ["m.data"]
    return lines[0]


# ------------------------------------------------ #46.6: one check of the bond types
@pytest.mark.parametrize("value, why", [("-5.0", "it cannot be negative"),
                                        ("nan", "must be finite"), ("inf", "must be finite"),
                                        ("1e31", "out of range")])
def test_a_data_files_coefficients_are_checked_as_a_tables(tmp_path, value, why):
    comment = f"# rrp bond_type 1: k_bend {value} k_axial 200.0 k_shear 200.0"
    m = source_refusal(tmp_path, data_text(comment=comment))
    assert "m.data line 3: bond type 1: k_bend" in m and why in m, m
    if value == "-5.0":  # the same value in a table: the same check, the same words
        t = refused(tmp_path, HEAD + 'source = "m.data"\n[bond_types.2]\nk_bend = -5.0\n'
                    "k_axial = 200.0\nk_shear = 200.0\n",
                    {"m.data": data_text()})
        assert "s.toml [bond_types.2]: bond type 2: k_bend = -5.0 is out of range" in t, t
        assert m.split("bond type 1: ")[1] == t.split("bond type 2: ")[1]
        with pytest.raises(ValueError, match=r"bond_types\['1'\]: bond type 1: k_bend = -5"):
            model_of([chain(2, 1.0)], bond_types={"1": (-5.0, 200.0, 200.0)})


def test_the_import_refuses_a_negative_k_bend_on_its_line(tmp_path):
    comment = "# rrp bond_type 1: k_bend -5.0 k_axial 200.0 k_shear 200.0"
    m = import_refusal(tmp_path, data_text(comment=comment))
    assert "m.data line 3: bond type 1: k_bend = -5.0 is out of range" in m, m


def test_a_coefficient_comment_twice_is_refused(tmp_path):
    c = "# rrp bond_type 1: k_bend 1.0 k_axial 2.0 k_shear 3.0"
    m = source_refusal(tmp_path, data_text(comment=c + "\n" + c))
    assert "m.data line 4: bond type 1's coefficients are given twice (also line 3)" in m


# ---------------------------------------------------------------- #42.6: what the run refuses
@pytest.mark.parametrize("d, rho, want", [
    ("-0.5", RHO, "diameter = -0.5 must be positive"), ("0", RHO, "diameter = 0 must be"),
    ("1.0", "0", "mass = 0 must be positive")])
def test_the_import_refuses_what_the_run_refuses_on_its_line(tmp_path, d, rho, want):
    atoms = f"1 1 1.0 {RHO} 0 0 0\n2 1 {d} {rho} 1 0 0\n"
    m = import_refusal(tmp_path, data_text(atoms=atoms))
    assert f"m.data line 15: {want}" in m, m
    assert f"m.data line 15: {want}" in source_refusal(tmp_path, data_text(atoms=atoms))


@pytest.mark.parametrize("route", ["csv", "table", "data", "build"])
def test_a_zero_length_bond_is_refused_in_every_route(tmp_path, route):
    csv = "x,y,z,diameter,mass\n0,0,0,1,1\n0,0,0,1,1\n"
    if route == "csv":
        m = refused(tmp_path, HEAD + 'bodies = "a.csv"\nbonds = "b.csv"\n',
                    {"a.csv": csv, "b.csv": "i,j\n0,1\n"})
        assert "b.csv line 2: bond (0, 1) has length 0 at t = 0" in m, m
    elif route == "table":
        m = refused(tmp_path, HEAD + 'bodies = "a.csv"\n[[bonds]]\ni = 0\nj = 1\n',
                    {"a.csv": csv})
        assert "s.toml [[bonds]] bond 0: bond (0, 1) has length 0" in m, m
    elif route == "data":
        atoms = f"1 1 1.0 {RHO} 0 0 0\n2 1 1.0 {RHO} 0 0 0\n"
        m = source_refusal(tmp_path, data_text(atoms=atoms))
        assert "m.data line 19: bond (0, 1) has length 0" in m, m
    else:
        m = refused(tmp_path, HEAD + '[[build]]\nkind = "chain"\nn = 3\ndiameter = 1.0\n'
                    "spacing = 0.0\n")
        assert "[[build]] 0 bond 0: bond (0, 1) has length 0" in m, m
        with pytest.raises(ValueError, match="has length 0"):
            model_of([make_part([[0, 0, 0], [0, 0, 0]], 1.0, bonds=[[0, 1]])])
    assert "move the spheres apart or remove the bond" in m


def test_the_import_refuses_a_zero_length_bond(tmp_path):
    atoms = f"1 1 1.0 {RHO} 0 0 0\n2 1 1.0 {RHO} 0 0 0\n"
    assert "m.data line 19: bond (0, 1) has length 0" in import_refusal(
        tmp_path, data_text(atoms=atoms))


# ---------------------------------------------------------------- #47.5: the LAMMPS reader
@pytest.mark.parametrize("bonds, want", [
    ("1 1 1 1\n", "m.data line 19: sphere 0 is bonded to itself"),
    ("1 1 1 2\n2 1 2 1\n", "m.data line 20: spheres 1 and 0 are bonded twice (also at "
                           "m.data line 19)"),
    ("1 1.5 1 2\n", "m.data line 19: Bonds: bond type 1.5 is not an integer"),
    ("1 0 1 2\n", "m.data line 19: Bonds: bond type 0 is out of range: LAMMPS numbers them "
                  "from 1 to 1"),
])
def test_the_import_refuses_bad_bonds_on_their_line(tmp_path, bonds, want):
    text = data_text(bonds=bonds)
    assert want in import_refusal(tmp_path, text)
    assert want in source_refusal(tmp_path, text)


def test_velocities_naming_an_atom_twice_are_refused(tmp_path):
    vel = "1 0.5 0 0 0 0 0\n1 0.7 0 0 0 0 0\n"
    m = source_refusal(tmp_path, data_text(velocities=vel))
    assert "m.data line 20: Velocities names atom 1 twice (also line 19)" in m, m
    assert "Velocities names atom 1 twice" in import_refusal(tmp_path, data_text(velocities=vel))


def test_a_masses_row_of_type_minus_one_is_refused(tmp_path):
    atoms = "1 0 1 0 0 0\n2 0 1 1 0 0\n"
    text = data_text(atoms=atoms, style="bond", masses="-1 5.0\n")
    m = source_refusal(tmp_path, text, "diameter = 1.0\n")
    assert "m.data line 19: Masses: atom type -1 is out of range: LAMMPS numbers them from 1" \
        in m, m
    assert "Masses: atom type -1" in import_refusal(tmp_path, text, "--diameter", "1.0")
    text = data_text(atoms=atoms, style="bond", masses="1 5.0\n").replace(
        "1 atom types", "2 atom types").replace("Masses\n\n1 5.0\n", "Masses\n\n1 5.0\n1 6.0\n")
    assert "m.data line 20: Masses names atom type 1 twice (also line 19)" in source_refusal(
        tmp_path, text, "diameter = 1.0\n")


@pytest.mark.parametrize("name, out", [("x-bodies.csv", "x.toml"), ("x-bonds.csv", "x.toml"),
                                       ("m.toml", "m.toml")])
def test_an_import_that_would_overwrite_its_input_is_refused(tmp_path, name, out):
    src = tmp_path / name
    text = data_text()
    src.write_text(text)
    res = rrp("import", "lammps", src, "--out", tmp_path / out)
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "would overwrite the input" in lines[0], res.stderr
    assert src.read_text() == text
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


# ---------------------------------------------------------------- #46.7, #42.4: bounded reading
def test_a_bonds_csv_with_only_its_header_loads_without_a_warning(tmp_path):
    (tmp_path / "a.csv").write_text("x,y,z,diameter,mass\n0,0,0,1,1\n2,0,0,1,1\n")
    (tmp_path / "b.csv").write_text("i,j\n")
    (tmp_path / "s.toml").write_text(HEAD + 'bodies = "a.csv"\nbonds = "b.csv"\n')
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = load_scenario(tmp_path / "s.toml").build_model()
    assert m.n_bodies == 2 and m.forcefield.bonds.shape[0] == 0


def test_a_bodies_csv_with_only_its_header_is_refused_in_one_line(tmp_path):
    (tmp_path / "a.csv").write_text("x,y,z,diameter,mass\n")
    (tmp_path / "s.toml").write_text(HEAD + 'bodies = "a.csv"\n')
    res = rrp("run", tmp_path / "s.toml", "--out", tmp_path / "r.h5", "--t-end", "0.01")
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "a.csv line 1: a header and no rows after it" in lines[0], \
        res.stderr
    assert not list(tmp_path.glob("r*"))


def _at_most_4_gib() -> None:  # (a reader that reads /dev/zero to its end fails fast)
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (4 * 2**30, 4 * 2**30))


@pytest.mark.skipif(not Path("/dev/zero").exists() or sys.platform != "linux",
                    reason="no /dev/zero")
def test_an_endless_device_is_refused_as_a_csv_and_as_a_data_file(tmp_path):
    """Only in subprocesses held to 4 GiB: a reader without the limit ends there in
    ``MemoryError``, not in the machine's memory."""
    (tmp_path / "a.csv").write_text("x,y,z,diameter,mass\n0,0,0,1,1\n")
    for name, toml, want in [
            ("csv", 'bodies = "/dev/zero"\n', "/dev/zero: cannot read the file: it is a device"),
            ("bonds", 'bodies = "a.csv"\nbonds = "/dev/zero"\n', "/dev/zero: cannot read the file"),
            ("data", 'source = "/dev/zero"\n', "zero: cannot read the LAMMPS data file: it is a "
                                              "device or a pipe")]:
        (tmp_path / f"{name}.toml").write_text(HEAD + toml)
        res = subprocess.run([sys.executable, "-m", "app", "run", tmp_path / f"{name}.toml",
                              "--out", tmp_path / "r.h5"], capture_output=True, text=True,
                             env=ENV, timeout=300, preexec_fn=_at_most_4_gib)
        lines = res.stderr.strip().splitlines()
        assert res.returncode == 2 and len(lines) == 1 and want in lines[0], res.stderr
    res = subprocess.run([sys.executable, "-m", "app", "import", "lammps", "/dev/zero", "--out",
                          tmp_path / "s2.toml"], capture_output=True, text=True, env=ENV,
                         timeout=300, preexec_fn=_at_most_4_gib)
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "not a regular file" in res.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "a.csv", "bonds.toml", "csv.toml", "data.toml"]


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(inputs, "MAX_INPUT_BYTES", 64)
    csv = "x,y,z,diameter,mass\n" + "".join(f"{3 * k},0,0,1,1\n" for k in range(10))
    m = refused(tmp_path, HEAD + 'bodies = "a.csv"\n', {"a.csv": csv})
    assert f"a.csv: the file has {len(csv)} bytes, more than the 64 an input file may have" \
        in m, m
    m = source_refusal(tmp_path, data_text())
    assert "m.data: the LAMMPS data file has" in m and "more than the 64" in m, m
