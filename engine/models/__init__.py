"""Models: one module each, registered here by name."""

from __future__ import annotations

from . import assembly, dumbbells, pendulum, spring_pendulum, tori_pile, torus
from .base import Model, ModelSpec, Param, ParameterError

MODELS: dict[str, ModelSpec] = {
    spec.name: spec for spec in (pendulum.SPEC, torus.SPEC, dumbbells.SPEC, spring_pendulum.SPEC,
                                 tori_pile.SPEC, assembly.SPEC)
}


def get_model_spec(name: str) -> ModelSpec:
    try:
        return MODELS[name]
    except KeyError:
        raise ParameterError(
            f"unknown model {name!r}; known models: {', '.join(MODELS)}") from None


__all__ = ["MODELS", "Model", "ModelSpec", "Param", "ParameterError", "get_model_spec"]
