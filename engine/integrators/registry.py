"""The one registry of integrators, read by the CLI, the GUI and the tests.

Besides the fixed names, two families are parametrised by their name:

* ``yoshida4:BASE`` — Yoshida's 4th-order composition of any *symmetric* second-order
  scheme ``BASE`` (registered for each of them, e.g. ``yoshida4:rrp-newmark``);
* ``campello-implicit:PHI`` — Campello's general scheme with the blend ``φ = PHI`` in
  ``[0, 1]`` (``campello-implicit`` alone is ``φ = ½``);
* ``energy-stepping:REL`` — energy-stepping (Gonzalez, Schmidt & Ortiz 2010, physics.md
  §3.10) with the terrace height ``ε = REL × E_scale``, ``REL`` in ``[1e-12, 0.1]``
  relative to the scenario's energy scale (``energy-stepping`` alone is
  :data:`DEFAULT_EPS_REL`; below :data:`EPS_REL_MIN`, the round-off floor, refused).  It
  is *event-driven*: no compiled stepping loop (its ``scheme_id`` is
  :data:`S_EVENT_DRIVEN`); ``engine.simulation`` drives an
  ``engine.energy_stepping.EnergyStepper`` and ``h`` is the recording interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from . import advance as _adv

S_EVENT_DRIVEN = -1
"""The ``scheme_id`` of an event-driven scheme: no compiled stepping loop exists for it
(``engine.simulation`` drives it in Python; nothing may pass it to ``advance_ws``)."""

ENERGY_STEPPING = "energy-stepping"
DEFAULT_EPS_REL = 1e-4
"""``ε`` of ``energy-stepping`` (no ``:REL``), relative to the scenario's energy scale
(``engine.diagnostics.energy_scale`` of the start): provisional, to be set from the
measured accuracy/cost curve (issue #28)."""
EPS_REL_MAX = 0.1
"""The largest ``REL`` accepted: beyond it a terrace is a tenth of the energy scale and
the motion is no longer a useful approximation."""
EPS_REL_MIN = 1e-12
"""The smallest ``REL`` accepted: the floor where ``ε`` meets the round-off of the
energies (issue #33 item 3; derivation docs/physics.md §3.10, "The floor of ε").  An
event's jump and level are computed from energies of the size of ``|E|`` to within
``u|E|``, ``u = 2⁻⁵³ ≈ 1.1e-16``; over the ``~10⁸`` events one recording interval may take
(``MAX_EVENTS_PER_CALL``) these errors add up, at least like a random walk, to ``√10⁸
u|E| = 10⁴ u|E| ≈ 1.1e-12 |E|``: a terrace any lower is no longer above the scheme's own
round-off, and the bound ``|E − E₀| ≤ ε`` per term is void.  Necessary, not sufficient
(measured on the pendulum: REL 1e-11 keeps it, 1e-12 exceeds it 22× within t = 0.02,
1e-13 by 2.6e4×): the simulation also checks the bound as it runs
(``engine.energy_stepping.bound``)."""


def eps_floor_message(text: str) -> str:
    """The one line that refuses ``energy-stepping:REL`` below :data:`EPS_REL_MIN` (the
    registry's ``KeyError``, the stepper's ``EnergySteppingError``, the CLI, the app and
    the API all say it)."""
    return (f"{ENERGY_STEPPING}:{text}: ε below {EPS_REL_MIN:g} × energy scale is under "
            "the round-off of the energies (each event's jump is computed to about 1e-16 "
            f"of |E|, and a run's events add up), so the bound |E − E₀| ≤ ε per term "
            f"would not hold; use REL in [{EPS_REL_MIN:g}, {EPS_REL_MAX:g}], e.g. "
            f"{ENERGY_STEPPING}:1e-6")


@dataclass(frozen=True)
class IntegratorInfo:
    """What a user (and a test) needs to know about a scheme."""

    name: str
    scheme_id: int
    title: str
    order: int
    variational: bool
    symplectic: bool
    explicit: bool
    spherical_only: bool
    force_evaluations: int
    reference: str
    notes: str = ""
    symmetric: bool = False
    """Time-reversible (``Φ_{-h} = Φ_h⁻¹``): may be composed by ``yoshida4``."""
    keeps_momentum: bool = False
    """Keeps the body angular momentum ``Π`` as state (derived from ``Ω`` on switching)."""
    phi: float = 1.0
    """Campello's blend ``φ`` (B&G eq. (26)); 1 for every other scheme."""
    iterative: bool = False
    """Solves an equation by iteration each step (counts reported, non-convergence fails)."""
    contact: str = "penalty"
    """``"penalty"``: contacts must be smooth potentials (the model's ``contact`` is
    ``"none"`` or ``"penalty"``); ``"hard"``: a Moreau-type scheme for unilateral
    constraints with percussions (the model's ``contact`` must be ``"hard"``)."""
    coordinates: str = "bodies"
    """``"bodies"`` (rigid bodies ``x, v, q, Ω``), ``"generalized"`` (``q, u`` with
    ``M(q)``), or ``"any"``."""
    time_symmetric: bool = False
    """Time-reversible for elastic impacts but not a composable smooth map (not offered
    to ``yoshida4``: a composition across impacts gains no order)."""
    event_driven: bool = False
    """Chooses its own steps (events); ``h`` is only the recording interval, there is no
    stability limit on it and no compiled loop (``scheme_id`` :data:`S_EVENT_DRIVEN`)."""
    eps_rel: float = math.nan
    """Energy-stepping's terrace height relative to the energy scale (NaN for others)."""
    energy_conserving: bool = False
    """Bounds the energy error for all time by a number the user sets."""
    order_note: str = ""
    """The order as measured, shown instead of ``order`` where the nominal integer
    would mislead (energy-stepping: ½ in ε on the pendulum, no clean order on many
    bodies, docs/physics.md §3.10)."""

    def properties(self) -> str:
        """One-line summary, e.g. ``order 2 · variational · explicit · spheres only``."""
        if self.event_driven:
            return self._event_driven_properties()
        parts = [f"order {self.order}"]
        if self.variational:
            parts.append("variational")
        elif self.symplectic:
            parts.append("symplectic")
        elif self.time_symmetric:
            parts.append("time-symmetric")
        else:
            parts.append("non-geometric")
        parts.append("explicit" if self.explicit else "implicit")
        if self.coordinates == "generalized":
            parts.append("generalized coordinates")
        elif self.coordinates == "any":
            parts.append("spheres or generalized coordinates")
        else:
            parts.append("spheres only" if self.spherical_only else "any inertia")
        if self.contact == "hard":
            parts.append("hard contact")
        return " · ".join(parts)

    def _event_driven_properties(self) -> str:
        order = f"order {self.order_note or self.order}"
        parts = [order]
        if self.symplectic:
            parts.append("symplectic")
        if self.time_symmetric:
            parts.append("time-reversible")
        if self.energy_conserving:
            parts.append("energy-conserving")
        parts += ["explicit" if self.explicit else "implicit", "event-driven",
                  "spheres only" if self.spherical_only else "any inertia"]
        return " · ".join(parts)

    def as_dict(self) -> dict:
        return {
            "name": self.name,
            "title": self.title,
            "order": self.order,
            "variational": self.variational,
            "symplectic": self.symplectic,
            "explicit": self.explicit,
            "spherical_only": self.spherical_only,
            "force_evaluations_per_step": self.force_evaluations,
            "reference": self.reference,
            "notes": self.notes,
            "symmetric": self.symmetric,
            "iterative": self.iterative,
            "contact": self.contact,
            "coordinates": self.coordinates,
            "time_symmetric": self.time_symmetric,
            "event_driven": self.event_driven,
            "eps_rel": None if math.isnan(self.eps_rel) else self.eps_rel,
            "energy_conserving": self.energy_conserving,
            "properties": self.properties(),
        }


_BASE: tuple[IntegratorInfo, ...] = (
    IntegratorInfo(
        "rrp-exact", _adv.S_RRP_EXACT, "Explicit RRP variational integrator", 2,
        True, True, True, True, 1, "Baker & Gonzalez eq. (23)",
        "attitude increment from the exact root of the discrete Euler–Lagrange "
        "equation; needs h|w| < 1", symmetric=True,
    ),
    IntegratorInfo(
        "rrp-newmark", _adv.S_RRP_NEWMARK, "RRP integrator à la Newmark", 2,
        True, True, True, True, 1, "Baker & Gonzalez eq. (25)",
        "Δα = h w: no square root, no step restriction from the spin", symmetric=True,
    ),
    IntegratorInfo(
        "campello", _adv.S_CAMPELLO, "Campello's explicit scheme", 1,
        True, True, True, True, 1, "Baker & Gonzalez eq. (27)",
        "symplectic Euler on SE(3) with the RRP increment h Ω",
    ),
    IntegratorInfo(
        "pfc-verlet", _adv.S_PFC_VERLET, "PFC velocity Verlet (balls)", 2,
        False, True, True, True, 1, "Itasca PFC, Law of Motion",
        "kick–drift–kick; attitude by the exact exponential of the half-step spin",
        symmetric=True,
    ),
    IntegratorInfo(
        "rk4", _adv.S_RK4, "Classical Runge–Kutta 4", 4,
        False, False, True, False, 4, "physics.md §3.8b",
        "non-geometric baseline: quaternion not renormalised, secular energy drift; "
        "L̇ = RM with Ω = R𝕁⁻¹RᵀL for non-spherical bodies",
    ),
    IntegratorInfo(
        "lgvi", _adv.S_LGVI, "Lie group variational integrator", 2,
        True, True, False, False, 1, "Lee, Leok & McClamroch eqs. (92)–(96), (128)",
        "F = exp(S(f)) by Newton's method (≈ 3 iterations per body-step); Π kept as "
        "state", symmetric=True, keeps_momentum=True, iterative=True,
    ),
    IntegratorInfo(
        "rrp-implicit", _adv.S_RRP_IMPLICIT, "Implicit RRP variational integrator", 2,
        True, True, False, False, 1, "physics.md §3.7 (B&G eq. (23) for any inertia)",
        "F = R(f), the RRP/Cayley map, by Newton from the spherical root (no "
        "trigonometry); = rrp-exact for spheres", symmetric=True, keeps_momentum=True,
        iterative=True,
    ),
    IntegratorInfo(
        "pfc-buss2", _adv.S_PFC_BUSS2, "PFC clumps, Buss' 2nd-order attitude", 2,
        False, False, True, False, 1, "Itasca PFC, Law of Motion, eqs. 18–33",
        "velocity Verlet on x and L; q ← exp(h ω̄) ⊗ q with Buss' augmented spin",
    ),
    IntegratorInfo(
        "pfc-rk4", _adv.S_PFC_RK4, "PFC clumps, RK4 attitude", 2,
        False, False, True, False, 1, "Itasca PFC, Law of Motion, eqs. 18–33",
        "velocity Verlet on x and L; RK4 on q̇ = ½ (0, ω(q)) ⊗ q with L frozen",
    ),
    IntegratorInfo(
        "campello-implicit", _adv.S_CAMPELLO_IMPLICIT,
        "Campello's implicit scheme (φ = 0.5)", 1, False, False, False, True, 2,
        "Baker & Gonzalez eq. (26)",
        "forces blended φ F_k + (1−φ) F_k+1, fixed-point iteration (one force "
        "evaluation per iteration); campello-implicit:PHI sets φ ∈ [0, 1]; dissipative "
        "for φ < 1 (a linear spring's map has det = 1/(1 + (1−φ) h²ω²))",
        phi=0.5, iterative=True,
    ),
    IntegratorInfo(
        "moreau", _adv.S_MOREAU, "Moreau's midpoint time-stepping (hard contact)", 1,
        False, False, True, True, 2, "Capobianco, Eugster & Leine §3 (Moreau 1988)",
        "q_M = q_k + Δt/2 u_k, active set g_N(q_M) ≤ 0, M(u_k+1 − u_k) = Δt h(q_M, u_k) + "
        "W P, Newton's law on ξ = Wᵀ(u_k+1 + e u_k); attitude drifted by half steps with "
        "the RRP map; percussions by projected Gauss–Seidel",
        iterative=True, contact="hard", coordinates="any",
    ),
    IntegratorInfo(
        "moreau-symmetric", _adv.S_MOREAU_SYMMETRIC,
        "Symmetric Moreau-type scheme (trapezoidal rule, hard contact)", 2,
        False, False, True, True, 1, "Capobianco, Eugster & Leine eq. (12)",
        "M(q_k)(u_k − u_k−1) − Δt/2 (h(q_k,u_k−1) + h(q_k,u_k)) = W P_k, contact law on "
        "ξ = Wᵀ(u_k + e u_k−1) for g_N(q_k) ≤ 0; on spheres the rrp-newmark map plus "
        "percussions (implicit in u only for velocity-dependent h)",
        iterative=True, contact="hard", coordinates="any", time_symmetric=True,
    ),
    IntegratorInfo(
        "moreau-variational", _adv.S_MOREAU_VARIATIONAL,
        "Variational Moreau-type scheme (trapezoidal discrete Lagrangian, hard contact)", 2,
        True, True, False, False, 1, "docs/physics.md §3.9, generalized (trapezoidal L_d)",
        "discrete Euler–Lagrange equations of L_d = Δt/2 (L(q_k, u_k) + L(q_k+1, u_k)) "
        "with percussions at the nodes; implicit in q_k+1 (Newton); generalized "
        "coordinates only (on spheres it is moreau-symmetric)",
        iterative=True, contact="hard", coordinates="generalized",
    ),
)

def energy_stepping_name(eps_rel: float) -> str:
    """``energy-stepping:REL`` with ``REL`` written so that it reads back exactly."""
    text = f"{eps_rel:g}"
    return f"{ENERGY_STEPPING}:{text if float(text) == eps_rel else repr(float(eps_rel))}"


def energy_stepping(eps_rel: float | None = None) -> IntegratorInfo:
    """``energy-stepping:REL`` (``None``: ``energy-stepping``, :data:`DEFAULT_EPS_REL`);
    physics.md §3.10, and docs/physics.md §3.10 for the measurements behind its
    properties (the pendulum's trajectory converges as ``O(√ε)``; a ring of 6 converges
    without a clean order, issue #33 item 5)."""
    name = ENERGY_STEPPING if eps_rel is None else energy_stepping_name(eps_rel)
    eps_rel = DEFAULT_EPS_REL if eps_rel is None else float(eps_rel)
    return IntegratorInfo(
        name, S_EVENT_DRIVEN, f"Energy-stepping (ε = {eps_rel:g} × energy scale)", 1,
        False, True, True, True, 0, "Gonzalez, Schmidt & Ortiz, IJNME 82 (2010); physics.md "
        "§3.10",
        "exact motion of T − V_ε, V_ε = V terraced in steps of ε per interaction term: "
        "free flights between level crossings, momentum jumps along the forces at each "
        "crossing (or a reflection); |E − E₀| ≤ ε per term for all time, P and L jump by "
        "zero; h is the recording interval (the scheme chooses its own steps); "
        f"energy-stepping:REL sets ε = REL × energy scale, REL in [{EPS_REL_MIN:g}, "
        f"{EPS_REL_MAX:g}]",
        time_symmetric=True, event_driven=True, eps_rel=float(eps_rel),
        energy_conserving=True,
        order_note="≈ ½ in ε (measured on the pendulum; many bodies: no clean order)",
    )


YOSHIDA_PREFIX = "yoshida4:"
CAMPELLO_IMPLICIT = "campello-implicit"


def yoshida(base: IntegratorInfo) -> IntegratorInfo:
    """``yoshida4:BASE``: ``Ψ_h = Φ_{λ₁h} ∘ Φ_{λ₂h} ∘ Φ_{λ₁h}`` (docs/physics.md §3.8)."""
    if not base.symmetric or base.order != 2:
        raise KeyError(f"yoshida4 composes symmetric second-order schemes only; "
                       f"{base.name!r} is not one: choose one of "
                       f"{', '.join(b.name for b in _BASE if b.symmetric)}")
    return IntegratorInfo(
        YOSHIDA_PREFIX + base.name, _adv.S_YOSHIDA + base.scheme_id,
        f"Yoshida-4 composition of {base.name}", 4, base.variational, base.symplectic,
        base.explicit, base.spherical_only, 3 * base.force_evaluations,
        f"Yoshida (1990) triple jump of {base.reference}",
        "Φ(λ₁h)∘Φ(λ₂h)∘Φ(λ₁h), λ₁ = 1/(2 − 2^⅓), λ₂ = −2^⅓/(2 − 2^⅓)",
        symmetric=True, keeps_momentum=base.keeps_momentum, iterative=base.iterative,
    )


INTEGRATORS: dict[str, IntegratorInfo] = {
    info.name: info
    for info in (*_BASE, *(yoshida(b) for b in _BASE if b.symmetric), energy_stepping())
}


def parse_eps_rel(text: str) -> float:
    """``REL`` of ``energy-stepping:REL`` as a float in ``[EPS_REL_MIN, EPS_REL_MAX]``,
    or ``KeyError`` (one line naming the fix; below the floor: :func:`eps_floor_message`,
    issue #33 item 3)."""
    try:
        rel = float(text)
    except ValueError:
        rel = math.nan
    if math.isfinite(rel) and 0.0 < rel < EPS_REL_MIN:
        raise KeyError(eps_floor_message(text))
    if not (math.isfinite(rel) and 0.0 < rel <= EPS_REL_MAX):
        raise KeyError(f"{ENERGY_STEPPING}:{text}: ε must be a number in [{EPS_REL_MIN:g}, "
                       f"{EPS_REL_MAX:g}], relative to the scenario's energy scale (e.g. "
                       f"{ENERGY_STEPPING}:1e-4, or {ENERGY_STEPPING} for "
                       f"{DEFAULT_EPS_REL:g})")
    return rel


def integrator_names() -> list[str]:
    return list(INTEGRATORS)


def get_integrator(name: str) -> IntegratorInfo:
    """Look a scheme up by name (``campello-implicit:PHI`` included); the error is one
    line naming the problem and the choices."""
    if name in INTEGRATORS:
        return INTEGRATORS[name]
    if isinstance(name, str) and name.startswith(YOSHIDA_PREFIX):
        base = name[len(YOSHIDA_PREFIX):]
        sym = [b.name for b in _BASE if b.symmetric]
        raise KeyError(f"unknown integrator {name!r}: yoshida4 composes a symmetric "
                       f"second-order scheme, {base!r} is not one; choose yoshida4:NAME "
                       f"with NAME one of: {', '.join(sym)}")
    if isinstance(name, str) and name.startswith(ENERGY_STEPPING + ":"):
        return energy_stepping(parse_eps_rel(name[len(ENERGY_STEPPING) + 1:]))
    if isinstance(name, str) and name.startswith(CAMPELLO_IMPLICIT + ":"):
        text = name[len(CAMPELLO_IMPLICIT) + 1:]
        try:
            phi = float(text)
        except ValueError:
            phi = math.nan
        if not (0.0 <= phi <= 1.0):
            raise KeyError(f"campello-implicit:{text}: φ must be a number in [0, 1] "
                           "(e.g. campello-implicit:0.5)")
        base = INTEGRATORS[CAMPELLO_IMPLICIT]
        return replace(base, name=f"{CAMPELLO_IMPLICIT}:{phi:g}",
                       title=f"Campello's implicit scheme (φ = {phi:g})", phi=phi)
    raise KeyError(
        f"unknown integrator {name!r}; choose one of: {', '.join(INTEGRATORS)} "
        f"(or {CAMPELLO_IMPLICIT}:PHI with PHI in [0, 1], or {ENERGY_STEPPING}:REL with "
        f"REL in [{EPS_REL_MIN:g}, {EPS_REL_MAX:g}])")
