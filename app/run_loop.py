"""The stepping loop of ``rrp run`` (and ``--resume``) and the line it ends with.

:func:`drive` advances the simulation in chunks, hands the run file's writer the new
records after each (written in batches, :mod:`engine.io.batching`) and looks at the
signals between chunks (:mod:`app.run_signals`); whatever ends the run — the
end time, a blow-up, SIGINT/SIGTERM, a failed write, any other exception — it closes the
file with the status of what happened (``complete``, ``failed`` with the reason and the
``t`` reached, ``interrupted``), never the status it started with
(docs/output.md, "Guarantees").  :func:`outcome_line` is the one line on stderr that
says what happened to the file and how to continue.
"""

from __future__ import annotations

import errno
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import EXIT_FAILED

_SPACE_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)

CHUNK_SECONDS = 0.25
"""A chunk of steps takes about this long at most (wall clock), so that a signal is seen
within about a second even on a large model (results do not depend on the chunking)."""


@dataclass
class Outcome:
    """How a run ended: ``status`` as filed, ``message``, the exit ``code``, where the
    file is (``path``; ``None`` without one), the write failure if any (an
    ``engine.io.OutputWriteError``), the exception that ended it if any (``error``,
    raised again by the caller), the signal's name (``signal``), the ``writer``."""

    status: str = "complete"
    message: str = ""
    code: int = 0
    path: Path | None = None
    write_error: Any = None
    error: BaseException | None = None
    signal: str = ""
    writer: Any = None


def next_chunk(chunk: int, chunk_max: int, steps: int, seconds: float) -> int:
    """The next chunk: at most ``chunk_max`` steps, and no more than fit in
    :data:`CHUNK_SECONDS` at the pace of the last one."""
    if steps <= 0 or seconds <= 0:
        return chunk
    fit = int(steps * CHUNK_SECONDS / seconds)
    return max(1, min(chunk_max, fit))


def drive(args, sim, writer, n_total: int, t_end: float, bar, signals,
          resume_hint) -> Outcome:
    """Advance ``sim`` by ``n_total`` steps in chunks, flushing ``writer`` (or ``None``)
    and updating ``bar``; stop at a blow-up (``resume_hint(failure)`` makes its
    message), a signal, a failed write or an exception; close the file with the status
    of what happened.  Never raises (the exception is in ``Outcome.error``)."""
    from engine.io import OutputWriteError

    out = Outcome(writer=writer)
    # (an event-driven scheme returns to Python between compiled calls, several times a
    # second: a signal then ends ``advance`` at once, issue #33 item 4)
    sim.stop_check = lambda: bool(signals.received)
    chunk_max = chunk = max(1, min(20_000, n_total // 100 or 1))
    done = 0
    try:
        while done < n_total:
            if signals.received:
                break
            t0 = time.perf_counter()
            rep = sim.advance(min(chunk, n_total - done))
            chunk = next_chunk(chunk, chunk_max, rep.steps, time.perf_counter() - t0)
            done += rep.steps
            if bar is not None:
                bar.update(rep.steps)
            if writer is not None:  # (in batches: issue #36, item 15)
                writer.flush_when_due()
            if not rep.ok:
                out.status, out.code = "failed", EXIT_FAILED
                out.message = resume_hint(rep.failure)
                break
        if writer is not None:  # what is held, with a checkpoint when due (a cheap one
            writer.flush()      # always), before the close writes the closing one
    except OutputWriteError as exc:
        out.status, out.code, out.write_error = "failed", EXIT_FAILED, exc
    except Exception as exc:  # noqa: BLE001 - filed as failed, then raised again
        out.status, out.code, out.error = "failed", EXIT_FAILED, exc
        out.message = f"{type(exc).__name__}: {exc}".splitlines()[0]
    finally:
        if bar is not None:
            bar.close()
    if signals.received:
        out.signal = signals.name
        if out.status == "complete" and done < n_total:
            out.status = "interrupted"
            out.message = f"interrupted by the user ({out.signal})"
        out.code = signals.exit_code
    if writer is not None:
        try:
            out.path = writer.close(out.status, out.message)
        except OutputWriteError as exc:
            out.write_error, out.path = exc, exc.path
            if exc.errno != errno.EBUSY:  # (EBUSY: the lock file was lost; the file
                out.status = "failed"     # is whole, kept under its .partial name)
            if not signals.received:
                out.code = EXIT_FAILED
    if signals.received and (writer is None or not out.signal):
        out.signal, out.code = signals.name, signals.exit_code  # (also one in the close)
    return out


def outcome_line(out: Outcome, sim, t_end: float, writer) -> str | None:
    """The one line on stderr for a run that was interrupted or could not write its
    file (``None`` otherwise: the summary and the blow-up's lines say it)."""
    path = out.path
    cont = f"rrp run --resume {path} --t-end {t_end:g}"
    if out.write_error is not None:
        exc = out.write_error
        msg = exc.message
        if exc.errno == errno.EBUSY:  # (the lock file was lost: not replaced)
            return f"rrp: error: {msg}"
        if "nothing was written" in msg:
            return f"rrp: error: {msg}: free some space, then run it again"
        if getattr(writer, "abandoned", False):
            return f"rrp: error: {msg}"
        if getattr(exc, "damaged", False):  # (it fails its checks: issue #47 item 2)
            return f"rrp: error: {msg}; it is in {path} (status failed)"
        fix = ("free some space (or raise the file-size limit), then continue with"
               if exc.errno in _SPACE_ERRORS else "then continue with")
        return f"rrp: error: {msg}; it is in {path} (status failed): {fix}: {cont}"
    if out.status == "interrupted":
        if path is None:
            return (f"rrp: interrupted by {out.signal} at t = {sim.t:.6g} (nothing kept: "
                    "write the run with --out FILE to be able to continue it)")
        kept = ""
        if writer is not None and path == writer.partial:
            kept = f" ({writer.path} holds a complete run and was kept)"
        return (f"rrp: interrupted by {out.signal} at t = {sim.t:.6g}; the run is in "
                f"{path}{kept} (status interrupted): continue it with: {cont}")
    if out.signal and out.status == "complete":  # (issue #36 item 9)
        where = "" if path is None else f"; {path} holds it whole (status complete)"
        return (f"rrp: stopped by {out.signal} while the run was closing: the run completed "
                f"(t = {sim.t:.6g}){where}")
    return None
