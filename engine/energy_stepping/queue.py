"""An indexed binary min-heap of predicted crossing times (the event queue of the
many-body energy-stepping loop, docs/physics.md §3.10).

``heap[0:size]`` holds term indices ordered by ``(key[k], k)`` (ties broken by the index:
the event order is deterministic); ``pos[k]`` is the place of term ``k`` in the heap
(``-1``: not queued, e.g. a term with no crossing ahead).  Every operation is
``O(log size)``.
"""

from __future__ import annotations

import math

from numba import njit


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False, inline="always")
def _less(key, a, b):
    ka = key[a]
    kb = key[b]
    return ka < kb or (ka == kb and a < b)


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False, inline="always")
def _put(heap, pos, k, p):
    """Term ``k`` at place ``p`` of the heap (both arrays kept in step)."""
    heap[p] = k
    pos[k] = p


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def _up(heap, pos, key, p):
    k = heap[p]
    while p > 0:
        parent = (p - 1) >> 1
        o = heap[parent]
        if not _less(key, k, o):
            break
        _put(heap, pos, o, p)
        p = parent
    _put(heap, pos, k, p)


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def _down(heap, pos, key, p, size):
    k = heap[p]
    while True:
        c = 2 * p + 1
        if c >= size:
            break
        if c + 1 < size and _less(key, heap[c + 1], heap[c]):
            c += 1
        o = heap[c]
        if not _less(key, o, k):
            break
        _put(heap, pos, o, p)
        p = c
    _put(heap, pos, k, p)


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def heap_set(heap, pos, key, size, k, t):
    """Give term ``k`` the time ``t`` (``inf``: take it out); returns the new size."""
    p = pos[k]
    key[k] = t
    if p < 0:
        if t == math.inf:
            return size
        heap[size] = k
        pos[k] = size
        _up(heap, pos, key, size)
        return size + 1
    if t == math.inf:  # remove: the last element takes its place
        size -= 1
        last = heap[size]
        pos[k] = -1
        if last != k:
            heap[p] = last
            pos[last] = p
            _up(heap, pos, key, p)
            _down(heap, pos, key, pos[last], size)
        return size
    _up(heap, pos, key, p)
    _down(heap, pos, key, pos[k], size)
    return size


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def heap_clear(heap, pos, size):
    """Empty the heap (``pos`` of its members back to ``-1``)."""
    for p in range(size):
        pos[heap[p]] = -1
    return 0
