"""Integrity of run files (issue #26 §6, docs/output.md "Integrity"): datasets carry
Fletcher-32 checksums and each checkpoint a SHA-256 digest; ``rrp run --resume``, ``rrp
convert`` and ``rrp gui FILE`` check a file before using it and refuse a damaged one in
one line (what is wrong, what can still be read) without writing anything.  Real files
(the pendulum, the torus), damaged on disk as a disk or a careless copy would: bytes
flipped inside a dataset's stored data, an attribute changed, a dataset removed or cut
short, the file truncated."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest
from helpers import rrp

from engine.io import RunFile, RunFileError, RunWriter, read_run
from engine.io.digests import stamp_status
from engine.io.hdf5 import frame_filters
from engine.io.verify import check_run, checkpoint_digest, verify_run
from engine.scenarios import load_scenario
from engine.simulation import Simulation

ROOT = Path(__file__).resolve().parent.parent
CHECKPOINTS = ("checkpoint", "checkpoint_alt")
NEW_ATTRS = ("layout", "header_digest", "status_digest", "digests")
"""Root attributes of the files written since issue #36 (item 2b, 8; ``digests``: issue
#46 item 3, schema 3)."""


def one_line(res: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in res.stderr + res.stdout, res.stderr
    lines = res.stderr.splitlines()
    assert len(lines) == 1, res.stderr
    return lines[0]


def flip(path: Path, name: str, row: int = 0) -> None:
    """Flip a byte in the middle of the stored data of dataset ``name`` (its chunk at
    ``row`` when chunked) in the file on disk."""
    with h5py.File(path, "r") as f:
        ds = f[name]
        if ds.chunks is None:
            offset, size = ds.id.get_offset(), ds.id.get_storage_size()
        else:
            info = ds.id.get_chunk_info_by_coord((row,) + (0,) * (ds.ndim - 1))
            offset, size = info.byte_offset, info.size
    assert offset is not None and size > 0
    with open(path, "r+b") as fh:
        fh.seek(offset + size // 2)
        b = fh.read(1)
        fh.seek(offset + size // 2)
        fh.write(bytes([b[0] ^ 0x5A]))


def newest_checkpoint(path: Path) -> str:
    with h5py.File(path, "r") as f:
        return max(CHECKPOINTS, key=lambda g: int(f[g].attrs["serial"]))


def without_checks(src: Path, dst: Path) -> None:
    """``src`` as a file written before checksums: the same layout, chunks and
    compression, no Fletcher-32, no checkpoint digest, no header digest and no row
    checks (plain h5py)."""
    with h5py.File(src, "r") as a, h5py.File(dst, "w") as b:
        def copy(name: str, obj) -> None:
            if name.split("/")[0] == "checks":
                return
            if isinstance(obj, h5py.Group):
                g = b.require_group(name)
                for k, v in obj.attrs.items():
                    if k != "digest":
                        g.attrs[k] = v
            else:
                kw = {"chunks": obj.chunks, "maxshape": obj.maxshape,
                      "compression": obj.compression} if obj.chunks else {}
                b.create_dataset(name, data=obj[()], **kw)
        b.attrs.update({k: v for k, v in a.attrs.items() if k not in NEW_ATTRS})
        if "schema_version" in b.attrs:  # (schema 3 is written with the digests)
            b.attrs["schema_version"] = 2
        a.visititems(copy)


def _pendulum_run(d: Path, t_end: str, name: str) -> Path:
    res = rrp(d, "run", "pendulum", "--t-end", t_end, "--out", name, "-q")
    assert res.returncode == 0, res.stderr
    return d / name


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> Path:
    """``rrp run pendulum --t-end 0.1 --out ok.h5`` (11 records and frames)."""
    return _pendulum_run(tmp_path_factory.mktemp("good"), "0.1", "ok.h5")


@pytest.fixture(scope="module")
def straight(tmp_path_factory) -> Path:
    """The same run straight to t = 0.2 (what a resume to 0.2 must give)."""
    return _pendulum_run(tmp_path_factory.mktemp("straight"), "0.2", "s.h5")


def same_run(a: Path, b: Path) -> None:
    ra, rb = read_run(a), read_run(b)
    np.testing.assert_array_equal(ra["time"], rb["time"])
    for k in ("position", "quaternion", "omega", "velocity", "step"):
        np.testing.assert_array_equal(ra["bodies"][k], rb["bodies"][k], err_msg=k)
    for k in ra["energy"]:
        np.testing.assert_array_equal(ra["energy"][k], rb["energy"][k], err_msg=k)


# ------------------------------------------------------------------ what is written
def test_every_dataset_carries_a_checksum_and_every_checkpoint_a_digest(good):
    with h5py.File(good, "r") as f:
        names = []
        f.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset)
                     and n.split("/")[0] not in CHECKPOINTS else None)
        assert {"time", "energy/total", "momentum/linear", "bodies/position",
                "bodies/mass"} <= set(names)
        for n in names:
            assert f[n].fletcher32, n
        # the frames' filters (issue #36 item 15: a chunk of several frames uncompressed,
        # one frame a chunk LZF) compose with Fletcher-32
        ds = f["bodies/position"]
        assert ds.compression == frame_filters(ds.chunks).get("compression")
        for g in CHECKPOINTS:
            assert str(f[g].attrs["digest"]).startswith("sha256:")
    report = verify_run(good, deep=True)
    assert report.ok and report.resumable and report.notes == []
    assert [c.state for c in report.checkpoints] == ["verified", "verified"]
    assert (report.series_rows, report.frames) == (11, 11)


def test_the_digest_covers_every_bit_of_data_and_attributes():
    arrays = {"s0_0": np.arange(6.0).reshape(2, 3)}
    attrs = {"t": 0.1, "n_records": 11, "integrator": "rrp-exact", "serial": 3}
    d = checkpoint_digest(arrays, attrs)
    assert d == checkpoint_digest({"s0_0": arrays["s0_0"].copy()},
                                  {**attrs, "t": np.float64(0.1), "n_records": np.int64(11),
                                   "serial": 4})  # as read back; serial left out
    x = arrays["s0_0"].copy()
    x.view(np.uint64)[1, 2] ^= 1  # one bit of one float
    assert checkpoint_digest({"s0_0": x}, attrs) != d
    assert checkpoint_digest(arrays, {**attrs, "t": np.nextafter(0.1, 1)}) != d
    assert checkpoint_digest(arrays, {**attrs, "integrator": "rrp-newmark"}) != d
    assert checkpoint_digest({"s0_1": arrays["s0_0"]}, attrs) != d  # names count
    assert checkpoint_digest({"s0_0": arrays["s0_0"].reshape(3, 2)}, attrs) != d


# ------------------------------------------------------------------ rrp run --resume
def _damage(path: Path, case: str) -> None:
    if case == "truncated":
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
        return
    if case == "checkpoint-bytes":  # both checkpoints: nothing intact is left
        for g in CHECKPOINTS:
            flip(path, f"{g}/s0_0")
        return
    with h5py.File(path, "r+") as f:
        if case == "no-energy-total":
            del f["energy/total"]
        elif case == "no-momentum-linear":
            del f["momentum/linear"]
        elif case == "frames-differ":
            f["bodies/quaternion"].resize(8, axis=0)
        elif case == "series-differ":
            f["energy/gravity"].resize(9, axis=0)
        elif case == "checkpoint-attribute":
            for g in CHECKPOINTS:
                f[g].attrs["t"] = 0.05
        elif case == "checkpoint-digest":
            for g in CHECKPOINTS:
                f[g].attrs["digest"] = "sha256:" + "0" * 64
        elif case == "checkpoint-newer":  # claims more rows than the file holds
            for ds in ("time", *(f"energy/{k}" for k in f["energy"]), "momentum/linear",
                       "momentum/angular"):
                f[ds].resize(5, axis=0)
            f.attrs["status"] = "failed"
            stamp_status(f)  # (a run that failed, as written)
    if case == "series-checksum":
        flip(path, "time")
    elif case == "frame-checksum":
        flip(path, "bodies/position", row=5)


DIGEST = "both its checkpoints are damaged: the digest does not match"
ALL = "t = 0.1 (11 records) and 11 frames can still be read"
DAMAGE = [
    ("no-energy-total", "/energy/total is missing", ALL),
    ("no-momentum-linear", "/momentum/linear is missing", ALL),
    ("frames-differ", "/bodies/quaternion holds 8 frames, /bodies/time 11", "and 8 frames"),
    ("series-differ", "/energy/gravity holds 9 records, /time 11", "t = 0.08 (9 records)"),
    ("checkpoint-bytes", DIGEST, ALL),
    ("checkpoint-attribute", DIGEST, ALL),
    ("checkpoint-digest", DIGEST, ALL),
    ("checkpoint-newer", "both its checkpoints are damaged: taken after 11 records, the file "
                         "holds 5", "t = 0.04 (5 records)"),
    # (the pendulum's 11 frames share one chunk of 64, issue #36 item 15: the damage is
    # named at its first frame; a later chunk's: test_a_frame_that_fails_its_checksum_…)
    ("frame-checksum", "a checksum error in /bodies/position at frame 0",
     "(none of its frames)"),
    ("series-checksum", "a checksum error in /time at record 0", "none of the series"),
    ("truncated", "the file is truncated", "nothing of it can be read"),
]


@pytest.mark.parametrize("case, what, readable", DAMAGE, ids=[c[0] for c in DAMAGE])
def test_a_damaged_file_is_refused_in_one_line_and_nothing_is_written(
        good, tmp_path, case, what, readable):
    bad = tmp_path / "run.h5"
    shutil.copy(good, bad)
    _damage(bad, case)
    before = bad.read_bytes()
    res = rrp(tmp_path, "run", "--resume", "run.h5", "--t-end", "0.2")
    line = one_line(res)
    assert res.returncode == 2, res.stderr
    assert line.startswith("rrp: error: cannot resume: run.h5: "), line
    assert what in line and readable in line, line
    if case not in ("truncated", "series-checksum"):  # (those: RunFile cannot open it)
        assert "can still be read" in line and "but it cannot be resumed: rerun it" in line, line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.h5"]  # no .partial
    assert bad.read_bytes() == before


def test_a_damaged_newest_checkpoint_falls_back_to_the_previous_one(good, straight,
                                                                    tmp_path):
    run = tmp_path / "run.h5"
    shutil.copy(good, run)
    newest = newest_checkpoint(run)
    older = next(g for g in CHECKPOINTS if g != newest)
    flip(run, f"{newest}/s0_1")
    res = rrp(tmp_path, "run", "--resume", "run.h5", "--t-end", "0.2")
    assert res.returncode == 0, res.stderr
    note = [ln for ln in res.stderr.splitlines() if ln.startswith("note:")]
    assert len(note) == 1 and f"/{newest}, is damaged" in note[0], res.stderr
    assert f"the previous one, /{older} at t = 0.1, is used" in note[0]
    same_run(run, straight)  # bit-identical to the unbroken run
    assert verify_run(run, deep=True).ok


def test_fallback_to_an_older_checkpoint_drops_the_rows_after_it(tmp_path):
    """In process: the older checkpoint is at t = 0 (the writer's first), the newer at
    the end; with the newer damaged the resume starts at t = 0 and gives the straight
    run again."""
    model = load_scenario("pendulum").build_model()
    path = tmp_path / "r.h5"
    sim = Simulation(model, "rrp-exact", 1e-2)
    with RunWriter(path, sim):
        assert sim.advance(10).ok
    flip(path, f"{newest_checkpoint(path)}/s0_0")
    with RunFile(path) as rf:
        assert "is damaged" in rf.check_resumable()[0]
        d, n_records = rf.resume_state()
        assert (d["t"], n_records) == (0.0, 1)
    resumed = Simulation.from_resume_state(model, d)
    w = RunWriter.resume(path, resumed, path, n_records)
    assert resumed.advance(20).ok
    w.close()
    straight = Simulation(model, "rrp-exact", 1e-2)
    assert straight.advance(20).ok
    s, run = straight.series.arrays(), read_run(path)
    np.testing.assert_array_equal(run["time"], s["t"])
    np.testing.assert_array_equal(run["bodies"]["position"], s["x"])
    assert verify_run(path, deep=True).ok


def test_a_good_file_resumes_and_an_old_one_without_checks_too(good, straight, tmp_path):
    shutil.copy(good, tmp_path / "run.h5")
    res = rrp(tmp_path, "run", "--resume", "run.h5", "--t-end", "0.2")
    assert res.returncode == 0, res.stderr
    assert "note:" not in res.stderr
    same_run(tmp_path / "run.h5", straight)

    old = tmp_path / "old.h5"
    without_checks(good, old)
    with h5py.File(old, "r") as f:
        assert not f["bodies/position"].fletcher32 and "digest" not in f["checkpoint"].attrs
        ds = f["bodies/position"]
        assert ds.compression == frame_filters(ds.chunks).get("compression")
    report = verify_run(old, deep=True)
    assert report.ok and report.checkpoint.state == "unverifiable"
    with RunFile(old) as rf:  # reads as before
        np.testing.assert_array_equal(rf.frame(-1).x, RunFile(good).frame(-1).x)
    res = rrp(tmp_path, "run", "--resume", "old.h5", "--t-end", "0.2")
    assert res.returncode == 0, res.stderr
    note = [ln for ln in res.stderr.splitlines() if ln.startswith("note:")]
    assert len(note) == 1 and "carries no digest" in note[0] and "unverified" in note[0]
    same_run(old, straight)
    with h5py.File(old, "r") as f:  # what the resume appended carries its checks
        assert "digest" in f[newest_checkpoint(old)].attrs


# ------------------------------------------------------------------ reading
def test_a_ragged_tail_of_a_cut_short_run_is_not_damage(good, tmp_path):
    """A run that failed or was killed may hold a row more in one dataset than in
    another; only a file closed as complete must agree exactly."""
    path = tmp_path / "r.h5"
    shutil.copy(good, path)
    with h5py.File(path, "r+") as f:
        f["time"].resize(12, axis=0)
        f["time"][11] = 0.11
        f["bodies/position"].resize(12, axis=0)
        f["checks/series"].resize(12, axis=0)
        f["checks/frames"].resize(12, axis=0)
        f.attrs["status"] = "failed"
        stamp_status(f)
    report = verify_run(path, deep=True)
    assert report.ok and report.resumable, report.problems
    assert (report.series_rows, report.frames) == (11, 11)
    with h5py.File(path, "r+") as f:
        f.attrs["status"] = "complete"
        stamp_status(f)
    report = verify_run(path)
    assert not report.ok and "holds 11 records, /time 12" in report.what()


def test_a_frame_that_fails_its_checksum_is_one_line_in_the_reader(tmp_path):
    """The torus (80 bodies, chunks of 64 frames, issue #36 item 15): the reader names
    the frame, the frames of the other chunks read."""
    model = load_scenario("torus").build_model()
    path = tmp_path / "t.h5"
    sim = Simulation(model, "rrp-newmark", 1e-3, record_every=1)
    with RunWriter(path, sim, scenario="torus"):
        assert sim.advance(150).ok
    with h5py.File(path, "r") as f:
        assert f["bodies/velocity"].chunks[0] == 64
    flip(path, "bodies/velocity", row=70)  # the chunk of frames 64–127
    with RunFile(path) as rf:
        assert rf.frame(63).v is not None and rf.frame(128).v is not None
        with pytest.raises(RunFileError, match="frame 70 cannot be read") as exc:
            rf.frame(70)
        assert "\n" not in str(exc.value)
        report = rf.verify(deep=True)
    assert [p.text for p in report.problems] == [
        "a checksum error in /bodies/velocity at frame 64"]
    assert report.frames == 64 and report.series_rows == 151 and not report.resumable
    with h5py.File(path, "r") as f:
        assert check_run(f, path).ok  # the structure alone is whole
    with pytest.raises(RunFileError, match="a checksum error in /bodies/velocity at frame 64"):
        read_run(path)


def test_a_series_checksum_error_is_one_line_when_opening(good, tmp_path):
    path = tmp_path / "r.h5"
    shutil.copy(good, path)
    flip(path, "momentum/angular")
    with pytest.raises(RunFileError) as exc:
        RunFile(path)
    msg = str(exc.value)
    assert "a checksum error in /momentum/angular" in msg and "\n" not in msg


# ------------------------------------------------------------------ rrp convert
CONVERT_REFUSED = [("frames-differ", "/bodies/quaternion holds 8 frames"),
                   ("frame-checksum", "a checksum error in /bodies/position at frame 0"),
                   ("truncated", "the file is truncated")]


@pytest.mark.parametrize("case, what", CONVERT_REFUSED, ids=[c[0] for c in CONVERT_REFUSED])
def test_convert_refuses_damaged_frames_in_one_line(good, tmp_path, case, what):
    pytest.importorskip("pyvista")
    bad = tmp_path / "run.h5"
    shutil.copy(good, bad)
    _damage(bad, case)
    res = rrp(tmp_path, "convert", "run.h5", "--to", "vtk", "out")
    line = one_line(res)
    assert res.returncode == 2 and line.startswith("rrp: error: cannot convert: run.h5: ")
    assert what in line, line
    assert not (tmp_path / "out").exists()


def test_convert_warns_of_damage_outside_the_frames_and_converts_them(good, tmp_path):
    pytest.importorskip("pyvista")
    bad = tmp_path / "run.h5"
    shutil.copy(good, bad)
    _damage(bad, "no-energy-total")
    res = rrp(tmp_path, "convert", "run.h5", "--to", "vtk", "out")
    assert res.returncode == 0, res.stderr
    line = one_line(res)
    assert line.startswith("rrp: warning: run.h5: /energy/total is missing"), line
    assert "frames are whole" in line
    assert len(list((tmp_path / "out").glob("*.vtp"))) == 11
    old = tmp_path / "old.h5"  # a file written before checksums converts as before
    without_checks(good, old)
    res = rrp(tmp_path, "convert", "old.h5", "--to", "vtk", "old", "-q")
    assert res.returncode == 0 and res.stderr == "", res.stderr
    assert len(list((tmp_path / "old").glob("*.vtp"))) == 11


@pytest.mark.parametrize("fmt", ["xyz", "lammps-dump", "lammps", "vtk"])
def test_every_format_converts_whole_frames_beside_a_damaged_series(tmp_path, fmt):
    """One rule for every format (docs/output.md, "Integrity"): a series chunk that fails
    its checksum is one warning and the whole frames are converted — ``--to xyz``,
    ``--to lammps-dump`` and ``--to lammps`` said "its frames are whole and are
    converted" and then refused (exit 2), ``--to vtk`` converted (issue #47 item 4)."""
    if fmt == "vtk":
        pytest.importorskip("pyvista")
    res = rrp(tmp_path, "run", "torus", "--set", "n_particles=12", "--t-end", "0.05",
              "--every", "10", "--out", "run.h5", "-q")
    assert res.returncode == 0, res.stderr
    flip(tmp_path / "run.h5", "time")
    res = rrp(tmp_path, "convert", "run.h5", "--to", fmt, "--out", "out")
    assert res.returncode == 0, res.stderr
    (line,) = res.stderr.splitlines()
    assert line.startswith("rrp: warning: run.h5: a checksum error in /time") and \
        "its frames are whole and are converted" in line, line
    out = tmp_path / "out"
    if fmt == "xyz":
        assert out.read_text().count("Properties=") == 6
    elif fmt == "lammps-dump":
        assert out.read_text().count("ITEM: TIMESTEP") == 6
    elif fmt == "vtk":
        assert len(list(out.glob("*.vtp"))) == 6
    else:  # (a data file of the 12 spheres and its deck)
        assert "12 atoms" in (out / "run.data").read_text() and (out / "in.run").exists()


def test_export_of_a_damaged_frame_or_a_gone_csv_is_one_line(good, tmp_path):
    """``rrp export`` of a run file whose frames fail their checksum is one line, exit 2,
    nothing written — as ``rrp convert`` refuses it ("internal error: RunFileError", exit
    1, before: issue #42 item 4); an assembly run whose CSV has moved exports."""
    pytest.importorskip("pyvista")
    shutil.copy(good, tmp_path / "run.h5")
    flip(tmp_path / "run.h5", "bodies/position", row=5)
    res = rrp(tmp_path, "export", "run.h5", "--size", "64x48", "--out", "x.gif")
    line = one_line(res)
    assert res.returncode == 2 and line.startswith("rrp: error: cannot export: run.h5: a "
                                                   "checksum error in /bodies/position"), line
    assert "nothing was exported" in line and not (tmp_path / "x.gif").exists()
    (tmp_path / "s.csv").write_text("x,y,z,diameter,density\n0,0,1,1,1\n1,0,1,1,1\n")
    (tmp_path / "b.csv").write_text("i,j,type\n0,1,1\n")
    (tmp_path / "a.toml").write_text('model = "assembly"\nbodies = "s.csv"\n'
                                     'bonds = "b.csv"\n[run]\nt_end = 0.01\n')
    assert rrp(tmp_path, "run", "a.toml", "--out", "a.h5", "-q").returncode == 0
    (tmp_path / "s.csv").rename(tmp_path / "moved.csv")
    # (since issue #43 item 4 the run file carries its model: the export needs no CSV;
    # a file written before, with its CSV gone, is one line naming it:
    # tests/test_run_carries_model.py)
    res = rrp(tmp_path, "export", "a.h5", "--size", "64x48", "--out", "a.gif", "-q")
    assert res.returncode == 0 and (tmp_path / "a.gif").exists(), res.stderr


@pytest.mark.parametrize("name", ["time", "energy/total"])
def test_export_of_a_damaged_series_is_refused_where_it_is_plotted(good, tmp_path, name):
    """The export's plots read the series a block at a time (issue #42 item 10), no
    longer whole when the file is opened: a series that fails its checksum still stops
    ``--layout view+plots`` (exit 2, the damage named, nothing written), once the plots
    read it; ``--layout view``, which draws no series, exports the whole frames (as
    ``rrp convert`` does, issue #47 item 4; it was refused)."""
    pytest.importorskip("pyvista")
    from helpers import require_offscreen_render

    shutil.copy(good, tmp_path / "run.h5")
    flip(tmp_path / "run.h5", name)
    res = rrp(tmp_path, "export", "run.h5", "--size", "64x48", "--out", "x.gif")
    line = one_line(res)  # (one line: not a note that the frames are exported, then this)
    assert res.returncode == 2 and line.startswith(f"rrp: error: cannot export: run.h5: a "
                                                   f"checksum error in /{name}"), line
    assert "--layout view" in line and not (tmp_path / "x.gif").exists()
    require_offscreen_render()
    res = rrp(tmp_path, "export", "run.h5", "--size", "64x48", "--out", "v.gif", "-q",
              "--layout", "view")
    assert res.returncode == 0 and (tmp_path / "v.gif").exists(), res.stderr


# ------------------------------------------------------------------ rrp gui FILE
def _no_display() -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    return env


@pytest.mark.parametrize("case, what", [("truncated", "the file is truncated"),
                                        ("no-frames", "/bodies/position is missing")])
def test_gui_refuses_a_file_it_cannot_show_in_one_line(good, tmp_path, case, what):
    pytest.importorskip("PyQt6")
    bad = tmp_path / "run.h5"
    shutil.copy(good, bad)
    if case == "no-frames":
        with h5py.File(bad, "r+") as f:
            del f["bodies/position"]
    else:
        _damage(bad, case)
    res = rrp(tmp_path, "gui", "run.h5", env=_no_display())
    line = one_line(res)
    assert res.returncode == 2 and line.startswith("rrp: error: cannot open the run: run.h5")
    assert what in line, line


def test_gui_names_the_damage_of_a_file_it_can_still_show(good, tmp_path):
    """Checked before the window opens (here: no display, so it stops right after)."""
    pytest.importorskip("PyQt6")
    bad = tmp_path / "run.h5"
    shutil.copy(good, bad)
    _damage(bad, "no-momentum-linear")
    res = rrp(tmp_path, "gui", "run.h5", env=_no_display())
    lines = res.stderr.splitlines()
    assert "Traceback" not in res.stderr
    assert lines[0].startswith("rrp: warning: run.h5: /momentum/linear is missing; "), lines
    assert "11 frames can still be read" in lines[0]


# ------------------------------------------------------------------ springs (friction)
def _sliding_sphere():
    """A sphere sliding on the floor with friction: a committed spring at every frame
    (the ``/springs`` lists and the checkpoint's chunked ``springs_*`` arrays)."""
    from engine.forcefield import ForceField
    from engine.layout import P_K_WALL, T_WALL
    from engine.models.base import Model
    from engine.state import Bodies, State

    bodies = Bodies(np.array([1.0]), np.array([1e-3]), np.array([0.2]))
    ff = ForceField(bodies.m, bodies.J, bodies.D)
    ff.flags[T_WALL] = 1
    ff.fp[P_K_WALL] = 2100.0
    ff.set_walls([((0.0, 0.0, 1.0), 0.0)])
    ff.set_gravity(1.0, (0.0, 0.0, -1.0))
    ff.set_friction(0.5, 4000.0, 0.0)
    z = 0.1 * (1.0 - (0.1 / 2100.0) ** (2.0 / 3.0))  # resting on the wall's Hertz force
    state = State(np.array([[0.0, 0.0, z]]), np.array([[0.3, 0.0, 0.0]]),
                  np.array([[1.0, 0.0, 0.0, 0.0]]), np.zeros((1, 3)))
    return Model(name="one-sphere", title="a sphere on the floor", params={},
                 bodies=bodies, forcefield=ff, initial_state=state,
                 energy_components=("translational", "rotational", "gravity", "wall",
                                    "dissipated"),
                 conserved=(), walls=[((0.0, 0.0, 1.0), 0.0)], contact="penalty")


def test_the_springs_are_checked_too(tmp_path):
    path = tmp_path / "s.h5"
    sim = Simulation(_sliding_sphere(), "rrp-newmark", 1e-3, record_every=10)
    with RunWriter(path, sim) as w:
        assert sim.advance(30).ok
        w.flush()
        assert sim.advance(20).ok
    with h5py.File(path, "r") as f:
        n = f["springs/sphere"].shape[0]
        assert n >= 5 and f["springs/xi"].fletcher32
        assert all(f[g]["springs_xi"].shape[0] == 1 and f[g]["springs_xi"].chunks
                   for g in CHECKPOINTS)
    assert verify_run(path, deep=True).resumable
    cut = tmp_path / "cut.h5"
    shutil.copy(path, cut)
    with h5py.File(cut, "r+") as f:
        f["springs/xi"].resize(n - 1, axis=0)
    assert verify_run(cut).what() == f"/springs/xi holds {n - 1} springs, the frames {n}"
    flipped = tmp_path / "flipped.h5"  # the checkpoint's chunked arrays: Fletcher-32
    shutil.copy(path, flipped)
    for g in CHECKPOINTS:
        flip(flipped, f"{g}/springs_xi")
    report = verify_run(flipped)
    assert report.what() == ("both its checkpoints are damaged: a checksum error in "
                             "springs_xi")
    with RunFile(flipped) as rf, pytest.raises(RunFileError, match="no intact checkpoint"):
        rf.resume_state()


# ------------------------------------------------------------------ the window
@pytest.mark.gui
def test_the_window_names_the_damage_and_a_bad_frame_in_one_line(request, tmp_path):
    pytest.importorskip("pytestqt")
    pytest.importorskip("pyvistaqt")
    if not os.environ.get("DISPLAY") and sys.platform.startswith("linux"):
        pytest.skip("the 3D view needs an X display (CI runs these under Xvfb)")
    make_window = request.getfixturevalue("make_window")
    bad = tmp_path / "run.h5"  # (the torus: 151 frames, chunks of 64, issue #36 item 15)
    sim = Simulation(load_scenario("torus").build_model(), "rrp-newmark", 1e-3,
                     record_every=1)
    with RunWriter(bad, sim, scenario="torus"):
        assert sim.advance(150).ok
    _damage(bad, "no-momentum-linear")
    flip(bad, "bodies/position", row=70)  # the chunk of frames 64–127
    w = make_window(None, run=bad, size=(1000, 700))  # (closed after the test)
    assert w.recording is not None  # what can be read is shown
    text = w.banner.text()
    assert w.banner.isVisible() and "\n" not in text
    assert text.startswith("damaged run file: ") and "/momentum/linear is missing" in text
    w.timeline.slider.setValue(63)
    assert w.replay_index == 63
    w.timeline.slider.setValue(64)  # fails its checksum: a banner, the view stays
    assert w.replay_index == 63 and "frame 64 cannot be read" in w.banner.text()
    assert "\n" not in w.banner.text()


def test_a_checkpoint_past_the_rows_of_a_cut_short_file_falls_back(tmp_path):
    """A failed run whose frames stop short of the newest checkpoint (but not of the
    previous one): the resume takes the previous one, in the check and in the reader."""
    model = load_scenario("pendulum").build_model()
    path = tmp_path / "r.h5"
    sim = Simulation(model, "rrp-exact", 1e-2)
    w = RunWriter(path, sim)
    assert sim.advance(4).ok
    w.flush()
    assert sim.advance(4).ok
    w.close("failed", "a write error")
    with h5py.File(path, "r+") as f:
        f["bodies/omega"].resize(7, axis=0)  # the newest (9 rows) is past it, 5 is not
        newest = max(CHECKPOINTS, key=lambda g: int(f[g].attrs["serial"]))
        assert f[newest].attrs["n_records"] == 9
    with RunFile(path) as rf:
        notes = rf.check_resumable()
        assert len(notes) == 1 and "taken after 9 records, the file holds 7" in notes[0]
        d, n_records = rf.resume_state()
    assert n_records == 5 and d["t"] == pytest.approx(0.04)
