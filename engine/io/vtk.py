"""ParaView / VTK output of a run file (docs/output.md, "ParaView / VTK output").

:func:`export_vtk` reads the frames of a run file (``/bodies/…``, written by
:class:`engine.io.RunWriter`; a ``.h5.partial`` file of a run still going or cut short
works too) and writes one VTK PolyData file (``.vtp``) per frame plus a ``.pvd``
collection that gives ParaView the time of each frame:

* points: the body positions ``x`` (``/bodies/position``);
* point data: ``diameter``, ``velocity`` ``v``, ``spin`` (spatial ``Ω``), ``axis_1``,
  ``axis_2``, ``axis_3`` (the body axes ``R e_k``, so ParaView's Glyph filter can draw
  oriented bodies), ``kinetic_energy`` ``½ m |v|² + ½ Ωᵀ R 𝕁 Rᵀ Ω``, ``body_id`` and
  ``group`` (the run file's ``/bodies/group``, where it has one);
* cells: one vertex per body, and one line per bond (``/model/bonds`` if the file has
  it, else the bonds of the model rebuilt from the file's ``model`` and ``parameters``
  attributes);
* field data ``TimeValue``: the frame's time.

Files written before ``/bodies/velocity`` existed give no ``velocity`` and no
``kinetic_energy`` (one warning says so).  Every file is written into a temporary
directory and renamed into place only once all frames are written and synced, so an
export that fails (a full disk included) leaves the directory as it was.

The engine does not need VTK: PyVista (the ``gui`` extra) is imported only when
:func:`export_vtk` runs.
"""

from __future__ import annotations

import errno
import json
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from . import digests
from .atomic import AtomicOutput
from .datatypes import datatype_problem
from .paths import output_of_partial
from .schema import open_h5
from .verify import READ_ERRORS

__all__ = ["VTKExportError", "VTKExportWarning", "VTKReadError", "export_vtk"]

FRAME_DATASETS = ("position", "quaternion", "omega", "time")
"""The ``/bodies`` datasets a file must have to be exported (left out by ``--no-frames``)."""


class VTKExportError(ValueError):
    """The run file cannot be exported (missing, not a run file, no frames, bad output
    directory); the message is one line."""


class VTKReadError(VTKExportError):
    """The run file cannot be read where the export reads it: a chunk that fails its
    checksum, a frame that does not match its digest, damaged HDF5 metadata (issue #36
    item 4); one line."""


class VTKExportWarning(UserWarning):
    """Something left out of the export (velocities of an old file, bonds)."""


def export_vtk(run_path: str | Path, directory: str | Path, *, every: int = 1,
               warn: Callable[[str], Any] | None = None, ovito: bool = False,
               check: Callable[[], None] | None = None) -> list[Path]:
    """Write the frames of the run file ``run_path`` as VTK files into ``directory``.

    ``directory`` is created if missing (its parent must exist).  Every ``every``-th
    frame is written (the first always), as ``<stem>_<frame>.vtp`` where ``<stem>`` is
    the run file's name without ``.h5``/``.h5.partial`` and ``<frame>`` its index in
    the file; ``<stem>.pvd`` lists them with their times (open it in ParaView).
    ``warn(message)`` receives the one-line notes of what was left out (default:
    :func:`warnings.warn` with :class:`VTKExportWarning`).

    ``ovito=True`` (``rrp convert --to vtk`` without ``--compress``, issue #37 item 7):
    files that OVITO reads as well as ParaView — uncompressed inline arrays, one vertex
    per body and no bond lines, no field data (OVITO refuses compressed arrays and does
    not recognise a VTP file with lines or field data; the times are in the ``.pvd``),
    and a ``radius`` array (OVITO's Radius).  Otherwise zlib-compressed arrays with the
    bonds as lines and ``TimeValue`` (ParaView).

    ``check()``: called between frames and before the rename (it may raise to stop: a
    signal; nothing is then written).

    Returns the paths written: the ``.vtp`` files in time order, then the ``.pvd``.
    Raises :class:`VTKExportError` for bad input, :class:`~engine.io.atomic.OutputError`
    (one line; nothing written) when the files cannot be written.
    """
    import pyvista as pv  # the gui extra: imported only here, and first (a missing extra
    # is the first thing to report)

    if warn is None:
        def warn(message: str) -> None:
            warnings.warn(message, VTKExportWarning, stacklevel=3)

    if isinstance(every, bool) or not isinstance(every, (int, np.integer)) or every < 1:
        raise VTKExportError(f"every must be a positive integer, got {every!r}")
    run_path = Path(run_path)
    out = Path(directory)
    _check_directory(out)
    notes: list[str] = []
    f = _open(run_path)
    with f:  # frames are read one at a time: a long run need not fit in memory
        try:
            data = _read_header(f, run_path, int(every), notes.append)
        except VTKExportError:
            raise
        except READ_ERRORS as exc:
            raise VTKReadError(f"cannot read {str(run_path)!r}: the file is damaged "
                               f"({type(exc).__name__}: {_first_line(exc)})") from None
        for note in notes:  # only once the input is known good
            warn(note)
        return _write(f, data, out, _stem(run_path), pv, ovito, check)


