"""The scipy.ndimage front-end against SciPy itself on NumPy (and, on JAX, map_coordinates under ``jax.jit``
against ``jax.scipy.ndimage.map_coordinates``).

    python benchmarks/scipy_ndimage.py [--repeat 5] [--threads 1] [--json FILE] [--small] [--only PART]
    python benchmarks/scipy_ndimage.py --backend cupy      (on a GPU: the same calls on CuPy, cupyx the peer)

The calls (float64, the same arrays for both): the window filters (uniform, maximum, minimum) on 1000 x 1000 with
sizes 3 and 31; spline_filter on 2048 x 2048, orders 2-5; map_coordinates on a 256 x 256 image at 65,536 and
1,000,000 random points (in and a little out of range), orders 0, 1, 3, 5, mode 'constant', prefilter on; where
``poolspec.frontends.scipy.ndimage._geometry`` imports, zoom (2048^2 x 0.37, orders 0, 1, 3, 5), shift (2048^2,
orders 1 and 3) and rotate (512^2, 30 degrees, order 3). Times are interleaved medians (SciPy, poolspec, SciPy, ...)
after one warm call each; ratio = poolspec / SciPy. The thread count goes to OpenMP/OpenBLAS/MKL before NumPy
loads (one thread: SciPy's ndimage is single-threaded; XLA keeps its own pool: run under ``taskset -c 1`` for one
core). The JAX rows (64-bit mode on) compare jitted programs, orders 0 and 1, every mode the two share. ``--only
counts``: the array operations per call on torch (forward, forward + backward; the paths a GPU takes). ``--small``:
every shape shrunk (checks the script).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _threads(argv: list[str]) -> str:
    for i, a in enumerate(argv):
        if a == "--threads" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--threads="):
            return a.split("=", 1)[1]
    return "1"


for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = _threads(sys.argv)

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from poolspec.frontends.scipy import ndimage as ours  # noqa: E402
from poolspec.frontends.scipy.ndimage import _splines  # noqa: E402


def _median_pair(peer: Callable[[], Any], mine: Callable[[], Any], repeat: int) -> tuple[float, float]:
    peer(), mine()  # warm: plans built, caches filled, programs compiled
    times: dict[str, list[float]] = {"peer": [], "mine": []}
    for _ in range(repeat):
        for tag, fn in (("peer", peer), ("mine", mine)):
            t = time.perf_counter()
            fn()
            times[tag].append(time.perf_counter() - t)
    return statistics.median(times["peer"]), statistics.median(times["mine"])


def _row(group: str, case: str, peer: Callable[[], Any], mine: Callable[[], Any], repeat: int,
         peer_name: str = "scipy.ndimage") -> dict[str, Any]:
    want, got = np.asarray(peer()), np.asarray(mine())
    scale = max(1.0, float(np.nanmax(np.abs(want))))
    diff = float(np.nanmax(np.abs(want - got))) / scale
    p, m = _median_pair(peer, mine, repeat)
    row = dict(group=group, case=case, peer=peer_name, peer_ms=p * 1e3, poolspec_ms=m * 1e3, ratio=m / p,
               max_rel_diff=diff)
    print(f"| {group} | {case} | {row['peer_ms']:.2f} | {row['poolspec_ms']:.2f} | {row['ratio']:.2f} | "
          f"{diff:.1e} |", flush=True)
    return row


def filter_rows(rng: np.random.Generator, small: bool, repeat: int) -> list[dict[str, Any]]:
    import scipy.ndimage as ndi

    n = 200 if small else 1000
    x = rng.standard_normal((n, n))
    rows = []
    for name in ("uniform_filter", "maximum_filter", "minimum_filter"):
        for size in (3, 31):
            rows.append(_row("filters", f"{name} {n}^2 size {size}", lambda f=name, s=size: getattr(ndi, f)(x, s),
                             lambda f=name, s=size: getattr(ours, f)(x, s), repeat))
    return rows


def spline_rows(rng: np.random.Generator, small: bool, repeat: int) -> list[dict[str, Any]]:
    import scipy.ndimage as ndi

    n = 300 if small else 2048
    x = rng.standard_normal((n, n))
    return [_row("spline_filter", f"{n}^2 order {o}", lambda o=o: ndi.spline_filter(x, o),
                 lambda o=o: _splines.spline_filter(x, o), max(3, repeat // 2)) for o in (2, 3, 4, 5)]


def map_rows(rng: np.random.Generator, small: bool, repeat: int) -> list[dict[str, Any]]:
    import scipy.ndimage as ndi

    n = 256
    x = rng.standard_normal((n, n))
    rows = []
    for points in ((4096, 20000) if small else (65536, 1_000_000)):
        c = rng.uniform(-4, n + 3, (2, points))
        for o in (0, 1, 3, 5):
            rows.append(_row("map_coordinates", f"{n}^2, {points:,} points, order {o}",
                             lambda o=o, c=c: ndi.map_coordinates(x, c, order=o),
                             lambda o=o, c=c: _splines.map_coordinates(x, c, order=o), repeat))
    return rows


def geometry_rows(rng: np.random.Generator, small: bool, repeat: int) -> list[dict[str, Any]]:
    try:
        from poolspec.frontends.scipy.ndimage import _geometry  # type: ignore[attr-defined]
    except ImportError as e:
        print(f"geometry rows skipped: {e}", file=sys.stderr)
        return []
    import scipy.ndimage as ndi

    n, m = (300, 128) if small else (2048, 512)
    x, y = rng.standard_normal((n, n)), rng.standard_normal((m, m))
    rows = []
    for o in (0, 1, 3, 5):
        rows.append(_row("geometry", f"zoom {n}^2 x0.37 order {o}", lambda o=o: ndi.zoom(x, 0.37, order=o),
                         lambda o=o: _geometry.zoom(x, 0.37, order=o), max(3, repeat // 2)))
    rows.append(_row("geometry", f"shift {n}^2 (3.3, -7.6) order 1", lambda: ndi.shift(x, (3.3, -7.6), order=1),
                     lambda: _geometry.shift(x, (3.3, -7.6), order=1), max(3, repeat // 2)))
    rows.append(_row("geometry", f"shift {n}^2 (3.3, -7.6) order 3", lambda: ndi.shift(x, (3.3, -7.6), order=3),
                     lambda: _geometry.shift(x, (3.3, -7.6), order=3), max(3, repeat // 2)))
    rows.append(_row("geometry", f"rotate {m}^2 30 deg order 3", lambda: ndi.rotate(y, 30.0, order=3),
                     lambda: _geometry.rotate(y, 30.0, order=3), repeat))
    return rows


def jax_rows(rng: np.random.Generator, small: bool, repeat: int) -> list[dict[str, Any]]:
    try:
        import jax
    except ImportError as e:
        print(f"JAX rows skipped: {e}", file=sys.stderr)
        return []
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    from jax.scipy import ndimage as jndi

    n = 256
    x = jnp.asarray(rng.standard_normal((n, n)))
    rows = []
    for points in ((4096,) if small else (65536, 1_000_000)):
        c = jnp.asarray(rng.uniform(-4, n + 3, (2, points)))
        for o in (0, 1):
            # the same rule under each library's name (JAX's 'constant' and 'wrap' are SciPy's 'grid-constant' and
            # 'grid-wrap'; SciPy's own 'constant' and 'wrap' have no JAX counterpart)
            for mode, theirs in (("grid-constant", "constant"), ("nearest", "nearest"), ("mirror", "mirror"),
                                 ("reflect", "reflect"), ("grid-wrap", "wrap")):
                peer = jax.jit(lambda x, c, o=o, m=theirs: jndi.map_coordinates(x, c, order=o, mode=m))
                mine = jax.jit(lambda x, c, o=o, m=mode: _splines.map_coordinates(x, c, order=o, mode=m))
                rows.append(_row("jax jit", f"map_coordinates {n}^2, {points:,} points, order {o}, ours {mode} "
                                            f"vs {theirs}",
                                 lambda p=peer, c=c: jax.block_until_ready(p(x, c)),
                                 lambda f=mine, c=c: jax.block_until_ready(f(x, c)), repeat,
                                 "jax.scipy.ndimage.map_coordinates"))
    return rows


def cupy_rows(rng: np.random.Generator, small: bool, repeat: int) -> list[dict[str, Any]]:
    """The calls on CuPy arrays against cupyx.scipy.ndimage (the same names and arguments), synchronised."""
    import cupy
    from cupyx.scipy import ndimage as cndi

    def synced(fn: Callable[[], Any]) -> Callable[[], Any]:
        def run() -> Any:
            out = fn()
            cupy.cuda.get_current_stream().synchronize()
            return out
        return run

    n, m = (256, 128) if small else (2048, 512)
    x, y = cupy.asarray(rng.standard_normal((n, n))), cupy.asarray(rng.standard_normal((m, m)))
    c = cupy.asarray(rng.uniform(-4, m + 3, (2, 1_000_000 if not small else 20000)))
    calls: list[tuple[str, str, tuple[Any, ...], dict[str, Any]]] = [
        ("uniform_filter", f"{n}^2 size 31", (x, 31), {}),
        ("maximum_filter", f"{n}^2 size 31", (x, 31), {}),
        ("spline_filter", f"{n}^2 order 3", (x, 3), {}),
        ("map_coordinates", f"{m}^2, {c.shape[1]:,} points, order 1", (y, c), {"order": 1}),
        ("map_coordinates", f"{m}^2, {c.shape[1]:,} points, order 3", (y, c), {"order": 3}),
        ("zoom", f"{n}^2 x0.37 order 3", (x, 0.37), {"order": 3}),
        ("shift", f"{n}^2 (3.3, -7.6) order 3", (x, (3.3, -7.6)), {"order": 3}),
        ("rotate", f"{m}^2 30 deg order 3", (y, 30.0), {"order": 3}),
    ]
    rows = []
    for name, case, args, kw in calls:
        peer = synced(lambda f=name, a=args, k=kw: getattr(cndi, f)(*a, **k))
        mine = synced(lambda f=name, a=args, k=kw: getattr(ours, f)(*a, **k))
        rows.append(_row("cupy", f"{name} {case}", lambda p=peer: cupy.asnumpy(p()), lambda q=mine: cupy.asnumpy(q()),
                         repeat, "cupyx.scipy.ndimage"))
    return rows


def count_rows(rng: np.random.Generator, small: bool, repeat: int) -> list[dict[str, Any]]:
    """Array operations per call (a speed figure of its own on a GPU: each is a kernel launch): the aten calls of
    the forward and of forward + backward on torch (warm), on the paths a GPU takes (``as_on_a_gpu``)."""
    try:
        import torch
    except ImportError as e:
        print(f"count rows skipped: {e}", file=sys.stderr)
        return []
    from poolspec.bench_counts import as_on_a_gpu, count_torch

    x, y = torch.tensor(rng.standard_normal((256, 256))), torch.tensor(rng.standard_normal((128, 128)))
    c = torch.tensor(rng.uniform(-4, 131, (2, 20000)))
    calls: list[tuple[str, str, tuple[Any, ...], dict[str, Any]]] = [
        ("uniform_filter", "256^2 size 31", (x, 31), {}),
        ("maximum_filter", "256^2 size 31", (x, 31), {}),
        ("spline_filter", "256^2 order 3", (x, 3), {}),
        ("map_coordinates", "128^2, 20,000 points, order 1", (y, c), {"order": 1}),
        ("map_coordinates", "128^2, 20,000 points, order 3", (y, c), {"order": 3}),
        ("zoom", "256^2 x0.37 order 3", (x, 0.37), {"order": 3}),
        ("shift", "256^2 (3.3, -7.6) order 3", (x, (3.3, -7.6)), {"order": 3}),
        ("rotate", "128^2 30 deg order 3", (y, 30.0), {"order": 3}),
    ]
    rows = []
    for name, case, args, kw in calls:
        fn = getattr(ours, name)

        def both(fn: Any = fn, args: tuple[Any, ...] = args, kw: dict[str, Any] = kw) -> Any:
            t = args[0].detach().requires_grad_(True)
            out = fn(t, *args[1:], **kw)
            return torch.autograd.grad(out, t, torch.ones_like(out))

        with as_on_a_gpu():
            fwd = count_torch(lambda fn=fn, args=args, kw=kw: fn(*args, **kw), warm=True)
            fb = count_torch(both, warm=True)
        rows.append({"group": "op counts", "case": f"{name} {case}", "forward": fwd[0], "forward_views": fwd[1],
                     "forward_backward": fb[0], "forward_backward_views": fb[1]})
        print(f"| op counts | {name} {case} | forward {fwd[0]} ({fwd[1]} views) | forward + backward {fb[0]} "
              f"({fb[1]} views) | | |", flush=True)
    return rows


PARTS = {"filters": filter_rows, "spline_filter": spline_rows, "map_coordinates": map_rows,
         "geometry": geometry_rows, "jax": jax_rows, "cupy": cupy_rows, "counts": count_rows}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--small", action="store_true", help="small shapes (checks the script)")
    parser.add_argument("--only", action="append", choices=sorted(PARTS), help="run these parts only")
    parser.add_argument("--backend", choices=("numpy", "cupy"), default="numpy",
                        help="cupy: the calls on a GPU against cupyx.scipy.ndimage")
    a = parser.parse_args()
    if a.backend == "cupy":
        a.only = ["cupy"]
    rng = np.random.default_rng(0)
    print(f"scipy.ndimage front-end vs its peers, float64, {a.threads} thread(s), medians of {a.repeat}")
    print("| group | case | peer ms | poolspec ms | ratio | max rel diff |")
    print("|---|---|---|---|---|---|")
    rows: list[dict[str, Any]] = []
    for name, part in PARTS.items():
        if (not a.only and name not in ("cupy", "counts")) or (a.only and name in a.only):
            rows += part(rng, a.small, a.repeat)
    if a.json:
        a.json.write_text(json.dumps({"threads": a.threads, "repeat": a.repeat, "small": a.small, "rows": rows},
                                     indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
