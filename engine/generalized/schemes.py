"""Moreau-type schemes for a system in generalized coordinates with one unilateral
contact (docs/physics.md §3.9, generalized; physics.md §3.9; CEL = Capobianco, Eugster &
Leine).  Numba kernels over the system array ``sp`` of :mod:`.spring_pendulum`.

State array ``s = (q₀, q₁, u₀, u₁, D)``: the configuration at the current node ``q_k``,
the scheme's velocity variable and the dissipated work ``D``.  The velocity variable is

* ``moreau``: the node velocity ``u_k``;
* ``moreau-symmetric`` and ``moreau-variational``: the velocity of the *previous* step
  ``u_{k−1} = (q_k − q_{k−1})/Δt`` (two-step schemes).

The physical node velocity ``v_k`` (what the views, the energy and the momenta see) is
``u_k`` for ``moreau`` and ``M(q_k)⁻¹ p_k⁻`` for the two-step schemes, with ``p_k⁻`` the
discrete Legendre momentum (:func:`node_momentum`); :func:`to_internal` inverts this
map when a scheme takes over (or the step changes).

One step writes a small output array ``o`` (slots ``O_*``) with the percussion, the
contact's relative velocity ``ξ_N``, the gap, the iteration counts and a status.
"""

from __future__ import annotations

import math

from numba import njit

from ..layout import (
    E_DISSIPATED,
    E_GRAVITY,
    E_SPRING,
    E_TRANSLATIONAL,
    ERR_CONTACT,
    ERR_ENERGY,
    ERR_NO_CONVERGENCE,
    ERR_NONFINITE,
    IS_CONTACT_ITERATIONS,
    IS_CONTACT_MAX,
    IS_CONTACT_SOLVES,
    IS_CONTACTS,
    IS_IMPACTS,
    IS_ITERATIONS,
    IS_MAX,
    IS_PENETRATION,
    IS_PERCUSSIONS,
    IS_SOLVES,
    OK,
)
from ..solver_counts import count_solve
from .spring_pendulum import (
    CARTESIAN,
    SP_COORD,
    SP_EN,
    SP_M,
    cartesian,
    forces,
    forces_du,
    gap,
    gap_gradient,
    lagrangian_dq,
    lagrangian_dq_du,
    mass_diag,
    potentials,
)

S_MOREAU = 0
S_SYMMETRIC = 1
S_VARIATIONAL = 2
SCHEME_IDS = {"moreau": S_MOREAU, "moreau-symmetric": S_SYMMETRIC,
              "moreau-variational": S_VARIATIONAL}

# step output slots
O_P = 0  # percussion P_N of the step (≥ 0)
O_XI = 1  # ξ_N = w_Nᵀ(u⁺ + e_N u⁻) after the solve (nan when inactive)
O_GAP = 2  # g_N where the contact is evaluated (q_M for moreau, q_k otherwise)
O_ACTIVE = 3  # 1 if g_N ≤ 0 there
O_NEWTON = 4  # Newton iterations of the smooth solve (0: explicit)
O_CONTACT_IT = 5  # iterations of the contact solve (1: closed form, 0: none)
O_QM0 = 6  # moreau: the midpoint q_M (2 slots)
O_QM1 = 7
O_UPDATE = 8  # last Newton update (for a failure message)
O_STATUS = 9
O_PEN = 10  # largest penetration −g_N of the configurations of this step (≥ 0)
O_XI_FREE = 11  # ξ_N without percussion (the contact solve's input)
O_DD = 12  # increment of D
N_OUT = 16

# control slots
C_E_REF = 0
C_E_SCALE = 1
C_E_TOL = 2  # relative energy error counted as a blow-up (≤ 0: off)
C_TOL = 3  # Newton tolerance on the update, relative to 1 + |u|
C_MAX_IT = 4
N_CTRL = 5


