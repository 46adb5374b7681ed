"""Recording of the 3D view to MP4 or GIF while the app runs.

The window hands over RGB frames (numpy arrays); a background thread encodes them with
imageio-ffmpeg (MP4: libx264, yuv420p) or imageio's GIF writer, into a temporary file
of this process that replaces the target only when the recording is finished, synced
and checked (``engine.io.atomic``, as every export: issue #46) — a failed or cancelled
recording never destroys an existing file.  One writer per output: the
recording holds the target's lock (``engine.io.outlock``, as ``rrp run`` and ``rrp
export`` do) from start to finish; another writer of the same file is refused.
"""

from __future__ import annotations

import queue
import threading
from pathlib import Path

import numpy as np

SUFFIXES = (".mp4", ".gif")


class RecorderError(ValueError):
    """A recording cannot be started or finished; the message names the fix."""


class Recorder:
    """``Recorder(path, fps)``; ``add(frame)`` from the GUI thread; ``close()``."""

    def __init__(self, path: str | Path, fps: int = 30) -> None:
        self.path = Path(path)
        suffix = self.path.suffix.lower()
        if suffix not in SUFFIXES:
            raise RecorderError(f"cannot record to {self.path.name!r}: use a file ending in "
                                f"{' or '.join(SUFFIXES)}")
        if not self.path.parent.is_dir():
            raise RecorderError(f"the directory {str(self.path.parent)!r} does not exist")
        self.fps = int(fps)
        from engine.io.outlock import OutputBusyError, OutputLock

        self._lock = OutputLock(self.path, "a recording of RRP Studio",
                                "record to another file, or wait for it to finish")
        try:
            self._lock.acquire()
        except OutputBusyError as exc:
            raise RecorderError(f"cannot record: {exc}") from None
        except OSError as exc:
            raise RecorderError(f"cannot record to {self.path}: {exc.strerror or exc}") from None
        from engine.io.atomic import AtomicOutput, OutputError

        try:  # (stale temporaries of killed recordings and exports removed: issue #46)
            self._out = AtomicOutput(self.path).__enter__()
        except OutputError as exc:
            self._lock.release()
            raise RecorderError(f"cannot record: {exc}") from None
        self.tmp = self._out.tmp
        self.frames = 0
        self.error: str | None = None
        self._q: queue.Queue = queue.Queue(maxsize=120)
        self._thread = threading.Thread(target=self._encode, name="rrp-recorder", daemon=True)
        self._thread.start()

    def add(self, rgb: np.ndarray) -> bool:
        """Queue a frame (H×W×3 uint8); False when the encoder is behind (frame dropped)."""
        if self.error:
            return False
        h, w = rgb.shape[:2]
        rgb = rgb[: h - h % 2, : w - w % 2]  # even sizes for yuv420p
        try:
            self._q.put_nowait(np.ascontiguousarray(rgb[..., :3]))
        except queue.Full:
            return False
        self.frames += 1
        return True

    def close(self) -> Path:
        """Finish the file; :class:`RecorderError` if nothing could be written.  The
        target's lock is released either way."""
        try:
            return self._finish()
        finally:
            self._lock.release()

    def _finish(self) -> Path:
        self._q.put(None)
        self._thread.join()
        if self.error:
            self._out.discard()
            raise RecorderError(f"recording failed: {self.error}")
        if self.frames == 0:
            self._out.discard()
            raise RecorderError("nothing was recorded: play the simulation while recording")
        from engine.io.atomic import OutputError

        from ..export.common import check_video

        try:  # synced and checked (a finished MP4 or GIF), then renamed (issue #46)
            self._out.commit(check_video)
        except OutputError as exc:
            self._out.discard()
            raise RecorderError(f"recording failed: {exc}") from None
        return self.path

    def _encode(self) -> None:
        import imageio.v2 as imageio

        writer = None
        shape = None
        try:
            while True:
                frame = self._q.get()
                if frame is None:
                    break
                if writer is None:
                    shape = frame.shape
                    if self.path.suffix.lower() == ".mp4":
                        writer = imageio.get_writer(
                            self.tmp, format="FFMPEG", fps=self.fps, codec="libx264",
                            pixelformat="yuv420p", macro_block_size=1, quality=7)
                    else:
                        writer = imageio.get_writer(self.tmp, format="GIF",
                                                    duration=1000 / self.fps, loop=0)
                if frame.shape != shape:  # the window was resized: keep the first size
                    frame = _fit(frame, shape)
                writer.append_data(frame)
        except Exception as exc:  # reported by close(); the GUI shows it
            self.error = f"{type(exc).__name__}: {exc}"
            while self._q.get() is not None:
                pass
        finally:
            if writer is not None:
                try:
                    writer.close()
                except Exception as exc:
                    self.error = self.error or f"{type(exc).__name__}: {exc}"


def _fit(frame: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    out = np.zeros(shape, dtype=frame.dtype)
    h = min(shape[0], frame.shape[0])
    w = min(shape[1], frame.shape[1])
    out[:h, :w] = frame[:h, :w]
    return out
