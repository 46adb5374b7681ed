"""What a LAMMPS deck's commands make of an imported scenario (issue #44 item 6;
docs/scenarios.md "LAMMPS input decks").

Read: ``units`` (``lj``: the numbers taken as they are, a dimensionless model),
``dimension 3``, ``boundary`` (non-periodic), ``atom_style``, ``read_data``, ``group NAME
type …``, ``set group G density|diameter|mass V`` (LAMMPS ``set.rst``: ``density`` sets
``m = ρ π D³/6``, ``diameter`` leaves the mass), ``bond_style``/``bond_coeff``
(:mod:`.deck_bonds`), ``pair_style none``, ``timestep``, ``fix … nve/bpm/sphere [update
dipole]``, ``fix … efield`` (numbers or ``v_`` variables: :mod:`.deck_variables`),
``fix … viscous``, ``fix … viscous/sphere``, ``unfix``, ``variable … equal`` and ``run
N`` — a stage with the fields and damping active at that line; ``thermo N`` the run's
record interval (``[run] every``: a 1360-sphere deck recorded every step is gigabytes).
Noted and ignored: other output (``thermo_style``, ``dump*``, ``compute`` …) and LAMMPS's
machinery (``newton``, ``comm_modify`` …).  Any other command is refused in one line
naming it and its line.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .deck_bonds import BondStyle, bond_style
from .deck_variables import ramp_of
from .read_deck import Command, Deck
from .tables import LammpsDataError

OUTPUT = ("thermo", "thermo_style", "thermo_modify", "dump", "dump_modify", "undump",
          "compute", "compute_modify", "uncompute", "print", "write_data", "write_dump",
          "write_restart", "restart", "log", "echo", "info")
"""Commands that only write output: noted and ignored."""
MACHINERY = ("atom_modify", "newton", "comm_modify", "comm_style", "neighbor",
             "neigh_modify", "processors", "special_bonds", "balance", "suffix", "package")
"""LAMMPS's bookkeeping (maps, communication, neighbour lists; ``special_bonds`` acts
only on pair styles, none of which is carried): noted and ignored."""


@dataclass
class Fix:
    """An active fix: its style, group, arguments and line."""

    style: str
    group: str
    args: tuple[str, ...]
    line: int


@dataclass
class RunStage:
    """A ``run N`` with the fixes and variables active at its line."""

    steps: int
    line: int
    fixes: list[Fix]
    variables: dict[str, tuple[str, int]]


@dataclass
class DeckPlan:
    """The deck's commands sorted into what a scenario carries."""

    deck: Deck
    dimension: int = 3
    timestep: float | None = None
    groups: dict[str, set[int]] = field(default_factory=dict)
    """``name → atom types`` (``group NAME type …``)."""
    sets: list[tuple[str, str, float, int]] = field(default_factory=list)
    """``(group, density|diameter|mass, value, line)`` in the deck's order."""
    bonds: BondStyle | None = None
    pair_style: str | None = None
    runs: list[RunStage] = field(default_factory=list)
    update_dipole: bool = True
    thermo: tuple[int, int] | None = None
    """``(N, line)`` of the deck's last ``thermo N`` (``N > 0``): the run's record interval
    (LAMMPS's output cadence, ``[run] every``)."""
    notes: list[str] = field(default_factory=list)


def _types(where: str, words: tuple[str, ...]) -> set[int]:
    out: set[int] = set()
    for w in words:
        lo, _, hi = w.partition("*")
        try:
            a = int(lo) if lo else 1
            b = int(hi) if hi else (a if not _ else 10_000)
        except ValueError:
            raise LammpsDataError(f"{where}: group … type {w}: not a type or a range "
                                  "a*b") from None
        out.update(range(a, b + 1))
    return out


def _number(where: str, cmd: Command, w: str) -> float:
    try:
        return float(w)
    except ValueError:
        raise LammpsDataError(f"{where}: {cmd.name} {w}: not a number") from None


