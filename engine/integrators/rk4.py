"""Classical Runge–Kutta 4 on the first-order system (docs/physics.md §3.8b):
``ẋ = v``, ``v̇ = F/m``, ``q̇ = ½ (0, Ω) ⊗ q``, ``Ω̇ = RM/J`` — for non-spherical bodies
``L̇ = RM`` on the spatial angular momentum ``L = R𝕁RᵀΩ``, with ``Ω = R𝕁⁻¹RᵀL``.

The non-geometric baseline: the quaternion is not renormalised, so its drift off the
unit sphere (``‖RᵀR - I‖``) and the secular energy drift are there to be seen.
"""

from __future__ import annotations

from numba import njit

from ..forcefield import compute_forces_ws, new_scratch
from ..layout import ERR_SHAPE, F_NONSPHERICAL, OK
from ..potentials.friction import set_anchor_time
from ..rotations import quat_rotate_t
from .lgvi import mat_vec
from .verlet import state_shapes_ok


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _apply_inertia(A, i, q0, q1, q2, q3, b0, b1, b2):
    """``R̂ A[i] R̂ᵀ b`` with ``R̂ = R(q)/|q|²`` the rotation of a not-normalised ``q``."""
    n2 = q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3
    c0, c1, c2 = quat_rotate_t(q0, -q1, -q2, -q3, b0, b1, b2)
    d0, d1, d2 = mat_vec(A, i, c0, c1, c2)
    e0, e1, e2 = quat_rotate_t(q0, q1, q2, q3, d0, d1, d2)
    s = 1.0 / (n2 * n2)
    return e0 * s, e1 * s, e2 * s


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def _stage_rigid(c_next, weight, s0, s1, ff, work, h):
    """:func:`_stage` for bodies with an inertia tensor: the stage buffer's ``Ω`` slot
    holds ``L`` (``L₀`` is in ``work[4][3]``); ``q̇ = ½ (0, R̂𝕁⁻¹R̂ᵀL) ⊗ q``, ``L̇ = RM``."""
    x0, v0, q0 = s0[0], s0[1], s0[2]
    L0 = work[4][3]
    xs, vs, qs, Ls, Fs, RMs = s1[0], s1[1], s1[2], s1[3], s1[4], s1[5]
    ax, av, aq, ao = work[:4]
    m = ff[0]
    Ji = ff[11]
    n = x0.shape[0]
    final = not c_next > 0.0
    c = h / 6.0 if final else c_next * h
    for i in range(n):
        for k in range(3):
            kx = vs[i, k]
            ax[i, k] += weight * kx
            xs[i, k] = x0[i, k] + (c * ax[i, k] if final else c * kx)
            kv = Fs[i, k] / m[i]
            av[i, k] += weight * kv
            vs[i, k] = v0[i, k] + (c * av[i, k] if final else c * kv)
        p0, p1, p2, p3 = qs[i, 0], qs[i, 1], qs[i, 2], qs[i, 3]
        w0, w1, w2 = _apply_inertia(Ji, i, p0, p1, p2, p3, Ls[i, 0], Ls[i, 1], Ls[i, 2])
        kq0 = 0.5 * (-w0 * p1 - w1 * p2 - w2 * p3)
        kq1 = 0.5 * (w0 * p0 + w1 * p3 - w2 * p2)
        kq2 = 0.5 * (-w0 * p3 + w1 * p0 + w2 * p1)
        kq3 = 0.5 * (w0 * p2 - w1 * p1 + w2 * p0)
        aq[i, 0] += weight * kq0
        aq[i, 1] += weight * kq1
        aq[i, 2] += weight * kq2
        aq[i, 3] += weight * kq3
        if final:
            for k in range(4):
                qs[i, k] = q0[i, k] + c * aq[i, k]
        else:
            qs[i, 0] = q0[i, 0] + c * kq0
            qs[i, 1] = q0[i, 1] + c * kq1
            qs[i, 2] = q0[i, 2] + c * kq2
            qs[i, 3] = q0[i, 3] + c * kq3
        for k in range(3):
            kL = RMs[i, k]
            ao[i, k] += weight * kL
            Ls[i, k] = L0[i, k] + (c * ao[i, k] if final else c * kL)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _begin_stages(s0, s1, acc, o_start):
    """Stage 1 reads ``s0``: copy it into the stage buffer ``s1`` with its forces, the
    angular variable from ``o_start`` (``Ω`` for spheres, ``L`` otherwise), and zero
    the accumulators."""
    x0, v0, q0, o0, F0, RM0 = s0[:6]
    x1, v1, q1, o1, F1, RM1 = s1[:6]
    ax, av, aq, ao = acc[:4]
    if not (state_shapes_ok(s0) and state_shapes_ok(s1) and ax.shape[1] == 3
            and av.shape[1] == 3 and aq.shape[1] == 4 and ao.shape[1] == 3
            and o_start.shape[1] == 3):
        return  # (checked by the callers: this only tells the compiler the row lengths)
    for i in range(x0.shape[0]):
        for k in range(3):
            ax[i, k] = 0.0
            av[i, k] = 0.0
            ao[i, k] = 0.0
            x1[i, k] = x0[i, k]
            v1[i, k] = v0[i, k]
            o1[i, k] = o_start[i, k]
            F1[i, k] = F0[i, k]
            RM1[i, k] = RM0[i, k]
        for k in range(4):
            aq[i, k] = 0.0
            q1[i, k] = q0[i, k]


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def rk4_rigid_step_ws(h, s0, s1, ff, work, info, ws):
    """RK4 on ``(x, v, q, L)`` for non-spherical bodies (physics.md §3.8b)."""
    x0, v0, q0, o0, F0, RM0, e0 = s0[:7]
    x1, v1, q1, o1, F1, RM1, e1 = s1[:7]
    L0 = work[4][3]
    Jt = ff[10]
    Ji = ff[11]
    n = x0.shape[0]
    for i in range(n):
        L0[i, 0], L0[i, 1], L0[i, 2] = _apply_inertia(Jt, i, q0[i, 0], q0[i, 1], q0[i, 2],
                                                      q0[i, 3], o0[i, 0], o0[i, 1], o0[i, 2])
    _begin_stages(s0, s1, work, L0)
    # (four stages written out, as in rk4_step_ws, on purpose: a loop of stages made the
    # pendulum's RK4 step 30 % slower, bench_kernels.py, BENCHMARKS.md "Tried and not kept")
    set_anchor_time(ff, 0.5 * h)  # (history contacts: the stage's time)
    _stage_rigid(0.5, 1.0, s0, s1, ff, work, h)
    st = compute_forces_ws(x1, q1, ff, F1, RM1, e1, ws)
    if st != OK:
        return st
    set_anchor_time(ff, 0.5 * h)  # (history contacts: the stage's time)
    _stage_rigid(0.5, 2.0, s0, s1, ff, work, h)
    st = compute_forces_ws(x1, q1, ff, F1, RM1, e1, ws)
    if st != OK:
        return st
    set_anchor_time(ff, 1.0 * h)  # (history contacts: the stage's time)
    _stage_rigid(1.0, 2.0, s0, s1, ff, work, h)
    st = compute_forces_ws(x1, q1, ff, F1, RM1, e1, ws)
    if st != OK:
        return st
    set_anchor_time(ff, 1.0 * h)  # (history contacts: the stage's time)
    _stage_rigid(-1.0, 1.0, s0, s1, ff, work, h)
    st = compute_forces_ws(x1, q1, ff, F1, RM1, e1, ws)
    for i in range(n):
        o1[i, 0], o1[i, 1], o1[i, 2] = _apply_inertia(Ji, i, q1[i, 0], q1[i, 1], q1[i, 2],
                                                      q1[i, 3], o1[i, 0], o1[i, 1], o1[i, 2])
    return st


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _stage(c_next, weight, s0, s1, ff, work, h):
    """Derivatives ``k`` at the stage state held in ``s1`` (forces already there);
    ``acc += weight k``; then ``s1 ← s0 + c_next h k`` (or, for ``c_next < 0``, the
    final combination ``s0 + h/6 acc``).

    One loop per variable, so that each vectorises; ``x`` goes before ``v`` and ``q``
    before ``Ω``, whose stage values they read."""
    x0, v0, q0, o0, F0, RM0, e0 = s0[:7]
    xs, vs, qs, os_, Fs, RMs, es = s1[:7]
    ax, av, aq, ao = work[:4]
    if not (state_shapes_ok(s0) and state_shapes_ok(s1) and ax.shape[1] == 3
            and av.shape[1] == 3 and aq.shape[1] == 4 and ao.shape[1] == 3):
        return  # (checked by the caller: this only tells the compiler the row lengths)
    m, J = ff[0], ff[1]
    n = x0.shape[0]
    final = not c_next > 0.0
    c = h / 6.0 if final else c_next * h
    for i in range(n):
        for k in range(3):
            kx = vs[i, k]
            ax[i, k] += weight * kx
            xs[i, k] = x0[i, k] + (c * ax[i, k] if final else c * kx)
    for i in range(n):
        im = 1.0 / m[i]
        for k in range(3):
            kv = Fs[i, k] * im
            av[i, k] += weight * kv
            vs[i, k] = v0[i, k] + (c * av[i, k] if final else c * kv)
    for i in range(n):
        # q̇ = ½ (0, Ω) ⊗ q
        w0, w1, w2 = os_[i, 0], os_[i, 1], os_[i, 2]
        p0, p1, p2, p3 = qs[i, 0], qs[i, 1], qs[i, 2], qs[i, 3]
        kq0 = 0.5 * (-w0 * p1 - w1 * p2 - w2 * p3)
        kq1 = 0.5 * (w0 * p0 + w1 * p3 - w2 * p2)
        kq2 = 0.5 * (-w0 * p3 + w1 * p0 + w2 * p1)
        kq3 = 0.5 * (w0 * p2 - w1 * p1 + w2 * p0)
        aq[i, 0] += weight * kq0
        aq[i, 1] += weight * kq1
        aq[i, 2] += weight * kq2
        aq[i, 3] += weight * kq3
        if final:
            for k in range(4):
                qs[i, k] = q0[i, k] + c * aq[i, k]
        else:
            qs[i, 0] = q0[i, 0] + c * kq0
            qs[i, 1] = q0[i, 1] + c * kq1
            qs[i, 2] = q0[i, 2] + c * kq2
            qs[i, 3] = q0[i, 3] + c * kq3
    for i in range(n):
        iJ = 1.0 / J[i]
        for k in range(3):
            ko = RMs[i, k] * iJ
            ao[i, k] += weight * ko
            os_[i, k] = o0[i, k] + (c * ao[i, k] if final else c * ko)


