"""Every transform a front-end card claims (``spec.frontends.TORCH_TRANSFORMS`` / ``JAX_TRANSFORMS``), checked on
each front-end function's stored cases (inputs computed by the live library): the gradient against the library's
own where it has one, else against central differences; jit and vmap against the eager call; forward mode and
jacobians against the gradient (the adjoint identity); second order against differences of the gradient."""

from __future__ import annotations

import numpy as np
import pytest

from poolspec.conformance import conventions
from poolspec.spec import frontend_cards
from poolspec.spec.frontends import JAX_TRANSFORMS, TORCH_TRANSFORMS


def _case(function: str) -> conventions.Convention | None:
    """The function's first stored float64 case with a non-empty float output (float32 if none)."""
    found = [c for c in conventions.cases() if c.function == function]
    for want in ("float64", "float32"):
        for c in found:
            a = c.arrays()
            if str(a[c.inputs[0]].dtype) == want and a["output0"].dtype.kind == "f" and a["output0"].size:
                return c
    return None


FUNCTIONS = [c.name for c in frontend_cards()]


class Problem:
    """One case as a function of its first floating input, with fixed cotangents and directions."""

    def __init__(self, case: conventions.Convention) -> None:
        self.case = case
        self.stored = case.arrays()
        wrt = case.differentiable[0] if case.differentiable else case.inputs[0]
        self.at = case.inputs.index(wrt)
        self.x = self.stored[wrt]
        # float64 in and out (tf.image.crop_and_resize, TF's resize return float32 whatever the input)
        self.f64 = self.x.dtype == np.float64 and all(
            self.stored[f"output{i}"].dtype == np.float64 for i in range(case.outputs)
            if self.stored[f"output{i}"].dtype.kind == "f")
        # float32 cases (functions the library refuses in float64, or computes in float32): float32 tolerances, no
        # differences
        self.tol = 1e-9 if self.f64 else 2e-4
        rng = np.random.default_rng(0)
        self.cots = [rng.standard_normal(self.stored[f"output{i}"].shape) for i in range(case.outputs)
                     if self.stored[f"output{i}"].dtype.kind == "f"]
        self.t = rng.standard_normal(self.x.shape).astype(self.x.dtype)
        self.t2 = rng.standard_normal(self.x.shape).astype(self.x.dtype)
        self.library_grad = None
        if case.differentiable and f"grad_{wrt}" in self.stored:
            cots = [self.stored[k] for k in sorted(k for k in self.stored if k.startswith("cotangent"))]
            self.library_cots = cots
            self.library_grad = self.stored[f"grad_{wrt}"]

    def others(self, asarray):
        return [asarray(self.stored[n]) for n in self.case.inputs]

    def outputs(self, fn_call, x, others, floating):
        args = list(others)
        args[self.at] = x
        out = fn_call(*args)
        out = list(out) if isinstance(out, tuple) else [out]
        return [o for o in out if floating(o)]


def _close(a, b, rtol=1e-9, atol=1e-9):
    np.testing.assert_allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), rtol=rtol,
                               atol=atol)


@pytest.mark.parametrize("function", FUNCTIONS)
def test_jax_transforms(function):
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    jax.config.update("jax_enable_x64", True)
    case = _case(function)
    if case is None:
        pytest.skip("no stored float case")
    p = Problem(case)
    others = p.others(jnp.asarray)
    floating = lambda o: jnp.issubdtype(o.dtype, jnp.inexact)  # noqa: E731

    def f(x):
        return p.outputs(case.call, x, others, floating)

    def loss(x, cots=p.cots):
        return sum(jnp.sum(o * jnp.asarray(c, o.dtype)) for o, c in zip(f(x), cots))

    x = jnp.asarray(p.x)
    eager = f(x)
    assert set(JAX_TRANSFORMS) <= {"jit", "grad", "grad-of-grad", "vmap", "jvp", "jacfwd", "jacrev"}
    tol = p.tol
    for a, b in zip(jax.jit(f)(x), eager):  # jit
        _close(a, b, tol, tol)
    g = jax.grad(loss)(x)  # grad
    if p.library_grad is not None:
        _close(jax.grad(lambda x: loss(x, p.library_cots))(x), p.library_grad, tol * 10, tol * 10)
    if p.f64:
        _jax_differences(jax, loss, x, g, p)
    # vmap over two inputs against the two calls
    x2 = x * 0.5 + 1.0
    batched = jax.vmap(f)(jnp.stack([x, x2]))
    for b, one, two in zip(batched, eager, f(x2)):
        _close(b[0], one, tol, tol)
        _close(b[1], two, tol, tol)
    # jvp: <J t, c> = <t, J^T c>
    _, tangent = jax.jvp(f, (x,), (jnp.asarray(p.t),))
    lhs = sum(jnp.sum(o * jnp.asarray(c, o.dtype)) for o, c in zip(tangent, p.cots))
    _close(lhs, jnp.sum(g * p.t), tol * 10, tol * 10)
    if x.size <= 4096:
        _close(jax.jacfwd(loss)(x), g, tol, tol)
        _close(jax.jacrev(loss)(x), g, tol, tol)


