"""What a new family costs (docs/ARCHITECTURE.md, "Adding an op"): one folder under ``families/`` and one line in
``poolspec/__init__.py``. A copy of the package gains a small linear family, ``sum_pool2d`` (sums over k x k tiles,
torch's ``avg_pool2d(x, k) * k * k``), and nothing else changes; in a fresh process the family is found, exported,
recorded, correct against torch with its gradient, captured by ``torch.compile(fullgraph=True)`` and ``torch.export``
through the generic nodes, batched by ``torch.func.vmap``, and listed by the conformance catalogue. A family of the
``sampled`` kind brings its own capture node in its folder (``capture.py``): ``scale1d`` (x times per-position
weights w, both differentiable) is captured through it, with its derivatives and its vmap rule, and nothing else
changes either."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torch")

SRC = Path(__file__).resolve().parents[1] / "src" / "poolspec"

FILES = {
    "__init__.py": '"""sum_pool: sums over k x k tiles."""\n',
    "card.py": '''
        """The card of sum_pool2d."""

        from __future__ import annotations

        from typing import Any

        from ...spec._card import REQUIRED, Argument, Card, Gradient, Port, Resolved
        from ...spec._pools import FLOATS, JAX_TRANSFORMS, TORCH_TRANSFORMS
        from ...spec._rules import check_dtype, fail, int_tuple, split_shape
        from .. import Family


        def _resolve(card: Card, shape: tuple[Any, ...], dtype: str | None, a: dict[str, Any]) -> Resolved:
            batched, spatial = split_shape(card.name, shape, 2, allow_empty_channel=False)
            check_dtype(card.name, dtype, card.dtypes)
            k = int_tuple(card.name, "kernel_size", a["kernel_size"], 2)
            if any(v <= 0 for v in k):
                fail(card.name, "kernel_size", k, "every entry must be > 0")
            out = tuple(L // v for L, v in zip(spatial, k))
            if min(out) < 1:
                fail(card.name, "kernel_size", k, f"is larger than the input {spatial}")
            return Resolved(card.name, tuple(shape), tuple(shape[:-2]) + out, dict(kernel_size=k), batched)


        def _card() -> Card:
            return Card(
                name="sum_pool2d", version=1, category="pooling", summary="2-d sums over k x k tiles.",
                spatial_dims=(2,), input_ranks=(3, 4), dtypes=FLOATS,
                arguments=(Argument("x", "array", constraints=("(N, C, H, W) or (C, H, W)",), description="input"),
                           Argument("kernel_size", "int | tuple[int x 2]", REQUIRED, ("every entry > 0",), "tile")),
                shape_relation="O = floor(L / k)", determinism="sums of strided slices",
                gradient=Gradient("sum_pool2d_backward", TORCH_TRANSFORMS, JAX_TRANSFORMS, "linear"),
                torch_reference="torch.nn.functional.avg_pool2d(x, k) * k * k", _resolve=_resolve,
                outputs=(Port("output", "array", "(N, C, OH, OW)", "the tiles' sums"),))


        FAMILY = Family("sum_pool", "linear", 90, lambda: [_card()])
        ''',
    "ops.py": '''
        """sum_pool2d and its VJP."""

        from __future__ import annotations

        from typing import Any

        from ..._calls import resolve, resolve_backward
        from ...autodiff import graph_op, in_graph, linear
        from ...kernels.linear import SeparableLinear
        from ...plans import windows

        __all__ = ["sum_pool2d", "sum_pool2d_backward"]


        def _plan(x: Any, r: Any) -> SeparableLinear:
            spatial, out, k = tuple(x.shape[-2:]), tuple(r.output_shape[-2:]), r["kernel_size"]
            return SeparableLinear(spatial, out, tuple(windows.regular(L, O, v, v, 0)
                                                       for L, O, v in zip(spatial, out, k)))


        def sum_pool2d(x: Any, kernel_size: Any) -> Any:
            if in_graph(x):
                return graph_op("sum_pool2d", {"kernel_size": kernel_size}, x)
            _, _, r = resolve("sum_pool2d", x, kernel_size=kernel_size)
            return linear(_plan(x, r), x)


        def sum_pool2d_backward(grad_output: Any, x: Any, kernel_size: Any) -> Any:
            if in_graph(x):
                return graph_op("sum_pool2d", {"kernel_size": kernel_size}, x, grad_output)
            _, _, r = resolve_backward("sum_pool2d", grad_output, x, kernel_size=kernel_size)
            return linear(_plan(x, r), grad_output, transpose=True, primal=x)
        ''',
    "conformance.py": '''
        """sum_pool's conformance record."""

        from __future__ import annotations

        from ...conformance.cases import Case, _plain_inputs
        from ...conformance.families import Family

        RECORD = Family("sum_pool", ("sum_pool2d",),
                        lambda: [Case("sum_pool2d", (2, 3, 6, 8), dict(kernel_size=2), ("tiles",)),
                                 Case("sum_pool2d", (3, 7, 7), dict(kernel_size=(3, 2)), ("unbatched", "ragged"))],
                        lambda: [], _plain_inputs)
        ''',
}

CHECK = '''
import sys
import numpy as np
import torch
import torch.nn.functional as F
import poolspec
from poolspec import families, registry, spec
from poolspec.conformance import catalogue
from poolspec.conformance.families import family

