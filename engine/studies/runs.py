"""One grid point of a study → one tidy row.

A :class:`RunSpec` names a run (scenario, parameter overrides, integrator, ``h``,
``t_end``) and its reference (``ref_integrator`` at ``h_ref``, sampled every
``dt_sample``).  :func:`run_row` runs it and returns the row: the error measures of
:mod:`.norms`, the maximum energy error, the momentum drifts and the run time.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from ..diagnostics import MOMENTUM_NAMES
from .norms import energy_error, h1_distance, paper_q_error
from .reference import reference_run
from .trajectory import Trajectory, sample_run


def stopwatch(seconds: dict[str, float], say: Callable[[str], None]) -> Callable:
    """``timed(name, fn)``: say ``name``, run ``fn()``, keep its wall time in
    ``seconds[name]`` and return its result (the studies' ``compute`` functions)."""

    def timed(name: str, fn: Callable[[], Any]) -> Any:
        say(f"  {name} …")
        t0 = time.perf_counter()
        out = fn()
        seconds[name] = time.perf_counter() - t0
        return out

    return timed


KEY_COLUMNS = ("scenario", "set", "integrator", "h", "t_end", "dt_sample", "ref_integrator",
               "h_ref")
RESULT_COLUMNS = ("status", "t_reached", "steps", "e_error", "q_error_paper", "h1_error",
                  "max_energy_error", "final_energy_error",
                  *(f"drift_{m}" for m in MOMENTUM_NAMES),
                  *(f"drift_rel_{m}" for m in MOMENTUM_NAMES),
                  "wall_seconds", "kernel_seconds", "us_per_step", "message")
COLUMNS = ("run_id", *KEY_COLUMNS, *RESULT_COLUMNS)
"""The columns of a sweep table, in order (one row per run)."""


@dataclass(frozen=True)
class RunSpec:
    """One run of a grid.  ``overrides`` is a JSON object of scenario parameters (the
    ``--set`` values), kept as text so that a spec is hashable and fits a table cell."""

    scenario: str
    integrator: str
    h: float
    t_end: float
    dt_sample: float
    overrides: str = "{}"
    ref_integrator: str = "rk4"
    h_ref: float | None = None
    energy_tolerance: float = 1.0

    @property
    def params(self) -> dict[str, Any]:
        return json.loads(self.overrides)

    @property
    def run_id(self) -> str:
        """Stable identifier of the key columns (used to skip finished rows)."""
        key = {k: (repr(float(v)) if isinstance(v, float) else v)
               for k, v in self.key_row().items()}
        return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]

    def key_row(self) -> dict[str, Any]:
        return {"scenario": self.scenario, "set": self.overrides, "integrator": self.integrator,
                "h": float(self.h), "t_end": float(self.t_end),
                "dt_sample": float(self.dt_sample),
                "ref_integrator": self.ref_integrator if self.h_ref else "",
                "h_ref": float(self.h_ref) if self.h_ref else math.nan}

    def reference_spec(self) -> tuple:
        """What determines the reference (runs sharing it share one reference task)."""
        return (self.scenario, self.overrides, self.ref_integrator, self.h_ref, self.t_end,
                self.dt_sample)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def compute_reference(ref_spec: tuple, cache: str | None) -> Trajectory:
    """The reference trajectory of :meth:`RunSpec.reference_spec` (disk-cached)."""
    scenario, overrides, integrator, h_ref, t_end, dt_sample = ref_spec
    return reference_run(scenario, json.loads(overrides), integrator, h_ref, t_end, dt_sample,
                         cache=cache)


def row_from_trajectory(spec: RunSpec, tr: Trajectory, ref: Trajectory | None) -> dict:
    """The tidy row of a finished run (errors vs ``ref`` when given)."""
    drift = tr.momentum_drift()
    scales = {m: tr.meta["p_scale"] if m.startswith("P") else tr.meta["l_scale"]
              for m in MOMENTUM_NAMES}
    e = tr.fine["energy_total"]
    ok = tr.ok  # a run that blew up has no meaningful error measures
    row: dict[str, Any] = {"run_id": spec.run_id, **spec.key_row()}
    row.update({
        "status": tr.status,
        "t_reached": tr.t_reached,
        "steps": tr.steps,
        "e_error": energy_error(tr) if ok else math.nan,
        "q_error_paper": paper_q_error(tr, ref) if ok and ref is not None else math.nan,
        "h1_error": h1_distance(tr, ref) if ok and ref is not None else math.nan,
        "max_energy_error": tr.max_relative_energy_error(),
        "final_energy_error": float((e[-1] - tr.e0) / tr.e_scale),
        **{f"drift_{m}": drift[m] for m in MOMENTUM_NAMES},
        **{f"drift_rel_{m}": drift[m] / scales[m] for m in MOMENTUM_NAMES},
        "wall_seconds": tr.wall_seconds,
        "kernel_seconds": tr.kernel_seconds,
        "us_per_step": 1e6 * tr.kernel_seconds / tr.steps if tr.steps else math.nan,
        "message": tr.message,
    })
    return row


def run_row(spec: RunSpec, ref: Trajectory | None = None) -> dict:
    """Run ``spec`` and return its row (:data:`COLUMNS`)."""
    tr = sample_run(spec.scenario, spec.params, spec.integrator, spec.h, spec.t_end,
                    spec.dt_sample, energy_tolerance=spec.energy_tolerance)
    return row_from_trajectory(spec, tr, ref)
