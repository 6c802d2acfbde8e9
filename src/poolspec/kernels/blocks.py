"""Cache blocking for CPU backends that write in place (NumPy, torch on the CPU).

Every op here acts on each (batch, channel) plane alone, so a large call can be computed a few planes at a
time into one preallocated output. A whole-array pass streams each intermediate through main memory, and
past glibc's mmap threshold (32 MiB) every fresh intermediate also pays a page fault per 4 KiB on every
call; blocks of a few MiB stay in the caches and reuse freed heap. The values are those of the whole-array
pass bit for bit (every kernel is elementwise across planes).

GPUs want one large launch, and JAX and Dask schedule their own work, so they always take a single call.
"""

from __future__ import annotations

import math
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from .._compat import buffer
from . import paths

# bytes of the largest array one block may produce (a quarter of a 32 MiB L3)
BLOCK_BYTES = 1 << 23
# below this many bytes per call the whole-array pass wins: its intermediates stay under the mmap threshold
# and in L3, while blocks would add a copy of the output and an op call per block
WHOLE_BYTES = 1 << 26
# entries of an index table beyond the per-axis plans (one per (output, window cell) or per (input cell, covering
# window)) that a kernel may build for one plane; larger ones take a route whose memory is O(input + output)
TABLE_CELLS = 1 << 18
# entries of a table that depends on a call's shape (a divisor, a window's cell offsets, a device copy of a
# plan) up to which it is kept with its cached plan between calls; larger ones are made per call, so that the
# plans of many shapes do not keep output-sized arrays alive
CACHE_CELLS = 1 << 16
# larger tables are kept in one cache shared by all plans, least recently used first out, within this many
# bytes in all (a table above a quarter of it is not kept): repeated calls of one shape reuse their tables,
# many shapes cannot pile them up
LARGE_CACHE_BYTES = 1 << 25
# cells up to which a call's cost is its Python and dispatch, not its arithmetic (measured): kernels then
# take the path with the fewest ops
SMALL = 4096


Rows = tuple[Callable[[Any, Any, int], bool], tuple[int, ...]]

_BLOCKS = paths.writes(
    "blocks.cache-blocks", "a call past WHOLE_BYTES on NumPy or torch CPU computed a few planes (or a band of rows) "
    "at a time into one preallocated output", cpu=True)

# the intermediates one call may hold at once: this many times the bytes of the arrays it is handed, or
# MEMORY_FLOOR where that is less (the bound of poolspec.memory is 8x the arrays plus 32 MiB)
MEMORY_FACTOR = 4
MEMORY_FLOOR = 1 << 24


