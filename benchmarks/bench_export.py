"""Export speed and memory of a run file (issue #37 item 5): frames per second of
``rrp export RUN.h5`` for the torus at 1280x720, ``view`` and ``view+plots``, and the
peak resident memory of the export process for a short and a 4× longer run (it must not
grow with the run: frames are read two at a time and streamed to ffmpeg).

    python benchmarks/bench_export.py                  # prints the table
    python benchmarks/bench_export.py --save export-2026-11-28

Each export runs in a child process (``rrp export … --quiet``) so that its peak RSS
(``ru_maxrss`` of the child) is its own; frames/s is the frames over the export's own
wall time as it reports it (model build, plots' first draw and the encoder included),
and over the frames' part alone (render + encode).  The benchmark simulates its run
files first (``rrp run torus --t-end T --out``), not timed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import RESULTS, ROOT, load, meta  # noqa: E402

CHILD = r"""
import json, resource, sys, time
from app.export import export_run
t = time.perf_counter()
r = export_run(sys.argv[1], out=sys.argv[2], layout=sys.argv[3], size=(1280, 720), fps=30,
               t1=float(sys.argv[4]))
print(json.dumps({"frames": r.frames, "wall": time.perf_counter() - t,
                  "render": r.render_seconds, "encode": r.encode_seconds,
                  "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


def simulate(directory: Path, t_end: float) -> Path:
    out = directory / f"torus-{t_end:g}.h5"
    subprocess.run([sys.executable, "-m", "app", "run", "torus", "--t-end", str(t_end),
                    "--out", str(out), "--quiet"], cwd=ROOT, env=_env(), check=True,
                   capture_output=True)
    return out


def export(run: Path, layout: str, t1: float, directory: Path) -> dict:
    res = subprocess.run([sys.executable, "-c", CHILD, str(run),
                          str(directory / f"x-{layout}.mp4"), layout, str(t1)],
                         cwd=ROOT, env=_env(), capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--t-short", type=float, default=2.0, help="the short run (s)")
    ap.add_argument("--t-long", type=float, default=8.0, help="the long run (s)")
    ap.add_argument("--save", metavar="NAME", help="write benchmarks/results/NAME.json")
    args = ap.parse_args()
    record = meta()
    rows, raw = [], []
    with tempfile.TemporaryDirectory(prefix="rrp-bench-export-") as tmp:
        d = Path(tmp)
        runs = {t: simulate(d, t) for t in (args.t_short, args.t_long)}
        for layout in ("view", "view+plots"):
            for t, run in runs.items():
                t0 = time.perf_counter()
                r = export(run, layout, t, d)
                r.update(layout=layout, t_end=t, child_wall=time.perf_counter() - t0)
                raw.append(r)
                fps_all = r["frames"] / r["wall"]
                fps_frames = r["frames"] / (r["render"] + r["encode"])
                rows.append([layout, f"{t:g}", str(r["frames"]), f"{fps_all:.1f}",
                             f"{fps_frames:.1f}", f"{r['maxrss_mb']:.0f}"])
                print(f"{layout:11s} t = 0…{t:g}: {r['frames']} frames, {fps_all:.1f} "
                      f"frames/s overall, {fps_frames:.1f} frames/s rendering+encoding, "
                      f"peak RSS {r['maxrss_mb']:.0f} MB", file=sys.stderr)
    record["load_at_end"] = load()
    record["output"] = raw
    record["note"] = ("the torus run file (80 spheres, a frame every 10 steps) exported to "
                      "MP4 at 1280x720, 30 fps, speed 1; frames/s overall includes the "
                      "model build, the plots' first draw and closing the encoder")
    record["tables"] = {"export": {
        "columns": ["layout", "run (s)", "frames", "frames/s overall",
                    "frames/s (render + encode)", "peak RSS (MB)"],
        "align": "lrrrrr", "rows": rows}}
    if args.save:
        dest = RESULTS / f"{args.save}.json"
        dest.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n",
                        encoding="utf-8")
        print(f"wrote {dest}", file=sys.stderr)
    print(json.dumps(record["tables"], indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