@njit(nogil=True, cache=True)
def mass_diag_dr(sp, q0, q1):
    """``∂M/∂q₀`` of the diagonal of ``M`` (``M`` depends on ``q₀ = r`` only, polar)."""
    if sp[SP_COORD] == CARTESIAN:
        return 0.0, 0.0
    return 0.0, 2.0 * sp[SP_M] * q0


@njit(nogil=True, cache=True)
def node_momentum(scheme, sp, q0, q1, v0, v1, dt):
    """The discrete Legendre momentum ``p_k⁻`` at node ``q_k`` from ``u_{k−1} = v``:

    * symmetric (CEL eq. (12)): ``p_k⁻ = M(q_k) u_{k−1} + Δt/2 h(q_k, u_{k−1})``;
    * variational: ``p_k⁻ = D₂L_d(q_{k−1}, q_k) = ½ (M(q_{k−1}) + M(q_k)) u_{k−1}
      + Δt/2 (∂L/∂q)(q_k, u_{k−1})``, ``q_{k−1} = q_k − Δt u_{k−1}``;
    * moreau: ``M(q_k) u_k``."""
    m0, m1 = mass_diag(sp, q0, q1)
    if scheme == S_MOREAU:
        return m0 * v0, m1 * v1
    if scheme == S_SYMMETRIC:
        h0, h1 = forces(sp, q0, q1, v0, v1)
        return m0 * v0 + 0.5 * dt * h0, m1 * v1 + 0.5 * dt * h1
    a0, a1 = mass_diag(sp, q0 - dt * v0, q1 - dt * v1)
    l0, l1 = lagrangian_dq(sp, q0, q1, v0, v1)
    return 0.5 * (a0 + m0) * v0 + 0.5 * dt * l0, 0.5 * (a1 + m1) * v1 + 0.5 * dt * l1


@njit(nogil=True, cache=True)
def node_velocity(scheme, sp, s, dt):
    """The physical node velocity ``v_k = M(q_k)⁻¹ p_k⁻`` from the state ``s``."""
    p0, p1 = node_momentum(scheme, sp, s[0], s[1], s[2], s[3], dt)
    m0, m1 = mass_diag(sp, s[0], s[1])
    return p0 / m0, p1 / m1


@njit(nogil=True, cache=True)
def _solve2(a00, a01, a10, a11, b0, b1):
    det = a00 * a11 - a01 * a10
    return (a11 * b0 - a01 * b1) / det, (a00 * b1 - a10 * b0) / det


@njit(nogil=True, cache=True)
def _solve3(a, b0, b1, b2):
    """Solve the 3×3 system ``a`` (row-major tuple of 9) by Cramer's rule."""
    a00, a01, a02, a10, a11, a12, a20, a21, a22 = a
    c00 = a11 * a22 - a12 * a21
    c01 = a12 * a20 - a10 * a22
    c02 = a10 * a21 - a11 * a20
    det = a00 * c00 + a01 * c01 + a02 * c02
    x0 = (b0 * c00 + a01 * (a12 * b2 - b1 * a22) + a02 * (b1 * a21 - a11 * b2)) / det
    x1 = (a00 * (b1 * a22 - a12 * b2) + b0 * (a12 * a20 - a10 * a22)
          + a02 * (a10 * b2 - b1 * a20)) / det
    x2 = (a00 * (a11 * b2 - b1 * a21) + a01 * (b1 * a20 - a10 * b2)
          + b0 * (a10 * a21 - a11 * a20)) / det
    return x0, x1, x2


