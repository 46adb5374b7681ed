"""Hard contacts: unilateral constraints with percussions (docs/physics.md §3.9).

Three pieces, as in Siconos: the *active set* and contact kinematics
(:mod:`.detect`: gaps ``g_N``, normals, lever arms, the local Delassus diagonal), the
*contact law* (:mod:`.laws`: Newton's impact law in the normal-cone inclusion and
Coulomb's friction on ``C_T(P_N)``, as proximal maps) and the *percussion solver*
(:mod:`.percussions`: projected Gauss–Seidel over the contacts with those proximal maps).
The Moreau-type step kernels (``engine.integrators.moreau``) build the problem and call
the solver; the smooth schemes never see any of it.
"""

from .detect import contact_capacity, grown_contact_work, new_contact_work

__all__ = ["contact_capacity", "grown_contact_work", "new_contact_work"]
