"""Fuzzing the scenario files (issue #26, "extreme values").

Seeded mutations of every built-in scenario — extreme floats (0, ±1e-300, ±1e300, nan,
±inf, the largest and the least doubles), each parameter at the limits the validator
allows (docs/scenarios.md, "Limits"), negatives, huge integers, wrong types (strings,
booleans, lists, tables, dates), missing and unknown keys, truncated or garbled TOML —
each run through the CLI for a few steps (``--t-end`` of a few ``h``).

Every file either runs (exit 0), ends in the clean failure message of a run (exit 1:
"rrp: error: the run blew up …", a solver that did not converge), or is refused in one
line (exit 2); never a traceback, an ``internal error``, a hang, or a warning.  The bulk
runs in this process, calling :func:`app.cli.main` with stdout and stderr captured and
every warning an error (``warnings.simplefilter("error")``: a numpy ``RuntimeWarning``
becomes an exception, which ``main`` reports as an internal error, which fails the
test); a few go through real subprocesses, to show what the terminal sees.
"""

from __future__ import annotations

import contextlib
import datetime
import io
import json
import math
import os
import random
import re
import shutil
import signal
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
SCENARIO_DATA = sorted((ROOT / "assets" / "scenarios").glob("*.csv"))
"""The spheres and bonds some scenarios read (bpm-metamaterial: LAMMPS's, issue #44),
copied beside the mutated files so that their relative paths resolve."""

SEED = 26
N_FILES = 350
"""Mutated files in the in-process batch (the issue asks for at least 300)."""
T_END = 0.004
"""The end time given with ``--t-end``: a few steps at the scenarios' ``h``."""
MAX_STEPS_HERE = 1000
"""The most steps a mutated run may take here (a legal value that asks for more, such
as ``run.h = 1e-12``, is drawn again: the test is after refusals and failures, and a run
of 10⁹ legal steps is neither)."""
MAX_BODIES_HERE = 5000
"""The most bodies a mutated model may have here (more is legal up to 10⁷: drawn
again, for the same reason)."""
HANG_SECONDS = 600
"""A run that takes longer than this is a hang (a cold cache compiles a model's kernels
in tens of seconds; this only catches a run that never ends)."""

NAN, INF = float("nan"), float("inf")
EXTREME_FLOATS: tuple[float, ...] = (
    0.0, -0.0, 1e-300, -1e-300, 1e300, -1e300, NAN, INF, -INF, -1.0, -2.5,
    5e-324, 1.7976931348623157e308, 1e-30, 1e30, 1e-12, 1e12)
HUGE_INTS: tuple[int, ...] = (0, -1, -7, 2**31, 2**63 - 1, -(2**63), 10**6, 10**9, 10**400)
WRONG_TYPES: tuple[Any, ...] = (
    "", "text", "1e300", "nan", True, False, [], [1, 2], [1.0, 2.0, 3.0, 4.0],
    [[1], [2], [3]], ["a", "b", "c"], [NAN, 0.0, 0.0], [1e300, 1e300, 1e300],
    [0.0, -1e300, INF], {"a": 1}, {}, datetime.date(1979, 5, 27))
ALL_VALUES = EXTREME_FLOATS + HUGE_INTS + WRONG_TYPES
RUN_KEYS = ("integrator", "h", "t_end", "every", "energy_tolerance")
FLAGS: dict[str, tuple[str, ...]] = {
    "--h": ("0", "-1", "nan", "inf", "1e-300", "1e-30", "1e400", "5", "abc", ""),
    "--t-end": ("0", "-1", "nan", "inf", "1e300", "1e-300", "1e400", "abc"),
    "--every": ("0", "-1", "2.5", "abc", "1" + "0" * 400, "10000000000000"),
    "--energy-tolerance": ("0", "-1", "nan", "inf", "1e-300", "1e300", "abc"),
}
"""Command-line flags with extreme values (none makes a legal long run)."""
STDERR_PREFIXES = ("rrp: ", "warning: ", "note: ")
"""What every line the CLI writes to stderr starts with (errors, progress, advice)."""


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
    if isinstance(v, datetime.date):
        return v.isoformat()
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


