"""A deck's ``bond_style`` and ``bond_coeff`` lines as ``[bond_types.T]`` laws (issue #44
items 1 and 6; LAMMPS ``doc/src/bond_bpm_rotational.rst``, ``bond_bpm_spring.rst``).

``bond_coeff T k_r k_s k_t k_b f_rc f_sc tau_bc tau_tc gamma_n gamma_s gamma_r
gamma_t`` (``bpm/rotational``) and ``bond_coeff T k eps_c gamma`` (``bpm/spring``) keep
LAMMPS's names and order (``engine.potentials.bpm``), converted to SI by the unit
style's scales (force/length = energy/length², torque = energy, force/velocity =
energy·time/length²).  The style's ``smooth`` (LAMMPS's default ``yes``) and ``break``
(LAMMPS's default ``yes``: the bonds break past LAMMPS's criteria, issue #44 item 2,
``engine.potentials.bpm_break``; a limit ≤ 0 with ``break yes`` is refused in one line)
are carried; ``store/local ID N attributes…`` (LAMMPS's record of the broken bonds, an
output) is dropped with a note: run files keep which bond broke when in ``/events``.

``bpm/rotational`` is imported as LAMMPS computes it (its default ``frame average``
since 2026: ``frame = "average"``, ``engine.potentials.bpm_average``).

**Bond damping** (``gamma_*``) is carried as given: the bonds' damping flow, its work
booked in ``dissipated`` (``engine.potentials.bond_damping``; issue #44 item 1).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.potentials.bpm import ROTATIONAL_COEFFS, SPRING_COEFFS

from .tables import LammpsDataError
from .units import Scales

COEFFS = {"bpm/rotational": ROTATIONAL_COEFFS, "bpm/spring": SPRING_COEFFS}
LIMITS = ("f_rc", "f_sc", "tau_bc", "tau_tc", "eps_c")
"""The breaking limits: a negative one (the examples' ``-1``) is written 0 — with ``break
no`` a limit only enters the smoothing, which refuses a limit of 0 itself."""
DAMPING = {"bpm/rotational": ("gamma_n", "gamma_s", "gamma_r", "gamma_t"),
           "bpm/spring": ("gamma",)}


def _dims(sc: Scales) -> dict[str, float]:
    """SI value of one unit of each coefficient (its dimension in ``sc``'s units)."""
    kl = sc.energy / sc.length ** 2  # force/distance
    damp = sc.energy * sc.time / sc.length ** 2  # force/velocity
    return {"k_r": kl, "k_s": kl, "k_t": sc.energy, "k_b": sc.energy,
            "f_rc": sc.energy / sc.length, "f_sc": sc.energy / sc.length,
            "tau_bc": sc.energy, "tau_tc": sc.energy, "gamma_n": damp, "gamma_s": damp,
            "gamma_r": sc.energy * sc.time, "gamma_t": sc.energy * sc.time,
            "k": kl, "eps_c": 1.0, "gamma": damp}


@dataclass
class BondStyle:
    """The deck's bond style and its coefficient lines."""

    style: str = ""
    line: int = 0
    smooth: bool = True
    coeffs: dict[str, tuple[int, tuple[str, ...]]] = field(default_factory=dict)
    """``type (or "*") → (line, words)``."""
    breaks: bool = True
    notes: list[str] = field(default_factory=list)
    """What the style line carried that is not kept (``store/local``)."""


STORE_ATTRIBUTES = ("id1", "id2", "time", "x", "y", "z", "x/ref", "y/ref", "z/ref")
"""The attributes of ``store/local`` (LAMMPS's ``bond_bpm.rst``)."""


def _store_local(where: str, style: str, rest: list[str]) -> str:
    """Consume ``store/local ID [N] attributes…`` from ``rest`` (``N``: LAMMPS's newer
    syntax; the older one defined it on its own ``fix store/local``); the note that
    drops it."""
    if not rest or rest[0] in STORE_ATTRIBUTES:
        raise LammpsDataError(f"{where}: bond_style {style} store/local needs a fix ID "
                              "(store/local ID N attributes…)")
    fix_id = rest.pop(0)
    if rest and rest[0].isdigit():
        rest.pop(0)
    attrs = []
    while rest and rest[0] in STORE_ATTRIBUTES:
        attrs.append(rest.pop(0))
    return (f"{where}: bond_style {style} store/local {fix_id} ({' '.join(attrs)}) "
            "dropped: an output of LAMMPS's; the run file keeps which bond broke when "
            "(/events, kind 'break')")


def bond_style(where: str, args: tuple[str, ...]) -> BondStyle:
    """``bond_style STYLE [smooth yes|no] [break yes|no] [overlay/pair no] [store/local
    ID N attributes…]``; one line (:class:`LammpsDataError`) for a style or keyword not
    carried."""
    if not args or args[0] not in COEFFS:
        got = args[0] if args else "(none)"
        raise LammpsDataError(f"{where}: bond_style {got} is not carried (the laws: "
                              "bpm/rotational, bpm/spring; the B&G binder: write "
                              "[bond_types] by hand)")
    out = BondStyle(args[0])
    opts = dict.fromkeys(("smooth", "break"), "yes")
    rest = list(args[1:])
    while rest:
        key = rest.pop(0)
        if key == "store/local":
            out.notes.append(_store_local(where, args[0], rest))
            continue
        val = rest.pop(0) if rest else ""
        if key in ("smooth", "break", "overlay/pair") and val in ("yes", "no"):
            opts[key] = val
        else:
            raise LammpsDataError(f"{where}: bond_style {args[0]} keyword {key} {val} is "
                                  "not carried (smooth yes|no, break yes|no, overlay/pair "
                                  "no, store/local ID N attributes)")
    out.breaks = opts["break"] == "yes"
    if opts.get("overlay/pair") == "yes":
        raise LammpsDataError(f"{where}: bond_style {args[0]} overlay/pair yes is not "
                              "carried (no pair style is); give overlay/pair no")
    out.smooth = opts["smooth"] == "yes"
    return out


def bond_laws(bs: BondStyle, types: list[int], sc: Scales, label: str,
              ) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """The ``[bond_types.T]`` table of each bond type of the data file, in SI, and the
    notes (none today); one line for a type without its ``bond_coeff`` or with
    coefficients that are not the law's numbers."""
    names = COEFFS[bs.style]
    dims = _dims(sc)
    out: dict[str, dict[str, Any]] = {}
    for t in types:
        got = bs.coeffs.get(str(t)) or bs.coeffs.get("*")
        if got is None:
            raise LammpsDataError(f"{label}: bond type {t} has no bond_coeff line; add "
                                  f"'bond_coeff {t} {' '.join(names)}'")
        line, words = got
        try:
            vals = [float(w) for w in words]
        except ValueError:
            vals = []
        if len(vals) != len(names):
            raise LammpsDataError(f"{label} line {line}: bond_coeff {t} needs "
                                  f"{len(names)} numbers for {bs.style} "
                                  f"({' '.join(names)}), got {' '.join(words)!r}")
        table: dict[str, Any] = {"law": bs.style}
        for name, v in zip(names, vals, strict=True):
            if name in LIMITS and v <= 0.0:  # (LAMMPS's -1: no limit, unused unbroken)
                if bs.breaks:
                    raise LammpsDataError(
                        f"{label} line {line}: bond_coeff {t}: {name} {v:g} with "
                        f"bond_style {bs.style} break yes (LAMMPS's default): a bond "
                        f"breaks past its limits, so {name} must be > 0; give one or "
                        "add 'break no'")
                v = 0.0
            table[name] = v * dims[name]
        table["smooth"] = bs.smooth
        table["break"] = bs.breaks
        if bs.style == "bpm/rotational":  # (LAMMPS's law since 2026: its default frame)
            table["frame"] = "average"
        out[str(t)] = table
    notes = list(bs.notes)
    return out, notes
