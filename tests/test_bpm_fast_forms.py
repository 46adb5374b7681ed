"""The BPM kernels' cheaper exact forms (issue #44 item 9, the metamaterial's speed):
the average-frame law's twist without trigonometry, the bonds' damping with its inverse
masses hoisted and ``expm1`` as its Taylor sum at a step's small arguments.  Each is
checked twice: it equals the form it replaces to round-off, and the compiled kernel
really does without the replaced work (its LLVM IR's libm calls and divisions; the
kernels compiled afresh from their source, so the disk cache plays no part)."""

from __future__ import annotations

import math
import re

import numba
import numpy as np
import pytest

from engine.potentials import bond_damping as bd
from engine.potentials import bpm_average as ba
from engine.potentials.bpm import N_COLS

ULP = 2.220446049250313e-16


def _ir(py_func, *args) -> str:
    f = numba.njit(cache=False, error_model="numpy")(py_func)
    f(*args)
    return next(iter(f.inspect_llvm().values()))


def _calls(ir: str, name: str) -> int:
    return len(re.findall(rf"call [^@]*@(?:llvm\.)?{name}(?:\.f64)?\(", ir))


def _twist_by_angle(w, z):  # the form replaced: ψ = ±2 acos(w/s), then cos, sin of ψ/2
    s = math.sqrt(w * w + z * z)
    if s < ba.EPS:
        return 1.0, 0.0
    psi = 2.0 * math.acos(max(-1.0, min(1.0, w / s)))
    psi = -psi if z < 0.0 else psi
    return math.cos(0.5 * psi), math.sin(0.5 * psi)


def test_the_twist_without_its_angle_equals_the_angle_s_cosine_and_sine():
    rng = np.random.default_rng(44)
    for w, z in [*rng.normal(size=(2000, 2)), *rng.normal(size=(200, 2)) * 1e-6,
                 (1.0, 0.0), (-1.0, 0.0), (0.0, 1.0), (0.0, -1.0), (0.0, 0.0)]:
        got = ba._twist_of(float(w), float(z))
        # the replaced form, to its own round-off (sin ∘ acos near ±1 loses digits) …
        assert got == pytest.approx(_twist_by_angle(float(w), float(z)), abs=1e-12), (w, z)
        # … and the cosine and sine themselves, w/s and z/s, to two ulps
        s = np.sqrt(np.longdouble(w) ** 2 + np.longdouble(z) ** 2)
        if s >= ba.EPS:
            assert got == pytest.approx((float(w / s), float(z / s)), abs=2 * ULP)


def test_the_average_law_calls_acos_three_times_and_no_sine_or_cosine():
    """γ, ψ and θ: three ``acos`` a bond (LAMMPS's angles); the twist's ``cos``/``sin``
    of an ``acos`` (two of each, and two ``acos``, a bond before) are gone."""
    ir = _ir(ba.rotational_average.py_func, *(0.5,) * 19)
    assert _calls(ir, "acos") == 3
    assert _calls(ir, "cos") == 0 and _calls(ir, "sin") == 0


def test_the_decay_equals_libm_s_expm1_to_an_ulp_on_both_sides_of_the_switch():
    rng = np.random.default_rng(9)
    zs = np.concatenate([rng.uniform(-2.0 ** -10, 2.0 ** -10, 20000),
                         np.sign(rng.normal(size=2000)) * 10.0 ** rng.uniform(-300, -3, 2000),
                         rng.uniform(-5.0, 5.0, 200), [0.0, 2.0 ** -10, -2.0 ** -10]])
    for z in zs:
        got, want = bd._decay(float(z), 1.0, -1.0), math.expm1(float(z))
        assert abs(got - want) <= ULP * abs(want), (z, got, want)


def test_the_bond_damping_divides_by_the_masses_once_a_bond():
    """Each mode's impulse scaled by ``1/m``, ``1/J`` computed once a bond: the compiled
    half-step has fewer than half its former 167 divisions (63 with both paths of the
    smoothing's law)."""
    x = np.zeros((2, 3))
    m = np.ones(2)
    ir = _ir(bd.bond_damp_half.py_func, x, x.copy(), np.zeros((2, 4)), x.copy(), x.copy(),
             m, m, np.zeros((1, 2), np.int64), np.zeros((1, N_COLS)), 1e-3, True, True)
    assert ir.count(" fdiv ") <= 80
