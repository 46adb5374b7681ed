"""Input files of an assembly are read within a size limit (issues #42 item 4, #46 item
7): each refusal is one line naming the file and line.  Parse-level tests through the
loader, and ``rrp`` subprocesses (exit 2, one line on stderr, nothing written)."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from engine.models import base
from engine.scenarios import ScenarioError, load_scenario

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


def refused(tmp_path: Path, toml: str, files: dict[str, str] | None = None) -> str:
    for name, text in (files or {}).items():
        (tmp_path / name).write_text(text)
    (tmp_path / "s.toml").write_text(toml)
    with pytest.raises(ScenarioError) as e:
        load_scenario(tmp_path / "s.toml")
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("s.toml: "), msg
    return msg


def source_refusal(tmp_path: Path, text: str, extra: str = "") -> str:
    return refused(tmp_path, HEAD + 'source = "m.data"\n' + extra, {"m.data": text})


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
    monkeypatch.setattr(base, "MAX_INPUT_BYTES", 64)
    csv = "x,y,z,diameter,mass\n" + "".join(f"{3 * k},0,0,1,1\n" for k in range(10))
    m = refused(tmp_path, HEAD + 'bodies = "a.csv"\n', {"a.csv": csv})
    assert f"a.csv: the file has {len(csv)} bytes, more than the 64 an input file may have" \
        in m, m
    m = source_refusal(tmp_path, data_text())
    assert "m.data: the LAMMPS data file has" in m and "more than the 64" in m, m
