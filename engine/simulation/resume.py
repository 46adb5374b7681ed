"""Checkpoints, resumes and branches of a run: :meth:`~ResumeMixin.checkpoint` and
:meth:`~ResumeMixin.restore` (in-process), :meth:`~ResumeMixin.resume_state` and
:meth:`~ResumeMixin.from_resume_state` (another process, bit for bit), and
:meth:`~ResumeMixin.from_frame` (a new run from a recorded frame), mixed into
:class:`~.driver.Simulation` (issue #34: split out of ``engine.simulation``)."""

from __future__ import annotations

from typing import Self

import numpy as np

from ..integrators.registry import DEFAULT_EPS_REL, ENERGY_STEPPING, energy_stepping_name
from ..layout import E_BROKEN, E_FIELD_WORK, ENERGY_NAMES, NL_COUNT, T_FIELD
from ..models.base import Model
from ..rotations import attitude_problem
from ..state import State
from .breaking import broken_ids
from .choice import SimulationError
from .records import TimeSeries


def _saved_pairs(d: dict) -> np.ndarray:
    """The neighbour list of a saved state (:meth:`Simulation.resume_state`): format 2
    keeps the used pairs and the capacity, format 1 the whole table."""
    pairs = np.ascontiguousarray(d["nl_pairs"], dtype=np.int64).reshape(-1, 2)
    capacity = int(d.get("nl_capacity", pairs.shape[0]))
    if capacity <= pairs.shape[0]:
        return pairs
    full = np.zeros((capacity, 2), dtype=np.int64)
    full[:pairs.shape[0]] = pairs
    return full


ES_STATE_PREFIX = "es_state_"
"""Keys of :meth:`Simulation.resume_state` holding the event-driven scheme's stepper."""

def _resumed_integrator(d: dict) -> str:
    """The scheme of a saved state: its name, except that ``energy-stepping`` saved with
    another ε than today's default resumes with its own (``energy-stepping:REL``)."""
    name = str(d["integrator"])
    rel = d.get("es_eps_rel")
    if name == ENERGY_STEPPING and rel is not None and float(rel) != DEFAULT_EPS_REL:
        return energy_stepping_name(float(rel))
    return name


def _saved_events(d: dict) -> list:
    """The events of a saved state (a list of :class:`Event`)."""
    return list(d.get("events", []))


