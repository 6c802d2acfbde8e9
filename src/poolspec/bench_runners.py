"""The ratio benchmark's runners (``poolspec.bench``): per backend, poolspec and the native peer on one case.

Peers: torch.nn.functional on torch (``torch-compile``: both under torch.compile), the JAX and NumPy peers each
family declares in its folder (``families/<family>/bench.py``'s ``PEERS``, found by name by ``peers``).

>>> from poolspec.bench_runners import peers
>>> peers("max_pool").onnx
('MaxPool', False)
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .bench_cases import BenchCase
from .bench_timing import median_time, paired_times, torch_calls
from .registry import op as record

# ---------------------------------------------------------------------------------------------------- torch

class TorchRunner:
    """poolspec on torch tensors against torch.nn.functional, 2 threads, forward and forward plus backward."""

    name = "torch"

    def __init__(self) -> None:
        self.torch = importlib.import_module("torch")
        self.torch.set_num_threads(2)
        self.F = self.torch.nn.functional

    def peer(self, case: BenchCase) -> tuple[str, Callable[..., Any]]:
        fn = getattr(self.F, case.op)
        return f"torch.nn.functional.{case.op}", lambda x: fn(x, **case.args)

    def prepare(self, case: BenchCase) -> tuple[Any, Any]:
        g = np.random.default_rng(1)
        x = self.torch.from_numpy(g.standard_normal(case.shape).astype(np.float32))
        return x, None

    def timings(self, case: BenchCase, repeat: int) -> dict[str, float]:
        import poolspec

        torch = self.torch
        x, _ = self.prepare(case)
        _, peer = self.peer(case)
        mine = getattr(poolspec, case.op)
        args = case.args
        gy = torch.ones_like(peer(x))
        fwd_m, bwd_m = torch_calls(torch, mine, x, gy, **args)
        fwd_p, bwd_p = torch_calls(torch, peer, x, gy)
        fwd_mine, fwd_peer = paired_times(fwd_m, fwd_p, repeat)
        bwd_mine, bwd_peer = paired_times(bwd_m, bwd_p, repeat)
        return {"fwd_mine": fwd_mine, "fwd_peer": fwd_peer, "bwd_mine": bwd_mine, "bwd_peer": bwd_peer}


class TorchCompileRunner(TorchRunner):
    """Both sides under ``torch.compile(fullgraph=True)`` (inductor), compiled once per case and direction
    before timing; the compile times are reported too. poolspec's op is one opaque node per call there
    (autodiff/torch_graph.py), so this measures its kernels plus the node's dispatch, against inductor's
    generated code for the native op."""

    name = "torch-compile"

    def timings(self, case: BenchCase, repeat: int) -> dict[str, float]:
        import poolspec

        torch = self.torch
        x, _ = self.prepare(case)
        native = getattr(self.F, case.op)
        mine = getattr(poolspec, case.op)
        args = case.args
        gy = torch.ones_like(native(x, **args))
        out: dict[str, float] = {}

        def build(fn: Callable[..., Any], label: str) -> tuple[Callable[[], Any], Callable[[], Any]]:
            torch._dynamo.reset()
            calls = torch_calls(torch, torch.compile(lambda t: fn(t, **args), fullgraph=True), x, gy)
            start = time.perf_counter()
            for call in calls:  # compiles the forward and the backward graphs
                call()
            out[f"compile_{label}"] = time.perf_counter() - start
            return calls

        fwd_mine, bwd_mine = build(mine, "mine")
        fwd_peer, bwd_peer = build(native, "peer")
        out["fwd_mine"], out["fwd_peer"] = paired_times(fwd_mine, fwd_peer, repeat)
        out["bwd_mine"], out["bwd_peer"] = paired_times(bwd_mine, bwd_peer, repeat)
        return out


# ------------------------------------------------------------------------------------------------------ JAX

def reduce_window_args(case: BenchCase) -> tuple[tuple[int, ...], tuple[int, ...], tuple[tuple[int, int], ...]]:
    """A pool case's window, strides and padding as ``lax.reduce_window`` takes them (batch and channels 1)."""
    a, n = case.args, len(case.shape) - 2
    k, s, p = a["kernel_size"], a.get("stride") or a["kernel_size"], a.get("padding", 0)
    return (1, 1) + (k,) * n, (1, 1) + (s,) * n, ((0, 0), (0, 0)) + ((p, p),) * n


