"""The simulation driver of models of rigid bodies, :class:`Simulation`, and what it
reports.  A package since issue #34; its parts, each imported by the ones after it:

* :mod:`.choice` — which schemes can drive a model (:func:`integrator_for`,
  :func:`usable_integrators`, :func:`default_integrator`), :func:`check_step` and
  :class:`SimulationError`;
* :mod:`.records` — :class:`Failure`, :class:`StepReport`, :class:`Event`,
  :class:`Snapshot`, :class:`TimeSeries`, :func:`energy_names`;
* :mod:`.guards` — the failure reports and the refusal of a start no step can run;
* :mod:`.resume` — checkpoints, resumes and runs started from a frame;
* :mod:`.events` — the event-driven (energy-stepping) driving;
* :mod:`.driver` — :class:`Simulation` itself.

Every name is importable from ``engine.simulation`` as before the split.
"""

from __future__ import annotations

from .choice import (
    H_MAX,
    SimulationError,
    check_step,
    default_integrator,
    event_driven_refusal,
    integrator_for,
    usable_integrators,
)
from .driver import Simulation
from .events import EventDrivenMixin
from .guards import DEFAULT_ENERGY_TOLERANCE, GuardsMixin
from .records import Event, Failure, Snapshot, StepReport, TimeSeries, energy_names
from .resume import ES_STATE_PREFIX, ResumeMixin

__all__ = [
    "DEFAULT_ENERGY_TOLERANCE", "ES_STATE_PREFIX", "H_MAX", "Event", "EventDrivenMixin",
    "Failure", "GuardsMixin", "ResumeMixin", "Simulation", "SimulationError", "Snapshot",
    "StepReport", "TimeSeries", "check_step", "default_integrator", "energy_names",
    "event_driven_refusal", "integrator_for", "usable_integrators",
]