def plan_of(deck: Deck) -> DeckPlan:
    """The :class:`DeckPlan` of ``deck``; :class:`LammpsDataError` (one line naming the
    command and its line) for a command that cannot be carried."""
    plan = DeckPlan(deck)
    fixes: dict[str, Fix] = {}
    variables: dict[str, tuple[str, int]] = {}
    ignored: dict[str, list[str]] = {"output": [], "machinery": []}
    read = 0
    for cmd in deck.commands:
        where, a = deck.where(cmd.line), cmd.args
        name = cmd.name
        if name == "thermo" and len(a) == 1 and a[0].isdigit() and int(a[0]) > 0:
            plan.thermo = (int(a[0]), cmd.line)  # (the record interval: [run] every)
        elif name in OUTPUT:
            ignored["output"].append(f"{name} (line {cmd.line})")
        elif name in MACHINERY:
            ignored["machinery"].append(f"{name} (line {cmd.line})")
        elif name in ("units", "atom_style"):
            pass  # (read by read_deck for the data file)
        elif name == "dimension":
            if a != ("3",):
                raise LammpsDataError(f"{where}: dimension {' '.join(a)}: an assembly is "
                                      "3-D; give dimension 3")
        elif name == "boundary":
            if any("p" in w for w in a):
                raise LammpsDataError(f"{where}: boundary {' '.join(a)}: periodic "
                                      "boundaries are not carried (an assembly is not "
                                      "periodic); give f, s or m")
        elif name == "read_data":
            read += 1
            if read > 1 or len(a) != 1:
                raise LammpsDataError(f"{where}: read_data {' '.join(a)}: one read_data "
                                      "without keywords is carried (its file is the DATA "
                                      "argument)")
        elif name == "group":
            if len(a) < 3 or a[1] != "type":
                raise LammpsDataError(f"{where}: {cmd.text}: only 'group NAME type T …' "
                                      "is carried")
            plan.groups.setdefault(a[0], set()).update(_types(where, a[2:]))
        elif name == "set":
            if len(a) != 4 or a[0] != "group" or a[2] not in ("density", "diameter",
                                                               "mass"):
                raise LammpsDataError(f"{where}: {cmd.text}: only 'set group G "
                                      "density|diameter|mass V' is carried")
            if a[1] != "all" and a[1] not in plan.groups:
                raise LammpsDataError(f"{where}: {cmd.text}: no group {a[1]} (define it "
                                      "with 'group NAME type …' first)")
            plan.sets.append((a[1], a[2], _number(where, cmd, a[3]), cmd.line))
        elif name == "bond_style":
            plan.bonds = bond_style(where, a)
            plan.bonds.line = cmd.line
        elif name == "bond_coeff":
            if plan.bonds is None or len(a) < 2:
                raise LammpsDataError(f"{where}: {cmd.text}: bond_coeff needs a "
                                      "bond_style before it and a type")
            plan.bonds.coeffs[a[0]] = (cmd.line, a[1:])
        elif name == "pair_style":
            if a != ("none",):
                raise LammpsDataError(f"{where}: pair_style {' '.join(a)}: no contact "
                                      "law maps to it yet; give pair_style none (the "
                                      "scenario's contacts are set in [parameters])")
            plan.pair_style = "none"
        elif name == "timestep":
            if len(a) != 1 or not _number(where, cmd, a[0]) > 0.0:
                raise LammpsDataError(f"{where}: {cmd.text}: give one positive timestep")
            plan.timestep = float(a[0])
        elif name == "variable":
            if len(a) < 3 or a[1] != "equal":
                raise LammpsDataError(f"{where}: {cmd.text}: only 'variable NAME equal "
                                      "EXPR' is carried")
            variables[a[0]] = (" ".join(a[2:]), cmd.line)
        elif name == "fix":
            fixes[a[0] if a else ""] = _fix(where, cmd, plan)
        elif name == "unfix":
            if len(a) != 1 or a[0] not in fixes:
                raise LammpsDataError(f"{where}: {cmd.text}: no such fix")
            del fixes[a[0]]
        elif name == "run":
            if len(a) != 1 or not a[0].isdigit():
                raise LammpsDataError(f"{where}: {cmd.text}: only 'run N' is carried "
                                      "(no keywords)")
            if not any(f.style == "nve/bpm/sphere" for f in fixes.values()):
                raise LammpsDataError(f"{where}: run {a[0]} without fix nve/bpm/sphere: "
                                      "nothing moves in LAMMPS; add 'fix 1 all "
                                      "nve/bpm/sphere update dipole'")
            if int(a[0]) > 0:
                plan.runs.append(RunStage(int(a[0]), cmd.line, list(fixes.values()),
                                          dict(variables)))
        else:
            raise LammpsDataError(f"{where}: {cmd.text}: the command {name} is not "
                                  "carried by 'rrp import lammps' (docs/scenarios.md "
                                  "\"LAMMPS input decks\"); remove it or run it in LAMMPS")
    label = deck.path.name
    if ignored["output"]:
        plan.notes.append(f"{label}: output-only commands ignored: "
                          + ", ".join(ignored["output"]))
    if ignored["machinery"]:
        plan.notes.append(f"{label}: LAMMPS's parallel and bookkeeping settings ignored "
                          "(no physics here, no pair style): "
                          + ", ".join(ignored["machinery"]))
    if read == 0:
        plan.notes.append(f"{label}: no read_data line: the DATA argument is read")
    return plan


