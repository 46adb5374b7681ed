"""LAMMPS data files in, as LAMMPS's ``read_data`` reads them (issue #35 item 2, issue #43
item 1; LAMMPS's ``doc/src/read_data.rst`` and ``atom_style.rst``; the data files'
writer is :mod:`.write_data`).

* **Atom style** (:mod:`.styles`: atomic, charge, bond, molecular, full, sphere,
  bpm/sphere and sphere/bpm, dipole, hybrid of these; ellipsoid refused): the caller's
  ``atom_style`` (``--atom-style``, or the deck's ``atom_style``) overrides the
  ``Atoms # style`` comment; ``Atoms # hybrid`` without sub-styles, and a file naming no
  style, are refused in one line saying which styles fit and how to name one — the
  style is never guessed from the column count.
* **Image flags** ``nx ny nz`` (three trailing integers) are unwrapped, orthogonal or
  restricted triclinic box (``xy xz yz``, LAMMPS's Howto_triclinic):
  ``x += nx lx + ny xy + nz xz``, ``y += ny ly + nz yz``, ``z += nz lz``.
* **Units** (:mod:`.units`): the caller's ``units`` (``--units``, the deck's) or the title
  line's ``units = …``; lengths, masses, times converted to SI; ``lj`` refused.
* **Mass**: the finite-size styles per atom, ``m = ρ π D³/6`` (``m = ρ`` for ``D = 0``,
  LAMMPS's rule for a point particle, refused later by the assembly), inertia that of a
  solid sphere ``J = m D²/10`` (LAMMPS's); the point styles per type from ``Masses``,
  their diameter given by the caller.
* ``Velocities`` (``id vx vy vz``, and ``wx wy wz`` for the sphere styles), ``Bonds``
  (``id type i j``), the box; other sections are skipped.

CRLF line ends and trailing blanks read as LAMMPS reads them (a carriage return is
white space).  Every row of every section is checked (:mod:`.tables`), integers where
LAMMPS requires them; each refusal is one line naming the file and the line.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.inputs import read_input_bytes

from . import styles as st
from . import units as un
from .tables import (
    MAX_INT,
    LammpsDataError,
    data_lines,
    int_table,
    integers,
    line_of,
    once,
    parse_table,
    sections,
)

__all__ = ["HINTS", "LammpsData", "LammpsDataError", "read_data"]

_COEFF_RE = re.compile(r"^\s*#\s*rrp bond_type (\S+): k_bend (\S+) k_axial (\S+) "
                       r"k_shear (\S+)\s*$")
HINTS = {"style": "--atom-style", "units": "--units", "diameter": "--diameter"}
"""How the caller names each setting in a message (the CLI's options by default; the
scenario passes its keys)."""


@dataclass
class LammpsData:
    """The spheres and bonds of a data file, in the order of its ``Atoms`` section, in
    SI units."""

    ids: np.ndarray
    x: np.ndarray
    D: np.ndarray
    m: np.ndarray
    v: np.ndarray
    omega: np.ndarray
    mol: np.ndarray
    atom_type: np.ndarray
    bonds: np.ndarray
    """``(nb, 2)`` indices into the spheres (not atom ids)."""
    bond_type: np.ndarray
    path: Path
    spans: dict[str, tuple[int, int, int]]
    """``section → (start, end, first line)`` of its rows in the file."""
    box: np.ndarray
    """``(3, 2)``: ``lo, hi`` of x, y, z."""
    style: str
    n_bond_types: int
    bond_coeffs: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    """Our binder coefficients ``(k_bend, k_axial, k_shear)`` per bond type, from the
    header comments ``# rrp bond_type T: k_bend … k_axial … k_shear …`` that
    :func:`write_data` writes (issue #35 item 1); empty for other files.  Read as
    numbers only: their range is checked with every other input's
    (``engine.models.assembly.check_geometry``, issue #46 item 6)."""
    coeff_lines: dict[str, int] = field(default_factory=dict)
    """The line of each type's comment (for the messages)."""
    tilt: np.ndarray = field(default_factory=lambda: np.zeros(3))
    """The triclinic tilt factors ``xy xz yz`` (zero for an orthogonal box)."""
    units: str | None = None
    """The LAMMPS unit style the numbers were converted from (``None``: none named,
    taken as SI)."""
    notes: list[str] = field(default_factory=list)
    """What the reader did that the user should know (unwrapped images, units taken as
    SI, columns not carried), one line each."""
    dropped: list[str] = field(default_factory=list)
    """The ``Atoms`` columns an assembly does not carry (``q``, ``mux`` …)."""
    mu: np.ndarray | None = None
    """``(n, 3)``: the ``mux muy muz`` columns as each sphere's body-frame dipole at
    t = 0 (issue #44 item 6; units si or none only: the dipole has no unit scale here),
    ``None`` where the style has none."""

    def lines(self, section: str) -> np.ndarray:
        """The line of each row of ``section`` (``"Atoms"``, ``"Bonds"``): the file is
        read again, for a message only (nothing is kept while it is read the first
        time)."""
        if section not in self.spans:
            return np.zeros(0, dtype=np.int64)
        start, end, first = self.spans[section]
        return data_lines(self.path.read_bytes(), start, end, first)


@dataclass
class _Header:
    counts: dict[str, int]
    box: np.ndarray
    tilt: np.ndarray
    coeffs: dict[str, tuple[float, float, float]]
    coeff_lines: dict[str, int]


def _header(label: str, lines: list[str]) -> _Header:
    """The header keywords read_data.rst lists that an assembly uses: counts, the box
    and its tilt; a general triclinic box (``avec``…) is refused."""
    counts: dict[str, int] = {}
    box = np.array([[-0.5, 0.5]] * 3)
    tilt = np.zeros(3)
    coeffs: dict[str, tuple[float, float, float]] = {}
    coeff_lines: dict[str, int] = {}
    for k, raw in enumerate(lines[1:], start=2):  # (the first line is a title)
        mc = _COEFF_RE.match(raw)
        if mc:
            if mc.group(1) in coeff_lines:
                raise LammpsDataError(f"{label} line {k}: bond type {mc.group(1)}'s "
                                      "coefficients are given twice (also line "
                                      f"{coeff_lines[mc.group(1)]}); keep one line")
            coeff_lines[mc.group(1)] = k
            try:
                coeffs[mc.group(1)] = (float(mc.group(2)), float(mc.group(3)),
                                       float(mc.group(4)))
            except ValueError:
                raise LammpsDataError(f"{label} line {k}: cannot read the bond coefficients "
                                      f"{raw.strip()!r}") from None
        t = raw.split("#", 1)[0].split()
        if not t:
            continue
        if t[-1] in ("avec", "bvec", "cvec") or t[-2:] == ["abc", "origin"]:
            raise LammpsDataError(
                f"{label} line {k}: a general triclinic box ({t[-1]}) is not read; write "
                "the file with LAMMPS's write_data without 'triclinic/general' (the "
                "restricted form: xlo xhi … xy xz yz)")
        try:
            if len(t) == 2 and t[1] in ("atoms", "bonds"):
                counts[t[1]] = int(t[0])
            elif len(t) == 3 and t[1:] in (["bond", "types"], ["atom", "types"]):
                counts[" ".join(t[1:])] = int(t[0])
            elif len(t) == 4 and t[2:] in (["xlo", "xhi"], ["ylo", "yhi"], ["zlo", "zhi"]):
                box["xyz".index(t[2][0])] = [float(t[0]), float(t[1])]
            elif len(t) == 6 and t[3:] == ["xy", "xz", "yz"]:
                tilt[:] = [float(w) for w in t[:3]]
        except ValueError:
            raise LammpsDataError(f"{label} line {k}: cannot read the header line "
                                  f"{raw.strip()!r}: LAMMPS needs an integer count or "
                                  "numbers there") from None
    if not np.isfinite(box).all() or not np.isfinite(tilt).all():
        raise LammpsDataError(f"{label}: the box (xlo xhi …, xy xz yz) is not finite")
    return _Header(counts, box, tilt, coeffs, coeff_lines)


def _first_row_columns(buf: bytes, a0: int, a1: int) -> int:
    for raw in buf[a0:a1].split(b"\n"):
        t = raw.split(b"#", 1)[0].split()
        if t:
            return len(t)
    return 0


def _style(label: str, comment: str, atom_style: str | None, style_from: str,
           at_line: int, ncols: int, how: dict[str, str]) -> tuple[str, tuple[str, ...]]:
    """The style and its columns: the caller's, else the comment's (module docstring)."""
    given = atom_style if atom_style and atom_style.strip() else None
    style = st.normalise(given if given is not None else comment)
    where = style_from if given is not None else f"{label} line {at_line}"
    example = f'{how["style"]} "hybrid bpm/sphere dipole"'
    if not style:
        fits = st.fitting(ncols)
        raise LammpsDataError(
            f"{label} line {at_line}: the Atoms line names no atom style, and its {ncols} "
            f"columns fit {' or '.join(fits) if fits else 'no single readable style'} (or a "
            f"hybrid); name the style with {how['style']} \"…\" or as 'Atoms # style'")
    if style == "hybrid":
        raise LammpsDataError(
            f"{where}: atom style hybrid without its sub-styles (LAMMPS's write_data writes "
            f"'Atoms # hybrid'): name them as the deck's atom_style does, {example}")
    try:
        return style, st.columns(style)
    except st.StyleError as exc:
        raise LammpsDataError(f"{where}: {exc}") from None


def read_data(path: str | Path, *, diameter: float | None = None,
              atom_style: str | None = None, units: str | None = None,
              style_from: str = "--atom-style", units_from: str = "--units",
              how: dict[str, str] | None = None) -> LammpsData:
    """Read a LAMMPS data file (the module docstring) into SI units.

    ``diameter``: the spheres' diameter where the style has none (the point styles);
    ``atom_style``: the style, overriding the ``Atoms`` comment; ``units``: the LAMMPS
    unit style, overriding the title's ``units = …``; ``style_from``, ``units_from``:
    where those came from, for the messages; ``how``: the names of the settings in the
    messages (:data:`HINTS`)."""
    how = {**HINTS, **(how or {})}
    p = Path(path)
    label = p.name
    buf = read_input_bytes(p, label, LammpsDataError, "LAMMPS data file")
    if b"\r" in buf:  # (CRLF: LAMMPS's tokenizer takes a carriage return as a blank)
        buf = buf.replace(b"\r", b" ")
    found = sections(buf)
    head_end = found[0].start() if found else len(buf)
    header_lines = buf[:head_end].decode("ascii", errors="replace").split("\n")
    hd = _header(label, header_lines)
    counts = hd.counts
    if "atoms" not in counts:
        raise LammpsDataError(f"{label}: no 'N atoms' line in the header: not a LAMMPS "
                              "data file")
    notes: list[str] = []
    unit_name = units if units else un.of_title(header_lines[0] if header_lines else "")
    try:
        sc = un.scales(unit_name) if unit_name else un.UNITS["si"]
    except un.UnitsError as exc:
        where = units_from if units else f"{label} line 1"
        raise LammpsDataError(f"{where}: {str(exc).replace('--units', how['units'])}") \
            from None
    if not unit_name:
        notes.append(f"{label} names no units (no 'units = …' in its title line): its "
                     f"numbers are taken as SI (m, kg, s); give {how['units']} to convert")
    spans = {}
    for k, m in enumerate(found):
        name = m.group(1).decode()
        end = found[k + 1].start() if k + 1 < len(found) else len(buf)
        body = buf.find(b"\n", m.end()) + 1 if buf.find(b"\n", m.end()) >= 0 else end
        spans[name] = (m, body, end)
    if "Atoms" not in spans:
        raise LammpsDataError(f"{label}: no Atoms section")
    m_at, a0, a1 = spans["Atoms"]
    at_line = line_of(buf, m_at.start())
    comment = (m_at.group(2) or b"").decode(errors="replace").lstrip("#").strip()
    style, cols = _style(label, comment, atom_style, style_from, at_line,
                         _first_row_columns(buf, a0, a1), how)
    n = counts["atoms"]
    section = f"Atoms # {style}"
    a = parse_table(label, buf, a0, a1, at_line + 1, n, section, (len(cols), len(cols) + 3))
    ints = {cols.index("id"): ("atom id", -MAX_INT, None),
            cols.index("type"): ("atom type", 1, counts.get("atom types"))}
    if "mol" in cols:
        ints[cols.index("mol")] = ("molecule id", 0, None)
    flags = a.shape[1] == len(cols) + 3
    if flags:
        ints.update({len(cols) + k: (f"image flag n{'xyz'[k]}", -MAX_INT, None)
                     for k in range(3)})
    integers(label, buf, (a0, a1, at_line + 1), section, a, ints)
    c = {name: a[:, k] for k, name in enumerate(cols)}
    ids = c["id"].astype(np.int64)
    atom_type = c["type"].astype(np.int64)
    x = np.ascontiguousarray(np.stack([c["x"], c["y"], c["z"]], axis=1))
    if flags:
        img = a[:, len(cols):len(cols) + 3]
        moved = int(np.count_nonzero(img.any(axis=1)))
        if moved:
            _unwrap(x, img, hd.box, hd.tilt)
            notes.append(f"{label}: the image flags of {moved} atom{'s' * (moved != 1)} "
                         "unwrapped (x + nx lx + ny xy + nz xz, …): bonds across periodic "
                         "boundaries keep their true length (an assembly is not periodic)")
    if "diameter" in c:
        D = c["diameter"].copy()
        m = np.where(D > 0.0, c["density"] * (math.pi / 6.0) * D ** 3, c["density"])
    else:
        D, m = _point_masses(label, buf, spans, counts, atom_type, style, at_line,
                             diameter, sc, how)
    mu = None
    if "mux" in c and unit_name in (None, "", "si"):  # (no unit scale for a dipole)
        mu = np.ascontiguousarray(np.stack([c["mux"], c["muy"], c["muz"]], axis=1))
    carried = st.CARRIED | ({"mux", "muy", "muz"} if mu is not None else set())
    dropped = [k for k in cols if k not in carried]
    if dropped:
        notes.append(f"{label}: the columns {' '.join(dropped)} of atom style {style} are "
                     "not carried (an assembly has no charges"
                     + (")" if mu is not None else " or dipoles in these units)"))
    mol = c["mol"].astype(np.int64) if "mol" in c else np.zeros(n, dtype=np.int64)
    index_of = _index(label, at_line, ids)
    v, omega = _velocities(label, buf, spans, n, st.has_omega(style), index_of)
    bonds, btype, bspan = _bonds(label, buf, spans, counts, index_of)
    x *= sc.length
    D *= sc.length
    m = m * sc.mass
    v *= sc.length / sc.time
    omega /= sc.time
    rows = {"Atoms": (a0, a1, at_line + 1)}
    if bspan is not None:
        rows["Bonds"] = bspan
    return LammpsData(ids, x, D, m, v, omega, mol, atom_type, bonds, btype, p, rows,
                      hd.box * sc.length, style,
                      counts.get("bond types", int(btype.max(initial=0))), hd.coeffs,
                      hd.coeff_lines, hd.tilt * sc.length, unit_name or None, notes,
                      dropped, mu)


def _unwrap(x: np.ndarray, img: np.ndarray, box: np.ndarray, tilt: np.ndarray) -> None:
    """Unwrapped positions in place (read_data.rst, "image flags"; Howto_triclinic's
    edge vectors A = (lx, 0, 0), B = (xy, ly, 0), C = (xz, yz, lz))."""
    lx, ly, lz = box[:, 1] - box[:, 0]
    xy, xz, yz = tilt
    x[:, 0] += img[:, 0] * lx + img[:, 1] * xy + img[:, 2] * xz
    x[:, 1] += img[:, 1] * ly + img[:, 2] * yz
    x[:, 2] += img[:, 2] * lz


def _point_masses(label: str, buf: bytes, spans: dict, counts: dict[str, int],
                  atom_type: np.ndarray, style: str, at_line: int, diameter: float | None,
                  sc: un.Scales, how: dict[str, str]) -> tuple[np.ndarray, np.ndarray]:
    """A point style's diameters (the caller's, in SI: not scaled back) and per-type
    masses from ``Masses`` (in the file's units)."""
    n = atom_type.shape[0]
    if diameter is None:
        raise LammpsDataError(f"{label} line {at_line}: atom style {style!r} has no "
                              f"diameter: give the spheres' diameter with {how['diameter']}")
    D = np.full(n, float(diameter) / sc.length)  # (scaled with the lengths below)
    if "Masses" not in spans:
        raise LammpsDataError(f"{label} line {at_line}: atom style {style!r} takes its "
                              "masses from a Masses section, and there is none")
    mm, m0, m1 = spans["Masses"]
    nt = counts.get("atom types", int(atom_type.max(initial=0)))
    mline = line_of(buf, mm.start()) + 1
    ms = parse_table(label, buf, m0, m1, mline, nt, "Masses", (2,))
    integers(label, buf, (m0, m1, mline), "Masses",
             ms, {0: ("atom type", 1, counts.get("atom types"))})
    once(label, buf, (m0, m1, mline), "Masses", "atom type", ms[:, 0])
    table = np.full(int(max(ms[:, 0].max(initial=0), atom_type.max(initial=0))) + 1, np.nan)
    table[ms[:, 0].astype(np.int64)] = ms[:, 1]
    m = table[atom_type]
    if np.isnan(m).any():
        raise LammpsDataError(f"{label}: atom type {int(atom_type[np.isnan(m)][0])} "
                              "has no mass in the Masses section")
    return D, m


def _index(label: str, at_line: int, ids: np.ndarray):
    """``index_of(want)``: the sphere index of each atom id (-1: none); duplicate ids
    refused."""
    n = ids.shape[0]
    order = np.argsort(ids, kind="stable")
    sid = ids[order]
    if n and np.any(sid[1:] == sid[:-1]):
        dup = int(sid[1:][sid[1:] == sid[:-1]][0])
        raise LammpsDataError(f"{label} line {at_line}: atom id {dup} appears twice in Atoms")
    lo = int(sid[0]) if n else 0
    hi = int(sid[-1]) if n else -1
    table = None
    if n and hi - lo < 4 * n + 16:  # (compact ids, the usual case: a lookup table)
        table = np.full(hi - lo + 1, -1, dtype=np.int64)
        table[ids - lo] = np.arange(n)

    def index_of(want: np.ndarray) -> np.ndarray:
        if table is not None:
            k = want - lo
            ok = (k >= 0) & (k < table.shape[0])
            return np.where(ok, table[np.where(ok, k, 0)], -1)
        pos = np.minimum(np.searchsorted(sid, want), max(n - 1, 0))
        ok = (sid[pos] == want) if n else np.zeros(want.shape, dtype=bool)
        return np.where(ok, order[pos], -1)

    return index_of


def _velocities(label: str, buf: bytes, spans: dict, n: int, spin: bool,
                index_of) -> tuple[np.ndarray, np.ndarray]:
    """``Velocities``: ``id vx vy vz`` (and ``wx wy wz`` where ``spin``), by atom id."""
    v = np.zeros((n, 3))
    omega = np.zeros((n, 3))
    if "Velocities" not in spans:
        return v, omega
    mv, v0, v1 = spans["Velocities"]
    vline = line_of(buf, mv.start())
    vel = parse_table(label, buf, v0, v1, vline + 1, n, "Velocities", (7,) if spin else (4,))
    integers(label, buf, (v0, v1, vline + 1), "Velocities", vel,
             {0: ("atom id", -MAX_INT, None)})
    at = index_of(vel[:, 0].astype(np.int64))
    if (at < 0).any():
        r = int(np.argmax(at < 0))
        line = int(data_lines(buf, v0, v1, vline + 1)[r])
        raise LammpsDataError(f"{label} line {line}: Velocities names atom "
                              f"{int(vel[r, 0])}, which is not in Atoms; fix the row")
    once(label, buf, (v0, v1, vline + 1), "Velocities", "atom", vel[:, 0])
    v[at] = vel[:, 1:4]
    if spin:
        omega[at] = vel[:, 4:7]
    return v, omega


def _bonds(label: str, buf: bytes, spans: dict, counts: dict[str, int], index_of):
    """``Bonds``: ``(nb, 2)`` sphere indices, the types, and the section's span."""
    nb = counts.get("bonds", 0)
    if not nb:
        return np.zeros((0, 2), dtype=np.int64), np.zeros(0, dtype=np.int64), None
    if "Bonds" not in spans:
        raise LammpsDataError(f"{label}: the header says {nb} bonds and there is no "
                              "Bonds section")
    mb, b0, b1 = spans["Bonds"]
    bline = line_of(buf, mb.start())
    bt = int_table(buf, b0, b1, nb, 4)
    if bt is None:  # (not plain integers: the general reader, and its messages)
        bt = parse_table(label, buf, b0, b1, bline + 1, nb, "Bonds", (4,))
    integers(label, buf, (b0, b1, bline + 1), "Bonds", bt,
             {0: ("bond id", -MAX_INT, None), 1: ("bond type", 1, counts.get("bond types")),
              2: ("atom id", -MAX_INT, None), 3: ("atom id", -MAX_INT, None)})
    bt = bt.astype(np.int64)
    ends = np.stack([index_of(bt[:, 2]), index_of(bt[:, 3])], axis=1)
    missing = (ends < 0).any(axis=1)
    if missing.any():
        k = int(np.argmax(missing))
        line = int(data_lines(buf, b0, b1, bline + 1)[k])
        who = int(bt[k, 2] if ends[k, 0] < 0 else bt[k, 3])
        raise LammpsDataError(f"{label} line {line}: a bond to atom {who}, which is not "
                              "in Atoms")
    return ends, bt[:, 1].copy(), (b0, b1, bline + 1)
