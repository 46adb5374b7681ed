"""The messages between the window and the worker (issue #34: split out of
``app/gui/worker.py``): what the window asks for (:class:`LoadRequest`,
:class:`BranchRequest`) and what the worker sends (:class:`Preview`, :class:`Loaded`,
:class:`Frame` with its :class:`Series`).  Each is a plain copy: the window never holds
the worker's simulations.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine.simulation import Event
from engine.stability import StabilityEstimate


@dataclass(frozen=True)
class LoadRequest:
    """What to build: a scenario (built-in name or path), parameter overrides, the
    primary integrator and ``h`` (``None``: the scenario's), and the integrators of the
    other runs in compare mode."""

    scenario: str
    overrides: dict[str, Any] = field(default_factory=dict)
    integrator: str | None = None
    h: float | None = None
    compare: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class BranchRequest:
    """A live run from a recorded frame (*Continue from here*): the model (built from the
    run file), the frame (:class:`engine.io.Frame`), the integrators (primary first, then
    the compare runs) and ``h``; ``energy_reference``: the recorded run's ``(E_ref,
    E_scale)`` so that the error goes on as recorded.  Reset goes back to this frame."""

    scenario: str
    model: Any
    frame: Any
    integrators: tuple[str, ...]
    h: float
    energy_reference: tuple[float, float] | None = None
    record_every: int = 1
    source: str = ""
    """The run file (its name, for the window's title)."""
    overrides: dict[str, Any] = field(default_factory=dict)

    @property
    def integrator(self) -> str:
        return self.integrators[0]

    @property
    def compare(self) -> tuple[str, ...]:
        return tuple(self.integrators[1:])


@dataclass
class Loaded:
    """Sent once a request is built: what the views need to set themselves up."""

    scenario: str
    title: str
    model: Any  # engine.models.base.Model (read-only for the views)
    params: dict[str, Any]
    integrators: list[str]  # primary first
    h: float
    energy_names: list[str]  # the components this model has (others are always zero)
    conserved: tuple[str, ...]
    stability: StabilityEstimate
    note: str = ""
    """Why a requested scheme was replaced (it cannot drive the model), or empty."""
    branch: str = ""
    """For a run started from a frame (*Continue from here*): where from, in words."""
    energy_scale: str = "|E₀|"
    """What the relative energy error is divided by (``engine.diagnostics.
    error_scale_symbol``: ``|E₀|``, or ``E_s`` for a model at rest, issue #42 item 1)."""
    t_end: float | None = None
    """The scenario's end time: the window checks a new ``h`` against the steps to it, as
    ``rrp run`` does (:func:`engine.run_steps.step_count`); ``None`` where the scenario cannot be
    loaded (a recording of a moved file): ``h`` is then checked by the engine alone."""


@dataclass(frozen=True)
class Preview:
    """Sent as soon as a scenario's model is built, before its stepping kernels: the views
    draw the initial state while the worker compiles (issue #25; drawing needs only the
    attitude kernel, which the worker builds first, never the GUI thread)."""

    scenario: str
    title: str
    model: Any  # engine.models.base.Model (read-only for the views)
    integrators: list[str]  # primary first
    h: float


@dataclass
class Series:
    """New recorded rows of one run since the last frame."""

    t: np.ndarray
    energy: np.ndarray  # (n, N_ENERGY)
    total: np.ndarray
    rel_error: np.ndarray
    P: np.ndarray
    L: np.ndarray
    x: np.ndarray | None = None
    """The trailed body's (body 0's) position at each new row, ``(n, 3)``, for models
    whose view draws a trail (:func:`app.gui.runs.records_trail`); ``None`` otherwise."""
    q: np.ndarray | None = None
    """Its attitude quaternion at each new row, ``(n, 4)`` (with :attr:`x`)."""
    invariants: np.ndarray | None = None
    """The model's invariants at each new row, ``(n, k)``, for the models that have
    some (:func:`engine.diagnostics.model_invariant_names`: the pendulum); else ``None``."""
    terrace_gap: np.ndarray | None = None
    """Under an event-driven scheme (energy-stepping): ``(V − V_ε)/E_scale`` at each new
    row, in the units of :attr:`rel_error` (NaN in rows of another scheme); ``None`` when
    none of the new rows has one."""


@dataclass
class Frame:
    """A copy of everything the views show at one instant."""

    t: float
    step: int
    integrator: str
    h: float
    x: np.ndarray
    q: np.ndarray
    v: np.ndarray
    omega: np.ndarray
    ghosts: list[tuple[np.ndarray, np.ndarray]]
    series: dict[str, Series]  # run label → new rows
    events: list[Event]
    stability: StabilityEstimate | None
    rel_error: float
    us_per_step: float
    steps_per_second: float
    contact: dict[str, float] | None = None
    """The primary run's :attr:`~engine.simulation.Simulation.contact_stats` for a
    hard-contact model (``None`` otherwise)."""
    inspect: dict[str, Any] | None = None
    """:func:`body_report` of the body the window inspects (``None``: none picked)."""
    events_per_second: float = 0.0
    """Events a second of the event-driven runs (energy-stepping), over the last second."""
    stage: str = ""
    """The primary run's stage, e.g. ``"stage 2 of 2 (t = 10 → 15)"`` (``""``: the model
    has no stages; issue #44 item 5)."""
    kernels: str = ""
    """Which implementation took the primary run's last chunk: ``"compiled"``,
    ``"interpreted"`` (the kernels' twins, while the cache is cold: issue #45) or ``""``
    (no chunk yet)."""
    compiling: tuple[str, ...] = ()
    """The schemes whose kernels are being built in the background."""
    stage_span: tuple[int, float, float] | None = None
    """The primary run's stage as ``(k, t₀, t₁)`` (0-based; ``None``: no stages): the
    view's stage line and field arrow (issue #44 item 7)."""
    broken: np.ndarray | None = None
    """The primary run's broken bonds, the model's indices (``None``: its bonds never
    break; issue #44 item 2)."""


DEFAULT_REQUEST = LoadRequest("torus")
"""The scenario the window opens when nothing else can be opened."""
