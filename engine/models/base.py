"""What every model provides: a parameter schema, bodies, a force field, an initial
state and a few hints for diagnostics and drawing."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..forcefield import ForceField
from ..inputs import ParameterError
from ..state import Bodies, State

BIG = 1e30
"""No number of a scenario may exceed this in magnitude: the models multiply up to about
ten of them (an energy ``½ J Ω²`` summed over 10⁷ bodies, a Hertz stiffness
``K/(m σ²)`` in the stability estimate), and products of numbers up to 1e30 stay far
inside double precision (≈ 1.8e308); no model here has a scale within 20 decades of
it (docs/scenarios.md, "Limits")."""
TINY = 1e-30
"""The least magnitude of a number other than 0, and so of a quantity that must be
positive (a mass, an inertia, a length, a size): the models divide by such numbers (a
Hertz stiffness too, in the stability estimate), and below this their squares and
products underflow towards 0 (docs/scenarios.md, "Limits")."""


def _fmt_bound(v: float) -> str:
    return str(int(v)) if float(v).is_integer() and abs(v) < 1e16 else f"{v:g}"


@dataclass(frozen=True)
class Param:
    """One scenario parameter: kind ``float | int | bool | vec3 | choice | text``, default,
    bounds (``choice``: one of the strings ``choices``).

    Every ``float`` and every component of a ``vec3`` also lies within ``±BIG`` and is
    0 or at least ``TINY`` in magnitude (a positive one, ``lo = 0``, ``lo_open``: at
    least ``TINY``): the effective bounds (:meth:`bounds`) are what :meth:`coerce`
    checks and :meth:`describe_range` shows, the gap ``(-TINY, TINY)`` about 0 is the
    same for every number (docs/scenarios.md, "Limits").
    ``why``: the reason of a range tighter than the kind's (docs/scenarios.md)."""

    name: str
    kind: str
    default: Any
    doc: str
    unit: str = ""
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    choices: tuple[str, ...] = ()
    why: str = ""

    def bounds(self) -> tuple[float | None, float | None, bool]:
        """``(lo, hi, lo_open)`` as checked: a number's ``lo``/``hi`` within ``±BIG``,
        and ``(0, …`` made ``[TINY, …``; an ``int``'s as given."""
        if self.kind not in ("float", "vec3"):
            return self.lo, self.hi, self.lo_open
        lo = -BIG if self.lo is None else max(self.lo, -BIG)
        hi = BIG if self.hi is None else min(self.hi, BIG)
        if self.lo_open and lo == 0.0:
            return TINY, hi, False
        return lo, hi, self.lo_open

    def describe_range(self) -> str:
        if self.kind == "choice":
            return ", ".join(f'"{c}"' for c in self.choices)
        if self.kind == "text":
            return ""
        lo, hi, lo_open = self.bounds()
        if lo is None and hi is None:
            return ""
        left = "(" if lo_open or lo is None else "["
        right = ")" if hi is None else "]"
        text = (f"{left}{'-∞' if lo is None else _fmt_bound(lo)}, "
                f"{'∞' if hi is None else _fmt_bound(hi)}{right}")
        return f"each in {text}" if self.kind == "vec3" else text

    def coerce(self, value: Any) -> Any:
        """Check ``value`` against the kind and range; return it normalised.  Every
        refusal is a :class:`ParameterError`: one line naming the key, the value, the
        allowed range and, for a tightened range, why."""
        n = self.name
        if self.kind == "bool":
            if not isinstance(value, bool):
                raise ParameterError(f"{n} must be true or false, got {value!r}")
            return value
        if self.kind == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                raise ParameterError(f"{n} must be an integer, got {value!r}")
            self._check_range(value)
            return int(value)
        if self.kind == "float":
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ParameterError(f"{n} must be a number, got {_short(value)}")
            v = _as_float(n, value)
            if not math.isfinite(v):
                raise ParameterError(f"{n} must be finite, got {value!r}")
            self._check_range(v)
            return v
        if self.kind == "vec3":
            ok = isinstance(value, list | tuple) and len(value) == 3 and all(
                isinstance(c, int | float) and not isinstance(c, bool) for c in value)
            if not ok or not all(math.isfinite(_as_float(n, c)) for c in value):
                raise ParameterError(f"{n} must be a list of three finite numbers, e.g. "
                                     f"[0, 0, 1], got {_short(value)}")
            out = [float(c) for c in value]
            for k, c in enumerate(out):
                self._check_range(c, f"{n}[{k}]")
            return out
        if self.kind == "text":  # (set by a loader, not edited: the assembly's geometry)
            if not isinstance(value, str):
                raise ParameterError(f"{n} must be a string, got {_short(value)}")
            return value
        if self.kind == "choice":
            if not isinstance(value, str) or value not in self.choices:
                raise ParameterError(f"{n} must be one of {self.describe_range()}, "
                                     f"got {_short(value)}")
            return value
        raise AssertionError(f"unknown parameter kind {self.kind}")

    def _check_range(self, v: float, label: str | None = None) -> None:
        lo, hi, lo_open = self.bounds()
        bad = (lo is not None and (v < lo or (lo_open and v == lo))) or (
            hi is not None and v > hi)
        if not bad and self.kind in ("float", "vec3") and v != 0.0 and abs(v) < TINY:
            raise ParameterError(f"{label or self.name} = {_short(v)} is out of range: a "
                                 f"number must be 0 or at least {TINY:g} in magnitude "
                                 "(the models divide by some, and products of smaller ones "
                                 "underflow); write 0 for nothing")
        if bad:
            why = self.why or _default_why(self, v)
            raise ParameterError(f"{label or self.name} = {_short(v)} is out of range: it "
                                 f"must lie in {self.describe_range().removeprefix('each in ')}"
                                 + (f" ({why})" if why else ""))


