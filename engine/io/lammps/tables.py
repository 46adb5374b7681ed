"""The tables of a LAMMPS data file, parsed by NumPy's C readers (issue #35 item 2, issue
#43 item 1): the section headers, each section's rows of numbers, the line of a row (for
the messages) and the checks every row passes whatever the section's size — integers
where LAMMPS requires them, one id a row, every row with the section's column count.
No Python loop runs per line except on the error path: 10⁶ spheres and 6·10⁶ bonds read
in seconds (BENCHMARKS.md).  Each refusal is one :class:`LammpsDataError` line naming
the file and the line.
"""

from __future__ import annotations

import io
import math
import re
import warnings

import numpy as np

from engine.inputs import ParameterError


class LammpsDataError(ParameterError):
    """A LAMMPS data file cannot be read; one line naming the file and the line."""


SECTIONS = ("Atoms", "Velocities", "Masses", "Bonds", "Angles", "Dihedrals", "Impropers",
            "Ellipsoids", "Lines", "Triangles", "Bodies", "Pair Coeffs", "PairIJ Coeffs",
            "Bond Coeffs", "Angle Coeffs", "Dihedral Coeffs", "Improper Coeffs",
            "BondBond Coeffs", "BondAngle Coeffs", "MiddleBondTorsion Coeffs",
            "EndBondTorsion Coeffs", "AngleTorsion Coeffs", "AngleAngleTorsion Coeffs",
            "BondBond13 Coeffs", "AngleAngle Coeffs", "Atom Type Labels",
            "Bond Type Labels", "Angle Type Labels", "Dihedral Type Labels",
            "Improper Type Labels")
_SECTION_RE = re.compile(
    rb"^[ \t]*(" + b"|".join(re.escape(s.encode()) for s in SECTIONS) + rb")[ \t]*(#[^\n]*)?$",
    re.MULTILINE)


def sections(buf: bytes) -> list[re.Match]:
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


def line_of(buf: bytes, offset: int) -> int:
    return buf.count(b"\n", 0, offset) + 1


def data_lines(buf: bytes, start: int, end: int, first_line: int) -> np.ndarray:
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


def int_table(buf: bytes, start: int, end: int, count: int, ncols: int) -> np.ndarray | None:
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
    return rows if rows_on_their_lines(text, count, ncols) else None


def rows_on_their_lines(text: bytes, count: int, ncols: int, chunk: int = 1 << 23) -> bool:
    """Whether the ``count * ncols`` words of ``text`` lie ``ncols`` to a line (every row
    checked, whatever the section's size: issue #43 item 1; a row of 3 and one of 5
    would otherwise read as two rows of 4): each row's first and last word on one line,
    the next row's first word on a later one — vectorised over the word starts, in
    pieces of ``chunk`` bytes cut at line ends (the memory stays that of a piece)."""
    words = 0
    at = 0
    while at < len(text):
        end = text.find(b"\n", min(at + chunk, len(text)))
        end = len(text) if end < 0 else end + 1
        c = np.frombuffer(text, dtype=np.uint8, count=end - at, offset=at)
        at = end
        ws = (c == 32) | (c == 9) | (c == 10) | (c == 13)
        start = ~ws
        start[1:] &= ws[:-1]
        ts = np.flatnonzero(start)
        del ws, start
        if ts.shape[0] % ncols:
            return False
        words += ts.shape[0]
        if ts.size == 0:
            continue
        nl = np.flatnonzero(c == 10)
        first = np.searchsorted(nl, ts[::ncols])
        last = np.searchsorted(nl, ts[ncols - 1::ncols])
        if not (np.all(first == last) and np.all(first[1:] > last[:-1])):
            return False
    return words == count * ncols


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


def parse_table(label: str, buf: bytes, start: int, end: int, first_line: int,
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
        line = int(data_lines(buf, start, end, first_line)[k])
        raise LammpsDataError(f"{label} line {line}: {section}: a number is not finite")
    return a


MAX_INT = 2**53
"""The largest id or type read (the columns are read as doubles: integers beyond this
are not exact)."""


def integers(label: str, buf: bytes, span: tuple[int, int, int], section: str,
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
        line = int(data_lines(buf, *span)[r])
        v = float(col[r])
        if v != math.floor(v):
            why = f"{name} {v:g} is not an integer"
        else:
            why = (f"{name} {v:.0f} is out of range: LAMMPS numbers them from {lo}"
                   + (f" to {hi} (the header's count)" if hi is not None else ""))
        raise LammpsDataError(f"{label} line {line}: {section}: {why}; fix the row")


def once(label: str, buf: bytes, span: tuple[int, int, int], section: str, what: str,
          ids: np.ndarray) -> None:
    """Refuse, naming both lines, a ``section`` that names one ``what`` twice (the
    first row would be lost: a Velocities row twice leaves another atom at rest, issue
    #47 item 5)."""
    order = np.argsort(ids, kind="stable")
    s = ids[order]
    dup = np.flatnonzero(s[1:] == s[:-1])
    if dup.size:
        lines = data_lines(buf, *span)
        first, again = int(order[dup[0]]), int(order[dup[0] + 1])
        raise LammpsDataError(f"{label} line {int(lines[again])}: {section} names {what} "
                              f"{ids[again]:.0f} twice (also line {int(lines[first])}); give "
                              f"each {what} one row")
