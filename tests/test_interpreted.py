"""The kernels' uncompiled twins give the compiled kernels' bits (issue #45): a run that
starts interpreted and is swapped to the compiled loop mid-run, at a chunk boundary, is
bit-identical to a run compiled from the start, and so is its resume
(``engine.interpreted``; the driver's ``Simulation.kernels``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numba import njit
from test_chunk_identity import _advance, _simulation, assert_same_bits, resumed, state

from engine import interpreted as interp
from engine.integrators.advance import loop_kernel, stand_in_args
from engine.interpreted import interpret_while_cold, interpreted, static_power
from engine.layout import N_TERMS, OK
from engine.specialize import family_marker

SWAPS = (
    # (scenario, parameters, scheme, steps)
    ("pendulum", {}, "rrp-newmark", 300),
    ("pendulum", {}, "rrp-exact", 300),
    ("pendulum", {}, "rk4", 300),
    ("torus", {"v0": 5.0}, "rrp-newmark", 60),
    ("torus", {"v0": 5.0}, "pfc-verlet", 30),
    ("torus", {"v0": 5.0}, "lgvi", 30),
    ("assembly-drop", {}, "rrp-newmark", 30),
    # every other stepping loop the torus runs (``advance._loop_of``: one a scheme, its
    # Yoshida compositions included) and the hard-contact loops on torus-hard; the slow
    # run has them (tests/slow_cases.py), energy-stepping has no loop to swap (below)
    *(("torus", {"v0": 5.0}, s, 30) for s in (
        "rrp-exact", "campello", "rk4", "rrp-implicit", "pfc-buss2", "pfc-rk4",
        "campello-implicit", "yoshida4:rrp-exact", "yoshida4:rrp-newmark",
        "yoshida4:pfc-verlet", "yoshida4:lgvi", "yoshida4:rrp-implicit")),
    ("torus-hard", {}, "moreau", 30),
    ("torus-hard", {}, "moreau-symmetric", 30),
)


@njit(cache=False)
def _powers(x):
    return x ** 2, x ** 3, x ** -1, x ** 5, x ** 2.0


def test_integer_powers_are_numba_s_products_not_pow():
    """``x ** 2`` by Python's ``pow`` differs from Numba's ``x*x`` in the last bit for
    about one value in a thousand: the twin multiplies as Numba does."""
    x = np.random.default_rng(3).standard_normal(4000) * 7.3
    assert any(float(v) ** 2 != float(v) * float(v) for v in x)  # (the trap is real)
    for v in x:
        want = _powers(v)
        got = (static_power(v, 2), static_power(v, 3), static_power(v, -1),
               static_power(v, 5), static_power(v, 2))
        assert np.array(got).tobytes() == np.array(want).tobytes(), v


def test_the_twin_rewrites_the_powers_and_the_family_gates():
    """A twin is the kernel's own source, its powers rewritten and its callees twins;
    its call compiles nothing."""
    twin = interpreted(loop_kernel(1))
    assert getattr(twin, "__rrp_interpreted__", False)
    assert twin.__code__.co_filename.endswith("advance.py")
    args = list(stand_in_args(family_marker(np.zeros(N_TERMS), 1)))
    args[0] = 1  # (one step of 1e-9 on a resting one-body stand-in)
    assert twin(*args)[2] == OK
    g = twin.__globals__
    assert getattr(g["step_ws"], "__rrp_interpreted__", False)
    assert g["__static_power__"] is interp.static_power
    assert g["gated"] is interp._py_gated  # (resolved in Python)


@pytest.mark.parametrize("scenario, params, scheme, steps", SWAPS,
                         ids=[f"{c[0]}-{c[2]}" for c in SWAPS])
def test_interpreted_then_compiled_gives_the_compiled_bits(scenario, params, scheme, steps):
    straight = _simulation(scenario, params, scheme)
    _advance(straight, (steps,), steps)
    swapped = _simulation(scenario, params, scheme)
    swapped.kernels = "interpreted"
    swapped.advance(steps // 3)
    assert swapped.stepped_by == "interpreted"
    mid = state(swapped)
    swapped.kernels = "compiled"
    _advance(swapped, (7,), steps - swapped.step_index)
    assert swapped.stepped_by == "compiled"
    assert_same_bits(state(straight), state(swapped), f"{scheme} on {scenario} swapped")
    part = _simulation(scenario, params, scheme)
    _advance(part, (steps,), steps // 3)
    assert_same_bits(state(part), mid, f"{scheme} on {scenario}, interpreted part")


@pytest.mark.parametrize("scenario, params, scheme, steps, twin, at", [
    ("pendulum", {}, "rrp-newmark", 300, 100, 150),
    ("torus", {"v0": 5.0}, "rrp-newmark", 60, 20, 35),
], ids=["pendulum", "torus"])
def test_a_resume_of_a_run_started_interpreted(tmp_path, monkeypatch, scenario, params,
                                                scheme, steps, twin, at):
    """The run file of a run whose first chunks (``twin`` steps) stepped interpreted,
    written to step ``at``, resumes to the bits of the compiled run."""
    straight = _simulation(scenario, params, scheme)
    _advance(straight, (steps,), steps)
    import engine.simulation.driver as drv

    real = drv.Simulation._stepping_loop

    by = []

    def first_interpreted(self, *args):  # (every simulation of this test: the first
        if self.step_index < twin:  # `twin` steps by the twin, then compiled)
            self.kernels = "interpreted"
        else:
            self.kernels = "compiled"
        out = real(self, *args)
        by.append(self.stepped_by)
        return out

    monkeypatch.setattr(drv.Simulation, "_stepping_loop", first_interpreted)
    sim = resumed(tmp_path / "run.h5", scenario, params, scheme, steps, at)
    assert by[0] == "interpreted" and by[-1] == "compiled"
    assert_same_bits(state(straight), state(sim), "resumed after an interpreted start")


def test_energy_stepping_has_no_loop_to_interpret_and_steps_compiled():
    """energy-stepping is event-driven (``engine.energy_stepping``): it has no stepping
    loop, so no twin; asked to step interpreted it steps its own compiled kernels (no
    step counted as the twin's) and gives the bits of a run that was never asked."""
    scenario, params, scheme, steps = "torus", {"v0": 5.0}, "energy-stepping", 20
    straight = _simulation(scenario, params, scheme)
    _advance(straight, (steps,), steps)
    asked = _simulation(scenario, params, scheme)
    asked.kernels = "interpreted"
    _advance(asked, (7,), steps)
    assert asked.step_index == straight.step_index > 0
    assert asked.interpreted_steps == 0 and asked.stepped_by != "interpreted"
    assert_same_bits(state(straight), state(asked), "energy-stepping asked to interpret")


def test_while_cold_a_missing_kernel_runs_as_its_twin(monkeypatch):
    """Within ``interpret_while_cold`` a call that would compile runs the twin (here a
    kernel with no machine code and no cache); outside, it compiles as before."""
    from numba.core.dispatcher import Dispatcher

    compiled = []
    monkeypatch.setattr(interp, "_ORIGINAL", lambda self, *a: compiled.append(a) or
                        (lambda *b: "compiled"))
    monkeypatch.setattr(interp, "_engine_kernel", lambda d: True)
    monkeypatch.setattr(interp, "_cached", lambda d, a: False)

    @njit(cache=False)
    def hyp(a, b):
        return math.sqrt(a * a + b * b)

    assert isinstance(hyp, Dispatcher)
    with interpret_while_cold():
        assert hyp(3.0, 4.0) == 5.0 and interp.USED.get("hyp") == 1
        assert not compiled
    assert hyp(3.0, 4.0) == "compiled" and compiled


COLD_RUN = """
import sys
import app.cli as cli
import engine.interpreted as interp
import engine.priming as priming
import contextlib
priming.spawn_priming = lambda *a, **k: __import__("subprocess").Popen(["true"])
if sys.argv[1] == "cold":  # a cold cache as rrp run meets it: nothing found, nothing built
    priming.run_kernels_cached = lambda scheme, family: False
    interp._cached = lambda dispatcher, args: False
else:  # compiled from the start (before issue #45)
    priming.run_kernels_cached = lambda scheme, family: True
    interp.interpret_while_cold = contextlib.nullcontext
code = cli.main(["run", sys.argv[3], "--t-end", "0.3", "-o", sys.argv[2], "--json"])
print("twins:", sorted(interp.USED), file=sys.stderr)
sys.exit(code)
"""


def test_rrp_run_steps_interpreted_while_its_kernels_compile(tmp_path):
    """``rrp run`` on a cold cache does not wait for its priming processes: it steps
    the kernels' twins meanwhile (said in the summary), and writes the bits of a run
    compiled from the start."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    from engine.io import RunFile

    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ, PYTHONPATH=str(root))
    out = {}
    for kind in ("cold", "compiled"):
        path = tmp_path / f"{kind}.h5"
        p = subprocess.run([sys.executable, "-c", COLD_RUN, kind, str(path), "pendulum"],
                           cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=600)
        assert p.returncode == 0, p.stderr[-2000:]
        summary = json.loads(p.stdout[p.stdout.index("{"):])
        with RunFile(path) as rf:
            out[kind] = (summary, rf.resume_state()[0])
    cold, warm = out["cold"], out["compiled"]
    assert cold[0]["interpreted_steps"] == cold[0]["steps"] > 0
    assert warm[0]["interpreted_steps"] == 0
    assert_same_bits(warm[1], cold[1], "rrp run, interpreted vs compiled")


def test_a_run_without_priming_processes_does_not_step_interpreted(tmp_path):
    """Where ``rrp run`` starts no process to compile the run's kernels (a model in
    generalized coordinates, an event-driven scheme, a large model), its steps are not
    left to the twins for good: they compile in the run, as before issue #45."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    p = subprocess.run([sys.executable, "-c", COLD_RUN, "cold", str(tmp_path / "s.h5"),
                        "spring-pendulum"], cwd=tmp_path,
                       env=dict(os.environ, PYTHONPATH=str(root)), capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    summary = json.loads(p.stdout[p.stdout.index("{"):])
    assert summary["steps"] > 0
    assert "twins: []" in p.stderr  # (its stepping kernels 'run', 'node_values': compiled)


