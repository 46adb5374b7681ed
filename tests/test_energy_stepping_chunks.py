"""Energy-stepping's records a chunk at a time (issue #33 item 2): the pendulum's
recording intervals run in compiled calls that read every record on the way
(``engine.energy_stepping.pendulum_records``), with the same bits as one interval at a
time (``EnergyStepper.advance_to`` + ``state_arrays`` + ``record_potential`` per
record, the path the spheres keep)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.api import make_simulation
from engine.energy_stepping import EnergyStepper
from engine.energy_stepping import stepper as es_stepper
from engine.simulation import Simulation
from engine.simulation import events as sim_events


def _run(chunked: bool, monkeypatch, *, h: float, every: int, advances: list[int],
         state: bool = True, overrides: dict | None = None, rel: str = "1e-4",
         budget: int | None = None, stop_every: int = 0) -> tuple[dict, Simulation]:
    with monkeypatch.context() as mp:
        if not chunked:
            mp.setattr(EnergyStepper, "records_in_chunks", property(lambda self: False))
        if budget:
            mp.setattr(es_stepper, "BUDGET_START", budget)
            mp.setattr(es_stepper, "BUDGET_MIN", budget // 2)
            mp.setattr(es_stepper, "BUDGET_MAX", 2 * budget)
        sim = make_simulation("pendulum", integrator=f"energy-stepping:{rel}", h=h,
                              every=every, overrides=overrides)
        sim.set_record_state(state)
        assert sim._stepper is None or sim._stepper.records_in_chunks == chunked
        calls = {"n": 0}

        def stop() -> bool:
            calls["n"] += 1
            return calls["n"] % stop_every == 0

        if stop_every:
            sim.stop_check = stop
        partial = 0
        for n in advances:
            target = sim.step_index + n
            while sim.step_index < target:
                rep = sim.advance(target - sim.step_index)
                assert rep.ok, rep.failure
                partial += rep.steps < n
        assert sim._stepper.records_in_chunks == chunked
        if stop_every:
            assert partial >= 3 and calls["n"] >= 3
    out = dict(sim.series.arrays())
    out["events"] = np.array([sim.event_stats()["events"]])
    out["state"] = np.concatenate([sim.state.x.ravel(), sim.state.q.ravel(),
                                   sim.state.omega.ravel(), sim.energy])
    return out, sim


CASES = {
    "every interval": dict(h=0.01, every=1, advances=[300]),
    "every third, uneven advances": dict(h=0.01, every=3, advances=[7, 50, 1, 1100, 243]),
    "no state columns": dict(h=0.02, every=1, advances=[100], state=False),
    "from rest": dict(h=0.05, every=2, advances=[40],
                      overrides={"omega0": [0.0, 0.0, 0.0]}),
    "small REL": dict(h=0.001, every=1, advances=[500], rel="1e-6"),
    "budget stops on the way": dict(h=0.01, every=1, advances=[200], budget=64,
                                    stop_every=2),
}


@pytest.mark.parametrize("case", list(CASES))
def test_chunked_records_are_the_per_interval_records_bit_for_bit(case, monkeypatch):
    """Times, energies, momenta, frames, state columns, terrace gap and steps of the
    chunked path equal the per-interval path's bits, with the same events and the same
    state at the end."""
    ref, _ = _run(False, monkeypatch, **CASES[case])
    new, _ = _run(True, monkeypatch, **CASES[case])
    assert set(new) == set(ref)
    assert len(ref["t"]) >= 20
    for k, v in ref.items():
        assert new[k].dtype == v.dtype and new[k].shape == v.shape, k
        assert np.array_equal(new[k], v), k


def test_a_stop_on_the_way_and_a_resume_keep_the_bits(monkeypatch):
    """Stopped mid-chunk by ``stop_check`` with a small budget, saved while stopped on
    its way (``resume_state``), resumed: the records and the events of the unbroken
    run, chunk boundaries (``RECORD_CHUNK``) crossed on the way."""
    monkeypatch.setattr(sim_events, "RECORD_CHUNK", 16)
    straight, _ = _run(True, monkeypatch, h=0.01, every=1, advances=[120])
    monkeypatch.setattr(es_stepper, "BUDGET_START", 50)
    monkeypatch.setattr(es_stepper, "BUDGET_MIN", 25)
    monkeypatch.setattr(es_stepper, "BUDGET_MAX", 100)
    sim = make_simulation("pendulum", integrator="energy-stepping:1e-4", h=0.01, every=1)
    calls = {"n": 0}

    def stop() -> bool:
        calls["n"] += 1
        return calls["n"] % 3 == 0

    sim.stop_check = stop
    saved = None
    while sim.step_index < 120:
        assert sim.advance(120 - sim.step_index).ok
        if saved is None and sim.step_index >= 40 and sim._stepper.stopped_on_its_way:
            saved = (sim.resume_state(), sim.series.n)
    assert saved is not None
    got = sim.series.arrays()
    for k in ("t", "energy", "P", "L", "x", "q", "omega", "terrace_gap", "step"):
        assert np.array_equal(got[k], straight[k]), k
    assert sim.event_stats()["events"] == straight["events"][0]
    d, n_rec = saved
    r = Simulation.from_resume_state(sim.model, d)
    r.stop_check = stop
    while r.step_index < 120:
        assert r.advance(120 - r.step_index).ok
    got = r.series.arrays()
    for k in ("t", "energy", "P", "L", "x", "q", "omega", "terrace_gap", "step"):
        assert np.array_equal(got[k], straight[k][n_rec:]), k
    assert r.event_stats()["events"] == straight["events"][0]


def test_the_pendulum_records_in_chunks_and_the_spheres_one_interval_at_a_time():
    """The pendulum's stepper takes the chunked path (one compiled call for many
    records); the spheres' records need the force kernel for their energies and keep
    the per-interval path."""
    pend = make_simulation("pendulum", integrator="energy-stepping:1e-4", h=0.01)
    assert pend.advance(3).ok and pend._stepper.records_in_chunks
    torus = make_simulation("torus", integrator="energy-stepping:1e-4", h=0.01)
    assert torus.advance(1).ok and not torus._stepper.records_in_chunks
