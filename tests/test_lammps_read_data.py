"""The LAMMPS data-file reader follows LAMMPS's read_data (issue #43 items 1, 3 and 6):
LAMMPS's own ``write_data`` output of every supported atom style (``Atoms # hybrid``
included, orthogonal and triclinic periodic boxes with image flags, SI and other units)
reads back to the positions LAMMPS holds unwrapped, its masses, diameters, velocities
and bonds; LAMMPS's examples/bpm/metamaterial (tests/data/lammps) imports with
``--atom-style``; every case the old reader got silently wrong is read right or refused
in one line naming the file and the line."""

from __future__ import annotations

import gzip
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from lammps_peer import requires_lammps, run_lammps

from engine.io.lammps.read_data import LammpsDataError, read_data

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data" / "lammps"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def rrp(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app", *map(str, args)], capture_output=True,
                          text=True, env=ENV, timeout=600, cwd=cwd)


# ------------------------------------------------------- LAMMPS's own write_data, per style
SPHERES = {"sphere", "bpm/sphere"}
BONDED = {"bond", "molecular", "full", "bpm/sphere"}
STYLES = ["atomic", "charge", "bond", "molecular", "full", "sphere", "bpm/sphere", "dipole",
          "hybrid sphere dipole", "hybrid bpm/sphere dipole", "hybrid sphere bond"]
NA = 6.02214076e23
SCALES = {"si": (1.0, 1.0, 1.0), "metal": (1e-10, 1e-3 / NA, 1e-12),
          "real": (1e-10, 1e-3 / NA, 1e-15), "cgs": (1e-2, 1e-3, 1.0),
          "micro": (1e-6, 1e-15, 1e-6), "nano": (1e-9, 1e-21, 1e-9)}
"""LAMMPS's units.rst: the SI value of its length, mass and time units."""
TILT = (1.5, 0.5, 0.7)
BOX = (10.0, 8.0, 6.0)


def unwrapped(triclinic: bool) -> np.ndarray:
    """The three atoms' true positions; atoms 2 and 3 are written wrapped with image flags
    (-1, 0, 0) or (0, -1, 0), and (0, 0, 1)."""
    return np.array([[0.5, 1.0, 1.0], [0.9, -0.4, 1.0] if triclinic else [-0.3, 1.2, 1.0],
                     [3.0, 3.0, 6.5]])


def lammps_write_data(folder: Path, style: str, units: str = "si",
                      triclinic: bool = False) -> Path:
    """LAMMPS writes a data file of three atoms of ``style`` in a periodic box (atom 2's
    bond to atom 1 crosses a boundary); returns it."""
    subs = style.split()[1:] if style.startswith("hybrid") else [style]
    sphere = any(s in SPHERES for s in subs)
    bonded = any(s in BONDED for s in subs)
    lx, ly, lz = BOX
    xy, xz, yz = TILT if triclinic else (0.0, 0.0, 0.0)
    x = unwrapped(triclinic)
    # (LAMMPS stores them wrapped: x - image shift, the image flags given by set)
    img = np.array([[0, 0, 0], [0, -1, 0] if triclinic else [-1, 0, 0], [0, 0, 1]])
    shift = img[:, :1] * np.array([lx, 0, 0]) + img[:, 1:2] * np.array([xy, ly, 0]) \
        + img[:, 2:3] * np.array([xz, yz, lz])
    w = x - shift
    region = (f"region box prism 0 {lx} 0 {ly} 0 {lz} {xy} {xz} {yz}" if triclinic
              else f"region box block 0 {lx} 0 {ly} 0 {lz}")
    lines = [f"units {units}", f"atom_style {style}", "boundary p p p", region,
             "create_box 2 box" + (" bond/types 2 extra/bond/per/atom 4" if bonded else "")]
    lines += [f"create_atoms {1 + (k == 2)} single {p[0]:.17g} {p[1]:.17g} {p[2]:.17g}"
              for k, p in enumerate(w)]
    lines += [f"set atom {k + 1} image {i} {j} {m}" for k, (i, j, m) in enumerate(img)]
    if sphere:
        lines += ["set atom 1*2 diameter 0.4", "set atom 3 diameter 0.6", "set atom * density 3.0"]
    else:
        lines += ["mass 1 2.0", "mass 2 5.0"]
    lines += ["velocity all set 0.1 0.2 0.3", "set atom 1 vx -0.5"]
    if sphere:
        lines += ["set atom 1 omega 0 0 2"]
    if bonded:
        lines += ["bond_style zero", "bond_coeff *", "create_bonds single/bond 1 1 2",
                  "create_bonds single/bond 2 1 3"]
    lines += ["write_data out.data"]
    deck = folder / "in.write"
    deck.write_text("\n".join(lines) + "\n")
    run = run_lammps(deck)
    assert run.returncode == 0 and not run.errors, run.describe()
    return folder / "out.data"


