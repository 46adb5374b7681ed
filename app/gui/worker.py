"""The simulation worker: owns the :class:`engine.simulation.Simulation` objects and runs
them in a thread of their own, so the window never waits on physics.

The window talks to it only through queued slots (``load``, ``play``, ``set_h`` …) and
listens to its signals; everything it sends is a copy (:class:`Frame`).  The compiled
kernels release the GIL (``nogil=True``), so a chunk of steps runs beside the GUI.

Compare mode: up to three runs (a primary and two others) from the same initial state,
advanced in lock-step with the same ``h``, each with its own integrator.
"""

from __future__ import annotations

import math
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PyQt6.QtCore import QObject, QTimer, pyqtSignal, pyqtSlot

from engine.diagnostics import (
    body_rotational_energy,
    model_invariant_names,
    model_invariants,
    relative_energy_error,
)
from engine.drivers import simulation_for, simulation_from_frame, simulation_from_resume_state
from engine.integrators import INTEGRATORS
from engine.layout import ENERGY_NAMES
from engine.priming import start_siblings
from engine.rotations import quat_to_matrix
from engine.scenarios import ScenarioError, load_scenario
from engine.simulation import (
    Event,
    Simulation,
    SimulationError,
    integrator_for,
    usable_integrators,
)
from engine.stability import StabilityEstimate

from .kernel_stages import priming_stages

TICK_MS = 17
"""Interval of the stepping timer: at most ~59 chunks (and frames) a second (≤ 60 Hz)."""

MAX_COMPARE = 3

PREFERRED_HARD = "moreau-symmetric"
"""The scheme taken for a hard-contact model when the one asked for cannot drive it
(second order, symmetric; the scenario's own scheme comes first if it can)."""


def choose_integrator(model: Any, wanted: str, default: str | None = None
                      ) -> tuple[str, str]:
    """``(name, note)``: ``wanted`` if it can drive ``model`` (``note`` empty); otherwise
    the scenario's ``default`` if that can, else :data:`PREFERRED_HARD` where usable, else
    the first usable scheme, with a one-line ``note`` saying why it was switched.  An
    unknown name, or a model no scheme can drive, raises :class:`SimulationError`."""
    try:
        return integrator_for(model, wanted).name, ""
    except SimulationError as exc:
        if wanted not in INTEGRATORS and wanted.split(":")[0] not in INTEGRATORS:
            raise
        reason = str(exc).split(": choose one of")[0]
    usable = usable_integrators(model)
    if not usable:
        raise SimulationError(f"no registered scheme can drive model {model.name!r}")
    if default in usable:
        alt = default
    elif PREFERRED_HARD in usable and getattr(model, "contact", "none") == "hard":
        alt = PREFERRED_HARD
    else:
        alt = usable[0]
    return alt, f"{reason}: switched to {alt}"


def scenario_t_end(scenario: str) -> float | None:
    """The end time of ``scenario`` (built-in name or .toml path), ``None`` if it cannot
    be loaded."""
    try:
        return float(load_scenario(scenario).run.t_end)
    except (ScenarioError, OSError, ValueError):
        return None


def contact_summary(stats: dict[str, float] | None) -> str:
    """The status-bar text of a hard-contact run's :attr:`Simulation.contact_stats`:
    percussions (contacts with ``P_N > 0``) / active contacts of the last step, impacts so
    far, the solver's mean and largest iteration counts (the tooltip,
    :func:`contact_details`, says it in words)."""
    if not stats:
        return ""
    solves = stats.get("solves", 0.0)
    mean = stats.get("mean", stats.get("iterations", 0.0) / solves if solves else 0.0)
    return (f"percussions {stats.get('percussions', 0):.0f}/{stats.get('contacts', 0):.0f}"
            f" · impacts {stats.get('impacts', 0):,.0f} · sweeps mean {mean:.1f} max "
            f"{stats.get('max_iterations', 0):.0f}")