def test_one_priming_process_per_part_scheme_and_family(tmp_path, monkeypatch):
    """A second cold run while the first's priming processes still compile starts none
    that compile the same kernels (``engine.priming.alone``)."""
    import os

    from numba.core import config

    from engine import priming

    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path))
    held = len(priming._HELD)
    try:
        assert priming.alone("run", 1, 465)
        assert not priming.alone("run", 1, 465)
        assert priming.alone("siblings", 1, 465) and priming.alone("run", 0, 465)
    finally:
        while len(priming._HELD) > held:
            os.close(priming._HELD.pop())
    assert priming.alone("run", 1, 465)  # (released with its process: here, its fd)
    os.close(priming._HELD.pop())


def test_a_twin_that_raises_leaves_its_arguments_and_the_call_compiles(monkeypatch):
    """Where Python raises and the compiled kernel does not (``1.0 / 0.0``: ``inf``
    under ``error_model="numpy"``), the arguments are put back as the twin found them
    and the call runs compiled: the compiled kernel's result, whatever the twin did."""
    monkeypatch.setattr(interp, "_engine_kernel", lambda d: True)
    monkeypatch.setattr(interp, "_cached", lambda d, a: False)

    @njit(cache=False, error_model="numpy")
    def scale_into(a, x):
        for i in range(a.shape[0]):
            a[i] = a[i] + 1.0
        a[0] = 1.0 / x  # (Python floats: ZeroDivisionError in Python)

    a = np.array([1.0, 2.0])
    twins = interp.USED.get("scale_into", 0)
    with interpret_while_cold():
        scale_into(a, 0.0)
    assert a[0] == np.inf and a[1] == 3.0  # (once, not twice: the twin's +1 undone)
    assert interp.USED.get("scale_into", 0) == twins
