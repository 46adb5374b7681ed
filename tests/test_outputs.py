"""Files, round three (issue #46 items 1, 2, 5, 8; docs/output.md, "Guarantees"): every
output other than a run file — an export's MP4 or GIF, ``rrp convert``'s VTK, XYZ,
LAMMPS dump and LAMMPS data, ``rrp import``'s scenario and CSV files — is whole or
absent: written under a temporary name, checked, renamed; ``rrp convert`` never writes
over its source or a run file; a signal at any moment is 130/143 and one line saying
whether the output is whole; a killed export's partial file is removed by the next.

Command-line cases run ``python -m app`` in a subprocess; a full disk is a small tmpfs
of its own in a user and mount namespace (as tests/test_run_races.py's)."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from helpers import child_env, communicate_or_kill, require_offscreen_render, rrp

from engine.io import RunWriter
from engine.scenarios import load_scenario
from engine.simulation import Simulation

HANG = 300
"""Seconds after which a child counts as hung (a timeout to detect hangs only)."""


@pytest.fixture(scope="module")
def ring(tmp_path_factory) -> Path:
    """A torus of 12 spheres, 201 frames: every format converts it (--to lammps too)."""
    path = tmp_path_factory.mktemp("outputs") / "ring.h5"
    sim = Simulation(load_scenario("torus", {"n_particles": 12}).build_model(), "rrp-newmark",
                     1e-3, record_every=1, record_frames=True, record_state=True)
    with RunWriter(path, sim, scenario="torus", checkpoint=False) as w:
        assert sim.advance(200).ok
        w.flush()
    return path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _one_line(res: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in res.stderr and "Fatal Python error" not in res.stderr, res.stderr
    lines = res.stderr.splitlines()
    assert len(lines) == 1, res.stderr
    return lines[0]


# ------------------------------------------------------------------ item 1
def test_convert_never_writes_over_its_source_or_a_run_file(ring, tmp_path):
    """``rrp convert run.h5 --to xyz run.h5`` wrote the XYZ text over the run it read,
    and ``--to lammps-dump other.h5`` over another run, without a word.  Now the source
    (through any path or link) is refused even with --force; a run file, or a name of
    one, unless --force; one line, exit 2, nothing written, the files unchanged."""
    run = tmp_path / "run.h5"
    shutil.copy(ring, run)
    other = tmp_path / "other.h5"
    shutil.copy(ring, other)
    (tmp_path / "sub").mkdir()
    os.symlink(run, tmp_path / "link.xyz")
    os.link(run, tmp_path / "sub" / "hard.dump")
    before = {p: _digest(p) for p in (run, other)}
    cases = [("xyz", "run.h5", "is the run file being converted"),
             ("xyz", "./sub/../run.h5", "is the run file being converted"),
             ("xyz", "link.xyz", "is the run file being converted"),
             ("lammps-dump", "sub/hard.dump", "is the run file being converted"),
             ("vtk", "run.h5", "is the run file being converted"),
             ("lammps", "run.h5", "is the run file being converted"),
             ("lammps-dump", "other.h5", "is a run file"),
             ("xyz", "new.h5", "is named as a run file")]
    for fmt, target, what in cases:
        res = rrp(tmp_path, "convert", "run.h5", "--to", fmt, target)
        line = _one_line(res)
        assert res.returncode == 2 and what in line and "nothing was written" in line, \
            (fmt, target, res.returncode, line)
    res = rrp(tmp_path, "convert", "run.h5", "--to", "xyz", "run.h5", "--force")
    assert res.returncode == 2 and "is the run file being converted" in _one_line(res)
    assert {p: _digest(p) for p in (run, other)} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.xyz", "other.h5", "run.h5",
                                                         "sub"]
    res = rrp(tmp_path, "convert", "run.h5", "--to", "lammps-dump", "other.h5", "--force",
              "-q")
    assert res.returncode == 0 and res.stderr == "", res.stderr
    assert other.read_text().startswith("ITEM: TIME") and _digest(run) == before[run]


# ------------------------------------------------------------------ item 2
def _unshare_ok() -> bool:
    if shutil.which("unshare") is None or shutil.which("truncate") is None:
        return False
    res = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=1m tmpfs "
                          "/mnt 2>/dev/null || mount -t tmpfs -o size=1m tmpfs /tmp"],
                         capture_output=True)
    return res.returncode == 0


WRITERS = {
    "export-mp4": "export ../ring.h5 --layout view --size 160x120 --speed 0.02 --out "
                  "disk/old.mp4 -q",
    "export-gif": "export ../ring.h5 --layout view --size 160x120 --speed 0.02 --out "
                  "disk/new.gif -q",
    "vtk": "convert ../ring.h5 --to vtk disk/vtk -q",
    "xyz": "convert ../ring.h5 --to xyz disk/old.xyz -q",
    "lammps-dump": "convert ../ring.h5 --to lammps-dump disk/new.dump -q",
    "lammps": "convert ../ring.h5 --to lammps disk/lmp -q",
    "import": "import lammps ../ring.data --out disk/old.toml -q",
}
"""Every writer, onto a disk that fills during the write (``old.*``: a previous file is
there, and must stay as it was)."""


def test_every_output_is_whole_or_absent_on_a_full_disk(ring, tmp_path):
    """Onto a full disk (a 1 MB tmpfs filled to its last page), ``rrp export`` exited
    0 with ffmpeg's lines and an MP4 without its moov atom, ``rrp convert --to vtk``
    aborted (``double free or corruption``, exit 134) and left files.  Now every writer
    ends in one line naming the target and ``No space left on device``, exit 1, nothing
    under the target's name (the previous file untouched), no temporary left."""
    if not _unshare_ok():
        pytest.skip("no user namespaces here to mount a small tmpfs")
    require_offscreen_render()
    work = tmp_path / "w"
    work.mkdir()
    shutil.copy(ring, tmp_path / "ring.h5")
    res = rrp(tmp_path, "convert", "ring.h5", "--to", "lammps", "lmp", "-q")
    assert res.returncode == 0, res.stderr
    shutil.copy(tmp_path / "lmp" / "ring.data", tmp_path / "ring.data")
    disk = work / "disk"
    disk.mkdir()
    olds = {"old.mp4": b"an earlier video\n", "old.xyz": b"1\nearlier\nB 0 0 0 0\n",
            "old.toml": b'title = "earlier"\n'}
    app = f"{sys.executable} -m app"
    script = [f"mount -t tmpfs -o size=1m tmpfs {disk} || exit 99"]
    script += [f"printf %s '{v.decode()}' > disk/{k}" for k, v in olds.items()]
    script += ["dd if=/dev/zero of=disk/fill bs=4k 2>/dev/null; truncate -s -4096 disk/fill"]
    for name, cmd in WRITERS.items():
        script.append(f"{app} {cmd} 2> ../{name}.err; echo {name} rc=$?")
    script.append("rm disk/fill; echo LISTING; ls -A disk")
    for k in olds:
        script.append(f"cat disk/{k} > ../{k}.after")
    res = subprocess.run(["unshare", "-rm", "sh", "-c", " && ".join(script[:1])
                          + " ; " + " ; ".join(script[1:])], cwd=work, env=child_env(),
                         capture_output=True, text=True, timeout=HANG)
    assert "rc=" in res.stdout, res.stdout + res.stderr
    codes = dict(line.split(" rc=") for line in res.stdout.split("LISTING")[0].split("\n")
                 if " rc=" in line)
    listing = sorted(res.stdout.split("LISTING")[1].split())
    for name, cmd in WRITERS.items():
        err = (tmp_path / f"{name}.err").read_text()
        lines = err.splitlines()
        target = cmd.split("disk/")[1].split()[0]
        assert codes[name] == "1" and len(lines) == 1, (name, codes[name], err)
        assert "No space left on device" in lines[0] and f"disk/{target}" in lines[0] \
            and "nothing was written" in lines[0], (name, lines[0])
    assert listing == sorted(olds), listing  # no new file, no temporary, no lock file
    for k, v in olds.items():
        assert (tmp_path / f"{k}.after").read_bytes() == v, k