@njit(nogil=True, cache=True)
def _residual(scheme, sp, q0, q1, u0, u1, dt):
    """``A(u)`` and ``∂A/∂u`` of the two-step schemes' equation ``A(u_k) = p_k⁻ + w_N P``:

    * symmetric (CEL eq. (12)): ``A(u) = M(q_k) u − Δt/2 h(q_k, u)`` (``= p_k⁺``);
    * variational: ``A(u) = −D₁L_d(q_k, q_k + Δt u) = ½ (M(q_k) + M(q_k + Δt u)) u
      − Δt/2 (∂L/∂q)(q_k, u)`` (``= p_k⁺``)."""
    m0, m1 = mass_diag(sp, q0, q1)
    if scheme == S_SYMMETRIC:
        h0, h1 = forces(sp, q0, q1, u0, u1)
        d00, d01, d10, d11 = forces_du(sp, q0, q1, u0, u1)
        return (m0 * u0 - 0.5 * dt * h0, m1 * u1 - 0.5 * dt * h1,
                m0 - 0.5 * dt * d00, -0.5 * dt * d01, -0.5 * dt * d10, m1 - 0.5 * dt * d11)
    n0, n1 = q0 + dt * u0, q1 + dt * u1
    b0, b1 = mass_diag(sp, n0, n1)
    g0, g1 = mass_diag_dr(sp, n0, n1)
    l0, l1 = lagrangian_dq(sp, q0, q1, u0, u1)
    d00, d01, d10, d11 = lagrangian_dq_du(sp, q0, q1, u0, u1)
    return (0.5 * (m0 + b0) * u0 - 0.5 * dt * l0, 0.5 * (m1 + b1) * u1 - 0.5 * dt * l1,
            0.5 * (m0 + b0) + 0.5 * dt * g0 * u0 - 0.5 * dt * d00, -0.5 * dt * d01,
            0.5 * dt * g1 * u1 - 0.5 * dt * d10, 0.5 * (m1 + b1) - 0.5 * dt * d11)


@njit(nogil=True, cache=True)
def step_moreau(sp, s, dt, out, o):
    """Moreau's midpoint step (CEL §3, rectangle rule; physics.md §3.9):
    ``q_M = q_k + Δt/2 u_k``; ``M(q_M)(u_{k+1} − u_k) = Δt h(q_M, u_k) + w_N(q_M) P``
    with Newton's impact law on ``ξ = w_Nᵀ(u_{k+1} + e_N u_k)`` if ``g_N(q_M) ≤ 0``;
    ``q_{k+1} = q_M + Δt/2 u_{k+1}``.  Linear in ``u_{k+1}``: the single contact has the
    closed form ``P = max(0, −ξ_free / (w_Nᵀ M⁻¹ w_N))``."""
    e = sp[SP_EN]
    u0, u1 = s[2], s[3]
    a0, a1 = s[0] + 0.5 * dt * u0, s[1] + 0.5 * dt * u1
    m0, m1 = mass_diag(sp, a0, a1)
    h0, h1 = forces(sp, a0, a1, u0, u1)
    v0, v1 = u0 + dt * h0 / m0, u1 + dt * h1 / m1
    g = gap(sp, a0, a1)
    P, xi, xf, cit = 0.0, math.nan, math.nan, 0
    w0, w1 = gap_gradient(sp, a0, a1)
    if g <= 0.0:
        xf = w0 * (v0 + e * u0) + w1 * (v1 + e * u1)
        xi = xf
        if xf < 0.0:
            P = -xf / (w0 * w0 / m0 + w1 * w1 / m1)
            v0 += w0 * P / m0
            v1 += w1 * P / m1
            xi = w0 * (v0 + e * u0) + w1 * (v1 + e * u1)
            cit = 1
    n0, n1 = a0 + 0.5 * dt * v0, a1 + 0.5 * dt * v1
    dD = -P * (w0 * (v0 + u0) + w1 * (v1 + u1)) * 0.5
    out[0], out[1], out[2], out[3], out[4] = n0, n1, v0, v1, s[4] + dD
    o[O_P], o[O_XI], o[O_GAP], o[O_ACTIVE] = P, xi, g, 1.0 if g <= 0.0 else 0.0
    o[O_NEWTON], o[O_CONTACT_IT], o[O_QM0], o[O_QM1] = 0.0, cit, a0, a1
    o[O_UPDATE], o[O_STATUS], o[O_XI_FREE], o[O_DD] = 0.0, OK, xf, dD
    o[O_PEN] = max(0.0, -g, -gap(sp, n0, n1))


