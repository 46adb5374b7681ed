"""Broken bonds in the views (issue #44 item 2): a model whose bonds break draws its
bonds as lines and leaves a broken one out (``app.scene.bonds``), from the run's
``break`` events (live: ``Simulation.broken_bonds``; replay and export: the run file's
``/events`` up to the frame's time); a model whose bonds never break draws none."""

from __future__ import annotations

import numpy as np
import pytest

import app.export  # noqa: F401  (chooses EGL off-screen rendering when there is no X)
from engine.models import builders
from engine.models.assembly import model_of
from engine.simulation import Event, Simulation
from engine.simulation.breaking import breaks_over_time, broken_ids

pv = pytest.importorskip("pyvista")

from app.scene import BodyScene, make_plotter  # noqa: E402

SPR = {"law": "bpm/spring", "k": 400.0, "eps_c": 0.03, "gamma": 0.0, "smooth": False,
       "break": True}


@pytest.fixture
def plotter():
    try:
        p = make_plotter((320, 240))
    except Exception as exc:  # pragma: no cover - depends on the machine's OpenGL
        pytest.skip(f"no off-screen OpenGL here (EGL or Xvfb needed): {exc}")
    yield p
    p.close()


def _pulled(law: dict):
    c = builders.chain(4, 0.5)
    c.v[0] = [-0.5, 0.0, 0.0]
    c.v[-1] = [0.7, 0.0, 0.0]
    return model_of([c], k_contact=0.0, bond_types={"1": law})


def test_broken_bonds_are_not_drawn(plotter):
    m = _pulled(SPR)
    scene = BodyScene(plotter, m)
    assert scene.bonds_drawn == 3
    sim = Simulation(m, "rrp-newmark", h=1e-3)
    assert sim.advance(200).ok and sim.n_broken >= 1
    st = sim.state
    scene.update(st.x, st.q)
    scene.set_broken(sim.broken_bonds)
    assert scene.bonds_drawn == 3 - sim.n_broken
    drawn = scene._bonds_mesh.lines.reshape(-1, 3)[:, 1:]
    held = m.forcefield.bonds[sim.bond_ids]
    assert np.array_equal(drawn, held)
    assert np.array_equal(scene._bonds_mesh.points, st.x)
    scene.set_broken(np.zeros(0, dtype=np.int64))  # (a replay back before the break)
    assert scene.bonds_drawn == 3


def test_a_model_whose_bonds_never_break_draws_no_bond_lines(plotter):
    scene = BodyScene(plotter, _pulled({**SPR, "break": False}))
    assert scene.bonds_drawn == 0
    scene.set_broken(np.array([0]))  # (nothing to leave out: no error)
    assert scene.bonds_drawn == 0


def test_the_broken_bonds_at_a_time_come_from_the_events():
    ev = [Event(10, 0.01, "h", "0.001", "0.0005"), Event(33, 0.033, "break", "3", "0 2"),
          Event(50, 0.05, "break", "1", "1")]
    assert broken_ids(ev, t=0.02).size == 0
    assert broken_ids(ev, t=0.033).tolist() == [0, 2]
    assert broken_ids(ev, step=60).tolist() == [0, 1, 2]
    assert breaks_over_time(ev) == [(33, 0.033, 2), (50, 0.05, 3)]
