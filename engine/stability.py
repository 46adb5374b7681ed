"""Estimate of the largest stable time step for the current state (docs/physics.md §7).

Every explicit scheme here is, for a linear spring of frequency ``ω``, stable only for
``h < 2/ω``.  The estimate bounds the largest frequency of the linearised system by
Gershgorin's theorem on the mass-weighted stiffness matrix ``M^{-1/2} K M^{-1/2}``:
for every body ``i``, over its interactions of stiffness ``k_ij``,

``ω_i² ≤ Σ_j k_ij (1/m_i + 1/sqrt(m_i m_j)) + k_wall,i / m_i``

(exact for a uniform chain: ``ω_max = 2 sqrt(k/m)``), and the same for rotations with
``J``.  The stiffnesses are the tangent ones at the current state:

* axial binder ``K^a/r₀²``; shear binder ``½ K^s Σ_b ((1 - c_b) + s_b²)/r²`` (zero at rest:
  the shear energy is quartic in small angles); bending ``K^m`` (rotational);
* Hertz contacts ``(3/2) K/σ² δ^{1/2}`` at the overlap ``δ``, and the impacts to come at
  the overlap ``δ_peak`` where the kinetic energy of the approach would be stored,
  ``(2/5) K δ_peak^{5/2} = ½ μ v_n² + U(δ)``:

  - sphere pairs: the neighbour-list candidates (centres within ``σ + skin``, the skin
    half a diameter) that approach each other, at their relative normal speed ``v_n``
    (uniform gravity pulls both alike);
  - walls (every wall of ``ff.walls``): every sphere that free flight — its velocity and
    uniform gravity — brings to the wall within ``horizon`` (the time left of the run:
    ``Simulation.t_end − t``; ``inf``, the app's, which runs until paused: ever), at the
    speed it arrives with, ``v_n² = u² + 2 a s`` (``u`` its approach speed, ``a`` gravity
    towards the wall, ``s`` the gap); within one diameter of the wall as soon as it
    approaches, whatever the horizon (issue #42 item 2: a chain falling on a wall from
    4.5 diameters was estimated at its binder's ``7.1e-3`` and its guide ``3.5e-3`` blew
    up at the first impact; now ``2.7e-3``, the wall's);

* friction springs ``k_t`` of the contacts above (translation; rotation with the lever
  ``D/2``), and normal damping ``ζ``, which lowers a damped spring's limit to
  ``2 (sqrt(1 + ζ²) − ζ)/ω`` (the contact stiffnesses are scaled accordingly);
* the pendulum ``m g |ρ₀|`` (rotational).  Uniform gravity adds no stiffness, only the
  speed of the wall impacts above: the default ``tori-pile`` at rest is estimated at
  ``h ≈ 4.6e-3`` at ``t = 0`` (the floor impacts; ``5e-3`` blows up, ``4.5e-3`` runs),
  ``≈ 2.7e-3`` at its impacts.  Free flight is what the estimate foresees: a ring that
  lands on one sphere and pivots brings its other spheres down faster, and bodies that
  meet later from beyond the neighbour list are not foreseen; the estimate of the state
  at hand counts them when they are close (the app shows it as the run goes).

For the 80-sphere torus at rest before impact this gives ``h ≈ 3.9e-3``, where an
independent implementation measured: ``h = 3e-3`` runs with O(100 %) energy errors and
``h ≥ 4e-3`` blows up.  ``rrp-exact`` additionally needs ``h|w| < 1`` (reported
separately as ``h_rrp_exact``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from . import layout as L  # (parameter slots and term flags)
from .neighbours import binder_adds_contact
from .potentials.binder import bond_coefficients
from .rotations import quat_rotate_t
from .specialize import BPM_TABLE, binder_k

# which interaction sets the limit
K_NONE = 0
K_AXIAL = 1
K_SHEAR = 2
K_BENDING = 3
K_CONTACT = 4
K_WALL = 5
K_GRAVITY = 6
K_FRICTION = 7
K_BPM = 8
KIND_NAMES = ("none", "axial binder", "shear binder", "bending binder", "particle contact",
              "wall contact", "gravity", "friction spring", "BPM bond")


@njit(nogil=True, cache=True)
def _peak_overlap(delta, k, mu, vn):
    """Overlap at which the Hertz energy ``(2/5) k δ^{5/2}`` has absorbed ``½ μ vn²``
    on top of the current ``U(δ)``."""
    u = 0.4 * k * delta * delta * math.sqrt(delta) if delta > 0.0 else 0.0
    if vn < 0.0 and k > 0.0:
        u += 0.5 * mu * vn * vn
    if u <= 0.0:
        return max(delta, 0.0)
    return max(delta, (u / (0.4 * k)) ** 0.4)


@njit(nogil=True, cache=True)
def _impact_speed(gap, u, a, horizon, margin):
    """The speed at which a sphere ``gap > 0`` from a wall, approaching it at ``u``
    (negative: leaving it) with the acceleration ``a`` towards it, reaches it in free
    flight within ``horizon`` (``inf``: ever), or, ``gap ≤ margin``, as soon as it
    approaches; 0 if it does not: ``sqrt(u² + 2 a gap)`` (its energy)."""
    w2 = u * u + 2.0 * a * gap
    if w2 <= 0.0 or (u <= 0.0 and a <= 0.0):
        return 0.0
    if gap <= margin:
        return math.sqrt(w2)
    # the farthest it gets towards the wall within the horizon
    if a == 0.0:
        reach = math.inf if horizon == math.inf else u * horizon
    elif a > 0.0:
        reach = math.inf if horizon == math.inf else u * horizon + 0.5 * a * horizon * horizon
    else:  # (decelerated: it turns back at u/|a|, beyond it if w2 > 0)
        t = min(horizon, -u / a)
        reach = u * t + 0.5 * a * t * t
    return math.sqrt(w2) if gap <= reach else 0.0


@njit(nogil=True, cache=True)
def stiffness_rows(x, v, q, o, ff, rows, kinds, horizon=math.inf):
    """Gershgorin row sums ``rows[i, 0]`` (translation) and ``rows[i, 1]`` (rotation),
    and in ``kinds`` the interaction contributing most to each row; the wall contacts
    that free flight reaches within ``horizon`` (time) count as their impacts."""
    m, J, D, flags, fp, bonds, bond_ref, nl_pairs, nl_state, nl_xref = ff[:10]
    n = x.shape[0]
    best = np.zeros((n, 2))
    rows[:, :] = 0.0
    kinds[:, :] = K_NONE

    def add(i, c, val, kind):
        rows[i, c] += val
        if val > best[i, c]:
            best[i, c] = val
            kinds[i, c] = kind

    if flags[L.T_PIVOT_GRAVITY]:
        rho = math.sqrt(fp[L.P_RHO0] ** 2 + fp[L.P_RHO0 + 1] ** 2 + fp[L.P_RHO0 + 2] ** 2)
        for i in range(n):
            add(i, 1, fp[L.P_MG] * rho / J[i], K_GRAVITY)
    if flags[L.T_BONDS]:
        ka = fp[L.P_K_AXIAL]
        ks = fp[L.P_K_SHEAR]
        kb = fp[L.P_K_BEND]
        ktab = binder_k(ff, kb)  # (the per-bond coefficients of bond types: issue #35 item 1)
        for b in range(bonds.shape[0]):
            ka, ks, kb = bond_coefficients(ktab, b, ka, ks, kb)
            i = bonds[b, 0]
            j = bonds[b, 1]
            d0 = x[i, 0] - x[j, 0]
            d1 = x[i, 1] - x[j, 1]
            d2 = x[i, 2] - x[j, 2]
            r = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
            n0, n1, n2 = d0 / r, d1 / r, d2 / r
            r0 = bond_ref[b, 3]
            wi = 1.0 / m[i] + 1.0 / math.sqrt(m[i] * m[j])
            wj = 1.0 / m[j] + 1.0 / math.sqrt(m[i] * m[j])
            k_ax = ka / (r0 * r0)
            add(i, 0, k_ax * wi, K_AXIAL)
            add(j, 0, k_ax * wj, K_AXIAL)
            e0, e1, e2 = bond_ref[b, 0], bond_ref[b, 1], bond_ref[b, 2]
            ai = quat_rotate_t(q[i, 0], q[i, 1], q[i, 2], q[i, 3], e0, e1, e2)
            aj = quat_rotate_t(q[j, 0], q[j, 1], q[j, 2], q[j, 3], e0, e1, e2)
            ci = ai[0] * n0 + ai[1] * n1 + ai[2] * n2
            cj = aj[0] * n0 + aj[1] * n1 + aj[2] * n2
            g = (1.0 - ci) + max(0.0, 1.0 - ci * ci) + (1.0 - cj) + max(0.0, 1.0 - cj * cj)
            k_sh = 0.5 * ks * g
            add(i, 0, k_sh / (r * r) * wi, K_SHEAR)
            add(j, 0, k_sh / (r * r) * wj, K_SHEAR)
            vi = 1.0 / J[i] + 1.0 / math.sqrt(J[i] * J[j])
            vj = 1.0 / J[j] + 1.0 / math.sqrt(J[i] * J[j])
            add(i, 1, kb * vi, K_BENDING)
            add(j, 1, kb * vj, K_BENDING)
            add(i, 1, k_sh * vi, K_SHEAR)
            add(j, 1, k_sh * vj, K_SHEAR)
    bpm = ff[BPM_TABLE]  # the BPM laws (issue #44 item 1): empty for every other model
    if flags[L.T_BONDS] and bpm.shape[0] == bonds.shape[0]:
        for b in range(bonds.shape[0]):
            law = bpm[b, 0]
            if law == 0.0:
                continue
            i = bonds[b, 0]
            j = bonds[b, 1]
            wi = 1.0 / m[i] + 1.0 / math.sqrt(m[i] * m[j])
            wj = 1.0 / m[j] + 1.0 / math.sqrt(m[i] * m[j])
            # translation: k (bpm/spring), k_r + k_s (bpm/rotational); rotation: the
            # larger of k_b, k_t and the shear's lever ½ k_s r₀² (potentials/bpm.py)
            rot = law == 1.0 or law == 3.0  # (3: its frame = "average", bpm_average.py)
            kx = bpm[b, 2] + (bpm[b, 3] if rot else 0.0)
            add(i, 0, kx * wi, K_BPM)
            add(j, 0, kx * wj, K_BPM)
            if rot:
                r0 = bpm[b, 14]
                kr = max(max(bpm[b, 4], bpm[b, 5]), 0.5 * bpm[b, 3] * r0 * r0)
                add(i, 1, kr * (1.0 / J[i] + 1.0 / math.sqrt(J[i] * J[j])), K_BPM)
                add(j, 1, kr * (1.0 / J[j] + 1.0 / math.sqrt(J[i] * J[j])), K_BPM)
    # penalty contacts with history (engine.potentials.friction): the tangential spring
    # k_t of every contact (translation, and rotation with the lever D/2), and the
    # damping ratio ζ, which lowers a damped spring's limit to
    # h < 2 (sqrt(1 + ζ²) − ζ)/ω: the normal stiffnesses are scaled to match, by
    # 1/(sqrt(1 + ζ²) − ζ)² written as (sqrt(1 + ζ²) + ζ)², which does not cancel to
    # 0 for a large ζ (ζ = 1e12 divided by zero)
    kt = 0.0
    damp = 1.0
    if flags[L.T_HISTORY]:
        if fp[L.P_MU] > 0.0:
            kt = fp[L.P_K_TANGENT]
        z = fp[L.P_DAMPING]
        damp = (math.sqrt(1.0 + z * z) + z) ** 2
    if flags[L.T_CONTACT]:
        kc = fp[L.P_K_CONTACT]
        n_listed = nl_state[0]
        # the listed pairs, then the bonded ones, which the list leaves out when the
        # binder adds their contact (engine.neighbours.excluded_partners)
        n_bonded = bonds.shape[0] if binder_adds_contact(ff) else 0
        for p in range(n_listed + n_bonded):
            if p < n_listed:
                i = nl_pairs[p, 0]
                j = nl_pairs[p, 1]
            else:
                i = bonds[p - n_listed, 0]
                j = bonds[p - n_listed, 1]
            d0 = x[i, 0] - x[j, 0]
            d1 = x[i, 1] - x[j, 1]
            d2 = x[i, 2] - x[j, 2]
            r = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
            if r <= 0.0:
                continue
            sigma = 0.5 * (D[i] + D[j])
            vn = ((v[i, 0] - v[j, 0]) * d0 + (v[i, 1] - v[j, 1]) * d1
                  + (v[i, 2] - v[j, 2]) * d2) / r
            mu = m[i] * m[j] / (m[i] + m[j])
            dp = _peak_overlap(1.0 - r / sigma, kc, mu, vn)
            if dp <= 0.0:
                continue
            k = 1.5 * kc / (sigma * sigma) * math.sqrt(dp) * damp
            add(i, 0, k * (1.0 / m[i] + 1.0 / math.sqrt(m[i] * m[j])), K_CONTACT)
            add(j, 0, k * (1.0 / m[j] + 1.0 / math.sqrt(m[i] * m[j])), K_CONTACT)
            if kt > 0.0:  # (bonded neighbours carry no spring, but bound it anyway)
                add(i, 0, kt * (1.0 / m[i] + 1.0 / math.sqrt(m[i] * m[j])), K_FRICTION)
                add(j, 0, kt * (1.0 / m[j] + 1.0 / math.sqrt(m[i] * m[j])), K_FRICTION)
                ai = 0.5 * D[i]
                aj = 0.5 * D[j]
                add(i, 1, kt * (ai * ai / J[i] + ai * aj / math.sqrt(J[i] * J[j])), K_FRICTION)
                add(j, 1, kt * (aj * aj / J[j] + ai * aj / math.sqrt(J[i] * J[j])), K_FRICTION)
    if flags[L.T_WALL]:
        kw = fp[L.P_K_WALL]
        walls = ff[12]
        # uniform gravity g ê pulls every sphere the same way (engine.forcefield)
        g_acc = fp[L.P_G] if flags[L.T_GRAVITY_FIELD] else 0.0
        for w in range(walls.shape[0]):
            w0, w1, w2 = walls[w, 0], walls[w, 1], walls[w, 2]
            a_n = -g_acc * (w0 * fp[L.P_G_DIR] + w1 * fp[L.P_G_DIR + 1]
                            + w2 * fp[L.P_G_DIR + 2])  # (towards the wall)
            for i in range(n):
                rad = 0.5 * D[i]
                if rad <= 0.0:
                    continue
                g = w0 * x[i, 0] + w1 * x[i, 1] + w2 * x[i, 2] - walls[w, 3]
                vn = w0 * v[i, 0] + w1 * v[i, 1] + w2 * v[i, 2]
                if g < rad:  # in contact: the overlap now, and the impact's to come
                    dp = _peak_overlap(1.0 - g / rad, kw, m[i], vn)
                else:  # not yet: the contact free flight reaches within the horizon
                    w_in = _impact_speed(g - rad, -vn, a_n, horizon, D[i])
                    if w_in <= 0.0:
                        continue
                    dp = _peak_overlap(0.0, kw, m[i], -w_in)
                if dp <= 0.0:
                    continue
                add(i, 0, 1.5 * kw / (rad * rad) * math.sqrt(dp) / m[i] * damp, K_WALL)
                if kt > 0.0:
                    add(i, 0, kt / m[i], K_FRICTION)
                    add(i, 1, kt * rad * rad / J[i], K_FRICTION)


def stiffness_energy(x: np.ndarray, v: np.ndarray, q: np.ndarray, omega: np.ndarray,
                     ff_arrays: tuple) -> float:
    """The energy scale of the model's stiffnesses at the state: ``Σ_i ½ (m_i ω²_i D_i²
    + J_i ω²_r,i)``, what each body's interactions would store were it moved by its
    diameter (a strain of one diameter) and turned by a radian, with ``ω²`` the
    Gershgorin rows of :func:`stiffness_rows` (translation, rotation); plus ``m_i |g|
    D_i`` under uniform gravity.  ``0`` when nothing is stiff (the scale of a model at
    rest, whose ``E₀`` is round-off: ``engine.diagnostics.energy_scale``, issue #42
    item 1).  The neighbour list in ``ff_arrays`` must be current."""
    n = x.shape[0]
    if n == 0:
        return 0.0
    rows = np.zeros((n, 2))
    kinds = np.zeros((n, 2), dtype=np.int64)
    stiffness_rows(x, v, q, omega, ff_arrays, rows, kinds, math.inf)  # (the primed signature)
    m, J, D, flags, fp = ff_arrays[:5]
    with np.errstate(over="ignore", invalid="ignore"):  # (extreme scenarios: inf, unused)
        total = 0.5 * float(np.sum(m * rows[:, 0] * D * D + J * rows[:, 1]))
        if flags[L.T_GRAVITY_FIELD]:
            total += abs(float(fp[L.P_G])) * float(np.sum(m * D))
    return total if math.isfinite(total) and total > 0.0 else 0.0


@dataclass(frozen=True)
class StabilityEstimate:
    """``h_stable = 2/ω_max``; ``kind`` and ``body`` name the interaction that sets it;
    ``h_rrp_exact`` is ``rrp-exact``'s own bound ``1/max|Ω|`` (inf at rest)."""

    h_stable: float
    omega_max: float
    kind: str
    body: int
    h_rrp_exact: float
    h_accurate: float = math.inf
    """The accuracy guide (:func:`accuracy_guide`: ``h`` for ≈ 1 % energy error), filled
    in by ``Simulation.stability()`` from the model's calibration; ``inf``: no guide."""
    events_per_time: float | None = None
    """For an event-driven scheme (energy-stepping): the events per unit of simulated
    time so far (NaN before any time has passed); ``None`` for a stepping scheme.  Such a
    scheme has no step limit (``h`` is its recording interval): ``h_stable`` is ``inf``."""

    def describe_accuracy(self) -> str:
        """One line on the accuracy guide, or "" when there is none."""
        if not math.isfinite(self.h_accurate):
            return ""
        return f"accuracy guide h ≈ {self.h_accurate:.2g} for ≈ 1 % energy error"

    def describe(self) -> str:
        if self.events_per_time is not None:
            rate = self.events_per_time
            return "event-driven: no step limit" + (
                f" · {rate:.3g} events per unit time" if math.isfinite(rate) else "")
        if not math.isfinite(self.h_stable):
            return "no stiff interaction active: no step limit from stability"
        return (f"stability limit h ≈ {self.h_stable:.3g} (ω_max ≈ {self.omega_max:.3g} from "
                f"the {self.kind} of body {self.body})")


