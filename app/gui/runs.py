"""The worker's runs (issue #34: split out of ``app/gui/worker.py``): which schemes a
request gets (:func:`choose_integrator`, :func:`schemes`), building the runs of a
scenario (:func:`build_runs`), of a recorded frame (:func:`branch_runs`) and of the live
state (:func:`resume_runs`), one run and what has been sent of it (:class:`Run`), and
the data export of the runs (:func:`write_csv`).  Nothing here touches Qt: the worker
passes in how to report its stages.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import numpy as np

from engine.diagnostics import model_invariant_names, model_invariants, relative_energy_error
from engine.drivers import simulation_for, simulation_from_frame, simulation_from_resume_state
from engine.integrators import INTEGRATORS
from engine.interpreted import interpret_while_cold
from engine.layout import ENERGY_NAMES
from engine.rotations import quat_to_matrix
from engine.scenarios import ScenarioError, load_scenario
from engine.simulation import Simulation, SimulationError, integrator_for, usable_integrators

from .kernel_stages import cold_schemes, priming_stages
from .messages import BranchRequest, LoadRequest, Preview, Series

MAX_COMPARE = 3

PREFERRED_HARD = "moreau-symmetric"
"""The scheme taken for a hard-contact model when the one asked for cannot drive it
(second order, symmetric; the scenario's own scheme comes first if it can)."""


def choose_integrator(model: Any, wanted: str, default: str | None = None
                      ) -> tuple[str, str]:
    """``(name, note)``: ``wanted`` if it can drive ``model`` (``note`` empty); otherwise
    the scenario's ``default`` if that can, else :data:`PREFERRED_HARD` where usable, else
    the first usable scheme, with a one-line ``note`` saying why it was switched.  An
    unknown name, or a model no scheme can drive, raises :class:`SimulationError`."""
    try:
        return integrator_for(model, wanted).name, ""
    except SimulationError as exc:
        if wanted not in INTEGRATORS and wanted.split(":")[0] not in INTEGRATORS:
            raise
        reason = str(exc).split(": choose one of")[0]
    usable = usable_integrators(model)
    if not usable:
        raise SimulationError(f"no registered scheme can drive model {model.name!r}")
    if default in usable:
        alt = default
    elif PREFERRED_HARD in usable and getattr(model, "contact", "none") == "hard":
        alt = PREFERRED_HARD
    else:
        alt = usable[0]
    return alt, f"{reason}: switched to {alt}"


def scenario_t_end(scenario: str) -> float | None:
    """The end time of ``scenario`` (built-in name or .toml path), ``None`` if it cannot
    be loaded."""
    try:
        return float(load_scenario(scenario).run.t_end)
    except (ScenarioError, OSError, ValueError):
        return None


def records_trail(model: Any) -> bool:
    """Whether the runs of ``model`` record body 0's state at every row for the view's
    trail: the models with a pivot (the pendulums: one or few bodies, so that the
    recorded frames are small; they are dropped once sent, see :meth:`Run.new_series`)."""
    return getattr(model, "pivot", None) is not None


class Run:
    """One simulation and what has been sent of it."""

    def __init__(self, label: str, sim: Simulation) -> None:
        self.label = label
        self.sim = sim
        self.sent_rows = 0
        self.sent_events = 0

    def new_series(self) -> Series:
        """The rows recorded since the last call (with body 0's states when the run
        records frames for the trail: those are then released, the view keeps them)."""
        ser = self.sim.series
        a = ser.tail(self.sent_rows)
        self.sent_rows += len(a["t"])
        total = a["energy"].sum(axis=1)
        rel = relative_energy_error(total, self.sim.e_ref, self.sim.e_scale)
        x = q = inv = None
        if ser.frames and len(a["x"]) == len(a["t"]):
            x, q = a["x"][:, 0].copy(), a["q"][:, 0].copy()
            ff = self.sim.model.forcefield
            if model_invariant_names(ff):
                inv = model_invariants(ff, q, a["omega"][:, 0])
            ser.release_frames()
        gap = a.get("terrace_gap")
        if gap is not None:
            gap = gap / self.sim.e_scale
        return Series(a["t"], a["energy"], total, rel, a["P"], a["L"], x, q, inv, gap)


def one_line(exc: Exception) -> str:
    """``exc`` in one line: its message for the errors the engine means to raise
    (:class:`SimulationError`, :class:`ValueError`), else its type too (an engine bug)."""
    return (str(exc) if isinstance(exc, SimulationError | ValueError)
            else f"{type(exc).__name__}: {exc}")


def _and(note: str, more: str) -> str:
    return "; ".join(filter(None, (note, more)))


def schemes(model: Any, primary: str, compare, default: str | None = None
            ) -> tuple[list[str], str]:
    """The schemes of the runs (primary first, at most :data:`MAX_COMPARE`) and a note:
    ``primary`` as :func:`choose_integrator` picks it (``default``: the scenario's own),
    each compare scheme that can drive ``model`` (one that cannot is left out, said in
    the note)."""
    integ, note = choose_integrator(model, primary, default)
    names = [integ]
    for c in compare:
        if not c:
            continue
        try:
            names.append(integrator_for(model, c).name)
        except SimulationError:
            note = _and(note, f"compare run {c} left out: it cannot "
                        f"drive model {model.name!r}")
    return names[:MAX_COMPARE], note


def label_runs(runs: list[Run]) -> None:
    """Distinct labels: the same integrator twice is labelled ``name (2)``."""
    if len(runs) > 1:  # the same integrator twice still needs distinct labels
        seen: dict[str, int] = {}
        for r in runs:
            seen[r.label] = seen.get(r.label, 0) + 1
            if seen[r.label] > 1:
                r.label = f"{r.label} ({seen[r.label]})"


def _run(names: list[str], name: str, sim: Simulation) -> Run:
    """A warmed-up run of ``sim``, labelled by its scheme in compare mode."""
    sim.warm_up()
    return Run(name if len(names) > 1 else "energy", sim)


def build_runs(req: LoadRequest, stage: Callable[[int, int, str], None],
               preview: Callable[[Preview], None],
               start_siblings: Callable[[Any, str], None],
               compile_cold: Callable[[Any, list[tuple[str, int]]], bool] | None = None
               ) -> tuple[list[Run], str]:
    """The runs of ``req`` and a note: a scheme that cannot drive the model (say the
    contact model was switched to hard) is replaced by one that can
    (:func:`choose_integrator`), a compare scheme that cannot is left out.  ``preview``
    gets the model before its kernels are built, ``stage(k, n, what)`` each stage of
    the build (issue #33 item 8), ``start_siblings(model, scheme)`` starts the second
    process that builds kernels on a cold cache.

    On a cold cache, ``compile_cold(model, cold)`` (``cold``: the ``(name, scheme id)``
    of the schemes whose stepping loops are not cached) may start building them in the
    background and return ``True``: then nothing is built here, the runs are made on
    the kernels' uncompiled twins (issue #45: the same bits) and the caller steps them
    within ``engine.interpreted.interpret_while_cold`` until the compiled loops are in
    the cache."""
    sc = load_scenario(req.scenario, req.overrides or None)
    with interpret_while_cold() if compile_cold is not None else nullcontext():
        model = sc.build_model()  # (its own kernels, on small arguments: uncompiled)
    h = sc.run.h if req.h is None else req.h
    names, note = schemes(model, req.integrator or sc.run.integrator, req.compare,
                          sc.run.integrator)
    quat_to_matrix(model.initial_state.q[:1])  # (the view's attitude kernel: built
    preview(Preview(req.scenario, model.title, model, names, h))  # here)
    # (after the preview: on a cold cache, finding that the loop is not cached takes
    # seconds, which kept the initial state off the screen: issue #33 item 8)
    with interpret_while_cold() if compile_cold is not None else nullcontext():
        cold = cold_schemes(model, names)  # (its stand-in's helpers: uncompiled)
    if cold and compile_cold is not None and compile_cold(model, cold):
        with interpret_while_cold():  # (issue #45: moving at once, compiled later)
            return _make_runs(req, sc, model, h, names, note, stage, [])
    start_siblings(model, names[0])
    # on a cold cache, one step per kernel group (issue #33 item 8); then the runs
    return _make_runs(req, sc, model, h, names, note, stage,
                      priming_stages(model, names, cold))


def _make_runs(req: LoadRequest, sc, model, h: float, names: list[str], note: str,
               stage: Callable[[int, int, str], None], priming: list
               ) -> tuple[list[Run], str]:
    """The runs of :func:`build_runs`, after building the kernel groups ``priming``."""

    def make(name: str) -> Simulation:
        return simulation_for(model, name, h, record_every=sc.run.every,
                              record_frames=records_trail(model),
                              energy_tolerance=sc.run.energy_tolerance)

    runs = []
    n = len(priming) + (len(names) + 1 if not priming else len(names))
    for k, (what, build) in enumerate(priming):
        stage(k + 1, n, what)
        build()
    base = len(priming) + (not priming)
    for k, name in enumerate(names):
        if k == 0 and not priming:
            stage(1, n, f"the forces of {model.title}")
        elif priming:
            stage(base + k + 1, n, f"the {name} run, from the kernels built")
        try:
            sim = make(name)
        except SimulationError as exc:  # (a scheme the registry offers, refused when
            # the simulation is made: e.g. a stepper that cannot start from the state)
            reason = str(exc).split(": choose one of")[0]
            if k > 0:
                note = _and(note, f"compare run {name} left out: {reason}")
                continue
            alt, _ = choose_integrator(model, sc.run.integrator, sc.run.integrator)
            if alt == name:
                raise
            note = _and(note, f"{reason}: switched to {alt}")
            name = alt
            sim = make(name)
        if not priming:
            stage(k + 2, n, f"the {name} step")
        runs.append(_run(names, name, sim))
    label_runs(runs)
    return runs, note


def branch_runs(req: BranchRequest) -> tuple[list[Run], str]:
    """The runs of *Continue from here* on a recorded frame, and a note: each run (the
    primary and the compare runs) is built from the same frame with
    :meth:`~engine.simulation.Simulation.from_frame`; schemes as :func:`schemes`."""
    model = req.model
    names, note = schemes(model, req.integrators[0], req.integrators[1:])
    runs = []
    for name in names:
        sim = simulation_from_frame(model, req.frame, name, req.h, keep_clock=True,
                                    energy_reference=req.energy_reference,
                                    record_every=req.record_every,
                                    record_frames=records_trail(model))
        runs.append(_run(names, name, sim))
    label_runs(runs)
    return runs, note


def resume_runs(sim: Simulation, integrators: tuple[str, ...], h: float
                ) -> tuple[list[Run], str]:
    """The runs of *Continue from here* on the live run ``sim``, and a note: its current
    state (exactly: :meth:`~engine.simulation.Simulation.resume_state`) goes on with
    ``integrators[0]`` and ``h``, each compare scheme from the same state."""
    model = sim.model
    names, note = schemes(model, integrators[0], integrators[1:])
    d = sim.resume_state()
    runs = []
    for name in names:
        s = simulation_from_resume_state(model, d, record_frames=records_trail(model))
        try:
            if s.integrator.name != name:
                s.set_integrator(name)
            if s.h != h:
                s.set_h(h)
        except SimulationError:  # a new scheme may need the new step first
            s = simulation_from_resume_state(model, d, record_frames=records_trail(model))
            if s.h != h:
                s.set_h(h)
            if s.integrator.name != name:
                s.set_integrator(name)
        runs.append(_run(names, name, s))
    label_runs(runs)
    return runs, note


def write_csv(runs: list[Run], path: Path) -> None:
    """The runs' series as CSV: ``t`` and, per run (prefixed by its scheme in compare
    mode), the energies, their total and relative error, ``P``, ``L`` and the terrace
    gap of an event-driven run.  Written whole or not at all (a write error:
    :class:`~engine.io.atomic.OutputError`, one line)."""
    cols, names = [], []
    for r in runs:
        a = r.sim.series.arrays()
        total = a["energy"].sum(axis=1)
        pre = "" if len(runs) == 1 else f"{r.sim.integrator.name}:"
        if not cols:
            cols.append(a["t"])
            names.append("t")
        n = min(len(cols[0]), len(total))
        cols = [c[:n] for c in cols]
        for k, en in enumerate(ENERGY_NAMES):
            cols.append(a["energy"][:n, k])
            names.append(f"{pre}E_{en}")
        cols.append(total[:n])
        names.append(f"{pre}E_total")
        cols.append(relative_energy_error(total[:n], r.sim.e_ref, r.sim.e_scale))
        names.append(f"{pre}E_relative_error")
        for k, c in enumerate("xyz"):
            cols.append(a["P"][:n, k])
            names.append(f"{pre}P_{c}")
        for k, c in enumerate("xyz"):
            cols.append(a["L"][:n, k])
            names.append(f"{pre}L_{c}")
        if "terrace_gap" in a:  # (energy-stepping: V − V_ε; NaN under other schemes)
            cols.append(a["terrace_gap"][:n])
            names.append(f"{pre}terrace_gap")
    n = min(len(c) for c in cols)
    data = np.column_stack([c[:n] for c in cols])
    from engine.io.atomic import AtomicOutput

    with AtomicOutput(path) as out:  # whole or absent (issue #46 item 2)
        np.savetxt(out.tmp, data, delimiter=",", header=",".join(names), comments="",
                   fmt="%.17g")
        out.commit()

