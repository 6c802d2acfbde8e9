"""``poolspec.frontends.torch.nn`` against the live ``torch.nn`` modules: seeded random configurations of every
class (constructor arguments over their legal ranges and a little beyond: ceil_mode, padding, dilation,
return_indices, count_include_pad, divisor_override, output_size with None entries, Upsample's size /
scale_factor / mode / align_corners / recompute_scale_factor), outputs compared in float64 (rtol 1e-12) on every
backend (all configurations on torch and NumPy, the first ones on the others), indices exactly; on torch also the
gradient, ``repr``/``extra_repr``, the attributes and the state dict. A configuration torch refuses (at
construction or call) must be refused by poolspec too (ValueError or TypeError); the counts of configurations per
class and of those torch refuses are in ``COUNTS``/``test_configuration_counts``. Also: nn.Sequential,
torch.compile(fullgraph=True), pickling, state dicts, bad constructor arguments, and the plain classes on NumPy
without torch ever imported (a subprocess).

Tallies of the 2,440 configurations on torch (NumPy's are the same): passed 2,361; torch refuses 60 (REFUSED);
poolspec refuses 15 MaxPool configurations torch answers with -inf (a window wholly in the padding, DEVIATIONS);
4 UpsamplingNearest2d configurations differ inside torch's recorded nearest-shortcut zone (_quirks). LPPool1d's 55
tuple kernels are compared with torch's int kernel (its wrapper bug); MaxUnpool's gradients where indices repeat
(83 configurations) are compared at the unique ones (poolspec's documented winner rule)."""

from __future__ import annotations

import json
import math
import pickle
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from poolspec.frontends.torch import nn as psnn  # noqa: E402

RTOL = ATOL = 1e-12
CLASSES = list(psnn.__all__[1:])
# configurations per class on torch and NumPy (the first FEW on jax, dask, array-api-strict, cupy)
COUNTS = {name: 100 for name in CLASSES}
COUNTS.update({"Upsample": 200, "MaxPool2d": 120, "AvgPool2d": 120})
FEW = 12


def _ints(rng: np.random.Generator, n: int, lo: int, hi: int) -> tuple[int, ...]:
    return tuple(int(v) for v in rng.integers(lo, hi + 1, n))


def _arg(rng: np.random.Generator, vals: tuple[Any, ...], n: int) -> Any:
    """An int where every entry is equal (half the time), else the tuple (a list now and then)."""
    if len(set(vals)) == 1 and rng.random() < 0.5:
        return vals[0]
    return list(vals) if rng.random() < 0.1 else tuple(vals)


def _shape(rng: np.random.Generator, spatial: tuple[int, ...], unbatched: bool = True) -> tuple[int, ...]:
    lead = (int(rng.integers(1, 4)),) if unbatched and rng.random() < 0.2 else _ints(rng, 2, 1, 3)
    return lead + spatial


class Config:
    """One drawn configuration: the constructor's arguments, the input, and forward's extra arguments."""

    def __init__(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], x: np.ndarray,
                 extra: tuple[Any, ...] = (), samples: np.ndarray | None = None) -> None:
        self.name, self.args, self.kwargs, self.x, self.extra, self.samples = name, args, kwargs, x, extra, samples
        self.compute: Any = None  # the torch module whose numbers are compared (torch's own, but for its bugs)

    def __repr__(self) -> str:
        return f"{self.name}(*{self.args!r}, **{self.kwargs!r}) on {self.x.shape}"


