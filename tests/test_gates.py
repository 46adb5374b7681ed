"""The family gates of ``engine.specialize`` (``gated``, ``unless``) are resolved while
typing and compile no function of their own (issue #45, "less to compile"): as overloads
they compiled a jitted ``_call`` or ``_skip`` for every gate and signature, a whole Numba
pipeline each — 2.7 s of the pendulum's 24 s cold compile went to ``_skip``, 4.8 s of
the torus's 33 s to the two (``benchmarks/bench_compile.py --only kernels``,
docs/performance.md).  Now an intrinsic: the call of ``fn`` itself, or ``absent``."""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from numba.core import event

from engine.specialize import gated, unless

FF = (np.arange(3.0), (0, None))
"""A stand-in force field: its last slot is the family, slot 0 present, slot 1 absent."""


@njit(nogil=True)
def _twice(a):
    return 2.0 * a


@njit(nogil=True)
def _count(a):
    return a.shape[0]


@njit(nogil=True)
def _pair(a):
    return a[0], a[1]


@njit(nogil=True)
def _use(ff, a):
    x = ff[0]
    return (gated(ff, 0, -1.0, _twice, a), gated(ff, 1, -1.0, _twice, a),
            unless(ff, 1, 0.5, _twice, a), unless(ff, 0, 0.5, _twice, a),
            gated(ff, 0, 7, _count, x), gated(ff, 1, 7, _count, x),
            gated(ff, 0, (math.nan, math.nan), _pair, x),
            gated(ff, 1, (math.nan, math.nan), _pair, x))


def test_a_gate_calls_its_kernel_or_gives_absent():
    got = _use(FF, 1.5)
    assert got[:6] == (3.0, -1.0, 3.0, 0.5, 3, 7)
    assert got[6] == (0.0, 1.0) and all(math.isnan(v) for v in got[7])


def test_a_gate_compiles_no_function_of_its_own():
    @njit(nogil=True)
    def thrice(a):
        return 3.0 * a

    @njit(nogil=True)
    def use_again(ff, a):  # (fresh dispatchers: the gates' signatures are new here)
        return gated(ff, 0, -1.0, thrice, a) + unless(ff, 0, 0.5, thrice, a)

    with event.install_recorder("numba:compile") as rec:
        assert use_again(FF, 2.0) == 6.5
    compiled = {ev.data["dispatcher"].py_func.__module__ + "." +
                ev.data["dispatcher"].py_func.__qualname__
                for _, ev in rec.buffer if ev.is_start}
    assert any("use_again" in name for name in compiled)
    assert not [name for name in compiled if name.startswith("engine.specialize")], compiled