def _default_why(p: Param, v: float) -> str:
    """Why a number is outside the limits every number shares (``BIG``, ``TINY``, and
    ``lo = 0``: not negative)."""
    lo, _, _ = p.bounds()
    if (v > BIG and (p.hi is None or p.hi > BIG)) or (
            v < -BIG and (p.lo is None or p.lo < -BIG)):
        return (f"no scenario number may exceed {BIG:g} in magnitude: products of such "
                "numbers overflow double precision")
    if p.lo == 0.0 and not p.lo_open and v < 0.0:
        return "it cannot be negative"
    if lo == TINY and v < TINY:
        return (f"it must be positive: the model divides by it, and below {TINY:g} its "
                "products underflow")
    return ""


def _as_float(name: str, value: int | float) -> float:
    """``float(value)``; an integer beyond double precision's range is refused by name."""
    try:
        return float(value)
    except OverflowError:
        raise ParameterError(f"{name} = {_short(value)} is too large for a number (no "
                             f"scenario number may exceed {BIG:g} in magnitude)") from None


def _short(value: Any, width: int = 40) -> str:
    """``repr(value)``, shortened to ``width`` characters (a 400-digit integer stays one
    readable line)."""
    text = repr(value)
    return text if len(text) <= width else f"{text[:width - 12]}…({len(text)} chars)"


def resolve_parameters(schema: tuple[Param, ...], given: Mapping[str, Any],
                       model: str) -> dict[str, Any]:
    """Defaults overlaid with ``given``; unknown keys and bad values raise
    :class:`ParameterError` naming the key."""
    by_name = {p.name: p for p in schema}
    out = {p.name: p.default for p in schema}
    for key, value in given.items():
        if key not in by_name:
            raise ParameterError(
                f"unknown parameter {key!r} for model {model!r}; known: {', '.join(by_name)}")
        out[key] = by_name[key].coerce(value)
    return out


