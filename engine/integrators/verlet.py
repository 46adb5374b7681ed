"""The velocity-Verlet family for spheres: ``rrp-exact``, ``rrp-newmark``, ``pfc-verlet``.

All three share the translational update and the half kicks of the spin; they differ
only in the map that turns the mid-step spin ``w`` into the attitude increment:

* ``rrp-exact``   (B&G eq. (23)): ``Δα = 2h/(1 + sqrt(1 - h²|w|²)) w``, requires ``h|w| < 1``;
* ``rrp-newmark`` (B&G eq. (25)): ``Δα = h w``;
* ``pfc-verlet``  (PFC balls):    exact exponential, rotation by ``h|w|`` about ``w``.

Speed: each update is its own loop over bodies that touches few arrays and has no
branch, so that it vectorises; ``state_shapes_ok`` tells the compiler the row lengths
(3 and 4), without which the loops cannot be vectorised.  Divisions have no zero check
(``error_model="numpy"``): masses and inertias are positive.  The ``*_ws`` kernels take
the force field's scratch (``engine.forcefield.new_scratch``) and neither allocate nor
raise: the stepping loop keeps its arrays without reference counting.
"""

from __future__ import annotations

import math

from numba import njit, prange

from ..forcefield import compute_forces_ws, new_scratch
from ..layout import E_ROTATIONAL, E_TRANSLATIONAL, ERR_RRP_LIMIT, ERR_SHAPE, OK
from ..parallel import CHUNK, PARALLEL_MIN_UPDATE
from ..rotations import quat_from_rotvec_t, quat_from_rrp_t, quat_mul_t
from ..specialize import LARGE, gated

ROT_RRP_EXACT = 0
ROT_RRP_NEWMARK = 1
ROT_EXPONENTIAL = 2


@njit(nogil=True, cache=True, _nrt=False, forceinline=True)
def state_shapes_ok(s):
    """Whether the state buffer ``s`` has rows of 3 (``x, v, Ω, F, RM``) and 4 (``q``).

    Tested at the top of a step kernel (which then returns ``ERR_SHAPE``), it also lets
    the compiler use these row lengths as constants: the loops over bodies vectorise."""
    return (s[0].shape[1] == 3 and s[1].shape[1] == 3 and s[2].shape[1] == 4
            and s[3].shape[1] == 3 and s[4].shape[1] == 3 and s[5].shape[1] == 3)


