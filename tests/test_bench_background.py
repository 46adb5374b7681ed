"""The start-up benchmarks wait for the compile a cold start leaves running, and count its
CPU apart from the command's (issue #45, what remains: item 1;
``benchmarks/_background.py``, used by ``bench_compile.py`` and ``bench_claims.py``).

The command here stands in for ``rrp run`` on a cold cache: it starts a process that
burns CPU (as ``engine.priming``'s compile does), does not wait for it, and exits.  The
burn is counted in the process's own CPU time, not the clock."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

BURN = 0.4
"""CPU seconds the process left behind spends (``time.process_time``)."""

LEAVER = textwrap.dedent(f"""
    import subprocess, sys
    burner = (
        "import sys, time\\n"
        "while time.process_time() < {BURN}: pass\\n"
        "open(sys.argv[1], 'w').write('done')\\n")
    subprocess.Popen([sys.executable, '-c', burner, sys.argv[1]],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    print('left it running')
""")


def _background():
    spec = importlib.util.spec_from_file_location("bench_background",
                                                  ROOT / "benchmarks" / "_background.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_CHILD_SUBREAPER")
def test_a_measurement_waits_for_what_the_command_left_running(tmp_path):
    marker = tmp_path / "done"
    out = _background().measure([sys.executable, "-c", LEAVER, str(marker)])
    assert out["returncode"] == 0 and "left it running" in out["stdout"]
    assert marker.read_text() == "done"  # (ended before measure returned)
    assert out["background_processes"] == 1
    assert out["background_cpu_s"] >= BURN - 0.02
    assert out["cpu_s"] < BURN  # (the command's own: the burn is not in it)
    assert out["background_wall_s"] >= out["wall_s"]
    assert len(out["load"]) == 2


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_CHILD_SUBREAPER")
def test_the_callers_own_children_are_not_waited_for(tmp_path):
    """A child this process had before the command (a busy process, a display server)
    is left alone: waiting for it would never end."""
    import subprocess

    mod = _background()
    mod.become_subreaper()
    other = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                             stdin=subprocess.PIPE)
    try:
        out = mod.measure([sys.executable, "-c", LEAVER, str(tmp_path / "done")])
        assert out["background_processes"] == 1 and other.poll() is None
    finally:
        other.stdin.close()
        other.wait()


def test_the_benchmarks_measure_through_it():
    for name in ("bench_compile.py", "bench_claims.py"):
        src = (ROOT / "benchmarks" / name).read_text(encoding="utf-8")
        assert "import _background" in src or "from _background import" in src, name
        assert "background_cpu_s" in src, name
