"""Models written in generalized coordinates ``q, u`` with a mass matrix ``M(q)`` and a
force vector ``h(q, u)`` (Capobianco, Eugster & Leine's notation), and the Moreau-type
schemes that drive them (docs/physics.md §3.9, generalized, physics.md §3.9, §4.4).

* :mod:`.spring_pendulum` — the planar spring pendulum with a wall, in polar
  ``q = (r, φ)`` or Cartesian ``q = (x, y)`` coordinates (Numba kernels);
* :mod:`.schemes` — ``moreau``, ``moreau-symmetric`` and ``moreau-variational`` as Numba
  kernels and their compiled stepping loop;
* :mod:`.simulation` — :class:`GeneralizedSimulation`, the driver that
  ``engine.drivers.simulation_for`` makes for such a model.
"""