def check_read(path: Path, style: str, units: str, triclinic: bool) -> None:
    """Ours reads what LAMMPS wrote: positions unwrapped, masses, diameters, velocities,
    bonds, in SI."""
    subs = style.split()[1:] if style.startswith("hybrid") else [style]
    sphere = any(s in SPHERES for s in subs)
    bonded = any(s in BONDED for s in subs)
    head = path.read_text().split("\n")[0]
    assert f"units = {units}" in head
    comment = "hybrid" if style.startswith("hybrid") else style
    assert f"Atoms # {comment}\n" in path.read_text()
    d = read_data(path, atom_style=style if style.startswith("hybrid") else None,
                  diameter=None if sphere else 0.25)
    L, M, T = SCALES[units]
    assert d.units == units
    np.testing.assert_allclose(d.x, unwrapped(triclinic) * L, rtol=1e-14, atol=1e-15)
    if sphere:
        D = np.array([0.4, 0.4, 0.6])
        np.testing.assert_allclose(d.D, D * L, rtol=1e-15)
        np.testing.assert_allclose(d.m, 3.0 * math.pi / 6 * D ** 3 * M, rtol=1e-14)
        assert np.allclose(d.omega[0], [0, 0, 2.0 / T]) and not d.omega[1:].any()
    else:
        np.testing.assert_allclose(d.D, 0.25)
        np.testing.assert_allclose(d.m, np.array([2.0, 2.0, 5.0]) * M, rtol=1e-15)
    v = np.array([[-0.5, 0.2, 0.3], [0.1, 0.2, 0.3], [0.1, 0.2, 0.3]])
    np.testing.assert_allclose(d.v, v * L / T, rtol=1e-14)
    if bonded:
        assert d.bonds.tolist() == [[0, 1], [0, 2]] and d.bond_type.tolist() == [1, 2]
        length = np.linalg.norm(d.x[1] - d.x[0]) / L
        assert length < 2.0  # (its true length, not the box-long wrapped one: > 8)
    assert any("image flags of 2 atoms unwrapped" in n for n in d.notes)


@requires_lammps
@pytest.mark.parametrize("style", STYLES)
def test_lammps_write_data_of_each_style_reads_back(tmp_path, style):
    path = lammps_write_data(tmp_path, style)
    check_read(path, style, "si", False)


@requires_lammps
@pytest.mark.parametrize("style", ["hybrid bpm/sphere dipole", "bond"])
def test_a_triclinic_box_unwraps_by_its_tilt(tmp_path, style):
    path = lammps_write_data(tmp_path, style, triclinic=True)
    assert "1.5 0.5 0.7 xy xz yz" in path.read_text()
    check_read(path, style, "si", True)


@requires_lammps
@pytest.mark.parametrize("style,units", [("atomic", "metal"), ("sphere", "cgs"),
                                         ("full", "real"), ("bpm/sphere", "micro"),
                                         ("charge", "nano")])
def test_the_titles_units_convert_to_si(tmp_path, style, units):
    check_read(lammps_write_data(tmp_path, style, units=units), style, units, False)


@requires_lammps
def test_lj_is_refused_in_one_line_and_si_can_be_named(tmp_path):
    path = lammps_write_data(tmp_path, "sphere", units="lj")
    with pytest.raises(LammpsDataError) as e:
        read_data(path)
    assert str(e.value).startswith("out.data line 1: units lj are LAMMPS's reduced units")
    assert "--units si" in str(e.value)
    assert read_data(path, units="si").units == "si"


