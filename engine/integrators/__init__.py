"""Time integrators: one step kernel per scheme, a registry with their properties, and
one compiled loop (:mod:`engine.integrators.advance`) that drives any of them."""

from .registry import INTEGRATORS, IntegratorInfo, get_integrator, integrator_names

__all__ = ["INTEGRATORS", "IntegratorInfo", "get_integrator", "integrator_names"]
