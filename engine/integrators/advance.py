"""The compiled stepping loop shared by every integrator.

``advance`` runs ``n_steps`` steps of one scheme entirely inside Numba (no Python per
step), with double-buffered state: a step reads buffer ``s0`` and writes ``s1``, and
only then are they swapped, so a step that fails (``rrp-exact`` beyond ``h|w| < 1``,
non-finite values, energy error past the threshold) leaves the last good state intact.
Time series (energy components, P, L) and frames are written at a stride into
preallocated arrays.
"""

from __future__ import annotations

import math

from numba import njit

from ..forcefield import new_scratch
from ..layout import E_ROTATIONAL, E_TRANSLATIONAL, ERR_ENERGY, ERR_NONFINITE, OK
from .campello import campello_step_ws
from .rk4 import rk4_step_ws
from .verlet import ROT_EXPONENTIAL, ROT_RRP_EXACT, ROT_RRP_NEWMARK, verlet_step_ws

# scheme ids (the registry maps names to these)
S_RRP_EXACT = 0
S_RRP_NEWMARK = 1
S_CAMPELLO = 2
S_PFC_VERLET = 3
S_RK4 = 4


@njit(nogil=True, cache=True)
def step(scheme, h, s0, s1, ff, work, info):
    """One step of ``scheme`` from ``s0`` into ``s1``; returns a status code."""
    return step_ws(scheme, h, s0, s1, ff, work, info, new_scratch(s0[0].shape[0]))


@njit(nogil=True, cache=True, _nrt=False, forceinline=True)
def step_ws(scheme, h, s0, s1, ff, work, info, ws):
    """:func:`step` with the force field's scratch ``ws`` supplied (allocates nothing)."""
    if scheme == S_CAMPELLO:
        return campello_step_ws(h, s0, s1, ff, info, ws)
    elif scheme == S_RK4:
        return rk4_step_ws(h, s0, s1, ff, work, info, ws)
    # (one call site: the kernels are inlined, and this keeps the compiled code small)
    if scheme == S_RRP_EXACT:
        rot_map = ROT_RRP_EXACT
    elif scheme == S_RRP_NEWMARK:
        rot_map = ROT_RRP_NEWMARK
    else:
        rot_map = ROT_EXPONENTIAL
    return verlet_step_ws(h, rot_map, s0, s1, ff, info, ws)


@njit(nogil=True, cache=True, _nrt=False, forceinline=True)
def kinetic_energy(s, ff):
    """Fill the kinetic slots: ``½ Σ m|v|²`` and ``½ Σ J|Ω|²``; return the total energy."""
    x, v, q, o, F, RM, e = s
    m = ff[0]
    J = ff[1]
    et = 0.0
    er = 0.0
    for i in range(x.shape[0]):
        et += m[i] * (v[i, 0] ** 2 + v[i, 1] ** 2 + v[i, 2] ** 2)
        er += J[i] * (o[i, 0] ** 2 + o[i, 1] ** 2 + o[i, 2] ** 2)
    e[E_TRANSLATIONAL] = 0.5 * et
    e[E_ROTATIONAL] = 0.5 * er
    total = 0.0
    for k in range(e.shape[0]):
        total += e[k]
    return total


@njit(nogil=True, cache=True, _nrt=False, forceinline=True)
def record(s, ff, r, rec, rec_frames, t):
    """Write time ``t``, the energy components, ``P = Σ m v`` and
    ``L = Σ (x × m v + J Ω)`` (docs/physics.md §5), and optionally the frame, at row r."""
    x, v, q, o, F, RM, e = s
    rec_t, rec_e, rec_P, rec_L, rec_x, rec_q, rec_o = rec
    m = ff[0]
    J = ff[1]
    rec_t[r] = t
    for k in range(e.shape[0]):
        rec_e[r, k] = e[k]
    p0 = p1 = p2 = 0.0
    l0 = l1 = l2 = 0.0
    for i in range(x.shape[0]):
        mv0 = m[i] * v[i, 0]
        mv1 = m[i] * v[i, 1]
        mv2 = m[i] * v[i, 2]
        p0 += mv0
        p1 += mv1
        p2 += mv2
        l0 += x[i, 1] * mv2 - x[i, 2] * mv1 + J[i] * o[i, 0]
        l1 += x[i, 2] * mv0 - x[i, 0] * mv2 + J[i] * o[i, 1]
        l2 += x[i, 0] * mv1 - x[i, 1] * mv0 + J[i] * o[i, 2]
    rec_P[r, 0], rec_P[r, 1], rec_P[r, 2] = p0, p1, p2
    rec_L[r, 0], rec_L[r, 1], rec_L[r, 2] = l0, l1, l2
    if rec_frames:  # (loops, not slices: nothing here can raise)
        _copy2(x, rec_x[r])
        _copy2(q, rec_q[r])
        _copy2(o, rec_o[r])


@njit(nogil=True, cache=True, _nrt=False, forceinline=True)
def _copy2(src, dst):
    for i in range(src.shape[0]):
        for k in range(src.shape[1]):
            dst[i, k] = src[i, k]


@njit(nogil=True, cache=True, _nrt=False)
def _copy_state(src, dst):
    _copy2(src[0], dst[0])
    _copy2(src[1], dst[1])
    _copy2(src[2], dst[2])
    _copy2(src[3], dst[3])
    _copy2(src[4], dst[4])
    _copy2(src[5], dst[5])
    for k in range(src[6].shape[0]):
        dst[6][k] = src[6][k]


@njit(nogil=True, cache=True)
def advance(scheme, n_steps, h, t0, step0, stride, s0, s1, ff, work, e_ctrl, rec, rec_frames,
            info):
    """Run up to ``n_steps`` steps of ``scheme`` with step ``h`` from time ``t0``.

    ``s0`` holds the current state with its forces and energy components and is where
    the state is on return; ``s1`` is scratch.  ``step0`` is the global index of the
    current step: a record is written after every step whose index is a multiple of
    ``stride`` (into ``rec``, at most its length).  ``e_ctrl = (E_ref, E_scale, tol)``:
    stop with ``ERR_ENERGY`` when ``|E - E_ref| > tol E_scale`` (``tol <= 0``: never).

    Returns ``(steps_done, records_written, status)``.
    """
    return advance_ws(scheme, n_steps, h, t0, step0, stride, s0, s1, ff, work, e_ctrl, rec,
                      rec_frames, info, new_scratch(s0[0].shape[0]))


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def advance_ws(scheme, n_steps, h, t0, step0, stride, s0, s1, ff, work, e_ctrl, rec,
               rec_frames, info, ws):
    """:func:`advance` with the force field's scratch ``ws`` supplied."""
    home = s0
    done = 0
    nrec = 0
    status = OK
    cap = rec[0].shape[0]
    e_ref = e_ctrl[0]
    e_lim = e_ctrl[2] * e_ctrl[1]
    while done < n_steps:
        status = step_ws(scheme, h, s0, s1, ff, work, info, ws)
        if status != OK:
            break
        total = kinetic_energy(s1, ff)
        if not math.isfinite(total):
            status = ERR_NONFINITE
            break
        if e_lim > 0.0 and abs(total - e_ref) > e_lim:
            status = ERR_ENERGY
            info[3] = (total - e_ref) / e_ctrl[1]
            break
        s0, s1 = s1, s0
        done += 1
        if (step0 + done) % stride == 0 and nrec < cap:
            record(s0, ff, nrec, rec, rec_frames, t0 + done * h)
            nrec += 1
    if done % 2 == 1:
        _copy_state(s0, home)
    return done, nrec, status