def test_the_toml_writer_round_trips():
    data = {"title": "é \"q\"", "model": "torus", "run": {"h": 1e-300, "every": 2**63 - 1},
            "parameters": {"a": [NAN, -INF, 5e-324], "b": {"c": True}, "d": 10**400,
                           "when": datetime.date(1979, 5, 27), "e": []}}
    back = tomllib.loads(to_toml(data))
    assert back["parameters"]["d"] == 10**400 and back["run"] == data["run"]
    assert math.isnan(back["parameters"]["a"][0]) and back["parameters"]["a"][1:] == [-INF,
                                                                                       5e-324]
    assert back["title"] == data["title"] and back["parameters"]["when"] == data[
        "parameters"]["when"]


# ------------------------------------------------------------------ mutations
@dataclass(frozen=True)
class Case:
    """One mutated scenario file: its source scenario, what was done, the text, and
    whether the run gets ``--t-end`` (not when ``run.t_end`` is what was mutated: the
    file's own end time then goes through the step-count guard)."""

    source: str
    what: str
    text: str
    t_end_flag: bool = True
    args: tuple[str, ...] = ()
    """Further arguments: ``--set KEY=VALUE``, or a flag with an extreme value."""

    def argv(self, path: Path) -> list[str]:
        return (["run", str(path)] + (["--t-end", repr(T_END)] if self.t_end_flag else [])
                + list(self.args))


def _limits(model: str, key: str) -> list[Any]:
    """The values at the edges of what the validator accepts for ``key`` (and just
    beyond them): the extreme values that must run, or end cleanly."""
    from engine.models import MODELS
    from engine.models.base import BIG, TINY

    spec = MODELS.get(model)
    p = {q.name: q for q in spec.schema}.get(key) if spec else None
    if p is None or p.kind not in ("float", "vec3", "int"):
        return []
    lo, hi, _ = p.bounds()
    if p.kind == "int":  # (the top of a count is a model too large to run here)
        return [lo, lo - 1, hi + 1] if lo is not None and hi is not None else []
    edges = [lo, hi, TINY, -TINY, 0.0, 2 * BIG, -2 * BIG, 0.5 * TINY]
    if p.kind == "float":
        return edges
    out = []
    for c in edges:
        vec = list(p.default)
        vec[len(out) % 3] = c
        out.append(vec)
    return out + [[hi] * 3, [lo] * 3]


def _mutate_value(rng: random.Random, old: Any, limits: list[Any]) -> Any:
    """A value at the validator's limits, an extreme or a wrong one; for a vector, often
    a vector with one bad component."""
    if limits and rng.random() < 0.4:
        return rng.choice(limits)
    if isinstance(old, list) and old and rng.random() < 0.6:
        new = list(old)
        new[rng.randrange(len(new))] = rng.choice(EXTREME_FLOATS + HUGE_INTS)
        return new
    if isinstance(old, float | int) and not isinstance(old, bool) and rng.random() < 0.15:
        return -old if old else -1.0
    return rng.choice(ALL_VALUES)


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _long_run(case: Case, data: dict[str, Any]) -> bool:
    """Whether the run of ``case`` is legal but too long for this test: more than
    :data:`MAX_STEPS_HERE` steps, but few enough that ``rrp run`` accepts it."""
    from engine.run_steps import MAX_STEPS
    from engine.scenarios import RunSettings

    run = data.get("run") if isinstance(data.get("run"), dict) else {}
    h = run.get("h", RunSettings.h)
    t_end = T_END if case.t_end_flag else run.get("t_end", RunSettings.t_end)
    flags = dict(zip(case.args[::2], case.args[1::2], strict=False))
    with contextlib.suppress(ValueError):
        h = float(flags["--h"]) if "--h" in flags else h
        t_end = float(flags["--t-end"]) if "--t-end" in flags else t_end
    if not (_number(h) and _number(t_end)):
        return False
    try:
        steps = t_end / h
    except (ZeroDivisionError, OverflowError):
        return False
    return MAX_STEPS_HERE < steps <= MAX_STEPS


