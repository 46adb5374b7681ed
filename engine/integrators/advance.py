"""The compiled stepping loop of each integrator.

The loop of a scheme (:func:`loop_kernel`, called through :func:`advance_ws`) runs
``n_steps`` steps entirely inside Numba (no Python per step); it is compiled for that
scheme alone and for the force-field family of the model it runs
(``engine.specialize``), so a run compiles its own kernels and nothing else
(issue #25).  The state is double-buffered: a step reads buffer ``s0`` and writes ``s1``, and
only then are they swapped, so a step that fails (``rrp-exact`` beyond ``h|w| < 1``,
non-finite values, energy error past the threshold) leaves the last good state intact.
The exception, for speed: the velocity-Verlet family on large models of spheres steps in
place, one buffer, and rewinds a failed step from a checkpoint taken at the start of the
call (:func:`_advance_in_place`).
Time series (energy components, P, L) and frames are written at a stride into
preallocated arrays.

A state buffer is the tuple ``(x, v, q, Ω, F, RM, e, Π)``: the physical state, its
forces, spatial moments and energy components, and the body angular momentum ``Π`` of
the schemes that keep it (``lgvi``, ``rrp-implicit``).  ``work`` is
``(ax, av, aq, ao, s2, ip, stats, cw)``: RK4's accumulators (scratch of the Moreau
schemes too), a third state buffer (for the Yoshida composition), the integrator
parameters ``ip[IP_*]``, the iteration statistics ``stats[IS_*]`` and the contact work
arrays of the hard-contact schemes (``engine.contact.detect``); :func:`new_work` makes
them.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ..contact.detect import new_contact_work
from ..forcefield import new_scratch, one_body_stand_in
from ..layout import (
    BONDS_BREAK,
    DEFAULT_CONTACT_MAX_ITERATIONS,
    DEFAULT_CONTACT_TOLERANCE,
    DEFAULT_MAX_ITERATIONS,
    DEFAULT_TOLERANCE,
    E_DISSIPATED,
    E_FIELD_WORK,
    E_ROTATIONAL,
    E_TRANSLATIONAL,
    ERR_ENERGY,
    ERR_NONFINITE,
    ERR_RRP_LIMIT,
    ERR_SHAPE,
    F_NONSPHERICAL,
    IP_CONTACT_MAX_IT,
    IP_CONTACT_TOL,
    IP_MAX_IT,
    IP_PHI,
    IP_TOL,
    N_ENERGY,
    N_IP,
    N_IS,
    OK,
    T_DAMPING,
    T_FIELD,
    T_HISTORY,
)
from ..parallel import CHUNK, PARALLEL_MIN_UPDATE
from ..potentials.bond_damping import bond_damp_half
from ..potentials.bpm_break import any_breaks, carry_broken
from ..potentials.damping import any_viscous, damp_half, save_velocities, undo_damping
from ..potentials.fields import CLOCK_START, FI_CLOCK, field_work, set_field_time
from ..potentials.friction import H_DISSIPATED, commit_history, set_anchor_time
from ..rotations import quat_rotate_t
from ..specialize import BOND_DAMP, BPM_DAMPED, BPM_TABLE, BREAKS, FIELDS, LARGE, gated
from .campello import campello_implicit_step_ws, campello_step_ws
from .lgvi import MAP_CAYLEY, MAP_EXP, lgvi_step_ws, mat_vec
from .moreau import moreau_step_ws, moreau_symmetric_step_ws
from .pfc import ATT_BUSS2, ATT_RK4, pfc_clump_step_ws
from .rk4 import rk4_rigid_step_ws, rk4_step_ws
from .verlet import (
    ROT_EXPONENTIAL,
    ROT_RRP_EXACT,
    ROT_RRP_NEWMARK,
    finish_in_place_ws,
    verlet_in_place_ws,
    verlet_step_ws,
)

# scheme ids (the registry maps names to these)
S_RRP_EXACT = 0
S_RRP_NEWMARK = 1
S_CAMPELLO = 2
S_PFC_VERLET = 3
S_RK4 = 4
S_LGVI = 5
S_RRP_IMPLICIT = 6
S_PFC_BUSS2 = 7
S_PFC_RK4 = 8
S_CAMPELLO_IMPLICIT = 9
S_MOREAU = 10
S_MOREAU_SYMMETRIC = 11
S_MOREAU_VARIATIONAL = 12  # generalized coordinates only (engine.generalized)
S_YOSHIDA = 100
"""``S_YOSHIDA + id``: Yoshida's 4th-order composition of the symmetric scheme ``id``."""