@njit(nogil=True, cache=True)
def rk4_step(h, s0, s1, ff, work, info):
    """``y₁ = y₀ + h/6 (k₁ + 2k₂ + 2k₃ + k₄)``; four force evaluations per step (the one
    at ``y₁`` is reused as ``k₁`` of the next step)."""
    if ff[3][F_NONSPHERICAL]:
        return rk4_rigid_step_ws(h, s0, s1, ff, work, info, new_scratch(s0[0].shape[0], ff))
    return rk4_step_ws(h, s0, s1, ff, work, info, new_scratch(s0[0].shape[0], ff))


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def rk4_step_ws(h, s0, s1, ff, work, info, ws):
    """:func:`rk4_step` with the force field's scratch ``ws`` supplied (spheres; the
    caller dispatches non-spherical bodies to :func:`rk4_rigid_step_ws`)."""
    acc = work[:4]  # (the accumulators only: a small tuple to pass to _stage)
    ax, av, aq, ao = acc
    if not (state_shapes_ok(s0) and state_shapes_ok(s1) and ax.shape[1] == 3
            and av.shape[1] == 3 and aq.shape[1] == 4 and ao.shape[1] == 3):
        return ERR_SHAPE
    x0, v0, q0, o0, F0, RM0, e0 = s0[:7]
    x1, v1, q1, o1, F1, RM1, e1 = s1[:7]
    _begin_stages(s0, s1, acc, o0)
    # (four stages written out, as in rk4_rigid_step_ws, on purpose: a loop of stages made
    # the pendulum's RK4 step 30 % slower, bench_kernels.py, BENCHMARKS.md "Tried and not kept")
    set_anchor_time(ff, 0.5 * h)  # (history contacts: the stage's time)
    _stage(0.5, 1.0, s0, s1, ff, acc, h)
    st = compute_forces_ws(x1, q1, ff, F1, RM1, e1, ws)
    if st != OK:
        return st
    set_anchor_time(ff, 0.5 * h)  # (history contacts: the stage's time)
    _stage(0.5, 2.0, s0, s1, ff, acc, h)
    st = compute_forces_ws(x1, q1, ff, F1, RM1, e1, ws)
    if st != OK:
        return st
    set_anchor_time(ff, 1.0 * h)  # (history contacts: the stage's time)
    _stage(1.0, 2.0, s0, s1, ff, acc, h)
    st = compute_forces_ws(x1, q1, ff, F1, RM1, e1, ws)
    if st != OK:
        return st
    set_anchor_time(ff, 1.0 * h)  # (history contacts: the stage's time)
    _stage(-1.0, 1.0, s0, s1, ff, acc, h)
    return compute_forces_ws(x1, q1, ff, F1, RM1, e1, ws)
