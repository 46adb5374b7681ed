"""The plots beside the view of a ``view+plots`` export (issue #37 item 3), drawn off
screen with matplotlib (Agg): the app's four plots in the app's order, colours and
labels (:mod:`app.gui.plots`; ``tests/test_export_run.py`` holds them equal) — energy
components (stacked), relative energy error (one curve per run, the terrace gap of an
energy-stepping run dashed), linear and angular momentum drifts — with a dashed,
labelled marker at each change of integrator or ``h`` and a moving time cursor.

The curves appear up to the frame's time: the figure is drawn twice at the start, with
and without its curves, on fixed axes (the whole window of the export); each frame is
the empty picture with the drawn one's columns copied in up to the cursor's column of
each axes (numpy slicing, no matplotlib per frame: the cost of a frame does not grow
with the run).

What is drawn of a run is its :class:`Curves`: the rows of the export's window reduced
to at most :data:`BUCKETS` min/max pairs per curve (peak decimation, as the live plots
do: a spike one record wide survives).  The export reads them from the run file a
block of :data:`BLOCK` rows at a time (:func:`run_curves`), never a series whole, so
that its memory does not grow with the records (issue #42 item 10: a 10⁶-record run
held every series, ~0.2 GB, twice).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.diagnostics import error_scale_symbol
from engine.io.file_layout import TERRACE_GAP
from engine.layout import ENERGY_NAMES, SIGNED_ENERGY
from engine.simulation.breaking import BREAK_EVENT

from .. import plot_style as style

CURSOR_COLOUR = "#ffb000"
MARKER_COLOUR = "#555555"
TITLES = ("Energy components", "Relative energy error (E − E₀)/|E₀|",
          "Linear momentum P", "Angular momentum L (about the origin)")
BUCKETS = 1500
"""Most min/max pairs a curve is decimated to (as the app's plots do)."""
BLOCK = 1 << 16
"""Rows of a run file's series read at once (:func:`run_curves`)."""


_light = style.light


def decimate(t: np.ndarray, y: np.ndarray, buckets: int = BUCKETS
             ) -> tuple[np.ndarray, np.ndarray]:
    """Peak decimation (the extremes of each of ``buckets`` runs of rows), as the app's."""
    return style.peak_decimate(t, y, buckets)


@dataclass
class RunSeries:
    """The recorded series of one run: ``energy`` by component (app order), ``total``,
    ``rel`` (relative energy error), ``gap`` (``(V − V_ε)/E_scale`` or ``None``), ``P``,
    ``L`` (``(n, 3)``), and the change ``events`` ``(t, label)``."""

    label: str
    t: np.ndarray
    energy: dict[str, np.ndarray]
    total: np.ndarray
    rel: np.ndarray
    P: np.ndarray
    L: np.ndarray
    gap: np.ndarray | None = None
    events: list[tuple[float, str]] = field(default_factory=list)
    scale: str = "|E₀|"
    """What ``rel`` was divided by (``engine.diagnostics.error_scale_symbol``)."""


def run_series(rf, label: str = "") -> RunSeries:
    """The series of an open :class:`engine.io.RunFile` (as the app's replay reads it)."""
    t = np.asarray(rf.times, float)
    n = len(t)
    comps = [c for c in rf.components if c in ENERGY_NAMES]
    energy = {c: np.asarray(rf.energy[c], float)[:n] for c in comps}
    total = np.asarray(rf.energy["total"], float)[:n] if "total" in rf.energy else \
        (np.sum(list(energy.values()), axis=0) if energy else np.zeros(n))
    rel = np.asarray(rf.energy.get("relative_error", np.full(n, np.nan)), float)[:n]
    P = np.zeros((n, 3)) if rf.P is None else np.asarray(rf.P, float)[:n]
    L = np.zeros((n, 3)) if rf.L is None else np.asarray(rf.L, float)[:n]
    m = min([n, len(total), len(rel), len(P), len(L), *(len(v) for v in energy.values())])
    gap = rf.energy.get("terrace_gap")
    if gap is not None:
        gap = np.full(m, np.nan) if len(gap) < m else np.asarray(gap, float)[:m] / rf.e_scale
        if not np.isfinite(gap).any():
            gap = None
    return RunSeries(label or rf.scenario, t[:m], {c: v[:m] for c, v in energy.items()},
                     total[:m], rel[:m], P[:m], L[:m], gap,
                     [(float(e.t), e.label) for e in rf.events if e.kind != BREAK_EVENT],
                     error_scale_symbol(rf.e_ref, rf.e_scale))


@dataclass
class Curves:
    """What the strip draws of one run on its window: the window's rows peak-decimated
    (:func:`decimate`, one time axis ``t`` for every curve): ``names``, the energy
    components (app order); ``stack`` and ``base``, the outer and inner edges of their
    bands in :func:`app.plot_style.stack_order` (:func:`app.plot_style.stack_bands`,
    ``(m, k)`` each); ``total``,
    ``rel``, ``gap`` (or ``None``); ``dP``, ``dL``, the momenta's drifts since the
    window's first row (``(m, 3)``); ``rows``: the window's rows before decimation."""

    label: str
    t: np.ndarray
    names: list[str]
    stack: np.ndarray
    total: np.ndarray
    rel: np.ndarray
    dP: np.ndarray
    dL: np.ndarray
    gap: np.ndarray | None = None
    events: list[tuple[float, str]] = field(default_factory=list)
    scale: str = "|E₀|"
    rows: int = 0
    base: np.ndarray | None = None


def _columns(names: list[str], energy: dict[str, np.ndarray], total, rel, gap, P, L,
             P0, L0) -> np.ndarray:
    """The curves' rows side by side: the stack's bands' outer then inner edges
    (:func:`app.plot_style.stack_bands`), total, rel, (gap), the drifts of P and L from
    ``P0``, ``L0`` (what :class:`_Peaks` reduces)."""
    stack = style.stack_order(names)
    n = len(total)
    inner, outer = (style.stack_bands(np.stack([energy[c] for c in stack], axis=1))
                    if stack else (np.zeros((n, 0)), np.zeros((n, 0))))
    parts = [outer, inner, total[:, None], rel[:, None]]
    if gap is not None:
        parts.append(gap[:, None])
    parts += [P - P0, L - L0]
    return np.concatenate([np.asarray(p, float) for p in parts], axis=1)


def _split(label: str, names: list[str], t: np.ndarray, cols: np.ndarray, has_gap: bool,
           events, scale: str, rows: int) -> Curves:
    m = len(names)
    k = 2 * m
    g = 1 if has_gap else 0
    return Curves(label, t, list(names), cols[:, :m], cols[:, k], cols[:, k + 1],
                  cols[:, k + 2 + g:k + 5 + g], cols[:, k + 5 + g:k + 8 + g],
                  cols[:, k + 2] if has_gap else None, list(events), scale, rows,
                  cols[:, m:k])


def _in(t: np.ndarray, t0: float, t1: float) -> np.ndarray:
    return (t >= t0 - 1e-12) & (t <= t1 + 1e-12)


def curves_of(s: RunSeries, t0: float, t1: float, buckets: int = BUCKETS) -> Curves:
    """The :class:`Curves` of a series held in memory on ``[t0, t1]``."""
    win = _in(s.t, t0, t1)
    names = list(s.energy)
    P, L = s.P[win], s.L[win]
    zero = np.zeros(3)
    cols = _columns(names, {c: v[win] for c, v in s.energy.items()}, s.total[win],
                    s.rel[win], None if s.gap is None else s.gap[win], P, L,
                    P[0] if len(P) else zero, L[0] if len(L) else zero)
    td, cd = decimate(s.t[win], cols, buckets)
    return _split(s.label, names, td, cd, s.gap is not None, s.events, s.scale,
                  int(win.sum()))


class _Peaks:
    """:func:`app.plot_style.peak_decimate` of ``n`` rows fed a block at a time (rows in
    order): the same buckets, minima and maxima, never more than one block and the
    ``2 · buckets`` extremes held; ``n ≤ 2 · buckets`` rows are kept as they are."""

    def __init__(self, n: int, width: int, buckets: int) -> None:
        self.n, self.seen = n, 0
        self.keep = n <= 2 * buckets
        self.parts_t: list[np.ndarray] = []
        self.parts_y: list[np.ndarray] = []
        if not self.keep:
            self.starts = (np.arange(buckets) * n) // buckets
            self.ends = np.append(self.starts[1:], n) - 1
            self.lo = np.full((buckets, width), np.nan)
            self.hi = np.full((buckets, width), np.nan)
            self.t_lo = np.zeros(buckets)
            self.t_hi = np.zeros(buckets)

    def add(self, t: np.ndarray, y: np.ndarray) -> None:
        j = self.seen + np.arange(len(t))
        self.seen += len(t)
        if not len(t):
            return
        if self.keep:
            self.parts_t.append(t)
            self.parts_y.append(y)
            return
        b = np.searchsorted(self.starts, j, side="right") - 1
        seg = np.flatnonzero(np.diff(b, prepend=-1))  # (each bucket's first row here)
        ids = b[seg]
        with np.errstate(invalid="ignore"):  # (a run of NaNs stays NaN: a gap)
            self.lo[ids] = np.fmin(self.lo[ids], np.fmin.reduceat(y, seg, axis=0))
            self.hi[ids] = np.fmax(self.hi[ids], np.fmax.reduceat(y, seg, axis=0))
        at = self.starts[b] == j
        self.t_lo[b[at]] = t[at]
        at = self.ends[b] == j
        self.t_hi[b[at]] = t[at]

    def result(self, width: int) -> tuple[np.ndarray, np.ndarray]:
        if self.keep:
            if not self.parts_t:
                return np.zeros(0), np.zeros((0, width))
            return np.concatenate(self.parts_t), np.concatenate(self.parts_y)
        m = len(self.starts)
        tt, yy = np.empty(2 * m), np.empty((2 * m, width))
        tt[0::2], tt[1::2] = self.t_lo, self.t_hi
        yy[0::2], yy[1::2] = self.lo, self.hi
        return tt, yy


def run_curves(rf, t0: float, t1: float, label: str = "", buckets: int = BUCKETS,
               block: int = BLOCK) -> Curves:
    """The :class:`Curves` of an open :class:`engine.io.RunFile` on ``[t0, t1]``, read
    from its series ``block`` rows at a time (:meth:`~engine.io.RunFile.series_rows`,
    checked against their digests): the same as :func:`curves_of` of
    :func:`run_series`, in memory bounded by ``block`` and ``buckets``, whatever the
    number of records (the file may be opened with ``series=False``)."""
    have = rf.series_lengths()
    comps = [c for c in rf.components if c in ENERGY_NAMES and f"energy/{c}" in have]
    want = ["time", *(f"energy/{c}" for c in comps)]
    opt = {k: f"energy/{k}" for k in ("total", "relative_error")}
    opt.update(P="momentum/linear", L="momentum/angular")
    opt = {k: v for k, v in opt.items() if v in have}
    m = min(have[n] for n in (*want, *opt.values()))
    gap = f"energy/{TERRACE_GAP}" if have.get(f"energy/{TERRACE_GAP}", -1) >= m else None
    # pass 1: the window's rows, its first row's momenta; whether the gap has a value
    n, first, finite = 0, None, False
    for a in range(0, m, block):
        b = min(a + block, m)
        rows = rf.series_rows(a, b, ["time", *([gap] if gap and not finite else [])])
        win = _in(rows["time"], t0, t1)
        if first is None and win.any():
            first = a + int(np.argmax(win))
        n += int(win.sum())
        if gap and not finite:
            finite = bool(np.isfinite(np.asarray(rows[gap], float) / rf.e_scale).any())
    gap = gap if finite else None
    zero = np.zeros(3)
    P0 = L0 = zero
    if first is not None:
        r = rf.series_rows(first, first + 1, [opt[k] for k in ("P", "L") if k in opt])
        P0 = r[opt["P"]][0] if "P" in opt else zero
        L0 = r[opt["L"]][0] if "L" in opt else zero
    width = 2 * len(comps) + 2 + (gap is not None) + 6
    peaks = _Peaks(n, width, buckets)
    # pass 2: each block's window rows, their columns reduced
    names = [*want, *opt.values(), *([gap] if gap else [])]
    for a in range(0, m, block):
        b = min(a + block, m)
        rows = rf.series_rows(a, b, names)
        win = _in(rows["time"], t0, t1)
        if not win.any():
            continue
        k = int(win.sum())
        energy = {c: np.asarray(rows[f"energy/{c}"], float)[win] for c in comps}
        total = (np.asarray(rows[opt["total"]], float)[win] if "total" in opt else
                 np.sum(list(energy.values()), axis=0) if energy else np.zeros(k))
        rel = (np.asarray(rows[opt["relative_error"]], float)[win]
               if "relative_error" in opt else np.full(k, np.nan))
        P = np.asarray(rows[opt["P"]], float)[win] if "P" in opt else np.zeros((k, 3))
        L = np.asarray(rows[opt["L"]], float)[win] if "L" in opt else np.zeros((k, 3))
        g = np.asarray(rows[gap], float)[win] / rf.e_scale if gap else None
        peaks.add(np.asarray(rows["time"], float)[win],
                  _columns(comps, energy, total, rel, g, P, L, P0, L0))
    td, cd = peaks.result(width)
    return _split(label or rf.scenario, comps, td, cd, gap is not None,
                  [(float(e.t), e.label) for e in rf.events if e.kind != BREAK_EVENT],
                  error_scale_symbol(rf.e_ref, rf.e_scale), n)


class PlotStrip:
    """The four plots of ``runs`` (the first is the primary run) on ``[t0, t1]``, as an
    RGB image of ``size = (width, height)`` for any time (:meth:`image`).  ``runs``:
    their :class:`Curves` (:func:`run_curves`), or series held whole
    (:class:`RunSeries`, decimated here); :attr:`curves` keeps what was drawn."""

    def __init__(self, runs: list[RunSeries | Curves], t0: float, t1: float,
                 size: tuple[int, int], sources: tuple[str, ...] | None = None) -> None:
        import matplotlib

        matplotlib.use("Agg", force=False)
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        self.t0, self.t1 = float(t0), float(t1)
        self.size = w, h = size
        dpi = 100
        fig = Figure(figsize=(w / dpi, h / dpi), dpi=dpi, facecolor="white",
                     layout="none")  # (the margins below, whatever rcParams say)
        canvas = FigureCanvasAgg(fig)
        font = max(5.0, min(8.0, h / 95))
        axes = fig.subplots(4, 1, sharex=True)
        fig.subplots_adjust(left=0.14, right=0.97)  # (top to bottom: _layout)
        self.axes = axes
        self.titles: list[str] = []
        self.legends: list[list[str]] = []
        curves: list = []
        runs = [r if isinstance(r, Curves) else curves_of(r, self.t0, self.t1)
                for r in runs]
        self.curves = runs
        first = runs[0]
        td = first.t
        # 1. energy components, stacked (as the app's default): each band between its
        # inner and outer edge (app.plot_style.stack_bands: positive values up from 0,
        # negative ones down from 0, none over another), D last; the total a line
        ax = axes[0]
        names = first.names
        stack = style.stack_order(names)
        yd = first.stack
        lo_d = first.base if first.base is not None else np.zeros_like(yd)
        for k, n in enumerate(stack):
            light = _light(style.energy_colour(n), 0.6 if n == style.DISSIPATED else 0.45)
            signed = n in SIGNED_ENERGY
            curves.append(ax.fill_between(td, lo_d[:, k], yd[:, k], color=light, lw=0,
                                          zorder=1 + k))
            curves += ax.plot(td, yd[:, k], color=style.energy_colour(n),
                              lw=1.6 if signed else 0.8,
                              label=style.legend_name(n, *(() if sources is None
                                                           else (sources,))),
                              zorder=40 + len(stack) - k)
        curves += ax.plot(td, first.total, color="k", lw=1.6, zorder=100,
                          label="total E + D" if style.DISSIPATED in names else "total")
        self._style(ax, TITLES[0], "E", font)
        # 2. relative energy error, a curve per run; the terrace gap dashed
        ax = axes[1]
        title, err = style.error_labels(style.DISSIPATED in names, first.scale)
        scale = first.scale
        for k, r in enumerate(runs):
            curves += ax.plot(r.t, r.rel, color=style.RUN_COLOURS[k % len(style.RUN_COLOURS)],
                              lw=1.2, zorder=20,
                              label=r.label if len(runs) > 1 else f"{err}/{scale}")
        for r in runs:
            if r.gap is not None:
                curves += ax.plot(r.t, r.gap, color=style.GAP_COLOUR, lw=1.2, ls="--", zorder=10,
                                  label=f"{style.GAP_LABEL}/{scale}" if len(runs) == 1
                                  else f"V − V_ε ({r.label})")
        self._style(ax, title, f"{err}/{scale}", font)
        # 3, 4. drifts of P and L since the window's first row
        for ax, y1, sym, ttl in ((axes[2], first.dP, "P", TITLES[2]),
                                 (axes[3], first.dL, "L", TITLES[3])):
            for j, c in enumerate("xyz"):
                curves += ax.plot(td, y1[:, j] if len(y1) else [], lw=1.2,
                                  color=style.AXIS_COLOURS[j], label=f"Δ{sym}_{c}")
            self._style(ax, ttl, sym, font)
        axes[-1].set_xlabel("t", fontsize=font, labelpad=1)
        span = self.t1 - self.t0
        for ax in axes:
            ax.set_xlim(self.t0, self.t1 if span > 0 else self.t0 + 1.0)
        # the change markers (in every plot, labelled in the energy plot; the changes
        # made at one instant share a marker, their labels one under the other)
        marks: dict[float, list[str]] = {}
        for te, lab in first.events:
            if self.t0 <= te <= self.t1:
                key = next((k for k in marks if abs(k - te) <= 1e-9 * max(1.0, abs(te))), te)
                marks.setdefault(key, []).append(lab)
        self.marker_times = list(marks)
        notes = []
        for te, labs in marks.items():
            for ax in axes:
                ax.axvline(te, color=MARKER_COLOUR, lw=0.9, ls="--", zorder=150)
            notes.append(axes[0].annotate(
                "\n".join(labs), (te, 0.95), xycoords=("data", "axes fraction"),
                xytext=(3, 0), textcoords="offset points", fontsize=font - 0.5, color="#333",
                zorder=160, va="top", bbox={"fc": "white", "ec": "none", "alpha": 0.8, "pad": 1}))
        renderer = canvas.get_renderer()
        legends = [self._legend(fig, ax, font, renderer) for ax in axes]
        self._layout(fig, axes, legends, renderer)
        for note in notes:
            _place_note(note, axes[0], renderer)
        self.legends = [[tx.get_text() for tx in leg.get_texts()] for leg in legends]
        # drawn with the curves (full), then without them (empty): same axes, same layout
        canvas.draw()
        self._full = np.asarray(canvas.buffer_rgba())[:, :, :3].copy()
        for c in curves:
            c.set_visible(False)
        canvas.draw()
        self._empty = np.asarray(canvas.buffer_rgba())[:, :, :3].copy()
        self._boxes = []  # (row0, row1, col0, col1) of each axes' plotting area
        for ax in axes:
            bb = ax.get_window_extent()
            self._boxes.append((int(round(h - bb.y1)), int(round(h - bb.y0)) + 1,
                                int(round(bb.x0)), int(round(bb.x1)) + 1))
        self._x0, self._x1 = axes[0].get_xlim()
        fig.clear()

    @staticmethod
    def _legend(fig, ax, font: float, renderer):
        """``ax``'s legend under it: in as few rows as fit the figure's width (at most
        six columns)."""
        handles, labels = ax.get_legend_handles_labels()
        room = fig.bbox.width - 6
        for ncol in range(min(6, max(len(labels), 1)), 0, -1):
            leg = ax.legend(handles, labels, fontsize=font - 1, loc="upper center",
                            ncol=ncol, frameon=False, handlelength=1.2, columnspacing=0.8,
                            borderaxespad=0.0, borderpad=0.1)
            if ncol == 1 or leg.get_window_extent(renderer).width <= room:
                return leg
        return leg  # (never reached: one column is always taken)

    @staticmethod
    def _layout(fig, axes, legends, renderer) -> None:
        """Stack the axes from the top, each with the room its title (and the y axis's
        offset text) needs above it and its x axis and legend need below it — so that no
        legend row reaches the next plot's title (issue #42 item 7: a third legend row,
        with gravity, did) — sharing what height is left equally; each legend centred
        under its axes' tick labels."""
        width, height = fig.bbox.width, fig.bbox.height
        pad, gap = 3.0, 4.0
        above, below = [], []
        for ax, leg in zip(axes, legends, strict=True):
            top = ax.get_window_extent(renderer)
            heads = [ax.title.get_window_extent(renderer).y1]
            off = ax.yaxis.get_offset_text()
            if off.get_text():
                heads.append(off.get_window_extent(renderer).y1)
            above.append(max(0.0, max(heads) - top.y1) + 1.0)
            xaxis = ax.xaxis.get_tightbbox(renderer)
            under = max(0.0, top.y0 - xaxis.y0) if xaxis is not None else 0.0
            below.append(max(under, 3.0) + 1.0 + leg.get_window_extent(renderer).height + gap)
        free = height - 2 * pad - sum(above) - sum(below)
        each = max(free / len(axes), 8.0)
        y = height - pad
        x0, x1 = fig.subplotpars.left, fig.subplotpars.right
        for ax, leg, a, b in zip(axes, legends, above, below, strict=True):
            y -= a
            ax.set_position([x0, (y - each) / height, x1 - x0, each / height])
            y -= each
            lw = leg.get_window_extent(renderer).width
            under = b - gap - leg.get_window_extent(renderer).height
            # centred under the axes, or as near as keeps it inside the figure
            xc = min(max((x0 + x1) / 2 * width, lw / 2 + pad), width - lw / 2 - pad)
            leg.set_bbox_to_anchor((xc / width, (y - under) / height),
                                   transform=fig.transFigure)
            y -= b

    @staticmethod
    def _style(ax, title: str, left: str, font: float) -> None:
        ax.set_title(title, fontsize=font + 0.5, color="#222", pad=2)
        ax.set_ylabel(left, fontsize=font, labelpad=1)
        ax.tick_params(labelsize=font - 1, pad=1, length=2)
        ax.yaxis.get_offset_text().set_fontsize(font - 1)
        ax.margins(x=0)

    def column(self, t: float) -> int:
        """The pixel column of time ``t`` in the plots."""
        r0, r1, c0, c1 = self._boxes[0]
        s = (t - self._x0) / (self._x1 - self._x0) if self._x1 > self._x0 else 0.0
        return int(round(c0 + min(max(s, 0.0), 1.0) * (c1 - 1 - c0)))

    def image(self, t: float) -> np.ndarray:
        """The plots with the curves drawn up to ``t`` and the cursor at ``t``."""
        img = self._empty.copy()
        x = self.column(t)
        for r0, r1, c0, c1 in self._boxes:
            img[r0:r1, c0:x + 1] = self._full[r0:r1, c0:x + 1]
            img[r0:r1, max(c0, x - 1):min(c1, x + 1)] = (255, 176, 0)  # the cursor
        return img


def _place_note(note, ax, renderer) -> None:
    """A change marker's label inside ``ax`` (issue #42 item 7: at the right of its line
    it ran out of the figure past ~60 % of the window): right of the line where it
    fits, else left of it, else broken into lines (after ``": "``), else smaller."""
    box = ax.get_window_extent(renderer)

    def fits() -> bool:
        bb = note.get_window_extent(renderer)
        return bb.x0 >= box.x0 and bb.x1 <= box.x1 and bb.y0 >= box.y0 and bb.y1 <= box.y1

    text = note.get_text()
    for variant in (text, text.replace(": ", ":\n")):
        note.set_text(variant)
        for ha, dx in (("left", 3), ("right", -3)):
            note.set_horizontalalignment(ha)
            note.xyann = (dx, 0)
            if fits():
                return
    while note.get_fontsize() > 3.0 and not fits():
        note.set_fontsize(note.get_fontsize() - 0.5)
        bb = note.get_window_extent(renderer)
        note.set_horizontalalignment("left" if bb.x1 <= box.x1 else "right")
        note.xyann = (3, 0) if bb.x1 <= box.x1 else (-3, 0)
