"""The engine's kernels run uncompiled, to the bits of the compiled ones (issue #45).

A cold start compiles the stepping loop of the run's scheme for its model's family:
tens of CPU seconds (BENCHMARKS.md, "Start-up and compile").  A small model needs far
less than that to *move*: its kernels' own Python source, run by the interpreter, takes
tens of µs to a few ms a step.  :func:`interpreted` gives, for any engine kernel (a Numba
dispatcher), its *twin*: the same source, run by Python, calling the twins of the
kernels it calls, so nothing of its call tree is compiled.

The twin gives the same bits as the compiled kernel because both do the same IEEE
double operations in the same order: Numba compiles the kernels without ``fastmath``
(LLVM then neither reorders nor contracts ``a*b + c`` into an FMA), the math functions
(``math.sin``, ``math.sqrt``, …) are the same C library's in both, and the two places
where Python and Numba differ are rewritten in the twin's source:

* ``x ** n`` for a constant integer ``n``: Numba multiplies (``static_power_impl``:
  ``r = x``, ``r·x²``, … by the binary digits of ``n``), Python calls ``pow``, which
  differs from ``x*x`` in the last bit about once in a thousand; the twin multiplies as
  Numba does (:func:`static_power`), and ``x ** 2.0`` is ``x*x`` (LLVM's rewrite of
  ``pow(x, 2.0)``);
* what Numba resolves while typing (``engine.specialize.gated``, ``unless``,
  ``family_holds``, ``binder_k``, ``prange``; any other ``@overload``): resolved by the
  same rule in Python, at the call (:data:`engine.PYTHON_TWINS`, else the
  overload's own implementation for the argument types).

What the twin cannot do as the compiled code does — a Python exception where
``error_model="numpy"`` gives ``inf`` or ``nan``, an index out of bounds — raises; the
caller then discards what the twin did (the driver steps from a copy of its state:
``engine.simulation.kernel_swap``) and waits for the compiled kernel.  Whether the bits
agree is tested over whole runs, not argued: ``tests/test_interpreted.py``.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import textwrap
import threading
import time
import types as pytypes
from pathlib import Path

import numba
import numpy as np
from numba.core.dispatcher import Dispatcher

from . import specialize
from .layout import N_TERMS

_TWINS: dict[int, tuple] = {}
"""``id`` of a function or dispatcher → ``(it, its twin)`` (kept alive: an id is not
reused while its entry stands)."""
_GLOBALS: dict[str, dict] = {}
_LOCK = threading.RLock()


def _py_gated(ff, slot, absent, fn, *args):
    return fn(*args) if ff[-1][slot] is not None else absent


def _py_unless(ff, slot, absent, fn, *args):
    return absent if ff[-1][slot] is not None else fn(*args)


def _py_family_holds(ff):
    marker = ff[-1]
    flags = ff[3]
    return not any(marker[k] is None and flags[k] for k in range(N_TERMS))


def _py_binder_k(ff, k_global):
    return ff[specialize.BOND_K] if ff[-1][specialize.BOND_TYPES] is not None else k_global


PYTHON_TWINS = {specialize.gated: _py_gated, specialize.unless: _py_unless,
                specialize.family_holds: _py_family_holds, specialize.binder_k: _py_binder_k}
"""What ``engine.specialize`` resolves while typing, in the twins: the same choice,
made in Python from the family slot of ``ff`` (``None``: the term is absent).  (Here,
not beside them: an edit of ``engine/specialize.py`` recompiles every kernel.)"""


def static_power(a, n: int):
    """``a ** n`` for a constant integer ``n`` as Numba computes it (``numba.cpython.
    numbers.static_power_impl``): products by the binary digits of ``n``, then ``1/r``
    for a negative ``n``."""
    invert = n < 0
    e = -n if invert else n
    r = None
    v = a
    while e:
        if e & 1:
            r = v if r is None else r * v
        e >>= 1
        if e:
            v = v * v
    if r is None:
        r = type(a)(1) if not isinstance(a, bool) else 1
    return 1.0 / r if invert else r


class _Pow(ast.NodeTransformer):
    """``x ** <int constant>`` → ``__static_power__(x, n)``; ``x ** 2.0`` → ``x * x``
    (see the module docstring)."""

    def visit_BinOp(self, node):  # noqa: N802 (ast's name)
        self.generic_visit(node)
        if not isinstance(node.op, ast.Pow):
            return node
        n = _constant(node.right)
        if isinstance(n, bool) or n is None:
            return node
        if isinstance(n, int):
            return ast.copy_location(ast.Call(
                func=ast.Name("__static_power__", ast.Load()),
                args=[node.left, ast.Constant(n)], keywords=[]), node)
        if n == 2.0:
            return ast.copy_location(ast.Call(
                func=ast.Name("__static_power__", ast.Load()),
                args=[node.left, ast.Constant(2)], keywords=[]), node)
        return node


def _constant(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return node.value
    if (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
            and isinstance(node.operand, ast.Constant)
            and isinstance(node.operand.value, int | float)):
        return -node.operand.value
    return None


def _overload_twin(fn):
    """A Python stand-in for a function Numba resolves while typing (an ``@overload``
    stub): the implementation its overload returns for the argument types, itself
    made a twin; ``None`` if ``fn`` is no such stub."""
    from numba.core.registry import cpu_target

    try:
        fnty = cpu_target.typing_context.resolve_value_type(fn)
    except Exception:
        return None
    templates = [t for t in getattr(fnty, "templates", ())
                 if getattr(t, "_overload_func", None) is not None]
    if not templates:
        return None
    chooser = templates[0]._overload_func
    impls: dict = {}

    def call(*args):
        key = tuple(numba.typeof(a) for a in args)
        impl = impls.get(key)
        if impl is None:
            impl = _twin_of_function(chooser(*key))
            impls[key] = impl
        return impl(*args)

    call.__name__ = getattr(fn, "__name__", "overload")
    return call


class _Lazy:
    """A global of a twin's module that is made on its first call (a dispatcher's twin,
    an overload's stand-in), then put in the twin's globals in its place: making the
    twins of everything a module can reach would parse hundreds of functions a run
    never calls."""

    __slots__ = ("_g", "_name", "_value", "_made")

    def __init__(self, g: dict, name: str, value) -> None:
        self._g, self._name, self._value, self._made = g, name, value, None

    def __call__(self, *args):
        if self._made is None:
            self._made = _substitute(self._value) or self._value
            if self._g.get(self._name) is self:
                self._g[self._name] = self._made
        return self._made(*args)


def _overload_stub(value) -> bool:
    """Whether ``value`` is a Python stub that Numba resolves inside jitted kernels (an
    ``@overload`` whose body raises ``NotImplementedError``: ``engine.specialize``)."""
    return (isinstance(value, pytypes.FunctionType)
            and "NotImplementedError" in value.__code__.co_names)


def _deferred(value) -> bool:
    """Whether a global is made lazily (:class:`_Lazy`) in the twin's globals."""
    return isinstance(value, Dispatcher) or _overload_stub(value)


