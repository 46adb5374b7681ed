"""The geometry of an ``assembly`` scenario (issue #35 items 2, 3, 5): inline TOML tables
(``[[bodies]]``, ``[[bonds]]``, ``[[walls]]``), CSV files next to the TOML (``bodies =
"spheres.csv"``, ``bonds = "bonds.csv"``; the header names the columns), a LAMMPS data
file (``source = "model.data"``, ``engine.io.lammps.read_data``) and builders
(``[[build]]``, ``engine.models.builders``), joined in that order: inline/CSV bodies,
then the source's, then each build's.

Every refusal is one :class:`AssemblyError` line naming the file (or table) and the line
(or entry) and what to change.

Body columns (CSV header, inline keys): ``x, y, z`` (inline: ``position = [x, y, z]``),
``diameter``, ``mass`` (or ``density``: ``m = ρ π D³/6``), ``inertia`` (default
``m D²/10``, a solid sphere), ``vx, vy, vz`` (``velocity``), ``wx, wy, wz`` (``spin``:
the spatial angular velocity Ω), ``group`` (an integer: colouring, fields and
damping), ``mux, muy, muz`` (``dipole``: a point dipole in the body frame, issue #44
item 3).  Bond columns:
``i, j`` (0-based body indices, in the order above), ``type`` (default 1).
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from engine.io.lammps.read_data import LammpsData, LammpsDataError, read_data

from ..inputs import read_input_bytes
from .base import BIG, ParameterError
from .builders import BUILDERS, MAX_BONDS, MAX_SPHERES, Part, join, make_part

SCENARIO_HINTS = {"style": "atom_style =", "units": "units =",
                  "diameter": "diameter = … in the scenario"}
"""How a scenario names the data file's settings in the reader's messages (issue #43)."""


class AssemblyError(ParameterError):
    """The geometry of an assembly cannot be used; one line naming the file and line."""


GEOMETRY_KEYS = ("bodies", "bonds", "walls", "build", "source", "bond_types",
                 "walls_from_box", "diameter", "atom_style", "units", "fields", "damping", "stages")
"""The top-level keys of an assembly scenario besides ``[parameters]`` and ``[run]``."""
BODY_COLUMNS = ("x", "y", "z", "diameter", "mass", "density", "inertia", "vx", "vy", "vz",
                "wx", "wy", "wz", "group", "mux", "muy", "muz")
BOND_COLUMNS = ("i", "j", "type")
BOND_COEFFS = ("k_bend", "k_axial", "k_shear")


@dataclass
class Geometry:
    """The joined spheres and bonds, with where each came from (for messages)."""

    part: Part
    walls: list[tuple[np.ndarray, float]]
    bond_types: dict[str, tuple[float, float, float]]
    origin: list[tuple[int, int, str, Any]] = field(default_factory=list)
    """``(first body, count, label, lines)`` of each piece: the lines of its rows in its
    file (an array, a function returning one, or ``None``)."""
    bond_origin: list[tuple[int, int, str, Any]] = field(default_factory=list)
    type_origin: dict[str, str] = field(default_factory=dict)
    """Where each bond type's coefficients were given (``"m.data line 3"``,
    ``"s.toml [bond_types.2]"``): the messages of their check."""
    bond_laws: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The bond types of a LAMMPS BPM law (``law = "bpm/rotational"`` or ``"bpm/spring"``,
    ``engine.models.bond_laws``: issue #44 item 1); the others are the binder's."""

    def where_body(self, i: int) -> str:
        return _where(self.origin, i, "sphere")

    def where_bond(self, b: int) -> str:
        return _where(self.bond_origin, b, "bond")


def _where(origin: list, k: int, what: str) -> str:
    for first, count, label, lines in origin:
        if first <= k < first + count:
            if callable(lines):  # (a LAMMPS file's lines: found again for the message)
                lines = lines()
            if lines is not None and lines.shape[0] == count and lines[k - first] > 0:
                return f"{label} line {int(lines[k - first])}"
            return f"{label} {what} {k - first}"
    return f"{what} {k}"


# ---------------------------------------------------------------- inline and CSV tables
def _num(v: Any, where: str, key: str) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise AssemblyError(f"{where}: {key} must be a number, got {v!r}")
    f = float(v)
    if not math.isfinite(f) or abs(f) > BIG:
        raise AssemblyError(f"{where}: {key} = {v!r} must be finite (at most {BIG:g})")
    return f


def _vec(v: Any, where: str, key: str) -> list[float]:
    if not isinstance(v, list) or len(v) != 3:
        raise AssemblyError(f"{where}: {key} must be a list of three numbers, got {v!r}")
    return [_num(c, where, key) for c in v]


def _inline_bodies(rows: Any, label: str) -> tuple[Part, np.ndarray]:
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise AssemblyError(f"{label}: bodies must be an array of tables [[bodies]] or the "
                            "name of a CSV file")
    known = ("position", "diameter", "mass", "density", "inertia", "velocity", "spin",
             "group", "dipole")
    cols: dict[str, list] = {k: [] for k in BODY_COLUMNS}
    for k, r in enumerate(rows):
        where = f"{label} [[bodies]] {k}"
        for key in r:
            if key not in known:
                raise AssemblyError(f"{where}: unknown key {key!r}; allowed: {', '.join(known)}")
        for key in ("position", "diameter"):
            if key not in r:
                raise AssemblyError(f"{where}: {key} is missing")
        if ("mass" in r) == ("density" in r):
            raise AssemblyError(f"{where}: give mass or density (one of them)")
        x = _vec(r["position"], where, "position")
        v = _vec(r.get("velocity", [0, 0, 0]), where, "velocity")
        w = _vec(r.get("spin", [0, 0, 0]), where, "spin")
        g = r.get("group", 0)
        if isinstance(g, bool) or not isinstance(g, int):
            raise AssemblyError(f"{where}: group must be an integer, got {g!r}")
        for c, val in zip(("x", "y", "z", "vx", "vy", "vz", "wx", "wy", "wz"), x + v + w,
                          strict=True):
            cols[c].append(val)
        cols["diameter"].append(_num(r["diameter"], where, "diameter"))
        cols["mass"].append(_num(r["mass"], where, "mass") if "mass" in r else math.nan)
        cols["density"].append(_num(r["density"], where, "density") if "density" in r
                               else math.nan)
        cols["inertia"].append(_num(r["inertia"], where, "inertia") if "inertia" in r
                               else math.nan)
        cols["group"].append(float(g))
        mu = _vec(r.get("dipole", [0, 0, 0]), where, "dipole")
        for c, val in zip(("mux", "muy", "muz"), mu, strict=True):
            cols[c].append(val)
    a = {k: np.asarray(v, dtype=np.float64) for k, v in cols.items()}
    if not any("dipole" in r for r in rows):
        for c in ("mux", "muy", "muz"):
            del a[c]
    return _part_from_columns(a, len(rows)), np.arange(len(rows))


def _part_from_columns(c: dict[str, np.ndarray], n: int) -> Part:
    D = c["diameter"]
    m = c["mass"] if "mass" in c else np.full(n, math.nan)
    if "density" in c:
        m = np.where(np.isnan(m), c["density"] * (math.pi / 6.0) * D ** 3, m)
    J = c["inertia"] if "inertia" in c else np.full(n, math.nan)
    J = np.where(np.isnan(J), 0.1 * m * D * D, J)
    z = np.zeros(n)
    x = np.stack([c["x"], c["y"], c["z"]], axis=1)
    v = np.stack([c.get("vx", z), c.get("vy", z), c.get("vz", z)], axis=1)
    w = np.stack([c.get("wx", z), c.get("wy", z), c.get("wz", z)], axis=1)
    g = c.get("group", z).astype(np.int64)
    part = _with(make_part(x, D, mass=m, inertia=J), v, w, g)
    if any(k in c for k in ("mux", "muy", "muz")):  # (body-frame dipoles: issue #44)
        part.dipole = np.stack([c.get("mux", z), c.get("muy", z), c.get("muz", z)], axis=1)
    return part


def _with(p: Part, v: np.ndarray, w: np.ndarray, g: np.ndarray) -> Part:
    p.v = np.ascontiguousarray(v)
    p.omega = np.ascontiguousarray(w)
    p.group = np.ascontiguousarray(g, dtype=np.int64)
    return p


def _read_csv(path: Path, label: str, allowed: tuple[str, ...],
              required: tuple[str, ...], need_rows: str = ""
              ) -> tuple[dict[str, np.ndarray], int, np.ndarray]:
    """The columns of a CSV file with a header row (NumPy's C reader); at most
    :data:`~engine.inputs.MAX_INPUT_BYTES` read (issue #46 item 7).  A header and
    no rows gives no rows (no NumPy warning); ``need_rows``: it is refused instead."""
    buf = read_input_bytes(path, label, AssemblyError)
    try:
        text = buf.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = buf.count(b"\n", 0, exc.start) + 1
        raise AssemblyError(f"{label} line {line}: cannot read the file: not UTF-8 text "
                            f"(byte {exc.start + 1}); give a CSV text file") from None
    lines = text.splitlines()
    first = next((k for k, ln in enumerate(lines) if ln.strip() and not
                  ln.lstrip().startswith("#")), None)
    if first is None:
        raise AssemblyError(f"{label}: the file is empty (a header row names the columns: "
                            f"{', '.join(required)}, …)")
    names = [h.strip() for h in lines[first].split(",")]
    for h in names:
        if h not in allowed:
            raise AssemblyError(f"{label} line {first + 1}: unknown column {h!r}; allowed: "
                                f"{', '.join(allowed)}")
    if len(set(names)) != len(names):
        raise AssemblyError(f"{label} line {first + 1}: a column is named twice")
    for r in required:
        if r not in names:
            raise AssemblyError(f"{label} line {first + 1}: the column {r!r} is missing "
                                f"(required: {', '.join(required)})")
    data_lines = np.array([k + 1 for k in range(first + 1, len(lines))
                           if lines[k].strip() and not lines[k].lstrip().startswith("#")],
                          dtype=np.int64)
    if not data_lines.size:  # (loadtxt would warn "input contained no data")
        if need_rows:
            raise AssemblyError(f"{label} line {first + 1}: a header and no rows after it: "
                                f"give {need_rows} a line")
        return {h: np.zeros(0) for h in names}, 0, data_lines
    body = "\n".join(lines[first + 1:])
    try:
        a = np.loadtxt(io.StringIO(body), delimiter=",", comments="#", ndmin=2,
                       dtype=np.float64)
    except ValueError as exc:
        line = _bad_csv_line(lines, first, len(names))
        raise AssemblyError(f"{label} line {line}: not {len(names)} numbers separated by "
                            f"commas ({str(exc).splitlines()[0][:80]})") from None
    if a.size == 0:
        a = a.reshape(0, len(names))
    if a.shape[1] != len(names):
        raise AssemblyError(f"{label} line {first + 2}: {a.shape[1]} columns, the header "
                            f"names {len(names)}")
    bad = ~np.isfinite(a) | (np.abs(a) > BIG)
    if bad.any():
        k = int(np.argmax(bad.any(axis=1)))
        col = names[int(np.argmax(bad[k]))]
        val = float(a[k, names.index(col)])
        raise AssemblyError(f"{label} line {data_lines[k]}: {col} = {val:g} is not a finite "
                            f"number (at most {BIG:g})")
    return {h: a[:, k] for k, h in enumerate(names)}, a.shape[0], data_lines


def _bad_csv_line(lines: list[str], first: int, ncols: int) -> int:
    for k in range(first + 1, len(lines)):
        t = lines[k].split("#", 1)[0].strip()
        if not t:
            continue
        cells = t.split(",")
        try:
            if len(cells) != ncols:
                return k + 1
            [float(c) for c in cells]
        except ValueError:
            return k + 1
    return first + 2


# ---------------------------------------------------------------- assembling
def load_geometry(g: dict[str, Any], label: str) -> Geometry:
    """The :class:`Geometry` of the assembly description ``g`` (the scenario's geometry
    keys with ``dir``, the folder relative paths are read from); ``label`` names the
    scenario in messages."""
    base = Path(g.get("dir", "."))
    parts: list[Part] = []
    origin: list = []
    bond_origin: list = []
    n0 = nb0 = 0

    def add(p: Part, where: str, lines: Any, blines: Any = None,
            bwhere: str | None = None) -> None:
        nonlocal n0, nb0
        parts.append(p)
        origin.append((n0, p.n, where, lines))
        bond_origin.append((nb0, p.bonds.shape[0], bwhere or where, blines))
        n0 += p.n
        nb0 += p.bonds.shape[0]

    bodies = g.get("bodies")
    if isinstance(bodies, str):
        f = base / bodies
        c, n, lines = _read_csv(f, bodies, BODY_COLUMNS, ("x", "y", "z", "diameter"),
                                need_rows="each sphere")
        if "mass" not in c and "density" not in c:
            raise AssemblyError(f"{bodies} line 1: give a mass or a density column")
        add(_part_from_columns(c, n), bodies, lines)
    elif bodies is not None:
        p, _ = _inline_bodies(bodies, label)
        add(p, f"{label} [[bodies]]", None)
    source = g.get("source")
    file_types: dict[str, tuple[float, float, float]] = {}
    type_origin: dict[str, str] = {}
    if source is not None:
        if not isinstance(source, str):
            raise AssemblyError(f"{label}: source must name a LAMMPS data file")
        for key in ("atom_style", "units"):
            if g.get(key) is not None and not isinstance(g[key], str):
                raise AssemblyError(f"{label}: {key} must be a string (as LAMMPS writes it: "
                                    + ('atom_style = "hybrid sphere dipole")' if key ==
                                       "atom_style" else 'units = "metal")'))
        try:
            d = read_data(base / source, diameter=g.get("diameter"),
                          atom_style=g.get("atom_style"), units=g.get("units"),
                          style_from=f"{label} atom_style", units_from=f"{label} units",
                          how=SCENARIO_HINTS)
        except LammpsDataError as exc:
            raise AssemblyError(str(exc)) from None
        if g.get("walls_from_box") and np.any(d.tilt):
            raise AssemblyError(f"walls_from_box: the box of {source} is triclinic "
                                f"(xy xz yz = {' '.join(f'{t:g}' for t in d.tilt)}), its faces "
                                "not planes of x, y, z; give the walls as [[walls]]")
        file_types = dict(d.bond_coeffs)  # (written by rrp convert --to lammps)
        type_origin.update(data_type_origin(d, source))
        add(part_of_data(d), source, lambda d=d: d.lines("Atoms"),
            lambda d=d: d.lines("Bonds"))
        if g.get("walls_from_box"):
            g = {**g, "walls": list(g.get("walls") or []) + [
                {"point": _box_point(d.box, axis, side), "normal": _box_normal(axis, side)}
                for axis in range(3) for side in (0, 1)]}
    elif g.get("walls_from_box"):
        raise AssemblyError(f"{label}: walls_from_box needs a source = LAMMPS data file")
    for k, spec in enumerate(g.get("build") or []):
        where = f"{label} [[build]] {k}"
        add(_build(spec, where, (MAX_SPHERES - n0, MAX_BONDS - nb0)), where, None)
    if not parts:
        raise AssemblyError(f"{label}: an assembly needs bodies: [[bodies]], bodies = "
                            "\"file.csv\", source = \"file.data\" or [[build]]")
    part = join(parts)
    bonds_in = g.get("bonds")
    if bonds_in is not None:
        bp, bl, bw = _bonds(bonds_in, base, label)
        bond_origin.append((nb0, bp.shape[0], bw, bl))
        part.bonds = np.concatenate([part.bonds, bp[:, :2]])
        part.bond_type = np.concatenate([part.bond_type, bp_types(bp)])
    walls = _walls(g.get("walls") or [], label)
    laws: dict[str, dict[str, Any]] = {}
    own = _bond_types(g.get("bond_types") or {}, label, laws)
    types = {k: v for k, v in {**file_types, **own}.items() if k not in laws}
    type_origin.update({t: f"{label} [bond_types.{t}]" for t in (*own, *laws)})
    return Geometry(part, walls, types, origin, bond_origin, type_origin, laws)


def part_of_data(d: LammpsData) -> Part:
    """The spheres and bonds of a LAMMPS data file as a :class:`Part` (``source =`` and
    ``rrp import lammps`` alike: one model, one check)."""
    J = 0.1 * d.m * d.D * d.D
    p = _with(make_part(d.x, d.D, mass=d.m, inertia=J, bonds=d.bonds), d.v, d.omega, d.mol)
    p.bond_type = d.bond_type.astype(str).astype(object)
    return p


def data_type_origin(d: LammpsData, label: str) -> dict[str, str]:
    """Where each bond type's ``# rrp bond_type`` comment is: ``"m.data line 3"``."""
    return {t: f"{label} line {k}" for t, k in d.coeff_lines.items()}


def bp_types(bp: np.ndarray) -> np.ndarray:
    """The type labels (strings) of the rows ``(i, j, type)``."""
    return bp[:, 2].astype(np.int64).astype(str).astype(object)


def _box_point(box: np.ndarray, axis: int, side: int) -> list[float]:
    p = [0.0, 0.0, 0.0]
    p[axis] = float(box[axis, side])
    return p


def _box_normal(axis: int, side: int) -> list[float]:
    n = [0.0, 0.0, 0.0]
    n[axis] = 1.0 if side == 0 else -1.0
    return n


def _bonds(b: Any, base: Path, label: str) -> tuple[np.ndarray, np.ndarray | None, str]:
    """``(nb, 3)`` rows ``(i, j, type)``, their lines, and where they came from."""
    if isinstance(b, str):
        c, n, lines = _read_csv(base / b, b, BOND_COLUMNS, ("i", "j"))
        t = c.get("type", np.ones(n))
        a = np.stack([c["i"], c["j"], t], axis=1)
        frac = a != np.round(a)
        if frac.any():
            k = int(np.argmax(frac.any(axis=1)))
            raise AssemblyError(f"{b} line {lines[k]}: i, j and type must be integers")
        return a.astype(np.int64), lines, b
    if not isinstance(b, list) or not all(isinstance(r, dict) for r in b):
        raise AssemblyError(f"{label}: bonds must be an array of tables [[bonds]] or the "
                            "name of a CSV file")
    rows = []
    for k, r in enumerate(b):
        where = f"{label} [[bonds]] {k}"
        for key in r:
            if key not in BOND_COLUMNS:
                raise AssemblyError(f"{where}: unknown key {key!r}; allowed: i, j, type")
        vals = [r.get("i"), r.get("j"), r.get("type", 1)]
        if any(isinstance(v, bool) or not isinstance(v, int) for v in vals):
            raise AssemblyError(f"{where}: i, j and type must be integers, got {vals}")
        rows.append(vals)
    return (np.asarray(rows, dtype=np.int64).reshape(-1, 3), None,
            f"{label} [[bonds]]")


def _walls(rows: Any, label: str) -> list[tuple[np.ndarray, float]]:
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise AssemblyError(f"{label}: walls must be an array of tables [[walls]]")
    out = []
    for k, r in enumerate(rows):
        where = f"{label} [[walls]] {k}"
        for key in r:
            if key not in ("point", "normal"):
                raise AssemblyError(f"{where}: unknown key {key!r}; allowed: point, normal")
        p = np.asarray(_vec(r.get("point"), where, "point"))
        n = np.asarray(_vec(r.get("normal"), where, "normal"))
        nn = float(np.linalg.norm(n))
        if not nn > 0.0:
            raise AssemblyError(f"{where}: normal must be non-zero (it points into the "
                                "allowed side)")
        n = n / nn
        out.append((n, float(n @ p)))
    return out


def _bond_types(t: Any, label: str, laws: dict[str, dict[str, Any]] | None = None
                ) -> dict[str, tuple[float, float, float]]:
    """The binder's types of ``[bond_types]``; the tables of another ``law`` go into
    ``laws`` as given (checked with the model: ``engine.models.bond_laws.parse_law``,
    issue #44 item 1)."""
    if not isinstance(t, dict):
        raise AssemblyError(f"{label}: [bond_types] must be a table of types, e.g. "
                            "[bond_types.1] k_bend = 10")
    out = {}
    for name, c in t.items():
        where = f"{label} [bond_types.{name}]"
        if not isinstance(c, dict):
            raise AssemblyError(f"{where}: must be a table with {', '.join(BOND_COEFFS)}")
        if c.get("law", "binder") != "binder":
            if laws is None:
                raise AssemblyError(f"{where}: law {c['law']!r} is not supported here")
            laws[str(name)] = dict(c)
            continue
        c = {k: v for k, v in c.items() if k != "law"}
        for key in c:
            if key not in BOND_COEFFS:
                raise AssemblyError(f"{where}: unknown key {key!r}; allowed: "
                                    f"{', '.join(BOND_COEFFS)}")
        vals = []
        for key in BOND_COEFFS:  # (numbers here; their range: check_geometry, one check
            # for every route, issue #46 item 6)
            if key not in c:
                raise AssemblyError(f"{where}: {key} is missing")
            vals.append(_num(c[key], where, key))
        out[str(name)] = (vals[0], vals[1], vals[2])
    return out


BUILD_KEYS = {
    "chain": ("n", "diameter", "spacing", "direction", "start"),
    "ring": ("n", "diameter", "sphere_diameter", "centre", "tilt"),
    "lattice": ("style", "a", "region", "diameter", "bond_within", "origin"),
    "ball": ("radius", "diameter", "centre", "bond_within"),
}
PROPS = ("mass", "inertia", "velocity", "spin", "group", "bond_type", "dipole")


def _build(spec: Any, where: str, room: tuple[int, int] | None = None) -> Part:
    """One ``[[build]]`` table: ``kind`` and the builder's arguments
    (``engine.models.builders``), with ``mass``, ``inertia``, ``velocity``, ``spin``,
    ``group`` and ``bond_type`` for all its spheres and bonds.  ``room``: the spheres and
    bonds the assembly's earlier parts left (checked before the builder allocates: issue
    #42 item 5)."""
    if not isinstance(spec, dict):
        raise AssemblyError(f"{where}: must be a table with kind = \"chain\", \"ring\", "
                            "\"lattice\" or \"ball\"")
    kind = spec.get("kind")
    if kind not in BUILDERS:
        raise AssemblyError(f"{where}: kind must be one of {', '.join(BUILDERS)}, got {kind!r}")
    args = {k: v for k, v in spec.items() if k != "kind"}
    allowed = BUILD_KEYS[kind] + PROPS
    for key in args:
        if key not in allowed:
            raise AssemblyError(f"{where} ({kind}): unknown key {key!r}; allowed: "
                                f"{', '.join(allowed)}")
    if "bond_type" in args:
        args["bond_type"] = str(args["bond_type"])
    positional = {"chain": ("n", "diameter"), "ring": ("n", "diameter"),
                  "lattice": ("style", "a", "region"), "ball": ("radius", "diameter")}[kind]
    for key in positional:
        if key not in args:
            raise AssemblyError(f"{where} ({kind}): {key} is missing")
    pos = [args.pop(k) for k in positional]
    try:
        return BUILDERS[kind](*pos, room=room, **args)
    except ParameterError as exc:
        raise AssemblyError(f"{where}: {exc}") from None
    except (TypeError, ValueError, KeyError) as exc:
        raise AssemblyError(f"{where} ({kind}): a value has the wrong type or is missing: "
                            f"{exc}") from None
