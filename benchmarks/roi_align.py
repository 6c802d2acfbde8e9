"""roi_align on a Mask R-CNN-like call against its peers: torchvision's kernel on torch, and on JAX the same call
written directly in jax.numpy, the way a JAX port of RoIAlign does it (every sample's four taps gathered from the
image, weighted and averaged per bin, vectorised over the rois).

    python benchmarks/roi_align.py [--repeat 5] [--threads 1] [--device cpu|cuda] [--json FILE] [--small]

The call: features (2, 256, 200, 304) float32 (an FPN level of an 800 x 1216 image at stride 4), 512 boxes in image
coordinates (spatial_scale 0.25), output 7 x 7 and 14 x 14, sampling_ratio 2, aligned. Times are interleaved
medians (peer, poolspec, peer, ...): forward, and forward + backward w.r.t. the features (poolspec's
deterministic backward; torchvision's CPU backward is serial, its CUDA one atomic). torchvision must import beside
the installed torch (on the project's machines: torch 2.14.1 + torchvision 0.29.1 in an environment of their own,
with this checkout on PYTHONPATH); without it the torch rows are skipped, and without JAX the JAX rows.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import poolspec  # noqa: E402


def detector_boxes(rng: np.random.Generator, K: int, N: int, image: tuple[int, int]) -> np.ndarray:
    """(K, 5) boxes of a detector's sizes (2% to 35% of the image side) anywhere in an image of ``image`` (H, W)."""
    H, W = image
    size = rng.uniform(0.02, 0.35, (K, 2)) * (W, H)
    corner = rng.uniform(0, 1, (K, 2)) * ((W, H) - size)
    return np.concatenate([rng.integers(0, N, (K, 1)), corner, corner + size], axis=1).astype(np.float32)


def _median_pair(peer: Callable[[], Any], mine: Callable[[], Any], repeat: int) -> tuple[float, float]:
    peer(), mine()  # warm: programs compiled, caches filled
    times: dict[str, list[float]] = {"peer": [], "mine": []}
    for _ in range(repeat):
        for tag, fn in (("peer", peer), ("mine", mine)):
            t = time.perf_counter()
            fn()
            times[tag].append(time.perf_counter() - t)
    return statistics.median(times["peer"]), statistics.median(times["mine"])


def torch_rows(x: np.ndarray, boxes: np.ndarray, sizes: tuple[int, ...], kw: dict[str, Any], repeat: int,
               device: str) -> list[dict[str, Any]]:
    import torch
    from torchvision.ops import roi_align as tv  # type: ignore[import-not-found]

    xt, bt = torch.tensor(x, device=device), torch.tensor(boxes, device=device)
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    rows = []
    for P in sizes:
        ref = tv(xt, bt, P, **kw)
        diff = float((poolspec.roi_align(xt, bt, P, **kw) - ref).abs().max())

        def fwd(fn: Any, P: int = P) -> Callable[[], Any]:
            def run() -> None:
                with torch.no_grad():
                    fn(xt, bt, P, **kw)
                sync()
            return run

        def both(fn: Any, P: int = P, ref: Any = ref) -> Callable[[], Any]:
            g = torch.ones_like(ref)

            def run() -> None:
                t = xt.detach().requires_grad_(True)
                torch.autograd.grad(fn(t, bt, P, **kw), t, g)
                sync()
            return run

        for phase, make in (("forward", fwd), ("forward+backward", both)):
            peer, mine = _median_pair(make(tv), make(poolspec.roi_align), repeat)
            rows.append(dict(backend=f"torch {device}", peer="torchvision.ops.roi_align", output=P, phase=phase,
                             peer_ms=peer * 1e3, poolspec_ms=mine * 1e3, ratio=mine / peer, max_abs_diff=diff))
    return rows


