"""Bit identity for any chunking and across a resume (issue #26, item 5): every scheme
on every model the registry lets it drive (the cases of ``tests/bits_matrix.py``) is
advanced in one call, in chunks of 1, in chunks of 7, in mixed chunks of 1, 7 and 1000
steps, and written half way into a run file (``RunWriter``, with its checkpoint),
reopened, resumed and continued; the final states agree bit for bit.

"The state" is everything the run carries from step to step (``resume_state``): ``x``,
``v``, ``q``, ``Ω``, ``F``, ``RM``, the energy components, ``Π``, the node of a
generalized model, the friction springs, the iteration statistics, the clock and the
references, and of the percussion solver the last solve's contacts, percussions and
warm starts.  Not compared: the neighbour list (``nl_*``), an acceleration structure
whose history does depend on the chunking (a new chunk starts with a full build, a
straight run updates it in part) and must not show in anything else; and the recording
settings.

Also the pile of 8 hard-contact rings with the Moreau schemes, run into the contact
phase (≈ 550 steps): the percussion solver's warm starts were dropped at each rebuild
of the neighbour list, whose timing depends on the chunking (issue #26: ``advance(20)``
and ``advance(1000)`` parted at t ≈ 0.5; ``engine.contact.detect``)."""

from __future__ import annotations

import copy
import functools
import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from bits_matrix import CASES, schemes_for

from engine.drivers import simulation_for, simulation_from_resume_state
from engine.io import RunFile, RunWriter
from engine.scenarios import load_scenario
from engine.simulation import Simulation, SimulationError

NOT_STATE = ("nl_pairs", "nl_capacity", "nl_state", "nl_xref", "record_every",
             "record_frames", "record_state")
"""``resume_state`` entries that are not compared (module docstring)."""

MIXED = (1, 7, 1000)

HARD_PILE = {"n_tori": 8, "contact": "hard"}
HARD_CASES = (
    # (label, parameters, schemes, steps): the unchunked run parts from a chunked one
    # at step ≈ 570 (moreau-symmetric) and ≈ 500 (moreau) without the fix
    ("hard-pile", HARD_PILE, ("moreau-symmetric", "moreau"), 700),
    ("hard-pile-friction", {**HARD_PILE, "mu": 0.3}, ("moreau-symmetric",), 900),
)


@functools.cache
def _model(scenario: str, params: str) -> tuple:
    """The model of ``scenario`` with the parameters ``params`` (JSON) and its step,
    built once (a simulation works on copies of its force field and state)."""
    sc = load_scenario(scenario, json.loads(params))
    return sc.build_model(), sc.run.h


def _simulation(scenario: str, params: dict, scheme: str, **kw) -> Simulation | None:
    model, h = _model(scenario, json.dumps(params, sort_keys=True))
    settings = {"record_every": 10 ** 9, "record_frames": False, "energy_tolerance": None}
    settings.update(kw)
    try:
        return simulation_for(model, scheme, h, **settings)
    except SimulationError:  # refused by the registry
        return None


def _advance(sim: Simulation, chunks, steps: int) -> None:
    """``steps`` steps in chunks of the lengths ``chunks`` yields (cycled); stops where
    a step fails (where it stops is part of the result)."""
    done = 0
    for n in itertools.cycle(chunks):
        if done >= steps:
            return
        rep = sim.advance(min(n, steps - done))
        done += rep.steps
        if not rep.ok:
            return


def _contacts(cw: list[np.ndarray]) -> dict[str, np.ndarray]:
    """The percussion solver's state that carries over (``engine.contact.detect``): the
    last solve's contacts, their percussions, geometry and warm starts, and the solve
    count; not the places in the work arrays (the warm starts of pairs sit at their
    places in the neighbour list, whose history may differ)."""
    idx, geo, P, gam, count, warm = cw
    nc = int(count[0])
    slots = idx[:nc, 2]
    return {"contacts": idx[:nc, :2], "geometry": geo[:nc], "percussions": P[:nc],
            "velocities": gam[:nc], "count": count[[0, 2]],
            "warm": np.where(slots[:, None] >= 0, warm[np.maximum(slots, 0)], np.nan)}


def state(sim: Simulation) -> dict:
    """Everything a run carries from step to step (module docstring)."""
    d = {k: v for k, v in sim.resume_state().items() if k not in NOT_STATE}
    cw = [d.pop(f"work_7_{j}") for j in range(6) if f"work_7_{j}" in d]
    if cw:
        d.update(_contacts(cw))
    return d


def assert_same_bits(a: dict, b: dict, what: str) -> None:
    assert sorted(a) == sorted(b), what
    for k, x in a.items():
        y = b[k]
        if isinstance(x, np.ndarray):
            x, y = np.ascontiguousarray(x), np.ascontiguousarray(y)
            assert x.dtype == y.dtype and x.shape == y.shape, f"{what}: {k}"
            if not np.array_equal(x, y, equal_nan=x.dtype.kind == "f"):
                bad = np.argwhere(x != y)[:1].tolist()
                raise AssertionError(f"{what}: {k} differs (first at {bad})")
            assert x.tobytes() == y.tobytes(), f"{what}: {k} (signed zeros or NaN bits)"
        else:
            assert x == y, f"{what}: {k}: {x!r} != {y!r}"


