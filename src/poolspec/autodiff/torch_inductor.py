"""Inductor sees through poolspec's ``torch.library`` nodes (autodiff/torch_graph.py): each node's
decomposition is its own implementation on the functional path, so that inductor fuses poolspec's forward and
backward with their neighbours; and the build key that keeps torch's on-disk caches apart per poolspec build.

>>> from poolspec.autodiff import torch_graph
>>> torch_graph.BUILD.split("/")[1] in ("fused", "nodes")
True
"""

from __future__ import annotations

import os
from typing import Any

import torch

from .._compat import functional
from .._version import __version__


def _decomposition(impl: Any) -> Any:
    def decomposed(*args: Any) -> Any:
        with functional():
            return impl(*args)

    return decomposed


def _anchored(impl: Any) -> Any:
    """``pool_backward``'s decomposition, its result made to read ``x`` as torch's own pooling backward does
    (values unchanged). Without the read, AOTAutograd's partitioner keeps the boolean mask of a ReLU before
    the pool for the backward instead of the ReLU's output, and inductor's CPU code stores that mask a byte
    at a time when the convolution before it is channels-last: ``relu(conv(x))`` then costs ~10x in the
    forward (16x16x64x64 float32: 10.7 ms against 1.0 ms) whatever op follows."""
    def decomposed(grad_output: torch.Tensor, x: torch.Tensor, *rest: Any) -> Any:
        with functional():
            out = impl(grad_output, x, *rest)
        # a condition on the cotangent as well, so that it cannot be computed in the forward and kept instead
        return torch.where(out + x == 0, out, out) if out.shape == x.shape else out

    return decomposed


def fuse(nodes: tuple[Any, ...], anchored: Any) -> list[str]:
    """Each node's decomposition for inductor: its own implementation, run on the traced tensors along the
    functional path (the kernels' array-API calls, plans as constants), so that inductor generates fused
    kernels for poolspec's forward and backward instead of calling the eager op (``anchored``: the VJP node
    whose result must read its primal, see ``_anchored``). The autograd formulas stay
    the nodes' (the explicit, gathering backward: no scatter enters the graph). torch.export and the
    ``aot_eager`` backend keep the nodes. Off with ``POOLSPEC_FUSE=0`` (each node then runs the eager op).

    The max pools' VJP expands to a gather over each cell's covering windows through constant tables (the
    shape of inductor's own lowering of max_pool2d's backward): max_pool2d 3x3/2 on 8x64x112x112, fwd+bwd
    2.2x inductor's native code (4.3x with the node kept whole, its eager route then running outside
    inductor's threads). Kept whole, where the eager kernels index by data and the functional path has to sort
    instead (the registry's ``fused_vjp``): ``route_backward`` (fractional max pooling's VJP, whose winners are
    arbitrary cells, and max_unpool's), and ``unpool``, which eagerly writes each value at its index (each
    cell at most once) where the functional path sorts the indices and binary-searches every output cell."""
    if os.environ.get("POOLSPEC_FUSE", "1") == "0":
        return []
    try:
        from torch._decomp import register_decomposition
        from torch._inductor import decomposition as inductor
    except ImportError:  # a torch without inductor: the nodes stay opaque
        return []
    decompositions = inductor.decompositions
    fused = []
    for node in nodes:
        overload = node._opoverload
        if overload not in decompositions:
            wrap = _anchored if node is anchored else _decomposition
            register_decomposition(overload, registry=decompositions)(wrap(node._init_fn))
        fused.append(str(overload))
    # inductor keeps a copy of its table from its first compile on: renewed to hold these
    cached = getattr(inductor, "fast_random_decomps", None)
    if cached is not None and hasattr(cached, "cache_clear"):
        cached.cache_clear()
    return fused



def build(fused: list[str]) -> str:
    """poolspec's version, whether the nodes are fused, and a digest of its sources (sizes and times): torch's
    AOTAutograd cache keys a captured graph by its nodes, not by what their decompositions expand to, and
    would otherwise serve code compiled from another build of poolspec (or with fusion off) from disk."""
    import hashlib

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the package's folder
    digest = hashlib.sha256()
    for folder, _, files in sorted(os.walk(root)):
        for name in sorted(f for f in files if f.endswith(".py")):
            stat = os.stat(os.path.join(folder, name))
            digest.update(f"{os.path.relpath(os.path.join(folder, name), root)}:{stat.st_size}:"
                          f"{stat.st_mtime_ns};".encode())
    return f"{__version__}/{'fused' if fused else 'nodes'}/{digest.hexdigest()[:16]}"