def contact_details(stats: dict[str, float] | None) -> str:
    """The longer form (a tooltip): :func:`contact_summary` and the largest penetration."""
    if not stats:
        return ""
    return (f"hard contacts — last step: {stats.get('percussions', 0):.0f} percussions "
            f"(P_N > 0) of {stats.get('contacts', 0):.0f} active contacts (g_N ≤ 0); "
            f"{stats.get('impacts', 0):,.0f} contact-steps with P_N > 0 so far; "
            f"{stats.get('solves', 0):,.0f} solves, {stats.get('iterations', 0):,.0f} "
            f"iterations (largest {stats.get('max_iterations', 0):.0f}); largest "
            f"penetration −g_N = {stats.get('penetration', 0):.3g}")


def body_report(model: Any, i: int, x: np.ndarray, v: np.ndarray, q: np.ndarray,
                omega: np.ndarray) -> dict[str, Any]:
    """What the inspector shows of body ``i`` at the state ``(x, v, q, ω)``: position
    (and the drawn centre where it differs), velocity, spin, its kinetic energies
    ``½ m|v|²`` and ``½ ω·𝕁ω``, and its active contacts.

    Contacts are counted from the positions: a sphere model with contacts (penalty or
    hard) touches another sphere when their centres are closer than the sum of the radii
    and the wall when its centre is closer to the wall plane than its radius (``g_N <
    0``, the gap of both contact models); models without contacts give ``None``."""
    b = model.bodies
    R = quat_to_matrix(q[i:i + 1])[0]
    out: dict[str, Any] = {"index": int(i), "n": int(model.n_bodies), "x": x[i].copy(),
                           "v": v[i].copy(), "omega": omega[i].copy()}
    offset = np.asarray(model.draw_offset, float)
    if np.any(offset != 0):
        out["drawn"] = x[i] + R @ offset
    m = float(np.asarray(b.m)[i])
    out["e_translational"] = 0.5 * m * float(v[i] @ v[i])
    if b.spherical:
        e_rot = body_rotational_energy(b.J[i:i + 1], omega[i:i + 1])
    else:
        e_rot = body_rotational_energy(b.J[i:i + 1], omega[i:i + 1], q[i:i + 1],
                                       b.inertia[i:i + 1])
    out["e_rotational"] = float(np.asarray(e_rot).ravel()[0])
    contact = getattr(model, "contact", "none")
    if contact == "none" or getattr(model, "shape", "sphere") != "sphere":
        out["contacts"] = None
        return out
    diam = model.draw_diameter if model.draw_diameter is not None else b.D
    r = 0.5 * np.asarray(diam, float)
    c = x + np.einsum("nij,j->ni", quat_to_matrix(q), offset) if np.any(offset) else x
    d = np.linalg.norm(c - c[i], axis=1)
    touching = np.flatnonzero(d < (r + r[i]) * (1.0 - 1e-9))
    touching = touching[touching != i]
    out["neighbours"] = touching.tolist()
    wall = False
    if model.wall is not None:
        normal, x_w = model.wall
        nrm = np.asarray(normal, float) / np.linalg.norm(normal)
        wall = bool(float(nrm @ c[i]) - float(x_w) < r[i] * (1.0 - 1e-9))
    out["wall"] = wall
    out["contacts"] = len(touching) + int(wall)
    out["model"] = contact
    return out


@dataclass(frozen=True)
class LoadRequest:
    """What to build: a scenario (built-in name or path), parameter overrides, the
    primary integrator and ``h`` (``None``: the scenario's), and the integrators of the
    other runs in compare mode."""

    scenario: str
    overrides: dict[str, Any] = field(default_factory=dict)
    integrator: str | None = None
    h: float | None = None
    compare: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class BranchRequest:
    """A live run from a recorded frame (*Continue from here*): the model (built from the
    run file), the frame (:class:`engine.io.Frame`), the integrators (primary first, then
    the compare runs) and ``h``; ``energy_reference``: the recorded run's ``(E_ref,
    E_scale)`` so that the error goes on as recorded.  Reset goes back to this frame."""

    scenario: str
    model: Any
    frame: Any
    integrators: tuple[str, ...]
    h: float
    energy_reference: tuple[float, float] | None = None
    record_every: int = 1
    source: str = ""
    """The run file (its name, for the window's title)."""
    overrides: dict[str, Any] = field(default_factory=dict)

    @property
    def integrator(self) -> str:
        return self.integrators[0]

    @property
    def compare(self) -> tuple[str, ...]:
        return tuple(self.integrators[1:])


