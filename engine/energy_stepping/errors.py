"""The one exception of energy-stepping (its own module: the stepper and the loops
behind it raise it, and import each other only lazily)."""

from __future__ import annotations


class EnergySteppingError(ValueError):
    """A model energy-stepping cannot drive, a bad ``ε``, or a run that cannot go on;
    the message is one line naming the problem and the fix."""
