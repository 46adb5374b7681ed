"""What the app draws of a BPM model (issue #44 item 7): the dipoles as arrows turning
with their spheres, the field as an arrow as long as its ramped magnitude with a label,
the stage and its time, the stacked energy plot that never stacks a negative component,
the dissipated energy's legend naming what dissipates, and the bond laws the parameter
panel shows instead of the binder's coefficients (the panel itself: test_gui_bpm.py).
The metamaterial is LAMMPS's examples/bpm/metamaterial as shipped in assets/scenarios."""

from __future__ import annotations

import os

import numpy as np
import pytest

os.environ.setdefault("VTK_DEFAULT_OPENGL_WINDOW", "vtkEGLRenderWindow")

from app import plot_style  # noqa: E402
from app.scene.dipoles import FIELD_SHARE, FieldScene  # noqa: E402
from engine.models.field_view import (  # noqa: E402
    dissipation_sources,
    field_at,
    stage_at,
    stage_spans,
    world_dipoles,
)
from engine.models.law_view import binder_unused, bond_laws  # noqa: E402
from engine.rotations import quat_to_matrix  # noqa: E402
from engine.scenarios import load_scenario  # noqa: E402

H = 1e-4  # the metamaterial's h (the deck's timestep)


@pytest.fixture(scope="module")
def meta():
    return load_scenario("bpm-metamaterial").build_model()


@pytest.fixture
def plotter():
    import pyvista as pv

    p = pv.Plotter(off_screen=True, window_size=(320, 240))
    yield p
    p.close()


def _turn(q: np.ndarray, axis: np.ndarray, angle: float) -> np.ndarray:
    """``q`` turned by ``angle`` about the world ``axis`` (scalar first)."""
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    r = np.array([np.cos(angle / 2), *(np.sin(angle / 2) * a)])
    w0, v0 = r[0], r[1:]
    w1, v1 = q[0], q[1:]
    return np.array([w0 * w1 - v0 @ v1, *(w0 * v1 + w1 * v0 + np.cross(v0, v1))])


# ------------------------------------------------------------------ the scene
def test_the_metamaterial_ships_with_its_lammps_origin():
    from engine.scenarios import SCENARIO_DIR

    text = (SCENARIO_DIR / "bpm-metamaterial.toml").read_text(encoding="utf-8")
    for words in ("examples/bpm/metamaterial", "in.bpm.metamaterial", "Gabriel Alkuino",
                  "GPL-2.0", "rrp import lammps"):
        assert words in text, words


def test_every_dipole_is_an_arrow_on_its_sphere_that_turns_with_it(meta, plotter):
    """64 magnets, 64 arrows through their spheres' centres along ``R_i μ_i``; turning
    one sphere turns its arrow (and no other), moving it moves the arrow."""
    st = meta.initial_state
    fs = FieldScene.for_model(plotter, meta, np.asarray(meta.bodies.D, float),
                              stage_spans(meta, H))
    assert fs is not None and fs.dipole_bodies.size == 64
    mu = world_dipoles(meta, st.q)
    assert np.count_nonzero(np.linalg.norm(mu, axis=1)) == 64
    b = fs.dipole_bodies
    want = mu[b] / np.linalg.norm(mu[b], axis=1, keepdims=True)
    np.testing.assert_allclose(fs.dipole_directions(), want, atol=1e-12)
    k = fs.mesh.n_points // b.size  # (each arrow's points centred on its sphere)
    centres = np.asarray(fs.mesh.points).reshape(b.size, k, 3)
    ends = centres.max(axis=1) + centres.min(axis=1)
    np.testing.assert_allclose(0.5 * ends, np.asarray(st.x)[b], atol=1e-9)
    # turn magnet j by 90° about z, move magnet j2: only their arrows change
    j, j2 = int(b[0]), int(b[1])
    q = np.array(st.q, float)
    x = np.array(st.x, float)
    q[j] = _turn(q[j], [0.0, 0.0, 1.0], np.pi / 2)
    x[j2] += [0.3, -0.2, 0.1]
    fs.update(1.0, x, q)
    d = fs.dipole_directions()
    turned = quat_to_matrix(q[j][None])[0] @ meta.forcefield.fields[0][j]
    turned /= np.linalg.norm(turned)
    np.testing.assert_allclose(d[0], turned, atol=1e-12)
    assert abs(d[0] @ want[0]) < 1e-12  # (a dipole along x, turned about z: along y)
    np.testing.assert_allclose(d[1:], want[1:], atol=1e-12)
    pts = np.asarray(fs.mesh.points).reshape(b.size, k, 3)
    np.testing.assert_allclose(0.5 * (pts[1].max(0) + pts[1].min(0)), x[j2], atol=1e-9)


