"""Scenario files: TOML with a model, its parameters and default run settings.

```toml
title = "Particle-binder torus impacting a wall"
model = "torus"

[run]                 # defaults for `rrp run` and the app; flags override them
integrator = "rrp-newmark"
h = 1e-3
t_end = 25.0
every = 10            # record every N steps

[parameters]          # any subset of the model's parameters (docs/scenarios.md)
n_particles = 80
v0 = 1.0
```

A built-in scenario is named by its file stem (``assets/scenarios/<name>.toml``); a path
to a user's own file works wherever a name does.  Every error is a one-line
:class:`ScenarioError` naming the file and the key.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .integrators.registry import INTEGRATORS, get_integrator
from .models import MODELS, Model, ParameterError, get_model_spec
from .models.assembly import geometry_json
from .models.assembly_input import GEOMETRY_KEYS, AssemblyError
from .models.base import _short

SCENARIO_DIR = Path(__file__).resolve().parent.parent / "assets" / "scenarios"

TOP_KEYS = ("title", "description", "model", "run", "parameters")
RUN_KEYS = ("integrator", "h", "t_end", "every", "energy_tolerance")
MAX_EVERY = 10**10
"""The largest ``run.every``: no run takes more steps (``app.cli.MAX_STEPS``)."""


class ScenarioError(ValueError):
    """A scenario cannot be loaded; the message is one line naming the file and key."""


@dataclass(frozen=True)
class RunSettings:
    integrator: str = "rrp-newmark"
    h: float = 1e-3
    t_end: float = 10.0
    every: int = 10
    energy_tolerance: float = 1.0
    t_end_given: bool = True
    """Whether ``t_end`` was given; a scenario with stages and without it runs their
    total (:meth:`Scenario.t_end_at`: at another ``h``, theirs at that ``h``)."""


@dataclass(frozen=True)
class Scenario:
    name: str
    model: str
    title: str
    description: str
    params: dict[str, Any]
    run: RunSettings
    path: Path | None = None
    overrides: dict[str, Any] = field(default_factory=dict)
    stages: tuple = ()
    """The run's stages (``engine.models.stages.Stage``; an assembly's ``[[stages]]``)."""

    def t_end_at(self, h: float) -> float:
        """The run's end at step ``h``: ``run.t_end`` if given, else the stages' total at
        ``h`` (:class:`ScenarioError`, one line, for a duration that is not a whole
        number of steps of ``h``)."""
        if self.run.t_end_given or not self.stages:
            return self.run.t_end
        from .models.stages import stages_total

        try:
            return stages_total(self.stages, h)
        except ValueError as exc:
            raise ScenarioError(f"{self.name}: [[stages]] {exc}") from None

    def build_model(self) -> Model:
        """Build the model from the resolved parameters."""
        try:
            return get_model_spec(self.model).build(dict(self.params))
        except ParameterError as exc:
            raise ScenarioError(f"{self.name}: {exc}") from None

    def with_overrides(self, overrides: Mapping[str, Any]) -> Scenario:
        """The same scenario with some parameters replaced (validated)."""
        spec = get_model_spec(self.model)
        merged = {**self.params, **overrides}
        try:
            params = _resolve(spec, merged)
        except ParameterError as exc:
            raise ScenarioError(f"{self.name}: {exc}") from None
        return replace(self, params=params, overrides={**self.overrides, **overrides})


def builtin_scenarios() -> list[str]:
    """Names of the scenario files shipped in ``assets/scenarios``."""
    return sorted(p.stem for p in SCENARIO_DIR.glob("*.toml"))


def scenario_path(name_or_path: str | Path) -> Path:
    """Resolve a built-in name or a path to an existing ``.toml`` file."""
    s = str(name_or_path)
    p = Path(s).expanduser()
    if p.suffix == ".toml" or p.exists() or "/" in s or "\\" in s:
        if not p.is_file():
            raise ScenarioError(f"scenario file {s!r} not found")
        return p
    builtin = SCENARIO_DIR / f"{s}.toml"
    if builtin.is_file():
        return builtin
    raise ScenarioError(f"unknown scenario {s!r}; built-in scenarios: "
                        f"{', '.join(builtin_scenarios())} (or give a path to a .toml file)")


def load_scenario(name_or_path: str | Path,
                  overrides: Mapping[str, Any] | None = None) -> Scenario:
    """Load, validate and (optionally) override a scenario."""
    path = scenario_path(name_or_path)
    label = path.name
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{label}: invalid TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"{label}: cannot read the file: {exc}") from None
    sc = scenario_from_dict(data, label, path)
    if overrides:
        sc = sc.with_overrides(overrides)
    return sc


def scenario_from_dict(data: Mapping[str, Any], label: str = "<scenario>",
                       path: Path | None = None) -> Scenario:
    model = data.get("model")
    allowed = TOP_KEYS + (GEOMETRY_KEYS if model == "assembly" else ())
    for key in data:
        if key not in allowed:
            hint = (" (a key of model = \"assembly\")" if key in GEOMETRY_KEYS else "")
            raise ScenarioError(f"{label}: unknown key {key!r}{hint}; allowed: "
                                f"{', '.join(allowed)}")
    if not isinstance(model, str):
        raise ScenarioError(f"{label}: 'model' must name a model: {', '.join(MODELS)}")
    if model not in MODELS:
        raise ScenarioError(f"{label}: unknown model {model!r}; known: {', '.join(MODELS)}")
    spec = MODELS[model]
    params_in = data.get("parameters", {})
    if not isinstance(params_in, dict):
        raise ScenarioError(f"{label}: [parameters] must be a table")
    if model == "assembly":  # the geometry: a parameter of its own (issue #35)
        if "geometry" in params_in:
            raise ScenarioError(f"{label}: [parameters] geometry is set from the top-level "
                                f"keys {', '.join(GEOMETRY_KEYS)}; do not give it")
        folder = path.parent if path is not None else Path.cwd()
        params_in = {**params_in, "geometry": geometry_json(
            {k: data[k] for k in GEOMETRY_KEYS if k in data}, folder, label)}
    try:
        params, built = _resolve_built(spec, params_in)
    except AssemblyError as exc:  # (names its file and line itself)
        raise ScenarioError(f"{label}: {exc}") from None
    except ParameterError as exc:
        raise ScenarioError(f"{label}: [parameters] {exc}") from None
    run = _run_settings(data.get("run", {}), label, built)
    for key in ("title", "description"):
        if key in data and not isinstance(data[key], str):
            raise ScenarioError(f"{label}: {key!r} must be a string")
    name = path.stem if path is not None else label
    stages = tuple(getattr(built, "stages", ()) or ())
    if stages and "t_end" not in data.get("run", {}):
        from .models.stages import stages_total

        try:  # (the run's end: the stages' total, issue #44 item 5)
            run = replace(run, t_end=stages_total(stages, run.h), t_end_given=False)
        except ValueError as exc:
            raise ScenarioError(f"{label}: [[stages]] {exc}") from None
    return Scenario(name=name, model=model, title=data.get("title", spec.title),
                    description=data.get("description", ""), params=params, run=run,
                    path=path, stages=stages)


def _resolve(spec, given: Mapping[str, Any]) -> dict[str, Any]:
    return _resolve_built(spec, given)[0]


def _resolve_built(spec, given: Mapping[str, Any]) -> tuple[dict[str, Any], Model]:
    """The parameters, and the model built once from them to catch inconsistent
    combinations (e.g. a ring touching the wall)."""
    from .models.base import resolve_parameters

    params = resolve_parameters(spec.schema, given, spec.name)
    return params, spec.build(dict(params))


def _run_settings(run: Any, label: str, model: Model | None = None) -> RunSettings:
    """The ``[run]`` table checked; without ``integrator``, the natural scheme of
    ``model`` (``engine.simulation.default_integrator``: a spring-pendulum file without
    ``[run]`` runs with ``moreau-symmetric``, not the ``rrp-newmark`` it cannot take)."""
    if not isinstance(run, dict):
        raise ScenarioError(f"{label}: [run] must be a table")
    for key in run:
        if key not in RUN_KEYS:
            raise ScenarioError(f"{label}: unknown key run.{key}; allowed: {', '.join(RUN_KEYS)}")
    d = RunSettings()
    if "integrator" in run or model is None:
        integ = run.get("integrator", d.integrator)
    else:
        from .simulation import default_integrator

        integ = default_integrator(model)
    try:
        known = isinstance(integ, str) and get_integrator(integ) is not None
    except KeyError:
        known = False
    if not known:
        raise ScenarioError(f"{label}: run.integrator = {_short(integ)} is unknown; choose one of: "
                            f"{', '.join(INTEGRATORS)}")
    h = _positive(run.get("h", d.h), "run.h", label)
    from .simulation import H_MAX

    if h > H_MAX:
        raise ScenarioError(f"{label}: run.h = {h:g} is out of range: it must lie in "
                            f"(0, {H_MAX:g}] (the largest step the driver accepts; every "
                            "model here has time scales ≲ 1)")
    t_end = _positive(run.get("t_end", d.t_end), "run.t_end", label)
    tol = _positive(run.get("energy_tolerance", d.energy_tolerance), "run.energy_tolerance",
                    label)
    every = run.get("every", d.every)
    if isinstance(every, bool) or not isinstance(every, int) or not 1 <= every <= MAX_EVERY:
        raise ScenarioError(f"{label}: run.every must be an integer from 1 to "
                            f"{MAX_EVERY:.0e} (no run takes more steps), got "
                            f"{_short(every)}")
    return RunSettings(integ, h, t_end, every, tol)


def _positive(v: Any, key: str, label: str) -> float:
    """``v`` as a positive, finite float; otherwise a one-line :class:`ScenarioError`
    (an integer too large for a double included)."""
    try:
        ok = (not isinstance(v, bool) and isinstance(v, int | float)
              and math.isfinite(float(v)) and v > 0)
    except OverflowError:
        ok = False
    if not ok:
        raise ScenarioError(f"{label}: {key} must be a positive, finite number, got "
                            f"{_short(v)}")
    return float(v)


def parse_set(expr: str) -> tuple[str, Any]:
    """Parse ``key=value`` with the value read as TOML (``omega0=[3,1,2]``,
    ``wall=false``, ``v0=2``); a bare word that is not TOML is taken as a string."""
    if "=" not in expr:
        raise ScenarioError(f"--set {expr!r}: expected key=value, e.g. --set v0=2")
    key, raw = expr.split("=", 1)
    key = key.strip()
    if not key:
        raise ScenarioError(f"--set {expr!r}: the key is empty")
    try:
        value = tomllib.loads(f"v = {raw.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw.strip()
    return key, value


def parse_sets(exprs: Iterable[str]) -> dict[str, Any]:
    return dict(parse_set(e) for e in exprs)
