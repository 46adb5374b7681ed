"""Bond laws as a choice per bond type (issue #44 item 1; docs/scenarios.md "Bond laws"):
``law = "binder"`` (B&G §4: ``k_bend``, ``k_axial``, ``k_shear``, the default),
``"bpm/rotational"`` or ``"bpm/spring"`` (LAMMPS's BPM bond styles, with LAMMPS's names
for their coefficients: ``engine.potentials.bpm``).

A type of a BPM law is a dict ``{"law": …, <coefficients>, "smooth": bool}`` (what
:func:`parse_law` returns); the model gives each of its bonds a row of the force field's
table (:func:`law_table`, ``ForceField.set_bond_laws``).  ``break = true``: the bond
breaks past LAMMPS's criterion (issue #44 item 2; ``engine.potentials.bpm_break``).  The
dampings ``gamma_*`` (LAMMPS's ``γ_n γ_s γ_r γ_t``, ``bpm/spring``'s ``γ``) act as a flow
split off the step, their work booked in ``dissipated``
(``engine.potentials.bond_damping``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..potentials import bpm
from .assembly_input import AssemblyError

LAWS = ("binder", "bpm/rotational", "bpm/spring")
COEFFS: dict[str, tuple[str, ...]] = {
    "bpm/rotational": bpm.ROTATIONAL_COEFFS,
    "bpm/spring": bpm.SPRING_COEFFS,
}
DAMPING = {"bpm/rotational": ("gamma_n", "gamma_s", "gamma_r", "gamma_t"),
           "bpm/spring": ("gamma",)}
LIMITS = {"bpm/rotational": ("f_rc", "f_sc", "tau_bc", "tau_tc"), "bpm/spring": ("eps_c",)}
OPTIONAL = ("smooth", "break")
FRAMES = ("potential", "average")
"""``bpm/rotational``'s ``frame``: ``"potential"`` (the default: the law as a potential,
conservative, ``engine.potentials.bpm``) or ``"average"`` (LAMMPS's force law since 2026,
measured in the spheres' mean frame, not a potential: ``engine.potentials.bpm_average``)."""
BIG = 1e30


def parse_law(c: dict[str, Any], where: str) -> dict[str, Any] | None:
    """The bond type's table ``c`` as a BPM law (``None``: the binder's law, whose keys
    the caller reads); :class:`AssemblyError` in one line for an unknown law or key, a
    missing or out-of-range coefficient, or ``break = true`` or ``smooth = true`` with a
    limit of 0.  ``break = true``: the bond breaks past LAMMPS's criterion (issue #44 item
    2; ``engine.potentials.bpm_break``)."""
    law = c.get("law", "binder")
    if law not in LAWS:
        raise AssemblyError(f"{where}: unknown law {law!r}; give one of "
                            f"{', '.join(repr(x) for x in LAWS)}")
    if law == "binder":
        return None
    names = COEFFS[law]
    for key in c:
        if key == "frame" and law == "bpm/rotational":
            continue
        if key != "law" and key not in names and key not in OPTIONAL:
            raise AssemblyError(f"{where}: unknown key {key!r} for law {law!r}; allowed: "
                                f"{', '.join(names + OPTIONAL)}")
    out: dict[str, Any] = {"law": law}
    for key in names:
        if key not in c:
            raise AssemblyError(f"{where}: {key} is missing (law {law!r} needs "
                                f"{', '.join(names)})")
        v = c[key]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not (
                math.isfinite(float(v)) and 0.0 <= float(v) <= BIG):
            raise AssemblyError(f"{where}: {key} = {v!r} must be a number in [0, {BIG:g}]")
        out[key] = float(v)
    for key in OPTIONAL:
        v = c.get(key, False)
        if not isinstance(v, bool):
            raise AssemblyError(f"{where}: {key} = {v!r} must be true or false")
        out[key] = v
    if law == "bpm/rotational":  # (LAMMPS's frame: engine.potentials.bpm_average)
        frame = c.get("frame", "potential")
        if frame not in FRAMES:
            raise AssemblyError(f"{where}: frame = {frame!r}: give one of "
                                f"{', '.join(repr(f) for f in FRAMES)}")
        out["frame"] = frame
    zero = [k for k in LIMITS[law] if out[k] <= 0.0]
    if out["smooth"] and zero:
        raise AssemblyError(f"{where}: smooth = true needs {zero[0]} > 0 (the smoothing "
                            f"divides by it); give {zero[0]} > 0 or smooth = false")
    if out["break"] and zero:
        raise AssemblyError(f"{where}: break = true needs {zero[0]} > 0 (the breaking "
                            f"criterion divides by it); give {zero[0]} > 0 or break = false")
    return out


def law_table(labels: np.ndarray, laws: dict[str, dict[str, Any]], x: np.ndarray,
              q: np.ndarray, bonds: np.ndarray) -> np.ndarray | None:
    """The force field's table of bond laws (``ForceField.set_bond_laws``) for bonds of
    the type ``labels`` (binder types: a row of ``LAW_BINDER``), their reference frames
    from the state ``(x, q)`` at creation; ``None`` when every bond is the binder's."""
    labels = np.asarray(labels).astype(str)
    if not bonds.shape[0] or not any(t in laws for t in np.unique(labels).tolist()):
        return None
    table = np.zeros((bonds.shape[0], bpm.N_COLS))
    for t, spec in laws.items():
        rows = labels == t
        if rows.any():
            table[rows] = bpm.law_row(spec["law"], spec, spec["smooth"],
                                      bool(spec.get("break", False)))
            if spec.get("frame") == "average":
                table[rows, bpm.C_LAW] = bpm.LAW_ROTATIONAL_AVERAGE
    bpm.reference(table, x, q, bonds)
    return table


def law_components(table: np.ndarray | None) -> tuple[bool, bool]:
    """``(binder-like, spring)``: whether the bonds report the ``bending``, ``axial``,
    ``shear`` components (binder, ``bpm/rotational``) and ``spring`` (``bpm/spring``)."""
    if table is None:
        return True, False
    law = table[:, bpm.C_LAW]
    return bool((law != bpm.LAW_SPRING).any()), bool((law == bpm.LAW_SPRING).any())
