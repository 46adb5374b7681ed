"""``rrp import lammps DATA --deck IN`` (issue #44 item 6): LAMMPS's
``examples/bpm/metamaterial`` with its deck becomes a scenario with the deck's bond law,
masses, dipoles, field ramp, damping and two stages that loads and runs on its own; an
uncarried command is one line naming it and its line, exit 2, nothing written.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import h5py
import numpy as np

from engine.io.lammps.deck_variables import ramp_of
from engine.models.stages import Stage, StageDamping, StageField
from engine.scenarios import load_scenario

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data" / "lammps"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def rrp(*args, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app", *map(str, args)], capture_output=True,
                          text=True, env=ENV, timeout=600, cwd=cwd)


def example(folder: Path, deck: str | None = None) -> tuple[Path, Path]:
    """LAMMPS's metamaterial data file and deck (or ``deck``'s text) in ``folder``."""
    src = folder / "metamaterial.data"
    src.write_bytes(gzip.decompress((DATA / "metamaterial.data.gz").read_bytes()))
    d = folder / "in.bpm.metamaterial"
    d.write_text(deck if deck is not None else (DATA / "in.bpm.metamaterial").read_text())
    return src, d


def written(folder: Path) -> list[Path]:
    """The scenario and CSVs an import of ``meta.toml`` writes."""
    return [*folder.glob("meta.toml"), *folder.glob("meta-*")]


def test_ramps_of_equal_variables():
    assert ramp_of("0.25*ramp(0,1)") == (0.0, 0.25)
    assert ramp_of("ramp(1,3)*2") == (2.0, 6.0)
    assert ramp_of("0.25") == (0.25, 0.25)
    assert ramp_of("v_x*2") is None


def test_the_metamaterial_imports_with_its_deck_and_runs(tmp_path):
    src, deck = example(tmp_path)
    res = rrp("import", "lammps", src, "--deck", deck, "--out", tmp_path / "meta.toml")
    assert res.returncode == 0, res.stderr
    err = res.stderr
    assert "output-only commands ignored: thermo_style (line 25), compute (line 27)" in err
    assert "units lj: the numbers are taken as they are" in err
    assert "dropped" not in err  # (the bond damping is carried: issue #44 item 1)
    text = (tmp_path / "meta.toml").read_text()
    doc = tomllib.loads(text)
    assert doc["run"]["h"] == 1e-4 and doc["run"]["t_end"] == 15.0
    assert doc["run"]["every"] == 1000  # (the deck's thermo 1000: ~15 MB, not ~1.5 GB)
    law = doc["bond_types"]["1"]
    assert law["law"] == "bpm/rotational" and law["smooth"] is False
    assert (law["k_r"], law["k_s"], law["k_t"], law["k_b"]) == (1.0, 1.0, 0.1, 0.5)
    assert [law[f"gamma_{k}"] for k in "nsrt"] == [1e-3] * 4
    sc = load_scenario(tmp_path / "meta.toml")
    m = sc.build_model()
    assert m.n_bodies == 1360 and m.forcefield.bonds.shape == (1440, 2)
    assert m.forcefield.bpm.shape[0] == 1440  # (every bond the bpm/rotational law)
    groups, counts = np.unique(m.groups, return_counts=True)
    assert groups.tolist() == [1, 2] and counts.tolist() == [1296, 64]  # (magnets: type 2)
    bodies = np.genfromtxt(tmp_path / "meta-bodies.csv", delimiter=",", names=True)
    mags = bodies["group"] == 2
    mu = np.stack([bodies["mux"], bodies["muy"], bodies["muz"]], axis=1)
    assert np.all(np.linalg.norm(mu[mags], axis=1) == 1.0)
    # set group all density 1.0, set group magnets density 10.: m = ρ π D³/6, J = m D²/10
    D = bodies["diameter"]
    rho = np.where(mags, 10.0, 1.0)
    assert np.allclose(bodies["mass"], rho * np.pi / 6 * D ** 3, rtol=1e-15)
    assert np.allclose(bodies["inertia"], bodies["mass"] * D ** 2 / 10, rtol=1e-15)
    assert m.stages == (
        Stage(steps=100000, fields=(StageField((0.0, 0.0, 0.25), 2, (0.0, 1.0)),)),
        Stage(steps=50000, fields=(StageField((0.0, 0.0, 0.25), 2, None),),
              damping=(StageDamping(-1, 1e-3, 1e-3),)))
    # it runs on its own (no data file, no deck), stress-free at t = 0
    src.unlink()
    deck.unlink()
    res = rrp("run", "meta.toml", "--t-end", "0.005", "--out", "meta.h5", "-q",
              cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    with h5py.File(tmp_path / "meta.h5") as f:
        bond = sum(f[f"energy/{k}"][:] for k in ("axial", "shear", "bending"))
    assert abs(bond[0]) < 1e-15 and np.all(np.isfinite(bond))


def test_an_uncarried_command_is_one_line_naming_it_and_nothing_is_written(tmp_path):
    text = (DATA / "in.bpm.metamaterial").read_text().replace(
        "fix             3 all viscous 1e-3",
        "fix             3 all viscous 1e-3\nfix 5 all langevin 1.0 1.0 1.0 48279")
    line = text.split("\n").index("fix 5 all langevin 1.0 1.0 1.0 48279") + 1
    src, deck = example(tmp_path, text)
    res = rrp("import", "lammps", src, "--deck", deck, "--out", tmp_path / "meta.toml")
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert f"in.bpm.metamaterial line {line}: fix 5 all langevin" in res.stderr
    assert "fix langevin is not carried" in res.stderr
    assert not written(tmp_path)
    text = (DATA / "in.bpm.metamaterial").read_text().replace("run             50000",
                                                               "velocity all create 1 4")
    src, deck = example(tmp_path, text)
    res = rrp("import", "lammps", src, "--deck", deck, "--out", tmp_path / "meta.toml")
    assert res.returncode == 2 and "the command velocity is not carried" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and not written(tmp_path)
