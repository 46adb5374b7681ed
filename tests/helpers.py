"""Helpers shared by the test modules (issue #34 item 4: one copy, not one per file):
running ``rrp`` in a child process with this checkout first on the path, and the
one-line-error checks of the command line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def child_env(env: dict | None = None) -> dict[str, str]:
    """``env`` (default: this process's environment) with this checkout first on
    ``PYTHONPATH``."""
    e = dict(os.environ if env is None else env)
    e["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), e.get("PYTHONPATH")) if p)
    return e


def rrp(cwd: Path, *args: str, env: dict | None = None, timeout: float = 600,
        **kw) -> subprocess.CompletedProcess:
    """Run ``python -m app ARGS`` in ``cwd`` with this checkout first on the path."""
    return subprocess.run([sys.executable, "-m", "app", *args], cwd=cwd, env=child_env(env),
                          capture_output=True, text=True, timeout=timeout, **kw)


def assert_no_traceback(res: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in res.stdout and "Traceback" not in res.stderr, res.stderr


def assert_one_line_error(res: subprocess.CompletedProcess) -> str:
    assert res.returncode != 0, res.stdout
    assert_no_traceback(res)
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].strip(), repr(res.stderr)
    return lines[0]
