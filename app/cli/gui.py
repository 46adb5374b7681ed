"""``rrp gui [SCENARIO | RUN.h5] [--integrator] [--h] [--compare NAME]… [--screenshot PATH
--quit-after SECONDS]``.

Only argparse here: Qt, PyVista and the engine are imported when the command runs.
"""

from __future__ import annotations

import argparse


def register(sub) -> None:
    """Add the ``gui`` sub-command to the ``rrp`` parser."""
    from . import _any_float

    p = sub.add_parser("gui", help="open the desktop app (live 3D view and plots)")
    p.add_argument("scenario", nargs="?", default=None,
                   help="built-in scenario name, a .toml path, or a recorded run (.h5, "
                        ".h5.<pid>.partial) to replay and branch from (default: the last "
                        "scenario used, or torus)")
    p.add_argument("--integrator", "-i", help="integrator name (default: the scenario's)")
    p.add_argument("--h", type=_any_float, help="time step (default: the scenario's)")
    p.add_argument("--compare", action="append", default=[], metavar="NAME",
                   help="compare mode: also run NAME from the same start, in lock-step with "
                        "the same h (give it up to twice)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scenario parameter (TOML value)")
    p.add_argument("--play", action="store_true", help="start running at once")
    p.add_argument("--screenshot", metavar="PATH",
                   help="save a PNG of the whole window after --quit-after seconds, then exit")
    p.add_argument("--quit-after", type=float, metavar="SECONDS",
                   help="run (playing) for this many seconds, then exit")
    p.add_argument("--size", default=None, metavar="WxH", help="window size, e.g. 1400x900")
    from . import threads_arg

    p.add_argument("--threads", type=threads_arg, metavar="N",
                   help="threads of the parallel force kernels (models of 4096 bodies or "
                        "more; the results do not depend on it; default: the last choice "
                        "in the app, else all cores); remembered")
    p.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    from ..gui.launch import launch

    return launch(args)
