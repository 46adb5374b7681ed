"""Time in the HDF5 writer against time stepping, on the tori-pile at 10⁴-10⁶ spheres
(issue #9, "HDF5 output at scale"; BENCHMARKS.md).

The pile (``tori-pile``, 20 spheres per ring, ``rrp-newmark``, ``h = 2e-3``) runs as
``rrp run --out`` runs it: a :class:`engine.io.RunWriter` with ``keep_frames=False``,
flushed after every chunk of ``--every`` steps, so each flush appends one frame (the
full state, 128 B per sphere in float64) plus the series rows, and writes the checkpoint
when due (``engine.io.hdf5.CHECKPOINT_BUDGET``). ``sim.advance`` and
``writer.flush``/``close`` are timed separately (wall clock: with the writer thread of
``rrp run --out``, the time the stepping waits for it; ``--sync`` writes in line), after
``warm_up`` (kernels compiled or loaded from the cache) and the writer's creation (which
writes frame 0 and the first checkpoint: reported apart). Also the file size, the
writer's split between records and checkpoints, and the peak RSS. ``--compression``
replaces the frame filter (``engine.io.file_layout.FRAME_COMPRESSION``, written as with
``rrp run --compress``) to compare the choices.

    python benchmarks/bench_io_scale.py [--sizes 10000 100000 1000000]
        [--boxes 8 60 190] [--frames 100] [--every 10] [--compression lzf|gzip|none]
        [--threads N] [--mu MU] [--damping ZETA] [--sync] [--dir DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.io import RunFile, RunWriter, file_layout  # noqa: E402
from engine.io import writer as writer_module  # noqa: E402
from engine.models import MODELS  # noqa: E402
from engine.simulation import Simulation  # noqa: E402

H = 2e-3
FILTERS = {"lzf": {"compression": "lzf"},
           "gzip": {"compression": "gzip", "compression_opts": 1, "shuffle": True},
           "none": {}}
"""``--compression`` choices: LZF (the writer's), gzip level 1 with shuffle, none."""


def measure(n_spheres: int, box: float, frames: int, every: int, directory: Path,
            mu: float = 0.0, damping: float = 0.0, background: bool = True) -> dict:
    """One run of ``frames`` frames, ``every`` steps apart, on a pile of ``n_spheres``
    (friction ``mu``, damping ``damping``: then the frames also hold ``F``, ``RM`` and
    the springs, and the loop stops at each frame to keep them, within the stepping
    time); the seconds in ``sim.advance`` and in the writer, and what was written."""
    t0 = time.perf_counter()
    model = MODELS["tori-pile"].make({"n_tori": max(1, n_spheres // 20), "box": box,
                                      "mu": mu, "damping": damping})
    build = time.perf_counter() - t0
    sim = Simulation(model, "rrp-newmark", H, record_every=every, record_frames=True,
                     record_state=True)
    sim.warm_up()
    path = directory / f"pile-{model.n_bodies}.h5"
    t0 = time.perf_counter()
    writer = RunWriter(path, sim, scenario="tori-pile", keep_frames=False,
                       background=background, compress=True)  # (the filter: --compression)
    create = time.perf_counter() - t0
    advance = write = 0.0
    for _ in range(frames):
        t0 = time.perf_counter()
        rep = sim.advance(every)
        advance += time.perf_counter() - t0
        if not rep.ok:
            raise RuntimeError(rep.failure.message)
        t0 = time.perf_counter()
        writer.flush()
        write += time.perf_counter() - t0
    t0 = time.perf_counter()
    writer.close()
    write += time.perf_counter() - t0
    with RunFile(path) as rf:
        n_frames = rf.n_frames
        springs = (len(rf.frame(-1).springs[0]) / model.n_bodies
                   if sim.ff.has_history else 0.0)
    size = path.stat().st_size
    path.unlink()
    width = 22 if sim.ff.has_history else 16  # x, q, Ω, v, Π (F, RM) in float64
    raw = n_frames * model.n_bodies * width * 8
    return {"spheres": model.n_bodies, "box": box, "frames": n_frames, "every": every,
            "steps": frames * every, "build_s": build, "create_s": create,
            "advance_s": advance, "write_s": write, "ratio": write / advance,
            "background": background,
            "records_s": writer.seconds["records"],
            "checkpoint_s": writer.seconds["checkpoint"],
            "checkpoints": writer.checkpoints_written,
            "file_MB": size / 1e6, "raw_MB": raw / 1e6, "mu": mu, "damping": damping,
            "springs_per_sphere_last_frame": springs,
            "peak_rss_MB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--boxes", type=float, nargs="+", default=[8.0, 60.0, 190.0],
                    help="side of the box at each size (room for every ring on the floor "
                         "in a few layers)")
    ap.add_argument("--frames", type=int, default=100)
    ap.add_argument("--every", type=int, default=10, help="steps per frame")
    ap.add_argument("--compression", choices=sorted(FILTERS), default="lzf")
    ap.add_argument("--threads", type=int, default=None,
                    help="threads of the force kernels (default: Numba's)")
    ap.add_argument("--dir", default=None, help="where to write the files (default: a "
                    "temporary directory, removed afterwards)")
    ap.add_argument("--sync", action="store_true", help="write on the stepping thread "
                    "(default: a writer thread, as rrp run --out)")
    ap.add_argument("--mu", type=float, default=0.0, help="friction (tori-pile's mu)")
    ap.add_argument("--damping", type=float, default=0.0, help="tori-pile's damping")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if len(args.boxes) < len(args.sizes):
        ap.error("give one --boxes value per size")
    if args.threads is not None:
        from engine.parallel import set_threads

        set_threads(args.threads)
    file_layout.FRAME_COMPRESSION = writer_module.FRAME_COMPRESSION = FILTERS[args.compression]
    directory = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="rrp-io-"))
    rows = []
    try:
        for size, box in zip(args.sizes, args.boxes, strict=False):
            r = measure(size, box, args.frames, args.every, directory, args.mu,
                        args.damping, not args.sync)
            r["compression"] = args.compression
            r["load"] = os.getloadavg()[0]
            rows.append(r)
            if not args.json:
                print(f"{r['spheres']:>8} spheres  {r['frames']} frames × {r['every']} steps: "
                      f"advance {r['advance_s']:.2f} s, in the writer's calls "
                      f"{r['write_s']:.2f} s = {r['ratio']:.2f}× stepping (writing "
                      f"{'in a thread' if r['background'] else 'in line'}: records "
                      f"{r['records_s']:.2f}, {r['checkpoints']} checkpoints "
                      f"{r['checkpoint_s']:.2f}); "
                      f"file {r['file_MB']:.0f} MB of {r['raw_MB']:.0f} MB raw; "
                      f"writer creation {r['create_s']:.2f} s; peak RSS "
                      f"{r['peak_rss_MB']:.0f} MB; load {r['load']:.2f}"
                      + (f"; springs a sphere (last frame) "
                         f"{r['springs_per_sphere_last_frame']:.2f}" if args.mu or
                         args.damping else ""), flush=True)
    finally:
        if not args.dir:
            shutil.rmtree(directory, ignore_errors=True)
    if args.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
