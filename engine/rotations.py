"""Rotations: rescaled Rodrigues parameters (RRP), unit quaternions, matrices.

Conventions (docs/physics.md §2):

* ``α = 2 tan(|θ|/2) θ/|θ|`` for a rotation vector ``θ``;
* ``R(α) = I + 4/(4 + |α|²) (S(α) + ½ S(α)²)``                      (B&G eq. (6));
* ``α₁ ⊕ α₂ = 4/(4 - α₁·α₂) (α₁ + α₂ - ½ α₁ × α₂)`` with
  ``R(α₁ ⊕ α₂) = R(α₂) R(α₁)``                                      (B&G eq. (8));
* ``|θ| = 2 arctan(|α|/2)``; ``q = (2, α)/sqrt(4 + |α|²)`` (scalar first), ``α = 2 q_v/q₀``.

The stored attitude of a body is a unit quaternion (it never meets the RRP singularity
at ``|θ| = π``); RRP are used for the *increments* ``Δα``, which stay small.  Updating
``q ← q(Δα) ⊗ q`` is exactly the paper's ``α ← α ⊕ Δα``.

Two layers:

* scalar kernels returning tuples (``*_t``), for use inside other Numba kernels without
  allocating;
* array functions over any leading shape (``(..., 3)``, ``(..., 4)``, ``(..., 3, 3)``),
  compiled loops over bodies, for users, diagnostics and tests.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

JIT = dict(nogil=True, cache=True, fastmath=False)
# for kernels whose divisors cannot vanish: no zero-division check, so that loops calling
# them can be vectorised (the results are the same)
JIT_NOCHECK = dict(JIT, error_model="numpy")

# --------------------------------------------------------------------------------------
# scalar kernels (tuples in, tuples out)
# --------------------------------------------------------------------------------------


@njit(**JIT)
def quat_mul_t(p0, p1, p2, p3, q0, q1, q2, q3):
    """Hamilton product ``p ⊗ q`` (scalar first); ``R(p ⊗ q) = R(p) R(q)``."""
    return (
        p0 * q0 - p1 * q1 - p2 * q2 - p3 * q3,
        p0 * q1 + p1 * q0 + p2 * q3 - p3 * q2,
        p0 * q2 - p1 * q3 + p2 * q0 + p3 * q1,
        p0 * q3 + p1 * q2 - p2 * q1 + p3 * q0,
    )


@njit(**JIT_NOCHECK)
def quat_from_rrp_t(a0, a1, a2):
    """``q = (2, α)/sqrt(4 + |α|²)`` (docs/physics.md §2)."""
    s = 1.0 / math.sqrt(4.0 + a0 * a0 + a1 * a1 + a2 * a2)
    return 2.0 * s, a0 * s, a1 * s, a2 * s


@njit(**JIT)
def quat_from_rotvec_t(t0, t1, t2):
    """Exponential map: ``q = (cos(|θ|/2), sin(|θ|/2) θ/|θ|)``."""
    ang = math.sqrt(t0 * t0 + t1 * t1 + t2 * t2)
    half = 0.5 * ang
    if ang < 1e-8:
        # sin(x/2)/x = 1/2 - x²/48 + ...
        s = 0.5 - ang * ang / 48.0
    else:
        s = math.sin(half) / ang
    return math.cos(half), s * t0, s * t1, s * t2


# arctan(t)/t = Σ_k A_k z^k, z = t², for 0 ≤ z ≤ 1/4: the Taylor series Σ (-z)^k/(2k+1)
# economised on [0, 1/4] to degree 13 (Chebyshev truncation, computed in exact rational
# arithmetic, dropped terms < 3e-19); relative error of the evaluation below ≤ 0.7 ulp.
ATAN_RATIO_MAX_Z = 0.25
_A0 = 1.0
_A1 = -0.33333333333333304
_A2 = 0.1999999999999162
_A3 = -0.1428571428484656
_A4 = 0.11111111064130849
_A5 = -0.09090907563179595
_A6 = 0.07692275391062812
_A7 = -0.06666200739430009
_A8 = 0.05877634398131557
_A9 = -0.05229107846668279
_A10 = 0.04586230843664602
_A11 = -0.03704465876696775
_A12 = 0.023555353029524356
_A13 = -0.008306196441837605


@njit(**JIT)
def atan_ratio_t(z):
    """``arctan(t)/t`` for ``z = t² ∈ [0, 1/4]`` (a polynomial: no division, no branch,
    so that loops calling it vectorise)."""
    p = _A13
    p = _A12 + z * p
    p = _A11 + z * p
    p = _A10 + z * p
    p = _A9 + z * p
    p = _A8 + z * p
    p = _A7 + z * p
    p = _A6 + z * p
    p = _A5 + z * p
    p = _A4 + z * p
    p = _A3 + z * p
    p = _A2 + z * p
    p = _A1 + z * p
    return _A0 + z * p


@njit(**JIT)
def rotvec_from_quat_t(q0, q1, q2, q3):
    """Rotation vector of the rotation ``q`` with ``|θ| ≤ π`` (the shorter way round).

    ``|θ| = 2 arctan(|α|/2)`` with ``α = 2 q_v/q₀`` (docs/physics.md §2).  For
    ``|q_v| < q₀/2`` (``|θ| < 2 arctan(1/2) ≈ 53.1°``, beyond the binder's working range)
    the factor ``θ/q_v = (2/q₀) arctan(t)/t``, ``t = |q_v|/q₀``, comes from the polynomial
    :func:`atan_ratio_t` (accurate to round-off, no sqrt, no atan2); otherwise
    ``2 atan2(|q_v|, |q₀|)``, finite through ``|θ| = π``.
    """
    if q0 < 0.0:
        q0, q1, q2, q3 = -q0, -q1, -q2, -q3
    s2 = q1 * q1 + q2 * q2 + q3 * q3
    if s2 < ATAN_RATIO_MAX_Z * q0 * q0:
        iq = 1.0 / q0
        f = 2.0 * iq * atan_ratio_t(s2 * iq * iq)
    else:
        nv = math.sqrt(s2)
        f = 2.0 * math.atan2(nv, q0) / nv
    return f * q1, f * q2, f * q3


@njit(**JIT)
def quat_to_matrix_t(q0, q1, q2, q3):
    """``R = (q₀² - |q_v|²) I + 2 q_v q_vᵀ + 2 q₀ S(q_v)``, row-major 9-tuple.

    Deliberately not divided by ``|q|²``: a drift of the stored quaternion off the unit
    sphere shows up as ``‖RᵀR - I‖ ≈ 2 ||q|² - 1|`` (the orthogonality diagnostic).
    """
    d = q0 * q0 - q1 * q1 - q2 * q2 - q3 * q3
    return (
        d + 2.0 * q1 * q1, 2.0 * (q1 * q2 - q0 * q3), 2.0 * (q1 * q3 + q0 * q2),
        2.0 * (q2 * q1 + q0 * q3), d + 2.0 * q2 * q2, 2.0 * (q2 * q3 - q0 * q1),
        2.0 * (q3 * q1 - q0 * q2), 2.0 * (q3 * q2 + q0 * q1), d + 2.0 * q3 * q3,
    )


@njit(**JIT)
def quat_rotate_t(q0, q1, q2, q3, b0, b1, b2):
    """``R(q) b`` without forming the matrix (same unnormalised form as above)."""
    # t = 2 q_v × b ; R b = (q0² - |q_v|²) b + 2 (q_v·b) q_v + 2 q0 q_v × b
    d = q0 * q0 - q1 * q1 - q2 * q2 - q3 * q3
    vb = 2.0 * (q1 * b0 + q2 * b1 + q3 * b2)
    c0 = q2 * b2 - q3 * b1
    c1 = q3 * b0 - q1 * b2
    c2 = q1 * b1 - q2 * b0
    return (
        d * b0 + vb * q1 + 2.0 * q0 * c0,
        d * b1 + vb * q2 + 2.0 * q0 * c1,
        d * b2 + vb * q3 + 2.0 * q0 * c2,
    )


@njit(**JIT)
def compose_rrp_t(a0, a1, a2, b0, b1, b2):
    """``α ⊕ β = 4/(4 - α·β) (α + β - ½ α × β)``: first ``α``, then ``β`` (B&G eq. (8))."""
    c = 4.0 / (4.0 - (a0 * b0 + a1 * b1 + a2 * b2))
    return (
        c * (a0 + b0 - 0.5 * (a1 * b2 - a2 * b1)),
        c * (a1 + b1 - 0.5 * (a2 * b0 - a0 * b2)),
        c * (a2 + b2 - 0.5 * (a0 * b1 - a1 * b0)),
    )


@njit(**JIT)
def rrp_to_matrix_t(a0, a1, a2):
    """``R(α) = I + 4/(4 + |α|²) (S(α) + ½ S(α)²)`` (B&G eq. (6)), no trigonometry."""
    c = 4.0 / (4.0 + a0 * a0 + a1 * a1 + a2 * a2)
    # S² = α αᵀ - |α|² I
    n2 = a0 * a0 + a1 * a1 + a2 * a2
    h = 0.5 * c
    return (
        1.0 + h * (a0 * a0 - n2), c * (-a2) + h * a0 * a1, c * a1 + h * a0 * a2,
        c * a2 + h * a1 * a0, 1.0 + h * (a1 * a1 - n2), c * (-a0) + h * a1 * a2,
        c * (-a1) + h * a2 * a0, c * a0 + h * a2 * a1, 1.0 + h * (a2 * a2 - n2),
    )


# --------------------------------------------------------------------------------------
# array kernels: loops over bodies, (N, 3) / (N, 4) / (N, 3, 3)
# --------------------------------------------------------------------------------------


@njit(**JIT)
def _rrp_to_matrix_n(a, out):
    for i in range(a.shape[0]):
        r = rrp_to_matrix_t(a[i, 0], a[i, 1], a[i, 2])
        for k in range(9):
            out[i, k // 3, k % 3] = r[k]


@njit(**JIT)
def _quat_to_matrix_n(q, out):
    for i in range(q.shape[0]):
        r = quat_to_matrix_t(q[i, 0], q[i, 1], q[i, 2], q[i, 3])
        for k in range(9):
            out[i, k // 3, k % 3] = r[k]


@njit(**JIT)
def _compose_rrp_n(a, b, out):
    for i in range(a.shape[0]):
        c = compose_rrp_t(a[i, 0], a[i, 1], a[i, 2], b[i, 0], b[i, 1], b[i, 2])
        out[i, 0], out[i, 1], out[i, 2] = c


@njit(**JIT)
def _quat_from_rrp_n(a, out):
    for i in range(a.shape[0]):
        out[i, 0], out[i, 1], out[i, 2], out[i, 3] = quat_from_rrp_t(a[i, 0], a[i, 1], a[i, 2])


@njit(**JIT)
def _quat_from_rotvec_n(t, out):
    for i in range(t.shape[0]):
        out[i, 0], out[i, 1], out[i, 2], out[i, 3] = quat_from_rotvec_t(t[i, 0], t[i, 1], t[i, 2])


@njit(**JIT)
def _rotvec_from_quat_n(q, out):
    for i in range(q.shape[0]):
        out[i, 0], out[i, 1], out[i, 2] = rotvec_from_quat_t(q[i, 0], q[i, 1], q[i, 2], q[i, 3])


@njit(**JIT)
def _quat_mul_n(p, q, out):
    for i in range(p.shape[0]):
        out[i, 0], out[i, 1], out[i, 2], out[i, 3] = quat_mul_t(
            p[i, 0], p[i, 1], p[i, 2], p[i, 3], q[i, 0], q[i, 1], q[i, 2], q[i, 3]
        )


@njit(**JIT)
def _matrix_to_quat_n(r, out):
    """Shepperd's method: pivot on the largest of q₀², q₁², q₂², q₃²; q₀ ≥ 0."""
    for i in range(r.shape[0]):
        m = r[i]
        tr = m[0, 0] + m[1, 1] + m[2, 2]
        d0 = 1.0 + tr
        d1 = 1.0 + m[0, 0] - m[1, 1] - m[2, 2]
        d2 = 1.0 - m[0, 0] + m[1, 1] - m[2, 2]
        d3 = 1.0 - m[0, 0] - m[1, 1] + m[2, 2]
        if d0 >= d1 and d0 >= d2 and d0 >= d3:
            s = 2.0 * math.sqrt(d0)
            q0 = 0.25 * s
            q1 = (m[2, 1] - m[1, 2]) / s
            q2 = (m[0, 2] - m[2, 0]) / s
            q3 = (m[1, 0] - m[0, 1]) / s
        elif d1 >= d2 and d1 >= d3:
            s = 2.0 * math.sqrt(d1)
            q0 = (m[2, 1] - m[1, 2]) / s
            q1 = 0.25 * s
            q2 = (m[0, 1] + m[1, 0]) / s
            q3 = (m[0, 2] + m[2, 0]) / s
        elif d2 >= d3:
            s = 2.0 * math.sqrt(d2)
            q0 = (m[0, 2] - m[2, 0]) / s
            q1 = (m[0, 1] + m[1, 0]) / s
            q2 = 0.25 * s
            q3 = (m[1, 2] + m[2, 1]) / s
        else:
            s = 2.0 * math.sqrt(d3)
            q0 = (m[1, 0] - m[0, 1]) / s
            q1 = (m[0, 2] + m[2, 0]) / s
            q2 = (m[1, 2] + m[2, 1]) / s
            q3 = 0.25 * s
        if q0 < 0.0:
            q0, q1, q2, q3 = -q0, -q1, -q2, -q3
        out[i, 0], out[i, 1], out[i, 2], out[i, 3] = q0, q1, q2, q3


# --------------------------------------------------------------------------------------
# public array API (any leading shape)
# --------------------------------------------------------------------------------------


def _flat(a: np.ndarray, tail: tuple[int, ...]) -> tuple[np.ndarray, tuple[int, ...]]:
    a = np.ascontiguousarray(a, dtype=np.float64)
    if a.shape[a.ndim - len(tail):] != tail:
        raise ValueError(f"expected an array of shape (..., {', '.join(map(str, tail))}), "
                         f"got {a.shape}")
    lead = a.shape[: a.ndim - len(tail)]
    return a.reshape((-1, *tail)), lead


def _map(kernel, a: np.ndarray, tail: tuple[int, ...], out_tail: tuple[int, ...]) -> np.ndarray:
    """``kernel(a, out)`` on ``a`` of shape ``(..., *tail)`` flattened to rows: ``out`` of
    shape ``(..., *out_tail)`` (the array forms of the ``*_n`` kernels below)."""
    flat, lead = _flat(a, tail)
    out = np.empty((flat.shape[0], *out_tail))
    kernel(flat, out)
    return out.reshape((*lead, *out_tail))


def _map2(kernel, a: np.ndarray, b: np.ndarray, tail: tuple[int, ...]) -> np.ndarray:
    """``kernel(a, b, out)`` on ``a``, ``b`` of one shape ``(..., *tail)``."""
    fa, lead = _flat(a, tail)
    fb, lead_b = _flat(b, tail)
    if lead != lead_b:
        raise ValueError(f"shapes differ: {lead} and {lead_b}")
    out = np.empty_like(fa)
    kernel(fa, fb, out)
    return out.reshape((*lead, *tail))


def skew(a: np.ndarray) -> np.ndarray:
    """``S(a)`` with ``S(a) b = a × b``."""
    a = np.asarray(a, dtype=np.float64)
    s = np.zeros((*a.shape[:-1], 3, 3))
    s[..., 0, 1], s[..., 0, 2] = -a[..., 2], a[..., 1]
    s[..., 1, 0], s[..., 1, 2] = a[..., 2], -a[..., 0]
    s[..., 2, 0], s[..., 2, 1] = -a[..., 1], a[..., 0]
    return s


def rrp_to_matrix(alpha: np.ndarray) -> np.ndarray:
    """``R(α)`` (B&G eq. (6)) for ``α`` of shape ``(..., 3)``."""
    return _map(_rrp_to_matrix_n, alpha, (3,), (3, 3))


def compose_rrp(alpha1: np.ndarray, alpha2: np.ndarray) -> np.ndarray:
    """``α₁ ⊕ α₂`` (B&G eq. (8)): ``R(α₁ ⊕ α₂) = R(α₂) R(α₁)``."""
    return _map2(_compose_rrp_n, alpha1, alpha2, (3,))


def inverse_rrp(alpha: np.ndarray) -> np.ndarray:
    """The inverse rotation: ``-α``."""
    return -np.asarray(alpha, dtype=np.float64)


def rrp_angle(alpha: np.ndarray) -> np.ndarray:
    """Rotation angle ``|θ| = 2 arctan(|α|/2)``."""
    return 2.0 * np.arctan(0.5 * np.linalg.norm(np.asarray(alpha, dtype=np.float64), axis=-1))


def quat_from_rrp(alpha: np.ndarray) -> np.ndarray:
    """``q = (2, α)/sqrt(4 + |α|²)``, scalar first."""
    return _map(_quat_from_rrp_n, alpha, (3,), (4,))


def rrp_from_quat(q: np.ndarray) -> np.ndarray:
    """``α = 2 q_v / q₀`` (infinite at ``|θ| = π``, where ``q₀ = 0``)."""
    q = np.asarray(q, dtype=np.float64)
    return 2.0 * q[..., 1:] / q[..., :1]


def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrix of the quaternion ``q`` (scalar first), see ``quat_to_matrix_t``."""
    return _map(_quat_to_matrix_n, q, (4,), (3, 3))


def matrix_to_quat(r: np.ndarray) -> np.ndarray:
    """Unit quaternion (``q₀ ≥ 0``) of a rotation matrix (Shepperd's method)."""
    return _map(_matrix_to_quat_n, r, (3, 3), (4,))


def quat_mul(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Hamilton product ``p ⊗ q``: ``R(p ⊗ q) = R(p) R(q)``."""
    return _map2(_quat_mul_n, p, q, (4,))


def quat_conj(q: np.ndarray) -> np.ndarray:
    """Conjugate (the inverse of a unit quaternion)."""
    q = np.array(q, dtype=np.float64, copy=True)
    q[..., 1:] *= -1.0
    return q


def quat_from_rotvec(theta: np.ndarray) -> np.ndarray:
    """Exponential map, rotation vector → unit quaternion."""
    return _map(_quat_from_rotvec_n, theta, (3,), (4,))


def rotvec_from_quat(q: np.ndarray) -> np.ndarray:
    """Logarithm, unit quaternion → rotation vector with ``|θ| ≤ π``."""
    return _map(_rotvec_from_quat_n, q, (4,), (3,))


def rrp_from_rotvec(theta: np.ndarray) -> np.ndarray:
    """``α = 2 tan(|θ|/2) θ/|θ|``."""
    t = np.asarray(theta, dtype=np.float64)
    ang = np.linalg.norm(t, axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        f = np.where(ang > 1e-12, 2.0 * np.tan(0.5 * ang) / np.where(ang > 0, ang, 1.0),
                     1.0 + ang**2 / 12.0)
    return f * t


def rotvec_from_rrp(alpha: np.ndarray) -> np.ndarray:
    """``θ = 2 arctan(|α|/2) α/|α|``."""
    a = np.asarray(alpha, dtype=np.float64)
    n = np.linalg.norm(a, axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        f = np.where(n > 1e-12, 2.0 * np.arctan(0.5 * n) / np.where(n > 0, n, 1.0),
                     1.0 - n**2 / 12.0)
    return f * a


def log_matrix(r: np.ndarray) -> np.ndarray:
    """Rotation vector of a rotation matrix, ``|θ| ≤ π``."""
    return rotvec_from_quat(matrix_to_quat(r))


def orthogonality_error(r: np.ndarray) -> np.ndarray:
    """``‖RᵀR - I‖`` (Frobenius) for matrices of shape ``(..., 3, 3)``."""
    r = np.asarray(r, dtype=np.float64)
    e = np.einsum("...ki,...kj->...ij", r, r) - np.eye(3)
    return np.sqrt(np.einsum("...ij,...ij->...", e, e))


# --------------------------------------------------------------------------------------
# what a stored attitude must be (issue #46 item 3)
# --------------------------------------------------------------------------------------
ATTITUDE_NORM = (0.5, 2.0)
"""The norms a stored quaternion may have and still be an attitude: the schemes keep it
unit (``rk4`` lets it drift, by far less than this); zeros (the fill value a damaged run
file reads where data was written), a non-finite value or a stray scale are not one."""


def not_attitudes(q: np.ndarray) -> np.ndarray:
    """Over the leading axes of quaternions ``q`` (``(..., 4)``): where one is not an
    attitude (its norm outside :data:`ATTITUDE_NORM`, or not finite)."""
    n2 = np.einsum("...k,...k->...", q, q)
    lo, hi = ATTITUDE_NORM
    return ~((n2 >= lo * lo) & (n2 <= hi * hi))


def attitude_problem(q: np.ndarray) -> str | None:
    """``None`` when every quaternion of ``q`` (``(N, 4)``, a state's) is an attitude,
    else a phrase naming the first that is not: "body 3 has a quaternion of norm 0"."""
    bad = np.nonzero(not_attitudes(np.asarray(q, dtype=np.float64)).reshape(-1))[0]
    if not len(bad):
        return None
    i = int(bad[0])
    norm = float(np.sqrt(np.sum(np.asarray(q, dtype=np.float64).reshape(-1, 4)[i] ** 2)))
    return f"body {i} has a quaternion of norm {norm:.3g}, not an attitude"
