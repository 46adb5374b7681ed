"""What the window and ``rrp run --resume`` share on a cold kernel cache (issue #45).

A small model does not wait for its compiled kernels: the processes that build them
into the disk cache (``engine.priming.spawn_priming``: the chain forces → step →
stepping loop in one, the kernels beside it in another) are started and left to run,
and the run steps meanwhile with the kernels' uncompiled twins
(``engine.interpreted.interpret_while_cold``: the same bits), swapping to the compiled
loop at the first chunk after it is in the cache.  A larger model would barely move on
the twins: its kernels are built first, as before.
"""

from __future__ import annotations

import subprocess

INTERPRETED_MAX_BODIES = 1000
"""The largest model stepped interpreted while its kernels compile (issue #45: the
pendulum's twin takes ≈ 30 µs a step, the torus's 80 spheres ≈ 25 ms, an assembly's
252 ≈ 80 ms; a larger model would barely move before the compile ends)."""


def steps_interpreted(model) -> bool:
    """Whether ``model`` is small enough to step on the twins while its kernels compile
    (a model of bodies, of at most :data:`INTERPRETED_MAX_BODIES`)."""
    if getattr(model, "coordinates", "bodies") != "bodies":
        return False  # (the generalized-coordinate kernels are small: compiled in the run)
    return model.forcefield.n_bodies <= INTERPRETED_MAX_BODIES


def compile_in_background(model, scheme: int,
                          parts: tuple[str, ...] = ("run", "siblings")
                          ) -> list[subprocess.Popen]:
    """Start the processes that build the kernels of stepping scheme ``scheme`` (its
    id) for ``model``'s family into the disk cache, without waiting for them (one per
    part of ``engine.priming.PARTS``; a second one for the same part, scheme and family
    ends at once: ``engine.priming.alone``).  ``[]`` when none could start."""
    from engine import priming

    family = model.forcefield.arrays[-1]
    procs = []
    for part in parts:
        try:
            procs.append(priming.spawn_priming(scheme, family, part))
        except OSError:  # (no process: the run compiles what it needs itself)
            break
    return procs
