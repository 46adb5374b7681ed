"""Reading a run file back: :func:`read_run` (plain arrays) and :class:`RunFile` (a
run opened for replay, branching and resuming; also a ``.partial``), every h5py
error one :class:`RunFileError` line (issue #36 item 4; split from
:mod:`engine.io.hdf5`, issue #34 item 3; docs/output.md, docs/api.md)."""

from __future__ import annotations

import functools
import json
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from ..layout import ENERGY_NAMES
from ..rotations import attitude_problem
from ..simulation import Event
from ..simulation.breaking import BREAK_EVENT, broken_ids
from . import digests
from .digests import DigestMismatch, read_status
from .file_layout import _SPRING_LISTS, TERRACE_GAP
from .paths import _s
from .schema import CHECKPOINT_GROUPS, RunFileError, open_run_file
from .verify import (
    DIGEST_ATTR,
    READ_ERRORS,
    Integrity,
    check_run,
    choose_checkpoint,
    first_line,
    future_schema,
    row_count,
)

_open = open_run_file
"""(the name the readers here use)"""


def read_run(path: str | Path) -> dict[str, Any]:
    """Read a run file back into plain arrays (for scripts and tests), checked first
    (:func:`~engine.io.verify.check_run`, ``deep``): damage to what it returns (a chunk
    that fails its checksum, rows that do not match their digest, a damaged header or
    metadata) is a :class:`RunFileError` naming it."""
    with _open(path) as f:
        report = check_run(f, path, deep=True)
        if report.damaged("series", "frames", "header", "model", "metadata"):
            raise RunFileError(report.line())
        try:
            return _read_all(f)
        except READ_ERRORS as exc:
            raise _damaged(Path(path), "the run", exc) from None


def _read_all(f: h5py.File) -> dict[str, Any]:
    out: dict[str, Any] = {}
    out["attrs"] = dict(f.attrs)
    out["parameters"] = json.loads(f.attrs["parameters"])
    out["time"] = f["time"][()]
    out["energy"] = {k: f["energy"][k][()] for k in f["energy"]}
    out["momentum"] = {k: f["momentum"][k][()] for k in f["momentum"]}
    out["bodies"] = {k: f["bodies"][k][()] for k in f["bodies"]}
    for grp in ("generalized", "model", "springs"):
        if grp in f:
            out[grp] = {k: (f[grp][k][()] if isinstance(f[grp][k], h5py.Dataset) else
                            {j: f[grp][k][j][()] for j in f[grp][k]})  # (model/assembly)
                        for k in f[grp]}
    if "events" in f:
        out["events"] = f["events"][()]
    return out


@dataclass
class Frame:
    """The state recorded at one frame of a run file.  ``v`` and ``pi`` are ``None``
    where the file does not hold them (schema 1; ``Π`` in generalized coordinates),
    ``step`` is ``None`` in schema 1; ``gq``/``gv``: the node ``(q, v)`` of a model in
    generalized coordinates; ``springs``, ``F``, ``RM``: for contacts with history, the
    committed friction springs ``(sphere, partner, xi)`` and the forces and moments
    (``None`` in files written before frames kept them)."""

    index: int
    t: float
    step: int | None
    x: np.ndarray
    v: np.ndarray | None
    q: np.ndarray
    omega: np.ndarray
    pi: np.ndarray | None
    D: float
    gq: np.ndarray | None = None
    gv: np.ndarray | None = None
    springs: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    F: np.ndarray | None = None
    RM: np.ndarray | None = None
    W: float = 0.0
    """The ``field work`` booked up to the frame (issue #44 item 3; 0 without fields)."""
    B: float = 0.0
    """The ``broken`` energy booked up to the frame (issue #44 item 2; 0 without it)."""
    broken: np.ndarray | None = None
    """The model's bonds broken up to the frame's step (the ``break`` events; ``None``:
    the run has none)."""


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def _damaged(path: Path, what: str, exc: BaseException) -> RunFileError:
    return RunFileError(f"{path}: {what} cannot be read: the file is damaged "
                        f"({type(exc).__name__}: {first_line(exc)})")


