"""torch 2.13 CPU as the oracle: reference outputs, gradients and second-order values from torch's own ops.

Nothing here calls poolspec.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

_TORCH_DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
                 "float64": torch.float64, "int64": torch.int64}


def torch_fn(op: str, args: dict[str, Any]):
    """The torch.nn.functional call equivalent to poolspec's ``op(x, **args)``."""
    if op.startswith("avg_pool") and "dilation" in args:
        # poolspec's dilation extension: torch's avg_pool has none, and 1 (every entry) is the same call without it
        d = args["dilation"]
        if any(v != 1 for v in (d if isinstance(d, (tuple, list)) else (d,))):
            return lambda x: dilated_avg_pool(op, x, args)
        args = {k: v for k, v in args.items() if k != "dilation"}
    if op == "avg_pool1d" and args.get("divisor_override") is not None:
        # torch's avg_pool1d has no divisor_override: the same pooling as a 2-d one over a unit axis.
        a = dict(args)
        k, s, p = (a.pop(key) for key in ("kernel_size", "stride", "padding"))
        def unit(v, first):
            return None if v is None else (first, v if isinstance(v, int) else v[0])

        return lambda x: F.avg_pool2d(x.unsqueeze(-2), unit(k, 1), unit(s, 1), unit(p, 0), **a).squeeze(-2)
    if op == "avg_pool1d":
        args = {k: v for k, v in args.items() if k != "divisor_override"}
    if op == "lp_pool1d" and isinstance(args.get("kernel_size"), tuple) and len(args["kernel_size"]) == 1:
        # deviation lp_pool1d_tuple_kernel: torch's wrapper multiplies by the tuple and raises; (k,) means k
        args = dict(args, kernel_size=args["kernel_size"][0])
    fn = getattr(F, op)
    return lambda x: fn(x, **args)


