"""How fast the desktop window answers under the soak's random actions (issue #10 §6,
issue #27 §1): the 1,000 actions of ``tests/test_gui_soak.py`` (``tests/soak_actions.py``,
same seed), each followed by a ping through the worker's event loop back to the GUI's;
reports the worst and median round trip, the slowest actions and the RSS growth.

The test checks what holds on any machine (no exception, the shown scheme is the one
running, memory bounded); response times depend on the machine and its load, so they
are measured here and reported in BENCHMARKS.md instead of asserted.

    xvfb-run -a -s "-screen 0 1600x1000x24" python benchmarks/bench_gui_soak.py \
        [--actions 1000] [--seed 20261110] [--size 1100x700] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def _spinners(app: Any):
    """``wait_until(predicate, seconds)`` (TimeoutError after ``seconds``) and
    ``wait(ms)``: the event loop turned by hand, as pytest-qt's ``qtbot`` does."""

    def wait_until(pred, seconds: float) -> None:
        end = time.perf_counter() + seconds
        while not pred():
            if time.perf_counter() > end:
                raise TimeoutError(f"not done within {seconds:g} s")
            app.processEvents()
            time.sleep(0.001)

    def wait(ms: int) -> None:
        end = time.perf_counter() + ms / 1000
        while time.perf_counter() < end:
            app.processEvents()
            time.sleep(0.001)

    return wait_until, wait


def main() -> int:
    from soak_actions import N_ACTIONS, SEED

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--actions", type=int, default=N_ACTIONS)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--size", default="1100x700")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.actions < 100:
        ap.error("--actions must be at least 100 (the RSS growth compares windows of 50)")

    import numpy as np
    from PyQt6.QtCore import QSettings
    from PyQt6.QtWidgets import QApplication
    from soak_actions import WAIT, soak

    from app.gui.main_window import MainWindow
    from app.gui.worker import LoadRequest

    app = QApplication.instance() or QApplication(sys.argv[:1])
    wait_until, wait = _spinners(app)
    ini = Path(tempfile.mkdtemp()) / "bench.ini"
    w = MainWindow(LoadRequest("pendulum"),
                   settings=QSettings(str(ini), QSettings.Format.IniFormat))
    w.resize(*(int(v) for v in args.size.split("x")))
    w.show()
    wait_until(lambda: w.loaded is not None and w.last_frame is not None, WAIT)
    try:
        res = soak(w, wait_until, wait, n_actions=args.actions, seed=args.seed)
    finally:
        w.close()
    r = res.responses
    out = {"actions": args.actions, "seed": args.seed, "window": args.size,
           "seconds": round(res.t_actions, 1), "warm_up_seconds": round(res.t_warm, 1),
           "response_median_ms": round(1e3 * float(np.median(r)), 1),
           "response_p99_ms": round(1e3 * float(np.percentile(r, 99)), 1),
           "response_max_ms": round(1e3 * float(r.max()), 1),
           "rss_growth_mb": round(res.growth / 1e6, 1),
           "rss_peak_mb": round(float(res.rss.max()) / 1e6, 1),
           "slowest": [(res.names[k], round(1e3 * float(r[k]), 1))
                       for k in np.argsort(r)[::-1][:5]],
           "actions_done": dict(res.done)}
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        print(res.summary())
        print(f"response: median {out['response_median_ms']} ms, 99th percentile "
              f"{out['response_p99_ms']} ms, worst {out['response_max_ms']} ms; slowest: "
              + ", ".join(f"{a} {ms} ms" for a, ms in out["slowest"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
