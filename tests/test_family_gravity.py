"""The gravity of the pendulum and of the dumbbells is in its own model's family only
(issue #45, "less to compile": ``engine.specialize.GATED``); uniform gravity, which a
parameter switches, keeps one family with and without it, so those models share their
kernels."""

from __future__ import annotations

from engine.layout import T_DUMBBELLS, T_GRAVITY_FIELD, T_PIVOT_GRAVITY
from engine.scenarios import load_scenario


def _family(name: str, **params) -> tuple:
    return load_scenario(name, params).build_model().forcefield.arrays[-1]


def test_a_model_s_family_has_no_other_model_s_gravity():
    pendulum, torus, dumbbells = _family("pendulum"), _family("torus"), _family("dumbbells")
    assert pendulum[T_PIVOT_GRAVITY] is not None and pendulum[T_DUMBBELLS] is None
    assert dumbbells[T_DUMBBELLS] is not None and dumbbells[T_PIVOT_GRAVITY] is None
    assert torus[T_PIVOT_GRAVITY] is None and torus[T_DUMBBELLS] is None


def test_uniform_gravity_on_or_off_is_one_family():
    model = load_scenario("torus", {}).build_model()
    ff = model.forcefield
    before = ff.arrays[-1]
    ff.set_gravity(9.81)
    assert ff.flags[T_GRAVITY_FIELD] == 1 and ff.arrays[-1] == before
