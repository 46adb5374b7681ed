"""LAMMPS data files in: ``read_data`` (issue #35 item 2; the data files' writer is
:mod:`.write_data`).

Reads the ``Atoms`` of the atom styles ``sphere`` (``id type diameter density x y z``),
``sphere/bpm`` (``id mol type diameter density x y z``), ``bond`` (``id mol type x y z``,
masses from ``Masses``, the diameter given by the caller) and ``hybrid sphere bond``
(``id type x y z diameter density mol``), each optionally followed by three image flags;
``Velocities`` (``id vx vy vz`` and, for the sphere styles, ``wx wy wz``); ``Bonds``
(``id type i j``); the box (``xlo xhi`` …).  Other sections are skipped.  The file is read
once into memory and each section parsed by NumPy's C reader (no Python loop per line:
10⁶ spheres and 6·10⁶ bonds in seconds, BENCHMARKS.md); a refusal is one line naming the
file and the line (:class:`LammpsDataError`).

Mass from ``density``: ``m = ρ π D³/6`` (3-d; LAMMPS's ``set density``), ``m = ρ`` for
``D = 0`` (a point particle, refused later by the assembly); inertia that of a solid
sphere, ``J = m D²/10``, as LAMMPS's.
"""

from __future__ import annotations

import io
import math
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.inputs import ParameterError, read_input_bytes


class LammpsDataError(ParameterError):
    """A LAMMPS data file cannot be read; one line naming the file and the line."""


STYLES = {
    # style: (column names of Atoms, without the optional image flags)
    "sphere": ("id", "type", "diameter", "density", "x", "y", "z"),
    "sphere/bpm": ("id", "mol", "type", "diameter", "density", "x", "y", "z"),
    "bpm/sphere": ("id", "mol", "type", "diameter", "density", "x", "y", "z"),  # (LAMMPS's
    # released name of sphere/bpm, which its development versions used: both read)
    "bond": ("id", "mol", "type", "x", "y", "z"),
    "hybrid sphere bond": ("id", "type", "x", "y", "z", "diameter", "density", "mol"),
}
READABLE = ", ".join(STYLES)
SECTIONS = ("Atoms", "Velocities", "Masses", "Bonds", "Angles", "Dihedrals", "Impropers",
            "Ellipsoids", "Lines", "Triangles", "Bodies", "Pair Coeffs", "PairIJ Coeffs",
            "Bond Coeffs", "Angle Coeffs", "Dihedral Coeffs", "Improper Coeffs",
            "BondBond Coeffs", "BondAngle Coeffs", "MiddleBondTorsion Coeffs",
            "EndBondTorsion Coeffs", "AngleTorsion Coeffs", "AngleAngleTorsion Coeffs",
            "BondBond13 Coeffs", "AngleAngle Coeffs")
_COEFF_RE = re.compile(r"^\s*#\s*rrp bond_type (\S+): k_bend (\S+) k_axial (\S+) "
                       r"k_shear (\S+)\s*$")
_SECTION_RE = re.compile(
    rb"^[ \t]*(" + b"|".join(re.escape(s.encode()) for s in SECTIONS) + rb")[ \t]*(#[^\n]*)?$",
    re.MULTILINE)


@dataclass
class LammpsData:
    """The spheres and bonds of a data file, in the order of its ``Atoms`` section."""

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

    def lines(self, section: str) -> np.ndarray:
        """The line of each row of ``section`` (``"Atoms"``, ``"Bonds"``): the file is
        read again, for a message only (nothing is kept while it is read the first
        time)."""
        if section not in self.spans:
            return np.zeros(0, dtype=np.int64)
        start, end, first = self.spans[section]
        return _data_lines(self.path.read_bytes(), start, end, first)


