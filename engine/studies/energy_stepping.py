"""The data behind the energy-stepping figures of ``rrp figures`` (issue #28; the scheme:
docs/physics.md §3.10, Gonzalez, Schmidt & Ortiz, IJNME 82 (2010) 205–241).

Every energy-stepping run goes through the public :class:`engine.energy_stepping.
EnergyStepper` (``advance_to`` each record: the state is sampled exactly on the free
flights), so the same code runs any model the stepper drives.  ``ε`` is given relative
to the start's energy scale (``REL``, as ``energy-stepping:REL`` in the registry) and
turned into energy units by :func:`engine.energy_stepping.absolute_eps`.

* :func:`long_energy` — ``|E − E₀|/|E₀|`` over ``t = 10⁴`` beside ``rrp-exact`` and
  ``yoshida4:rrp-exact`` at the steps that give the same max energy error, and ``T + V_ε``
  (constant to round-off);
* :func:`convergence` — the max attitude and ``Ω`` errors on ``t ≤ 10`` against a fine
  reference as ``ε → 0``, with the fitted order;
* :func:`self_chosen_steps` — the time between consecutive events (the steps the scheme
  chooses), e.g. through the torus impact;
* :func:`cost_study` — per ``REL``: max energy error, events and seconds per simulated
  second; per ``h`` of a baseline scheme the same; the baseline's cost interpolated at
  energy-stepping's max energy error (:func:`equal_error_costs`).

:func:`compute` runs them all (:class:`EnergySteppingConfig`); ``.figures_energy_stepping``
draws them, ``.report`` writes their rows.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..energy_stepping import EnergyStepper, absolute_eps
from ..models.base import Model
from ..scenarios import load_scenario
from ..simulation import Simulation
from .norms import relative_rotation_angle
from .reference import reference_run
from .runs import stopwatch

STEP_FACTORS = (32, 16, 8, 4, 2, 1, 0.5, 0.25, 0.125)
"""Default baseline steps of the cost study: these multiples of the scenario's ``h``."""


@dataclass(frozen=True)
class EnergySteppingConfig:
    """Sizes of every energy-stepping study (``quick``: shorter runs, fewer ``ε``)."""

    quick: bool = True
    scenario: str = "pendulum"
    # the long run: energy error vs t
    long_rel: float = 1e-4
    long_t: float = 1e4
    long_dt: float = 0.05
    long_schemes: tuple[str, ...] = ("rrp-exact", "yoshida4:rrp-exact")
    match_t: float = 100.0
    """Length of the probe runs that choose each scheme's ``h`` (equal max energy error)."""
    # convergence as ε → 0
    conv_rels: tuple[float, ...] = (1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5, 3e-6, 1e-6)
    conv_t: float = 10.0
    conv_dt: float = 0.01
    ref_integrator: str = "yoshida4:rrp-exact"
    ref_h: float = 1e-3
    # the self-chosen steps
    steps_scenario: str = "torus"
    steps_rel: float = 1e-4
    steps_t: float = 10.0
    steps_keep: int = 2_000_000
    # accuracy / cost curve and the baseline at equal max energy error
    cost_rels: tuple[float, ...] = (1e-2, 1e-3, 1e-4, 1e-5, 1e-6)
    cost_baseline: str = "rrp-newmark"
    cost_hs: tuple[float, ...] = ()
    """Steps of the baseline; empty: the scenario's own ``h`` × :data:`STEP_FACTORS`."""
    cost_t: float = 100.0
    cost_dt: float = 0.01
    cost_repeat: int = 1
    # the same on a many-body model: the torus through its impact
    many_scenario: str = "torus"
    many_rels: tuple[float, ...] = (1e-2, 1e-3, 1e-4)
    many_hs: tuple[float, ...] = (0.003, 0.002, 0.001, 0.0005, 0.00025)
    """(``rrp-newmark``'s stability limit on the torus is h ≈ 0.0039.)"""
    many_t: float = 10.0