@njit(nogil=True, cache=True, _nrt=False, forceinline=True)
def states_ok(s0, s1):
    """:func:`state_shapes_ok` of both states of a step (the step kernels' first test,
    one copy: issue #34 item 4)."""
    return state_shapes_ok(s0) and state_shapes_ok(s1)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def drift_positions(h, m, x0, v0, F0, x1):
    """``x₁ = x₀ + h v₀ + h²/(2m) F₀`` (B&G eq. (23a), LLM eq. (92), PFC): the
    translational drift every velocity-Verlet scheme here shares."""
    drift_range(h, m, x0, v0, F0, x1, 0, x0.shape[0])


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def drift_range(h, m, x0, v0, F0, x1, i0, i1):
    """:func:`drift_positions` for the bodies ``i0 ≤ i < i1``."""
    c0 = 0.5 * h * h
    for i in range(i0, i1):
        c = c0 / m[i]
        for k in range(3):
            x1[i, k] = x0[i, k] + h * v0[i, k] + c * F0[i, k]


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def kick_velocities(h, m, v0, F0, F1, v1):
    """``v₁ = v₀ + h/(2m) (F₀ + F₁)`` (B&G eq. (23d), LLM eq. (95)): the translational
    kick every velocity-Verlet scheme here shares."""
    kick_range(h, m, v0, F0, F1, v1, 0, v0.shape[0])


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def kick_range(h, m, v0, F0, F1, v1, i0, i1):
    """:func:`kick_velocities` for the bodies ``i0 ≤ i < i1``."""
    for i in range(i0, i1):
        c = 0.5 * h / m[i]
        for k in range(3):
            v1[i, k] = v0[i, k] + c * (F0[i, k] + F1[i, k])


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def renormalise_quats(q):
    """Project every attitude quaternion back onto the unit sphere.

    ``q(Δα) ⊗ q_k`` is a product of unit quaternions, so this only removes the round-off
    that would otherwise random-walk ``|q|`` away from 1 (≈ 1e-11 after 1e5 steps,
    visible in ``|Rρ₀|``).  One Newton step of ``1/sqrt(n²)`` about 1 (``1.5 − ½ n²``) is
    exact to O(ε²) for ``n² = 1 + ε`` and vectorises (no square root)."""
    renormalise_range(q, 0, q.shape[0])


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def renormalised_t(a0, a1, a2, a3):
    """``a (1.5 − ½|a|²)``: the quaternion ``a`` renormalised as
    :func:`renormalise_quats` does it (the same operations, the same bits)."""
    c = 1.5 - 0.5 * (a0 * a0 + a1 * a1 + a2 * a2 + a3 * a3)
    return a0 * c, a1 * c, a2 * c, a3 * c


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def renormalise_range(q, i0, i1):
    """:func:`renormalise_quats` for the bodies ``i0 ≤ i < i1`` (each row read into
    locals first: ``q[i, k] *= c`` in a loop over ``k`` ran 3× slower, issue #44 item 9)."""
    for i in range(i0, i1):
        q[i, 0], q[i, 1], q[i, 2], q[i, 3] = renormalised_t(q[i, 0], q[i, 1], q[i, 2],
                                                            q[i, 3])


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def _before_forces(h, rot_map, m, J, s0, s1, i0, i1):
    """Bodies ``i0 ≤ i < i1``: the half kick of the spin (but for ``rrp-exact``, whose
    caller has made it), the drift, the attitude update and its renormalisation
    (B&G eqs. (23a)–(23c)), each a loop of its own (they vectorise; the renormalisation
    made in the attitude's loop instead gives the same bits and, on the metamaterial,
    no speed-up that the box's noise lets one see: issue #44 item 9)."""
    if not states_ok(s0, s1):
        return
    x0, v0, q0, o0, F0, RM0 = s0[:6]
    x1, v1, q1, o1 = s1[:4]
    hh = 0.5 * h
    if rot_map != ROT_RRP_EXACT:
        for i in range(i0, i1):
            c = hh / J[i]
            for k in range(3):
                o1[i, k] = o0[i, k] + c * RM0[i, k]  # w, the mid-step spin
    drift_range(h, m, x0, v0, F0, x1, i0, i1)
    if rot_map == ROT_EXPONENTIAL:
        for i in range(i0, i1):
            d = quat_from_rotvec_t(h * o1[i, 0], h * o1[i, 1], h * o1[i, 2])
            a0, a1, a2, a3 = quat_mul_t(d[0], d[1], d[2], d[3], q0[i, 0], q0[i, 1],
                                        q0[i, 2], q0[i, 3])
            q1[i, 0], q1[i, 1], q1[i, 2], q1[i, 3] = a0, a1, a2, a3
    elif rot_map == ROT_RRP_EXACT:
        for i in range(i0, i1):
            w0 = o1[i, 0]
            w1 = o1[i, 1]
            w2 = o1[i, 2]
            hw2 = h * h * (w0 * w0 + w1 * w1 + w2 * w2)
            f = 2.0 * h / (1.0 + math.sqrt(1.0 - hw2))  # B&G eq. (16), h|w| < 1
            d = quat_from_rrp_t(f * w0, f * w1, f * w2)
            a0, a1, a2, a3 = quat_mul_t(d[0], d[1], d[2], d[3], q0[i, 0], q0[i, 1],
                                        q0[i, 2], q0[i, 3])
            q1[i, 0], q1[i, 1], q1[i, 2], q1[i, 3] = a0, a1, a2, a3
    else:
        for i in range(i0, i1):
            d = quat_from_rrp_t(h * o1[i, 0], h * o1[i, 1], h * o1[i, 2])
            a0, a1, a2, a3 = quat_mul_t(d[0], d[1], d[2], d[3], q0[i, 0], q0[i, 1],
                                        q0[i, 2], q0[i, 3])
            q1[i, 0], q1[i, 1], q1[i, 2], q1[i, 3] = a0, a1, a2, a3
    renormalise_range(q1, i0, i1)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def _after_forces(h, m, J, s0, s1, i0, i1):
    """Bodies ``i0 ≤ i < i1``: the kicks ``v₁ = v₀ + h/(2m)(F₀ + F₁)`` and
    ``Ω₁ = w + h/(2J) RM₁`` (B&G eqs. (23d), (23e))."""
    if not states_ok(s0, s1):
        return
    v0, q0, o0, F0 = s0[1:5]
    v1, q1, o1, F1, RM1 = s1[1:6]
    kick_range(h, m, v0, F0, F1, v1, i0, i1)
    hh = 0.5 * h
    for i in range(i0, i1):  # (the row read into locals first: as renormalise_range)
        c = hh / J[i]
        w0, w1, w2 = o1[i, 0], o1[i, 1], o1[i, 2]
        o1[i, 0] = w0 + c * RM1[i, 0]
        o1[i, 1] = w1 + c * RM1[i, 1]
        o1[i, 2] = w2 + c * RM1[i, 2]