def resumed(path: Path, scenario: str, params: dict, scheme: str, steps: int,
            at: int) -> Simulation:
    """``at`` steps (in chunks of 7) into a run file with its checkpoint, then a
    simulation resumed from that file's checkpoint (its model built from the file) and
    continued to ``steps`` in one call, appending to the file."""
    first = _simulation(scenario, params, scheme, record_every=25, record_frames=True)
    w = RunWriter(path, first)
    _advance(first, (7,), at)
    w.close()
    with RunFile(path) as rf:
        d, n_records = rf.resume_state()
        model = rf.build_model()
    sim = simulation_from_resume_state(model, d)
    assert sim.step_index == first.step_index
    w = RunWriter.resume(path, sim, path, n_records)
    _advance(sim, (steps,), steps - sim.step_index)
    w.close()
    return sim


def check_pair(tmp_path: Path, scenario: str, params: dict, scheme: str, steps: int,
               at: int | None = None) -> bool:
    """Every chunking and a resume give the unchunked run's bits; ``False`` where the
    registry refuses the pair."""
    straight = _simulation(scenario, params, scheme)
    if straight is None:
        return False
    _advance(straight, (steps,), steps)
    ref = state(straight)
    for chunks in ((1,), (7,), MIXED):
        sim = _simulation(scenario, params, scheme)
        _advance(sim, chunks, steps)
        assert_same_bits(ref, state(sim), f"{scheme} on {scenario} in chunks of {chunks}")
    at = steps // 2 + 3 if at is None else at
    sim = resumed(tmp_path / f"{scheme.replace(':', '_')}.h5", scenario, params, scheme,
                  steps, at)
    assert_same_bits(ref, state(sim), f"{scheme} on {scenario} resumed at step {at}")
    return True


SMALL = [c for c in CASES if c[0] not in ("pile-parallel", "pile-in-place")]
LARGE = [c for c in CASES if c not in SMALL]


@pytest.mark.slow
@pytest.mark.parametrize("label, scenario, params, names, steps", SMALL,
                         ids=[c[0] for c in SMALL])
def test_every_chunking_and_a_resume_give_the_same_bits(tmp_path, label, scenario, params,
                                                       names, steps):
    ran = [s for s in schemes_for(names) if check_pair(tmp_path, scenario, params, s, steps)]
    assert ran, f"no scheme drives {label}"


@pytest.mark.slow
@pytest.mark.parametrize("label, scenario, params, names, steps", LARGE,
                         ids=[c[0] for c in LARGE])
def test_the_parallel_and_in_place_kernels_too(tmp_path, label, scenario, params, names,
                                               steps):
    """The deterministic parallel kernels (their pair runs, re-derived each chunk) and
    the in-place velocity Verlet (its checkpoint taken at the start of each call)."""
    for s in schemes_for(names):
        assert check_pair(tmp_path, scenario, params, s, steps)


@pytest.mark.parametrize("label, params, names, steps", [  # (the friction case: slow)
    HARD_CASES[0], pytest.param(*HARD_CASES[1], marks=pytest.mark.slow)],
    ids=[c[0] for c in HARD_CASES])
def test_the_hard_contact_pile_into_its_contact_phase(tmp_path, label, params, names,
                                                      steps):
    for s in names:
        assert check_pair(tmp_path, "tori-pile", params, s, steps, at=steps - 150)


def test_a_neighbour_list_that_grows_in_the_contact_phase_changes_no_step():
    """A list too small for the pairs a rebuild finds is doubled and the step taken
    again, with new contact work arrays: the percussions' warm starts go with them
    (``engine.contact.detect.grown_contact_work``), so the run takes the steps of one
    whose list was large enough.  The pile's list holds 160 pairs until step ≈ 710."""
    model, h = _model("tori-pile", json.dumps(HARD_PILE, sort_keys=True))
    runs = []
    for capacity in (None, 160):
        m = model
        if capacity is not None:
            m = copy.copy(model)
            m.forcefield = model.forcefield.working_copy()
            m.forcefield.nl_pairs = np.zeros((capacity, 2), dtype=np.int64)
        sim = simulation_for(m, "moreau-symmetric", h, record_every=10 ** 9,
                         record_frames=False, energy_tolerance=None)
        assert sim.advance(800).ok
        runs.append(sim)
    big, grown = runs
    assert grown.ff.nl_pairs.shape[0] == 320 < big.ff.nl_pairs.shape[0]  # (it grew)
    assert_same_bits(state(big), state(grown), "moreau-symmetric with a list that grew")
