"""Studies: reference runs, error norms, convergence studies, Dask sweeps and the
papers' figures (docs/studies.md).

One job per module:

* :mod:`.trajectory` — a run sampled on a fixed time grid (``x, v, q, Ω, E``);
* :mod:`.reference` — reference runs at a much smaller ``h``, cached on disk;
* :mod:`.norms` — the error measures of docs/physics.md §5 (B&G eqs. (35)–(38));
* :mod:`.runs` — one run of a grid point → one tidy row;
* :mod:`.convergence` — fitted log-log slopes;
* :mod:`.sweep` — grids of runs on Dask (or serially), resumable CSV/Parquet output;
* :mod:`.paper` — the data behind B&G Figs. 1, 4–7;
* :mod:`.figures` — matplotlib figures (Agg) of that data;
* :mod:`.report` — the Markdown report (claims of docs/physics.md §6);
* :mod:`.energy_stepping`, :mod:`.figures_energy_stepping`, :mod:`.report_energy_stepping`
  — the same three jobs for the energy-stepping scheme (issue #28).

Nothing here imports Qt; matplotlib and Dask are imported only by the modules that
need them.
"""

from __future__ import annotations


class StudyError(ValueError):
    """Bad input to a study (a grid, a step, a cache); one line naming the fix."""


__all__ = ["StudyError"]
