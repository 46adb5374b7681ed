"""The kernel groups a load builds, one progress step each (issue #33 item 8).

On a cold kernel cache the app's worker used to say "1/2: the forces", then sat there
for most of a minute while ``Simulation(...)`` and ``warm_up()`` compiled the whole
chain.  :func:`priming_stages` splits the build into the groups the engine compiles in
turn (``engine.priming.prime_run_kernels``: the forces, the step and its stepping loop,
the stability estimate and the helpers the run calls from Python), each on the one-body
stand-in of the model's force-field family, so the compiled code is the run's own (the
kernels are compiled for the argument *types*); the run made after them loads them.

Qt-free: the worker calls :func:`priming_stages` and reports each stage as it starts.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from engine.integrators.registry import get_integrator
from engine.priming import run_kernels_cached

Stage = tuple[str, Callable[[], None]]
"""What a stage builds (the status bar's words) and the call that builds it."""


def _family(model) -> tuple | None:
    """The model's force-field family (``engine.specialize``), ``None`` for a model in
    generalized coordinates (it has no stepping loop of the bodies' kind)."""
    if getattr(model, "coordinates", "bodies") != "bodies":
        return None
    return model.forcefield.arrays[-1]


def cold_schemes(model, names: list[str]) -> list[tuple[str, int]]:
    """``(name, scheme id)`` of the schemes in ``names`` whose stepping loop for
    ``model`` is neither in this process nor in the disk cache (what a cold start
    compiles); event-driven schemes have no such loop and are left out."""
    family = _family(model)
    if family is None:
        return []
    out: list[tuple[str, int]] = []
    for name in dict.fromkeys(names):
        try:
            info = get_integrator(name)
        except KeyError:  # (the simulation says so, in its own words)
            continue
        if info.event_driven or any(s == info.scheme_id for _, s in out):
            continue
        if not run_kernels_cached(info.scheme_id, family):
            out.append((name, info.scheme_id))
    return out


def priming_stages(model, names: list[str],
                   cold: list[tuple[str, int]] | None = None) -> list[Stage]:
    """The kernel groups to build before the runs of ``names`` on ``model``, in the
    order a run compiles them: empty when every stepping loop is cached (a warm start:
    the runs load their kernels in a fraction of a second); else the forces, then each
    cold scheme's step and stepping loop, then the stability estimate and the helpers
    (the neighbour grid, the attitude map of the output).  ``cold``: what
    :func:`cold_schemes` gives, when the caller has it."""
    if cold is None:
        cold = cold_schemes(model, names)
    if not cold:
        return []
    from engine.forcefield import compute_forces_ws, new_scratch, one_body_stand_in
    from engine.integrators.advance import prime_kernels
    from engine.layout import N_ENERGY
    from engine.neighbours import forget_grid, new_neighbour_scratch
    from engine.rotations import quat_to_matrix
    from engine.stability import estimate_stability

    family = _family(model)
    ff, q = one_body_stand_in(family)
    x, zero = np.zeros((1, 3)), np.zeros((1, 3))

    def forces() -> None:
        compute_forces_ws(x, q, ff, zero.copy(), zero.copy(), np.zeros(N_ENERGY),
                          new_scratch(1, ff))

    def helpers() -> None:
        estimate_stability(x, zero, q, zero, ff)
        forget_grid(new_neighbour_scratch(1), 1)
        quat_to_matrix(q)

    stages: list[Stage] = [(f"the forces of {model.title}", forces)]
    for name, scheme in cold:
        stages.append((f"the {name} step and its stepping loop",
                       lambda s=scheme: prime_kernels(s, family)))
    stages.append(("the stability estimate and the run's helpers", helpers))
    return stages
