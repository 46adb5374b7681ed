"""Our penalty contacts as LAMMPS's ``pair_style granular`` and ``fix wall/gran/region``
define them (issue #43 item 2; LAMMPS ``doc/src/pair_granular.rst``,
``fix_wall_gran.rst``; ours: ``engine.potentials.friction``, docs/physics.md §4.2, §4.5).

* **Normal (exact).**  Ours ``F = (K/σ) δ^{3/2}``, ``δ = 1 − r/σ``, ``σ = (D_i + D_j)/2``,
  i.e. ``K σ^{-5/2} ov^{3/2}`` in the overlap ``ov = σ − r``; LAMMPS's ``hertz`` is
  ``k_n R_eff^{1/2} ov^{3/2}``, ``R_eff = R_i R_j/(R_i + R_j)``.  So
  ``k_n = K σ^{-5/2} R_eff^{-1/2}`` for each pair of diameters (one atom type a
  diameter, one ``pair_coeff`` a pair of types: :func:`pair_kn`); a wall is a sphere of
  zero diameter in ours (``σ = D/2``) and of infinite radius in LAMMPS
  (``R_eff = D/2``): ``k_n = K_pw (D/2)^{-3}`` (:func:`wall_kn`).
* **Normal damping (exact).**  Ours ``γ = 2 ζ sqrt(m* k_N)`` with ``k_N = dF/d ov =
  (3/2) F/ov`` (the Hertz tangent stiffness); LAMMPS's ``damping coeff_restitution``
  (and ``tsuji``) is ``η_n = α sqrt(m* F/ov)``, and for Hertz ``coeff_restitution``
  sets ``α = −sqrt(3/2)·2 sqrt(5/6) ln e / sqrt(π² + ln² e)``.  Equal when
  ``ln e = −π ζ / sqrt(5/6 − ζ²)`` (:func:`restitution_of_damping`; ``ζ`` below
  ``sqrt(5/6)``).  Ours clamps the damped normal force at zero, as LAMMPS's
  ``limit_damping``; the Coulomb limit is ``μ`` times that force in both.
* **Friction (as the DEM codes' linear history).**  ``tangential linear_history k_t 0 μ``:
  the model's ``k_t`` (force per length, not the Hertz stiffness) and ``μ``, no
  tangential damping (``x_γ,t = 0``, none in ours).  The spring's frame follows the
  contact differently (ours: lever arms to the middle of the overlap and the
  incremental rotations; LAMMPS: the contact point and Luding's projection).
* **Hard contacts** have no LAMMPS counterpart: Hertz with the model's ``k_contact`` and
  ``k_wall``, ``coeff_restitution e_n`` and the friction spring above.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .bond_map import num

MAX_ATOM_TYPES = 32
"""The most distinct diameters given an atom type each (``pair_coeff`` lines grow as
their square); beyond, one type at the mean diameter (approximate, said in the deck)."""

ZETA_MAX = math.sqrt(5.0 / 6.0)
"""The largest damping ratio ``coeff_restitution`` reaches (``e → 0``)."""


def atom_types(D: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    """Each sphere's atom type (1-based), each type's diameter, and whether the map is
    exact: one type per distinct diameter (at most :data:`MAX_ATOM_TYPES`), else one
    type at the mean diameter."""
    D = np.asarray(D, dtype=np.float64)
    if D.size == 0:
        return np.zeros(0, dtype=np.int64), np.ones(1), True
    dias, inv = np.unique(D, return_inverse=True)
    if dias.size <= MAX_ATOM_TYPES:
        return inv.astype(np.int64) + 1, dias, True
    return np.ones(D.size, dtype=np.int64), np.array([float(D.mean())]), False


def pair_kn(k_contact: float, di: float, dj: float) -> float:
    """LAMMPS ``hertz`` ``k_n`` of two spheres of diameters ``di``, ``dj`` equal to our
    ``(K/σ)(1 − r/σ)^{3/2}`` (module docstring): ``K σ^{-5/2} R_eff^{-1/2}``."""
    sigma = 0.5 * (di + dj)
    r_eff = 0.25 * di * dj / (0.5 * (di + dj))
    return k_contact * sigma ** -2.5 / math.sqrt(r_eff)


def wall_kn(k_wall: float, d: float) -> float:
    """LAMMPS ``wall/gran`` ``hertz`` ``k_n`` of a sphere of diameter ``d`` against a
    plane, equal to our ``(K_pw/(D/2))(1 − dist/(D/2))^{3/2}``: ``K_pw (D/2)^{-3}``."""
    return k_wall * (0.5 * d) ** -3


def restitution_of_damping(zeta: float) -> float:
    """The ``e`` of LAMMPS's ``damping coeff_restitution`` whose Hertz damping equals
    our ratio ``ζ`` (module docstring): ``exp(−π ζ / sqrt(5/6 − ζ²))``; 1 for ``ζ = 0``,
    clamped just below :data:`ZETA_MAX`."""
    z = min(max(float(zeta), 0.0), ZETA_MAX * (1.0 - 1e-12))
    return math.exp(-math.pi * z / math.sqrt(5.0 / 6.0 - z * z))


@dataclass
class ContactMap:
    """What the deck writes for the contacts: the ``pair_coeff`` lines, the wall fixes
    (with their regions and groups) and the notes for the deck's "what differs"."""

    pair_lines: list[str] = field(default_factory=list)
    wall_lines: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def contact_map(p: dict[str, Any], types: np.ndarray, dias: np.ndarray, exact_types: bool,
                walls: list[tuple[list[float], float]], bonded: bool) -> ContactMap:
    """The contacts of the model with parameters ``p`` (``k_contact``, ``k_wall``,
    ``contact``, ``mu``, ``k_t``, ``damping``, ``e_n``) for spheres of atom types
    ``types`` of diameters ``dias`` (:func:`atom_types`), against ``walls`` (``(n, c)``:
    ``n·x ≥ c``); ``bonded``: whether the model has bonds (their contacts differ)."""
    kpp = float(p.get("k_contact", 2100.0))
    kpw = float(p.get("k_wall", 2100.0))
    mu = float(p.get("mu", 0.0))
    k_t = float(p.get("k_t", 4000.0))
    hard = p.get("contact", "penalty") == "hard"
    if hard:
        e = max(float(p.get("e_n", 1.0)), 1e-12)
        zeta = None
    else:
        zeta = float(p.get("damping", 0.0))
        e = restitution_of_damping(zeta)
    tang = (f"tangential linear_history {num(k_t)} 0 {num(mu)}" if mu > 0 and k_t > 0
            else "tangential linear_nohistory 0 0")
    tail = f"{tang} damping coeff_restitution limit_damping"
    cm = ContactMap()
    nt = dias.size
    for a in range(nt):
        for b in range(a, nt):
            kn = pair_kn(kpp, float(dias[a]), float(dias[b]))
            cm.pair_lines.append(f"pair_coeff      {a + 1} {b + 1} hertz {num(kn)} {num(e)} "
                                 + tail)
    used = sorted(set(types.tolist())) if types.size else [1]
    for a in used if nt > 1 else []:
        cm.wall_lines.append(f"group           t{a} type {a}")
    for w, (n, c) in enumerate(walls):
        pt = [c * x for x in n]
        cm.wall_lines.append(f"region          w{w} plane " + " ".join(
            f"{num(x)}" for x in pt + list(n)) + " side in")
        for a in used:
            kn = wall_kn(kpw, float(dias[a - 1]))
            grp, name = (f"t{a}", f"w{w}_{a}") if nt > 1 else ("all", f"w{w}")
            cm.wall_lines.append(f"fix             {name} {grp} wall/gran/region granular "
                                 f"hertz {num(kn)} {num(e)} {tail} region w{w}")
    d_text = (f"one atom type per diameter ({nt})" if exact_types else
              f"one atom type at the mean diameter {float(dias[0]):.6g} (more than "
              f"{MAX_ATOM_TYPES} diameters: approximate for the others)")
    cm.notes += [
        "* contact (exact): ours (K/sigma)(1 - r/sigma)^(3/2), sigma = (D_i + D_j)/2, is",
        "  granular hertz k_n sqrt(R_eff) delta^(3/2) with k_n = K sigma^(-5/2) R_eff^(-1/2),",
        f"  {d_text}, a pair_coeff per pair of types;",
        "  walls (wall/gran/region, a fix per wall and type): k_n = Kpw (D/2)^(-3).",
    ]
    if hard:
        cm.notes += [
            "* contacts were HARD in RRP Studio (percussions, Newton e_N, Coulomb mu): LAMMPS",
            f"  has none. Approximated by the Hertz contact above (Kpp {kpp:g}, Kpw {kpw:g})",
            f"  with damping coeff_restitution e = e_N = {e:g} (LAMMPS's Hertz restitution)",
            f"  and the friction spring k_t = {k_t:g}, mu = {mu:g}; e_T is not carried.",
        ]
    else:
        cm.notes += [
            f"* damping (exact): ours gamma = 2 zeta sqrt(m* k_N), zeta = {zeta:g}, k_N the",
            "  Hertz tangent stiffness (3/2) F/delta, is damping coeff_restitution with",
            f"  e = exp(-pi zeta / sqrt(5/6 - zeta^2)) = {num(e)};",
            "  the damped normal force is clamped at 0 in both (limit_damping); the same at",
            "  the walls (m* = m)."
            + (f" zeta >= {ZETA_MAX:.4f} has no equal: clamped." if zeta >= ZETA_MAX else ""),
        ]
    if mu > 0 and k_t > 0:
        cm.notes += [
            f"* friction (approximate): linear_history with our k_t = {k_t:g} and mu = {mu:g},",
            "  no tangential damping (none in ours), spheres and walls alike; the spring's",
            "  frame follows the contact in LAMMPS's way (Luding's projection), not ours.",
        ]
    else:
        cm.notes.append(f"* friction: none (mu = {mu:g}; k_t {k_t:g} unused).")
    if bonded and (mu > 0 or hard or (zeta or 0.0) > 0):
        cm.notes += ["* bonded pairs (approximate): their contact is Hertz only in ours;",
                     "  LAMMPS applies its damping and friction to them too."]
    return cm
