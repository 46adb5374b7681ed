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