class ResumeMixin:
    """The saved states of :class:`~.driver.Simulation` (see its docstring)."""

    def checkpoint(self) -> tuple:
        """Everything needed to come back to this instant (copies; with the committed
        friction springs of a model with history)."""
        springs = self.ff.committed_springs() if self.ff.has_history else None
        stepper = self._export_stepper() if self._stepper is not None else \
            self._es_saved
        return (tuple(a.copy() for a in self._s0), self.t, self.step_index,
                {k: a.copy() for k, a in self.aux.items()}, springs, stepper,
                self._es_done, (self._t_base, self._step_base, self.h),
                self._stage_saved(), self.bond_ids.copy())

    def restore(self, cp: tuple) -> None:
        """Come back to a :meth:`checkpoint` (an event-driven scheme goes on from the
        stepper saved with it, bit for bit)."""
        self._drop_stepper()
        bufs, t, step, aux = cp[:4]
        springs = cp[4] if len(cp) > 4 else None
        self._es_saved = cp[5] if len(cp) > 5 else None
        if len(cp) > 6:
            self._es_done = cp[6]
        for dst, src in zip(self._s0, bufs, strict=True):
            dst[...] = src
        self.t, self.step_index = t, step
        # (the clock's base as it was, if h is too: the times to come are the unbroken
        # run's, which an event-driven scheme is advanced to)
        base = cp[7] if len(cp) > 7 else None
        if base is not None and base[2] == self.h:
            self._t_base, self._step_base = base[0], base[1]
        else:
            self._t_base, self._step_base = t, step
        self.aux = {"pi": self._s0[7]}
        self._stage_restore(cp[8] if len(cp) > 8 else None)
        if len(cp) > 9:  # (the bonds held then: issue #44 item 2)
            self._set_bond_ids(cp[9])
        self.ff.invalidate_neighbours()
        if self.ff.has_history:
            self.ff.reset_history(self._s0[0], self._s0[2], springs)
        self._evaluate_forces()
        if self.ff.has_history:  # the checkpoint's forces (with the damping of its step)
            for k in (4, 5, 6):
                self._s0[k][...] = bufs[k]

    RESUME_FORMAT = 2
    """Version of the :meth:`resume_state` layout (stored with it, checked on resume).
    Format 2 keeps the committed friction springs as a list (``springs_*``) and the
    used part of the neighbour list (``nl_pairs[:count]``, ``nl_capacity``); format 1
    held both as full tables (≈ 280 bytes a sphere at 10⁶ spheres), and is still read."""
    RESUME_FORMATS_READ = (1, 2)

    _SCRATCH_WORK = (0, 1, 2, 3, 4)
    """``work`` entries every step overwrites before reading (RK4's accumulators, the
    composition's buffer): not part of the resumable state (nor is the buffer ``s1``)."""

    def resume_state(self) -> dict:
        """Everything needed to continue this run bit-identically in another process:
        the state buffer (``s0_*`` = ``x, v, q, Ω, F, RM, e, Π``), the kernel work
        arrays that carry over from step to step (``work_5`` parameters, ``work_6``
        statistics, ``work_7_*`` the contact work with the percussion warm start), the
        neighbour list (``nl_pairs``, ``nl_state``, ``nl_xref``), the clock
        (``t``, ``step_index``, ``t_base``, ``step_base``, ``h``), the integrator, the
        energy and momentum references and the recording settings.  Arrays are copies;
        ``events`` is a list of :class:`Event`.  :meth:`from_resume_state` inverts it."""
        d: dict = {"kind": "bodies", "format": self.RESUME_FORMAT}
        for k, a in enumerate(self._s0):
            d[f"s0_{k}"] = a.copy()
        for k, a in enumerate(self._work):
            if k in self._SCRATCH_WORK:
                continue
            if isinstance(a, tuple):
                for j, b in enumerate(a):
                    d[f"work_{k}_{j}"] = b.copy()
            else:
                d[f"work_{k}"] = a.copy()
        count = int(self.ff.nl_state[NL_COUNT])
        d["nl_pairs"] = self.ff.nl_pairs[:count].copy()
        d["nl_capacity"] = int(self.ff.nl_pairs.shape[0])
        d["nl_state"] = self.ff.nl_state.copy()
        d["nl_xref"] = self.ff.nl_xref.copy()
        if self.ff.has_history:
            (d["springs_sphere"], d["springs_partner"],
             d["springs_xi"]) = self.ff.committed_springs_sparse()
            d["springs_slots"] = int(self.ff.history[2].shape[2])
        d["info"] = self._info.copy()
        d.update(self._resume_scalars())
        es = self.event_stats()
        if self._integrator.event_driven or es["events"]:
            d.update({"es_events": es["events"], "es_reflections": es["reflections"],
                      "es_time": es["time"], "es_terms": int(self._es_terms)})
            if self._integrator.event_driven:
                d["es_eps_rel"] = float(self._integrator.eps_rel)
                # the stepper itself (a resume goes on from it bit for bit); its counts
                # are in es_events … until it is dropped
                saved = self._export_stepper() if self._stepper is not None \
                    else self._es_saved
                if saved is not None:
                    d.update({ES_STATE_PREFIX + k: v for k, v in saved.items()})
                    if self._stepper is not None:
                        d["es_events"] -= int(self._stepper.n_events)
                        d["es_reflections"] -= int(self._stepper.n_reflections)
        return d

    def _resume_scalars(self) -> dict:
        return {"t": float(self.t), "step_index": int(self.step_index),
                "t_base": float(self._t_base), "step_base": int(self._step_base),
                "h": float(self.h), "integrator": self._integrator.name,
                "e_ref": float(self.e_ref), "e_scale": float(self.e_scale),
                "p_scale": float(self.p_scale), "l_scale": float(self.l_scale),
                "record_every": int(self.record_every),
                "record_frames": bool(self.record_frames),
                "record_state": bool(self.record_state),
                "energy_tolerance": (-1.0 if self.energy_tolerance is None
                                     else float(self.energy_tolerance)),
                "events": list(self.events), **self._stage_scalars()}

    @classmethod
    def from_resume_state(cls, model: Model, d: dict, *, record_every: int | None = None,
                          record_frames: bool | None = None,
                          energy_tolerance: float | None | str = "keep",
                          record_state: bool | None = None) -> Self:
        """A simulation continuing exactly where :meth:`resume_state` ``d`` was taken
        (on a model built from the same parameters).  Its series starts empty: the
        record at the resumed step belongs to the run that was resumed.  Settings left
        at ``None``/``"keep"`` are the stored ones.  :class:`SimulationError` (one line)
        when ``d`` does not fit the model."""
        kind = "generalized" if getattr(model, "coordinates", "bodies") == "generalized" \
            else "bodies"
        if str(d.get("kind")) != kind:
            raise SimulationError(f"the saved state is of a {d.get('kind')} model, model "
                                  f"{model.name!r} is of a {kind} one")
        if int(d.get("format", -1)) not in cls.RESUME_FORMATS_READ:
            raise SimulationError(f"the saved state has format {d.get('format')}, this "
                                  f"version reads formats "
                                  f"{', '.join(map(str, cls.RESUME_FORMATS_READ))}")
        tol = d["energy_tolerance"] if energy_tolerance == "keep" else energy_tolerance
        if tol is not None and float(tol) < 0:
            tol = None
        kw = {"record_every": int(d["record_every"]) if record_every is None else record_every,
              "record_frames": bool(d["record_frames"]) if record_frames is None
              else record_frames,
              "energy_tolerance": tol,
              "record_state": bool(d.get("record_state", False)) if record_state is None
              else record_state}
        sim = cls.__new__(cls)
        sim._init_resumed(model, d, kw)
        return sim

    def _init_resumed(self, model: Model, d: dict, kw: dict) -> None:
        n = model.n_bodies
        try:
            x, v, q, o = (np.asarray(d[f"s0_{k}"], dtype=np.float64) for k in range(4))
            if x.shape != (n, 3):
                raise SimulationError(f"the saved state has {x.shape[0]} bodies, model "
                                      f"{model.name!r} has {n}")
            why = attitude_problem(q)  # (zeros are never a state: issue #46 item 3)
            if why is not None:
                raise SimulationError(f"the saved state is not one: {why}")
            st = State(x.copy(), v.copy(), q.copy(), o.copy(),
                       {"pi": np.asarray(d["s0_7"], dtype=np.float64).copy()})
            type(self).__init__(self, model, _resumed_integrator(d), float(d["h"]), state=st,
                                **kw)
            for k, a in enumerate(self._s0):
                src = np.asarray(d[f"s0_{k}"])
                if k == 6 and src.ndim == 1 and src.shape[0] < a.shape[0]:
                    a[...] = 0.0  # (saved before the later components, issue #44's: 0)
                    a[:src.shape[0]] = src
                else:
                    a[...] = src
            work = []
            for k, a in enumerate(self._work):
                if k in self._SCRATCH_WORK:
                    work.append(a)
                elif isinstance(a, tuple):
                    work.append(tuple(np.ascontiguousarray(d[f"work_{k}_{j}"], dtype=b.dtype)
                                      for j, b in enumerate(a)))
                else:
                    a[...] = d[f"work_{k}"]
                    work.append(a)
            self._work = tuple(work)
            # (the bonds broken up to the saved step out again: issue #44 item 2)
            self._without_broken(broken_ids(_saved_events(d)))
            self.ff.nl_pairs = _saved_pairs(d)
            self.ff.nl_state[...] = d["nl_state"]
            self.ff.nl_xref[...] = d["nl_xref"]
            self.ff.drop_excluded_pairs()
            if self.ff.has_history:
                self.ff.reset_history(self._s0[0], self._s0[2], self._saved_springs(d))
            self._info[...] = d["info"]
        except KeyError as exc:
            raise SimulationError(f"the saved state lacks {exc.args[0]!r}") from None
        except ValueError as exc:
            if isinstance(exc, SimulationError):
                raise
            raise SimulationError(f"the saved state does not fit model {model.name!r}: "
                                  f"{exc}") from None
        self._restore_scalars(d)

    def _saved_springs(self, d: dict) -> tuple | None:
        """The slot table of the committed springs of a saved state: the list of format
        2 (``springs_*``), the table of format 1 (``history_*``), or ``None``."""
        n = self.ff.n_bodies
        if "springs_sphere" in d:
            return self.ff.dense_springs(d["springs_sphere"], d["springs_partner"],
                                         d["springs_xi"], int(d.get("springs_slots", 0)))
        if "history_partner" not in d:
            return None
        springs = (np.ascontiguousarray(d["history_partner"], dtype=np.int32),
                   np.ascontiguousarray(d["history_xi"], dtype=np.float64))
        if springs[0].shape[0] != n or springs[1].shape[:2] != springs[0].shape:
            raise SimulationError("the saved friction springs do not fit the "
                                  f"model's {n} bodies")
        return springs

    def _restore_scalars(self, d: dict) -> None:
        self.t = float(d["t"])
        self.step_index = int(d["step_index"])
        self._t_base, self._step_base = float(d["t_base"]), int(d["step_base"])
        self.e_ref, self.e_scale = float(d["e_ref"]), float(d["e_scale"])
        self.p_scale, self.l_scale = float(d["p_scale"]), float(d["l_scale"])
        self.events = list(d.get("events", []))
        self._stage_resumed(d)  # (issue #44 item 5)
        self._stepper = None  # (from the saved one, else made anew, at the next step)
        saved = {k[len(ES_STATE_PREFIX):]: v for k, v in d.items()
                 if k.startswith(ES_STATE_PREFIX)}
        self._es_saved = saved or None
        self._es_done = (int(d.get("es_events", 0)), int(d.get("es_reflections", 0)),
                         float(d.get("es_time", 0.0)))
        self._es_terms = int(d.get("es_terms", 0))
        self.series = TimeSeries(self.model.n_bodies if self.model.coordinates != "generalized"
                                 else 1, self.record_frames)

    @classmethod
    def from_frame(cls, model: Model, frame, integrator: str, h: float, *,
                   keep_clock: bool = True, energy_reference: tuple[float, float] | None = None,
                   **kwargs) -> Self:
        """A new run starting from a recorded frame (``engine.io.Frame`` or any object
        with ``t``, ``step``, ``x``, ``v``, ``q``, ``omega``, ``pi`` (may be ``None``: then
        ``Π = 𝕁 Rᵀ Ω``), ``D`` (dissipated energy, may be 0) and, for a generalized
        model, ``gq``/``gv``), driven by ``integrator`` with step ``h``.  For contacts
        with history, the frame's ``springs`` (``(sphere, partner, xi)``, see
        :meth:`engine.forcefield.ForceField.committed_springs_sparse`) and its ``F``,
        ``RM`` carry the friction springs and the damping over (``None``: the springs
        start from zero, as from a file written before frames kept them).

        ``keep_clock``: time and step index go on from the frame's (else from 0).
        ``energy_reference``: ``(E_ref, E_scale)`` of the recorded run, so that the
        relative energy error is measured as in it (default: from the frame).
        ``kwargs``: as for the constructor (``record_every`` …)."""
        if getattr(frame, "v", None) is None:
            raise SimulationError("the frame holds no velocities (a file of schema 1, or "
                                  "recorded without the state): it cannot start a run")
        why = attitude_problem(frame.q)  # (zeros are never a state: issue #46 item 3)
        if why is not None:
            raise SimulationError(f"the frame is not a state: {why}")
        pi = getattr(frame, "pi", None)
        aux = {} if pi is None or not np.all(np.isfinite(pi)) else {
            "pi": np.asarray(pi, dtype=np.float64).copy()}
        st = State(np.asarray(frame.x, dtype=np.float64).copy(),
                   np.asarray(frame.v, dtype=np.float64).copy(),
                   np.asarray(frame.q, dtype=np.float64).copy(),
                   np.asarray(frame.omega, dtype=np.float64).copy(), aux)
        sim = cls(model, integrator, h, state=st, **kwargs)
        sim._start_from_frame(frame, keep_clock, energy_reference)
        return sim

    def _start_from_frame(self, frame, keep_clock: bool,
                          energy_reference: tuple[float, float] | None) -> None:
        D = float(getattr(frame, "D", 0.0) or 0.0)
        broken = getattr(frame, "broken", None)
        if broken is not None and len(broken):  # (its bonds: issue #44 item 2)
            self._without_broken(np.asarray(broken, dtype=np.int64))
            self._evaluate_forces()
            self._s0[6][E_BROKEN] = float(getattr(frame, "B", 0.0) or 0.0)
        if keep_clock:  # (the stage of the frame's step: issue #44 item 5)
            self._stage_at_frame(int(frame.step), float(frame.t))
        if self.ff.flags[T_FIELD] and keep_clock:  # (a ramped field at the frame's time)
            self.t = float(frame.t)
            self._evaluate_forces()
        springs = getattr(frame, "springs", None)
        if self.ff.has_history and springs is not None:
            try:
                dense = self.ff.dense_springs(*springs)
            except ValueError as exc:
                raise SimulationError(f"the frame's friction springs do not fit model "
                                      f"{self.model.name!r}: {exc}") from None
            self.ff.reset_history(self._s0[0], self._s0[2], dense)
            self._evaluate_forces()  # (the springs' energy and forces)
            F, RM = getattr(frame, "F", None), getattr(frame, "RM", None)
            if F is not None and RM is not None and np.all(np.isfinite(F)) and \
                    np.all(np.isfinite(RM)):  # the recorded ones: with the damping
                self._s0[4][...] = F
                self._s0[5][...] = RM
        e = self._s0[6]
        if D and "dissipated" in ENERGY_NAMES:
            e[ENERGY_NAMES.index("dissipated")] = D
        W = float(getattr(frame, "W", 0.0) or 0.0)
        if W and keep_clock:  # (the field work booked up to the frame: issue #44)
            e[E_FIELD_WORK] = W
        self._after_frame(keep_clock, energy_reference, frame)

    def _after_frame(self, keep_clock: bool, energy_reference, frame) -> None:
        e = self.energy
        if energy_reference is not None:
            self.e_ref, self.e_scale = (float(v) for v in energy_reference)
        else:
            self.e_ref = float(e.sum())
            self.e_scale = self._energy_scale_of(e) \
                if self.model.coordinates != "generalized" else self.e_scale
        if keep_clock:
            self.t = self._t_base = float(frame.t)
            self.step_index = self._step_base = int(frame.step)
        if self._integrator.event_driven:  # (at the frame's time, with its energy scale)
            self._stepper = None
            self._es_saved = None  # (a frame holds no stepper: its terraces anew)
            self._es_done = (0, 0, 0.0)
            self._start_stepper()
        self.series = TimeSeries(self.series.n_bodies, self.record_frames)
        self._record_now()