YOSHIDA_1 = 1.0 / (2.0 - 2.0 ** (1.0 / 3.0))
YOSHIDA_2 = -(2.0 ** (1.0 / 3.0)) / (2.0 - 2.0 ** (1.0 / 3.0))


def new_state_buffer(x: np.ndarray, v: np.ndarray, q: np.ndarray, omega: np.ndarray,
                     pi: np.ndarray | None = None) -> tuple:
    """A state buffer ``(x, v, q, Ω, F, RM, e, Π)`` holding (not copying) the arrays."""
    n = x.shape[0]
    pi = np.zeros((n, 3)) if pi is None else np.ascontiguousarray(pi, dtype=np.float64)
    return (x, v, q, omega, np.zeros((n, 3)), np.zeros((n, 3)), np.zeros(N_ENERGY), pi)


def needs_scratch(scheme_id: int) -> bool:
    """Whether the scheme uses the per-body scratch of ``work`` (``work[0:5]``: RK4's
    accumulators, the Moreau schemes' midpoint arrays, Yoshida's third state buffer)."""
    return scheme_id in (S_RK4, S_MOREAU, S_MOREAU_SYMMETRIC) or scheme_id >= S_YOSHIDA


def new_work(n: int, phi: float = 0.5, tol: float = DEFAULT_TOLERANCE,
             max_iterations: int = DEFAULT_MAX_ITERATIONS,
             n_pairs_capacity: int | None = None, n_walls: int = 1,
             scratch: bool = True) -> tuple:
    """The ``work`` tuple of :func:`advance` for ``n`` bodies (contact arrays sized for a
    neighbour list of ``n_pairs_capacity`` pairs, default that of a new ``ForceField``,
    and ``n_walls`` walls: pass ``ForceField.n_walls``).  ``scratch=False``: the
    per-body scratch ``work[0:5]`` (≈ 280 bytes a body) is left empty, for a scheme
    that does not use it (:func:`needs_scratch`; the stepping kernels then must not
    be called with one that does)."""
    full = n
    n = n if scratch else 0
    ip = np.zeros(N_IP)
    ip[IP_PHI] = phi
    ip[IP_TOL] = tol
    ip[IP_MAX_IT] = max_iterations
    ip[IP_CONTACT_TOL] = DEFAULT_CONTACT_TOLERANCE
    ip[IP_CONTACT_MAX_IT] = DEFAULT_CONTACT_MAX_ITERATIONS
    s2 = new_state_buffer(np.zeros((n, 3)), np.zeros((n, 3)), np.zeros((n, 4)),
                          np.zeros((n, 3)))
    cap = max(16, 16 * full) if n_pairs_capacity is None else n_pairs_capacity
    return (np.zeros((n, 3)), np.zeros((n, 3)), np.zeros((n, 4)), np.zeros((n, 3)), s2, ip,
            np.zeros(N_IS), new_contact_work(full, cap, n_walls))


@njit(nogil=True, cache=True, _nrt=False, forceinline=True)
def verlet_rot_map(scheme):
    """The attitude map of a velocity-Verlet scheme (``engine.integrators.verlet``), or
    -1 for any other scheme."""
    if scheme == S_RRP_EXACT:
        return ROT_RRP_EXACT
    if scheme == S_RRP_NEWMARK:
        return ROT_RRP_NEWMARK
    if scheme == S_PFC_VERLET:
        return ROT_EXPONENTIAL
    return -1


