"""A SIGKILL at every write of a run file (issue #47 items 1 and 8; docs/output.md,
"Guarantees"): killed at any ``pwrite``/``write``/``fsync`` of the ``.partial`` (or of
its journal) by the writer's thread or by the close on the main thread, a run leaves
either the complete target or a ``.partial`` that opens, passes its checks and that
``rrp run --resume`` finishes bit for bit the straight run.

The kill points are reached by the ``LD_PRELOAD`` shim of tests/kill_points.py: a
counting run says how many calls each thread makes (and is the straight run the others
are compared with); the default run kills at a few points, those just before HDF5
rewrites its superblock (where, before the journal, metadata already pointed past the
file's end: "addr overflow"), the full sweep is slow (tests/slow_cases.py: ~270 runs
killed and resumed)."""

from __future__ import annotations

import shutil
import signal
import struct
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from helpers import child_env
from kill_points import THREADS, build_shim, cc, read_log, shim_env

from engine.io import RunFile, RunFileError, read_run
from engine.io.journal import journal_name
from engine.io.verify import verify_run

RUN = ("pendulum", "--t-end", "1")
"""101 records, every one a frame: the frames' 64-frame chunks are rewritten in place,
and a second chunk is started."""

pytestmark = pytest.mark.skipif(cc() is None or not sys.platform.startswith("linux"),
                                reason="needs a C compiler and Linux (LD_PRELOAD)")


def _app(cwd: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app", *args], cwd=cwd,
                          env=env or child_env(), capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="session")
def shim(tmp_path_factory) -> Path:
    return build_shim(tmp_path_factory.mktemp("shim"))


@pytest.fixture(scope="module")
def counted(shim, tmp_path_factory) -> tuple[Path, dict[str, list[int]], dict]:
    """The straight run (counted): its file, the kill points of each thread (the main
    thread's: those of the close, after the writer thread's last call; the writer's:
    all), and the calls of each thread."""
    d = tmp_path_factory.mktemp("counted")
    log = d / "calls.log"
    res = _app(d, "run", *RUN, "--out", "c.h5", "-q", env=shim_env(child_env(), shim, log=log))
    assert res.returncode == 0, res.stderr
    calls = read_log(log)
    lines = log.read_text().splitlines()
    last_writer = max(i for i, ln in enumerate(lines) if ln.startswith("writer"))
    before = sum(1 for ln in lines[:last_writer] if ln.startswith("main"))
    points = {"main": list(range(before + 1, len(calls["main"]) + 1)),
              "writer": list(range(1, len(calls["writer"]) + 1))}
    assert len(points["main"]) >= 10 and len(points["writer"]) >= 10, points
    return d / "c.h5", points, calls


def _check_good(path: Path) -> str:
    with RunFile(path) as rf:
        report = rf.verify(deep=True)
        assert not report.problems, (path, report.line())
        return rf.status


def _same(a: Path, b: Path) -> None:
    x, y = read_run(a), read_run(b)
    np.testing.assert_array_equal(x["time"], y["time"])
    for k in ("position", "quaternion", "velocity", "omega", "time"):
        np.testing.assert_array_equal(x["bodies"][k], y["bodies"][k], err_msg=k)


def kill_at(shim: Path, straight: Path, where: Path, thread: str, n: int) -> str:
    """Run killed at ``thread``'s ``n``-th call in ``where``; assert the guarantee;
    what it left: ``target`` or ``resumed``."""
    where.mkdir(parents=True)
    res = _app(where, "run", *RUN, "--out", "c.h5", "-q",
               env=shim_env(child_env(), shim, thread=thread, at=n))
    assert res.returncode in (0, -signal.SIGKILL), (thread, n, res.stderr)
    left = sorted(where.glob("c.h5*.partial"))
    if (where / "c.h5").exists() and not left:
        outcome = "target"
    else:
        assert len(left) == 1, (thread, n, sorted(p.name for p in where.iterdir()))
        _check_good(left[0])  # (it opens, and passes its checks)
        res = _app(where, "run", "--resume", left[0].name, "-q")
        assert res.returncode == 0, (thread, n, res.stderr)
        assert not sorted(where.glob("c.h5*.partial")), (thread, n)
        outcome = "resumed"
    assert _check_good(where / "c.h5") == "complete", (thread, n)
    assert not journal_name(where / "c.h5").exists()
    _same(where / "c.h5", straight)
    return outcome


