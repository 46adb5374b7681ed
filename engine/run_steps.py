"""How many steps a run may take, and the step a run accepts: the one rule that
``rrp run``, ``rrp export``, ``rrp gui --h`` and the window's h field share (issue #34 §2:
the window must not import the command line; the rule is a property of a run).

The state-independent check of ``h`` is :func:`engine.simulation.check_step` (positive,
finite, at most ``H_MAX``); the state-dependent ones (``rrp-exact``'s ``h|w| < 1``) are
:meth:`engine.simulation.Simulation.check_h`'s.
"""

from __future__ import annotations

import math

from .simulation import SimulationError, check_step

__all__ = ["MAX_STEPS", "check_run_step", "step_count"]

MAX_STEPS = 10**10
"""Runs of more steps are refused: at the fastest ≈ 0.1 µs/step they would take hours,
on the torus weeks (a mistyped ``h`` such as 1e-300 would otherwise hang silently)."""


def step_count(t_end: float, h: float, t0: float = 0.0, done: int = 0) -> int:
    """Steps from ``t0`` (``done`` already taken) to ``t_end`` at step ``h``.  ``h`` is
    checked first by :func:`~engine.simulation.check_step` ("h must be a positive, finite
    time step"), then the count: a one-line :class:`SimulationError` beyond
    :data:`MAX_STEPS`."""
    h = check_step(h)
    n = (t_end - t0) / h
    if not math.isfinite(n) or n - done > MAX_STEPS:
        steps = "infinitely many" if not math.isfinite(n) else f"{n - done:.3g}"
        raise SimulationError(f"t_end = {t_end:g} at h = {h:g} means {steps} steps, more "
                              f"than any run can finish (the limit is {MAX_STEPS:.0e}); "
                              "raise h or lower t_end")
    return max(1, int(math.ceil(n - 1e-9)) - done)


def check_run_step(h: float, t_end: float | None = None) -> float:
    """``h`` as a run accepts it: :func:`~engine.simulation.check_step` and, for a run to
    ``t_end`` (``None``: none), :func:`step_count`'s limit."""
    h = check_step(h)
    if t_end is not None:
        step_count(t_end, h)
    return h
