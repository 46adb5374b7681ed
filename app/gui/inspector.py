"""The inspector's text: a picked body's state, energy and contacts (the window's panel
under the 3D view)."""

from __future__ import annotations


def _vec(a) -> str:
    return "(" + ", ".join(f"{float(c):+.4g}" for c in a) + ")"


def inspector_html(r: dict, t: float) -> str:
    """The inspector's text for a :func:`~app.gui.worker.body_report`."""
    if "error" in r:
        return f"<b>body {r['index']}</b>: {r['error']}"
    rows = [("position x", _vec(r["x"]))]
    if "drawn" in r:
        rows.append(("drawn centre", _vec(r["drawn"])))
    rows += [("velocity v", _vec(r["v"])), ("spin ω", _vec(r["omega"])),
             ("energy", f"½m|v|² = {r['e_translational']:.5g}, "
                        f"½ω·𝕁ω = {r['e_rotational']:.5g}")]
    n = r.get("contacts")
    if n is None:
        rows.append(("contacts", "— (no contact model)"))
    else:
        parts = [f"{k}" for k in r.get("neighbours", [])[:8]]
        if len(r.get("neighbours", [])) > 8:
            parts.append("…")
        what = []
        if parts:
            what.append("bodies " + ", ".join(parts))
        if r.get("wall"):
            what.append("wall")
        rows.append(("contacts", f"{n} active" + (f" ({'; '.join(what)})" if what else "")))
    cells = "".join(f"<tr><td style='color:#555; padding-right:8px'>{k}</td><td>{v}</td></tr>"
                    for k, v in rows)
    return (f"<b>body {r['index']}</b> of {r['n']} &nbsp; <span style='color:#555'>at t = "
            f"{t:.5g}</span><table cellspacing=0>{cells}</table>")
