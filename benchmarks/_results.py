"""What every benchmark writes beside its numbers (issue #34 §5): the command, the commit,
the date, the machine and the load average, and where the JSON goes
(``benchmarks/results/NAME.json``), so that ``benchmarks/report.py`` can build
BENCHMARKS.md's tables from the files and no number is typed by hand."""

from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"


def commit() -> str:
    """The short commit of the working tree, ``+dirty`` when tracked files differ."""
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=ROOT, capture_output=True, text=True).stdout.strip()
        return rev + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "?"


def engine_tree() -> str:
    """The tree hash of ``engine/`` (equal hashes: the same engine, whatever the commit),
    ``+dirty`` when engine files differ from it."""
    try:
        tree = subprocess.run(["git", "rev-parse", "--short", "HEAD:engine"], cwd=ROOT,
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "engine"], cwd=ROOT,
                               capture_output=True, text=True).stdout.strip()
        return tree + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "?"


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``) and count, e.g. ``"AMD EPYC …, 2 CPUs"``."""
    name = platform.processor() or "cpu"
    try:
        info = Path("/proc/cpuinfo").read_text(encoding="ascii", errors="replace")
        for line in info.splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{name}, {os.cpu_count()} CPUs"


def load() -> list[float]:
    """The 1-, 5- and 15-minute load averages, rounded."""
    return [round(v, 2) for v in os.getloadavg()]


def meta() -> dict:
    """The header of a results file, taken now (the command is this process's own)."""
    return {"command": "python " + " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
            "commit": commit(),
            "engine_tree": engine_tree(),
            "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": f"dev box: {os.cpu_count()} CPUs, {platform.machine()}, "
                       f"Python {platform.python_version()}",
            "load_at_start": load()}


def save(name: str, record: dict) -> Path:
    """Write ``record`` (with ``load_at_end`` added) to ``benchmarks/results/NAME.json``."""
    record = {**record, "load_at_end": load()}
    dest = RESULTS / f"{name}.json"
    dest.write_text(json.dumps(record, indent=1, ensure_ascii=False, default=float) + "\n",
                    encoding="utf-8")
    return dest


def md_header(*columns: str) -> None:
    """Print the header row and the rule of a Markdown table."""
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))


def md_row(*cells: object, fmt: str = "{:.4f}") -> None:
    """Print a Markdown table row, floats as ``fmt`` (flushed: a long run shows as it
    goes)."""
    print("| " + " | ".join(fmt.format(c) if isinstance(c, float) else str(c)
                            for c in cells) + " |", flush=True)