@njit(nogil=True, cache=True)
def step_two_step(scheme, sp, s, dt, tol, max_it, out, o):
    """One step of ``moreau-symmetric`` (CEL eq. (12)) or ``moreau-variational``
    (docs/physics.md §3.9, generalized): solve ``A(u_k) = p_k⁻ + w_N(q_k) P_k`` with Newton's
    impact law on ``ξ = w_Nᵀ(u_k + e_N u_{k−1})`` if ``g_N(q_k) ≤ 0``; then
    ``q_{k+1} = q_k + Δt u_k``.  First without percussion (Newton on ``u``, or the
    closed form where ``A`` is linear with constant matrix: symmetric, Cartesian); if the
    contact is active and ``ξ_free < 0``, Newton on ``(u, P)`` with ``ξ = 0`` (closed
    form in the linear case), and ``P ≥ 0`` is checked."""
    e = sp[SP_EN]
    q0, q1, up0, up1 = s[0], s[1], s[2], s[3]
    p0, p1 = node_momentum(scheme, sp, q0, q1, up0, up1, dt)
    explicit = scheme == S_SYMMETRIC and sp[SP_COORD] == CARTESIAN
    m0, m1 = mass_diag(sp, q0, q1)
    its, upd, status = 0, 0.0, OK
    if explicit:
        f0, f1 = forces(sp, q0, q1, up0, up1)
        u0, u1 = (p0 + 0.5 * dt * f0) / m0, (p1 + 0.5 * dt * f1) / m1
    else:
        u0, u1 = up0, up1
        conv = False
        while its < max_it:
            A0, A1, j00, j01, j10, j11 = _residual(scheme, sp, q0, q1, u0, u1, dt)
            d0, d1 = _solve2(j00, j01, j10, j11, p0 - A0, p1 - A1)
            u0 += d0
            u1 += d1
            its += 1
            upd = max(abs(d0), abs(d1))
            if not upd <= tol * (1.0 + max(abs(u0), abs(u1))):
                continue
            conv = True
            break
        if not conv:
            status = ERR_NO_CONVERGENCE
    g = gap(sp, q0, q1)
    w0, w1 = gap_gradient(sp, q0, q1)
    P, xi, xf, cit = 0.0, math.nan, math.nan, 0
    if g <= 0.0 and status == OK:
        xf = w0 * (u0 + e * up0) + w1 * (u1 + e * up1)
        xi = xf
        if xf < 0.0:
            if explicit:
                P = -xf / (w0 * w0 / m0 + w1 * w1 / m1)
                u0 += w0 * P / m0
                u1 += w1 * P / m1
                cit = 1
            else:
                conv = False
                while cit < max_it:
                    A0, A1, j00, j01, j10, j11 = _residual(scheme, sp, q0, q1, u0, u1, dt)
                    r0, r1 = A0 - p0 - w0 * P, A1 - p1 - w1 * P
                    r2 = w0 * (u0 + e * up0) + w1 * (u1 + e * up1)
                    d0, d1, d2 = _solve3((j00, j01, -w0, j10, j11, -w1, w0, w1, 0.0),
                                         -r0, -r1, -r2)
                    u0 += d0
                    u1 += d1
                    P += d2
                    cit += 1
                    upd = max(abs(d0), abs(d1))
                    if upd <= tol * (1.0 + max(abs(u0), abs(u1))) and abs(d2) <= tol * (
                            1.0 + abs(P)):
                        conv = True
                        break
                if not conv:
                    status = ERR_NO_CONVERGENCE
                elif P < 0.0:
                    status = ERR_CONTACT
            xi = w0 * (u0 + e * up0) + w1 * (u1 + e * up1)
    dD = -P * (w0 * (u0 + up0) + w1 * (u1 + up1)) * 0.5
    n0, n1 = q0 + dt * u0, q1 + dt * u1
    out[0], out[1], out[2], out[3], out[4] = n0, n1, u0, u1, s[4] + dD
    o[O_P], o[O_XI], o[O_GAP], o[O_ACTIVE] = P, xi, g, 1.0 if g <= 0.0 else 0.0
    o[O_NEWTON], o[O_CONTACT_IT], o[O_QM0], o[O_QM1] = its, cit, q0, q1
    o[O_UPDATE], o[O_STATUS], o[O_XI_FREE], o[O_DD] = upd, status, xf, dD
    o[O_PEN] = max(0.0, -g, -gap(sp, n0, n1))


