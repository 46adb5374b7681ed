"""Helpers shared by the test modules (issue #34 item 4: one copy, not one per file):
running ``rrp`` in a child process with this checkout first on the path, and the
one-line-error checks of the command line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def child_env(env: dict | None = None) -> dict[str, str]:
    """``env`` (default: this process's environment) with this checkout first on
    ``PYTHONPATH``."""
    e = dict(os.environ if env is None else env)
    e["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), e.get("PYTHONPATH")) if p)
    return e


def rrp(cwd: Path, *args: str, env: dict | None = None, timeout: float = 600,
        **kw) -> subprocess.CompletedProcess:
    """Run ``python -m app ARGS`` in ``cwd`` with this checkout first on the path."""
    return subprocess.run([sys.executable, "-m", "app", *args], cwd=cwd, env=child_env(env),
                          capture_output=True, text=True, timeout=timeout, **kw)


def communicate_or_kill(p: subprocess.Popen, what: str, timeout: float) -> str:
    """``p``'s stderr once it ends; killed, with an ``AssertionError`` naming ``what``
    (e.g. ``"hung after SIGINT"``), when it has not ended within ``timeout`` s."""
    try:
        return p.communicate(timeout=timeout)[1]
    except subprocess.TimeoutExpired:
        p.kill()
        raise AssertionError(f"{what}: {p.communicate()}") from None


def assert_no_traceback(res: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in res.stdout and "Traceback" not in res.stderr, res.stderr


def assert_one_line_error(res: subprocess.CompletedProcess) -> str:
    assert res.returncode != 0, res.stdout
    assert_no_traceback(res)
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].strip(), repr(res.stderr)
    return lines[0]


# ------------------------------------------------ finite differences of the force terms
def rotate_body(q, i, xi):
    """``q_i → exp(ξ) ⊗ q_i`` (a spatial rotation of body ``i``)."""
    from engine.rotations import quat_from_rotvec, quat_mul

    out = q.copy()
    out[i] = quat_mul(quat_from_rotvec(xi[None]), q[i][None])[0]
    return out


def derivative(fun, h):
    """``f'(0)`` by central differences at ``h`` and ``h/2``, Richardson: O(h⁴)."""
    d1 = (fun(h) - fun(-h)) / (2.0 * h)
    d2 = (fun(0.5 * h) - fun(-0.5 * h)) / h
    return (4.0 * d2 - d1) / 3.0  # Richardson: O(h⁴)


def fd_loads(ff, x, q, slot, hx, hr):
    """``(-∂U/∂x, RM)`` of the energy slot by finite differences, body by body (steps
    ``hx`` in position, ``hr`` in rotation; ``RM``: ``dU/dε = −ξ·RM`` for
    ``q_i → exp(εξ) ⊗ q_i``, physics.md §1)."""
    import numpy as np

    from engine.forcefield import evaluate

    def energy(xx, qq):
        return evaluate(ff, xx, qq)[2][slot]

    n = x.shape[0]
    f = np.zeros((n, 3))
    rm = np.zeros((n, 3))
    for i in range(n):
        for k in range(3):
            e = np.zeros(3)
            e[k] = 1.0

            def shifted(h, i=i, e=e):
                xx = x.copy()
                xx[i] += h * e
                return energy(xx, q)

            def rotated(eps, i=i, e=e):
                return energy(x, rotate_body(q, i, eps * e))

            f[i, k] = -derivative(shifted, hx)
            rm[i, k] = -derivative(rotated, hr)
    return f, rm


def require_offscreen_render() -> None:
    """Skip the test when neither EGL nor an X server can give VTK an OpenGL context
    (the export tests' ``can_render`` fixtures; one copy, issue #34 item 4)."""
    import pytest
    import pyvista as pv

    from app.scene import make_plotter

    try:
        p = make_plotter((64, 48))
        p.add_mesh(pv.Sphere())
        p.render()
        img = p.screenshot(return_img=True)
        p.close()
    except Exception as exc:  # pragma: no cover - depends on the machine
        pytest.skip(f"no off-screen OpenGL here (EGL or Xvfb needed): {exc}")
    assert img.shape[:2] == (48, 64)


def model_energy(model, x, v, q, om) -> float:
    """``T + V`` by the model's own force kernel (the variational schemes' energy; it reads
    a per-bond table where the model has one)."""
    import numpy as np

    from engine.forcefield import evaluate

    e = evaluate(model.forcefield.working_copy(), x, q)[2]
    m, J = model.bodies.m, model.bodies.J
    return float(0.5 * np.sum(m * np.sum(v * v, axis=1))
                 + 0.5 * np.sum(J * np.sum(om * om, axis=1)) + e.sum())


def assert_terraces_sum_to_the_potential(model, eps: float, times) -> None:
    """Energy-stepping with ``eps`` on ``model``: at each of ``times``, ``T + Σ_k V_k``
    over the terraced terms is the model's ``T + V`` to round-off."""
    import pytest

    from engine.energy_stepping import EnergyStepper

    s = EnergyStepper(model, eps, model.initial_state)
    for t in times:
        s.advance_to(t)
        x, v, q, om = s.state_arrays()
        T, V, _ = s._impl._energies(s.t)
        assert model_energy(model, x, v, q, om) == pytest.approx(T + V, rel=1e-12, abs=1e-12)


def energy_error_slope(make_model, hs, t_end: float = 0.4,
                       scheme: str = "rrp-newmark") -> tuple[float, list[float]]:
    """The slope of ``log max|E(t) − E(0)|`` (over 20 checks to ``t_end``) against
    ``log h`` for the steps ``hs``, each run on a fresh ``make_model()``: 2 for a
    second-order scheme."""
    import numpy as np

    from engine.drivers import simulation_for

    errs = []
    for h in hs:
        sim = simulation_for(make_model(), scheme, h, record_every=10**9,
                             record_frames=False, energy_tolerance=None)
        e0 = sim.energy.sum()
        worst = 0.0
        steps = round(t_end / h)
        for _ in range(20):
            assert sim.advance(steps // 20).ok
            worst = max(worst, abs(sim.energy.sum() - e0))
        errs.append(worst)
    return float(np.polyfit(np.log(hs), np.log(errs), 1)[0]), errs


def ciede2000(rgb1, rgb2) -> float:
    """The CIEDE2000 colour difference of two sRGB colours (components in [0, 1]): about
    2 is a just-noticeable difference, 10–20 two shades of one hue, 30+ different hues."""
    import numpy as np

    def lab(rgb):
        c = np.asarray(rgb, float)[:3]
        lin = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
        m = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722],
                      [0.0193, 0.1192, 0.9505]])
        xyz = m @ lin / np.array([0.95047, 1.0, 1.08883])
        f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
        return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])

    (l1, a1, b1), (l2, a2, b2) = lab(rgb1), lab(rgb2)
    cb = (np.hypot(a1, b1) + np.hypot(a2, b2)) / 2
    g = 0.5 * (1 - np.sqrt(cb**7 / (cb**7 + 25**7)))
    a1, a2 = (1 + g) * a1, (1 + g) * a2
    c1, c2 = np.hypot(a1, b1), np.hypot(a2, b2)
    h1, h2 = np.degrees(np.arctan2(b1, a1)) % 360, np.degrees(np.arctan2(b2, a2)) % 360
    dh = 0.0 if c1 * c2 == 0 else (h2 - h1 + 180) % 360 - 180
    dl, dc = l2 - l1, c2 - c1
    dhh = 2 * np.sqrt(c1 * c2) * np.sin(np.radians(dh / 2))
    lm, cm = (l1 + l2) / 2, (c1 + c2) / 2
    if c1 * c2 == 0:
        hm = h1 + h2
    elif abs(h1 - h2) <= 180:
        hm = (h1 + h2) / 2
    else:
        hm = (h1 + h2 + 360) / 2 if h1 + h2 < 360 else (h1 + h2 - 360) / 2
    t = (1 - 0.17 * np.cos(np.radians(hm - 30)) + 0.24 * np.cos(np.radians(2 * hm))
         + 0.32 * np.cos(np.radians(3 * hm + 6)) - 0.20 * np.cos(np.radians(4 * hm - 63)))
    rc = 2 * np.sqrt(cm**7 / (cm**7 + 25**7))
    rt = -np.sin(np.radians(60 * np.exp(-(((hm - 275) / 25) ** 2)))) * rc
    sl = 1 + 0.015 * (lm - 50) ** 2 / np.sqrt(20 + (lm - 50) ** 2)
    sc, sh = 1 + 0.045 * cm, 1 + 0.015 * cm * t
    return float(np.sqrt((dl / sl) ** 2 + (dc / sc) ** 2 + (dhh / sh) ** 2
                         + rt * (dc / sc) * (dhh / sh)))
