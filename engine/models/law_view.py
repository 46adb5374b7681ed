"""What the app's parameter panel shows of a model's bond laws (issue #44 item 7): which
bond types use a LAMMPS BPM law (``bpm/rotational``, ``bpm/spring``:
``engine.models.bond_laws``) with their coefficients, and whether the binder's own
parameters (``k_bend``, ``k_axial``, ``k_shear``: B&G §4, bond type 1's) act on any
bond — for a BPM-only model they act on none, and the panel must not offer them.

Read from the arrays the model carries (``engine.models.assembly.carried_arrays``:
each bond's type, the types' names and their laws), so a model rebuilt from a run file
answers as the one built from its scenario.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from .assembly import CARRIED_LAWS
from .assembly_input import BOND_COEFFS
from .bond_laws import COEFFS, OPTIONAL

BINDER_PARAMS = BOND_COEFFS
"""The schema's binder coefficients (bond type 1's, and any type not given its own)."""


def _carried(model: Any) -> dict[str, np.ndarray]:
    return getattr(model, "carried", None) or {}


def bond_laws(model: Any) -> dict[str, dict[str, Any]]:
    """``{type: law}`` of the bond types with a BPM law (``{"law": "bpm/rotational",
    "k_r": …, …}``), in use by a bond or not; ``{}`` for a model without them."""
    raw = _carried(model).get(CARRIED_LAWS)
    if raw is None:
        return {}
    return dict(json.loads(bytes(np.asarray(raw, dtype=np.uint8))))


def used_bond_types(model: Any) -> list[str]:
    """The names of the bond types some bond of the model has."""
    c = _carried(model)
    if "bond_type" not in c or "bond_type_names" not in c:
        return []
    names = json.loads(bytes(np.asarray(c["bond_type_names"], dtype=np.uint8)))
    return [names[i] for i in sorted(set(np.asarray(c["bond_type"]).tolist()))]


def binder_unused(model: Any) -> bool:
    """Whether the model has bonds and every one of them follows a BPM law: the
    binder's :data:`BINDER_PARAMS` then act on nothing."""
    used = used_bond_types(model)
    laws = bond_laws(model)
    return bool(used) and all(t in laws for t in used)


def law_items(law: dict[str, Any]) -> list[tuple[str, Any]]:
    """A law's coefficients in the order LAMMPS's ``bond_coeff`` gives them
    (``engine.models.bond_laws.COEFFS``), then its options (``smooth``, ``break``)."""
    keys = [*COEFFS.get(law.get("law", ""), ()), *OPTIONAL]
    keys += sorted(k for k in law if k not in keys and k != "law")
    return [(k, law[k]) for k in keys if k in law]
