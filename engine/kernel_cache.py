"""The kernel cache: an edit recompiles what depends on it, and nothing is ever stale.

Numba's ``cache=True`` checks a cached function against its *own* source file only: a
kernel whose callee in another module changed would load stale machine code.  Until
issue #25 the whole cache was therefore thrown away at any edit of any engine file
(a directory named by a digest of every source), and every run compiled everything
again.  Here each compiled kernel records the engine sources its machine code was
made from, with their digests, beside Numba's index (``<function>.deps.json``):

* the files of its own code and of the code inlined into it (the source location of
  every statement of its typed IR: the ``inline="always"`` helpers, the step kernels
  of its scheme);
* the dependencies of every engine kernel it calls (each recorded the same way when it
  was compiled, or read from its record when it was loaded), and the modules of the
  engine overloads it calls (``engine.specialize``);
* the modules the constants it uses come from (``from ..layout import E_CONTACT``:
  values frozen into the machine code): the engine module each global of its typed IR
  that is not a callable was imported from.

A cached kernel is loaded only when every recorded file still has its digest; else it
is compiled again (and so, in turn, is every caller whose record holds that file).  An
edit to ``rk4.py`` recompiles the RK4 loop and RK4's kernels, not the velocity-Verlet
loop; an edit to ``forcefield.py`` recompiles every loop (``tests/test_kernel_cache.py``).

The index key also holds the compile flags a kernel *inherits* from its caller
(:func:`inherited_flags`: ``forceinline``, ``error_model``, ``fastmath``, ``nrt``):
Numba's key is the signature alone, yet a kernel compiled under a ``forceinline``
caller (``_before_forces`` under ``verlet_step_ws``) is marked always-inline, and one
compiled on its own (``engine.priming.prime_sibling_kernels``) is not; a loop that
loaded the latter called it instead of inlining it (Yoshida's pendulum step 2.2× the
CPU time; benchmarks/results/yoshida_pendulum_fix-2026-11-28.json).

Installed for the engine's functions by :func:`install` (``engine/__init__.py``):
Numba's dispatchers of functions defined in ``engine`` get a :class:`DependencyCache`.
"""

from __future__ import annotations

import ast
import contextlib
import fcntl
import hashlib
import importlib
import json
import os
import threading
from pathlib import Path

from numba.core import caching, config, ir, types
from numba.core.compiler import Flags
from numba.core.dispatcher import Dispatcher

ENGINE = Path(__file__).resolve().parent
_DIGESTS: dict[Path, str] = {}
_CONSTANT_NAMES: dict[Path, dict[str, Path]] = {}
_KERNEL_DEPS: dict[int, set[Path]] = {}
"""Per dispatcher (``id``): the engine files its compiled or loaded code depends on."""
_LOCK = threading.RLock()


def file_digest(path: Path) -> str:
    """The digest of an engine source (once per process: the sources do not change
    under a running process, whose modules are already imported)."""
    d = _DIGESTS.get(path)
    if d is None:
        try:
            d = hashlib.sha1(path.read_bytes()).hexdigest()[:16]
        except OSError:
            d = "missing"
        _DIGESTS[path] = d
    return d


def _engine_file(name: str | None) -> Path | None:
    if not name:
        return None
    p = Path(name).resolve()
    return p if ENGINE in p.parents and p.suffix == ".py" else None


