"""The stages of a run in the driver (issue #44 item 5; docs/scenarios.md "Stages"),
mixed into :class:`~.driver.Simulation` as :class:`StagesMixin`.

A model with stages (``Model.stages``, ``engine.models.stages``) is driven stage by
stage: the first is entered when the simulation is made, each next one at the first
:meth:`advance` from the step where the current one ends, so a boundary falls exactly
on a step and an advance never crosses one.  Entering a stage:

* fixes its end as a step, ``start + steps`` (a ``duration``: ``duration / h`` steps, a
  whole number at the run's ``h``, else the simulation is refused in one line), and as
  the time the clock will show there, ``t₁``; a stage's ramp runs from its start ``t₀``
  to ``t₁``;
* puts its field rows and damping on the force field (the top-level ones and its own:
  ``engine.models.stages.stage_arrays``; the compiled family is the whole run's, so no
  kernel changes);
* where the field at ``(x, t₀)`` changes (a field switched on, off or to another value),
  adds the difference of the field's forces and moments to the state's, and books the
  jump ``−ΔU`` of its energy in ``field work``, so that ``E + field work + dissipated``
  closes across the boundary (``engine.potentials.fields``: ``dE = ∂U/∂t dt``);
* records an :class:`~.records.Event` ``("stage", "1", "2")`` (stage numbers from 1),
  which run files keep in ``/events``.

**A change of h inside a stage** keeps the stage's end time ``t₁``: the stage then ends
at the first step that reaches it, ``ceil((t₁ − t) / h)`` steps on (to a part in 10⁹:
exactly on ``t₁`` when the new ``h`` divides what is left), its ramp held at ``c₁``
past ``t₁``.  A stage entered at another ``h`` than the run's counts its ``duration``
so too.  A change of integrator changes nothing of the stages.  After the last stage
the run goes on with its fields and damping (a ramp held at its end).
"""

from __future__ import annotations

import math

import numpy as np

from ..layout import E_FIELD, E_FIELD_WORK, N_ENERGY, T_FIELD
from ..models.stages import Stage, stage_arrays, stage_steps
from ..potentials.fields import FI_GAMMA, FI_GAMMA_ROT, FI_GROUP, FI_ROWS, field_loads
from .choice import SimulationError
from .records import Event, StepReport