ACCURACY_LEVEL = 0.01
"""Default energy-error level of the accuracy guide (1 %)."""


def accuracy_guide(omega_max: float, c: float | None, level: float = ACCURACY_LEVEL,
                   h_stable: float = math.inf) -> float:
    """The step ``h_ε = min(c sqrt(ε)/ω_max, h_stable/2)`` for a relative energy error of
    about ``ε`` (at most, for the model's second-order schemes).

    A second-order scheme's energy error grows as ``(h ω)²`` (backward error analysis), so
    ``ε ≈ (h ω_max / c)²`` with a constant ``c`` that depends on the model (how much of
    the energy sits in the fastest mode) and on the scheme; ``Model.accuracy_c`` is the
    worst one measured over the second-order schemes (docs/physics.md §7): the pendulum
    ``c = 0.95`` (``rrp-exact`` and ``lgvi``; ``rrp-newmark`` has 3.46, ``pfc-verlet`` 1.5),
    the torus ``c = 7.7`` (1 % at ``h ≈ 1.5e-3`` over t = 25 for all of them; beyond
    ``h ≈ 2e-3`` the error no longer follows ``(hω)²`` and jumps: 12 % at 2.5e-3, 44 % at
    3e-3), the torus with hard contacts ``c ≈ 22``, the tori pile ``c = 14.5`` (1 % between
    ``h = 3e-3`` and ``4e-3``; ``ω_max`` that of the floor impacts to come).  Never more
    than half the stability estimate, which is optimistic by up to 30 % and needs a margin
    on long runs.  ``inf`` when there is no guide (``c`` is ``None`` and nothing is
    stiff)."""
    guide = math.inf
    if c is not None and omega_max > 0.0 and math.isfinite(omega_max):
        guide = c * math.sqrt(level) / omega_max
    return min(guide, 0.5 * h_stable)


