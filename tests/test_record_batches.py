"""Records written in batches (issue #36, item 15; docs/output.md, "Guarantees": "What a
record costs"): the run loop hands the records to the writer with
``RunWriter.flush_when_due``, which writes them as one batch (one resize and one write
of every dataset) only when one is due (``engine.io.batching``), never waits for the
write in flight unless the records held reach ``BATCH_BYTES``, and raises a failed
write at once.  The file is the one written record by record.  Structure only: no
wall-clock times are asserted (the speed is in benchmarks/bench_record_cost.py)."""

from __future__ import annotations

import argparse
import math
import threading

import numpy as np
import pytest

from engine.io import OutputWriteError, RunFile, RunWriter, batching, read_run
from engine.scenarios import load_scenario
from engine.simulation import Simulation

EVERY = 5


@pytest.fixture(scope="module")
def torus():
    return load_scenario("torus").build_model()


def _sim(model) -> Simulation:
    return Simulation(model, "rrp-newmark", 1e-3, record_every=EVERY)


def _same_files(a, b) -> None:
    ra, rb = read_run(a), read_run(b)
    np.testing.assert_array_equal(ra["time"], rb["time"])
    for g in ("energy", "momentum", "bodies"):
        assert ra[g].keys() == rb[g].keys()
        for k in ra[g]:
            np.testing.assert_array_equal(ra[g][k], rb[g][k], err_msg=f"/{g}/{k}")


def test_n_records_take_at_most_ceil_n_over_batch_writes_of_each_dataset(tmp_path, torus,
                                                                         monkeypatch):
    """With a batch of 10 records (``BATCH_BYTES``; never due by time), 95 records
    handed over one at a time make ⌈95/10⌉ batches (the last 5 at :meth:`close`; frame
    0 was written when the file was made), each one write of each dataset; the file is
    the one written in line after every record, and resumes as it."""
    sim = _sim(torus)
    w = RunWriter(tmp_path / "b.h5", sim, background=True, keep_frames=False)
    monkeypatch.setattr(batching, "BATCH_INTERVAL", math.inf)
    monkeypatch.setattr(batching, "BATCH_BYTES", 10 * w._record_bytes)
    handed = 0
    for _ in range(95):
        assert sim.advance(EVERY).ok
        handed += w.flush_when_due()
    w.close()
    n = 96  # frame 0 and 95 records
    assert handed == 9  # 9 × 10 records; frame 0 was written at the start, 5 at close
    assert w.batches == 1 + math.ceil(95 / 10) == 11
    assert w.dataset_writes == w.batches * w._n_row_datasets

    ref = _sim(torus)  # the same run, written in line after every record
    r = RunWriter(tmp_path / "r.h5", ref)
    for _ in range(95):
        assert ref.advance(EVERY).ok
        r.flush()
    r.close()
    assert r.batches == n
    _same_files(tmp_path / "b.h5", tmp_path / "r.h5")
    with RunFile(tmp_path / "b.h5") as rf:
        assert rf.status == "complete" and rf.n_frames == n
        d, n_rec = rf.resume_state()
        assert n_rec == n and d["step_index"] == 95 * EVERY


def test_the_run_loop_writes_in_batches(tmp_path, torus, monkeypatch):
    """``app.run_loop.drive`` (``rrp run --out``) hands the records over with
    ``flush_when_due``: with no batch due during the run, 101 records in 100 chunks are
    two batches (frame 0 when the file is made, the rest at the close), not 101."""
    from app.run_loop import drive

    monkeypatch.setattr(batching, "BATCH_INTERVAL", math.inf)
    sim = _sim(torus)
    w = RunWriter(tmp_path / "loop.h5", sim, background=True, keep_frames=False)

    class NoSignals:
        received: list = []

    out = drive(argparse.Namespace(quiet=True), sim, w, 500, 0.5, None, NoSignals(),
                lambda failure: failure.message)
    assert out.status == "complete" and out.path == tmp_path / "loop.h5"
    assert w.batches == 2 and w.dataset_writes == 2 * w._n_row_datasets
    with RunFile(out.path) as rf:
        assert rf.n_frames == len(rf.times) == 101 and rf.status == "complete"
        assert rf.resume_state()[1] == 101


def test_flush_when_due_does_not_wait_for_the_write_in_flight_and_raises_its_failure(
        tmp_path, torus, monkeypatch):
    """While a batch is written, ``flush_when_due`` returns at once (the records wait
    for the next batch); once that write has failed, the next call raises the failure,
    and the file is closed ``failed`` at its last whole write."""
    monkeypatch.setattr(batching, "BATCH_INTERVAL", 0.0)  # a batch whenever the writer is free
    sim = _sim(torus)
    w = RunWriter(tmp_path / "f.h5", sim, background=True, keep_frames=False)
    w.wait()
    release = threading.Event()
    orig = w._write_rows

    def slow_then_full(*a):
        if not release.wait(timeout=120):
            raise AssertionError("not released")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(w, "_write_rows", slow_then_full)
    assert sim.advance(EVERY).ok
    assert w.flush_when_due()  # handed over: the thread now waits in _write_rows
    for _ in range(5):  # not due while it writes: returns at once, nothing waits
        assert sim.advance(EVERY).ok
        assert not w.flush_when_due()
    assert w._pending is not None and w._pending.is_alive()
    release.set()
    w._pending.join(timeout=120)
    with pytest.raises(OutputWriteError, match="No space left"):
        w.flush_when_due()
    with pytest.raises(OutputWriteError, match="No space left"):
        w.flush_when_due()  # the writer has failed: every call says so
    monkeypatch.setattr(w, "_write_rows", orig)
    with pytest.raises(OutputWriteError, match="No space left"):
        w.close()
    with RunFile(tmp_path / "f.h5") as rf:  # cut back to its last whole write: frame 0
        assert rf.status == "failed" and len(rf.times) == rf.n_frames == 1
        assert rf.resume_state()[1] == 1


def test_batch_due():
    """The rule: nothing held, nothing due; ``BATCH_BYTES`` held, due even with a write
    in flight (then waited for); else due once the last write is done and
    ``BATCH_INTERVAL`` has passed."""
    due, big, dt = batching.batch_due, batching.BATCH_BYTES, batching.BATCH_INTERVAL
    assert not due(0, 8, 1e9, False)
    assert due(big // 8, 8, 0.0, True)
    assert not due(1, 8, 2 * dt, True)
    assert not due(1, 8, 0.5 * dt, False)
    assert due(1, 8, dt, False)
