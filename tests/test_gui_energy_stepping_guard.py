"""The app and energy-stepping's guards (issue #33 item 3): an ε below the round-off
floor is refused with its one line, and a run that breaks its bound pauses with the
message (the engine side: ``tests/test_energy_stepping_guard.py``)."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")
pytest.importorskip("pyvistaqt")

from app.gui.worker import LoadRequest  # noqa: E402
from engine.integrators.registry import eps_floor_message  # noqa: E402

pytestmark = pytest.mark.gui
WAIT = 180_000  # ms (a cold kernel cache on a loaded machine)


def test_the_app_refuses_an_eps_below_the_floor_in_one_line(qtbot, make_window):
    w = make_window(LoadRequest("pendulum"))
    first = w.last_frame.integrator
    w.set_integrator("energy-stepping:1e-20")  # (as a script or rrp gui -i would ask)
    qtbot.waitUntil(lambda: "round-off" in w.controls.h_message.text(), timeout=WAIT)
    text = w.controls.h_message.text()
    assert eps_floor_message("1e-20") in text and "\n" not in text
    assert w.last_frame.integrator == first  # the run goes on as it was


def test_a_broken_bound_pauses_the_app_with_the_message(qtbot, make_window):
    w = make_window(LoadRequest("pendulum", {}, "energy-stepping:0.001", 1e-2))
    w.play()
    qtbot.waitUntil(lambda: w.last_frame is not None and w.last_frame.t >= 0.1, timeout=WAIT)
    w.pause()
    qtbot.waitUntil(lambda: w.state == "paused", timeout=WAIT)
    sim = w.worker._runs[0].sim
    sim._stepper._impl.om *= 1.1  # (behind the stepper's back: T off its terraces by ≫ ε)
    w.play()
    qtbot.waitUntil(lambda: w.failure is not None, timeout=WAIT)
    assert "broke its bound" in w.failure and "use a larger ε" in w.failure
    assert "press Play to go on" in w.failure and "\n" not in w.failure
    assert w.banner.isVisible() and not w.controls.play.isChecked()


def test_a_recorded_name_below_the_floor_shows_its_reason_not_an_exception():
    """A run file recorded with ``energy-stepping:1e-13`` (accepted before the floor):
    the picker's tooltip and properties give the floor's line instead of raising."""
    from app.gui.controls import integrator_properties, integrator_tooltip

    assert integrator_tooltip("energy-stepping:1e-13") == eps_floor_message("1e-13")
    assert integrator_properties("energy-stepping:1e-13") == eps_floor_message("1e-13")
    assert "ε = 0.001 × energy scale" in integrator_properties("energy-stepping:1e-3")
