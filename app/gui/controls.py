"""The control panel: scenario and its parameters, integrator (and compare runs), time
step with the stability estimate beside it, play/pause/step/reset, speed, view options.

Widgets only: it emits what the user asked for; the window passes it to the worker.
"""

from __future__ import annotations

import json
import math
from typing import Any

from PyQt6.QtCore import Qt, pyqtSignal
from PyQt6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from engine.integrators import INTEGRATORS, get_integrator
from engine.models import get_model_spec
from engine.models.base import Param, ParameterError
from engine.models.law_view import BINDER_PARAMS, binder_unused, bond_laws, law_items
from engine.run_steps import check_run_step
from engine.scenarios import builtin_scenarios
from engine.simulation import SimulationError, integrator_for, usable_integrators

from ..scene import COLOUR_MODES

OPEN_FILE = "Open scenario file…"
NO_COMPARE = "—"


def integrator_tooltip(name: str) -> str:
    """The picker's tooltip of ``name``; a name the registry refuses (a recording made
    with ``energy-stepping:REL`` below today's floor, issue #33 item 3) gets its one-line
    reason instead of an exception."""
    try:
        info = get_integrator(name)
    except KeyError as exc:
        return str(exc.args[0])
    cost = ("event-driven: h is the recording interval, the scheme chooses its own steps"
            if info.event_driven else
            f"{info.force_evaluations} force evaluation(s) per step")
    return (f"<b>{info.title}</b> ({info.reference})<br>{info.properties()}<br>"
            f"{info.notes}<br>{cost}")


def integrator_properties(name: str) -> str:
    """The one-line properties shown under the scheme picker (a parametrised name, e.g.
    ``energy-stepping:1e-3``, with its parameter; a refused name: its one-line reason)."""
    try:
        info = get_integrator(name)
    except KeyError as exc:
        return str(exc.args[0])
    if info.event_driven:
        return f"ε = {info.eps_rel:g} × energy scale · {info.properties()}"
    return info.properties()


def _family(name: str) -> str:
    """The registry entry a parametrised name belongs to (``energy-stepping:1e-3`` →
    ``energy-stepping``; others: the name itself)."""
    base = name.split(":")[0]
    return base if base in INTEGRATORS and not name.startswith("yoshida4:") else name


def _canon(values: dict[str, Any]) -> str:
    """``values`` as comparable text (lists, tuples and arrays alike)."""
    return json.dumps(values, sort_keys=True,
                      default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o))


def _fmt(value: Any) -> str:
    if isinstance(value, list | tuple):
        return "[" + ", ".join(f"{float(c):g}" for c in value) + "]"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