@njit(nogil=True, cache=True, _nrt=False, inline="always")
def substep_ws(base, h, s0, s1, ff, work, info, ws):
    """One step ``s0 → s1`` of the scheme ``base`` (not a composition): the one place
    that calls each scheme's kernel (inlined by Numba into :func:`step_ws`, for a plain
    step and for the Yoshida sub-steps).  The velocity-Verlet family is inlined (a call
    costs ≈ 0.4 µs on a one-body model: the state and force-field tuples are passed on
    the stack, 10× the step itself, issue #10 §7); the other schemes are calls."""
    if base == S_RK4:  # (here, not in rk4_step_ws: the branch there costs 2x)
        if ff[3][F_NONSPHERICAL]:  # (compiled for models of non-spherical bodies only)
            return gated(ff, F_NONSPHERICAL, ERR_SHAPE, rk4_rigid_step_ws, h, s0, s1, ff,
                         work, info, ws)
        return rk4_step_ws(h, s0, s1, ff, work, info, ws)
    elif base == S_CAMPELLO:
        return campello_step_ws(h, s0, s1, ff, info, ws)
    elif base > S_PFC_VERLET:
        if base == S_LGVI:
            return lgvi_step_ws(h, MAP_EXP, s0, s1, ff, work, info, ws)
        elif base == S_RRP_IMPLICIT:
            return lgvi_step_ws(h, MAP_CAYLEY, s0, s1, ff, work, info, ws)
        elif base == S_PFC_BUSS2:
            return pfc_clump_step_ws(h, ATT_BUSS2, s0, s1, ff, info, ws)
        elif base == S_PFC_RK4:
            return pfc_clump_step_ws(h, ATT_RK4, s0, s1, ff, info, ws)
        elif base == S_CAMPELLO_IMPLICIT:
            return campello_implicit_step_ws(h, s0, s1, ff, work, info, ws)
        elif base == S_MOREAU_SYMMETRIC:
            return moreau_symmetric_step_ws(h, s0, s1, ff, work, info, ws)
        elif base == S_MOREAU:
            return moreau_step_ws(h, s0, s1, ff, work, info, ws)
    rot_map = verlet_rot_map(base)
    return verlet_step_ws(h, rot_map if rot_map >= 0 else ROT_EXPONENTIAL, s0, s1, ff, info,
                          ws)


@njit(nogil=True, cache=True, _nrt=False, inline="always")
def step_ws(scheme, base, h, s0, s1, ff, work, info, ws):
    """One step of ``scheme`` (its base scheme ``base``: ``scheme`` itself, or
    ``scheme − S_YOSHIDA`` for a composition): :func:`substep_ws`, or Yoshida's
    composition ``Ψ_h = Φ_{λ₁h} ∘ Φ_{λ₂h} ∘ Φ_{λ₁h}`` of the symmetric second-order
    scheme ``base`` (docs/physics.md §3.8; Yoshida 1990, eq. (5.19)):
    ``s0 → s1 → s2 → s1`` (``s2 = work[4]``), so a failing sub-step leaves ``s0``
    intact.

    Inlined into the stepping loop of one scheme (:func:`loop_kernel`), where
    ``scheme`` and ``base`` are constants: Numba prunes the branches of every other
    scheme before typing them, so the loop compiles its own scheme's kernel and no
    other (issue #25; BENCHMARKS.md, "Start-up and compile")."""
    if scheme < S_YOSHIDA:  # (a call site of its own: the loop below costs a plain
        return substep_ws(scheme, h, s0, s1, ff, work, info, ws)  # step 2x on 1 body)
    s2 = work[4]
    for k in range(3):
        if k == 0:
            a, b, lam, at = s0, s1, YOSHIDA_1, YOSHIDA_1
        elif k == 1:
            a, b, lam, at = s1, s2, YOSHIDA_2, YOSHIDA_1 + YOSHIDA_2
        else:
            a, b, lam, at = s2, s1, YOSHIDA_1, 1.0
        # (history contacts: the sub-steps' configurations lie λ₁h, (λ₁ + λ₂)h and h
        # after the step's start, the anchor; a plain step's is set by the loop)
        set_anchor_time(ff, at * h)
        if ff[3][T_FIELD]:  # (the field's time at this sub-step's end)
            set_field_time(ff[FIELDS], ff[FIELDS][FI_CLOCK][CLOCK_START] + at * h)
        st = substep_ws(base, lam * h, a, b, ff, work, info, ws)
        if st != OK:
            return st
    return OK


