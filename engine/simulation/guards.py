"""The driver's stability and failure guards: the energy tolerance of a blow-up, the
refusal of an initial state that no step can run (:func:`_check_start`) and the
one-line :class:`~.records.Failure` messages of a stopped stepping run
(:class:`GuardsMixin`; issue #34: split out of ``engine.simulation``)."""

from __future__ import annotations

import math

import numpy as np

from ..layout import (
    ENERGY_NAMES,
    ERR_CONTACT,
    ERR_ENERGY,
    ERR_NO_CONVERGENCE,
    ERR_NONFINITE,
    ERR_RRP_LIMIT,
)
from ..stability import StabilityEstimate
from .choice import SimulationError
from .records import Failure

DEFAULT_ENERGY_TOLERANCE = 1.0
"""A relative energy error beyond this (100 %) counts as a blow-up."""

def _check_start(s0: tuple, e0: np.ndarray) -> None:
    """Refuse an initial state that is not finite, or whose energy is not, naming the
    value (a velocity, spin or position too large for floating point, or not a number):
    no step size can run it, so "lower h" would be the wrong advice."""
    for name, a in (("position", s0[0]), ("velocity", s0[1]), ("attitude", s0[2]),
                    ("spin", s0[3])):
        bad = np.flatnonzero(~np.isfinite(a).all(axis=1))
        if bad.size:
            raise SimulationError(
                f"the initial {name} of body {int(bad[0])} is not finite ({a[bad[0]]}): "
                "check the scenario's parameters (too large a value, or not a number)")
    for k, name in enumerate(ENERGY_NAMES):
        if not math.isfinite(float(e0[k])):
            raise SimulationError(
                f"the initial {name} energy is not finite ({float(e0[k]):g}): a velocity, "
                "spin, mass or stiffness of the scenario is too large for floating point; "
                "check its parameters")


class GuardsMixin:
    """The failure report of :class:`~.driver.Simulation` (a compiled loop that
    stopped early: the status it returned, read with the kernel's ``info``)."""

    def _what_failed(self, status: int) -> tuple[str, str]:
        """What a blow-up ``status`` (the energy tolerance passed, a non-finite state, or
        another) says happened, and its :class:`~.records.Failure` kind (both drivers)."""
        if status == ERR_ENERGY:
            return f"the relative energy error reached {float(self._info[3]):.3g}", "energy"
        if status == ERR_NONFINITE:
            return "the state became non-finite", "non-finite"
        return f"the kernel returned status {status}", "error"

    def _failure(self, status: int) -> Failure:
        stab = self.stability()
        t, step, h = self.t, self.step_index, self.h
        limit = stab.describe()
        if status == ERR_RRP_LIMIT:
            body, hw = int(self._info[0]), float(self._info[1])
            h_max, _, _ = self.rrp_exact_limit()
            if math.isfinite(hw) and math.isfinite(h_max):
                msg = (f"rrp-exact cannot take the step at t = {t:.6g}: body {body} has "
                       f"h|w| = {hw:.3g} ≥ 1 (the attitude increment would reach π/2); the "
                       f"largest admissible h is ≈ {h_max:.3g}. Lower h or switch to "
                       f"rrp-newmark; the state at t = {t:.6g} is kept.")
            else:
                msg = (f"rrp-exact cannot take the step at t = {t:.6g}: the spin of body "
                       f"{body} is not finite (h|w| = {hw:.3g}), so no step is admissible; "
                       f"the state at t = {t:.6g} is kept: check the scenario's spins.")
            return Failure("rrp-limit", t, step, msg, stab,
                           {"body": body, "h_w": hw, "h_max": h_max})
        if status == ERR_NO_CONVERGENCE:
            body, its, upd = int(self._info[0]), int(self._info[1]), float(self._info[2])
            who = f"body {body}'s" if body >= 0 else "the step's"
            msg = (f"{self._integrator.name} did not converge at t = {t:.6g}: {who} "
                   f"iteration stopped after {its} iterations with an update of {upd:.3g} "
                   f"(tolerance {self.tolerance:g}); lower h (now {h:g}) or use an explicit "
                   f"scheme; the state at t = {t:.6g} is kept.")
            return Failure("no-convergence", t, step, msg, stab,
                           {"body": body, "iterations": its, "update": upd})
        if status == ERR_CONTACT:
            nc, its, res = int(self._info[0]), int(self._info[1]), float(self._info[2])
            msg = (f"the percussion solver did not converge at t = {t:.6g}: {nc} active "
                   f"contacts, {its} Gauss–Seidel sweeps, last relative change {res:.3g} "
                   f"(tolerance {self.contact_tolerance:g}); raise the iteration limit or "
                   f"the tolerance, or lower h (now {h:g}); the state at t = {t:.6g} is "
                   "kept.")
            return Failure("no-convergence", t, step, msg, stab,
                           {"contacts": nc, "iterations": its, "residual": res})
        what, kind = self._what_failed(status)
        tol = self.energy_tolerance
        if status == ERR_ENERGY and tol is not None and abs(float(self._info[3])) < 0.01:
            msg = (f"the run stopped in the step after t = {t:.6g}: {what}, beyond the "
                   f"energy tolerance {tol:g} (the scheme's own error at h = {h:g}, not a "
                   "blow-up); raise the energy tolerance (rrp run --energy-tolerance) or "
                   f"lower h, then resume from the last good state (t = {t:.6g}, kept).")
            return Failure(kind, t, step, msg, stab, {"h": h})
        if h > stab.h_stable:
            hint = f"h = {h:g} exceeds the {limit}; lower h below {stab.h_stable:.2g}"
        elif not math.isfinite(stab.h_stable):
            hint = (f"no stiff interaction limits h = {h:g} here, yet the motion "
                    "outran the step; lower h")
        else:
            hint = (f"h = {h:g} is within the {limit}, but a stiffer interaction was "
                    "met; lower h")
        return self._blow_up("the run", what, kind, hint, stab)

    def _blow_up(self, who: str, what: str, kind: str, hint: str,
                 stab: StabilityEstimate) -> Failure:
        """The :class:`~.records.Failure` of a blow-up in the step after :attr:`t`
        (``what`` happened to ``who``; ``hint``: what to do), the last good state kept
        (both drivers)."""
        t = self.t
        msg = (f"{who} blew up in the step after t = {t:.6g} ({what}): {hint}, then "
               f"resume from the last good state (t = {t:.6g}, kept).")
        return Failure(kind, t, self.step_index, msg, stab, {"h": self.h})