def reference(op: str, x: np.ndarray, dtype: str, args: dict[str, Any],
              g: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """torch's output and, for a cotangent ``g``, its gradient.

    Half precision is computed by torch in float32 from the half values and rounded once: the rule
    poolspec documents (torch's own CPU half kernels agree in the forward; its avg_pool backward
    accumulates in half, which poolspec deliberately does not).
    """
    fn = torch_fn(op, args)
    tdt = _TORCH_DTYPES[dtype]
    compute = torch.float32 if dtype in ("float16", "bfloat16") else tdt
    xr = torch.from_numpy(np.array(x)).to(tdt).to(compute)
    if g is not None:
        xr.requires_grad_(True)
    out = fn(xr)
    result = {"output": out}
    if g is not None and out.numel() == 0:
        result["grad_input"] = torch.zeros_like(xr)  # torch's backward refuses an empty output; d/dx is 0
    elif g is not None:
        (result["grad_input"],) = torch.autograd.grad(out, xr, torch.from_numpy(np.array(g)).to(tdt).to(compute))
    return {k: _np(v.to(tdt)) for k, v in result.items()}


def double_backward(op: str, x: np.ndarray, args: dict[str, Any], g: np.ndarray, v: np.ndarray) -> np.ndarray:
    """d/d(grad_output) of <grad_input, v> through torch's own double backward, float64."""
    fn = torch_fn(op, args)
    xr = torch.from_numpy(np.array(x)).requires_grad_(True)
    gr = torch.from_numpy(np.array(g)).requires_grad_(True)
    (grad,) = torch.autograd.grad(fn(xr), xr, gr, create_graph=True)
    (gg,) = torch.autograd.grad(grad, gr, torch.from_numpy(np.array(v)))
    return gg.detach().numpy()


def raises(op: str, x_shape: tuple[int, ...], dtype: str, args: dict[str, Any]) -> bool:
    """Whether torch refuses the call."""
    xt = torch.zeros(x_shape, dtype=_TORCH_DTYPES.get(dtype, torch.float64))
    try:
        torch_fn(op, args)(xt)
    except Exception:
        return True
    return False


def _np(t: Any) -> np.ndarray:
    t = t.detach()
    if t.dtype == torch.bfloat16:
        t = t.float()
    return t.numpy()


def max_reference(op: str, x: np.ndarray, dtype: str, args: dict[str, Any],
                  g: np.ndarray | None) -> dict[str, np.ndarray]:
    """torch's values, int64 indices and (floating dtypes, cotangent g) gradient of a max op."""
    fn = getattr(F, op)
    tdt = _TORCH_DTYPES.get(dtype) or getattr(torch, dtype)
    compute = torch.float32 if dtype in ("float16", "bfloat16") else tdt
    xr = torch.from_numpy(np.array(x)).to(tdt).to(compute)
    if g is not None:
        xr.requires_grad_(True)
    values, indices = fn(xr, **{**args, "return_indices": True})
    result = {"output": _np(values.to(tdt)), "indices": indices.numpy()}
    if g is not None and values.numel() == 0:
        result["grad_input"] = _np(torch.zeros_like(xr).to(tdt))  # torch's backward refuses an empty output
    elif g is not None:
        (grad,) = torch.autograd.grad(values, xr, torch.from_numpy(np.array(g)).to(tdt).to(compute))
        result["grad_input"] = _np(grad.to(tdt))
    return result


# ----------------------------------------------------------------------------------------------- interpolate

_RANK = {"nearest": 3, "nearest-exact": 3, "area": 3, "linear": 3, "bilinear": 4, "bicubic": 4, "lanczos": 4,
         "trilinear": 5}


def _per_axis(value: Any, n: int) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


def interp_axes(shape: tuple[int, ...], kw: dict[str, Any]) -> list[tuple[int, int, float | None]]:
    """(L, O, the scale factor given for the axis or None) per spatial axis, with torch's output size rule."""
    n = len(shape) - 2
    if kw.get("size") is not None:
        return [(L, int(O), None) for L, O in zip(shape[2:], _per_axis(kw["size"], n))]
    sfs = _per_axis(kw["scale_factor"], n)
    return [(L, int(np.floor(float(L) * sf)), sf) for L, sf in zip(shape[2:], sfs)]


@lru_cache(maxsize=4096)
def axis_matrix(mode: str, antialias: bool, align_corners: bool | None, recompute: bool | None, L: int, O: int,
                sf: float | None) -> np.ndarray:
    """The (O, L) matrix of torch's own kernel along one axis, float64: torch's interpolate of the identity basis
    along the last axis of a tensor of the mode's rank whose other spatial axes are 1 -> 1. The 1-d nearest
    kernels are torch's generic ones, and a width-changing axis never meets the antialias width-one bug."""
    if mode == "lanczos" and not antialias:
        return _jax_lanczos_matrix(L, O, sf if sf is not None and not recompute else None)
    rank = _RANK[mode]
    x = torch.eye(L, dtype=torch.float64).reshape((L,) + (1,) * (rank - 2) + (L,))
    kw: dict[str, Any] = dict(mode=mode)
    if align_corners is not None:
        kw["align_corners"] = align_corners
    if antialias:
        kw["antialias"] = True
    if sf is None:
        kw["size"] = (1,) * (rank - 3) + (O,)
    else:
        kw["scale_factor"] = (1.0,) * (rank - 3) + (sf,)
        if recompute is not None:
            kw["recompute_scale_factor"] = recompute
    y = F.interpolate(x, **kw)
    assert y.shape[-1] == O
    m = y.reshape(L, O).T.numpy().copy()
    m.setflags(write=False)
    return m


def _jax_lanczos_matrix(L: int, O: int, sf: float | None) -> np.ndarray:
    """jax.image's Lanczos-3 without antialiasing, as a matrix: scale O/L, or sf where a scale factor reaches the
    kernel (jax.image.scale_and_translate with that scale and no translation)."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    scale = float(O) / L if sf is None else float(sf)
    m = jax.image.scale_and_translate(jnp.eye(L, dtype=jnp.float64), (L, O), (1,), jnp.array([scale]),
                                      jnp.array([0.0]), "lanczos3", antialias=False)
    return np.asarray(m).T.copy()


def jax_lanczos_near_integer(L: int, O: int, sf: float | None) -> bool:
    """Whether jax's lanczos3 uses its small-argument shortcut (kernel taken as 1 for 0 < |x| <= 1e-3), which
    is off the exact kernel by up to 2e-6 relative."""
    scale = float(O) / L if sf is None else float(sf)
    c = (np.arange(O) + 0.5) / scale - 0.5
    d = np.abs(c - np.round(c))
    return bool(((d > 0) & (d <= 1e-3)).any())


def interp_matrices(shape: tuple[int, ...], kw: dict[str, Any]) -> list[np.ndarray]:
    recompute = kw.get("recompute_scale_factor")
    mode = kw["mode"]
    out = []
    for L, O, sf in interp_axes(shape, kw):
        if mode == "area":
            m = F.adaptive_avg_pool1d(torch.eye(L, dtype=torch.float64).reshape(L, 1, L), O).reshape(L, O).T.numpy()
        else:
            m = axis_matrix(mode, bool(kw.get("antialias")), kw.get("align_corners"), recompute, L, O, sf)
        out.append(m)
    return out


def apply_axes(a: np.ndarray, matrices: list[np.ndarray], transpose: bool = False) -> np.ndarray:
    """The tensor product of per-axis matrices applied to the trailing axes of ``a`` (float64)."""
    n = len(matrices)
    for i, m in enumerate(matrices):
        axis = a.ndim - n + i
        a = np.moveaxis(np.tensordot(a, m if transpose else m.T, axes=([axis], [0])), -1, axis)
    return a


def uint8_interpolate(x: np.ndarray, kw: dict[str, Any], channels_last: bool = False) -> np.ndarray:
    """torch's uint8 interpolate (its CPU integer pipeline). A width-1 output is made a channel at a time, which
    torch's AVX2 kernel computes right where its generic kernel (more than 4 channels) gives every row the first
    row's value (deviation interpolate_uint8_single_column); a CPU or build without AVX2 has that bug for every
    channel count, and gets a RuntimeError here."""
    if torch.backends.cpu.get_cpu_capability() == "DEFAULT":
        raise RuntimeError("torch's uint8 references need its AVX2 kernels (this CPU or build has none)")
    t = torch.from_numpy(np.ascontiguousarray(x))
    if F.interpolate(torch.zeros(x.shape), **kw).shape[-1] == 1:
        return np.concatenate([F.interpolate(t[:, i:i + 1], **kw).numpy() for i in range(x.shape[1])], axis=1)
    if channels_last:
        t = t.contiguous(memory_format=torch.channels_last)
    return np.ascontiguousarray(F.interpolate(t, **kw).numpy())


# ----------------------------------------------------------------------------------------------- dilated avg_pool

def _per_axis_ints(value: Any, n: int) -> tuple[int, ...]:
    return tuple(int(v) for v in value) if isinstance(value, (tuple, list)) else (int(value),) * n


def _avg_pads(padding: Any, L: tuple[int, ...], k: tuple[int, ...], s: tuple[int, ...], d: tuple[int, ...]
              ) -> list[tuple[int, int]]:
    """(low, high) zero padding per axis: torch's int padding, (low, high) pairs, 'valid', or TensorFlow's 'same'
    (ceil(L / s) outputs, total max((O - 1) s + (k - 1) d + 1 - L, 0), the odd cell at the end)."""
    n = len(L)
    if padding == "valid":
        return [(0, 0)] * n
    if padding == "same":
        total = [max((-(-L[i] // s[i]) - 1) * s[i] + (k[i] - 1) * d[i] + 1 - L[i], 0) for i in range(n)]
        return [(t // 2, t - t // 2) for t in total]
    if isinstance(padding, (tuple, list)) and any(isinstance(p, (tuple, list)) for p in padding):
        return [(int(a), int(b)) for a, b in padding]
    return [(p, p) for p in _per_axis_ints(padding, n)]


def dilated_avg_pool(op: str, x: Any, args: dict[str, Any]) -> Any:
    """poolspec's ``avg_pool{n}d(x, **args)`` with a ``dilation``, from torch's own conv: the window sums are
    ``conv{n}d`` with a ones kernel (groups=C, the dilation and stride) over the zero-padded input, the divisor the
    same conv over a ones mask: 1 on the padded axis [-low, L + high) with count_include_pad, else on the input only,
    0 on the ceil_mode overhang past the padding (so a window of padding taps only is 0 / 0 = NaN without
    count_include_pad); or divisor_override. ``x`` a float torch tensor (N, C, *S) or (C, *S); int64 inputs are
    summed exactly in float64 and divided with truncation toward zero (torch's integer avg_pool)."""
    n = int(op[len("avg_pool")])
    unbatched = x.ndim == n + 1
    xb = x.unsqueeze(0) if unbatched else x
    L = tuple(int(e) for e in xb.shape[2:])
    k = _per_axis_ints(args["kernel_size"], n)
    stride = args.get("stride")
    s = k if stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0) else _per_axis_ints(stride, n)
    d = _per_axis_ints(args.get("dilation", 1), n)
    pads = _avg_pads(args.get("padding", 0), L, k, s, d)
    ceil = bool(args.get("ceil_mode", False))
    out, extra = [], []
    for i in range(n):
        span = (k[i] - 1) * d[i] + 1
        total = L[i] + pads[i][0] + pads[i][1] - span
        o = (-(-total // s[i]) if ceil else total // s[i]) + 1
        if ceil and (o - 1) * s[i] >= L[i] + pads[i][0]:
            o -= 1
        out.append(o)
        extra.append(max(0, (o - 1) * s[i] + span - (L[i] + pads[i][0] + pads[i][1])))
    is_int = xb.dtype == torch.int64
    work = xb.to(torch.float64) if is_int else xb
    C = int(work.shape[1])
    conv = (F.conv1d, F.conv2d, F.conv3d)[n - 1]
    weight = torch.ones((C, 1) + k, dtype=work.dtype)

    def window_sums(t: Any) -> Any:
        flat = [e for i in reversed(range(n)) for e in (pads[i][0], pads[i][1] + extra[i])]
        y = conv(F.pad(t, flat), weight, stride=s, dilation=d, groups=C)
        return y[(Ellipsis,) + tuple(slice(0, o) for o in out)]

    sums = window_sums(work)
    div = args.get("divisor_override")
    if div is not None:
        y = torch.div(sums, div, rounding_mode="trunc") if is_int else sums / div
    else:
        ones = torch.ones((1, C) + L, dtype=work.dtype)
        if args.get("count_include_pad", True):
            flat = [e for i in reversed(range(n)) for e in pads[i]]
            mask = F.pad(ones, flat, value=1.0)  # the padded axis counts, then the overhang (zeros) does not
            flat = [e for i in reversed(range(n)) for e in (0, extra[i])]
            counts = conv(F.pad(mask, flat), weight, stride=s, dilation=d, groups=C)
            counts = counts[(Ellipsis,) + tuple(slice(0, o) for o in out)]
        else:
            counts = window_sums(ones)
        y = torch.div(sums, counts, rounding_mode="trunc") if is_int else sums / counts
    y = y.to(torch.int64) if is_int else y
    return y.squeeze(0) if unbatched else y


def dilated_avg_reference(op: str, x: np.ndarray, dtype: str, args: dict[str, Any],
                          g: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """:func:`dilated_avg_pool`'s output and, for a cotangent ``g``, torch autograd's gradient through it; half
    precision computed in float32 from the half values and rounded once (as :func:`reference`)."""
    tdt = _TORCH_DTYPES[dtype]
    compute = torch.float32 if dtype in ("float16", "bfloat16") else tdt
    xr = torch.from_numpy(np.array(x)).to(tdt).to(compute)
    if g is not None:
        xr.requires_grad_(True)
    out = dilated_avg_pool(op, xr, args)
    result = {"output": out}
    if g is not None:
        (result["grad_input"],) = torch.autograd.grad(out, xr, torch.from_numpy(np.array(g)).to(tdt).to(compute))
    return {key: _np(v.to(tdt)) for key, v in result.items()}