@njit(nogil=True, cache=True, _nrt=False, forceinline=True)
def _field_clock(ff, t_start, h):
    """Set the fields' clock for a step from ``t_start``: its start (the Yoshida
    sub-steps count from it) and the time of the configuration it evaluates, its end."""
    clock = ff[FIELDS][FI_CLOCK]
    clock[CLOCK_START] = t_start
    clock[0] = t_start + h


@njit(nogil=True, cache=True, parallel=True, error_model="numpy", _nrt=False)
def _kinetic_chunks(v, o, m, J, part):
    """``(Σ m|v|², Σ J|Ω|²)`` of a large model of spheres: per chunk of the force
    kernels' ``CHUNK`` bodies (``prange``, partial sums in ``part``), added in chunk
    order (the same bits for any thread count)."""
    n = v.shape[0]
    nc = (n + CHUNK - 1) // CHUNK
    et = 0.0
    er = 0.0
    if not (v.shape[1] == 3 and o.shape[1] == 3 and part.shape[0] == nc
            and part.shape[1] >= 2):
        return math.nan, math.nan
    for c in prange(nc):
        a = 0.0
        b = 0.0
        for i in range(c * CHUNK, min(n, (c + 1) * CHUNK)):
            a += m[i] * (v[i, 0] ** 2 + v[i, 1] ** 2 + v[i, 2] ** 2)
            b += J[i] * (o[i, 0] ** 2 + o[i, 1] ** 2 + o[i, 2] ** 2)
        part[c, 0] = a
        part[c, 1] = b
    for c in range(nc):
        et += part[c, 0]
        er += part[c, 1]
    return et, er


@njit(nogil=True, cache=True, _nrt=False, forceinline=True)
def _energy_total(e):
    total = 0.0
    for k in range(e.shape[0]):
        total += e[k]
    return total


@njit(nogil=True, cache=True, _nrt=False, forceinline=True)
def kinetic_energy(s, ff, ws):
    """Fill the kinetic slots: ``½ Σ m|v|²`` and ``½ Σ J|Ω|²`` (``½ Σ ω·𝕁ω``,
    ``ω = RᵀΩ``, for non-spherical bodies); return the total energy.  From
    ``PARALLEL_MIN_UPDATE`` spheres (and a scratch ``ws`` sized for the parallel
    kernels) the sums are taken per chunk, in parallel, and added in chunk order."""
    x, v, q, o, F, RM, e = s[:7]
    m = ff[0]
    J = ff[1]
    et = 0.0
    er = 0.0
    chunked = (x.shape[0] >= PARALLEL_MIN_UPDATE and not ff[3][F_NONSPHERICAL]
               and ws[2][8].shape[0] > 0)
    if not chunked:
        for i in range(x.shape[0]):
            et += m[i] * (v[i, 0] ** 2 + v[i, 1] ** 2 + v[i, 2] ** 2)
    if ff[3][F_NONSPHERICAL]:
        for i in range(x.shape[0]):
            b0, b1, b2 = quat_rotate_t(q[i, 0], -q[i, 1], -q[i, 2], -q[i, 3], o[i, 0],
                                       o[i, 1], o[i, 2])
            p0, p1, p2 = mat_vec(ff[10], i, b0, b1, b2)
            er += b0 * p0 + b1 * p1 + b2 * p2
    elif chunked:
        et, er = gated(ff, LARGE, (math.nan, math.nan), _kinetic_chunks, v, o, m, J,
                       ws[2][8])
    else:
        for i in range(x.shape[0]):
            er += J[i] * (o[i, 0] ** 2 + o[i, 1] ** 2 + o[i, 2] ** 2)
    e[E_TRANSLATIONAL] = 0.5 * et
    e[E_ROTATIONAL] = 0.5 * er
    return _energy_total(e)