def _sections(buf: bytes) -> list[re.Match]:
    """The section headers: lines that start (after blanks) with a letter and match
    ``_SECTION_RE`` — found by NumPy over the line starts, the regular expression run
    on those lines only (over the whole file it cost seconds on 10⁶ spheres)."""
    a = np.frombuffer(buf, dtype=np.uint8)
    starts = np.concatenate([[0], np.flatnonzero(a == 10) + 1])
    starts = starts[starts < a.shape[0]]
    first = a[starts]
    letter = ((first >= 65) & (first <= 90)) | ((first >= 97) & (first <= 122))
    blank = np.flatnonzero((first == 32) | (first == 9))
    if blank.size:  # (an indented header: past up to 16 leading blanks, those lines only)
        pos = starts[blank]
        for _ in range(16):
            c = a[np.minimum(pos, a.shape[0] - 1)]
            step = ((c == 32) | (c == 9)) & (pos < a.shape[0] - 1)
            if not step.any():
                break
            pos += step
        c = a[np.minimum(pos, a.shape[0] - 1)]
        letter[blank] = ((c >= 65) & (c <= 90)) | ((c >= 97) & (c <= 122))
    out = []
    for s0 in starts[letter].tolist():
        m = _SECTION_RE.match(buf, s0, buf.find(b"\n", s0) if buf.find(b"\n", s0) >= 0
                              else len(buf))
        if m:
            out.append(m)
    return out


def _line_of(buf: bytes, offset: int) -> int:
    return buf.count(b"\n", 0, offset) + 1


def _data_lines(buf: bytes, start: int, end: int, first_line: int) -> np.ndarray:
    """The line numbers of the non-blank, non-comment lines of ``buf[start:end]`` (for
    the messages naming a sphere's or a bond's line; vectorised)."""
    chunk = np.frombuffer(buf, dtype=np.uint8, count=end - start, offset=start)
    nl = np.flatnonzero(chunk == 10)
    starts = np.concatenate([[0], nl + 1])
    ends = np.concatenate([nl, [chunk.shape[0]]])
    ink = np.flatnonzero((chunk != 32) & (chunk != 9) & (chunk != 13) & (chunk != 10))
    at = np.searchsorted(ink, starts)
    first = ink[np.minimum(at, max(ink.shape[0] - 1, 0))] if ink.size else starts
    keep = (at < ink.shape[0]) & (first < ends)
    keep &= chunk[np.minimum(first, max(chunk.shape[0] - 1, 0))] != ord("#")
    return first_line + np.flatnonzero(keep)


def _int_table(buf: bytes, start: int, end: int, count: int, ncols: int) -> np.ndarray | None:
    """``count`` rows of ``ncols`` integers by NumPy's integer scanner (ten times the
    speed of the general reader on the ``Bonds`` of a large file), or ``None`` where the
    section is anything else (a comment, a number that is not an integer, a short row:
    the general reader then names the line)."""
    text = buf[start:end]
    if b"#" in text or b"." in text or b"e" in text or b"E" in text:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            a = np.fromstring(text.decode("ascii", errors="replace"), dtype=np.int64,
                              sep=" ")
        except ValueError:
            return None
    if a.shape[0] != count * ncols:
        return None
    rows = a.reshape(count, ncols)
    # every row on its own line: as many non-blank lines as rows
    nonblank = sum(1 for ln in text.split(b"\n") if ln.strip()) if count < 1000 else None
    if nonblank is not None and nonblank != count:
        return None
    return rows


FAST_MIN_ROWS = 10_000
"""Sections of at least this many rows are parsed by pandas's C reader where pandas is
installed (five times NumPy's ``loadtxt`` on floats, the same doubles: BENCHMARKS.md);
anything it does not parse cleanly goes to ``loadtxt`` and its messages."""


def _fast_table(buf: bytes, start: int, end: int, count: int,
                ncols: tuple[int, ...]) -> np.ndarray | None:
    if count < FAST_MIN_ROWS:
        return None
    try:
        import pandas as pd
    except ImportError:
        return None
    try:
        df = pd.read_csv(io.BytesIO(buf[start:end]), sep=r"\s+", header=None, comment="#",
                         dtype=np.float64, skip_blank_lines=True)
    except Exception:  # (any refusal: the general reader names the line)
        return None
    a = np.ascontiguousarray(df.to_numpy(dtype=np.float64))
    if a.ndim != 2 or a.shape[0] != count or a.shape[1] not in ncols or np.isnan(a).any():
        return None
    return a


def _first_bad_line(buf: bytes, start: int, end: int, first_line: int,
                    ncols: tuple[int, ...]) -> tuple[int, str]:
    """The first line of a section that is not a row of numbers like the first row
    (the error path only: a Python loop)."""
    want = None
    for k, raw in enumerate(buf[start:end].decode("ascii", errors="replace").split("\n")):
        t = raw.split("#", 1)[0].split()
        if not t:
            continue
        if want is None:
            want = len(t)
        if len(t) not in ncols or len(t) != want:
            return first_line + k, (f"{len(t)} columns, expected "
                                    f"{' or '.join(map(str, ncols))} (as the first row)")
        for w in t:
            try:
                float(w)
            except ValueError:
                return first_line + k, f"{w!r} is not a number"
    return first_line, "cannot read the section"


