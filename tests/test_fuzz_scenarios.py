"""Fuzzing the scenario files (issue #26, "extreme values"): seeded mutations of every
built-in scenario — extreme floats (0, ±1e-300, ±1e300, nan, ±inf, the largest and
the smallest doubles), negatives, huge integers, wrong types, missing and unknown keys,
truncated or garbled TOML — each run through the CLI for a few steps.

Every file either runs (exit 0), ends in the clean blow-up message (exit 1, "rrp:
error: …"), or is refused in one line (exit 2); never a traceback, an ``internal
error``, a hang, or a warning.  The bulk runs in this process, calling
:func:`app.cli.main` with stdout and stderr captured and every warning an error
(``warnings.simplefilter("error")``: a numpy ``RuntimeWarning`` would become an
exception, which ``main`` reports as an internal error); a few go through real
subprocesses, to show what the terminal sees.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import random
import re
import subprocess
import sys
import tomllib
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = sorted((ROOT / "assets" / "scenarios").glob("*.toml"))

SEED = 26
N_FILES = 350
"""Mutated files in the in-process batch (the issue asks for at least 300)."""
T_END = 0.004
"""The end time given with ``--t-end`` (a few steps at the scenarios' ``h``)."""

MAX_STEPS_HERE = 1000
"""The most steps a mutated run may take here (more would make the test slow)."""

NAN, INF = float("nan"), float("inf")
EXTREME_FLOATS: tuple[float, ...] = (
    0.0, -0.0, 1e-300, -1e-300, 1e300, -1e300, NAN, INF, -INF, -1.0, -2.5,
    5e-324, 1.7976931348623157e308, 1e-30, 1e30, 1e-12, 1e12)
HUGE_INTS: tuple[int, ...] = (0, -1, -7, 2**31, 2**63 - 1, -(2**63), 10**6, 10**9, 10**400)
WRONG_TYPES: tuple[Any, ...] = (
    "", "text", "1e300", "nan", True, False, [], [1, 2], [1.0, 2.0, 3.0, 4.0],
    [[1], [2], [3]], ["a", "b", "c"], [NAN, 0.0, 0.0], [1e300, 1e300, 1e300],
    [0.0, -1e300, INF], {"a": 1}, {})
ALL_VALUES = EXTREME_FLOATS + HUGE_INTS + WRONG_TYPES
RUN_KEYS = ("integrator", "h", "t_end", "every", "energy_tolerance")


# ------------------------------------------------------------------ writing TOML
_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(k: str) -> str:
    return k if _BARE.match(k) else json.dumps(k)


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(_value(c) for c in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_key(k)} = {_value(c)}" for k, c in v.items()) + "}"
    raise TypeError(type(v))


def to_toml(data: dict[str, Any]) -> str:
    """TOML text for ``data``: scalars first, then one ``[table]`` per dict value."""
    lines = [f"{_key(k)} = {_value(v)}" for k, v in data.items() if not isinstance(v, dict)]
    for k, v in data.items():
        if isinstance(v, dict):
            lines.append(f"\n[{_key(k)}]")
            lines += [f"{_key(kk)} = {_value(vv)}" for kk, vv in v.items()]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ mutations
@dataclass(frozen=True)
class Case:
    """One mutated scenario file: its source scenario, what was done, the text, and
    whether the run gets ``--t-end`` (not when the mutation is of ``run.t_end``)."""

    source: str
    what: str
    text: str
    t_end_flag: bool = True


def _schema_keys(model: str) -> list[str]:
    from engine.models import MODELS

    return [p.name for p in MODELS[model].schema] if model in MODELS else []


def _mutate_value(rng: random.Random, old: Any) -> Any:
    """An extreme or wrong value; for a vector, often a vector with one bad component."""
    if isinstance(old, list) and old and rng.random() < 0.6:
        new = list(old)
        new[rng.randrange(len(new))] = rng.choice(EXTREME_FLOATS + HUGE_INTS)
        return new
    if isinstance(old, float | int) and not isinstance(old, bool) and rng.random() < 0.15:
        return -old if old else -1.0
    return rng.choice(ALL_VALUES)