def config(quick: bool = True, **changes: Any) -> EnergySteppingConfig:
    """The quick (``rrp figures --quick``) or the full configuration."""
    base = EnergySteppingConfig(quick=True, long_t=1e3, conv_rels=(
        1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5), cost_rels=(1e-2, 1e-3, 1e-4, 1e-5),
        cost_t=50.0, steps_t=5.0, many_rels=(1e-2, 1e-3), many_hs=(0.002, 0.001, 0.0005),
        many_t=2.0) if quick else EnergySteppingConfig(quick=False,
                                                                    cost_repeat=3)
    return replace(base, **changes)


# --------------------------------------------------------------------------------------
# single runs
# --------------------------------------------------------------------------------------


def start_energy(model: Model) -> tuple[float, float]:
    """``(E₀, energy scale)`` of the model's start, as the simulation computes them
    (``engine.diagnostics.energy_scale``: ``|E₀|`` unless the total nearly cancels)."""
    sim = Simulation(model, "rrp-newmark", 1e-3, record_frames=False, energy_tolerance=None)
    return sim.e_ref, sim.e_scale


@dataclass
class StepperRun:
    """Records of one energy-stepping run at ``t_j = j dt`` (sampled on the flights)."""

    scenario: str
    rel: float
    eps: float
    """Absolute terrace height (energy units)."""
    e_scale: float
    t: np.ndarray
    energy_error: np.ndarray
    """``(E − E₀)/scale`` with ``E = T + V`` (``E_ε`` plus the terrace gap)."""
    energy_eps_error: np.ndarray
    """``(T + V_ε − E_ε(0))/scale``: round-off."""
    events: np.ndarray
    """Events since the start, at each record."""
    n_terms: int
    n_reflections: int
    wall_seconds: float
    q: np.ndarray | None = None
    omega: np.ndarray | None = None
    x: np.ndarray | None = None
    flight_times: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @property
    def n_events(self) -> int:
        return int(self.events[-1])

    @property
    def max_energy_error(self) -> float:
        return float(np.max(np.abs(self.energy_error)))


def stepper_run(model: Model, rel: float, t_end: float, dt: float, *, states: bool = True,
                keep_steps: int = 0, scenario: str = "") -> StepperRun:
    """Energy-stepping of ``model`` from its start with ``ε = rel × energy scale`` to
    ``t_end``, recorded every ``dt`` (``states``: keep ``q, Ω, x``).  The wall time
    includes the records (one ``advance_to`` and the energy per record)."""
    _, scale = start_energy(model)
    eps = absolute_eps(rel, scale)
    n = int(math.floor(t_end / dt + 1e-9))
    t = np.arange(n + 1) * dt
    es = EnergyStepper(model, eps, model.initial_state, keep_steps=keep_steps)
    e_eps0, gap0 = es.energy_eps(), es.terrace_gap()
    de = np.zeros(n + 1)
    de_eps = np.zeros(n + 1)
    ev = np.zeros(n + 1, dtype=np.int64)
    ev[0] = es.n_events
    keep = []

    def grab() -> None:
        if states:
            x, _, q, om = es.state_arrays()
            keep.append((x.copy(), q.copy(), om.copy()))

    grab()
    w0 = time.perf_counter()
    for j in range(1, n + 1):
        es.advance_to(t[j])
        e_eps, gap = es.energy_eps(), es.terrace_gap()
        de_eps[j] = e_eps - e_eps0
        de[j] = de_eps[j] + (gap - gap0)
        ev[j] = es.n_events
        grab()
    wall = time.perf_counter() - w0
    run = StepperRun(scenario or model.name, float(rel), eps, scale, t, de / scale,
                     de_eps / scale, ev, int(es.n_terms), int(es.n_reflections), wall,
                     flight_times=es.flight_times)
    if states:
        run.x, run.q, run.omega = (np.stack([k[i] for k in keep]) for i in range(3))
    return run


MIN_TIMED = 0.1
"""Shortest timed run (seconds): a faster one is repeated over a longer interval."""


def _seconds_per_time(run: Callable[[float], float], t_end: float, repeat: int) -> float:
    """Best of ``repeat`` of ``run(t) / t`` (``run`` returns the wall seconds of a fresh run
    to ``t``), with ``t ≥ t_end`` long enough that one run takes ``MIN_TIMED``."""
    t = float(t_end)
    sec = run(t)
    while sec < MIN_TIMED and t < 1e3 * t_end:
        t *= min(100.0, max(2.0, 1.5 * MIN_TIMED / max(sec, 1e-9)))
        sec = run(t)
    best = sec / t
    for _ in range(max(1, repeat) - 1):
        best = min(best, run(t) / t)
    return best


