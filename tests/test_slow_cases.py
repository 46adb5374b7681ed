"""The default run's share (issue #34 item 6): the table of slow cases marks what it names,
and only that; a line that names no test is refused."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import _matches
from slow_cases import SLOW_CASES

ROOT = Path(__file__).resolve().parents[1]


def test_a_pattern_matches_the_name_and_then_the_case_id():
    node = "tests/test_x.py::test_y[in place-copy]"
    assert _matches(node, "tests/test_x.py::test_y")  # every case of the test
    assert _matches(node, "tests/test_x.py::test_y[*-copy]")
    assert _matches(node, "tests/test_x.py::test_y[[ci]*]")  # a class, not a bracket
    assert not _matches(node, "tests/test_x.py::test_y[copy-*]")
    assert not _matches(node, "tests/test_x.py::test_")
    assert not _matches("tests/test_x.py::test_y", "tests/test_x.py::test_y[*]")


def test_every_line_has_a_reason_and_names_a_test_file():
    for pattern, reason in SLOW_CASES:
        assert reason.strip(), pattern
        assert (ROOT / pattern.split("::", 1)[0]).is_file(), pattern


def test_a_line_that_names_no_test_stops_the_run(tmp_path):
    """A planted line for a test that does not exist: collection is a usage error (exit 4)
    naming it, unless the file is picked in part (a node id); without it, it succeeds."""
    tests = tmp_path / "tests"
    tests.mkdir()
    for name in ("conftest.py", "slow_cases.py"):
        (tests / name).write_text((ROOT / "tests" / name).read_text(encoding="utf-8"))
    (tests / "test_planted.py").write_text("def test_one():\n    pass\n")
    table = tests / "slow_cases.py"
    table.write_text(table.read_text(encoding="utf-8")
                     + "\nSLOW_CASES.append(('tests/test_planted.py::test_gone', 'planted'))\n")
    cmd = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
           "-c", "/dev/null", "--rootdir", str(tmp_path), "tests"]
    res = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert res.returncode == 4, res.stdout + res.stderr
    assert "tests/test_planted.py::test_gone" in res.stdout + res.stderr
    one = subprocess.run([*cmd[:-1], "tests/test_planted.py::test_one"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert one.returncode == 0, one.stdout + one.stderr  # (a file picked in part: no check)
    table.write_text((ROOT / "tests" / "slow_cases.py").read_text(encoding="utf-8"))
    res = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
