"""A LAMMPS input deck as its commands (issue #43 item 1, #44 item 6): each command with
its words and its line (``#`` comments dropped, ``&`` continuations joined, LAMMPS's
tokenizer's blanks), and the settings the data file's reader needs first (``units``,
``atom_style``).  What the commands mean for a scenario is :mod:`.deck_plan`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from engine.inputs import read_input_bytes

from .tables import LammpsDataError


@dataclass(frozen=True)
class Command:
    """One command of a deck: its name, its arguments and the line it starts on."""

    line: int
    name: str
    args: tuple[str, ...]

    @property
    def text(self) -> str:
        """The command as written (one line, single blanks)."""
        return " ".join((self.name, *self.args))


@dataclass
class Deck:
    """The commands of a deck, with the two settings the data file's reader takes."""

    path: Path
    commands: list[Command] = field(default_factory=list)
    units: str | None = None
    units_line: int = 0
    atom_style: str | None = None
    style_line: int = 0

    def where(self, line: int) -> str:
        """``"in.x line 6"``."""
        return f"{self.path.name} line {line}"


def read_deck(path: str | Path) -> Deck:
    """The commands of the deck at ``path``; :class:`LammpsDataError` (one line) if it
    cannot be read."""
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
        cmd = Command(first, words[0], tuple(words[1:]))
        deck.commands.append(cmd)
        if cmd.name == "units" and cmd.args:
            deck.units, deck.units_line = cmd.args[0], first
        elif cmd.name == "atom_style" and cmd.args:
            deck.atom_style, deck.style_line = " ".join(cmd.args), first
    return deck
