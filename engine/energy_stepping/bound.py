"""The run-time check of energy-stepping's bound (issue #33 item 3): a run whose measured
``|E − E₀|`` exceeds ``ε`` per terraced term stops with one line instead of reporting
``complete`` (docs/physics.md §3.10, "The floor of ε").

``E₀`` is the energy ``T + V`` (the model's own force kernel) where the stepper started;
the bound is ``n ε`` (``n`` terraced terms, each ``|V_k − V_ε,k| ≤ ε/2`` and each start
within ``ε/2`` of ``E₀``), with a slack for the round-off of evaluating ``E`` itself
(:data:`ROUNDOFF_SLACK` of the energies' magnitude).  Pure Python, no kernel: the
simulation calls it after each advance, on the state it has just synchronised.
"""

from __future__ import annotations

import math

from ..integrators.registry import EPS_REL_MAX, energy_stepping_name

ROUNDOFF_SLACK = 64 * 2.0**-53
"""The round-off of ``E = Σ`` energy components relative to ``Σ |components|``: far below
``ε`` for any accepted ``REL`` (≥ 1e-12, i.e. ≥ 9000 × 2⁻⁵³)."""


def bound_excess(e_now: float, e0: float, eps: float, n_terms: int,
                 magnitude: float) -> float | None:
    """``|E − E₀| / ε`` when it exceeds the bound ``n_terms`` (beyond the round-off
    slack), else ``None``.  A non-finite energy also counts (the ratio is then ``inf``)."""
    if not math.isfinite(e0):
        return None  # (no start energy known: nothing to check against)
    err = abs(e_now - e0)
    if not math.isfinite(err):
        return math.inf
    if err > max(int(n_terms), 1) * eps + ROUNDOFF_SLACK * magnitude:
        return err / eps
    return None


def bound_message(t: float, ratio: float, n_terms: int, eps_rel: float) -> str:
    """The one line of a run stopped by :func:`bound_excess`, naming the fix (a larger
    ``ε``)."""
    better = energy_stepping_name(min(EPS_REL_MAX, float(f"{100.0 * eps_rel:.1g}")))
    return (f"energy-stepping broke its bound at t = {t:.6g}: |E − E₀| = {ratio:.3g} ε, "
            f"more than the {max(int(n_terms), 1)} ε its terraced terms allow (ε = "
            f"{eps_rel:g} × energy scale is too close to the round-off of the energies "
            f"for this run); use a larger ε, e.g. {better}; the state at t = {t:.6g} is "
            "kept")
