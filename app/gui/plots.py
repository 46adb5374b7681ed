"""Live plots (pyqtgraph): energy components, relative energy error, linear and angular
momentum, with a labelled marker wherever the integrator or ``h`` was changed.

The plots only show what the worker sends (:class:`app.gui.worker.Frame`); the curves
are redrawn at a bounded rate (:meth:`PlotPanel.redraw`), peak-downsampled to the
visible range so that long runs stay fluid.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pyqtgraph.exporters
from PyQt6.QtCore import Qt, QTimer
from PyQt6.QtWidgets import QCheckBox, QHBoxLayout, QVBoxLayout, QWidget

from engine.layout import ENERGY_LABELS, ENERGY_NAMES, SIGNED_ENERGY

from ..scene import GHOST_COLOURS
from .worker import Frame, Loaded, Series

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
}
SIGNED_COMPONENTS = frozenset(SIGNED_ENERGY)
"""Potentials that go negative: drawn as lines beside the stacked (non-negative) areas."""
DISSIPATED = "dissipated"
"""The energy removed by impacts and friction (hard contacts): not a potential but the
work of the percussions, stacked on top (grey) so that the top stays at E₀."""
LEGEND_NAMES = {DISSIPATED: "dissipated D (impacts, friction)"}
CURSOR_MS = 300
"""Least interval between two moves of the plots' cursor line (see
:meth:`PlotPanel.set_cursor`)."""
FALLBACK_COLOURS = ("#7f7f7f", "#bcbd22", "#393b79", "#637939", "#8c6d31")


def energy_colour(name: str) -> str:
    """The colour of an energy component (a stable fallback for new components)."""
    if name in ENERGY_COLOURS:
        return ENERGY_COLOURS[name]
    return FALLBACK_COLOURS[sum(map(ord, name)) % len(FALLBACK_COLOURS)]


RUN_COLOURS = ("#1f77b4", *GHOST_COLOURS[:2])
"""Primary run, then the compare runs in the colours of their ghosts in the 3D view."""
AXIS_COLOURS = ("#d62728", "#2ca02c", "#1f77b4")  # x, y, z


def _light(hex_colour: str, white: float = 0.45) -> str:
    """An opaque, lighter shade (fills overlap: transparency would mix them)."""
    rgb = [int(hex_colour[k:k + 2], 16) for k in (1, 3, 5)]
    return "#" + "".join(f"{round(c + (255 - c) * white):02x}" for c in rgb)


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


class _RunData:
    def __init__(self) -> None:
        self.t = Grow()
        self.energy = Grow(len(ENERGY_NAMES))
        self.total = Grow()
        self.rel = Grow()
        self.P = Grow(3)
        self.L = Grow(3)


class TimedPlotWidget(pg.PlotWidget):
    """A PlotWidget that adds up the time spent painting it (``paint_seconds``), so the
    window can pace the redraws to what this machine can afford."""

    paint_seconds = 0.0

    def paintEvent(self, ev) -> None:  # noqa: N802 (Qt name)
        t0 = time.perf_counter()
        try:
            super().paintEvent(ev)
        finally:
            TimedPlotWidget.paint_seconds += time.perf_counter() - t0


class OutsideLegend(pg.LegendItem):
    """A legend in its own row of the plot's layout, below the axes — never over the
    data.  (A legend anchored inside the view box with a translucent white background
    washed out whatever it covered: the top right, i.e. the newest data of the stacked
    energy areas, looked lighter than the rest.)"""

    def __init__(self, **kwargs) -> None:
        super().__init__(offset=None, frame=False, **kwargs)
        self.layout.setContentsMargins(0, 0, 0, 0)

    def updateSize(self) -> None:  # noqa: N802 (pyqtgraph name)
        # in a layout: ask it for the room instead of setting our own geometry
        height = width = 0.0
        for row in range(self.layout.rowCount()):
            row_height = col_width = 0.0
            for col in range(self.layout.columnCount()):
                item = self.layout.itemAt(row, col)
                if item:
                    col_width += item.preferredWidth() + 3
                    row_height = max(row_height, item.preferredHeight())
            width = max(width, col_width)
            height += row_height
        self.setMinimumHeight(height)
        self.setMaximumHeight(height)
        self.setPreferredWidth(width)
        self.setMaximumWidth(max(width, 1.0))
        self.updateGeometry()


def _plot(title: str, left: str) -> pg.PlotWidget:
    w = TimedPlotWidget(background="w")
    p = w.getPlotItem()
    p.setTitle(title, color="#222", size="10pt")
    p.setLabel("left", left)
    p.setLabel("bottom", "t")
    # (no grid: on the raster engine it triples the cost of painting a plot)
    p.setDownsampling(auto=True, mode="peak")
    # (no clipToView: with linked, auto-ranged x axes it clips new data until a later
    # redraw; peak downsampling alone keeps 100k-point curves fluid)
    legend = OutsideLegend(labelTextSize="7pt", verSpacing=0, horSpacing=2)
    legend.setColumnCount(4)
    p.layout.addItem(legend, 4, 1, alignment=Qt.AlignmentFlag.AlignHCenter)
    p.layout.setRowSpacing(3, 0)
    p.legend = legend  # PlotItem.addItem puts each named curve in it
    return w


class PlotPanel(QWidget):
    """Energy components, relative energy error, momenta; see the module docstring."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        pg.setConfigOptions(antialias=False, foreground="#222")
        self.energy_plot = _plot("Energy components", "E")
        self.error_plot = _plot("Relative energy error (E − E₀)/|E₀|", "ΔE/|E₀|")
        self.P_plot = _plot("Linear momentum P", "P")
        self.L_plot = _plot("Angular momentum L (about the origin)", "L")
        self.plots = (self.energy_plot, self.error_plot, self.P_plot, self.L_plot)

        self.stacked = QCheckBox("stacked")
        self.stacked.setChecked(True)
        self.stacked.setToolTip("stack the non-negative components (areas); negative ones "
                                "(gravity) and the total are drawn as lines")
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

        self.loaded: Loaded | None = None
        self.runs: dict[str, _RunData] = {}
        self.markers: list[tuple[pg.PlotWidget, pg.InfiniteLine]] = []
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
        self.runs = {}
        self.events = []
        for w, line in self.markers:
            w.removeItem(line)
        self.markers = []
        self._rebuild_curves()

    def append(self, frame: Frame) -> None:
        """Add the frame's new rows; markers for its events."""
        for label, s in frame.series.items():
            if len(s.t) == 0:
                self.runs.setdefault(label, _RunData())
                continue
            d = self.runs.setdefault(label, _RunData())
            d.t.extend(s.t)
            d.energy.extend(s.energy)
            d.total.extend(s.total)
            d.rel.extend(s.rel_error)
            d.P.extend(s.P)
            d.L.extend(s.L)
            self._dirty = True
        for ev in frame.events:
            self.add_marker(ev)
        if set(self.runs) - {k for k in self._curves.get("error", {})}:
            self._rebuild_curves()

    def show_recording(self, series: dict[str, Series], events) -> None:
        """A recording: the whole series at once (after :meth:`reset`) and a marker for
        each recorded event, drawn as a live run's."""
        for label, s in series.items():
            d = self.runs.setdefault(label, _RunData())
            d.t.extend(s.t)
            d.energy.extend(s.energy)
            d.total.extend(s.total)
            d.rel.extend(s.rel_error)
            d.P.extend(s.P)
            d.L.extend(s.L)
        for ev in events:
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
                                   pen=pg.mkPen("#555", width=1, style=Qt.PenStyle.DashLine),
                                   label=ev.label if w is self.energy_plot else None,
                                   labelOpts={"position": 0.92, "color": "#333",
                                              "fill": (255, 255, 255, 200),
                                              "rotateAxis": (1, 0), "anchors": [(0, 0),
                                                                                (0, 0)]})
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

    # ------------------------------------------------------------------ drawing
    def _rebuild_curves(self) -> None:
        for w in self.plots:
            pi = w.getPlotItem()
            for item in list(pi.listDataItems()):
                pi.removeItem(item)
            if pi.legend is not None:
                pi.legend.clear()
        self._curves = {"energy": {}, "error": {}, "P": [], "L": []}
        if self.loaded is None:
            return
        names = self.loaded.energy_names
        ep = self.energy_plot
        # the legend is a row under the plot: as few lines as fit its width
        cols = 3 if DISSIPATED in names else 5 if len(names) >= 7 else 4  # (D: long label)
        ep.getPlotItem().legend.setColumnCount(cols)
        if self.stacked.isChecked():
            # cumulative sums, each filled down to 0; the lower ones drawn on top, so the
            # band between two curves shows the upper one's colour (no FillBetweenItem:
            # its polygons are not downsampled and cost O(rows) to paint)
            stack = [n for n in names if n not in SIGNED_COMPONENTS]
            stack.sort(key=lambda n: n == DISSIPATED)  # D on top of the stack
            for k, n in enumerate(stack):
                # D in neutral grey: energy that has left the system (a hatch pattern
                # would scale with the view's transform and paint solid)
                brush = pg.mkBrush(_light(energy_colour(n), 0.6 if n == DISSIPATED else 0.45))
                c = ep.plot([], [], pen=pg.mkPen(energy_colour(n), width=1),
                            name=LEGEND_NAMES.get(n, n), fillLevel=0.0, brush=brush)
                c.setZValue(len(stack) - k)
                self._curves["energy"][n] = c
            for n in names:
                if n in SIGNED_COMPONENTS:
                    g = ep.plot([], [], pen=pg.mkPen(energy_colour(n), width=2), name=n)
                    g.setZValue(len(stack) + 1)
                    self._curves["energy"][n] = g
        else:
            for n in names:
                pen = pg.mkPen(energy_colour(n), width=1.5)
                if n == DISSIPATED:
                    pen.setStyle(Qt.PenStyle.DashLine)
                self._curves["energy"][n] = ep.plot([], [], pen=pen,
                                                    name=LEGEND_NAMES.get(n, n))
        total = "total E + D" if DISSIPATED in names else "total"
        self._curves["total"] = ep.plot([], [], pen=pg.mkPen("k", width=2), name=total)
        self._curves["total"].setZValue(100)
        ep.getPlotItem().setToolTip("\n".join(f"{n}: {ENERGY_LABELS.get(n, n)}" for n in names))
        labels = list(self.runs) or ["energy"]
        for k, lab in enumerate(labels):
            name = lab if len(labels) > 1 else "ΔE/|E₀|"
            self._curves["error"][lab] = self.error_plot.plot(
                [], [], pen=pg.mkPen(RUN_COLOURS[k % len(RUN_COLOURS)], width=1.5), name=name)
        self.error_plot.getPlotItem().setLogMode(y=self.log_error.isChecked())
        self.error_plot.getPlotItem().setLabel(
            "left", "|ΔE|/|E₀|" if self.log_error.isChecked() else "ΔE/|E₀|")
        pre = "Δ" if self.drift.isChecked() else ""
        for k, c in enumerate("xyz"):
            self._curves["P"].append(self.P_plot.plot(
                [], [], pen=pg.mkPen(AXIS_COLOURS[k], width=1.5), name=f"{pre}P_{c}"))
            self._curves["L"].append(self.L_plot.plot(
                [], [], pen=pg.mkPen(AXIS_COLOURS[k], width=1.5), name=f"{pre}L_{c}"))
        self._dirty = True
        self.redraw()

    @property
    def dirty(self) -> bool:
        """New data not drawn yet."""
        return self._dirty

    def redraw(self) -> None:
        """Push the data to the curves (call at a bounded rate, e.g. 15 Hz)."""
        if not self._dirty or self.loaded is None or not self.runs:
            return
        self._dirty = False
        first = next(iter(self.runs.values()))
        k = _drawable_from(first.t.data)
        t = first.t.data[k:]
        e = first.energy.data[k:]
        if self.stacked.isChecked():  # (the curves were built for the current choice)
            acc = np.zeros_like(t)
            for n, c in self._curves["energy"].items():
                col = e[:, ENERGY_NAMES.index(n)]
                if n in SIGNED_COMPONENTS:
                    c.setData(t, col)
                    continue
                acc = acc + col
                c.setData(t, acc)
        else:
            for n, c in self._curves["energy"].items():
                c.setData(t, e[:, ENERGY_NAMES.index(n)])
        self._curves["total"].setData(t, first.total.data[k:])
        log = self.log_error.isChecked()
        for lab, c in self._curves["error"].items():
            d = self.runs.get(lab)
            if d is None:
                continue
            kd = _drawable_from(d.t.data)
            y = d.rel.data[kd:]
            if log:
                y = np.abs(y)
                y = np.where(y > 0, y, np.nan)  # log of 0: no point
            c.setData(d.t.data[kd:], y, connect="finite")
        P, L = first.P.data[k:], first.L.data[k:]
        if self.drift.isChecked() and len(P):
            P, L = P - first.P.data[0], L - first.L.data[0]
        for k in range(3):
            self._curves["P"][k].setData(t, P[:, k])
            self._curves["L"][k].setData(t, L[:, k])

    # ------------------------------------------------------------------ export
    def export_png(self, path: str | Path) -> list[Path]:
        """Write each plot as PNG: ``path`` with ``-energy``, ``-error``, ``-P``, ``-L``."""
        self.redraw()
        p = Path(path)
        out = []
        for w, tag in zip(self.plots, ("energy", "error", "P", "L"), strict=True):
            target = p.with_name(f"{p.stem}-{tag}.png")
            ex = pg.exporters.ImageExporter(w.getPlotItem())
            ex.parameters()["width"] = 1200
            ex.export(str(target))
            out.append(target)
        return out
