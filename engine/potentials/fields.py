"""Uniform fields on groups acting on point dipoles and charges (issue #44 item 3).

LAMMPS's ``fix efield`` (doc/src/fix_efield.rst): a uniform field ``E`` adds the force
``F = qE`` to each charged sphere of the group and, for point dipoles, the torque
``τ = μ × E``; the energies are ``U = −q E·x`` and ``U = −μ·E``.  Here:

* each sphere's dipole ``μ_i`` is fixed in its body frame (LAMMPS's ``dipole``
  columns, doc/src/atom_style.rst; ``fix nve/bpm/sphere update dipole``: it turns with
  the body), so the spatial dipole is ``R_i μ_i`` and the field's spatial moment
  (docs/physics.md §1) is ``RM_i = (R_i μ_i) × E``;
* a field row ``(group, E₀, t₀, t₁, c₀, c₁)`` acts on the spheres of ``group`` (``−1``:
  all) with ``E(t) = s(t) E₀``, ``s`` the ramp ``c₀`` before ``t₀``, ``c₁`` after ``t₁``
  and linear between (LAMMPS's ``c*ramp(a,b)``, doc/src/variable.rst: ``ramp(x,y)``
  goes linearly from ``x`` at the start of the run to ``y`` at its end); a constant
  field is ``c₀ = c₁ = 1``.  A stage (issue #44 item 5) drives a ramp by writing its
  row's ``t₀, t₁``;
* ``U(x, R, t) = −Σ_rows s(t) Σ_{i∈group} (R_i μ_i·E₀ + q_i E₀·x_i)``, the
  ``field`` energy component.

**Time.**  The kernels are functions of the configuration; the field's time is the
force field's clock ``clock[CLOCK_T]``, set by the stepping loop to the time of the
configuration the step evaluates (its end, ``t + h``; each Yoshida sub-step's own end)
and by the driver before it evaluates the current state.  For the velocity-Verlet
family this is the scheme on the extended phase space ``(x, t)``: half kick at
``(x_k, t_k)``, drift, half kick at ``(x_{k+1}, t_{k+1})``.

**Work.**  With a time-dependent field ``E = T + U`` is not constant: ``dE/dt = ∂U/∂t
= Σ_rows s'(t) u_r(x)``, ``u_r = −Σ_{i∈group}(R_i μ_i·E₀ + q_i E₀·x_i)``.
:func:`field_work` books ``−∫ ∂U/∂t dt`` over a step from ``t_a`` to ``t_b`` in the
``field work`` component, integrating ``s'`` (piecewise constant: exact) against
``u_r`` interpolated linearly between the step's two configurations (second order), so
that ``E + field work`` is constant to the scheme's own accuracy (measured in
docs/physics.md §4.6).

The force field's slot ``ff[FIELDS]`` (``engine.specialize``) holds the tuple of
:func:`new_fields`, which :mod:`engine.potentials.damping` shares.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..layout import E_FIELD
from ..rotations import quat_rotate_t

# the tuple ff[FIELDS]
FI_MU = 0  # (n, 3) body-frame dipoles μ_i (or (0, 3))
FI_CHARGE = 1  # (n,) charges q_i (or (0,))
FI_ROWS = 2  # (k, ROW) the fields
FI_GROUP = 3  # (n,) int64 each sphere's group (or (0,))
FI_GAMMA = 4  # (n,) translational damping γ_i (engine.potentials.damping)
FI_GAMMA_ROT = 5  # (n,) rotational damping γ_r,i
FI_SAVE = 6  # (n, 9) scratch: v, Ω, Π before a damped step (restored if it fails)
FI_CLOCK = 7  # (2,) the field's time and the step's start
CLOCK_T = 0
CLOCK_START = 1
# a field row
R_GROUP = 0
R_E = 1  # 3 slots
R_T0 = 4
R_T1 = 5
R_C0 = 6
R_C1 = 7
ROW = 8


def new_fields(n: int = 0) -> tuple:
    """The empty fields-and-damping tuple (no dipoles, charges, fields or damping) of a
    model of ``n`` spheres (``n = 0``: the arrays of a model without them)."""
    return (np.zeros((n, 3)), np.zeros(n), np.zeros((0, ROW)), np.full(n, -1, np.int64),
            np.zeros(n), np.zeros(n), np.zeros((n, 9)), np.zeros(2))


@njit(nogil=True, cache=True, _nrt=False, forceinline=True)
def ramp_scale(row, t):
    """``(s(t), s'(t))`` of a field row: ``c₀`` before ``t₀``, ``c₁`` from ``t₁``,
    linear between (LAMMPS's ``c*ramp(a,b)``, doc/src/variable.rst)."""
    t0 = row[R_T0]
    t1 = row[R_T1]
    if t <= t0:
        return row[R_C0], 0.0
    if t >= t1:
        return row[R_C1], 0.0
    slope = (row[R_C1] - row[R_C0]) / (t1 - t0)
    return row[R_C0] + slope * (t - t0), slope


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _row_potential(x, q, fields, r, F, RM, scale, loads):
    """``u_r = −Σ_{i∈group}(R_i μ_i·E₀ + q_i E₀·x_i)`` of row ``r``; with ``loads``,
    also ``F_i += scale q_i E₀`` and ``RM_i += scale (R_i μ_i) × E₀``
    (fix_efield.rst: ``F = qE``, torque ``μ × E``)."""
    mu, charge, rows, group = fields[FI_MU], fields[FI_CHARGE], fields[FI_ROWS], fields[3]
    g = int(rows[r, R_GROUP])
    e0 = rows[r, R_E]
    e1 = rows[r, R_E + 1]
    e2 = rows[r, R_E + 2]
    has_mu = mu.shape[0] == x.shape[0]
    has_q = charge.shape[0] == x.shape[0]
    u = 0.0
    for i in range(x.shape[0]):
        if g >= 0 and group[i] != g:
            continue
        if has_mu:
            m0, m1, m2 = quat_rotate_t(q[i, 0], q[i, 1], q[i, 2], q[i, 3], mu[i, 0],
                                       mu[i, 1], mu[i, 2])
            u -= m0 * e0 + m1 * e1 + m2 * e2
            if loads:
                RM[i, 0] += scale * (m1 * e2 - m2 * e1)
                RM[i, 1] += scale * (m2 * e0 - m0 * e2)
                RM[i, 2] += scale * (m0 * e1 - m1 * e0)
        if has_q:
            qi = charge[i]
            u -= qi * (e0 * x[i, 0] + e1 * x[i, 1] + e2 * x[i, 2])
            if loads:
                F[i, 0] += scale * qi * e0
                F[i, 1] += scale * qi * e1
                F[i, 2] += scale * qi * e2
    return u


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def field_loads(x, q, fields, F, RM, energy):
    """Add every field row's ``F_i = s q_i E₀`` and ``RM_i = s (R_i μ_i) × E₀`` at the
    clock's time and set ``energy[E_FIELD] = −Σ s (R_i μ_i·E₀ + q_i E₀·x_i)``
    (fix_efield.rst: ``U = −μ·E``, ``U = −q E·x``; module docstring)."""
    rows = fields[FI_ROWS]
    t = fields[FI_CLOCK][CLOCK_T]
    u = 0.0
    for r in range(rows.shape[0]):
        s, _ = ramp_scale(rows[r], t)
        u += s * _row_potential(x, q, fields, r, F, RM, s, True)
    energy[E_FIELD] = u


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def field_work(xa, qa, xb, qb, fields, ta, tb):
    """``∫_{t_a}^{t_b} ∂U/∂t dt`` over a step from ``(x_a, q_a)`` at ``t_a`` to
    ``(x_b, q_b)`` at ``t_b``: per row, ``s'`` (piecewise constant, the ramp's slope on
    ``[t₀, t₁]``) integrated exactly against ``u_r`` linear in time between its values at
    the two configurations (``dE/dt = ∂U/∂t``, module docstring)."""
    rows = fields[FI_ROWS]
    h = tb - ta
    if h == 0.0:
        return 0.0
    lo_t = min(ta, tb)
    hi_t = max(ta, tb)
    w = 0.0
    for r in range(rows.shape[0]):
        t0 = rows[r, R_T0]
        t1 = rows[r, R_T1]
        lo = max(lo_t, t0)
        hi = min(hi_t, t1)
        if not (hi > lo and t1 > t0):
            continue
        slope = (rows[r, R_C1] - rows[r, R_C0]) / (t1 - t0)
        ua = _row_potential(xa, qa, fields, r, xa, xa, 0.0, False)
        ub = _row_potential(xb, qb, fields, r, xb, xb, 0.0, False)
        # ∫_lo^hi slope (u_a + (u_b − u_a)(t − t_a)/h) dt, signed by the direction of time
        part = slope * ((hi - lo) * ua + (ub - ua) * ((hi - ta) ** 2 - (lo - ta) ** 2)
                        / (2.0 * h))
        w += part if tb > ta else -part
    return w


@njit(nogil=True, cache=True, _nrt=False, forceinline=True)
def set_field_time(fields, t):
    """Set the field's clock to ``t`` (the time of the next evaluation)."""
    fields[FI_CLOCK][CLOCK_T] = t