@dataclass(frozen=True)
class Peers:
    """A family's benchmark peers, declared in its folder (``families/<family>/bench.py``'s ``PEERS``): JAX's
    nearest equivalent (jitted beside poolspec on JAX), the ONNX operator the reference evaluator runs on NumPy
    (and whether it takes count_include_pad), and the scikit-image reductions whose semantics coincide."""

    jax: Callable[[Any, BenchCase], tuple[str, Callable[..., Any]]] | None = None
    onnx: tuple[str, bool] | None = None
    global_mean: bool = False  # a mean over the whole plane at output size 1 (GlobalAveragePool, block_reduce)
    block_mean: bool = False  # block_reduce(np.mean) where the windows tile the plane
    # the op-count call's arrays beyond x (``bench_counts``): (torch, case, x, arguments, generator) -> (positional
    # arrays, keywords, how many leading arrays are differentiated); None: x alone
    count_inputs: Callable[..., tuple[list[Any], dict[str, Any], int]] | None = None
    # the native op the counts compare with, from torch: None where torch has none (torch.nn.functional.<op> when
    # the family does not say)
    native: Callable[[Any, str], Callable[..., Any] | None] | None = None


@functools.cache
def peers(family: str) -> Peers:
    """The peers family ``family`` declares (none where its folder has no ``bench.py``)."""
    from .families import parts

    module = parts("bench").get(family)
    return module.PEERS if module is not None else Peers()


class JaxRunner:
    """poolspec under jax.jit against the family's JAX peer, forward and forward plus vjp."""

    name = "jax"

    def __init__(self) -> None:
        self.jax = importlib.import_module("jax")
        self.jnp = importlib.import_module("jax.numpy")

    def peer(self, case: BenchCase) -> tuple[str, Callable[..., Any]]:
        make = peers(record(case.op).family).jax
        if make is None:
            raise KeyError(case.op)
        return make(self.jax, case)

    def timings(self, case: BenchCase, repeat: int) -> dict[str, float]:
        import poolspec

        jax, jnp = self.jax, self.jnp
        x = jnp.asarray(np.random.default_rng(1).standard_normal(case.shape).astype(np.float32))
        _, peer = self.peer(case)
        args = case.args

        def mine(t: Any) -> Any:
            return getattr(poolspec, case.op)(t, **args)

        fwd, bwd = {}, {}
        for tag, fn in (("mine", mine), ("peer", peer)):
            f = jax.jit(fn)
            fwd[tag] = lambda f=f: f(x).block_until_ready()
            gy = jnp.ones(f(x).shape, x.dtype)

            def fwd_bwd(t: Any, cot: Any, fn: Callable[..., Any] = fn) -> Any:
                y, pull = jax.vjp(fn, t)
                return y, pull(cot)[0]

            # the cotangent is an argument: a closed-over constant would let XLA fold a linear backward
            b = jax.jit(fwd_bwd)
            bwd[tag] = lambda b=b, gy=gy: jax.block_until_ready(b(x, gy))
        out = dict(zip(("fwd_mine", "fwd_peer"), paired_times(fwd["mine"], fwd["peer"], repeat)))
        out.update(zip(("bwd_mine", "bwd_peer"), paired_times(bwd["mine"], bwd["peer"], repeat)))
        return out


# ---------------------------------------------------------------------------------------------------- NumPy