def _python_twin(value):
    """The registered Python twin of ``value`` (:data:`PYTHON_TWINS`), or ``None``."""
    try:
        return PYTHON_TWINS.get(value)
    except TypeError:  # (unhashable)
        return None


def _substitute(value):
    """What a global (or free variable) of a kernel is in its twin (``None``: itself)."""
    if isinstance(value, Dispatcher):
        return interpreted(value)
    if value is numba.prange:
        return range
    hit = _python_twin(value)
    if hit is not None:
        return hit
    if _overload_stub(value):
        return _overload_twin(value)
    return None


def _global(g: dict, name: str, value):
    hit = _python_twin(value)
    if hit is not None:
        return hit
    if _deferred(value):
        return _Lazy(g, name, value)
    made = _substitute(value)
    return value if made is None else made


def _module_globals(fn) -> dict:
    """The twin's globals of ``fn``'s module (one dict a module, filled once)."""
    name = fn.__module__
    g = _GLOBALS.get(name)
    if g is None:
        g = {}
        _GLOBALS[name] = g
        g.update({k: _global(g, k, v) for k, v in fn.__globals__.items()})
        g["__static_power__"] = static_power
    return g


def _twin_of_function(fn):
    """The twin of a plain Python function (a kernel's ``py_func``, an overload's
    implementation): its source with :class:`_Pow`'s rewrite, in its module's twin
    globals, its free variables bound to their twins."""
    hit = _TWINS.get(id(fn))
    if hit is not None:
        return hit[1]
    src = textwrap.dedent(inspect.getsource(fn))
    tree = ast.parse(src)
    fdef = tree.body[0]
    fdef.decorator_list = []
    # (defaults and annotations are the function's own, set below: evaluated here they
    # could name a global not yet in the twin's globals, filled as the twins are made)
    fdef.args.defaults = []
    fdef.args.kw_defaults = [None] * len(fdef.args.kwonlyargs)
    fdef.returns = None
    for a in (*fdef.args.posonlyargs, *fdef.args.args, *fdef.args.kwonlyargs):
        a.annotation = None
    _Pow().visit(fdef)
    free = fn.__code__.co_freevars
    maker = ast.FunctionDef(
        name="__make_twin__",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(a) for a in free], vararg=None,
                           kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
        body=[fdef, ast.Return(ast.Name(fdef.name, ast.Load()))], decorator_list=[],
        returns=None, type_params=[])
    module = ast.Module(body=[maker], type_ignores=[])
    ast.fix_missing_locations(module)
    first = fn.__code__.co_firstlineno
    ast.increment_lineno(module, first - 1)
    code = compile(module, fn.__code__.co_filename, "exec")
    g = _module_globals(fn)
    ns: dict = {}
    exec(code, g, ns)  # noqa: S102 (the engine's own source, rewritten)
    cells = [c.cell_contents for c in (fn.__closure__ or ())]
    made = [_substitute(c) for c in cells]
    twin = ns["__make_twin__"](*[c if m is None else m for c, m in zip(cells, made,
                                                                        strict=True)])
    twin.__defaults__ = fn.__defaults__
    twin.__kwdefaults__ = fn.__kwdefaults__
    twin.__qualname__ = fn.__qualname__
    twin.__rrp_interpreted__ = True
    _TWINS[id(fn)] = (fn, twin)
    return twin


