"""LAMMPS's ``variable NAME equal EXPR`` where a scenario can carry it (issue #44 item 6;
LAMMPS ``doc/src/variable.rst``): a number ``c``, or a ramp over a run ``c*ramp(a,b)``
(``ramp(a,b)*c``, ``ramp(a,b)``): ``ramp(a,b) = a + (b − a)(step − start)/(stop −
start)`` over the ``run`` that evaluates it — a stage field's ``ramp = [c·a, c·b]`` on a
field ``1`` (docs/scenarios.md "Stages").  Anything else is ``None`` (the caller refuses
it where a fix uses it, naming its line).
"""

from __future__ import annotations

import re

_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_RAMP = rf"ramp\(\s*({_NUM})\s*,\s*({_NUM})\s*\)"
_FORMS = (re.compile(rf"^({_NUM})$"),
          re.compile(rf"^({_NUM})\s*\*\s*{_RAMP}$"),
          re.compile(rf"^{_RAMP}\s*\*\s*({_NUM})$"),
          re.compile(rf"^{_RAMP}$"))


def ramp_of(expr: str) -> tuple[float, float] | None:
    """``(start, end)`` values of an ``equal`` expression over a run (equal for a
    number), or ``None`` for an expression not of the forms above."""
    e = expr.strip().strip("\"'").strip()
    for k, form in enumerate(_FORMS):
        m = form.match(e)
        if m is None:
            continue
        g = [float(x) for x in m.groups()]
        if k == 0:
            return g[0], g[0]
        if k == 1:
            return g[0] * g[1], g[0] * g[2]
        if k == 2:
            return g[2] * g[0], g[2] * g[1]
        return g[0], g[1]
    return None