def _jax_differences(jax, loss, x, g, p):
    """The gradient and the second order against central differences (float64)."""
    jnp = jax.numpy
    eps = 1e-6
    fd = (loss(x + eps * p.t) - loss(x - eps * p.t)) / (2 * eps)
    _close(jnp.sum(g * p.t), fd, 1e-5, 1e-6)
    # grad of grad: the directional derivative of <grad, t2> along t, against differences of the gradient
    gg = jax.grad(lambda x: jnp.sum(jax.grad(loss)(x) * p.t2))(x)
    fd2 = (jnp.sum(jax.grad(loss)(x + eps * p.t) * p.t2) - jnp.sum(jax.grad(loss)(x - eps * p.t) * p.t2)) / (2 * eps)
    _close(jnp.sum(gg * p.t), fd2, 1e-4, 1e-5)


@pytest.mark.parametrize("function", FUNCTIONS)
def test_torch_transforms(function):
    torch = pytest.importorskip("torch")
    case = _case(function)
    if case is None:
        pytest.skip("no stored float case")
    p = Problem(case)
    others = p.others(lambda a: torch.from_numpy(np.array(a)))
    floating = lambda o: o.dtype.is_floating_point  # noqa: E731

    def f(x):
        return p.outputs(case.call, x, others, floating)

    def loss(x, cots=p.cots):
        return sum((o * torch.from_numpy(np.asarray(c)).to(o.dtype)).sum() for o, c in zip(f(x), cots))

    assert set(TORCH_TRANSFORMS) <= {"autograd (any order)", "torch.func.grad", "torch.func.vmap",
                                     "torch.func.jvp", "torch.func.jacrev"}
    x = torch.from_numpy(p.x.copy()).requires_grad_(True)
    (g,) = torch.autograd.grad(loss(x), x, create_graph=True)  # autograd
    tol = p.tol
    if p.library_grad is not None:
        (gl,) = torch.autograd.grad(loss(x, p.library_cots), x)
        _close(gl.numpy(), p.library_grad, tol * 10, tol * 10)
    t, t2 = torch.from_numpy(p.t), torch.from_numpy(p.t2)
    if p.f64:
        _torch_differences(torch, loss, x, g, t, t2)
    xd = x.detach()
    _close(torch.func.grad(loss)(xd).numpy(), g.detach().numpy(), tol, tol)
    x2 = xd * 0.5 + 1.0
    batched = torch.func.vmap(f)(torch.stack([xd, x2]))
    for b, one, two in zip(batched, f(xd), f(x2)):
        _close(b[0].numpy(), one.numpy(), tol, tol)
        _close(b[1].numpy(), two.numpy(), tol, tol)
    _, tangent = torch.func.jvp(f, (xd,), (t,))
    lhs = sum((o * torch.from_numpy(np.asarray(c)).to(o.dtype)).sum() for o, c in zip(tangent, p.cots))
    _close(lhs.item(), (g.detach() * t).sum().item(), tol * 10, tol * 10)
    if xd.numel() <= 4096:
        _close(torch.func.jacrev(loss)(xd).numpy(), g.detach().numpy(), tol, tol)


def _torch_differences(torch, loss, x, g, t, t2):
    """The gradient and the second order (autograd with create_graph) against central differences."""
    eps = 1e-6
    with torch.no_grad():
        fd = (loss(x + eps * t) - loss(x - eps * t)) / (2 * eps)
    _close((g * t).sum().item(), fd.item(), 1e-5, 1e-6)
    if g.requires_grad:  # second order (a piecewise-linear op's gradient may not depend on x at all)
        (gg,) = torch.autograd.grad((g * t2).sum(), x, allow_unused=True)
        second = 0.0 if gg is None else (gg * t).sum().item()
    else:
        second = 0.0

    def grad_at(v):
        v = v.detach().requires_grad_(True)
        return torch.autograd.grad(loss(v), v)[0]

    fd2 = ((grad_at(x + eps * t) * t2).sum() - (grad_at(x - eps * t) * t2).sum()) / (2 * eps)
    _close(second, fd2.item(), 1e-4, 1e-5)
