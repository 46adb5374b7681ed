"""Bond laws as a choice per bond type (issue #44 item 1): LAMMPS's ``bpm/rotational``
and ``bpm/spring`` beside the B&G binder (``engine.potentials.bpm``,
``engine.models.bond_laws``; docs/physics.md "BPM bond laws").

Each law's energy against finite differences of its forces and torques; the reference
state stress-free; momentum kept by the variational schemes with every law; the energy
error of ``rrp-newmark`` falling as h² for the conservative laws and not for the
smoothed ``bpm/rotational``; a model of one law compiling no other law's kernel; the
scenario keys and their one-line refusals; a run file rebuilding the model."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import energy_error_slope, fd_loads

from engine.forcefield import ForceField, evaluate
from engine.layout import E_AXIAL, E_BENDING, E_SHEAR, E_SPRING, T_BONDS
from engine.models import builders
from engine.models.assembly import model_of
from engine.models.assembly_input import AssemblyError
from engine.potentials import bpm
from engine.rotations import quat_from_rotvec
from engine.specialize import BOND_TYPES, BPM, BPM_ONLY

ROT = {"law": "bpm/rotational", "k_r": 400.0, "k_s": 200.0, "k_t": 2.0, "k_b": 4.0,
       "f_rc": 150.0, "f_sc": 150.0, "tau_bc": 6.0, "tau_tc": 6.0,
       "gamma_n": 0.0, "gamma_s": 0.0, "gamma_r": 0.0, "gamma_t": 0.0}
SPR = {"law": "bpm/spring", "k": 400.0, "eps_c": 0.3, "gamma": 0.0}
SLOTS = (E_AXIAL, E_SHEAR, E_BENDING, E_SPRING)


# ----------------------------------------------------------------------- the kernel
def _ring_ff(laws: list[str], smooth: bool, seed: int = 1):
    """Four spheres bonded in a ring at random attitudes, bond ``b`` of law
    ``laws[b]`` (``binder``: the binder's, with its per-bond table), and a deformed
    configuration."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(4, 3))
    q0 = quat_from_rotvec(0.5 * rng.normal(size=(4, 3)))
    bonds = np.array([[0, 1], [1, 2], [2, 3], [3, 0]])
    coeffs = {**ROT, "k": 3.0, "eps_c": 0.5, "k_r": 2.0, "k_s": 1.5,
              "k_t": 0.7, "k_b": 1.3, "f_rc": 10.0, "f_sc": 10.0, "tau_bc": 10.0,
              "tau_tc": 10.0}
    table = np.array([bpm.law_row(law, coeffs, smooth) for law in laws])
    bpm.reference(table, x, q0, bonds)
    d0 = x[bonds[:, 0]] - x[bonds[:, 1]]
    r0 = np.linalg.norm(d0, axis=1)
    ff = ForceField(np.ones(4), np.ones(4), np.ones(4), bonds=bonds,
                    bond_ref=np.concatenate([d0 / r0[:, None], r0[:, None]], axis=1))
    ff.flags[T_BONDS] = 1
    ff.set_bond_coefficients(np.array([[1.0, 2.0, 3.0] if law == "binder" else [0.0] * 3
                                       for law in laws]))
    ff.set_bond_laws(table)
    xd = x + 0.15 * rng.normal(size=(4, 3))
    qd = quat_from_rotvec(0.6 * rng.normal(size=(4, 3)))
    return ff, x, q0, xd, qd


def _fd_all(ff, x, q):
    f = np.zeros_like(x)
    rm = np.zeros_like(x)
    for slot in SLOTS:
        a, b = fd_loads(ff, x, q, slot, 1e-4, 1e-4)
        f += a
        rm += b
    return f, rm


LAWS = {
    "rotational": (["bpm/rotational"] * 4, False),
    "spring": (["bpm/spring"] * 4, False),
    "spring-smooth": (["bpm/spring"] * 4, True),
    "mixed": (["binder", "bpm/rotational", "bpm/spring", "bpm/rotational"], False),
}


@pytest.mark.parametrize("case", list(LAWS))
def test_each_law_energy_against_finite_differences(case):
    """Forces and torques are the gradients of the energies (the binder's too, in the
    mixed model); a spring's smoothing (strain near ε_c here) included."""
    ff, _, _, x, q = _ring_ff(*LAWS[case])
    F, RM, e = evaluate(ff, x, q)
    assert e[list(SLOTS)].sum() > 0.1
    f_fd, rm_fd = _fd_all(ff, x, q)
    scale = max(np.abs(F).max(), np.abs(RM).max())
    assert np.abs(F - f_fd).max() < 1e-8 * scale
    assert np.abs(RM - rm_fd).max() < 1e-8 * scale
    # every bond's loads are internal: P and L kept (torques about the origin)
    assert np.abs(F.sum(axis=0)).max() < 1e-13 * scale
    assert np.abs((RM + np.cross(x, F)).sum(axis=0)).max() < 1e-13 * scale * 10


def test_smoothed_rotational_is_not_a_gradient_but_keeps_momentum():
    """``smooth yes`` (LAMMPS's w = 1 − B⁴ on forces and torques) is not a gradient of
    the reported energies: why it drifts (docs/physics.md); its loads stay internal."""
    ff, _, _, x, q = _ring_ff(["bpm/rotational"] * 4, True)
    F, RM, _ = evaluate(ff, x, q)
    f_fd, rm_fd = _fd_all(ff, x, q)
    scale = max(np.abs(F).max(), np.abs(RM).max())
    assert max(np.abs(F - f_fd).max(), np.abs(RM - rm_fd).max()) > 1e-3 * scale
    assert np.abs(F.sum(axis=0)).max() < 1e-13 * scale
    assert np.abs((RM + np.cross(x, F)).sum(axis=0)).max() < 1e-12 * scale


@pytest.mark.parametrize("case", ["rotational", "spring", "mixed"])
def test_the_reference_state_is_stress_free(case):
    """At the creation state (any attitudes) and after a rigid motion of it: no energy,
    no load (the reference frame of each bond goes with its spheres)."""
    laws, smooth = LAWS[case]
    ff, x, q0, _, _ = _ring_ff(laws, smooth)
    ff.set_bond_coefficients(np.zeros((4, 3)))  # (the binder's own reference: not this)
    for turn in (np.zeros(3), np.array([0.3, -1.1, 0.7])):
        g = quat_from_rotvec(turn[None])
        from engine.rotations import quat_mul, quat_to_matrix

        R = quat_to_matrix(g)[0]
        F, RM, e = evaluate(ff, x @ R.T + 1.5, quat_mul(np.repeat(g, 4, axis=0), q0))
        assert np.abs(F).max() < 1e-13 and np.abs(RM).max() < 1e-13
        assert abs(e[list(SLOTS)].sum()) < 1e-13


# ------------------------------------------------------------------------ the model
def _chain(law: dict, smooth: bool = False, second: dict | None = None):
    """Ten spheres in a chain, kicked and spun (no contact), its bonds of ``law`` (the
    second half of ``second`` where given: a model of two laws)."""
    c = builders.chain(10, 0.5)
    rng = np.random.default_rng(5)
    c.v += 0.5 * rng.standard_normal(c.v.shape)
    c.omega += 3.0 * rng.standard_normal(c.omega.shape)
    types = {"1": {**law, "smooth": smooth}}
    if second is not None:
        c.bond_type = np.array(["1"] * 4 + ["2"] * 5)
        types["2"] = second
    return model_of([c], k_contact=0.0, bond_types=types)


CHAINS = {
    "rotational": lambda: _chain(ROT),
    "spring": lambda: _chain(SPR, True),
    "binder+rotational": lambda: _chain(ROT, second={"k_bend": 2.0, "k_axial": 50.0,
                                                      "k_shear": 40.0}),
}


def test_families_one_law_pays_nothing_for_the_others():
    """A model of BPM laws only leaves the binder out of its family (``BPM_ONLY``: the
    binder's kernel is not compiled, tests/test_compile_scope.py counts it); a model of
    the binder only has no BPM slot (its kernels and bits of before); two laws: both."""
    fam = CHAINS["rotational"]().forcefield.arrays[-1]
    assert fam[BPM] == 0 and fam[BPM_ONLY] == 0
    fam = model_of([builders.chain(4, 0.5)]).forcefield.arrays[-1]
    assert fam[BPM] is None and fam[BPM_ONLY] is None and fam[BOND_TYPES] is None
    ff = CHAINS["binder+rotational"]().forcefield
    fam = ff.arrays[-1]
    assert fam[BPM] == 0 and fam[BPM_ONLY] is None and fam[BOND_TYPES] == 0
    assert np.all(ff.bond_k[:4] == 0.0) and np.all(ff.bond_k[4:] == [2.0, 50.0, 40.0])


def _momenta(sim):
    from engine.diagnostics import angular_momentum, linear_momentum, momentum_scales

    s, b = sim.state, sim.model.bodies
    return (linear_momentum(b.m, s.v), angular_momentum(b.m, b.J, s.x, s.v, s.omega),
            momentum_scales(b.m, b.J, s.x, s.v, s.omega))


VARIATIONAL = ("rrp-newmark", "lgvi", "campello", "rrp-exact", "rrp-implicit")


@pytest.mark.parametrize("scheme", VARIATIONAL)
@pytest.mark.parametrize("law", list(CHAINS))
def test_variational_schemes_keep_momentum_with_every_law(law, scheme):
    from engine.drivers import simulation_for

    sim = simulation_for(CHAINS[law](), scheme, 2e-3, record_every=10**9,
                         record_frames=False, energy_tolerance=None)
    p0, l0, (sp, sl) = _momenta(sim)
    assert sim.advance(500).ok
    p1, l1, _ = _momenta(sim)
    assert np.abs(p1 - p0).max() < 1e-13 * sp
    assert np.abs(l1 - l0).max() < 1e-13 * sl


@pytest.mark.parametrize("law, smooth", [(ROT, False), (SPR, False), (SPR, True)],
                         ids=["rotational", "spring", "spring-smooth"])
def test_conservative_laws_energy_error_falls_as_h_squared(law, smooth):
    """Undamped, ``bpm/rotational`` without smoothing and ``bpm/spring`` are
    conservative: the energy error of ``rrp-newmark`` is bounded and falls as h²
    (docs/physics.md "BPM bond laws": the numbers)."""
    slope, errs = energy_error_slope(lambda: _chain(law, smooth), (4e-3, 2e-3, 1e-3),
                                     t_end=2.0)
    assert 1.8 < slope < 2.2, errs


def test_smoothed_rotational_drifts_whatever_h():
    """With ``smooth yes`` the energy moves by about the same amount at h and h/4 (the
    drift is the law's, not the scheme's): not conservative."""
    from engine.drivers import simulation_for

    drift = []
    for h in (2e-3, 5e-4):
        sim = simulation_for(_chain(ROT, True), "rrp-newmark", h, record_every=10**9,
                             record_frames=False, energy_tolerance=None)
        e0 = sim.energy.sum()
        assert sim.advance(round(16.0 / h)).ok
        drift.append(sim.energy.sum() - e0)
    assert abs(drift[1]) > 1e-3 * e0  # (h² would have made it 16 times smaller)
    assert 0.5 < drift[1] / drift[0] < 2.0, drift


# ------------------------------------------------------------- scenario and refusals
def _toml(tmp_path, law_lines: str) -> str:
    p = tmp_path / "bpm.toml"
    p.write_text(f"""model = "assembly"
[[build]]
kind = "chain"
n = 4
diameter = 0.5
velocity = [0.0, 0.1, 0.0]
bond_type = "2"

[bond_types.2]
{law_lines}
""")
    return str(p)


SPRING_TOML = 'law = "bpm/spring"\nk = 400.0\neps_c = 0.3\ngamma = 0.0\nsmooth = true'


def test_a_scenario_gives_a_bond_type_its_law_and_a_run_file_rebuilds_it(tmp_path):
    from engine.io import RunFile
    from engine.scenarios import load_scenario

    sc = load_scenario(_toml(tmp_path, SPRING_TOML))
    m = sc.build_model()
    ff = m.forcefield
    assert ff.bpm_laws == 2 and "spring" in m.energy_components
    assert "bending" not in m.energy_components
    row = ff.bpm[0]
    assert row[bpm.C_LAW] == bpm.LAW_SPRING and row[bpm.C_SMOOTH] == 1.0
    assert row[bpm.C_COEF] == 400.0 and row[bpm.C_R0] == pytest.approx(0.5)
    from engine.api import run

    out = tmp_path / "bpm.h5"
    run(sc, out=out, t_end=0.01)
    with RunFile(out) as f:
        again = f.build_model()
    assert np.array_equal(again.forcefield.bpm, ff.bpm)


@pytest.mark.parametrize("lines, says", [
    ('law = "bpm/spring"\nk = 1.0\neps_c = 0.0\ngamma = 0.0\nbreak = true',
     "break = true needs eps_c > 0"),
    ('law = "bpm/spring"\nk = 1.0\ngamma = 0.0', "eps_c is missing"),
    ('law = "bpm/spring"\nk = -1.0\neps_c = 0.1\ngamma = 0.0', "k = -1.0 must be"),
    ('law = "bpm/rotational"\nk = 1.0', "unknown key 'k'"),
    ('law = "bpm/elastic"', "unknown law 'bpm/elastic'"),
    ('law = "bpm/spring"\nk = 1.0\neps_c = 0.0\ngamma = 0.0\nsmooth = true',
     "smooth = true needs eps_c > 0"),
])
def test_bad_law_tables_are_refused_in_one_line(tmp_path, lines, says):
    from engine.scenarios import ScenarioError, load_scenario

    with pytest.raises((AssemblyError, ScenarioError)) as err:
        load_scenario(_toml(tmp_path, lines)).build_model()
    msg = str(err.value)
    assert says in msg and "\n" not in msg and "[bond_types.2]" in msg


def test_energy_stepping_refuses_bpm_laws():
    from engine.energy_stepping import EnergyStepper
    from engine.energy_stepping.errors import EnergySteppingError

    m = CHAINS["spring"]()
    with pytest.raises(EnergySteppingError, match="BPM bond laws"):
        EnergyStepper(m, 1e-3, m.initial_state)


@pytest.mark.parametrize("law", ["rotational", "spring"])
def test_the_stability_estimate_sees_the_bpm_bonds(law):
    """The step limit of a BPM chain is its bonds' (``k/m``), not infinite (issue #44
    item 1: the binder's coefficients of a BPM bond are zero)."""
    from engine.stability import estimate_stability

    m = CHAINS[law]()
    s = m.initial_state
    est = estimate_stability(s.x, s.v, s.q, s.omega, m.forcefield.arrays)
    assert est.kind == "BPM bond"
    # a sphere between two bonds of k = 400 (m = 1): ω² = 2 · 2k/m, h = 2/ω ≈ 0.05
    assert 0.02 < est.h_stable < 0.2