def _max_pool(n: int) -> Callable[[np.random.Generator], Config]:
    def draw(rng: np.random.Generator) -> Config:
        k, d = _ints(rng, n, 1, 4), _ints(rng, n, 1, 3)
        eff = tuple((ki - 1) * di + 1 for ki, di in zip(k, d))
        p = tuple(int(rng.integers(0, ki // 2 + 1)) for ki in k)  # torch: padding <= kernel_size // 2
        s = None if rng.random() < 0.3 else _ints(rng, n, 1, 4)
        length = tuple(int(rng.integers(max(1, e - 2 * pi), e - 2 * pi + 6)) for e, pi in zip(eff, p))
        kw: dict[str, Any] = {"stride": None if s is None else _arg(rng, s, n), "padding": _arg(rng, p, n),
                              "dilation": _arg(rng, d, n), "return_indices": bool(rng.random() < 0.5),
                              "ceil_mode": bool(rng.random() < 0.5)}
        kw = {key: v for key, v in kw.items() if rng.random() < 0.8 or key in ("padding", "dilation")}
        return Config(f"MaxPool{n}d", (_arg(rng, k, n),), kw, rng.standard_normal(_shape(rng, length)))

    return draw


def _avg_pool(n: int) -> Callable[[np.random.Generator], Config]:
    def draw(rng: np.random.Generator) -> Config:
        k = _ints(rng, n, 1, 4)
        p = tuple(int(rng.integers(0, ki // 2 + 1)) for ki in k)
        s = None if rng.random() < 0.3 else _ints(rng, n, 1, 4)
        # torch's 3-d average pool wants every axis at least the kernel, padding aside
        low = k if n == 3 else tuple(max(1, ki - 2 * pi) for ki, pi in zip(k, p))
        length = tuple(int(rng.integers(lo, lo + 6)) for lo in low)
        kw: dict[str, Any] = {"stride": None if s is None else _arg(rng, s, n), "padding": _arg(rng, p, n),
                              "ceil_mode": bool(rng.random() < 0.5), "count_include_pad": bool(rng.random() < 0.5)}
        if n > 1:
            kw["divisor_override"] = None if rng.random() < 0.6 else int(rng.choice([-3, 1, 2, 3, 5]))
        kw = {key: v for key, v in kw.items() if rng.random() < 0.8 or key == "padding"}
        return Config(f"AvgPool{n}d", (_arg(rng, k, n),), kw, rng.standard_normal(_shape(rng, length)))

    return draw


def _adaptive(kind: str, n: int) -> Callable[[np.random.Generator], Config]:
    def draw(rng: np.random.Generator) -> Config:
        length = _ints(rng, n, 1, 9)
        out: tuple[Any, ...] = _ints(rng, n, 1, 6)
        if n > 1 and rng.random() < 0.4:
            out = tuple(None if rng.random() < 0.4 else o for o in out)
        size = out[0] if (n == 1 or len(set(out)) == 1) and rng.random() < 0.5 else out
        kw = {"return_indices": bool(rng.random() < 0.5)} if kind == "Max" and rng.random() < 0.8 else {}
        return Config(f"Adaptive{kind}Pool{n}d", (size,), kw, rng.standard_normal(_shape(rng, length)))

    return draw


def _lp_pool(n: int) -> Callable[[np.random.Generator], Config]:
    def draw(rng: np.random.Generator) -> Config:
        norm = [1, 2, 3, 1.0, 2.0, 1.5, 2.5, 4][int(rng.integers(0, 8))]
        k = _ints(rng, n, 1, 4)
        s = None if rng.random() < 0.3 else _ints(rng, n, 1, 4)
        length = tuple(int(rng.integers(ki, ki + 6)) for ki in k)
        kw: dict[str, Any] = {"stride": None if s is None else _arg(rng, s, n), "ceil_mode": bool(rng.random() < 0.5)}
        kw = {key: v for key, v in kw.items() if rng.random() < 0.8}
        x = rng.standard_normal(_shape(rng, length))
        if norm != int(norm):  # a fractional power of a negative window sum is NaN in torch and poolspec alike
            x = np.abs(x)
        return Config(f"LPPool{n}d", (norm, _arg(rng, k, n)), kw, x)

    return draw


def _max_unpool(n: int) -> Callable[[np.random.Generator], Config]:
    def draw(rng: np.random.Generator) -> Config:
        k = _ints(rng, n, 1, 4)
        p = tuple(int(rng.integers(0, ki // 2 + 1)) for ki in k)
        s = _ints(rng, n, 1, 4) if rng.random() < 0.7 else k
        length = tuple(int(rng.integers(max(1, ki - 2 * pi), ki - 2 * pi + 6)) for ki, pi in zip(k, p))
        shape = _shape(rng, length)
        x = torch.from_numpy(rng.standard_normal(shape))
        pool = getattr(torch.nn.functional, f"max_pool{n}d")
        values, indices = pool(x, k, s, p, return_indices=True)
        default = tuple((v - 1) * si - 2 * pi + ki for v, si, pi, ki in zip(values.shape[-n:], s, p, k))
        # without output_size an input longer than the default may hold indices past it (torch refuses them):
        # mostly given then
        choice = rng.random() if all(de >= L for de, L in zip(default, length)) else 0.5 + 0.5 * rng.random()
        choice = rng.random() if choice >= 0.5 and rng.random() < 0.1 else choice
        output_size: Any = None if choice < 0.5 else length if choice < 0.8 or len(shape) == n + 1 else list(shape)
        kw: dict[str, Any] = {"stride": _arg(rng, s, n) if s != k or rng.random() < 0.5 else None,
                              "padding": _arg(rng, p, n)}
        kw = {key: v for key, v in kw.items() if rng.random() < 0.8}
        extra = (indices.numpy(),) if output_size is None and rng.random() < 0.5 else (indices.numpy(), output_size)
        return Config(f"MaxUnpool{n}d", (_arg(rng, k, n),), kw, values.numpy(), extra)

    return draw


def _fractional(n: int) -> Callable[[np.random.Generator], Config]:
    def draw(rng: np.random.Generator) -> Config:
        length = _ints(rng, n, 2, 8 if n == 2 else 6)
        k = tuple(int(rng.integers(1, min(3, L if n == 2 else L - 1) + 1)) for L in length)
        kw: dict[str, Any] = {}
        # torch: out + k - 1 <= L in 2-d, < L in 3-d (its 3-d check is strict)
        out = tuple(int(rng.integers(1, max(1, L - ki + (1 if n == 2 else 0)) + 1)) for L, ki in zip(length, k))
        if rng.random() < 0.5:
            kw["output_size"] = _arg(rng, out, n)
        else:
            ratio = tuple((min(o, L - 1) + float(rng.uniform(0.05, 0.45))) / L if rng.random() < 0.9
                          else float(rng.uniform(0.3, 0.95)) for o, L in zip(out, length))
            kw["output_ratio"] = ratio[0] if len(set(out)) == 1 and len(set(length)) == 1 else ratio
        if rng.random() < 0.7:
            kw["return_indices"] = bool(rng.random() < 0.5)
        shape = _shape(rng, length)
        batch = 1 if len(shape) == n + 1 else shape[0]
        samples = rng.random((batch, shape[-n - 1], n))
        return Config(f"FractionalMaxPool{n}d", (_arg(rng, k, n),), kw, rng.standard_normal(shape), samples=samples)

    return draw


_MODES = {1: ("nearest", "nearest-exact", "area", "linear"), 2: ("nearest", "nearest-exact", "area", "bilinear",
                                                                  "bicubic"),
          3: ("nearest", "nearest-exact", "area", "trilinear")}
_LINEAR = ("linear", "bilinear", "bicubic", "trilinear")


def _upsample_sizes(rng: np.random.Generator, n: int) -> dict[str, Any]:
    if rng.random() < 0.5:
        size = _ints(rng, n, 1, 12)
        return {"size": size[0] if len(set(size)) == 1 and rng.random() < 0.5 else size}
    scales = tuple(float(v) for v in rng.choice([0.5, 0.75, 1.0, 1.3, 1.5, 1.7, 2.0, 2.5, 3.0], n))
    if rng.random() < 0.3:
        return {"scale_factor": int(rng.integers(1, 4))}
    return {"scale_factor": scales[0] if rng.random() < 0.4 else scales}


def _upsample(rng: np.random.Generator) -> Config:
    n = int(rng.integers(1, 4))
    kw = _upsample_sizes(rng, n)
    mode = str(rng.choice(_MODES[n])) if rng.random() < 0.95 else str(rng.choice(_LINEAR))  # a wrong rank now and then
    kw["mode"] = mode
    if mode in _LINEAR and rng.random() < 0.8:
        kw["align_corners"] = [None, True, False][int(rng.integers(0, 3))]
    elif rng.random() < 0.03:
        kw["align_corners"] = True  # refused for the modes that do not interpolate
    if rng.random() < (0.5 if "scale_factor" in kw else 0.1):  # with a size, True is refused
        kw["recompute_scale_factor"] = [None, True, False][int(rng.integers(0, 3))]
    x = rng.standard_normal(_shape(rng, _ints(rng, n, 1, 7), unbatched=False))
    return Config("Upsample", (), kw, x)


def _upsampling2d(name: str) -> Callable[[np.random.Generator], Config]:
    def draw(rng: np.random.Generator) -> Config:
        kw = _upsample_sizes(rng, 2)
        kw.pop("recompute_scale_factor", None)
        x = rng.standard_normal(_shape(rng, _ints(rng, 2, 1, 7), unbatched=False))
        return Config(name, (), kw, x)

    return draw


DRAW: dict[str, Callable[[np.random.Generator], Config]] = {
    **{f"MaxPool{n}d": _max_pool(n) for n in (1, 2, 3)}, **{f"AvgPool{n}d": _avg_pool(n) for n in (1, 2, 3)},
    **{f"Adaptive{k}Pool{n}d": _adaptive(k, n) for k in ("Avg", "Max") for n in (1, 2, 3)},
    **{f"LPPool{n}d": _lp_pool(n) for n in (1, 2, 3)}, **{f"MaxUnpool{n}d": _max_unpool(n) for n in (1, 2, 3)},
    **{f"FractionalMaxPool{n}d": _fractional(n) for n in (2, 3)}, "Upsample": _upsample,
    "UpsamplingNearest2d": _upsampling2d("UpsamplingNearest2d"),
    "UpsamplingBilinear2d": _upsampling2d("UpsamplingBilinear2d"),
}


def _configs(name: str, count: int) -> list[Config]:
    rng = np.random.default_rng(2026 + CLASSES.index(name))
    return [DRAW[name](rng) for _ in range(count)]


def _build(lib: Any, config: Config, samples: Any) -> Any:
    kwargs = dict(config.kwargs)
    if samples is not None:
        kwargs["_random_samples"] = samples
    return getattr(lib, config.name)(*config.args, **kwargs)


def _public_vars(module: Any) -> dict[str, Any]:
    return {k: v for k, v in vars(module).items() if not k.startswith("_")}


def _torch_reference(config: Config) -> tuple[Any, Any]:
    """torch's module and output for ``config``, or (None, the exception) where torch refuses it."""
    samples = None if config.samples is None else torch.from_numpy(config.samples)
    try:
        module = _build(torch.nn, config, samples)
        extra = tuple(torch.from_numpy(e) if isinstance(e, np.ndarray) else e for e in config.extra)
        if config.name == "LPPool1d" and isinstance(config.args[1], (tuple, list)):
            # torch's wrapper bug (docs/TORCH_NUMERICS.md, lp_pool): F.lp_pool1d multiplies by kernel_size itself,
            # so a 1-tuple raises TypeError; poolspec takes it, and its numbers are those of the int k
            config.compute = torch.nn.LPPool1d(config.args[0], config.args[1][0], **config.kwargs)
        else:
            config.compute = module
        return module, config.compute(torch.from_numpy(config.x), *extra)
    except (RuntimeError, ValueError, TypeError, IndexError) as e:
        return None, e


def _as_tuple(y: Any) -> tuple[Any, ...]:
    return tuple(y) if isinstance(y, (tuple, list)) else (y,)


def _compare(got: tuple[np.ndarray, ...], want: tuple[np.ndarray, ...], config: Config) -> None:
    assert len(got) == len(want), config
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, (config, g.shape, w.shape, g.dtype, w.dtype)
        if w.dtype == np.int64:
            np.testing.assert_array_equal(g, w, err_msg=repr(config))
        else:
            np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL, err_msg=repr(config))


def _run(name: str, backend: Any, count: int) -> dict[str, int]:
    """Every drawn configuration of ``name`` on ``backend`` against torch; returns the tallies."""
    tally = {"passed": 0, "torch_refuses": 0, "poolspec_refuses": 0, "documented_deviation": 0}
    for config in _configs(name, count):
        tally[_run_one(config, backend)] += 1
    return tally


def _run_one(config: Config, backend: Any) -> str:
    """One configuration on ``backend`` against torch: "passed", "torch_refuses" (poolspec refuses it too) or
    "poolspec_refuses" (a documented deviation, DEVIATIONS)."""
    on_torch = backend.name == "torch"
    if True:
        want_module, want = _torch_reference(config)
        samples = None if config.samples is None else backend.asarray(config.samples)
        extra = tuple(backend.asarray(e) if isinstance(e, np.ndarray) else e for e in config.extra)
        if want_module is None:
            with pytest.raises((ValueError, TypeError)):  # read back: a lazy array's checks run at compute
                backend.to_numpy(_as_tuple(_build(psnn, config, samples)(backend.asarray(config.x), *extra))[0])
            return "torch_refuses"
        module = _build(psnn, config, samples)
        assert repr(module) == repr(want_module) and module.extra_repr() == want_module.extra_repr(), config
        assert _public_vars(module) == _public_vars(want_module), config
        x = backend.asarray(config.x)
        if on_torch:
            x.requires_grad_(True)
        try:
            got = _as_tuple(module(x, *extra))
        except ValueError as e:
            if any(d in str(e) for d in DEVIATIONS):
                return "poolspec_refuses"
            raise
        quirks = _quirks(config)
        try:
            _compare(tuple(backend.to_numpy(g) for g in got), tuple(w.numpy() for w in _as_tuple(want)), config)
        except AssertionError:
            if not quirks["forward"]:
                raise
            return "documented_deviation"
        if on_torch and not quirks["backward"]:
            assert isinstance(module, torch.nn.Module) and isinstance(module, getattr(psnn.modules, config.name))
            assert module.state_dict().keys() == want_module.state_dict().keys() and not list(module.parameters())
            xt = torch.from_numpy(config.x).requires_grad_(True)
            tex = tuple(torch.from_numpy(e) if isinstance(e, np.ndarray) else e for e in config.extra)
            ref = _as_tuple(config.compute(xt, *tex))[0]
            if ref.numel():
                weight = torch.from_numpy(np.random.default_rng(0).standard_normal(tuple(ref.shape)))
                (want_grad,) = torch.autograd.grad((ref * weight).sum(), xt)
                (got_grad,) = torch.autograd.grad((got[0] * weight).sum(), x)
                keep = _unique_indices(config)
                np.testing.assert_allclose(got_grad.numpy()[keep], want_grad.numpy()[keep], rtol=RTOL, atol=ATOL,
                                           err_msg=f"gradient: {config!r}")
    return "passed"


def _unique_indices(config: Config) -> Any:
    """Where MaxUnpool's gradient is compared: the inputs whose index no other input of its plane shares. A
    duplicate index (overlapping pooling windows) sends the gradient to its one winner in poolspec (its
    documented rule: the unpool is a gather, its gradient the winners' only) and to every duplicate in torch
    (a gather at every index, not the adjoint of its scatter)."""
    if not config.name.startswith("MaxUnpool"):
        return np.ones(config.x.shape, dtype=bool)
    idx = config.extra[0]
    planes = idx.reshape(-1, int(np.prod(idx.shape[-int(config.name[-2]):])))
    keep = np.array([[np.count_nonzero(row == v) == 1 for v in row] for row in planes])
    return keep.reshape(idx.shape)


def _quirks(config: Config) -> dict[str, set[str]]:
    """The recorded deviations (docs/TORCH_NUMERICS.md) whose zone an upsampling configuration is in: torch's
    direct CPU kernels differ there from its generic rule, which poolspec follows (nearest's O == L / O == 2L
    shortcut in its vectorized 2-d kernel, bicubic's equal-size backward)."""
    if not config.name.startswith("Upsampl"):
        return {"forward": set(), "backward": set()}
    from poolspec.families.interpolate.conformance import interp_quirks

    module = _build(torch.nn, config, None)
    args = {"mode": module.mode, "size": module.size, "scale_factor": module.scale_factor,
            "recompute_scale_factor": module.recompute_scale_factor, "align_corners": module.align_corners}
    return interp_quirks(tuple(config.x.shape), args)


# poolspec's documented refusals of calls torch answers (its cards say why): a max-pool window wholly in the
# padding, where torch returns -inf
DEVIATIONS = ("without a single input cell",)


@pytest.mark.parametrize("name", CLASSES)
def test_module_against_torch(name, backend):
    count = COUNTS[name] if backend.name in ("torch", "numpy") else FEW
    tally = _run(name, backend, count)
    assert sum(tally.values()) == count and tally["passed"] >= count * 0.7, tally
    # poolspec refuses only its documented cases (max-pool windows wholly in the padding), and differs from torch
    # only in the zones of torch's recorded CPU-kernel deviations (nearest's O == L / O == 2L shortcut)
    assert not tally["poolspec_refuses"] or name.startswith("MaxPool"), tally
    assert not tally["documented_deviation"] or name in ("Upsample", "UpsamplingNearest2d"), tally


def test_configuration_counts():
    """At least 2,000 configurations in all, each class with most of its draws legal in torch (the refusals are
    configurations torch rejects and poolspec rejects too: pinned here, so that a change of the draws shows)."""
    refused = {name: sum(_torch_reference(c)[0] is None for c in _configs(name, COUNTS[name])) for name in CLASSES}
    assert sum(COUNTS.values()) >= 2000
    assert refused == REFUSED, json.dumps(refused)


# the configurations torch refuses, per class (poolspec refuses each of them too: test_module_against_torch)
REFUSED = {**{name: 0 for name in CLASSES}, "AdaptiveAvgPool2d": 4, "AdaptiveAvgPool3d": 2, "AdaptiveMaxPool2d": 3,
           "MaxUnpool1d": 3, "MaxUnpool2d": 7, "MaxUnpool3d": 17, "FractionalMaxPool3d": 2, "Upsample": 13,
           "UpsamplingNearest2d": 4, "UpsamplingBilinear2d": 5}


def test_signatures_match_torch():
    import inspect

    for name in CLASSES:
        ours = inspect.signature(getattr(psnn.modules, name))
        theirs = inspect.signature(getattr(torch.nn, name))
        assert list(ours.parameters) == list(theirs.parameters), name
        for p in ours.parameters.values():
            assert p.default == theirs.parameters[p.name].default, (name, p.name)


def test_classes_are_torch_modules_where_torch_is_imported():
    pool = psnn.MaxPool2d(2)
    assert issubclass(psnn.MaxPool2d, torch.nn.Module) and isinstance(pool, psnn.modules.MaxPool2d)
    assert type(pool).__name__ == "MaxPool2d" and pool._get_name() == "MaxPool2d"
    from poolspec.frontends.torch.nn import MaxPool2d

    assert MaxPool2d is type(pool)
    assert psnn.Conv2d is torch.nn.Conv2d  # other names are torch.nn's
    assert psnn.functional.max_pool2d.__module__.startswith("poolspec.")


def test_sequential_state_dict_pickle_and_to():
    model = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 3, padding=1), psnn.MaxPool2d(2, return_indices=False),
                                psnn.AvgPool2d(3, 1, 1, count_include_pad=False), psnn.AdaptiveAvgPool2d((None, 2)),
                                psnn.Upsample(scale_factor=2, mode="bilinear"))
    native = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 3, padding=1), torch.nn.MaxPool2d(2),
                                 torch.nn.AvgPool2d(3, 1, 1, count_include_pad=False),
                                 torch.nn.AdaptiveAvgPool2d((None, 2)),
                                 torch.nn.Upsample(scale_factor=2, mode="bilinear"))
    model, native = model.double(), native.double()
    native.load_state_dict(model.state_dict())
    assert repr(model) == repr(native) and list(model.state_dict()) == list(native.state_dict())
    x = torch.randn(2, 2, 9, 8, dtype=torch.float64)
    torch.testing.assert_close(model(x), native(x), rtol=RTOL, atol=ATOL)
    clone = pickle.loads(pickle.dumps(model))
    assert repr(clone) == repr(model) and type(clone[1]) is type(model[1])
    torch.testing.assert_close(clone(x), native(x), rtol=RTOL, atol=ATOL)
    model.to(torch.float32).eval()
    assert not model[1].training and model(x.float()).dtype == torch.float32


def test_state_dict_load_like_torch():
    for ours, theirs in ((psnn.MaxPool2d(2), torch.nn.MaxPool2d(2)),
                         (psnn.Upsample(size=3), torch.nn.Upsample(size=3))):
        assert ours.state_dict() == theirs.state_dict() == {}
        assert ours.load_state_dict({}) == theirs.load_state_dict({})
        with pytest.raises(RuntimeError) as a:
            ours.load_state_dict({"weight": torch.zeros(1)})
        with pytest.raises(RuntimeError) as b:
            theirs.load_state_dict({"weight": torch.zeros(1)})
        assert str(a.value) == str(b.value)
        assert ours.load_state_dict({"weight": torch.zeros(1)}, strict=False) == \
            theirs.load_state_dict({"weight": torch.zeros(1)}, strict=False)
    samples = torch.rand(1, 2, 2, dtype=torch.float64)
    ours, theirs = (lib.FractionalMaxPool2d(2, output_size=3, _random_samples=samples) for lib in (psnn, torch.nn))
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["_random_samples"]


def test_torch_compile_fullgraph_of_a_sequential():
    def layers(lib: Any) -> Any:
        return torch.nn.Sequential(lib.MaxPool2d(3, 2, 1, ceil_mode=True), lib.AvgPool2d(2, 1, 1, divisor_override=3),
                                   lib.LPPool2d(2, 2, ceil_mode=True), lib.AdaptiveMaxPool2d((3, None)),
                                   lib.Upsample(size=(5, 7), mode="bicubic", align_corners=False),
                                   lib.AdaptiveAvgPool2d(4), lib.UpsamplingNearest2d(scale_factor=1.5))

    ours, theirs = layers(psnn), layers(torch.nn)
    compiled = torch.compile(ours, fullgraph=True, backend="aot_eager")
    x = torch.randn(2, 3, 13, 11, dtype=torch.float64, requires_grad=True)
    xn = x.detach().clone().requires_grad_(True)
    got, want = compiled(x), theirs(xn)
    torch.testing.assert_close(got, want, rtol=RTOL, atol=ATOL)
    weight = torch.randn_like(want)
    (got * weight).sum().backward()
    (want * weight).sum().backward()
    torch.testing.assert_close(x.grad, xn.grad, rtol=RTOL, atol=ATOL)


BAD = [  # (class, args, kwargs): refused by torch at construction or at call, and by poolspec where torch refuses
    ("MaxPool2d", (0,), {}), ("MaxPool2d", (2,), {"padding": 2}), ("MaxPool1d", (2,), {"stride": 0}),
    ("MaxPool3d", (2,), {"dilation": 0}), ("MaxPool2d", (2.5,), {}), ("MaxPool2d", ((2, 2, 2),), {}),
    ("AvgPool2d", (2,), {"divisor_override": 0}), ("AvgPool1d", (0,), {}), ("AvgPool3d", (2,), {"padding": 3}),
    ("AdaptiveAvgPool2d", ((2, 2, 2),), {}), ("AdaptiveMaxPool1d", (-1,), {}),
    ("LPPool2d", (2, 0), {}), ("LPPool1d", (2, 2), {"stride": 0}),
    ("MaxUnpool2d", (0,), {}),
    ("FractionalMaxPool2d", (2,), {}), ("FractionalMaxPool2d", (2,), {"output_size": 2, "output_ratio": 0.5}),
    ("FractionalMaxPool2d", (2,), {"output_ratio": 1.5}), ("FractionalMaxPool3d", (0,), {"output_size": 2}),
    ("FractionalMaxPool3d", (2,), {"output_ratio": (0.5, 0.5, 0.0)}), ("FractionalMaxPool2d", (2,), {"output_size": 9}),
    ("Upsample", (), {}), ("Upsample", (), {"size": 2, "scale_factor": 2}),
    ("Upsample", (), {"scale_factor": 2, "mode": "bogus"}),
    ("Upsample", (), {"scale_factor": 2, "mode": "nearest", "align_corners": True}),
    ("Upsample", (), {"size": 3, "recompute_scale_factor": True}),
    ("Upsample", (), {"scale_factor": 2, "mode": "linear"}),
    ("UpsamplingBilinear2d", (), {}),
]


def _input(name: str) -> Any:
    rank = int(name[-2]) if name[-1] == "d" else 2
    return torch.randn((1, 2) + (6,) * rank, dtype=torch.float64)


@pytest.mark.parametrize("name, args, kwargs", BAD, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(BAD)])
def test_bad_arguments_are_refused_where_torch_refuses(name, args, kwargs):
    try:
        theirs = getattr(torch.nn, name)(*args, **kwargs)
    except (ValueError, TypeError) as e:
        with pytest.raises(type(e)) as ours:
            getattr(psnn, name)(*args, **kwargs)
        assert str(ours.value) == str(e)
        return
    module = getattr(psnn, name)(*args, **kwargs)  # torch takes it: so does poolspec, and both refuse the call
    assert repr(module) == repr(theirs)
    x = _input(name)
    extra = (torch.zeros((1, 2) + (3,) * (x.ndim - 2), dtype=torch.int64),) if name.startswith("MaxUnpool") else ()
    with pytest.raises((RuntimeError, ValueError, TypeError)):
        theirs(x, *extra)
    with pytest.raises((ValueError, TypeError)) as ours:
        module(x, *extra)
    named = {"MaxPool2d-0": "kernel_size"}
    assert ":" in str(ours.value) and "=" in str(ours.value), str(ours.value)
    assert all(word in str(ours.value) for word in named.get(name, ())), str(ours.value)


def test_plain_modules_without_torch():
    """On NumPy nothing imports torch: the classes are the plain ones, with torch's repr, state dict and
    numbers (compared here, in this process, with torch's)."""
    code = ("import sys, json, numpy as np\n"
            "from poolspec.frontends.torch import nn\n"
            "x = np.arange(2 * 3 * 7 * 6, dtype=np.float64).reshape(2, 3, 7, 6) % 11\n"
            "mods = [nn.MaxPool2d(3, 2, 1, ceil_mode=True, return_indices=True), nn.AvgPool2d(3, 2, 1),\n"
            "        nn.Upsample(scale_factor=1.5, mode='bicubic'), nn.AdaptiveMaxPool2d((None, 4)),\n"
            "        nn.LPPool2d(2, 2), nn.FractionalMaxPool2d(2, output_size=3,\n"
            "        _random_samples=np.full((2, 3, 2), 0.3))]\n"
            "out = []\n"
            "for m in mods:\n"
            "    y = m(x)\n"
            "    y = y if isinstance(y, tuple) else (y,)\n"
            "    out.append([repr(m), dict(m.state_dict()).keys().__len__(), [v.tolist() for v in y]])\n"
            "m = nn.MaxPool2d(2)\n"
            "assert m.load_state_dict({}) == ([], [])\n"
            "try:\n"
            "    m.load_state_dict({'w': 1})\n"
            "except RuntimeError as e:\n"
            "    out.append(str(e))\n"
            "assert type(m).__module__ == 'poolspec.frontends.torch.nn.modules' and m.eval().training is False\n"
            "assert 'torch' not in sys.modules, 'torch was imported'\n"
            "print(json.dumps(out))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(proc.stdout)
    x = torch.arange(2 * 3 * 7 * 6, dtype=torch.float64).reshape(2, 3, 7, 6) % 11
    mods = [torch.nn.MaxPool2d(3, 2, 1, ceil_mode=True, return_indices=True), torch.nn.AvgPool2d(3, 2, 1),
            torch.nn.Upsample(scale_factor=1.5, mode="bicubic"), torch.nn.AdaptiveMaxPool2d((None, 4)),
            torch.nn.LPPool2d(2, 2), torch.nn.FractionalMaxPool2d(2, output_size=3,
                                                                  _random_samples=torch.full((2, 3, 2), 0.3,
                                                                                             dtype=torch.float64))]
    for (text, keys, ys), m in zip(results, mods):
        want = _as_tuple(m(x))
        assert text == repr(m)
        assert keys == len(m.state_dict())
        for y, w in zip(ys, want):
            np.testing.assert_allclose(np.array(y), w.numpy(), rtol=RTOL, atol=ATOL)
    with pytest.raises(RuntimeError) as e:
        torch.nn.MaxPool2d(2).load_state_dict({"w": 1})
    assert results[-1] == str(e.value)


def test_infinite_norm_lp_pool_is_a_max():
    """LPPool with norm_type=inf: poolspec's lp_pool is the window's max of |x| (torch's pow(inf) overflows)."""
    x = torch.randn(1, 2, 6, 6, dtype=torch.float64)
    got = psnn.LPPool2d(math.inf, 2)(x)
    torch.testing.assert_close(got, torch.nn.functional.max_pool2d(x.abs(), 2), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("name, args, kwargs, shape", [
    ("MaxPool2d", (3, 2, 1), {"ceil_mode": True}, (2, 3, 7, 6)), ("AvgPool3d", (2,), {"padding": 1}, (1, 2, 3, 4, 5)),
    ("AdaptiveMaxPool1d", (3,), {}, (2, 3, 8)), ("LPPool2d", (2.0, 2), {}, (1, 2, 5, 4)),
    ("Upsample", (), {"scale_factor": 1.5, "mode": "bicubic", "align_corners": True}, (1, 2, 4, 5))])
def test_torch_func_transforms(name, args, kwargs, shape):
    """The transforms the cards claim, on modules: torch.func.grad, vmap, jvp and jacrev equal torch's own."""
    ours, theirs = getattr(psnn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    x = torch.randn(shape, dtype=torch.float64)
    stacked = torch.randn((3, *shape), dtype=torch.float64)  # vmap over a new leading axis: each call keeps x's rank
    for transform, arg in ((lambda f: torch.func.grad(lambda t: f(t).square().sum()), x),
                           (lambda f: torch.func.vmap(f), stacked),
                           (lambda f: (lambda t: torch.func.jvp(f, (t,), (torch.ones_like(t),))[1]), x),
                           (lambda f: torch.func.jacrev(f), x)):
        torch.testing.assert_close(transform(ours)(arg), transform(theirs)(arg), rtol=RTOL, atol=ATOL)


def test_torch_imported_after_the_module():
    """A class imported before torch is plain; instantiated after ``import torch`` it gives its torch twin (a
    subclass of it); a module built before stays plain."""
    code = ("import sys\n"
            "from poolspec.frontends.torch import nn\n"
            "from poolspec.frontends.torch.nn import MaxPool2d\n"
            "before = MaxPool2d(2)\n"
            "assert 'torch' not in sys.modules\n"
            "import torch\n"
            "after = MaxPool2d(2)\n"
            "assert isinstance(after, torch.nn.Module) and isinstance(after, MaxPool2d)\n"
            "assert not isinstance(before, torch.nn.Module) and issubclass(nn.MaxPool2d, torch.nn.Module)\n"
            "assert type(after) is nn.MaxPool2d and repr(after) == repr(before) == repr(torch.nn.MaxPool2d(2))\n"
            "print('ok')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-3000:]
