"""Run files: HDF5 run files written as a run goes (:mod:`.hdf5`, docs/output.md).

``from engine.io import RunWriter, read_run`` keeps working; each further output format
is a module of its own here.
"""

from .hdf5 import RunWriter, read_run

__all__ = ["RunWriter", "read_run"]
