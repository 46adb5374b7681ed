"""The public Python surface of the engine (docs/api.md): what a script needs to set up,
run, steer and record a simulation, without the CLI or the app.

>>> import engine
>>> sim = engine.run("pendulum", integrator="rrp-newmark", h=1e-2, t_end=1.0)
>>> round(sim.t, 6), sim.integrator.name
(1.0, 'rrp-newmark')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from . import priming
from .drivers import simulation_for
from .integrators.registry import INTEGRATORS, get_integrator
from .scenarios import Scenario, builtin_scenarios, load_scenario
from .simulation import Simulation, SimulationError, default_integrator


def list_scenarios() -> list[str]:
    """Names of the built-in scenarios (``assets/scenarios``)."""
    return builtin_scenarios()


def list_integrators() -> list[str]:
    """Names of the registered integrators (``engine.integrators.registry``)."""
    return list(INTEGRATORS)


def make_simulation(scenario: str | Path | Scenario, *, integrator: str | None = None,
               h: float | None = None, every: int | None = None,
               overrides: Mapping[str, Any] | None = None, frames: bool = True,
               energy_tolerance: float | None = None) -> Simulation:
    """A :class:`Simulation` of ``scenario`` (a built-in name, a ``.toml`` path or a loaded
    :class:`Scenario`) with parameter ``overrides``, the scenario's run settings unless
    given (an integrator that cannot drive the model is replaced by the model's natural
    one only when none was asked for), recording every ``every`` steps (frames of every
    body too, unless ``frames=False``)."""
    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario, overrides)
    if isinstance(scenario, Scenario) and overrides:
        sc = sc.with_overrides(overrides)
    model = sc.build_model()
    name = integrator or default_integrator(model, sc.run.integrator)
    tol = sc.run.energy_tolerance if energy_tolerance is None else energy_tolerance
    return simulation_for(model, name, sc.run.h if h is None else h,
                      record_every=sc.run.every if every is None else every,
                      record_frames=frames, energy_tolerance=tol)


def run(scenario: str | Path | Scenario, *, integrator: str | None = None,
        h: float | None = None, t_end: float | None = None, every: int | None = None,
        overrides: Mapping[str, Any] | None = None, frames: bool = True,
        out: str | Path | None = None, chunk: int = 1000,
        callback: Callable[[Simulation], bool | None] | None = None) -> Simulation:
    """Run ``scenario`` to ``t_end`` (default: the scenario's) and return the
    :class:`Simulation` (its ``series.arrays()`` hold ``t``, the energy components, ``P``,
    ``L`` and the frames as NumPy arrays).  ``callback(sim)`` is called after every
    ``chunk`` steps and may return True to stop; ``out`` writes an HDF5 run file as it
    goes (docs/output.md).  A blow-up raises :class:`SimulationError` with the engine's
    one-line message; the simulation keeps the last good state (``err.simulation``)."""
    sim = make_simulation(scenario, integrator=integrator, h=h, every=every, overrides=overrides,
                     frames=frames)
    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario, overrides)
    t_end = sc.t_end_at(sim.h) if t_end is None else float(t_end)  # (stages: #44 item 5)
    writer = None
    if out is not None:
        from .io import RunWriter

        writer = RunWriter(out, sim, scenario=sc.name)

    def step(s: Simulation) -> bool | None:
        if writer is not None:
            writer.flush()
        return callback(s) if callback is not None else None

    status, message = "complete", ""
    try:
        rep = sim.run_until(t_end, chunk=chunk, callback=step)
        if not rep.ok:
            status, message = "failed", rep.failure.message
    except KeyboardInterrupt:
        status, message = "interrupted", "interrupted by the user"
        raise
    except BaseException as exc:  # (filed as what happened, never "complete")
        status, message = "failed", f"{type(exc).__name__}: {exc}".splitlines()[0]
        raise
    finally:
        if writer is not None:
            writer.close(status, message)
    if status == "failed":
        err = SimulationError(message)
        err.simulation = sim  # type: ignore[attr-defined]
        raise err
    return sim


__all__ = ["Scenario", "Simulation", "SimulationError", "list_integrators", "list_scenarios",
           "load_scenario", "make_simulation", "run"]


def compile_run(model, integrator: str, h: float) -> str:
    """Build (or load from the cache) every kernel a run of ``integrator`` on ``model``
    calls: the simulation is made and warmed up, no step is taken.  Returns
    ``"cached"`` when the stepping loop was in the cache already, else ``"compiled"``
    (always, for an event-driven scheme: it has no stepping loop, its kernels are
    loaded or built by the warm-up); raises ``engine.simulation.SimulationError`` when
    the scheme cannot drive the model (``rrp compile``).  It sits here, above the
    driver, since issue #34: ``engine.priming`` is below ``engine.simulation``, which
    uses it."""
    info = get_integrator(integrator)
    body_model = getattr(model, "coordinates", "bodies") == "bodies" and not info.event_driven
    cached = body_model and priming.run_kernels_cached(info.scheme_id, model.forcefield.arrays[-1])
    simulation_for(model, integrator, h, record_frames=False).warm_up()
    return "cached" if cached else "compiled"