def _module_of(path: Path) -> str:
    rel = path.relative_to(ENGINE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def constant_names(path: Path) -> dict[str, Path]:
    """The names ``path`` imports from other engine modules whose values are constants
    (not callables: frozen into the machine code of the kernels that use them), with
    the file each comes from."""
    hit = _CONSTANT_NAMES.get(path)
    if hit is not None:
        return hit
    out: dict[str, Path] = {}
    try:
        tree = ast.parse(path.read_text())
    except (OSError, SyntaxError):
        tree = ast.Module(body=[], type_ignores=[])
    module = _module_of(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package.split(".")
            base = base[:len(base) - node.level + 1]
            name = ".".join(base + ([node.module] if node.module else []))
        else:
            name = node.module or ""
        if not name.startswith("engine"):
            continue
        try:
            mod = importlib.import_module(name)
        except ImportError:
            continue
        src = _engine_file(getattr(mod, "__file__", None))
        for alias in node.names:
            value = getattr(mod, alias.name, None)
            if src is None or value is None or callable(value) or isinstance(value, type):
                continue
            out[alias.asname or alias.name] = src
    _CONSTANT_NAMES[path] = out
    return out


def _dependencies(cres, seen: set[int] | None = None) -> set[Path]:
    """The engine files the machine code of ``cres`` was made from (module docstring)."""
    files: set[Path] = set()
    ta = cres.type_annotation
    if ta is not None:
        for block in ta.blocks.values():
            for stmt in block.body:
                f = _engine_file(getattr(stmt.loc, "filename", None))
                if f is None:
                    continue
                files.add(f)
                value = stmt.value if isinstance(stmt, ir.Assign) else None
                if isinstance(value, ir.Global | ir.FreeVar):  # a constant of another module
                    src = constant_names(f).get(value.name)
                    if src is not None:
                        files.add(src)
        for t in ta.typemap.values():
            files |= _type_dependencies(t, seen)
        for sig in ta.calltypes.values():
            if sig is not None:
                for t in (*sig.args, sig.return_type):
                    files |= _type_dependencies(t, seen)
    return files


def _type_dependencies(t, seen: set[int] | None = None) -> set[Path]:
    if isinstance(t, types.Dispatcher):
        disp = t.dispatcher
        own = _engine_file(getattr(disp.py_func.__code__, "co_filename", None))
        if own is None:
            return set()
        out = {own}
        deps = _KERNEL_DEPS.get(id(disp))
        if deps:
            return out | deps
        seen = set() if seen is None else seen
        if id(disp) in seen:
            return out
        seen.add(id(disp))
        for cres in list(disp.overloads.values()):  # (an engine kernel without a cache)
            out |= _dependencies(cres, seen)
        return out
    if isinstance(t, types.Function):
        out = set()
        for tmpl in getattr(t, "templates", ()):
            fn = getattr(tmpl, "_overload_func", None)
            f = _engine_file(getattr(getattr(fn, "__code__", None), "co_filename", None))
            if f is not None:
                out.add(f)
        return out
    if isinstance(t, types.BaseTuple):
        out = set()
        for sub in t.types:
            out |= _type_dependencies(sub, seen)
        return out
    return set()


def _key_name(key) -> str:
    return hashlib.sha1(repr(key).encode()).hexdigest()[:20]


INHERITED = ("forceinline", "error_model", "fastmath", "nrt")
"""The flags Numba's CPU target lets a kernel inherit from the kernel whose typing
compiles it (``CPUTargetOptions.finalize``: ``inherit_if_not_set``)."""


def inherited_flags(dispatcher) -> tuple:
    """The values of :data:`INHERITED` that ``dispatcher`` compiles with here and now:
    its own options, the rest from the caller being compiled (Numba's ``ConfigStack``),
    as ``Dispatcher``'s compiler computes them."""
    flags = Flags()
    dispatcher.targetdescr.options.parse_as_flags(flags, dispatcher.targetoptions)
    values = []
    for name in INHERITED:
        v = getattr(flags, name)
        v = sorted(v.flags) if hasattr(v, "flags") else v  # (fastmath: a set of names)
        values.append((name, str(v)))
    return tuple(values)


class DependencyCache(caching.FunctionCache):
    """Numba's per-function cache, plus the record of the engine sources each cached
    overload depends on (see the module docstring), keyed by the inherited flags too."""

    def __init__(self, py_func, dispatcher=None) -> None:
        super().__init__(py_func)
        self._dispatcher = dispatcher
        own = _engine_file(py_func.__code__.co_filename)
        if own is not None:
            # where the package is does not matter, nor when its files were written:
            # the cache is found by the module's place in the package and is fresh when
            # the file's content is (so two checkouts, an install and CI share it)
            root = config.CACHE_DIR or str(ENGINE / "__pycache__" / "numba")
            self._cache_path = os.path.join(root, *own.relative_to(ENGINE.parent).parent.parts)
            self._cache_file = caching.IndexDataCacheFile(
                cache_path=self._cache_path, filename_base=self._impl.filename_base,
                source_stamp=file_digest(own))
        self._deps_path = Path(self._cache_path) / f"{self._impl.filename_base}.deps.json"
        self._owner = id(py_func)

    def _index_key(self, sig, codegen):
        """Numba's key, plus the flags this overload inherits (module docstring): code
        compiled under other flags is another entry, never loaded in its place."""
        key = super()._index_key(sig, codegen)
        if self._dispatcher is None:
            return key
        return (*key, inherited_flags(self._dispatcher))

    def _read(self) -> dict:
        try:
            return json.loads(self._deps_path.read_text())
        except (OSError, ValueError):
            return {}

    @contextlib.contextmanager
    def _locked(self):
        """This function's cache files to this process alone while it reads or writes
        them: Numba's index is read, changed and written back, and two processes saving
        two signatures at once could give both the same data file (then one would load
        the other's machine code).  Processes sharing a cache: the test suite's workers,
        several Dask workers on one machine, ``rrp run``'s priming subprocess."""
        with _LOCK:
            try:
                Path(self._cache_path).mkdir(parents=True, exist_ok=True)
                fd = os.open(self._deps_path.with_suffix(".lock"),
                             os.O_RDWR | os.O_CREAT, 0o644)
            except OSError:  # (a read-only cache: nothing is written to it)
                yield
                return
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                yield
            finally:
                os.close(fd)  # (releases the lock)

    def _load_overload(self, sig, target_context):
        key = self._index_key(sig, target_context.codegen())
        with self._locked():
            rec = self._read().get(_key_name(key))
            if not rec:
                return None
            deps = {ENGINE.parent / f: d for f, d in rec.items()}
            if any(file_digest(f) != d for f, d in deps.items()):
                return None  # an engine source it was made from changed: compile again
            data = super()._load_overload(sig, target_context)
        if data is not None:
            self._remember(deps)
        return data

    def _save_overload(self, sig, data):
        if not self._enabled or not self._impl.check_cachable(data):
            return
        try:
            deps = _dependencies(data)
        except Exception:  # (never fail a compile for its record: just do not cache it)
            return
        own = _engine_file(self._py_func.__code__.co_filename)
        if own is not None:
            deps.add(own)
        self._remember(deps)
        key = self._index_key(sig, data.codegen)
        with self._locked():
            super()._save_overload(sig, data)
            rec = self._read()
            rec[_key_name(key)] = {str(f.relative_to(ENGINE.parent)): file_digest(f)
                                   for f in sorted(deps)}
            tmp = self._deps_path.with_name(f"{self._deps_path.name}.{os.getpid()}.tmp")
            try:
                tmp.write_text(json.dumps(rec, indent=0, sort_keys=True))
                os.replace(tmp, self._deps_path)
            except OSError:
                tmp.unlink(missing_ok=True)

    def _remember(self, deps) -> None:
        for disp_id in _DISPATCHERS.get(self._owner, ()):
            _KERNEL_DEPS.setdefault(disp_id, set()).update(deps)


_DISPATCHERS: dict[int, list[int]] = {}
"""``id(py_func)`` → ``id`` of its dispatchers (the cache knows its function only)."""


def _enable_caching(self) -> None:
    if _engine_file(getattr(self.py_func.__code__, "co_filename", None)) is None:
        self._cache = caching.FunctionCache(self.py_func)
        return
    _DISPATCHERS.setdefault(id(self.py_func), []).append(id(self))
    self._cache = DependencyCache(self.py_func, self)


def install() -> None:
    """Give the dispatchers of engine functions a :class:`DependencyCache` (the others
    keep Numba's)."""
    Dispatcher.enable_caching = _enable_caching