def test_an_encoder_that_fails_is_one_line_and_leaves_nothing(tmp_path, monkeypatch, capsys):
    """ffmpeg's exit status and the finished file are checked before the rename: an
    encoder that exits non-zero, or an MP4 that lost its end (no moov atom), is one line,
    exit 1, the previous file untouched, no temporary (the app's exports share it)."""
    require_offscreen_render()
    import app.export.common as common
    from app.cli import main

    out = tmp_path / "x.mp4"
    out.write_bytes(b"earlier")
    init, close = common._Encoder.__init__, common._Encoder.close

    def cut(self):  # ffmpeg finished, then the file lost its end
        close(self)
        os.truncate(self.out.tmp, 40)

    def bad_codec(self, o, size, fps, params):
        init(self, o, size, fps, ["-vcodec", "nosuchcodec", "-f", "mp4"])

    for name, fault, what in (("close", cut, "no moov atom"),
                              ("__init__", bad_codec, "ffmpeg: ")):
        with monkeypatch.context() as m:
            m.setattr(common._Encoder, name, fault)
            code = main(["export", "pendulum", "--t-end", "0.3", "--size", "32x32", "--out",
                         str(out), "-q"])
        err = capsys.readouterr().err
        assert code == 1 and len(err.splitlines()) == 1 and what in err, (code, err)
        assert f"cannot write {out}" in err and "is unchanged" in err, err
        assert out.read_bytes() == b"earlier"
        assert sorted(p.name for p in tmp_path.iterdir()) == ["x.mp4"]


