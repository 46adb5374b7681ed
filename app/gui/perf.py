"""The status bar's speed line (issue #33 item 6): a stepping scheme's cost per step, an
event-driven scheme's (energy-stepping: ``h`` is only the recording interval, the scheme
takes its own events) cost per recording interval and its events a second."""

from __future__ import annotations

from engine.integrators import get_integrator


def event_driven(name: str) -> bool:
    """Whether the scheme ``name`` (a parametrised one too) is event-driven."""
    try:
        return bool(get_integrator(name).event_driven)
    except (KeyError, ValueError):
        return False


def real_time(fr, n_runs: int) -> float:
    """Simulated seconds per wall-clock second of the frame ``fr``'s run (of ``n_runs``
    runs in lock-step)."""
    return fr.steps_per_second * fr.h / max(1, n_runs)


def kernels_line(fr, n_runs: int) -> str:
    """What steps the run while its compiled kernels are being built (issue #45), e.g.
    ``"interpreted, 0.3× real time — compiling rrp-newmark…"``; ``""`` once the
    compiled kernels step it."""
    if getattr(fr, "kernels", "") != "interpreted":
        return ""
    line = f"interpreted, {real_time(fr, n_runs):.2g}× real time"
    compiling = getattr(fr, "compiling", ())
    return line + (f" — compiling {', '.join(compiling)}…" if compiling else "")


def perf_line(fr, n_runs: int, fps: float) -> str:
    """The speed of the frame ``fr`` (:class:`app.gui.worker.Frame`) of ``n_runs`` runs
    in lock-step, drawn at ``fps`` frames a second."""
    rt = real_time(fr, n_runs)
    tail = f" · ×{rt:.2f} real time · {fps:.0f} fps"
    if event_driven(fr.integrator):
        return (f"{fr.us_per_step:,.0f} µs per recording interval · "
                f"{fr.events_per_second:,.0f} events/s" + tail)
    return f"{fr.us_per_step:.2f} µs/step · {fr.steps_per_second:,.0f} steps/s" + tail