@dataclass
class Model:
    """A built model: everything an integrator, a diagnostic or a view needs."""

    name: str
    title: str
    params: dict[str, Any]
    bodies: Bodies
    forcefield: ForceField
    initial_state: State
    energy_components: tuple[str, ...]
    conserved: tuple[str, ...]
    """Momentum components conserved exactly by the variational schemes
    (``P_x .. P_z``, ``L_x .. L_z``)."""
    draw_offset: np.ndarray = field(default_factory=lambda: np.zeros(3))
    """Body-frame vector from ``x`` to the drawn sphere's centre (the pendulum bob)."""
    draw_diameter: np.ndarray | None = None
    pivot: np.ndarray | None = None
    wall: tuple[np.ndarray, float] | None = None
    """Wall normal and position ``n·x = x_w``, if the model has one (the first of
    ``walls``: what the view draws)."""
    walls: list[tuple[np.ndarray, float]] = field(default_factory=list)
    """Every planar wall ``n·x ≥ c`` of the model as ``(n, c)`` (the rows of
    ``ForceField.walls``)."""
    shape: str = "sphere"
    """How to draw a body: ``"sphere"`` (diameter ``draw_diameter``), or ``"dumbbell"``:
    a sphere of diameter ``draw_diameter[i]`` at each body-frame point ``body_points[i]``
    (about ``x_i``, attitude ``R_i``) and a rod between them."""
    body_points: np.ndarray | None = None
    """``(n, k, 3)`` body-frame points of the point masses of each body (dumbbells)."""
    contact: str = "none"
    """How contacts are modelled: ``"none"``, ``"penalty"`` (Hertz potentials, driven by
    the smooth schemes) or ``"hard"`` (unilateral constraints with percussions, driven
    by the Moreau-type schemes only; docs/physics.md §3.9)."""
    coordinates: str = "bodies"
    """``"bodies"``: the state is ``(x, v, q, Ω)`` of rigid bodies; ``"generalized"``:
    the model is written in generalized coordinates ``q, u`` with ``M(q)`` and
    ``h(q, u)`` (``system``), and only the schemes for such models drive it."""
    system: Any = None
    """The generalized-coordinate system (for ``coordinates == "generalized"``)."""
    spring: tuple[np.ndarray, float] | None = None
    """Drawing hint for a spring from a pivot to body 0: ``(pivot, rest length)``."""
    groups: np.ndarray | None = None
    """Per body, the group it belongs to (drawn in one colour; the assembly's, issue #35);
    ``None``: the view's default (rings of ``n_particles``, else each body its own)."""
    carried: dict[str, np.ndarray] | None = None
    """What the model was built from that its parameters only point to (an assembly's
    spheres, bonds' types and walls, read from CSV or LAMMPS data files or given by the
    Python API), as plain arrays: a run file stores them, so the model is rebuilt from the
    file alone (issue #43 item 4; ``engine.models.assembly.carried_arrays``)."""
    accuracy_c: float | None = None
    """Calibration of the accuracy guide (:func:`engine.stability.accuracy_guide`): the
    measured ``h ω_max / sqrt(ε)`` of the second-order schemes on this model (``None``: no
    guide, e.g. when impacts make the energy error first order)."""
    stages: tuple = ()
    """The run's stages (``engine.models.stages.Stage``: steps or duration, the fields
    and damping of each; issue #44 item 5), which the driver follows; ``()``: none."""

    @property
    def n_bodies(self) -> int:
        return self.bodies.n


@dataclass(frozen=True)
class ModelSpec:
    """Registry entry: the schema and the builder of a model."""

    name: str
    title: str
    schema: tuple[Param, ...]
    build: Callable[[dict[str, Any]], Model]

    def make(self, params: Mapping[str, Any] | None = None) -> Model:
        return self.build(resolve_parameters(self.schema, params or {}, self.name))


def body_groups(model: Model) -> np.ndarray:
    """Per body, the index of the group it belongs to — the one notion of a body's group
    that the app's colours, the run file's ``/bodies/group`` and every converter use
    (issue #42 item 8): the model's ``groups`` where it has them (an assembly, as its
    user set them), its ring for models of ``n_particles`` bonded spheres per ring (the
    torus, the pile: body ``i`` is in ring ``i // n_particles``), otherwise each body its
    own group."""
    n = int(model.n_bodies)
    groups = getattr(model, "groups", None)
    if groups is not None and len(groups) == n:  # (the assembly's own groups, issue #35)
        return np.asarray(groups, dtype=np.int64)
    n_p = (getattr(model, "params", None) or {}).get("n_particles")
    if isinstance(n_p, int | np.integer) and n_p > 0 and n % int(n_p) == 0:
        return np.arange(n) // int(n_p)
    return np.arange(n)
