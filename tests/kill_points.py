"""Kill points of a run file's writer (issue #47 item 1): an ``LD_PRELOAD`` shim that
kills the process with SIGKILL at the N-th ``pwrite``/``write``/``fsync`` of a thread
(the main thread, or the others: the writer's thread) on a file whose path contains a
given text (``.partial``), and in its counting mode logs every such call, so that a test
knows how many points there are to sweep.

The shim is C, compiled with the system's ``cc`` once per session
(:func:`build_shim`); :func:`shim_env` sets the environment a child reads:

* ``RRP_KILL_MATCH``: the text a file's path must contain for its writes to count;
* ``RRP_KILL_LOG``: counting mode, one line a call appended to this file:
  ``main|writer pwrite|write|fsync|fdatasync <offset> <bytes>``;
* ``RRP_KILL_THREAD`` (``main``/``writer``) and ``RRP_KILL_AT`` (N, from 1): SIGKILL
  before that thread's N-th counted call (the call does not happen).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

SHIM_C = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

static long counts[2];

static int is_main(void) { return syscall(SYS_gettid) == getpid(); }

static int matches(int fd) {
    const char *m = getenv("RRP_KILL_MATCH");
    char link[64], path[4096];
    ssize_t n;
    if (!m || !*m) return 0;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    n = readlink(link, path, sizeof path - 1);
    if (n <= 0) return 0;
    path[n] = 0;
    return strstr(path, m) != NULL;
}

static void point(int fd, const char *op, long long off, long long len) {
    const char *log, *who, *at;
    long k;
    int m;
    char line[160];
    if (!matches(fd)) return;
    m = is_main();
    who = m ? "main" : "writer";
    k = __atomic_add_fetch(&counts[m ? 0 : 1], 1, __ATOMIC_SEQ_CST);
    log = getenv("RRP_KILL_LOG");
    if (log && *log) {
        int lfd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (lfd >= 0) {
            int n = snprintf(line, sizeof line, "%s %s %lld %lld\n", who, op, off, len);
            syscall(SYS_write, lfd, line, (size_t)n);
            close(lfd);
        }
    }
    at = getenv("RRP_KILL_AT");
    if (at && *at && strcmp(getenv("RRP_KILL_THREAD") ? getenv("RRP_KILL_THREAD") : "",
                            who) == 0 && atol(at) == k)
        syscall(SYS_kill, getpid(), SIGKILL);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off) {
    static ssize_t (*real)(int, const void *, size_t, off_t);
    if (!real) real = dlsym(RTLD_NEXT, "pwrite");
    point(fd, "pwrite", (long long)off, (long long)n);
    return real(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off) {
    static ssize_t (*real)(int, const void *, size_t, off_t);
    if (!real) real = dlsym(RTLD_NEXT, "pwrite64");
    point(fd, "pwrite", (long long)off, (long long)n);
    return real(fd, buf, n, off);
}

ssize_t write(int fd, const void *buf, size_t n) {
    static ssize_t (*real)(int, const void *, size_t);
    if (!real) real = dlsym(RTLD_NEXT, "write");
    point(fd, "write", -1, (long long)n);
    return real(fd, buf, n);
}

int fsync(int fd) {
    static int (*real)(int);
    if (!real) real = dlsym(RTLD_NEXT, "fsync");
    point(fd, "fsync", -1, 0);
    return real(fd);
}

int fdatasync(int fd) {
    static int (*real)(int);
    if (!real) real = dlsym(RTLD_NEXT, "fdatasync");
    point(fd, "fdatasync", -1, 0);
    return real(fd);
}
"""

THREADS = ("main", "writer")
"""The threads whose calls are counted apart: the process's main thread, and all others
(the run's writer thread: nothing else writes the ``.partial``)."""


def cc() -> str | None:
    """The C compiler, if there is one."""
    return shutil.which("cc") or shutil.which("gcc")


def build_shim(where: Path) -> Path:
    """Compile the shim into ``where``; the shared object's path."""
    src = where / "killshim.c"
    out = where / "killshim.so"
    src.write_text(SHIM_C)
    subprocess.run([cc(), "-shared", "-fPIC", "-O1", "-o", str(out), str(src), "-ldl"],
                   check=True, capture_output=True, text=True)
    return out


def shim_env(env: dict[str, str], shim: Path, *, match: str = ".partial",
             log: Path | None = None, thread: str | None = None,
             at: int | None = None) -> dict[str, str]:
    """``env`` with the shim preloaded: counting into ``log``, or killing ``thread`` at
    its ``at``-th call."""
    e = dict(env)
    e["LD_PRELOAD"] = os.pathsep.join(p for p in (str(shim), e.get("LD_PRELOAD")) if p)
    e["RRP_KILL_MATCH"] = match
    for k in ("RRP_KILL_LOG", "RRP_KILL_THREAD", "RRP_KILL_AT"):
        e.pop(k, None)
    if log is not None:
        e["RRP_KILL_LOG"] = str(log)
    if thread is not None:
        e["RRP_KILL_THREAD"] = thread
        e["RRP_KILL_AT"] = str(int(at))
    return e


def read_log(log: Path) -> dict[str, list[tuple[str, int, int]]]:
    """A counting run's calls, by thread: ``(op, offset, bytes)`` in order."""
    out: dict[str, list[tuple[str, int, int]]] = {t: [] for t in THREADS}
    if log.exists():
        for line in log.read_text().splitlines():
            who, op, off, n = line.split()
            out[who].append((op, int(off), int(n)))
    return out
