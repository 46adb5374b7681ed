"""Run files: HDF5 run files written as a run goes, and read back (:mod:`.hdf5`,
docs/output.md).

``from engine.io import RunWriter, read_run`` keeps working; ``RunFile`` opens a run
(also a ``.partial``) for replay, branching and resuming.  Each further output format is
a module of its own here; :mod:`.outlock` (one writer per output) and :mod:`.reserve`
(space held before each write) serve every writer; :mod:`.verify` and :mod:`.digests`
check what is read against what was written (docs/output.md, "Integrity").
"""

from .hdf5 import (
    SCHEMA_VERSION,
    Frame,
    OutputWriteError,
    RunFile,
    RunFileError,
    RunWriter,
    abandoned_files,
    output_for,
    output_of_partial,
    partial_name,
    read_run,
)
from .outlock import OutputBusyError, OutputLock

__all__ = ["SCHEMA_VERSION", "Frame", "OutputBusyError", "OutputLock", "OutputWriteError",
           "RunFile", "RunFileError", "RunWriter", "abandoned_files", "output_for",
           "output_of_partial", "partial_name", "read_run"]
