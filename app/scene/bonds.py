"""The bonds of a model whose bonds break (issue #44 item 2), drawn as ONE PolyData of
line segments between the bonded spheres' drawn centres, mixed into
:class:`~.bodies.BodyScene` as :class:`SceneBonds`.

Only a model that reports the ``broken`` energy component draws its bonds (the others
look as before); :meth:`SceneBonds.set_broken` takes the model's indices of the bonds
broken so far (the engine's ``break`` events: ``engine.simulation.breaking.broken_ids``)
and leaves them out.  The scene draws what it is given, no more.
"""

from __future__ import annotations

import numpy as np
import pyvista as pv

from .style import ROD_COLOUR

BOND_LINE_WIDTH = 2


class SceneBonds:
    """Bond lines of :class:`~.bodies.BodyScene` (module docstring)."""

    _bonds_mesh: pv.PolyData | None = None
    _bond_pairs = np.zeros((0, 2), dtype=np.int64)
    _bonds_broken = np.zeros(0, dtype=np.int64)

    def _add_bonds(self) -> None:
        """The lines of every bond of a model whose bonds break (else nothing)."""
        if "broken" not in self.model.energy_components or self.k != 1:
            return
        self._bond_pairs = np.asarray(self.model.forcefield.bonds, dtype=np.int64)
        if not self._bond_pairs.shape[0]:
            return
        self._bonds_mesh = pv.PolyData(np.asarray(self._centres, dtype=np.float64).copy(),
                                       lines=self._bond_cells(self._bond_pairs))
        self.plotter.add_mesh(self._bonds_mesh, color=ROD_COLOUR, line_width=BOND_LINE_WIDTH,
                              name="rrp-bonds", reset_camera=False, lighting=False)

    @staticmethod
    def _bond_cells(pairs: np.ndarray) -> np.ndarray:
        cells = np.empty((pairs.shape[0], 3), dtype=np.int64)
        cells[:, 0] = 2
        cells[:, 1:] = pairs
        return cells.ravel()

    def _move_bonds(self, c: np.ndarray) -> None:
        if self._bonds_mesh is not None:
            self._bonds_mesh.points[:] = c
            self._bonds_mesh.GetPoints().Modified()

    def set_broken(self, broken: np.ndarray) -> None:
        """Draw every bond but the model's bonds ``broken`` (indices in its bond list)."""
        broken = np.unique(np.asarray(broken, dtype=np.int64))
        if self._bonds_mesh is None or np.array_equal(broken, self._bonds_broken):
            return
        self._bonds_broken = broken
        keep = np.ones(self._bond_pairs.shape[0], dtype=bool)
        keep[broken[(broken >= 0) & (broken < keep.shape[0])]] = False
        self._bonds_mesh.lines = self._bond_cells(self._bond_pairs[keep])

    @property
    def bonds_drawn(self) -> int:
        """How many bond lines are drawn (0: the model draws none)."""
        return 0 if self._bonds_mesh is None else int(self._bonds_mesh.n_lines)