@njit(nogil=True, cache=True)
def step(scheme, sp, s, dt, tol, max_it, out, o):
    """One step of ``scheme`` from ``s`` into ``out`` (``s`` untouched)."""
    if scheme == S_MOREAU:
        step_moreau(sp, s, dt, out, o)
    else:
        step_two_step(scheme, sp, s, dt, tol, max_it, out, o)


@njit(nogil=True, cache=True)
def to_internal(scheme, sp, q0, q1, v0, v1, dt, tol, max_it):
    """The scheme's velocity variable at node ``q`` with physical node velocity ``v``:
    ``moreau``: ``u_k = v``; the two-step schemes: the ``u_{k−1}`` whose discrete
    Legendre momentum is ``p_k⁻ = M(q_k) v`` (Newton; explicit in Cartesian
    coordinates for the symmetric scheme).  Returns ``(u₀, u₁, iterations, ok)``."""
    if scheme == S_MOREAU:
        return v0, v1, 0, True
    m0, m1 = mass_diag(sp, q0, q1)
    t0, t1 = m0 * v0, m1 * v1
    u0, u1 = v0, v1
    for it in range(max_it):
        p0, p1 = node_momentum(scheme, sp, q0, q1, u0, u1, dt)
        # Jacobian of p⁻ with respect to u_{k−1}
        if scheme == S_SYMMETRIC:
            d00, d01, d10, d11 = forces_du(sp, q0, q1, u0, u1)
            j00, j01, j10, j11 = (m0 + 0.5 * dt * d00, 0.5 * dt * d01, 0.5 * dt * d10,
                                  m1 + 0.5 * dt * d11)
        else:
            b0, b1 = mass_diag(sp, q0 - dt * u0, q1 - dt * u1)
            g0, g1 = mass_diag_dr(sp, q0 - dt * u0, q1 - dt * u1)
            d00, d01, d10, d11 = lagrangian_dq_du(sp, q0, q1, u0, u1)
            j00 = 0.5 * (m0 + b0) - 0.5 * dt * g0 * u0 + 0.5 * dt * d00
            j01 = 0.5 * dt * d01
            j10 = -0.5 * dt * g1 * u1 + 0.5 * dt * d10
            j11 = 0.5 * (m1 + b1) + 0.5 * dt * d11
        d0, d1 = _solve2(j00, j01, j10, j11, t0 - p0, t1 - p1)
        u0 += d0
        u1 += d1
        if max(abs(d0), abs(d1)) <= tol * (1.0 + max(abs(u0), abs(u1))):
            return u0, u1, it + 1, True
    return u0, u1, max_it, False


@njit(nogil=True, cache=True)
def node_values(scheme, sp, s, dt, e_row, pl, frame):
    """Energy components (``layout`` slots), ``P``, ``L`` (``pl``: 6) and the drawn frame
    (``frame``: x(3), quaternion(4), Ω(3)) at the node of state ``s``.  The kinetic
    energy is ``½ p_k⁻ᵀ M(q_k)⁻¹ p_k⁻`` (moreau: ``½ u_kᵀ M(q_k) u_k``)."""
    v0, v1 = node_velocity(scheme, sp, s, dt)
    q0, q1 = s[0], s[1]
    m0, m1 = mass_diag(sp, q0, q1)
    es, eg = potentials(sp, q0, q1)
    for i in range(e_row.shape[0]):
        e_row[i] = 0.0
    e_row[E_TRANSLATIONAL] = 0.5 * (m0 * v0 * v0 + m1 * v1 * v1)
    e_row[E_SPRING] = es
    e_row[E_GRAVITY] = eg
    e_row[E_DISSIPATED] = s[4]
    x, y, vx, vy = cartesian(sp, q0, q1, v0, v1)
    m = sp[SP_M]
    pl[0], pl[1], pl[2] = m * vx, m * vy, 0.0
    pl[3], pl[4], pl[5] = 0.0, 0.0, m * (x * vy - y * vx)
    r2 = x * x + y * y
    phi = math.atan2(x, -y)
    frame[0], frame[1], frame[2] = x, y, 0.0
    frame[3], frame[4], frame[5], frame[6] = math.cos(0.5 * phi), 0.0, 0.0, math.sin(0.5 * phi)
    frame[7], frame[8] = 0.0, 0.0
    frame[9] = (x * vy - y * vx) / r2 if r2 > 0.0 else 0.0


