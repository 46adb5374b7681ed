"""Digests that cannot be switched off (issue #46 item 3), and a resume that cannot write
a ``complete`` file failing its checks (issue #47 item 2; docs/output.md, "Integrity"
and "Guarantees"): a digest attribute renamed or lost, one byte of what says which
datasets the row digests cover, row digests that read as zeros, a frame's quaternions
read as zeros, a chunk index entry redirected onto a copy of its bytes inside another
object, and the check a writer makes before it marks its file ``complete``.  Real files
of the pendulum (:func:`test_run_damage.pend`), damaged on disk."""

from __future__ import annotations

import json
import struct
import types

import h5py
import numpy as np
import pytest
from test_run_damage import chunk_key, copy, poke, write_pend
from test_run_integrity import one_line, rrp, without_checks

from engine.io import OutputWriteError, RunFile, RunFileError, RunWriter, read_run
from engine.io.digests import SERIES_CHECKS, header_digest
from engine.io.verify import verify_run
from engine.scenarios import load_scenario
from engine.simulation import Simulation, SimulationError


@pytest.fixture(scope="module")
def pend(tmp_path_factory):
    """The pendulum of tests/test_run_damage.py (21 frames in chunks of 4, an event)."""
    return write_pend(tmp_path_factory.mktemp("pend") / "p.h5")


def rename_in_bytes(path, name: bytes, new: bytes) -> None:
    """One byte of an attribute's name changed in the file's bytes (it then reads as
    another attribute; the one named ``name`` is gone)."""
    data = path.read_bytes()
    assert data.count(name) == 1 and len(new) == len(name)
    poke(path, data.find(name), new)


def change_in_bytes(path, old: bytes, new: bytes) -> None:
    data = path.read_bytes()
    assert data.count(old) == 1 and len(new) == len(old), data.count(old)
    poke(path, data.find(old), new)


def nothing_written(d, *names: str) -> None:
    assert sorted(p.name for p in d.iterdir()) == sorted(names)


def downgraded(path) -> None:
    """``path`` as a file of schema 2 written with the digests of issue #36: no record
    of its digests, a header digest without the ``columns`` of ``/checks``."""
    with h5py.File(path, "r+") as f:
        f.attrs["schema_version"] = 2
        if "digests" in f.attrs:  # (absent in a file of a version before issue #46)
            del f.attrs["digests"]
        f.attrs["header_digest"] = header_digest(f)


# ------------------------------------------------------------------ #46.3 (a): lost digests
def test_a_lost_header_digest_is_refused_not_skipped(pend, tmp_path):
    """``g`` 1.0 → 7.0 in the file's bytes (another trajectory) and one byte of the
    name ``header_digest`` changed: the digest that would have seen it is gone, and
    the file says it was written with one, so it is refused, by the API, ``rrp run
    --resume`` (nothing written) and ``rrp convert``, as when the digest is there."""
    bad = copy(pend, tmp_path)
    change_in_bytes(bad, b'"g": 1.0', b'"g": 7.0')
    rename_in_bytes(bad, b"header_digest", b"header_digesT")
    with h5py.File(bad, "r") as f:
        assert "header_digest" not in f.attrs and json.loads(f.attrs["parameters"])["g"] == 7
    what = "its header digest (header_digest) is missing, and the file was written with one"
    with pytest.raises(RunFileError, match=r"its header digest \(header_digest\) is missing"):
        RunFile(bad)
    with pytest.raises(RunFileError, match="header digest"):
        read_run(bad)
    assert what in verify_run(bad).what()
    res = rrp(tmp_path, "run", "--resume", "run.h5", "--out", "r.h5", "--t-end", "0.2")
    line = one_line(res)
    assert res.returncode == 2 and what in line, line
    nothing_written(tmp_path, "run.h5")
    pytest.importorskip("pyvista")
    res = rrp(tmp_path, "convert", "run.h5", "--to", "vtk", "out")
    assert res.returncode == 2 and what in one_line(res)
    nothing_written(tmp_path, "run.h5")


