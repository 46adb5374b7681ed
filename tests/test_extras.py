"""Installed without the optional extras, the commands that need them say which extra to
install, in one line (issue #10 §7).  One test uses a real virtual environment with
``pip install -e .`` only; the ``[gui]``-only case hides the ``studies`` packages from
this environment's interpreter with an import blocker."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

BLOCKER = '''
import importlib.abc, os, sys
_BLOCKED = set(os.environ.get("RRP_TEST_BLOCK", "").split(","))
class _Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".", 1)[0] in _BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, _Block())
'''

COMMANDS = {
    "gui": (["gui", "pendulum", "--quit-after", "0"], "gui"),
    "export": (["export", "pendulum", "--t-end", "0.01", "--out", "x.gif"], "gui"),
    "convert": (["convert", "x.h5", "--to", "vtk", "out"], "gui"),
    "figures": (["figures", "--quick", "--out", "figs"], "studies"),
    "sweep": (["sweep", "pendulum", "-i", "rrp-newmark", "--h", "1e-2", "--t-end", "0.1",
               "--out", "s.csv"],
              "studies"),
}


def check_one_line(res: subprocess.CompletedProcess, extra: str) -> None:
    assert res.returncode == 2, (res.returncode, res.stderr)
    assert "Traceback" not in res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, res.stderr
    assert f"rrp-studio[{extra}]" in lines[0] and "internal error" not in lines[0], lines[0]


@pytest.fixture(scope="module")
def bare_venv(tmp_path_factory) -> Path:
    """A virtual environment with ``pip install -e .``: no gui, no studies."""
    d = tmp_path_factory.mktemp("bare") / "venv"
    venv.EnvBuilder(with_pip=True).create(d)
    py = d / "bin" / "python"
    res = subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                          "-e", str(ROOT)], capture_output=True, text=True, timeout=900)
    if res.returncode != 0:
        pytest.fail(f"pip install -e . failed: {res.stderr[-2000:]}")
    return d


@pytest.mark.slow
@pytest.mark.parametrize("command", list(COMMANDS))
def test_without_extras_each_command_names_its_extra(bare_venv, tmp_path, command):
    args, extra = COMMANDS[command]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    res = subprocess.run([str(bare_venv / "bin" / "rrp"), *args], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=600)
    check_one_line(res, extra)


@pytest.mark.slow
def test_without_extras_the_core_still_runs(bare_venv, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    res = subprocess.run([str(bare_venv / "bin" / "rrp"), "run", "pendulum", "--t-end", "0.1",
                          "-q"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stderr


@pytest.mark.parametrize("command", ["figures", "sweep"])
def test_with_only_gui_the_studies_commands_name_their_extra(tmp_path, command):
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(BLOCKER)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "site"), str(ROOT)])
    env["RRP_TEST_BLOCK"] = "dask,distributed,pandas,matplotlib"
    args, extra = COMMANDS[command]
    res = subprocess.run([sys.executable, "-m", "app", *args], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=600)
    check_one_line(res, extra)