def _write(f: h5py.File, data: dict[str, Any], out: Path, stem: str, pv: Any,
           ovito: bool = False, check: Callable[[], None] | None = None) -> list[Path]:
    """Every frame, then the ``.pvd``, into a temporary directory next to ``out``; its
    files renamed into ``out`` last (``out`` itself, if it did not exist), whole or not
    at all (:class:`~engine.io.atomic.AtomicOutput`, issue #46 item 2).  VTK writes
    each file to memory and Python writes it: VTK's own file writing aborted the
    process on a full disk (``double free or corruption``)."""
    b = f["bodies"]
    cells = _cells(data["n"], data["bonds"])
    width = max(4, len(str(int(data["index"][-1]))))
    names = [f"{stem}_{int(i):0{width}d}.vtp" for i in data["index"]]
    times = []
    with AtomicOutput(out, directory=True) as ao:
        for i, name in zip(data["index"], names, strict=True):
            if check is not None:
                check()
            frame = _read_frame(f, b, int(i), data["datasets"], data["checks"])
            times.append(float(frame["time"]))
            poly = pv.PolyData(frame["position"], verts=cells["verts"],
                               lines=None if ovito else cells["lines"])
            for key, arr in _point_data(frame, data).items():
                poly.point_data[key] = arr
            if ovito:
                poly.point_data["radius"] = 0.5 * data["diameter"]
            else:
                poly.field_data["TimeValue"] = np.array([frame["time"]])
            with open(ao.tmp / name, "wb") as fh:
                fh.write(_vtp_bytes(poly, compress=not ovito))
        _write_pvd(ao.tmp / f"{stem}.pvd", names, np.array(times))
        ao.commit(_check_written, check)
    return [out / name for name in names] + [out / f"{stem}.pvd"]


def _vtp_bytes(poly: Any, compress: bool) -> bytes:
    """One ``.vtp``: inline binary (base64) arrays, zlib-compressed (ParaView: what
    PyVista's ``save`` writes) or not (OVITO refuses compressed arrays and does not
    recognise raw appended data)."""
    from vtkmodules.vtkIOXML import vtkXMLPolyDataWriter

    w = vtkXMLPolyDataWriter()
    w.SetInputData(poly)
    w.SetDataModeToBinary()
    if compress:
        w.SetCompressorTypeToZLib()
    else:
        w.SetCompressorTypeToNone()
    w.WriteToOutputStringOn()
    if not w.Write():
        raise OSError(errno.EIO, "VTK could not write a frame")
    return w.GetOutputString().encode("utf-8")


def _check_written(tmp: Path) -> None:
    """The finished directory: the ``.pvd`` reads back and names files that are there,
    none empty."""
    pvd = next(tmp.glob("*.pvd"))
    for ds in ET.parse(pvd).getroot().iter("DataSet"):
        if (tmp / ds.get("file", "")).stat().st_size == 0:
            raise OSError(errno.EIO, f"{ds.get('file')} is empty")