def _before_superblock(calls: list, points: list[int]) -> list[int]:
    """The points just before the thread rewrites the superblock (offset 0)."""
    return [n - 1 for n in points if n > 1 and n - 1 in points
            and calls[n - 1][0] == "pwrite" and calls[n - 1][1] == 0]


def test_a_kill_just_before_each_superblock_write_leaves_a_run_that_finishes(
        shim, counted, tmp_path):
    """Killed just before the writer's thread or the close rewrites the superblock
    (the rest of the flush's metadata written, the superblock's end of allocation not
    yet: "addr overflow", issue #47 item 1), at a few such points of each thread: the
    target, or a ``.partial`` that opens, passes its checks and resumes bit for bit."""
    straight, points, calls = counted
    for thread in THREADS:
        chosen = _before_superblock(calls[thread], points[thread])
        assert chosen, thread
        pick = sorted({chosen[0], chosen[len(chosen) // 2], chosen[-1]})
        for n in pick:
            kill_at(shim, straight, tmp_path / f"{thread}{n}", thread, n)


def test_a_kill_at_every_write_of_the_close_and_the_writer_leaves_a_run_that_finishes(
        shim, counted, tmp_path):
    """Every ``pwrite``/``write``/``fsync`` of the writer's thread and of the close
    (issue #47 item 1's acceptance): each leaves the complete target or a ``.partial``
    that resumes bit for bit."""
    straight, points, _ = counted
    todo = [(t, n) for t in THREADS for n in points[t]]
    with ThreadPoolExecutor(2) as pool:
        outcomes = list(pool.map(
            lambda p: kill_at(shim, straight, tmp_path / f"{p[0]}{p[1]}", *p), todo))
    assert len(outcomes) == len(todo) and "resumed" in outcomes


def test_a_kill_before_the_first_commit_leaves_an_empty_file_that_says_so(
        shim, counted, tmp_path):
    """Killed while the file is created (before its first flush is whole), the run
    leaves an empty ``.partial``: a reader and a resume say it holds nothing."""
    _, points, _ = counted
    res = _app(tmp_path, "run", *RUN, "--out", "c.h5", "-q",
               env=shim_env(child_env(), shim, thread="main", at=max(2, points["main"][0] // 2)))
    assert res.returncode == -signal.SIGKILL, res.stderr
    (part,) = sorted(tmp_path.glob("c.h5*.partial"))
    with pytest.raises(RunFileError, match="holds nothing"):
        verify_run(part)
    res = _app(tmp_path, "run", "--resume", part.name, "-q")
    assert res.returncode == 2 and "holds nothing" in res.stderr and "Traceback" not in \
        res.stderr, res.stderr


def test_a_file_whose_metadata_fails_says_what_can_still_be_read(counted, tmp_path):
    """Item 8: where HDF5 fails on part of the metadata (the superblock's end of
    allocation cut below the last objects) but the records all read, the resume's line
    says what can still be read, never "nothing of it can still be read"."""
    straight, _, _ = counted
    bad = tmp_path / "bad.h5"
    for cut in range(4096, 65536, 4096):  # (the first cut at which HDF5 fails)
        shutil.copy(straight, bad)
        with open(bad, "r+b") as fh:  # superblock v0: the end-of-file address at byte 40
            fh.seek(40)
            eoa = struct.unpack("<Q", fh.read(8))[0]
            fh.seek(40)
            fh.write(struct.pack("<Q", eoa - cut))
        report = verify_run(bad, deep=True)
        if any("cannot read its metadata" in p.text for p in report.problems):
            break
    else:
        pytest.fail("no cut of the end of allocation made HDF5 fail")
    line = report.line("resume")
    assert "nothing of it" not in line, line
    assert "101 records" in line and "101 frames" in line, line


KILLED_AFTER_T1 = """
import os, sys
from engine.io import RunWriter
from engine.scenarios import load_scenario
from engine.simulation import Simulation
sim = Simulation(load_scenario("pendulum").build_model(), "rrp-exact", 0.01,
                 record_every=1, record_frames=True)
w = RunWriter(sys.argv[1], sim, t_end=1.0)  # (its first flush: the checkpoint at t = 0)
assert sim.advance(100).ok
w.flush(checkpoint=False)
if sys.argv[2] == "kill":
    os._exit(0)  # (no close: the .partial of a killed run)
w.close()
"""
"""A run to t = 1 whose only checkpoint is t = 0's, killed (``kill``) or closed."""


def test_a_resume_uses_the_checkpoint_taken_before_damaged_frames(tmp_path):
    """Frame 64's chunk damaged in a killed run whose checkpoint (t = 0) precedes it
    (issue #47 item 1): the resume is not refused; it starts from that checkpoint, says
    so, drops the damaged records and writes them again, bit for bit a straight run."""
    for what in ("kill", "close"):
        res = subprocess.run([sys.executable, "-c", KILLED_AFTER_T1, str(tmp_path / f"{what}.h5"),
                              what], cwd=tmp_path, env=child_env(), capture_output=True,
                             text=True, timeout=300)
        assert res.returncode == 0, res.stderr
    (part,) = tmp_path.glob("kill.h5*.partial")
    import h5py

    with h5py.File(part, "r") as f:
        info = f["bodies/position"].id.get_chunk_info_by_coord((64, 0, 0))
    with open(part, "r+b") as fh:
        fh.seek(info.byte_offset + 8)
        old = fh.read(8)
        fh.seek(info.byte_offset + 8)
        fh.write(bytes(b ^ 0xFF for b in old))
    assert verify_run(part, deep=True).problems
    for out in (("--out", "copy.h5"), ()):  # (a copy first, then in place)
        res = _app(tmp_path, "run", "--resume", part.name, *out)
        assert res.returncode == 0, res.stderr
        assert "resumed from its checkpoint at t = 0, taken before that damage" in \
            res.stderr, res.stderr
    for done in ("copy.h5", "kill.h5"):
        assert _check_good(tmp_path / done) == "complete"
        _same(tmp_path / done, tmp_path / "close.h5")


def test_the_journal_gives_back_the_last_commit(tmp_path):
    """:mod:`engine.io.journal`: bytes overwritten, cut or appended after the last commit
    are undone by :func:`recover`, and :class:`RecoveredView` reads the committed file
    without changing it; an entry cut short by a kill is ignored."""
    from engine.io.journal import JournaledFile, RecoveredView, read_journal, recover

    p = tmp_path / "f.partial"
    j = JournaledFile(p, create=True)
    j.write(b"A" * 100)
    j.commit()
    j.seek(10)
    j.write(b"B" * 20)
    j.seek(95)
    j.write(b"C" * 50)  # (over the end, and past it)
    j.seek(12)
    j.write(b"D" * 4)  # (again, inside a range saved already)
    j.truncate(60)
    j.seek(0)
    j.write(b"E")
    j.close()  # (killed: not committed)
    changed = p.read_bytes()
    assert changed != b"A" * 100
    journal = read_journal(p)
    view = RecoveredView(p, journal)
    assert view.read() == b"A" * 100
    view.close()
    assert p.read_bytes() == changed
    with open(journal_name(p), "ab") as fh:  # (an entry the kill cut short)
        fh.write(b"\x00" * 11)
    assert recover(p)
    assert p.read_bytes() == b"A" * 100 and not journal_name(p).exists()
    assert not recover(p)
