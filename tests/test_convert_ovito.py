"""``rrp convert --to xyz | lammps-dump | vtk`` for OVITO and ParaView (issue #37 item 7):
the files hold every frame with its time, and the positions and the orientation
quaternion (OVITO's ``Orientation`` is X, Y, Z, W: scalar last) exactly as the run file
holds them (``%.17g``, parsed back here); OVITO's own reader (``ovito`` on PyPI, run in
a subprocess without a display) finds the same frames, times and bodies — skipped, with
its reason, where it cannot load; VTK's reader (ParaView's) reads the VTK files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from app.cli import main
from engine.io import RunFile, RunWriter
from engine.scenarios import load_scenario
from engine.simulation import Simulation

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    """A torus of 12 spheres in 2 rings' worth of nothing: 12 bodies, 31 frames."""
    path = tmp_path_factory.mktemp("conv") / "ring.h5"
    sim = Simulation(load_scenario("torus", {"n_particles": 12}).build_model(), "rrp-newmark",
                     1e-3, record_every=10, record_frames=True, record_state=True)
    with RunWriter(path, sim, scenario="torus", checkpoint=False) as w:
        assert sim.advance(300).ok
        w.flush()
    return path


def _recorded(run: Path) -> tuple[np.ndarray, list]:
    with RunFile(run) as rf:
        return np.asarray(rf.frame_times), [rf.frame(k) for k in range(rf.n_frames)]


def parse_xyz(path: Path) -> list[dict]:
    frames = []
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        n = int(lines[i])
        head = lines[i + 1]
        meta = dict(kv.split("=", 1) for kv in head.split() if "=" in kv)
        rows = [ln.split() for ln in lines[i + 2:i + 2 + n]]
        num = np.array([[float(v) for v in r[2:-1]] for r in rows])
        frames.append({"props": meta["Properties"], "t": float(meta["Time"]), "pos": num[:, :3],
                       "radius": num[:, 3], "vel": num[:, 4:7], "orient": num[:, 7:11],
                       "omega": num[:, 11:14], "group": [int(r[-1]) for r in rows]})
        i += 2 + n
    return frames


def parse_dump(path: Path) -> list[dict]:
    frames = []
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        assert lines[i] == "ITEM: TIME"
        t = float(lines[i + 1])
        n = int(lines[i + 5])
        cols = lines[i + 10].split()[2:]
        num = np.array([[float(v) for v in ln.split()] for ln in lines[i + 11:i + 11 + n]])
        frames.append({"t": t, **{c: num[:, k] for k, c in enumerate(cols)}})
        i += 11 + n
    return frames


def test_xyz_holds_every_frame_exactly(run, tmp_path, capsys):
    code = main(["convert", str(run), str(tmp_path / "r.xyz"), "--to", "xyz"])
    assert code == 0 and "wrote 31 frames" in capsys.readouterr().out
    times, recorded = _recorded(run)
    frames = parse_xyz(tmp_path / "r.xyz")
    assert len(frames) == len(times) == 31
    assert "orientation:R:4:omega:R:3" in frames[0]["props"]
    for fr, rec, t in zip(frames, recorded, times, strict=True):
        assert fr["t"] == t
        np.testing.assert_array_equal(fr["pos"], rec.x)
        np.testing.assert_array_equal(fr["orient"], rec.q[:, [1, 2, 3, 0]])  # X Y Z W
        np.testing.assert_array_equal(fr["vel"], rec.v)
        np.testing.assert_array_equal(fr["omega"], rec.omega)
        assert fr["group"] == [0] * 12  # one ring


def test_lammps_dump_holds_every_frame_exactly(run, tmp_path, capsys):
    code = main(["convert", str(run), "--to", "lammps-dump", "--every", "3", "--out",
                 str(tmp_path)])
    assert code == 0, capsys.readouterr().err
    times, recorded = _recorded(run)
    frames = parse_dump(tmp_path / "ring.dump")
    assert len(frames) == 11
    for fr, rec, t in zip(frames, recorded[::3], times[::3], strict=True):
        assert fr["t"] == t
        np.testing.assert_array_equal(np.column_stack([fr["x"], fr["y"], fr["z"]]), rec.x)
        np.testing.assert_array_equal(
            np.column_stack([fr["quatw"], fr["quati"], fr["quatj"], fr["quatk"]]), rec.q)


def test_the_default_target_sits_next_to_the_run_and_bad_input_is_one_line(run, tmp_path,
                                                                            capsys):
    local = tmp_path / "copy.h5"
    local.write_bytes(run.read_bytes())
    assert main(["convert", str(local), "--to", "xyz"]) == 0
    assert (tmp_path / "copy.xyz").is_file()
    capsys.readouterr()
    for args, what in ((["convert", str(local), str(tmp_path / "no" / "x.xyz"), "--to",
                         "xyz"], "does not exist"),
                       (["convert", str(tmp_path / "missing.h5"), "--to", "lammps-dump"],
                        "no such run file")):
        assert main(args) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and what in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy.h5", "copy.xyz"]