assert poolspec.__file__.startswith(sys.argv[1]), poolspec.__file__
assert "sum_pool2d" in poolspec.__all__ and "sum_pool2d_backward" in poolspec.__all__
assert families.family("sum_pool").kind == "linear" and registry.op("sum_pool2d").kind == "linear"
assert spec.output_shape("sum_pool2d", ("N", 3, 9, 8), kernel_size=2) == ("N", 3, 4, 4)
assert [c.name for c in catalogue.golden_cases(["sum_pool2d"])] == ["sum_pool2d-g000", "sum_pool2d-g001"]
assert family("sum_pool2d").name == "sum_pool"

x = torch.randn(2, 3, 6, 8, dtype=torch.float64, requires_grad=True)
want = F.avg_pool2d(x, 2) * 4
g = torch.randn(want.shape, dtype=torch.float64)
(want_grad,) = torch.autograd.grad(want, x, g)
got = poolspec.sum_pool2d(x, 2)
torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)
torch.testing.assert_close(torch.autograd.grad(got, x, g)[0], want_grad, rtol=1e-12, atol=1e-12)
np.testing.assert_allclose(poolspec.sum_pool2d(x.detach().numpy(), 2), want.detach().numpy(), rtol=1e-12)
np.testing.assert_allclose(poolspec.sum_pool2d_backward(g.numpy(), x.detach().numpy(), 2), want_grad.numpy(),
                           rtol=1e-12)

def loss(t):
    return (poolspec.sum_pool2d(t, 2) * g).sum()

compiled = torch.compile(loss, fullgraph=True, backend="aot_eager")
t = x.detach().requires_grad_(True)
value = compiled(t)
value.backward()
torch.testing.assert_close(value, (want * g).sum(), rtol=1e-12, atol=1e-12)
torch.testing.assert_close(t.grad, want_grad, rtol=1e-12, atol=1e-12)

class M(torch.nn.Module):
    def forward(self, t):
        return poolspec.sum_pool2d(t, 2)

program = torch.export.export(M(), (x.detach(),))
assert any("poolspec" in str(n.target) for n in program.graph.nodes), program.graph
torch.testing.assert_close(program.module()(x.detach()), want.detach(), rtol=1e-12, atol=1e-12)

batch = torch.randn(4, 2, 3, 6, 8, dtype=torch.float64)
torch.testing.assert_close(torch.func.vmap(lambda t: poolspec.sum_pool2d(t, 2))(batch),
                           torch.stack([F.avg_pool2d(b, 2) * 4 for b in batch]), rtol=1e-12, atol=1e-12)
