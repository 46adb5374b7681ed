"""The 3D scene (app/scene/) and the headless export (``rrp export``): the drawn
spheres sit at the bodies and their axes turn with the attitude, colour modes and
ghosts work, GIF and MP4 files hold frames that differ, bad input is one line on stderr
and leaves an existing file untouched, a blow-up keeps the frames so far."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from helpers import ciede2000, require_offscreen_render

import app.export  # noqa: F401  (chooses EGL off-screen rendering when there is no X)
from app.cli import main
from engine.rotations import quat_from_rotvec, quat_to_matrix
from engine.scenarios import load_scenario

pv = pytest.importorskip("pyvista")
iio = pytest.importorskip("imageio.v3")
imageio_ffmpeg = pytest.importorskip("imageio_ffmpeg")

from app.scene import COLOUR_MODES, GROUP_COLOURS, BodyScene, make_plotter  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def can_render() -> None:
    """Skip when neither EGL nor an X server can give VTK an OpenGL context."""
    require_offscreen_render()


@pytest.fixture
def plotter(can_render):
    p = make_plotter((320, 240))
    yield p
    p.close()


def torus_model(n: int = 12):
    return load_scenario("torus", {"n_particles": n}).build_model()


def random_quats(n: int, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return quat_from_rotvec(rng.uniform(-2.5, 2.5, (n, 3)))


# ------------------------------------------------------------------ the scene
def test_update_moves_spheres_to_bodies_and_turns_axes_with_attitude(plotter):
    model = torus_model()
    scene = BodyScene(plotter, model)
    n = model.n_bodies
    rng = np.random.default_rng(0)
    x = model.initial_state.x + rng.normal(0, 0.3, (n, 3))
    q = random_quats(n)
    scene.update(x, q)
    k = scene.points_per_sphere
    pts = np.asarray(scene.sphere_mesh.points).reshape(n, k, 3)
    radius = np.linalg.norm(pts - x[:, None, :], axis=2)
    np.testing.assert_allclose(radius, 0.5 * model.bodies.D[:, None] * np.ones((1, k)),
                               rtol=1e-9)
    ax = np.asarray(scene.axes_mesh.points).reshape(n, 4, 3)
    np.testing.assert_allclose(ax[:, 0], x, atol=1e-12)
    R = quat_to_matrix(q)
    for j in range(3):  # body e_j in space = column j of R
        np.testing.assert_allclose((ax[:, j + 1] - x) / scene.axis_length[:, None], R[:, :, j],
                                   atol=1e-12)
    rgb = np.asarray(scene.axes_mesh.cell_data["rgb"]).reshape(n, 3, 3)
    assert (rgb.argmax(axis=2) == [0, 1, 2]).all()  # red, green, blue = e1, e2, e3


def test_pendulum_bob_rod_and_trail(plotter):
    model = load_scenario("pendulum").build_model()
    scene = BodyScene(plotter, model, trail=True)
    assert len(scene.trail_points) == 1  # the initial state
    scene.clear_trail()
    for theta in np.linspace(0.0, 1.0, 5):
        q = quat_from_rotvec(np.array([[0.0, theta, 0.0]]))
        scene.update(np.zeros((1, 3)), q, np.zeros((1, 3)), np.array([[0.0, 1.0, 0.0]]))
        bob = quat_to_matrix(q)[0] @ model.draw_offset
        np.testing.assert_allclose(scene.centres[0], bob, atol=1e-12)
    assert len(scene.trail_points) == 5
    np.testing.assert_allclose(scene.trail_points[-1], bob, atol=1e-12)
    scene.clear_trail()
    assert len(scene.trail_points) == 0
    scene.set_trail(False)
    scene.update(np.zeros((1, 3)), q)
    assert len(scene.trail_points) == 0
    # speed of the drawn bob: |Ω × R d| with |Ω| = 1 ⟂ d  →  |d| = 1
    scene.set_colour_by("speed")
    np.testing.assert_allclose(scene.body_values(), [1.0], rtol=1e-12)


def test_colour_modes(plotter):
    model = torus_model()
    scene = BodyScene(plotter, model)
    n = model.n_bodies
    rng = np.random.default_rng(2)
    v, om = rng.normal(size=(n, 3)), rng.normal(size=(n, 3))
    scene.update(model.initial_state.x, random_quats(n), v, om)
    mapper = scene.sphere_actor.mapper
    assert not mapper.scalar_visibility
    scene.set_colour_by("speed")
    assert mapper.scalar_visibility
    k = scene.points_per_sphere
    vals = np.asarray(scene.sphere_mesh.point_data["value"]).reshape(n, k)
    np.testing.assert_allclose(vals[:, 0], np.linalg.norm(v, axis=1))
    lo, hi = scene.colour_range
    assert lo == 0.0 and hi >= vals.max()
    scene.set_colour_by("rotational energy")
    vals = np.asarray(scene.sphere_mesh.point_data["value"]).reshape(n, k)
    np.testing.assert_allclose(vals[:, 0], 0.5 * model.bodies.J * (om**2).sum(axis=1))
    scene.update(model.initial_state.x, random_quats(n), v, 0.1 * om)  # range never shrinks
    assert scene.colour_range[1] >= hi or scene.colour_range[1] >= vals.max()
    scene.set_colour_by("none")
    assert not mapper.scalar_visibility
    with pytest.raises(ValueError, match="allowed") as exc:
        scene.set_colour_by("temperature")
    assert all(m in str(exc.value) for m in COLOUR_MODES)


def test_group_colours_are_told_apart(plotter):
    """Issue #42 item 7: "body group" drew groups 2 and 3 in ``tab20``'s orange and light
    orange (CIEDE2000 15, two shades of one hue).  The first ten groups' colours, as the
    scene's lookup table maps them, are at least 20 apart (different hues); all twenty
    differ."""
    scene = BodyScene(plotter, load_scenario("assembly-drop").build_model())
    scene.set_colour_by("body group")
    lut = scene.sphere_actor.mapper.lookup_table
    assert scene.colour_range == (-0.5, GROUP_COLOURS - 0.5)
    rgb = [lut.map_value(float(k))[:3] for k in range(GROUP_COLOURS)]
    worst = min((ciede2000(rgb[i], rgb[j]), i, j) for i in range(10) for j in range(i))
    assert worst[0] >= 20.0, f"groups {worst[1]} and {worst[2]}: ΔE00 = {worst[0]:.1f}"
    assert len({tuple(np.round(c, 4)) for c in rgb}) == GROUP_COLOURS


def test_ghosts_add_move_and_remove(plotter):
    model = torus_model()
    scene = BodyScene(plotter, model)
    n_actors = len(plotter.renderer.actors)
    x, q = model.initial_state.x, model.initial_state.q
    scene.set_ghosts([(x + 1.0, q), (x - 1.0, q)])
    assert scene.n_ghosts == 2 and len(plotter.renderer.actors) == n_actors + 2
    meshes = scene.ghost_meshes
    scene.set_ghosts([(x + 2.0, q), (x - 2.0, q)])  # cheap: the same meshes, moved
    assert scene.ghost_meshes == meshes
    centres = np.asarray(meshes[0].points).reshape(model.n_bodies, -1, 3).mean(axis=1)
    np.testing.assert_allclose(centres, x + 2.0, atol=1e-9)
    colours = {tuple(a.prop.color) for a in plotter.renderer.actors.values()
               if a.GetProperty().GetOpacity() < 1 and a.mapper.dataset in meshes}
    assert len(colours) == 2
    scene.set_ghosts([(x, q)])
    assert scene.n_ghosts == 1
    scene.set_ghosts([])
    assert scene.n_ghosts == 0 and len(plotter.renderer.actors) == n_actors


def test_scene_renders_spheres_axes_and_wall(plotter):
    model = torus_model(24)
    scene = BodyScene(plotter, model, colour_by="speed")
    scene.reset_camera()
    plotter.render()
    img = plotter.screenshot(return_img=True).astype(int)
    red = (img[:, :, 0] > 150) & (img[:, :, 1] < 90) & (img[:, :, 2] < 90)
    assert red.sum() > 10  # e1 axes are visible
    background = img[img.shape[0] // 2, 2]
    assert (np.abs(img - background).sum(axis=2) > 60).mean() > 0.05


# ------------------------------------------------------------------ rrp export
def export(tmp_path: Path, capsys, *args: str) -> tuple[int, str, str]:
    code = main(["export", *args])
    out, err = capsys.readouterr()
    return code, out, err


def read_frames(path: Path) -> list[np.ndarray]:
    if path.suffix == ".gif":
        return list(iio.imread(path, index=None))
    gen = imageio_ffmpeg.read_frames(str(path))
    meta = next(gen)
    w, h = meta["size"]
    return [np.frombuffer(b, np.uint8).reshape(h, w, 3) for b in gen]


@pytest.mark.parametrize("ext", [".gif", ".mp4"])
def test_export_writes_frames_that_differ(can_render, tmp_path, capsys, ext):
    out = tmp_path / f"x{ext}"
    code, stdout, err = export(tmp_path, capsys, "torus", "--t-end", "2", "--size", "160x120",
                               "--fps", "5", "--out", str(out))
    assert code == 0, err
    assert "11 frames" in stdout
    frames = read_frames(out)
    assert len(frames) == 11 and frames[0].shape == (120, 160, 3)
    diff = [np.abs(f.astype(int) - frames[0]).mean() for f in frames[1:]]
    assert min(diff) > 0.2 and max(diff) > 2.0
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]  # no temp file left


@pytest.mark.parametrize("args, message", [
    (["--out", "KEEP.avi"], ".mp4 or .gif"),
    (["--size", "800by600"], "WIDTHxHEIGHT"),
    (["--size", "8x6"], "out of range"),
    (["--h", "-0.001"], "h must be a positive"),
    (["--colour-by", "heat"], "allowed"),
])
def test_export_bad_input_is_one_line_and_keeps_the_target(tmp_path, capsys, args, message):
    keep = tmp_path / "keep.gif"
    keep.write_bytes(b"precious")
    if "--out" not in args:
        args = [*args, "--out", str(keep)]
    else:
        args = [a.replace("KEEP", str(tmp_path / "keep")) for a in args]
    code, _, err = export(tmp_path, capsys, "torus", "--fps", "5",
                          *args)
    assert code != 0
    assert len(err.strip().splitlines()) == 1 and message in err and "Traceback" not in err
    assert keep.read_bytes() == b"precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.gif"]


def test_export_error_as_subprocess_has_no_traceback(tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    res = subprocess.run([sys.executable, "-m", "app", "export", "torus", "--out", "a.webm"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1 and "Traceback" not in res.stderr
    assert ".mp4 or .gif" in res.stderr
    assert list(tmp_path.iterdir()) == []


def test_export_blow_up_keeps_frames_and_names_the_stability_limit(can_render, tmp_path,
                                                                    capsys):
    out = tmp_path / "blow.gif"
    out.write_bytes(b"old")
    code, _, err = export(tmp_path, capsys, "torus", "--h", "0.0045", "--t-end", "3",
                          "--size", "96x64", "--fps", "10", "--out", str(out))
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "stability limit" in lines[0] and "blew up" in lines[0]
    frames = read_frames(out)  # the old file was replaced by a complete one
    assert 2 <= len(frames) < 31
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blow.gif"]


# ------------------------------------------------------------------ issue #27 §2
def _rrp(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return subprocess.run([sys.executable, "-m", "app", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("args, message", [
    (["--t-end", "1e12"], "means 1e+14 steps, more than any run can finish (the limit is"),
    (["--h", "1e-300"], "means 2e+300 steps, more than any run can finish (the limit is"),
    (["--h", "0"], "h must be a positive, finite time step, got 0"),
    (["--h", "nan"], "h must be a positive, finite time step, got nan"),
], ids=["t-end-1e12", "h-1e-300", "h-0", "h-nan"])
def test_exports_that_can_never_finish_are_refused_as_rrp_run_refuses_them(tmp_path, args,
                                                                           message):
    """``rrp run``'s guard, with its very message, before anything is built or written
    (these printed nothing and ran until killed)."""
    res = _rrp(tmp_path, "export", "pendulum", "--t-end", "2", *args, "--out", "x.gif")
    assert res.returncode == 2, res.stderr
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in res.stderr, lines
    assert list(tmp_path.iterdir()) == []
    run = _rrp(tmp_path, "run", "pendulum", "--t-end", "2", *args)
    assert run.returncode == 2 and run.stderr == res.stderr, (run.stderr, res.stderr)


def test_an_export_of_too_many_frames_is_refused(tmp_path):
    res = _rrp(tmp_path, "export", "pendulum", "--t-end", "1e6", "--fps", "30",
               "--out", "x.gif")  # 10⁸ steps: feasible for rrp run
    assert res.returncode == 2, res.stderr
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and "3e+07 frames" in lines[0] and "limit is 1e+06" in lines[0]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stopped_export_says_so_and_leaves_no_partial_file(can_render, tmp_path, sig):
    """Killed mid-export (SIGTERM: it used to die at once, leaving ``.x.part-PID.gif``
    behind, which ffmpeg kept writing): one line, exit 128 + the signal, nothing left."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    proc = subprocess.Popen([sys.executable, "-m", "app", "export", "pendulum", "--t-end",
                             "5000", "--fps", "2", "--size", "32x32", "--out", "long.gif"],
                            cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 600  # a hang guard: a cold cache compiles first
        while not list(tmp_path.glob(".long.part-*.gif")):
            assert proc.poll() is None, proc.stderr.read()
            assert time.monotonic() < deadline, "no partial file appeared"
            time.sleep(0.05)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + sig, (proc.returncode, err)
    lines = err.splitlines()
    assert len(lines) == 1 and f"export stopped by {sig.name}" in lines[0], err
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------ issue #33 item 12
def _cameras(monkeypatch) -> list[tuple]:
    """Record, at each exported frame, the view's world-to-clip matrix (the camera's
    position, direction and zoom), whether every body's centre lies in the
    picture, and the bodies' largest x."""
    import app.export.scenario as ex

    seen: list[tuple] = []
    render = ex._render

    def spy(*args):
        *args, on_frame = args

        def hook(f) -> None:
            clip = np.c_[f.centres, np.ones(len(f.centres))] @ f.view.T
            ndc = clip[:, :2] / clip[:, 3:]
            # (rows x, y, w of the matrix: its z row follows VTK's clipping range)
            seen.append((f.view[[0, 1, 3]], bool(np.all(np.abs(ndc) <= 1)),
                         float(f.centres[:, 0].max())))
            if on_frame is not None:
                on_frame(f)

        return render(*args, hook)

    monkeypatch.setattr(ex, "_render", spy)
    return seen


