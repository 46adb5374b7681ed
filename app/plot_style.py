"""What the app's live plots (:mod:`app.gui.plots`) and the exported ones
(:mod:`app.export.plots`) share (issue #37 item 3; one copy, issue #34 item 4): the
colours and labels of the energy components, runs and axes, and the peak decimation of
a series (each bucket of rows drawn as its minimum and maximum)."""

from __future__ import annotations

import numpy as np

from engine.layout import SIGNED_ENERGY

from .scene import GHOST_COLOURS

ENERGY_COLOURS = {
    "translational": "#1f77b4",
    "rotational": "#ff7f0e",
    "gravity": "#8c564b",
    "bending": "#2ca02c",
    "axial": "#9467bd",
    "shear": "#e377c2",
    "contact": "#d62728",
    "wall": "#17becf",
    "mutual gravity": "#8c564b",
    "spring": "#bcbd22",
    "dissipated": "#3a3a3a",
    # the field's energy in the field arrow's purple, its work in ochre (issue #44 item 7:
    # the fallback gave the field the spring's olive, which a bpm/spring model also has)
    "field": "#6a3d9a",
    "field work": "#a6761d",
}
FALLBACK_COLOURS = ("#7f7f7f", "#bcbd22", "#393b79", "#637939", "#8c6d31")
DISSIPATED = "dissipated"
"""The energy removed by impacts and friction (hard contacts) or by viscous damping: not
a potential but the work of the percussions or the damping forces, stacked on top of the
positive bands (grey)."""
LEGEND_NAMES = {DISSIPATED: "dissipated D"}
"""Legend labels where they differ from the component's name (the dissipated energy's
says what it is the work of: :func:`legend_name`)."""
GAP_LABEL = "terrace gap V − V_ε"
"""The legend of the terrace-gap curve (energy-stepping)."""
GAP_COLOUR = "#d62728"
RUN_COLOURS = ("#1f77b4", *GHOST_COLOURS[:2])
"""Primary run, then the compare runs in the colours of their ghosts in the 3D view."""
AXIS_COLOURS = ("#d62728", "#2ca02c", "#1f77b4")  # x, y, z


SCALE_NOTE = ("E_s: the energy scale where |E₀| is none: Σ|E₀ components| when they nearly "
              "cancel, or, for a model at rest, its stiffness energy at a diameter's strain "
              "(docs/physics.md §5)")
"""The tooltip that says what ``E_s`` in an error label is
(``engine.diagnostics.error_scale_symbol``)."""


def error_labels(dissipative: bool, scale: str = "|E₀|") -> tuple[str, str]:
    """The relative energy error plot's title and the quantity whose change it shows
    (``ΔE``; of a dissipative run ``Δ(E + D)``, what the percussions conserve), divided
    by ``scale`` (``engine.diagnostics.error_scale_symbol``: ``|E₀|`` or ``E_s``, the
    scale that the blow-up check divides by too; issue #42 item 1)."""
    if dissipative:
        return f"Relative energy error (E + D − E₀)/{scale}", "Δ(E + D)"
    return f"Relative energy error (E − E₀)/{scale}", "ΔE"


def legend_name(name: str, sources: tuple[str, ...] = ("impacts", "friction")) -> str:
    """The legend label of component ``name``; the dissipated energy's names what it is
    the work of, ``sources`` (``engine.models.field_view.dissipation_sources``: impacts,
    friction, damping), e.g. ``"dissipated D (damping)"``."""
    if name == DISSIPATED:
        return f"dissipated D ({', '.join(sources)})" if sources else "dissipated D"
    return LEGEND_NAMES.get(name, name)


def stack_order(names) -> list[str]:
    """The energy components of ``names`` as the stacked plots stack them, first to
    last (:func:`stack_bands`): the signed ones (``engine.layout.SIGNED_ENERGY``:
    gravity, the field and its work) nearest 0, then the non-negative components, the
    dissipated energy last (the top of the positive stack)."""
    signed = [n for n in names if n in SIGNED_ENERGY]
    rest = [n for n in names if n not in SIGNED_ENERGY]
    rest.sort(key=lambda n: n == DISSIPATED)
    return [*signed, *rest]


def stack_bands(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The stacked bands of ``values`` ``(rows, k)`` (columns in :func:`stack_order`) as
    ``(inner, outer)`` edges, each ``(rows, k)``: row by row, the positive values stacked
    upward from 0 and the negative ones downward from 0, each in column order — so every
    band is as thick as its component's value, on its side of 0, and no two bands
    overlap (issue #44 item 7: the field's −μ·B stacked under the others lay about both;
    issue #42 item 7 had stacked gravity's band under the positive ones).  A component's
    curve is its ``outer`` edge; the total ``E`` (or ``E + D``) is drawn as its own
    line, the top of the stack less the depth of its negative part."""
    v = np.asarray(values, dtype=np.float64)
    pos = np.where(v > 0, v, 0.0)
    neg = np.where(v < 0, v, 0.0)
    up = np.cumsum(pos, axis=1)
    down = np.cumsum(neg, axis=1)
    outer = np.where(v < 0, down, up)
    outer = np.where(np.isnan(v), np.nan, outer)
    return outer - v, outer


def energy_colour(name: str) -> str:
    """The colour of an energy component (a stable fallback for new components)."""
    if name in ENERGY_COLOURS:
        return ENERGY_COLOURS[name]
    return FALLBACK_COLOURS[sum(map(ord, name)) % len(FALLBACK_COLOURS)]


def light(hex_colour: str, white: float = 0.45) -> str:
    """``hex_colour`` mixed with ``white`` of white (the stacked areas' fill)."""
    rgb = [int(hex_colour[k:k + 2], 16) for k in (1, 3, 5)]
    return "#" + "".join(f"{round(c + (255 - c) * white):02x}" for c in rgb)


def peak_decimate(t: np.ndarray, y: np.ndarray, buckets: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows ``(t, y)`` split into ``buckets`` runs of equal row counts, each given as
    its minimum and maximum (in the columns separately) at the times of the run's first
    and last rows; fewer than ``2 * buckets`` rows are returned as they are."""
    n = len(t)
    if n <= 2 * buckets:
        return t, y
    starts = (np.arange(buckets) * n) // buckets
    ends = np.append(starts[1:], n) - 1
    with np.errstate(invalid="ignore"):  # (a run of NaNs stays NaN: a gap)
        lo = np.fmin.reduceat(y, starts, axis=0)
        hi = np.fmax.reduceat(y, starts, axis=0)
    tt = np.empty(2 * buckets)
    tt[0::2], tt[1::2] = t[starts], t[ends]
    yy = np.empty((2 * buckets, *y.shape[1:]))
    yy[0::2], yy[1::2] = lo, hi
    return tt, yy
