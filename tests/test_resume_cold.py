"""``rrp run --resume`` on a cold kernel cache (issue #45): a small model does not wait
for its kernels; it steps their uncompiled twins while they compile in the background,
as a fresh ``rrp run`` does, and writes the bits of a resume compiled from the start."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from test_chunk_identity import assert_same_bits

from engine.io import RunFile

ROOT = Path(__file__).resolve().parent.parent

COLD_RESUME = """
import contextlib, json, subprocess, sys
import app.cli as cli
import engine.interpreted as interp
import engine.priming as priming
calls = []
def spawn(scheme, family, part="run"):
    calls.append(part)
    return subprocess.Popen(["true"])
priming.spawn_priming = spawn
if sys.argv[1] == "cold":  # a cold cache as the resume meets it: nothing found, nothing built
    priming.run_kernels_cached = lambda scheme, family: False
    interp._cached = lambda dispatcher, args: False
else:  # compiled from the start (before issue #45)
    priming.run_kernels_cached = lambda scheme, family: True
    interp.interpret_while_cold = contextlib.nullcontext
code = cli.main(["run", "--resume", sys.argv[2], "--t-end", "0.4", "-o", sys.argv[3],
                 "--json"])
print("calls:", json.dumps(calls), file=sys.stderr)
sys.exit(code)
"""


def _run(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    p = subprocess.run([sys.executable, *argv], cwd=cwd, capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    return p


def test_a_cold_resume_steps_interpreted_while_its_kernels_compile(tmp_path):
    first = tmp_path / "first.h5"
    _run("-m", "app", "run", "pendulum", "--t-end", "0.2", "-o", str(first), "--quiet",
         cwd=tmp_path)
    out = {}
    for kind in ("cold", "compiled"):
        path = tmp_path / f"{kind}.h5"
        p = _run("-c", COLD_RESUME, kind, str(first), str(path), cwd=tmp_path)
        summary = json.loads(p.stdout[p.stdout.index("{"):])
        calls = json.loads(p.stderr.split("calls:")[-1].strip().splitlines()[0])
        with RunFile(path) as rf:
            out[kind] = (summary, rf.resume_state()[0], calls)
    cold, warm = out["cold"], out["compiled"]
    assert cold[2] == ["run", "siblings"] and warm[2] == []
    assert cold[0]["interpreted_steps"] > 0 and warm[0]["interpreted_steps"] == 0
    assert_same_bits(warm[1], cold[1], "rrp run --resume, interpreted vs compiled")
