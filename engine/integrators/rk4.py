"""Classical Runge–Kutta 4 on the first-order system (docs/physics.md §3.8b):
``ẋ = v``, ``v̇ = F/m``, ``q̇ = ½ (0, Ω) ⊗ q``, ``Ω̇ = RM/J``.

The non-geometric baseline: the quaternion is not renormalised, so its drift off the
unit sphere (``‖RᵀR - I‖``) and the secular energy drift are there to be seen.
"""

from __future__ import annotations

from numba import njit

from ..forcefield import compute_forces
from ..layout import OK


@njit(nogil=True, cache=True)
def _stage(c_next, weight, s0, s1, ff, work, h):
    """Derivatives ``k`` at the stage state held in ``s1`` (forces already there);
    ``acc += weight k``; then ``s1 ← s0 + c_next h k`` (or, for ``c_next < 0``, the
    final combination ``s0 + h/6 acc``)."""
    x0, v0, q0, o0, F0, RM0, e0 = s0
    xs, vs, qs, os_, Fs, RMs, es = s1
    ax, av, aq, ao = work
    m = ff[0]
    J = ff[1]
    for i in range(x0.shape[0]):
        im = 1.0 / m[i]
        iJ = 1.0 / J[i]
        # q̇ = ½ (0, Ω) ⊗ q
        w0, w1, w2 = os_[i, 0], os_[i, 1], os_[i, 2]
        p0, p1, p2, p3 = qs[i, 0], qs[i, 1], qs[i, 2], qs[i, 3]
        kq0 = 0.5 * (-w0 * p1 - w1 * p2 - w2 * p3)
        kq1 = 0.5 * (w0 * p0 + w1 * p3 - w2 * p2)
        kq2 = 0.5 * (-w0 * p3 + w1 * p0 + w2 * p1)
        kq3 = 0.5 * (w0 * p2 - w1 * p1 + w2 * p0)
        kx0, kx1, kx2 = vs[i, 0], vs[i, 1], vs[i, 2]
        kv0, kv1, kv2 = Fs[i, 0] * im, Fs[i, 1] * im, Fs[i, 2] * im
        ko0, ko1, ko2 = RMs[i, 0] * iJ, RMs[i, 1] * iJ, RMs[i, 2] * iJ
        ax[i, 0] += weight * kx0
        ax[i, 1] += weight * kx1
        ax[i, 2] += weight * kx2
        av[i, 0] += weight * kv0
        av[i, 1] += weight * kv1
        av[i, 2] += weight * kv2
        ao[i, 0] += weight * ko0
        ao[i, 1] += weight * ko1
        ao[i, 2] += weight * ko2
        aq[i, 0] += weight * kq0
        aq[i, 1] += weight * kq1
        aq[i, 2] += weight * kq2
        aq[i, 3] += weight * kq3
        if c_next > 0.0:
            c = c_next * h
            xs[i, 0] = x0[i, 0] + c * kx0
            xs[i, 1] = x0[i, 1] + c * kx1
            xs[i, 2] = x0[i, 2] + c * kx2
            vs[i, 0] = v0[i, 0] + c * kv0
            vs[i, 1] = v0[i, 1] + c * kv1
            vs[i, 2] = v0[i, 2] + c * kv2
            os_[i, 0] = o0[i, 0] + c * ko0
            os_[i, 1] = o0[i, 1] + c * ko1
            os_[i, 2] = o0[i, 2] + c * ko2
            qs[i, 0] = q0[i, 0] + c * kq0
            qs[i, 1] = q0[i, 1] + c * kq1
            qs[i, 2] = q0[i, 2] + c * kq2
            qs[i, 3] = q0[i, 3] + c * kq3
        else:
            c = h / 6.0
            for k in range(3):
                xs[i, k] = x0[i, k] + c * ax[i, k]
                vs[i, k] = v0[i, k] + c * av[i, k]
                os_[i, k] = o0[i, k] + c * ao[i, k]
            for k in range(4):
                qs[i, k] = q0[i, k] + c * aq[i, k]


@njit(nogil=True, cache=True)
def rk4_step(h, s0, s1, ff, work, info):
    """``y₁ = y₀ + h/6 (k₁ + 2k₂ + 2k₃ + k₄)``; four force evaluations per step (the one
    at ``y₁`` is reused as ``k₁`` of the next step)."""
    x0, v0, q0, o0, F0, RM0, e0 = s0
    x1, v1, q1, o1, F1, RM1, e1 = s1
    for a in work:
        a[:, :] = 0.0
    # stage 1 reads s0: copy it into the stage buffer together with its forces
    x1[:, :] = x0
    v1[:, :] = v0
    q1[:, :] = q0
    o1[:, :] = o0
    F1[:, :] = F0
    RM1[:, :] = RM0
    _stage(0.5, 1.0, s0, s1, ff, work, h)
    st = compute_forces(x1, q1, ff, F1, RM1, e1)
    if st != OK:
        return st
    _stage(0.5, 2.0, s0, s1, ff, work, h)
    st = compute_forces(x1, q1, ff, F1, RM1, e1)
    if st != OK:
        return st
    _stage(1.0, 2.0, s0, s1, ff, work, h)
    st = compute_forces(x1, q1, ff, F1, RM1, e1)
    if st != OK:
        return st
    _stage(-1.0, 1.0, s0, s1, ff, work, h)
    return compute_forces(x1, q1, ff, F1, RM1, e1)
