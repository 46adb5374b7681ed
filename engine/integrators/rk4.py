"""Classical Runge–Kutta 4 on the first-order system (docs/physics.md §3.8b):
``ẋ = v``, ``v̇ = F/m``, ``q̇ = ½ (0, Ω) ⊗ q``, ``Ω̇ = RM/J``.

The non-geometric baseline: the quaternion is not renormalised, so its drift off the
unit sphere (``‖RᵀR - I‖``) and the secular energy drift are there to be seen.
"""

from __future__ import annotations

from numba import njit

from ..forcefield import compute_forces_ws, new_scratch
from ..layout import ERR_SHAPE, OK
from .verlet import state_shapes_ok


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def _stage(c_next, weight, s0, s1, ff, work, h):
    """Derivatives ``k`` at the stage state held in ``s1`` (forces already there);
    ``acc += weight k``; then ``s1 ← s0 + c_next h k`` (or, for ``c_next < 0``, the
    final combination ``s0 + h/6 acc``).

    One loop per variable, so that each vectorises; ``x`` goes before ``v`` and ``q``
    before ``Ω``, whose stage values they read."""
    x0, v0, q0, o0, F0, RM0, e0 = s0
    xs, vs, qs, os_, Fs, RMs, es = s1
    ax, av, aq, ao = work
    if not (state_shapes_ok(s0) and state_shapes_ok(s1) and ax.shape[1] == 3
            and av.shape[1] == 3 and aq.shape[1] == 4 and ao.shape[1] == 3):
        return  # (checked by the caller: this only tells the compiler the row lengths)
    m = ff[0]
    J = ff[1]
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
    return rk4_step_ws(h, s0, s1, ff, work, info, new_scratch(s0[0].shape[0]))


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def rk4_step_ws(h, s0, s1, ff, work, info, ws):
    """:func:`rk4_step` with the force field's scratch ``ws`` supplied."""
    ax, av, aq, ao = work
    if not (state_shapes_ok(s0) and state_shapes_ok(s1) and ax.shape[1] == 3
            and av.shape[1] == 3 and aq.shape[1] == 4 and ao.shape[1] == 3):
        return ERR_SHAPE
    x0, v0, q0, o0, F0, RM0, e0 = s0
    x1, v1, q1, o1, F1, RM1, e1 = s1
    n = x0.shape[0]
    # stage 1 reads s0: copy it into the stage buffer together with its forces
    for i in range(n):
        for k in range(3):
            ax[i, k] = 0.0
            av[i, k] = 0.0
            ao[i, k] = 0.0
            x1[i, k] = x0[i, k]
            v1[i, k] = v0[i, k]
            o1[i, k] = o0[i, k]
            F1[i, k] = F0[i, k]
            RM1[i, k] = RM0[i, k]
        for k in range(4):
            aq[i, k] = 0.0
            q1[i, k] = q0[i, k]
    _stage(0.5, 1.0, s0, s1, ff, work, h)
    st = compute_forces_ws(x1, q1, ff, F1, RM1, e1, ws)
    if st != OK:
        return st
    _stage(0.5, 2.0, s0, s1, ff, work, h)
    st = compute_forces_ws(x1, q1, ff, F1, RM1, e1, ws)
    if st != OK:
        return st
    _stage(1.0, 2.0, s0, s1, ff, work, h)
    st = compute_forces_ws(x1, q1, ff, F1, RM1, e1, ws)
    if st != OK:
        return st
    _stage(-1.0, 1.0, s0, s1, ff, work, h)
    return compute_forces_ws(x1, q1, ff, F1, RM1, e1, ws)
