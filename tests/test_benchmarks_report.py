"""BENCHMARKS.md is what ``benchmarks/report.py`` makes from the committed results
(issue #34 §5): its numbers are never typed, the page stays short and current."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "BENCHMARKS.md"


def _report():
    spec = importlib.util.spec_from_file_location("bench_report",
                                                  ROOT / "benchmarks" / "report.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_page_is_what_report_py_makes_from_the_committed_results():
    text = PAGE.read_text(encoding="utf-8")
    assert _report().render(text) == text, "run: python benchmarks/report.py"


def test_the_page_is_current_and_short():
    text = PAGE.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 400, "move old sections to benchmarks/HISTORY.md"
    assert "These numbers are old" not in text
    assert text.count("<!-- table: ") >= 10


def test_every_table_comes_from_a_results_file_with_its_command_machine_date_and_load():
    report = _report()
    results = report.load_results()
    text = PAGE.read_text(encoding="utf-8")
    names = set(report.MARK.findall(text))
    listed = {name: stem for stem, d in results.items() for name in d.get("tables", {})}
    used = {listed[n] for n in names if n in listed}
    used |= {"kernels", "kernels_dumbbells", "pile_scale", "record_cost"}
    for stem in used:
        data = results[stem]
        for key in ("command", "date", "machine"):
            assert data.get(key), f"{stem}.json has no {key}"
        assert report.load_phrase(data) != "load not recorded" or "transcribed" in data, stem


def test_a_number_in_a_results_file_changes_the_page(tmp_path):
    """The per-step table is computed from ``kernels.json``: change a time there and the
    page changes with it; a name that no file makes is one clear error."""
    report = _report()
    for p in (ROOT / "benchmarks" / "results").glob("*.json"):
        shutil.copy(p, tmp_path / p.name)
    text = PAGE.read_text(encoding="utf-8")
    data = json.loads((tmp_path / "kernels.json").read_text(encoding="utf-8"))
    entry = data["us_per_step"]["torus"]["rrp-newmark"]
    entry["best"] = 123.456
    entry["runs"] = [123.456] * len(entry["runs"])
    (tmp_path / "kernels.json").write_text(json.dumps(data), encoding="utf-8")
    new = report.render(text, tmp_path)
    assert "| `rrp-newmark` | 123 (123) |" in new and new != text
    with pytest.raises(SystemExit, match="no results file"):
        report.render("<!-- table: nothing_makes_this -->\n<!-- /table -->\n", tmp_path)


def test_a_listed_table_is_made_from_its_rows(tmp_path):
    report = _report()
    (tmp_path / "x.json").write_text(json.dumps({
        "command": "python benchmarks/bench_x.py", "commit": "abc1234", "date": "2026-11-28",
        "machine": "dev box", "load_at_start": [3.2, 1, 1], "load_at_end": [4.1, 1, 1],
        "tables": {"x": {"columns": ["a", "b"], "rows": [["1", "2"]]}}}), encoding="utf-8")
    out = report.render("before\n<!-- table: x -->\nstale\n<!-- /table -->\nafter\n", tmp_path)
    assert out == ("before\n<!-- table: x -->\n*`python benchmarks/bench_x.py` — dev box, "
                   "2026-11-28, commit abc1234, load average 3.2–4.1 on the 2 CPUs (other "
                   "jobs).*\n\n| a | b |\n|---|---:|\n| 1 | 2 |\n<!-- /table -->\nafter\n")


def test_the_energy_stepping_record_table_is_made_once_its_results_are_saved(tmp_path):
    """``bench_es_records.py --save es_records`` (issue #33 item 2): the table that the
    page types by hand until then is made from the file."""
    report = _report()
    run = {"scenario": "pendulum", "t_end": 20, "us_per_record": 17.5, "ratio": 1.9,
           "fine": {"h": 0.01, "wall_s": 0.061, "events": 187454, "records": 2001},
           "coarse": {"h": 1.0, "wall_s": 0.032, "events": 187454, "records": 21}}
    (tmp_path / "es_records.json").write_text(json.dumps({
        "command": "python benchmarks/bench_es_records.py --save es_records",
        "commit": "abc1234", "date": "2026-11-28 09:14 UTC", "machine": "dev box",
        "load_at_start": [3.6, 1, 1], "scenarios": [run]}), encoding="utf-8")
    out = report.render("<!-- table: es_records -->\n<!-- /table -->\n", tmp_path)
    assert ("| pendulum, now | 0.0610 s / 0.0320 s = 1.90× | 17.5 | 187 454 / 187 454 |"
            in out), out


def test_save_py_keeps_a_benchmarks_json_with_its_command_commit_and_load(tmp_path):
    """``benchmarks/save.py NAME -- SCRIPT … --json``: any benchmark that prints JSON is
    kept in a results file with what report.py needs; one that prints none is one line."""
    import subprocess
    import sys

    script = tmp_path / "bench_fake.py"
    script.write_text("print('warming up'); print('{\"us\": [1.5, 2.5]}')\n", encoding="utf-8")
    res = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "save.py"), "--dir",
                          str(tmp_path), "fake", "--", str(script)],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    data = json.loads((tmp_path / "fake.json").read_text(encoding="utf-8"))
    assert data["output"] == {"us": [1.5, 2.5]}
    assert data["command"].endswith("bench_fake.py") and data["commit"] and data["date"]
    assert data["machine"] and len(data["load_at_start"]) == 3
    script.write_text("print('no json here')\n", encoding="utf-8")
    res = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "save.py"), "--dir",
                          str(tmp_path), "bad", "--", str(script)],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 2
    assert "without JSON" in res.stderr and "Traceback" not in res.stderr
    assert not (tmp_path / "bad.json").exists()


def test_no_table_is_typed_by_hand_but_the_one_waiting_for_its_results_file():
    """Every Markdown table of the page sits between markers; the one exception is the
    energy-stepping record table (issue #33 item 2), typed until its JSON is saved."""
    import re

    text = PAGE.read_text(encoding="utf-8")
    outside = re.sub(r"<!-- table: [\w.-]+ -->\n.*?<!-- /table -->", "", text, flags=re.S)
    rules = [ln for ln in outside.splitlines() if re.fullmatch(r"\|(-+:?\|)+", ln)]
    assert len(rules) <= 1, rules
    if rules:
        assert "<!-- typed by hand until bench_es_records.py --save es_records" in outside
