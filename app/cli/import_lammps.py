"""``rrp import lammps FILE.data --out scenario.toml`` — a LAMMPS data file as an
``assembly`` scenario with its spheres and bonds in CSV files beside it (issue #35 item 2;
docs/scenarios.md "Assemblies").

The scenario reads the CSVs (``bodies = "…-bodies.csv"``, ``bonds = "…-bonds.csv"``), so
it runs without the data file.  The atom style and units come from ``--atom-style`` and
``--units``, else the ``--deck``'s lines, else the file's own (issue #43 item 1,
``engine.io.lammps.read_data``).  With ``--deck`` the deck's commands are read
(issue #44 item 6, ``engine.io.lammps.deck_plan`` and ``deck_scenario``): its bond law,
``set`` masses, groups, timestep and ``run`` stages with their fields and damping; a
command not carried is one line naming it and its line, nothing written.  Otherwise a
bond type gets the binder coefficients the data file
carries in its ``# rrp bond_type`` header comments (written by ``rrp convert --to
lammps``: issue #35 item 1), else the torus's binder constants (k_bend 10, k_axial 200,
k_shear 200) in ``[bond_types]`` — LAMMPS's bond coefficients are not those of the B&G
binder law — and the command says so in one line.  No walls and no
gravity unless the scenario is edited to ask for them.  ``[run] h`` is the accuracy
guide of the imported state, below its stability estimate (a data file carries no
timestep; issue #42 item 2), and the command says so.

Only argparse at import: the engine is imported when the command runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

TORUS_BINDER = {"k_bend": 10.0, "k_axial": 200.0, "k_shear": 200.0}
"""The torus's binder constants (engine.models.torus), the default of every bond type."""


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``import`` sub-command to the ``rrp`` parser."""
    p = sub.add_parser(
        "import", help="import a LAMMPS data file as an assembly scenario",
        description="Write an assembly scenario (TOML) and its spheres and bonds (CSV "
                    "files beside it) from a LAMMPS data file of atom style atomic, "
                    "charge, bond, molecular, full, sphere, bpm/sphere, dipole or hybrid "
                    "of these. See docs/scenarios.md.")
    p.add_argument("format", choices=("lammps",), help="the input format: lammps")
    p.add_argument("data_file", metavar="FILE.data", help="a LAMMPS data file")
    p.add_argument("--out", required=True, metavar="SCENARIO.toml",
                   help="the scenario to write (the CSVs go beside it)")
    p.add_argument("--diameter", type=float, default=None,
                   help="the spheres' diameter, for atom style bond (it has none)")
    p.add_argument("--atom-style", default=None,
                   help="the atom style (overrides the deck's atom_style and the Atoms "
                        "line's comment), e.g. \"hybrid bpm/sphere dipole\"")
    p.add_argument("--units", default=None,
                   choices=("lj", "real", "metal", "si", "cgs", "micro", "nano"),
                   help="the data file's LAMMPS units (overrides the deck's units and the "
                        "title's 'units = ...'); converted to SI; lj refused, except a "
                        "deck's: its numbers taken as they are")
    p.add_argument("--deck", default=None, metavar="IN.deck",
                   help="the LAMMPS input deck: its units, atom_style, groups, set, "
                        "bond_style/bond_coeff, timestep, fixes (nve/bpm/sphere, efield, "
                        "viscous, viscous/sphere), variables and run lines become the "
                        "scenario's laws, masses, step and stages; any other command is "
                        "refused (docs/scenarios.md \"LAMMPS input decks\")")
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")
    p.set_defaults(handler=cmd_import)


def cmd_import(args: argparse.Namespace) -> int:
    """The command; a signal is one line saying whether the scenario was written (issue
    #46 item 5)."""
    from ..run_signals import Stopped

    signals = getattr(args, "signals", None)
    try:
        code = _import(args)
    except Stopped as stop:
        if signals is not None:
            signals.reported = True
        print(f"rrp: import stopped by {stop.name}: nothing written ({args.out} was not "
              "created or changed)", file=sys.stderr)
        return stop.exit_code
    if signals is not None:
        return signals.end_with(f"rrp: import stopped by {{signal}} after {args.out} was "
                                "written with its CSV files: they are whole", code)
    return code


def _import(args: argparse.Namespace) -> int:
    import numpy as np

    from ..errors import UsageError

    out = Path(args.out)
    if out.suffix != ".toml":
        raise UsageError(f"--out {args.out}: the scenario must be a .toml file")
    if not out.parent.is_dir():
        raise UsageError(f"--out {args.out}: the folder {str(out.parent)!r} does not exist")
    stem = out.stem
    bodies_csv, bonds_csv = out.parent / f"{stem}-bodies.csv", out.parent / f"{stem}-bonds.csv"
    _refuse_overwriting_the_input(args, [out, bodies_csv, bonds_csv])
    d, deck_notes, coeff_from, scen = _read(args)
    n = d.x.shape[0]
    J = 0.1 * d.m * d.D * d.D
    cols = [d.x, d.D, d.m, J, d.v, d.omega]
    header = "x,y,z,diameter,mass,inertia,vx,vy,vz,wx,wy,wz"
    if d.mu is not None:
        cols.append(d.mu)
        header += ",mux,muy,muz"
    table = (np.column_stack([*cols, d.mol]), header + ",group")
    types = sorted(set(range(1, d.n_bond_types + 1)) | set(np.unique(d.bond_type).tolist()))
    lj = scen is not None and scen.lj
    units = ("lj, taken as they are (a dimensionless model)" if lj else "si"
             if d.units == "si" else f"LAMMPS {d.units} converted to SI" if d.units
             else "SI (the file names none: its numbers taken as they are)")
    deck_name = Path(args.deck).name if args.deck else ""
    lines = [f"# Imported from {Path(args.data_file).name}"
             + (f" and the deck {deck_name}" if scen is not None else "")
             + f" by 'rrp import lammps' (atom style {d.style}, units {units}): "
             f"{n} spheres, {d.bonds.shape[0]} bonds.",
             "# Bond coefficients: the torus's binder constants (edit [bond_types]); no walls",
             "# and no gravity (add [[walls]] and gravity = [...] under [parameters]).",
             f'title = "{Path(args.data_file).name} (imported from LAMMPS)"',
             'model = "assembly"', f'bodies = "{bodies_csv.name}"',
             f'bonds = "{bonds_csv.name}"', "", "[parameters]",
             "gravity = [0.0, 0.0, 0.0]"]
    if scen is not None:  # (the deck has no pair style: LAMMPS's spheres do not touch)
        lines += ["k_contact = 0.0  # the deck has no pair_style: no contacts",
                  "k_wall = 0.0"]
    lines.append("")
    laws = scen.laws if scen is not None else {}
    missing = [t for t in types if str(t) not in d.bond_coeffs and str(t) not in laws]
    for t in types:
        if str(t) in laws:
            lines += [f"[bond_types.{t}]"] + [
                f"{key} = {_toml(v)}" for key, v in laws[str(t)].items()]
            lines.append("")
            continue
        k = d.bond_coeffs.get(str(t))  # (the file's comments, else the deck's map)
        vals = TORUS_BINDER if k is None else dict(zip(TORUS_BINDER, k, strict=True))
        lines += [f"[bond_types.{t}]"] + [f"{key} = {v!r}" for key, v in vals.items()]
        lines.append("")
    if not missing:
        lines[1] = (f"# Bond coefficients: those {coeff_from} gives (edit [bond_types]); "
                    "no walls")
    if scen is not None and scen.stages:
        from engine.models.stages import stages_toml

        for k, (st, r) in enumerate(zip(scen.stages, scen.runs, strict=True)):
            lines.append(f"# stage {k + 1}: {deck_name} line {r.line}, run {r.steps}")
            lines += stages_toml([st]).rstrip("\n").split("\n")
            lines.append("")
    try:  # (from the scenario as 'rrp run' will build it: a draft beside the output)
        h, why = _step_of_draft(out, bodies_csv, bonds_csv, table, d, "\n".join(lines))
    except ValueError as exc:  # (the scenario, model and run errors: nothing is written)
        raise UsageError(f"{args.data_file}: no stable step for the imported state: "
                         f"{exc}") from None
    if scen is not None and scen.h is not None:
        guide = h
        h = scen.h
        why = (f"the deck's timestep ({deck_name})"
               + ("" if h <= guide * 2.0 else f"; above the accuracy guide {guide:g} of "
                  "the imported state: 'rrp run' says so"))
    at = lines.index("[parameters]")
    run = [f"# {why}", "[run]", f"h = {h!r}"]
    if scen is not None and scen.stages:
        total = sum(st.steps for st in scen.stages)
        run += [f"t_end = {total * h!r}  # the stages' total: {total} steps"]
    if scen is not None and scen.every is not None:  # (a frame a thermo line, not a step)
        n_every, line = scen.every
        run += [f"every = {n_every}  # the deck's thermo interval ({deck_name} line {line}):"
                " energies and frames recorded every so many steps"]
    lines[at:at] = [*run, ""]
    _write_all(args, out, bodies_csv, bonds_csv, table, d, "\n".join(lines))
    if not args.quiet:
        for note in [*d.notes, *deck_notes, *(scen.notes if scen is not None else [])]:
            print(f"rrp: note: {note}", file=sys.stderr)
        if missing:
            print(f"rrp: note: {Path(args.data_file).name} gives no binder coefficients"
                  f"{'' if args.deck is None else ' and the deck none that map'}: bond "
                  f"type{'s' * (len(missing) != 1)} {', '.join(map(str, missing))} "
                  f"take{'s' * (len(missing) == 1)} the "
                  "torus's k_bend 10, k_axial 200, k_shear 200 (edit [bond_types] in "
                  f"{out.name})", file=sys.stderr)
        print(f"wrote {out} with {bodies_csv.name} ({n} bodies) and {bonds_csv.name} "
              f"({d.bonds.shape[0]} bonds, {len(types)} bond type{'s' * (len(types) != 1)}); "
              f"atom style {d.style}; units {units}"
              + (f"; not carried: {', '.join(d.dropped)}" if d.dropped else ""))
        print(f"[run] h = {h:g}: {why}")
    return 0


def _read(args: argparse.Namespace):
    """The data file read with the settings in the issue's order (#43 item 1): the
    option, then the deck's line, then the file's own; the deck's bond coefficients
    where they map.  Returns the data, the deck's notes and where the coefficients came
    from."""
    from engine.io.lammps import units as un
    from engine.io.lammps.deck_plan import plan_of
    from engine.io.lammps.deck_scenario import apply_plan
    from engine.io.lammps.read_data import LammpsDataError, read_data
    from engine.io.lammps.read_deck import read_deck
    from engine.models.assembly import check_import
    from engine.models.assembly_input import AssemblyError

    from ..errors import UsageError

    try:
        deck = read_deck(args.deck) if args.deck is not None else None
        plan = plan_of(deck) if deck is not None else None
        style, style_from = args.atom_style, "--atom-style"
        if style is None and deck is not None and deck.atom_style:
            style, style_from = deck.atom_style, deck.where(deck.style_line)
        units, units_from = args.units, "--units"
        if units is None and deck is not None and deck.units:
            units, units_from = deck.units, deck.where(deck.units_line)
        notes: list[str] = []
        lj = units == "lj" and deck is not None
        if lj:  # (a deck in lj: a dimensionless model, its numbers as they are)
            units = "si"
            notes.append(f"{units_from}: units lj: the numbers are taken as they are (a "
                         "dimensionless model: lengths in sigma, masses in m, energies in "
                         "epsilon, shown as SI)")
        d = read_data(args.data_file, diameter=args.diameter, atom_style=style,
                      units=units, style_from=style_from, units_from=units_from)
        sc = un.scales(d.units) if d.units else un.UNITS["si"]
        coeff_from = "the data file"
        scen = None
        if plan is not None:
            scen = apply_plan(plan, d, sc)
            scen.lj = lj
            if scen.laws:
                coeff_from = f"the deck {deck.path.name}"
        check_import(d, TORUS_BINDER)
    except (LammpsDataError, AssemblyError) as exc:
        raise UsageError(str(exc)) from None
    return d, notes, coeff_from, scen


def _toml(v) -> str:
    """A TOML scalar."""
    return ("true" if v else "false") if isinstance(v, bool) else \
        f'"{v}"' if isinstance(v, str) else repr(float(v))


def _write_all(args: argparse.Namespace, out: Path, bodies_csv: Path, bonds_csv: Path,
               table, d, text: str) -> None:
    """The scenario and its CSV files, whole or absent together (issue #46 item 2): each
    into a temporary file beside it, all synced, then all renamed; a write error is one
    line (:class:`~engine.io.atomic.OutputError`, exit 1), nothing replaced.  A signal
    before the renames (:class:`~app.run_signals.Stopped`) leaves nothing either."""
    from contextlib import ExitStack

    from engine.io.atomic import AtomicOutput, commit_all

    signals = getattr(args, "signals", None)
    with ExitStack() as stack:
        outs = [stack.enter_context(AtomicOutput(p)) for p in (bodies_csv, bonds_csv, out)]
        _write_files((outs[0].tmp, outs[1].tmp, outs[2].tmp), table, d, text)
        commit_all(outs, before=None if signals is None else signals.check)


def _write_files(paths: tuple[Path, Path, Path], table, d, text: str) -> None:
    """The bodies' CSV, the bonds' CSV and the scenario's text at ``paths``."""
    import numpy as np

    data, header = table
    np.savetxt(paths[0], data, delimiter=",", comments="", header=header,
               fmt=["%.17g"] * (data.shape[1] - 1) + ["%d"])
    np.savetxt(paths[1], np.column_stack([d.bonds, d.bond_type]), delimiter=",",
               comments="", header="i,j,type", fmt="%d")
    paths[2].write_text(text, encoding="utf-8")


def _step_of_draft(out: Path, bodies_csv: Path, bonds_csv: Path, table, d,
                   text: str) -> tuple[float, str]:
    """:func:`_step` of the scenario ``text`` written as a draft, with its CSVs, into a
    temporary folder beside ``out`` (removed after): nothing under the output's names
    is touched before all is known (issue #46 item 2)."""
    import tempfile

    from engine.io.atomic import OutputError

    with tempfile.TemporaryDirectory(dir=out.parent, prefix=f".{out.stem}-draft-") as tmp:
        t = Path(tmp)
        try:
            _write_files((t / bodies_csv.name, t / bonds_csv.name, t / out.name), table, d,
                         text)
        except OSError as exc:  # (a full disk, a quota: one line, exit 1)
            kept = f"{out} is unchanged" if out.exists() else f"{out} was not created"
            raise OutputError(f"cannot write {out}: {exc.strerror or exc}; nothing was "
                              f"written ({kept})", exc.errno) from None
        return _step(t / out.name)


def _step(scenario: Path) -> tuple[float, str]:
    """The ``[run] h`` of an imported scenario and why (issue #42 item 2): a LAMMPS data
    file carries no timestep (the input deck does, which is not read), so the step is
    the accuracy guide of the imported state — at most half the stability estimate
    (``engine.stability``, the one the app and ``rrp run`` show), rounded down to two
    digits; the default step where nothing stiff limits it."""
    import math

    from engine.drivers import simulation_for
    from engine.scenarios import load_scenario

    sc = load_scenario(scenario)
    sim = simulation_for(sc.build_model(), sc.run.integrator, sc.run.h, record_frames=False,
                         energy_tolerance=None)
    sim.t_end = sc.run.t_end
    est = sim.stability()
    guide = min(est.h_accurate, 0.5 * est.h_stable)
    if not math.isfinite(guide):
        return sc.run.h, ("no stiff interaction in the imported state: the default step "
                          "(a LAMMPS data file carries no timestep)")
    e = math.floor(math.log10(guide)) - 1
    h = math.floor(guide / 10.0 ** e) * 10.0 ** e  # (two digits, rounded down)
    h = float(f"{h:.2g}")
    if h > guide:  # (the decimal of the two digits may lie a rounding above)
        h = math.nextafter(h, 0.0)
    return h, (f"below the {est.describe()}, estimated for the imported state (a LAMMPS "
               "data file carries no timestep); re-check after adding walls or gravity")


def _refuse_overwriting_the_input(args: argparse.Namespace, outputs: list[Path]) -> None:
    """Refuse an ``--out`` whose scenario or CSVs would be the data file itself
    (``rrp import lammps x-bodies.csv --out x.toml`` would write its CSV over its
    input: issue #47 item 5), before anything is read or written."""
    from ..errors import UsageError

    src = Path(args.data_file)
    for o in outputs:
        same = o.resolve() == src.resolve()
        if not same and o.exists() and src.exists():
            try:
                same = o.samefile(src)
            except OSError:
                same = False
        if same:
            what = "the scenario" if o.suffix == ".toml" else f"its CSV {o.name}"
            raise UsageError(f"--out {args.out}: {what} would overwrite the input "
                             f"{args.data_file}; choose another --out name (the CSVs are "
                             f"named <stem>-bodies.csv and <stem>-bonds.csv)")
