"""The main window's 3D view and inspector (issue #34: split out of
``app/gui/main_window.py``): the view and its scene (:class:`app.scene.BodyScene`), the
camera, the display choices (colour, axes, follow, ghosts) and the picking of a body to
inspect.  :class:`ViewMixin` is a part of :class:`app.gui.main_window.MainWindow`.
"""

from __future__ import annotations

import numpy as np
from PyQt6.QtCore import Qt
from PyQt6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton

from ..scene import AXES_DETAILS, BodyScene
from ..scene.dipoles import FieldScene


class ViewMixin:
    """The 3D view, its scene and the inspector under it."""

    def _make_view(self):
        import pyvista as pv
        from pyvistaqt import QtInteractor

        pv.global_theme.multi_samples = 0
        view = QtInteractor(self, multi_samples=0, auto_update=False)
        view.setMinimumSize(320, 240)
        self._frame_pending = False  # see eventFilter
        view.installEventFilter(self)
        view.ren_win.AddObserver("EndEvent", self._count_render)
        # picking: a click (press and release without a drag) on a body inspects it;
        # observers, so the camera's own mouse handling stays as it is
        # (pyvista registers the release on the interactor style: the interactor itself
        # swallows it)
        view.iren.add_observer("LeftButtonPressEvent", self._on_view_press)
        view.iren.add_observer("LeftButtonReleaseEvent", self._on_view_release)
        return view

    def _make_inspector(self) -> QFrame:
        box = QFrame()
        box.setObjectName("inspector")
        box.setFrameShape(QFrame.Shape.StyledPanel)
        box.setStyleSheet("#inspector { background: #fffaf0; border-top: 2px solid #ffb000; }")
        lay = QHBoxLayout(box)
        lay.setContentsMargins(8, 4, 4, 4)
        self.inspector_text = QLabel()
        self.inspector_text.setObjectName("inspector_text")
        self.inspector_text.setTextFormat(Qt.TextFormat.RichText)
        self.inspector_text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        close = QToolButton()
        close.setText("×")
        close.setToolTip("stop inspecting (Esc)")
        close.clicked.connect(lambda: self.inspect(None))
        lay.addWidget(self.inspector_text, 1)
        lay.addWidget(close, 0, Qt.AlignmentFlag.AlignTop)
        box.hide()
        return box

    def _count_render(self, *_args) -> None:
        self.renders += 1

    def set_axes_detail(self, mode: str) -> None:
        """View → Axes detail: which bodies' axes are drawn (see
        :data:`app.scene.AXES_DETAILS`); remembered."""
        if mode not in AXES_DETAILS:
            raise ValueError(f"unknown axes detail {mode!r}")
        self.axes_detail = mode
        self.axes_detail_actions[mode].setChecked(True)
        self.settings.setValue("axes_detail", mode)
        if self.scene is not None:
            self.scene.set_axes_detail(mode)
            self.view.update()

    def reset_camera(self) -> None:
        """Fit the camera to the scene (also done on every scenario load)."""
        self._frame_pending = False
        if self.scene is not None:
            self.scene.reset_camera()
            self.view.update()

    def _view_has_size(self) -> bool:
        rw = self.view.ren_win  # (None once the view is closed: a timer after close)
        width, height = rw.GetSize() if rw is not None else (0, 0)
        return self.view.isVisible() and width > 1 and height > 1

    def _frame_if_pending(self) -> None:
        if self._frame_pending and self._view_has_size():
            self.reset_camera()

    def set_follow(self, on: bool) -> None:
        """View → Follow: the camera keeps the bodies' bounding box in view."""
        self.controls.follow.setChecked(bool(on))

    def inspect(self, body: int | None) -> None:
        """Show body ``body`` in the inspector (live, from the worker's frames) and
        highlight it in the view; ``None`` closes the inspector."""
        if self.scene is None or body is None or not 0 <= body < self.scene.n:
            body = None
        self.picked = body
        if self.scene is not None:
            self.scene.set_highlight(body)
            self.view.update()
        if body is None:
            self.inspector.hide()
        else:
            self.inspector_text.setText(f"body {body}: …")
            self.inspector.show()
        self.request_inspect.emit(-1 if body is None else int(body))

    def pick_at(self, x: float, y: float) -> int | None:
        """Inspect the body under the view's display point ``(x, y)`` (VTK pixels from
        the bottom left); a click on the background closes the inspector."""
        if self.scene is None:
            return None
        body = self.scene.pick(x, y)
        self.inspect(body)
        return body

    def _on_view_press(self, *_args) -> None:
        self._press_at = self.view.iren.interactor.GetEventPosition()

    def _on_view_release(self, *_args) -> None:
        at, self._press_at = self._press_at, None
        pos = self.view.iren.interactor.GetEventPosition()
        if at is not None and abs(pos[0] - at[0]) + abs(pos[1] - at[1]) <= 4:
            self.pick_at(*pos)

    def _make_scene(self, model, scenario: str) -> bool:
        """A new 3D scene of ``model`` in the view; returns whether it follows the bodies."""
        self.view.clear()
        try:
            self.view.clear_actors()
        except AttributeError:
            pass
        c = self.controls
        follow = self._follow_choice.get(scenario, model.pivot is None)
        groups = getattr(model, "groups", None)  # an assembly opens coloured by its groups
        if (c.colour.currentText() == "none" and groups is not None  # (issue #35)
                and np.unique(groups).shape[0] > 1):
            c.colour.blockSignals(True)
            c.colour.setCurrentIndex(c.colour.findText("body group"))
            c.colour.blockSignals(False)
            action = getattr(self, "colour_actions", {}).get("body group")
            if action is not None:
                action.setChecked(True)
        self.scene = BodyScene(self.view, model, colour_by=c.colour.currentText(),
                               trail=c.trail.isChecked(), axes=c.axes.isChecked(),
                               axis_scale=c.axis_scale.value(), follow=follow)
        self.scene.set_axes_detail(self.axes_detail)
        # the dipoles, the field and the stage (issue #44 item 7; None: the model has none)
        self.field_scene = FieldScene.for_model(self.view, model, self.scene.diameter)
        return follow

    def _update_fields(self, t: float, x, q, span=None) -> None:
        """Move the dipole and field arrows and the stage line to a state at ``t``."""
        if getattr(self, "field_scene", None) is not None:
            self.field_scene.update(t, x, q, span)

    def _show_follow(self, on: bool) -> None:
        """The Follow check box and menu entry show ``on`` (without acting on it)."""
        for w in (self.controls.follow, self.follow_action):
            w.blockSignals(True)
            w.setChecked(on)
            w.blockSignals(False)

    def _on_colour(self, mode: str) -> None:
        if self.scene is not None:
            self.scene.set_colour_by(mode)
            self.view.update()

    def _on_axes(self, on: bool) -> None:
        if self.scene is not None:
            self.scene.set_axes(on)
            self.view.update()

    def _on_axis_scale(self, scale: float) -> None:
        if self.scene is not None and scale > 0:
            self.scene.set_axis_scale(scale)
            self.view.update()

    def _on_follow(self, on: bool) -> None:
        if self._request is not None:
            self._follow_choice[self._request.scenario] = bool(on)
        if self.scene is not None:
            self.scene.set_follow(on)
            self.view.update()

    def _on_ghosts(self, on: bool) -> None:
        if self.scene is None:
            return
        if on and self.last_frame is not None:
            self.scene.set_ghosts(self.last_frame.ghosts)
        else:
            self.scene.set_ghosts([])
        self.view.update()