@dataclass
class Loaded:
    """Sent once a request is built: what the views need to set themselves up."""

    scenario: str
    title: str
    model: Any  # engine.models.base.Model (read-only for the views)
    params: dict[str, Any]
    integrators: list[str]  # primary first
    h: float
    energy_names: list[str]  # the components this model has (others are always zero)
    conserved: tuple[str, ...]
    stability: StabilityEstimate
    note: str = ""
    """Why a requested scheme was replaced (it cannot drive the model), or empty."""
    branch: str = ""
    """For a run started from a frame (*Continue from here*): where from, in words."""
    t_end: float | None = None
    """The scenario's end time: the window checks a new ``h`` against the steps to it, as
    ``rrp run`` does (:func:`engine.run_steps.step_count`); ``None`` where the scenario cannot be
    loaded (a recording of a moved file): ``h`` is then checked by the engine alone."""


@dataclass(frozen=True)
class Preview:
    """Sent as soon as a scenario's model is built, before its stepping kernels: the views
    draw the initial state while the worker compiles (issue #25; drawing needs only the
    attitude kernel, which the worker builds first, never the GUI thread)."""

    scenario: str
    title: str
    model: Any  # engine.models.base.Model (read-only for the views)
    integrators: list[str]  # primary first
    h: float


@dataclass
class Series:
    """New recorded rows of one run since the last frame."""

    t: np.ndarray
    energy: np.ndarray  # (n, N_ENERGY)
    total: np.ndarray
    rel_error: np.ndarray
    P: np.ndarray
    L: np.ndarray
    x: np.ndarray | None = None
    """The trailed body's (body 0's) position at each new row, ``(n, 3)``, for models
    whose view draws a trail (:func:`records_trail`); ``None`` otherwise."""
    q: np.ndarray | None = None
    """Its attitude quaternion at each new row, ``(n, 4)`` (with :attr:`x`)."""
    invariants: np.ndarray | None = None
    """The model's invariants at each new row, ``(n, k)``, for the models that have
    some (:func:`engine.diagnostics.model_invariant_names`: the pendulum); else ``None``."""
    terrace_gap: np.ndarray | None = None
    """Under an event-driven scheme (energy-stepping): ``(V − V_ε)/E_scale`` at each new
    row, in the units of :attr:`rel_error` (NaN in rows of another scheme); ``None`` when
    none of the new rows has one."""


def records_trail(model: Any) -> bool:
    """Whether the runs of ``model`` record body 0's state at every row for the view's
    trail: the models with a pivot (the pendulums: one or few bodies, so that the
    recorded frames are small; they are dropped once sent, see :meth:`_Run.new_series`)."""
    return getattr(model, "pivot", None) is not None


@dataclass
class Frame:
    """A copy of everything the views show at one instant."""

    t: float
    step: int
    integrator: str
    h: float
    x: np.ndarray
    q: np.ndarray
    v: np.ndarray
    omega: np.ndarray
    ghosts: list[tuple[np.ndarray, np.ndarray]]
    series: dict[str, Series]  # run label → new rows
    events: list[Event]
    stability: StabilityEstimate | None
    rel_error: float
    us_per_step: float
    steps_per_second: float
    contact: dict[str, float] | None = None
    """The primary run's :attr:`~engine.simulation.Simulation.contact_stats` for a
    hard-contact model (``None`` otherwise)."""
    inspect: dict[str, Any] | None = None
    """:func:`body_report` of the body the window inspects (``None``: none picked)."""
    events_per_second: float = 0.0
    """Events a second of the event-driven runs (energy-stepping), over the last second."""


