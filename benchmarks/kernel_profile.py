"""Where a cold test run's time goes, per test: how `tests/slow_cases.py` was drawn
(issue #34 item 6).

As a pytest plugin it records, for every test, its wall time, the seconds Numba spent
compiling in it (top-level ``numba:compile`` events, so a kernel is charged to the first
test that needs it) and the (scheme, force-field type) pairs its stepping loops were
called with (``advance_ws`` and ``prime_kernels``: every test that needs a compiled loop,
not just the first)::

    XDG_CACHE_HOME=$(mktemp -d) PYTHONPATH=benchmarks KERNEL_PROFILE=/tmp/cold.json \\
        .venv/bin/python -m pytest -p kernel_profile
    python benchmarks/kernel_profile.py /tmp/cold.json

The report lists each pair with the compile seconds of the test that first needed it and
every default test that needs it: a pair is only saved from a cold run when all its users
are slow.  Compiles in child processes (the CLI's tests) are not seen: they show as wall.
"""

from __future__ import annotations

import collections
import json
import os
import sys
import time

import pytest

_state: dict = {"test": "<collect>", "depth": 0, "t0": 0.0, "tests": {}, "types": {}}


def _entry(test: str) -> dict:
    return _state["tests"].setdefault(test, {"wall": 0.0, "compile": 0.0, "pairs": set()})


def _install() -> None:
    """Listen to Numba's compile events and wrap the stepping loop's entry points."""
    import numba
    from numba.core import event

    import engine.integrators.advance as advance

    class Compiles(event.Listener):
        def on_start(self, ev) -> None:
            if _state["depth"] == 0:
                _state["t0"] = time.perf_counter()
            _state["depth"] += 1

        def on_end(self, ev) -> None:
            _state["depth"] -= 1
            if _state["depth"] == 0:
                _entry(_state["test"])["compile"] += time.perf_counter() - _state["t0"]

    event.register("numba:compile", Compiles())

    def note(scheme: int, ff) -> None:
        kind = _state["types"].setdefault(str(numba.typeof(ff)), len(_state["types"]))
        _entry(_state["test"])["pairs"].add(f"s{scheme}/f{kind}")

    advance_ws, prime_kernels = advance.advance_ws, advance.prime_kernels

    def advance_noted(scheme, *args):
        note(scheme, args[7])
        return advance_ws(scheme, *args)

    def prime_noted(scheme, family):
        note(scheme, advance.stand_in_args(family)[7])
        return prime_kernels(scheme, family)

    for module in list(sys.modules.values()):  # the names imported before this plugin
        if getattr(module, "__name__", "").startswith("engine"):
            for name, value in list(vars(module).items()):
                if value is advance_ws:
                    setattr(module, name, advance_noted)
                elif value is prime_kernels:
                    setattr(module, name, prime_noted)


def pytest_configure(config) -> None:
    _install()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _state["test"] = item.nodeid
    t = time.perf_counter()
    yield
    _entry(item.nodeid)["wall"] += time.perf_counter() - t
    _state["test"] = "<between>"


def pytest_sessionfinish(session) -> None:
    out = os.environ.get("KERNEL_PROFILE", "kernel_profile.json")
    tests = {k: {**v, "pairs": sorted(v["pairs"])} for k, v in _state["tests"].items()}
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"tests": tests, "types": {v: k for k, v in _state["types"].items()}}, f)


def report(path: str, top: int = 40) -> None:
    """Print the pairs by their compile seconds with their users, then the tests."""
    tests = json.load(open(path, encoding="utf-8"))["tests"]
    seen: set[str] = set()
    cost: collections.Counter = collections.Counter()
    users: dict[str, list[str]] = collections.defaultdict(list)
    for name, t in tests.items():  # (in run order: the first user pays the compile)
        for p in t["pairs"]:
            users[p].append(name)
        new = set(t["pairs"]) - seen
        seen |= new
        for p in new:
            cost[p] += t["compile"] / len(new)
    wall = sum(t["wall"] for t in tests.values())
    comp = sum(t["compile"] for t in tests.values())
    print(f"{len(tests)} tests: {wall:.0f} s wall, {comp:.0f} s compiling in the process")
    print("\ncompile s  pair       users")
    for p, c in cost.most_common(top):
        print(f"{c:9.1f}  {p:9s} {len(users[p]):4d}  " + " | ".join(users[p][:3]))
    print("\n   wall s  compile s  test")
    for name, t in sorted(tests.items(), key=lambda kv: -kv[1]["wall"])[:top]:
        print(f"{t['wall']:9.1f}  {t['compile']:9.1f}  {name}")


if __name__ == "__main__":
    report(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 40)
