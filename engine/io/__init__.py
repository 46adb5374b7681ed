"""Run files: HDF5 run files written as a run goes, and read back (:mod:`.hdf5`,
docs/output.md).

``from engine.io import RunWriter, read_run`` keeps working; ``RunFile`` opens a run
(also a ``.partial``) for replay, branching and resuming.  Each further output format is
a module of its own here.
"""

from .hdf5 import SCHEMA_VERSION, Frame, RunFile, RunFileError, RunWriter, read_run

__all__ = ["SCHEMA_VERSION", "Frame", "RunFile", "RunFileError", "RunWriter", "read_run"]
