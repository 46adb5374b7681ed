"""How long the README's test command takes, and how much memory (issue #33 item 9,
issue #34 item 6): the default run (``python -m pytest``: every test not marked slow) and
the slow run (``pytest -m slow``), on a clean clone, cold (an empty kernel cache) or warm.

    python benchmarks/bench_test_command.py --clone DIR --label "default, cold" --cold
    python benchmarks/bench_test_command.py --clone DIR --label "slow, warm" -- -m slow
    python benchmarks/bench_test_command.py --from-log LOG --label "…" --commit C --load "…"

Each run goes under ``/usr/bin/time -v`` (wall clock, CPU of the process and its children,
peak resident memory of the largest process) with ``CI=true``; ``--cold`` points
``XDG_CACHE_HOME`` at a new empty directory, so every Numba kernel is compiled (a newcomer's
first run); without it the user's kernel cache is used.  ``--from-log`` reads the output of
such a run that was made by hand (``/usr/bin/time -v … pytest … > LOG 2>&1``).  Each call
adds a row to ``benchmarks/results/test_command-<date>.json`` (``--save``), whose table
``test_command`` ``report.py`` puts in BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
COLUMNS = ["run", "commit", "tests", "wall", "CPU (user + sys)", "peak memory", "load average"]


def parse(log: str) -> dict:
    """The pytest summary and ``/usr/bin/time -v``'s figures from a run's output."""
    text = log.replace("\0", "")
    summary = re.findall(r"^=*\s*(\d+ passed[^\n]*?) in ([\d.]+)s", text, re.M)
    if not summary:
        raise SystemExit("no pytest summary line ('N passed … in Ns') in the log")
    counts = " + ".join(c.strip(" ,") for c, _ in summary)  # (.ci/run: default + slow)

    def field(name: str) -> str:
        m = re.search(rf"{re.escape(name)}: (.+)", text)
        if not m:
            raise SystemExit(f"no '{name}' in the log: run it under /usr/bin/time -v")
        return m.group(1).strip()

    wall = field("Elapsed (wall clock) time (h:mm:ss or m:ss)")
    parts = [float(p) for p in wall.split(":")]
    seconds = sum(p * 60 ** i for i, p in enumerate(reversed(parts)))
    cpu = float(field("User time (seconds)")) + float(field("System time (seconds)"))
    rss = int(field("Maximum resident set size (kbytes)")) / 1024 ** 2
    return {"tests": counts, "wall_s": seconds, "cpu_s": cpu, "peak_gb": rss,
            "pytest_s": [float(t) for _, t in summary]}


def minutes(s: float) -> str:
    return f"{int(s // 60)} min {int(round(s % 60)):02d} s"


def row(label: str, commit: str, m: dict, load: str) -> list[str]:
    return [label, commit, m["tests"], minutes(m["wall_s"]), minutes(m["cpu_s"]),
            f"{m['peak_gb']:.1f} GB", load]


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def run(clone: Path, cold: bool, pytest_args: list[str]) -> tuple[dict, str, str]:
    env = dict(os.environ, CI="true", PYTHONPATH=str(clone))
    if cold:
        env["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="rrp-cold-cache-")
    before = loadavg()
    python = clone / ".venv" / "bin" / "python"
    cmd = ["/usr/bin/time", "-v", str(python if python.exists() else sys.executable),
           "-m", "pytest", "-q", "-p", "no:cacheprovider", *pytest_args]
    out = subprocess.run(cmd, cwd=clone, env=env, capture_output=True, text=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=clone,
                            capture_output=True, text=True).stdout.strip()
    return parse(out.stdout + out.stderr), commit, f"{before} → {loadavg()}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clone", type=Path, help="a clean clone with its .venv installed")
    ap.add_argument("--from-log", type=Path, help="read a finished run's output instead")
    ap.add_argument("--label", required=True, help='the row\'s name, e.g. "default, cold"')
    ap.add_argument("--cold", action="store_true", help="an empty kernel cache")
    ap.add_argument("--commit", default="", help="with --from-log: the commit it ran")
    ap.add_argument("--load", default="", help="with --from-log: the load average seen")
    ap.add_argument("--save", default=f"test_command-{dt.date.today()}",
                    help="the results file's stem")
    ap.add_argument("pytest_args", nargs="*", help="after --: pytest's arguments")
    a = ap.parse_args()
    if a.from_log:
        m, commit, load = parse(a.from_log.read_text(errors="replace")), a.commit, a.load
    elif a.clone:
        m, commit, load = run(a.clone.resolve(), a.cold, a.pytest_args)
    else:
        raise SystemExit("give --clone DIR or --from-log LOG")
    path = RESULTS / f"{a.save}.json"
    data = json.loads(path.read_text()) if path.exists() else {
        "command": "python benchmarks/bench_test_command.py (the README's test command "
                   "under /usr/bin/time -v, CI=true, on a clean clone)",
        "machine": "dev box: 2 CPUs, x86_64, Python 3.11.7",
        "date": str(dt.date.today()),
        "commit": "each row's",
        "load": "the load average of each row (1, 5, 15 min at its start → end)",
        "tables": {"test_command": {"columns": COLUMNS, "rows": [], "align": "lllrrrl"}},
        "runs": []}
    data["runs"].append({"label": a.label, "commit": commit, "load": load, **m})
    data["tables"]["test_command"]["rows"].append(row(a.label, commit, m, load))
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    print(" | ".join(row(a.label, commit, m, load)))


if __name__ == "__main__":
    main()
