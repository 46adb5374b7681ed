"""The average-frame law's fast form (issue #44 item 9) is the formula it replaced, the
one of LAMMPS's source, to round-off (``engine.potentials.bpm_average``, "The
arithmetic"; docs/physics.md §4.6).

The replaced formula (the law as issue #44 item 8a wrote it, copied below as
:func:`_c_frame_law`) is evaluated *exactly* — in 50-digit decimals, from the same
float inputs — because in floats it is itself off by far more than round-off at small
angles: ``acos(1 − δ)`` turns the cosine's last-bit error into ``~1.5e-8`` rad (the
fast form's ``atan`` has no such loss: a test below shows both against the exact
value).  The fast form in floats must be within ``1e-12`` of that exact value, relative
to the bond's largest load (``|F|``, ``|τ|``: the states' lengths and stiffnesses are of
order one), plus ``1e-14 k`` for the cancellations both forms share (``|r_f| − r₀``,
``r_i × r_c`` at small strains, whose round-off is relative to ``k r₀``, not to the
load; the worst error found is ~4e-16 k, 4 % of that); the energies within 1e-12 of
theirs plus ``1e-14 k (1 + the largest load)``.  Many random states and the degenerate
ones: ``r_c`` on ``±z`` (exactly and nearly), no shear, antipodal quaternions
(``p·q < 0``, ``q = −p``), zero twist, relative rotations near π, attitudes near π.
"""

from __future__ import annotations

import decimal
import math
import re
from decimal import Decimal

import numba
import numpy as np
import pytest

from engine.potentials import bpm_average as ba
from engine.rotations import quat_from_rotvec, quat_mul, quat_to_matrix

CTX = decimal.Context(prec=50)
K = (1.0, 2.0, 0.3, 0.5)  # k_r, k_s, k_t, k_b


# -- the replaced formula (main before issue #44 item 9's fast form), over any numbers --

def _atan(x: Decimal) -> Decimal:
    """``atan`` in decimals: halve the angle (``x/(1 + √(1 + x²))``) below 0.01, then
    its Taylor series."""
    k = 0
    while abs(x) > Decimal("0.01"):
        x = x / (1 + (1 + x * x).sqrt())
        k += 1
    s, term, x2, n = x, x, x * x, 1
    while True:
        term = -term * x2
        t = term / (2 * n + 1)
        if abs(t) < Decimal("1e-60"):
            return s * 2 ** k
        s += t
        n += 1


def _acos(c: Decimal) -> Decimal:
    c = min(max(c, Decimal(-1)), Decimal(1))
    return 4 * _atan(Decimal(1)) if c == -1 else 2 * _atan(((1 - c) / (1 + c)).sqrt())


def _mul(p, q):
    return (p[0] * q[0] - p[1] * q[1] - p[2] * q[2] - p[3] * q[3],
            p[0] * q[1] + p[1] * q[0] + p[2] * q[3] - p[3] * q[2],
            p[0] * q[2] - p[1] * q[3] + p[2] * q[0] + p[3] * q[1],
            p[0] * q[3] + p[1] * q[2] - p[2] * q[1] + p[3] * q[0])


def _rot(q, b):
    d = q[0] * q[0] - q[1] * q[1] - q[2] * q[2] - q[3] * q[3]
    vb = 2 * (q[1] * b[0] + q[2] * b[1] + q[3] * b[2])
    c = (q[2] * b[2] - q[3] * b[1], q[3] * b[0] - q[1] * b[2], q[1] * b[1] - q[2] * b[0])
    return tuple(d * b[k] + vb * q[k + 1] + 2 * q[0] * c[k] for k in range(3))


def _dot(a, b):
    return sum(a[k] * b[k] for k in range(len(a)))


def _unit(a):
    s = 1 / sum(v * v for v in a).sqrt()
    return tuple(v * s for v in a)


def _conj(a):
    return (a[0], -a[1], -a[2], -a[3])


def _axis_angle(a):
    ang = 2 * _acos(a[0])
    s = (a[1] * a[1] + a[2] * a[2] + a[3] * a[3]).sqrt()
    if abs(ang) > EPS and s > 0:
        return ang, (a[1] / s, a[2] / s, a[3] / s)
    return ang, (ZERO, ZERO, Decimal(1))


