"""Property tests of the rotation layer: RRP, quaternions, matrices (docs/physics.md §2)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from engine.rotations import (
    compose_rrp,
    inverse_rrp,
    log_matrix,
    matrix_to_quat,
    orthogonality_error,
    quat_conj,
    quat_from_rotvec,
    quat_from_rrp,
    quat_mul,
    quat_rotate_t,
    quat_to_matrix,
    rotvec_from_quat,
    rotvec_from_rrp,
    rrp_angle,
    rrp_from_quat,
    rrp_from_rotvec,
    rrp_to_matrix,
    skew,
)

SETTINGS = settings(deadline=None, max_examples=150)
EYE = np.eye(3)
EPS = np.finfo(float).eps
# |θ| below which rotvec_from_quat_t sums its Taylor series: |q_v| < q₀/10
THETA_SWITCH = 2.0 * math.atan(0.1)

# --------------------------------------------------------------------------------------
# strategies
# --------------------------------------------------------------------------------------

_coord = st.floats(-1.0, 1.0, allow_nan=False, allow_infinity=False)


@st.composite
def unit_vectors(draw):
    v = np.array([draw(_coord), draw(_coord), draw(_coord)])
    n = np.linalg.norm(v)
    assume(n > 1e-3)
    return v / n


@st.composite
def rotvecs(draw, max_angle=math.pi - 1e-3, min_angle=0.0):
    """A rotation vector θ with ``min_angle ≤ |θ| ≤ max_angle`` (zero, or at least 1e-12:
    no underflow)."""
    angle = draw(st.one_of(st.just(min_angle), st.floats(max(min_angle, 1e-12), max_angle)))
    return draw(unit_vectors()) * angle


def rotvec_arrays(max_angle=math.pi - 1e-3, min_angle=0.0, max_size=6):
    return st.lists(rotvecs(max_angle, min_angle), min_size=1, max_size=max_size).map(np.array)


def rrp_arrays(max_size=6):
    """``(N, 3)`` arrays of RRP with ``|θ| < π - 1e-3`` (``|α| ≲ 4000``)."""
    return rotvec_arrays(max_size=max_size).map(rrp_from_rotvec)


@st.composite
def unit_quats(draw, n=None):
    """``(N, 4)`` arrays of arbitrary unit quaternions (either sign of q₀)."""
    size = draw(st.integers(1, 6)) if n is None else n
    rows = []
    for _ in range(size):
        v = np.array([draw(_coord) for _ in range(4)])
        nv = np.linalg.norm(v)
        assume(nv > 1e-3)
        rows.append(v / nv)
    return np.array(rows)


@st.composite
def rrp_pairs(draw):
    """Two ``(N, 3)`` RRP arrays of the same length, ``|θ| < π - 1e-3``."""
    n = draw(st.integers(1, 6))
    a = np.array([draw(rotvecs()) for _ in range(n)])
    b = np.array([draw(rotvecs()) for _ in range(n)])
    return rrp_from_rotvec(a), rrp_from_rotvec(b)


def angle_of(r):
    """Rotation angle of matrices ``(..., 3, 3)`` (independent of the quaternion code)."""
    c = 0.5 * (np.trace(r, axis1=-2, axis2=-1) - 1.0)
    s = 0.5 * np.linalg.norm(np.stack([r[..., 2, 1] - r[..., 1, 2], r[..., 0, 2] - r[..., 2, 0],
                                       r[..., 1, 0] - r[..., 0, 1]], axis=-1), axis=-1)
    return np.arctan2(s, c)


# --------------------------------------------------------------------------------------
# matrices
# --------------------------------------------------------------------------------------


@SETTINGS
@given(rrp_arrays())
def test_rrp_matrix_is_a_rotation(alpha):
    r = rrp_to_matrix(alpha)
    assert r.shape == (len(alpha), 3, 3)
    err = np.linalg.norm(np.einsum("nki,nkj->nij", r, r) - EYE, axis=(1, 2))
    assert err.max() <= 1e-13
    assert np.abs(np.linalg.det(r) - 1.0).max() <= 1e-13
    assert orthogonality_error(r).max() <= 1e-13


@SETTINGS
@given(rotvec_arrays())
def test_rrp_matrix_rotates_by_the_right_angle_about_the_right_axis(theta):
    """``R(α(θ))`` rotates about ``θ̂`` (fixed vector) by ``|θ|`` (Rodrigues' formula)."""
    r = rrp_to_matrix(rrp_from_rotvec(theta))
    ang = np.linalg.norm(theta, axis=1)
    k = skew(theta / np.where(ang > 0, ang, 1.0)[:, None])
    ref = (EYE + np.sin(ang)[:, None, None] * k
           + (1.0 - np.cos(ang))[:, None, None] * (k @ k))
    assert np.abs(r - ref).max() <= 1e-12


@SETTINGS
@given(rrp_pairs())
def test_compose_rrp_is_the_matrix_product(pair):
    """``R(α₁ ⊕ α₂) = R(α₂) R(α₁)`` wherever ``4 - α₁·α₂`` is not tiny."""
    a1, a2 = pair
    den = np.abs(4.0 - np.einsum("ni,ni->n", a1, a2))
    # conditioning of the formula: cancellation in 4 - α₁·α₂
    kappa = (4.0 + np.linalg.norm(a1, axis=1) * np.linalg.norm(a2, axis=1)) / den
    assume(kappa.max() < 1e4)
    c = compose_rrp(a1, a2)
    lhs = rrp_to_matrix(c)
    rhs = rrp_to_matrix(a2) @ rrp_to_matrix(a1)
    err = np.abs(lhs - rhs).max(axis=(1, 2))
    assert np.all(err <= 1e-14 * (4.0 + kappa)), (err, kappa)
    # and the same composition through quaternions, q(α₁ ⊕ α₂) = ±q(α₂) ⊗ q(α₁)
    qc = quat_from_rrp(c)
    qp = quat_mul(quat_from_rrp(a2), quat_from_rrp(a1))
    sign = np.sign(np.einsum("ni,ni->n", qc, qp))[:, None]
    assert np.all(np.abs(qc - sign * qp).max(axis=1) <= 1e-14 * (4.0 + kappa))


@SETTINGS
@given(rrp_arrays())
def test_inverse_rrp_is_the_transpose(alpha):
    r = rrp_to_matrix(alpha)
    ri = rrp_to_matrix(inverse_rrp(alpha))
    assert np.abs(ri - np.swapaxes(r, 1, 2)).max() <= 1e-15
    assert np.abs(ri @ r - EYE).max() <= 1e-13
    # α ⊕ (-α) = 0 and (-α) ⊕ α = 0 exactly
    assert np.array_equal(compose_rrp(alpha, -alpha), np.zeros_like(alpha))
    assert np.array_equal(compose_rrp(-alpha, alpha), np.zeros_like(alpha))


@SETTINGS
@given(st.lists(st.tuples(_coord, _coord, _coord, _coord, _coord, _coord), min_size=1,
                max_size=5))
def test_skew_is_the_cross_product(rows):
    ab = np.array(rows) * 10.0
    a, b = ab[:, :3], ab[:, 3:]
    assert np.allclose(np.einsum("nij,nj->ni", skew(a), b), np.cross(a, b), rtol=0, atol=1e-13)
    s = skew(a)
    assert np.array_equal(s, -np.swapaxes(s, 1, 2))


# --------------------------------------------------------------------------------------
# quaternions
# --------------------------------------------------------------------------------------


@SETTINGS
@given(rrp_arrays())
def test_quat_rrp_round_trip(alpha):
    q = quat_from_rrp(alpha)
    assert np.abs(np.linalg.norm(q, axis=1) - 1.0).max() <= 4 * EPS
    assert np.all(q[:, 0] > 0.0)
    back = rrp_from_quat(q)
    scale = np.linalg.norm(alpha, axis=1, keepdims=True)
    assert np.all(np.abs(back - alpha) <= 8 * EPS * scale)


@SETTINGS
@given(unit_quats())
def test_matrix_quat_round_trip(q):
    r = quat_to_matrix(q)
    assert orthogonality_error(r).max() <= 1e-14
    assert np.abs(np.linalg.det(r) - 1.0).max() <= 1e-14
    back = matrix_to_quat(r)
    assert np.all(back[:, 0] >= 0.0)
    sign = np.sign(np.einsum("ni,ni->n", back, q))[:, None]
    assert np.abs(back - sign * q).max() <= 1e-14
    assert np.abs(quat_to_matrix(back) - r).max() <= 1e-14


@SETTINGS
@given(rrp_arrays())
def test_quat_matrix_equals_rrp_matrix(alpha):
    assert np.abs(quat_to_matrix(quat_from_rrp(alpha)) - rrp_to_matrix(alpha)).max() <= 1e-14


@SETTINGS
@given(st.integers(1, 6).flatmap(lambda n: st.tuples(unit_quats(n), unit_quats(n))))
def test_quat_mul_is_the_matrix_product(pq):
    p, q = pq
    pq_ = quat_mul(p, q)
    assert np.abs(quat_to_matrix(pq_) - quat_to_matrix(p) @ quat_to_matrix(q)).max() <= 1e-14
    # conjugate is the inverse
    ident = quat_mul(q, quat_conj(q))
    assert np.abs(ident - np.array([1.0, 0.0, 0.0, 0.0])).max() <= 1e-15


@SETTINGS
@given(unit_quats(), st.lists(_coord, min_size=3, max_size=3))
def test_quat_rotate_matches_matrix(q, b):
    b = np.array(b) * 3.0
    r = quat_to_matrix(q)
    for qi, ri in zip(q, r, strict=True):
        assert np.abs(np.array(quat_rotate_t(*qi, *b)) - ri @ b).max() <= 1e-14


# --------------------------------------------------------------------------------------
# angles and the logarithm
# --------------------------------------------------------------------------------------


@SETTINGS
@given(rotvec_arrays())
def test_rrp_angle(theta):
    ang = np.linalg.norm(theta, axis=1)
    alpha = rrp_from_rotvec(theta)
    assert np.all(np.abs(rrp_angle(alpha) - ang) <= 4 * EPS * ang)
    assert np.all(np.abs(rotvec_from_rrp(alpha) - theta).max(axis=1) <= 8 * EPS * ang)
    # independent check through the matrix
    assert np.abs(angle_of(rrp_to_matrix(alpha)) - ang).max() <= 1e-12


@SETTINGS
@given(rotvec_arrays(max_angle=math.pi - 1e-9))
def test_rotvec_quat_round_trip(theta):
    q = quat_from_rotvec(theta)
    assert np.abs(np.linalg.norm(q, axis=1) - 1.0).max() <= 4 * EPS
    ang = np.linalg.norm(theta, axis=1)
    err = np.linalg.norm(rotvec_from_quat(q) - theta, axis=1)
    assert np.all(err <= 1e-14 * ang), err / np.where(ang > 0, ang, 1)
    # q and -q are the same rotation
    assert np.all(np.linalg.norm(rotvec_from_quat(-q) - theta, axis=1) <= 1e-14 * ang)
    # the logarithm of the matrix (near |θ| = π the axis of a matrix is only
    # determined to ~ eps/sin|θ|)
    assert np.all(np.linalg.norm(log_matrix(quat_to_matrix(q)) - theta, axis=1)
                  <= 1e-12 * np.maximum(ang, 1e-3) / np.maximum(np.sin(ang), 1e-3))


@SETTINGS
@given(st.lists(st.tuples(unit_vectors(), st.floats(-9.0, -3.0)), min_size=1, max_size=6))
def test_tiny_angles_relative_accuracy(rows):
    """``1e-9 ≤ |θ| ≤ 1e-3``: round trips to relative round-off, no cancellation."""
    theta = np.array([u * 10.0**e for u, e in rows])
    ang = np.linalg.norm(theta, axis=1)
    q = quat_from_rotvec(theta)
    err = np.linalg.norm(rotvec_from_quat(q) - theta, axis=1) / ang
    assert err.max() <= 1e-14
    alpha = rrp_from_rotvec(theta)
    assert np.all(np.abs(rrp_angle(alpha) - ang) <= 1e-14 * ang)
    a_back = rrp_from_quat(quat_from_rrp(alpha))
    assert np.all(np.linalg.norm(a_back - alpha, axis=1) <= 1e-14 * ang)
    err = np.linalg.norm(rotvec_from_quat(quat_from_rrp(alpha)) - theta, axis=1) / ang
    assert err.max() <= 1e-14


@pytest.mark.parametrize("rel", [-1e-1, -1e-3, -1e-6, -1e-10, 0.0, 1e-10, 1e-6, 1e-3, 1e-1])
def test_log_both_sides_of_the_series_switch(rel):
    """``rotvec_from_quat_t`` switches from its Taylor series to atan2 at |θ| ≈ 11.4°."""
    rng = np.random.default_rng(7)
    axes = rng.standard_normal((64, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    ang = THETA_SWITCH * (1.0 + rel)
    theta = ang * axes
    err = np.linalg.norm(rotvec_from_quat(quat_from_rotvec(theta)) - theta, axis=1) / ang
    assert err.max() <= 1e-14


def test_log_continuous_across_the_series_switch():
    """At ``|q_v| = q₀/10`` the two branches agree to round-off (ulp-by-ulp scan)."""
    q0 = 1.0 / math.sqrt(1.01)
    s_mid = 0.1 * q0
    s = np.array([s_mid])
    for _ in range(200):  # step down by ulps so the scan straddles the switch
        s = np.append(np.nextafter(s[0], 0.0), s)
    for _ in range(200):
        s = np.append(s, np.nextafter(s[-1], 1.0))
    rng = np.random.default_rng(3)
    for axis in rng.standard_normal((4, 3)):
        axis /= np.linalg.norm(axis)
        q = np.concatenate([np.full((len(s), 1), q0), s[:, None] * axis], axis=1)
        f = rotvec_from_quat(q) @ axis / s  # θ/|q_v|
        below = s * s < 0.01 * q0 * q0
        assert below.any() and (~below).any()  # the scan does cross the switch
        ref = 2.0 * np.arctan2(s, q0) / s
        assert np.abs(f / ref - 1.0).max() <= 4 * EPS
        # monotone decreasing in |q_v| (arctan(t)/t), no jump at the switch
        jump = np.diff(f)
        assert np.abs(jump).max() <= 8 * EPS * f.max()


# --------------------------------------------------------------------------------------
# array API
# --------------------------------------------------------------------------------------


def test_array_api_shapes():
    rng = np.random.default_rng(0)
    theta = 0.5 * rng.standard_normal((2, 5, 3))
    alpha = rrp_from_rotvec(theta)
    assert rrp_to_matrix(alpha).shape == (2, 5, 3, 3)
    q = quat_from_rrp(alpha)
    assert q.shape == (2, 5, 4)
    assert quat_to_matrix(q).shape == (2, 5, 3, 3)
    assert matrix_to_quat(quat_to_matrix(q)).shape == (2, 5, 4)
    assert rotvec_from_quat(q).shape == (2, 5, 3)
    assert compose_rrp(alpha, alpha).shape == (2, 5, 3)
    assert quat_mul(q, q).shape == (2, 5, 4)
    # a single body and the (N, ·) forms agree
    assert np.array_equal(rrp_to_matrix(alpha[0, 0]), rrp_to_matrix(alpha[0])[0])
    assert np.allclose(rotvec_from_quat(q), theta, rtol=0, atol=1e-14)
    with pytest.raises(ValueError):
        rrp_to_matrix(np.zeros((3, 4)))
    with pytest.raises(ValueError):
        quat_mul(np.zeros((2, 4)), np.zeros((3, 4)))
    with pytest.raises(ValueError):
        compose_rrp(np.zeros((2, 3)), np.zeros((3, 3)))


# --------------------------------------------------------------------------------------
# a long spin through |θ| = π, many times
# --------------------------------------------------------------------------------------


def test_long_spin_through_pi():
    """``q ← q(Δα) ⊗ q`` for 20000 steps: stays a rotation about the fixed axis by the
    accumulated angle ``n · 2 arctan(|Δα|/2)`` (mod 2π), through ~160 turns."""
    rng = np.random.default_rng(12345)
    axis = rng.standard_normal(3)
    axis /= np.linalg.norm(axis)
    # ≈ 0.1 rad per step.  The stored increment q(Δα) is off the unit sphere by its own
    # round-off, δ = |q(Δα)|² - 1 (a few 1e-16); repeating the *same* increment makes |q|²
    # drift by n·δ (4e-12 here), a property of the input, not of the composition.  Take
    # an increment with |δ| < 1e-17 (exact rational arithmetic), so what remains is the
    # round-off of quat_mul itself.
    for j in range(200):
        d_alpha = 0.1 * (1.0 + 1e-3 * j) * axis
        dq = quat_from_rrp(d_alpha[None])
        if abs(sum(Fraction(float(c)) ** 2 for c in dq[0]) - 1) < Fraction(1, 10**17):
            break
    else:
        raise AssertionError("no increment with a unit quaternion to 1e-17 found")
    step_angle = 2.0 * math.atan(0.5 * np.linalg.norm(d_alpha))
    q = np.array([[1.0, 0.0, 0.0, 0.0]])
    n_steps = 20_000
    perp_max = 0.0
    crossings = 0
    prev_sign = 1.0
    for k in range(1, n_steps + 1):
        q = quat_mul(dq, q)
        qv = q[0, 1:]
        perp_max = max(perp_max, float(np.linalg.norm(qv - (qv @ axis) * axis)))
        if q[0, 0] * prev_sign < 0.0:  # q₀ changes sign: |θ| passes π
            crossings += 1
            prev_sign = -prev_sign
        if k % 5000 == 0:
            assert orthogonality_error(quat_to_matrix(q))[0] <= 1e-12
    assert crossings > 100
    r = quat_to_matrix(q)[0]
    assert orthogonality_error(r) <= 1e-12
    assert perp_max <= 1e-10  # the axis never drifts
    theta = rotvec_from_quat(q)[0]
    expected = math.remainder(n_steps * step_angle, 2.0 * math.pi)  # in [-π, π]
    assert 0.1 < abs(expected) < math.pi - 0.1  # axis and sign of θ well defined
    ang = float(np.linalg.norm(theta))
    direction = theta / ang
    assert min(np.linalg.norm(direction - axis), np.linalg.norm(direction + axis)) <= 1e-10
    assert abs(theta @ axis - expected) <= 1e-9
    # the same rotation as the matrix of the accumulated angle
    ref = rrp_to_matrix(rrp_from_rotvec(expected * axis))
    assert np.abs(r - ref).max() <= 1e-9
