"""What every model provides: a parameter schema, bodies, a force field, an initial
state and a few hints for diagnostics and drawing."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..forcefield import ForceField
from ..state import Bodies, State


class ParameterError(ValueError):
    """A scenario parameter is unknown, of the wrong type or out of range.  The message
    is one line that names the key and says what is allowed."""


@dataclass(frozen=True)
class Param:
    """One scenario parameter: kind ``float | int | bool | vec3 | choice``, default,
    bounds (``choice``: one of the strings ``choices``)."""

    name: str
    kind: str
    default: Any
    doc: str
    unit: str = ""
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    choices: tuple[str, ...] = ()

    def describe_range(self) -> str:
        if self.kind == "choice":
            return ", ".join(f'"{c}"' for c in self.choices)
        if self.lo is None and self.hi is None:
            return ""
        def fmt(v: float) -> str:
            return str(int(v)) if float(v).is_integer() and abs(v) < 1e16 else f"{v:g}"

        lo = "-∞" if self.lo is None else fmt(self.lo)
        hi = "∞" if self.hi is None else fmt(self.hi)
        left = "(" if self.lo_open or self.lo is None else "["
        right = ")" if self.hi is None else "]"
        return f"{left}{lo}, {hi}{right}"

    def coerce(self, value: Any) -> Any:
        """Check ``value`` against the kind and range; return it normalised."""
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
                raise ParameterError(f"{n} must be a number, got {value!r}")
            v = float(value)
            if not math.isfinite(v):
                raise ParameterError(f"{n} must be finite, got {value!r}")
            self._check_range(v)
            return v
        if self.kind == "vec3":
            ok = isinstance(value, list | tuple) and len(value) == 3 and all(
                isinstance(c, int | float) and not isinstance(c, bool) for c in value)
            if not ok or not all(math.isfinite(float(c)) for c in value):
                raise ParameterError(f"{n} must be a list of three numbers, e.g. [0, 0, 1], "
                                     f"got {value!r}")
            return [float(c) for c in value]
        if self.kind == "choice":
            if not isinstance(value, str) or value not in self.choices:
                raise ParameterError(f"{n} must be one of {self.describe_range()}, "
                                     f"got {value!r}")
            return value
        raise AssertionError(f"unknown parameter kind {self.kind}")

    def _check_range(self, v: float) -> None:
        bad = (self.lo is not None and (v < self.lo or (self.lo_open and v == self.lo))) or (
            self.hi is not None and v > self.hi)
        if bad:
            raise ParameterError(f"{self.name} = {v!r} is out of range: it must lie in "
                                 f"{self.describe_range()}")


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
    accuracy_c: float | None = None
    """Calibration of the accuracy guide (:func:`engine.stability.accuracy_guide`): the
    measured ``h ω_max / sqrt(ε)`` of the second-order schemes on this model (``None``: no
    guide, e.g. when impacts make the energy error first order)."""

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
