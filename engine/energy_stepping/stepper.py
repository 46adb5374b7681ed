"""The energy-stepping scheme as an incremental stepper (issue #28): what
``engine.simulation`` drives when the integrator is ``energy-stepping[:ε]``.

:class:`EnergyStepper` holds the event-driven state of one run (the bodies, each
interaction term's terrace, the queue of predicted crossings) and advances it to any
time with :meth:`EnergyStepper.advance_to`; between calls the bodies are synchronised
at ``t`` (the state is sampled exactly on the free flights: a record at ``t`` is the
exact motion of ``T − V_ε``, not an interpolation).  ``h`` is only the recording
interval: the scheme chooses its own steps.

``ε`` is absolute here (energy units); the registry's ``energy-stepping:REL`` is
relative to the scenario's energy scale (:func:`absolute_eps`).
"""

from __future__ import annotations

import math

import numpy as np

from ..integrators.registry import EPS_REL_MIN, eps_floor_message
from ..layout import T_PIVOT_GRAVITY
from ..models.base import Model
from ..state import State
from .errors import EnergySteppingError

N_BODIES_MAX = 4096
"""The largest model energy-stepping runs: the candidate contacts are rebuilt by
testing every pair (a cell list for larger piles is future work)."""


def unsupported(model: Model) -> str | None:
    """Why energy-stepping cannot drive ``model`` (one line naming the fix), or ``None``."""
    name = model.name
    if getattr(model, "coordinates", "bodies") == "generalized":
        return (f"energy-stepping drives rigid spheres (and the pendulum); {name!r} is "
                "written in generalized coordinates: use moreau-symmetric or "
                "moreau-variational")
    if getattr(model, "contact", "none") == "hard":
        return (f"energy-stepping needs every interaction to be a potential; {name!r} "
                "has hard contacts (impacts): set contact = \"penalty\" or use a "
                "Moreau-type scheme")
    if not model.forcefield.spherical:
        return (f"energy-stepping needs spherical bodies (a free flight is then a "
                f"uniform rotation); {name!r} has non-spherical ones: use lgvi or "
                "rrp-implicit")
    if model.forcefield.has_history:
        return (f"energy-stepping needs a conservative model; {name!r} has friction "
                "springs or contact damping: set mu = 0 and damping = 0, or use rrp-newmark")
    if model.n_bodies > N_BODIES_MAX:
        return (f"energy-stepping runs up to {N_BODIES_MAX} bodies in this version; "
                f"{name!r} has {model.n_bodies}: use fewer, or rrp-newmark")
    return None


def check_eps(eps: float) -> float:
    """``ε`` as a float, or :class:`EnergySteppingError` (ε must be finite and > 0)."""
    try:
        e = float(eps)
    except (TypeError, ValueError):
        e = math.nan
    if not (math.isfinite(e) and e > 0.0):
        raise EnergySteppingError(f"energy-stepping: the terrace height ε must be a "
                                  f"finite number > 0, got {eps!r}; e.g. "
                                  "energy-stepping:1e-4 (relative to the energy scale)")
    return e


def absolute_eps(relative: float, energy_scale: float,
                 magnitude: float | None = None) -> float:
    """``ε = relative × energy scale`` (the scale: ``engine.diagnostics.energy_scale``
    of the start).  Refused (:class:`EnergySteppingError`, one line) below the round-off
    floor (issue #33 item 3, docs/physics.md §3.10 "The floor of ε"): ``relative <
    EPS_REL_MIN`` (the registry's own line), or ``ε < EPS_REL_MIN × magnitude`` where
    ``magnitude`` is ``Σ|E components|`` of the start (larger than the scale when ``T``
    and ``V`` nearly cancel in ``E``: the energies the events compute are that large)."""
    rel = check_eps(relative)
    if rel < EPS_REL_MIN:
        raise EnergySteppingError(eps_floor_message(f"{rel:g}"))
    eps = check_eps(rel * float(energy_scale))
    if magnitude is not None and eps < EPS_REL_MIN * float(magnitude):
        need = EPS_REL_MIN * float(magnitude) / float(energy_scale)
        raise EnergySteppingError(
            f"energy-stepping: ε = {eps:.3g} is below the round-off floor {EPS_REL_MIN:g} × "
            f"{float(magnitude):.3g} (Σ|energy components| of the start, which nearly "
            f"cancel in E), so the bound |E − E₀| ≤ ε per term would not hold; use REL ≥ "
            f"{float(f'{need:.2g}'):g} (energy-stepping:{float(f'{2 * need:.1g}'):g})")
    return eps


