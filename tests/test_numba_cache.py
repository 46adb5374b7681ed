"""The engine's Numba cache is the directory of its toolchain (engine/__init__.py),
whether Numba is imported before the engine or not: otherwise the cache of another
place or toolchain would be used.  That each kernel is compiled again when a source it
was made from changed (a callee in another module, seen: a typing error from a cached
``new_scratch`` of an older scratch layout) is tests/test_kernel_cache.py's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROBE = ("import os{first}; import engine; from numba.core import config; "
         "print(config.CACHE_DIR); print(os.environ['NUMBA_CACHE_DIR'])")


@pytest.mark.parametrize("first", ["", "; import numba"])
def test_the_cache_is_the_digest_directory_whatever_is_imported_first(first):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    out = subprocess.run([sys.executable, "-c", PROBE.format(first=first)], cwd=ROOT,
                         env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    config_dir, env_dir = out.stdout.split()
    assert config_dir == env_dir
    assert Path(env_dir).parent.name == "numba" and len(Path(env_dir).name) == 12
