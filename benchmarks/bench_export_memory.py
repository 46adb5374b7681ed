"""Peak memory of ``rrp export`` against the number of records (issue #42 item 10): the
pendulum (``h = 1e-2``, a record and a frame every step) run to 10⁵ and 10⁶ records,
each exported in a child process of its own (``python -m app export … -q``, 640x360,
100 frames: ``--fps 10 --speed T/10``), ``view`` and ``view+plots``; peak RSS is the
child's ``ru_maxrss`` (``RUSAGE_CHILDREN``, one child at a time).

    python benchmarks/bench_export_memory.py                       # this tree
    python benchmarks/bench_export_memory.py --before 33c3207 --save export-memory-2026-12-06

``--before REV``: the same exports by the code of ``REV`` too (``git archive`` into a
temporary directory), its rows first: the plots read every series whole before item 10.
The run files are simulated first (``rrp run pendulum --t-end T``), not timed.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import RESULTS, ROOT, commit, load, meta  # noqa: E402


def _env(code: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(code)
    env.setdefault("VTK_DEFAULT_OPENGL_WINDOW", "vtkEGLRenderWindow")
    return env


def simulate(directory: Path, t_end: float) -> Path:
    out = directory / f"pendulum-{t_end:g}.h5"
    subprocess.run([sys.executable, "-m", "app", "run", "pendulum", "--t-end", str(t_end),
                    "--out", str(out), "--quiet"], cwd=ROOT, env=_env(ROOT), check=True,
                   capture_output=True)
    return out


def export(code: Path, run: Path, layout: str, t_end: float, out: Path) -> dict:
    """One export in a fresh child: its peak RSS (MB) and wall time (s)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "app", "export", str(run), "--out", str(out),
                    "--layout", layout, "--size", "640x360", "--fps", "10", "--speed",
                    f"{t_end / 10:g}", "-q"], cwd=code, env=_env(code), check=True,
                   capture_output=True)
    wall = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if peak <= before:  # (the maximum over every child so far: an earlier one was larger)
        return {"maxrss_mb": None, "wall": wall}
    return {"maxrss_mb": peak / 1024, "wall": wall}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", metavar="REV", help="also export with the code of REV")
    ap.add_argument("--save", metavar="NAME", help="write benchmarks/results/NAME.json")
    args = ap.parse_args()
    record = meta()
    rows, raw = [], []
    with tempfile.TemporaryDirectory(prefix="rrp-bench-export-mem-") as tmp:
        d = Path(tmp)
        runs = {t: simulate(d, t) for t in (1000.0, 10000.0)}
        codes = []
        if args.before:
            old = d / "before"
            old.mkdir()
            rev = subprocess.run(["git", "rev-parse", "--short", args.before], cwd=ROOT,
                                 capture_output=True, text=True, check=True).stdout.strip()
            archive = subprocess.run(["git", "archive", args.before], cwd=ROOT,
                                     capture_output=True, check=True).stdout
            subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
            codes.append((f"{rev} ({args.before})", old))
        codes.append((commit(), ROOT))
        # (each export in a grandchild of its own: ru_maxrss of the children is a
        # maximum over them all)
        for name, code in codes:
            for layout in ("view", "view+plots"):
                for t, run in runs.items():
                    r = _measured(code, run, layout, t, d / "x.mp4")
                    n = int(round(t / 1e-2)) + 1
                    r.update(code=name, layout=layout, records=n)
                    raw.append(r)
                    rows.append([name, layout, f"{n:,}", f"{r['maxrss_mb']:.0f}",
                                 f"{r['wall']:.1f}"])
                    print(f"{name} {layout:11s} {n:>9,} records: peak RSS "
                          f"{r['maxrss_mb']:.0f} MB, {r['wall']:.1f} s", file=sys.stderr)
    record["load_at_end"] = load()
    record["output"] = raw
    record["note"] = ("the pendulum (h = 1e-2, a record and a frame every step) exported "
                      "to MP4 at 640x360, 100 frames (--fps 10, --speed T/10); each export "
                      "in a child process of its own; peak RSS: its ru_maxrss")
    record["tables"] = {"export-memory": {
        "columns": ["code", "layout", "records", "peak RSS (MB)", "wall (s)"],
        "align": "llrrr", "rows": rows}}
    if args.save:
        dest = RESULTS / f"{args.save}.json"
        dest.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n",
                        encoding="utf-8")
        print(f"wrote {dest}", file=sys.stderr)
    print(json.dumps(record["tables"], indent=1, ensure_ascii=False))


def _measured(code: Path, run: Path, layout: str, t_end: float, out: Path) -> dict:
    """:func:`export` in a grandchild of its own, so that ``RUSAGE_CHILDREN`` is its own."""
    res = subprocess.run([sys.executable, __file__, "--one", str(code), str(run), layout,
                          str(t_end), str(out)], capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        c, r, lay, te, o = sys.argv[2:7]
        print(json.dumps(export(Path(c), Path(r), lay, float(te), Path(o))))
    else:
        main()
