"""LAMMPS data files out (issue #35 item 4): atom style ``bpm/sphere`` with velocities,
angular velocities and bonds, numbers in 17 digits, read back by :mod:`.read_data` to the
same doubles."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np


def write_data(path: str | Path, x: np.ndarray, D: np.ndarray, m: np.ndarray,
               v: np.ndarray, omega: np.ndarray, bonds: np.ndarray, *,
               bond_type: np.ndarray | None = None, mol: np.ndarray | None = None,
               title: str = "RRP Studio assembly", margin: float = 1.0,
               bond_coeffs: dict[int, tuple[float, float, float]] | None = None,
               atom_type: np.ndarray | None = None, pad: float | None = None,
               units: str = "si") -> None:
    """Write a LAMMPS data file of atom style ``bpm/sphere`` (``mol`` = our group,
    ``atom_type`` 1 unless given: the deck's one type per diameter),
    ``Velocities`` with angular velocities and ``Bonds`` (type 1 unless given); the box
    holds the spheres with ``pad`` (default ``margin`` diameters) to spare on every side:
    room for LAMMPS's neighbour bins in a flat direction (issue #43 item 2).  Numbers in
    17 digits (read back to the same doubles).  ``bond_coeffs``: our binder coefficients
    ``(k_bend, k_axial, k_shear)`` per bond type, as header comments that
    :func:`read_data` reads back (LAMMPS ignores them).  The title line ends with
    ``units = si`` (``units``), as LAMMPS's ``write_data`` names its units there, so a
    reader knows them without a deck (ours: ``engine.io.lammps.units.of_title``)."""
    n = x.shape[0]
    bonds = np.asarray(bonds, dtype=np.int64).reshape(-1, 2)
    nb = bonds.shape[0]
    bt = np.ones(nb, dtype=np.int64) if bond_type is None else np.asarray(bond_type, np.int64)
    mol = np.zeros(n, dtype=np.int64) if mol is None else np.asarray(mol, dtype=np.int64)
    at = np.ones(n, dtype=np.int64) if atom_type is None else np.asarray(atom_type, np.int64)
    dens = m / ((math.pi / 6.0) * D ** 3)
    pad = margin * float(D.max(initial=1.0)) if pad is None else float(pad)
    lo = x.min(axis=0, initial=0.0) - pad if n else np.full(3, -pad)
    hi = x.max(axis=0, initial=0.0) + pad if n else np.full(3, pad)
    ids = np.arange(1, n + 1)
    with open(path, "w", encoding="ascii") as f:
        f.write(f"{title}, units = {units}\n\n")
        for t, (kb, ka, ks) in sorted((bond_coeffs or {}).items()):
            f.write(f"# rrp bond_type {t}: k_bend {kb!r} k_axial {ka!r} k_shear {ks!r}\n")
        f.write(f"{n} atoms\n{int(at.max(initial=1))} atom types\n{nb} bonds\n"
                f"{int(bt.max(initial=1))} bond types\n\n")
        for k, ax in enumerate("xyz"):
            f.write(f"{lo[k]:.17g} {hi[k]:.17g} {ax}lo {ax}hi\n")
        f.write("\nAtoms # bpm/sphere\n\n")
        _rows(f, [ids, mol, at], [D, dens, *x.T], "%d %d %d "
              + " ".join(["%.17g"] * 5))
        f.write("\nVelocities\n\n")
        _rows(f, [ids], [*v.T, *omega.T], "%d " + " ".join(["%.17g"] * 6))
        if nb:
            f.write("\nBonds\n\n")
            _rows(f, [np.arange(1, nb + 1), bt, bonds[:, 0] + 1, bonds[:, 1] + 1], [],
                  "%d %d %d %d")


def _rows(f: Any, ints: list[np.ndarray], floats: list[np.ndarray], fmt: str,
          chunk: int = 100_000) -> None:
    """Rows of the integer then the float columns, ``fmt`` each, in chunks: one ``%``
    of a chunk's format string (a C loop; ``np.savetxt`` is a Python loop per row)."""
    n = ints[0].shape[0] if ints else floats[0].shape[0]
    for a in range(0, n, chunk):
        b = min(n, a + chunk)
        cols = [c[a:b].tolist() for c in ints] + [c[a:b].tolist() for c in floats]
        flat = [val for row in zip(*cols, strict=True) for val in row]
        f.write(((fmt + "\n") * (b - a)) % tuple(flat))
