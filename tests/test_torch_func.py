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