@njit(nogil=True, cache=True, _nrt=False, forceinline=True)
def record(s, ff, r, rec, rec_frames, t):
    """Write time ``t``, the energy components, ``P = Σ m v`` and
    ``L = Σ (x × m v + J Ω)`` (``R 𝕁 Rᵀ Ω`` for non-spherical bodies; docs/physics.md
    §5), and optionally the frame (``x, q, Ω``; and ``v, Π`` when ``rec_v`` has rows),
    at row r."""
    x, v, q, o, F, RM, e = s[:7]
    rec_t, rec_e, rec_P, rec_L, rec_x, rec_q, rec_o, rec_v, rec_pi = rec
    m = ff[0]
    J = ff[1]
    aniso = ff[3][F_NONSPHERICAL] != 0
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
        if aniso:
            b0, b1, b2 = quat_rotate_t(q[i, 0], -q[i, 1], -q[i, 2], -q[i, 3], o[i, 0],
                                       o[i, 1], o[i, 2])
            j0, j1, j2 = mat_vec(ff[10], i, b0, b1, b2)
            s0, s1, s2 = quat_rotate_t(q[i, 0], q[i, 1], q[i, 2], q[i, 3], j0, j1, j2)
        else:
            s0, s1, s2 = J[i] * o[i, 0], J[i] * o[i, 1], J[i] * o[i, 2]
        l0 += x[i, 1] * mv2 - x[i, 2] * mv1 + s0
        l1 += x[i, 2] * mv0 - x[i, 0] * mv2 + s1
        l2 += x[i, 0] * mv1 - x[i, 1] * mv0 + s2
    rec_P[r, 0], rec_P[r, 1], rec_P[r, 2] = p0, p1, p2
    rec_L[r, 0], rec_L[r, 1], rec_L[r, 2] = l0, l1, l2
    if rec_frames:  # (loops, not slices: nothing here can raise)
        _copy2(x, rec_x[r])
        _copy2(q, rec_q[r])
        _copy2(o, rec_o[r])
    if rec_v.shape[0] > r:  # the full state of the frame (branch, resume: docs/output.md)
        _copy2(v, rec_v[r])
        _copy2(s[7], rec_pi[r])


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
    _copy2(src[7], dst[7])
    for k in range(src[6].shape[0]):
        dst[6][k] = src[6][k]


