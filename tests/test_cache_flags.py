"""A kernel loaded from the cache is the one its caller would have compiled: the cache
keys each kernel by the flags it inherits from its caller too (``engine.kernel_cache``).

Numba's key is the signature alone, yet ``_before_forces`` compiled under
``verlet_step_ws`` inherits its ``forceinline`` (always inlined) and compiled on its
own, as ``engine.priming.prime_sibling_kernels`` did, does not.  The stepping loop of
``yoshida4:rrp-newmark`` on the pendulum that loaded the sibling's copy called the
velocity-Verlet halves out of line, three times a step: 2.2× the CPU time a step
(benchmarks/results/yoshida_pendulum_fix-2026-11-28.json).  Counted in the machine
code's IR, not timed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

SIBLINGS = """
from engine.integrators import INTEGRATORS
from engine.priming import prime_sibling_kernels
from engine.scenarios import load_scenario
model = load_scenario("pendulum").build_model()
prime_sibling_kernels(INTEGRATORS["yoshida4:rrp-newmark"].scheme_id,
                      model.forcefield.arrays[-1])
"""

LOOP_CALLS = """
import json, re
from engine.integrators import INTEGRATORS
from engine.integrators.advance import loop_kernel, prime_kernels
from engine.scenarios import load_scenario
model = load_scenario("pendulum").build_model()
scheme = INTEGRATORS["yoshida4:rrp-newmark"].scheme_id
prime_kernels(scheme, model.forcefield.arrays[-1])
calls = {}
for cres in loop_kernel(scheme).overloads.values():
    for name in re.findall(r"call [^@]*@(\\S+?)\\(", cres.library.get_llvm_str()):
        for kernel in ("_before_forces", "_after_forces"):
            if kernel in name:
                calls[kernel] = calls.get(kernel, 0) + 1
print(json.dumps(calls))
"""


def test_inherited_flags_tell_a_forceinline_caller_apart():
    """The key's flags: ``_before_forces`` on its own, and as ``verlet_step_ws``'s
    callee (``forceinline`` inherited)."""
    from numba.core.compiler import Flags
    from numba.core.targetconfig import ConfigStack

    from engine.integrators.verlet import _before_forces, verlet_step_ws
    from engine.kernel_cache import inherited_flags

    alone = dict(inherited_flags(_before_forces))
    flags = Flags()
    verlet_step_ws.targetdescr.options.parse_as_flags(flags, verlet_step_ws.targetoptions)
    with ConfigStack().enter(flags):
        called = dict(inherited_flags(_before_forces))
    assert alone["forceinline"] == "False" and called["forceinline"] == "True"
    assert alone["error_model"] == called["error_model"] == "numpy"


@pytest.mark.slow  # compiles into a fresh cache (docs/testing.md)
def test_a_loop_built_on_primed_siblings_inlines_the_verlet_halves(tmp_path):
    """The kernels beside the chain built in another process (a cold ``rrp run``), then
    the Yoshida loop on the pendulum: no call to ``_before_forces`` or
    ``_after_forces`` is left in it (before the fix: one of each, out of line)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    for code in (SIBLINGS, LOOP_CALLS):
        out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=1800)
        assert out.returncode == 0, out.stderr[-3000:]
    calls = json.loads(out.stdout.strip().splitlines()[-1])
    assert calls == {}, f"called out of line by the Yoshida loop: {calls}"
