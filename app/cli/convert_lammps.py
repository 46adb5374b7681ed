"""``rrp convert RUN.h5 --to lammps DIR [--frame K]``: a frame of a run of bonded spheres
(by default the first: the run's reference state, t = 0, which LAMMPS takes as its
bonds' rest state) as a LAMMPS data file and an input deck (issue #35 item 4, issue #43
item 2), written by :func:`engine.io.lammps.deck.write_lammps` (docs/scenarios.md
"LAMMPS decks")."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from engine.io.lammps.deck import NO_DAMPING, DeckError, write_lammps


def convert_lammps(args: argparse.Namespace, check=None) -> int:
    """The ``--to lammps`` branch of ``rrp convert`` (``args.frame``: the frame, default
    the first, the run's reference state: issue #43 item 2; another frame is written with
    our rest lengths from the first and the deck says LAMMPS rests at it;
    ``args.bond_damping``, ``args.run_steps`` where a Python caller sets them:
    :func:`write_lammps`; ``check()``: before the files are renamed into place)."""
    from engine.io import RunFileError
    from engine.io.hdf5 import RunFile
    from engine.io.schema import open_h5

    from ..errors import UsageError

    run = Path(args.run_file)
    out = Path(args.directory)
    if not out.parent.is_dir():
        raise UsageError(f"cannot convert: the parent of {args.directory} does not exist")
    if out.exists() and not out.is_dir():
        raise UsageError(f"cannot convert: {args.directory} exists and is not a directory "
                         "(--to lammps writes a directory)")
    k = 0 if getattr(args, "frame", None) is None else int(args.frame)
    try:
        with RunFile(run, series=False) as rf:  # (frames only: issue #47 item 4)
            fr = rf.frame(k)
            ref = rf.frame(0).x if fr.index != 0 else None
            params = dict(rf.params)
            model_name, h = rf.model_name, rf.h
            carried = rf.carried_geometry()  # (issue #43 item 4: no files needed)
            bonds = np.asarray(rf.bonds, dtype=np.int64).reshape(-1, 2)
            t_last = float(rf.frame_times[-1]) if len(rf.frame_times) else fr.t
        with open_h5(Path(run), "r") as f:  # (a killed writer's last commit: #47)
            steps = int(f.attrs.get("steps", 0) or 0)
            m = np.asarray(f["bodies/mass"][()], dtype=np.float64)
            J = np.asarray(f["bodies/inertia"][()], dtype=np.float64)
            D = np.asarray(f["bodies/diameter"][()], dtype=np.float64)
            groups = (np.asarray(f["bodies/group"][()], dtype=np.int64)  # (the one notion
                      if "bodies/group" in f else None)  # of a group: issue #43 item 5)
    except (RunFileError, OSError, KeyError) as exc:
        raise UsageError(f"cannot convert: {str(exc).splitlines()[0]}") from None
    if fr.v is None:
        raise UsageError(f"cannot convert: {run} holds no velocities in its frames")
    if model_name not in ("assembly", "torus", "tori-pile"):
        raise UsageError(f"cannot convert: --to lammps writes bonded spheres (assembly, "
                         f"torus, tori-pile), not {model_name!r}")
    try:
        data, deck = write_lammps(
            out, run.name.removesuffix(".partial").removesuffix(".h5"), model_name, params,
            fr.x, fr.v, fr.omega, m, J, D, bonds, h,
            title=f"RRP Studio: {run.name}, frame {k} (t = {fr.t:.17g})",
            bond_damping=getattr(args, "bond_damping", NO_DAMPING),
            run_steps=getattr(args, "run_steps", None) or _run_length(steps, t_last, h),
            before=check, x_ref=ref, q=fr.q, t=fr.t, geometry=carried,
            groups=groups if model_name != "assembly" else None)
    except DeckError as exc:  # (an assembly's files gone: issue #43 item 6)
        raise UsageError(f"cannot convert {run}: {exc}") from None
    if not args.quiet:
        print(f"wrote {data} ({m.shape[0]} spheres, {bonds.shape[0]} bonds, t = {fr.t:.6g}) "
              f"and {deck.name} (run it with: lmp -in {deck.name})")
    return 0


def _run_length(steps: int, t_last: float, h: float) -> int:
    """The deck's ``run N``: as many steps as the run file's run took (its ``steps``,
    else its last frame's time over ``h``), at least one — ``run 10000`` was written
    whatever the run's length (issue #42 item 11)."""
    if steps <= 0 and h > 0 and np.isfinite(t_last):
        steps = int(round(t_last / h))
    return max(1, int(steps))