def _guarded(what: str):
    """A :class:`RunFile` method whose h5py errors (damaged HDF5 metadata: a bad heap
    signature, a link to nowhere) are one :class:`RunFileError` naming the file and
    ``what`` could not be read (issue #36 item 4)."""
    def wrap(method):
        @functools.wraps(method)
        def guarded(self, *args, **kwargs):
            try:
                return method(self, *args, **kwargs)
            except RunFileError:
                raise
            except READ_ERRORS as exc:
                raise _damaged(self.path, what.format(*args), exc) from None
        return guarded
    return wrap


class RunFile:
    """A run file (``.h5``, or the ``.h5.partial`` of a run still going or killed),
    open read-only: the series, the frames one at a time, the events, and what is
    needed to branch from a frame or resume the run.  Errors are :class:`RunFileError`
    (one line), whatever is damaged in the file.  Use as a context manager or
    :meth:`close` it."""

    def __init__(self, path: str | Path, *, series: bool = True) -> None:
        self.path = Path(path)
        self._series = bool(series)
        """``series=False``: the series (``/time``, ``/energy``, ``/momentum``) are neither
        read nor checked (:attr:`times`, :attr:`energy`, :attr:`P`, :attr:`L` empty): a
        converter of frames opens a file whose frames are whole though a series is
        damaged, in every format alike (issue #47 item 4)."""
        self._f = _open(self.path)
        try:
            self._read_header()
        except RunFileError:
            self._f.close()
            raise
        except OSError:  # a chunk that fails its checksum or its digest: say which
            report = self.verify(deep=True)
            self._f.close()
            raise RunFileError(report.line() if report.problems else
                               f"{self.path}: the file is damaged (an HDF5 read error)"
                               ) from None
        except READ_ERRORS as exc:
            self._f.close()
            raise _damaged(self.path, "the run's header", exc) from None

    def _read_header(self) -> None:
        f, p = self._f, self.path
        a = f.attrs
        missing = [k for k in ("model", "parameters", "integrator", "h") if k not in a]
        if missing or "time" not in f:
            raise RunFileError(f"{p}: not an RRP Studio run file (no "
                               f"{'/time' if 'time' not in f else 'attribute ' + missing[0]})")
        for grp in ("energy", "momentum"):
            if grp not in f:
                raise RunFileError(f"{p}: the run file lacks /{grp}")
        future = future_schema(f, p)
        if future is not None:
            raise RunFileError(future)
        for text in digests.header_problems(f):  # (issue #36 item 2b)
            raise RunFileError(f"{p}: {text}: the file is refused (what it says of its "
                               "model and clock cannot be trusted)")
        for _, text in digests.checks_problems(f):  # (issue #46 item 3)
            raise RunFileError(f"{p}: {text}: the file is refused (its rows cannot be "
                               "checked)")
        self._strict = digests.strict_rows(f)
        self.schema_version = int(a.get("schema_version", 1))
        self.model_name = _s(a["model"])
        self.scenario = _s(a.get("scenario", self.model_name))
        self.params: dict[str, Any] = json.loads(_s(a["parameters"]))
        self.integrator = _s(a["integrator"])
        self.h = float(a["h"])
        self.version = _s(a.get("version", "?"))
        self.record_every = int(a.get("record_every", 1))
        self.e_ref = float(a.get("energy_reference", np.nan))
        self.e_scale = float(a.get("energy_scale", np.nan))
        self.coordinates = _s(a.get("coordinates", "bodies"))
        status, message = read_status(f)
        self.status_text = status
        self.writer_pid = int(a["writer_pid"]) if "writer_pid" in a else None
        """The process that writes (or wrote) the file, if recorded."""
        if status == "running":
            pid, host = a.get("writer_pid"), _s(a.get("writer_host", ""))
            gone = self.path.name.endswith(".partial") and (
                pid is None or (host == socket.gethostname() and not _pid_alive(int(pid))))
            if gone:
                status = "interrupted"
                self.status_text = "interrupted (file not closed)"
                t = float(f["time"][-1]) if len(f["time"]) else 0.0
                message = (f"interrupted (file not closed): the run stopped at t = {t:.6g} "
                           "without closing its file")
        self.status, self.message = status, message
        self.components = [c for c in f["energy"]
                           if c not in ("total", "relative_error", TERRACE_GAP)]
        self.components.sort(key=lambda c: ENERGY_NAMES.index(c) if c in ENERGY_NAMES
                             else len(ENERGY_NAMES))
        if self._series:
            self.times = f["time"][()]
            self.energy = {k: f["energy"][k][()] for k in f["energy"]}
            self.P = f["momentum/linear"][()] if "linear" in f["momentum"] else None
            self.L = f["momentum/angular"][()] if "angular" in f["momentum"] else None
        else:
            self.times, self.energy, self.P, self.L = np.zeros(0), {}, None, None
        gb = f.get("bodies")
        need = [f"/bodies/{c}" for c in ("position", "quaternion", "omega", "time")
                if gb is None or c not in gb]
        self._frames = len(need) < 4 or bool(digests.in_layout(f, "bodies/position"))
        self._no_frames = ("the run holds no frames (written with --no-frames)" if not
                           self._frames else f"{need[0]} is missing" if need else "")
        self._frames = self._frames and not need
        self._checks = digests.columns(f, digests.FRAME_CHECKS)
        self.frame_times = np.zeros(0)
        self.n_frames = 0
        # a file of a killed writer may hold a frame row more in one dataset than another
        if self._frames:
            self.n_frames = min([gb[c].shape[0] for c in ("position", "quaternion",
                                                          "omega", "time")]
                                + ([self._checks[0].shape[0]] if self._checks else []))
            self.frame_times = gb["time"][:self.n_frames]
        if self._series:
            digests.check_series(f, {"time": self.times, "momentum/linear": self.P,
                                     "momentum/angular": self.L,
                                     **{f"energy/{k}": v for k, v in self.energy.items()}})
        self.events: list[Event] = []
        if "events" in f:
            for r in f["events"][()]:
                self.events.append(Event(int(r["step"]), float(r["t"]), _s(r["kind"]),
                                         _s(r["old"]), _s(r["new"])))
        self.bonds = f["model/bonds"][()] if "model" in f and "bonds" in f["model"] \
            else np.zeros((0, 2), dtype=np.int64)
        if "events" in f and (DIGEST_ATTR in f["events"].attrs or "events" in
                              digests.written_with(f)) and \
                _s(f["events"].attrs.get(DIGEST_ATTR, "")) != \
                digests.events_digest((e.step, e.t, e.kind, e.old, e.new) for e in self.events):
            raise DigestMismatch("/events does not match its digest")

    # ------------------------------------------------------------------ series in blocks
    @_guarded("its series")
    def series_lengths(self) -> dict[str, int]:
        """The rows of each series dataset (``"time"``, ``"energy/NAME"``,
        ``"momentum/linear"``, ``"momentum/angular"``), read from their shapes: nothing is
        read (for :meth:`series_rows`, whether or not the file was opened with
        ``series``)."""
        f = self._f
        out = {"time": int(f["time"].shape[0])}
        for grp in ("energy", "momentum"):
            for k in f[grp]:
                out[f"{grp}/{k}"] = int(f[grp][k].shape[0])
        return out

    def series_rows(self, start: int, stop: int, names) -> dict[str, np.ndarray]:
        """Rows ``start:stop`` of the series ``names`` (as :meth:`series_lengths` names
        them), checked against their digests: a long run's series read a block at a
        time, never whole (the export's plots, issue #42 item 10).  Damage is a
        :class:`RunFileError` saying where."""
        try:
            rows = {n: self._f[n][start:stop] for n in names}
            digests.check_rows(digests.columns(self._f, digests.SERIES_CHECKS), start, rows,
                               self._strict)
            return rows
        except OSError:  # a chunk that fails its checksum or its digest: say which
            report = self.verify(deep=True)
            raise RunFileError(report.line() if report.problems else
                               f"{self.path}: the series cannot be read: the file is "
                               "damaged (an HDF5 read error)") from None
        except READ_ERRORS as exc:
            raise _damaged(self.path, "its series", exc) from None

    # ------------------------------------------------------------------ frames
    def frame(self, k: int) -> Frame:
        """Frame ``k`` (negative counts from the end); a frame that cannot be read (a
        checksum error, values that do not match their digest, damaged metadata) is a
        :class:`RunFileError` that says so."""
        try:
            return self._frame(k)
        except RunFileError:
            raise
        except READ_ERRORS as exc:
            raise RunFileError(f"{self.path}: frame {k} cannot be read, the file is damaged "
                               f"there ({first_line(exc)}); the other frames may still be "
                               "read") from None

    def _frame(self, k: int) -> Frame:
        if not self._frames:
            raise RunFileError(f"{self.path}: {self._no_frames}")
        n = self.n_frames
        if not -n <= k < n:
            raise RunFileError(f"{self.path}: no frame {k} (the run has {n} frames)")
        k = k % n
        f = self._f
        raw = {}  # name → the row as read, checked against its digest (issue #36 item 2)
        for name in ("bodies/position", "bodies/quaternion", "bodies/omega", "bodies/time",
                     "bodies/step", "bodies/dissipated", "bodies/velocity",
                     "bodies/momentum_body", "bodies/force", "bodies/moment",
                     "generalized/q", "generalized/v", "springs/start", "springs/count"):
            ds = f.get(name)
            if ds is not None and ds.shape[0] > k:
                raw[name] = ds[k:k + 1]
        digests.check_rows(self._checks, k, raw, self._strict)
        if "bodies/quaternion" in raw:  # (zeros are never a state: issue #46 item 3)
            why = attitude_problem(raw["bodies/quaternion"][0])
            if why is not None:
                raise RunFileError(f"{self.path}: frame {k} cannot be read: {why} (zeros "
                                   "where data was written: the file is damaged there); "
                                   "the other frames may still be read")
        row = {name.split("/")[1] if name.startswith("bodies/") else name: v[0]
               for name, v in raw.items()}
        D = row.get("dissipated")
        if D is None and "dissipated" in self.energy and len(self.energy["dissipated"]) > k:
            D = self.energy["dissipated"][k] if len(self.times) == n else 0.0
        work = self.energy.get("field work") if isinstance(self.energy, dict) else None
        W = float(work[k]) if work is not None and len(work) > k and \
            len(self.times) == n else 0.0
        booked = self.energy.get("broken") if isinstance(self.energy, dict) else None
        B = float(booked[k]) if booked is not None and len(booked) > k and \
            len(self.times) == n else 0.0
        springs = None
        if "springs/start" in row and "springs/count" in row:
            gs = f["springs"]
            a = int(row["springs/start"])
            b = a + int(row["springs/count"])
            if all(gs[c].shape[0] >= b for c, _, _ in _SPRING_LISTS):
                lists = {f"springs/{c}": gs[c][a:b] for c, _, _ in _SPRING_LISTS}
                digests.check_rows(digests.columns(f, digests.SPRING_CHECKS), a, lists,
                                   self._strict)
                springs = tuple(lists.values())
        step = row.get("step")
        return Frame(k, float(row["time"]), None if step is None else int(step),
                     row["position"], row.get("velocity"), row["quaternion"], row["omega"],
                     row.get("momentum_body"), float(D) if D is not None else 0.0,
                     row.get("generalized/q"), row.get("generalized/v"), springs,
                     row.get("force"), row.get("moment"), W, B,
                     self._broken_at(None if step is None else int(step)))

    def _broken_at(self, step: int | None) -> np.ndarray | None:
        """The bonds broken up to ``step`` (``None``: the run broke none, or no step
        recorded)."""
        if step is None or not any(e.kind == BREAK_EVENT for e in self.events):
            return None
        return broken_ids(self.events, step=step)

    @_guarded("frame {0}")
    def can_branch(self, k: int) -> tuple[bool, str]:
        """Whether a run can start from frame ``k`` (:meth:`Simulation.from_frame`), and
        if not, why (one line)."""
        if not self._frames:
            return False, self._no_frames
        if not -self.n_frames <= k < self.n_frames:
            return False, f"no frame {k} (the run has {self.n_frames} frames)"
        gb = self._f["bodies"]
        if "velocity" not in gb:
            return False, (f"the file (schema {self.schema_version}, RRP Studio "
                           f"{self.version}) holds no velocities: it can be replayed, not "
                           "branched; run it again with this version to branch from it")
        try:
            fr = self.frame(k)
        except RunFileError as exc:
            return False, str(exc)
        if fr.v is None or not np.all(np.isfinite(fr.v)):
            return False, f"frame {k % self.n_frames} was recorded without its velocities"
        if fr.springs is None and ("force" in gb or digests.in_layout(self._f, "springs/xi")):
            return False, (f"frame {k % self.n_frames} has lost its friction springs (/springs "
                           "is missing or cut short): started without them, the contacts "
                           "would slip")
        return True, ""

    # ------------------------------------------------------------------ model, resume
    @_guarded("the run's model")
    def build_model(self):
        """The model of the run, built from the stored name and parameters; a
        :class:`RunFileError` when this version's model has other parameters, or the
        file lacks what the model needs (its constants, its bonds; issue #36 item 8)."""
        from ..models import get_model_spec
        from ..models.base import ParameterError

        try:
            spec = get_model_spec(self.model_name)
        except (KeyError, ValueError) as exc:
            raise RunFileError(f"{self.path}: {exc.args[0] if exc.args else exc}") from None
        known = {p.name for p in spec.schema}
        added, removed = sorted(known - set(self.params)), sorted(set(self.params) - known)
        if added or removed:
            what = "; ".join(x for x in (
                f"new parameters {', '.join(added)}" if added else "",
                f"parameters no longer known: {', '.join(removed)}" if removed else "") if x)
            raise RunFileError(
                f"{self.path}: written by RRP Studio {self.version} for another version of "
                f"model {self.model_name!r} ({what})")
        try:
            model = self._carried_model(spec) or spec.make(self.params)
        except ParameterError as exc:
            if "No such file" in str(exc):  # (an assembly's CSV or data file moved away:
                raise RunFileError(        # issue #42 item 4)
                    f"{self.path}: its model is read from a file beside it that is gone "
                    f"({exc}): put the file back where it was when the run was made"
                ) from None
            raise RunFileError(f"{self.path}: written by RRP Studio {self.version}; its "
                               f"parameters do not fit this version: {exc}") from None
        mass, bonds = self._f.get("bodies/mass"), np.asarray(model.forcefield.bonds)
        why = ("/bodies/mass is missing" if not isinstance(mass, h5py.Dataset) else
               f"/bodies/mass holds {mass.shape} bodies, the model {model.n_bodies}"
               if mass.shape != (model.n_bodies,) else
               f"/model/bonds is missing (the model has {len(bonds.reshape(-1, 2))} bonds)"
               if self.schema_version >= 2 and bonds.size and "model/bonds" not in self._f
               else "")
        if why:
            raise RunFileError(f"{self.path}: {why}: the file is damaged")
        return model

    def _carried(self) -> tuple | None:
        """The arguments of ``engine.models.assembly.from_carried`` /
        ``carried_geometry`` (after the parameters) for the assembly the file carries
        (``/model/assembly``, issue #43 item 4); ``None`` for a file without it (of
        another model, or written before)."""
        g = self._f.get("model/assembly")
        if self.model_name != "assembly" or not isinstance(g, h5py.Group):
            return None
        from ..models.assembly import CARRIED, CARRIED_OPTIONAL

        missing = [k for k in CARRIED if not isinstance(g.get(k), h5py.Dataset)]
        if missing:
            raise RunFileError(f"{self.path}: /model/assembly lacks {', '.join(missing)}: "
                               "the file is damaged")
        gb = self._f["bodies"]
        bonds = self._f["model/bonds"][()] if "model/bonds" in self._f else np.zeros((0, 2))
        arrays = {k: g[k][()] for k in CARRIED + CARRIED_OPTIONAL
                  if k in CARRIED or isinstance(g.get(k), h5py.Dataset)}
        return (arrays, gb["mass"][()], gb["inertia"][()],
                gb["diameter"][()], gb["group"][()], bonds)

    def _carried_model(self, spec):
        """The assembly the file carries, built without the files its parameters point
        to (:meth:`_carried`); ``None`` for a file without it."""
        args = self._carried()
        if args is None:
            return None
        from ..models.assembly import from_carried
        from ..models.base import resolve_parameters

        return from_carried(resolve_parameters(spec.schema, self.params, self.model_name),
                            *args)

    @_guarded("the run's model")
    def carried_geometry(self):
        """The geometry of the assembly the file carries (its spheres, bonds with their
        type names, walls and named types' coefficients: what the LAMMPS deck writes,
        issue #43 item 4), or ``None`` for a file without it."""
        args = self._carried()
        if args is None:
            return None
        from ..models.assembly import carried_geometry

        return carried_geometry(*args)

    @property
    @_guarded("its checkpoint")
    def _checkpoint_group(self):
        """The complete checkpoint group with the largest serial (see
        ``RunWriter._write_checkpoint``), or ``None``."""
        best, best_serial = None, -1
        for name in CHECKPOINT_GROUPS:
            if name in self._f:
                serial = int(self._f[name].attrs.get("serial", 0 if name == "checkpoint"
                                                     and "n_records" in self._f[name].attrs
                                                     else -1))
                if serial > best_serial:
                    best, best_serial = self._f[name], serial
        return best

    @property
    def has_checkpoint(self) -> bool:
        return self._checkpoint_group is not None

    def verify(self, *, deep: bool = False) -> Integrity:
        """Check the file's structure, checkpoints and (``deep``) every chunk's checksum
        (:func:`engine.io.verify.check_run`); reads only."""
        return check_run(self._f, self.path, deep=deep)

    @_guarded("its checks")
    def check_resumable(self) -> list[str]:
        """Verify the whole file before a resume (:meth:`verify` with ``deep``): a
        :class:`RunFileError` (one line: what is wrong, what can still be read) when it is
        damaged or its checkpoints are; else the notes to show (a checkpoint that cannot
        be verified, a fallback to the previous one)."""
        report = self.verify(deep=True)
        if report.problems and not report.resumable_before_damage():
            raise RunFileError(report.line("resume"))
        if report.problems:  # (damage only in records after a checkpoint: issue #47 item 1)
            self._damage_row = report.damage_row()
            ck = report.checkpoint
            return [*report.notes, f"{self.path}: {report.what()}; the run is resumed from "
                    f"its checkpoint at t = {ck.t:.6g}, taken before that damage (the "
                    "records after it are written again)"]
        return report.notes

    @_guarded("its checkpoint")
    def resume_state(self) -> tuple[dict, int]:
        """The checkpoint (:meth:`Simulation.resume_state`'s dict) and the number of rows
        the file held when it was taken: the newest checkpoint whose digest holds (or
        that has none, written before); :class:`RunFileError` when the file has none, or
        none intact."""
        if not self.has_checkpoint:
            why = (f"it was written by RRP Studio {self.version} (schema "
                   f"{self.schema_version}), before runs kept one" if self.schema_version < 2
                   else "the run was written without one")
            raise RunFileError(f"{self.path}: no checkpoint to resume from: {why}")
        rows = row_count(self._f)
        if getattr(self, "_damage_row", None) is not None:  # (check_resumable found it)
            rows = min(rows, self._damage_row)
        chosen, _, checks = choose_checkpoint(self._f, rows)
        if chosen is None:
            raise RunFileError(f"{self.path}: no intact checkpoint to resume from (" + "; ".join(
                f"/{c.name}: {c.why}" for c in checks) + ")")
        arrays, attrs = chosen
        d: dict[str, Any] = dict(arrays)
        for k, v in attrs.items():
            d[k] = _s(v) if isinstance(v, bytes | str) else v.item() if hasattr(v, "item") \
                else v
        d["events"] = [Event(int(s), float(t), str(k), str(o), str(n))
                       for s, t, k, o, n in json.loads(d.get("events", "[]"))]
        for b in ("record_frames", "record_state"):
            d[b] = bool(d.get(b, 0))
        d.pop("serial", None)
        d.pop(DIGEST_ATTR, None)
        n_records = int(d.pop("n_records"))
        if n_records > len(self.times):
            raise RunFileError(f"{self.path}: the checkpoint is newer than the records "
                               f"({n_records} > {len(self.times)}): the file is damaged")
        return d, n_records

    # ------------------------------------------------------------------ lifetime
    def close(self) -> None:
        if self._f.id.valid:
            self._f.close()

    def __enter__(self) -> RunFile:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"RunFile({str(self.path)!r}: {self.scenario}, {self.model_name}, "
                f"{self.integrator}, h = {self.h:g}, {len(self.times)} records, "
                f"{self.n_frames} frames, {self.status})")
