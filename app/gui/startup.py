"""What the window shows while a scenario is being loaded (issue #33 item 8).

On a cold start the worker compiles for most of a minute; before this module the window
showed meanwhile the combo boxes' first items ("dumbbells", "rrp-exact", an empty h), a
blank view and no status.  :class:`LoadStatus` fills them from the request itself, in
the GUI thread and before the worker has built anything (a scenario file is read, no
model is built, no kernel compiled): the panel shows the scenario, scheme and ``h``
being loaded, the view says so, and the status bar says what is being built, one step
per kernel group (:mod:`app.gui.kernel_stages`), with the seconds so far and, when the
last cold start of the same load was timed, an estimate of what is left.

The estimate is kept in the window's settings (``cold_start/<scenario>|<scheme>|<steps>``:
the seconds of each step of the last load that took :data:`COLD_SECONDS` or more).

The status line is an :class:`ElidedLabel` (issue #42 item 7: the line with its estimate
ran off the status bar): elided in the middle to the room it has, so that what is loaded
(its start) and the time left (its end) stay in view, the whole line in its tooltip.
The bar shows progress from the start: with an estimate, the share of the last cold
start's time that this one has reached (time-based: the first step alone was ~30 s of
an empty bar); without one, a busy bar until the first step is done, then the steps
done.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from PyQt6.QtCore import QSize, Qt, QTimer
from PyQt6.QtGui import QPainter
from PyQt6.QtWidgets import QLabel, QSizePolicy

from engine.integrators import get_integrator

COLD_SECONDS = 3.0
"""A load that takes this long compiled kernels: its steps' times are kept as the next
cold start's estimate (a warm load takes a fraction of a second)."""
VIEW_TEXT = "rrp-loading"
"""Name of the view's text actor while a scenario is loaded."""


BAR_STEPS = 1000
"""The bar's range while it follows an estimate (per mille of the estimated time)."""


class ElidedLabel(QLabel):
    """A one-line label that never asks for more width than it is given: its text is
    drawn elided in the middle to its width (:meth:`shown_text`); :meth:`text` stays
    the whole line."""

    def __init__(self, text: str = "") -> None:
        super().__init__(text)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt name)
        return QSize(0, super().minimumSizeHint().height())

    def shown_text(self) -> str:
        """What is drawn: the text, elided in the middle to the label's width."""
        return self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideMiddle,
                                             self.contentsRect().width())

    def paintEvent(self, ev) -> None:  # noqa: N802 (Qt name)
        p = QPainter(self)
        p.setPen(self.palette().color(self.foregroundRole()))
        p.drawText(self.contentsRect(), int(self.alignment().value), self.shown_text())
        p.end()


@dataclass(frozen=True)
class Announced:
    """A load request resolved from its scenario file alone (no model, no kernel)."""

    scenario: str
    title: str
    model: str
    params: dict[str, Any]
    integrator: str
    h: float
    compare: tuple[str, ...] = ()

    def line(self) -> str:
        """The status bar's words for it."""
        schemes = " vs ".join((self.integrator, *self.compare))
        return f"loading {self.title} with {schemes}, h = {self.h:g}"


def resolve(request) -> Announced | None:
    """``request`` (:class:`~app.gui.worker.LoadRequest`) with the scenario's defaults
    filled in: its scheme and ``h`` unless the request names them; ``None`` when the
    scenario cannot be read (the worker then says why, in its own words)."""
    from engine.scenarios import ScenarioError, load_scenario

    try:
        sc = load_scenario(request.scenario, request.overrides or None)
    except (ScenarioError, OSError, ValueError):
        return None
    return Announced(request.scenario, sc.title, sc.model, dict(sc.params),
                     request.integrator or sc.run.integrator,
                     float(sc.run.h if request.h is None else request.h),
                     tuple(c for c in request.compare if c))


def known(name: str) -> bool:
    """Whether ``name`` names a scheme (a parametrised one too)."""
    try:
        get_integrator(name)
    except (KeyError, ValueError):
        return False
    return True


