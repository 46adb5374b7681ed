"""What ``rrp import lammps --deck in.x`` takes from a LAMMPS input deck (issue #43
item 1): its ``units``, ``atom_style``, ``bond_style`` and ``bond_coeff`` lines — the
rest of a deck (fixes, pair styles, ``set`` commands, variables) is not read.

The bond coefficients map to the binder law's where the deck's bond style has a map:
``bpm/rotational`` (LAMMPS's BPM package: ``Kr Ks Kt Kb`` then critical forces and
damping) as the inverse of the deck ``rrp convert --to lammps`` writes (its
"What differs": ``Kr = Ka/r0²``, ``Ks = Ks/r0²``, ``Kb = Kt = Km``), so
``k_bend = Kb``, ``k_axial = Kr r0²``, ``k_shear = Ks r0²`` with ``r0`` the type's mean
bond length in the data file.  What is not carried (``Kt`` where it differs from
``Kb``, breaking, damping, other bond styles) is said in one note.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.inputs import read_input_bytes

from .tables import LammpsDataError
from .units import Scales


@dataclass
class Deck:
    """The settings of a deck that an import uses, each with its line (for messages)."""

    path: Path
    units: str | None = None
    units_line: int = 0
    atom_style: str | None = None
    style_line: int = 0
    bond_style: str | None = None
    bond_coeffs: dict[str, list[str]] = field(default_factory=dict)
    """``bond type → the coefficients' words`` of each ``bond_coeff`` line."""

    def where(self, line: int) -> str:
        """``"in.x line 6"``."""
        return f"{self.path.name} line {line}"


def read_deck(path: str | Path) -> Deck:
    """The ``units``, ``atom_style``, ``bond_style`` and ``bond_coeff`` lines of a deck
    (``#`` comments dropped, ``&`` continuations joined); one line if it cannot be read."""
    p = Path(path)
    text = read_input_bytes(p, p.name, LammpsDataError, "LAMMPS input deck").decode(
        "utf-8", errors="replace").replace("\r", " ")
    deck = Deck(p)
    pending: list[str] = []
    first = 0
    for k, raw in enumerate(text.split("\n"), start=1):
        line = raw.split("#", 1)[0].rstrip()
        if not pending:
            first = k
        if line.endswith("&"):
            pending.append(line[:-1])
            continue
        words = " ".join([*pending, line]).split()
        pending = []
        if not words:
            continue
        cmd, args = words[0], words[1:]
        if cmd == "units" and args:
            deck.units, deck.units_line = args[0], first
        elif cmd == "atom_style" and args:
            deck.atom_style, deck.style_line = " ".join(args), first
        elif cmd == "bond_style" and args:
            deck.bond_style = args[0]
        elif cmd == "bond_coeff" and len(args) > 1:
            deck.bond_coeffs[args[0]] = args[1:]
    return deck


def binder_of_deck(deck: Deck, x: np.ndarray, bonds: np.ndarray, btype: np.ndarray,
                   sc: Scales) -> tuple[dict[str, tuple[float, float, float]], list[str]]:
    """Our ``(k_bend, k_axial, k_shear)`` per bond type from the deck's ``bond_coeff``
    lines (module docstring), in SI (``x`` in SI, the coefficients in ``sc``'s units),
    and the note of what was not carried."""
    out: dict[str, tuple[float, float, float]] = {}
    if deck.bond_style != "bpm/rotational":
        what = f"bond_style {deck.bond_style}" if deck.bond_style else "no bond_style"
        return out, [f"{deck.path.name}: {what} has no map to the binder law: every bond "
                     "type takes the default coefficients"]
    lost: list[str] = []
    length = np.linalg.norm(x[bonds[:, 0]] - x[bonds[:, 1]], axis=1) if bonds.size else None
    types = [str(t) for t in np.unique(btype).tolist()] if btype.size else []
    for t in types:
        words = deck.bond_coeffs.get(t) or deck.bond_coeffs.get("*")
        if words is None:
            lost.append(f"type {t} has no bond_coeff")
            continue
        try:
            kr, ks, kt, kb = (float(w) for w in words[:4])
        except ValueError:
            lost.append(f"type {t}'s bond_coeff is not four numbers")
            continue
        r0 = float(length[btype == int(t)].mean()) / sc.length  # (the file's units)
        e = sc.energy
        out[t] = (kb * e, kr * r0 * r0 * e, ks * r0 * r0 * e)
        if kt != kb:
            lost.append(f"type {t}'s torsion Kt {kt:g} (ours shares k_bend {kb:g})")
    if any(len(w) > 4 for w in deck.bond_coeffs.values()):
        lost.append("the critical forces and damping (ours neither breaks nor damps)")
    lost.append("the rest lengths as LAMMPS takes them (ours: each bond's length in the "
                "data file; k_axial and k_shear from the type's mean length)")
    return out, [f"{deck.path.name}: bond_style bpm/rotational mapped to the binder law "
                 f"(k_bend = Kb, k_axial = Kr r0^2, k_shear = Ks r0^2); not carried: "
                 + "; ".join(lost)]
