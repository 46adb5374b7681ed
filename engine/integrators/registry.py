"""The one registry of integrators, read by the CLI, the GUI and the tests."""

from __future__ import annotations

from dataclasses import dataclass

from . import advance as _adv


@dataclass(frozen=True)
class IntegratorInfo:
    """What a user (and a test) needs to know about a scheme."""

    name: str
    scheme_id: int
    title: str
    order: int
    variational: bool
    symplectic: bool
    explicit: bool
    spherical_only: bool
    force_evaluations: int
    reference: str
    notes: str = ""

    def properties(self) -> str:
        """One-line summary, e.g. ``order 2 · variational · explicit · spheres only``."""
        parts = [f"order {self.order}"]
        if self.variational:
            parts.append("variational")
        elif self.symplectic:
            parts.append("symplectic")
        else:
            parts.append("non-geometric")
        parts.append("explicit" if self.explicit else "implicit")
        if self.spherical_only:
            parts.append("spheres only")
        return " · ".join(parts)

    def as_dict(self) -> dict:
        return {
            "name": self.name,
            "title": self.title,
            "order": self.order,
            "variational": self.variational,
            "symplectic": self.symplectic,
            "explicit": self.explicit,
            "spherical_only": self.spherical_only,
            "force_evaluations_per_step": self.force_evaluations,
            "reference": self.reference,
            "notes": self.notes,
        }


INTEGRATORS: dict[str, IntegratorInfo] = {
    info.name: info
    for info in (
        IntegratorInfo(
            "rrp-exact", _adv.S_RRP_EXACT, "Explicit RRP variational integrator", 2,
            True, True, True, True, 1, "Baker & Gonzalez eq. (23)",
            "attitude increment from the exact root of the discrete Euler–Lagrange "
            "equation; needs h|w| < 1",
        ),
        IntegratorInfo(
            "rrp-newmark", _adv.S_RRP_NEWMARK, "RRP integrator à la Newmark", 2,
            True, True, True, True, 1, "Baker & Gonzalez eq. (25)",
            "Δα = h w: no square root, no step restriction from the spin",
        ),
        IntegratorInfo(
            "campello", _adv.S_CAMPELLO, "Campello's explicit scheme", 1,
            True, True, True, True, 1, "Baker & Gonzalez eq. (27)",
            "symplectic Euler on SE(3) with the RRP increment h Ω",
        ),
        IntegratorInfo(
            "pfc-verlet", _adv.S_PFC_VERLET, "PFC velocity Verlet (balls)", 2,
            False, True, True, True, 1, "Itasca PFC, Law of Motion",
            "kick–drift–kick; attitude by the exact exponential of the half-step spin",
        ),
        IntegratorInfo(
            "rk4", _adv.S_RK4, "Classical Runge–Kutta 4", 4,
            False, False, True, True, 4, "physics.md §3.8b",
            "non-geometric baseline: quaternion not renormalised, secular energy drift",
        ),
    )
}


def integrator_names() -> list[str]:
    return list(INTEGRATORS)


def get_integrator(name: str) -> IntegratorInfo:
    """Look a scheme up by name; the error lists the known ones."""
    try:
        return INTEGRATORS[name]
    except KeyError:
        raise KeyError(
            f"unknown integrator {name!r}; choose one of: {', '.join(INTEGRATORS)}"
        ) from None
