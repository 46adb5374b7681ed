"""The event-driven driving of :class:`~.driver.Simulation` (``energy-stepping[:REL]``,
physics.md §3.10, issue #33): the ``EnergyStepper`` it keeps, its recording intervals
and records, its bound and failures, mixed in as :class:`EventDrivenMixin` (issue #34:
split out of ``engine.simulation``)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from ..energy_stepping.pendulum_records import R_GAP, RecordChunk
from ..energy_stepping.records import kinetic_and_momenta
from ..forcefield import compute_forces_ws
from ..integrators.registry import IntegratorInfo
from ..layout import OK
from ..state import State
from .choice import SimulationError
from .records import Failure, StepReport

RECORD_CHUNK = 1024
"""Recording intervals per ``EnergyStepper.advance_records`` (issue #33 item 2)."""

_EVENT_KERNELS_BUILT: set[str] = set()
"""The models (by name) whose event-driven kernels ran in this process
(:meth:`Simulation.kernels_cached`)."""


class EventDrivenMixin:
    """The event-driven scheme's part of :class:`~.driver.Simulation` (see its
    docstring)."""

    _stepper = None
    """The ``EnergyStepper`` of an event-driven scheme, or ``None`` (a stepping scheme;
    an event-driven one after a restore, a resume or a failure, until its next step)."""
    _es_done: tuple[int, int, float] = (0, 0, 0.0)
    """Events, reflections and simulated time of the steppers dropped so far."""
    _es_t0 = 0.0
    """The time the current stepper started at."""
    _es_terms = 0
    """Terraced terms of the last stepper (each bounds its share of ``|E − E₀|`` by ε)."""
    _es_e0 = math.nan
    """``E`` where the current stepper started: its bound ``|E − E₀| ≤ ε`` per term is
    checked against it after each advance (issue #33 item 3; saved with the stepper as
    ``bound_e0``)."""
    _event_ff: tuple | None = None
    """The force field's arrays and scratch as the event-driven records of one
    :meth:`advance` use them (taken once per call, as a stepping scheme's compiled loop
    does: ``ForceField.arrays`` alone costs tens of µs)."""
    stop_check: Callable[[], bool] | None = None
    """Asked between the event-driven scheme's compiled calls (several times a second,
    whatever the event rate): returning True ends :meth:`advance` early, at the last
    recording interval completed (``rrp run`` sets it to "a signal came": issue #33
    item 4).  Stepping schemes return between chunks of steps anyway."""
    _es_saved: dict | None = None
    """A saved stepper (``EnergyStepper.export_state``) to go on from at the next step
    (after :meth:`restore` or a resume), or ``None``."""

    def event_stats(self) -> dict[str, float]:
        """The event-driven schemes' events since the start (all their steppers): ``events``
        (crossings and reflections), ``reflections``, ``time`` (simulated time under
        them), ``events_per_time``, and the current ``eps`` (absolute; NaN under another
        scheme) and ``n_terms`` (terraced terms of the last stepper; 0 before any)."""
        events, refl, span = self._es_done
        st = self._stepper
        if st is not None:
            events += st.n_events
            refl += st.n_reflections
            span += self.t - self._es_t0
        info = self._integrator
        return {"events": int(events), "reflections": int(refl), "time": float(span),
                "events_per_time": events / span if span > 0 else math.nan,
                "eps": info.eps_rel * self.e_scale if info.event_driven else math.nan,
                "n_terms": int(self._es_terms)}

    # ------------------------------------------------------------------ event-driven
    def _new_stepper(self, info: IntegratorInfo):
        """An ``EnergyStepper`` for ``info`` from the current state at :attr:`t`, with
        ``ε = REL × e_scale``; :class:`SimulationError` (its one line) if it cannot
        drive the model."""
        from ..energy_stepping import EnergyStepper, EnergySteppingError, absolute_eps

        x, v, q, o = (a.copy() for a in self._s0[:4])
        magnitude = float(np.abs(self._s0[6]).sum())  # (the floor of ε: issue #33 item 3)
        try:
            return EnergyStepper(self.model, absolute_eps(info.eps_rel, self.e_scale,
                                                          magnitude),
                                 State(x, v, q, o, {}), self.t)
        except EnergySteppingError as exc:
            raise SimulationError(str(exc)) from None

    def _start_stepper(self) -> None:
        saved, self._es_saved = self._es_saved, None
        if saved is not None and self._integrator.event_driven and \
                float(np.asarray(saved["t"]).reshape(-1)[0]) == self.t:
            from ..energy_stepping import EnergyStepper, EnergySteppingError

            try:  # the saved stepper: the run goes on bit for bit
                stepper = EnergyStepper.from_state(self.model, saved)
            except EnergySteppingError as exc:
                raise SimulationError(str(exc)) from None
            self._use_stepper(stepper)
            if "bound_e0" in saved:  # (else: from here, as for a new stepper)
                self._es_e0 = float(np.asarray(saved["bound_e0"]).reshape(-1)[0])
            return
        self._use_stepper(self._new_stepper(self._integrator))

    def _use_stepper(self, stepper) -> None:
        """Make ``stepper`` (started at :attr:`t` from the state in the buffer) the
        current one.  The buffer is left as it is (the switch carries the state over
        bit for bit); the first interval synchronises it with the stepper's own (whose
        attitude is normalised, and which has stepped down a level at once from a start
        at rest: docs/physics.md §3.10)."""
        self._stepper = stepper
        self._es_t0 = self.t
        self._es_terms = int(stepper.n_terms)
        self._es_e0 = float(self._s0[6].sum())

    def _export_stepper(self) -> dict:
        """The current stepper's saved state, with the ``E₀`` of its bound."""
        d = self._stepper.export_state()
        d["bound_e0"] = np.array([self._es_e0])
        return d

    def _bound_failure(self) -> Failure | None:
        """After an advance (the state synchronised, its energy evaluated): a
        :class:`Failure` if the measured ``|E − E₀|`` exceeds the stepper's bound
        (``engine.energy_stepping.bound``, issue #33 item 3), the stepper then dropped
        (the next step starts the terraces anew from the kept state)."""
        from ..energy_stepping.bound import bound_excess, bound_message

        st, e = self._stepper, self._s0[6]
        ratio = bound_excess(float(e.sum()), self._es_e0, st.eps, st.n_terms,
                             float(np.abs(e).sum()))
        if ratio is None:
            return None
        n = int(st.n_terms)
        self._drop_stepper()
        info = self._integrator
        return Failure("energy-stepping", self.t, self.step_index,
                       bound_message(self.t, ratio, n, info.eps_rel), self.stability(),
                       {"eps": info.eps_rel * self.e_scale, "bound": ratio,
                        "raise_eps": True})

    def _drop_stepper(self) -> None:
        """Forget the stepper (its counts kept in :meth:`event_stats`); the state in the
        buffer is synchronised at :attr:`t`."""
        st = self._stepper
        if st is not None:
            ev, refl, span = self._es_done
            self._es_done = (ev + int(st.n_events), refl + int(st.n_reflections),
                             span + (self.t - self._es_t0))
            self._stepper = None

    def _sync_from_stepper(self) -> None:
        """The buffer's state at :attr:`t`, read on the stepper's flights (the stepper
        itself untouched: recording never changes the run, issue #33 item 1)."""
        self._stepper.state_arrays(self._s0[:4])

    def _prime_event_kernels(self, info: IntegratorInfo) -> None:
        """Compile (or load) the kernels of the event-driven ``info`` on this model: a
        stepper on a copy of the state makes *one* compiled call towards a tiny advance
        (the kernels, not the motion: whatever the event rate, the warm-up returns at
        once, issue #46 item 4; a run that cannot advance its clock is then the run's
        failure, one line), then a fresh one reads its state and records (the state is
        untouched)."""
        from ..energy_stepping import EnergySteppingError

        def once() -> bool:  # (stop after the first compiled call)
            return True

        try:
            probe = self._new_stepper(info)
            probe.advance_to(self.t + 1e-3 * self.h, once)
            probe = self._new_stepper(info)  # (at t: its state can be read)
        except EnergySteppingError as exc:
            raise SimulationError(str(exc)) from None
        state = tuple(a.copy() for a in self._s0[:4])  # (a record's kernels, on the
        probe.state_arrays(state)  # buffer's layout: issue #33 items 1, 2)
        probe.terrace_gap(state)
        if probe.records_in_chunks:  # (and the chunked records': issue #33 item 2)
            try:
                probe.advance_records(np.array([probe.t + 1e-3 * self.h]), 1, 1,
                                      RecordChunk(1, self.ff.m, self.ff.J), once)
            except EnergySteppingError as exc:
                raise SimulationError(str(exc)) from None
        kinetic_and_momenta(self.ff.m, self.ff.J, state[0], state[1], state[3],
                            np.empty(3), np.empty(3))
        _EVENT_KERNELS_BUILT.add(self.model.name)

    def _advance_events(self, n: int) -> StepReport:
        """``n`` recording intervals of the event-driven scheme (see the class
        docstring): the stepper is advanced to each ``t = t_base + (k − k_base) h`` in
        turn, the bodies synchronised there; every ``record_every``-th is recorded.  An
        ``EnergySteppingError`` ends it with a :class:`Failure` (kind
        ``"energy-stepping"``), the state that of the last interval completed."""
        from ..energy_stepping import EnergySteppingError

        if n <= 0:
            return StepReport(0)
        if self._stepper is None:
            try:
                self._start_stepper()
            except SimulationError as exc:
                return StepReport(0, self._event_failure(str(exc)))
        st = self._stepper
        rows: list[tuple] = []
        done, message = 0, None
        self._event_ff = None
        t0, c0 = time.perf_counter(), time.thread_time()
        try:
            if st.records_in_chunks:
                done, message = self._advance_event_chunks(st, n)
            for _ in range(0 if st.records_in_chunks else n):
                step = self.step_index + 1
                t = self._t_base + (step - self._step_base) * self.h
                if not st.advance_to(t, self.stop_check):
                    break  # (asked to stop mid-interval: the stepper goes on from there)
                self._sync_from_stepper()
                self.step_index, self.t = step, t
                done += 1
                if step % self.record_every == 0:
                    rows.append(self._event_row())
        except EnergySteppingError as exc:
            message = str(exc)
        finally:
            self.kernel_seconds += time.perf_counter() - t0
            self.kernel_cpu_seconds += time.thread_time() - c0
            self.kernel_steps += done
            self._append_event_rows(rows)
        self._evaluate_forces()
        if message is not None:
            self._drop_stepper()  # (its state is part-way: the next step makes a new one)
            return StepReport(done, self._event_failure(message))
        return StepReport(done, self._bound_failure())

    def _advance_event_chunks(self, st, n: int) -> tuple[int, str | None]:
        """``n`` recording intervals as :meth:`_advance_events` takes them, up to
        :data:`RECORD_CHUNK` in each ``EnergyStepper.advance_records`` (issue #33 item
        2: the events and the records of a chunk in compiled calls, the records appended
        at once): the same records, bit for bit, as one interval at a time.  Returns the
        intervals done and the message of an ``EnergySteppingError`` (or ``None``)."""
        from ..energy_stepping import EnergySteppingError

        out = RecordChunk(min(n, RECORD_CHUNK), self.ff.m, self.ff.J)
        done, message = 0, None
        try:
            while done < n and message is None:
                steps = self.step_index + 1 + np.arange(min(n - done, RECORD_CHUNK),
                                                        dtype=np.int64)
                times = self._t_base + (steps - self._step_base) * self.h
                try:
                    st.advance_records(times, int(steps[0]), self.record_every, out,
                                       self.stop_check)
                except EnergySteppingError as exc:
                    message = str(exc)
                finally:  # (what was done is kept, whatever stopped it)
                    k = out.done
                    if k:
                        self.step_index, self.t = int(steps[k - 1]), float(times[k - 1])
                        done += k
                        self._append_event_chunk(out, steps[:k], times[:k])
                if k < len(steps):
                    break  # (asked to stop mid-interval, or an error)
        finally:
            if done:  # (read at the last time reached: the events may have gone on)
                out.state_into(*self._s0[:4])
        return done, message

    def _append_event_chunk(self, out, steps: np.ndarray, times: np.ndarray) -> None:
        """The records of a chunk (``out``: a ``RecordChunk``; ``steps``, ``times``: the
        intervals reached) appended at once, as :meth:`_event_row` makes each."""
        r = out.records
        if not r:
            return
        keep = steps % self.record_every == 0
        e = out.energies(self._s0[6])
        self._s0[6][...] = e[-1]  # (as a record leaves it: the forces follow the advance)
        x = q = o = None
        extra = {"step": steps[keep], "terrace_gap": out.s[:r, R_GAP].copy()}
        if self.record_frames:
            x = np.repeat(out.x[None], r, axis=0)
            q, o = out.q[:r, None, :], out.om[:r, None, :]
            if self.record_state:
                extra.update({"v": np.repeat(out.v[None], r, axis=0),
                              "pi": np.repeat(self._s0[7][None], r, axis=0)})
        self.series.append(times[keep], e, out.P[:r], out.L[:r], x, q, o, **extra)

    def _event_row(self) -> tuple:
        """One record of the event-driven scheme at the current state (read on the
        flights; the per-body columns only where they are recorded).  Its cost is about
        that of reading the flights (issue #33 item 2): the force kernel on the arrays
        taken once per :meth:`advance` (:attr:`_event_ff`), the kinetic energies and
        momenta in one compiled call (``energy_stepping.records``; spheres only, as
        energy-stepping drives); the pendulum's potential, its one term, from the stepper
        (``EnergyStepper.record_potential``; the forces are evaluated after the
        interval)."""
        x, v, q, o, F, RM, e = self._s0[:7]
        gap, done = self._stepper.record_potential(self._s0[:4], e)
        if not done:
            ff, ws = self._event_ff or (self.ff.arrays, None)
            if compute_forces_ws(x, q, ff, F, RM, e, ws or self._scratch(ff)) == OK:
                self._event_ff = (ff, ws or self._ws)
            else:  # (a grown neighbour list, …: the general path, arrays taken anew)
                self._event_ff = None
                self._evaluate_forces()
        P, L = np.empty(3), np.empty(3)
        e[0], e[1] = kinetic_and_momenta(self.ff.m, self.ff.J, x, v, o, P, L)
        frames = (x.copy(), q.copy(), o.copy()) if self.record_frames else (None,) * 3
        state = (v.copy(), self._s0[7].copy()) if self.record_state and self.record_frames \
            else (None, None)
        return (self.t, e.copy(), P, L, *frames, self.step_index, gap, *state)

    def _append_event_rows(self, rows: list[tuple]) -> None:
        if not rows:
            return
        # (np.stack: np.array over thousands of small arrays cost ~20 µs a record)
        cols = [None if c[0] is None else np.stack(c) if isinstance(c[0], np.ndarray)
                else np.array(c) for c in zip(*rows, strict=True)]
        t, e, P, L, x, q, o, step, gap, v, pi = cols
        extra = {"step": step.astype(np.int64), "terrace_gap": gap.astype(np.float64)}
        if v is not None:
            extra.update({"v": v, "pi": pi})
        self.series.append(t, e, P, L, x, q, o, **extra)

    def _event_failure(self, message: str) -> Failure:
        t = self.t
        msg = (f"{message.rstrip('.')} (in the interval after t = {t:.6g}); the state at "
               f"t = {t:.6g} is kept, and the next step starts the terraces anew from it.")
        return Failure("energy-stepping", t, self.step_index, msg, self.stability(),
                       {"eps": self.event_stats()["eps"]})