def jax_roi_align(x: Any, boxes: Any, P: int, spatial_scale: float, sampling_ratio: int, aligned: bool) -> Any:
    """RoIAlign written directly in jax.numpy (a fixed sampling_ratio): each roi's sample grid, its four taps
    gathered from the image of its batch index, bilinear weights, the mean per bin; torchvision's rules."""
    import jax.numpy as jnp

    N, C, H, W = x.shape
    s = sampling_ratio
    off = 0.5 if aligned else 0.0
    b = boxes[:, 0].astype(jnp.int32)
    x1, y1, x2, y2 = (boxes[:, i] * spatial_scale - off for i in range(1, 5))
    w, h = x2 - x1, y2 - y1
    if not aligned:
        w, h = jnp.maximum(w, 1.0), jnp.maximum(h, 1.0)
    steps = (jnp.arange(P)[:, None] + (jnp.arange(s)[None, :] + 0.5) / s).reshape(-1)  # (P * s,)
    ys = y1[:, None] + steps[None, :] * (h / P)[:, None]  # (K, P * s)
    xs = x1[:, None] + steps[None, :] * (w / P)[:, None]

    def axis(c: Any, L: int) -> tuple[Any, Any, Any, Any, Any]:
        valid = (c >= -1.0) & (c <= L)
        c = jnp.maximum(c, 0.0)
        low = jnp.minimum(jnp.floor(c), L - 1)
        c = jnp.where(low >= L - 1, low, c)
        high = jnp.minimum(low + 1, L - 1)
        lw = c - low
        return low.astype(jnp.int32), high.astype(jnp.int32), 1 - lw, lw, valid

    yl, yh, hy, ly, vy = axis(ys, H)
    xl, xh, hx, lx, vx = axis(xs, W)
    xt = jnp.transpose(x, (0, 2, 3, 1))  # (N, H, W, C): a tap reads a row of channels

    def tap(yi: Any, xi: Any) -> Any:  # (K, P * s, P * s, C)
        return xt[b[:, None, None], yi[:, :, None], xi[:, None, :]]

    wy = lambda a: (a * vy)[:, :, None, None]  # noqa: E731
    wx = lambda a: (a * vx)[:, None, :, None]  # noqa: E731
    val = (wy(hy) * wx(hx) * tap(yl, xl) + wy(hy) * wx(lx) * tap(yl, xh) + wy(ly) * wx(hx) * tap(yh, xl)
           + wy(ly) * wx(lx) * tap(yh, xh))
    K = boxes.shape[0]
    return jnp.transpose(val.reshape(K, P, s, P, s, C).mean(axis=(2, 4)), (0, 3, 1, 2))


def jax_rows(x: np.ndarray, boxes: np.ndarray, sizes: tuple[int, ...], kw: dict[str, Any],
             repeat: int) -> list[dict[str, Any]]:
    import jax
    import jax.numpy as jnp

    xj, bj = jnp.asarray(x), jnp.asarray(boxes)
    rows = []
    for P in sizes:
        peer_f = jax.jit(lambda x, b, P=P: jax_roi_align(x, b, P, **kw))
        mine_f = jax.jit(lambda x, b, P=P: poolspec.roi_align(x, b, P, **kw))
        diff = float(jnp.abs(peer_f(xj, bj) - mine_f(xj, bj)).max())
        gy = jnp.ones(peer_f(xj, bj).shape, xj.dtype)
        def both(f: Any, gy: Any = gy) -> Any:  # the output and the gradient: XLA may not drop the forward
            def run(x: Any, b: Any) -> Any:
                y, vjp = jax.vjp(lambda t: f(t, b), x)
                return y, vjp(gy)
            return jax.jit(run)

        peer_b, mine_b = both(peer_f), both(mine_f)
        for phase, pf, mf in (("forward", peer_f, mine_f), ("forward+backward", peer_b, mine_b)):
            peer, mine = _median_pair(lambda f=pf: jax.block_until_ready(f(xj, bj)),
                                      lambda f=mf: jax.block_until_ready(f(xj, bj)), repeat)
            rows.append(dict(backend="jax jit", peer="jax.numpy RoIAlign (benchmarks/roi_align.py)", output=P,
                             phase=phase, peer_ms=peer * 1e3, poolspec_ms=mine * 1e3, ratio=mine / peer,
                             max_abs_diff=diff))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--small", action="store_true", help="a 2x16x50x76 map and 32 boxes (checks the script)")
    a = parser.parse_args()
    rng = np.random.default_rng(0)
    shape, K = ((2, 16, 50, 76), 32) if a.small else ((2, 256, 200, 304), 512)
    x = rng.standard_normal(shape).astype(np.float32)
    boxes = detector_boxes(rng, K, shape[0], (shape[2] * 4, shape[3] * 4))
    kw = dict(spatial_scale=0.25, sampling_ratio=2, aligned=True)
    rows: list[dict[str, Any]] = []
    try:
        import torch

        torch.set_num_threads(a.threads)
        rows += torch_rows(x, boxes, (7, 14), kw, a.repeat, a.device)
    except ImportError as e:
        print(f"torch rows skipped: {e}", file=sys.stderr)
    try:
        if a.device == "cpu":  # (on a GPU the JAX rows are the device benchmark's)
            rows += jax_rows(x, boxes, (7, 14), kw, a.repeat)
    except ImportError as e:
        print(f"JAX rows skipped: {e}", file=sys.stderr)
    print(f"roi_align {shape} float32, {K} boxes, sampling_ratio 2, aligned; {a.threads} thread(s); "
          f"medians of {a.repeat}")
    print("| backend | peer | output | phase | peer ms | poolspec ms | ratio | max abs diff |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['backend']} | {r['peer']} | {r['output']}x{r['output']} | {r['phase']} | {r['peer_ms']:.1f} | "
              f"{r['poolspec_ms']:.1f} | {r['ratio']:.2f} | {r['max_abs_diff']:.1e} |")
    if a.json:
        a.json.write_text(json.dumps({"shape": shape, "boxes": K, "threads": a.threads, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