EPS = Decimal("1e-10")
ZERO = Decimal(0)


def _c_frame_law(kr, ks, kt, kb, r0, ri, rf, p, q):
    """``rotational_average`` as it was: everything in the frame ``C`` of ``q_c``, ``z``
    turned onto the bond by ``q_m``, swing and twist by Wang's formula, angles by
    ``acos`` (LAMMPS's ``src/BPM/bond_bpm_rotational.cpp``)."""
    dot = _dot(p, q)
    sg = -1 if dot < 0 else 1
    c = _unit(tuple(p[k] + sg * q[k] for k in range(4)))
    rc = _rot(_conj(c), rf)
    rn = sum(v * v for v in rc).sqrt()
    h = tuple(v / rn for v in rc)
    fr = kr * (rn - r0)
    # (|r_i| for r₀, exactly: the law's r_i has length r₀, float inputs only to round-off,
    # and acos near 1 turns a relative 1e-16 in the cosine into 1e-16/γ in γ)
    gamma = _acos(_dot(ri, rc) / (_dot(ri, ri).sqrt() * rn))
    x = (ri[1] * rc[2] - ri[2] * rc[1], ri[2] * rc[0] - ri[0] * rc[2],
         ri[0] * rc[1] - ri[1] * rc[0])
    xn = sum(v * v for v in x).sqrt()
    fs, s, t = ZERO, (ZERO,) * 3, (ZERO,) * 3
    if xn > EPS:
        t = tuple(v / xn for v in x)
        s = _unit((t[1] * h[2] - t[2] * h[1], t[2] * h[0] - t[0] * h[2],
                   t[0] * h[1] - t[1] * h[0]))
        fs = ks * rn * gamma
    u = _unit(_mul(_conj(c), q))
    half = Decimal(2).sqrt() / 2
    m = [half * (max(rn + rc[2], ZERO) / rn).sqrt(), ZERO, ZERO, ZERO]
    tmp = (rc[0] * rc[0] + rc[1] * rc[1]).sqrt()
    if tmp > EPS:
        fac = -half * (max(rn - rc[2], ZERO) / rn).sqrt() / tmp
        m[1], m[2] = fac * rc[1], -fac * rc[0]
    if m[0] == 0 and m[1] == 0 and m[2] == 0:
        m[2] = Decimal(1)
    m = _unit(m)
    u = _unit(_mul(_mul(_conj(m), u), m))
    sw = (u[0] * u[0] + u[3] * u[3]).sqrt()
    tc, ts = (Decimal(1), ZERO) if sw < EPS else (u[0] / sw, u[3] / sw)
    w2 = _unit(_mul((tc, ZERO, ZERO, -ts), u))
    w1 = _unit(_mul((tc, ZERO, ZERO, ts), _conj(u)))
    psi, ta = _axis_angle((tc * tc - ts * ts, ZERO, ZERO, 2 * tc * ts))
    theta, bax = _axis_angle(_mul(w2, _conj(w1)))
    tb = _rot(m, tuple(kt * psi * ta[k] + kb * theta * bax[k] for k in range(3)))
    hst = rn * fs / 2
    F = _rot(c, tuple(fr * h[k] + fs * s[k] for k in range(3)))
    A = _rot(c, tuple(hst * t[k] + tb[k] for k in range(3)))
    B = _rot(c, tuple(hst * t[k] - tb[k] for k in range(3)))
    return (*F, *A, *B, kr * (rn - r0) ** 2 / 2, ks * rn * rn * gamma * gamma / 2,
            (kt * psi * psi + kb * theta * theta) / 2, abs(fr), fs, kb * theta, kt * psi)


def _exact(args):
    with decimal.localcontext(CTX):
        d = [Decimal(float(a)) for a in args]
        return np.array([float(v) for v in _c_frame_law(
            *d[:5], d[5:8], d[8:11], d[11:15], d[15:19])])


# -- the states --

def _q(rotvec) -> np.ndarray:
    return quat_from_rotvec(np.asarray(rotvec, float)[None])[0]


