"""What one record of an event-driven run costs (issue #33 item 2): the kinetic energies
and the momenta of the state read on the flights, in one compiled call instead of a
dozen NumPy ones (a record should cost about what reading the flights costs).

Energy-stepping drives spherical bodies only (``stepper.unsupported``): the spin
momentum is ``J Ω`` and ``T_rot = ½ J |Ω|²`` (docs/physics.md §5, the diagnostics'
``spin_momentum`` and ``rotational_energy`` for spheres).
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def kinetic_and_momenta(m, J, x, v, om, P, L):
    """``(T_trans, T_rot)`` of the state, and ``P = Σ m v``, ``L = Σ x × m v + J Ω``
    (about the origin) into ``P``, ``L`` (3 each); bodies summed in order."""
    tt = 0.0
    tr = 0.0
    for c in range(3):
        P[c] = 0.0
        L[c] = 0.0
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    for i in range(x.shape[0]):
        w0, w1, w2 = m[i] * v[i, 0], m[i] * v[i, 1], m[i] * v[i, 2]
        P[0] += w0
        P[1] += w1
        P[2] += w2
        L[0] += x[i, 1] * w2 - x[i, 2] * w1
        L[1] += x[i, 2] * w0 - x[i, 0] * w2
        L[2] += x[i, 0] * w1 - x[i, 1] * w0
        s0 += J[i] * om[i, 0]
        s1 += J[i] * om[i, 1]
        s2 += J[i] * om[i, 2]
        tt += m[i] * (v[i, 0] * v[i, 0] + v[i, 1] * v[i, 1] + v[i, 2] * v[i, 2])
        tr += J[i] * (om[i, 0] * om[i, 0] + om[i, 1] * om[i, 1] + om[i, 2] * om[i, 2])
    L[0] += s0
    L[1] += s1
    L[2] += s2
    return 0.5 * tt, 0.5 * tr