@pytest.mark.parametrize("lost", ["status_digest", "digests", "events", "checkpoint"])
def test_every_digest_the_file_was_written_with_is_required(pend, tmp_path, lost):
    """The other digests, each removed: the status's and the record of the digests
    (refused when opened), ``/events``' (refused), the newest checkpoint's (damaged,
    not used unverified: the previous one is, with a note naming it)."""
    bad = copy(pend, tmp_path)
    with h5py.File(bad, "r+") as f:
        if lost == "events":
            del f["events"].attrs["digest"]
        elif lost == "checkpoint":
            newest = max(("checkpoint", "checkpoint_alt"),
                         key=lambda g: int(f[g].attrs["serial"]))
            del f[newest].attrs["digest"]
        else:
            del f.attrs[lost]
    if lost == "checkpoint":
        with RunFile(bad) as rf:
            notes = rf.check_resumable()
        assert len(notes) == 1 and f"/{newest}, is damaged (its digest is missing" in \
            notes[0], notes
        assert "unverified" not in notes[0]
        return
    with pytest.raises(RunFileError, match="digest") as exc:
        RunFile(bad).close()
    assert "\n" not in str(exc.value)
    assert not verify_run(bad).ok


def test_t_end_is_under_the_status_digest(pend, tmp_path):
    """Where ``rrp run --resume FILE`` goes without ``--t-end``: covered now; a file of
    issue #36 keeps its status digest without it and still opens."""
    bad = copy(pend, tmp_path)
    with h5py.File(bad, "r+") as f:
        f.attrs["t_end"] = 99.0
    with pytest.raises(RunFileError, match="status attributes do not match their digest"):
        RunFile(bad)
    from engine.io.digests import STATUS_DIGEST, status_digest

    old = copy(pend, tmp_path, "old.h5")
    with h5py.File(old, "r+") as f:
        f.attrs.modify(STATUS_DIGEST, status_digest(f, legacy=True))
    with RunFile(old) as rf:
        assert rf.status == "complete"


# ------------------------------------------------------------------ #46.3 (b): what is covered
def _series_read_as_zeros(path) -> None:
    at, _ = chunk_key(path, "time", 0)
    poke(path, at + 9, bytes([0x10]))  # its only chunk, moved to row 4096: the fill value


def _columns_byte(path, checks: str, name: str) -> None:
    """One byte of ``name`` in the ``columns`` attribute of ``checks``, in the file."""
    with h5py.File(path, "r") as f:
        cols = f[checks].attrs["columns"]
    cols = cols.encode() if isinstance(cols, str) else bytes(cols)
    at = cols.index(f'"{name}"'.encode()) + len(name)  # (its last letter)
    change_in_bytes(path, cols, cols[:at] + cols[at:at + 1].upper() + cols[at + 1:])


@pytest.mark.parametrize("schema", [3, 2])
def test_a_byte_of_the_checks_columns_does_not_switch_off_a_series_digest(pend, tmp_path,
                                                                         schema):
    """One byte of ``/checks/series``' ``columns`` (``"time"`` → ``"timE"``: /time no
    longer named, so unchecked) and /time then read as zeros (a damaged chunk index):
    refused by the deep check, the API and ``rrp run --resume``, as the same damage with
    ``columns`` intact is; also in a file of schema 2 (issue #36), whose ``columns``
    must name the row datasets of its ``layout``."""
    bad = copy(pend, tmp_path)
    if schema == 2:
        downgraded(bad)
    _columns_byte(bad, SERIES_CHECKS, "time")
    _series_read_as_zeros(bad)
    with h5py.File(bad, "r") as f:
        assert "time" not in json.loads(f[SERIES_CHECKS].attrs["columns"])
        assert not f["time"][()].any()
    report = verify_run(bad, deep=True)
    assert not report.ok and not report.resumable
    assert ("/checks/series does not name the datasets it checks" if schema == 2 else
            "does not match its digest") in report.what()
    with pytest.raises(RunFileError):
        RunFile(bad)
    res = rrp(tmp_path, "run", "--resume", "run.h5", "--out", "r.h5", "--t-end", "0.2")
    assert res.returncode == 2, res.stderr
    one_line(res)
    nothing_written(tmp_path, "run.h5")


