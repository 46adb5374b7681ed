"""``rrp``: the command line of RRP Studio.

``rrp list`` · ``rrp run SCENARIO [...]`` — headless runs with a progress bar, HDF5
output and a summary.  Every error is one line on stderr and a non-zero exit code
(2: bad input, 1: the run failed, 130: interrupted); no tracebacks
(``RRP_DEBUG=1`` shows them for bugs).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

from .errors import EXIT_FAILED, EXIT_INPUT, EXIT_INTERRUPTED, UsageError

__all__ = ["EXIT_FAILED", "EXIT_INPUT", "EXIT_INTERRUPTED", "UsageError", "main"]


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message} (see '{self.prog} --help')")


def _positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(v) or v <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return v


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return v


def _any_float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="rrp", description="RRP Studio: structure-preserving rigid-body "
                "dynamics (rescaled Rodrigues parameters). See README.md.")
    p.add_argument("--version", action="store_true", help="print the version and exit")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    ls = sub.add_parser("list", help="list scenarios and integrators with their properties")
    ls.add_argument("--json", action="store_true", help="machine-readable output")

    run = sub.add_parser("run", help="run a scenario headless and summarise it")
    run.add_argument("scenario", help="built-in scenario name (see 'rrp list') or a .toml path")
    run.add_argument("--integrator", "-i", help="integrator name (default: the scenario's)")
    run.add_argument("--h", type=_any_float, help="time step (default: the scenario's)")
    run.add_argument("--t-end", type=_positive_float, help="end time (default: the scenario's)")
    run.add_argument("--every", type=_positive_int,
                     help="record every N steps (default: the scenario's)")
    run.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                     help="override a scenario parameter; the value is TOML "
                          "(--set 'omega0=[3,1,2]', --set wall=false)")
    run.add_argument("--out", "-o", help="write the run to this HDF5 file")
    run.add_argument("--no-frames", action="store_true",
                     help="do not store body positions/attitudes in the output file")
    run.add_argument("--energy-tolerance", type=_positive_float,
                     help="relative energy error that counts as a blow-up (default 1.0)")
    run.add_argument("--json", action="store_true", help="print the summary as JSON")
    run.add_argument("--quiet", "-q", action="store_true", help="no progress bar or notes")

    # Further commands live in their own modules: each has ``register(sub)``, which adds
    # its sub-parser (argparse only: nothing heavy is imported before the command runs)
    # with ``set_defaults(handler=fn)``, ``fn(args) -> exit code``.
    import importlib

    for mod in COMMAND_MODULES:
        importlib.import_module(mod).register(sub)
    return p


COMMAND_MODULES: tuple[str, ...] = (
    "app.cli_gui",
    "app.cli_export",
    "app.cli_studies",
    "app.cli_convert",
)
"""Modules that add a sub-command (see :func:`build_parser`)."""


# ---------------------------------------------------------------------------- commands
def cmd_list(args: argparse.Namespace) -> int:
    from engine.integrators import INTEGRATORS
    from engine.scenarios import builtin_scenarios, load_scenario

    scen = []
    for name in builtin_scenarios():
        sc = load_scenario(name)
        scen.append({"name": name, "model": sc.model, "title": sc.title,
                     "integrator": sc.run.integrator, "h": sc.run.h, "t_end": sc.run.t_end})
    if args.json:
        print(json.dumps({"scenarios": scen,
                          "integrators": [i.as_dict() for i in INTEGRATORS.values()]},
                         indent=2))
        return 0
    print("Scenarios (rrp run NAME, or a path to your own .toml):")
    w = max(len(s["name"]) for s in scen)
    for s in scen:
        print(f"  {s['name']:<{w}}  {s['title']}  [{s['model']}; default "
              f"{s['integrator']}, h = {s['h']:g}, t_end = {s['t_end']:g}]")
    print("\nIntegrators (--integrator NAME):")
    w = max(len(n) for n in INTEGRATORS)
    for info in INTEGRATORS.values():
        print(f"  {info.name:<{w}}  {info.title} — {info.properties()}; {info.reference}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    import numpy as np

    from engine import __version__
    from engine.diagnostics import momentum_drift
    from engine.io import RunWriter
    from engine.scenarios import parse_sets
    from engine.simulation import Simulation, default_integrator

    sc = _load(args.scenario, parse_sets(args.set))
    run = sc.run
    h = args.h if args.h is not None else run.h
    t_end = args.t_end if args.t_end is not None else run.t_end
    every = args.every or run.every
    tol = args.energy_tolerance or run.energy_tolerance
    model = sc.build_model()
    integrator = args.integrator or default_integrator(model, run.integrator)
    if integrator != (args.integrator or run.integrator) and not args.quiet:
        print(f"note: the scenario's {run.integrator} cannot drive this model "
              f"(contact = {model.contact!r}); using {integrator}", file=sys.stderr)
    sim = Simulation(model, integrator, h, record_every=every,
                     record_frames=bool(args.out) and not args.no_frames,
                     energy_tolerance=tol)
    tty = sys.stderr.isatty() and not args.quiet
    if tty:
        print("preparing kernels (compiled once, then cached)…", file=sys.stderr, flush=True)
    t_prep = time.perf_counter()
    sim.warm_up()
    t_prep = time.perf_counter() - t_prep
    stab = sim.stability()
    if h > stab.h_stable and not args.quiet:
        print(f"warning: h = {h:g} exceeds the {stab.describe()}; the run may blow up",
              file=sys.stderr)
    writer = RunWriter(args.out, sim, scenario=sc.name) if args.out else None
    status, message, code = "complete", "", 0
    n_total = max(1, int(math.ceil(t_end / h - 1e-9)))
    chunk = max(1, min(20_000, n_total // 100 or 1))
    bar = _progress(n_total, tty)
    try:
        done = 0
        while done < n_total:
            rep = sim.advance(min(chunk, n_total - done))
            done += rep.steps
            if bar is not None:
                bar.update(rep.steps)
            if writer is not None:
                writer.flush()
            if not rep.ok:
                status, message, code = "failed", rep.failure.message, EXIT_FAILED
                break
    except KeyboardInterrupt:
        status, message, code = "interrupted", "interrupted by the user", EXIT_INTERRUPTED
    finally:
        if bar is not None:
            bar.close()
        if writer is not None:
            writer.close(status, message)

    a = sim.series.arrays()
    total = a["energy"].sum(axis=1)
    rel = (total - sim.e_ref) / sim.e_scale
    drift = momentum_drift(a["P"], a["L"])
    scale = {k: (sim.p_scale if k.startswith("P") else sim.l_scale) for k in drift}
    us = 1e6 * sim.kernel_seconds / sim.kernel_steps if sim.kernel_steps else float("nan")
    summary: dict[str, Any] = {
        "scenario": sc.name,
        "model": model.name,
        "integrator": sim.integrator.name,
        "h": h,
        "t_end": t_end,
        "t_reached": sim.t,
        "steps": sim.step_index,
        "status": status,
        "message": message,
        "max_relative_energy_error": float(np.max(np.abs(rel))),
        "final_relative_energy_error": float(rel[-1]),
        "momentum_drift": drift,
        "momentum_drift_relative": {k: drift[k] / scale[k] for k in drift},
        "conserved": list(model.conserved),
        "stability_limit_h": stab.h_stable,
        "us_per_step": us,
        "steps_per_second": 1e6 / us if us == us and us > 0 else None,
        "startup_seconds": t_prep,
        "records": int(len(a["t"])),
        "output": args.out,
        "version": __version__,
        "parameters": model.params,
    }
    if args.json:
        print(json.dumps(summary, indent=2, default=float))
    else:
        _print_summary(summary, sc.title, sim.integrator.properties())
    if code == EXIT_FAILED:
        print(f"rrp: error: {message}", file=sys.stderr)
        if args.out:
            print(f"rrp: the output file {args.out} holds the run up to t = {sim.t:.6g}",
                  file=sys.stderr)
    return code


def _print_summary(s: dict[str, Any], title: str, props: str) -> None:
    print(f"RRP Studio {s['version']} — {s['scenario']}: {title}")
    print(f"  integrator  {s['integrator']} ({props}), h = {s['h']:g}")
    print(f"  time        t = 0 → {s['t_reached']:.6g} of {s['t_end']:g} "
          f"({s['steps']} steps), status: {s['status']}")
    print(f"  energy      max |relative error| = {s['max_relative_energy_error']:.3e} "
          f"(final {s['final_relative_energy_error']:+.3e})")
    print("  momentum    max |c(t) − c(0)|, relative to Σm|v| or Σ|x × mv| + J|Ω|:")
    for k, v in s["momentum_drift"].items():
        tag = "  (conserved by the variational schemes)" if k in s["conserved"] else ""
        print(f"                {k} {v:10.3e}  rel {s['momentum_drift_relative'][k]:.2e}{tag}")
    print(f"  stability   h limit ≈ {s['stability_limit_h']:.3g} at the final state")
    if s["us_per_step"] == s["us_per_step"]:
        print(f"  speed       {s['us_per_step']:.3g} µs/step, {s['steps_per_second']:,.0f} "
              "steps/s (engine only: JIT and I/O excluded)")
    if s["output"]:
        print(f"  output      {s['output']} ({s['records']} records)")


def _progress(total: int, enabled: bool):
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit="step", unit_scale=True, file=sys.stderr, leave=False,
                dynamic_ncols=True)


EXTRAS: dict[str, tuple[str, ...]] = {
    "gui": ("PyQt6", "pyvista", "pyvistaqt", "pyqtgraph", "imageio", "imageio_ffmpeg", "vtk",
            "vtkmodules"),
    "studies": ("dask", "distributed", "pandas", "matplotlib"),
}
"""The optional dependency groups of pyproject.toml, by the top-level modules they bring."""


def missing_extra(module: str) -> str | None:
    """The extra (``gui`` or ``studies``) that installs ``module``, if any."""
    top = module.split(".", 1)[0]
    for extra, mods in EXTRAS.items():
        if top in mods:
            return extra
    return None


def _load(name: str, overrides: dict[str, Any]):
    from engine.scenarios import load_scenario

    return load_scenario(name, overrides)


# ---------------------------------------------------------------------------- entry
def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``rrp`` console script."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.version:
            from engine import __version__

            print(f"rrp-studio {__version__}")
            return 0
        if args.command is None:
            parser.print_help()
            return EXIT_INPUT
        handler = {"list": cmd_list, "run": cmd_run}.get(args.command) or args.handler
        return handler(args)
    except UsageError as exc:
        print(f"rrp: error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except KeyboardInterrupt:
        print("rrp: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except ModuleNotFoundError as exc:
        extra = missing_extra(exc.name or "")
        if extra is None:
            raise_or_report = True
        else:
            what = f"rrp {getattr(args, 'command', '') or ''}".rstrip()
            print(f"rrp: error: {what} needs the optional package {exc.name!r}: install the "
                  f"{extra!r} extra, pip install 'rrp-studio[{extra}]' (in a source checkout: "
                  f"pip install -e '.[{extra}]')", file=sys.stderr)
            return EXIT_INPUT
        if raise_or_report and os.environ.get("RRP_DEBUG"):
            raise
        print(f"rrp: internal error: ModuleNotFoundError: {exc} (please report it; "
              "RRP_DEBUG=1 shows the traceback)", file=sys.stderr)
        return EXIT_FAILED
    except Exception as exc:  # one line, never a traceback
        from engine.scenarios import ScenarioError
        from engine.simulation import SimulationError

        if isinstance(exc, ScenarioError | SimulationError):
            print(f"rrp: error: {exc}", file=sys.stderr)
            return EXIT_INPUT
        if isinstance(exc, OSError):
            print(f"rrp: error: {exc.strerror or exc}: {getattr(exc, 'filename', '') or ''}"
                  .rstrip(": "), file=sys.stderr)
            return EXIT_INPUT
        if os.environ.get("RRP_DEBUG"):
            raise
        print(f"rrp: internal error: {type(exc).__name__}: {exc} "
              "(please report it; RRP_DEBUG=1 shows the traceback)", file=sys.stderr)
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