@njit(nogil=True, cache=True, _nrt=False, forceinline=True)
def in_place_rot_map(scheme, s0, ff, ws):
    """The attitude map of :func:`_advance_in_place` for this scheme and model, or -1
    when its steps are taken double-buffered: in place are the plain velocity-Verlet
    schemes on models of at least ``PARALLEL_MIN_UPDATE`` spheres without friction
    springs or damping (whose forces depend on the state alone; the springs are state
    of their own, kept double-buffered by ``engine.potentials.friction``)."""
    n = s0[0].shape[0]
    if (n < PARALLEL_MIN_UPDATE or ff[3][F_NONSPHERICAL] or ff[3][T_HISTORY]
            or ff[3][T_FIELD] or ff[3][T_DAMPING] or ws[2][8].shape[0] != (n + CHUNK - 1) // CHUNK):
        return -1
    return verlet_rot_map(scheme)


@njit(nogil=True, cache=True, _nrt=False, forceinline=True)
def energy_status(total, e_ctrl, info):
    """Whether a step's total energy is acceptable: ``ERR_NONFINITE``, ``ERR_ENERGY``
    (``|E - E_ref| > tol E_scale`` for ``e_ctrl = (E_ref, E_scale, tol)``, ``tol > 0``;
    ``info[3]``: the relative error) or ``OK``."""
    if not math.isfinite(total):
        return ERR_NONFINITE
    if e_ctrl[2] > 0.0 and abs(total - e_ctrl[0]) > e_ctrl[2] * e_ctrl[1]:
        info[3] = (total - e_ctrl[0]) / e_ctrl[1]
        return ERR_ENERGY
    return OK


@njit(nogil=True, cache=True, error_model="numpy", _nrt=False)
def _advance_in_place(rot_map, n_steps, h, t0, step0, stride, s, chk, ff, e_ctrl, rec,
                      rec_frames, info, ws):
    """:func:`advance_ws` for a large model of spheres stepped by the velocity-Verlet
    family in place (``engine.integrators.verlet.verlet_in_place_ws``): one state buffer
    ``s``, each step reading and writing it once, instead of a step ``s0 → s1`` that
    reads one buffer and writes the other (at 10⁶ spheres the step is bound by the
    memory traffic; BENCHMARKS.md).  Between two steps of the call, neither recorded nor
    the last, the kicks of the one and the first half of the next are one pass over the
    state (``finish_in_place_ws``; not for ``rrp-exact``, whose check comes first).

    A failed step has changed ``s``; the last good state is then taken again from the
    checkpoint ``chk`` (``s`` as the call found it): the steps that succeeded are
    replayed, to the same bits, because the forces are a function of the state alone
    (the neighbour list's pairs beyond contact add nothing, and the contacts are summed
    in the order of their indices, whichever valid list holds them).  Only a replay's
    own neighbour-list rebuild can differ from the run's, and if it overflows, the
    replay stops there and reports that instead.  ``rrp-exact``'s ``h|w| < 1`` is
    checked before anything moves: no replay.

    Returns ``(steps_done, records_written, status)`` as :func:`advance_ws`."""
    cap = rec[0].shape[0]
    if n_steps <= 0:
        return 0, 0, OK
    _copy_state(s, chk)
    done = 0
    nrec = np.int64(0)  # (not the literal 0: see advance_scheme)
    status = OK
    fuse = rot_map != ROT_RRP_EXACT
    drifted = False  # s holds the next step half done (finish_in_place_ws)
    while done < n_steps:
        # the next step starts in this one's last pass unless this one ends the call or
        # is recorded (the records and the caller see whole steps)
        nxt = fuse and done + 1 < n_steps and not ((step0 + done + 1) % stride == 0
                                                  and nrec < cap)
        if drifted:
            status = finish_in_place_ws(h, rot_map, s, ff, ws, nxt)
        else:
            status = verlet_in_place_ws(h, rot_map, s, ff, info, ws, nxt)
        if status != OK:
            break
        drifted = nxt
        total = _energy_total(s[6])
        status = energy_status(total, e_ctrl, info)
        if status != OK:
            break
        done += 1
        if (step0 + done) % stride == 0 and nrec < cap:
            record(s, ff, nrec, rec, rec_frames, t0 + done * h)
            nrec += 1
    if status == OK or status == ERR_RRP_LIMIT:
        return done, nrec, status
    keep = done
    while True:  # the last good state, from the checkpoint
        _copy_state(chk, s)
        j = 0
        st = OK
        while j < keep:
            st = verlet_in_place_ws(h, rot_map, s, ff, info, ws, False)
            if st != OK:
                break
            j += 1
        if st == OK:
            break
        keep = j
        status = st
    if keep < done:  # (the records of the steps past the one the replay reached)
        nrec = 0
        for d in range(1, keep + 1):
            if (step0 + d) % stride == 0 and nrec < cap:
                nrec += 1
    return keep, nrec, status


def _loop_of(scheme: int):
    """The stepping loop of ``scheme`` (compiled by :func:`loop_kernel`): ``scheme``,
    its base and its in-place attitude map are constants of the closure, so Numba
    prunes every other scheme's branch of :func:`step_ws` and, for a scheme outside
    the velocity-Verlet family, the in-place loop, before typing them."""
    base = scheme - S_YOSHIDA if scheme >= S_YOSHIDA else scheme
    # the in-place attitude map (compositions step double-buffered)
    in_place = verlet_rot_map.py_func(scheme) if scheme < S_YOSHIDA else -1
    # the schemes that keep the body angular momentum Π (the bonds' damping updates it)
    keeps_pi = base == S_LGVI or base == S_RRP_IMPLICIT

    def advance_scheme(n_steps, h, t0, step0, stride, s0, s1, ff, work, e_ctrl, rec,
                       rec_frames, info, ws):
        """Run up to ``n_steps`` steps of one scheme with step ``h`` from time ``t0``.

        ``s0`` holds the current state with its forces and energy components and is
        where the state is on return; ``s1`` is scratch.  ``step0`` is the global index
        of the current step: a record is written after every step whose index is a
        multiple of ``stride`` (into ``rec``, at most its length).
        ``e_ctrl = (E_ref, E_scale, tol)``: stop with ``ERR_ENERGY`` when
        ``|E - E_ref| > tol E_scale`` (``tol <= 0``: never).  ``ws``: the force
        field's scratch (``engine.forcefield.new_scratch``).  A model whose bonds
        break (family slot ``BREAKS``) carries the ``broken`` energy and stops with
        ``BONDS_BREAK`` after the step (done, recorded) whose end state has a bond past
        its criterion (``engine.potentials.bpm_break``; the driver takes it out).

        Returns ``(steps_done, records_written, status)``."""
        home = s0
        if in_place >= 0:
            if in_place_rot_map(scheme, s0, ff, ws) >= 0:
                return gated(ff, LARGE, (0, 0, ERR_SHAPE), _advance_in_place, in_place,
                             n_steps, h, t0, step0, stride, s0, s1, ff, e_ctrl, rec,
                             rec_frames, info, ws)
        done = 0
        nrec = np.int64(0)  # (not the literal 0: the first pass of Numba's typing would
        status = OK  # compile record() for a literal count too, ~1 s of a cold start)
        cap = rec[0].shape[0]
        history = ff[3][T_HISTORY] != 0
        fields = ff[3][T_FIELD] != 0
        damped = ff[3][T_DAMPING] != 0
        # some γ of the spheres' viscous flow ≠ 0 (they change between calls only: a
        # stage's entry); else that flow is the identity and is left out (issue #44 item 9)
        viscous = damped and gated(ff, T_DAMPING, False, any_viscous, ff[FIELDS])
        # (the bonds' flow moves Π only for the schemes that keep it: else Π is kept and
        # put back by the viscous flow alone)
        while done < n_steps:
            if history:  # friction springs, damping: engine.potentials.friction
                set_anchor_time(ff, h)
            if fields:  # the field's time: the step's end (engine.potentials.fields)
                _field_clock(ff, t0 + done * h, h)
            d_pre = 0.0
            if damped:  # Strang: D*_{h/2} ∘ Φ_h ∘ D_{h/2} (engine.potentials.damping)
                if viscous:
                    d_pre = gated(ff, T_DAMPING, 0.0, damp_half, s0[1], s0[3], s0[7], ff[0],
                                  ff[1], ff[FIELDS], 0.5 * h, True)
                else:  # (the viscous flow is the identity: only the velocities kept)
                    gated(ff, T_DAMPING, None, save_velocities, s0[1], s0[3], s0[7],
                          ff[FIELDS], keeps_pi)
                d_pre += gated(ff, BPM_DAMPED, 0.0, bond_damp_half, s0[0], s0[1], s0[2],
                               s0[3], s0[7], ff[0], ff[1], ff[BPM_TABLE], 0.5 * h, True,
                               keeps_pi, ff[BOND_DAMP])
            status = step_ws(scheme, base, h, s0, s1, ff, work, info, ws)
            if status != OK:
                if damped:
                    gated(ff, T_DAMPING, None, undo_damping, s0[1], s0[3], s0[7],
                          ff[FIELDS], viscous or keeps_pi)
                break
            # the energy of the bonds broken so far, carried (issue #44 item 2)
            gated(ff, BREAKS, None, carry_broken, s0[6], s1[6])
            if history:
                s1[6][E_DISSIPATED] = s0[6][E_DISSIPATED] + ff[13][0][H_DISSIPATED]
            if damped:  # (the adjoint: the bonds in reverse, then the spheres)
                d_post = gated(ff, BPM_DAMPED, 0.0, bond_damp_half, s1[0], s1[1], s1[2],
                               s1[3], s1[7], ff[0], ff[1], ff[BPM_TABLE], 0.5 * h, False,
                               keeps_pi, ff[BOND_DAMP])
                if viscous:  # (else the flow is the identity and adds 0)
                    d_post += gated(ff, T_DAMPING, 0.0, damp_half, s1[1], s1[3], s1[7],
                                    ff[0], ff[1], ff[FIELDS], 0.5 * h, False)
                if not history:
                    s1[6][E_DISSIPATED] = s0[6][E_DISSIPATED]
                s1[6][E_DISSIPATED] += d_pre + d_post
            if fields:  # −∫ ∂U/∂t dt over the step
                s1[6][E_FIELD_WORK] = s0[6][E_FIELD_WORK] - gated(
                    ff, T_FIELD, 0.0, field_work, s0[0], s0[2], s1[0], s1[2], ff[FIELDS],
                    t0 + done * h, t0 + (done + 1) * h)
            total = kinetic_energy(s1, ff, ws)
            status = energy_status(total, e_ctrl, info)
            if status != OK:
                if damped:
                    gated(ff, T_DAMPING, None, undo_damping, s0[1], s0[3], s0[7],
                          ff[FIELDS], viscous or keeps_pi)
                break
            if history:  # accepted: the trial springs become the committed ones
                gated(ff, T_HISTORY, None, commit_history, ff[13], s1[0], s1[2])
            s0, s1 = s1, s0
            done += 1
            if (step0 + done) % stride == 0 and nrec < cap:
                record(s0, ff, nrec, rec, rec_frames, t0 + done * h)
                nrec += 1
            # a bond past its criterion at the step's end: the driver takes it out
            if gated(ff, BREAKS, False, any_breaks, s0[0], s0[2], ff[5], ff[BPM_TABLE]):
                status = BONDS_BREAK
                break
        if done % 2 == 1:
            _copy_state(s0, home)
        return done, nrec, status

    advance_scheme.__qualname__ = advance_scheme.__name__ = f"advance_s{scheme}"
    return advance_scheme


_LOOPS: dict[int, object] = {}


def loop_kernel(scheme: int):
    """The compiled stepping loop of ``scheme`` (a Numba dispatcher, made once per
    process and cached on disk as ``advance.advance_s<scheme>``): it compiles the
    kernel of this scheme (and of its Yoshida base) for the force-field family it is
    called with (``engine.specialize``), and nothing of any other scheme (issue #25)."""
    kernel = _LOOPS.get(scheme)
    if kernel is None:
        kernel = njit(nogil=True, cache=True, error_model="numpy", _nrt=False)(
            _loop_of(scheme))
        _LOOPS[scheme] = kernel
    return kernel


def advance_ws(scheme: int, n_steps: int, h: float, t0: float, step0: int, stride: int,
               s0: tuple, s1: tuple, ff: tuple, work: tuple, e_ctrl: np.ndarray, rec: tuple,
               rec_frames: bool, info: np.ndarray, ws: tuple) -> tuple[int, int, int]:
    """Run up to ``n_steps`` steps of ``scheme`` (the loop of :func:`loop_kernel`; see
    its docstring for the arguments).  Returns ``(steps_done, records_written,
    status)``."""
    return loop_kernel(scheme)(n_steps, h, t0, step0, stride, s0, s1, ff, work, e_ctrl, rec,
                               rec_frames, info, ws)


def stand_in_args(family: tuple) -> tuple:
    """The arguments of a stepping loop after ``scheme`` (zero steps) on a one-body
    stand-in of the force-field ``family`` (``engine.specialize``): the loop is compiled
    for their *types*, which are a run's on any model of that family."""
    ff, q = one_body_stand_in(family)
    a = new_state_buffer(np.zeros((1, 3)), np.zeros((1, 3)), q, np.zeros((1, 3)))
    b = tuple(x.copy() for x in a)
    rec = (np.empty(0), np.empty((0, N_ENERGY)), np.empty((0, 3)), np.empty((0, 3)),
           np.empty((0, 1, 3)), np.empty((0, 1, 4)), np.empty((0, 1, 3)), np.empty((0, 1, 3)),
           np.empty((0, 1, 3)))
    return (0, 1e-9, 0.0, 0, 1, a, b, ff, new_work(1, n_walls=1), np.zeros(3), rec, True,
            np.zeros(4), new_scratch(1, ff))


def prime_kernels(scheme: int, family: tuple) -> None:
    """Compile (or load from the disk cache) the stepping loop of ``scheme`` for the
    force-field ``family``, on a one-body stand-in (:func:`stand_in_args`): priming a
    10⁶-body model's loop costs no memory (``engine.priming``)."""
    loop_kernel(scheme)(*stand_in_args(family))
