"""The argument types and parser class of the ``rrp`` command line (:mod:`app.cli` and
its sub-command modules): one-line errors (exit code 2), ranges checked without
compiling anything (issue #34 item 3: split out of ``app/cli/__init__``)."""

from __future__ import annotations

import argparse
import math
import re
from typing import Any

from ..errors import UsageError

__all__ = ["_Parser", "_any_float", "_integer", "_positive_float", "_positive_int", "threads_arg"]


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors, and an option's value that looks like a negative
    number (``--t0 -1e300``, ``--size -5x5``, ``--h -.5``) taken as its value, to be
    refused by the option's own check, rather than argparse's "expected one argument"
    (Python 3.11 reads only ``-5`` and ``-0.5`` so; no option of ours starts with a
    digit)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(r"^-\.?\d")

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message} (see '{self.prog} --help')")


def _positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(v) or v <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return v


def _int_from_1(text: str, top: int, why: str) -> int:
    """``text`` as an integer from 1 to ``top`` (``why``: the range's reason, in the
    error)."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if not 1 <= v <= top:
        raise argparse.ArgumentTypeError(f"must be {why}, got {text[:40]}")
    return v


def _integer(text: str) -> int:
    """An integer (its range is the option's own check, one message for every value)."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text[:40]!r}") from None


def _positive_int(text: str) -> int:
    from engine.run_steps import MAX_STEPS

    return _int_from_1(text, MAX_STEPS, f"an integer from 1 to {MAX_STEPS:.0e} (no run takes "
                       "more steps)")


def threads_arg(text: str) -> int:
    """``--threads N``: 1 ≤ N ≤ NUMBA_NUM_THREADS (checked without compiling anything)."""
    from engine.parallel import max_threads

    top = max_threads()
    return _int_from_1(text, top, f"from 1 to {top} (the cores Numba may use, "
                       "NUMBA_NUM_THREADS)")


def _any_float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
