"""Run files: HDF5 run files written as a run goes, and read back (:mod:`.hdf5`,
docs/output.md).

``from engine.io import RunWriter, read_run`` keeps working; ``RunFile`` opens a run
(also a ``.partial``) for replay, branching and resuming.  Each further output format is
a module of its own here; :mod:`.outlock` (one writer per output) and :mod:`.reserve`
(space held before each write) serve every writer; :mod:`.verify` and :mod:`.digests`
check what is read against what was written (docs/output.md, "Integrity").
"""

from importlib import import_module
from typing import Any

_WHERE = {name: ".hdf5" for name in (
    "SCHEMA_VERSION", "Frame", "OutputWriteError", "RunFile", "RunFileError", "RunWriter",
    "abandoned_files", "output_for", "output_of_partial", "partial_name", "read_run")}
_WHERE.update(OutputBusyError=".outlock", OutputLock=".outlock")

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    """``from engine.io import RunFile`` loads :mod:`.hdf5` on first use (PEP 562), so a
    module of a lower layer that reads a format of its own (the assembly model reading
    a LAMMPS data file through :mod:`.lammps.read_data`) does not load the run files'
    writer and the simulation it records."""
    try:
        module = _WHERE[name]
    except KeyError:
        raise AttributeError(f"module 'engine.io' has no attribute {name!r}") from None
    value = getattr(import_module(module, __name__), name)
    globals()[name] = value
    return value