print("ok")
'''


def _with_family(tmp_path: Path, family: str, files: dict[str, str], check: str) -> None:
    """A copy of the package with the folder ``families/<family>`` of ``files`` and one import line; ``check``
    run against it in a fresh process."""
    package = tmp_path / "src" / "poolspec"
    shutil.copytree(SRC, package, ignore=shutil.ignore_patterns("__pycache__", "data"))
    (package / "data").symlink_to(SRC / "data")
    folder = package / "families" / family
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    init = package / "__init__.py"
    lines = init.read_text(encoding="utf-8").splitlines(keepends=True)
    last = max(i for i, line in enumerate(lines) if line.startswith("from .families.") and "import *" in line)
    lines.insert(last + 1, f"from .families.{family}.ops import *  # noqa: F403\n")
    init.write_text("".join(lines), encoding="utf-8")
    # the whole change: the new folder, and one line more in poolspec/__init__.py
    changed = [p.relative_to(package) for p in package.rglob("*.py")
               if family not in p.parts and p.read_bytes() != (SRC / p.relative_to(package)).read_bytes()]
    assert changed == [Path("__init__.py")]
    assert len(lines) == len((SRC / "__init__.py").read_text(encoding="utf-8").splitlines()) + 1
    run = subprocess.run([sys.executable, "-c", check, str(tmp_path / "src")], capture_output=True, text=True,
                         env={"PYTHONPATH": str(tmp_path / "src"), "PATH": "/usr/bin:/bin"}, timeout=600)
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), run.stdout + run.stderr


def test_a_new_family_is_one_folder_and_one_line(tmp_path):
    _with_family(tmp_path, "sum_pool", FILES, CHECK)


SAMPLED = {
    "__init__.py": '"""scale: x times per-position weights."""\n',
    "card.py": '''
        """The card of scale1d."""

        from __future__ import annotations

        from typing import Any

        from ...spec._card import Argument, Card, Gradient, Port, Resolved
        from ...spec._pools import FLOATS, JAX_TRANSFORMS, TORCH_TRANSFORMS
        from ...spec._rules import check_dtype, checked_shape, fail
        from .. import Family


        def _resolve(card: Card, shape: tuple[Any, ...], dtype: str | None, a: dict[str, Any]) -> Resolved:
            shape = checked_shape(card.name, "x", shape, (3,))
            check_dtype(card.name, dtype, card.dtypes)
            w = a["w"]
            if w is not None and tuple(w) != (shape[0], shape[2]):
                fail(card.name, "w.shape", tuple(w), f"must be (N, L) = {(shape[0], shape[2])}")
            return Resolved(card.name, shape, shape, {}, True)


        def _card() -> Card:
            return Card(
                name="scale1d", version=1, category="sampling", summary="x times per-position weights.",
                spatial_dims=(1,), input_ranks=(3,), dtypes=FLOATS,
                arguments=(Argument("x", "array", constraints=("(N, C, L)",), description="input"),
                           Argument("w", "array", constraints=("(N, L)",), description="weights", like="x")),
                shape_relation="(N, C, L)", determinism="products, sums over C in order",
                gradient=Gradient("scale1d_backward", TORCH_TRANSFORMS, JAX_TRANSFORMS, "w.r.t. x and w",
                                  wrt=("x", "w")),
                torch_reference="x * w[:, None, :]", _resolve=_resolve, shaped_ports=("w",),
                outputs=(Port("output", "array", "(N, C, L)", "the scaled input"),))


        FAMILY = Family("scale", "sampled", 91, lambda: [_card()])
        ''',
    "ops.py": '''
        """scale1d and its VJP."""

        from __future__ import annotations

        from typing import Any

        from ..._calls import resolve
        from ...autodiff import graph_node, in_graph

        __all__ = ["scale1d", "scale1d_backward"]


        def scale1d(x: Any, w: Any) -> Any:
            if in_graph(x):
                return graph_node("scale1d", {}, x, w)
            resolve("scale1d", x, {"w": w})
            return x * w[:, None, :]


        def scale1d_backward(grad_output: Any, x: Any, w: Any) -> Any:
            if in_graph(x):
                return graph_node("scale1d_backward", {}, grad_output, x, w)
            resolve("scale1d", x, {"w": w})
            return grad_output * w[:, None, :], (grad_output * x).sum(axis=1)
        ''',
    "capture.py": '''
        """scale1d's node for torch.compile and torch.export."""

        from __future__ import annotations

        from typing import Any

        import torch

        from ...autodiff import torch_graph as g


        @torch.library.custom_op("poolspec::scale1d", mutates_args=())
        def node(x: torch.Tensor, w: torch.Tensor, spec: str, sizes: list[int]) -> torch.Tensor:
            return g.fresh(g.eager_function("scale1d")(x, w), x, w)


        @node.register_fake
        def _(x: torch.Tensor, w: torch.Tensor, spec: str, sizes: list[int]) -> torch.Tensor:
            g.check_port("scale1d", "w", w, x)
            return x.new_empty(x.shape)


        def _context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
            ctx.save_for_backward(inputs[0], inputs[1])


        def _vjp(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
            x, w = ctx.saved_tensors
            return node(grad, w, "{}", []), (grad * x).sum(1), None, None


        def _vmap(info: Any, in_dims: tuple[Any, ...], x: torch.Tensor, w: torch.Tensor, spec: str,
                  sizes: list[int]) -> tuple[torch.Tensor, int]:
            _, x, w = g.fronts(info, in_dims, "scale1d", x, w)
            return g.unfold(True, info, node(x, w, spec, sizes)), 0


        node.register_autograd(_vjp, setup_context=_context)
        node.register_vmap(_vmap)


        def bind(op: str, backward: bool, args: dict[str, Any], tensors: tuple[Any, ...]) -> Any:
            if backward:
                grad, x, w = tensors
                return node(grad, w, *g.node_args(args)), (grad * x).sum(1)
            return node(*tensors, *g.node_args(args))
        ''',
    "conformance.py": '''
        """scale's conformance record."""

        from __future__ import annotations

        from ...conformance.cases import _plain_inputs
        from ...conformance.families import Family

        RECORD = Family("scale", ("scale1d",), lambda: [], lambda: [], _plain_inputs)
        ''',
}

SAMPLED_CHECK = '''
import sys
import torch
import poolspec
from poolspec import registry

assert poolspec.__file__.startswith(sys.argv[1]), poolspec.__file__
assert registry.op("scale1d").kind == "sampled"
g = torch.Generator().manual_seed(0)
x = torch.randn(3, 2, 5, dtype=torch.float64, generator=g)
w = torch.randn(3, 5, dtype=torch.float64, generator=g)
c = torch.randn(3, 2, 5, dtype=torch.float64, generator=g)

def loss(lib_scale, x, w):
    return (lib_scale(x, w) * c).sum()

def grads(fn):
    xs, ws = x.clone().requires_grad_(True), w.clone().requires_grad_(True)
    return torch.autograd.grad(fn(xs, ws), (xs, ws))

want = grads(lambda a, b: loss(lambda p, q: p * q[:, None, :], a, b))
compiled = torch.compile(lambda a, b: loss(poolspec.scale1d, a, b), fullgraph=True, backend="aot_eager")
for got, ref in zip(grads(compiled), want):
    torch.testing.assert_close(got, ref, rtol=1e-12, atol=1e-12)

class M(torch.nn.Module):
    def forward(self, a, b):
        return poolspec.scale1d(a, b)

program = torch.export.export(M(), (x, w))
assert "poolspec.scale1d.default" in {str(n.target) for n in program.graph.nodes}, program.graph
torch.testing.assert_close(program.module()(x, w), x * w[:, None, :], rtol=0, atol=0)

xb, wb = torch.randn(4, 3, 2, 5, dtype=torch.float64), torch.randn(4, 3, 5, dtype=torch.float64)
batched = torch.compile(torch.func.vmap(poolspec.scale1d), fullgraph=True, backend="aot_eager")
torch.testing.assert_close(batched(xb, wb), xb * wb[:, :, None, :], rtol=0, atol=0)
back = torch.compile(lambda gr, a, b: poolspec.scale1d_backward(gr, a, b), fullgraph=True, backend="aot_eager")
gx, gw = back(c, x, w)
torch.testing.assert_close(gx, c * w[:, None, :], rtol=0, atol=0)
torch.testing.assert_close(gw, (c * x).sum(1), rtol=1e-12, atol=1e-12)
print("ok")
'''


def test_a_new_sampled_family_brings_its_own_capture_node_in_its_folder(tmp_path):
    _with_family(tmp_path, "scale", SAMPLED, SAMPLED_CHECK)
