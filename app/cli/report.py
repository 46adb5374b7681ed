"""What ``rrp run`` prints (issue #34 item 3: split out of ``app/cli/__init__``): the summary
(:func:`_report`, :func:`_print_summary`), the progress while it runs (:func:`_drive`,
:class:`_LineProgress`), the command that resumes a failed run (:func:`_resume_hint`),
and the ParaView frames of ``--vtk`` (:func:`_write_vtk`)."""

from __future__ import annotations

import json
import math
import os
import sys
import time
from typing import Any

from ..errors import UsageError


def _write_vtk(run_file: str, directory, quiet: bool) -> None:
    from engine.io.vtk import VTKExportError, export_vtk

    try:
        files = export_vtk(run_file, directory, warn=lambda m: print(f"rrp: warning: {m}",
                                                                    file=sys.stderr))
    except VTKExportError as exc:
        raise UsageError(f"--vtk: {exc}") from None
    if not quiet:
        n = sum(1 for f in files if f.suffix == ".vtp")
        pvd = [f for f in files if f.suffix == ".pvd"]
        print(f"  paraview    {n} frames in {directory}/ (open {pvd[0].name if pvd else ''})")


def _report(args, sim, a, outcome, scenario, title, h, t_end, t_prep,
            stab, guide: float | None = None) -> int:
    """Print the summary, then what ended the run (one line for an interrupted run or
    a file that could not be written, :func:`app.run_loop.outcome_line`); the exit
    code."""
    import numpy as np

    from ..run_loop import outcome_line

    status, message, code = outcome.status, outcome.message, outcome.code
    records, t_reached = int(len(a["t"])), sim.t
    held = None
    if outcome.write_error is not None:
        message = outcome.write_error.message
        # (the summary counts what the file holds, not what was simulated: issue #47
        # item 6 — "2501 records" where the file held 192 to t = 1.91)
        held = _held_by(outcome.path)
        records, t_reached = held if held is not None else (0, 0.0)

    from engine import __version__
    from engine.diagnostics import error_scale_symbol, fixed_momenta, momentum_drift

    model = sim.model
    total = a["energy"].sum(axis=1)
    rel = (total - sim.e_ref) / sim.e_scale
    drift = momentum_drift(a["P"], a["L"])
    scale = {k: (sim.p_scale if k.startswith("P") else sim.l_scale) for k in drift}
    us = 1e6 * sim.kernel_seconds / sim.kernel_steps if sim.kernel_steps else float("nan")
    cpu = (1e6 * sim.kernel_cpu_seconds / sim.kernel_steps if sim.kernel_steps
           else float("nan"))  # (the stepping thread's own CPU: issue #36 item 15)
    events = _event_summary(sim, a, total) if sim.integrator.event_driven else {}
    summary: dict[str, Any] = {
        "scenario": scenario,
        "model": model.name,
        "integrator": sim.integrator.name,
        "schemes": _schemes(sim, float(a["t"][0]) if len(a["t"]) else 0.0, t_reached),
        "stages": _stage_spans(sim, float(a["t"][0]) if len(a["t"]) else 0.0, t_reached),
        "h": h,
        "t_end": t_end,
        "t_reached": t_reached,
        "t_simulated": sim.t,
        "steps": sim.step_index,
        "status": status,
        "message": message,
        "max_relative_energy_error": float(np.max(np.abs(rel))),
        "final_relative_energy_error": float(rel[-1]),
        "energy_scale": float(sim.e_scale),
        "energy_scale_symbol": error_scale_symbol(sim.e_ref, sim.e_scale),
        "momentum_drift": drift,
        "momentum_drift_relative": {k: drift[k] / scale[k] for k in drift},
        "conserved": list(model.conserved),
        "identically_zero": list(fixed_momenta(model.forcefield)),
        "stability_limit_h": stab.h_stable,
        "stability_from": stab.kind,  # (the interaction that sets it: issue #42 item 2)
        "stability_counts": _counted(sim),
        "accuracy_guide_h": sim.accuracy_guide() if guide is None else guide,
        "us_per_step": us,
        "us_per_step_cpu": cpu,
        "steps_per_second": 1e6 / us if us == us and us > 0 else None,
        "startup_seconds": t_prep,
        "interpreted_steps": getattr(sim, "interpreted_steps", 0),
        "records": records,
        "output": str(outcome.path) if outcome.path is not None else args.out,
        "version": __version__,
        "parameters": model.params,
        **events,
    }
    if args.json:
        print(json.dumps(summary, indent=2, default=float))
    else:
        _print_summary(summary, title, sim.integrator.properties())
    line = outcome_line(outcome, sim, t_end, getattr(outcome, "writer", None))
    if line is not None:
        print(line, file=sys.stderr)
    elif status == "failed":
        print(f"rrp: error: {message}", file=sys.stderr)
        if args.out:
            print(f"rrp: the output file {outcome.path or args.out} holds the run up to "
                  f"t = {sim.t:.6g}", file=sys.stderr)
    return code