@njit(nogil=True, cache=True)
def run(scheme, n, dt, step0, stride, sp, s, s1, ctrl, stats, info, o, e_row, pl, frame,
        rec_e, rec_P, rec_L, rec_x, rec_q, rec_o, frames):
    """Take up to ``n`` steps of ``scheme`` from ``s`` (updated in place after every good
    step), recording node values every ``stride``-th step index.  Allocation free.
    Returns ``(steps done, records, status)``; on a failure ``s`` is the last good
    state and ``info = (body, iterations, update, energy error)``."""
    tol, max_it = ctrl[C_TOL], int(ctrl[C_MAX_IT])
    nrec = 0
    for i in range(n):
        step(scheme, sp, s, dt, tol, max_it, s1, o)
        status = int(o[O_STATUS])
        if status != OK:
            info[0], info[1], info[2] = 0.0, max(o[O_NEWTON], o[O_CONTACT_IT]), o[O_UPDATE]
            return i, nrec, status
        node_values(scheme, sp, s1, dt, e_row, pl, frame)
        etot = 0.0
        for c in range(e_row.shape[0]):
            etot += e_row[c]
        finite = math.isfinite(etot)
        for c in range(5):
            finite = finite and math.isfinite(s1[c])
        if not finite:
            info[0], info[3] = 0.0, math.nan
            return i, nrec, ERR_NONFINITE
        err = abs(etot - ctrl[C_E_REF]) / ctrl[C_E_SCALE]
        if ctrl[C_E_TOL] > 0.0 and err > ctrl[C_E_TOL]:
            info[0], info[3] = 0.0, err
            return i, nrec, ERR_ENERGY
        for c in range(5):
            s[c] = s1[c]
        # statistics (layout.IS_*)
        nit = o[O_NEWTON]
        if nit > 0:
            count_solve(stats, nit, IS_SOLVES, IS_ITERATIONS, IS_MAX)
        cit = o[O_CONTACT_IT]
        if cit > 0:
            count_solve(stats, cit, IS_CONTACT_SOLVES, IS_CONTACT_ITERATIONS, IS_CONTACT_MAX)
        stats[IS_CONTACTS] = o[O_ACTIVE]
        stats[IS_PERCUSSIONS] = 1.0 if o[O_P] > 0.0 else 0.0
        if o[O_P] > 0.0:
            stats[IS_IMPACTS] += 1.0
        if o[O_PEN] > stats[IS_PENETRATION]:
            stats[IS_PENETRATION] = o[O_PEN]
        k = step0 + i + 1
        if k % stride == 0:
            for c in range(e_row.shape[0]):
                rec_e[nrec, c] = e_row[c]
            for c in range(3):
                rec_P[nrec, c] = pl[c]
                rec_L[nrec, c] = pl[3 + c]
            if frames:
                for c in range(3):
                    rec_x[nrec, 0, c] = frame[c]
                    rec_o[nrec, 0, c] = frame[7 + c]
                for c in range(4):
                    rec_q[nrec, 0, c] = frame[3 + c]
            nrec += 1
    return n, nrec, OK
