"""A run compiles what it uses and nothing else (issue #25): counted, not timed.

A fresh process with an empty kernel cache builds one run and records every function
Numba compiles (its ``numba:compile`` events).  The pendulum with ``rrp-newmark`` must
compile no other scheme's kernel and no contact, friction, binder or neighbour-list
kernel; the torus with ``rk4`` no velocity-Verlet or Lie-group kernel, no friction or
parallel kernel, and no cell list (its 80 spheres test all their pairs).  A change
that makes the stepping loop dispatch on the scheme at run time again (every scheme
compiled for every run: 684 s on this machine, issue #25) fails here the day it lands,
however fast the machine.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from compile_probe import compiled_by

ROOT = Path(__file__).resolve().parent.parent


SCHEME_KERNELS = {
    "verlet": "engine.integrators.verlet.verlet_step_ws",
    "rk4": "engine.integrators.rk4.rk4_step_ws",
    "rk4-rigid": "engine.integrators.rk4.rk4_rigid_step_ws",
    "campello": "engine.integrators.campello.campello_step_ws",
    "campello-implicit": "engine.integrators.campello.campello_implicit_step_ws",
    "lgvi": "engine.integrators.lgvi.lgvi_step_ws",
    "pfc-clump": "engine.integrators.pfc.pfc_clump_step_ws",
    "moreau": "engine.integrators.moreau.moreau_step_ws",
    "moreau-symmetric": "engine.integrators.moreau.moreau_symmetric_step_ws",
    "in-place": "engine.integrators.advance._advance_in_place",
}
TERM_KERNELS = {
    "binder": "engine.potentials.binder.binder_bonds_ws",
    "cell list": "engine.neighbours.ensure_neighbours_ws",
    "all pairs": "engine.neighbours.ensure_all_pairs_ws",
    "contact": "engine.potentials.contact.particle_contacts",
    "wall": "engine.potentials.contact.wall_contacts",
    "friction": "engine.potentials.friction.history_contacts",
    "parallel": "engine.parallel.parallel_forces_ws",
    "bpm": "engine.potentials.bpm.bpm_bonds_ws",
    "pivot gravity": "engine.potentials.gravity.pivot_gravity",
    "dumbbells": "engine.potentials.dumbbells.dumbbell_gravity",
}
"""The gated terms (``engine.specialize.GATED``): the large ones, and the gravity of the
pendulum and of the dumbbells, each its own model's only (issue #45); uniform gravity is
compiled with every model (a parameter switches it: the families share their kernels)."""


@pytest.mark.parametrize("scenario, integrator, wanted", [
    ("pendulum", "rrp-newmark", {"verlet", "pivot gravity"}),
    pytest.param("torus", "rk4", {"rk4", "binder", "all pairs", "contact", "wall"},
                 marks=pytest.mark.slow),  # (one scenario in the default run)
])
def test_a_run_compiles_its_scheme_and_its_terms_only(tmp_path, scenario, integrator,
                                                      wanted):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    names = compiled_by(ROOT, env, scenario, integrator)
    kernels = {**SCHEME_KERNELS, **TERM_KERNELS}
    got = {k for k, fn in kernels.items() if fn in names}
    assert got == wanted, f"compiled {sorted(got)}, expected {sorted(wanted)}"
    loops = sorted(n for n in names if n.startswith("engine.integrators.advance.advance_s"))
    assert len(loops) == 1, loops
    # the cache holds that one loop (the files a later start loads)
    index = sorted(p.name.split("-")[0] for p in tmp_path.rglob("advance.advance_s*.nbi"))
    assert index == [loops[0].removeprefix("engine.integrators.")], index


SIBLINGS = """
import json, sys
from engine.integrators.registry import get_integrator
from engine.priming import prime_sibling_kernels
from engine.scenarios import load_scenario
model = load_scenario(sys.argv[1], {}).build_model()
print(json.dumps(prime_sibling_kernels(get_integrator(sys.argv[2]).scheme_id,
                                       model.forcefield.arrays[-1])))
"""


@pytest.mark.parametrize("scenario, integrator", [
    ("pendulum", "rrp-newmark"),
    pytest.param("pendulum", "yoshida4:rrp-exact", marks=pytest.mark.slow)])
def test_the_kernels_beside_the_chain_built_elsewhere_are_not_built_again(
        tmp_path, scenario, integrator):
    """A cold start compiles on both cores: one process builds the kernels beside the
    chain forces → step → loop (``engine.priming.prime_sibling_kernels``) for the exact
    types the loop calls them with; the run's process then loads every one of them
    from the cache and compiles only the chain."""
    import json
    import subprocess
    import sys

    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", SIBLINGS, scenario, integrator], cwd=ROOT,
                         env=env, capture_output=True, text=True, timeout=1800)
    assert out.returncode == 0, out.stderr[-3000:]
    built = json.loads(out.stdout.strip().splitlines()[-1])
    assert {"_before_forces", "record", "kinetic_energy", "stiffness_rows"} <= set(built)
    names = compiled_by(ROOT, env, scenario, integrator)
    again = sorted(n for n in names if n.rsplit(".", 1)[-1] in built)
    assert not again, f"compiled again in the run's process: {again}"
    assert any(n.startswith("engine.integrators.advance.advance_s") for n in names)


def test_a_model_of_one_bond_law_compiles_no_other(tmp_path):
    """A chain of ``bpm/spring`` bonds only (issue #44 item 1): its run compiles the BPM
    laws' kernel and not the binder's (the family slot ``BPM_ONLY``); the torus above,
    the binder's, compiles no BPM kernel."""
    scenario = tmp_path / "spring.toml"
    scenario.write_text('model = "assembly"\n[parameters]\nk_contact = 0.0\n'
                        '[[build]]\nkind = "chain"\nn = 4\ndiameter = 0.5\n'
                        'velocity = [0.0, 0.1, 0.0]\n[bond_types.1]\nlaw = "bpm/spring"\n'
                        'k = 100.0\neps_c = 0.1\ngamma = 0.0\n')
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    names = compiled_by(ROOT, env, str(scenario), "rrp-newmark")
    got = {k for k, fn in {**SCHEME_KERNELS, **TERM_KERNELS}.items() if fn in names}
    assert got == {"verlet", "bpm", "all pairs", "contact"}, sorted(got)
