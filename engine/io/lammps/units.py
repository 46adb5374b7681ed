"""LAMMPS's unit styles and their SI values (issue #43 item 1; LAMMPS's
``doc/src/units.rst``): an assembly scenario is in SI (metres, kilograms, seconds: the
units of ``rrp convert --to lammps``'s ``units si`` deck), so a data file's lengths,
masses, times and energies are multiplied by the values below.  ``lj`` is LAMMPS's
reduced units (σ, ε, m): without those scales it has no SI meaning and is refused.

Mass in ``real`` and ``metal`` is grams per mole: one atom's is ``1e-3/N_A`` kg.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

AVOGADRO = 6.02214076e23
"""N_A, mol⁻¹ (SI 2019, exact)."""


@dataclass(frozen=True)
class Scales:
    """SI value of one unit of length, mass, time and energy of a LAMMPS unit style."""

    length: float
    mass: float
    time: float
    energy: float


UNITS: dict[str, Scales] = {
    "si": Scales(1.0, 1.0, 1.0, 1.0),
    "cgs": Scales(1e-2, 1e-3, 1.0, 1e-7),                      # cm, g, s, erg
    "real": Scales(1e-10, 1e-3 / AVOGADRO, 1e-15, 4184.0 / AVOGADRO),  # Å, g/mol, fs, kcal/mol
    "metal": Scales(1e-10, 1e-3 / AVOGADRO, 1e-12, 1.602176634e-19),  # Å, g/mol, ps, eV
    "micro": Scales(1e-6, 1e-15, 1e-6, 1e-15),                 # µm, pg, µs, pg µm²/µs²
    "nano": Scales(1e-9, 1e-21, 1e-9, 1e-21),                  # nm, ag, ns, ag nm²/ns²
}
NAMES = "lj, real, metal, si, cgs, micro, nano"
TITLE_UNITS = re.compile(r"units\s*=\s*([A-Za-z]+)")
"""``units = metal`` in a data file's first line, as LAMMPS's ``write_data`` writes it."""


class UnitsError(ValueError):
    """Units that cannot be converted to SI; the message says why and what to do."""


def scales(units: str) -> Scales:
    """The SI scales of the LAMMPS unit style ``units``; :class:`UnitsError` for ``lj``
    (no SI meaning without its σ, ε, m) and for a name LAMMPS does not have."""
    if units == "lj":
        raise UnitsError("units lj are LAMMPS's reduced units (sigma, epsilon, m), which "
                         "have no SI meaning without those scales: rescale the file to SI, "
                         "or give --units si to take its numbers as metres, kilograms and "
                         "seconds")
    if units not in UNITS:
        raise UnitsError(f"units {units!r} are not a LAMMPS unit style ({NAMES})")
    return UNITS[units]


def of_title(title: str) -> str | None:
    """The unit style a data file's title line names (``… units = metal``), or ``None``."""
    m = TITLE_UNITS.search(title)
    return m.group(1) if m else None
