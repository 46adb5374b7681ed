"""A scenario as an export draws it (issue #42 item 9): the bodies at each frame time
``t_k`` exactly, from a simulation stepped forward as the frames ask, nothing written
to disk.

The simulation takes its own steps (``h`` never shortened: the scheme's bits are those
of ``rrp run``); at ``t_k`` the two steps that bracket it — the last one at or before
``t_k`` and the next — are interpolated as a run file's records are
(:func:`app.export.track.between`: cubic Hermite positions with the steps' velocities,
slerped attitudes), so a step that ends on ``t_k`` is drawn as it is.  What is kept:
those two states, and for the plots the series the simulation records in memory, at
most :data:`SERIES_ROWS` rows (every step while the run has no more steps, else every
``ceil(steps / SERIES_ROWS)``-th), reduced to the plots' curves at the end of the pass.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .track import State, between

SERIES_ROWS = 200_000
"""Most records of the series a scenario's plots are drawn from (24 MB for the torus's
nine energy columns, momenta and time): every step of a run up to this many steps."""
CHUNK = 10_000
"""Most steps advanced between two calls of the export's ``check``."""


def series_every(t_end: float, h: float) -> int:
    """The record stride that keeps a run to ``t_end`` at ``h`` within
    :data:`SERIES_ROWS` records."""
    return max(1, math.ceil(t_end / h / SERIES_ROWS))


class SimTrack:
    """The bodies of the scenario ``sc`` at any time, asked in increasing order
    (:meth:`state`), simulated from ``t = 0`` with ``integrator`` and ``h`` (``None``: the
    scenario's); ``t_end``: the export's last time (the series' stride,
    :func:`series_every`).  :attr:`failure`: the engine's message once a step blew up
    (the state is then the last good one)."""

    def __init__(self, sc, integrator: str | None, h: float | None, t_end: float,
                 check: Callable[[], None] | None = None) -> None:
        from engine.drivers import simulation_for

        self.sc = sc
        self.model = sc.build_model()
        h = h if h is not None else sc.run.h
        self.sim = simulation_for(self.model, integrator or sc.run.integrator, h,
                                  record_every=series_every(t_end, h), record_frames=False,
                                  energy_tolerance=sc.run.energy_tolerance)
        self.sim.warm_up()
        self.check = check
        self.failure: str | None = None
        self.prev = self.cur = self.sim.snapshot()
        self.steps = 0
        """Steps taken (the test of a bounded record: rows ≪ steps)."""
        self._shown = -math.inf

    @property
    def name(self) -> str:
        return self.sc.name

    @property
    def t_first(self) -> float:
        return 0.0

    def _advance(self, n: int) -> bool:
        """``n`` steps in chunks (``check`` between them); ``False`` on a blow-up."""
        while n > 0:
            if self.check is not None:
                self.check()
            rep = self.sim.advance(min(n, CHUNK))
            n -= rep.steps
            self.steps += rep.steps
            if not rep.ok:
                self.failure = rep.failure.message
                return False
            if rep.steps == 0:  # (nothing taken and no failure: never loop forever)
                return False
        return True

    def _reach(self, t: float, eps: float) -> None:
        """Step until the current step's time is at or after ``t`` (within ``eps``),
        keeping the step before it in :attr:`prev`."""
        sim = self.sim
        while self.cur.t < t - eps and self.failure is None:
            n = max(1, int(math.ceil((t - sim.t) / sim.h - 1e-9)))
            if n > 1:
                ok = self._advance(n - 1)
                self.prev = self.cur = sim.snapshot()
                if not ok:
                    return
            self.prev = self.cur
            ok = self._advance(1)
            self.cur = sim.snapshot()
            if not ok:
                return

    def state(self, t: float) -> State | None:
        """The bodies at ``t`` (not before the last time asked): the step that ends on
        ``t`` as it is, else the two steps bracketing ``t`` interpolated.  After a
        blow-up, the last good state once (``None`` when it was already shown)."""
        eps = 1e-9 * max(1.0, abs(t))
        self._reach(t, eps)
        cur, prev = self.cur, self.prev
        if self.failure is not None and cur.t < t - eps:
            if cur.t <= self._shown:
                return None
            self._shown = cur.t
            return State(cur.t, cur.x, cur.q, cur.v, cur.omega, self.steps, True)
        self._shown = t
        if abs(cur.t - t) <= eps or cur is prev:
            return State(t, cur.x, cur.q, cur.v, cur.omega, self.steps, True)
        if prev.t >= t:  # (t on the earlier step)
            return State(t, prev.x, prev.q, prev.v, prev.omega, self.steps - 1, True)
        x, v, q, om = between(prev, cur, t)
        return State(t, x, q, v, om, self.steps - 1, False)

    def scheme(self, _t: float) -> tuple[str, str]:
        """The integrator and ``h`` (a scenario's export switches neither)."""
        return self.sim.integrator.name, f"{self.sim.h:g}"

    def broken(self, _t: float):
        """The model's bonds broken so far (``None``: its bonds never break)."""
        return getattr(self.sim, "broken_bonds", None)

    def stage(self, _t: float) -> str:
        """The stage the simulation is in (``""``: none; issue #44 item 5)."""
        k = getattr(self.sim, "stage_index", -1)
        return self.sim.stages[k].label(k) if k >= 0 else ""

    def label(self) -> str:
        """The run's name in the plots' legend (as a run file's)."""
        return f"{self.sc.name} ({self.sim.integrator.name}, h = {self.sim.h:g})"

    def series(self, label: str = ""):
        """The recorded series as :class:`app.export.plots.RunSeries` (what a run file
        of this run would give :func:`app.export.plots.run_series`)."""
        from engine.diagnostics import error_scale_symbol
        from engine.io.file_layout import TERRACE_GAP
        from engine.layout import ENERGY_NAMES
        from engine.simulation.records import energy_names

        from .plots import RunSeries

        sim = self.sim
        a = sim.series.arrays()
        e = np.asarray(a["energy"], float)
        total = e.sum(axis=1)
        energy = {c: e[:, ENERGY_NAMES.index(c)] for c in energy_names(self.model)}
        gap = a.get(TERRACE_GAP)
        if gap is not None:
            gap = np.asarray(gap, float) / sim.e_scale
            if not np.isfinite(gap).any():
                gap = None
        return RunSeries(label or self.label(), np.asarray(a["t"], float), energy, total,
                         (total - sim.e_ref) / sim.e_scale, np.asarray(a["P"], float),
                         np.asarray(a["L"], float), gap,
                         [(float(ev.t), ev.label) for ev in getattr(sim, "events", [])],
                         error_scale_symbol(sim.e_ref, sim.e_scale))
