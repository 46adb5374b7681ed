"""A command's own cost and the cost of the compile it leaves running, measured apart
(issue #45, what remains: item 1).

On a cold kernel cache ``rrp run`` and the app start the processes that build the
compiled kernels (``engine.priming.spawn_priming``) and do not wait for them: a short
run ends, its priming processes go on filling the cache.  A benchmark that starts the
warm run at once measures a warm run racing that compile, and the command's CPU time
(``getrusage(RUSAGE_CHILDREN)`` after the command is reaped) leaves the compile out,
because an orphan is reaped by ``init``, not by us.

:func:`measure` makes this process a *child subreaper* (Linux ``prctl(
PR_SET_CHILD_SUBREAPER)``): a process the command leaves behind becomes our child when
the command exits.  It then runs the command, reaps it (its wall time, and the CPU of
the command and of every process it waited for itself: *command CPU*), and waits for
each process left behind with ``wait4`` (its own user + system time: *background
compile CPU*, and when the last one ended).  So a measurement returns only once the
background compile is done, and the next one starts on the cache it filled.
"""

from __future__ import annotations

import ctypes
import os
import resource
import subprocess
import time
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36
"""``prctl`` option (``<linux/prctl.h>``): orphaned descendants are re-parented to the
caller instead of ``init``."""


def become_subreaper() -> bool:
    """Make this process the subreaper of its descendants; ``False`` where the system
    offers none (not Linux): processes left behind are then not waited for."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def children(exclude: set[int] = frozenset()) -> list[int]:
    """The pids whose parent is this process (``/proc/*/stat``), except ``exclude``."""
    me, found = os.getpid(), []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in exclude:
            continue
        try:
            stat = (entry / "stat").read_text(encoding="ascii", errors="replace")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # (the name may hold spaces)
        if int(fields[1]) == me:
            found.append(int(entry.name))
    return found


def _cpu(usage: resource.struct_rusage) -> float:
    return usage.ru_utime + usage.ru_stime


def wait_left_behind(exclude: set[int] = frozenset()) -> tuple[float, int]:
    """Wait for every child of this process but ``exclude`` (the processes a command
    left behind, re-parented here); their CPU seconds (user + system) and how many."""
    cpu, count = 0.0, 0
    while pids := children(exclude):
        for pid in pids:
            try:
                _, _, usage = os.wait4(pid, 0)
            except ChildProcessError:
                continue
            cpu += _cpu(usage)
            count += 1
    return cpu, count


def measure(argv: list[str], *, env: dict | None = None, cwd: str | Path | None = None,
            exclude: set[int] = frozenset()) -> dict:
    """Run ``argv`` to its end, then wait for what it left running (see the module
    docstring).  Returns ``wall_s`` (the command), ``cpu_s`` (the command and what it
    waited for), ``background_cpu_s`` and ``background_processes`` (what it left behind),
    ``background_wall_s`` (from the command's start to the last of those ending),
    ``peak_rss_mb`` (the largest resident set of any of them), ``load`` (the 1-minute
    load average at the start and the end), ``returncode``, ``stdout`` and ``stderr``.
    The children this process had before (busy processes started on purpose, a
    display server) are not waited for, nor ``exclude``."""
    become_subreaper()
    exclude = set(exclude) | set(children())
    load0 = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    res = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True,
                         check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    bg_cpu, bg_n = wait_left_behind(exclude)
    bg_wall = time.perf_counter() - t0
    end = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"wall_s": round(wall, 2), "cpu_s": round(_cpu(after) - _cpu(before), 2),
            "background_cpu_s": round(bg_cpu, 2), "background_processes": bg_n,
            "background_wall_s": round(bg_wall, 2),
            "peak_rss_mb": round(end.ru_maxrss / 1024, 1),
            "load": [round(load0, 2), round(os.getloadavg()[0], 2)],
            "returncode": res.returncode, "stdout": res.stdout, "stderr": res.stderr}