def test_the_export_camera_is_fixed_by_default_and_follows_when_asked(can_render, tmp_path,
                                                                      capsys, monkeypatch):
    """The ring moves; by default the camera does not (the wall stands still in the
    video) and frames the whole run: every body is in every frame.  ``--camera
    follow``: the camera moves with the bodies."""
    seen = _cameras(monkeypatch)
    out = tmp_path / "fixed.gif"
    code, _, err = export(tmp_path, capsys, "torus", "--t-end", "2", "--size", "160x120",
                          "--fps", "5", "--out", str(out))
    assert code == 0, err
    assert len(seen) == 11 and abs(seen[-1][2] - seen[0][2]) > 0.1  # (the ring moved)
    # the same position, direction and zoom (to round-off)
    assert all(np.allclose(s[0], seen[0][0], rtol=0, atol=1e-12) for s in seen)
    assert all(s[1] for s in seen)
    del seen[:]
    code, _, err = export(tmp_path, capsys, "torus", "--t-end", "2", "--size", "160x120",
                          "--fps", "5", "--camera", "follow", "--out",
                          str(tmp_path / "follow.gif"))
    assert code == 0, err
    assert len(seen) == 11
    assert not np.allclose(seen[-1][0], seen[0][0], rtol=0, atol=1e-3)  # (it moved)


