"""The simulation worker: owns the :class:`engine.simulation.Simulation` objects and runs
them in a thread of their own, so the window never waits on physics.

The window talks to it only through queued slots (``load``, ``play``, ``set_h`` …) and
listens to its signals; everything it sends is a copy (:class:`Frame`).  The compiled
kernels release the GIL (``nogil=True``), so a chunk of steps runs beside the GUI.

Compare mode: up to three runs (a primary and two others) from the same initial state,
advanced in lock-step with the same ``h``, each with its own integrator.

The messages live in :mod:`app.gui.messages`, the building of the runs in
:mod:`app.gui.runs`, the inspector's and status bar's reports in :mod:`app.gui.reports`
(issue #34); their names stay importable from here.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
import time
from pathlib import Path

from PyQt6.QtCore import QObject, QTimer, pyqtSignal, pyqtSlot

from engine.diagnostics import error_scale_symbol
from engine.integrators import get_integrator
from engine.interpreted import interpret_while_cold
from engine.layout import ENERGY_NAMES
from engine.priming import start_siblings
from engine.scenarios import ScenarioError
from engine.simulation import Simulation, SimulationError
from engine.stability import StabilityEstimate

from ..cold_start import compile_in_background, steps_interpreted
from .messages import BranchRequest, Frame, Loaded, LoadRequest, Preview, Series
from .reports import body_report, contact_details, contact_summary
from .runs import (
    MAX_COMPARE,
    PREFERRED_HARD,
    Run,
    branch_runs,
    build_runs,
    choose_integrator,
    one_line,
    records_trail,
    resume_runs,
    scenario_t_end,
    write_csv,
)

__all__ = [  # (the names the window, the tests and the benchmarks import from here)
    "MAX_COMPARE", "PREFERRED_HARD", "TICK_MS", "BranchRequest", "Frame", "Loaded",
    "LoadRequest", "Preview", "Series", "SimulationWorker", "body_report",
    "choose_integrator", "contact_details", "contact_summary", "records_trail",
    "scenario_t_end",
]

TICK_MS = 17
"""Interval of the stepping timer: at most ~59 chunks (and frames) a second (≤ 60 Hz)."""
TWIN_TICK_S = 0.1
"""The stepping time a tick takes at most while the kernels' twins step (issue #45)."""
RECORD_S = 0.1
"""The live runs record a row of their series at least this often in wall time, where
the scenario's ``every`` would leave the plots waiting: LAMMPS's impact (45 ms a step,
``every = 100``, its deck's ``thermo``) drew its first line after 4.5 s and a point
every 4.5 s after.  The records are reads: the runs' bits do not depend on them."""