def _large_model(data: dict[str, Any]) -> bool:
    """Whether the parameters describe a legal model of more than
    :data:`MAX_BODIES_HERE` bodies (a pile of many rings, a ring of many spheres); a
    count the validator refuses is not one (those refusals stay in)."""
    from engine.models import MODELS
    from engine.models.tori_pile import MAX_SPHERES

    params = data.get("parameters")
    model = data.get("model")
    if not isinstance(params, dict) or not isinstance(model, str) or model not in MODELS:
        return False
    n = 1
    for p in MODELS[model].schema:
        if p.name in ("n_tori", "n_particles"):
            v = params.get(p.name, p.default)
            if not isinstance(v, int) or isinstance(v, bool) or not p.lo <= v <= p.hi:
                return False
            n *= v
    return MAX_BODIES_HERE < n <= MAX_SPHERES


def mutate(rng: random.Random, path: Path) -> Case:
    """One random mutation of the scenario at ``path`` (drawn again while it would make
    a legal run too long or too large for this test)."""
    while True:
        case = _mutate_once(rng, path)
        try:
            data = tomllib.loads(case.text)
        except tomllib.TOMLDecodeError:
            return case
        if case.args[:1] == ("--set",) and isinstance(data.get("parameters"), dict):
            key, value = case.args[1].split("=", 1)
            with contextlib.suppress(tomllib.TOMLDecodeError):
                data["parameters"][key] = tomllib.loads(f"v = {value}")["v"]
        if not (_long_run(case, data) or _large_model(data)):
            return case


def _mutate_once(rng: random.Random, path: Path) -> Case:
    text = path.read_text(encoding="utf-8")
    data = tomllib.loads(text)
    data.setdefault("parameters", {})
    data.setdefault("run", {})
    model = data["model"]
    from engine.models import MODELS

    keys = sorted(set(data["parameters"]) | {p.name for p in MODELS[model].schema})
    kind = rng.choices(
        ("param", "param2", "set", "flag", "run", "top", "missing", "unknown", "truncate",
         "garble"), weights=(45, 10, 8, 5, 12, 5, 6, 5, 5, 3))[0]
    src = path.stem
    if kind == "set":  # the same values through --set, on the file as it is
        key = rng.choice(keys + ["no_such_key"])
        value = _mutate_value(rng, data["parameters"].get(key, 1.0), _limits(model, key))
        arg = f"{key}={_value(value)}"
        return Case(src, f"--set {arg[:60]}", text, args=("--set", arg))
    if kind == "flag":
        flag = rng.choice(sorted(FLAGS))
        value = rng.choice(FLAGS[flag])
        return Case(src, f"{flag} {value[:60]}", text, t_end_flag=flag != "--t-end",
                    args=(flag, value))
    if kind in ("param", "param2"):
        what = []
        for key in rng.sample(keys, 2 if kind == "param2" else 1):
            value = _mutate_value(rng, data["parameters"].get(key, 1.0), _limits(model, key))
            data["parameters"][key] = value
            what.append(f"{key} = {_value(value)[:60]}")
        return Case(src, "parameters: " + ", ".join(what), to_toml(data))
    if kind == "run":
        key = rng.choice(RUN_KEYS)
        value = _mutate_value(rng, data["run"].get(key, 1.0), [])
        data["run"][key] = value
        return Case(src, f"run.{key} = {_value(value)[:60]}", to_toml(data),
                    t_end_flag=key != "t_end")
    if kind == "top":
        key = rng.choice(("model", "title", "description", "run", "parameters"))
        value = rng.choice(ALL_VALUES + ("torus", "pendulum", "no-such-model"))
        data[key] = value
        return Case(src, f"{key} = {_value(value)[:60]}", to_toml(data))
    if kind == "missing":
        where = rng.choice(("parameters", "run", "top"))
        table = data if where == "top" or not data[where] else data[where]
        key = rng.choice(sorted(table))
        del table[key]
        return Case(src, f"missing {key}", to_toml(data))
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


