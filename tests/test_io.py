"""HDF5 run files (engine/io.py): a RunWriter + read_run round trip that carries the
mid-run changes of step and scheme as /events, and writers that end in an exception
still leave a readable file with its status."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

from engine import __version__
from engine.drivers import simulation_for, simulation_from_frame
from engine.io import RunWriter, read_run
from engine.layout import ENERGY_NAMES
from engine.scenarios import load_scenario
from engine.simulation import Simulation


@pytest.fixture(scope="module")
def pendulum():
    return load_scenario("pendulum").build_model()


def _str(v) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def test_round_trip_with_events(tmp_path, pendulum):
    path = tmp_path / "pend.h5"
    sim = Simulation(pendulum, "rrp-exact", 1e-2, record_every=2)
    with RunWriter(path, sim, scenario="my-pendulum") as w:
        partial = w.partial
        assert partial.name == f"pend.h5.{os.getpid()}.partial"
        assert partial.exists() and not path.exists()  # written aside until closed
        assert sim.advance(10).ok
        w.flush()
        sim.set_h(5e-3)
        assert sim.advance(10).ok
        sim.set_integrator("rrp-newmark")
        assert sim.advance(8).ok
    assert path.exists() and not partial.exists()
    assert sim.step_index == 28

    run = read_run(path)
    s = sim.series.arrays()
    # /time: every 2 steps, 0.02 apart before the change of h and 0.01 after it
    np.testing.assert_array_equal(run["time"], s["t"])
    assert len(run["time"]) == 1 + 28 // 2
    dt = np.diff(run["time"])
    np.testing.assert_allclose(dt[:5], 0.02, atol=1e-14)
    np.testing.assert_allclose(dt[5:], 0.01, atol=1e-14)
    assert run["time"][-1] == pytest.approx(0.1 + 18 * 5e-3, abs=1e-14)

    comps = ["rotational", "gravity"]
    assert set(run["energy"]) == {*comps, "total", "relative_error"}
    for c in comps:
        np.testing.assert_array_equal(run["energy"][c], s["energy"][:, ENERGY_NAMES.index(c)])
    total = run["energy"]["rotational"] + run["energy"]["gravity"]
    np.testing.assert_allclose(run["energy"]["total"], total, rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(run["energy"]["relative_error"],
                               (total - sim.e_ref) / sim.e_scale, atol=1e-15)
    assert np.abs(run["energy"]["relative_error"]).max() < 1e-3
    np.testing.assert_array_equal(run["momentum"]["linear"], s["P"])
    np.testing.assert_array_equal(run["momentum"]["angular"], s["L"])
    b = run["bodies"]
    np.testing.assert_array_equal(b["position"], s["x"])
    np.testing.assert_array_equal(b["quaternion"], s["q"])
    np.testing.assert_array_equal(b["omega"], s["omega"])
    np.testing.assert_array_equal(b["time"], s["t"])
    assert b["quaternion"].shape == (len(s["t"]), 1, 4)
    np.testing.assert_array_equal(b["mass"], pendulum.bodies.m)
    np.testing.assert_array_equal(b["inertia"], pendulum.bodies.J)
    # the last record is the final state
    np.testing.assert_array_equal(b["quaternion"][-1], sim.state.q)
    np.testing.assert_array_equal(b["omega"][-1], sim.state.omega)

    ev = run["events"]
    assert len(ev) == 2 == len(sim.events)
    assert [int(e) for e in ev["step"]] == [10, 20]
    np.testing.assert_allclose(ev["t"], [0.1, 0.15], atol=1e-14)
    assert [_str(k) for k in ev["kind"]] == ["h", "integrator"]
    assert [_str(k) for k in ev["old"]] == ["0.01", "rrp-exact"]
    assert [_str(k) for k in ev["new"]] == ["0.005", "rrp-newmark"]
    for row, e in zip(ev, sim.events, strict=True):
        assert int(row["step"]) == e.step and float(row["t"]) == e.t

    a = run["attrs"]
    assert a["scenario"] == "my-pendulum" and a["model"] == "pendulum"
    assert a["version"] == __version__
    assert a["status"] == "complete" and a["message"] == ""
    assert int(a["steps"]) == 28 and float(a["t_final"]) == pytest.approx(sim.t)
    assert run["parameters"] == json.loads(json.dumps(pendulum.params))


def test_events_written_after_the_last_flush_reach_the_file(tmp_path, pendulum):
    sim = Simulation(pendulum, "rrp-newmark", 1e-2, record_every=1)
    with RunWriter(tmp_path / "e.h5", sim):
        sim.advance(3)
        sim.set_integrator("campello")
    run = read_run(tmp_path / "e.h5")
    assert [_str(k) for k in run["events"]["kind"]] == ["integrator"]
    assert int(run["events"]["step"][0]) == 3
    assert len(run["time"]) == 4


def test_no_events_no_events_dataset(tmp_path, pendulum):
    sim = Simulation(pendulum, "rrp-exact", 1e-2)
    with RunWriter(tmp_path / "n.h5", sim):
        sim.advance(2)
    assert "events" not in read_run(tmp_path / "n.h5")


@pytest.mark.parametrize("exc, status", [(RuntimeError("boom"), "failed"),
                                         (KeyboardInterrupt(), "interrupted")])
def test_writer_interrupted_by_an_exception_leaves_a_readable_file(tmp_path, pendulum,
                                                                   exc, status):
    path = tmp_path / "x.h5"
    sim = Simulation(pendulum, "rrp-exact", 1e-2, record_every=1)
    with pytest.raises(type(exc)), RunWriter(path, sim):
        sim.advance(5)
        raise exc
    assert path.exists() and not list(tmp_path.glob("x.h5*.partial"))
    run = read_run(path)
    assert run["attrs"]["status"] == status
    if status == "failed":
        assert "RuntimeError" in run["attrs"]["message"] and "boom" in run["attrs"]["message"]
    # everything up to the interruption, even though it was never flushed explicitly
    assert len(run["time"]) == 6 and run["time"][-1] == pytest.approx(0.05)
    assert run["bodies"]["position"].shape == (6, 1, 3)
    assert np.isfinite(run["energy"]["total"]).all()


def test_an_existing_file_is_replaced_only_on_close(tmp_path, pendulum):
    path = tmp_path / "r.h5"
    old = Simulation(pendulum, "rrp-exact", 1e-2)
    with RunWriter(path, old):
        old.advance(3)
    before = path.read_bytes()
    sim = Simulation(pendulum, "rrp-exact", 1e-2)
    w = RunWriter(path, sim)
    sim.advance(7)
    w.flush()
    assert path.read_bytes() == before  # the old file is intact while the new one is written
    w.close()
    assert len(read_run(path)["time"]) == 8


def test_frames_can_be_left_out(tmp_path, pendulum):
    sim = Simulation(pendulum, "rrp-exact", 1e-2, record_frames=False)
    with RunWriter(tmp_path / "nf.h5", sim):
        sim.advance(4)
    with h5py.File(tmp_path / "nf.h5", "r") as f:
        assert "position" not in f["bodies"] and "quaternion" not in f["bodies"]
        assert "mass" in f["bodies"]
        assert len(f["time"]) == 5 and len(f["energy/total"]) == 5


def test_writer_into_a_missing_directory_creates_nothing(tmp_path, pendulum):
    sim = Simulation(pendulum, "rrp-exact", 1e-2)
    with pytest.raises(OSError, match="does not exist"):
        RunWriter(tmp_path / "missing" / "x.h5", sim)
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ schema 2, RunFile
def test_frames_hold_the_full_state_and_a_run_starts_from_any(tmp_path):
    from engine.io import SCHEMA_VERSION, RunFile

    model = load_scenario("torus").build_model()
    sim = Simulation(model, "lgvi", 1e-3, record_every=5)
    with RunWriter(tmp_path / "t.h5", sim, scenario="torus"):
        assert sim.advance(60).ok
    with RunFile(tmp_path / "t.h5") as rf:
        assert rf.schema_version == SCHEMA_VERSION == 3
        assert rf.status == "complete" and rf.model_name == "torus"
        assert rf.integrator == "lgvi" and rf.h == 1e-3 and rf.n_frames == 13
        assert rf.components[0] == "translational" and "total" in rf.energy
        assert rf.P.shape == (13, 3) and len(rf.frame_times) == 13
        np.testing.assert_array_equal(rf.bonds, model.forcefield.bonds)
        fr = rf.frame(-1)
        assert fr.step == 60 and fr.t == pytest.approx(0.06)
        for got, want in ((fr.x, sim.state.x), (fr.v, sim.state.v), (fr.q, sim.state.q),
                          (fr.omega, sim.state.omega), (fr.pi, sim.aux["pi"])):
            np.testing.assert_array_equal(got, want)
        assert rf.can_branch(6) == (True, "")
        mid = rf.frame(6)
        assert mid.step == 30
        built = rf.build_model()
    # branching from frame 6 with the same scheme retraces the run bit for bit
    again = Simulation(model, "lgvi", 1e-3, record_every=5)
    again.advance(30)
    branch = Simulation.from_frame(built, mid, "lgvi", 1e-3, record_every=5)
    assert branch.t == mid.t and branch.step_index == 30
    branch.advance(30)
    np.testing.assert_array_equal(branch.state.x, sim.state.x)
    np.testing.assert_array_equal(branch.state.v, sim.state.v)
    # and any other scheme and step can take over
    other = Simulation.from_frame(built, mid, "rrp-newmark", 5e-4)
    assert other.advance(20).ok and other.t == pytest.approx(mid.t + 0.01)


def test_generalized_model_frames_hold_the_node(tmp_path):
    from engine.io import RunFile

    model = load_scenario("spring-pendulum").build_model()
    sim = simulation_for(model, "moreau-symmetric", 1e-3, record_every=4)
    with RunWriter(tmp_path / "s.h5", sim):
        sim.advance(40)
    with RunFile(tmp_path / "s.h5") as rf:
        fr = rf.frame(-1)
        q, v = sim.node
        np.testing.assert_array_equal(fr.gq, q)
        np.testing.assert_array_equal(fr.gv, v)
        assert fr.pi is None and rf.can_branch(-1)[0]
        mid = rf.frame(5)
    again = simulation_for(model, "moreau-symmetric", 1e-3)
    again.advance(20)
    b = simulation_from_frame(model, mid, "moreau-symmetric", 1e-3)
    b.advance(20)
    np.testing.assert_allclose(b.node[0], sim.node[0], rtol=0, atol=1e-12)


def _as_schema_1(path):
    """What the first version wrote: no velocities, Π, steps, checkpoint or version."""
    with h5py.File(path, "r+") as f:
        for k in ("bodies/velocity", "bodies/momentum_body", "bodies/step",
                  "bodies/dissipated", "checkpoint", "checkpoint_alt", "model", "checks"):
            if k in f:
                del f[k]
        for k in ("schema_version", "writer_pid", "writer_host", "coordinates", "layout",
                  "header_digest", "status_digest", "digests"):
            if k in f.attrs:
                del f.attrs[k]


def test_schema_1_files_replay_but_say_why_they_cannot_branch(tmp_path, pendulum):
    from engine.io import RunFile, RunFileError

    sim = Simulation(pendulum, "rrp-exact", 1e-2, record_every=2)
    with RunWriter(tmp_path / "old.h5", sim):
        sim.advance(10)
    _as_schema_1(tmp_path / "old.h5")
    with RunFile(tmp_path / "old.h5") as rf:
        assert rf.schema_version == 1 and rf.n_frames == 6
        fr = rf.frame(3)
        assert fr.v is None and fr.pi is None and fr.step is None
        np.testing.assert_array_equal(fr.q, read_run(tmp_path / "old.h5")["bodies"]
                                      ["quaternion"][3])
        ok, why = rf.can_branch(3)
        assert not ok and "no velocities" in why and "schema 1" in why
        with pytest.raises(RunFileError, match="no checkpoint"):
            rf.resume_state()
        assert rf.build_model().name == "pendulum"


def test_run_file_errors_are_one_line(tmp_path):
    from engine.io import RunFile, RunFileError

    (tmp_path / "x.h5").write_text("hello")
    with h5py.File(tmp_path / "other.h5", "w") as f:
        f["data"] = np.zeros(3)
    for name, match in (("x.h5", "not an HDF5 file"), ("other.h5", "not an RRP Studio run"),
                        ("none.h5", "no such file")):
        with pytest.raises(RunFileError, match=match) as err:
            RunFile(tmp_path / name)
        assert "\n" not in str(err.value)


def test_frames_left_out_cannot_branch(tmp_path, pendulum):
    from engine.io import RunFile

    sim = Simulation(pendulum, "rrp-exact", 1e-2, record_frames=False)
    with RunWriter(tmp_path / "nf.h5", sim):
        sim.advance(4)
    with RunFile(tmp_path / "nf.h5") as rf:
        assert rf.n_frames == 0 and not rf.can_branch(0)[0]
        assert rf.has_checkpoint  # the run itself can still be resumed


# ------------------------------------------------------------------ at scale (issue #9)
FRAME_COLUMNS = ("position", "quaternion", "omega", "velocity", "momentum_body")


def _torus_run(tmp_path, name, every=5, steps=40, **kw):
    model = load_scenario("torus").build_model()
    sim = Simulation(model, "rrp-newmark", 1e-3, record_every=every)
    w = RunWriter(tmp_path / name, sim, **kw)
    for _ in range(steps // every):
        sim.advance(every)
        w.flush()
    w.close()
    return sim, w


def test_frames_are_chunked_by_whole_frames(tmp_path):
    """Issue #36 item 15: a small model's frames are chunks of several frames,
    uncompressed (rewritten in place as they fill); a large model's frame is a chunk of
    its own, LZF-compressed, split into blocks of bodies."""
    from engine.io.hdf5 import FRAME_BLOCK_BODIES, FRAME_CHUNK_FRAMES, frame_chunks

    _torus_run(tmp_path, "t.h5")
    with h5py.File(tmp_path / "t.h5", "r") as f:
        for c in FRAME_COLUMNS:
            ds = f["bodies"][c]
            n, w = ds.shape[1:]
            assert ds.chunks == frame_chunks(n, w) == (FRAME_CHUNK_FRAMES, 80, w), c
            assert ds.compression is None and ds.fletcher32, c
            assert ds.shape[0] == 9 and np.all(np.isfinite(ds[()])), c
    # the same number of frames a chunk for every width; one frame from 4 097 bodies
    assert frame_chunks(4096, 3)[0] == frame_chunks(4096, 4)[0] == 2
    assert frame_chunks(4097, 4) == (1, 4097, 4)
    assert frame_chunks(10**6, 4) == (1, FRAME_BLOCK_BODIES, 4)
    assert frame_chunks(50_000, 3) == (1, 50_000, 3)
    assert frame_chunks(1, 3) == (FRAME_CHUNK_FRAMES, 1, 3)


def test_a_chunk_of_frames_is_rewritten_where_it_is(tmp_path):
    """Issue #36 item 15: the chunk that takes the frames of one flush after another
    keeps its place and length in the file (never moved: the frames written before
    stay where the chunk index on disk points), and a large model's frames are
    compressed, one frame a chunk."""
    from engine.io.hdf5 import frame_chunks, frame_filters

    sc = load_scenario("torus")
    sim = Simulation(sc.build_model(), sc.run.integrator, sc.run.h, record_every=1)
    w = RunWriter(tmp_path / "t.h5", sim)
    places = set()
    for _ in range(5):
        sim.advance(3)
        w.flush()
        info = w.f["bodies/position"].id.get_chunk_info(0)
        places.add((info.byte_offset, info.size))
    w.close()
    assert len(places) == 1, places
    with h5py.File(tmp_path / "t.h5", "r") as f:
        assert f["bodies/position"].shape[0] == 16
        assert f["bodies/position"].id.get_num_chunks() == 1
    assert frame_filters(frame_chunks(10**5, 4)) == {}
    assert frame_filters(frame_chunks(10**5, 4), compress=True) == {"compression": "lzf"}
    assert frame_filters(frame_chunks(80, 4), compress=True) == {}


def test_frames_and_springs_are_compressed_only_when_asked(tmp_path, monkeypatch):
    """Issue #36 item 15: LZF cost a 10⁴-sphere pile's writer 5× its uncompressed time
    (the run 2.1× its time without ``--out``): a large model's frames (here the torus
    made one frame a chunk) and the friction springs are stored uncompressed unless
    ``compress`` (``rrp run --compress``); the values read back are the same."""
    from test_run_integrity import _sliding_sphere

    from engine.io import file_layout

    monkeypatch.setattr(file_layout, "FRAME_CHUNK_BYTES", 1)
    _torus_run(tmp_path, "plain.h5")
    _torus_run(tmp_path, "lzf.h5", compress=True)
    with h5py.File(tmp_path / "plain.h5", "r") as a, h5py.File(tmp_path / "lzf.h5", "r") as b:
        for c in FRAME_COLUMNS:
            assert a["bodies"][c].chunks[0] == 1
            assert a["bodies"][c].compression is None and a["bodies"][c].fletcher32, c
            assert b["bodies"][c].compression == "lzf" and b["bodies"][c].fletcher32, c
            np.testing.assert_array_equal(a["bodies"][c][()], b["bodies"][c][()])
    for compress in (False, True):
        sim = Simulation(_sliding_sphere(), "rrp-newmark", 1e-3, record_every=10)
        with RunWriter(tmp_path / f"s{compress}.h5", sim, compress=compress):
            assert sim.advance(50).ok
        with h5py.File(tmp_path / f"s{compress}.h5", "r") as f:
            assert f["springs/xi"].shape[0] > 0
            for c in ("sphere", "partner", "xi"):
                assert f["springs"][c].compression == ("lzf" if compress else None), c


def test_cli_compress_is_taken_by_a_run_and_refused_by_a_resume(tmp_path):
    """``rrp run --compress`` (issue #36 item 15) is a new file's choice: a resume keeps
    the file's filters and refuses the flag in one line, exit 2."""
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root)}

    def rrp(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "app", "run", *args], cwd=tmp_path,
                              capture_output=True, text=True, timeout=600, env=env)

    res = rrp("pendulum", "--t-end", "0.1", "--out", "p.h5", "--compress", "--quiet")
    assert res.returncode == 0, res.stderr
    res = rrp("--resume", "p.h5", "--t-end", "0.2", "--compress")
    assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
    assert "--compress cannot be given with it" in res.stderr