def _bond(p, q, ri, strain, shear):
    """``r_f`` whose ``r_c`` is ``r_i`` stretched by ``strain`` and turned by ``shear``
    (a rotation vector), with ``q_c`` of ``p, q``."""
    c = p + (q if p @ q >= 0 else -q)
    rc = (1.0 + strain) * (quat_to_matrix(_q(shear)) @ ri)
    return quat_to_matrix(c / np.linalg.norm(c)) @ rc


def _args(p, q, ri, rf):
    return (*K, float(np.linalg.norm(ri)), *ri, *rf, *p, *q)


def _random_states(n: int, seed: int) -> list[tuple]:
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n):
        size = (1e-6, 1e-3, 0.1, 1.0, 3.0)[k % 5]
        ri = rng.normal(size=3)
        ri *= rng.uniform(0.5, 2.0) / np.linalg.norm(ri)
        p = _q(rng.normal(size=3) * rng.uniform(0.0, 3.0))
        q = np.array(quat_mul(p, _q(rng.normal(size=3) * size)))
        q = -q if rng.random() < 0.5 else q  # (antipodal: p·q < 0)
        rf = _bond(p, q, ri, size * rng.normal() / 3, rng.normal(size=3) * size / 3)
        out.append(_args(p, q, ri, rf))
    return out


def _z(a):  # a rotation about z
    return _q([0.0, 0.0, a])


ONE = np.array([1.0, 0.0, 0.0, 0.0])
RI = np.array([0.3, -0.4, 1.1])


def _near_pi(axis, d):  # sphere 2 turned by π − d from sphere 1
    p = _q([0.2, 0.1, -0.3])
    return _args(p, np.array(quat_mul(p, _q((math.pi - d) * axis / np.linalg.norm(axis)))),
                 RI, RI * 1.01)


DEGENERATE = {
    # r_c exactly on ±z (attitudes about z), with and without shear and twist
    **{f"on z{sz:+} {label} q{sq:+}": _args(_z(a), _z(b) * sq, ri,
                                            np.array([0.0, 0.0, sz * 1.2]))
       for sz in (1, -1) for sq in (1, -1)
       for label, a, b, ri in (("twist", 0.2, -0.1, RI), ("no twist", 0.7, 0.7, RI),
                               ("no shear", 0.1, 0.3, np.array([0.0, 0.0, sz * 1.1])),
                               ("nothing", 0.0, 0.0, np.array([0.0, 0.0, sz * 1.2])))},
    # r_c nearly on ±z
    **{f"near z{sz:+} {d}": _args(_z(0.3), _z(0.1), RI, np.array([d, -0.7 * d, sz * 1.2]))
       for sz in (1, -1) for d in (1e-9, 1e-7, 1e-5)},
    # no shear (r_f ∥ r_i) and nearly none, without and with attitudes
    "no shear": _args(ONE, ONE, RI, 1.01 * RI),
    **{f"shear {g}": _args(ONE, _q([0.0, 1e-3, 0.0]), RI,
                           _bond(ONE, _q([0.0, 1e-3, 0.0]), RI, 1e-3, [g, 0, 0]))
       for g in (1e-9, 1e-7, 1e-5)},
    "turned, no shear": _args(_q([1.0, 2.0, -0.5]), _q([1.0, 2.0, -0.5]), RI, _bond(
        _q([1.0, 2.0, -0.5]), _q([1.0, 2.0, -0.5]), RI, 0.02, [0.0, 0.0, 0.0])),
    # antipodal quaternions: the same attitude, and nearly
    "q = -p": _args(_q([0.4, -0.2, 0.9]), -_q([0.4, -0.2, 0.9]), RI,
                    _bond(_q([0.4, -0.2, 0.9]), _q([0.4, -0.2, 0.9]), RI, 0.01, [0.1, 0, 0])),
    "q ~ -p": _args(_q([0.4, -0.2, 0.9]), -np.array(quat_mul(_q([0.4, -0.2, 0.9]),
                                                             _q([1e-4, 0, 2e-4]))), RI, RI),
    # zero twist: a bend about an axis across the bond, exactly
    **{f"bend only {b}": _args(ONE, _q([b, 0.0, 0.0]), np.array([0.0, 1.0, 0.0]),
                               np.array([0.0, 1.05, 0.0])) for b in (1e-8, 1e-3, 0.5, 3.0)},
    # twist only, about the bond, small
    **{f"twist only {a}": _args(ONE, _q([0.0, a, 0.0]), np.array([0.0, 1.0, 0.0]),
                                np.array([0.0, 1.0, 0.0])) for a in (1e-8, 1e-4)},
    # relative rotations near π (p·q near 0), about, across and oblique to the bond
    **{f"near pi {ax} {d}": _near_pi(np.array(ax), d)
       for ax in ((0.3, -0.4, 1.1), (1.0, 0.0, 0.0), (0.5, 1.0, 0.2)) for d in (1e-3, 1e-6)},
    # attitudes near π (p₀, q₀ near 0)
    "attitudes near pi": _args(_q([math.pi - 1e-7, 0, 0]), _q([math.pi - 1e-7, 1e-3, 0]),
                               RI, RI * 0.99),
}