def cases(n: int = N_FILES, seed: int = SEED) -> list[Case]:
    """``n`` mutated files, round-robin over every built-in scenario (seeded)."""
    rng = random.Random(seed)
    return [mutate(rng, SCENARIOS[i % len(SCENARIOS)]) for i in range(n)]


# ------------------------------------------------------------------ running them
@dataclass
class Outcome:
    case: Case
    code: int | str
    stderr: str


class _Hang(BaseException):
    """A run past :data:`HANG_SECONDS` (a BaseException: ``main`` does not catch it)."""


def _on_alarm(signum, frame):
    raise _Hang(f"no result after {HANG_SECONDS} s")


def run_in_process(argv: list[str]) -> tuple[int | str, str]:
    """``main(argv)`` with stdout and stderr captured and every warning an error:
    ``(exit code or the escaped exception, stderr)``."""
    from app.cli import main

    out, err = io.StringIO(), io.StringIO()
    old = signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(HANG_SECONDS)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code: int | str = main(argv)
                except BaseException as exc:  # noqa: BLE001  (reported, not raised)
                    code = f"{type(exc).__name__}: {exc}"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    return code, err.getvalue()


def problems(code: int | str, stderr: str) -> list[str]:
    """What is wrong with a run's exit code and stderr (empty: nothing)."""
    from app.errors import EXIT_FAILED, EXIT_INPUT

    bad = []
    if code not in (0, EXIT_FAILED, EXIT_INPUT):
        bad.append(f"exit {code!r}")
    for word in ("Traceback", "internal error", "Warning", "warning: ", "Error:"):
        if word in stderr and not (word == "warning: " and "warning: h = " in stderr):
            bad.append(f"{word!r} on stderr")
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    stray = [ln for ln in lines if not ln.startswith(STDERR_PREFIXES)]
    if stray:
        bad.append(f"a stderr line not from the CLI: {stray[0][:120]!r}")
    errors = [ln for ln in lines if ln.startswith("rrp: error:")]
    if code in (EXIT_FAILED, EXIT_INPUT) and len(errors) != 1:
        bad.append(f"{len(errors)} error lines for exit {code}")
    if code == 0 and errors:
        bad.append("an error line with exit 0")
    return bad


def _with_data(d: Path) -> Path:
    """``d`` with the CSV files the scenarios name copied in (beside their copies)."""
    for data in SCENARIO_DATA:
        shutil.copy(data, d / data.name)
    return d


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory) -> list[Outcome]:
    d = _with_data(tmp_path_factory.mktemp("fuzz"))
    out = []
    for i, case in enumerate(cases()):
        path = d / f"{i:03d}-{case.source}.toml"
        path.write_text(case.text, encoding="utf-8")
        code, err = run_in_process(case.argv(path))
        out.append(Outcome(case, code, err))
    return out


@pytest.mark.slow  # the fuzz of ≥ 300 scenario files (docs/testing.md)
def test_mutated_scenario_files_run_or_are_refused_in_one_line(outcomes):
    """≥ 300 seeded mutations over every built-in scenario: exit 0, 1 (a failed run's
    one line) or 2 (a refusal's one line); nothing else on stderr but the CLI's own
    lines, no warning (they are errors here), no traceback, no internal error."""
    assert len(outcomes) >= 300
    bad = [f"{o.case.source}: {o.case.what}: {'; '.join(p)}\n    {o.stderr.strip()[:300]}"
           for o in outcomes if (p := problems(o.code, o.stderr))]
    assert not bad, f"{len(bad)} of {len(outcomes)} mutated files:\n" + "\n".join(bad)


@pytest.mark.slow  # the fuzz of ≥ 300 scenario files (docs/testing.md)
def test_the_fuzz_reaches_every_scenario_and_every_outcome(outcomes):
    """Not vacuous: every scenario has mutated files that ran and files that were
    refused, and some runs failed cleanly (a blow-up, a solver that gave up)."""
    for path in SCENARIOS:
        codes = {o.code for o in outcomes if o.case.source == path.stem}
        assert {0, 2} <= codes, (path.stem, codes)
    assert sum(o.code == 1 for o in outcomes) >= 3
    assert sum(o.code == 0 for o in outcomes) >= 50


