"""HDF5 output of a run, written as it goes.

Layout (docs/output.md):

* ``/time`` ``(n,)``; ``/energy/<component>`` and ``/energy/total`` ``(n,)``;
  ``/energy/relative_error`` ``(n,)``;
* ``/momentum/linear`` ``(n, 3)``, ``/momentum/angular`` ``(n, 3)``;
* ``/bodies/position`` ``(frames, N, 3)``, ``/bodies/quaternion`` ``(frames, N, 4)``
  (scalar first), ``/bodies/omega`` ``(frames, N, 3)`` (spatial), ``/bodies/time``;
* ``/bodies/mass``, ``/bodies/inertia``, ``/bodies/diameter`` ``(N,)``;
* ``/events``: changes of integrator or step (``step``, ``t``, ``kind``, ``old``, ``new``);
* attributes: ``scenario``, ``model``, ``integrator``, ``h``, ``version``,
  ``parameters`` (JSON of the full resolved parameter set, also one attribute per
  parameter on ``/parameters``), ``status`` (``running``/``complete``/``failed``/
  ``interrupted``) and ``message``.

The file is written to ``<name>.partial`` and renamed over ``<name>`` when closed, so
an existing file is never half-overwritten; every appended chunk is flushed, so a run
that blows up or is interrupted still leaves a readable file with everything up to
the last good step.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from .. import __version__
from ..layout import ENERGY_NAMES
from ..simulation import Event, Simulation


class RunWriter:
    """Stream a :class:`Simulation`'s records into an HDF5 file."""

    def __init__(self, path: str | Path, sim: Simulation, *, scenario: str = "",
                 frames: bool = True) -> None:
        self.path = Path(path)
        self.partial = self.path.with_name(self.path.name + ".partial")
        self.sim = sim
        self.frames = frames and sim.record_frames
        self.written = 0
        self.events_written = 0
        if self.path.parent and not self.path.parent.exists():
            raise OSError(f"the output directory {str(self.path.parent)!r} does not exist")
        self.f = h5py.File(self.partial, "w")
        model = sim.model
        n = model.n_bodies
        f = self.f
        f.attrs["scenario"] = scenario or model.name
        f.attrs["model"] = model.name
        f.attrs["integrator"] = sim.integrator.name
        f.attrs["h"] = sim.h
        f.attrs["version"] = __version__
        f.attrs["parameters"] = json.dumps(model.params)
        f.attrs["record_every"] = sim.record_every
        f.attrs["energy_reference"] = sim.e_ref
        f.attrs["energy_scale"] = sim.e_scale
        f.attrs["status"] = "running"
        f.attrs["message"] = ""
        f.attrs["conserved"] = json.dumps(list(model.conserved))
        g = f.create_group("parameters")
        for k, v in model.params.items():
            g.attrs[k] = v
        f.create_dataset("time", (0,), maxshape=(None,), dtype="f8", chunks=(4096,))
        ge = f.create_group("energy")
        self.components = [c for c in ENERGY_NAMES if c in model.energy_components]
        for c in [*self.components, "total", "relative_error"]:
            ge.create_dataset(c, (0,), maxshape=(None,), dtype="f8", chunks=(4096,))
        gm = f.create_group("momentum")
        for c in ("linear", "angular"):
            gm.create_dataset(c, (0, 3), maxshape=(None, 3), dtype="f8", chunks=(1024, 3))
        gb = f.create_group("bodies")
        gb["mass"] = model.bodies.m
        gb["inertia"] = model.bodies.J
        gb["inertia_tensor"] = model.bodies.inertia  # body frame, (n, 3, 3)
        gb["diameter"] = model.bodies.D
        if self.frames:
            fc = max(1, min(64, 65536 // max(1, n)))
            for c, w in (("position", 3), ("quaternion", 4), ("omega", 3)):
                gb.create_dataset(c, (0, n, w), maxshape=(None, n, w), dtype="f8",
                                  chunks=(fc, n, w))
            gb.create_dataset("time", (0,), maxshape=(None,), dtype="f8", chunks=(4096,))
        self.flush()

    def flush(self) -> None:
        """Append the records not yet written, and the events; flush to disk."""
        a = self.sim.series.arrays(self.written)
        k = len(a["t"])
        if k:
            idx = ENERGY_NAMES.index
            total = a["energy"].sum(axis=1)
            cols: dict[str, Any] = {c: a["energy"][:, idx(c)] for c in self.components}
            cols["total"] = total
            cols["relative_error"] = (total - self.sim.e_ref) / self.sim.e_scale
            self._append(self.f["time"], a["t"])
            for c, arr in cols.items():
                self._append(self.f["energy"][c], arr)
            self._append(self.f["momentum/linear"], a["P"])
            self._append(self.f["momentum/angular"], a["L"])
            if self.frames:
                self._append(self.f["bodies/position"], a["x"])
                self._append(self.f["bodies/quaternion"], a["q"])
                self._append(self.f["bodies/omega"], a["omega"])
                self._append(self.f["bodies/time"], a["t"])
            self.written += k
        if len(self.sim.events) > self.events_written:
            self._write_events(self.sim.events)
        self.f.flush()

    def close(self, status: str = "complete", message: str = "") -> Path:
        """Write the remaining records, the final status, and move the file in place."""
        if self.f.id.valid:
            self.flush()
            self.f.attrs["status"] = status
            self.f.attrs["message"] = message
            self.f.attrs["steps"] = self.sim.step_index
            self.f.attrs["t_final"] = self.sim.t
            self.f.close()
            os.replace(self.partial, self.path)
        return self.path

    def __enter__(self) -> RunWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close("complete")
        elif issubclass(exc_type, KeyboardInterrupt):
            self.close("interrupted", "interrupted by the user")
        else:
            self.close("failed", f"{exc_type.__name__}: {exc}")

    @staticmethod
    def _append(ds, arr: np.ndarray) -> None:
        n0 = ds.shape[0]
        ds.resize(n0 + len(arr), axis=0)
        ds[n0:] = arr

    def _write_events(self, events: list[Event]) -> None:
        if "events" in self.f:
            del self.f["events"]
        dt = np.dtype([("step", "i8"), ("t", "f8"), ("kind", h5py.string_dtype()),
                       ("old", h5py.string_dtype()), ("new", h5py.string_dtype())])
        arr = np.array([(e.step, e.t, e.kind, e.old, e.new) for e in events], dtype=dt)
        self.f.create_dataset("events", data=arr)
        self.events_written = len(events)


def read_run(path: str | Path) -> dict[str, Any]:
    """Read a run file back into plain arrays (for scripts and tests)."""
    out: dict[str, Any] = {}
    with h5py.File(path, "r") as f:
        out["attrs"] = dict(f.attrs)
        out["parameters"] = json.loads(f.attrs["parameters"])
        out["time"] = f["time"][()]
        out["energy"] = {k: f["energy"][k][()] for k in f["energy"]}
        out["momentum"] = {k: f["momentum"][k][()] for k in f["momentum"]}
        out["bodies"] = {k: f["bodies"][k][()] for k in f["bodies"]}
        if "events" in f:
            out["events"] = f["events"][()]
    return out
