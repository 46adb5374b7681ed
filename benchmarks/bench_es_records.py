"""What a record costs under energy-stepping (issue #33 item 2): the same run recorded
every 0.01 and every 1.0 (``h`` is only the recording interval of an event-driven
scheme, physics.md §3.10), through ``Simulation`` as ``rrp run`` drives it (energy,
``P``, ``L``, the frames and the terrace gap per record).

For each scenario: the wall time of ``t ≤ T`` with ``h = 0.01`` and ``h = 1.0``
(``every = 1``; best of ``--repeat`` fresh runs, the two interleaved, after a warm-up
that compiles), their
ratio, the events, and the cost of one record ``(wall(0.01) − wall(1.0)) / (records
difference)``.  Goal (issue #33): ratio ≤ 2.

    python benchmarks/bench_es_records.py [--scenarios pendulum torus] [--t-end 20 2]
        [--rel 1e-4] [--repeat 3] [--save es_records]

``--save NAME`` writes the results, with the command, commit, date, machine and load, to
``benchmarks/results/NAME.json`` (``es_records``, and ``es_records_before`` for the
commit compared with): ``benchmarks/report.py`` makes BENCHMARKS.md's table from them
(issue #34 §5).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.api import make_simulation  # noqa: E402

H_FINE, H_COARSE = 0.01, 1.0


def one_run(scenario: str, rel: float, h: float, t_end: float) -> tuple[float, int, int]:
    """``(wall seconds, events, records)`` of one fresh run (construction excluded)."""
    sim = make_simulation(scenario, integrator=f"energy-stepping:{rel}", h=h, every=1)
    n = int(round(t_end / h))
    t0 = time.perf_counter()
    rep = sim.advance(n)
    wall = time.perf_counter() - t0
    if not rep.ok:
        raise SystemExit(f"bench_es_records: {scenario} failed: {rep.failure.message}")
    return wall, int(sim.event_stats()["events"]), int(sim.series.n)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenarios", nargs="+", default=["pendulum", "torus"])
    ap.add_argument("--t-end", type=float, nargs="+", default=[20.0, 2.0])
    ap.add_argument("--rel", type=float, default=1e-4)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--save", metavar="NAME", default="",
                    help="write benchmarks/results/NAME.json for benchmarks/report.py")
    a = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _results import meta, save

    record = {**meta(), "rel": a.rel, "repeat": a.repeat, "scenarios": []}
    ends = a.t_end if len(a.t_end) == len(a.scenarios) else a.t_end[:1] * len(a.scenarios)
    print(f"# load {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}, "
          f"{os.cpu_count()} CPUs, REL {a.rel:g}, best of {a.repeat}")
    for sc, t_end in zip(a.scenarios, ends, strict=True):
        one_run(sc, a.rel, H_COARSE, min(t_end, 1.0))  # (compile / load the kernels)
        runs: dict[float, list] = {H_FINE: [], H_COARSE: []}
        for _ in range(max(1, a.repeat)):  # (interleaved: the box's load drifts)
            for h in (H_FINE, H_COARSE):
                runs[h].append(one_run(sc, a.rel, h, t_end))
        res = {h: min(r) for h, r in runs.items()}
        (wf, ef, rf), (wc, ec, rc) = res[H_FINE], res[H_COARSE]
        per = (wf - wc) / max(rf - rc, 1) * 1e6
        print(f"{sc:10s} t ≤ {t_end:g}: every 0.01 {wf:.3f} s ({rf} records, {ef} events)"
              f", every 1.0 {wc:.3f} s ({rc} records, {ec} events): ratio {wf / wc:.2f}, "
              f"{per:.1f} µs per record, {wc / max(ec, 1) * 1e6:.2f} µs per event")
        record["scenarios"].append({
            "scenario": sc, "t_end": t_end, "us_per_record": per, "ratio": wf / wc,
            "fine": {"h": H_FINE, "wall_s": wf, "events": ef, "records": rf},
            "coarse": {"h": H_COARSE, "wall_s": wc, "events": ec, "records": rc},
            "load": [round(v, 2) for v in os.getloadavg()]})
    if a.save:
        print(f"written: {save(a.save, record)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