@pytest.mark.slow  # the fuzz of ≥ 300 scenario files (docs/testing.md)
def test_a_refusal_names_the_key_its_range_and_why(outcomes):
    """A single parameter out of the validator's limits is refused naming the key, the
    allowed range and why (for a huge number: that it exceeds the limit every number
    shares, or that the quantity cannot be negative)."""
    from engine.models.base import BIG

    seen = 0
    for o in outcomes:
        m = re.fullmatch(r"parameters: (\w+) = (-?[0-9.e+]+)", o.case.what)
        line = o.stderr.strip()
        if o.code != 2 or not m or "is out of range:" not in line:
            continue
        seen += 1
        assert f"] {m.group(1)} = " in line, line
        assert re.search(r"it must lie in [\[(].*[\])] \(.+\)$|must be 0 or at least", line), line
        v, why = float(m.group(2)), _param(o.case.source, m.group(1)).why
        if why:
            assert line.endswith(f"({why})"), line
        elif v > BIG:
            assert f"may exceed {BIG:g} in magnitude" in line, line
        elif v < -BIG:
            assert re.search(f"may exceed {BIG:g} in magnitude|positive|negative", line), line
    assert seen >= 10


def _param(scenario: str, key: str):
    from engine.models import MODELS

    data = tomllib.loads((ROOT / "assets" / "scenarios" / f"{scenario}.toml").read_text(
        encoding="utf-8"))
    return next(p for p in MODELS[data["model"]].schema if p.name == key)