def stepper_seconds_per_time(model: Model, rel: float, t_end: float,
                             repeat: int = 1) -> float:
    """Wall seconds per simulated second of energy-stepping (a fresh stepper advanced in
    one ``advance_to``, no records: the cost of the events alone), best of ``repeat``."""
    _, scale = start_energy(model)
    eps = absolute_eps(rel, scale)

    def run(t: float) -> float:
        es = EnergyStepper(model, eps, model.initial_state)
        w0 = time.perf_counter()
        es.advance_to(t)
        return time.perf_counter() - w0

    return _seconds_per_time(run, t_end, repeat)


@dataclass
class SchemeRun:
    """A fixed-step run through :class:`engine.simulation.Simulation`."""

    integrator: str
    h: float
    t: np.ndarray
    energy_error: np.ndarray
    """``(E − E₀)/scale`` at each record."""
    wall_seconds: float
    ok: bool
    q: np.ndarray | None = None
    omega: np.ndarray | None = None

    @property
    def max_energy_error(self) -> float:
        return float(np.max(np.abs(self.energy_error)))


def scheme_run(model: Model, integrator: str, h: float, t_end: float, dt: float, *,
               frames: bool = False) -> SchemeRun:
    """``integrator`` at step ``h`` to ``t_end``, a record every ``round(dt/h)`` steps."""
    every = max(1, int(round(dt / h)))
    sim = Simulation(model, integrator, h, record_every=every, record_frames=frames,
                     energy_tolerance=None)
    w0 = time.perf_counter()
    rep = sim.run_until(t_end, chunk=200_000)
    wall = time.perf_counter() - w0
    a = sim.series.arrays()
    err = (a["energy"].sum(axis=1) - sim.e_ref) / sim.e_scale
    return SchemeRun(integrator, h, a["t"], err, wall, rep.ok,
                     a["q"] if frames else None, a["omega"] if frames else None)


def scheme_seconds_per_time(model: Model, integrator: str, h: float, t_end: float,
                            repeat: int = 1) -> float:
    """Wall seconds per simulated second of a fixed-step scheme (one record, at the
    start: the cost of the steps alone), best of ``repeat``."""
    def run(t: float) -> float:
        n = int(math.ceil(t / h - 1e-9))
        sim = Simulation(model, integrator, h, record_every=n + 1, record_frames=False,
                         energy_tolerance=None)
        w0 = time.perf_counter()
        sim.advance(n)
        return time.perf_counter() - w0

    return _seconds_per_time(run, t_end, repeat)


def matching_step(model: Model, integrator: str, target: float, t_end: float, dt: float,
                  h0: float) -> tuple[float, float]:
    """The step ``h`` at which ``integrator``'s max relative energy error over
    ``[0, t_end]`` is ``target``: probes at ``h0`` and ``h0/2`` give the local order
    ``p``, then two corrections ``h ← h (target/e(h))^{1/p}``.  Returns ``(h, e(h))``
    with ``h`` rounded to three digits."""
    def err(h: float) -> float:
        return scheme_run(model, integrator, h, t_end, min(dt, h)).max_energy_error

    e1, e2 = err(h0), err(h0 / 2)
    p = math.log2(e1 / e2) if e1 > 0 and e2 > 0 and e1 != e2 else 2.0
    p = min(max(p, 0.5), 8.0)
    h, e = h0, e1
    for _ in range(2):
        h = float(f"{h * (target / e) ** (1.0 / p):.3g}")
        e = err(h)
    return h, e


# --------------------------------------------------------------------------------------
# studies
# --------------------------------------------------------------------------------------


@dataclass
class LongEnergy:
    es: StepperRun
    schemes: dict[str, SchemeRun]
    match_t: float