def test_cli_every_writes_a_frame_every_so_many_steps(tmp_path):
    from engine.io import RunFile

    root = Path(__file__).resolve().parent.parent
    res = subprocess.run([sys.executable, "-m", "app", "run", "pendulum", "--h", "0.01",
                          "--t-end", "1", "--every", "7", "--out", "e.h5", "--quiet"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "PYTHONPATH": str(root)})
    assert res.returncode == 0, res.stderr
    with RunFile(tmp_path / "e.h5") as rf:  # 100 steps: frames at steps 0, 7, …, 98
        assert rf.record_every == 7 and rf.n_frames == 100 // 7 + 1
        steps = rf._f["bodies/step"][()]
        np.testing.assert_array_equal(steps, np.arange(0, 100, 7))
        np.testing.assert_allclose(rf.frame_times, 0.01 * steps, rtol=0, atol=1e-12)
        assert len(rf.times) == rf.n_frames and rf.status == "complete"


def test_frames_released_from_memory_are_the_same_in_the_file(tmp_path):
    kept, _ = _torus_run(tmp_path, "keep.h5")
    sim, w = _torus_run(tmp_path, "drop.h5", keep_frames=False)
    a, b = read_run(tmp_path / "keep.h5"), read_run(tmp_path / "drop.h5")
    for c in (*FRAME_COLUMNS, "time", "step"):
        np.testing.assert_array_equal(a["bodies"][c], b["bodies"][c])
    np.testing.assert_array_equal(a["energy"]["total"], b["energy"]["total"])
    # the simulation keeps its series, without the frames
    s = sim.series.arrays()
    assert len(s["t"]) == 9 and len(s["x"]) == 0 and "v" not in s
    assert len(kept.series.arrays()["x"]) == 9


