"""The drift, kick and attitude pieces that Campello's explicit scheme and the Moreau
schemes share (issue #34 §4): each is one loop over bodies with no branch, so that it
vectorises, inlined into the step kernels (the same operations in the same order as
the loops they replace: the same bits)."""

from __future__ import annotations

from numba import njit

from ..forcefield import compute_forces_ws
from ..layout import OK
from ..rotations import quat_from_rrp_t, quat_mul_t
from .verlet import kick_velocities, renormalise_quats


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def drift(c, x0, v, x1):
    """``x₁ = x₀ + c v`` for every body (B&G eq. (27); CEL §3's half drifts)."""
    for i in range(x0.shape[0]):
        for k in range(3):
            x1[i, k] = x0[i, k] + c * v[i, k]


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def kick(c, m, J, v0, o0, F, RM, v1, o1):
    """``v₁ = v₀ + (c/m) F``, ``Ω₁ = Ω₀ + (c/J) RM`` for every body (CEL §3 and eq. (12)
    with ``P = 0``; Campello's step keeps its two loops: one per update was faster there,
    benchmarks/results/dedup_kernels_2026-11-28.txt)."""
    # (verlet._drift_chunk/_kick_chunk repeat this loop fused with their own work, on
    # purpose: one pass over a chunk of a large model, bench_pile_scale.py)
    for i in range(v0.shape[0]):
        a = c / m[i]
        b = c / J[i]
        for k in range(3):
            v1[i, k] = v0[i, k] + a * F[i, k]
            o1[i, k] = o0[i, k] + b * RM[i, k]


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def rotate_rrp(c, w, q0, q1):
    """``q₁ = q(Δα) ⊗ q₀`` with ``Δα = c w`` for every body (the RRP map, B&G eq. (25)),
    renormalised."""
    for i in range(q0.shape[0]):
        d = quat_from_rrp_t(c * w[i, 0], c * w[i, 1], c * w[i, 2])
        q1[i, 0], q1[i, 1], q1[i, 2], q1[i, 3] = quat_mul_t(
            d[0], d[1], d[2], d[3], q0[i, 0], q0[i, 1], q0[i, 2], q0[i, 3])
    renormalise_quats(q1)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def forces_and_kick(h, s0, s1, ff, ws):
    """The end of a velocity-Verlet step on the new node ``s1`` (``x₁`` and ``q₁``
    written): ``q₁`` renormalised, the forces at the node, then ``v₁ = v₀ + h/(2m)(F₀ +
    F₁)`` (LLM eqs. (92), (95); physics.md §3.5–3.7: ``lgvi``, ``rrp-implicit``, the PFC
    schemes).  Returns the force evaluation's status (``v₁`` untouched unless ``OK``)."""
    x1, v1, q1, F1, RM1, e1 = s1[0], s1[1], s1[2], s1[4], s1[5], s1[6]
    renormalise_quats(q1)
    st = compute_forces_ws(x1, q1, ff, F1, RM1, e1, ws)
    if st == OK:
        kick_velocities(h, ff[0], s0[1], s0[4], F1, v1)
    return st