def test_the_field_arrow_follows_the_ramp_and_its_label_says_the_magnitude(meta,
                                                                             plotter):
    """The deck's ``0.25*ramp(0,1)`` over stage 1 (t = 0 → 10), held in stage 2: the
    arrow's length is its share of the model's size times ``|E|/0.25``, along z, and the
    label gives ``|E|`` and the stage with its time."""
    spans = stage_spans(meta, H)
    assert spans == [(0, 0.0, 10.0), (1, 10.0, 15.0)]
    fs = FieldScene.for_model(plotter, meta, np.asarray(meta.bodies.D, float), spans)
    st = meta.initial_state
    full = FIELD_SHARE * fs.size
    for t, e in ((0.0, 0.0), (2.5, 0.0625), (5.0, 0.125), (10.0, 0.25), (12.0, 0.25)):
        fs.update(t, st.x, st.q)
        np.testing.assert_allclose(field_at(meta, t, stage_at(spans, t)), [0, 0, e],
                                   atol=1e-15)
        np.testing.assert_allclose(fs.field_length, full * e / 0.25, rtol=1e-9, atol=1e-12)
        assert f"field E = {e:.4g} " in fs.text, (t, fs.text)
        k = 1 if t <= 10.0 else 2  # (the boundary's frame ends stage 1, as the live
        # window shows it and the overlay says)
        name = "field ramp" if k == 1 else "damped hold"
        t0 = 0.0 if k == 1 else 10.0
        assert f"stage {k} of 2 ({name}): {t - t0:.3f} of " in fs.text, (t, fs.text)
    p = np.asarray(fs.field_mesh.points)  # along the field (+z), its tail at its base
    assert np.ptp(p[:, 2]) == pytest.approx(full)
    assert p[:, 2].min() == pytest.approx(fs.field_base[2], abs=1e-9)


def test_stage_spans_come_from_the_run_files_events_where_it_has_them(meta):
    """A run whose h changed mid-stage ends its stage where the event says."""
    from engine.simulation.records import Event

    ev = [Event(0, 9.5, "stage", "1 (field ramp)", "2 (damped hold)")]
    assert stage_spans(meta, H, ev) == [(0, 0.0, 9.5), (1, 9.5, 9.5 + 5.0)]
    assert stage_at(stage_spans(meta, H, ev), 9.6)[0] == 1


def test_a_model_with_none_of_it_draws_nothing(plotter):
    m = load_scenario("torus").build_model()
    assert FieldScene.for_model(plotter, m, np.ones(m.n_bodies)) is None


