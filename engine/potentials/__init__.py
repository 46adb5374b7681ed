"""Potential terms: each a Numba kernel that adds its forces ``F = -∂U/∂x``, spatial
moments ``RM`` (docs/physics.md §1) and energy to the given arrays."""