# ---------------------------------------------------------------- the metamaterial example
def metamaterial(folder: Path, crlf: bool = False) -> Path:
    """LAMMPS's examples/bpm/metamaterial/metamaterial.data (stored compressed)."""
    text = gzip.decompress((DATA / "metamaterial.data.gz").read_bytes())
    if crlf:
        text = text.replace(b"\n", b"\r\n")
    out = folder / ("metamaterial-crlf.data" if crlf else "metamaterial.data")
    out.write_bytes(text)
    return out


def test_the_metamaterial_reads_with_its_hybrid_style(tmp_path):
    d = read_data(metamaterial(tmp_path), atom_style="hybrid bpm/sphere dipole")
    assert d.x.shape == (1360, 3) and d.bonds.shape == (1440, 2)
    assert np.allclose(d.D, 0.1) and np.allclose(d.m, math.pi / 6 * 1e-3)
    assert d.dropped == ["q"]  # (the dipoles are carried: issue #44 item 6)
    assert d.mu.shape == (1360, 3) and np.count_nonzero(d.mu.any(axis=1)) == 64
    c = read_data(metamaterial(tmp_path, crlf=True), atom_style="hybrid bpm/sphere dipole")
    for a, b in ((d.x, c.x), (d.m, c.m), (d.D, c.D), (d.bonds, c.bonds)):
        assert np.array_equal(a, b)
    with pytest.raises(LammpsDataError) as e:
        read_data(metamaterial(tmp_path))
    assert str(e.value).startswith("metamaterial.data line 13: atom style hybrid without its "
                                   "sub-styles") and "--atom-style" in str(e.value)


def test_import_of_the_metamaterial_names_atom_style_or_writes_it(tmp_path):
    src = metamaterial(tmp_path)
    res = rrp("import", "lammps", src, "--out", tmp_path / "a.toml")
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "--atom-style" in res.stderr and not (tmp_path / "a.toml").exists()
    res = rrp("import", "lammps", src, "--atom-style", "hybrid bpm/sphere dipole", "--out",
              tmp_path / "s.toml")
    assert res.returncode == 0, res.stderr
    assert "(1360 bodies)" in res.stdout and "(1440 bonds, 1 bond type)" in res.stdout
    assert "not carried: q\n" in res.stdout
    assert "units SI" in res.stdout  # (the dipoles are carried: issue #44 item 6)
    bodies = np.loadtxt(tmp_path / "s-bodies.csv", delimiter=",", skiprows=1)
    assert bodies.shape == (1360, 16)
    crlf = metamaterial(tmp_path, crlf=True)
    res = rrp("import", "lammps", crlf, "--atom-style", "hybrid bpm/sphere dipole", "--out",
              tmp_path / "c.toml", "--quiet")
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "c-bodies.csv").read_bytes() == (tmp_path / "s-bodies.csv").read_bytes()


def test_the_deck_gives_the_style_units_and_bond_law(tmp_path):
    """The deck's units lj are taken as they are (issue #44 item 6: a dimensionless
    model, said in a note) and its bond_coeff is the bpm/rotational law's, not the
    binder's (tests/test_lammps_deck_import.py has the rest)."""
    src = metamaterial(tmp_path)
    deck = tmp_path / "in.bpm.metamaterial"
    deck.write_bytes((DATA / "in.bpm.metamaterial").read_bytes())
    res = rrp("import", "lammps", src, "--deck", deck, "--out", tmp_path / "s.toml")
    assert res.returncode == 0, res.stderr
    assert "in.bpm.metamaterial line 6: units lj: the numbers are taken as they are" \
        in res.stderr
    text = (tmp_path / "s.toml").read_text()
    assert 'law = "bpm/rotational"\nk_r = 1.0\nk_s = 1.0\nk_t = 0.1\nk_b = 0.5\n' in text


# ------------------------------------------------------------------- read right or refused
def data(atoms: str, *, style: str = "sphere", nb: int = 0, bonds: str = "",
         head: str = "", title: str = "t") -> str:
    rows = atoms.strip().split("\n")
    comment = f" # {style}" if style else ""
    text = (f"{title}\n\n{len(rows)} atoms\n2 atom types\n{nb} bonds\n1 bond types\n"
            f"0 10 xlo xhi\n0 10 ylo yhi\n0 10 zlo zhi\n{head}\nMasses\n\n1 1.0\n2 1.0\n\n"
            f"Atoms{comment}\n\n{atoms.strip()}\n")
    return text + (f"\nBonds\n\n{bonds.strip()}\n" if nb else "")


