"""The 3D scene draws bodies by shape: a dumbbell as a sphere per point mass and a rod."""

from __future__ import annotations

import numpy as np
import pytest

import app.export  # noqa: F401  (chooses EGL off-screen rendering when there is no X)
from engine.rotations import quat_from_rotvec, quat_to_matrix
from engine.scenarios import load_scenario

pv = pytest.importorskip("pyvista")

from app.scene import BodyScene, make_plotter  # noqa: E402


@pytest.fixture
def plotter():
    try:
        p = make_plotter((320, 240))
        p.add_mesh(pv.Sphere(), name="probe")
        p.render()
    except Exception as exc:  # pragma: no cover - depends on the machine
        pytest.skip(f"no off-screen OpenGL here (EGL or Xvfb needed): {exc}")
    p.remove_actor("probe")
    yield p
    p.close()


def test_dumbbells_are_two_spheres_and_a_rod_that_follow_the_attitude(plotter):
    model = load_scenario("dumbbells").build_model()
    assert model.shape == "dumbbell" and model.body_points.shape == (2, 2, 3)
    scene = BodyScene(plotter, model, colour_by="rotational energy")
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, 3))
    q = quat_from_rotvec(rng.uniform(-2, 2, (2, 3)))
    omega = rng.normal(size=(2, 3))
    scene.update(x, q, np.zeros((2, 3)), omega)
    R = quat_to_matrix(q)
    expected = x[:, None, :] + np.einsum("nij,nkj->nki", R, model.body_points)
    np.testing.assert_allclose(scene._spheres.centres().reshape(2, 2, 3), expected, atol=1e-12)
    np.testing.assert_allclose(scene.centres, x, atol=1e-12)  # the axes sit at x
    # the rod joins each body's two spheres
    rods = scene._rods_mesh
    np.testing.assert_allclose(np.asarray(rods.points).reshape(2, 2, 3), expected, atol=1e-12)
    assert rods.n_lines == 2
    # each sphere of a body carries the body's rotational energy ½ ω·𝕁ω
    w = np.einsum("nji,nj->ni", R, omega)
    e_rot = 0.5 * np.einsum("ni,nij,nj->n", w, model.bodies.inertia, w)
    vals = np.asarray(scene._spheres.mesh.point_data["value"]).reshape(4, -1)[:, 0]
    np.testing.assert_allclose(vals, np.repeat(e_rot, 2), rtol=1e-12)
    # ghosts of a compare run are drawn with the same shape
    scene.set_ghosts([(x + 1.0, q)])
    gs = scene._ghosts[0][0]
    np.testing.assert_allclose(gs.centres().reshape(2, 2, 3), expected + 1.0, atol=1e-12)
    plotter.render()
    img = plotter.screenshot(return_img=True)
    assert (np.abs(img.astype(int) - img[0, 0].astype(int)).sum(axis=2) > 60).mean() > 0.002


def test_spheres_keep_one_sphere_per_body(plotter):
    model = load_scenario("torus", {"n_particles": 10}).build_model()
    scene = BodyScene(plotter, model)
    assert scene.k == 1 and scene._rods_mesh is None
    st = model.initial_state
    scene.update(st.x, st.q)
    np.testing.assert_allclose(scene._spheres.centres(), st.x, atol=1e-12)


def test_the_box_of_the_tori_pile_is_drawn_from_its_walls():
    """Axis-aligned walls n·x ≥ c enclose a box (open top closed at the bodies)."""
    from types import SimpleNamespace

    from app.scene import BodyScene
    from engine.models import MODELS

    model = MODELS["tori-pile"].make({"n_tori": 4, "box": 6.0})
    fake = SimpleNamespace(model=model, diameter=model.bodies.D,
                           _centres=model.initial_state.x)
    x0, x1, y0, y1, z0, z1 = BodyScene._walls_box(fake)
    assert (x0, x1, y0, y1, z0) == (-3.0, 3.0, -3.0, 3.0, 0.0)
    assert z1 > model.initial_state.x[:, 2].max()
    torus = MODELS["torus"].make({})
    assert BodyScene._walls_box(SimpleNamespace(model=torus, diameter=torus.bodies.D,
                                                _centres=torus.initial_state.x)) is None


def test_every_wall_of_an_assembly_is_drawn(plotter):
    """An assembly's walls that do not make a box are each drawn as a plane (issue #35:
    before, only the first was), and the camera frames them all."""
    from engine.models import builders
    from engine.models.assembly import model_of

    part = builders.chain(4, 0.5, start=(0.0, 0.0, 1.0))
    walls = [((0.0, 0.0, 0.0), (0.0, 0.0, 1.0)), ((3.0, 0.0, 0.0), (-1.0, 0.0, 1.0)),
             ((-2.0, 0.0, 0.0), (1.0, 0.0, 1.0))]
    model = model_of([part], walls=walls)
    scene = BodyScene(plotter, model)
    names = set(plotter.actors)
    assert {"rrp-wall", "rrp-wall-1", "rrp-wall-2"} <= names and "rrp-box" not in names
    assert scene._wall_bounds.shape == (12, 3)
    for k, (_, normal) in enumerate(walls[1:], start=1):
        pts = np.asarray(plotter.actors[f"rrp-wall-{k}"].GetMapper().GetInput().GetPoints()
                         .GetData())
        n = np.asarray(normal) / np.linalg.norm(normal)
        c = float(n @ np.asarray(walls[k][0]))
        np.testing.assert_allclose(pts @ n, c, atol=1e-9)  # in the wall's plane
