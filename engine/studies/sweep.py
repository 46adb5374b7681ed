"""Grids of runs (scenario × integrator × h × parameters) on Dask, or serially.

* :func:`plan` turns the grid into :class:`~.runs.RunSpec` s, checking every input
  first (unknown integrators, ``h ≤ 0``, bad parameters: one-line errors).
* :func:`run_sweep` runs them: on a ``LocalCluster`` (one single-threaded worker
  process per core) by default, on an existing cluster given its scheduler address,
  or in this process (``scheduler="serial"``).  Each reference run (one per scenario,
  parameters and ``t_end``) is one task; the runs that need it depend on it.
* Rows are appended to the output (CSV) as they complete, so an interrupted sweep keeps
  what it finished; a re-run skips the rows already there (matched by ``run_id``).
  When every row is in, the table is rewritten in grid order.  A ``.parquet`` output
  (needs pyarrow) is journalled in ``<out>.partial.csv`` and converted at the end.
"""

from __future__ import annotations

import csv
import itertools
import json
import math
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..integrators import INTEGRATORS
from ..scenarios import load_scenario
from . import StudyError
from .runs import COLUMNS, RunSpec, compute_reference, run_row
from .trajectory import steps_per

MAX_SAMPLES = 2000
"""Default cap on the sample instants per run (sets the default sampling interval)."""
DEFAULT_REF_FACTOR = 8


# ------------------------------------------------------------------------ planning
def parameter_grid(sets: Iterable[tuple[str, Any]]) -> list[dict[str, Any]]:
    """``--set`` pairs → the cartesian product of the values given per key
    (``v0=1 v0=2 tilt=10`` → ``[{v0: 1, tilt: 10}, {v0: 2, tilt: 10}]``)."""
    values: dict[str, list[Any]] = {}
    for k, v in sets:
        values.setdefault(k, []).append(v)
    keys = list(values)
    return [dict(zip(keys, combo, strict=True))
            for combo in itertools.product(*(values[k] for k in keys))]


def plan(scenarios: Sequence[str], integrators: Sequence[str], hs: Sequence[float], *,
         parameter_sets: Sequence[Mapping[str, Any]] = ({},), t_end: float | None = None,
         dt_sample: float | None = None, h_ref: float | None = None,
         ref_integrator: str | None = "rk4", ref_factor: int = DEFAULT_REF_FACTOR,
         energy_tolerance: float = 1.0) -> list[RunSpec]:
    """The grid as run specs, every input checked.  ``ref_integrator=None``: no
    reference runs (no trajectory errors, only the E-error and the drifts);
    ``"same"``: each integrator is its own reference.  ``h_ref`` defaults to
    ``min(h)/ref_factor``; ``dt_sample`` to a multiple of ``max(h)`` that gives at most
    :data:`MAX_SAMPLES` samples."""
    if not scenarios or not integrators or not hs:
        raise StudyError("a sweep needs at least one scenario, one integrator and one h")
    for name in (*integrators, *([ref_integrator] if ref_integrator not in (None, "same")
                                 else [])):
        if name not in INTEGRATORS:
            raise StudyError(f"unknown integrator {name!r}; choose one of: "
                             f"{', '.join(INTEGRATORS)}")
    hs = [float(h) for h in hs]
    for h in hs:
        if not math.isfinite(h) or h <= 0:
            raise StudyError(f"h must be a positive, finite time step, got {h:g}")
    if t_end is not None and not (math.isfinite(t_end) and t_end > 0):
        raise StudyError(f"t_end must be positive, got {t_end:g}")
    if h_ref is None and ref_integrator is not None:
        h_ref = min(hs) / ref_factor
    if h_ref is not None and not (math.isfinite(h_ref) and h_ref > 0):
        raise StudyError(f"h_ref must be positive, got {h_ref:g}")
    specs = []
    for scen in scenarios:
        for params in parameter_sets:
            sc = load_scenario(scen, dict(params))  # ScenarioError names the bad key
            te = float(t_end if t_end is not None else sc.run.t_end)
            hmax = max(hs)
            dt = dt_sample if dt_sample is not None else (
                hmax * max(1, math.ceil(te / (hmax * MAX_SAMPLES) - 1e-9)))
            for h in [*hs, *([h_ref] if h_ref else [])]:
                steps_per(dt, h)
            if te < dt:
                raise StudyError(f"t_end = {te:g} is shorter than the sampling interval "
                                 f"{dt:g}")
            overrides = json.dumps(dict(params), sort_keys=True)
            for integ in integrators:
                ref = None if ref_integrator is None else (
                    integ if ref_integrator == "same" else ref_integrator)
                for h in hs:
                    specs.append(RunSpec(scen, integ, h, te, dt, overrides,
                                         ref or "", h_ref if ref else None,
                                         energy_tolerance))
    return specs


