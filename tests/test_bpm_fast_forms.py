"""The BPM kernels' cheaper exact forms (issue #44 item 9, the metamaterial's speed):
the bonds' damping with its inverse masses hoisted and ``expm1`` as its Taylor sum at a
step's small arguments (the average-frame law's: tests/test_bpm_average_form.py).  Each
is checked twice: it equals the form it replaces to round-off, and the compiled kernel
really does without the replaced work (its LLVM IR's libm calls and divisions; the
kernels compiled afresh from their source, so the disk cache plays no part)."""

from __future__ import annotations

import math
import re

import numba
import numpy as np

from engine.potentials import bond_damping as bd
from engine.potentials.bpm import N_COLS

ULP = 2.220446049250313e-16


def _ir(py_func, *args) -> str:
    f = numba.njit(cache=False, error_model="numpy")(py_func)
    f(*args)
    return next(iter(f.inspect_llvm().values()))


def _calls(ir: str, name: str) -> int:
    return len(re.findall(rf"call [^@]*@(?:llvm\.)?{name}(?:\.f64)?\(", ir))


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
