"""LAMMPS in and out, one room (issue #43 item 5): data files read as LAMMPS's
``read_data`` reads them (:mod:`.read_data`, with :mod:`.tables` for the sections' rows,
:mod:`.styles` for the atom styles' columns and :mod:`.units` for the unit styles; a
deck's commands by :mod:`.read_deck`, what they mean for a scenario by :mod:`.deck_plan`,
:mod:`.deck_bonds`, :mod:`.deck_variables` and :mod:`.deck_scenario`: issue #44 item 6)
and written (:mod:`.write_data`), the input
deck that runs a run's spheres in LAMMPS (:mod:`.deck`) and the dump of a run's frames
(:mod:`.dump`).  The CLI (``rrp import``, ``rrp convert --to lammps|lammps-dump``) and
Python callers use the same functions.

This package's ``__init__`` imports nothing: the assembly model reads data files through
:mod:`.read_data` (layer of the models, tests/test_layers.py) without loading the run
files' modules.
"""