def test_an_unknown_camera_is_one_line(tmp_path, capsys):
    code, _, err = export(tmp_path, capsys, "torus", "--camera", "orbit", "--out",
                          str(tmp_path / "x.gif"))
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "unknown camera 'orbit': use fixed or follow" in err
    assert not list(tmp_path.iterdir())


def test_a_long_export_asks_for_yes_on_a_terminal(tmp_path):
    """An export estimated at over an hour (882 353 frames: ``--speed 3.4e-5`` over one
    simulated second) with stdin a terminal is one line naming its frames, the time and
    ``--yes``, exit 2, nothing written — it started without a word (issue #47 item 7)."""
    import pty

    master, slave = pty.openpty()
    try:
        res = subprocess.run([sys.executable, "-m", "app", "export", "pendulum", "--t-end",
                              "1", "--speed", "3.4e-5", "--out", "x.mp4"], cwd=tmp_path,
                             stdin=slave, capture_output=True, text=True, timeout=120)
    finally:
        os.close(master)
        os.close(slave)
    assert res.returncode == 2, res.stderr
    (line,) = res.stderr.splitlines()
    assert "882,353 frames of 800x600, about" in line and " h to render" in line, line
    assert "pass --yes to start it" in line, line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("layout", ["view", "view+plots"])