def long_energy(cfg: EnergySteppingConfig) -> LongEnergy:
    """Energy-stepping at ``long_rel`` over ``long_t``, and each of ``long_schemes`` at the
    step whose max energy error on ``[0, match_t]`` equals energy-stepping's over the whole
    run (so the figure compares errors of the same size: their shape and drift)."""
    model = load_scenario(cfg.scenario).build_model()
    es = stepper_run(model, cfg.long_rel, cfg.long_t, cfg.long_dt, states=False,
                     scenario=cfg.scenario)
    target = es.max_energy_error
    h0 = load_scenario(cfg.scenario).run.h
    runs = {}
    for name in cfg.long_schemes:
        h, _ = matching_step(model, name, target, cfg.match_t, cfg.long_dt, h0)
        runs[name] = scheme_run(model, name, h, cfg.long_t, cfg.long_dt)
    return LongEnergy(es, runs, cfg.match_t)


def fitted_order(x: Sequence[float], y: Sequence[float]) -> float:
    """Least-squares slope of ``log y`` against ``log x`` (nan with fewer than 2 points)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = (x > 0) & (y > 0) & np.isfinite(y)
    if ok.sum() < 2:
        return math.nan
    return float(np.polyfit(np.log(x[ok]), np.log(y[ok]), 1)[0])


@dataclass
class Convergence:
    rels: np.ndarray
    eps: np.ndarray
    attitude: np.ndarray
    """Max over ``t ≤ t_end`` of ``|log(R Rᵣₑ𝒻ᵀ)|`` (rad)."""
    omega: np.ndarray
    """Max over ``t ≤ t_end`` of ``|Ω − Ωᵣₑ𝒻|`` (rad/s)."""
    events: np.ndarray
    t_end: float
    ref_integrator: str
    ref_h: float
    ref_error: float
    """Max attitude/``Ω`` difference between the reference and the same scheme at
    ``2 h_ref``: an upper bound on the reference's own error."""

    @property
    def error(self) -> np.ndarray:
        return np.maximum(self.attitude, self.omega)

    @property
    def order(self) -> float:
        return fitted_order(self.eps, self.error)

    def pairwise_orders(self) -> np.ndarray:
        e = self.error
        return np.log(e[1:] / e[:-1]) / np.log(self.eps[1:] / self.eps[:-1])


def trajectory_errors(q: np.ndarray, omega: np.ndarray, q_ref: np.ndarray,
                      omega_ref: np.ndarray) -> tuple[float, float]:
    """Max attitude angle ``|log(R R_refᵀ)|`` and max ``|Ω − Ω_ref|`` over the records and
    bodies (arrays ``(n, N, ·)``, the same instants)."""
    n = min(len(q), len(q_ref))
    ang = relative_rotation_angle(q[:n], q_ref[:n])
    dom = np.linalg.norm(omega[:n] - omega_ref[:n], axis=-1)
    return float(np.max(ang)), float(np.max(dom))


def convergence(cfg: EnergySteppingConfig, cache: str | None = None) -> Convergence:
    """The trajectory error on ``t ≤ conv_t`` against ``ref_integrator`` at ``ref_h`` (a
    disk-cached reference), for each ``REL`` of ``conv_rels``."""
    model = load_scenario(cfg.scenario).build_model()
    ref = reference_run(cfg.scenario, {}, cfg.ref_integrator, cfg.ref_h, cfg.conv_t,
                        cfg.conv_dt, cache=cache)
    coarse = reference_run(cfg.scenario, {}, cfg.ref_integrator, 2 * cfg.ref_h, cfg.conv_t,
                           cfg.conv_dt, cache=cache)
    ref_err = max(trajectory_errors(coarse.q, coarse.omega, ref.q, ref.omega))
    att, om, ev, eps = [], [], [], []
    for rel in cfg.conv_rels:
        r = stepper_run(model, rel, cfg.conv_t, cfg.conv_dt, scenario=cfg.scenario)
        if len(r.t) != len(ref.t):
            raise ValueError(f"records differ: {len(r.t)} against the reference's "
                             f"{len(ref.t)}")
        a, o = trajectory_errors(r.q, r.omega, ref.q, ref.omega)
        att.append(a)
        om.append(o)
        ev.append(r.n_events)
        eps.append(r.eps)
    return Convergence(np.array(cfg.conv_rels, float), np.array(eps), np.array(att),
                       np.array(om), np.array(ev), cfg.conv_t, cfg.ref_integrator,
                       cfg.ref_h, ref_err)


