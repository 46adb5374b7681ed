"""Start-up from an empty kernel cache, and where the compile time goes (issue #25).

Each measurement runs in a fresh process whose Numba cache is a new, empty temporary
directory (``NUMBA_CACHE_DIR``), the way a fresh install's first start goes:

* ``gui``: the desktop app on its default scenario (the torus), from the process start
  (Qt and VTK imports included) to the window's first paint (what it shows then: the
  scenario, scheme and status it names), to the initial state *on screen* (a grabbed
  frame of the 3D view that shows the model, not the signal that asks for it: issue #33
  item 8), to the first frame of the *moving* 3D view with live plots (``--play``);
  then the first switch to another scheme (``rk4``) until a frame stepped by it is
  drawn; then the same app again with the cache now filled (the warm start).  Needs a
  display: run under ``xvfb-run -a`` on a machine without one.
* ``rrp run pendulum --t-end 1`` and ``rrp run torus --t-end 0.1``: wall time of the
  command.

Every measured process is run by ``benchmarks/_background.measure``: the kernels a cold
start leaves compiling in the background (``engine.priming``'s processes, which ``rrp
run`` and the app do not wait for) are waited for before the next measurement starts,
so the warm run meets the cache the cold run's compile filled, and each row reports the
command's CPU, the background compile's CPU (those processes' own rusage), the wall
time and the load average at its start and end (issue #45).
* ``kernels``: the compile time of each Numba function while a run of ``--scenario``
  with ``--integrator`` is built and warmed up, exclusive of the functions it compiled
  in turn (Numba's ``numba:compile`` events), the largest first.

    python benchmarks/bench_compile.py [--only gui run kernels] [--scenario torus]
        [--integrator rrp-newmark] [--top 12] [--json]

Numba optimises each compiled function together with everything it calls, so a
dispatcher's own time includes another pass over its callees: the stepping loop of one
scheme (``advance_s<id>``) carries most of it.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # (benchmarks/, also when imported)
from _background import measure  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def kernels_child(scenario: str, integrator: str) -> dict:
    """The phases and per-function compile times, in this process (empty cache): for
    each function its exclusive compile time as CPU seconds of the compiling thread
    (``time.thread_time``, so other jobs on the machine do not inflate it) and as wall
    seconds."""
    from numba.core import event

    phases: dict[str, float] = {}
    cpu: collections.Counter = collections.Counter()
    wall: collections.Counter = collections.Counter()
    marks: list[tuple[bool, str, float, float]] = []

    class Marks(event.Listener):
        def on_start(self, ev) -> None:
            marks.append((True, _name(ev), time.thread_time(), time.perf_counter()))

        def on_end(self, ev) -> None:
            marks.append((False, _name(ev), time.thread_time(), time.perf_counter()))

    with event.install_listener("numba:compile", Marks()):
        t0 = time.perf_counter()
        sys.path.insert(0, str(ROOT))
        from engine.drivers import simulation_for
        from engine.scenarios import load_scenario

        phases["import"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        model = load_scenario(scenario, {}).build_model()
        phases["build the model"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        sim = simulation_for(model, integrator, 1e-3)
        phases["Simulation(...)"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        sim.warm_up()
        phases["warm_up()"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        sim.advance(10)
        phases["advance(10)"] = time.perf_counter() - t0
    stack: list[tuple[str, float, float]] = []
    for is_start, name, c, w in marks:
        if is_start:
            stack.append((name, c, w))
            continue
        name, c0, w0 = stack.pop()
        cpu[name] += c - c0
        wall[name] += w - w0
        if stack:  # exclusive: not counted again in the caller that compiled it
            cpu[stack[-1][0]] -= c - c0
            wall[stack[-1][0]] -= w - w0
    return {"phases": phases, "functions": cpu.most_common(),
            "functions_wall": wall.most_common(),
            "compile_cpu_s": sum(cpu.values()), "load": list(os.getloadavg())}


def _name(ev) -> str:
    fn = ev.data["dispatcher"].py_func
    return f"{fn.__module__.removeprefix('engine.')}.{fn.__qualname__}"


def grab_view(widget) -> np.ndarray:
    """What ``widget`` shows now (``QWidget.grab``: painted as on screen), as RGB."""
    from PyQt6.QtGui import QImage

    img = widget.grab().toImage().convertToFormat(QImage.Format.Format_RGB888)
    w, h = img.width(), img.height()
    ptr = img.constBits()
    ptr.setsize(img.sizeInBytes())
    rows = np.frombuffer(ptr, np.uint8).reshape(h, img.bytesPerLine())
    return rows[:, :3 * w].reshape(h, w, 3).copy()


def shows_more_than(frame: np.ndarray, before: np.ndarray, fraction: float = 0.005) -> bool:
    """Whether ``frame`` differs from ``before`` (the view's first paint: its background
    and caption) in more than ``fraction`` of its pixels: the model is drawn."""
    if frame.shape != before.shape:
        return True
    changed = np.abs(frame.astype(np.int16) - before).max(axis=2) > 24
    return float(changed.mean()) > fraction


def gui_child(switch_to: str, shot: str = "", shot_at: str = "20") -> dict:
    """Seconds from this process's start to the first moving frame of the app on its
    default scenario, and for the first switch to ``switch_to``; with ``shot``, a
    screenshot of the window ``shot_at`` seconds after the process started (what a
    user sees then: issue #25 asks for the torus moving at 20 s), and beside it the
    window at its first paint (``*-first.png``) and when the initial state was first
    seen drawn (``*-drawn.png``)."""
    t_start = float(os.environ["RRP_BENCH_T0"])
    os.environ.setdefault("QT_API", "pyqt6")
    sys.path.insert(0, str(ROOT))
    from PyQt6.QtCore import QSettings
    from PyQt6.QtWidgets import QApplication

    from app.gui.main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    ini = Path(tempfile.mkdtemp()) / "bench.ini"
    win = MainWindow(None, settings=QSettings(str(ini), QSettings.Format.IniFormat))
    win.resize(1400, 860)
    win.show()
    out: dict[str, float] = {}

    def spin(seconds: float, until) -> bool:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            app.processEvents()
            if until():
                return True
            time.sleep(0.002)
        return False

    def wall() -> float:
        return time.time() - t_start

    app.processEvents()  # the first paint
    first = grab_view(win.view)
    had = win.scene is not None  # (drawn at the first paint already)
    out["first paint"] = wall()
    out["first paint shows"] = (f"{win.controls.scenario.currentText()} · "
                                f"{win.controls.integrator.currentData()} · h = "
                                f"{win.controls.h_edit.text() or '(empty)'} · status: "
                                f"{win.status_shown() or '(none)'}")
    if shot:
        win.grab().save(shot.removesuffix(".png") + "-first.png")
    polled = [0.0]

    def on_screen() -> bool:  # (a grab every 0.1 s: it costs a paint)
        if had:
            return True
        if win.scene is None or time.perf_counter() - polled[0] < 0.1:
            return False
        polled[0] = time.perf_counter()
        return shows_more_than(grab_view(win.view), first)

    spin(900, on_screen)
    out["initial state drawn"] = wall()  # (seen in a grabbed frame of the view)
    if shot:
        win.grab().save(shot.removesuffix(".png") + "-drawn.png")
    spin(900, lambda: win.loaded is not None)
    out["kernels built"] = wall()
    win.play()
    spin(900, lambda: win.last_frame is not None and win.last_frame.step > 0)
    out["first moving frame"] = wall()
    if shot:
        spin(max(0.0, float(shot_at) - wall()), lambda: False)
        win.save_screenshot(shot)
        out["screenshot taken at"] = wall()  # (later than asked if not moving by then)
        out["step shown in it"] = float(win.last_frame.step)
    spin(1.0, lambda: False)
    t0 = time.perf_counter()
    win.set_integrator(switch_to)
    longest = 0.0  # the window's event loop is served all along: its longest gap
    last = time.perf_counter()

    def switched() -> bool:
        nonlocal longest, last
        now = time.perf_counter()
        longest = max(longest, now - last)
        last = now
        fr = win.last_frame
        return fr is not None and fr.integrator == switch_to and fr.step > 0

    spin(900, switched)
    out[f"first switch to {switch_to}"] = time.perf_counter() - t0
    out["longest GUI event-loop gap during the switch"] = longest
    win.close()
    return out


COSTS = ("cpu_s", "background_cpu_s", "background_processes", "background_wall_s",
         "load")
"""What :func:`_background.measure` reports beside a measurement (see the docstring)."""


def _child(kind: str, cache: str, *args: str) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, RRP_BENCH_T0=repr(time.time()))
    out = measure([sys.executable, __file__, "--child", kind, *args], env=env, cwd=ROOT)
    if out["returncode"] != 0:
        sys.exit(f"the {kind} child failed:\n{out['stderr'][-4000:]}")
    inner = json.loads(out["stdout"].strip().splitlines()[-1])
    return {**inner, "process wall": out["wall_s"], **{k: out[k] for k in COSTS}}


def _rrp(cache: str, *args: str) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    out = measure([sys.executable, "-m", "app.cli", *args], env=env, cwd=ROOT)
    if out["returncode"] != 0:
        sys.exit(f"rrp {' '.join(args)} failed:\n{out['stderr'][-4000:]}")
    return {"wall_s": out["wall_s"], **{k: out[k] for k in COSTS}}


def _costs(val: dict) -> str:
    """One row's columns: command CPU, background compile CPU, wall, load."""
    wall = val.get("wall_s", val.get("process wall", 0.0))
    return (f"command CPU {val['cpu_s']:6.1f} s · background compile CPU "
            f"{val['background_cpu_s']:6.1f} s ({val['background_processes']} processes, "
            f"done at {val['background_wall_s']:.1f} s) · wall {wall:6.1f} s · load "
            f"{val['load'][0]:.2f}–{val['load'][1]:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="+", default=["run", "gui", "kernels"],
                    choices=["run", "gui", "kernels"])
    ap.add_argument("--scenario", default="torus")
    ap.add_argument("--integrator", default="rrp-newmark")
    ap.add_argument("--switch-to", default="rk4")
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--shot", default="", metavar="PNG",
                    help="with gui: a screenshot of the cold start at --shot-at seconds")
    ap.add_argument("--shot-at", default="20", metavar="SECONDS")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        kind, *rest = args.child
        r = kernels_child(*rest) if kind == "kernels" else gui_child(*rest)
        print(json.dumps(r))
        return
    results: dict[str, object] = {}
    if "run" in args.only:
        for cmd in (("run", "pendulum", "--t-end", "1", "-q"),
                    ("run", "torus", "--t-end", "0.1", "-q")):
            with tempfile.TemporaryDirectory(prefix="rrp-cold-") as cache:
                results[f"cold rrp {' '.join(cmd[:-1])}"] = _rrp(cache, *cmd)
                results[f"warm rrp {' '.join(cmd[:-1])}"] = _rrp(cache, *cmd)
    if "gui" in args.only:
        with tempfile.TemporaryDirectory(prefix="rrp-cold-") as cache:
            results["cold rrp gui"] = _child("gui", cache, args.switch_to,
                                             *((args.shot, args.shot_at) if args.shot else ()))
            results["warm rrp gui"] = _child("gui", cache, args.switch_to)
    if "kernels" in args.only:
        with tempfile.TemporaryDirectory(prefix="rrp-cold-") as cache:
            results["kernels"] = _child("kernels", cache, args.scenario, args.integrator)
    if args.json:
        print(json.dumps(results, indent=1))
        return
    for key, val in results.items():
        if key != "kernels" and "background_cpu_s" in val and "first paint" not in val:
            print(f"{key:<36} {_costs(val)}")
        elif isinstance(val, dict) and "first paint" in val:
            print(f"{key}: {_costs(val)}")
            for name, sec in val.items():
                if name in COSTS:
                    continue
                print(f"  {name:<46} " + (f"{sec:7.1f} s" if isinstance(sec, float)
                                          else str(sec)))
        elif key == "kernels":
            total = sum(val["phases"].values())
            print(f"cold start of {args.scenario} with {args.integrator}: {total:.1f} s")
            for name, sec in val["phases"].items():
                print(f"  {name:<18} {sec:8.1f} s")
            print(f"compile CPU per function (exclusive), the {args.top} largest, of "
                  f"{val['compile_cpu_s']:.1f} s:")
            for name, sec in val["functions"][:args.top]:
                print(f"  {sec:8.1f} s  {name}")
        else:
            print(f"{key}:")
            for name, sec in val.items():
                print(f"  {name:<46} {sec:7.1f} s")


if __name__ == "__main__":
    main()