class ParameterForm(QWidget):
    """Editors generated from a model's parameter schema (engine.models.base.Param)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.form = QFormLayout(self)
        self.form.setContentsMargins(0, 0, 0, 0)
        self.form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.editors: dict[str, tuple[Param, QWidget]] = {}
        self.law_rows: dict[str, QLabel] = {}
        """The read-only rows of the bond types' BPM laws, by type."""
        self.base: dict[str, Any] = {}
        self._shown: tuple | None = None  # (schema, values) the editors were built for
        self._shown_texts: list = []

    def set_schema(self, schema: tuple[Param, ...], values: dict[str, Any],
                   hidden: tuple[str, ...] = (),
                   laws: dict[str, dict[str, Any]] | None = None) -> None:
        """Editors for ``schema`` showing ``values``; ``hidden``: parameters not offered
        (a BPM-only model's binder coefficients, which act on no bond); ``laws``: the
        bond types' BPM laws, shown read-only under them (issue #44 item 7)."""
        key = (schema, _canon(values), hidden, _canon(laws or {}))
        if key == self._shown and self._texts() == self._shown_texts:
            return  # (shown and unedited: the load's preview after its announcement need
            # not rebuild the editors, which blinked empty: issue #33 item 8)
        self._shown = key
        while self.form.rowCount():
            self.form.removeRow(0)
        self.editors = {}
        self.base = dict(values)
        for p in schema:
            if p.kind == "text" or p.name in hidden:  # (not edited here: an assembly's
                continue  # geometry, issue #35; coefficients acting on no bond, #44.7)
            v = values.get(p.name, p.default)
            if p.kind == "bool":
                w: QWidget = QCheckBox()
                w.setChecked(bool(v))
            elif p.kind == "choice":
                w = QComboBox()
                for c in p.choices:
                    w.addItem(c, c)
                w.setCurrentIndex(max(0, w.findData(v)))
            elif p.kind == "int":
                w = QSpinBox()
                w.setRange(int(p.lo) if p.lo is not None else -2**31 + 1,
                           int(min(p.hi, 2**31 - 1)) if p.hi is not None else 2**31 - 1)
                w.setValue(int(v))
            else:
                w = QLineEdit(_fmt(v))
            tip = p.doc + (f" [{p.unit}]" if p.unit else "")
            rng = p.describe_range()
            w.setToolTip(tip + (f"; range {rng}" if rng else ""))
            w.setObjectName(f"param_{p.name}")
            self.form.addRow(p.name, w)
            self.editors[p.name] = (p, w)
        self.law_rows = {}
        for t, law in sorted((laws or {}).items()):
            text = ", ".join(f"{k} = {_fmt(v)}" for k, v in law_items(law))
            w = QLabel(f"{law.get('law', '?')}: {text}")
            w.setWordWrap(True)
            w.setObjectName(f"law_{t}")
            w.setToolTip(f"bond type {t}'s law and coefficients, from the scenario's "
                         f"[bond_types.{t}] (read-only here: edit the scenario file)")
            self.form.addRow(f"bond type {t}", w)
            self.law_rows[t] = w
        self._shown_texts = self._texts()

    def _texts(self) -> list:
        """What the editors show now (to tell an edited form from the one built)."""
        out: list = []
        for _, w in self.editors.values():
            if isinstance(w, QCheckBox):
                out.append(w.isChecked())
            elif isinstance(w, QComboBox):
                out.append(w.currentData())
            elif isinstance(w, QSpinBox):
                out.append(w.value())
            else:
                out.append(w.text())
        return out

    def values(self) -> dict[str, Any]:
        """The edited values, checked against the schema; :class:`ParameterError` names
        the first bad key."""
        out = {}
        for name, (p, w) in self.editors.items():
            if isinstance(w, QCheckBox):
                raw: Any = w.isChecked()
            elif isinstance(w, QSpinBox):
                raw = w.value()
            elif isinstance(w, QComboBox):
                raw = w.currentData()
            else:
                raw = _parse_value(w.text(), p)
            out[name] = p.coerce(raw)
        return out

    def overrides(self) -> dict[str, Any]:
        """Only the values that differ from the scenario's own."""
        vals = self.values()
        return {k: v for k, v in vals.items() if self.base.get(k) != v}


def _parse_value(text: str, p: Param) -> Any:
    import tomllib

    t = text.strip()
    try:
        return tomllib.loads(f"v = {t}")["v"]
    except tomllib.TOMLDecodeError:
        raise ParameterError(f"{p.name}: {t!r} is not a valid "
                             f"{'list of three numbers' if p.kind == 'vec3' else 'number'}"
                             ) from None


