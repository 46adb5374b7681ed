"""Builders of bonded-sphere geometry (issue #35 item 3): ``chain``, ``ring``, ``lattice``
(``sc``/``fcc`` in a box, sphere or cylinder, bonds ``within`` a cutoff like LAMMPS's
``create_bonds many``) and ``ball`` (an fcc cluster bonded to its nearest neighbours).

Each returns a :class:`Part`: the spheres (centre, diameter, mass, scalar inertia,
velocity, spin, group) and the bonds ``(i, j)`` (local indices) with their type.  Parts
are joined by :func:`join` into one assembly (``engine.models.assembly``).  Defaults: a
sphere's mass 1, its inertia that of a solid sphere ``m D²/10`` (LAMMPS's ``sphere``
atoms), unless given.

Every builder checks the spheres and bonds it would make against the limits of an
assembly (:data:`MAX_SPHERES`, :data:`MAX_BONDS`; docs/scenarios.md "Limits") *before*
it allocates them, refusing with one line (:class:`~.base.ParameterError`) instead of
exhausting the memory (issue #42 item 5: ``chain`` with ``n = 10⁸`` was killed by the
kernel after 70 s).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.spatial import cKDTree

from .base import ParameterError
from .torus import ring_positions

MAX_SPHERES = 10**7
"""The most spheres of an assembly, and so of one builder (docs/scenarios.md "Limits":
a run needs about :data:`RUN_BYTES_PER_SPHERE`)."""
MAX_BONDS = 6 * 10**7
"""The most bonds (six a sphere of the largest assembly: LAMMPS's fcc BPM)."""
RUN_BYTES_PER_SPHERE = 2048
"""About what a run needs a sphere (10⁶ spheres peak at 1.9 GB, BENCHMARKS.md)."""
Room = tuple[int, int]
"""The spheres and bonds a builder may still make: the limits, less what an assembly's
earlier parts made (``engine.models.assembly_input``)."""


def check_counts(who: str, spheres: float, bonds: float, room: Room | None = None,
                 about: bool = False) -> None:
    """Refuse (:class:`~.base.ParameterError`, one line) ``spheres`` or ``bonds`` beyond
    ``room`` (default: :data:`MAX_SPHERES`, :data:`MAX_BONDS`), naming the memory a run
    of them would need; called before anything is allocated.  ``about``: the counts are
    estimates (a lattice's sites in its region's bounding box, its bonds per site)."""
    max_s, max_b = (MAX_SPHERES, MAX_BONDS) if room is None else room
    pre = "about " if about else ""
    for count, most, limit, what in ((spheres, max_s, MAX_SPHERES, "spheres"),
                                     (bonds, max_b, MAX_BONDS, "bonds")):
        if count <= most:
            continue
        left = f"the {_n(most)} left of " if most < limit else ""
        need = (f" (a run would need about {count * RUN_BYTES_PER_SPHERE / 1e9:.3g} GB)"
                if what == "spheres" else "")
        shown = f"{count:.3g}" if about else _n(count)
        raise ParameterError(f"{who}: {pre}{shown} {what}, more than {left}the "
                             f"{limit:.0e} an assembly may have{need}; use fewer "
                             "(docs/scenarios.md \"Limits\")")


def _n(k: float) -> str:
    """A count as its digits (``9,999,997``), or ``1e+08`` from a round 10⁸ up."""
    return f"{int(k):,}" if k < 1e8 else f"{k:.3g}"


def _count(n: Any, who: str, least: int) -> int:
    """``n`` as an int of at least ``least`` (an integral float too: TOML's ``1e8``)."""
    if isinstance(n, bool) or not isinstance(n, (int, float, np.integer, np.floating)):
        raise ParameterError(f"{who}: n must be a whole number, got {n!r}")
    if isinstance(n, (float, np.floating)) and not (math.isfinite(n) and n == int(n)):
        raise ParameterError(f"{who}: n must be a whole number, got {n!r}")
    if n < least:
        raise ParameterError(f"{who}: n must be at least {least}, got {n}")
    return int(n)


@dataclass
class Part:
    """Spheres and bonds of one piece of an assembly (local body indices in ``bonds``)."""

    x: np.ndarray
    D: np.ndarray
    m: np.ndarray
    J: np.ndarray
    v: np.ndarray
    omega: np.ndarray
    group: np.ndarray
    bonds: np.ndarray
    bond_type: np.ndarray
    """``(nb,)`` the bond-type label of each bond (strings)."""
    dipole: np.ndarray | None = None
    """``(n, 3)`` each sphere's point dipole in its body frame (issue #44 item 3), or
    ``None``: none."""

    @property
    def n(self) -> int:
        return int(self.x.shape[0])


def make_part(x: np.ndarray, D: Any, *, mass: Any = 1.0, inertia: Any = None,
              velocity: Any = (0.0, 0.0, 0.0), spin: Any = (0.0, 0.0, 0.0), group: int = 0,
              bonds: np.ndarray | None = None, bond_type: str = "1",
              dipole: Any = None) -> Part:
    """A :class:`Part` of the centres ``x`` with per-part (or per-sphere) properties;
    ``dipole``: a body-frame point dipole for every sphere (or one a sphere)."""
    x = np.ascontiguousarray(x, dtype=np.float64).reshape(-1, 3)
    n = x.shape[0]
    D = np.broadcast_to(np.asarray(D, dtype=np.float64), (n,)).copy()
    m = np.broadcast_to(np.asarray(mass, dtype=np.float64), (n,)).copy()
    J = 0.1 * m * D * D if inertia is None else np.broadcast_to(
        np.asarray(inertia, dtype=np.float64), (n,)).copy()
    v = np.tile(np.asarray(velocity, dtype=np.float64).reshape(1, 3), (n, 1))
    om = np.tile(np.asarray(spin, dtype=np.float64).reshape(1, 3), (n, 1))
    b = np.zeros((0, 2), dtype=np.int64) if bonds is None else np.asarray(
        bonds, dtype=np.int64).reshape(-1, 2)
    mu = None if dipole is None else np.broadcast_to(
        np.asarray(dipole, dtype=np.float64), (n, 3)).copy()
    return Part(x, D, m, J, v, om, np.full(n, int(group), dtype=np.int64), b,
                np.full(b.shape[0], str(bond_type), dtype=object), mu)


def _unit(v: Any, what: str) -> np.ndarray:
    a = np.asarray(v, dtype=np.float64).reshape(3)
    nrm = float(np.linalg.norm(a))
    if not nrm > 0.0:
        raise ParameterError(f"{what} must be a non-zero vector, got {list(a)}")
    return a / nrm


def chain(n: int, diameter: float, *, spacing: float | None = None,
          direction: Any = (1.0, 0.0, 0.0), start: Any = (0.0, 0.0, 0.0),
          room: Room | None = None, **props: Any) -> Part:
    """``n`` spheres from ``start`` along ``direction``, ``spacing`` apart (default: the
    diameter, neighbours touching), each bonded to the next (a rope).  ``room``: the
    spheres and bonds it may make (:func:`check_counts`)."""
    n = _count(n, "chain", 1)
    check_counts("chain", n, n - 1, room)
    s = float(diameter if spacing is None else spacing)
    d = _unit(direction, "chain: direction")
    x = np.asarray(start, dtype=np.float64).reshape(1, 3) + (s * np.arange(n))[:, None] * d
    bonds = np.stack([np.arange(n - 1), np.arange(1, n)], axis=1)
    return make_part(x, diameter, bonds=bonds, **props)


def ring(n: int, diameter: float, *, sphere_diameter: float | None = None,
         centre: Any = None, tilt: float = 0.0, room: Room | None = None,
         **props: Any) -> Part:
    """The torus's ring (``engine.models.torus.ring_positions``, the same operations):
    ``n`` spheres on a circle of diameter ``diameter`` in the x–y plane, tilted by
    ``tilt`` degrees about y, each bonded to the next and the last to the first; sphere
    diameter ``D sin(π/n)`` (neighbours touch) unless given; centre by default where
    the torus puts it, ``(D/2 + D_p, 0, 0)``.  ``room``: as :func:`chain`'s."""
    n = _count(n, "ring", 3)
    check_counts("ring", n, n, room)
    x, dp = ring_positions(n, diameter, tilt, None if centre is None
                           else np.asarray(centre, dtype=np.float64).reshape(3))
    bonds = np.stack([np.arange(n), (np.arange(n) + 1) % n], axis=1)
    return make_part(x, dp if sphere_diameter is None else sphere_diameter, bonds=bonds,
                     **props)


def _in_region(p: np.ndarray, region: dict[str, Any]) -> np.ndarray:
    shape = region.get("shape", "box")
    if shape == "box":
        lo = np.asarray(region["lo"], dtype=np.float64)
        hi = np.asarray(region["hi"], dtype=np.float64)
        return np.all((p >= lo) & (p <= hi), axis=1)
    if shape == "sphere":
        c = np.asarray(region["centre"], dtype=np.float64)
        return np.linalg.norm(p - c, axis=1) <= float(region["radius"])
    if shape == "cylinder":
        c = np.asarray(region["centre"], dtype=np.float64)
        a = _unit(region.get("axis", (0.0, 0.0, 1.0)), "cylinder: axis")
        d = p - c
        h = d @ a
        radial = np.linalg.norm(d - h[:, None] * a, axis=1)
        return (radial <= float(region["radius"])) & (np.abs(h) <= 0.5 * float(region["length"]))
    raise ParameterError(f"region shape must be \"box\", \"sphere\" or \"cylinder\", got {shape!r}")


def _bounds(region: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    shape = region.get("shape", "box")
    if shape == "box":
        return (np.asarray(region["lo"], dtype=np.float64),
                np.asarray(region["hi"], dtype=np.float64))
    c = np.asarray(region["centre"], dtype=np.float64)
    r = float(region["radius"])
    if shape == "cylinder":
        r = max(r, 0.5 * float(region["length"]))
    return c - r, c + r


BASIS = {"sc": np.zeros((1, 3)),
         "fcc": np.array([[0.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.5, 0.0, 0.5], [0.0, 0.5, 0.5]])}
NEAREST = {"sc": 1.0, "fcc": math.sqrt(0.5)}
"""Nearest-neighbour distance of each lattice, in lattice constants."""
MAX_LATTICE_SITES = MAX_SPHERES
EXACT_NEIGHBOURS = 6.0
"""Up to this cutoff (in lattice constants) a lattice's bonds per site are counted on the
lattice itself; beyond, the volume of the cutoff's sphere gives them (to a few %)."""


def bonds_per_site(style: str, a: float, cutoff: float) -> float:
    """Bonds per site of an interior site of the ``style`` lattice of constant ``a``
    bonded within ``cutoff`` (half its neighbours closer than ``cutoff``): the bonds of a
    lattice of ``n`` sites are at most about ``n`` times this, before any is made."""
    r = cutoff / a
    basis = BASIS[style]
    if not r > 0.0:
        return 0.0
    if r > EXACT_NEIGHBOURS:
        return 0.5 * basis.shape[0] * 4.0 / 3.0 * math.pi * r ** 3
    k = int(math.ceil(r)) + 1
    g = np.stack(np.meshgrid(*[np.arange(-k, k + 1)] * 3, indexing="ij"), axis=-1).reshape(-1, 3)
    d = (g[:, None, :] + basis[None] - basis[0]).reshape(-1, 3)
    dist = np.linalg.norm(d, axis=1)
    return 0.5 * float(np.count_nonzero((dist > 0.0) & (dist <= r)))


def pairs_within(x: np.ndarray, cutoff: float) -> np.ndarray:
    """All pairs ``(i, j)``, ``i < j``, closer than ``cutoff``, sorted (LAMMPS's
    ``create_bonds many``)."""
    if x.shape[0] < 2 or not cutoff > 0.0:
        return np.zeros((0, 2), dtype=np.int64)
    p = cKDTree(x).query_pairs(cutoff, output_type="ndarray").astype(np.int64)
    p.sort(axis=1)
    return p[np.lexsort((p[:, 1], p[:, 0]))]


def lattice(style: str, a: float, region: dict[str, Any], *, diameter: float | None = None,
            bond_within: float | None = None, origin: Any = (0.0, 0.0, 0.0),
            room: Room | None = None, **props: Any) -> Part:
    """Spheres on the sites of an ``sc``/``fcc`` lattice of constant ``a`` (from
    ``origin``) inside ``region`` (``{shape = "box", lo, hi}``, ``{shape = "sphere",
    centre, radius}`` or ``{shape = "cylinder", centre, radius, length, axis}``),
    diameter the nearest-neighbour distance unless given, bonded to every sphere closer
    than ``bond_within`` (none if not given).  ``room``: as :func:`chain`'s; the sites of
    the region's bounding box and their bonds (:func:`bonds_per_site`) are checked
    before the lattice is made, the sites in the region before their bonds are."""
    if style not in BASIS:
        raise ParameterError(f"lattice style must be \"sc\" or \"fcc\", got {style!r}")
    if not a > 0.0:
        raise ParameterError(f"lattice: a must be positive, got {a}")
    lo, hi = _bounds(region)
    o = np.asarray(origin, dtype=np.float64).reshape(3)
    k0 = np.floor((lo - o) / a).astype(np.int64) - 1
    k1 = np.ceil((hi - o) / a).astype(np.int64) + 1
    cells = float(np.prod((k1 - k0).astype(np.float64))) * BASIS[style].shape[0]
    if cells > MAX_LATTICE_SITES:
        raise ParameterError(f"lattice: the region holds about {cells:.3g} sites, more than "
                             f"{MAX_LATTICE_SITES:.0e}; raise a or shrink the region")
    z = bonds_per_site(style, a, float(bond_within)) if bond_within else 0.0
    check_counts("lattice", cells, cells * z, room, about=True)
    g = np.stack(np.meshgrid(*[np.arange(k0[d], k1[d]) for d in range(3)], indexing="ij"),
                 axis=-1).reshape(-1, 3).astype(np.float64)
    p = (o + a * (g[:, None, :] + BASIS[style][None])).reshape(-1, 3)
    p = p[_in_region(p, region)]
    check_counts("lattice", p.shape[0], p.shape[0] * z, room, about=True)
    d = NEAREST[style] * a if diameter is None else float(diameter)
    bonds = pairs_within(p, float(bond_within)) if bond_within else None
    return make_part(p, d, bonds=bonds, **props)


def ball(radius: float, diameter: float, *, centre: Any = (0.0, 0.0, 0.0),
         bond_within: float | None = None, room: Room | None = None, **props: Any) -> Part:
    """A bonded sphere cluster: the fcc sites of nearest-neighbour distance ``diameter``
    within ``radius`` of ``centre`` (the lattice centred there), bonded to the spheres
    closer than ``bond_within`` (default ``1.01 diameter``: the 12 nearest); ``room``
    and its checks: :func:`lattice`'s."""
    a = diameter / NEAREST["fcc"]
    c = np.asarray(centre, dtype=np.float64).reshape(3)
    cut = 1.01 * diameter if bond_within is None else bond_within
    return lattice("fcc", a, {"shape": "sphere", "centre": c.tolist(), "radius": radius},
                   diameter=diameter, bond_within=cut, origin=c, room=room, **props)


def join(parts: list[Part]) -> Part:
    """One :class:`Part` of ``parts`` in order (bond indices shifted)."""
    if not parts:
        return make_part(np.zeros((0, 3)), 1.0)
    offs = np.cumsum([0] + [p.n for p in parts[:-1]])
    cat = np.concatenate
    return Part(cat([p.x for p in parts]), cat([p.D for p in parts]),
                cat([p.m for p in parts]), cat([p.J for p in parts]),
                cat([p.v for p in parts]), cat([p.omega for p in parts]),
                cat([p.group for p in parts]),
                cat([p.bonds + o for p, o in zip(parts, offs, strict=True)]),
                cat([p.bond_type for p in parts]),
                None if all(p.dipole is None for p in parts) else cat(
                    [np.zeros((p.n, 3)) if p.dipole is None else p.dipole for p in parts]))


BUILDERS = {"chain": chain, "ring": ring, "lattice": lattice, "ball": ball}
