"""Run a benchmark that prints JSON (``--json``) and keep its output in
``benchmarks/results/NAME.json`` with the command, commit, engine tree, date, machine and
load average around it (issue #34 §5), for ``benchmarks/report.py``:

    python benchmarks/save.py NAME -- benchmarks/bench_hard_contact.py --repeat 5 --json

The benchmark runs in a child process of the same Python; its JSON (stdout from the
first ``{`` or ``[``) goes under ``"output"``. A benchmark that fails, or prints no
JSON, leaves no file and says so in one line (exit 2).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import RESULTS, ROOT, load, meta  # noqa: E402


class NoJSON(Exception):
    """The benchmark failed or printed no JSON (its one-line reason)."""


def run(name: str, argv: list[str], directory: Path = RESULTS) -> Path:
    """Run ``python ARGV…`` from the repository root; write ``directory/NAME.json``."""
    record = meta()
    record["command"] = "python " + " ".join(argv)
    res = subprocess.run([sys.executable, *argv], cwd=ROOT, capture_output=True, text=True)
    sys.stderr.write(res.stderr)
    starts = [i for i in (res.stdout.find("{"), res.stdout.find("[")) if i >= 0]
    if res.returncode != 0 or not starts:
        raise NoJSON(f"save.py: {' '.join(argv)} exited {res.returncode} without "
                         f"JSON on its output: run it alone to see why (add --json)")
    try:
        record["output"] = json.loads(res.stdout[min(starts):])
    except json.JSONDecodeError as exc:
        raise NoJSON(f"save.py: the output of {' '.join(argv)} is not JSON ({exc}): "
                         f"pass the benchmark's --json") from None
    record["load_at_end"] = load()
    directory.mkdir(parents=True, exist_ok=True)
    dest = directory / f"{name}.json"
    dest.write_text(json.dumps(record, indent=1, ensure_ascii=False, default=float) + "\n",
                    encoding="utf-8")
    return dest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("name", help="the results file's name, without .json")
    ap.add_argument("argv", nargs=argparse.REMAINDER,
                    help="-- then the benchmark script and its arguments")
    ap.add_argument("--dir", type=Path, default=RESULTS, help=argparse.SUPPRESS)
    args = ap.parse_args()
    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if not argv:
        ap.error("give the benchmark to run after --, e.g. -- benchmarks/bench_x.py --json")
    try:
        print(f"written: {run(args.name, argv, args.dir)}")
    except NoJSON as exc:
        print(exc, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