# ---------------------------------------------------------------------------- reading
def _read_frame(f: h5py.File, b: h5py.Group, i: int, names: list[str],
                checks: Any) -> dict[str, np.ndarray]:
    """Frame ``i``'s datasets, checked against their row digests (issue #36 item 2);
    :class:`VTKReadError` if it cannot be read as written."""
    try:
        rows = {f"bodies/{c}": b[c][i:i + 1] for c in names}
        digests.check_rows(checks, i, rows)
    except READ_ERRORS as exc:
        raise VTKReadError(f"cannot read frame {i} of {f.filename!r}: the file is damaged "
                           f"there ({_first_line(exc)})") from None
    return {c: np.asarray(rows[f"bodies/{c}"][0], dtype=np.float64) for c in names}


def _read_header(f: h5py.File, path: Path, every: int,
                 warn: Callable[[str], Any]) -> dict[str, Any]:
    """Which frames to write, the constants and the bonds; :class:`VTKExportError` if
    the file has no frames."""
    if not isinstance(f.get("bodies"), h5py.Group):
        raise VTKExportError(f"{str(path)!r} is not an RRP run file (no /bodies)")
    b = f["bodies"]
    missing = [c for c in FRAME_DATASETS if c not in b]
    if missing:
        raise VTKExportError(
            f"{str(path)!r} has no frames (written with --no-frames: it lacks "
            f"/bodies/{', /bodies/'.join(missing)}); nothing to export")
    has_v = "velocity" in b
    names = [*FRAME_DATASETS, *(("velocity",) if has_v else ())]
    # A file still being written may have one dataset a chunk ahead of another.
    n_frames = min(b[c].shape[0] for c in names)
    if n_frames == 0:
        raise VTKExportError(f"{str(path)!r} has no frames yet; nothing to export")
    n = b["position"].shape[1]
    data: dict[str, Any] = {"index": np.arange(0, n_frames, every), "datasets": names,
                            "n": n}
    data["mass"] = _constant(b, "mass", n)
    data["diameter"] = _constant(b, "diameter", n)
    if "group" in b and b["group"].shape == (n,):  # (the user's groups: issue #42 item 8)
        data["group"] = np.asarray(b["group"][()], dtype=np.int64)
    if "inertia_tensor" in b:
        data["inertia_tensor"] = np.asarray(b["inertia_tensor"][()], dtype=np.float64)
    else:  # spheres of older files: J I
        data["inertia_tensor"] = (_constant(b, "inertia", n)[:, None, None]
                                  * np.eye(3)[None])
    if not has_v:
        warn(f"{path.name} has no /bodies/velocity (written before it was recorded): "
             "'velocity' and 'kinetic_energy' are left out")
    data["bonds"] = _bonds(f, n, warn)
    data["checks"] = digests.columns(f, digests.FRAME_CHECKS)
    return data


def _open(path: Path) -> h5py.File:
    """Open read-only, without HDF5's file lock where h5py allows it (a ``.partial``
    file may still be open for writing in another process)."""
    if path.is_dir():
        raise VTKExportError(f"{str(path)!r} is a directory, not a run file")
    if not path.is_file():
        raise VTKExportError(f"no such run file: {str(path)!r}")
    try:
        f = open_h5(path, "r")  # (as its last whole flush left it: issue #47 item 1)
    except OSError as exc:
        raise VTKExportError(f"cannot read {str(path)!r} as an HDF5 run file "
                             f"({_first_line(exc)})") from None
    bad = datatype_problem(f)  # (before a value is read: libhdf5 could crash, item 4)
    if bad:
        f.close()
        raise VTKReadError(f"cannot read {str(path)!r}: the file is damaged ({bad} is not "
                           "one a run file is written with)")
    return f


def _constant(b: h5py.Group, name: str, n: int) -> np.ndarray:
    if name not in b:
        return np.full(n, np.nan)
    return np.asarray(b[name][()], dtype=np.float64).reshape(n)