class _Run:
    """One simulation and what has been sent of it."""

    def __init__(self, label: str, sim: Simulation) -> None:
        self.label = label
        self.sim = sim
        self.sent_rows = 0
        self.sent_events = 0

    def new_series(self) -> Series:
        """The rows recorded since the last call (with body 0's states when the run
        records frames for the trail: those are then released, the view keeps them)."""
        ser = self.sim.series
        a = ser.tail(self.sent_rows)
        self.sent_rows += len(a["t"])
        total = a["energy"].sum(axis=1)
        rel = relative_energy_error(total, self.sim.e_ref, self.sim.e_scale)
        x = q = inv = None
        if ser.frames and len(a["x"]) == len(a["t"]):
            x, q = a["x"][:, 0].copy(), a["q"][:, 0].copy()
            ff = self.sim.model.forcefield
            if model_invariant_names(ff):
                inv = model_invariants(ff, q, a["omega"][:, 0])
            ser.release_frames()
        gap = a.get("terrace_gap")
        if gap is not None:
            gap = gap / self.sim.e_scale
        return Series(a["t"], a["energy"], total, rel, a["P"], a["L"], x, q, inv, gap)


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
        self._runs: list[_Run] = []
        self._request: LoadRequest | None = None
        self._timer: QTimer | None = None
        self.steps_per_tick = 20
        self.playing = False
        self._failed = False
        self._frame_in_flight = threading.Event()  # set while the GUI draws a frame
        self._last_stability: StabilityEstimate | None = None
        self._stability_at = -1.0
        self._rate = (0.0, 0.0, 0.0)  # µs/step, steps/s, events/s over the last second
        self._rate_window: list[tuple[float, int, float, int]] = []
        self._inspect: int | None = None
        self._siblings: list = []  # processes building kernels (engine.priming)

    # ------------------------------------------------------------------ helpers
    @property
    def primary(self) -> Simulation | None:
        return self._runs[0].sim if self._runs else None

    def frame_done(self) -> None:
        """Called (from any thread) by the window when it has drawn a frame."""
        self._frame_in_flight.clear()

    def _ensure_timer(self) -> QTimer:
        if self._timer is None:
            self._timer = QTimer(self)
            self._timer.setInterval(TICK_MS)
            self._timer.timeout.connect(self._tick)
        return self._timer

    # ------------------------------------------------------------------ slots
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
            runs, note = self._build(req)
        except (ScenarioError, SimulationError, ValueError) as exc:
            self.rejected.emit("scenario", str(exc))
            self.state_changed.emit("paused" if self._runs else "idle",
                                    "scenario not loaded")
            return
        except Exception as exc:  # an engine bug must not take the window down
            self.rejected.emit("scenario", f"cannot build {req.scenario!r}: "
                               f"{type(exc).__name__}: {exc}")
            self.state_changed.emit("paused" if self._runs else "idle",
                                    "scenario not loaded")
            return
        self._install(runs, req, note)

    def _install(self, runs: list[_Run], req, note: str, branch: str = "") -> None:
        """Make ``runs`` the current runs (of request ``req``) and tell the window."""
        self._runs = runs
        self._request = req
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
            model = req.model
            names, note = self._schemes(model, req.integrators[0], req.integrators[1:])
            runs = []
            for name in names:
                sim = simulation_from_frame(model, req.frame, name, req.h, keep_clock=True,
                                            energy_reference=req.energy_reference,
                                            record_every=req.record_every,
                                            record_frames=records_trail(model))
                sim.warm_up()
                runs.append(_Run(name if len(names) > 1 else "energy", sim))
            self._label(runs)
        except Exception as exc:  # (SimulationError and ValueError mostly: one line)
            text = str(exc) if isinstance(exc, SimulationError | ValueError) \
                else f"{type(exc).__name__}: {exc}"
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
            model = sim.model
            names, note = self._schemes(model, integrators[0], integrators[1:])
            d = sim.resume_state()
            runs = []
            for name in names:
                s = simulation_from_resume_state(model, d,
                                                record_frames=records_trail(model))
                try:
                    if s.integrator.name != name:
                        s.set_integrator(name)
                    if s.h != h:
                        s.set_h(h)
                except SimulationError:  # a new scheme may need the new step first
                    s = simulation_from_resume_state(model, d,
                                                record_frames=records_trail(model))
                    if s.h != h:
                        s.set_h(h)
                    if s.integrator.name != name:
                        s.set_integrator(name)
                s.warm_up()
                runs.append(_Run(name if len(names) > 1 else "energy", s))
            self._label(runs)
        except Exception as exc:
            text = str(exc) if isinstance(exc, SimulationError | ValueError) \
                else f"{type(exc).__name__}: {exc}"
            self.rejected.emit("branch", f"cannot continue from here: {text}")
            return
        req = self._request
        self._install(runs, req, note, f"from the live run at t = {sim.t:.6g}")

    def _schemes(self, model: Any, primary: str, compare) -> tuple[list[str], str]:
        integ, note = choose_integrator(model, primary)
        names = [integ]
        for c in compare:
            if not c:
                continue
            try:
                names.append(integrator_for(model, c).name)
            except SimulationError:
                note = "; ".join(filter(None, (note, f"compare run {c} left out: it cannot "
                                               f"drive model {model.name!r}")))
        return names[:MAX_COMPARE], note

    @staticmethod
    def _label(runs: list[_Run]) -> None:
        if len(runs) > 1:  # the same integrator twice still needs distinct labels
            seen: dict[str, int] = {}
            for r in runs:
                seen[r.label] = seen.get(r.label, 0) + 1
                if seen[r.label] > 1:
                    r.label = f"{r.label} ({seen[r.label]})"

    def _build(self, req: LoadRequest) -> tuple[list[_Run], str]:
        """The runs of ``req`` and a note: a scheme that cannot drive the model (say the
        contact model was switched to hard) is replaced by one that can
        (:func:`choose_integrator`), a compare scheme that cannot is left out."""
        sc = load_scenario(req.scenario, req.overrides or None)
        model = sc.build_model()
        integ, note = choose_integrator(model, req.integrator or sc.run.integrator,
                                        sc.run.integrator)
        h = sc.run.h if req.h is None else req.h
        compare = []
        for c in req.compare:
            if not c:
                continue
            try:
                compare.append(integrator_for(model, c).name)
            except SimulationError:
                note = "; ".join(filter(None, (note, f"compare run {c} left out: it cannot "
                                               f"drive model {model.name!r}")))
        names = [integ, *compare][:MAX_COMPARE]
        quat_to_matrix(model.initial_state.q[:1])  # (the view's attitude kernel: built
        self.preview.emit(Preview(req.scenario, model.title, model, names, h))  # here)
        # (after the preview: on a cold cache, finding that the loop is not cached takes
        # seconds, which kept the initial state off the screen: issue #33 item 8)
        self._start_siblings(model, names[0])
        runs = []
        # on a cold cache, one step per kernel group (issue #33 item 8); then the runs
        priming = priming_stages(model, names)
        n = len(priming) + (len(names) + 1 if not priming else len(names))
        for k, (what, build) in enumerate(priming):
            self._stage(k + 1, n, what)
            build()
        base = len(priming) + (not priming)
        for k, name in enumerate(names):
            if k == 0 and not priming:
                self._stage(1, n, f"the forces of {model.title}")
            elif priming:
                self._stage(base + k + 1, n, f"the {name} run, from the kernels built")
            try:
                sim = simulation_for(model, name, h, record_every=sc.run.every,
                                 record_frames=records_trail(model),
                                 energy_tolerance=sc.run.energy_tolerance)
            except SimulationError as exc:  # (a scheme the registry offers, refused when
                # the simulation is made: e.g. a stepper that cannot start from the state)
                reason = str(exc).split(": choose one of")[0]
                if k > 0:
                    note = "; ".join(filter(None, (note, f"compare run {name} left out: "
                                                   f"{reason}")))
                    continue
                alt, _ = choose_integrator(model, sc.run.integrator, sc.run.integrator)
                if alt == name:
                    raise
                note = "; ".join(filter(None, (note, f"{reason}: switched to {alt}")))
                name = alt
                sim = simulation_for(model, name, h, record_every=sc.run.every,
                                 record_frames=records_trail(model),
                                 energy_tolerance=sc.run.energy_tolerance)
            if not priming:
                self._stage(k + 2, n, f"the {name} step")
            sim.warm_up()
            runs.append(_Run(name if len(names) > 1 else "energy", sim))
        self._label(runs)
        return runs, note

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
        self._ensure_timer().start()
        self.state_changed.emit("running", "running")

    @pyqtSlot()
    def pause(self) -> None:
        was = self.playing
        self.playing = False
        for proc in self._siblings:  # (a compile for a cache nobody will read now)
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        self._siblings = []
        if self._timer is not None:
            self._timer.stop()
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
            sim.check_integrator(name)
            if not sim.kernels_cached(name):  # first use: seconds, said with a busy bar
                text = f"compiling {name} (first use)…"
                self.progress.emit(0, 0, text)
                self.state_changed.emit("compiling", text)
                self._start_siblings(sim.model, name)
                sim.build_kernels(name)
                self.state_changed.emit("running" if self.playing else "paused",
                                        f"{name} ready")
            sim.set_integrator(name)
        except SimulationError as exc:
            self.rejected.emit("integrator", str(exc))
            return
        self._failed = False
        self.accepted.emit("integrator", sim.integrator.name)
        self._emit_frame(force=True)

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
                    self._write_csv(tmp)
                    tmp.replace(p)
            else:
                self.rejected.emit("data", f"cannot write {p.name!r}: use a .csv or .h5 file")
                return
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            self.rejected.emit("data", f"cannot write {p}: {exc.strerror or exc}")
            return
        self.saved.emit(str(p))

    def _write_csv(self, path: Path) -> None:
        cols, names = [], []
        for r in self._runs:
            a = r.sim.series.arrays()
            total = a["energy"].sum(axis=1)
            pre = "" if len(self._runs) == 1 else f"{r.sim.integrator.name}:"
            if not cols:
                cols.append(a["t"])
                names.append("t")
            n = min(len(cols[0]), len(total))
            cols = [c[:n] for c in cols]
            for k, en in enumerate(ENERGY_NAMES):
                cols.append(a["energy"][:n, k])
                names.append(f"{pre}E_{en}")
            cols.append(total[:n])
            names.append(f"{pre}E_total")
            cols.append(relative_energy_error(total[:n], r.sim.e_ref, r.sim.e_scale))
            names.append(f"{pre}E_relative_error")
            for k, c in enumerate("xyz"):
                cols.append(a["P"][:n, k])
                names.append(f"{pre}P_{c}")
            for k, c in enumerate("xyz"):
                cols.append(a["L"][:n, k])
                names.append(f"{pre}L_{c}")
            if "terrace_gap" in a:  # (energy-stepping: V − V_ε; NaN under other schemes)
                cols.append(a["terrace_gap"][:n])
                names.append(f"{pre}terrace_gap")
        n = min(len(c) for c in cols)
        data = np.column_stack([c[:n] for c in cols])
        np.savetxt(path, data, delimiter=",", header=",".join(names), comments="",
                   fmt="%.17g")

    @pyqtSlot()
    def shutdown(self) -> None:
        """Stop and delete the stepping timer here, in the worker's thread (a QTimer can
        only be stopped from its own thread: one still running when the thread ended was
        stopped by its destructor in the GUI thread at exit, which Qt refuses), then end
        the thread's event loop: after this, nothing of the worker runs."""
        self.playing = False
        for proc in self._siblings:  # (a compile for a cache nobody will read now)
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        self._siblings = []
        if self._timer is not None:
            self._timer.stop()
            self._timer.deleteLater()  # (deleted as the thread finishes)
            self._timer = None
        self.stopped.emit()
        self.thread().quit()

    # ------------------------------------------------------------------ stepping
    def _tick(self) -> None:
        if not self.playing or not self._runs:
            return
        self._advance(self.steps_per_tick)
        if self.playing:
            self._emit_frame()

    def _advance(self, n: int) -> None:
        t0 = time.perf_counter()
        done = events = 0
        for r in self._runs:
            es = r.sim.integrator.event_driven  # (its events: the status bar's rate)
            e0 = r.sim.event_stats()["events"] if es else 0
            try:
                rep = r.sim.advance(n)
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

    def _fail(self, run: _Run, failure, message: str | None = None) -> None:
        self.playing = False
        for proc in self._siblings:  # (a compile for a cache nobody will read now)
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        self._siblings = []
        if self._timer is not None:
            self._timer.stop()
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
                   self._rate[0], self._rate[1], contact, inspect, self._rate[2])
        self._frame_in_flight.set()
        self.frame.emit(fr)