def _schemes(sim, t_first: float, t_last: float) -> list[dict[str, Any]]:
    """Each scheme and step of the run with the time it covered, from its switches
    (``sim.events``, those of the file it resumed included): the summary's figures cover
    them all, so it names each (a resume named only the new one: issue #42 item 11)."""
    ev = [e for e in sim.events if e.kind in ("integrator", "h")]
    integ = next((e.old for e in ev if e.kind == "integrator"), sim.integrator.name)
    h = float(next((e.old for e in ev if e.kind == "h"), sim.h))
    out: list[dict[str, Any]] = []
    t0 = t_first
    for e in ev:
        if e.t > t0:
            out.append({"integrator": integ, "h": h, "t0": t0, "t1": float(e.t)})
            t0 = float(e.t)
        if e.kind == "integrator":
            integ = e.new
        else:
            h = float(e.new)
    out.append({"integrator": integ, "h": h, "t0": t0, "t1": float(t_last)})
    return out


def _stage_spans(sim, t_first: float, t_last: float) -> list[dict[str, Any]]:
    """Each stage the run went through with the time it covered, from its stage changes
    (``sim.events``, a resumed file's included; issue #44 item 5); ``[]`` without
    stages."""
    stages = getattr(sim, "stages", ())
    if not stages:
        return []
    ev = [e for e in sim.events if e.kind == "stage"]
    cur = ev[0].old if ev else sim.stages[sim.stage_index].label(sim.stage_index)
    out: list[dict[str, Any]] = []
    t0 = t_first
    for e in ev:
        if e.t > t0:
            out.append({"stage": cur, "t0": t0, "t1": float(e.t)})
            t0 = float(e.t)
        cur = e.new
    out.append({"stage": cur, "t0": t0, "t1": float(t_last)})
    return out


def _held_by(path) -> tuple[int, float] | None:
    """``(records, t of the last one)`` of the run file at ``path`` as it is on disk
    (``None``: no file there, or none that opens)."""
    if path is None:
        return None
    from engine.io import RunFile

    try:
        with RunFile(path) as rf:
            times = rf.times
            return int(len(times)), float(times[-1]) if len(times) else 0.0
    except Exception:  # noqa: BLE001 - (the line after the summary says what happened)
        return None


def _event_summary(sim, a: dict, total) -> dict[str, Any]:
    """What an event-driven run (energy-stepping) adds to the summary: its events, ``ε``
    (absolute, and relative to the energy scale), the terraced terms and the largest
    ``|E − E₀| / ε`` of the records (the scheme bounds it by the number of terms)."""
    import numpy as np

    es = sim.event_stats()
    eps = es["eps"]
    err = np.abs(total - sim.e_ref)
    return {"events": es["events"], "reflections": es["reflections"],
            "events_per_unit_time": es["events_per_time"],
            "events_per_second": (es["events"] / sim.kernel_seconds
                                  if sim.kernel_seconds > 0 else None),
            "eps": eps, "eps_relative": sim.integrator.eps_rel, "terraced_terms": es["n_terms"],
            "max_energy_error_over_eps": float(np.max(err)) / eps if len(err) else 0.0}


def _counted(sim) -> str | None:
    """Which contacts the stability estimate counts (issue #42 item 2; engine.stability),
    for a model with contacts; ``None`` for one without."""
    from engine.layout import T_CONTACT, T_WALL

    ff = getattr(sim, "ff", None)
    flags = getattr(ff, "flags", None)
    if flags is None or not (flags[T_CONTACT] or flags[T_WALL]):
        return None
    return ("the active contacts, approaching neighbours"
            + (" and the wall impacts to come by t_end" if flags[T_WALL] else ""))