def test_a_byte_of_the_checks_columns_does_not_let_a_frame_of_zeros_through(pend, tmp_path):
    """The same with a frame: ``"bodies/quaternion"`` in ``/checks/frames``' ``columns``
    changed by one byte, and the quaternions of frames 16–19 read as zeros: the frames
    are not read, branched from or resumed on."""
    bad = copy(pend, tmp_path)
    _columns_byte(bad, "checks/frames", "bodies/quaternion")
    at, _ = chunk_key(bad, "bodies/quaternion", 16)
    poke(bad, at + 8, bytes([16 ^ 0x40]))  # the key's first offset: 16 → 80
    with h5py.File(bad, "r") as f:
        np.testing.assert_array_equal(f["bodies/quaternion"][16:20], 0.0)
    assert not verify_run(bad, deep=True).ok
    with pytest.raises(RunFileError):
        RunFile(bad)
    res = rrp(tmp_path, "run", "--resume", "run.h5", "--t-end", "0.2")
    assert res.returncode == 2, res.stderr
    one_line(res)
    nothing_written(tmp_path, "run.h5")


def test_row_digests_that_read_as_zeros_are_damage(pend, tmp_path):
    """``/checks/series`` itself read as the fill value (its chunk index damaged): its
    digests would all be 0, which once meant "not checked"; now a mismatch."""
    bad = copy(pend, tmp_path)
    at, _ = chunk_key(bad, SERIES_CHECKS, 0)
    poke(bad, at + 9, bytes([0x10]))  # its chunk, moved to row 4096
    with h5py.File(bad, "r") as f:
        assert not f[SERIES_CHECKS][()].any()
    report = verify_run(bad, deep=True)
    assert "reads other values than were written at record 0" in report.what(), \
        report.what()
    with pytest.raises(RunFileError, match="reads other values"):
        RunFile(bad)


def test_zero_quaternions_are_never_a_state(pend, tmp_path):
    """A file without any digest (written before them) whose quaternions of frames
    16–19 read as zeros: the frame is refused (``RunFile.frame``, ``can_branch``), the
    deep check names it, and ``Simulation.from_frame`` refuses such a frame whatever
    gives it, as a resume refuses such a checkpoint."""
    from engine.drivers import simulation_from_resume_state

    bad = tmp_path / "old.h5"
    without_checks(pend, bad)
    at, _ = chunk_key(bad, "bodies/quaternion", 16)
    poke(bad, at + 8, bytes([16 ^ 0x40]))
    report = verify_run(bad, deep=True)
    assert "/bodies/quaternion holds no attitude at frame 16" in report.what()
    with RunFile(bad) as rf:
        good = rf.frame(15)
        with pytest.raises(RunFileError, match="frame 17 cannot be read: body 0 has a "
                                               "quaternion of norm 0, not an attitude"):
            rf.frame(17)
        ok, why = rf.can_branch(17)
        assert not ok and "norm 0" in why
        model = rf.build_model()
        saved, _ = rf.resume_state()
    zero = types.SimpleNamespace(**{**good.__dict__, "q": np.zeros_like(good.q)})
    with pytest.raises(SimulationError, match="the frame is not a state: body 0 has a "
                                              "quaternion of norm 0"):
        Simulation.from_frame(model, zero, "rrp-exact", 1e-2)
    saved["s0_2"] = np.zeros_like(saved["s0_2"])
    with pytest.raises(SimulationError, match="the saved state is not one: body 0 has a "
                                              "quaternion of norm 0"):
        simulation_from_resume_state(model, saved)