def interpreted(kernel):
    """The uncompiled twin of the engine kernel ``kernel`` (a Numba dispatcher; see the
    module docstring): callable with the same arguments, giving the same results to the
    bit, compiling nothing."""
    if not isinstance(kernel, Dispatcher):
        raise TypeError(f"{kernel!r} is not a compiled kernel")
    with _LOCK:
        hit = _TWINS.get(id(kernel))
        if hit is None:
            hit = (kernel, _twin_of_function(kernel.py_func))
            _TWINS[id(kernel)] = hit
        return hit[1]


# ---------------------------------------------------------------------------------------
# While cold: a kernel called from Python that is neither compiled in this process nor in
# the disk cache runs as its twin instead of compiling (a background process builds it).

INTERPRETED_MAX_ELEMENTS = 200_000
"""A call whose array arguments hold more elements than this compiles as usual: the
twin's speed (≈ 50–500× below the compiled kernel's) is for small models, and its
arguments are copied first (a twin that raises leaves them as they were)."""
PROBE_INTERVAL = 0.5
"""Seconds between two looks in the disk cache for a kernel it lacked (a background
process is filling it; typing the arguments of a look takes milliseconds)."""

_ENGINE = Path(__file__).resolve().parent
_STATE = threading.local()
_MISSED: dict[int, float] = {}
"""When the cache last lacked a kernel (``id`` of its dispatcher)."""
_ORIGINAL = Dispatcher._compile_for_args
USED: dict[str, int] = {}
"""Calls answered by a twin, per kernel name (this process; for reports and tests)."""


