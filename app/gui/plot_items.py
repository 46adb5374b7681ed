"""The pyqtgraph pieces the live plots are built of (split out of ``app.gui.plots``):
a plot widget that times its painting, the legend below the axes with its stacked-band
samples, the change markers' labels, and :func:`plot_widget` that puts them together."""

from __future__ import annotations

import time

import pyqtgraph as pg
from PyQt6.QtCore import QPointF, Qt
from PyQt6.QtGui import QPolygonF


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


class AreaSample(pg.ItemSample):
    """A legend sample that shows a stacked band's fill when another item paints it
    (the curve's ``area_brush``), as the samples of curves filled to 0 show theirs."""

    def paint(self, p, *args) -> None:
        super().paint(p, *args)
        brush = getattr(self.item, "area_brush", None)
        if brush is not None and self.item.isVisible():
            p.setBrush(brush)
            p.setPen(pg.mkPen(self.item.opts["pen"]))
            p.drawPolygon(QPolygonF([QPointF(2, 18), QPointF(18, 2), QPointF(18, 18)]))


class OutsideLegend(pg.LegendItem):
    """A legend in its own row of the plot's layout, below the axes — never over the
    data.  (A legend anchored inside the view box with a translucent white background
    washed out whatever it covered: the top right, i.e. the newest data of the stacked
    energy areas, looked lighter than the rest.)"""

    def __init__(self, **kwargs) -> None:
        super().__init__(offset=None, frame=False, sampleType=AreaSample, **kwargs)
        self.layout.setContentsMargins(0, 0, 0, 0)

    def fit_columns(self, width: float, most: int = 6) -> int:
        """As many columns (up to ``most``) as fit ``width`` pixels: the fewest rows, so
        that the legend leaves the plot its height (issue #42 item 7: with gravity and
        D, three columns made four rows, and the energy plot a strip of ~30 pixels)."""
        samples = [sample.preferredWidth() + 3 for sample, _ in self.items]
        labels = [label.preferredWidth() + 3 for _, label in self.items]
        ncol = 1
        for n in range(min(most, len(labels)), 0, -1):
            if sum(max(samples[c::n]) + max(labels[c::n]) for c in range(n)) <= width:
                ncol = n
                break
        self.setColumnCount(ncol)
        return ncol

    def updateSize(self) -> None:  # noqa: N802 (pyqtgraph name)
        # in a layout: ask it for the room instead of setting our own geometry
        # (the grid's columns are as wide as their widest item: a sum over the columns,
        # not the widest row — that left a long label's row running off the plot)
        height = 0.0
        widths = [0.0] * self.layout.columnCount()
        for row in range(self.layout.rowCount()):
            row_height = 0.0
            for col in range(self.layout.columnCount()):
                item = self.layout.itemAt(row, col)
                if item:
                    widths[col] = max(widths[col], item.preferredWidth() + 3)
                    row_height = max(row_height, item.preferredHeight())
            height += row_height
        width = sum(widths)
        self.setMinimumHeight(height)
        self.setMaximumHeight(height)
        self.setPreferredWidth(width)
        self.setMaximumWidth(max(width, 1.0))
        self.updateGeometry()


class MarkerLabel(pg.InfLineLabel):
    """A change marker's label: horizontal, hanging from the top of the plot beside its
    line — right of it where the text fits in the plot, else left of it (issue #42 item
    7: rotated along the line from 92 % of its height, it ran out of the plot's top and
    was hidden)."""

    def __init__(self, line: pg.InfiniteLine, text: str) -> None:
        super().__init__(line, text=text, position=0.98, anchors=[(0, 0), (1, 0)],
                         color="#333", fill=(255, 255, 255, 210))

    def updatePosition(self) -> None:  # noqa: N802 (pyqtgraph name)
        super().updatePosition()
        vb = self.getViewBox()
        if vb is None or not hasattr(vb, "viewRange"):
            return
        (x0, x1), width = vb.viewRange()[0], vb.width()
        x = (self.line.value() - x0) / (x1 - x0) * width if x1 > x0 else 0.0
        fits = x + self.textItem.boundingRect().width() + 2 <= width
        self.setAnchor((0, 0) if fits else (1, 0))


def plot_widget(title: str, left: str) -> pg.PlotWidget:
    """A white plot titled ``title`` with ``left`` on its y axis, peak downsampling and
    an :class:`OutsideLegend` in its own row below the axes."""
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
