"""Every scheme on every model gives the same bits as before the kernels were
specialised per scheme and per force-field family (issue #25): the states after a few
hundred steps (``tests/bits_matrix.py``), advanced in chunks of 7 steps, compared with
``tests/data/bits.json`` (dtype, shape and SHA-256 of the bytes of each array).  The
fixture was written by the engine *before* the specialisation (commit 45c2621, every
scheme in one loop dispatching at run time): the specialised kernels compute exactly
what it did."""

from __future__ import annotations

import pytest
from bits_matrix import CASES, fingerprint, read_fixture, run_case, schemes_for

REFERENCE = read_fixture()


@pytest.mark.slow
@pytest.mark.parametrize("label, scenario, params, names, steps", CASES,
                         ids=[c[0] for c in CASES])
def test_the_same_bits_as_the_fixture(label, scenario, params, names, steps):
    for scheme in schemes_for(names):
        got = run_case(scenario, params, scheme, steps)
        key = f"{label}|{scheme}|"
        if got is None:  # refused by the registry: as when the fixture was written
            assert key + "x" not in REFERENCE, f"{scheme} on {label} is refused now"
            continue
        assert key + "x" in REFERENCE, f"{scheme} on {label} was refused by the fixture's engine"
        for name, a in got.items():
            assert fingerprint(a) == REFERENCE[key + name], f"{scheme} on {label}: {name}"