def test_expensive_checkpoints_are_written_within_the_budget(tmp_path, monkeypatch):
    from engine.io import RunFile
    from engine.io import writer_close as h5mod  # (where the checkpoint is decided)

    monkeypatch.setattr(h5mod, "CHECKPOINT_CHEAP", 0.0)  # every checkpoint counts as costly
    model = load_scenario("torus").build_model()
    sim = Simulation(model, "rrp-newmark", 1e-3, record_every=5)
    w = RunWriter(tmp_path / "c.h5", sim, checkpoint_budget=1e-9)
    for _ in range(6):
        sim.advance(5)
        w.flush()
    assert w.checkpoints_written == 1  # the first one only: the rest would pass the budget
    shutil.copyfile(w.partial, tmp_path / "killed.h5.partial")  # as a killed run leaves it
    with RunFile(tmp_path / "killed.h5.partial") as rf:  # resumes from the first checkpoint
        d, n_records = rf.resume_state()
        assert n_records == 1 and len(rf.times) == 7 and d["step_index"] == 0
    w.close()
    assert w.checkpoints_written == 2  # close always writes one
    with RunFile(tmp_path / "c.h5") as rf:
        d, n_records = rf.resume_state()
        assert n_records == 7 and d["step_index"] == 30
    with pytest.raises(ValueError, match="checkpoint_budget"):
        RunWriter(tmp_path / "x.h5", sim, checkpoint_budget=0)


