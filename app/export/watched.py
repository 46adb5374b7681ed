"""The run the app showed, written back as run files for an export (issue #37 item 4:
File → Export animation… "for the current run as watched").

The app's live runs keep their series but not their frames (they are dropped once
drawn), so the export re-runs what was watched, bit for bit (the stepping is
deterministic: tests/test_bits.py): the same scenario or branch frame, the same
schemes, ``h`` and the switches of the primary run at the steps they were made
(``/events``), each run into a run file with its frames; the compare runs from the same
start with their own schemes.  :func:`app.export.export_run` then draws them (the
primary with the compare runs as ghosts and error curves).  No Qt here: the dialog's
worker thread calls :func:`write_watched`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Watched:
    """What the app showed: a scenario (``scenario``, ``overrides``) or a branch from a
    recorded frame (``model``, ``frame``, ``energy_reference``), the schemes
    (``integrators``: the primary first, then the compare runs), the step ``h``
    (``None``: the scenario's), the time reached ``t_end`` and the primary's switches
    ``events``: ``(step, kind, new)`` with ``kind`` ``"integrator"`` or ``"h"``."""

    scenario: str
    integrators: tuple[str, ...]
    t_end: float
    h: float | None = None
    overrides: dict[str, Any] = field(default_factory=dict)
    events: list[tuple[int, str, str]] = field(default_factory=list)
    model: Any = None
    frame: Any = None
    energy_reference: tuple[float, float] | None = None
    record_every: int | None = None
    labels: tuple[str, ...] = ()


def _sims(w: Watched) -> tuple[list, str]:
    """One fresh simulation a run (frames kept), and the scenario's name."""
    from engine.drivers import simulation_for, simulation_from_frame

    if w.frame is not None:
        every = w.record_every or 1
        return [simulation_from_frame(w.model, w.frame, name, w.h, keep_clock=True,
                                      energy_reference=w.energy_reference,
                                      record_every=every, record_frames=True,
                                      record_state=True)
                for name in w.integrators], w.scenario
    from engine.scenarios import load_scenario

    sc = load_scenario(w.scenario, w.overrides or None)
    model = sc.build_model()
    h = sc.run.h if w.h is None else w.h
    every = w.record_every or sc.run.every
    return [simulation_for(model, name, h, record_every=every, record_frames=True,
                           record_state=True, energy_tolerance=sc.run.energy_tolerance)
            for name in w.integrators], sc.name


def _steps_to(sim, t_end: float) -> int:
    return max(0, int(math.ceil((t_end - sim.t) / sim.h - 1e-9)))


def write_watched(w: Watched, directory: Path,
                  check: Callable[[], None] | None = None) -> list[Path]:
    """Re-run ``w`` into run files in ``directory`` (the primary's first); ``check`` is
    called between chunks and may raise to stop.  A run that blows up is kept up to
    there (status failed), as the app showed it."""
    from engine.io import RunWriter

    sims, name = _sims(w)
    paths = []
    for k, sim in enumerate(sims):
        sim.warm_up()
        path = directory / f"run{k}.h5"
        writer = RunWriter(path, sim, scenario=name, checkpoint=False, t_end=w.t_end)
        status, message = "complete", ""
        try:
            # (stage changes are not replayed: the driver follows the model's stages)
            todo = [e for e in w.events if e[1] in ("integrator", "h")] if k == 0 else []
            while True:
                if check is not None:
                    check()
                n = _steps_to(sim, w.t_end)
                if todo:
                    n = min(n, max(0, todo[0][0] - sim.step_index))
                if n == 0 and todo:
                    _step, kind, new = todo.pop(0)
                    if kind == "integrator":
                        sim.set_integrator(new)
                    else:
                        sim.set_h(float(new))
                    continue
                if n == 0:
                    break
                rep = sim.advance(min(n, 2000))
                writer.flush_when_due()
                if not rep.ok:
                    status, message = "failed", rep.failure.message
                    break
            writer.flush()
        except BaseException:
            writer.close("interrupted", "export stopped")
            raise
        paths.append(writer.close(status, message))
    return paths