class NumpyRunner:
    """poolspec on NumPy (forward and explicit backward, peak allocation per call) beside ONNX's reference
    evaluator and scikit-image's block_reduce where the family declares them."""

    name = "numpy"

    def __init__(self) -> None:
        self.onnx = importlib.import_module("onnx") if importlib.util.find_spec("onnx") else None
        self.skimage = importlib.util.find_spec("skimage") is not None

    def _onnx(self, case: BenchCase) -> Callable[..., Any] | None:
        if self.onnx is None:
            return None
        from onnx import TensorProto, helper
        from onnx.reference import ReferenceEvaluator

        a, n, family = case.args, len(case.shape) - 2, record(case.op).family
        onnx = peers(family).onnx
        if onnx is not None:
            k, s, p = a["kernel_size"], a.get("stride") or a["kernel_size"], a.get("padding", 0)
            attrs: dict[str, Any] = dict(kernel_shape=[k] * n, strides=[s] * n, pads=[p] * (2 * n))
            name, counts = onnx
            if counts:
                attrs["count_include_pad"] = int(a.get("count_include_pad", True))
            node = helper.make_node(name, ["x"], ["y"], **attrs)
        elif peers(family).global_mean and a["output_size"] == 1:
            node = helper.make_node("GlobalAveragePool", ["x"], ["y"])
        else:
            return None
        graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
        session = ReferenceEvaluator(model)
        def call(x: Any) -> Any:
            return session.run(None, {"x": x})[0]  # type: ignore[index]  # one output

        return call

    def _block_reduce(self, case: BenchCase) -> Callable[..., Any] | None:
        if not self.skimage:
            return None
        from skimage.measure import block_reduce  # type: ignore[import-not-found]  # optional peer

        a, n, family = case.args, len(case.shape) - 2, record(case.op).family
        tiles = peers(family).block_mean and (a.get("stride") in (None, a["kernel_size"])) and \
            not a.get("padding") and all(L % a["kernel_size"] == 0 for L in case.shape[2:])
        if tiles:
            block = (1, 1) + (a["kernel_size"],) * n
            return lambda x: block_reduce(x, block, np.mean)
        if peers(family).global_mean and a["output_size"] == 1:
            return lambda x: block_reduce(x, (1, 1) + case.shape[2:], np.mean)
        return None

    def timings(self, case: BenchCase, repeat: int) -> dict[str, Any]:
        import poolspec

        x = np.random.default_rng(1).standard_normal(case.shape).astype(np.float32)
        mine = getattr(poolspec, case.op)
        out: dict[str, Any] = {"fwd_mine": median_time(lambda: mine(x, **case.args), repeat)}
        y = mine(x, **case.args)
        g = np.ones_like(y)
        out["bwd_mine"] = median_time(lambda: poolspec.__dict__[case.op + "_backward"](g, x, **case.args), repeat)
        onnx_fn = self._onnx(case)
        if onnx_fn is not None:
            out["fwd_onnx"] = median_time(lambda: onnx_fn(x), 1, budget=0)
            np.testing.assert_allclose(onnx_fn(x), y, rtol=1e-4, atol=1e-5)  # the same op
        block = self._block_reduce(case)
        if block is not None:
            out["fwd_skimage"] = median_time(lambda: block(x), repeat)
            np.testing.assert_allclose(block(x), y, rtol=1e-4, atol=1e-5)
        tracemalloc.start()
        y = mine(x, **case.args)
        peak_fwd = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        tracemalloc.start()
        poolspec.__dict__[case.op + "_backward"](g, x, **case.args)
        peak_bwd = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        io = x.nbytes + y.nbytes
        out["memory_ratio_fwd"] = peak_fwd / io
        out["memory_ratio_bwd"] = peak_bwd / io
        return out


RUNNERS: dict[str, Any] = {"torch": TorchRunner, "jax": JaxRunner, "numpy": NumpyRunner,
                           "torch-compile": TorchCompileRunner}


def forward_time(name: str, case: BenchCase, repeat: int) -> tuple[float, float | None]:
    """Median times of poolspec's forward alone and of the native peer's (None on NumPy, whose reference
    evaluator would take minutes at these sizes) on one backend: the scale sweep."""
    import poolspec

    fn = getattr(poolspec, case.op)
    x = np.random.default_rng(1).standard_normal(case.shape).astype(np.float32)
    if name == "torch":
        import torch

        t = torch.from_numpy(x)
        peer = TorchRunner().peer(case)[1]
        return paired_times(lambda: fn(t, **case.args), lambda: peer(t), repeat, 10.0)
    if name == "jax":
        import jax

        a = jax.numpy.asarray(x)
        f, g = jax.jit(lambda a: fn(a, **case.args)), jax.jit(JaxRunner().peer(case)[1])
        return paired_times(lambda: f(a).block_until_ready(), lambda: g(a).block_until_ready(), repeat, 10.0)
    return median_time(lambda: fn(x, **case.args), repeat, 5.0), None