# ------------------------------------------------------------------ through a terminal
def _rrp(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env.pop("RRP_DEBUG", None)
    env.pop("PYTHONWARNINGS", None)
    return subprocess.run([sys.executable, "-m", "app", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=HANG_SECONDS)


@pytest.mark.slow  # the fuzz of ≥ 300 scenario files (docs/testing.md)
def test_what_the_terminal_sees(outcomes, tmp_path):
    """A handful of the mutated files as real processes, warnings left as Python shows
    them: per scenario one that ran or failed and one that was refused, plus every
    clean failure up to eight: the same exit code as in process, nothing on stderr but
    the CLI's lines."""
    picked: list[Outcome] = []
    for path in SCENARIOS:
        mine = [o for o in outcomes if o.case.source == path.stem]
        picked += [next(o for o in mine if o.code == c) for c in (0, 2)
                   if any(o.code == c for o in mine)]
    picked += [o for o in outcomes if o.code == 1][:8]
    _with_data(tmp_path)
    for i, o in enumerate(picked):
        path = tmp_path / f"{i}.toml"
        path.write_text(o.case.text, encoding="utf-8")
        res = _rrp(*o.case.argv(path))
        assert res.returncode == o.code, (o.case.what, res.stderr)
        assert not problems(res.returncode, res.stderr), (o.case.what, res.stderr)
        assert "Traceback" not in res.stdout


@pytest.mark.parametrize("args, code, named", [
    (("pendulum", "--set", "omega0=[1e300, 0, 0]"), 2, "omega0[0] = 1e+300 is out of range"),
    (("torus", "--set", "ring_diameter=1e-300"), 2, "ring_diameter = 1e-300 is out of range"),
    (("spring-pendulum", "--set", "mass=1e-300"), 2, "mass = 1e-300 is out of range"),
    (("spring-pendulum", "--set", "mass=1e300"), 2, "mass = 1e+300 is out of range"),
    (("tori-pile", "--set", "box=1e300"), 2, "box = 1e+300 is out of range"),
    (("tori-pile", "--set", "box=1e20"), 2, "box = 1e+20 is 7.62e+19 cells"),
    (("tori-pile", "--set", "n_tori=1000000"), 2, "= 2e+07 spheres is more than 1e+07"),
    pytest.param(("tori-pile", "--set", "damping=1e12"), 0, "status: complete",
                 marks=pytest.mark.slow),  # (a whole pile run: docs/testing.md)
    (("torus-free", "--set", "k_contact=5e-324"), 2, "must be 0 or at least 1e-30"),
    (("pendulum", "--set", "mass=1" + "0" * 400), 2, "is too large for a number"),
    (("spring-pendulum", "--set", "x0=5e-324"), 2, "x0 = 5e-324 is out of range"),
    (("spring-pendulum", "--set", "x0=1e-9"), 2, "must start at least 1e-06 l₀"),
    (("pendulum", "--set", "omega0=[1e30, 0, 0]"), 2, "the largest admissible h is ≈ 1e-30"),
    (("pendulum", "--every", "1" + "0" * 400), 2, "--every: must be an integer from 1 to"),
], ids=["omega0-1e300", "ring-1e-300", "mass-1e-300", "mass-1e300", "box-1e300", "box-1e20",
        "pile-2e7-spheres", "damping-1e12", "k-contact-denormal", "mass-400-digits",
        "x0-denormal", "x0-at-the-pivot", "rrp-exact-limit", "every-huge"])
def test_the_values_of_the_issue_end_in_one_line(args, code, named):
    """The internal errors the issue names, and those the fuzz found first: each now a
    one-line refusal naming the value (exit 2) or a clean blow-up (exit 1), as a real
    process shows it."""
    res = _rrp("run", *args, "--t-end", repr(T_END), "-q")
    assert res.returncode == code, res.stderr
    assert not problems(res.returncode, res.stderr), res.stderr
    assert named in res.stderr + res.stdout, res.stderr


# ------------------------------------------------------------------ the limits, directly
def test_every_number_parameter_has_the_shared_limits():
    """Each float and vec3 parameter of every model takes its limits and refuses what
    lies beyond them, naming the key, the range and why: ``±BIG``, the gap
    ``(-TINY, TINY)`` about 0, an integer too large for a double."""
    from engine.models import MODELS, ParameterError
    from engine.models.base import BIG, TINY

    n = 0
    for spec in MODELS.values():
        for p in spec.schema:
            if p.kind not in ("float", "vec3"):
                continue
            lo, hi, _ = p.bounds()
            assert -BIG <= lo < hi <= BIG, p.name
            wrap = (lambda v: [v] * 3) if p.kind == "vec3" else (lambda v: v)  # noqa: E731
            for v in (lo, hi, 0.0 if lo <= 0.0 else lo):
                p.coerce(wrap(v))
            for v, words in ((hi * 2 if hi > 0 else hi + 1, "out of range: it must lie in"),
                             (0.5 * TINY, "must be positive" if lo == TINY
                              else "must be 0 or at least 1e-30"),
                             (10**400, "too large for a number")):
                with pytest.raises(ParameterError, match=re.escape(words)) as info:
                    p.coerce(wrap(v))
                assert str(info.value).startswith(p.name) and "\n" not in str(info.value)
            n += 1
    assert n > 50


def test_run_settings_limits_and_the_default_scheme(tmp_path):
    """``run.h`` at most 1, ``run.every`` at most 10¹⁰, huge integers named; without
    ``run.integrator`` a file takes its model's natural scheme."""
    from engine.scenarios import ScenarioError, load_scenario

    def load(text: str):
        path = tmp_path / "s.toml"
        path.write_text(text, encoding="utf-8")
        return load_scenario(path)

    for run, words in (("h = 2.0", "run.h = 2 is out of range: it must lie in (0, 1]"),
                       ("every = 100000000000", "run.every must be an integer from 1 to"),
                       (f"t_end = {10**400}", "run.t_end must be a positive, finite number"),
                       ("energy_tolerance = nan", "run.energy_tolerance must be a positive")):
        with pytest.raises(ScenarioError, match=re.escape(words)):
            load(f'model = "pendulum"\n[run]\n{run}\n')
    assert load('model = "spring-pendulum"\n').run.integrator == "moreau-symmetric"
    assert load('model = "dumbbells"\n').run.integrator == "lgvi"
    assert load('model = "torus"\n').run.integrator == "rrp-newmark"
    assert load('model = "torus"\n[run]\nintegrator = "rk4"\n').run.integrator == "rk4"
