"""The main window's menus, file dialogs and remembered settings (issue #34: split out
of ``app/gui/main_window.py``).  :class:`MenusMixin` is a part of
:class:`app.gui.main_window.MainWindow` and uses its widgets and slots.
"""

from __future__ import annotations

from pathlib import Path

from PyQt6.QtCore import QByteArray
from PyQt6.QtGui import QAction, QActionGroup, QKeySequence
from PyQt6.QtWidgets import QFileDialog

from engine.integrators import INTEGRATORS

from ..scene import AXES_ALL_LIMIT, AXES_DETAILS, COLOUR_MODES
from .messages import LoadRequest

AXES_DETAIL_LABELS = {
    "auto": f"Automatic (all up to {AXES_ALL_LIMIT} bodies, else the inspected one)",
    "all": "All bodies",
    "inspected": "The inspected body only",
}
"""View → Axes detail: the menu's words for :data:`app.scene.AXES_DETAILS`."""


class MenusMixin:
    """The menu bar (File, Simulation, View), the file dialogs behind its entries and
    the settings a session remembers (scenario, scheme, h, colour, geometry)."""

    def _make_menus(self) -> None:
        fm = self.menuBar().addMenu("&File")
        self._add_action(fm, "&Open scenario file…", self.open_scenario_dialog,
                         QKeySequence.StandardKey.Open)
        self._add_action(fm, "Open &run (HDF5 recording)…", self.open_run_dialog,
                         "Ctrl+Shift+O")
        fm.addSeparator()
        self._add_action(fm, "Save &screenshot (PNG)…", self._screenshot_dialog, "Ctrl+Shift+S")
        self._add_action(fm, "Export &plots (PNG)…", self._plots_dialog)
        self._add_action(fm, "Export &data (CSV/HDF5)…", self._data_dialog, "Ctrl+E")
        self._add_action(fm, "Export &animation…", self.export_animation_dialog,
                         "Ctrl+Shift+E")
        fm.addSeparator()
        self._add_action(fm, "&Quit", self.close, QKeySequence.StandardKey.Quit)
        sm = self.menuBar().addMenu("&Simulation")
        self._add_action(sm, "Play / pause", lambda: self.controls.play.toggle(), "Space")
        self._add_action(sm, "Step", self.step, "S")
        self._add_action(sm, "Reset", self.reset, "R")
        sm.addSeparator()
        self.branch_action = self._add_action(sm, "&Continue from here", self.branch_here,
                                              "Ctrl+B")
        sm.addSeparator()
        from engine.parallel import max_threads

        tm = sm.addMenu("&Threads")
        tm.setToolTip("threads of the parallel force kernels (models of 4096 bodies or "
                      "more; the results do not depend on it)")
        group = QActionGroup(self)
        self.threads_actions: dict[int, QAction] = {}
        for n in range(max_threads() + 1):
            a = self._add_action(tm, f"All cores ({max_threads()})" if n == 0 else str(n),
                                 lambda k=n: self.set_threads(k))
            a.setCheckable(True)
            a.setChecked(n == self.threads)
            group.addAction(a)
            self.threads_actions[n] = a
        vm = self.menuBar().addMenu("&View")
        self._add_action(vm, "Reset camera", self.reset_camera, "Home")
        self.follow_action = self._add_action(vm, "&Follow the bodies", lambda: None, "F")
        self.follow_action.setCheckable(True)
        self.follow_action.toggled.connect(self.controls.follow.setChecked)
        self.controls.follow.toggled.connect(self.follow_action.setChecked)
        self.axes_action = self._add_action(vm, "Body &axes", lambda: None, "A")
        self.axes_action.setCheckable(True)
        self.axes_action.setChecked(True)
        self.axes_action.toggled.connect(self.controls.axes.setChecked)
        self.controls.axes.toggled.connect(self.axes_action.setChecked)
        sb = self.controls.axis_scale
        self._add_action(vm, "Longer axes", lambda: sb.setValue(sb.value() + sb.singleStep()),
                         "]")
        self._add_action(vm, "Shorter axes", lambda: sb.setValue(sb.value() - sb.singleStep()),
                         "[")
        dm = vm.addMenu("Axes &detail")
        dm.setToolTip("which bodies' axes are drawn (large models: the inspected one)")
        group = QActionGroup(self)
        self.axes_detail_actions: dict[str, QAction] = {}
        for mode in AXES_DETAILS:
            a = self._add_action(dm, AXES_DETAIL_LABELS[mode],
                                 lambda m=mode: self.set_axes_detail(m))
            a.setCheckable(True)
            a.setChecked(mode == self.axes_detail)
            group.addAction(a)
            self.axes_detail_actions[mode] = a
        cm = vm.addMenu("&Colour by")
        group = QActionGroup(self)
        self.colour_actions: dict[str, QAction] = {}
        combo = self.controls.colour
        for mode in COLOUR_MODES:
            a = self._add_action(cm, mode, lambda m=mode: combo.setCurrentText(m))
            a.setCheckable(True)
            a.setChecked(mode == combo.currentText())
            group.addAction(a)
            self.colour_actions[mode] = a
        combo.currentTextChanged.connect(
            lambda m: m in self.colour_actions and self.colour_actions[m].setChecked(True))
        vm.addSeparator()
        self._add_action(vm, "Clear trail", lambda: self.scene and self.scene.clear_trail())
        self._add_action(vm, "Stop inspecting", lambda: self.inspect(None), "Esc")

    def _add_action(self, menu, text, slot, shortcut=None) -> QAction:
        a = QAction(text, self)
        if shortcut is not None:
            a.setShortcut(QKeySequence(shortcut))
        a.triggered.connect(lambda _=False: slot())
        menu.addAction(a)
        return a

    def open_scenario_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open scenario", str(Path.home()),
                                              "Scenario files (*.toml)")
        if path:
            self.load(LoadRequest(path, {}, None, None))
        elif self.loaded is not None:
            self.controls.show_scenario(self.loaded.scenario, self.loaded.model.name,
                                        self.loaded.params, self.loaded.model)

    def open_run_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Open a recorded run", str(Path.cwd()),
            "Run files (*.h5 *.hdf5 *.partial);;All files (*)")
        if path:
            self.open_run(path)

    def _screenshot_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save screenshot", "rrp-studio.png",
                                              "PNG (*.png)")
        if path:
            try:
                self.save_screenshot(path)
                self.show_message(f"screenshot saved: {path}")
            except OSError as exc:
                self._show_banner(str(exc))

    def _plots_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export plots", "rrp-plots.png",
                                              "PNG (*.png)")
        if path:
            try:
                out = self.plots.export_png(path)
                self.show_message("plots saved: " + ", ".join(p.name for p in out))
            except Exception as exc:  # an unwritable place: say so, keep running
                self._show_banner(f"cannot export the plots: {exc}")

    def _data_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export data", "rrp-run.csv",
                                              "CSV (*.csv);;HDF5 (*.h5)")
        if path:
            self.request_save.emit(path)

    def _request_from_settings(self) -> LoadRequest:
        s = self.settings
        scenario = str(s.value("scenario", "torus"))
        integ = s.value("integrator", None)
        h = s.value("h", None)
        try:
            h = float(h) if h is not None else None
        except (TypeError, ValueError):
            h = None
        return LoadRequest(scenario, {}, str(integ) if integ in INTEGRATORS else None, h)

    def _restore_settings(self) -> None:
        geo = self.settings.value("geometry")
        if isinstance(geo, QByteArray) and not geo.isEmpty():
            self.restoreGeometry(geo)
        else:
            self.resize(1400, 860)
        colour = self.settings.value("colour")
        if colour:
            idx = self.controls.colour.findText(str(colour))
            if idx >= 0:
                self.controls.colour.setCurrentIndex(idx)
        self.request_speed.emit(self.controls.speed.value())

    def _save_choices(self) -> None:
        s = self.settings
        if self._request is not None:
            s.setValue("scenario", self._request.scenario)
        if self.last_frame is not None:
            s.setValue("integrator", self.last_frame.integrator)
            s.setValue("h", self.last_frame.h)
        elif self.loaded is not None:
            s.setValue("integrator", self.loaded.integrators[0])
            s.setValue("h", self.loaded.h)
        s.setValue("colour", self.controls.colour.currentText())