# ------------------------------------------------------------------ the stacked energy
@pytest.mark.parametrize("seed", range(4))
def test_the_stack_never_stacks_a_negative_component(seed):
    """Each band lies on its value's side of 0, is as thick as its value, and no two
    bands overlap — whatever the signs (the field's −μ·B, its work, gravity, D)."""
    rng = np.random.default_rng(seed)
    names = ["translational", "rotational", "gravity", "axial", "shear", "bending",
             "field", "field work", "dissipated"]
    order = plot_style.stack_order(names)
    assert order[-1] == "dissipated"
    v = rng.normal(size=(200, len(order))) * 3
    for k, n in enumerate(order):  # (the non-negative ones are)
        if n not in ("gravity", "field", "field work"):
            v[:, k] = np.abs(v[:, k])
    inner, outer = plot_style.stack_bands(v)
    np.testing.assert_allclose(outer - inner, v, atol=1e-12)
    lo, hi = np.minimum(inner, outer), np.maximum(inner, outer)
    assert ((v >= 0) <= (lo >= -1e-12)).all()  # a positive band above 0
    assert ((v < 0) <= (hi <= 1e-12)).all()  # a negative band below 0
    for r in range(v.shape[0]):  # no overlap: sorted bands touch end to start
        s = np.argsort(lo[r])
        assert (lo[r][s][1:] >= hi[r][s][:-1] - 1e-12).all()


def _field_series(n: int = 300):
    from app.export.plots import RunSeries

    t = np.linspace(0.0, 15.0, n)
    s = np.clip(t / 10.0, 0.0, 1.0)
    energy = {"translational": 0.2 * s, "rotational": 0.3 * s, "axial": 0.5 * s,
              "shear": 0.1 * s, "bending": 0.4 * s, "field": -4.0 * s,
              "field work": 2.0 * s, "dissipated": 0.3 * np.clip(t - 10, 0, None)}
    total = np.sum(list(energy.values()), axis=0)
    zeros = np.zeros((n, 3))
    return RunSeries("meta", t, energy, total, np.zeros(n), zeros, zeros)


def test_the_exported_stack_draws_the_field_below_zero_and_the_others_above():
    """``rrp export --layout view+plots``: the field's band from 0 down to −μ·B, its
    work and the bonds' from 0 up (not from the field's curve), the total its own line;
    the dissipated energy's legend names damping for a damped model."""
    from app.export.plots import PlotStrip

    s = _field_series()
    strip = PlotStrip([s], 0.0, 15.0, (400, 600), sources=("damping",))
    c = strip.curves[0]
    order = plot_style.stack_order(c.names)
    f = order.index("field")
    np.testing.assert_allclose(c.base[:, f], 0.0, atol=1e-12)
    assert (c.stack[:, f] <= 1e-12).all() and c.stack[:, f].min() < -3.9
    assert (c.base[:, [k for k in range(len(order)) if k != f]] >= -1e-12).all()
    np.testing.assert_allclose(c.stack - c.base,
                               np.array([np.interp(c.t, s.t, s.energy[n]) for n in order]).T,
                               atol=0.05)
    assert "dissipated D (damping)" in strip.legends[0]
    assert "dissipated D (impacts, friction)" not in strip.legends[0]


def test_the_dissipated_energy_says_what_dissipates(meta):
    assert dissipation_sources(meta) == ("damping",)
    assert plot_style.legend_name("dissipated", ("damping",)) == "dissipated D (damping)"
    drop = load_scenario("assembly-drop").build_model()
    assert "damping" not in dissipation_sources(drop)


# ------------------------------------------------------------------ the bond laws
def test_a_bpm_only_model_has_no_binder_coefficients_in_use(meta):
    assert binder_unused(meta)
    laws = bond_laws(meta)
    assert laws["1"]["law"] == "bpm/rotational" and laws["1"]["k_b"] == 0.5
    assert not binder_unused(load_scenario("assembly-impact").build_model())


def test_every_bpm_component_has_a_colour_of_its_own():
    """The field took the fallback colour of its name: the spring's olive (a bpm/spring
    model has both)."""
    names = ["translational", "rotational", "bending", "axial", "shear", "spring",
             "contact", "field", "field work", "dissipated"]
    colours = [plot_style.energy_colour(n) for n in names]
    assert len(set(colours)) == len(names), dict(zip(names, colours, strict=True))
