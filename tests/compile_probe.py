"""What a fresh process compiles: the functions Numba compiles (its ``numba:compile``
events) while it builds runs of a scenario, warms them up and takes 20 steps of each.
Shared by ``tests/test_compile_scope.py`` and ``tests/test_kernel_cache.py``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PROBE = """
import json, sys
from numba.core import event
compiled = set()
class Names(event.Listener):
    def on_start(self, ev):
        pass
    def on_end(self, ev):
        fn = ev.data["dispatcher"].py_func
        compiled.add(f"{fn.__module__}.{fn.__qualname__}")
with event.install_listener("numba:compile", Names()):
    from engine.scenarios import load_scenario
    from engine.simulation import Simulation
    for scheme in sys.argv[2:]:
        sim = Simulation(load_scenario(sys.argv[1], {}).build_model(), scheme, 1e-3)
        sim.warm_up()
        rep = sim.advance(20)
        assert rep.ok, rep
print(json.dumps(sorted(compiled)))
"""


def compiled_by(cwd: Path, env: dict[str, str], scenario: str, *schemes: str) -> set[str]:
    """The qualified names of the functions a new process (``env``: its
    ``NUMBA_CACHE_DIR``) compiles for runs of ``schemes`` on ``scenario``."""
    out = subprocess.run([sys.executable, "-c", PROBE, scenario, *schemes], cwd=cwd,
                         env=env, capture_output=True, text=True, timeout=1800)
    assert out.returncode == 0, out.stderr[-3000:]
    return set(json.loads(out.stdout.strip().splitlines()[-1]))
