"""ParaView / VTK output (engine/io/vtk.py, ``rrp convert``): a real torus run file is
exported, every ``.vtp`` is read back with PyVista (real VTK, no mocks) and compared
with the HDF5 datasets, the ``.pvd`` collection is parsed, and the CLI is run as a
subprocess."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import h5py
import numpy as np
import pytest
from helpers import assert_no_traceback, assert_one_line_error, rrp

from engine.io import RunWriter
from engine.io.vtk import VTKExportError, VTKExportWarning, export_vtk
from engine.rotations import quat_to_matrix
from engine.scenarios import load_scenario
from engine.simulation import Simulation

pv = pytest.importorskip("pyvista")


ROOT = Path(__file__).resolve().parent.parent

STEPS, EVERY = 50, 10
FRAMES = STEPS // EVERY + 1


def _torus_run(path: Path) -> tuple[Simulation, np.ndarray]:
    """50 steps of the torus, recorded every 10 with frames, and the velocities at the
    recorded frames (the sim does not record them)."""
    model = load_scenario("torus").build_model()
    sim = Simulation(model, "rrp-newmark", 1e-3, record_every=EVERY)
    velocities = [sim.state.v.copy()]
    with RunWriter(path, sim, scenario="torus"):
        for _ in range(STEPS // EVERY):
            assert sim.advance(EVERY).ok
            velocities.append(sim.state.v.copy())
    return sim, np.array(velocities)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """``with_v``: the run file with ``/bodies/velocity``; ``without_v``: the same
    without it and without ``/model/bonds`` (as written before they were recorded)."""
    d = tmp_path_factory.mktemp("vtk")
    with_v, without_v = d / "torus.h5", d / "old.h5"
    sim, v = _torus_run(with_v)
    with h5py.File(with_v, "a") as f:
        b = f["bodies"]
        if "velocity" in b:  # once RunWriter records it: it must be what the sim had
            np.testing.assert_allclose(b["velocity"][()], v, rtol=0, atol=1e-12)
        else:
            b["velocity"] = v
    shutil.copy(with_v, without_v)
    with h5py.File(without_v, "a") as f:  # as written before these were recorded
        del f["bodies/velocity"]
        if "model" in f:
            del f["model"]  # the bonds then come from the rebuilt model
        for k in ("layout", "header_digest", "status_digest", "digests"):  # (#36, #46)
            if k in f.attrs:
                del f.attrs[k]
        f.attrs["schema_version"] = 2
    return {"with_v": with_v, "without_v": without_v, "sim": sim, "dir": d}


def _read(path: Path) -> dict:
    with h5py.File(path, "r") as f:
        out = {k: f["bodies"][k][()] for k in f["bodies"]}
        out["energy"] = {k: f["energy"][k][()] for k in f["energy"]}
    return out


def _pvd(path: Path) -> list[tuple[float, str]]:
    root = ET.parse(path).getroot()
    assert root.tag == "VTKFile" and root.get("type") == "Collection"
    return [(float(ds.get("timestep")), ds.get("file"))
            for ds in root.find("Collection").iter("DataSet")]


def test_every_frame_round_trips_through_vtk(runs, tmp_path):
    out = tmp_path / "vtk"
    written = export_vtk(runs["with_v"], out)
    h5 = _read(runs["with_v"])
    n = h5["position"].shape[1]
    bonds = runs["sim"].model.forcefield.bonds
    assert len(bonds) == n == 80

    vtps = sorted(out.glob("*.vtp"))
    assert len(vtps) == FRAMES == len(h5["time"])
    assert written == [*vtps, out / "torus.pvd"]
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in written)

    for k, path in enumerate(vtps):
        mesh = pv.read(path)
        assert mesh.n_points == n
        assert mesh.points.dtype == np.float64
        np.testing.assert_allclose(mesh.points, h5["position"][k], rtol=0, atol=1e-12)
        pd = mesh.point_data
        assert set(pd.keys()) == {"diameter", "velocity", "spin", "axis_1", "axis_2",
                                  "axis_3", "kinetic_energy", "body_id", "group"}
        np.testing.assert_array_equal(pd["diameter"], h5["diameter"])
        np.testing.assert_array_equal(pd["group"], np.zeros(n))  # (one ring)
        np.testing.assert_array_equal(pd["spin"], h5["omega"][k])
        np.testing.assert_array_equal(pd["velocity"], h5["velocity"][k])
        np.testing.assert_array_equal(pd["body_id"], np.arange(n))
        r = quat_to_matrix(h5["quaternion"][k])
        for j in range(3):
            np.testing.assert_allclose(pd[f"axis_{j + 1}"], r[:, :, j], rtol=0, atol=1e-15)
        # per body ½ m |v|² + ½ Ωᵀ R 𝕁 Rᵀ Ω (spheres: 𝕁 = J I), and the sum is the
        # file's translational + rotational energy of that record
        v, om = h5["velocity"][k], h5["omega"][k]
        ke = 0.5 * h5["mass"] * (v * v).sum(1) + 0.5 * np.einsum(
            "ni,nij,nj->n", om, r @ h5["inertia_tensor"] @ r.transpose(0, 2, 1), om)
        np.testing.assert_allclose(pd["kinetic_energy"], ke, rtol=1e-13, atol=1e-15)
        e = h5["energy"]
        assert pd["kinetic_energy"].sum() == pytest.approx(
            e["translational"][k] + e["rotational"][k], rel=1e-12)
        # bonds as lines (and one vertex per body)
        assert mesh.n_lines == len(bonds) and mesh.n_verts == n
        lines = mesh.lines.reshape(-1, 3)
        assert (lines[:, 0] == 2).all()
        np.testing.assert_array_equal(lines[:, 1:], bonds)
        assert mesh.field_data["TimeValue"][0] == h5["time"][k]

    entries = _pvd(out / "torus.pvd")
    assert [f for _, f in entries] == [p.name for p in vtps]
    np.testing.assert_array_equal([t for t, _ in entries], h5["time"])
    np.testing.assert_allclose(h5["time"], np.arange(FRAMES) * EVERY * 1e-3, atol=1e-14)


def test_every_n_th_frame(runs, tmp_path):
    written = export_vtk(runs["with_v"], tmp_path / "v", every=2)
    h5 = _read(runs["with_v"])
    assert [p.name for p in written] == ["torus_0000.vtp", "torus_0002.vtp",
                                         "torus_0004.vtp", "torus.pvd"]
    entries = _pvd(written[-1])
    np.testing.assert_array_equal([t for t, _ in entries], h5["time"][::2])
    np.testing.assert_array_equal(pv.read(written[1]).points, h5["position"][2])
    with pytest.raises(VTKExportError, match="positive integer"):
        export_vtk(runs["with_v"], tmp_path / "w", every=0)


def test_a_file_without_velocities_leaves_out_velocity_and_energy(runs, tmp_path):
    with pytest.warns(VTKExportWarning) as rec:
        written = export_vtk(runs["without_v"], tmp_path / "old")
    assert len(rec) == 1 and "velocity" in str(rec[0].message)
    assert "\n" not in str(rec[0].message)
    assert len(written) == FRAMES + 1
    h5 = _read(runs["without_v"])
    mesh = pv.read(written[-2])
    assert "velocity" not in mesh.point_data and "kinetic_energy" not in mesh.point_data
    np.testing.assert_array_equal(mesh.point_data["spin"], h5["omega"][-1])
    with h5py.File(runs["without_v"], "r") as f:
        assert "model" not in f  # so these are the bonds of the rebuilt torus
    np.testing.assert_array_equal(mesh.lines.reshape(-1, 3)[:, 1:],
                                  runs["sim"].model.forcefield.bonds)


def test_bonds_from_the_file_win(runs, tmp_path):
    path = tmp_path / "bonded.h5"
    shutil.copy(runs["with_v"], path)
    mine = np.array([[0, 5], [7, 3], [79, 40]])
    with h5py.File(path, "a") as f:
        g = f.require_group("model")
        if "bonds" in g:
            del g["bonds"]
        g["bonds"] = mine
    mesh = pv.read(export_vtk(path, tmp_path / "b")[0])
    assert mesh.n_lines == 3
    np.testing.assert_array_equal(mesh.lines.reshape(-1, 3)[:, 1:], mine)


def test_a_file_without_frames_is_refused(tmp_path):
    model = load_scenario("pendulum").build_model()
    sim = Simulation(model, "rrp-exact", 1e-2, record_frames=False)
    with RunWriter(tmp_path / "nf.h5", sim, frames=False):
        assert sim.advance(5).ok
    with pytest.raises(VTKExportError, match="no frames") as exc:
        export_vtk(tmp_path / "nf.h5", tmp_path / "out")
    assert "\n" not in str(exc.value)
    assert not (tmp_path / "out").exists()  # bad input creates nothing
    with pytest.raises(VTKExportError, match="no such run file"):
        export_vtk(tmp_path / "missing.h5", tmp_path / "out")
    (tmp_path / "junk.h5").write_text("not hdf5")
    with pytest.raises(VTKExportError, match="cannot read"):
        export_vtk(tmp_path / "junk.h5", tmp_path / "out")
    with pytest.raises(VTKExportError, match="parent directory"):
        export_vtk(tmp_path / "nf.h5", tmp_path / "no" / "out")


def test_a_failed_export_leaves_no_file(runs, tmp_path, monkeypatch):
    """The disk "fills up" at the third frame (VTK writes each frame to memory, Python
    writes the file: issue #46 item 2): one line naming the target, nothing left."""
    import engine.io.vtk as vtk_mod
    from engine.io.atomic import OutputError

    out = tmp_path / "fail"
    out.mkdir()
    (out / "keep.txt").write_text("x")
    real, calls = vtk_mod._vtp_bytes, []

    def failing(poly, compress):
        calls.append(1)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        return real(poly, compress)

    monkeypatch.setattr(vtk_mod, "_vtp_bytes", failing)
    with pytest.raises(OutputError, match="No space.*nothing was written"):
        export_vtk(runs["with_v"], out)
    assert [p.name for p in out.iterdir()] == ["keep.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fail"]  # (no temporary left)
    calls.clear()
    with pytest.raises(OSError, match="No space"):
        export_vtk(runs["with_v"], tmp_path / "new")
    assert not (tmp_path / "new").exists()  # a directory it created goes too
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fail"]


# ------------------------------------------------------------------ a file being written
def test_a_partial_file_still_being_written_converts(tmp_path):
    """The CLI (another process) reads the .partial file while this process writes it."""
    model = load_scenario("pendulum").build_model()
    sim = Simulation(model, "rrp-exact", 1e-2, record_every=2)
    with RunWriter(tmp_path / "p.h5", sim) as w:
        assert sim.advance(6).ok
        w.flush()
        res = rrp(tmp_path, "convert", w.partial.name, "--to", "vtk", "out")
        assert res.returncode == 0, res.stderr
    assert_no_traceback(res)
    entries = _pvd(tmp_path / "out" / "p.pvd")
    assert [t for t, _ in entries] == pytest.approx([0.0, 0.02, 0.04, 0.06], abs=1e-14)
    assert entries[0][1] == "p_0000.vtp"
    assert pv.read(tmp_path / "out" / "p_0000.vtp").n_lines == 0  # the pendulum: no bonds


# ------------------------------------------------------------------ rrp convert
def test_cli_convert(runs, tmp_path):
    shutil.copy(runs["with_v"], tmp_path / "run.h5")
    res = rrp(tmp_path, "convert", "run.h5", "--to", "vtk", "frames", "--every", "5")
    assert res.returncode == 0, res.stderr
    assert_no_traceback(res)
    assert res.stderr == ""
    lines = res.stdout.splitlines()
    assert len(lines) == 1 and "2 frames" in lines[0] and "run.pvd" in lines[0]
    assert sorted(p.name for p in (tmp_path / "frames").iterdir()) == [
        "run.pvd", "run_0000.vtp", "run_0005.vtp"]

    # an old file: one warning line, still a success
    shutil.copy(runs["without_v"], tmp_path / "old.h5")
    res = rrp(tmp_path, "convert", "old.h5", "--to", "vtk", "frames")
    assert res.returncode == 0 and len(res.stderr.splitlines()) == 1
    assert res.stderr.startswith("rrp: warning:") and "velocity" in res.stderr


def test_cli_convert_errors(runs, tmp_path):
    shutil.copy(runs["with_v"], tmp_path / "run.h5")
    line = assert_one_line_error(rrp(tmp_path, "convert", "run.h5", "--to", "vtk",
                                     "no/such/dir"))
    assert "parent directory" in line
    res = rrp(tmp_path, "convert", "run.h5", "--to", "csv", "out")
    assert res.returncode == 2 and "vtk" in assert_one_line_error(res)
    res = rrp(tmp_path, "convert", "missing.h5", "--to", "vtk", "out")
    assert res.returncode == 2 and "no such run file" in assert_one_line_error(res)
    assert not (tmp_path / "out").exists()


def test_cli_convert_without_pyvista_names_the_gui_extra(tmp_path):
    """PyVista (the gui extra) hidden from the interpreter: one line naming the extra."""
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(
        "import importlib.abc, sys\n"
        "class _Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.', 1)[0] in ('pyvista', 'vtk', 'vtkmodules'):\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, _Block())\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "site"), str(ROOT)])
    res = subprocess.run([sys.executable, "-m", "app", "convert", "run.h5", "--to", "vtk",
                          "out"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 2
    assert "rrp-studio[gui]" in assert_one_line_error(res)


def test_rrp_run_vtk_writes_the_series_without_keeping_a_run_file(tmp_path):
    res = rrp(tmp_path, "run", "torus", "--t-end", "0.05", "--every", "10", "--vtk", "pv",
              "-q")
    assert res.returncode == 0, res.stderr
    files = sorted((tmp_path / "pv").iterdir())
    vtp = [f for f in files if f.suffix == ".vtp"]
    assert len(vtp) == 6 and any(f.suffix == ".pvd" for f in files)  # t = 0, 0.01 … 0.05
    assert not list(tmp_path.glob("*.h5*"))  # the temporary run file is gone
    mesh = pv.read(vtp[-1])
    assert mesh.n_points == 80 and "axis_1" in mesh.point_data
    res = rrp(tmp_path, "run", "torus", "--t-end", "0.05", "--vtk", "pv2", "--no-frames")
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "--no-frames" in res.stderr