class LoadStatus:
    """The panel, the view's caption and the status bar of ``window`` (the main window:
    its ``controls``, ``view``, ``status``, ``build_bar`` and ``settings``) from a load
    request until the worker's ``loaded`` (or its refusal)."""

    def __init__(self, window) -> None:
        self.w = window
        self.announced: Announced | None = None
        self.loading = False
        """A load was announced and neither loaded nor refused yet."""
        self.line = ""
        self.stage_text = ""
        self.steps: list[float] = []  # when each step started (perf_counter)
        self.n = 0
        self.t0 = 0.0
        self.estimate: list[float] | None = None
        self.timer = QTimer(window)
        self.timer.setInterval(1000)
        self.timer.timeout.connect(self._show)

    @property
    def active(self) -> bool:
        return self.t0 > 0.0

    # ------------------------------------------------------------------ events
    def announce(self, request) -> None:
        """A load was asked for: show what is being loaded, at once."""
        a = self.announced = resolve(request)
        self.loading = True
        self.t0 = time.perf_counter()
        self.steps, self.n, self.estimate = [], 0, None
        self.stage_text = "reading the scenario…"
        c = self.w.controls
        if a is not None:
            self.line = a.line()
            c.show_scenario(a.scenario, a.model, a.params)
            if known(a.integrator):
                c.show_scheme(a.integrator)  # (else the worker says why, and what runs)
            c.show_h(a.h)
        else:
            self.line = f"loading {request.scenario}"
        self.w.build_bar.setRange(0, 0)  # busy until the first step is known
        self.w.build_bar.show()
        self._caption(f"{self.line}…")
        self._show()
        self.timer.start()

    def progress(self, k: int, n: int, text: str) -> None:
        """The worker started step ``k`` of ``n`` (``n = 0``: busy, no steps)."""
        if not self.active:  # (a switch's kernels, after the load)
            self.t0 = time.perf_counter()
            self.steps, self.n, self.estimate = [], 0, None
            self.line = ""
            self.timer.start()
        if n and n != self.n:
            self.n, self.steps = n, []
            self.estimate = self._stored()
        if n:
            self.steps.append(time.perf_counter())
        self.w.build_bar.show()
        self.stage_text = text
        self._show()

    def state(self, text: str) -> None:
        """The worker's state text while compiling."""
        if self.active:
            self.stage_text = text
            self._show()
        else:
            self.w.status.setText(text)

    def finished(self, ok: bool = True) -> None:
        """The load ended (``loaded``, or refused): keep its steps' times when it was a
        cold start, clear the caption."""
        self.loading = False
        if not self.active:
            return
        total = time.perf_counter() - (self.steps[0] if self.steps else self.t0)
        if ok and self.n > 0 and len(self.steps) == self.n and total >= COLD_SECONDS:
            ends = [*self.steps[1:], time.perf_counter()]
            secs = [round(e - s, 2) for s, e in zip(self.steps, ends, strict=True)]
            self.w.settings.setValue(self._key(), json.dumps(secs))
        self.t0 = 0.0
        self.timer.stop()
        self.w.status.setToolTip("")
        self._caption(None)

    # ------------------------------------------------------------------ internals
    def _key(self) -> str:
        a = self.announced
        what = f"{a.scenario}|{a.integrator}" if a is not None else "?"
        return f"cold_start/{what}|{self.n}"

    def _stored(self) -> list[float] | None:
        try:
            secs = json.loads(str(self.w.settings.value(self._key(), "")))
        except (TypeError, ValueError):
            return None
        if isinstance(secs, list) and len(secs) == self.n and all(
                isinstance(s, int | float) for s in secs):
            return [float(s) for s in secs]
        return None

    def text(self) -> str:
        """The status line: what is loaded, the step being built, the time so far and
        what is left by the last cold start's times (when known)."""
        now = time.perf_counter()
        parts = [p for p in (self.line, self.stage_text) if p]
        msg = " — ".join(parts)
        if self.steps:
            spent = now - self.steps[0]
            msg += f" {spent:.0f} s so far"
            left = self.left()
            if left is not None:
                msg += (f", about {left:.0f} s left (the last cold start took "
                        f"{sum(self.estimate):.0f} s)")
        return msg

    def left(self) -> float | None:
        """The seconds left by the last cold start's times (``None``: not known)."""
        est = self.estimate
        if est is None or not self.steps:
            return None
        k = len(self.steps)
        return (max(0.0, est[k - 1] - (time.perf_counter() - self.steps[-1]))
                + sum(est[k:]))

    def fraction(self) -> float | None:
        """How far the build has come by the estimate (the last cold start's time of
        each step: the steps done, and the time in this one, at most 95 % of its
        estimate), or ``None`` without an estimate."""
        est = self.estimate
        if est is None or not self.steps or not sum(est) > 0:
            return None
        k = len(self.steps)
        now = time.perf_counter()
        done = sum(est[:k - 1]) + min(now - self.steps[-1], 0.95 * est[k - 1])
        return min(done / sum(est), 1.0)

    def _bar(self) -> None:
        """The bar: the share of the estimate (at least 2 %) with the seconds left on
        it, else the steps done, busy while none is."""
        bar = self.w.build_bar
        share = self.fraction()
        bar.setTextVisible(share is not None)
        if share is not None:
            bar.setRange(0, BAR_STEPS)
            bar.setValue(max(int(share * BAR_STEPS), BAR_STEPS // 50))
            left = self.left()
            bar.setFormat(f"~{left:.0f} s left" if left >= 0.5 else "finishing…")
        elif self.n and len(self.steps) > 1:
            bar.setRange(0, self.n)
            bar.setValue(len(self.steps) - 1)
        else:
            bar.setRange(0, 0)  # (busy)

    def _show(self) -> None:
        if self.active:
            line = self.text()
            self.w.status.setText(line)
            self.w.status.setToolTip(line)
            if self.loading or self.n:
                self._bar()

    def _caption(self, text: str | None) -> None:
        """The view's caption while nothing of the new scenario is drawn (removed when
        the scene is made, or by ``None``)."""
        view = self.w.view
        try:
            if text is None:
                view.remove_actor(VIEW_TEXT, render=False)
            else:
                view.add_text(text, position="upper_left", font_size=11, color="#333333",
                              name=VIEW_TEXT, render=False)
            view.update()
        except (AttributeError, RuntimeError):  # (a view being closed)
            pass