def _parse_table(label: str, buf: bytes, start: int, end: int, first_line: int,
                 count: int, section: str, ncols: tuple[int, ...]) -> np.ndarray:
    """``count`` rows of numbers of the section between ``start`` and ``end``, each of
    one of the column counts ``ncols``; one-line errors naming the line."""
    a = _fast_table(buf, start, end, count, ncols)
    if a is not None:
        return a
    text = buf[start:end].decode("ascii", errors="replace")
    try:
        a = np.loadtxt(io.StringIO(text), comments="#", ndmin=2, dtype=np.float64)
        if a.size and a.shape[1] not in ncols:
            raise ValueError
    except ValueError:
        line, why = _first_bad_line(buf, start, end, first_line, ncols)
        raise LammpsDataError(f"{label} line {line}: {section}: {why}") from None
    if a.size == 0:
        a = a.reshape(0, ncols[0])
    if a.shape[1] not in ncols:
        raise LammpsDataError(f"{label} line {first_line}: {section} has {a.shape[1]} "
                              f"columns, expected {' or '.join(map(str, ncols))}")
    if a.shape[0] != count:
        raise LammpsDataError(f"{label} line {first_line}: {section} has {a.shape[0]} rows, "
                              f"the header says {count}")
    bad = ~np.isfinite(a)
    if bad.any():
        k = int(np.argmax(bad.any(axis=1)))
        line = int(_data_lines(buf, start, end, first_line)[k])
        raise LammpsDataError(f"{label} line {line}: {section}: a number is not finite")
    return a


MAX_INT = 2**53
"""The largest id or type read (the columns are read as doubles: integers beyond this
are not exact)."""


def _integers(label: str, buf: bytes, span: tuple[int, int, int], section: str,
              a: np.ndarray, cols: dict[int, tuple[str, int, int | None]]) -> None:
    """Refuse, naming its line, the first row whose column ``k`` of ``cols`` (``k →
    (name, lo, hi)``) is not an integer in ``[lo, hi]`` (``hi``: ``None``, no bound
    but :data:`MAX_INT`): a LAMMPS id or type, which ``astype`` would truncate (1.5
    → 1) and a type that would index from the end (−1 → the last: issue #47 item 5)."""
    for k, (name, lo, hi) in cols.items():
        col = a[:, k]
        top = MAX_INT if hi is None else hi
        if np.issubdtype(col.dtype, np.integer):  # (the integer scanner's: whole already)
            if lo <= -MAX_INT and hi is None:
                continue
            bad = (col < lo) | (col > top)
        else:
            bad = (col != np.floor(col)) | (col < lo) | (col > top)
        if not bad.any():
            continue
        r = int(np.argmax(bad))
        line = int(_data_lines(buf, *span)[r])
        v = float(col[r])
        if v != math.floor(v):
            why = f"{name} {v:g} is not an integer"
        else:
            why = (f"{name} {v:.0f} is out of range: LAMMPS numbers them from {lo}"
                   + (f" to {hi} (the header's count)" if hi is not None else ""))
        raise LammpsDataError(f"{label} line {line}: {section}: {why}; fix the row")