# ------------------------------------------------------------------ item 5
SLOW_RENAME = textwrap.dedent("""
    import os, sys, time
    real = os.replace
    def replace(src, dst, *a, **k):
        real(src, dst, *a, **k)
        if os.fspath(dst).endswith(os.environ["RRP_TEST_TARGET"]):
            time.sleep(float(os.environ.get("RRP_TEST_SLEEP", "2")))
    os.replace = replace
    sys.argv = ["app", *sys.argv[1:]]
    import runpy
    runpy.run_module("app", run_name="__main__", alter_sys=True)
""")
"""``python -m app`` whose rename onto the target (``RRP_TEST_TARGET``) is followed by
a pause: a signal in the last moments of a command, every time."""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("command", ["export", "convert", "import"])
def test_a_signal_once_the_output_is_in_place_says_it_is_whole(ring, tmp_path, sig,
                                                                command):
    """SIGINT in the last moments of an export ended with exit −2 and no message, or
    exit 0; of a convert with ``rrp: interrupted``.  Now: 128 + the signal, one line
    that says the output is whole (it is: the video decodes, the XYZ holds every
    frame)."""
    if command == "export":
        require_offscreen_render()
        args, target = ["export", str(ring), "--layout", "view", "--size", "32x32", "--fps",
                        "10", "--out", "x.gif", "-q"], "x.gif"
    elif command == "convert":
        args, target = ["convert", str(ring), "--to", "xyz", "x.xyz", "-q"], "x.xyz"
    else:
        res = rrp(tmp_path, "convert", str(ring), "--to", "lammps", "lmp", "-q")
        assert res.returncode == 0, res.stderr
        args, target = ["import", "lammps", "lmp/ring.data", "--out", "x.toml", "-q"], "x.toml"
    env = child_env()
    env["RRP_TEST_TARGET"] = target
    proc = subprocess.Popen([sys.executable, "-c", SLOW_RENAME, *args], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + HANG
        while not (tmp_path / target).exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the output never appeared"
            time.sleep(0.005)
        time.sleep(0.1)
        proc.send_signal(sig)
        err = communicate_or_kill(proc, f"hung after {sig.name}", HANG)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + sig, (proc.returncode, err)
    lines = err.splitlines()
    assert len(lines) == 1 and sig.name in lines[0] and "whole" in lines[0] \
        and target in lines[0], err
    out = tmp_path / target
    if command == "export":
        assert out.read_bytes()[:6] == b"GIF89a" and out.read_bytes()[-1:] == b"\x3b"
    elif command == "convert":
        assert out.read_text().count("Properties=") == 201
    else:
        assert load_scenario(str(out)).build_model().n_bodies == 12
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


SIGNAL_IN_IMPORT = textwrap.dedent("""
    import os, signal, sys
    import vtkmodules
    real = vtkmodules.VTKMetaHook.find_spec
    def find_spec(self, name, path, target=None):
        if name == os.environ["RRP_TEST_MODULE"] and not os.environ.get("RRP_TEST_SENT"):
            os.environ["RRP_TEST_SENT"] = "1"
            os.kill(os.getpid(), signal.SIGINT)  # (handled here: inside VTK's C init)
        return real(self, name, path, target)
    vtkmodules.VTKMetaHook.find_spec = find_spec
    sys.argv = ["app", *sys.argv[1:]]
    import runpy
    runpy.run_module("app", run_name="__main__", alter_sys=True)
""")
"""``python -m app`` that gets SIGINT while VTK's C initialisation of a module imports
``RRP_TEST_MODULE`` (where a stray signal crashed the export)."""


def test_a_signal_while_the_export_imports_vtk_is_130_and_one_line(ring, tmp_path):
    """Before its first frame an export stops at once on a signal — but raised inside
    VTK's initialisation it crashed (SIGSEGV, exit −11) or became ``rrp: internal
    error: ImportError: Failed to load vtkRenderingOpenGL2``.  There it is recorded and
    acted on once the import is done: 130, one line, nothing written."""
    require_offscreen_render()
    env = child_env()
    env["RRP_TEST_MODULE"] = "vtkmodules.vtkRenderingCore"
    res = subprocess.run([sys.executable, "-c", SIGNAL_IN_IMPORT, "export", str(ring),
                          "--layout", "view", "--size", "32x32", "--out", "x.gif"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=HANG)
    line = _one_line(res)
    assert res.returncode == 130 and "export stopped by SIGINT: nothing written" in line, \
        (res.returncode, line)
    assert list(tmp_path.iterdir()) == []


SLOW_READS = textwrap.dedent("""
    import sys, time
    import h5py
    real = h5py.Dataset.__getitem__
    def getitem(self, key):
        time.sleep(0.01)
        return real(self, key)
    h5py.Dataset.__getitem__ = getitem
    sys.argv = ["app", *sys.argv[1:]]
    import runpy
    runpy.run_module("app", run_name="__main__", alter_sys=True)
""")
"""``python -m app`` whose reads of a run file are slow: a signal mid-conversion."""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("fmt", ["xyz", "vtk"])
def test_a_signal_during_a_conversion_leaves_nothing(ring, tmp_path, fmt, sig):
    """A signal while ``rrp convert`` writes (it printed ``rrp: interrupted``, saying
    nothing of its output): 128 + the signal, one line saying nothing was written and
    naming the target, no file and no temporary."""
    shutil.copy(ring, tmp_path / "ring.h5")
    proc = subprocess.Popen([sys.executable, "-c", SLOW_READS, "convert", "ring.h5", "--to",
                             fmt, "t"], cwd=tmp_path, env=child_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + HANG
        while not list(tmp_path.rglob(".*")):  # (a temporary: it writes)
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no temporary appeared"
            time.sleep(0.005)
        time.sleep(0.2)
        proc.send_signal(sig)
        err = communicate_or_kill(proc, f"hung after {sig.name}", HANG)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + sig, (proc.returncode, err)
    lines = err.splitlines()
    assert len(lines) == 1 and f"stopped by {sig.name}" in lines[0] \
        and "nothing written" in lines[0] and "t was not created" in lines[0], err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ring.h5"]


# ------------------------------------------------------------------ item 8
def test_the_next_export_removes_a_killed_exports_partial(tmp_path):
    """SIGKILL runs no clean-up: a killed export left ``.x.part-PID.gif`` for good.  The
    next export of the same target removes the partial files of processes that are
    gone (not those of a live one), as a run file's lock of a dead writer is taken
    over."""
    require_offscreen_render()
    proc = subprocess.Popen([sys.executable, "-m", "app", "export", "pendulum", "--t-end",
                             "5000", "--fps", "2", "--size", "32x32", "--out", "x.gif"],
                            cwd=tmp_path, env=child_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + HANG
        while not list(tmp_path.glob(".x.part-*.gif")):
            assert proc.poll() is None, proc.stderr.read()
            assert time.monotonic() < deadline, "no partial file appeared"
            time.sleep(0.05)
        proc.kill()
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
    killed = list(tmp_path.glob(".x.part-*.gif"))
    assert killed, list(tmp_path.iterdir())
    live = tmp_path / f".x.part-{os.getpid()}.gif"  # (this process: alive, kept)
    live.write_bytes(b"")
    res = rrp(tmp_path, "export", "pendulum", "--t-end", "0.2", "--fps", "10", "--size",
              "32x32", "--out", "x.gif", "-q")
    assert res.returncode == 0, res.stderr
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted(["x.gif", live.name]), left