def _fix(where: str, cmd: Command, plan: DeckPlan) -> Fix:
    a = cmd.args
    if len(a) < 3:
        raise LammpsDataError(f"{where}: {cmd.text}: a fix needs an ID, a group and a "
                              "style")
    group, style, rest = a[1], a[2], a[3:]
    if group != "all" and group not in plan.groups:
        raise LammpsDataError(f"{where}: {cmd.text}: no group {group}")
    if style == "nve/bpm/sphere":
        if group != "all":
            raise LammpsDataError(f"{where}: {cmd.text}: every sphere moves in a scenario; "
                                  "give group all")
        if rest not in ((), ("update", "dipole")):
            raise LammpsDataError(f"{where}: {cmd.text}: only 'update dipole' is carried")
        plan.update_dipole = rest == ("update", "dipole")
    elif style == "efield":
        if len(rest) != 3:
            raise LammpsDataError(f"{where}: {cmd.text}: only 'efield ex ey ez' (numbers "
                                  "or v_ variables, no keywords) is carried")
    elif style in ("viscous", "viscous/sphere"):
        if len(rest) != 1:
            raise LammpsDataError(f"{where}: {cmd.text}: only '{style} gamma' (no "
                                  "keywords) is carried")
        _number(where, cmd, rest[0])
    else:
        raise LammpsDataError(f"{where}: {cmd.text}: fix {style} is not carried (the "
                              "fixes: nve/bpm/sphere, efield, viscous, viscous/sphere); "
                              "remove it or run it in LAMMPS")
    return Fix(style, group, rest, cmd.line)


def field_parts(deck: Deck, fix: Fix, variables: dict[str, tuple[str, int]]
                ) -> list[tuple[tuple[float, float, float], tuple[float, float] | None]]:
    """The ``fix efield`` ``fix`` over a run as stage fields ``(E, ramp or None)``: the
    constant components in one field, each ramped component in one of its own
    (:mod:`.deck_variables`; fields on a sphere add up)."""
    const = [0.0, 0.0, 0.0]
    out: list[tuple[tuple[float, float, float], tuple[float, float] | None]] = []
    for k, w in enumerate(fix.args):
        if w.startswith("v_"):
            got = variables.get(w[2:])
            if got is None:
                raise LammpsDataError(f"{deck.where(fix.line)}: efield {w}: no variable "
                                      f"{w[2:]} defined before the run")
            r = ramp_of(got[0])
            if r is None:
                raise LammpsDataError(f"{deck.where(got[1])}: variable {w[2:]} equal "
                                      f"{got[0]}: only a number or c*ramp(a,b) is carried")
        else:
            try:
                r = (float(w), float(w))
            except ValueError:
                raise LammpsDataError(f"{deck.where(fix.line)}: efield {w}: not a number "
                                      "or a v_ variable") from None
        if r[0] == r[1]:
            const[k] = r[0]
            continue
        c = max(abs(r[0]), abs(r[1]))
        e = [0.0, 0.0, 0.0]
        e[k] = c
        out.append(((e[0], e[1], e[2]), (r[0] / c, r[1] / c)))
    if any(const):
        out.insert(0, ((const[0], const[1], const[2]), None))
    return out
