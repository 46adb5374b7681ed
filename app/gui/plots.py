"""Live plots (pyqtgraph): energy components, relative energy error, linear and angular
momentum, with a labelled marker wherever the integrator or ``h`` was changed.  Under an
event-driven scheme (energy-stepping) the error plot also shows the terrace gap
``V − V_ε`` in the same units (dashed): ``E − E₀`` is the gap's change, since ``T + V_ε``
is constant (physics.md §3.10); the curve is absent for runs that never used it.

The plots only show what the worker sends (:class:`app.gui.worker.Frame`); the curves
are redrawn at a bounded rate (:meth:`PlotPanel.redraw`), and what is handed to them is
decimated first (:func:`decimate`: the rows in the visible time range, at most
:data:`MAX_BUCKETS` min/max pairs per curve), so that 10⁶ recorded samples cost a
redraw what a few thousand do; pyqtgraph's own peak downsampling stays on as well.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pyqtgraph.exporters
from PyQt6.QtCore import Qt, QTimer
from PyQt6.QtWidgets import QCheckBox, QHBoxLayout, QVBoxLayout, QWidget

from engine.diagnostics import INVARIANT_NAMES, model_invariant_names
from engine.layout import ENERGY_LABELS, ENERGY_NAMES, SIGNED_ENERGY
from engine.models.field_view import dissipation_sources
from engine.simulation.breaking import BREAK_EVENT

from ..plot_style import (
    AXIS_COLOURS,
    DISSIPATED,
    GAP_COLOUR,
    GAP_LABEL,
    RUN_COLOURS,
    SCALE_NOTE,
    energy_colour,
    error_labels,
    legend_name,
    light,
    peak_decimate,
    stack_bands,
    stack_order,
)
from .plot_items import MarkerLabel, plot_widget
from .worker import Frame, Loaded, Series

SIGNED_COMPONENTS = frozenset(SIGNED_ENERGY)
"""Potentials that may go negative: the bottom of the stack (:func:`app.plot_style.stack_order`),
from 0 to their sum, the non-negative areas stacked on it."""
CURSOR_MS = 300
"""Least interval between two moves of the plots' cursor line (see
:meth:`PlotPanel.set_cursor`)."""
LEGEND_FREE = 140
"""A plot's share of the panel's height is this plus its legend's height (pixels, as
weights): its title, axes and plotting area, then the legend."""
MAX_BUCKETS = 2000
"""Most time buckets a curve is decimated to (:func:`decimate`): each gives its minimum
and its maximum, so a curve gets at most ``2 * MAX_BUCKETS`` points — about twice the
pixels of a wide plot, so nothing visible is lost."""


def _visible_rows(t: np.ndarray, t_range: tuple[float, float] | None) -> tuple[int, int]:
    """Rows ``[a, b)`` of the ascending times ``t`` within ``t_range`` and one beyond each
    end (all rows for ``None``)."""
    n = len(t)
    if t_range is None or not n:
        return 0, n
    a = max(int(np.searchsorted(t, t_range[0], side="left")) - 1, 0)
    b = min(int(np.searchsorted(t, t_range[1], side="right")) + 1, n)
    return a, b


def decimate(t: np.ndarray, y: np.ndarray, t_range: tuple[float, float] | None = None,
             buckets: int = MAX_BUCKETS) -> tuple[np.ndarray, np.ndarray]:
    """Peak decimation of the rows ``(t, y)`` (``t`` ascending; ``y`` of shape ``(n,)`` or
    ``(n, k)``) for drawing: the rows within ``t_range`` (all if ``None``; one row beyond
    each end is kept, so lines leave the view) split into at most ``buckets`` runs of
    equal row counts, each drawn as its minimum and maximum (in the columns separately)
    at the times of the run's first and last rows.  Every extreme of every run is kept:
    a one-sample spike still shows.  At most ``2 * buckets`` points; fewer rows than
    that are returned as they are (NaNs included)."""
    a, b = _visible_rows(t, t_range)
    t, y = t[a:b], y[a:b]
    return peak_decimate(t, y, buckets)


_light = light


def _drawable_from(t: np.ndarray) -> int:
    """The first row to draw: all of them, unless the rows span no visible time (say
    ``h = 1e-300`` from t = 0): pyqtgraph's auto-downsampling assumes evenly spaced x
    and divides the view's width by the mean spacing — ~10³⁰⁰ rows per pixel, a crash
    in ``reshape`` — so such a run draws its last row only (they all sit at one t)."""
    n = len(t)
    if n > 1 and not (t[-1] - t[0]) > 1e-12 * max(1.0, abs(float(t[-1]))):
        return n - 1
    return 0


class Grow:
    """An append-only numpy buffer (amortised O(1) appends)."""

    def __init__(self, width: int = 0) -> None:
        self.width = width
        self._a = np.zeros((1024, width) if width else 1024)
        self.n = 0

    def extend(self, rows: np.ndarray) -> None:
        k = len(rows)
        if self.n + k > len(self._a):
            cap = max(2 * len(self._a), self.n + k)
            b = np.zeros((cap, self.width) if self.width else cap)
            b[: self.n] = self._a[: self.n]
            self._a = b
        self._a[self.n: self.n + k] = rows
        self.n += k

    @property
    def data(self) -> np.ndarray:
        return self._a[: self.n]


def _stack(cols: list[np.ndarray], a: int, b: int) -> np.ndarray:
    """Rows ``a:b`` of the columns as one ``(b - a, k)`` array."""
    out = np.empty((max(b - a, 0), len(cols)))
    for j, c in enumerate(cols):
        out[:, j] = c[a:b]
    return out


class PeakCache:
    """Incremental :func:`decimate` of an append-only series over all its rows: buckets
    of ``size`` rows (a power of two, doubled — by merging neighbours — whenever the
    series outgrows ``buckets`` of them), the minimum and maximum of every column kept
    for each complete bucket.  A redraw then costs the new rows and the ``2 * buckets``
    output points, not the whole series (10⁶ samples: milliseconds instead of the
    ~0.4 s of decimating everything again)."""

    def __init__(self, buckets: int = MAX_BUCKETS) -> None:
        self.buckets = int(buckets)
        self.size = 1
        self.done = 0  # rows summarised in complete buckets
        self.lo: np.ndarray | None = None  # (nb, k)
        self.hi: np.ndarray | None = None
        self.t0 = np.zeros(0)  # time of each bucket's first and last row
        self.t1 = np.zeros(0)

    def get(self, t: np.ndarray, cols: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """The decimated ``(t, y)``, ``y`` of shape ``(·, k)`` for the ``k`` columns
        ``cols``; ``t`` and the columns are the whole series so far, the previous call's
        rows unchanged at their start (only the new rows are read)."""
        n = len(t)
        if n <= 2 * self.buckets:
            return t, _stack(cols, 0, n)
        k = len(cols)
        if self.lo is None:
            self.lo, self.hi = np.zeros((0, k)), np.zeros((0, k))
        while n > self.buckets * self.size:  # coarser buckets: merge pairs
            m = len(self.t0) // 2
            self.lo = np.fmin(self.lo[0:2 * m:2], self.lo[1:2 * m:2])
            self.hi = np.fmax(self.hi[0:2 * m:2], self.hi[1:2 * m:2])
            self.t0, self.t1 = self.t0[0:2 * m:2], self.t1[1:2 * m:2]
            self.size *= 2
            self.done = m * self.size
        s = self.size
        full = (n // s) * s
        if full > self.done:  # the new complete buckets
            blk = _stack(cols, self.done, full).reshape(-1, s, k)
            self.lo = np.concatenate([self.lo, np.fmin.reduce(blk, axis=1)])
            self.hi = np.concatenate([self.hi, np.fmax.reduce(blk, axis=1)])
            self.t0 = np.concatenate([self.t0, t[self.done:full:s]])
            self.t1 = np.concatenate([self.t1, t[self.done + s - 1:full:s]])
            self.done = full
        lo, hi, t0, t1 = self.lo, self.hi, self.t0, self.t1
        if full < n:  # the incomplete last bucket
            tail = _stack(cols, full, n)
            lo = np.concatenate([lo, np.fmin.reduce(tail, axis=0)[None]])
            hi = np.concatenate([hi, np.fmax.reduce(tail, axis=0)[None]])
            t0, t1 = np.append(t0, t[full]), np.append(t1, t[-1])
        tt = np.empty(2 * len(t0))
        tt[0::2], tt[1::2] = t0, t1
        yy = np.empty((2 * len(t0), k))
        yy[0::2], yy[1::2] = lo, hi
        return tt, yy


class _RunData:
    def __init__(self, stack: tuple[int, ...] = (), n_invariants: int = 0) -> None:
        self.t = Grow()
        self.energy = Grow(len(ENERGY_NAMES))
        self.total = Grow()
        self.rel = Grow()
        self.P = Grow(3)
        self.L = Grow(3)
        self.inv = Grow(max(n_invariants, 1))
        """The model's invariants (:attr:`PlotPanel.invariant_names`), NaN where a
        series has none (a recording)."""
        self.stack_columns = stack
        """The energy columns stacked (in order): :attr:`stacked` holds their bands'
        outer edges then their inner ones (:func:`app.plot_style.stack_bands`), row by
        row, computed as rows arrive (not at every redraw)."""
        self.stacked = Grow(max(2 * len(stack), 1))
        self.caches: dict[str, PeakCache] = {}
        self.gap = Grow()
        """``(V − V_ε)/E_scale`` of an event-driven scheme's rows, NaN in the others."""
        self.has_gap = False

    def extend(self, s: Series) -> None:
        """Append a series' new rows."""
        self.t.extend(s.t)
        self.energy.extend(s.energy)
        self.total.extend(s.total)
        self.rel.extend(s.rel_error)
        self.P.extend(s.P)
        self.L.extend(s.L)
        gap = getattr(s, "terrace_gap", None)
        if gap is not None and np.isfinite(gap).any():
            self.has_gap = True
        self.gap.extend(gap if gap is not None else np.full(len(s.t), np.nan))
        inv = getattr(s, "invariants", None)
        self.inv.extend(inv if inv is not None and inv.shape[1] == self.inv.width
                        else np.full((len(s.t), self.inv.width), np.nan))
        if self.stack_columns:
            inner, outer = stack_bands(np.asarray(s.energy)[:, list(self.stack_columns)])
            self.stacked.extend(np.concatenate([outer, inner], axis=1))
        else:
            self.stacked.extend(np.zeros((len(s.t), 1)))

    def peaks(self, key: str, cols: list[np.ndarray], first: int,
              t_range: tuple[float, float] | None) -> tuple[np.ndarray, np.ndarray]:
        """:func:`decimate` of the columns ``cols`` (rows from ``first`` on) against
        time, as ``(t, y)`` with ``y`` of shape ``(·, len(cols))``: from the incremental
        :class:`PeakCache` ``key`` when all rows are shown (``t_range`` ``None``)."""
        t = self.t.data
        if t_range is not None or first:
            a, b = _visible_rows(t[first:], t_range)
            return decimate(t[first + a:first + b], _stack(cols, first + a, first + b))
        return self.caches.setdefault(key, PeakCache()).get(t, cols)