class ControlPanel(QWidget):
    """See the module docstring.  Signals carry plain values."""

    scenario_chosen = pyqtSignal(str)  # built-in name, or "" for "open a file"
    apply_parameters = pyqtSignal()  # rebuild with the edited parameters (a reset)
    integrator_chosen = pyqtSignal(str)
    h_entered = pyqtSignal(float)
    h_invalid = pyqtSignal(str)
    play_toggled = pyqtSignal(bool)
    step_clicked = pyqtSignal()
    reset_clicked = pyqtSignal()
    speed_changed = pyqtSignal(int)
    compare_changed = pyqtSignal()
    colour_changed = pyqtSignal(str)
    trail_toggled = pyqtSignal(bool)
    axes_toggled = pyqtSignal(bool)
    axis_scale_changed = pyqtSignal(float)
    follow_toggled = pyqtSignal(bool)
    ghosts_toggled = pyqtSignal(bool)
    record_toggled = pyqtSignal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.h_limit = math.inf
        self.t_end: float | None = None
        """The loaded scenario's end time: :meth:`parse_h` refuses a step that could not
        reach it, as ``rrp run`` does (``None``: the engine's rule alone)."""
        self._blocking = False
        self.usable: list[str] = list(INTEGRATORS)
        """The schemes that can drive the loaded model (:meth:`allow_integrators`)."""

        # scenario ---------------------------------------------------------------
        self.scenario = QComboBox()
        self.scenario.setObjectName("scenario")
        for name in builtin_scenarios():
            self.scenario.addItem(name, name)
        self.scenario.addItem(OPEN_FILE, "")
        self.scenario.activated.connect(self._on_scenario)
        self.params = ParameterForm()
        self.apply_params = QPushButton("Apply parameters (reset)")
        self.apply_params.setToolTip("rebuild the scenario with these parameters; the run "
                                     "restarts from t = 0")
        self.apply_params.clicked.connect(self.apply_parameters)
        self.param_error = QLabel()
        self.param_error.setWordWrap(True)
        self.param_error.setStyleSheet("color: #b00020")
        self.param_error.hide()
        sc_box = QGroupBox("Scenario")
        v = QVBoxLayout(sc_box)
        v.addWidget(self.scenario)
        v.addWidget(self.params)
        v.addWidget(self.apply_params)
        v.addWidget(self.param_error)

        # integrator ---------------------------------------------------------------
        self.integrator = QComboBox()
        self.integrator.setObjectName("integrator")
        for name in INTEGRATORS:
            self.integrator.addItem(name, name)
            self.integrator.setItemData(self.integrator.count() - 1,
                                        integrator_tooltip(name),
                                        Qt.ItemDataRole.ToolTipRole)
        self.integrator.activated.connect(self._on_integrator)
        self.integrator_props = QLabel()
        self.integrator_props.setWordWrap(True)
        self.integrator_props.setStyleSheet("color: #555")
        self.compare = [QComboBox(), QComboBox()]
        for k, cb in enumerate(self.compare):
            cb.setObjectName(f"compare{k + 1}")
            cb.addItem(NO_COMPARE, "")
            for name in INTEGRATORS:
                cb.addItem(name, name)
            cb.activated.connect(lambda _i: self.compare_changed.emit())
        self.ghosts = QCheckBox("show compare runs as ghosts")
        self.ghosts.setChecked(True)
        self.ghosts.toggled.connect(self.ghosts_toggled)
        in_box = QGroupBox("Integrator")
        f = QFormLayout(in_box)
        f.addRow("scheme", self.integrator)
        f.addRow(self.integrator_props)
        f.addRow("compare", self.compare[0])
        f.addRow("and", self.compare[1])
        f.addRow(self.ghosts)

        # time step ----------------------------------------------------------------
        self.h_edit = QLineEdit()
        self.h_edit.setObjectName("h")
        self.h_edit.setToolTip("time step h; Enter or Apply changes it at the next chunk, "
                               "the state carries over")
        self.h_edit.returnPressed.connect(self._on_h)
        self.h_edit.textEdited.connect(self._check_h_text)
        self.h_apply = QPushButton("Apply")
        self.h_apply.clicked.connect(self._on_h)
        self.h_current = QLabel()
        self.stability = QLabel("stability limit: —")
        self.stability.setWordWrap(True)
        self.h_message = QLabel()
        self.h_message.setWordWrap(True)
        self.h_message.hide()
        self.h_message_level = ""
        h_box = QGroupBox("Time step h")
        hv = QVBoxLayout(h_box)
        row = QHBoxLayout()
        row.addWidget(self.h_edit, 1)
        row.addWidget(self.h_apply)
        hv.addLayout(row)
        hv.addWidget(self.h_current)
        hv.addWidget(self.stability)
        hv.addWidget(self.h_message)

        # run ----------------------------------------------------------------------
        self.play = QPushButton("▶ Play")
        self.play.setObjectName("play")
        self.play.setCheckable(True)
        self.play.toggled.connect(self._on_play)
        self.step = QPushButton("Step")
        self.step.setToolTip("one step (while paused)")
        self.step.clicked.connect(self.step_clicked)
        self.reset = QPushButton("Reset")
        self.reset.setToolTip("back to t = 0 with the current parameters")
        self.reset.clicked.connect(self.reset_clicked)
        self.speed = QSpinBox()
        self.speed.setRange(1, 100_000)
        self.speed.setValue(20)
        self.speed.setSuffix(" steps/frame")
        self.speed.setToolTip("steps per frame (≈ 60 frames a second while the machine "
                              "keeps up); the status bar shows the real-time factor")
        self.speed.valueChanged.connect(self.speed_changed)
        self.record = QPushButton("● Record")
        self.record.setCheckable(True)
        self.record.setToolTip("record the 3D view to an MP4 or GIF file")
        self.record.toggled.connect(self.record_toggled)
        run_box = QGroupBox("Run")
        rv = QVBoxLayout(run_box)
        r1 = QHBoxLayout()
        for b in (self.play, self.step, self.reset):
            r1.addWidget(b)
        rv.addLayout(r1)
        r2 = QHBoxLayout()
        r2.addWidget(self.speed, 1)
        r2.addWidget(self.record)
        rv.addLayout(r2)

        # view ---------------------------------------------------------------------
        self.colour = QComboBox()
        self.colour.setObjectName("colour")
        self.colour.addItems(COLOUR_MODES)
        self.colour.currentTextChanged.connect(self.colour_changed)
        self.trail = QCheckBox("trail of the pendulum bob")
        self.trail.setChecked(True)
        self.trail.toggled.connect(self.trail_toggled)
        self.axes = QCheckBox("body axes")
        self.axes.setObjectName("axes")
        self.axes.setChecked(True)
        self.axes.setToolTip("each body's frame: e₁ red, e₂ green, e₃ blue (the columns "
                             "of its attitude R)")
        self.axes.toggled.connect(self.axes_toggled)
        self.axis_scale = QDoubleSpinBox()
        self.axis_scale.setObjectName("axis_scale")
        self.axis_scale.setRange(0.25, 5.0)
        self.axis_scale.setSingleStep(0.25)
        self.axis_scale.setDecimals(2)
        self.axis_scale.setValue(1.0)
        self.axis_scale.setPrefix("length × ")
        self.axis_scale.setToolTip("axes length, relative to the body (its diameter, a "
                                   "dumbbell's reach, a pendulum's arm)")
        self.axis_scale.valueChanged.connect(self.axis_scale_changed)
        self.axes.toggled.connect(self.axis_scale.setEnabled)
        self.follow = QCheckBox("follow the bodies")
        self.follow.setObjectName("follow")
        self.follow.setToolTip("the camera keeps the bodies' bounding box in view as they "
                               "move (View → Follow); on by default where they fly off")
        self.follow.toggled.connect(self.follow_toggled)
        view_box = QGroupBox("View")
        vf = QFormLayout(view_box)
        vf.addRow("colour by", self.colour)
        axes_row = QHBoxLayout()
        axes_row.addWidget(self.axes)
        axes_row.addWidget(self.axis_scale, 1)
        vf.addRow(axes_row)
        vf.addRow(self.follow)
        vf.addRow(self.trail)

        inner = QWidget()
        lay = QVBoxLayout(inner)
        lay.setContentsMargins(4, 4, 4, 4)
        for box in (sc_box, in_box, h_box, run_box, view_box):
            lay.addWidget(box)
        lay.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidget(inner)
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)
        self.setMinimumWidth(290)

    # ------------------------------------------------------------------ setters
    def show_scenario(self, scenario: str, model_name: str, params: dict[str, Any],
                      model: Any = None) -> None:
        """Show ``scenario`` and its parameters; with its built ``model``, a BPM-only
        model's binder coefficients hidden and its bond laws shown read-only
        (``engine.models.law_view``; issue #44 item 7)."""
        idx = self.scenario.findData(scenario)
        if idx < 0:  # a file: keep it in the list
            idx = self.scenario.count() - 1
            self.scenario.insertItem(idx, scenario.rsplit("/", 1)[-1], scenario)
            self.scenario.setItemData(idx, scenario, Qt.ItemDataRole.ToolTipRole)
        self.scenario.setCurrentIndex(idx)
        hidden = BINDER_PARAMS if model is not None and binder_unused(model) else ()
        self.params.set_schema(get_model_spec(model_name).schema, params, hidden,
                               bond_laws(model) if model is not None else None)
        self.param_error.hide()

    def allow_integrators(self, model) -> None:
        """Grey out exactly the schemes that cannot drive ``model`` (the engine's
        :func:`~engine.simulation.usable_integrators`), in the scheme and compare pickers;
        a greyed-out scheme's tooltip is the engine's one-line reason."""
        usable = set(usable_integrators(model))
        reasons: dict[str, str] = {}
        for name in INTEGRATORS:
            if name in usable:
                continue
            try:
                integrator_for(model, name)
            except SimulationError as exc:
                reasons[name] = str(exc)
            else:  # (an alias the engine accepts after all)
                usable.add(name)
        self.usable = [n for n in INTEGRATORS if n in usable]
        for cb in (self.integrator, *self.compare):
            model_ = cb.model()
            for i in range(cb.count()):
                name = cb.itemData(i)
                if not name:
                    continue
                ok = name in usable or _family(name) in usable
                model_.item(i).setEnabled(ok)
                if not ok:
                    why = reasons.get(name) or reasons.get(_family(name))
                    cb.setItemData(i, why or f"{name} cannot drive this model",
                                   Qt.ItemDataRole.ToolTipRole)
                else:
                    cb.setItemData(i, integrator_tooltip(name), Qt.ItemDataRole.ToolTipRole)

    def offers(self, name: str) -> bool:
        """Whether ``name`` (a parametrised one too) can drive the loaded model."""
        return name in self.usable or _family(name) in self.usable

    def ensure_integrator(self, name: str) -> None:
        """Add a parametrised scheme (``energy-stepping:1e-3``, ``campello-implicit:0.3``:
        from the command line or a recording) to the pickers if it is not there."""
        for cb in (self.integrator, *self.compare):
            if name and cb.findData(name) < 0:
                cb.addItem(name, name)
                cb.setItemData(cb.count() - 1, integrator_tooltip(name),
                               Qt.ItemDataRole.ToolTipRole)

    def show_scheme(self, name: str) -> None:
        """The scheme picker and its properties show ``name``."""
        self.ensure_integrator(name)
        self.integrator.setCurrentIndex(self.integrator.findData(name))
        self.integrator_props.setText(integrator_properties(name))

    def show_integrators(self, names: list[str]) -> None:
        self.show_scheme(names[0])
        for k, cb in enumerate(self.compare):
            if k + 1 < len(names):
                self.ensure_integrator(names[k + 1])
            cb.setCurrentIndex(cb.findData(names[k + 1]) if k + 1 < len(names) else 0)

    def show_h(self, h: float) -> None:
        self.h_current.setText(f"current h = {h:g}")
        if not self.h_edit.hasFocus() or not self.h_edit.text():
            self.h_edit.setText(f"{h:g}")
            self._check_h_text(self.h_edit.text())

    def show_stability(self, h_limit: float, text: str, h_accurate: float = math.inf,
                       accuracy_text: str = "") -> None:
        """The stability estimate and the accuracy guide (the engine's
        ``StabilityEstimate.describe()`` and ``describe_accuracy()``)."""
        self.h_limit = h_limit
        self.h_accurate = h_accurate
        self.stability.setText(f"{text}\n{accuracy_text}" if accuracy_text else text)
        self._check_h_text(self.h_edit.text())

    def set_playing(self, on: bool) -> None:
        self._blocking = True
        self.play.setChecked(on)
        self.play.setText("❚❚ Pause" if on else "▶ Play")
        self.step.setEnabled(not on)
        self._blocking = False

    def compare_integrators(self) -> list[str]:
        return [cb.currentData() for cb in self.compare if cb.currentData()]

    def show_h_message(self, text: str, level: str) -> None:
        """``level``: "error" (refused), "warning" (beyond the estimate), "note" (e.g. a
        scheme replaced by one that can drive the model); empty ``text`` hides it."""
        colours = {"error": "#b00020", "warning": "#a15c00", "note": "#1f4e8c"}
        self.h_message_level = level if text else ""
        if not text:
            self.h_message.hide()
            return
        self.h_message.setText(text)
        self.h_message.setStyleSheet(f"color: {colours.get(level, '#333')}")
        self.h_message.show()

    # ------------------------------------------------------------------ internals
    def _on_scenario(self, idx: int) -> None:
        self.scenario_chosen.emit(self.scenario.itemData(idx) or "")

    def _on_integrator(self, idx: int) -> None:
        name = self.integrator.itemData(idx)
        self.integrator_props.setText(integrator_properties(name))
        self.integrator_chosen.emit(name)

    def _on_play(self, on: bool) -> None:
        if self._blocking:
            return
        self.play.setText("❚❚ Pause" if on else "▶ Play")
        self.step.setEnabled(not on)
        self.play_toggled.emit(on)

    def parse_h(self) -> float | str:
        """The entered step, or a message saying why it is not one."""
        text = self.h_edit.text().strip()
        try:
            h = float(text)
        except ValueError:
            return f"h = {text!r} is not a number; enter e.g. 1e-3"
        try:  # rrp run's rule (the worker re-checks the state)
            return check_run_step(h, self.t_end)
        except SimulationError as exc:
            return str(exc)

    def _check_h_text(self, _text: str) -> None:
        """Warn while typing: not a number, or beyond the stability estimate."""
        h = self.parse_h()
        if isinstance(h, str):
            self.h_edit.setStyleSheet("background: #fde7ea")
            return
        if h > self.h_limit:
            self.h_edit.setStyleSheet("background: #fff1d6")
            self.show_h_message(f"h = {h:g} is beyond the stability limit ≈ "
                                f"{self.h_limit:.3g} for the current state: expect the run "
                                "to blow up (it will pause, keeping the last good state).",
                                "warning")
        elif h > getattr(self, "h_accurate", math.inf):
            self.h_edit.setStyleSheet("background: #fffbe6")
            self.show_h_message(f"h = {h:g} is past the accuracy guide ≈ {self.h_accurate:.2g} "
                                "(≈ 1 % energy error): stable, but expect a larger energy "
                                "error.", "warning")
        else:
            self.h_edit.setStyleSheet("")
            if self.h_message_level == "warning":
                self.show_h_message("", "")

    def _on_h(self) -> None:
        h = self.parse_h()
        if isinstance(h, str):
            self.show_h_message(h, "error")
            self.h_invalid.emit(h)
            return
        self.h_entered.emit(h)