def refused(tmp_path: Path, text: str, **kw) -> str:
    p = tmp_path / "m.data"
    p.write_text(text)
    with pytest.raises(LammpsDataError) as e:
        read_data(p, **kw)
    assert "\n" not in str(e.value)
    return str(e.value)


def read(tmp_path: Path, text: str, **kw):
    p = tmp_path / "m.data"
    p.write_bytes(text.encode())
    return read_data(p, **kw)


def test_an_atomic_file_with_image_flags_is_not_read_as_spheres(tmp_path):
    atoms = "1 1 9.5 1 1 1 0 0\n2 1 0.5 1 1 0 0 0\n"
    m = refused(tmp_path, data(atoms, style=""))
    assert "m.data line 16: the Atoms line names no atom style, and its 8 columns fit " \
           "atomic with image flags or bpm/sphere" in m and "--atom-style" in m
    d = read(tmp_path, data(atoms, style="atomic"), diameter=0.5)
    assert np.allclose(d.x[0], [19.5, 1, 1]) and np.allclose(d.D, 0.5)
    assert np.allclose(d.m, 1.0)


def test_full_and_molecular_read_their_columns(tmp_path):
    d = read(tmp_path, data("1 4 1 -0.5 1 2 3\n2 4 2 0.5 4 5 6\n", style="full", nb=1,
                            bonds="1 1 1 2"), diameter=1.0)
    assert d.x.tolist() == [[1, 2, 3], [4, 5, 6]] and d.mol.tolist() == [4, 4]
    assert d.dropped == ["q"]
    d = read(tmp_path, data("1 4 1 1 2 3\n2 4 2 4 5 6\n", style="molecular", nb=1,
                            bonds="1 1 1 2"), diameter=1.0)
    assert d.x.tolist() == [[1, 2, 3], [4, 5, 6]] and d.bonds.tolist() == [[0, 1]]


def test_the_option_overrides_the_comment(tmp_path):
    text = data("1 1 1 2 3 0.5 1.0 5\n2 1 4 5 6 0.5 1.0 5\n", style="hybrid sphere")
    assert "m.data line 18: Atoms # hybrid sphere: 8 columns, expected 7 or 10" in refused(
        tmp_path, text)
    d = read(tmp_path, text, atom_style="hybrid sphere bond")
    assert d.x.tolist() == [[1, 2, 3], [4, 5, 6]] and d.mol.tolist() == [5, 5]
    assert np.allclose(d.D, 0.5)


def test_crlf_and_trailing_blanks_read_as_lammps_reads_them(tmp_path):
    text = data("1 1 1.0 1.0 1 2 3\n2 1 1.0 1.0 4 5 6\n", nb=1, bonds="1 1 1 2")
    a = read(tmp_path, text)
    b = read(tmp_path, text.replace("\n", "  \t\r\n"))
    assert np.array_equal(a.x, b.x) and np.array_equal(a.bonds, b.bonds)


def test_a_fractional_id_or_type_or_image_flag_names_its_line(tmp_path):
    assert "m.data line 19: Atoms # sphere: atom type 1.5 is not an integer" in refused(
        tmp_path, data("1 1 1.0 1.0 1 2 3\n2 1.5 1.0 1.0 4 5 6\n"))
    assert "m.data line 18: Atoms # sphere: image flag nx 0.5 is not an integer" in refused(
        tmp_path, data("1 1 1.0 1.0 1 2 3 0.5 0 0\n2 1 1.0 1.0 4 5 6 0 0 0\n"))
    assert "m.data line 3: cannot read the header line '2.5 atoms'" in refused(
        tmp_path, data("1 1 1.0 1.0 1 2 3\n").replace("1 atoms", "2.5 atoms"))


