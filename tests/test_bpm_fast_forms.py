"""The BPM kernels' cheaper exact forms (issue #44 item 9, the metamaterial's speed):
the bonds' damping with its inverse masses and ``1/κ`` in its plan and ``expm1`` as its
Taylor sums at a step's arguments (the average-frame law's: tests/test_bpm_average_form.py).
Each is checked twice: it equals the form it replaces to round-off, and the compiled kernel
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


def test_the_decay_is_within_an_ulp_of_expm1_on_every_side_of_each_switch():
    """``e^z − 1`` by its Taylor sums (to ``z⁵``, ``z⁷``, ``z¹¹`` below 2⁻¹⁰, 2⁻⁶, 2⁻³;
    libm beyond; issue #44 item 9): within 0.6 ulp of the exact value (``expm1`` in
    extended precision), as libm's, and within an ulp of libm's."""
    rng = np.random.default_rng(9)
    zs = np.concatenate([rng.uniform(-2.0 ** -3, 2.0 ** -3, 20000),
                         rng.uniform(-2.0 ** -6, 2.0 ** -6, 5000),
                         rng.uniform(-2.0 ** -10, 2.0 ** -10, 5000),
                         np.sign(rng.normal(size=2000)) * 10.0 ** rng.uniform(-300, -3, 2000),
                         rng.uniform(-5.0, 5.0, 200),
                         [0.0, 2.0 ** -10, -2.0 ** -10, 2.0 ** -6, -2.0 ** -6, 2.0 ** -3,
                          -2.0 ** -3, np.nextafter(2.0 ** -3, 0.0)]])
    exact = np.expm1(zs.astype(np.longdouble))
    for z, ex in zip(zs, exact, strict=True):
        got, lib = bd._expm1(float(z)), math.expm1(float(z))
        ulp = math.ulp(abs(float(ex))) if ex else 5e-324
        assert abs(np.longdouble(got) - ex) <= 0.6 * ulp or got == lib, (z, got, lib)
        assert abs(got - lib) <= ULP * abs(lib), (z, got, lib)
    for terms, sum_ in enumerate((bd._taylor5, bd._taylor7, bd._taylor11)):
        top = (2.0 ** -10, 2.0 ** -6, 2.0 ** -3)[terms]
        for z in np.linspace(-top, top, 2001)[1:-1]:  # (each sum over its whole range)
            ex = np.expm1(np.longdouble(z))
            assert abs(np.longdouble(sum_(float(z))) - ex) <= 0.6 * math.ulp(float(ex)) \
                or z == 0.0, (terms, z)


def test_the_bond_damping_divides_twice_a_bond():
    """The compiled half-step divides once a bond for ``1/(r κ_s)`` (``1/r`` and the
    sliding's ``1/κ`` from it) besides the square root; the masses' and moments'
    inverses and the normal and spinning modes' ``1/κ`` are the plan's constants (issue
    #44 item 9): the chunk's loop has one (vector) division where it had 9 a bond."""
    from engine.potentials.bond_damping_plan import plan_for

    x = np.zeros((2, 3))
    m = np.ones(2)
    table = np.zeros((1, N_COLS))
    table[0, 0] = 1.0
    table[0, bd.C_GAMMA_ROT] = 1.0
    ir = _ir(bd.bond_damp_half.py_func, x, x.copy(), np.zeros((2, 4)), x.copy(), x.copy(),
             m, m, table, 1e-3, True, True, plan_for(np.array([[0, 1]]), table, m, m))
    chunk = ir[ir.index("define"):]
    vector_divs = len(re.findall(r"fdiv <\d+ x double>", chunk))
    assert 1 <= vector_divs <= 4, vector_divs