def test_vtk_for_ovito_is_uncompressed_and_read_by_vtk(run, tmp_path, capsys):
    pv = pytest.importorskip("pyvista")
    assert main(["convert", str(run), str(tmp_path / "v"), "--to", "vtk"]) == 0
    text = (tmp_path / "v" / "ring_0000.vtp").read_bytes()
    assert b"compressor" not in text and b"<FieldData>" not in text and b"appended" not in text
    _, recorded = _recorded(run)
    mesh = pv.read(tmp_path / "v" / "ring_0017.vtp")
    np.testing.assert_array_equal(mesh.points, recorded[17].x)
    assert mesh.n_lines == 0 and mesh.n_verts == 12
    np.testing.assert_array_equal(mesh.point_data["radius"], 0.5 * mesh.point_data["diameter"])
    assert main(["convert", str(run), str(tmp_path / "c"), "--to", "vtk", "--compress"]) == 0
    assert b"vtkZLibDataCompressor" in (tmp_path / "c" / "ring_0000.vtp").read_bytes()
    assert pv.read(tmp_path / "c" / "ring_0000.vtp").n_lines == 12  # the ring's bonds


OVITO_READ = r"""
import json, sys
import numpy as np
from ovito.io import import_file
out = {}
for path in sys.argv[1:]:
    p = import_file(path)
    frames = []
    for k in range(p.source.num_frames):
        d = p.compute(k)
        o = d.particles["Orientation"][...] if "Orientation" in d.particles else None
        frames.append({"t": d.attributes.get("Time"),
                       "pos": np.asarray(d.particles.positions).tolist(),
                       "orient": None if o is None else np.asarray(o, float).tolist()})
    out[path] = frames
print(json.dumps(out))
"""


def test_ovito_reads_the_frames_times_positions_and_orientations(run, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    probe = subprocess.run([sys.executable, "-c", "import ovito.io"], env=env,
                           capture_output=True, text=True, timeout=300)
    if probe.returncode:
        pytest.skip("OVITO's Python module cannot load here (pip install ovito): "
                    + (probe.stderr.strip().splitlines() or ["?"])[-1])
    for fmt, target in (("xyz", "r.xyz"), ("lammps-dump", "r.dump"), ("vtk", "v")):
        assert main(["convert", str(run), str(tmp_path / target), "--to", fmt]) == 0
    paths = [str(tmp_path / "r.xyz"), str(tmp_path / "r.dump"), str(tmp_path / "v" / "ring.pvd")]
    res = subprocess.run([sys.executable, "-c", OVITO_READ, *paths], env=env,
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout.splitlines()[-1])
    times, recorded = _recorded(run)
    for path in paths:
        frames = got[path]
        assert len(frames) == 31, path
        for fr, rec, t in zip(frames, recorded, times, strict=True):
            assert fr["t"] == t, path
            pos = np.array(fr["pos"])
            if path.endswith(".pvd"):  # binary arrays: bit for bit
                np.testing.assert_array_equal(pos, rec.x)
            else:  # OVITO's text parser: within an ulp of the exact text
                np.testing.assert_allclose(pos, rec.x, rtol=4e-16, atol=1e-15)
            if fr["orient"] is not None:  # OVITO keeps Orientation in single precision
                np.testing.assert_allclose(fr["orient"], rec.q[:, [1, 2, 3, 0]], atol=1e-7)
        assert path.endswith(".pvd") or frames[0]["orient"] is not None


@pytest.mark.parametrize("groups", [(3, 3, 7), (1, 0, 2)])
def test_the_groups_the_user_set_are_kept_by_every_converter(tmp_path, capsys, groups):
    """An assembly's groups (as its CSV sets them) are written by ``--to xyz`` (as they
    are), ``--to lammps-dump`` (``type`` = ``mol``, shifted by one where they start at
    0) and the VTK files, from the run file's ``/bodies/group``: also once the CSV is
    gone.  The body's index was written instead (issue #42 item 8)."""
    (tmp_path / "spheres.csv").write_text(
        "x,y,z,diameter,density,group\n"
        + "".join(f"{k},0,1,1,1,{g}\n" for k, g in enumerate(groups)))
    (tmp_path / "bonds.csv").write_text("i,j,type\n0,1,1\n1,2,1\n")
    (tmp_path / "a.toml").write_text('model = "assembly"\nbodies = "spheres.csv"\n'
                                     'bonds = "bonds.csv"\n')
    sim = Simulation(load_scenario(tmp_path / "a.toml").build_model(), "rrp-newmark", 1e-3,
                     record_every=5, record_frames=True, record_state=True)
    with RunWriter(tmp_path / "a.h5", sim, scenario=str(tmp_path / "a.toml"),
                   checkpoint=False) as w:
        assert sim.advance(10).ok
        w.flush()
    (tmp_path / "spheres.csv").unlink()
    shift = 1 if min(groups) < 1 else 0
    for fmt, name in (("xyz", "a.xyz"), ("lammps-dump", "a.dump")):
        code = main(["convert", str(tmp_path / "a.h5"), "--to", fmt, "--out",
                     str(tmp_path / name)])
        assert code == 0, capsys.readouterr().err
    for fr in parse_xyz(tmp_path / "a.xyz"):
        assert fr["group"] == list(groups)
    for fr in parse_dump(tmp_path / "a.dump"):
        assert fr["mol"].tolist() == fr["type"].tolist() == [g + shift for g in groups]
    code = main(["convert", str(tmp_path / "a.h5"), "--to", "vtk", "--out",
                 str(tmp_path / "vtk")])
    assert code == 0, capsys.readouterr().err
    pv = pytest.importorskip("pyvista")
    first = sorted((tmp_path / "vtk").glob("*.vtp"))[0]
    assert pv.read(first).point_data["group"].tolist() == list(groups)