@dataclass
class StepSizes:
    """The steps energy-stepping chose on one run (time between consecutive events)."""

    scenario: str
    rel: float
    eps: float
    t_end: float
    flight_times: np.ndarray
    n_events: int
    n_terms: int
    t_windows: np.ndarray
    """Ends of the windows of :attr:`rate`."""
    rate: np.ndarray
    """Events per unit time in each window."""
    h_default: float
    """The scenario's own step (its default fixed-step scheme)."""
    integrator_default: str
    h_stable: float
    """The explicit schemes' stability limit at the start (``2/ω_max``)."""

    @property
    def event_times(self) -> np.ndarray:
        return np.cumsum(self.flight_times)

    @property
    def complete(self) -> bool:
        """All steps kept (not only the first ``keep_steps``)."""
        return len(self.flight_times) >= self.n_events - 1


def self_chosen_steps(scenario: str, rel: float, t_end: float, keep_steps: int,
                      windows: int = 200) -> StepSizes:
    """Energy-stepping of ``scenario`` (its default parameters) to ``t_end`` keeping the
    first ``keep_steps`` self-chosen steps, and the events per unit time in ``windows``
    windows.  Raises :class:`EnergySteppingError` for a model the stepper cannot drive."""
    sc = load_scenario(scenario)
    model = sc.build_model()
    _, scale = start_energy(model)
    eps = absolute_eps(rel, scale)
    es = EnergyStepper(model, eps, model.initial_state, keep_steps=keep_steps)
    tw = np.linspace(0.0, t_end, windows + 1)[1:]
    counts = np.zeros(windows)
    last = es.n_events
    for k, t in enumerate(tw):
        es.advance_to(t)
        counts[k] = es.n_events - last
        last = es.n_events
    sim = Simulation(model, sc.run.integrator, sc.run.h, record_frames=False)
    return StepSizes(sc.name, float(rel), eps, float(t_end), es.flight_times, es.n_events,
                     int(es.n_terms), tw, counts / (t_end / windows), sc.run.h,
                     sc.run.integrator, float(sim.stability().h_stable))


@dataclass
class CostStudy:
    """Accuracy and cost of energy-stepping per ``REL`` and of a baseline per ``h``."""

    scenario: str
    t_end: float
    repeat: int
    es_rows: list[dict]
    """``rel, eps, max_error, events_per_time, reflections, seconds_per_time,
    us_per_event``."""
    baseline: str
    base_rows: list[dict]
    """``h, max_error, steps_per_time, seconds_per_time, us_per_step``."""
    h_default: float = math.nan
    """The scenario's own step."""

    def default_row(self) -> dict | None:
        """The baseline row nearest the scenario's own step."""
        rows = [r for r in self.base_rows if math.isfinite(r["max_error"])]
        if not rows or not self.h_default > 0:
            return None
        return min(rows, key=lambda r: abs(math.log(r["h"] / self.h_default)))

    def equal_error(self) -> list[dict]:
        return equal_error_costs(self.es_rows, self.base_rows)


def baseline_steps(scenario: str) -> list[float]:
    """The scenario's own ``h`` × :data:`STEP_FACTORS`."""
    h0 = load_scenario(scenario).run.h
    return [h0 * f for f in STEP_FACTORS]


def cost_study(scenario: str, rels: Sequence[float], baseline: str, hs: Sequence[float],
               t_end: float, dt: float, repeat: int = 1,
               log: Callable[[str], None] | None = None) -> CostStudy:
    """Per ``REL``: the max relative energy error (records every ``dt``), events per unit
    time, and the best of ``repeat`` wall times per simulated second (a run without
    records, lengthened until it takes ``MIN_TIMED``); per ``h`` of ``baseline``: the
    same with steps (``hs`` empty: :func:`baseline_steps`)."""
    say = log or (lambda msg: None)
    model = load_scenario(scenario).build_model()
    hs = list(hs) or baseline_steps(scenario)
    es_rows = []
    for rel in rels:
        r = stepper_run(model, rel, t_end, dt, states=False, scenario=scenario)
        spt = stepper_seconds_per_time(model, rel, t_end, repeat)
        rate = r.n_events / t_end
        es_rows.append({"rel": float(rel), "eps": r.eps, "max_error": r.max_energy_error,
                        "events_per_time": rate, "reflections": r.n_reflections,
                        "seconds_per_time": spt, "us_per_event": 1e6 * spt / max(rate, 1e-300)})
        say(f"    energy-stepping REL = {rel:g}: {r.n_events} events, "
            f"{spt * 1e3:.3g} ms per simulated second")
    base_rows = []
    for h in hs:
        r = scheme_run(model, baseline, h, t_end, min(dt, h))
        spt = scheme_seconds_per_time(model, baseline, h, t_end, repeat)
        base_rows.append({"h": float(h), "max_error": r.max_energy_error if r.ok else math.nan,
                          "steps_per_time": 1.0 / h, "seconds_per_time": spt,
                          "us_per_step": 1e6 * spt * h})
        say(f"    {baseline} h = {h:g}: {spt * 1e3:.3g} ms per simulated second")
    return CostStudy(scenario, float(t_end), int(repeat), es_rows, baseline, base_rows,
                     load_scenario(scenario).run.h)


