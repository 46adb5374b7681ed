"""Regenerate the parameter tables of docs/scenarios.md from the model schemas:
``python docs/_gen_scenarios.py`` (tests/test_docs.py checks they are in sync)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BEGIN = "<!-- parameters:begin -->"
END = "<!-- parameters:end -->"


def tables() -> str:
    from engine.models import MODELS

    out = []
    for spec in MODELS.values():
        out.append(f"### `model = \"{spec.name}\"` — {spec.title}\n")
        out.append("| key | type | default | range | unit | meaning |")
        out.append("|---|---|---|---|---|---|")
        for p in spec.schema:
            default = str(p.default).lower() if p.kind == "bool" else repr(p.default)
            why = f"; *range:* {p.why}" if p.why else ""
            out.append(f"| `{p.name}` | {p.kind} | `{default}` | {p.describe_range()} | "
                       f"{p.unit} | {p.doc}{why} |")
        out.append("")
    return "\n".join(out)


def render(text: str) -> str:
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{tables()}\n{END}{tail}"


if __name__ == "__main__":
    path = ROOT / "docs" / "scenarios.md"
    path.write_text(render(path.read_text(encoding="utf-8")), encoding="utf-8")