class EnergyStepper:
    """Energy-stepping of ``model`` from ``state`` at time ``t0`` with the absolute
    terrace height ``eps``.

    Raises :class:`EnergySteppingError` (one line) for a model it cannot drive
    (:func:`unsupported`) or a bad ``eps``.  ``keep_steps``: how many self-chosen steps
    (the time between consecutive events, all terms together) to keep for the
    histogram (:attr:`flight_times`).
    """

    def __init__(self, model: Model, eps: float, state: State, t0: float = 0.0, *,
                 keep_steps: int = 0) -> None:
        why = unsupported(model)
        if why is not None:
            raise EnergySteppingError(why)
        self.eps = check_eps(eps)
        self.model = model
        self.t = float(t0)
        self._impl = _make_impl(model, self.eps, state, keep_steps, self.t)

    # ------------------------------------------------------------------ stepping
    def advance_to(self, t: float) -> None:
        """Run every event up to ``t`` (``t ≥ self.t``) and synchronise the bodies at
        ``t``.  Raises :class:`EnergySteppingError` if the run cannot go on (stuck at a
        tangency, or a non-finite state); the state is then the last good one."""
        t = float(t)
        if not t >= self.t:
            raise EnergySteppingError(f"energy-stepping: cannot go back from t = "
                                      f"{self.t:g} to {t:g}")
        if t > self.t:
            self._impl.advance(t - self.t, t)
            self.t = t

    # ------------------------------------------------------------------ state
    def state_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(x, v, q, Ω)`` at :attr:`t` (the stepper's own arrays: copy to keep)."""
        return self._impl.state_arrays()

    @property
    def n_events(self) -> int:
        """Events (crossings and reflections) since the start."""
        return self._impl.n_events

    @property
    def n_reflections(self) -> int:
        return self._impl.n_reflections

    def events_by_kind(self) -> dict[str, int]:
        """Events (crossings, reflections, touches) by the kind of term that made them
        (``radial``, ``bend``, ``shear``, ``contact``, ``wall``, ``gravity``; the
        pendulum: ``pivot gravity``)."""
        return self._impl.events_by_kind()

    @property
    def n_terms(self) -> int:
        """Terraced terms (each bounds its own share of ``|E − E₀|`` by ``ε``)."""
        return self._impl.n_terms

    def terrace_gap(self) -> float:
        """``V − V_ε`` at :attr:`t`, summed over the terms (each in ``[−ε/2, ε/2)`` up to
        round-off)."""
        return self._impl.terrace_gap()

    def energy_eps(self) -> float:
        """``T + V_ε`` at :attr:`t`: constant to round-off."""
        return self._impl.energy_eps()

    # ------------------------------------------------------------------ resume
    def export_state(self) -> dict[str, np.ndarray]:
        """Everything the run needs to go on bit for bit (copies, arrays only: a
        checkpoint stores them as they are): the bodies with their clocks, every term's
        terrace, flags and predicted crossing, the contact list, the counters.  The
        queue's layout is not needed: it pops in the total order of ``(time, term)``."""
        d = {k: np.array(v, copy=True) for k, v in self._impl.export().items()}
        d["t"] = np.array([self.t])
        d["eps"] = np.array([self.eps])
        return d

    @classmethod
    def from_state(cls, model: Model, d: dict[str, np.ndarray]) -> EnergyStepper:
        """The stepper :meth:`export_state` saved, for ``model`` (the same scenario):
        it goes on exactly as the saved one would have."""
        why = unsupported(model)
        if why is not None:
            raise EnergySteppingError(why)
        self = cls.__new__(cls)
        self.eps = check_eps(float(np.asarray(d["eps"]).reshape(-1)[0]))
        self.model = model
        self.t = float(np.asarray(d["t"]).reshape(-1)[0])
        self._impl = _restore_impl(model, self.eps, d, self.t)
        return self

    @property
    def flight_times(self) -> np.ndarray:
        """The first ``keep_steps`` self-chosen steps (time between consecutive events)."""
        return self._impl.flight_times()


def _make_impl(model: Model, eps: float, state: State, keep_steps: int, t0: float):
    """The pendulum's closed-form loop, or the spheres' event loop."""
    if model.forcefield.flags[T_PIVOT_GRAVITY]:
        from .pendulum_impl import PendulumImpl

        return PendulumImpl(model, eps, state, keep_steps)
    from .spheres_impl import SpheresImpl

    return SpheresImpl(model, eps, state, keep_steps, t0)


def _restore_impl(model: Model, eps: float, d: dict, t: float):
    if model.forcefield.flags[T_PIVOT_GRAVITY]:
        from .pendulum_impl import PendulumImpl

        return PendulumImpl.restore(model, eps, d)
    from .spheres_impl import SpheresImpl

    return SpheresImpl.restore(model, eps, d, t)