def test_files_with_the_previous_frame_layout_read_and_resume(tmp_path):
    """Files written before frames were compressed (uncompressed chunks of up to 64
    frames) read, branch and resume, the resumed run appending to those datasets."""
    from engine.io import RunFile

    _torus_run(tmp_path, "old.h5")
    with h5py.File(tmp_path / "old.h5", "r+") as f:
        gb = f["bodies"]
        for c in FRAME_COLUMNS:
            data = gb[c][()]
            del gb[c]
            n, w = data.shape[1:]
            gb.create_dataset(c, data=data, maxshape=(None, n, w), chunks=(64, n, w))
        assert gb["position"].compression is None
    with RunFile(tmp_path / "old.h5") as rf:
        assert rf.n_frames == 9 and rf.can_branch(4)[0]
        d, n_records = rf.resume_state()
        model = rf.build_model()
    sim = Simulation.from_resume_state(model, d)
    w = RunWriter.resume(tmp_path / "old.h5", sim, tmp_path / "old.h5", n_records)
    sim.advance(10)
    w.close()
    with RunFile(tmp_path / "old.h5") as rf:
        assert rf.n_frames == 11 and rf.status == "complete"
        np.testing.assert_array_equal(rf._f["bodies/step"][()], np.arange(0, 55, 5))