def read_data(path: str | Path, *, diameter: float | None = None,
              atom_style: str | None = None) -> LammpsData:
    """Read a LAMMPS data file (the module docstring); ``diameter``: the spheres'
    diameter where the style has none (``bond``); ``atom_style``: the style where the
    ``Atoms`` line does not name it."""
    p = Path(path)
    label = p.name
    buf = read_input_bytes(p, label, LammpsDataError, "LAMMPS data file")
    found = _sections(buf)
    head_end = found[0].start() if found else len(buf)
    header = buf[:head_end].decode("ascii", errors="replace").splitlines()
    counts: dict[str, int] = {}
    box = np.array([[-0.5, 0.5]] * 3)
    coeffs: dict[str, tuple[float, float, float]] = {}
    coeff_lines: dict[str, int] = {}
    for k, raw in enumerate(header[1:], start=2):  # (the first line is a title)
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
        try:
            if len(t) == 2 and t[1] in ("atoms", "bonds"):
                counts[t[1]] = int(t[0])
            elif len(t) == 3 and t[1:] == ["bond", "types"]:
                counts["bond types"] = int(t[0])
            elif len(t) == 3 and t[1:] == ["atom", "types"]:
                counts["atom types"] = int(t[0])
            elif len(t) == 4 and t[2] in ("xlo", "ylo", "zlo"):
                box["xyz".index(t[2][0])] = [float(t[0]), float(t[1])]
        except ValueError:
            raise LammpsDataError(f"{label} line {k}: cannot read the header line "
                                  f"{raw.strip()!r}") from None
    if "atoms" not in counts:
        raise LammpsDataError(f"{label}: no 'N atoms' line in the header: not a LAMMPS "
                              "data file")
    spans = {}
    for k, m in enumerate(found):
        name = m.group(1).decode()
        end = found[k + 1].start() if k + 1 < len(found) else len(buf)
        body = buf.find(b"\n", m.end()) + 1 if buf.find(b"\n", m.end()) >= 0 else end
        spans[name] = (m, body, end)
    if "Atoms" not in spans:
        raise LammpsDataError(f"{label}: no Atoms section")
    m_at, a0, a1 = spans["Atoms"]
    at_line = _line_of(buf, m_at.start())
    comment = (m_at.group(2) or b"").decode(errors="replace").lstrip("#").strip()
    style = " ".join(comment.split()) or atom_style
    n = counts["atoms"]
    if style is None:
        probe = _parse_table(label, buf, a0, a1, at_line + 1, n, "Atoms",
                             (6, 7, 8, 9, 10, 11))
        style = {7: "sphere", 10: "sphere", 8: "sphere/bpm", 11: "sphere/bpm",
                 6: "bond", 9: "bond"}[probe.shape[1]]
    if style not in STYLES:
        raise LammpsDataError(f"{label} line {at_line}: atom style {style!r} cannot be read "
                              f"(readable: {READABLE})")
    cols = STYLES[style]
    a = _parse_table(label, buf, a0, a1, at_line + 1, n, f"Atoms # {style}",
                     (len(cols), len(cols) + 3))
    ints = {cols.index("id"): ("atom id", -MAX_INT, None),
            cols.index("type"): ("atom type", 1, counts.get("atom types"))}
    if "mol" in cols:
        ints[cols.index("mol")] = ("molecule id", 0, None)
    _integers(label, buf, (a0, a1, at_line + 1), f"Atoms # {style}", a, ints)
    c = {name: a[:, k] for k, name in enumerate(cols)}
    ids = c["id"].astype(np.int64)
    atom_type = c["type"].astype(np.int64)
    x = np.ascontiguousarray(np.stack([c["x"], c["y"], c["z"]], axis=1))
    if "diameter" in c:
        D = c["diameter"].copy()
        m = np.where(D > 0.0, c["density"] * (math.pi / 6.0) * D ** 3, c["density"])
    else:
        if diameter is None:
            raise LammpsDataError(f"{label} line {at_line}: atom style {style!r} has no "
                                  "diameter: give one with diameter = … in the scenario")
        D = np.full(n, float(diameter))
        if "Masses" not in spans:
            raise LammpsDataError(f"{label} line {at_line}: atom style {style!r} takes its "
                                  "masses from a Masses section, and there is none")
        mm, m0, m1 = spans["Masses"]
        nt = counts.get("atom types", int(atom_type.max(initial=0)))
        mline = _line_of(buf, mm.start()) + 1
        ms = _parse_table(label, buf, m0, m1, mline, nt, "Masses", (2,))
        _integers(label, buf, (m0, m1, mline), "Masses", ms,
                  {0: ("atom type", 1, counts.get("atom types"))})
        _once(label, buf, (m0, m1, mline), "Masses", "atom type", ms[:, 0])
        table = np.full(int(max(ms[:, 0].max(initial=0), atom_type.max(initial=0))) + 1,
                        np.nan)
        table[ms[:, 0].astype(np.int64)] = ms[:, 1]
        m = table[atom_type]
        if np.isnan(m).any():
            raise LammpsDataError(f"{label}: atom type {int(atom_type[np.isnan(m)][0])} "
                                  "has no mass in the Masses section")
    mol = c["mol"].astype(np.int64) if "mol" in c else np.zeros(n, dtype=np.int64)
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
        """Sphere index of each atom id in ``want`` (-1: no such atom)."""
        if table is not None:
            k = want - lo
            ok = (k >= 0) & (k < table.shape[0])
            return np.where(ok, table[np.where(ok, k, 0)], -1)
        pos = np.searchsorted(sid, want)
        pos = np.minimum(pos, max(n - 1, 0))
        ok = (sid[pos] == want) if n else np.zeros(want.shape, dtype=bool)
        return np.where(ok, order[pos], -1)

    v = np.zeros((n, 3))
    omega = np.zeros((n, 3))
    if "Velocities" in spans:
        mv, v0, v1 = spans["Velocities"]
        vline = _line_of(buf, mv.start())
        ncv = (7,) if "diameter" in c else (4,)
        vel = _parse_table(label, buf, v0, v1, vline + 1, n, "Velocities", ncv)
        _integers(label, buf, (v0, v1, vline + 1), "Velocities", vel,
                  {0: ("atom id", -MAX_INT, None)})
        at = index_of(vel[:, 0].astype(np.int64))
        if (at < 0).any():
            r = int(np.argmax(at < 0))
            line = int(_data_lines(buf, v0, v1, vline + 1)[r])
            raise LammpsDataError(f"{label} line {line}: Velocities names atom "
                                  f"{int(vel[r, 0])}, which is not in Atoms; fix the row")
        _once(label, buf, (v0, v1, vline + 1), "Velocities", "atom", vel[:, 0])
        v[at] = vel[:, 1:4]
        if vel.shape[1] == 7:
            omega[at] = vel[:, 4:7]
    nb = counts.get("bonds", 0)
    bonds = np.zeros((0, 2), dtype=np.int64)
    btype = np.zeros(0, dtype=np.int64)
    if nb:
        if "Bonds" not in spans:
            raise LammpsDataError(f"{label}: the header says {nb} bonds and there is no "
                                  "Bonds section")
        mb, b0, b1 = spans["Bonds"]
        bline = _line_of(buf, mb.start())
        bt = _int_table(buf, b0, b1, nb, 4)
        if bt is None:  # (not plain integers: the general reader, and its messages)
            bt = _parse_table(label, buf, b0, b1, bline + 1, nb, "Bonds", (4,))
        _integers(label, buf, (b0, b1, bline + 1), "Bonds", bt,
                  {0: ("bond id", -MAX_INT, None),
                   1: ("bond type", 1, counts.get("bond types")),
                   2: ("atom id", -MAX_INT, None), 3: ("atom id", -MAX_INT, None)})
        bt = bt.astype(np.int64)
        btype = bt[:, 1].copy()
        ends = np.stack([index_of(bt[:, 2]), index_of(bt[:, 3])], axis=1)
        missing = (ends < 0).any(axis=1)
        if missing.any():
            k = int(np.argmax(missing))
            line = int(_data_lines(buf, b0, b1, bline + 1)[k])
            who = int(bt[k, 2] if ends[k, 0] < 0 else bt[k, 3])
            raise LammpsDataError(f"{label} line {line}: a bond to atom {who}, which is not "
                                  "in Atoms")
        bonds = ends
    rows = {"Atoms": (a0, a1, at_line + 1)}
    if nb:
        rows["Bonds"] = (b0, b1, bline + 1)
    return LammpsData(ids, x, D, m, v, omega, mol, atom_type, bonds, btype, p, rows, box,
                      style,
                      counts.get("bond types", int(btype.max(initial=0))), coeffs,
                      coeff_lines)


def _once(label: str, buf: bytes, span: tuple[int, int, int], section: str, what: str,
          ids: np.ndarray) -> None:
    """Refuse, naming both lines, a ``section`` that names one ``what`` twice (the
    first row would be lost: a Velocities row twice leaves another atom at rest, issue
    #47 item 5)."""
    order = np.argsort(ids, kind="stable")
    s = ids[order]
    dup = np.flatnonzero(s[1:] == s[:-1])
    if dup.size:
        lines = _data_lines(buf, *span)
        first, again = int(order[dup[0]]), int(order[dup[0] + 1])
        raise LammpsDataError(f"{label} line {int(lines[again])}: {section} names {what} "
                              f"{ids[again]:.0f} twice (also line {int(lines[first])}); give "
                              f"each {what} one row")