# ------------------------------------------------------------------ #47.2: overlapping chunks
def _redirected(pend, d, name="run.h5"):
    """The pendulum with the chunk index entry of ``/momentum/linear`` (all zeros: the
    pivot holds the bob) redirected into the zero tail of ``/time``'s chunk (4096 rows,
    21 written): the same bytes, so it reads, passes its checksum and its digests, until
    the next rows of /time are written there."""
    bad = copy(pend, d, name)
    with h5py.File(bad, "r") as f:
        assert not f["momentum/linear"][()].any()
        t = f["time"].id.get_chunk_info_by_coord((0,)).byte_offset + 8 * len(f["time"])
    at, info = chunk_key(bad, "momentum/linear", 0)
    data = bad.read_bytes()
    assert data[t:t + info.size] == data[info.byte_offset:info.byte_offset + info.size]
    poke(bad, at + 8 + 3 * 8, struct.pack("<Q", t))
    with h5py.File(bad, "r") as f:
        assert not f["momentum/linear"][()].any()  # (it reads, and passes its checksum)
    return bad


def test_a_chunk_redirected_onto_a_copy_of_its_bytes_is_refused(pend, tmp_path):
    """Before, the deep check passed and ``rrp run --resume bad.h5 --out x.h5`` exited
    0 with ``x.h5`` marked complete whose own deep check found a checksum error (its
    appended times written over /momentum/linear); chunks that overlap another object
    are damage, found from the chunk index alone."""
    bad = _redirected(pend, tmp_path, "bad.h5")
    what = ("the chunk of /momentum/linear at record 0 overlaps the chunk of /time at "
            "record 0")
    report = verify_run(bad, deep=True)
    assert what in report.what() and not report.resumable
    assert what in verify_run(bad).what()  # (metadata only: the shallow check too)
    res = rrp(tmp_path, "run", "--resume", "bad.h5", "--out", "x.h5", "--t-end", "0.2")
    line = one_line(res)
    assert res.returncode == 2 and what in line, line
    nothing_written(tmp_path, "bad.h5")


def test_a_resume_verifies_its_file_before_marking_it_complete(pend, tmp_path):
    """A writer that continued a file (here a ``.partial`` resumed in place through the
    API, whose source is not checked first) reads it back whole before it marks it
    ``complete``: the overlap, and the checksum error its writes made, file it as
    ``failed`` with what is wrong, never ``complete``."""
    from engine.drivers import simulation_from_resume_state

    src = _redirected(pend, tmp_path, "p.h5.4242.partial")  # (its output: p.h5)
    with RunFile(src) as rf:
        d, n = rf.resume_state()
        model = rf.build_model()
    sim = simulation_from_resume_state(model, d)
    w = RunWriter.resume(tmp_path / "p.h5", sim, src, n)
    assert sim.advance(10).ok
    with pytest.raises(OutputWriteError, match="fails its checks once written") as exc:
        w.close()
    assert exc.value.damaged and "a checksum error in /time" in str(exc.value)
    with h5py.File(exc.value.path, "r") as f:
        assert f.attrs["status"] == "failed" and "not marked complete" in f.attrs["message"]


def test_a_new_file_is_checked_before_it_is_marked_complete(tmp_path):
    """A new run's file too (without reading its rows back: the header and status
    digests, the structure, the checkpoints, the overlaps): a constant changed on disk
    while the run was written is found at the close, and the file is ``failed``."""
    path = tmp_path / "n.h5"
    sim = Simulation(load_scenario("pendulum").build_model(), "rrp-exact", 1e-2)
    w = RunWriter(path, sim, scenario="pendulum")
    assert sim.advance(10).ok
    w.flush()
    info = w.f["bodies/mass"].id.get_chunk_info(0)
    with open(w.partial, "r+b") as fh:  # (the bytes of the mass, behind HDF5's back)
        fh.seek(info.byte_offset)
        fh.write(struct.pack("<d", 7.0))
    with pytest.raises(OutputWriteError, match="fails its checks once written"):
        w.close()
    with h5py.File(path, "r") as f:
        assert f.attrs["status"] == "failed"
    assert w.seconds["verify"] > 0
