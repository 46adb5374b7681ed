"""``rrp sweep --scheduler ADDRESS`` on a real Dask cluster (issue #9, "sweeps past one
machine"; README "Sweeps on a Dask cluster"): a ``dask scheduler`` and two ``dask
worker`` processes started as separate processes, as on a cluster of machines, the sweep
run as its own ``rrp`` process, its rows checked and the scheduler's task stream asked
which workers computed them (both, and nobody else: a sweep that ran serially or on a
LocalCluster of its own leaves no task there).  The processes are always torn down."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("distributed")

pytestmark = pytest.mark.slow  # a scheduler and two workers of their own (docs/testing.md)

ROOT = Path(__file__).resolve().parent.parent
START_TIMEOUT = 120.0
"""Seconds for the scheduler and the workers to come up (a loaded 2-core box)."""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


def _stop(procs: list[subprocess.Popen]) -> None:
    """Terminate each process group started here, the last started first (the workers
    before their scheduler: a worker whose scheduler is gone first tries to reconnect
    until its death timeout), SIGTERM, then SIGKILL."""
    for p in reversed(procs):
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait(timeout=15)


@pytest.fixture
def dask_cluster(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """``(scheduler address, log directory)`` of a scheduler and two single-threaded
    workers on 127.0.0.1 (port 0: a free one, read from ``--scheduler-file``)."""
    procs: list[subprocess.Popen] = []
    logs = tmp_path / "logs"
    logs.mkdir()
    sched_file = tmp_path / "scheduler.json"

    def spawn(name: str, *args: str) -> subprocess.Popen:
        with (logs / f"{name}.log").open("w") as log:
            p = subprocess.Popen([sys.executable, "-m", *args], cwd=tmp_path, env=_env(),
                                 stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        procs.append(p)
        return p

    try:
        sched = spawn("scheduler", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                      "--port", "0", "--no-dashboard", "--scheduler-file", str(sched_file))
        deadline = time.monotonic() + START_TIMEOUT
        address = None
        while address is None:
            if sched.poll() is not None:
                pytest.fail("the scheduler exited: " + (logs / "scheduler.log").read_text())
            if time.monotonic() > deadline:
                pytest.fail("the scheduler wrote no scheduler file in time: "
                            + (logs / "scheduler.log").read_text())
            try:
                address = json.loads(sched_file.read_text())["address"]
            except (OSError, ValueError, KeyError):
                time.sleep(0.2)
        for i in (1, 2):
            spawn(f"worker{i}", "distributed.cli.dask_worker", "--scheduler-file",
                  str(sched_file), "--host", "127.0.0.1", "--nthreads", "1", "--nworkers",
                  "1", "--no-nanny", "--no-dashboard", "--name", f"rrp-worker-{i}",
                  "--death-timeout", "60")
        yield address, logs
    finally:
        _stop(procs)


def test_sweep_runs_on_both_workers_of_a_dask_cluster(dask_cluster, tmp_path):
    from distributed import Client

    address, logs = dask_cluster
    with Client(address, timeout="30s") as client:
        try:
            client.wait_for_workers(2, timeout=START_TIMEOUT)
        except TimeoutError:
            pytest.fail("the two workers did not join: " + "\n".join(
                p.read_text() for p in sorted(logs.glob("worker*.log"))))
        workers = set(client.scheduler_info()["workers"])
        assert len(workers) == 2
        client.get_task_stream()  # installs the scheduler's task-stream plugin
        res = subprocess.run(
            [sys.executable, "-m", "app", "sweep", "pendulum", "-i", "rrp-exact,rrp-newmark",
             "--h", "0.02", "0.01", "--t-end", "2", "--ref-integrator", "none",
             "--scheduler", address, "--out", "s.csv"],
            cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=600)
        assert res.returncode == 0, res.stderr
        stream = client.get_task_stream()
    assert "LocalCluster" not in res.stderr
    with open(tmp_path / "s.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 4
    assert {(r["integrator"], float(r["h"])) for r in rows} == {
        (i, h) for i in ("rrp-exact", "rrp-newmark") for h in (0.02, 0.01)}
    assert all(r["status"] == "complete" and int(r["steps"]) > 0 for r in rows), rows
    runs = [t for t in stream if str(t["key"]).startswith("with_threads")]
    assert len(runs) == 4, stream
    assert {t["worker"] for t in runs} == workers