def twin_calls() -> int:
    """How many calls this thread's :func:`interpret_while_cold` answered by a twin."""
    return getattr(_STATE, "calls", 0)


def _active() -> bool:
    return getattr(_STATE, "depth", 0) > 0


@contextlib.contextmanager
def interpret_while_cold():
    """Within this block, on this thread, a kernel that would compile runs as its
    uncompiled twin instead (:func:`interpreted`), until the compiled kernel is in the
    disk cache (looked for every :data:`PROBE_INTERVAL` s); then it is loaded and runs
    compiled from its next call.  Twin and kernel give the same bits, so nothing of the
    answer depends on when the swap happens (issue #45)."""
    _STATE.depth = getattr(_STATE, "depth", 0) + 1
    try:
        yield
    finally:
        _STATE.depth -= 1


def _arrays(obj, out: dict) -> int:
    """Collect the arrays in ``obj`` (nested tuples) by id; their number of elements."""
    if isinstance(obj, np.ndarray):
        if id(obj) not in out:
            out[id(obj)] = obj
            return obj.size
        return 0
    if isinstance(obj, tuple):
        return sum(_arrays(o, out) for o in obj)
    return 0


def _cached(dispatcher, args) -> bool:
    """Whether ``dispatcher`` has machine code for ``args`` in the disk cache (then it
    is loaded); after a miss, looked for again :data:`PROBE_INTERVAL` s later."""
    now = time.monotonic()  # (before the types: typing a force field takes ms)
    if now - _MISSED.get(id(dispatcher), -1e9) < PROBE_INTERVAL:
        return False
    sig = tuple(dispatcher.typeof_pyval(a) for a in args)
    cache = getattr(dispatcher, "_cache", None)
    try:
        cres = cache.load_overload(sig, dispatcher.targetctx) if cache is not None else None
    except Exception:
        _MISSED[id(dispatcher)] = now
        return False
    if cres is None:
        _MISSED[id(dispatcher)] = now
        return False
    dispatcher.add_overload(cres)
    return True


def _compile_for_args(self, *args, **kws):
    """Numba's ``Dispatcher._compile_for_args`` (called from Python when no machine code
    fits the arguments), or, within :func:`interpret_while_cold`, the twin while the
    cache lacks it.  Numba's dispatcher calls what this returns with the arguments."""
    if not _active() or kws or not _engine_kernel(self) or _cached(self, args):
        return _ORIGINAL(self, *args, **kws)
    arrays: dict = {}
    if sum(_arrays(a, arrays) for a in args) > INTERPRETED_MAX_ELEMENTS:
        return _ORIGINAL(self, *args, **kws)
    twin = interpreted(self)
    name = self.py_func.__name__

    def run(*call_args):
        saved = [(a, a.copy()) for a in arrays.values()]
        try:
            with np.errstate(all="ignore"):
                out = twin(*call_args)
        except Exception:  # (what only the compiled kernel does: the module docstring)
            for a, c in saved:
                a[...] = c
            return _ORIGINAL(self, *call_args)(*call_args)
        USED[name] = USED.get(name, 0) + 1
        _STATE.calls = twin_calls() + 1
        return out

    return run


def _engine_kernel(dispatcher) -> bool:
    f = getattr(dispatcher.py_func.__code__, "co_filename", "")
    try:
        return _ENGINE in Path(f).resolve().parents
    except (OSError, ValueError):
        return False


def install() -> None:
    """Let :func:`interpret_while_cold` answer the calls that would compile."""
    Dispatcher._compile_for_args = _compile_for_args
