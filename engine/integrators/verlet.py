"""The velocity-Verlet family for spheres: ``rrp-exact``, ``rrp-newmark``, ``pfc-verlet``.

All three share the translational update and the half kicks of the spin; they differ
only in the map that turns the mid-step spin ``w`` into the attitude increment:

* ``rrp-exact``   (B&G eq. (23)): ``Δα = 2h/(1 + sqrt(1 - h²|w|²)) w``, requires ``h|w| < 1``;
* ``rrp-newmark`` (B&G eq. (25)): ``Δα = h w``;
* ``pfc-verlet``  (PFC balls):    exact exponential, rotation by ``h|w|`` about ``w``.
"""

from __future__ import annotations

import math

from numba import njit

from ..forcefield import compute_forces
from ..layout import ERR_RRP_LIMIT, OK
from ..rotations import quat_from_rotvec_t, quat_from_rrp_t, quat_mul_t

ROT_RRP_EXACT = 0
ROT_RRP_NEWMARK = 1
ROT_EXPONENTIAL = 2


@njit(nogil=True, cache=True)
def verlet_step(h, rot_map, s0, s1, ff, info):
    """One step ``s0 → s1`` (docs/physics.md §3.1, §3.2, §3.4):

    ``x₁ = x₀ + h v₀ + h²/(2m) F₀``, ``w = Ω₀ + h/(2J) RM₀``, ``q₁ = q(Δ(w)) ⊗ q₀``,
    ``v₁ = v₀ + h/(2m)(F₀ + F₁)``, ``Ω₁ = w + h/(2J) RM₁`` (B&G eqs. (23a)–(23e)).

    ``rrp-exact`` checks ``h|w| < 1`` for every body before touching ``s1``; on failure
    it returns ``ERR_RRP_LIMIT`` with ``info = (body, h|w|, |w|)``.
    """
    x0, v0, q0, o0, F0, RM0, e0 = s0
    x1, v1, q1, o1, F1, RM1, e1 = s1
    m = ff[0]
    J = ff[1]
    n = x0.shape[0]
    hh = 0.5 * h
    for i in range(n):
        c = hh / J[i]
        for k in range(3):
            o1[i, k] = o0[i, k] + c * RM0[i, k]  # w, the mid-step spin
    if rot_map == ROT_RRP_EXACT:
        for i in range(n):
            wn = math.sqrt(o1[i, 0] ** 2 + o1[i, 1] ** 2 + o1[i, 2] ** 2)
            if not h * wn < 1.0:
                info[0] = i
                info[1] = h * wn
                info[2] = wn
                return ERR_RRP_LIMIT
    for i in range(n):
        c = h * hh / m[i]
        for k in range(3):
            x1[i, k] = x0[i, k] + h * v0[i, k] + c * F0[i, k]
        w0 = o1[i, 0]
        w1 = o1[i, 1]
        w2 = o1[i, 2]
        if rot_map == ROT_EXPONENTIAL:
            d = quat_from_rotvec_t(h * w0, h * w1, h * w2)
        else:
            if rot_map == ROT_RRP_EXACT:
                hw2 = h * h * (w0 * w0 + w1 * w1 + w2 * w2)
                f = 2.0 * h / (1.0 + math.sqrt(1.0 - hw2))  # B&G eq. (16), h|w| < 1
            else:
                f = h
            d = quat_from_rrp_t(f * w0, f * w1, f * w2)
        q1[i, 0], q1[i, 1], q1[i, 2], q1[i, 3] = quat_mul_t(
            d[0], d[1], d[2], d[3], q0[i, 0], q0[i, 1], q0[i, 2], q0[i, 3]
        )
    st = compute_forces(x1, q1, ff, F1, RM1, e1)
    if st != OK:
        return st
    for i in range(n):
        cv = hh / m[i]
        co = hh / J[i]
        for k in range(3):
            v1[i, k] = v0[i, k] + cv * (F0[i, k] + F1[i, k])
            o1[i, k] = o1[i, k] + co * RM1[i, k]
    return OK
