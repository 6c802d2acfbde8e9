"""torch.func and forward-mode AD on every op family, against torch's native op under the same transform.

vmap, grad, jacrev, jacfwd, jvp, hessian, vmap of grad (per-sample gradients), vmap of vmap and
torch.autograd.forward_ad, in float64 at rtol 1e-10. Lanczos has no native torch op (its gradients are held
against jax.image in test_autodiff.py).
"""

from __future__ import annotations

import numpy as np
import pytest

import poolspec

torch = pytest.importorskip("torch")
from test_autodiff import CONFIGS, LP_CONFIGS, MAX_CONFIGS, UNPOOL_CONFIGS, _lp_x, _unpool_operands  # noqa: E402
from torch.func import grad, hessian, jacfwd, jacrev, jvp, vmap  # noqa: E402

from oracle import torch_fn  # noqa: E402

F = torch.nn.functional
# torch notes that its own native ops lack some batching rules (a slower fallback, same values)
pytestmark = pytest.mark.filterwarnings("ignore:There is a performance drop:UserWarning")
fwAD = torch.autograd.forward_ad


def _cube_sum(fn):
    return lambda t: (fn(t) ** 3).sum()


def _forward_ad(fn, x, v):
    with fwAD.dual_level():
        return fwAD.unpack_dual(fn(fwAD.make_dual(x, v))).tangent


def _pair(x):
    return torch.stack([x, 2 * x])


TRANSFORMS = {
    "vmap": lambda fn, x, v: vmap(fn)(_pair(x)),
    "grad": lambda fn, x, v: grad(_cube_sum(fn))(x),
    "jacrev": lambda fn, x, v: jacrev(fn)(x),
    "jacfwd": lambda fn, x, v: jacfwd(fn)(x),
    "jvp": lambda fn, x, v: jvp(fn, (x,), (v,))[1],
    "hessian": lambda fn, x, v: hessian(_cube_sum(fn))(x),
    "vmap(grad)": lambda fn, x, v: vmap(grad(_cube_sum(fn)))(_pair(x)),
    "vmap(vmap)": lambda fn, x, v: vmap(vmap(fn))(_pair(x)[:, None].expand(2, 3, *x.shape)),
    "forward_ad": _forward_ad,
}


def _first(fn):
    return lambda t: (lambda r: r[0] if isinstance(r, tuple) else r)(fn(t))


def _cases():
    cases = []
    for op, shape, args in CONFIGS + MAX_CONFIGS + LP_CONFIGS:
        if args.get("mode") == "lanczos":
            continue
        shape = (1,) + tuple(shape[1:]) if len(shape) > 3 else shape  # small Jacobians and Hessians
        cases.append((f"{op}-{args.get('mode', '')}-{shape}", op, shape, args))
    for op, shape, args in UNPOOL_CONFIGS:
        cases.append((f"{op}-{shape}", op, shape, args))
    return cases


CASES = _cases()


@pytest.mark.parametrize("transform", list(TRANSFORMS))
@pytest.mark.parametrize("name, op, shape, args", CASES, ids=[c[0] for c in CASES])
def test_torch_func_transform_matches_native(name, op, shape, args, transform):
    if op.startswith("max_unpool"):
        values, idx = _unpool_operands(op, shape, args)
        x, it = torch.from_numpy(values), torch.from_numpy(idx)
        ours = lambda t: getattr(poolspec, op)(t, it, **args)  # noqa: E731
        native = lambda t: getattr(F, op)(t, it, **args)  # noqa: E731
    else:
        host = _lp_x(shape, args) if op.startswith("lp_pool") else np.random.default_rng(0).standard_normal(shape)
        x = torch.from_numpy(host)
        ours, native = _first(lambda t: getattr(poolspec, op)(t, **args)), _first(torch_fn(op, args))
    v = torch.from_numpy(np.random.default_rng(9).standard_normal(tuple(x.shape)))
    got = TRANSFORMS[transform](ours, x, v)
    want = TRANSFORMS[transform](native, x, v)
    torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-12)


def _stored(per_op: int = 2):
    from poolspec import registry
    from poolspec.conformance import golden

    picked = []
    for name in registry.OPS:
        cases = [c for c in golden.cases([name]) if c.error is None and c.dtype == "float64"
                 and c.reference == "torch" and c.arguments.get("mode") != "lanczos"]
        picked += cases[:: max(1, len(cases) // per_op)][:per_op]
    return picked


STORED = _stored()


@pytest.mark.parametrize("case", STORED, ids=[c.name for c in STORED])
def test_vmap_batches_every_array_input(case):
    """vmap over every array input at once (indices, grids, samples and theta too, each sample different),
    forward and per-sample gradients w.r.t. every differentiable port, against torch's op under vmap."""
    from poolspec import registry
    from poolspec.conformance.families import family

    fam, d = family(case.op), registry.op(case.op)
    a = case.arrays()
    variants = (lambda t: t, lambda t: t.flip(-1), lambda t: t.flip(0))
    batched = {p: torch.stack([v(torch.from_numpy(a[p])) for v in variants]) for p in fam.ports if p in a}
    names = list(batched)
    args = dict(case.arguments)

    def call(fn):
        def f(*ts):
            y, idx = fam.forward(fn, args, dict(zip(names, ts)))
            return y if idx is None else (y, idx)
        return f

    def native_op(*ts, **kw):
        if len(ts) == 1:
            return torch_fn(case.op, kw)(ts[0])
        return getattr(F, case.op)(*ts, **kw)

    got, want = vmap(call(d.forward))(*batched.values()), vmap(call(native_op))(*batched.values())
    for g, w in zip(*(r if isinstance(r, tuple) else (r,) for r in (got, want))):
        torch.testing.assert_close(g, w, rtol=1e-12, atol=0, equal_nan=True)
    values = got[0] if isinstance(got, tuple) else got
    weight = torch.from_numpy(np.random.default_rng(5).standard_normal(tuple(values.shape[1:])))
    wrt = tuple(names.index(p) for p in fam.differentiable)

    def loss(fn):
        def f(*ts):
            y = call(fn)(*ts)
            return ((y[0] if isinstance(y, tuple) else y) * weight).nansum()
        return f

    got_g = vmap(grad(loss(d.forward), argnums=wrt))(*batched.values())
    want_g = vmap(grad(loss(native_op), argnums=wrt))(*batched.values())
    torch.testing.assert_close(got_g, want_g, rtol=1e-10, atol=1e-12, equal_nan=True)