def test_a_writer_thread_writes_the_same_file_and_raises_its_errors(tmp_path, monkeypatch):
    """``background=True`` (``rrp run --out``): the rows are taken at each flush and a
    thread writes them while the run steps on; the file is the one written in line,
    checkpoint included, and an error of the thread (a full disk) is raised by the next
    flush, not lost: the writer has failed (every flush says so), and closing it marks
    the file ``failed``, cut back to its last complete write (tests/test_run_faults.py
    for the command line)."""
    from engine.io import OutputWriteError, RunFile

    _torus_run(tmp_path, "line.h5", keep_frames=False)
    sim, w = _torus_run(tmp_path, "thread.h5", keep_frames=False, background=True)
    assert w._pending is None  # close waited for the last write
    a, b = read_run(tmp_path / "line.h5"), read_run(tmp_path / "thread.h5")
    for c in (*FRAME_COLUMNS, "time", "step"):
        np.testing.assert_array_equal(a["bodies"][c], b["bodies"][c])
    for c in a["energy"]:
        np.testing.assert_array_equal(a["energy"][c], b["energy"][c])
    with RunFile(tmp_path / "line.h5") as fa, RunFile(tmp_path / "thread.h5") as fb:
        (da, na), (db, nb) = fa.resume_state(), fb.resume_state()
        assert na == nb == 9 and da["step_index"] == db["step_index"] == 40
        np.testing.assert_array_equal(da["s0_0"], db["s0_0"])

    model = load_scenario("torus").build_model()
    sim = Simulation(model, "rrp-newmark", 1e-3, record_every=5)
    w = RunWriter(tmp_path / "full.h5", sim, background=True)
    w.wait()  # (the first write, in the thread, is done: it is not the one that fails)

    def full(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(w, "_write_rows", full)
    sim.advance(5)
    w.flush()  # the thread fails ...
    sim.advance(5)
    with pytest.raises(OSError, match="No space left"):
        w.flush()  # ... and the next flush says so
    with pytest.raises(OSError, match="No space left"):
        w.flush()  # ... and every one after it: the run must stop
    monkeypatch.undo()
    with pytest.raises(OutputWriteError, match="No space left") as err:
        w.close()  # closed, cut back to its last complete write, marked failed
    assert err.value.path == tmp_path / "full.h5" and err.value.safe_t == 0.0
    with RunFile(tmp_path / "full.h5") as rf:
        assert rf.status == "failed" and "No space left" in rf.message
        np.testing.assert_array_equal(rf.times, [0.0])
        assert rf.n_frames == 1 and rf.resume_state()[1] == 1


# ------------------------------------------------------------ issue #33 item 6
def _es_file(path, model, integrator="energy-stepping:1e-3", steps=(40, 40)):
    sim = Simulation(model, integrator, 0.01)
    w = RunWriter(path, sim)
    for n in steps:
        sim.advance(n)
        w.flush()
    w.close()
    return sim


def test_energy_stepping_terrace_gap_is_written_read_and_checked(tmp_path, pendulum):
    """``/energy/terrace_gap``: the series' ``V − V_ε`` of each record, bit for bit, with
    the checksums of the other series; not a component of the energy; absent from the
    file of a stepping scheme (and from old files, which read as before)."""
    from engine.io import RunFile
    from engine.io.verify import verify_run

    path = tmp_path / "es.h5"
    sim = _es_file(path, pendulum)
    gap = sim.series.arrays()["terrace_gap"]
    with h5py.File(path, "r") as f:
        ds = f["energy/terrace_gap"]
        assert ds.fletcher32 and ds.shape == f["time"].shape == (81,)
        assert np.array_equal(ds[()], gap) and np.all(np.isfinite(gap))
    with RunFile(path) as rf:
        assert "terrace_gap" not in rf.components and rf.components == ["rotational",
                                                                         "gravity"]
        assert np.array_equal(rf.energy["terrace_gap"], gap)
    assert verify_run(path, deep=True).ok
    plain = tmp_path / "plain.h5"
    _es_file(plain, pendulum, "rrp-exact")
    with h5py.File(plain, "r") as f:
        assert "terrace_gap" not in f["energy"]


def test_energy_terrace_gap_damage_is_found_like_any_series(tmp_path, pendulum):
    """The integrity checks cover it as the other /energy series (docs/output.md
    "Integrity"): a row missing in a complete file, a chunk whose bytes changed."""
    from engine.io.verify import verify_run

    short, flipped = tmp_path / "short.h5", tmp_path / "flipped.h5"
    _es_file(short, pendulum)
    shutil.copy(short, flipped)
    with h5py.File(short, "r+") as f:
        f["energy/terrace_gap"].resize(80, axis=0)
    rep = verify_run(short)
    assert not rep.ok and any("/energy/terrace_gap" in p.text for p in rep.problems)
    with h5py.File(flipped, "r") as f:
        info = f["energy/terrace_gap"].id.get_chunk_info(0)
    with open(flipped, "r+b") as fh:
        fh.seek(info.byte_offset + 8)
        b = fh.read(1)
        fh.seek(info.byte_offset + 8)
        fh.write(bytes([b[0] ^ 0xFF]))
    rep = verify_run(flipped, deep=True)
    assert not rep.ok
    assert any("checksum error in /energy/terrace_gap" in p.text for p in rep.problems)