def equal_error_costs(es_rows: Sequence[dict], base_rows: Sequence[dict]) -> list[dict]:
    """For each energy-stepping row, the baseline's seconds per simulated second at the
    same max energy error: linear in ``log cost`` against ``log error`` between the two
    baseline rows that bracket it, or along the nearest two beyond the range
    (``extrapolated``)."""
    pts = sorted((r["max_error"], r["seconds_per_time"]) for r in base_rows
                 if r["max_error"] > 0 and math.isfinite(r["max_error"]))
    out = []
    for r in es_rows:
        e = r["max_error"]
        if len(pts) < 2 or not e > 0:
            cost, extra = math.nan, True
        else:
            le = np.log([p[0] for p in pts])
            lc = np.log([p[1] for p in pts])
            x = math.log(e)
            k = int(np.clip(np.searchsorted(le, x), 1, len(pts) - 1))
            s = (lc[k] - lc[k - 1]) / (le[k] - le[k - 1])
            cost = float(math.exp(lc[k - 1] + s * (x - le[k - 1])))
            extra = not (le[0] <= x <= le[-1])
        out.append({"rel": r["rel"], "max_error": e, "es_seconds_per_time":
                    r["seconds_per_time"], "base_seconds_per_time": cost,
                    "ratio": r["seconds_per_time"] / cost if cost > 0 else math.nan,
                    "extrapolated": extra})
    return out


# --------------------------------------------------------------------------------------
# everything
# --------------------------------------------------------------------------------------


@dataclass
class EnergySteppingData:
    cfg: EnergySteppingConfig
    long: LongEnergy | None = None
    convergence: Convergence | None = None
    steps: StepSizes | None = None
    cost: CostStudy | None = None
    cost_many: CostStudy | None = None
    """The cost study on ``many_scenario`` (the torus)."""
    seconds: dict[str, float] = field(default_factory=dict)


def compute(cfg: EnergySteppingConfig, cache: str | None = None,
            log: Callable[[str], None] | None = None) -> EnergySteppingData:
    """Every energy-stepping study behind the figures and the report."""
    say = log or (lambda msg: None)
    d = EnergySteppingData(cfg)
    timed = stopwatch(d.seconds, say)

    d.long = timed(f"energy-stepping: energy error to t = {cfg.long_t:g}",
                   lambda: long_energy(cfg))
    d.convergence = timed("energy-stepping: convergence as ε → 0",
                          lambda: convergence(cfg, cache))
    d.steps = timed("energy-stepping: self-chosen steps", lambda: self_chosen_steps(
        cfg.steps_scenario, cfg.steps_rel, cfg.steps_t, cfg.steps_keep))
    d.cost = timed(f"energy-stepping: accuracy and cost against {cfg.cost_baseline}",
                   lambda: cost_study(cfg.scenario, cfg.cost_rels, cfg.cost_baseline,
                                      cfg.cost_hs, cfg.cost_t, cfg.cost_dt,
                                      cfg.cost_repeat, log=say))
    d.cost_many = timed(f"energy-stepping: cost against {cfg.cost_baseline} on "
                        f"{cfg.many_scenario}",
                        lambda: cost_study(cfg.many_scenario, cfg.many_rels,
                                           cfg.cost_baseline, cfg.many_hs, cfg.many_t,
                                           cfg.cost_dt, cfg.cost_repeat, log=say))
    return d