@njit(nogil=True, cache=True, parallel=True, error_model="numpy", _nrt=False)
def _before_forces_chunks(h, rot_map, m, J, s0, s1):
    """:func:`_before_forces` chunk by chunk (``prange``)."""
    n = s0[0].shape[0]
    for c in prange((n + CHUNK - 1) // CHUNK):
        _before_forces(h, rot_map, m, J, s0, s1, c * CHUNK, min(n, (c + 1) * CHUNK))


@njit(nogil=True, cache=True, parallel=True, error_model="numpy", _nrt=False)
def _after_forces_chunks(h, m, J, s0, s1):
    """:func:`_after_forces` chunk by chunk (``prange``)."""
    n = s0[0].shape[0]
    for c in prange((n + CHUNK - 1) // CHUNK):
        _after_forces(h, m, J, s0, s1, c * CHUNK, min(n, (c + 1) * CHUNK))


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _attitude_in_place(rot_map, h, o, q):
    """``q ← q(Δ(w)) ⊗ q``, renormalised (:func:`renormalise_quats`), on views of a
    chunk: ``o`` holds the mid-step spin ``w``.  Called with a constant ``rot_map``, so
    that the loop has no branch."""
    if not (o.shape[1] == 3 and q.shape[1] == 4):
        return
    for i in range(o.shape[0]):
        w0 = o[i, 0]
        w1 = o[i, 1]
        w2 = o[i, 2]
        if rot_map == ROT_EXPONENTIAL:
            d0, d1, d2, d3 = quat_from_rotvec_t(h * w0, h * w1, h * w2)
        elif rot_map == ROT_RRP_EXACT:
            f = 2.0 * h / (1.0 + math.sqrt(1.0 - h * h * (w0 * w0 + w1 * w1 + w2 * w2)))
            d0, d1, d2, d3 = quat_from_rrp_t(f * w0, f * w1, f * w2)  # B&G eq. (16)
        else:
            d0, d1, d2, d3 = quat_from_rrp_t(h * w0, h * w1, h * w2)
        a0, a1, a2, a3 = quat_mul_t(d0, d1, d2, d3, q[i, 0], q[i, 1], q[i, 2], q[i, 3])
        q[i, 0], q[i, 1], q[i, 2], q[i, 3] = renormalised_t(a0, a1, a2, a3)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _drift_chunk(h, rot_map, m, J, x, v, q, o, F, RM):
    """The first half of a step on views of a chunk: the half kicks
    ``v ← v + h/(2m) F``, ``Ω ← Ω + h/(2J) RM`` (the mid-step spin ``w``), the drift
    ``x ← x + h v`` and the attitude ``q ← q(Δ(w)) ⊗ q``, renormalised (B&G eqs.
    (23a)–(23c): ``x₀ + h(v₀ + h/(2m) F₀)`` is eq. (23a) with the half kick stored in
    ``v``).  Each update is a loop over the views from index 0, so that it vectorises."""
    if not (x.shape[1] == 3 and v.shape[1] == 3 and q.shape[1] == 4 and o.shape[1] == 3
            and F.shape[1] == 3 and RM.shape[1] == 3):
        return  # (checked by the caller: this tells the compiler the row lengths)
    hh = 0.5 * h
    # (kick, drift and spin fused in one pass over the chunk, not pieces.kick + drift: the
    # large models' parallel path, bench_pile_scale.py; like _kick_chunk's loop, on purpose)
    for i in range(x.shape[0]):
        cm = hh / m[i]
        cj = hh / J[i]
        for k in range(3):
            v[i, k] = v[i, k] + cm * F[i, k]
            x[i, k] = x[i, k] + h * v[i, k]
            o[i, k] = o[i, k] + cj * RM[i, k]
    if rot_map == ROT_EXPONENTIAL:
        _attitude_in_place(ROT_EXPONENTIAL, h, o, q)
    elif rot_map == ROT_RRP_EXACT:
        _attitude_in_place(ROT_RRP_EXACT, h, o, q)
    else:
        _attitude_in_place(ROT_RRP_NEWMARK, h, o, q)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _kick_chunk(h, m, J, v, o, F, RM):
    """The second half of a step on views of a chunk: the kicks ``v ← v + h/(2m) F``,
    ``Ω ← Ω + h/(2J) RM`` (B&G eqs. (23d), (23e)); returns ``(Σ m|v|², Σ J|Ω|²)`` of the
    chunk after them."""
    a = 0.0
    b = 0.0
    if not (v.shape[1] == 3 and o.shape[1] == 3 and F.shape[1] == 3 and RM.shape[1] == 3):
        return a, b  # (as above)
    hh = 0.5 * h
    # (pieces.kick's loop with the kinetic sums fused in: one pass over the chunk,
    # bench_pile_scale.py; like _drift_chunk's loop, on purpose)
    for i in range(v.shape[0]):
        cm = hh / m[i]
        cj = hh / J[i]
        for k in range(3):
            v[i, k] = v[i, k] + cm * F[i, k]
            o[i, k] = o[i, k] + cj * RM[i, k]
        a += m[i] * (v[i, 0] * v[i, 0] + v[i, 1] * v[i, 1] + v[i, 2] * v[i, 2])
        b += J[i] * (o[i, 0] * o[i, 0] + o[i, 1] * o[i, 1] + o[i, 2] * o[i, 2])
    return a, b


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def _sum_chunks(part):
    """``Σ_c part[c]`` in chunk order (the same bits for any thread count)."""
    et = 0.0
    er = 0.0
    for c in range(part.shape[0]):
        et += part[c, 0]
        er += part[c, 1]
    return et, er


@njit(nogil=True, cache=True, parallel=True, error_model="numpy", _nrt=False)
def _drift_in_place_chunks(h, rot_map, m, J, s):
    """:func:`_drift_chunk` chunk by chunk (``prange``)."""
    n = s[0].shape[0]
    for c in prange((n + CHUNK - 1) // CHUNK):
        i0 = c * CHUNK
        i1 = min(n, i0 + CHUNK)
        _drift_chunk(h, rot_map, m[i0:i1], J[i0:i1], s[0][i0:i1], s[1][i0:i1], s[2][i0:i1],
                     s[3][i0:i1], s[4][i0:i1], s[5][i0:i1])


@njit(nogil=True, cache=True, parallel=True, error_model="numpy", _nrt=False)
def _kick_in_place_chunks(h, m, J, s, part):
    """:func:`_kick_chunk` chunk by chunk (``prange``), while the chunk is in the caches;
    returns ``(Σ m|v|², Σ J|Ω|²)``, the chunks' sums (``part[c]``) added in chunk
    order."""
    n = s[0].shape[0]
    for c in prange((n + CHUNK - 1) // CHUNK):
        i0 = c * CHUNK
        i1 = min(n, i0 + CHUNK)
        part[c, 0], part[c, 1] = _kick_chunk(h, m[i0:i1], J[i0:i1], s[1][i0:i1], s[3][i0:i1],
                                             s[4][i0:i1], s[5][i0:i1])
    return _sum_chunks(part)


@njit(nogil=True, cache=True, parallel=True, error_model="numpy", _nrt=False)
def _kick_drift_in_place_chunks(h, rot_map, m, J, s, part):
    """The end of one step and the start of the next in one pass, chunk by chunk
    (``prange``): :func:`_kick_chunk` then :func:`_drift_chunk` (the same forces: the
    kick of step ``n`` and the half kick of step ``n + 1`` both use ``F_n``), so that
    the state is read and written once instead of twice (the same bits as the two
    passes).  Returns the kinetic sums of step ``n`` as :func:`_kick_in_place_chunks`."""
    n = s[0].shape[0]
    for c in prange((n + CHUNK - 1) // CHUNK):
        i0 = c * CHUNK
        i1 = min(n, i0 + CHUNK)
        x, v, q, o, F, RM = s[0][i0:i1], s[1][i0:i1], s[2][i0:i1], s[3][i0:i1], \
            s[4][i0:i1], s[5][i0:i1]
        part[c, 0], part[c, 1] = _kick_chunk(h, m[i0:i1], J[i0:i1], v, o, F, RM)
        _drift_chunk(h, rot_map, m[i0:i1], J[i0:i1], x, v, q, o, F, RM)
    return _sum_chunks(part)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def _mid_spin_norm(h, J, o, RM, i):
    """``|w|``, ``w = Ω + h/(2J) RM`` of body ``i``, as :func:`_drift_in_place_chunks`
    computes ``w``."""
    c = 0.5 * h / J[i]
    w0 = o[i, 0] + c * RM[i, 0]
    w1 = o[i, 1] + c * RM[i, 1]
    w2 = o[i, 2] + c * RM[i, 2]
    return math.sqrt(w0 * w0 + w1 * w1 + w2 * w2)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def verlet_in_place_ws(h, rot_map, s, ff, info, ws, drift_next):
    """One step of the velocity-Verlet family taken in place on the one buffer ``s``
    (the large models of spheres, ``engine.integrators.advance``): the same scheme as
    :func:`verlet_step` (B&G eqs. (23a)–(23e)) with the half kick of the velocity kept
    in ``v`` instead of ``F₀``, so that a step reads and writes each array of the state
    once less.  Fills the kinetic energy slots too.  With ``drift_next``, the step ends
    with the first half of the next one (:func:`finish_in_place_ws`).

    Before anything moves, ``rrp-exact`` checks ``h|w| < 1`` on every body and on
    failure returns ``ERR_RRP_LIMIT`` with ``info = (body, h|w|, |w|)``, ``s`` unchanged.
    Any other failure (the forces') leaves ``s`` half-stepped: the caller restores it.
    Needs the parallel scratch of ``ws`` (``ws[2][8]``, one row a chunk)."""
    if not _in_place_shapes_ok(s, ws):
        return ERR_SHAPE
    o, RM = s[3], s[5]
    J = ff[1]
    n = o.shape[0]
    if rot_map == ROT_RRP_EXACT:
        bad = False
        for i in range(n):
            bad |= not abs(h) * _mid_spin_norm(h, J, o, RM, i) < 1.0
        if bad:
            for i in range(n):
                wn = _mid_spin_norm(h, J, o, RM, i)
                if not abs(h) * wn < 1.0:
                    info[0] = i
                    info[1] = abs(h) * wn
                    info[2] = wn
                    return ERR_RRP_LIMIT
    _drift_in_place_chunks(h, rot_map, ff[0], J, s)
    return finish_in_place_ws(h, rot_map, s, ff, ws, drift_next)


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def finish_in_place_ws(h, rot_map, s, ff, ws, drift_next):
    """The rest of a step of :func:`verlet_in_place_ws` whose first half is done: the
    forces, the kicks and the kinetic energy slots.  With ``drift_next``, the first half
    of the next step too, in the same pass over the state
    (:func:`_kick_drift_in_place_chunks`): ``s`` is then the next step half done, its
    forces and energies those of the step completed, and the next call is this one.
    (Not for ``rrp-exact``, whose check comes before the first half.)"""
    if not _in_place_shapes_ok(s, ws):
        return ERR_SHAPE
    x, q, F, RM, e = s[0], s[2], s[4], s[5], s[6]
    m, J = ff[0], ff[1]
    part = ws[2][8]
    st = compute_forces_ws(x, q, ff, F, RM, e, ws)
    if st != OK:
        return st
    if drift_next:
        et, er = _kick_drift_in_place_chunks(h, rot_map, m, J, s, part)
    else:
        et, er = _kick_in_place_chunks(h, m, J, s, part)
    e[E_TRANSLATIONAL] = 0.5 * et
    e[E_ROTATIONAL] = 0.5 * er
    return OK


@njit(nogil=True, cache=True, _nrt=False, forceinline=True)
def _in_place_shapes_ok(s, ws):
    """The state's shapes (:func:`state_shapes_ok`) and one row of kinetic sums a chunk
    in ``ws[2][8]``: checked before anything moves."""
    part = ws[2][8]
    return (state_shapes_ok(s) and part.shape[0] == (s[0].shape[0] + CHUNK - 1) // CHUNK
            and part.shape[1] >= 2)


@njit(nogil=True, cache=True)
def verlet_step(h, rot_map, s0, s1, ff, info):
    """One step ``s0 → s1`` (docs/physics.md §3.1, §3.2, §3.4):

    ``x₁ = x₀ + h v₀ + h²/(2m) F₀``, ``w = Ω₀ + h/(2J) RM₀``, ``q₁ = q(Δ(w)) ⊗ q₀``,
    ``v₁ = v₀ + h/(2m)(F₀ + F₁)``, ``Ω₁ = w + h/(2J) RM₁`` (B&G eqs. (23a)–(23e)).

    ``rrp-exact`` checks ``h|w| < 1`` for every body before taking the step; on failure
    it returns ``ERR_RRP_LIMIT`` with ``info = (body, h|w|, |w|)`` (``s1`` is scratch).
    """
    return verlet_step_ws(h, rot_map, s0, s1, ff, info, new_scratch(s0[0].shape[0], ff))


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False, forceinline=True)
def verlet_step_ws(h, rot_map, s0, s1, ff, info, ws):
    """:func:`verlet_step` with the force field's scratch ``ws`` supplied."""
    if not states_ok(s0, s1):
        return ERR_SHAPE
    x0, v0, q0, o0, F0, RM0, e0 = s0[:7]
    x1, v1, q1, o1, F1, RM1, e1 = s1[:7]
    m, J = ff[0], ff[1]
    n = x0.shape[0]
    if rot_map == ROT_RRP_EXACT:  # (checked on every body before any moves)
        hh = 0.5 * h
        for i in range(n):
            c = hh / J[i]
            for k in range(3):
                o1[i, k] = o0[i, k] + c * RM0[i, k]  # w, the mid-step spin
        bad = False
        for i in range(n):
            wn = math.sqrt(o1[i, 0] ** 2 + o1[i, 1] ** 2 + o1[i, 2] ** 2)
            bad |= not abs(h) * wn < 1.0
        if bad:
            for i in range(n):
                wn = math.sqrt(o1[i, 0] ** 2 + o1[i, 1] ** 2 + o1[i, 2] ** 2)
                if not abs(h) * wn < 1.0:
                    info[0] = i
                    info[1] = abs(h) * wn
                    info[2] = wn
                    return ERR_RRP_LIMIT
    chunked = n >= PARALLEL_MIN_UPDATE
    if chunked:  # (compiled for large models only: engine.specialize)
        gated(ff, LARGE, None, _before_forces_chunks, h, rot_map, m, J, s0, s1)
    else:
        _before_forces(h, rot_map, m, J, s0, s1, 0, n)
    st = compute_forces_ws(x1, q1, ff, F1, RM1, e1, ws)
    if st != OK:
        return st
    if chunked:
        gated(ff, LARGE, None, _after_forces_chunks, h, m, J, s0, s1)
    else:
        _after_forces(h, m, J, s0, s1, 0, n)
    return OK