def test_an_export_says_its_frames_and_time_before_it_starts(can_render, tmp_path, capsys,
                                                             monkeypatch, layout):
    """Beyond ``LONG_NOTE`` of estimated work (lowered here) an export first says how
    many frames and about how long, once, then goes on (a scenario drawn as it is
    simulated, and one recorded first for its plots; issue #47 item 7)."""
    from app.cli import export as cli_export

    monkeypatch.setattr(cli_export, "LONG_NOTE", 0.0)
    code = main(["export", "pendulum", "--t-end", "0.1", "--size", "64x48", "--layout",
                 layout, "--out", str(tmp_path / "a.gif")])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "rrp: note: 4 frames of 64x48, about 0 s to render and encode" in err, err
    assert err.count("frames of 64x48") == 1


@pytest.mark.parametrize("fps", ["0", "100000", "-3"])
def test_fps_out_of_range_names_one_range(tmp_path, capsys, fps):
    """``--fps 0`` and ``--fps 100000`` name the same range, before anything is
    simulated or written (they named "1 to 1e+10" and "[1, 120]": issue #42 item 11)."""
    code = main(["export", "pendulum", "--fps", fps, "--out", str(tmp_path / "x.mp4")])
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and f"fps must be an integer in [1, 120], got {int(fps)}" in line, line
    assert list(tmp_path.iterdir()) == []