def _print_summary(s: dict[str, Any], title: str, props: str) -> None:
    print(f"RRP Studio {s['version']} — {s['scenario']}: {title}")
    print(f"  integrator  {s['integrator']} ({props}), h = {s['h']:g}")
    if len(s.get("schemes", ())) > 1:  # (a switch, or a resume with another -i/--h: the
        print("  schemes     " + "; ".join(  # figures below cover them all)
            f"{c['integrator']}, h = {c['h']:g} (t = {c['t0']:.6g} → {c['t1']:.6g})"
            for c in s["schemes"]))
    if s.get("stages"):  # (issue #44 item 5)
        print("  stages      " + "; ".join(
            f"{c['stage']}: t = {c['t0']:.6g} → {c['t1']:.6g}" for c in s["stages"]))
    simulated = ""
    if s["t_simulated"] != s["t_reached"]:  # (a write failed: the file ends earlier)
        simulated = f" in the file (simulated to {s['t_simulated']:.6g})"
    print(f"  time        t = 0 → {s['t_reached']:.6g} of {s['t_end']:g}{simulated} "
          f"({s['steps']} steps), status: {s['status']}")
    of = "" if s["energy_scale_symbol"] == "|E₀|" else (
        f" of E_s = {s['energy_scale']:.3g} (docs/physics.md §5)")
    print(f"  energy      max |relative error| = {s['max_relative_energy_error']:.3e} "
          f"(final {s['final_relative_energy_error']:+.3e}){of}")
    print("  momentum    max |c(t) − c(0)|, relative to Σm|v| or Σ|x × mv| + J|Ω|:")
    for k, v in s["momentum_drift"].items():
        # (a component an external force changes is physics, not error: say so; one
        # the model has not at all, the pendulum's P, is not "not conserved")
        tag = ("  (P ≡ 0: no translation, the pivot holds the body)"
               if k in s.get("identically_zero", ()) else
               "  (conserved by the variational schemes)" if k in s["conserved"]
               else "  (not conserved: external forces)")
        print(f"                {k} {v:10.3e}  rel {s['momentum_drift_relative'][k]:.2e}{tag}")
    if "events" in s:  # (event-driven: h is the recording interval)
        print(f"  events      {s['events']:,} ({s['reflections']:,} reflections), "
              f"{s['events_per_unit_time']:.3g} per unit time; ε = {s['eps']:.3g} "
              f"({s['eps_relative']:g} × energy scale), {s['terraced_terms']} terraced "
              "term(s)")
        print(f"  terraces    max |E − E₀| / ε = {s['max_energy_error_over_eps']:.3f} "
              f"(bounded by the number of terms, {s['terraced_terms']})")
        print("  stability   event-driven: no step limit (h is the recording interval)")
    else:
        lim, counts = s["stability_limit_h"], s.get("stability_counts")
        print(f"  stability   h limit ≈ {lim:.3g} at the start of the run" + (
            f" (from the {s['stability_from']})" if math.isfinite(lim) else ""))
        if counts:
            print(f"              counting {counts}")
    g = s["accuracy_guide_h"]
    if g == g and g != float("inf"):
        past = "  — h is past it" if s["h"] > g else ""
        print(f"  accuracy    guide h ≈ {g:.2g} for ≈ 1 % energy error{past}")
    if "events" in s and s["events_per_second"]:
        print(f"  speed       {s['events_per_second']:,.0f} events/s, {s['us_per_step']:.3g} "
              "µs per recording interval (engine only: JIT and I/O excluded)")
    elif s["us_per_step"] == s["us_per_step"]:
        print(f"  speed       {s['us_per_step']:.3g} µs/step, {s['steps_per_second']:,.0f} "
              "steps/s (engine only: JIT and I/O excluded); "
              f"{s['us_per_step_cpu']:.3g} µs/step of the stepping thread's CPU")
    if s.get("interpreted_steps"):
        print(f"              the first {s['interpreted_steps']:,} steps interpreted while "
              "the kernels compiled (the same bits: docs/performance.md)")
    if s["output"]:
        print(f"  output      {s['output']} ({s['records']} records)")


def _drive(args, sim, writer, n_total: int, t_end: float, tty: bool, signals):
    """Advance ``sim`` by ``n_total`` steps, flushing ``writer`` and showing progress,
    and close the file with the status of what happened (:func:`app.run_loop.drive`)."""
    from ..run_loop import drive

    bar = _progress(n_total, tty) if tty else (
        None if args.quiet else _LineProgress(n_total, sim, t_end))
    if getattr(sim, "stages", ()) and not args.quiet:  # (issue #44 item 5)
        bar = _StageLines(bar, sim, tty)
    return drive(args, sim, writer, n_total, t_end, bar, signals,
                 lambda failure: _resume_hint(failure, args, writer, t_end))