def error_title(energy_names: list[str] | tuple[str, ...], scale: str = "|E₀|"
                ) -> tuple[str, str]:
    """Title of the relative energy error plot and the quantity whose change it shows:
    of a dissipative run (impacts, friction: a ``dissipated`` component D) it is
    ``E + D`` (what the percussions conserve), not ``E``; divided by ``scale``
    (``Loaded.energy_scale``: ``|E₀|``, or ``E_s`` for a model at rest, issue #42
    item 1)."""
    return error_labels(DISSIPATED in energy_names, scale)


class PlotPanel(QWidget):
    """Energy components, relative energy error, momenta; see the module docstring."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        pg.setConfigOptions(antialias=False, foreground="#222")
        self.energy_plot = plot_widget("Energy components", "E")
        self.error_plot = plot_widget("Relative energy error (E − E₀)/|E₀|", "ΔE/|E₀|")
        self.P_plot = plot_widget("Linear momentum P", "P")
        self.L_plot = plot_widget("Angular momentum L (about the origin)", "L")
        self.plots = (self.energy_plot, self.error_plot, self.P_plot, self.L_plot)

        self.stacked = QCheckBox("stacked")
        self.stacked.setChecked(True)
        self.stacked.setToolTip("stack the components as areas, gravity at the bottom (from "
                                "0, below 0 when negative): the top of the stack is the "
                                "total")
        self.log_error = QCheckBox("log |ΔE|")
        self.log_error.setToolTip("logarithmic axis of |relative energy error|")
        self.drift = QCheckBox("drift c(t) − c(0)")
        self.drift.setChecked(True)
        self.drift.setToolTip("plot each momentum component's change since t = 0: the "
                              "conserved ones stay at round-off")
        for cb in (self.stacked, self.log_error, self.drift):
            cb.toggled.connect(self._rebuild_curves)

        opts = QHBoxLayout()
        opts.setContentsMargins(4, 0, 4, 0)
        for cb in (self.stacked, self.log_error, self.drift):
            opts.addWidget(cb)
        opts.addStretch(1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        lay.addLayout(opts)
        for w in self.plots:
            lay.addWidget(w, 1)
        for w in self.plots[1:]:
            w.setXLink(self.energy_plot)
        # a zoom or pan needs the visible rows decimated anew
        self.energy_plot.getPlotItem().getViewBox().sigXRangeChanged.connect(
            self._on_x_range)
        self._decimated_for: tuple[float, float] | None = None
        self.points_handed = 0
        """Points handed to the curves by the last :meth:`redraw` (all curves)."""

        self.loaded: Loaded | None = None
        self.runs: dict[str, _RunData] = {}
        self.invariant_names: tuple[str, ...] = ()
        """The model's invariants plotted instead of ``P`` (the pendulum's, which has no
        translation: ``P ≡ 0``), keys of :data:`engine.diagnostics.INVARIANT_NAMES`."""
        self.markers: list[tuple[pg.PlotWidget, pg.InfiniteLine]] = []
        self._fills: list = []
        """The stacked bands' items apart from their curves (``FillBetweenItem``, inner
        edges); :attr:`_shadows`: each inner edge as ``(column, PlotCurveItem)``."""
        self._shadows: list[tuple[int, pg.PlotCurveItem]] = []
        self.events: list = []
        self._curves: dict = {}
        self._dirty = False
        self.cursors: list[pg.InfiniteLine] = []
        for w in self.plots:  # the shown instant of a recording (hidden while live)
            c = pg.InfiniteLine(pos=0.0, angle=90, movable=False,
                                pen=pg.mkPen("#ffb000", width=2))
            c.setZValue(1000)
            c.hide()
            w.addItem(c, ignoreBounds=True)
            self.cursors.append(c)
        self._cursor_target: float | None = None
        self._cursor_pending = False
        self._cursor_timer = QTimer(self)
        self._cursor_timer.setSingleShot(True)
        self._cursor_timer.setInterval(CURSOR_MS)
        self._cursor_timer.timeout.connect(self._cursor_tick)

    # ------------------------------------------------------------------ data
    def reset(self, loaded: Loaded) -> None:
        """A new scenario or a reset: clear everything."""
        self.loaded = loaded
        ff = getattr(loaded.model, "forcefield", None)
        self.invariant_names = () if ff is None else model_invariant_names(ff)
        self.runs = {}
        self.events = []
        for w, line in self.markers:
            w.removeItem(line)
        self.markers = []
        self._rebuild_curves()

    def append(self, frame: Frame) -> None:
        """Add the frame's new rows; markers for its events."""
        for label, s in frame.series.items():
            d = self.runs.get(label)
            if d is None:
                d = self.runs[label] = _RunData(self._stack_columns(), len(self.invariant_names))
            if len(s.t) == 0:
                continue
            d.extend(s)
            self._dirty = True
        for ev in frame.events:  # (a broken bond: in the broken energy, no marker)
            if ev.kind != BREAK_EVENT:
                self.add_marker(ev)
        if set(self.runs) - {k for k in self._curves.get("error", {})} or \
                {k for k, d in self.runs.items() if d.has_gap} - set(self._curves.get("gap", {})):
            self._rebuild_curves()

    def gap_curve_labels(self) -> list[str]:
        """Labels of the terrace-gap curves shown (one per run that used energy-stepping)."""
        return list(self._curves.get("gap", {}))

    def show_recording(self, series: dict[str, Series], events) -> None:
        """A recording: the whole series at once (after :meth:`reset`) and a marker for
        each recorded event, drawn as a live run's."""
        for label, s in series.items():
            d = self.runs.get(label)
            if d is None:
                d = self.runs[label] = _RunData(self._stack_columns(), len(self.invariant_names))
            d.extend(s)
        if self.invariant_names and all(np.isnan(d.inv.data).all() for d in self.runs.values()):
            self.invariant_names = ()  # a file holds P, not the invariants: plot P
        for ev in events:
            if ev.kind != BREAK_EVENT:
                self.add_marker(ev)
        self._rebuild_curves()
        for w in self.plots:
            w.getPlotItem().enableAutoRange()

    def set_cursor(self, t: float | None) -> None:
        """The vertical line at the shown time of a recording (``None``: hide it).

        Paced to :data:`CURSOR_MS`: moving the line repaints all four plots (~60 ms
        under Xvfb), which at every slider move halved the 3D view's frame rate while
        scrubbing (10 instead of 26 fps on the torus); the last position is always
        drawn (a trailing update)."""
        self._cursor_target = t
        if t is None:
            self._cursor_timer.stop()
            self._apply_cursor()
            return
        if not self._cursor_timer.isActive():
            self._apply_cursor()
            self._cursor_timer.start()
        else:
            self._cursor_pending = True

    def _apply_cursor(self) -> None:
        self._cursor_pending = False
        t = self._cursor_target
        for c in self.cursors:
            if t is None:
                c.hide()
            else:
                c.setValue(t)
                c.show()

    def _cursor_tick(self) -> None:
        if self._cursor_pending:
            self._apply_cursor()
            self._cursor_timer.start()

    @property
    def cursor_t(self) -> float | None:
        c = self.cursors[0]
        return float(c.value()) if c.isVisible() else None

    def add_marker(self, ev) -> None:
        self.events.append(ev)
        for w in self.plots:
            line = pg.InfiniteLine(pos=ev.t, angle=90, movable=False,
                                   pen=pg.mkPen("#555", width=1, style=Qt.PenStyle.DashLine))
            line.setZValue(150)  # (over the stacked areas, as in the export)
            if w is self.energy_plot:
                line.label = MarkerLabel(line, ev.label)
            line.setToolTip(f"t = {ev.t:.6g}, step {ev.step}: {ev.label}")
            w.addItem(line)
            self.markers.append((w, line))

    @property
    def n_markers(self) -> int:
        """Number of change events marked (each has a line in every plot)."""
        return len(self.events)

    def energy_curve_labels(self) -> list[str]:
        """Labels of the relative-energy-error curves (one per run in compare mode)."""
        return list(self._curves.get("error", {}))

    def _stack_order(self) -> list[str]:
        """The stacked components, bottom first: the signed ones (gravity), the others,
        the dissipated energy on top (:func:`app.plot_style.stack_order`)."""
        if self.loaded is None:
            return []
        return stack_order(self.loaded.energy_names)

    def _stack_columns(self) -> tuple[int, ...]:
        return tuple(ENERGY_NAMES.index(n) for n in self._stack_order())

    # ------------------------------------------------------------------ drawing
    def _rebuild_curves(self) -> None:
        for w in self.plots:
            pi = w.getPlotItem()
            for item in list(pi.listDataItems()):
                pi.removeItem(item)
            if pi.legend is not None:
                pi.legend.clear()
        for item in self._fills:
            self.energy_plot.getPlotItem().removeItem(item)
        self._fills, self._shadows = [], []
        self._curves = {"energy": {}, "error": {}, "P": [], "L": [], "gap": {}}
        if self.loaded is None:
            return
        names = self.loaded.energy_names
        ep = self.energy_plot
        if self.stacked.isChecked():
            self._stack_curves(ep)
        else:
            for n in names:
                pen = pg.mkPen(energy_colour(n), width=1.5)
                if n == DISSIPATED:
                    pen.setStyle(Qt.PenStyle.DashLine)
                self._curves["energy"][n] = ep.plot([], [], pen=pen,
                                                    name=self._legend_name(n))
        total = "total E + D" if DISSIPATED in names else "total"
        self._curves["total"] = ep.plot([], [], pen=pg.mkPen("k", width=2), name=total)
        self._curves["total"].setZValue(100)
        ep.getPlotItem().setToolTip("\n".join(f"{n}: {ENERGY_LABELS.get(n, n)}" for n in names))
        scale = self.loaded.energy_scale
        title, err = error_title(names, scale)
        self.error_plot.setTitle(title, color="#222", size="10pt")
        self.error_plot.getPlotItem().setToolTip(SCALE_NOTE if scale != "|E₀|" else "")
        labels = list(self.runs) or ["energy"]
        for k, lab in enumerate(labels):
            name = lab if len(labels) > 1 else f"{err}/{scale}"
            self._curves["error"][lab] = self.error_plot.plot(
                [], [], pen=pg.mkPen(RUN_COLOURS[k % len(RUN_COLOURS)], width=1.5), name=name)
            # above the terrace gap of an energy-stepping run (dashed, drawn at z = 10),
            # which can fill the plot with its band: the scheme's own error stays in view
            self._curves["error"][lab].setZValue(20)  # (issue #33 item 6)
        for lab in labels:
            d = self.runs.get(lab)
            if d is None or not d.has_gap:
                continue
            pen = pg.mkPen(GAP_COLOUR, width=1.5, style=Qt.PenStyle.DashLine)
            name = f"{GAP_LABEL}/{scale}" if len(labels) == 1 else f"V − V_ε ({lab})"
            c = self.error_plot.plot([], [], pen=pen, name=name)
            c.setZValue(10)
            self._curves["gap"][lab] = c
        self.error_plot.getPlotItem().setLogMode(y=self.log_error.isChecked())
        self.error_plot.getPlotItem().setLabel(
            "left", f"|{err}|/{scale}" if self.log_error.isChecked() else f"{err}/{scale}")
        pre = "Δ" if self.drift.isChecked() else ""
        for k, name in enumerate(self._first_plot_names()):
            self._curves["P"].append(self.P_plot.plot(
                [], [], pen=pg.mkPen(AXIS_COLOURS[k], width=1.5), name=f"{pre}{name}"))
        for k, c in enumerate("xyz"):
            self._curves["L"].append(self.L_plot.plot(
                [], [], pen=pg.mkPen(AXIS_COLOURS[k], width=1.5), name=f"{pre}L_{c}"))
        self._fit_legends()
        self._dirty = True
        self.redraw()

    def _fit_legends(self) -> None:
        """Each legend in as few rows as the plot's width allows, and each plot's share
        of the height grown by its legend's, so that the plotting areas stay alike (a
        legend of four rows took ~60 % of the energy plot)."""
        lay = self.layout()
        for w in self.plots:
            legend = w.getPlotItem().legend
            legend.fit_columns(max(w.width() - 40, 100))
            share = int(LEGEND_FREE + legend.minimumHeight())
            if lay.stretch(lay.indexOf(w)) != share:
                lay.setStretchFactor(w, share)

    def resizeEvent(self, ev) -> None:  # noqa: N802 (Qt name)
        super().resizeEvent(ev)
        self._fit_legends()

    def _legend_name(self, n: str) -> str:
        """``n``'s legend label (D's names what dissipates in this model)."""
        try:
            return legend_name(n, dissipation_sources(self.loaded.model))
        except AttributeError:  # (no model: a recording of a moved file)
            return legend_name(n, ("impacts", "friction", "damping"))

    def _stack_curves(self, ep: pg.PlotWidget) -> None:
        """The stacked energy plot (:func:`app.plot_style.stack_bands`, issue #44 item
        7): each component's band from its inner edge (a hidden curve in
        :attr:`_shadows`) to its outer one (its curve), a ``FillBetweenItem``."""
        stack = self._stack_order()
        pi = ep.getPlotItem()
        m = len(stack)
        for k, n in enumerate(stack):  # (D in neutral grey: energy that has left)
            brush = pg.mkBrush(_light(energy_colour(n), 0.6 if n == DISSIPATED else 0.45))
            signed = n in SIGNED_COMPONENTS
            c = ep.plot([], [], pen=pg.mkPen(energy_colour(n), width=2 if signed else 1),
                        name=self._legend_name(n))
            c.setZValue(40 + m - k)
            inner = pg.PlotCurveItem(pen=pg.mkPen(None))
            inner.setVisible(False)
            pi.addItem(inner)
            # (columns handed to redraw: the outer edges, the total, the inner edges)
            self._shadows.append((m + 1 + k, inner))
            self._fills.append(inner)
            fill = pg.FillBetweenItem(inner, c, brush=brush)
            fill.setZValue(1 + k)
            c.area_brush = brush  # (its legend sample shows the band's colour)
            # (a click on the sample hides the curve: its band too)
            c.visibleChanged.connect(lambda c=c, f=fill: f.setVisible(c.isVisible()))
            pi.addItem(fill)
            self._fills.append(fill)
            self._curves["energy"][n] = c

    def _first_plot_names(self) -> list[str]:
        """Retitle the momentum plot for the model and name its curves: the invariants
        of a model that has some instead of ``P``."""
        inv = self.invariant_names
        if inv:
            symbols = [INVARIANT_NAMES[n] for n in inv]
            self.P_plot.setTitle(f"Invariants {', '.join(symbols)} (P ≡ 0: no translation)",
                                 color="#222", size="10pt")
            self.P_plot.getPlotItem().setLabel("left", "Ω component")
            return symbols
        self.P_plot.setTitle("Linear momentum P", color="#222", size="10pt")
        self.P_plot.getPlotItem().setLabel("left", "P")
        return [f"P_{c}" for c in "xyz"]

    def _view_t_range(self) -> tuple[float, float] | None:
        """The time range to decimate for: ``None`` (all rows) while the x axis follows
        the data (auto range), else the visible range."""
        vb = self.energy_plot.getPlotItem().getViewBox()
        if vb.autoRangeEnabled()[0]:
            return None
        x0, x1 = vb.viewRange()[0]
        return float(x0), float(x1)

    def _on_x_range(self, *_args) -> None:
        if self._view_t_range() != self._decimated_for:
            self._dirty = True

    @property
    def dirty(self) -> bool:
        """New data not drawn yet."""
        return self._dirty

    def redraw(self) -> None:
        """Push the data to the curves (call at a bounded rate, e.g. 15 Hz)."""
        if not self._dirty or self.loaded is None or not self.runs:
            return
        self._dirty = False
        rng = self._decimated_for = self._view_t_range()
        handed = 0
        first = next(iter(self.runs.values()))
        k = _drawable_from(first.t.data)
        curves = self._curves["energy"]
        # the energy plot's columns (stacked: the running sums kept per row), decimated
        # together: they share their times
        inner = []
        if self.stacked.isChecked():  # (the curves were built for the current choice)
            order = self._stack_order()
            cols = [first.stacked.data[:, order.index(n)] if n in order
                    else first.energy.data[:, ENERGY_NAMES.index(n)] for n in curves]
            inner = [first.stacked.data[:, len(order) + order.index(n)] for n in order]
            key = "stacked"
        else:
            cols = [first.energy.data[:, ENERGY_NAMES.index(n)] for n in curves]
            key = "energy"
        cols.append(first.total.data)
        cols += inner
        td, yd = first.peaks(key, cols, k, rng)
        for j, c in enumerate([*curves.values(), self._curves["total"]]):
            c.setData(td, yd[:, j])
            handed += len(td)
        for j, fill in self._shadows:
            fill.setData(td, yd[:, j])
        log = self.log_error.isChecked()
        for lab, c in self._curves["error"].items():
            d = self.runs.get(lab)
            if d is None:
                continue
            kd = _drawable_from(d.t.data)
            td, y = d.peaks("error", [d.rel.data], kd, rng)
            y = y[:, 0]
            if log:
                y = np.abs(y)
                y = np.where(y > 0, y, np.nan)  # log of 0: no point
            c.setData(td, y, connect="finite")
            handed += len(td)
        for lab, c in self._curves["gap"].items():
            d = self.runs.get(lab)
            if d is None:
                continue
            td, y = d.peaks("gap", [d.gap.data], _drawable_from(d.t.data), rng)
            y = y[:, 0]
            if log:
                y = np.abs(y)
                y = np.where(y > 0, y, np.nan)
            c.setData(td, y, connect="finite")
            handed += len(td)
        P = first.inv.data if self.invariant_names else first.P.data
        L = first.L.data
        m = len(self._curves["P"])
        td, yd = first.peaks("PL", [*P[:, :m].T, *L.T], k, rng)
        if self.drift.isChecked() and len(P):  # (a shift commutes with min and max)
            yd = yd - np.concatenate([P[0, :m], L[0]])
        for j, c in enumerate([*self._curves["P"], *self._curves["L"]]):
            c.setData(td, yd[:, j], connect="finite")
            handed += len(td)
        self.points_handed = handed

    def drawn_points(self) -> dict[str, int]:
        """Points each shown curve draws now (after pyqtgraph's own downsampling and
        clipping), by a label ``plot:curve``: what painting costs."""
        out: dict[str, int] = {}
        for tag, w in zip(("energy", "error", "P", "L"), self.plots, strict=True):
            for j, item in enumerate(w.getPlotItem().listDataItems()):
                if item.isVisible():  # (hidden: not painted, e.g. a band's inner edge)
                    x, _ = item.getData()
                    out[f"{tag}:{item.name() or j}"] = 0 if x is None else len(x)
        return out

    # ------------------------------------------------------------------ export
    def export_png(self, path: str | Path) -> list[Path]:
        """Write each plot as PNG: ``path`` with ``-energy``, ``-error``, ``-P``, ``-L``;
        each whole or absent (issue #46 item 2: a write error is
        :class:`~engine.io.atomic.OutputError`, one line)."""
        import errno

        from engine.io.atomic import AtomicOutput

        self.redraw()
        p = Path(path)
        out = []
        for w, tag in zip(self.plots, ("energy", "error", "P", "L"), strict=True):
            target = p.with_name(f"{p.stem}-{tag}.png")
            ex = pg.exporters.ImageExporter(w.getPlotItem())
            ex.parameters()["width"] = 1200
            with AtomicOutput(target) as ao:
                if ex.export(str(ao.tmp)) is False or not ao.tmp.stat().st_size:
                    raise OSError(errno.EIO, "the plot could not be written")
                ao.commit()
            out.append(target)
        return out