def _bonds(f: h5py.File, n: int, warn: Callable[[str], Any]) -> np.ndarray:
    """``(nb, 2)`` body indices: ``/model/bonds`` if present, else the rebuilt model's."""
    if "model" in f and isinstance(f["model"], h5py.Group) and "bonds" in f["model"]:
        bonds = np.asarray(f["model"]["bonds"][()], dtype=np.int64).reshape(-1, 2)
    else:
        name = _text(f.attrs.get("model", ""))
        try:
            from ..models import MODELS

            params = json.loads(_text(f.attrs.get("parameters", "{}")))
            model = MODELS[name].make(params)
        except Exception as exc:  # unknown model, parameters of another version
            warn(f"no bonds: cannot rebuild the model {name!r} of the file "
                 f"({type(exc).__name__}: {_first_line(exc)})")
            return np.zeros((0, 2), dtype=np.int64)
        if model.n_bodies != n:
            warn(f"no bonds: the rebuilt model {name!r} has {model.n_bodies} bodies, "
                 f"the file {n}")
            return np.zeros((0, 2), dtype=np.int64)
        ff = getattr(model, "forcefield", None)
        raw = getattr(ff, "bonds", None)
        bonds = (np.zeros((0, 2), dtype=np.int64) if raw is None
                 else np.asarray(raw, dtype=np.int64).reshape(-1, 2))
    if bonds.size and (bonds.min() < 0 or bonds.max() >= n):
        warn(f"no bonds: the bond list refers to bodies outside 0..{n - 1}")
        return np.zeros((0, 2), dtype=np.int64)
    return bonds


def _text(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


# ---------------------------------------------------------------------------- frames
def _point_data(frame: dict[str, np.ndarray], data: dict[str, Any]) -> dict[str, np.ndarray]:
    """The point-data arrays of one frame."""
    from ..rotations import quat_to_matrix

    q = frame["quaternion"]
    omega = frame["omega"]
    n = len(q)
    r = quat_to_matrix(q)  # (n, 3, 3); column j is the body axis R e_j
    out: dict[str, np.ndarray] = {"diameter": data["diameter"].copy()}
    if "group" in data:
        out["group"] = data["group"].copy()
    if "velocity" in frame:
        v = frame["velocity"]
        w_body = np.einsum("nji,nj->ni", r, omega)  # Rᵀ Ω
        rot = 0.5 * np.einsum("ni,nij,nj->n", w_body, data["inertia_tensor"], w_body)
        out["velocity"] = v.copy()
        out["kinetic_energy"] = 0.5 * data["mass"] * np.einsum("ni,ni->n", v, v) + rot
    out["spin"] = omega.copy()
    for j in range(3):
        out[f"axis_{j + 1}"] = np.ascontiguousarray(r[:, :, j])
    out["body_id"] = np.arange(n, dtype=np.int64)
    return out


def _cells(n: int, bonds: np.ndarray) -> dict[str, np.ndarray]:
    """VTK cell arrays: one vertex per body, one line per bond."""
    verts = np.column_stack([np.ones(n, dtype=np.int64), np.arange(n, dtype=np.int64)])
    lines = np.column_stack([np.full(len(bonds), 2, dtype=np.int64), bonds])
    return {"verts": verts.ravel(), "lines": lines.ravel() if len(bonds) else None}


# ---------------------------------------------------------------------------- writing
def _stem(path: Path) -> str:
    name = path.name
    if name.endswith(".partial"):  # (<name>.<pid>.partial, a writer's temporary name)
        name = output_of_partial(path).name
    for suffix in (".partial", ".h5", ".hdf5"):
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    return name


def _check_directory(out: Path) -> None:
    if out.exists():
        if not out.is_dir():
            raise VTKExportError(f"{str(out)!r} exists and is not a directory")
    elif not out.parent.is_dir():
        raise VTKExportError(f"the parent directory of {str(out)!r} does not exist")


def _write_pvd(path: Path, names: list[str], times: np.ndarray) -> None:
    """The ParaView collection: one ``DataSet`` per frame file with its time."""
    root = ET.Element("VTKFile", type="Collection", version="0.1",
                      byte_order="LittleEndian")
    coll = ET.SubElement(root, "Collection")
    for name, t in zip(names, times, strict=True):
        ET.SubElement(coll, "DataSet", timestep=repr(float(t)), group="", part="0",
                      file=name)
    tree = ET.ElementTree(root)
    ET.indent(tree)
    tree.write(path, encoding="utf-8", xml_declaration=True)
