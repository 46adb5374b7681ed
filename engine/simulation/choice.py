"""Which integrators can drive a model, and the checks of the driver's input (the step
``h``, the tolerances): :class:`SimulationError`, the one-line refusal naming the
problem and the fix, is raised here (issue #34: split out of ``engine.simulation``)."""

from __future__ import annotations

import math

from ..integrators.registry import INTEGRATORS, IntegratorInfo, get_integrator
from ..models.base import Model

H_MAX = 1.0
"""Largest step the driver accepts at all (every model here has time scales ≲ 1)."""

class SimulationError(ValueError):
    """Bad input to the driver (an unknown integrator, an inadmissible ``h``).  The
    message is one line that names the problem and the fix."""


def check_step(h: float) -> float:
    """``h`` as a float if it is a usable step for any model (positive, finite, at most
    :data:`H_MAX`); otherwise :class:`SimulationError`.  The state-dependent limits
    (``rrp-exact``'s ``h|w| < 1``) are :meth:`Simulation.check_h`'s."""
    try:
        h = float(h)
    except (TypeError, ValueError):
        raise SimulationError(f"h must be a number, got {h!r}") from None
    if not math.isfinite(h) or h <= 0.0:
        raise SimulationError(f"h must be a positive, finite time step, got {h:g}; "
                              "try e.g. h = 1e-3")
    if h > H_MAX:
        raise SimulationError(f"h = {h:g} is too large: the largest step accepted is "
                              f"{H_MAX:g}; try e.g. h = 1e-3")
    return h


def check_fraction(tol: float, what: str, example: str) -> float:
    """``tol`` as a float if it lies in ``(0, 1)`` (a solver's relative tolerance, named
    ``what``); otherwise :class:`SimulationError` suggesting ``example``."""
    tol = float(tol)
    if not (math.isfinite(tol) and 0.0 < tol < 1.0):
        raise SimulationError(f"the {what} must lie in (0, 1), got {tol:g}; "
                              f"try e.g. {example}")
    return tol


def check_count(n: int, what: str) -> int:
    """``n`` as an int if it is a positive integer (an iteration limit, named ``what``);
    otherwise :class:`SimulationError`."""
    if isinstance(n, bool) or int(n) != n or int(n) < 1:
        raise SimulationError(f"the {what} must be a positive integer, got {n!r}")
    return int(n)


def integrator_for(model: Model, name: str) -> IntegratorInfo:
    """The registry entry of ``name`` if it can drive ``model``; otherwise
    :class:`SimulationError` naming the schemes that can.  A spheres-only scheme cannot
    drive non-spherical bodies; a Moreau-type (hard-contact) scheme drives exactly the
    models with ``contact = "hard"`` and the smooth schemes the others; a model in
    generalized coordinates takes only the schemes written for them."""
    try:
        info = get_integrator(name)
    except KeyError as exc:
        raise SimulationError(str(exc.args[0])) from None
    if info.event_driven:  # (energy-stepping: its own one-line reason, naming the fix)
        why = event_driven_refusal(model)
        if why is not None:
            raise SimulationError(why)
        return info
    ok = usable_integrators(model)
    if info.name in ok or name in ok or (
            info.name.startswith("campello-implicit") and "campello-implicit" in ok):
        return info
    choose = ", ".join(n for n in ok if not n.startswith("yoshida4:"))
    if model.coordinates == "generalized" and info.coordinates == "bodies":
        why = (f"{name} integrates rigid bodies (x, v, q, Ω); model {model.name!r} is "
               "written in generalized coordinates")
    elif info.contact == "hard" and model.contact != "hard":
        why = (f"{name} is a Moreau-type scheme for hard contacts; model {model.name!r} "
               + ("has no contacts" if model.contact == "none"
                  else 'has penalty contacts (set contact = "hard" to use it)'))
    elif info.contact != "hard" and model.contact == "hard":
        why = (f"{name} needs smooth (penalty) contacts; model {model.name!r} has hard "
               'contacts (set contact = "penalty" to use it)')
    elif info.coordinates == "generalized":
        why = (f"{name} is written for models in generalized coordinates with a "
               f"configuration-dependent mass matrix; on model {model.name!r} use "
               "moreau-symmetric (the same scheme for a constant mass matrix)")
    elif info.spherical_only and not model.bodies.spherical:
        why = (f"{name} handles spherical bodies only (scalar inertia); model "
               f"{model.name!r} has non-spherical bodies")
    else:
        why = f"{name} cannot drive model {model.name!r}"
    raise SimulationError(f"{why}: choose one of {choose}")


def default_integrator(model: Model, preferred: str | None = None) -> str:
    """``preferred`` (a scenario's default) if it can drive ``model``, else the natural
    scheme of the model's kind: ``moreau-symmetric`` for hard contacts and generalized
    coordinates, ``rrp-newmark`` for spheres, ``lgvi`` for other bodies."""
    ok = usable_integrators(model)
    if preferred is not None:
        try:
            return integrator_for(model, preferred).name
        except SimulationError:
            pass
    for name in ("moreau-symmetric", "rrp-newmark", "lgvi"):
        if name in ok:
            return name
    return ok[0]


def event_driven_refusal(model: Model) -> str | None:
    """Why energy-stepping cannot drive ``model`` (``engine.energy_stepping.unsupported``:
    one line naming the fix), or ``None``."""
    from ..energy_stepping import unsupported

    return unsupported(model)


def usable_integrators(model: Model) -> list[str]:
    """The registered schemes that can drive ``model`` (registry order)."""
    out = []
    for n, i in INTEGRATORS.items():
        if i.event_driven:
            if event_driven_refusal(model) is None:
                out.append(n)
            continue
        if i.spherical_only and not model.bodies.spherical:
            continue
        if (i.contact == "hard") != (model.contact == "hard"):
            continue
        if model.coordinates == "generalized" and i.coordinates == "bodies":
            continue
        if model.coordinates != "generalized" and i.coordinates == "generalized":
            continue
        out.append(n)
    return out