def _check(args, tag):
    got = np.array(ba.rotational_average(*args))
    want = _exact(args)
    k = max(K)
    scale = np.abs(want[:9]).max()
    loads = np.r_[want[:9], want[12:]]
    tol = 1e-12 * scale + 1e-14 * k
    err = np.abs(np.r_[got[:9], got[12:]] - loads)
    assert err.max() <= tol, (tag, err.max() / max(scale, 1e-300), got, want)
    etol = 1e-12 * want[9:12].sum() + 1e-14 * k * (1.0 + scale)
    assert np.abs(got[9:12] - want[9:12]).max() <= etol, (tag, got[9:12], want[9:12])


def test_the_fast_form_is_the_c_frame_formula_on_random_states():
    for n, args in enumerate(_random_states(600, 44)):
        _check(args, n)


@pytest.mark.parametrize("tag", list(DEGENERATE))
def test_the_fast_form_is_the_c_frame_formula_on_degenerate_states(tag):
    _check(DEGENERATE[tag], tag)


def test_at_small_angles_the_fast_form_is_closer_than_acos_was():
    """A twist of 1e-8 rad: ``acos`` in floats loses it (an error of its own size); the
    fast form's ``atan`` keeps it to round-off."""
    with decimal.localcontext(CTX):
        args = DEGENERATE["twist only 1e-08"]
        exact = _exact(args)
    psi = exact[15] / K[2]
    assert psi == pytest.approx(1e-8, rel=1e-6)

    def acos_float(c):  # what the replaced form did in floats, for this twist
        return 2.0 * math.acos(c)

    w, z = math.cos(0.25e-8), math.sin(0.25e-8)  # (u's twist: a quarter of ψ)
    tc = w / math.hypot(w, z)
    ts = z / math.hypot(w, z)
    assert abs(acos_float(tc * tc - ts * ts) - psi) > 1e-10
    got = ba.rotational_average(*args)
    assert abs(got[15] - exact[15]) <= 1e-15 * K[2]


def _ir(py_func, *args) -> str:
    f = numba.njit(cache=False, error_model="numpy")(py_func)
    f(*args)
    return next(iter(f.inspect_llvm().values()))


def _calls(ir: str, name: str) -> int:
    return len(re.findall(rf"call [^@]*@(?:llvm\.)?{name}(?:\.f64)?\(", ir))


def test_the_law_calls_no_libm_and_divides_nine_times():
    """γ, ψ and θ by ``engine.potentials.packed_atan.atan2_packed`` (plain arithmetic,
    two divisions each, so that the bonds' kernel runs the law packed: issue #44 item
    9): no ``atan``, ``atan2``, ``acos``, ``sin`` or ``cos`` call; nine divisions
    (``1/|r_f|``, ``1/|g × r_f|``, ``θ/|a|``, the angles' six) and three square roots,
    where the replaced form had 25 and 15; a compilation of the module's source (the
    disk cache plays no part)."""
    ir = _ir(ba.rotational_average.py_func, *(0.5,) * 19)
    assert sum(_calls(ir, f) for f in ("atan", "acos", "sin", "cos", "atan2")) == 0
    assert ir.count(" fdiv ") <= 9
    assert _calls(ir, "sqrt") == 3