def _resume_hint(failure, args, writer, t_end: float) -> str:
    """The failure's message, its "resume from the last good state" made a command."""
    msg = failure.message
    if writer is None:
        return msg.replace(", then resume from the last good state",
                           "; write the run with --out FILE to be able to resume from the "
                           "last good state")
    h_now, lim = writer.sim.h, failure.stability.h_stable
    info = writer.sim.integrator
    if failure.kind == "energy-stepping" and info.event_driven:  # (change ε, not h)
        from engine.integrators.registry import EPS_REL_MAX, EPS_REL_MIN, energy_stepping_name

        where = writer.destination("failed")
        # a broken bound (issue #33 item 3) or too many events for the clock (item 4):
        # a coarser ε; else a finer one
        if failure.details.get("raise_eps"):
            rel = min(EPS_REL_MAX, float(f"{100 * info.eps_rel:.1g}"))
        elif "makes no progress" in msg:
            rel = min(10.0 * info.eps_rel, EPS_REL_MAX)
        else:
            rel = max(EPS_REL_MIN, 0.5 * info.eps_rel)
        cmd = (f"rrp run --resume {where} -i {energy_stepping_name(rel)} "
               f"--t-end {t_end:g}")
        return f"{msg.rstrip('.')}; resume with {cmd}"
    if failure.kind == "rrp-limit":
        h_new = 0.9 * failure.details["h_max"]
    else:
        h_new = 0.8 * lim if h_now > lim else 0.5 * h_now
    where = writer.destination("failed")  # (where the file will be: see RunWriter.close)
    cmd = f"rrp run --resume {where} --h {float(f'{h_new:.2g}'):g} --t-end {t_end:g}"
    if ", then resume from the last good state" in msg:
        return msg.replace(", then resume from the last good state",
                           f", then resume from the last good state ({cmd})").replace(
                               ", kept).", f", kept in {where}).")
    return f"{msg.rstrip('.')}; resume with {cmd}"


class _StageLines:
    """The progress (``bar``, or none) with a line on stderr where the run enters a
    stage (issue #44 item 5), and one for the stage it starts in."""

    def __init__(self, bar, sim, tty: bool) -> None:
        self.bar, self.sim, self.tty = bar, sim, tty
        self.seen = len(sim.events)
        self._say(f"rrp: t = {sim.t:.6g}: in {sim.stage_label()}")

    def _say(self, line: str) -> None:
        if self.tty and self.bar is not None:
            from tqdm import tqdm

            tqdm.write(line, file=sys.stderr)
        else:
            print(line, file=sys.stderr, flush=True)

    def update(self, n: int) -> None:
        if self.bar is not None:
            self.bar.update(n)
        events = self.sim.events
        for e in events[self.seen:]:
            if e.kind == "stage":
                self._say(f"rrp: t = {e.t:.6g}: stage {e.old} → {e.new}; now in "
                          f"{self.sim.stage_label()}")
        self.seen = len(events)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


class _LineProgress:
    """Progress on stderr when it is not a terminal: a line every few seconds."""

    EVERY = 5.0
    """Seconds between lines (``RRP_PROGRESS_EVERY`` overrides it)."""

    def __init__(self, total: int, sim, t_end: float) -> None:
        self.total, self.sim, self.t_end = total, sim, t_end
        try:
            self.every = float(os.environ.get("RRP_PROGRESS_EVERY", self.EVERY))
        except ValueError:
            self.every = self.EVERY
        self.done = 0
        self.t0 = self.last = time.perf_counter()

    def update(self, n: int) -> None:
        self.done += n
        now = time.perf_counter()
        if now - self.last >= self.every:
            self.last = now
            rate = self.done / max(now - self.t0, 1e-9)
            left = (self.total - self.done) / rate if rate > 0 else math.inf
            pct = 100 * self.done / self.total
            print(f"rrp: t = {self.sim.t:.6g} of {self.t_end:g} ({pct:.1f} %, "
                  f"{rate:,.0f} steps/s, ≈ {left:.0f} s left)", file=sys.stderr, flush=True)

    def close(self) -> None:
        pass


def _progress(total: int, enabled: bool):
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit="step", unit_scale=True, file=sys.stderr, leave=False,
                dynamic_ncols=True)
