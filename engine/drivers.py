"""The factory that picks a model's driver (issue #34 §1: not a constructor that
returns another class).

A model in generalized coordinates (``model.coordinates == "generalized"``: the spring
pendulum) is driven by :class:`engine.generalized.simulation.GeneralizedSimulation`; every
other model by :class:`engine.simulation.Simulation`.  Both have the same interface;
callers that may hold either kind of model make their simulation here, so neither
driver imports the other's module (``GeneralizedSimulation`` is a subclass of
``Simulation``, below it).  ``Simulation(model, …)`` of a generalized model is refused in
one line naming :func:`simulation_for`.
"""

from __future__ import annotations

from .generalized.simulation import GeneralizedSimulation
from .models.base import Model
from .simulation import Simulation

__all__ = ["driver_for", "simulation_for", "simulation_from_frame",
           "simulation_from_resume_state"]


def driver_for(model: Model) -> type[Simulation]:
    """The driver class of ``model``: :class:`GeneralizedSimulation` for a model in
    generalized coordinates, :class:`Simulation` for bodies."""
    if getattr(model, "coordinates", "bodies") == GeneralizedSimulation.COORDINATES:
        return GeneralizedSimulation
    return Simulation


def simulation_for(model: Model, integrator: str | None = None, h: float = 1e-3,
                   **kwargs) -> Simulation:
    """A simulation of ``model`` by its driver (:func:`driver_for`); ``integrator``
    ``None``: the driver's default (``rrp-newmark`` for bodies, ``moreau-symmetric`` in
    generalized coordinates); ``kwargs`` as for :class:`Simulation`."""
    cls = driver_for(model)
    if integrator is None:
        return cls(model, h=h, **kwargs)
    return cls(model, integrator, h, **kwargs)


def simulation_from_frame(model: Model, frame, integrator: str, h: float,
                          **kwargs) -> Simulation:
    """:meth:`Simulation.from_frame` by ``model``'s driver."""
    return driver_for(model).from_frame(model, frame, integrator, h, **kwargs)


def simulation_from_resume_state(model: Model, d: dict, **kwargs) -> Simulation:
    """:meth:`Simulation.from_resume_state` by ``model``'s driver."""
    return driver_for(model).from_resume_state(model, d, **kwargs)