def test_the_bonds_kernel_is_the_c_frame_formula():
    """``engine.potentials.bpm.bpm_bonds_ws`` (average bonds a block at a time, packed)
    on the random and the degenerate states, each a bond of its own two spheres (sphere
    1 first and second by turns): its loads within the tolerance of :func:`_check` of
    the replaced formula evaluated exactly, its energies' sums within the sum of
    theirs."""
    from engine.layout import E_AXIAL, E_BENDING, E_SHEAR, N_ENERGY
    from engine.potentials import bpm

    states = _random_states(150, 46) + list(DEGENERATE.values())
    nb = len(states)
    x, q = np.zeros((2 * nb, 3)), np.zeros((2 * nb, 4))
    bonds = np.array([[2 * b, 2 * b + 1] if b % 2 else [2 * b + 1, 2 * b]
                      for b in range(nb)])
    t = np.zeros((nb, bpm.N_COLS))
    t[:, bpm.C_LAW] = bpm.LAW_ROTATIONAL_AVERAGE
    t[:, bpm.C_COEF:bpm.C_COEF + 4] = K
    used = []
    for b, a in enumerate(states):
        r0 = a[4]
        t[b, bpm.C_R0] = r0
        sg = -r0 if bonds[b, 0] < bonds[b, 1] else r0  # (as the kernel: r_i = ∓ r₀ a_i)
        t[b, bpm.C_AI:bpm.C_AI + 3] = np.array(a[5:8]) / sg
        x[2 * b + 1] = a[8:11]  # r_f = x_hi − x_lo, x_lo = 0
        q[2 * b], q[2 * b + 1] = a[11:15], a[15:19]
        used.append((*a[:5], *(sg * t[b, bpm.C_AI:bpm.C_AI + 3]), *a[8:]))
    F, RM, e = np.zeros_like(x), np.zeros_like(x), np.zeros(N_ENERGY)
    assert bpm.bpm_bonds_ws(x, q, bonds, t, F, RM, e, bpm.new_bonds_scratch()) == 0
    k = max(K)
    esum = etol = 0.0
    for b, a in enumerate(used):
        want = _exact(a)
        i, j = bonds[b]
        sw = 1.0 if i < j else -1.0
        got = np.r_[sw * F[i], RM[i] if i < j else RM[j], RM[j] if i < j else RM[i]]
        scale = np.abs(want[:9]).max()
        assert np.abs(got - want[:9]).max() <= 1e-12 * scale + 1e-14 * k, b
        assert np.abs(F[i] + F[j]).max() == 0.0
        esum += want[9:12]
        etol += 1e-12 * want[9:12].sum() + 1e-14 * k * (1.0 + scale)
    assert np.abs(e[[E_AXIAL, E_SHEAR, E_BENDING]] - esum).max() <= etol


def test_the_twin_gives_the_compiled_bits():
    """``engine.interpreted``'s twin of the bonds' kernel (the law's own source run by
    Python: the same IEEE operations) gives the compiled kernel's bits
    on a chain of average-frame bonds, strained and turned at random."""
    from engine.interpreted import interpreted
    from engine.layout import N_ENERGY
    from engine.potentials import bpm

    rng = np.random.default_rng(45)
    n = 12
    x0 = np.cumsum(rng.normal(scale=0.2, size=(n, 3)) + [1.0, 0.0, 0.0], axis=0)
    bonds = np.array([[k + 1, k] if k % 3 else [k, k + 1] for k in range(n - 1)])
    t = np.array([bpm.law_row("bpm/rotational", dict(zip(("k_r", "k_s", "k_t", "k_b"), K,
                                                          strict=True)), False)] * (n - 1))
    bpm.reference(t, x0, np.tile(ONE, (n, 1)), bonds)
    t[:, bpm.C_LAW] = bpm.LAW_ROTATIONAL_AVERAGE
    x = x0 + rng.normal(scale=0.05, size=x0.shape)
    q = quat_from_rotvec(rng.normal(scale=0.5, size=(n, 3)))
    q[::4] *= -1.0
    out = []
    for kernel in (bpm.bpm_bonds_ws, interpreted(bpm.bpm_bonds_ws)):
        F, RM, e = np.zeros((n, 3)), np.zeros((n, 3)), np.zeros(N_ENERGY)
        assert kernel(x, q, bonds, t, F, RM, e, bpm.new_bonds_scratch()) == 0
        out.append(np.r_[F.ravel(), RM.ravel(), e])
    assert np.abs(out[0]).max() > 0.0
    assert out[0].tobytes() == out[1].tobytes()