class StagesMixin:
    """The stage bookkeeping of :class:`~.driver.Simulation` (module docstring)."""

    stages: tuple[Stage, ...] = ()
    stage_index = -1
    """The current stage (0-based; ``-1``: the model has none)."""
    _stage_end: int | None = None
    """The step the current stage ends at (``None``: the last stage, or none)."""
    _stage_t0 = 0.0
    _stage_t1 = 0.0
    _stage_base: tuple | None = None

    # ------------------------------------------------------------------ queries
    @property
    def stage(self) -> Stage | None:
        """The current stage (``None``: the model has none)."""
        return self.stages[self.stage_index] if self.stage_index >= 0 else None

    def stage_label(self) -> str:
        """``"stage 2 of 2 (t = 10 → 15)"`` for a status line; ``""`` without stages."""
        if self.stage_index < 0:
            return ""
        k, n = self.stage_index, len(self.stages)
        name = self.stages[k].name
        return (f"stage {k + 1} of {n}" + (f" ({name})" if name else "")
                + f" (t = {self._stage_t0:.6g} → {self._stage_t1:.6g})")

    def stage_span(self) -> tuple[float, float]:
        """``(t₀, t₁)`` of the current stage (its ramp's)."""
        return self._stage_t0, self._stage_t1

    # ------------------------------------------------------------------ set-up
    def _init_stages(self, h: float, strict: bool = True) -> None:
        """Enter the first stage at ``t = 0`` (before the first force evaluation); with
        ``strict`` (a run from the model's start) every duration checked against ``h``
        (a resumed or branched run, whose ``h`` may have changed, counts them in time)."""
        self.stages = tuple(getattr(self.model, "stages", ()) or ())
        self.stage_index = -1
        self._stage_end = None
        if not self.stages:
            return
        for k, s in enumerate(self.stages if strict else ()):
            try:
                stage_steps(s, h, k)
            except ValueError as exc:
                raise SimulationError(str(exc)) from None
        f = self.ff.fields
        self._stage_base = (f[FI_ROWS].copy(), f[FI_GAMMA].copy(), f[FI_GAMMA_ROT].copy())
        self._set_stage(0, h, self.t, self.step_index)

    def _set_stage(self, k: int, h: float, t0: float, start: int, *,
                   end: int | None = None, t1: float | None = None) -> None:
        """Make stage ``k`` the current one, started at ``(start, t0)``: its end (given,
        or from its length at ``h``) and its arrays on the force field (nothing else)."""
        stage = self.stages[k]
        if end is None:
            n = stage_steps(stage, h, k, exact=False)
            end = start + n
            t1 = self._t_base + (end - self._step_base) * h
        self.stage_index = k
        self._stage_end = end if k + 1 < len(self.stages) else None
        self._stage_t0, self._stage_t1 = float(t0), float(t1)
        rows, gamma, gamma_rot = stage_arrays(stage, self.ff.fields[FI_GROUP],
                                              self._stage_base, self._stage_t0,
                                              self._stage_t1)
        f = list(self.ff.fields)
        f[FI_ROWS] = rows
        if f[FI_GAMMA].shape == gamma.shape:
            f[FI_GAMMA], f[FI_GAMMA_ROT] = gamma, gamma_rot
        self.ff.fields = tuple(f)

    # ------------------------------------------------------------------ stepping
    def _next_stage(self) -> None:
        """Enter the stage after the current one at this step (module docstring)."""
        k = self.stage_index
        x, q, F, RM, e = self._s0[0], self._s0[2], self._s0[4], self._s0[5], self._s0[6]
        field = bool(self.ff.flags[T_FIELD])
        u_old = float(e[E_FIELD])
        if field and self.ff.has_history:  # (the state's forces carry the contacts'
            old = self._field_part(x, q)  # damping of its step: the field's part only)
        self._set_stage(k + 1, self.h, self.t, self.step_index)
        if field and self.ff.has_history:
            new = self._field_part(x, q)
            F += new[0] - old[0]
            RM += new[1] - old[1]
            e[E_FIELD] = u_old + new[2] - old[2]
        elif field:  # (as a restore evaluates them)
            self._evaluate_forces()
        if field:
            e[E_FIELD_WORK] -= e[E_FIELD] - u_old
        self.events.append(Event(self.step_index, self.t, "stage", self.stages[k].label(k),
                                 self.stages[k + 1].label(k + 1)))

    def _field_part(self, x: np.ndarray, q: np.ndarray) -> tuple:
        """The field's forces, moments and energy alone at ``(x, q)`` and :attr:`t`."""
        F = np.zeros_like(x)
        RM = np.zeros_like(x)
        e = np.zeros(N_ENERGY)
        self.ff.set_field_time(self.t)
        field_loads(x, q, self.ff.fields, F, RM, e)
        return F, RM, float(e[E_FIELD])

    def _advance_staged(self, n_steps: int) -> StepReport:
        """``n_steps`` steps through the stages: each advance stops at the end of the
        current stage, the next entered before the step after it."""
        total = 0
        while total < n_steps:
            if self._stage_end is not None and self.step_index >= self._stage_end:
                self._next_stage()
                continue
            m = n_steps - total
            if self._stage_end is not None:
                m = min(m, self._stage_end - self.step_index)
            rep = self._advance_steps(m)
            total += rep.steps
            if not rep.ok:
                return StepReport(total, rep.failure)
            if rep.steps < m:
                break  # (asked to stop: an event-driven scheme's stop_check)
        return StepReport(total)

    def _stage_after_h(self) -> None:
        """After a change of ``h`` inside a stage: its end counted in time (module
        docstring)."""
        if self._stage_end is None or self.step_index >= self._stage_end:
            return
        left = (self._stage_t1 - self.t) / self.h
        self._stage_end = self.step_index + max(0, int(math.ceil(left - 1e-9)))

    # ------------------------------------------------------------------ saved states
    def _stage_saved(self) -> tuple:
        return (self.stage_index, self._stage_end, self._stage_t0, self._stage_t1)

    def _stage_restore(self, saved: tuple | None) -> None:
        """Come back to a :meth:`_stage_saved` (its arrays on the force field; the state's
        forces are the saved ones)."""
        if not self.stages or saved is None or int(saved[0]) < 0:
            return
        k, end, t0, t1 = saved
        end = None if end is None or int(end) < 0 else int(end)
        self._set_stage(int(k), self.h, float(t0), 0, end=end if end is not None else -1,
                        t1=float(t1))
        self._stage_end = end

    def _stage_scalars(self) -> dict:
        """The stage bookkeeping of :meth:`resume_state`."""
        if not self.stages:
            return {}
        end = -1 if self._stage_end is None else int(self._stage_end)
        return {"stage_index": int(self.stage_index), "stage_end": end,
                "stage_t0": float(self._stage_t0), "stage_t1": float(self._stage_t1)}

    def _stage_resumed(self, d: dict) -> None:
        if "stage_index" in d:
            self._stage_restore((int(d["stage_index"]), int(d["stage_end"]),
                                 float(d["stage_t0"]), float(d["stage_t1"])))

    def _stage_at_frame(self, step: int, t: float) -> None:
        """A branch from a frame at ``(step, t)``: the stage its step falls in, the stages
        counted in steps from 0 at this ``h`` (a boundary step belongs to the stage it
        ends)."""
        if not self.stages:
            return
        start = 0
        for k, s in enumerate(self.stages):
            n = stage_steps(s, self.h, k, exact=False)
            if step <= start + n or k + 1 == len(self.stages):
                t0 = t - (step - start) * self.h
                self._set_stage(k, self.h, t0, start, end=start + n,
                                t1=t0 + n * self.h)
                return
            start += n