def test_every_row_of_a_large_bonds_section_is_checked(tmp_path):
    n = 1200
    atoms = "\n".join(f"{k} 1 1.0 1.0 {k} 0 0" for k in range(1, n + 1))
    rows = [f"{k} 1 {k} {k + 1}" for k in range(1, n)]
    rows[600] = "601 1 601"  # (a short row, then a long one: the same number of words)
    rows[601] = "602 1 602 603 5"
    m = refused(tmp_path, data(atoms, nb=n - 1, bonds="\n".join(rows)))
    line = 18 + n + 3 + 600  # (Atoms on line 16, its rows from 18)
    assert f"m.data line {line}: Bonds: 3 columns, expected 4" in m


def test_units_from_the_title_or_the_option(tmp_path):
    text = data("1 1 1.0 1.0 1 2 3\n", title="written units = cgs")
    d = read(tmp_path, text)
    assert d.units == "cgs" and np.allclose(d.x, [[0.01, 0.02, 0.03]])
    assert np.allclose(d.m, math.pi / 6 * 1e-3)
    d = read(tmp_path, text, units="si")
    assert d.units == "si" and np.allclose(d.x, [[1, 2, 3]])
    d = read(tmp_path, data("1 1 1.0 1.0 1 2 3\n"))
    assert d.units is None and any("taken as SI" in n for n in d.notes)


def test_ellipsoid_and_general_triclinic_are_refused_in_one_line(tmp_path):
    m = refused(tmp_path, data("1 1 1 1.0 1 2 3\n", style="ellipsoid"))
    assert m.startswith("m.data line 16: atom style 'ellipsoid' cannot be read: its "
                        "particles are ellipsoids")
    m = refused(tmp_path, data("1 1 1.0 1.0 1 2 3\n", head="1 0 0 avec\n"))
    assert "m.data line 10: a general triclinic box (avec) is not read" in m


def test_a_bond_across_a_periodic_boundary_runs_at_its_true_length(tmp_path):
    """The acceptance: a run written with --out from the import of a file whose bond
    crosses a periodic boundary starts with the bond's true length (1, not 9)."""
    text = data("1 1 1.0 1.0 9.5 5 5 0 0 0\n2 1 1.0 1.0 0.5 5 5 1 0 0\n", nb=1,
                bonds="1 1 1 2")
    src = tmp_path / "p.data"
    src.write_text(text)
    res = rrp("import", "lammps", src, "--out", tmp_path / "p.toml")
    assert res.returncode == 0, res.stderr
    assert "image flags of 1 atom unwrapped" in res.stderr
    res = rrp("run", tmp_path / "p.toml", "--t-end", "0.01", "--out", tmp_path / "p.h5",
              "--quiet")
    assert res.returncode == 0, res.stderr
    from engine.io.hdf5 import RunFile

    with RunFile(tmp_path / "p.h5") as rf:
        x = rf.frame(0).x
    assert abs(np.linalg.norm(x[1] - x[0]) - 1.0) < 1e-12


def test_a_scenario_names_the_style_and_units_and_refuses_a_tilted_box_for_walls(tmp_path):
    from engine.scenarios import load_scenario

    (tmp_path / "m.data").write_text(data("1 1 1.0 1.0 1 2 3 0 0 0\n2 1 1.0 1.0 4 5 6 0 0 1\n",
                                          style="hybrid", head="1 0 0 xy xz yz\n"))
    (tmp_path / "s.toml").write_text('model = "assembly"\nsource = "m.data"\n'
                                     'atom_style = "sphere"\nunits = "cgs"\n')
    m = load_scenario(tmp_path / "s.toml").build_model()
    assert np.allclose(m.initial_state.x, [[0.01, 0.02, 0.03], [0.04, 0.05, 0.16]])
    (tmp_path / "s.toml").write_text('model = "assembly"\nsource = "m.data"\n'
                                     'atom_style = "sphere"\nwalls_from_box = true\n')
    with pytest.raises(ValueError) as e:
        load_scenario(tmp_path / "s.toml").build_model()
    assert str(e.value).startswith("s.toml: walls_from_box: the box of m.data is triclinic "
                                   "(xy xz yz = 1 0 0)")
    (tmp_path / "s.toml").write_text('model = "assembly"\nsource = "m.data"\n')
    with pytest.raises(ValueError) as e:
        load_scenario(tmp_path / "s.toml").build_model()
    assert "atom style hybrid without its sub-styles" in str(e.value)
    assert 'atom_style = "hybrid bpm/sphere dipole"' in str(e.value)
