"""Every scheme on every model gives the same bits as before the kernels were
specialised per scheme and per force-field family (issue #25): the states after a few
hundred steps (``tests/bits_matrix.py``), advanced in chunks of 7 steps, compared with
``tests/data/bits.json`` (dtype, shape and SHA-256 of the bytes of each array).  The
fixture was written by the engine *before* the specialisation (commit 45c2621, every
scheme in one loop dispatching at run time): the specialised kernels compute exactly
what it did.

The whole matrix is marked ``slow`` (``pytest -m slow``, and CI); the default run checks
:data:`REPRESENTATIVES`, one run per force-field family with its scenario's own scheme
(docs/testing.md, issue #34 item 6)."""

from __future__ import annotations

import pytest
from bits_matrix import CASES, fingerprint, read_fixture, run_case, schemes_for

REFERENCE = read_fixture()

REPRESENTATIVES: tuple[tuple[str, str], ...] = (
    ("pendulum", "rrp-exact"),               # a body on a pivot, gravity
    ("torus", "rrp-newmark"),                # spheres: binder, contacts, wall
    ("dumbbells", "lgvi"),                   # non-spherical bodies, mutual gravity
    ("torus-hard", "moreau-symmetric"),      # hard contacts: the percussion solver
    ("spring-pendulum", "moreau-symmetric"),  # generalized coordinates
    ("pile-friction", "rrp-newmark"),        # friction springs (contact history)
)
"""``(case label, scheme)``: one run of each force-field family, with the scheme its
scenario runs by default (compiled by other tests of the default run anyway)."""


def _check(label: str, scenario: str, params: dict, scheme: str, steps: int) -> None:
    got = run_case(scenario, params, scheme, steps)
    key = f"{label}|{scheme}|"
    if got is None:  # refused by the registry: as when the fixture was written
        assert key + "x" not in REFERENCE, f"{scheme} on {label} is refused now"
        return
    assert key + "x" in REFERENCE, f"{scheme} on {label} was refused by the fixture's engine"
    for name, a in got.items():
        assert fingerprint(a) == REFERENCE[key + name], f"{scheme} on {label}: {name}"


@pytest.mark.parametrize("label, scheme", REPRESENTATIVES,
                         ids=[f"{c}|{s}" for c, s in REPRESENTATIVES])
def test_the_same_bits_for_one_scheme_per_family(label, scheme):
    """The default run's share of the matrix below (module docstring)."""
    case = next(c for c in CASES if c[0] == label)
    _check(label, case[1], case[2], scheme, case[4])


@pytest.mark.slow
@pytest.mark.parametrize("label, scenario, params, names, steps", CASES,
                         ids=[c[0] for c in CASES])
def test_the_same_bits_as_the_fixture(label, scenario, params, names, steps):
    for scheme in schemes_for(names):
        _check(label, scenario, params, scheme, steps)