# ------------------------------------------------------------------------ output
class Table:
    """The output table: a CSV journal appended row by row (flushed), plus the final
    format.  ``done`` maps ``run_id`` to the rows already present."""

    def __init__(self, path: str | os.PathLike | None) -> None:
        self.path = Path(path) if path is not None else None
        self.parquet = self.path is not None and self.path.suffix == ".parquet"
        if self.parquet:
            try:
                import pyarrow  # noqa: F401
            except ImportError:
                raise StudyError("Parquet output needs pyarrow (pip install pyarrow); "
                                 "or give a .csv path") from None
        self.journal = (self.path.with_name(self.path.name + ".partial.csv") if self.parquet
                        else self.path)
        self.done: dict[str, dict] = {}
        if self.path is not None:
            self._read_existing()

    def _read_existing(self) -> None:
        if self.parquet and self.path.is_file():
            import pandas as pd

            for r in pd.read_parquet(self.path).to_dict("records"):
                self.done[str(r["run_id"])] = r
        if self.journal.is_file():
            _drop_partial_line(self.journal)
            with self.journal.open(newline="", encoding="utf-8") as f:
                for r in csv.DictReader(f):
                    if r.get("run_id") and None not in r.values() and None not in r:
                        self.done[r["run_id"]] = _typed(r)

    def append(self, row: dict) -> None:
        self.done[row["run_id"]] = row
        if self.journal is None:
            return
        self.journal.parent.mkdir(parents=True, exist_ok=True)
        new = not self.journal.is_file() or self.journal.stat().st_size == 0
        with self.journal.open("a", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
            if new:
                w.writeheader()
            w.writerow({k: _cell(row.get(k)) for k in COLUMNS})
            f.flush()
            os.fsync(f.fileno())

    def finish(self, order: Sequence[str]) -> list[dict]:
        """All rows in grid order (rows of other grids kept after them); rewrite the
        output in that order."""
        rows = [self.done[i] for i in order if i in self.done]
        rows += [r for i, r in self.done.items() if i not in set(order)]
        if self.path is None:
            return rows
        if self.parquet:
            import pandas as pd

            pd.DataFrame(rows, columns=list(COLUMNS)).to_parquet(self.path, index=False)
            self.journal.unlink(missing_ok=True)
            return rows
        tmp = self.path.with_name(self.path.name + ".tmp")
        with tmp.open("w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
            w.writeheader()
            for r in rows:
                w.writerow({k: _cell(r.get(k)) for k in COLUMNS})
        os.replace(tmp, self.path)
        return rows


def _cell(v: Any) -> Any:
    return repr(v) if isinstance(v, float) else ("" if v is None else v)


_TEXT = {"run_id", "scenario", "set", "integrator", "ref_integrator", "status", "message"}


def _typed(r: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in r.items():
        if k in _TEXT:
            out[k] = v
        elif k == "steps":
            out[k] = int(v) if v else 0
        else:
            out[k] = float(v) if v not in ("", None) else math.nan
    return out


def _drop_partial_line(path: Path) -> None:
    """An interrupted write can leave half a line: cut the file after its last newline."""
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        path.write_bytes(data[: data.rfind(b"\n") + 1])


def load_table(path: str | os.PathLike) -> Any:
    """A sweep table as a pandas DataFrame (CSV or Parquet)."""
    import pandas as pd

    p = Path(path)
    return pd.read_parquet(p) if p.suffix == ".parquet" else pd.read_csv(p)


# ------------------------------------------------------------------------ running
def run_sweep(specs: Sequence[RunSpec], out: str | os.PathLike | None = None, *,
              scheduler: str | None = None, workers: int | None = None,
              threads: int | None = None, cache: str | os.PathLike | None = None,
              progress: bool = False,
              on_row: Callable[[dict], None] | None = None,
              log: Callable[[str], None] | None = None) -> list[dict]:
    """Run ``specs`` and return all rows (grid order).

    ``scheduler``: ``None`` — a new ``LocalCluster`` with ``workers`` processes (default:
    one per core); ``"serial"`` — in this process; anything else — the address of a
    running Dask scheduler (``tcp://host:8786``).  ``threads``: the threads of each run's
    parallel force kernels (``engine.parallel.set_threads``; at most the worker's cores);
    default: the cores shared among the ``LocalCluster``'s workers, all of them in this
    process or on a remote worker.  ``on_row(row)`` is called in this
    process after each row is stored (a KeyboardInterrupt raised there, or by the user,
    stops the sweep with every finished row kept)."""
    table = Table(out)
    cache = None if cache is None else str(cache)
    order = [s.run_id for s in specs]
    todo = [s for s in specs if s.run_id not in table.done]
    say = log or (lambda msg: None)
    if len(todo) < len(specs):
        say(f"resuming: {len(specs) - len(todo)} of {len(specs)} runs already in {out}")
    bar = _bar(len(todo), progress)

    def store(row: dict) -> None:
        table.append(row)
        if bar is not None:
            bar.update(1)
        if on_row is not None:
            on_row(row)

    try:
        if todo:
            if scheduler == "serial":
                if threads is not None:
                    from ..parallel import set_threads

                    set_threads(threads)
                _run_serial(todo, cache, store)
            else:
                _run_dask(todo, cache, store, scheduler, workers, threads, say)
    finally:
        if bar is not None:
            bar.close()
    return table.finish(order)


def _run_serial(todo: Sequence[RunSpec], cache: str | None, store) -> None:
    refs: dict[tuple, Any] = {}
    for spec in todo:
        ref = None
        if spec.h_ref:
            key = spec.reference_spec()
            if key not in refs:
                refs[key] = compute_reference(key, cache)
            ref = refs[key]
        store(run_row(spec, ref))


def with_threads(threads: int | None, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` on a Dask worker with ``threads`` threads for the parallel kernels
    (capped at the worker's ``NUMBA_NUM_THREADS``; ``None``: as they are)."""
    if threads is not None:
        from ..parallel import max_threads, set_threads

        set_threads(max(1, min(threads, max_threads())))
    return fn(*args)


def _run_dask(todo: Sequence[RunSpec], cache: str | None, store, scheduler: str | None,
              workers: int | None, threads: int | None, say) -> None:
    import logging

    from distributed import Client, LocalCluster, as_completed

    cluster = None
    try:
        if scheduler is None:
            n = workers or os.cpu_count() or 1
            if threads is None:  # the cores shared among the workers
                threads = max(1, (os.cpu_count() or 1) // n)
            say(f"starting a Dask LocalCluster with {n} worker process(es)")
            # Workers inherit an ignored SIGINT, so that Ctrl-C (sent to the whole
            # process group) stops only this process, which then shuts them down cleanly.
            old = _ignore_sigint()
            try:
                cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=logging.ERROR)
            finally:
                _restore_sigint(old)
            client = Client(cluster)
        else:
            try:
                client = Client(scheduler, timeout="10s")
            except (OSError, TimeoutError, ValueError) as exc:
                raise StudyError(f"cannot reach the Dask scheduler at {scheduler!r}: "
                                 f"{exc}") from None
    except BaseException:
        if cluster is not None:
            cluster.close()
        raise
    futures = []
    try:
        refs = {}
        for spec in todo:
            if spec.h_ref and spec.reference_spec() not in refs:
                key = spec.reference_spec()
                refs[key] = client.submit(with_threads, threads, compute_reference, key, cache,
                                          pure=False)
        for spec in todo:
            ref = refs[spec.reference_spec()] if spec.h_ref else None
            futures.append(client.submit(with_threads, threads, run_row, spec, ref,
                                         pure=False))
        for fut in as_completed(futures):
            store(fut.result())
    finally:
        for f in futures:
            f.cancel()
        client.close()
        if cluster is not None:
            cluster.close()


def _bar(total: int, enabled: bool) -> Any:
    if not enabled or total == 0:
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit="run", file=sys.stderr, leave=False, dynamic_ncols=True)


def _ignore_sigint() -> Any:
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGINT, signal.SIG_IGN)


def _restore_sigint(old: Any) -> None:
    import signal

    if old is not None:
        signal.signal(signal.SIGINT, old)
