"""Energy-stepping (Gonzalez, Schmidt & Ortiz, IJNME 82 (2010) 205–241) for the 3D
pendulum: the first increment of issue #28 (contract: physics.md §3.10; derivation and
measurements: docs/physics.md §3.10).

The potential ``V = −m g e₃·Rρ₀`` of the repository's pendulum (``models/pendulum.py``,
``potentials/gravity.pivot_gravity``) is replaced by the terraced ``V_ε = ε⌊V/ε⌋``; the
motion of ``T − V_ε`` is then computed *exactly*:

* **free flight** between crossings (§3.10, first bullet): ``Ω`` constant (spatial),
  ``R(t) = exp(t Ω̂) R``, as the unit quaternion ``q(t) = (cos(θ/2), sin(θ/2) k) ⊗ q``,
  ``θ = |Ω| t``, ``k = Ω/|Ω|``;
* **crossing times** in closed form (§3.10, third bullet): with ``u = Rρ₀``,
  ``g(θ) = e₃·R(t)ρ₀ = A + B cos θ + C sin θ``, ``A = (e₃·k)(k·u)``, ``B = e₃·u − A``,
  ``C = e₃·(k × u)``, the level ``V = Lε`` is ``g = −Lε/(m g)``, solved as the phase-shifted
  cosine ``A + ρ cos(θ − φ) = c`` (``ρ = |(B, C)|``, ``φ = atan2(C, B)``): ``θ = φ ∓
  arccos((c − A)/ρ)``, the sign chosen by the direction of the crossing; the level just
  left returns at ``θ = 2 atan2(C, B)`` (no arccos: exact where the other form is
  ill-conditioned);
* **the jump** at a crossing (§3.10, second bullet): ``J Ω ← J Ω − λ M``, ``M = m g (Rρ₀) ×
  e₃`` the spatial moment (docs/physics.md §4.1), ``a = |M|²/J``, ``b = −M·Ω = dV/dt``,
  ``λ`` the root of ``½ a λ² + b λ + ΔV = 0`` that keeps the direction of motion, or the
  reflection ``λ = −2b/a``; ``T + V_ε`` is unchanged.

The event loop is one Numba kernel; records are sampled exactly on the flights.
Deterministic: the same input gives the same events in the same order, bit for bit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from ..diagnostics import pendulum_invariants
from ..layout import P_MG, P_RHO0, T_PIVOT_GRAVITY
from ..rotations import quat_rotate_t
from .terms import fly_quat

TWO_PI = 2.0 * math.pi

OFF_LEVEL = 0
ON_LOWER = 1
"""The flight starts on the lower level ``V = Lε`` of its terrace (just crossed upwards)."""
ON_UPPER = 2
"""The flight starts on the upper level ``V = (L + 1)ε`` (just crossed downwards, or
reflected)."""

STATUS_OK = 0
STATUS_MAX_EVENTS = 1
STATUS_STUCK = 2
MAX_ZERO_FLIGHTS = 16
"""Consecutive events without any flight between them after which the kernel gives up
(a round-off loop at a tangency; never seen, guarded so it cannot hang)."""


# --------------------------------------------------------------------------------------
# the flight (rotations: engine.rotations)
# --------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _flight(q, om, s, out):
    """Exact free flight: ``out = exp(s Ω̂) q`` (``terms.fly_quat``, §3.10 first bullet);
    ``out`` may be ``q``."""
    out[0], out[1], out[2], out[3] = fly_quat(q[0], q[1], q[2], q[3], om[0], om[1], om[2], s)


@njit(cache=True, nogil=True)
def _normalize(q):
    """One Newton step towards ``|q| = 1`` (docs/physics.md §2)."""
    f = 1.5 - 0.5 * (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    for i in range(4):
        q[i] *= f


@njit(cache=True, nogil=True)
def _wrap(th):
    """``th`` moved into ``(0, 2π]`` (``th ∈ [−2π, 2π]``)."""
    while th <= 0.0:
        th += TWO_PI
    while th > TWO_PI:
        th -= TWO_PI
    return th


@njit(cache=True, nogil=True)
def crossing_angle(A, B, C, c, rising):
    """First ``θ ∈ (0, 2π]`` with ``A + B cos θ + C sin θ = c`` crossed upwards
    (``rising``: ``g`` increasing) or downwards; ``inf`` when there is none.

    ``B cos θ + C sin θ = ρ cos(θ − φ)``: the roots are ``φ ∓ β``, ``β = arccos((c −
    A)/ρ) ∈ [0, π]``; ``g`` rises through ``φ − β`` and falls through ``φ + β``.  A level
    outside ``[A − ρ, A + ρ]`` is never reached; a level *touched* (``|c − A| = ρ``, a
    double root) is not crossed either: ``g`` does not pass through it, and ``V_ε`` does
    not change (see docs/physics.md §3.10, grazing).
    """
    rho = math.sqrt(B * B + C * C)
    if rho == 0.0:
        return math.inf
    x = (c - A) / rho
    if not (-1.0 < x < 1.0):
        return math.inf
    beta = math.acos(x)
    phi = math.atan2(C, B)
    return _wrap(phi - beta if rising else phi + beta)


@njit(cache=True, nogil=True)
def return_angle(B, C, rising):
    """The flight starts *on* a level (``θ = 0`` is a root) and moves into its terrace:
    ``g`` rising (``rising``) or falling.  The next root, where ``g`` crosses back the
    other way: ``B (cos θ − 1) + C sin θ = 0`` ⇔ ``tan(θ/2) = C/B``, ``θ = 2 atan2(C, B)``
    in ``(0, 2π)``, with the sign of ``C = g'(0)/|Ω|`` taken as the direction of
    motion (``C`` of the other sign is round-off at a tangency).  ``C = 0``: ``θ = 0`` is
    an extremum of ``g``: inside the terrace (a touch) there is no crossing (``inf``);
    outside it (only after a crossing with ``b'`` = 0 exactly, at an extremum of ``V``)
    the flight crosses back at once (``0``)."""
    ct = abs(C) if rising else -abs(C)
    if ct == 0.0:
        if B == 0.0:
            return math.inf
        into = (B < 0.0) if rising else (B > 0.0)
        return math.inf if into else 0.0
    th = 2.0 * math.atan2(ct, B)
    return th + TWO_PI if th < 0.0 else th


@njit(cache=True, nogil=True)
def predict(q, om, level, on, mg, r0, r1, r2, eps, v0):
    """The next crossing from state ``(q, Ω)`` in terrace ``level`` (``V_ε = level·ε``):
    ``(dt, s)`` with ``dt`` the flight time (``inf``: none) and ``s = +1`` for the upper
    level ``v₀ + (level + 1)ε`` (``V`` rising), ``−1`` for the lower ``v₀ + level·ε``.  Ties go to
    the lower level (deterministic)."""
    w = math.sqrt(om[0] * om[0] + om[1] * om[1] + om[2] * om[2])
    if w == 0.0 or mg == 0.0:
        return math.inf, 0
    k0, k1, k2 = om[0] / w, om[1] / w, om[2] / w
    u0, u1, u2 = quat_rotate_t(q[0], q[1], q[2], q[3], r0, r1, r2)
    A = k2 * (k0 * u0 + k1 * u1 + k2 * u2)
    B = u2 - A
    C = k0 * u1 - k1 * u0
    # V = Lε ⇔ g = −Lε/mg; V falls through the lower level where g rises, and rises
    # through the upper one where g falls
    if on == ON_LOWER:
        th_lo = return_angle(B, C, False)
    else:
        th_lo = crossing_angle(A, B, C, -(v0 + level * eps) / mg, True)
    if on == ON_UPPER:
        th_hi = return_angle(B, C, True)
    else:
        th_hi = crossing_angle(A, B, C, -(v0 + (level + 1) * eps) / mg, False)
    if th_lo <= th_hi:
        return th_lo / w, -1
    return th_hi / w, 1


@njit(cache=True, nogil=True)
def jump(q, om, s, mg, J, r0, r1, r2, eps):
    """The jump at a crossing of ``V`` in direction ``s`` (``+1`` up, ``−1`` down), in
    place on ``Ω`` (§3.10 second bullet, with the repository's sign of the moment:
    ``δV = −M·δθ``, so ``b = −M·Ω = dV/dt``).  Returns ``+1``/``−1`` (crossed: ``V_ε``
    changed by ``s ε``) or ``0`` (reflected: ``V_ε`` unchanged).

    ``M = m g u × e₃ = m g (u₁, −u₀, 0)``, ``a = |M|²/J``, ``ΔV = s ε``; ``T(Ω − λM/J) =
    T + λ b + ½ a λ²``.  Crossing where ``D = b² − 2aΔV ≥ 0`` (always downwards): ``λ =
    −2ΔV/(b + s√D)``, the root ``(−b + s√D)/a`` written without cancellation, after
    which ``b' = b + aλ = s√D``.  Otherwise ``λ = −2b/a``, ``b' = −b``.  ``M ⊥ Rρ₀`` and
    ``M ⊥ e₃``: ``Rρ₀·Ω`` and ``e₃·Ω`` do not move."""
    u0, u1, _ = quat_rotate_t(q[0], q[1], q[2], q[3], r0, r1, r2)
    m0 = mg * u1
    m1 = -mg * u0
    a = (m0 * m0 + m1 * m1) / J
    b = -(m0 * om[0] + m1 * om[1])
    dv = s * eps
    d = b * b - 2.0 * a * dv
    if a == 0.0:  # M = 0: an extremum of V (b = 0 too): a touch, nothing to do
        return 0
    if s < 0 or (d >= 0.0 and b > 0.0):
        lam = -2.0 * dv / (b + s * math.sqrt(d))
        res = s
    else:
        lam = -2.0 * b / a
        res = 0
    f = lam / J
    om[0] -= f * m0
    om[1] -= f * m1
    return res


@njit(cache=True, nogil=True)
def _run(q, om, level, on, mg, J, r0, r1, r2, eps, v0, t_end, record_dt, max_events,
         rec_q, rec_om, rec_level, dts, fly_to_end=True, t_start=0.0):
    """The event loop (see :func:`run_pendulum`) from the state ``(q, Ω)`` at time
    ``t_start``.  ``q``, ``om`` are updated in place to
    the state at ``t_end`` (``fly_to_end``; else to the state just after the last event,
    whose ``on`` flag then still holds: the incremental stepper continues from there);
    returns ``(status, level, on, events, reflections, max |T + V_ε − E_ε₀|, t_last)``
    with ``t_last`` the time of the last event (``t_start``: none); ``dts[:min(events,
    len(dts))]`` are the flight times.  (``on`` is ``OFF_LEVEL`` after a flight to
    ``t_end``: the state has left the level.)  ``STATUS_MAX_EVENTS``: ``max_events``
    events were done, the state is the one just after the last (call again to go on:
    the events are the same whatever the budget, issue #33 item 4)."""
    n_rec = rec_q.shape[0]
    e0 = 0.5 * J * (om[0] * om[0] + om[1] * om[1] + om[2] * om[2]) + level * eps
    dev = 0.0
    t = t_start
    k = 0
    events = 0
    refl = 0
    zero = 0
    status = STATUS_OK
    while True:
        dt, s = predict(q, om, level, on, mg, r0, r1, r2, eps, v0)
        t_next = t + dt
        while k < n_rec and k * record_dt <= t_next:
            _flight(q, om, k * record_dt - t, rec_q[k])
            rec_om[k, 0], rec_om[k, 1], rec_om[k, 2] = om[0], om[1], om[2]
            rec_level[k] = level
            k += 1
        if t_next > t_end:
            if fly_to_end and t_end > t:
                _flight(q, om, t_end - t, q)
                _normalize(q)
                on = OFF_LEVEL
            break
        if events >= max_events:
            status = STATUS_MAX_EVENTS
            break
        if dt == 0.0:
            zero += 1
            if zero > MAX_ZERO_FLIGHTS:
                status = STATUS_STUCK
                break
        else:
            zero = 0
        _flight(q, om, dt, q)
        _normalize(q)
        t = t_next
        res = jump(q, om, s, mg, J, r0, r1, r2, eps)
        if events < dts.shape[0]:
            dts[events] = dt
        events += 1
        if res == 0:
            refl += 1
            on = ON_UPPER
        elif res > 0:
            level += 1
            on = ON_LOWER
        else:
            level -= 1
            on = ON_UPPER
        e = 0.5 * J * (om[0] * om[0] + om[1] * om[1] + om[2] * om[2]) + level * eps
        dev = max(dev, abs(e - e0))
    return status, level, on, events, refl, dev, t


@njit(cache=True, nogil=True)
def advance_packed(q, om, fs, iv, dts):
    """:func:`_run` for the incremental stepper with its scalars packed (issue #33 item
    2: a call per recording interval, and 24 arguments cost ~15 µs of dispatch):
    ``fs = (m g, J, ρ₀ (3), ε, v₀, t_end, t_start)``, ``iv = (level, on, budget)`` in;
    out ``fs[8]`` = the time of the last event, ``iv[0:2]`` = level, on, ``iv[3:6]`` =
    status, events, reflections.  No records, no flight to ``t_end``."""
    rec_q = np.zeros((0, 4))
    rec_om = np.zeros((0, 3))
    rec_level = np.zeros(0, dtype=np.int64)
    status, level, on, events, refl, _, t_last = _run(
        q, om, iv[0], iv[1], fs[0], fs[1], fs[2], fs[3], fs[4], fs[5], fs[6], fs[7], 1.0,
        iv[2], rec_q, rec_om, rec_level, dts, False, fs[8])
    fs[8] = t_last
    iv[0] = level
    iv[1] = on
    iv[3] = status
    iv[4] = events
    iv[5] = refl


# --------------------------------------------------------------------------------------
# Python API
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PendulumParams:
    """The pendulum's constants: ``mg`` (m g ≥ 0), ``J`` (scalar inertia about the pivot,
    > 0) and ``ρ₀`` (centre of mass → pivot, body frame; the potential is
    ``V = −m g e₃·Rρ₀``, docs/physics.md §4.1)."""

    mg: float
    J: float
    rho0: tuple[float, float, float] = (0.0, 0.0, 1.0)

    @classmethod
    def from_model(cls, model) -> PendulumParams:
        """From a built ``pendulum`` model (its force field's ``m g``, ``ρ₀`` and the
        body's ``J``)."""
        ff = model.forcefield
        if not ff.flags[T_PIVOT_GRAVITY] or model.bodies.n != 1:
            raise ValueError(f"the pendulum's closed-form loop takes one body hinged at a "
                             f"pivot, not {model.name!r}: use EnergyStepper (any model "
                             "energy-stepping drives)")
        rho = ff.fp[P_RHO0:P_RHO0 + 3]
        return cls(float(ff.fp[P_MG]), float(model.bodies.J[0]),
                   (float(rho[0]), float(rho[1]), float(rho[2])))


@dataclass
class PendulumState:
    """``q`` (unit quaternion, scalar first, body → inertial), spatial ``Ω``, and the
    terrace: ``level`` (``V_ε = level·ε``; ``None``: ``⌊V/ε⌋``) and ``on`` (``OFF_LEVEL``,
    or ``ON_LOWER``/``ON_UPPER`` right after a crossing: the flight starts on that
    level)."""

    q: np.ndarray
    omega: np.ndarray
    level: int | None = None
    on: int = OFF_LEVEL


@dataclass
class EnergySteppingRun:
    """The records of :func:`run_pendulum` (one row per recorded time) and the event
    statistics."""

    eps: float
    origin: float
    """``v₀``: the levels are ``v₀ + kε``."""
    t: np.ndarray
    q: np.ndarray
    omega: np.ndarray
    level: np.ndarray
    energy: np.ndarray
    """``E = T + V`` (moves by less than ``ε``)."""
    energy_eps: np.ndarray
    """``E_ε = T + V_ε`` (constant to round-off)."""
    potential: np.ndarray
    invariants: dict[str, np.ndarray]
    """``Rρ₀·Ω``, ``e₃·Ω`` (``diagnostics.pendulum_invariants``) per record."""
    n_events: int
    n_reflections: int
    max_energy_eps_deviation: float
    """``max |T + V_ε − E_ε(0)|`` over all events (not only the records)."""
    flight_times: np.ndarray
    """The self-chosen steps: the flight time before each event (the first
    ``keep_steps`` of them)."""
    final: PendulumState


def potential(q: np.ndarray, params: PendulumParams) -> np.ndarray:
    """``V = −m g e₃·Rρ₀`` for quaternions ``q (..., 4)``."""
    q = np.asarray(q, dtype=float)
    r0, r1, r2 = params.rho0
    q0, q1, q2, q3 = (q[..., i] for i in range(4))
    d = q0 * q0 - q1 * q1 - q2 * q2 - q3 * q3
    vb = 2.0 * (q1 * r0 + q2 * r1 + q3 * r2)
    u2 = d * r2 + vb * q3 + 2.0 * q0 * (q1 * r1 - q2 * r0)
    return -params.mg * u2


def _check(name: str, value: float, fix: str, positive: bool = True) -> float:
    v = float(value)
    if not math.isfinite(v) or (v <= 0.0 if positive else v < 0.0):
        raise ValueError(f"energy-stepping: {name} must be finite and "
                         f"{'> 0' if positive else '≥ 0'}, got {value!r}; {fix}")
    return v


def run_pendulum(state: PendulumState, params: PendulumParams, eps: float, t_end: float,
                 record_dt: float, *, origin: float | None = 0.0,
                 max_events: int | None = None, keep_steps: int = 0) -> EnergySteppingRun:
    """Energy-stepping of the pendulum from ``state`` over ``[0, t_end]``, records every
    ``record_dt`` (sampled exactly on the flights; a record at an event time shows the
    state before the jump).

    ``eps`` is the terrace height in energy units (``V_ε = ε⌊V/ε⌋``, §3.10).  Event by
    event: the closed-form crossing time (:func:`predict`), the exact flight, the jump
    (:func:`jump`).  ``T + V_ε`` is conserved to round-off, ``0 ≤ V − V_ε < ε`` (up to
    round-off at the levels), so ``|E − E₀| < ε`` for all time; ``Rρ₀·Ω`` and ``e₃·Ω`` are
    conserved to round-off.  ``max_events`` (default: none) stops the run with
    ``RuntimeError`` beyond that many events.
    """
    eps = _check("eps", eps, "pass a terrace height eps > 0 (e.g. 1e-3 of the energy "
                             "scale)")
    if origin is not None and not math.isfinite(float(origin)):
        raise ValueError(f"energy-stepping: origin must be finite or None, got {origin!r}; "
                         f"pass 0.0 (levels at kε) or None (start mid-terrace)")
    t_end = _check("t_end", t_end, "pass the duration t_end ≥ 0", positive=False)
    record_dt = _check("record_dt", record_dt, "pass a recording interval record_dt > 0")
    mg = _check("mg", params.mg, "m g is ≥ 0", positive=False)
    J = _check("J", params.J, "pass the inertia about the pivot J > 0")
    r0, r1, r2 = (float(v) for v in params.rho0)
    q = np.array(state.q, dtype=float).reshape(4)
    om = np.array(state.omega, dtype=float).reshape(3)
    if not (np.all(np.isfinite(q)) and np.all(np.isfinite(om))):
        raise ValueError("energy-stepping: the state must be finite; check q and omega")
    q /= np.linalg.norm(q)
    level, on = state.level, state.on
    v = float(potential(q, params))
    v0 = v - 0.5 * eps if origin is None else float(origin)
    if level is None:
        level = math.floor((v - v0) / eps)
        on = OFF_LEVEL
        if v == v0 + level * eps and mg > 0.0:  # exactly on a level: into the terrace it enters
            u = np.array(quat_rotate_t(q[0], q[1], q[2], q[3], r0, r1, r2))
            dvdt = -mg * (om[0] * u[1] - om[1] * u[0])
            if dvdt < 0.0:
                level, on = level - 1, ON_UPPER
            else:
                on = ON_LOWER
    n_rec = int(math.floor(t_end / record_dt)) + 1
    while n_rec > 1 and (n_rec - 1) * record_dt > t_end:
        n_rec -= 1
    rec_q = np.zeros((n_rec, 4))
    rec_om = np.zeros((n_rec, 3))
    rec_level = np.zeros(n_rec, dtype=np.int64)
    dts = np.zeros(max(int(keep_steps), 0))
    cap = np.iinfo(np.int64).max if max_events is None else int(max_events)
    status, level, on, events, refl, dev, _ = _run(
        q, om, np.int64(level), np.int64(on), mg, J, r0, r1, r2, eps, v0, t_end, record_dt,
        np.int64(cap), rec_q, rec_om, rec_level, dts)
    if status == STATUS_MAX_EVENTS:
        raise RuntimeError(f"energy-stepping: more than {cap} events before t = {t_end}; "
                           f"raise max_events or eps")
    if status == STATUS_STUCK:
        raise RuntimeError("energy-stepping: stuck at a tangency (events without flight); "
                           "perturb eps")
    pot = potential(rec_q, params)
    kin = 0.5 * J * np.einsum("nk,nk->n", rec_om, rec_om)
    inv = pendulum_invariants(rec_q, rec_om, np.array([r0, r1, r2]))
    return EnergySteppingRun(
        eps=eps, origin=v0, t=np.arange(n_rec) * record_dt, q=rec_q, omega=rec_om, level=rec_level,
        energy=kin + pot, energy_eps=kin + v0 + rec_level * eps, potential=pot,
        invariants={k: inv[k] for k in ("R_rho0_dot_omega", "e3_dot_omega")},
        n_events=int(events), n_reflections=int(refl), max_energy_eps_deviation=float(dev),
        flight_times=dts[:min(int(events), dts.shape[0])].copy(),
        final=PendulumState(q.copy(), om.copy(), int(level), int(on)))


__all__ = [
    "EnergySteppingRun",
    "PendulumParams",
    "PendulumState",
    "crossing_angle",
    "jump",
    "potential",
    "predict",
    "return_angle",
    "run_pendulum",
]
