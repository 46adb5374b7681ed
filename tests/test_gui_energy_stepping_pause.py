"""The app's Pause under energy-stepping (issue #33 item 4, the app's side): the window
asks the worker to stop at once (``SimulationWorker.ask_pause``, the runs'
``Simulation.stop_check``), so that a run inside a long recording interval stops at its
next compiled call instead of finishing its chunk of intervals first."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")
pytest.importorskip("pyvistaqt")

from app.gui.worker import LoadRequest  # noqa: E402

pytestmark = pytest.mark.gui
WAIT = 180_000  # ms (a cold kernel cache on a loaded machine)
TICK = 20
"""Recording intervals per tick of the worker."""


def test_pause_stops_a_long_energy_stepping_interval_part_way(qtbot, make_window):
    """The pendulum at REL 1e-10 (~3.5e6 events per recording interval of 0.01, about
    a second each), 20 intervals a tick: Pause while the first tick runs.  It stops the
    run part-way through that tick (before the fix the worker heard the Pause only after
    the 20 intervals), at the last interval completed, and Play goes on from there."""
    w = make_window(LoadRequest("pendulum", {}, "energy-stepping:1e-10", 1e-2))
    w.worker.steps_per_tick = TICK
    sim = w.worker._runs[0].sim
    w.play()
    qtbot.waitUntil(lambda: sim._stepper is not None and sim._stepper.n_events > 0,
                    timeout=WAIT)  # (inside the first tick's compiled calls)
    w.pause()
    qtbot.waitUntil(lambda: w.state == "paused", timeout=WAIT)
    assert sim.step_index < TICK, sim.step_index  # (stopped within the tick)
    assert sim.t == pytest.approx(sim.step_index * 1e-2, abs=1e-12)
    assert sim.series.arrays()["t"][-1] == sim.t
    stopped, events = sim.step_index, sim._stepper.n_events
    w.play()  # (the step index moves when the tick's intervals are done or stopped)
    qtbot.waitUntil(lambda: sim._stepper.n_events > events, timeout=WAIT)
    w.pause()
    qtbot.waitUntil(lambda: w.state == "paused", timeout=WAIT)
    assert stopped <= sim.step_index < stopped + TICK
    assert sim.series.arrays()["t"][-1] == sim.t
    assert w.failure is None
