"""Viscous damping on groups (issue #44 item 4): LAMMPS's ``fix viscous``
(doc/src/fix_viscous.rst: ``F_i = −γ v_i``) and ``fix viscous/sphere``
(doc/src/fix_viscous_sphere.rst: ``T_i = −γ ω_i``).

The forces of the engine are functions of the configuration (``engine.forcefield``);
a force proportional to the velocity is therefore not one of them but a flow of its
own, ``m v̇ = −γ v``, ``J Ω̇ = −γ_r Ω``, whose exact solution over a time ``τ`` is
``v ← e^{−γτ/m} v``, ``Ω ← e^{−γ_r τ/J} Ω`` (spheres).  The stepping loop composes it
with the scheme's step ``Φ_h`` by Strang's splitting, ``D_{h/2} ∘ Φ_h ∘ D_{h/2}``
(:func:`damp_half` before and after the step): second order for every second-order
symmetric scheme, and the work each half removes, ``½ m |v|² (1 − e^{−γh/m})`` (the same
for ``Ω``), is known exactly and booked in the ``dissipated`` component.  So
``E + dissipated`` is constant to the scheme's accuracy (O(h²) for ``rrp-newmark``:
docs/physics.md §4.6), and a damped run of a variational scheme is no longer
variational, as it should not be.

A stage without viscous damping (every ``γ_i = γ_r,i = 0``, the metamaterial's first
stage, whose family has the flow for its second) leaves it out: the stepping loop asks
:func:`any_viscous` once a call (the arrays change only between calls, at a stage's
entry) and then only keeps the velocities (:func:`save_velocities`; ``Π`` only for the schemes
that keep it, the only ones whose ``Π`` the bonds' flow moves) for the bonds' own
damping flow, the flow of this module being the identity (issue #44 item 9).

``γ_i`` and ``γ_r,i`` per sphere live in the force field's fields tuple
(``engine.potentials.fields.new_fields``: ``FI_GAMMA``, ``FI_GAMMA_ROT``); spheres
outside the damped groups have 0.
"""

from __future__ import annotations

import math

from numba import njit

from .fields import FI_GAMMA, FI_GAMMA_ROT, FI_SAVE


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def damp_half(v, o, pi, m, J, fields, tau, save):
    """The exact damping flow over ``tau`` (``v_i ← e^{−γ_i τ/m_i} v_i``,
    ``Ω_i ← e^{−γ_r,i τ/J_i} Ω_i`` and the body angular momentum ``Π_i`` with it,
    module docstring) in place; with ``save``, the velocities before it are kept in
    ``fields[FI_SAVE]`` (:func:`undo_damping`).
    Returns the kinetic energy it removed (``≥ 0``)."""
    gamma = fields[FI_GAMMA]
    gamma_r = fields[FI_GAMMA_ROT]
    keep = fields[FI_SAVE]
    d = 0.0
    for i in range(v.shape[0]):
        if save:
            for k in range(3):
                keep[i, k] = v[i, k]
                keep[i, 3 + k] = o[i, k]
                keep[i, 6 + k] = pi[i, k]
        g = gamma[i]
        if g != 0.0:
            f = math.exp(-g * tau / m[i])
            s = v[i, 0] ** 2 + v[i, 1] ** 2 + v[i, 2] ** 2
            d += 0.5 * m[i] * s * (1.0 - f * f)
            for k in range(3):
                v[i, k] *= f
        g = gamma_r[i]
        if g != 0.0:
            f = math.exp(-g * tau / J[i])
            s = o[i, 0] ** 2 + o[i, 1] ** 2 + o[i, 2] ** 2
            d += 0.5 * J[i] * s * (1.0 - f * f)
            for k in range(3):
                o[i, k] *= f
                pi[i, k] *= f
    return d


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def any_viscous(fields):
    """Whether some sphere has a viscous damping ``γ_i ≠ 0`` or ``γ_r,i ≠ 0``: else
    :func:`damp_half` is the identity and removes nothing."""
    gamma = fields[FI_GAMMA]
    gamma_r = fields[FI_GAMMA_ROT]
    on = False
    for i in range(gamma.shape[0]):
        on |= gamma[i] != 0.0
    for i in range(gamma_r.shape[0]):
        on |= gamma_r[i] != 0.0
    return on


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def save_velocities(v, o, pi, fields, with_pi):
    """Keep ``v``, ``Ω`` (and ``Π`` if ``with_pi``: a scheme that keeps it) in
    ``fields[FI_SAVE]`` (:func:`damp_half` with ``save`` when the viscous flow is the
    identity: :func:`undo_damping` puts them back)."""
    keep = fields[FI_SAVE]
    for i in range(v.shape[0]):
        for k in range(3):
            keep[i, k] = v[i, k]
            keep[i, 3 + k] = o[i, k]
    if with_pi:
        for i in range(v.shape[0]):
            for k in range(3):
                keep[i, 6 + k] = pi[i, k]


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def undo_damping(v, o, pi, fields, with_pi):
    """Put back the velocities :func:`damp_half` or :func:`save_velocities` kept (a step
    that failed leaves the last good state as it was); ``Π`` too if ``with_pi`` (it was
    kept)."""
    keep = fields[FI_SAVE]
    for i in range(v.shape[0]):
        for k in range(3):
            v[i, k] = keep[i, k]
            o[i, k] = keep[i, 3 + k]
    if with_pi:
        for i in range(v.shape[0]):
            for k in range(3):
                pi[i, k] = keep[i, 6 + k]
