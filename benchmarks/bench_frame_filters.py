"""The frames' chunking and filter: time and disk (issue #36, item 15; BENCHMARKS.md,
"What a record costs").

Real frames (the full state ``rrp run --out`` records: position, quaternion, ω, v, Π,
and F, RM where the model keeps friction history) of the torus (80 bodies, its default
recording to ``--t-end``) and of a 10⁴-sphere ``tori-pile`` (box 8, ``--pile-frames``
records every 20 steps from the start) are written as ``RunWriter`` appends them: frame
datasets ``(frames, N, w)`` with Fletcher-32, one resize and one write of each dataset
a batch (``--batch`` records; 1 for the pile, whose frame is a batch of its own), the
file flushed after each batch.  Chunks of ``K`` frames (``--k``) and the filters built
into h5py (``none``, ``lzf``, ``shuffle+lzf``, ``gzip1+shuffle``).  Reported: the
writing thread's wall and CPU time a record (median of ``--repeat``), and the file's
size against the raw frames.

    python benchmarks/bench_frame_filters.py [--t-end 10] [--pile-frames 11]
        [--k 1 16 64] [--repeat 3] [--no-pile] [--save-as frame_filters.json]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import h5py
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.scenarios import load_scenario  # noqa: E402
from engine.simulation import Simulation  # noqa: E402

FILTERS = {"none": {}, "lzf": {"compression": "lzf"},
           "shuffle+lzf": {"compression": "lzf", "shuffle": True},
           "gzip1+shuffle": {"compression": "gzip", "compression_opts": 1, "shuffle": True}}
"""The filters h5py has without plugins."""

KEYS = (("position", "x"), ("quaternion", "q"), ("omega", "omega"), ("velocity", "v"),
        ("momentum_body", "pi"), ("force", "force"), ("moment", "moment"))


def frames_of(scenario: str, overrides: dict, t_end: float, every: int | None) -> dict:
    """The frames of a run of ``scenario`` as ``rrp run --out`` records them."""
    sc = load_scenario(scenario, overrides)
    sim = Simulation(sc.build_model(), sc.run.integrator, sc.run.h,
                     record_every=every or sc.run.every, record_frames=True,
                     record_state=True)
    sim.advance(max(1, round(t_end / sc.run.h)))
    a = sim.series.tail(0)
    return {name: np.ascontiguousarray(a[key]) for name, key in KEYS
            if key in a and a[key] is not None and np.all(np.isfinite(a[key]))}


def write(frames: dict, k: int, filt: dict, batch: int, path: Path) -> tuple[float, float]:
    """Write ``frames`` in batches of ``batch``; (wall, CPU) seconds of this thread."""
    t0, c0 = time.perf_counter(), time.thread_time()
    with h5py.File(path, "w", rdcc_nbytes=16 << 20) as f:
        ds = {}
        for name, arr in frames.items():
            n, w = arr.shape[1:]
            ds[name] = f.create_dataset(name, (0, n, w), maxshape=(None, n, w), dtype="f8",
                                        chunks=(k, n, w), fletcher32=True, **filt)
        rows = next(iter(frames.values())).shape[0]
        for s in range(0, rows, batch):
            for name, arr in frames.items():
                d, b = ds[name], arr[s:s + batch]
                n0 = d.shape[0]
                d.resize(n0 + len(b), axis=0)
                d[n0:] = b
            f.flush()
    return time.perf_counter() - t0, time.thread_time() - c0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--t-end", type=float, default=10.0)
    ap.add_argument("--batch", type=int, default=100, help="the torus's records a batch")
    ap.add_argument("--k", type=int, nargs="+", default=[1, 16, 64])
    ap.add_argument("--pile-frames", type=int, default=11)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-pile", action="store_true")
    ap.add_argument("--save-as", default="frame_filters.json")
    args = ap.parse_args()
    cases = [("torus", frames_of("torus", {}, args.t_end, None), args.batch, args.k)]
    if not args.no_pile:
        pile = frames_of("tori-pile", {"n_tori": 500, "box": 8.0},
                         (args.pile_frames - 1) * 20 * 1e-3, 20)
        cases.append(("pile 10^4", pile, 1, [1]))
    rows = []
    d = Path(tempfile.mkdtemp(prefix="rrp-ff-"))
    for label, frames, batch, ks in cases:
        n_rec = next(iter(frames.values())).shape[0]
        raw = sum(v.nbytes for v in frames.values())
        for fname, filt in FILTERS.items():
            for k in ks:
                p = d / "f.h5"
                walls, cpus = [], []
                for _ in range(args.repeat):
                    w, c = write(frames, k, filt, batch, p)
                    walls.append(w)
                    cpus.append(c)
                size = p.stat().st_size
                p.unlink()
                r = {"case": label, "bodies": next(iter(frames.values())).shape[1],
                     "records": n_rec, "datasets": len(frames), "filter": fname, "k": k,
                     "batch": batch, "us_per_record": 1e6 * statistics.median(walls) / n_rec,
                     "cpu_us_per_record": 1e6 * statistics.median(cpus) / n_rec,
                     "file_MB": size / 1e6, "of_raw": size / raw,
                     "load": os.getloadavg()[0]}
                rows.append(r)
                print(f"{label:>10} {fname:>14} K={k:3d}: {r['us_per_record']:10.1f} µs "
                      f"a record (CPU {r['cpu_us_per_record']:.1f}), {r['file_MB']:.2f} MB "
                      f"= {r['of_raw']:.3f} of raw; load {r['load']:.2f}", flush=True)
    d.rmdir()
    out = {"command": "python " + " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
           "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
           "machine": f"{os.uname().nodename}, {os.cpu_count()} cores", "rows": rows}
    (ROOT / "benchmarks" / "results" / args.save_as).write_text(
        json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