def estimate_stability(x: np.ndarray, v: np.ndarray, q: np.ndarray, omega: np.ndarray,
                       ff_arrays: tuple, horizon: float = math.inf) -> StabilityEstimate:
    """The largest stable ``h`` for the state ``(x, v, q, Ω)`` and the wall impacts free
    flight reaches within ``horizon`` (the time left of the run; ``inf``: ever) — see
    the module docstring.  The neighbour list in ``ff_arrays`` must be current (it is
    after any step)."""
    n = x.shape[0]
    rows = np.zeros((n, 2))
    kinds = np.zeros((n, 2), dtype=np.int64)
    stiffness_rows(x, v, q, omega, ff_arrays, rows, kinds, max(float(horizon), 0.0))
    flat = int(np.argmax(rows))
    i, c = divmod(flat, 2)
    w2 = float(rows[i, c])
    wmax = float(np.linalg.norm(omega, axis=1).max(initial=0.0))
    h_rrp = 1.0 / wmax if wmax > 0 else math.inf
    if w2 <= 0.0:
        return StabilityEstimate(math.inf, 0.0, KIND_NAMES[K_NONE], -1, h_rrp)
    om = math.sqrt(w2)
    return StabilityEstimate(2.0 / om, om, KIND_NAMES[int(kinds[i, c])], i, h_rrp)
