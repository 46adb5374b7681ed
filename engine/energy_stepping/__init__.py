"""Energy-stepping integrators (Gonzalez, Schmidt & Ortiz, IJNME 82 (2010) 205–241) on
SE(3)ⁿ: issue #28, contract physics.md §3.10, derivation docs/physics.md §3.10.

* :mod:`.pendulum`: the 3D pendulum's closed-form event loop (``run_pendulum``);
* :mod:`.stepper`: :class:`EnergyStepper`, the incremental scheme the simulation drives
  (``energy-stepping[:ε]`` in the registry).
"""

from .pendulum import (
    EnergySteppingRun,
    PendulumParams,
    PendulumState,
    crossing_angle,
    jump,
    potential,
    predict,
    return_angle,
    run_pendulum,
)
from .stepper import (
    EnergyStepper,
    EnergySteppingError,
    absolute_eps,
    check_eps,
    unsupported,
)

__all__ = [
    "EnergyStepper",
    "EnergySteppingError",
    "EnergySteppingRun",
    "PendulumParams",
    "PendulumState",
    "absolute_eps",
    "check_eps",
    "crossing_angle",
    "jump",
    "potential",
    "predict",
    "return_angle",
    "run_pendulum",
    "unsupported",
]