class SimulationWorker(QObject):
    """Lives in a ``QThread``; see the module docstring."""

    state_changed = pyqtSignal(str, str)  # state, text: compiling|ready|running|paused|failed
    preview = pyqtSignal(object)  # Preview: the model, before its kernels are built
    progress = pyqtSignal(int, int, str)  # kernels: k of n being built (n = 0: busy), what
    loaded = pyqtSignal(object)  # Loaded
    frame = pyqtSignal(object)  # Frame
    failed = pyqtSignal(str)  # what happened and what to change; the run is paused
    rejected = pyqtSignal(str, str)  # what ("h", "integrator", "scenario", …), message
    accepted = pyqtSignal(str, str)  # what, new value
    saved = pyqtSignal(str)  # path of an exported data file
    stopped = pyqtSignal()
    pong = pyqtSignal(int)  # answer to ping(token): the worker's event loop is alive
    threads_set = pyqtSignal(int)  # the engine's thread count, read in the worker's thread

    def __init__(self, threads: int | None = None) -> None:
        super().__init__()
        self.threads_wanted = threads
        """Threads of the parallel force kernels (``None``: all cores); applied in the
        worker's own thread by :meth:`set_threads` (Numba's count is per thread)."""
        self.engine_threads: int | None = None
        """The engine's thread count as read in the worker's thread (after
        :meth:`set_threads`), ``None`` before."""
        self._runs: list[Run] = []
        self._request: LoadRequest | None = None
        self._timer: QTimer | None = None
        self.steps_per_tick = 20
        self._every = 1  # (the runs' own record_every: set by _install)
        self.playing = False
        self._failed = False
        self._frame_in_flight = threading.Event()  # set while the GUI draws a frame
        self._pause_asked = threading.Event()
        """Set by :meth:`ask_pause` from the window's thread: the runs' ``stop_check``."""
        self._last_stability: StabilityEstimate | None = None
        self._stability_at = -1.0
        self._rate = (0.0, 0.0, 0.0)  # µs/step, steps/s, events/s over the last second
        self._rate_window: list[tuple[float, int, float, int]] = []
        self._inspect: int | None = None
        self._siblings: list = []  # processes building kernels (engine.priming)
        self._compiling: list[tuple[str, object]] = []
        """(scheme, process) building a stepping loop in the background while the runs
        step on the kernels' uncompiled twins (issue #45); kept across a pause, and left
        to finish the cache when the window closes (as ``rrp run`` leaves them)."""

    # ------------------------------------------------------------------ helpers
    @property
    def primary(self) -> Simulation | None:
        return self._runs[0].sim if self._runs else None

    def frame_done(self) -> None:
        """Called (from any thread) by the window when it has drawn a frame."""
        self._frame_in_flight.clear()

    def ask_pause(self) -> None:
        """Called by the window directly (any thread; not a queued slot) before it asks
        for :meth:`pause`: an event-driven run inside a long recording interval stops at
        its next compiled call (``Simulation.stop_check``, within the event budget of
        ~0.05 s) instead of finishing the chunk of intervals first, as ``rrp run`` does
        on a signal (issue #33 item 4); the queued :meth:`pause` then follows at once.
        A stepping scheme returns between its chunks anyway."""
        self._pause_asked.set()

    def _halt(self) -> None:
        """Stop stepping: the timer stopped, the sibling processes of a staged build
        ended (a compile for a cache nobody will read now).  The background compile of
        a cold start (:attr:`_compiling`) goes on: the runs swap to its kernels when
        they play again."""
        self.playing = False
        self._pause_asked.clear()  # (the runs under way have stopped: nothing to ask)
        for proc in self._siblings:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        self._siblings = []
        if self._timer is not None:
            self._timer.stop()

    def _ensure_timer(self) -> QTimer:
        if self._timer is None:
            self._timer = QTimer(self)
            self._timer.setInterval(TICK_MS)
            self._timer.timeout.connect(self._tick)
        return self._timer

    # ------------------------------------------------------------------ slots
    def compiling(self) -> list[str]:
        """The schemes whose stepping loops are being built in the background (the
        processes that ended are forgotten)."""
        self._compiling = [(n, p) for n, p in self._compiling if p.poll() is None]
        return list(dict.fromkeys(n for n, _ in self._compiling))

    def _twins(self):
        """Within it, while a background compile runs, a kernel not in the cache yet
        runs as its uncompiled twin (``engine.interpreted``: the same bits) instead of
        compiling here; once the processes have ended, kernels compile as usual."""
        return interpret_while_cold() if self.compiling() else contextlib.nullcontext()

    def _compile_cold(self, model, cold: list[tuple[str, int]]) -> bool:
        """On a cold cache, for a small model (``app.cold_start``), start building the
        stepping loops of ``cold`` (``(name, scheme id)``, the primary's first: its
        chain and the kernels beside it, a compare scheme's chain) in the background;
        whether any started (then the runs step on the twins meanwhile)."""
        if not steps_interpreted(model):
            return False
        started = False
        for k, (name, scheme) in enumerate(cold):
            parts = ("run", "siblings") if k == 0 else ("run",)
            for proc in compile_in_background(model, scheme, parts):
                self._compiling.append((name, proc))
                started = True
        return started

    @pyqtSlot()
    def start_thread(self) -> None:
        """Connected to the thread's ``started``: applies :attr:`threads_wanted`."""
        self.set_threads(0 if self.threads_wanted is None else self.threads_wanted)

    @pyqtSlot(int)
    def set_threads(self, n: int) -> None:
        """Run the parallel force kernels (models of ``PARALLEL_MIN_BODIES`` bodies or
        more) on ``n`` threads, ``0``: all cores.  Must run in the worker's thread:
        Numba's thread count belongs to the thread that launches the kernels.  Emits
        ``threads_set`` with the count the engine reports there; a count out of range is
        ``rejected`` ("threads")."""
        from engine.parallel import get_threads, max_threads, set_threads

        want = max_threads() if not n else int(n)
        try:
            set_threads(want)
        except ValueError as exc:
            self.rejected.emit("threads", str(exc))
            return
        self.threads_wanted = None if not n else want
        self.engine_threads = get_threads()
        self.threads_set.emit(self.engine_threads)

    @pyqtSlot(object)
    def load(self, req: LoadRequest) -> None:
        """Build the scenario (compiling the kernels on first use) and send ``loaded`` and
        a first frame; a bad request is ``rejected`` and the current runs are kept."""
        self.pause()
        self.state_changed.emit("compiling", "loading the scenario…")
        try:
            runs, note = build_runs(req, self._stage, self.preview.emit,
                                    self._start_siblings, self._compile_cold)
        except Exception as exc:  # an engine bug must not take the window down either
            self.rejected.emit("scenario", str(exc) if isinstance(
                exc, ScenarioError | SimulationError | ValueError) else
                f"cannot build {req.scenario!r}: {type(exc).__name__}: {exc}")
            self.state_changed.emit("paused" if self._runs else "idle",
                                    "scenario not loaded")
            return
        with self._twins():
            self._install(runs, req, note)

    def _install(self, runs: list[Run], req, note: str, branch: str = "",
                 every: int | None = None) -> None:
        """Make ``runs`` the current runs (of request ``req``) and tell the window;
        ``every``: their cadence before :meth:`_record_cadence` (default: theirs)."""
        self._runs = runs
        self._request = req
        self._every = every or runs[0].sim.record_every  # (the scenario's, the branch's)
        self._failed = False
        self._last_stability = None
        self._stability_at = -1.0
        self._rate_window.clear()
        self._rate = (0.0, 0.0, 0.0)
        sim = runs[0].sim
        e0 = sim.energy
        used = [n for k, n in enumerate(ENERGY_NAMES)
                if n in sim.model.energy_components or abs(e0[k]) > 0]
        self.loaded.emit(Loaded(req.scenario, sim.model.title, sim.model, dict(sim.model.params),
                                [r.sim.integrator.name for r in runs], sim.h, used,
                                sim.model.conserved, sim.stability(), note, branch,
                                error_scale_symbol(sim.e_ref, sim.e_scale),
                                scenario_t_end(req.scenario)))
        self._emit_frame(force=True)
        self.state_changed.emit("paused", "ready: press Play")

    @pyqtSlot(object)
    def branch(self, req: BranchRequest) -> None:
        """*Continue from here* on a recorded frame: each run (the primary and the
        compare runs) is built from the same frame with
        :meth:`~engine.simulation.Simulation.from_frame`; a scheme that cannot drive the
        model is replaced (primary) or left out (compare), as for a scenario.  A frame
        that cannot start a run is ``rejected`` ("branch") and the current runs kept."""
        self.pause()
        self.state_changed.emit("compiling", "starting a run from the recorded frame…")
        try:
            with self._twins():  # (while the cache is cold: issue #45)
                runs, note = branch_runs(req)
        except Exception as exc:  # (SimulationError and ValueError mostly: one line)
            text = one_line(exc)
            self.rejected.emit("branch", f"cannot continue from frame "
                               f"{getattr(req.frame, 'index', '?')}: {text}")
            self.state_changed.emit("paused" if self._runs else "idle", "not branched")
            return
        where = (f"from frame {getattr(req.frame, 'index', 0) + 1} (t = {req.frame.t:.6g})"
                 f" of {req.source or req.scenario}")
        self._install(runs, req, note, where)

    @pyqtSlot(object, float)
    def branch_live(self, integrators: tuple[str, ...], h: float) -> None:
        """*Continue from here* on the live run: the primary's current state (exactly:
        :meth:`~engine.simulation.Simulation.resume_state`) goes on with
        ``integrators[0]`` and ``h``, and each compare scheme starts from the same state.
        The plots restart at this instant; Reset still goes back to the scenario's
        start."""
        sim = self.primary
        if sim is None:
            return
        self.pause()
        try:
            with self._twins():
                runs, note = resume_runs(sim, integrators, h)
        except Exception as exc:
            text = one_line(exc)
            self.rejected.emit("branch", f"cannot continue from here: {text}")
            return
        req = self._request
        # (the live run's cadence may be its _record_cadence: the base one goes on)
        self._install(runs, req, note, f"from the live run at t = {sim.t:.6g}", self._every)

    def _start_siblings(self, model, integrator: str) -> None:
        """On a cold cache, have a second process build the kernels beside the chain
        this thread compiles (``engine.priming.start_siblings``: the second core works
        on the first start too, issue #25); it ends by itself, or at :meth:`shutdown`."""
        self._siblings = [p for p in self._siblings if p.poll() is None]
        try:
            proc = start_siblings(model, integrator)
        except OSError:  # (no second process: this thread compiles them all)
            return
        if proc is not None:
            self._siblings.append(proc)

    def _stage(self, k: int, n: int, what: str) -> None:
        """Say which kernels are being built: stage ``k`` of ``n`` (the status bar's bar;
        a stage whose kernels are in the disk cache passes in a fraction of a second)."""
        text = f"building kernels {k}/{n}: {what} (first use only)…"
        self.progress.emit(k, n, text)
        self.state_changed.emit("compiling", text)

    @pyqtSlot(int)
    def ping(self, token: int) -> None:
        """Answer ``pong(token)`` (the window's liveness check, e.g. the soak test)."""
        self.pong.emit(token)

    @pyqtSlot(int)
    def set_inspect(self, body: int) -> None:
        """Send :func:`body_report` of body ``body`` with every frame (``-1``: none); a
        frame goes at once, so that the inspector fills while paused."""
        self._inspect = body if body >= 0 else None
        if self._inspect is not None:
            self._emit_frame(force=True)

    @pyqtSlot()
    def reset(self) -> None:
        if isinstance(self._request, BranchRequest):
            self.branch(self._request)
        elif self._request is not None:
            self.load(self._request)

    @pyqtSlot()
    def play(self) -> None:
        if not self._runs:
            return
        self.playing = True
        self._failed = False
        self._pause_asked.clear()
        self._ensure_timer().start()
        self.state_changed.emit("running", "running")

    @pyqtSlot()
    def pause(self) -> None:
        was = self.playing
        self._halt()
        if was:
            self._emit_frame(force=True)
            self.state_changed.emit("paused", "paused")

    @pyqtSlot()
    def step_once(self) -> None:
        if self._runs and not self.playing:
            self._advance(1)
            self._emit_frame(force=True)

    @pyqtSlot(int)
    def set_steps_per_tick(self, n: int) -> None:
        self.steps_per_tick = max(1, int(n))

    @pyqtSlot(float)
    def set_h(self, h: float) -> None:
        """Validate ``h`` for every run first; then change all (lock-step) or none."""
        if not self._runs:
            return
        try:
            for r in self._runs:
                r.sim.check_h(h)
        except SimulationError as exc:
            self.rejected.emit("h", str(exc))
            return
        done: list[tuple[object, float]] = []
        try:
            with self._twins():  # (a cold cache: the twins re-derive, at once)
                for r in self._runs:
                    old = r.sim.h
                    r.sim.set_h(h)
                    done.append((r.sim, old))
        except SimulationError as exc:
            # an implicit scheme may fail to re-derive its velocity variable at the new
            # h: undo the runs already changed, so that all keep the old step
            for sim, old in reversed(done):
                sim.set_h(old)
            self.rejected.emit("h", str(exc))
            return
        self._failed = False
        self.accepted.emit("h", f"{h:g}")
        self._emit_frame(force=True)

    @pyqtSlot(str)
    def set_integrator(self, name: str) -> None:
        """Switch the primary run's scheme at the current step (state continuous)."""
        sim = self.primary
        if sim is None:
            return
        try:
            with self._twins():  # (a stand-in's helpers, while the cache is cold)
                sim.check_integrator(name)
                cached = sim.kernels_cached(name)
            if not cached and not self._switch_cold(sim, name):
                text = f"compiling {name} (first use)…"  # seconds, said with a busy bar
                self.progress.emit(0, 0, text)
                self.state_changed.emit("compiling", text)
                self._start_siblings(sim.model, name)
                sim.build_kernels(name)
                self.state_changed.emit("running" if self.playing else "paused",
                                        f"{name} ready")
            with self._twins():
                sim.set_integrator(name)
        except SimulationError as exc:
            self.rejected.emit("integrator", str(exc))
            return
        self._failed = False
        self.accepted.emit("integrator", sim.integrator.name)
        self._emit_frame(force=True)

    def _switch_cold(self, sim: Simulation, name: str) -> bool:
        """A first switch to ``name`` on a cold cache: for a small model, its stepping
        loop is built in the background and the run goes on at once on the twins
        (issue #45); whether that was started (else the caller builds it here)."""
        info = get_integrator(name)
        if info.event_driven or not steps_interpreted(sim.model):
            return False
        procs = compile_in_background(sim.model, info.scheme_id)
        self._compiling.extend((name, p) for p in procs)
        return bool(procs)

    @pyqtSlot(str)
    def save_data(self, path: str) -> None:
        """Write the primary run's series: ``.h5`` (the CLI's layout) or ``.csv``.  One
        writer per output (``engine.io.outlock``): a file another process writes is
        refused in one line; the user confirmed replacing an existing file."""
        sim = self.primary
        if sim is None:
            return
        p = Path(path)
        tmp = p.with_name(f"{p.name}.{os.getpid()}.partial")
        try:
            if p.suffix.lower() in (".h5", ".hdf5"):
                from engine.io import RunWriter

                w = RunWriter(p, sim, scenario=getattr(self._request, "scenario", "")
                              if self._request else "", frames=False, keep_complete=False)
                w.close("paused" if not self._failed else "failed")
            elif p.suffix.lower() == ".csv":
                from engine.io.outlock import OutputLock

                with OutputLock(p, "RRP Studio (save data)",
                                "choose another file, or wait for it to finish"):
                    write_csv(self._runs, tmp)
                    tmp.replace(p)
            else:
                self.rejected.emit("data", f"cannot write {p.name!r}: use a .csv or .h5 file")
                return
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            self.rejected.emit("data", f"cannot write {p}: {exc.strerror or exc}")
            return
        self.saved.emit(str(p))

    @pyqtSlot()
    def shutdown(self) -> None:
        """Stop and delete the stepping timer here, in the worker's thread (a QTimer can
        only be stopped from its own thread: one still running when the thread ended was
        stopped by its destructor in the GUI thread at exit, which Qt refuses), then end
        the thread's event loop: after this, nothing of the worker runs."""
        self._halt()  # (a background compile goes on: the next start finds its kernels)
        if self._timer is not None:
            self._timer.deleteLater()  # (deleted as the thread finishes)
            self._timer = None
        self.stopped.emit()
        self.thread().quit()

    # ------------------------------------------------------------------ stepping
    def _tick(self) -> None:
        if not self.playing or not self._runs:
            return
        n = self.steps_per_tick
        if self._runs[0].sim.stepped_by == "interpreted" and self._rate[0] > 0:
            # (the twins take ms a step: fewer a tick, so that the view and a Pause
            # follow; the bits do not depend on the chunking)
            n = max(1, min(n, int(TWIN_TICK_S * 1e6 / self._rate[0])))
        self._advance(n)
        if self.playing:
            self._emit_frame()

    def _advance(self, n: int) -> None:
        with self._twins():
            self._advance_runs(n)

    def _advance_runs(self, n: int) -> None:
        t0 = time.perf_counter()
        done = events = 0
        # (a Pause may stop a run part-way, issue #33: each run goes to the same step,
        # so that the compare runs stay in lock-step)
        target = max(r.sim.step_index for r in self._runs) + n
        for r in self._runs:
            es = r.sim.integrator.event_driven  # (its events: the status bar's rate)
            e0 = r.sim.event_stats()["events"] if es else 0
            r.sim.stop_check = self._pause_asked.is_set
            try:
                rep = r.sim.advance(target - r.sim.step_index)
            except Exception as exc:  # an engine bug: pause, say so, keep the window
                self._fail(r, None, f"the engine raised {type(exc).__name__}: {exc}")
                break
            done += rep.steps
            events += r.sim.event_stats()["events"] - e0 if es else 0
            if not rep.ok:
                self._fail(r, rep.failure)
                break
        dt = time.perf_counter() - t0
        now = time.perf_counter()
        self._rate_window.append((now, done, dt, events))
        while self._rate_window and now - self._rate_window[0][0] > 1.0:
            self._rate_window.pop(0)
        steps = sum(w[1] for w in self._rate_window)
        secs = sum(w[2] for w in self._rate_window)
        if steps and secs > 0:
            span = max(now - self._rate_window[0][0], TICK_MS / 1000)
            self._rate = (1e6 * secs / steps, steps / span,
                          sum(w[3] for w in self._rate_window) / span)
            self._record_cadence()

    def _record_cadence(self) -> None:
        """Record every ``min(every, RECORD_S / step time)`` steps (:data:`RECORD_S`):
        the scenario's ``every`` where a step is fast, a row each ~0.1 s where it is
        slow, so that the plots move while the run does.  All runs alike (lock-step)."""
        us = self._rate[0]
        if us <= 0 or not self._runs:
            return
        every = max(1, min(self._every, int(RECORD_S * 1e6 / us)))
        for r in self._runs:
            r.sim.record_every = every

    def _fail(self, run: Run, failure, message: str | None = None) -> None:
        self._halt()
        self._failed = True
        who = f" ({run.sim.integrator.name})" if len(self._runs) > 1 else ""
        self._emit_frame(force=True)
        what = (failure.message if failure is not None else message or "").rstrip(".")
        fix = ("choose another ε or scheme" if failure is not None
               and failure.kind == "energy-stepping" else "lower h")
        self.failed.emit(f"{what}{who}. The run is paused at the last good state "
                         f"(t = {run.sim.t:.6g}): {fix} and press Play to go on.")
        self.state_changed.emit("failed", "paused after a failure")

    def _emit_frame(self, force: bool = False) -> None:
        """Send a frame unless the window is still drawing the last one (the series rows
        accumulate and go with the next frame)."""
        if not self._runs:
            return
        if not force and self._frame_in_flight.is_set():
            return
        sim = self._runs[0].sim
        now = time.perf_counter()
        if force or now - self._stability_at > 0.1:  # ≤ 10 estimates a second
            with self._twins():
                self._last_stability = sim.stability()
            self._stability_at = now
        s = sim.snapshot()
        new_events = sim.events[self._runs[0].sent_events:]
        self._runs[0].sent_events = len(sim.events)
        ghosts = []
        for r in self._runs[1:]:
            st = r.sim.state
            ghosts.append((st.x.copy(), st.q.copy()))
        rel = sim.relative_energy_error
        contact = None
        if getattr(sim.model, "contact", "none") == "hard":
            contact = dict(getattr(sim, "contact_stats", None) or {})
        inspect = None
        if self._inspect is not None and self._inspect < sim.model.n_bodies:
            try:
                inspect = body_report(sim.model, self._inspect, s.x, s.v, s.q, s.omega)
            except Exception as exc:  # never let the inspector stop the run
                inspect = {"index": self._inspect, "error": f"{type(exc).__name__}: {exc}"}
        fr = Frame(s.t, s.step, s.integrator, s.h, s.x, s.q, s.v, s.omega, ghosts,
                   {r.label: r.new_series() for r in self._runs}, list(new_events),
                   self._last_stability, rel if math.isfinite(rel) else math.nan,
                   self._rate[0], self._rate[1], contact, inspect, self._rate[2],
                   getattr(sim, "stage_label", str)(), sim.stepped_by,
                   tuple(self.compiling()), _stage_span(sim),
                   getattr(sim, "broken_bonds", None))
        self._frame_in_flight.set()
        self.frame.emit(fr)


def _stage_span(sim) -> tuple[int, float, float] | None:
    """``(k, t₀, t₁)`` of the simulation's current stage, ``None`` without stages."""
    k = getattr(sim, "stage_index", -1)
    return None if k < 0 else (int(k), *map(float, sim.stage_span()))