def nbytes(a: Any) -> int:
    """Bytes of an array of any namespace (array-api-strict's have no ``nbytes``); 0 where the shape is
    symbolic or unknown."""
    n = getattr(a, "nbytes", None)
    if isinstance(n, int):
        return n
    try:
        size = math.prod(int(d) for d in a.shape)
    except (TypeError, ValueError):
        return 0
    bits = "".join(c for c in str(a.dtype).rsplit(".", 1)[-1] if c.isdigit())
    return size * (int(bits) // 8 if bits else 1)


def allowance(arrays: tuple[Any, ...]) -> int:
    """Bytes of intermediates a call on ``arrays`` may hold at once."""
    return max(MEMORY_FLOOR, MEMORY_FACTOR * sum(nbytes(a) for a in arrays))


def splits(x: Any) -> bool:
    """Whether :func:`blocked` (with ``tables=True``) computes a call on ``x`` in blocks where its
    intermediates would pass the allowance (NumPy and torch on the CPU); elsewhere a kernel must choose a
    route that fits whole."""
    return _BLOCKS(x) is not None


def fits(arrays: tuple[Any, ...], table_entries: int, plane_entries: int) -> bool:
    """Whether a kernel whose index tables and gathers hold ``plane_entries`` (an int64 and a value each) per
    (batch, channel) plane may run: at most ``TABLE_CELLS`` per plane, and, where the call is not split into
    blocks, ``table_entries`` in all within the call's allowance."""
    return plane_entries <= TABLE_CELLS and (splits(arrays[0]) or 16 * table_entries <= allowance(arrays))


def blocked(fn: Callable[..., Any], arrays: tuple[Any, ...], spatial: int, plane_cells: int,
            rows: Rows | None = None, cell_bytes: int = 4, tables: bool = False) -> Any:
    """``fn(*arrays)`` (an array or a tuple of arrays) computed over blocks of the arrays' shared leading
    axes (all but the last ``spatial``). ``plane_cells`` is the size of the largest array one plane passes
    through, in cells of x's itemsize or ``cell_bytes`` if larger (half precision computes in float32,
    indices are int64). Where one plane alone exceeds the budget, ``rows = (fill, out_spatial)``, if
    given, fills one plane's output in bands of rows: ``fill(x, out, budget)`` returns False where it
    cannot. ``tables``: ``plane_cells`` counts index tables and gathers many times the plane's size, which
    are computed in blocks as soon as they would pass the call's :func:`allowance`."""
    x = arrays[0]
    mod = _BLOCKS(x)
    n_lead = x.ndim - spatial
    lead = tuple(x.shape[:n_lead])
    if mod is None or not lead:
        return fn(*arrays)
    plane_bytes = plane_cells * max(x.dtype.itemsize, cell_bytes)
    if (0 in x.shape
            or math.prod(lead) * plane_bytes <= min(max(WHOLE_BYTES, 2 * BLOCK_BYTES),
                                                    allowance(arrays) if tables else 1 << 62)
            or any(_BLOCKS(a) is not mod for a in arrays[1:])):
        return fn(*arrays)
    if rows is not None and plane_bytes > 2 * BLOCK_BYTES:
        fill, out_spatial = rows
        out = buffer(mod, lead + tuple(out_spatial), x.dtype, x)
        for at in np.ndindex(*lead):
            at = tuple(slice(i, i + 1) for i in at)
            if not fill(x[at], out[at], BLOCK_BYTES):
                return fn(*arrays)
        return out
    # split at the outermost leading axis one index of which fits; as many of its indices per block as fit
    inner = [math.prod(lead[j + 1:]) * plane_bytes for j in range(len(lead))]
    j = next((j for j in range(len(lead)) if inner[j] <= BLOCK_BYTES), len(lead) - 1)
    step = max(1, BLOCK_BYTES // inner[j])
    outs = None
    for outer in np.ndindex(*lead[:j]):
        for start in range(0, lead[j], step):
            at = tuple(slice(i, i + 1) for i in outer) + (slice(start, min(start + step, lead[j])),)
            ys = fn(*(a[at] for a in arrays))
            single = not isinstance(ys, tuple)
            ys = (ys,) if single else ys
            if outs is None:
                outs = tuple(buffer(mod, lead + tuple(y.shape[n_lead:]), y.dtype, x) for y in ys)
            for o, y in zip(outs, ys):
                o[at] = y
    assert outs is not None  # lead is not empty: at least one block ran
    return outs[0] if single else outs


_LARGE: OrderedDict[tuple[int, str], tuple[Any, int]] = OrderedDict()
_LARGE_BYTES = [0]
_LOCK = threading.Lock()


def _bytes_of(value: Any) -> int:
    if isinstance(value, (tuple, list)):
        return sum(_bytes_of(v) for v in value)
    return nbytes(value) if hasattr(value, "shape") else 0


def _drop(key: tuple[int, str]) -> None:
    with _LOCK:
        entry = _LARGE.pop(key, None)
        if entry is not None:
            _LARGE_BYTES[0] -= entry[1]


def kept(owner: Any, name: str, entries: int, make: Callable[[], Any]) -> Any:
    """``make()`` (a table of ``entries`` entries that depends only on ``owner``, a plan cached per shape),
    made once and kept: on ``owner`` while it has at most ``CACHE_CELLS`` entries, else in one cache shared
    by all plans and bounded by ``LARGE_CACHE_BYTES``, so that plans of many shapes cannot keep
    output-sized tables alive between calls."""
    if entries <= CACHE_CELLS:
        got = owner.__dict__.get(name)
        if got is None:
            got = owner.__dict__[name] = make()
        return got
    key = (id(owner), name)
    with _LOCK:
        entry = _LARGE.get(key)
        if entry is not None:
            _LARGE.move_to_end(key)
            return entry[0]
    value = make()
    size = _bytes_of(value)
    if size > LARGE_CACHE_BYTES // 4:
        return value
    with _LOCK:
        if key not in _LARGE:
            if not any(k[0] == key[0] for k in _LARGE):  # the owner's first large table: forget them with it
                weakref.finalize(owner, _forget, key[0])
            _LARGE[key] = (value, size)
            _LARGE_BYTES[0] += size
        while _LARGE_BYTES[0] > LARGE_CACHE_BYTES and _LARGE:
            _, (_, old) = _LARGE.popitem(last=False)
            _LARGE_BYTES[0] -= old
    return value


def _forget(owner_id: int) -> None:
    for key in [k for k in list(_LARGE) if k[0] == owner_id]:
        _drop(key)