def _long_run(key: str, value: Any, h: float) -> bool:
    """Whether ``run.KEY = value`` makes a legal run too long for this test: more than
    ``MAX_STEPS_HERE`` steps but not so many that ``rrp run`` refuses it (such values
    are drawn again; the refusals are what the test is after)."""
    from app.cli import MAX_STEPS

    if isinstance(value, bool) or not isinstance(value, int | float) or key not in (
            "h", "t_end"):
        return False
    try:
        steps = T_END / value if key == "h" else value / h
    except (ZeroDivisionError, OverflowError):
        return False
    return MAX_STEPS_HERE < steps <= MAX_STEPS


def mutate(rng: random.Random, path: Path) -> Case:
    """One random mutation of the scenario at ``path``."""
    text = path.read_text(encoding="utf-8")
    data = tomllib.loads(text)
    data.setdefault("parameters", {})
    data.setdefault("run", {})
    keys = sorted(set(data["parameters"]) | set(_schema_keys(data["model"])))
    kind = rng.choices(
        ("param", "param2", "run", "top", "missing", "unknown", "truncate", "garble"),
        weights=(50, 12, 14, 5, 6, 5, 5, 3))[0]
    src = path.stem
    if kind in ("param", "param2"):
        what = []
        for key in rng.sample(keys, 2 if kind == "param2" else 1):
            value = _mutate_value(rng, data["parameters"].get(key, 1.0))
            data["parameters"][key] = value
            what.append(f"{key} = {_value(value)}")
        return Case(src, "parameters: " + ", ".join(what), to_toml(data))
    if kind == "run":
        key = rng.choice(RUN_KEYS)
        h = data["run"].get("h", 1e-3)
        value = _mutate_value(rng, data["run"].get(key, 1.0))
        while _long_run(key, value, h):
            value = _mutate_value(rng, data["run"].get(key, 1.0))
        data["run"][key] = value
        return Case(src, f"run.{key} = {_value(value)}", to_toml(data),
                    t_end_flag=key != "t_end")
    if kind == "top":
        key = rng.choice(("model", "title", "description", "run", "parameters"))
        value = rng.choice(ALL_VALUES + ("torus", "pendulum", "no-such-model"))
        data[key] = value
        return Case(src, f"{key} = {_value(value)}", to_toml(data))
    if kind == "missing":
        where = rng.choice(("parameters", "run", "top"))
        table = data if where == "top" else data[where]
        if not table:
            table = data
        key = rng.choice(sorted(table))
        del table[key]
        return Case(src, f"missing {where}.{key}", to_toml(data), t_end_flag=True)
    if kind == "unknown":
        where = rng.choice(("parameters", "run", "top"))
        table = data if where == "top" else data[where]
        name = rng.choice(("n_spheres", "Mass", "omega", "k", "x", "seed2", "h"))
        table[name] = rng.choice(ALL_VALUES[:12])
        return Case(src, f"unknown {where}.{name}", to_toml(data))
    if kind == "truncate":
        cut = rng.randrange(0, len(text))
        return Case(src, f"truncated at {cut}", text[:cut])
    junk = rng.choice(("= = =", "[parameters]\n[parameters]", "mass = 1\nmass = 2",
                       "\x00\x01", "[run\n", "x = [1, 2", '"unterminated', "é = 1"))
    pos = rng.randrange(0, len(text))
    return Case(src, f"garbled with {junk!r} at {pos}", text[:pos] + junk + text[pos:])


def cases(n: int, seed: int = SEED) -> list[Case]:
    """``n`` mutated files, round-robin over every built-in scenario (seeded)."""
    rng = random.Random(seed)
    return [mutate(rng, SCENARIOS[i % len(SCENARIOS)]) for i in range(n)]
