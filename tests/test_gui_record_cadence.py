"""The live runs' record cadence: the plots get a row at least every ~0.1 s of wall time.

LAMMPS's impact (``bpm-impact``: 11 118 spheres, 45 ms a step, ``every = 100`` from its
deck's ``thermo``) showed empty plots for its first 4.5 s (one row, at t = 0: no line)
and then a point every 4.5 s; an imported deck gets its ``thermo`` as ``every`` too.  The
worker now records every ``min(every, RECORD_S / step time)`` steps; the records are
reads, so the runs' bits are those of the scenario's cadence."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from gui_needs import skip_without_gui

skip_without_gui()

import app.gui.worker as worker_module  # noqa: E402
from app.gui.worker import LoadRequest, SimulationWorker  # noqa: E402
from engine.scenarios import load_scenario  # noqa: E402
from engine.simulation import Simulation  # noqa: E402

pytestmark = pytest.mark.gui


@pytest.mark.parametrize("us_per_step, every, expected", [
    (45_000.0, 100, 2),  # the impact: a row each 2 steps (~0.09 s)
    (200_000.0, 100, 1),  # slower than RECORD_S a step: every step
    (2_000.0, 100, 50),
    (50.0, 10, 10),  # a fast model keeps the scenario's every
    (50.0, 1, 1),
])
def test_the_cadence_is_the_scenarios_every_or_a_row_each_record_s(qtbot, us_per_step,
                                                                     every, expected):
    w = SimulationWorker()
    w._runs = [SimpleNamespace(sim=SimpleNamespace(record_every=every)) for _ in range(3)]
    w._every = every
    w._rate = (us_per_step, 1e6 / us_per_step, 0.0)
    w._record_cadence()
    assert [r.sim.record_every for r in w._runs] == [expected] * 3  # (lock-step: all)
    w._rate = (10.0, 1e5, 0.0)  # (faster again, e.g. the twins swapped for the kernels)
    w._record_cadence()
    assert [r.sim.record_every for r in w._runs] == [every] * 3


def test_a_slow_step_records_more_often_with_the_same_bits(qtbot, make_window,
                                                           monkeypatch):
    """The torus (``every = 10``) with RECORD_S made 1 µs (so that any step of it is
    "slow"): once the step time is measured the plots get a row every step, and the
    state is bit for bit the one of the scenario's cadence."""
    monkeypatch.setattr(worker_module, "RECORD_S", 1e-6)
    w = make_window(LoadRequest("torus", {"n_particles": 12}))
    w.play()
    qtbot.waitUntil(lambda: w.last_frame.step >= 300, timeout=120_000)
    w.pause()
    qtbot.waitUntil(lambda: w.state == "paused", timeout=60_000)
    qtbot.wait(200)  # (the last frame in flight)
    fr = w.last_frame
    sim = w.worker._runs[0].sim
    assert sim.record_every == 1
    t = w.plots.runs[next(iter(w.plots.runs))].t.data
    gaps = np.diff(t[t > 0.05])
    assert len(gaps) > 100 and gaps.max() <= 10 * fr.h * (1 + 1e-9)
    np.testing.assert_allclose(np.median(gaps), fr.h, rtol=1e-6)  # (a row a step)
    sc = load_scenario("torus", {"n_particles": 12})
    ref = Simulation(sc.build_model(), sc.run.integrator, fr.h,
                     record_every=sc.run.every)
    assert ref.advance(fr.step).ok
    np.testing.assert_array_equal(ref.state.x, fr.x)
    np.testing.assert_array_equal(ref.state.q, fr.q)
    # *Continue from here* on the live run keeps the scenario's cadence as its base
    w.request_branch_live.emit(("rrp-newmark",), fr.h)
    qtbot.waitUntil(lambda: w.worker._runs[0].sim is not sim, timeout=60_000)
    assert w.worker._every == sc.run.every == 10
