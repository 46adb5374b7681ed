"""The columns of a LAMMPS data file's ``Atoms`` section, per atom style (issue #43
item 1), as LAMMPS's ``doc/src/read_data.rst`` ("Atoms section") lists them:

* ``atomic``: ``atom-ID atom-type x y z``;  ``charge``: ``atom-ID atom-type q x y z``;
* ``bond``, ``molecular`` (and ``angle``): ``atom-ID molecule-ID atom-type x y z``;
* ``full``: ``atom-ID molecule-ID atom-type q x y z``;
* ``sphere``: ``atom-ID atom-type diameter density x y z``;
* ``bpm/sphere`` (and its development spelling ``sphere/bpm``):
  ``atom-ID molecule-ID atom-type diameter density x y z``;
* ``dipole``: ``atom-ID atom-type q x y z mux muy muz``;
* ``hybrid s1 s2 …``: ``atom-ID atom-type x y z`` then each sub-style's columns other
  than those five, in the order of the sub-styles, a column that an earlier sub-style
  already gave appearing once ("atom_style hybrid dipole full would list q only once").

Each may be followed by three integer image flags ``nx ny nz`` (all rows or none).
``ellipsoid`` (its particles are not spheres) and every other style are refused in one
line.  The point styles (no ``diameter``) take their masses per type from ``Masses``
(LAMMPS's ``mass`` rule, atom_style.rst); the finite-size styles per atom from
``density`` (``m = ρ π D³/6``, ``m = ρ`` where ``D = 0``).
"""

from __future__ import annotations

BASE = ("id", "type", "x", "y", "z")
"""The five columns every style has (and a hybrid's first five)."""

COLUMNS: dict[str, tuple[str, ...]] = {
    "atomic": ("id", "type", "x", "y", "z"),
    "charge": ("id", "type", "q", "x", "y", "z"),
    "bond": ("id", "mol", "type", "x", "y", "z"),
    "angle": ("id", "mol", "type", "x", "y", "z"),
    "molecular": ("id", "mol", "type", "x", "y", "z"),
    "full": ("id", "mol", "type", "q", "x", "y", "z"),
    "sphere": ("id", "type", "diameter", "density", "x", "y", "z"),
    "bpm/sphere": ("id", "mol", "type", "diameter", "density", "x", "y", "z"),
    "sphere/bpm": ("id", "mol", "type", "diameter", "density", "x", "y", "z"),
    "dipole": ("id", "type", "q", "x", "y", "z", "mux", "muy", "muz"),
}
"""The readable styles' ``Atoms`` columns, without the optional image flags."""

READABLE = ("atomic, charge, bond, molecular, full, sphere, bpm/sphere (or sphere/bpm), "
            "dipole and hybrid of these")
REFUSED = {
    "ellipsoid": "its particles are ellipsoids, and an assembly's bodies are spheres; "
                 "write the model with atom_style sphere or bpm/sphere",
}
CARRIED = {"id", "type", "x", "y", "z", "mol", "diameter", "density"}
"""The columns an assembly keeps; the others (charges, dipole moments) are named in the
import's note as not carried."""
FLAGGED = ("sphere", "bpm/sphere", "sphere/bpm")
"""Sub-styles whose ``Velocities`` rows add the angular velocity ``wx wy wz``."""


class StyleError(ValueError):
    """An atom style that cannot be read: the message says why (without file or line)."""


def normalise(style: str) -> str:
    """``style`` with single blanks and without the numeric arguments LAMMPS's
    ``atom_style sphere 1`` and ``bpm/sphere 0`` take (the dynamic-radius switch)."""
    return " ".join(w for w in style.split() if not w.lstrip("+-").isdigit())


def columns(style: str) -> tuple[str, ...]:
    """The ``Atoms`` columns of ``style`` (normalised), by the rules of the module
    docstring; :class:`StyleError` naming what cannot be read."""
    words = normalise(style).split()
    if not words:
        raise StyleError("no atom style")
    if words[0] != "hybrid":
        if len(words) != 1:
            raise StyleError(f"atom style {style!r} is not one style: name a sub-style list "
                             "as 'hybrid a b'")
        return _single(words[0])
    subs = words[1:]
    if not subs:
        raise StyleError("atom style 'hybrid' without its sub-styles")
    out = list(BASE)
    for s in subs:
        if s == "hybrid":
            raise StyleError("a hybrid atom style cannot hold another hybrid")
        out += [c for c in _single(s) if c not in out]
    return tuple(out)


def _single(s: str) -> tuple[str, ...]:
    if s in REFUSED:
        raise StyleError(f"atom style {s!r} cannot be read: {REFUSED[s]}")
    if s not in COLUMNS:
        raise StyleError(f"atom style {s!r} cannot be read (readable: {READABLE})")
    return COLUMNS[s]


def has_omega(style: str) -> bool:
    """Whether ``style``'s ``Velocities`` rows carry ``wx wy wz`` after ``vx vy vz``."""
    return any(w in FLAGGED for w in normalise(style).split())


def fitting(ncols: int) -> list[str]:
    """The single readable styles whose ``Atoms`` rows have ``ncols`` columns (with or
    without image flags): the message of a file that names no style."""
    out = []
    for name, cols in COLUMNS.items():
        if name in ("angle", "sphere/bpm"):
            continue
        if ncols == len(cols):
            out.append(name)
        elif ncols == len(cols) + 3:
            out.append(f"{name} with image flags")
    return out
