"""An export of a run whose first chunks stepped on the kernels' uncompiled twins is the
export of a run compiled from the start, byte for byte (issue #45's acceptance: "and so
are its resume and export"): ``rrp export SCENARIO`` (``app.export.scenario`` through
``app.export.sim_track.SimTrack``) and ``rrp export RUN.h5`` of a file ``rrp run`` wrote.

The twin is put in the driver's way as ``tests/test_interpreted.py``'s resume test does:
``Simulation._stepping_loop`` steps interpreted below a step index, compiled from it."""

from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np
import pytest
from helpers import require_offscreen_render
from test_chunk_identity import assert_same_bits

from app.cli import main
from engine.io import RunFile

pytest.importorskip("pyvista")
pytest.importorskip("imageio_ffmpeg")


@pytest.fixture(scope="module")
def can_render() -> None:
    """Skip when neither EGL nor an X server can give VTK an OpenGL context."""
    require_offscreen_render()


@pytest.fixture
def first_interpreted(monkeypatch):
    """``start(n)``: from now every simulation steps its first ``n`` steps by the twin
    (whole chunks: a chunk that starts below ``n`` is the twin's), then compiled; it
    returns ``{"interpreted": [...], "compiled": [...]}``, the steps of each chunk each
    took."""
    import engine.simulation.driver as drv

    real = drv.Simulation._stepping_loop

    def start(n: int) -> dict[str, list[int]]:
        chunks: dict[str, list[int]] = {"interpreted": [], "compiled": []}

        def stepping_loop(self, *args):
            self.kernels = "interpreted" if self.step_index < n else "compiled"
            out = real(self, *args)
            chunks[self.stepped_by].append(int(out[0]))
            return out

        monkeypatch.setattr(drv.Simulation, "_stepping_loop", stepping_loop)
        return chunks

    return start


@pytest.fixture
def drawn(monkeypatch) -> list[bytes]:
    """The bodies each frame of an export draws (``t``, ``x``, ``q``, ``v``, ``omega`` of every
    ``state`` a track hands the renderer), as bytes: a GIF's few pixels would not show
    a difference of one ulp that the bodies do."""
    from app.export.sim_track import SimTrack
    from app.export.track import RunTrack

    seen: list[bytes] = []
    for cls in (SimTrack, RunTrack):
        def state(self, t, _real=cls.state):
            st = _real(self, t)
            if st is not None:
                seen.append(np.array(st.t).tobytes() + b"".join(
                    np.ascontiguousarray(a).tobytes() for a in (st.x, st.q, st.v, st.omega)
                    if a is not None))
            return st

        monkeypatch.setattr(cls, "state", state)
    return seen


def _export(tmp_path: Path, capsys, drawn: list[bytes], name: str,
            *args: str) -> tuple[bytes, list[bytes]]:
    """The GIF's bytes and the bodies its frames drew."""
    out = tmp_path / name
    del drawn[:]
    code = main(["export", *args, "--size", "64x48", "--fps", "20", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert drawn
    return out.read_bytes(), list(drawn)


@pytest.mark.parametrize("scenario, sets, t_end, n", [
    ("pendulum", [], "0.5", 20),
    ("torus", ["--set", "n_particles=12"], "0.1", 30),
], ids=["pendulum", "torus"])
def test_a_scenario_export_started_interpreted_is_the_compiled_ones(
        can_render, tmp_path, capsys, drawn, first_interpreted, scenario, sets, t_end, n):
    """The frames (the GIF's bytes) of ``rrp export SCENARIO`` whose first ``n`` steps
    the twin took (in both of the export's passes: the camera's and the frames') are
    those of the same export compiled throughout, and so are the bodies they draw."""
    args = (scenario, *sets, "--t-end", t_end)
    compiled = _export(tmp_path, capsys, drawn, "compiled.gif", *args)
    chunks = first_interpreted(n)
    swapped = _export(tmp_path, capsys, drawn, "swapped.gif", *args)
    assert sum(chunks["interpreted"]) >= n and sum(chunks["compiled"]) > 0  # (swapped)
    assert swapped[1] == compiled[1], "the bodies drawn differ"
    assert swapped[0] == compiled[0], "the GIFs differ"


def test_the_export_of_a_run_file_started_interpreted_is_the_compiled_ones(
        can_render, tmp_path, capsys, monkeypatch, drawn, first_interpreted):
    """``rrp run`` whose first 40 steps (of 100) the twin took writes a run file whose export
    ends where the compiled run's file ends, and its export is, byte for byte and body
    for body, the export of the compiled run's file."""
    import engine.interpreted as interp
    import engine.priming as priming

    monkeypatch.setattr(priming, "run_kernels_cached", lambda scheme, family: True)
    monkeypatch.setattr(interp, "interpret_while_cold", contextlib.nullcontext)

    def run(name: str) -> Path:
        path = tmp_path / name
        code = main(["run", "pendulum", "--t-end", "1", "--every", "5", "-o", str(path),
                     "--quiet"])
        assert code == 0, capsys.readouterr().err
        capsys.readouterr()
        return path

    compiled = run("compiled.h5")
    chunks = first_interpreted(40)
    started = run("started.h5")
    assert sum(chunks["interpreted"]) >= 40 and sum(chunks["compiled"]) > 0
    with RunFile(compiled) as a, RunFile(started) as b:
        assert_same_bits(a.resume_state()[0], b.resume_state()[0], "the run files' ends")
    gif, bodies = _export(tmp_path, capsys, drawn, "started.gif", str(started))
    want_gif, want_bodies = _export(tmp_path, capsys, drawn, "compiled.gif", str(compiled))
    assert bodies == want_bodies, "the bodies drawn differ"
    assert gif == want_gif, "the GIFs differ"
