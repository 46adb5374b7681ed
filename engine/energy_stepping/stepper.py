"""The energy-stepping scheme as an incremental stepper (issue #28): what
``engine.simulation`` drives when the integrator is ``energy-stepping[:ε]``.

:class:`EnergyStepper` holds the event-driven state of one run (the bodies, each
interaction term's terrace, the queue of predicted crossings) and advances it to any
time with :meth:`EnergyStepper.advance_to`.  Between calls each body stays on its own
clock (the time of its last event); :meth:`EnergyStepper.state_arrays` *reads* the
bodies at ``t`` on their free flights without changing them (a record at ``t`` is the
exact motion of ``T − V_ε``, not an interpolation, and recording never changes the run:
issue #33 item 1).  ``h`` is only the recording interval: the scheme chooses its own
steps.

The events run in compiled calls of at most :attr:`EnergyStepper.budget` events each,
sized to about :data:`SLICE_SECONDS` of wall time, so that Python (its signal handlers,
a ``poll``) gets control back several times a second whatever the event rate; a run
whose events no longer move the clock stops with one line (issue #33 item 4).

``ε`` is absolute here (energy units); the registry's ``energy-stepping:REL`` is
relative to the scenario's energy scale (:func:`absolute_eps`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from ..integrators.registry import EPS_REL_MIN, eps_floor_message
from ..layout import T_DAMPING, T_FIELD, T_PIVOT_GRAVITY
from ..models.base import Model
from ..state import State
from .errors import EnergySteppingError

SLICE_SECONDS = 0.05
"""The wall time one compiled call aims at (the budget follows the measured pace)."""
BUDGET_START = 4096
BUDGET_MIN, BUDGET_MAX = 256, 50_000_000
NO_PROGRESS_EVIDENCE = 1_000_000
"""Events in one recording interval before its pace is judged."""
MAX_EVENTS_PER_INTERVAL = 1e8
"""An interval that would need more events than this at the pace so far stops the run
(ε too small for the state, or a clock that no longer moves: issue #33 item 4).  About a
minute of events per record at the pendulum's pace (0.3 µs an event), ten on the
torus's; the pendulum with m = 1e30 needs 1.8e8 per interval of 0.01."""

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
    flags = model.forcefield.flags
    if flags.shape[0] > T_DAMPING and (flags[T_FIELD] or flags[T_DAMPING]):
        return (f"energy-stepping takes no fields or damping in this version; {name!r} "
                "has [[fields]] or [[damping]]: use rrp-newmark")
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
        self.budget = BUDGET_START
        self._interval = (math.nan, 0, 0.0, 0)
        """(the target under way, the events at its start, the pace's mark: clock and
        events)"""

    def _begin_interval(self, t: float) -> None:
        """A new interval towards ``t`` (its pace is judged from here, issue #28); one
        whose events went past ``t`` (a stopped advance towards a later time) raises."""
        if self._interval[0] == t:
            return
        if self._interval[0] > t:
            raise EnergySteppingError(
                f"energy-stepping: the events have gone past t = {t:g} (towards t = "
                f"{self._interval[0]:g}, where a stopped advance was going); start "
                f"the terraces anew from the state at t = {self.t:g}")
        self._interval = (t, self._impl.work, self.t, self._impl.work)

    def _pace(self, spent: float) -> None:
        """After a call that used its whole :attr:`budget` in ``spent`` seconds: the
        budget of the next, sized to take ``SLICE_SECONDS`` (at most 4× more or less)."""
        if spent > 0.0:
            self.budget = int(min(max(self.budget * SLICE_SECONDS / spent,
                                      self.budget / 4, BUDGET_MIN),
                                  4 * self.budget, BUDGET_MAX))

    # ------------------------------------------------------------------ stepping
    def advance_to(self, t: float, poll: Callable[[], bool] | None = None) -> bool:
        """Run every event up to ``t`` (``t ≥ self.t``); ``True`` when done (:attr:`t`
        is then ``t``).  The events run in compiled calls of :attr:`budget` events
        (about :data:`SLICE_SECONDS` each); between two, ``poll()`` (if given) may
        return True to stop: ``False`` is returned, :attr:`t` unchanged, and the next
        call goes on from where the events are (the run is the same as without the
        stop, bit for bit; the state at :attr:`t` can no longer be read until ``t`` is
        reached).  Raises :class:`EnergySteppingError` if the run cannot go on (stuck at
        a tangency, a non-finite state, or events that no longer move the clock:
        :data:`MAX_EVENTS_PER_INTERVAL`)."""
        t = float(t)
        if not t >= self.t:
            raise EnergySteppingError(f"energy-stepping: cannot go back from t = "
                                      f"{self.t:g} to {t:g}")
        if t == self.t:
            return True
        impl = self._impl
        self._begin_interval(t)
        while True:
            start = time.perf_counter()
            if impl.advance(t, self.budget):
                break
            self._pace(time.perf_counter() - start)
            self._check_progress(t, impl.work, impl.clock_now())
            if poll is not None and poll():
                return False
        self.t = t
        self._interval = (math.nan, 0, 0.0, 0)
        return True

    @property
    def records_in_chunks(self) -> bool:
        """Whether :meth:`advance_records` can drive this model (the pendulum; the
        spheres' records need the force kernel: their intervals go one at a time)."""
        return hasattr(self._impl, "advance_records")

    def advance_records(self, times: np.ndarray, first: int, stride: int, out,
                        poll: Callable[[], bool] | None = None) -> int:
        """:meth:`advance_to` each of ``times`` (increasing, from :attr:`t` on) in turn,
        recording there when the step ``first + k`` of ``times[k]`` is a multiple of
        ``stride``, in compiled calls that each run up to :attr:`budget` events and read
        every record on the way into ``out`` (a ``pendulum_records.RecordChunk`` at
        least ``len(times)`` long; ``out.records`` rows), issue #33 item 2.  The same
        events, states and records, bit for bit, as :meth:`advance_to` one time after
        the other with :meth:`state_arrays` and :meth:`record_potential` at each; the
        same stops: ``poll()`` between two calls (True: return, :attr:`t` the last time
        reached), the same pace checks per interval, the same errors.  Returns how many
        times were reached (``out.done``; :attr:`t` is the last of them)."""
        impl = self._impl
        out.records = out.done = 0
        if times.shape[0] == 0:
            return 0
        if not float(times[0]) >= self.t:
            raise EnergySteppingError(f"energy-stepping: cannot go back from t = "
                                      f"{self.t:g} to {float(times[0]):g}")
        while True:
            t = float(times[out.done])
            self._begin_interval(t)
            w0, start = impl.work, time.perf_counter()
            try:
                finished, w_start = impl.advance_records(times, out.done, first, stride,
                                                         self.budget, out)
            finally:
                if out.done:
                    self.t = float(times[out.done - 1])
            if finished:
                break
            self._pace(time.perf_counter() - start)
            t = float(times[out.done])
            if self._interval[0] != t:  # (the interval under way began in the call)
                self._interval = (t, w0 + w_start, self.t, w0 + w_start)
            self._check_progress(t, impl.work, impl.clock_now())
            if poll is not None and poll():
                return out.done
        self._interval = (math.nan, 0, 0.0, 0)
        return out.done

    def _check_progress(self, t: float, work: int, clock: float) -> None:
        """Stop (one line) when the interval to ``t`` would need more than
        :data:`MAX_EVENTS_PER_INTERVAL` events at the pace of the last
        :data:`NO_PROGRESS_EVIDENCE` (the clock moved by ``clock − c`` during the
        ``work − w`` events since the mark ``(c, w)``)."""
        _, w0, c, w = self._interval
        n = work - w
        if n < NO_PROGRESS_EVIDENCE:
            return
        moved = clock - c
        need = (work - w0) + (n * (t - clock) / moved if moved > 0.0 else math.inf)
        if need > MAX_EVENTS_PER_INTERVAL:
            rebuilds = getattr(self._impl, "rebuild_work", 0)
            if 2 * rebuilds > work:  # (mostly contact lists: speeds, not ε)
                raise EnergySteppingError(
                    f"energy-stepping makes no progress: {n:.3g} events and contact-list "
                    f"rebuilds moved the clock only by {moved:.3g}, from t = {c:.9g} (the "
                    f"interval to t = {t:.6g} would need about {need:.2g}): the spheres "
                    f"crossed their neighbour skin {self._impl.n_rebuilds:.3g} times, "
                    f"their speeds far beyond the model's scale; check the scenario's "
                    f"parameters (its speeds and stiffnesses)")
            raise EnergySteppingError(
                f"energy-stepping makes no progress: {n:.3g} events moved the clock only "
                f"by {moved:.3g}, from t = {c:.9g} (the interval to t = {t:.6g} would need "
                f"about {need:.2g} events); ε is too small for this state (its time scale "
                f"is far below the recording interval): raise REL (e.g. "
                f"energy-stepping:1e-3), record more often (a smaller h), or check the "
                f"scenario's parameters")
        self._interval = (t, w0, clock, work)  # (the next window)

    @property
    def stopped_on_its_way(self) -> bool:
        """Whether an :meth:`advance_to` was stopped by its ``poll`` before its target
        (the events are then past :attr:`t`: only that target, or a later one, can be
        reached from here)."""
        return not math.isnan(self._interval[0])

    # ------------------------------------------------------------------ state
    def state_arrays(self, out: tuple | None = None
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(x, v, q, Ω)`` at :attr:`t`, read on the bodies' flights (each from its own
        clock; the stepper's state is untouched), into ``out`` (four arrays) or else the
        stepper's scratch (copy to keep).  Refused (:class:`EnergySteppingError`) while
        an :meth:`advance_to` is under way (stopped by its ``poll``): the events have then
        gone past :attr:`t`."""
        if self.stopped_on_its_way:
            raise EnergySteppingError(f"energy-stepping: the events have gone past t = "
                                      f"{self.t:g} (an advance was stopped on its way to "
                                      f"t = {self._interval[0]:g}): advance to it first")
        return self._impl.sample(self.t, out)

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

    def terrace_gap(self, state: tuple | None = None) -> float:
        """``V − V_ε`` at :attr:`t`, summed over the terms (each in ``[−ε/2, ε/2)`` up to
        round-off); ``state``: ``(x, v, q, Ω)`` at :attr:`t` as :meth:`state_arrays`
        gave them (not read again: a record's cost, issue #33 item 2)."""
        return self._impl.terrace_gap(self.t, state)

    def record_potential(self, state: tuple, e: np.ndarray) -> tuple[float, bool]:
        """For a record at :attr:`t` (``state`` as :meth:`state_arrays` gave it): the
        terrace gap, and whether the potential energy components (``e[2:]``,
        ``layout.ENERGY_NAMES`` order) were written from the stepper's own terms — the
        pendulum's one term, gravity about the pivot — so that the record needs no
        force kernel (issue #33 item 2); the spheres: ``False``, ``e`` untouched."""
        return self._impl.record_potential(self.t, state, e)

    def energy_eps(self) -> float:
        """``T + V_ε`` at :attr:`t`: constant to round-off."""
        return self._impl.energy_eps(self.t)

    # ------------------------------------------------------------------ resume
    def export_state(self) -> dict[str, np.ndarray]:
        """Everything the run needs to go on bit for bit (copies, arrays only: a
        checkpoint stores them as they are): the bodies with their clocks, every term's
        terrace, flags and predicted crossing, the contact list, the counters.  The
        queue's layout is not needed: it pops in the total order of ``(time, term)``."""
        d = {k: np.array(v, copy=True) for k, v in self._impl.export().items()}
        d["t"] = np.array([self.t])
        d["eps"] = np.array([self.eps])
        if self.stopped_on_its_way:  # (the target its events are on their way to)
            d["ahead"] = np.array([self._interval[0]])
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
        self.budget = BUDGET_START
        self._interval = (math.nan, 0, 0.0, 0)
        ahead = float(np.asarray(d.get("ahead", [math.nan])).reshape(-1)[0])
        if not math.isnan(ahead):  # (saved while stopped on its way there)
            w = self._impl.work
            self._interval = (ahead, w, self.t, w)
        return self

    @property
    def flight_times(self) -> np.ndarray:
        """The first ``keep_steps`` self-chosen steps (time between consecutive events)."""
        return self._impl.flight_times()


def _make_impl(model: Model, eps: float, state: State, keep_steps: int, t0: float):
    """The pendulum's closed-form loop, or the spheres' event loop."""
    if model.forcefield.flags[T_PIVOT_GRAVITY]:
        from .pendulum_impl import PendulumImpl

        return PendulumImpl(model, eps, state, keep_steps, t0)
    from .spheres_impl import SpheresImpl

    return SpheresImpl(model, eps, state, keep_steps, t0)


def _restore_impl(model: Model, eps: float, d: dict, t: float):
    if model.forcefield.flags[T_PIVOT_GRAVITY]:
        from .pendulum_impl import PendulumImpl

        return PendulumImpl.restore(model, eps, d, t)
    from .spheres_impl import SpheresImpl

    return SpheresImpl.restore(model, eps, d, t)
