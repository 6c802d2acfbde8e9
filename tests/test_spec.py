"""The op cards (poolspec.spec): registry, serialisation, signatures against torch and poolspec, shape rules
against the shapes torch 2.13 actually produces, symbolic shapes, infer_arguments, deviations, import hygiene.

Every reference shape and signature comes from torch; poolspec's own results are never the reference.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import json
import random
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

import poolspec
from poolspec import spec

N123 = (1, 2, 3)
EXPECTED_OPS = (
    {f"avg_pool{n}d" for n in N123} | {f"adaptive_avg_pool{n}d" for n in N123} | {f"max_pool{n}d" for n in N123}
    | {f"adaptive_max_pool{n}d" for n in N123} | {f"max_unpool{n}d" for n in N123} | {f"lp_pool{n}d" for n in N123}
    | {"interpolate", "grid_sample", "affine_grid", "roi_align", "roi_pool", "ps_roi_align", "ps_roi_pool"}
    | {f"fractional_max_pool{n}d" for n in (2, 3)}
)
# ops whose card has the pooling/interpolate shape (one array operand x, spatial sizes that a sample call
# fixes); the sampling ops (two array ports) have their own tests below and in test_grid_sample.py
SAMPLING = {"grid_sample", "affine_grid", "roi_align", "roi_pool", "ps_roi_align", "ps_roi_pool",
            "fractional_max_pool2d", "fractional_max_pool3d"}
POOLING_STYLE = sorted(EXPECTED_OPS - SAMPLING)
AVG_FAMILY = tuple(f"{kind}_pool{n}d" for kind in ("avg", "adaptive_avg") for n in N123)
IMPLEMENTED = tuple(c.name for c in spec.cards() if c.status == "implemented")
CATEGORY = {"avg_pool": "pooling", "max_pool": "pooling", "lp_pool": "pooling", "adaptive_avg_pool": "adaptive_pooling",
            "adaptive_max_pool": "adaptive_pooling", "max_unpool": "unpooling", "interpolate": "resampling",
            "grid_sample": "sampling", "affine_grid": "sampling"}
REQUIRED = object()  # marks an argument without a default in the signature lists below


def _family(name: str) -> str:
    return name if name == "interpolate" else name[:-2]


def _torch():
    return pytest.importorskip("torch")


def _F():
    return _torch().nn.functional


# --- the registry ----------------------------------------------------------------------------------------------

def test_cards_cover_every_op_in_scope():
    names = [c.name for c in spec.cards()]
    assert len(names) == len(set(names)), "duplicate cards"
    assert set(names) == EXPECTED_OPS
    assert [c.name for c in spec.cards()] == names, "cards() order is not stable"


@pytest.mark.parametrize("name", sorted(EXPECTED_OPS))
def test_card_lookup_by_name_and_id(name):
    c = spec.card(name)
    assert c.name == name
    assert c.id == f"{name}@{c.version}"
    assert isinstance(c.version, int) and c.version >= 1
    assert spec.card(c.id) is c
    with pytest.raises(ValueError, match=name):
        spec.card(f"{name}@{c.version + 1}")


def test_card_avg_pool2d_at_1():
    assert spec.card("avg_pool2d@1") is spec.card("avg_pool2d")
    assert spec.card("avg_pool2d@1").id == "avg_pool2d@1"


@pytest.mark.parametrize("name", ["avg_pool4d", "max_pool", "Avg_Pool2d", "", "fractional_max_pool1d",
                                  "avg_pool2d@2", "avg_pool2d@0", "avg_pool2d@v1", "interpolate@1.0",
                                  "nope@1"])
def test_unknown_names_and_versions_raise(name):
    with pytest.raises(ValueError):
        spec.card(name)


@pytest.mark.parametrize("name", POOLING_STYLE)
def test_category_and_status(name):
    c = spec.card(name)
    assert c.category == CATEGORY[_family(name)]
    assert c.status in ("implemented", "planned")
    assert (c.status == "implemented") == hasattr(poolspec, name), "status disagrees with poolspec's exports"
    if name in AVG_FAMILY:
        assert c.status == "implemented"
    if c.status == "implemented":
        assert callable(getattr(poolspec, name))
        assert callable(getattr(poolspec, c.gradient.backward))
    if name != "interpolate":
        assert c.spatial_dims == (int(name[-2]),)
        assert c.input_ranks == (int(name[-2]) + 1, int(name[-2]) + 2)
    assert c.torch_reference.startswith(f"torch.nn.functional.{name}")


# --- to_dict ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(EXPECTED_OPS))
def test_to_dict_is_json_and_complete(name):
    c = spec.card(name)
    d = c.to_dict()
    assert json.loads(json.dumps(d)) == d, "to_dict() is not plain JSON"
    assert d["id"] == c.id and d["name"] == name and d["version"] == c.version
    assert d["category"] == c.category
    for key in ("summary", "shape_relation", "determinism", "torch_reference", "status"):
        assert isinstance(d[key], str) and d[key], key
    assert d["arguments"], "no arguments"
    assert [a["name"] for a in d["arguments"]] == [a.name for a in c.arguments]
    for a, arg in zip(d["arguments"], c.arguments):
        assert {"name", "type", "default", "required", "constraints", "description"} <= set(a)
        assert isinstance(a["name"], str) and isinstance(a["type"], str) and a["type"]
        assert isinstance(a["constraints"], list) and all(isinstance(s, str) for s in a["constraints"])
        assert isinstance(a["description"], str) and a["description"], (name, a["name"])
        assert a["required"] is arg.required
        if not a["required"]:
            want = list(arg.default) if isinstance(arg.default, tuple) else arg.default
            assert a["default"] == want
    g = d["gradient"]
    assert set(g) >= {"backward", "torch", "jax", "notes"}
    assert g["backward"] == c.gradient.backward
    assert d["deviations"] == list(c.deviations)


# --- signatures: card vs torch, card vs poolspec ---------------------------------------------------------------

def _doc_signature(fn: Any, name: str) -> list[tuple[str, Any]]:
    """A C builtin's signature from the first docstring line, e.g. ``avg_pool2d(input, kernel_size, ...)``."""
    line = next(ln.strip() for ln in (fn.__doc__ or "").splitlines() if ln.strip().startswith(f"{name}("))
    params = line[len(name):].split(" -> ")[0]
    tree = ast.parse(f"def f{params}: pass").body[0]
    args = tree.args.args
    defaults = [REQUIRED] * (len(args) - len(tree.args.defaults)) + [ast.literal_eval(d) for d in tree.args.defaults]
    return [(a.arg, d) for a, d in zip(args, defaults)]


def _signature(fn: Any) -> list[tuple[str, Any]]:
    return [(p.name, REQUIRED if p.default is inspect.Parameter.empty else p.default)
            for p in inspect.signature(fn).parameters.values()]


def _torch_signature(name: str) -> list[tuple[str, Any]]:
    if spec.card(name).torch_reference.startswith("torchvision."):
        # torchvision does not import beside torch 2.13: its signature as scripts/check_roi_rules.py (roi_align) or
        # scripts/check_<op>_rules.py recorded it in the torchvision environment
        # (the position-sensitive ops: one file for both, scripts/check_ps_roi_rules.py, a signature per op)
        stored = {"roi_align": "roi_rules_counts.json", "ps_roi_align": "ps_roi_rules_counts.json",
                  "ps_roi_pool": "ps_roi_rules_counts.json"}.get(name, f"{name}_rules_counts.json")
        counts = Path(__file__).resolve().parents[1] / "scripts" / stored
        recorded = json.loads(counts.read_text(encoding="utf-8"))["signature"]
        recorded = recorded[name] if isinstance(recorded, dict) else recorded
        return [(n, REQUIRED if d == "<required>" else d) for n, d in recorded]
    F = _F()
    fn = getattr(F, name)
    if name.startswith(("max_pool", "adaptive_max_pool", "fractional_max_pool")):
        fn = getattr(F, f"{name}_with_indices")  # F.max_pool2d is a boolean_dispatch wrapper (*args, **kwargs)
    try:
        return _signature(fn)
    except ValueError:  # no signature found for builtin: avg_pool1d/2d/3d, adaptive_avg_pool1d
        return _doc_signature(fn, name)


# poolspec's keyword-only extensions beyond torch's signature, op by op (layout, on every image op, is tested in
# test_layout.py; avg_pool's dilation in test_avg_numerics.py)
KEYWORD_EXTENSIONS = {f"avg_pool{n}d": ("dilation",) for n in N123}


def _card_signature(name: str, layout: bool = False) -> list[tuple[str, Any]]:
    """The card's arguments as (name, default); without ``layout``, only those of torch's signature: not
    poolspec's keyword-only extensions (``layout``, :data:`KEYWORD_EXTENSIONS`), unless asked for."""
    # by value: Argument.required compares by identity and misses the cards' "<required>" literals (see
    # test_required_arguments_are_marked_required)
    extensions = ("layout",) + KEYWORD_EXTENSIONS.get(name, ())
    return [(a.name, REQUIRED if a.default == "<required>" else a.default) for a in spec.card(name).arguments
            if layout or a.name not in extensions]


@pytest.mark.parametrize("name", POOLING_STYLE)
def test_card_arguments_match_torch_signature(name):
    torch_sig = _torch_signature(name)
    assert torch_sig[0] == ("input", REQUIRED)
    card_sig = _card_signature(name)
    assert card_sig[0] == ("x", REQUIRED)
    want = torch_sig[1:]
    if name == "avg_pool1d":
        # deviation avg_pool1d_divisor_override: torch's avg_pool1d has no divisor_override
        assert "divisor_override" not in dict(want)
        assert "avg_pool1d_divisor_override" in spec.card(name).deviations
        want = want + [("divisor_override", None)]
    assert card_sig[1:] == want


@pytest.mark.parametrize("name", POOLING_STYLE)
def test_required_arguments_are_marked_required(name):
    required = [p for p, d in _torch_signature(name) if d is REQUIRED]
    c = spec.card(name)
    assert [a.name for a in c.arguments if a.required] == ["x"] + required[1:]
    assert [a["name"] for a in c.to_dict()["arguments"] if a["required"]] == ["x"] + required[1:]
    for a in c.to_dict()["arguments"]:
        if a["required"]:
            assert a["default"] is None
    spatial, args = _sample(name)
    for missing in [m for m in required[1:] if not c.argument(m).is_array]:  # operands are not options
        with pytest.raises(TypeError, match="missing required argument"):
            c.resolve((2, 3) + spatial, None, **{k: v for k, v in args.items() if k != missing})


@pytest.mark.parametrize("name", [n for n in IMPLEMENTED if n not in SAMPLING])
def test_card_arguments_match_poolspec_signature(name):
    assert _signature(getattr(poolspec, name)) == _card_signature(name, layout=True)
    card_sig = _card_signature(name)
    backward = spec.card(name).gradient.backward
    assert backward == f"{name}_backward"
    params = inspect.signature(getattr(poolspec, backward)).parameters.values()
    positional = [p for p in params if p.kind is not inspect.Parameter.KEYWORD_ONLY]
    assert [(p.name, REQUIRED if p.default is inspect.Parameter.empty else p.default) for p in positional] == \
        [("grad_output", REQUIRED)] + card_sig
    # the keyword-only extensions: keyword-only in the forward and the backward, with the card's defaults
    for fn in (getattr(poolspec, name), getattr(poolspec, backward)):
        keywords = inspect.signature(fn).parameters
        for ext in KEYWORD_EXTENSIONS.get(name, ()):
            assert keywords[ext].kind is inspect.Parameter.KEYWORD_ONLY
            assert keywords[ext].default == spec.card(name).argument(ext).default
    # extras (max_pool's saved indices) may only be keyword-only and optional
    assert all(p.default is not inspect.Parameter.empty for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY)


def test_signature_helpers_see_what_they_should():
    """The torch signature of the builtins comes from the docstring: check the parse on known facts."""
    assert _torch_signature("avg_pool2d")[-1] == ("divisor_override", None)
    assert _torch_signature("adaptive_avg_pool1d") == [("input", REQUIRED), ("output_size", REQUIRED)]
    assert _torch_signature("lp_pool2d")[1] == ("norm_type", REQUIRED)
    assert dict(_torch_signature("max_pool3d"))["dilation"] == 1
    assert dict(_torch_signature("interpolate"))["mode"] == "nearest"


# --- output_shape against the shapes torch produces -------------------------------------------------------------

def _torch_shape(name: str, shape: tuple[int, ...], args: dict[str, Any]) -> tuple[int, ...] | Exception:
    """The shape torch's op produces on zeros(shape), or the exception it raises."""
    torch = _torch()
    F = torch.nn.functional
    x = torch.zeros(shape, dtype=torch.float64)
    a = dict(args)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if name.startswith("max_unpool"):
                out = getattr(F, name)(x, torch.zeros(shape, dtype=torch.int64), **a)
            elif name.startswith("lp_pool"):
                out = getattr(F, name)(x, a.pop("norm_type"), **a)
            elif name == "avg_pool1d" and a.get("divisor_override") is not None:
                raise AssertionError("use avg_pool2d for divisor_override")
            else:
                out = getattr(F, name)(x, **a)
    except Exception as e:
        return e
    if isinstance(out, tuple):  # return_indices=True
        out = out[0]
    if name.startswith("max_pool") and out.numel() == 0 and len(shape) == int(name[-2]) + 2 and shape[0] == 0:
        probe = _torch_shape(name, (1,) + shape[1:], args)  # an empty batch hides -inf: look at one sample
        return probe if isinstance(probe, _EmptyWindow) else tuple(out.shape)
    if name.startswith("max_pool") and bool(torch.isinf(out).any()):
        # on zeros, -inf can only come from a window that dilation and padding leave without an input cell:
        # the card documents a ValueError for it (torch returns -inf and an out-of-range index)
        return _EmptyWindow()
    return tuple(out.shape)


class _EmptyWindow(Exception):
    pass


def _poolspec_shape(name: str, shape: tuple[int, ...], args: dict[str, Any]) -> tuple[Any, ...] | Exception:
    try:
        return spec.output_shape(name, shape, **args)
    except (ValueError, TypeError) as e:
        return e


def _compare(name: str, configs: list[tuple[tuple[int, ...], dict[str, Any]]], min_valid: int) -> None:
    mismatches, valid = [], 0
    for shape, args in configs:
        want = _torch_shape(name, shape, args)
        got = _poolspec_shape(name, shape, args)
        if isinstance(want, _EmptyWindow):
            ok = isinstance(got, ValueError) and "dilation" in str(got)
        elif isinstance(want, Exception):
            ok = isinstance(got, (ValueError, TypeError))
        else:
            valid += 1
            ok = got == want
        if not ok:
            mismatches.append(f"{name}{list(shape)}({args}): torch {want!r}, poolspec {got!r}")
    assert not mismatches, f"{len(mismatches)} of {len(configs)} disagree:\n" + "\n".join(mismatches[:15])
    assert valid >= min_valid, f"only {valid} valid configurations"


def _int_or_tuple(values: tuple[Any, ...], n: int) -> Any:
    return values[0] if n == 1 else values


LEADS = ((2, 3), (3,), (0, 3))  # batched, unbatched, empty batch


def _window_configs(n: int, with_dilation: bool, seed: int, count: int) -> list[tuple[tuple[int, ...], dict[str, Any]]]:
    """(L, k, s, p[, d], ceil_mode) per axis: the full product in 1-d, ``count`` random draws otherwise."""
    axis = list(itertools.product(range(1, 8), range(1, 5), (None, 1, 2, 3), range(0, 3)))
    rng = random.Random(seed)
    if n == 1:
        per_axis = [(a,) for a in axis]
    else:
        per_axis = [tuple(rng.choice(axis) for _ in range(n)) for _ in range(count)]
    out = []
    for i, axes in enumerate(per_axis):
        L, k, s, p = (tuple(a[j] for a in axes) for j in range(4))
        args: dict[str, Any] = dict(kernel_size=_int_or_tuple(k, n),
                                    stride=None if None in s else _int_or_tuple(s, n),
                                    padding=_int_or_tuple(p, n), ceil_mode=rng.random() < 0.5)
        if with_dilation:
            args["dilation"] = _int_or_tuple(tuple(rng.choice((1, 1, 2, 3)) for _ in range(n)), n)
        out.append((LEADS[i % 3] + L, args))
    return out


@pytest.mark.parametrize("n", N123, ids=[f"avg_pool{n}d" for n in N123])
def test_output_shape_avg_pool_matches_torch(n):
    configs = _window_configs(n, False, seed=n, count=500)
    for i, (_, args) in enumerate(configs):
        args["count_include_pad"] = i % 2 == 0
        if n > 1 and i % 5 == 0:
            args["divisor_override"] = -2
    _compare(f"avg_pool{n}d", configs, min_valid=(120, 110, 40)[n - 1])


@pytest.mark.parametrize("n", N123, ids=[f"max_pool{n}d" for n in N123])
def test_output_shape_max_pool_matches_torch(n):
    configs = _window_configs(n, True, seed=10 + n, count=500)
    for i, (_, args) in enumerate(configs):
        args["return_indices"] = i % 3 == 0
    _compare(f"max_pool{n}d", configs, min_valid=(100, 80, 45)[n - 1])


def _lp_configs(n: int) -> list[tuple[tuple[int, ...], dict[str, Any]]]:
    configs = []
    for shape, args in _window_configs(n, False, seed=20 + n, count=250):
        if n == 1 and isinstance(args["kernel_size"], tuple):
            continue  # torch's lp_pool1d wrapper fails on a tuple kernel (docs/TORCH_NUMERICS.md 4)
        args.pop("padding")
        configs.append((shape, dict(norm_type=2.0, **args)))
    return configs


@pytest.mark.parametrize("n", N123, ids=[f"lp_pool{n}d" for n in N123])
def test_output_shape_lp_pool_matches_torch(n):
    configs = _lp_configs(n)
    _compare(f"lp_pool{n}d", configs, min_valid=100)


def test_lp_pool3d_kernel_over_input_is_refused_as_torch():
    shape, args = (1, 1, 2, 4, 4), dict(norm_type=2.0, kernel_size=3, stride=2, ceil_mode=True)
    assert isinstance(_torch_shape("lp_pool3d", shape, args), Exception)
    with pytest.raises(ValueError):
        spec.output_shape("lp_pool3d", shape, **args)


def _adaptive_configs(n: int, seed: int, count: int) -> list[tuple[tuple[int, ...], dict[str, Any]]]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        L = tuple(rng.randint(1, 7) for _ in range(n))
        if n == 1:  # torch's 1-d adaptive pools take an int or a 1-tuple of ints, no None
            size: Any = rng.choice([rng.randint(-1, 9), (rng.randint(0, 9),)])
        else:
            size = rng.choice([rng.randint(-1, 9), tuple(rng.choice([None] + list(range(-1, 10))) for _ in range(n))])
        lead = ((2, 3), (3,), (0, 3), (2, 0), (0,))[i % 5]
        out.append((lead + L, dict(output_size=size)))
    return out


@pytest.mark.parametrize("name", [f"adaptive_{k}_pool{n}d" for k in ("avg", "max") for n in N123])
def test_output_shape_adaptive_matches_torch(name):
    n = int(name[-2])
    configs = _adaptive_configs(n, seed=30 + n, count=250)
    empty_channels = [c for c in configs if len(c[0]) == n + 2 and c[0][1] == 0]
    configs = [c for c in configs if c not in empty_channels]
    _compare(name, configs, min_valid=120)
    if name == "adaptive_avg_pool3d":
        # deviation adaptive_pool3d_empty_channels: torch refuses batched C = 0, poolspec returns the empty result
        # of the shape torch gives with one channel
        assert "adaptive_pool3d_empty_channels" in spec.card(name).deviations
        for shape, args in empty_channels:
            want = _torch_shape(name, shape[:1] + (1,) + shape[2:], args)
            assert isinstance(_torch_shape(name, shape, args), Exception)
            if not isinstance(want, Exception):
                assert spec.output_shape(name, shape, **args) == want[:1] + (0,) + want[2:]
    elif name.startswith("adaptive_max"):
        pass  # see test_adaptive_max_pool_empty_channels_refused_as_torch
    else:
        _compare(name, empty_channels, min_valid=15)


@pytest.mark.parametrize("n", N123)
def test_adaptive_max_pool_empty_channels_is_a_recorded_deviation(n):
    """torch refuses batched C = 0 here; poolspec returns the empty result and records the deviation."""
    name, shape = f"adaptive_max_pool{n}d", (2, 0) + (4,) * n
    assert isinstance(_torch_shape(name, shape, dict(output_size=2)), Exception)
    assert "adaptive_pool3d_empty_channels" in spec.card(name).deviations
    assert spec.output_shape(name, shape, output_size=2) == (2, 0) + (2,) * n


def _unpool_configs(n: int, seed: int, count: int, explicit: bool) -> list[tuple[tuple[int, ...], dict[str, Any]]]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        L = tuple(rng.randint(1, 5) for _ in range(n))
        k = tuple(rng.randint(1, 4) for _ in range(n))
        s = None if rng.random() < 0.3 else tuple(rng.randint(1, 3) for _ in range(n))
        p = tuple(rng.randint(0, 2) for _ in range(n))
        default = tuple((L[j] - 1) * (s or k)[j] - 2 * p[j] + k[j] for j in range(n))
        if min(default) < 1:
            continue  # see test_max_unpool_empty_default_output_as_torch
        args: dict[str, Any] = dict(kernel_size=_int_or_tuple(k, n), stride=None if s is None else _int_or_tuple(s, n),
                                    padding=_int_or_tuple(p, n))
        lead = ((2, 3), (3,))[i % 2]
        if explicit:
            # torch takes default - stride < size < default + stride
            size = tuple(max(1, d + rng.randint(-st, st)) for d, st in zip(default, s or k))
            # with batch and channel only for batched input: see test_max_unpool_unbatched_output_size_length
            args["output_size"] = lead + size if len(lead) == 2 and rng.random() < 0.3 else size
        out.append((lead + L, args))
    return out


@pytest.mark.parametrize("n", N123, ids=[f"max_unpool{n}d" for n in N123])
def test_output_shape_max_unpool_default_matches_torch(n):
    _compare(f"max_unpool{n}d", _unpool_configs(n, seed=40 + n, count=300, explicit=False), min_valid=150)


@pytest.mark.parametrize("n", N123, ids=[f"max_unpool{n}d" for n in N123])
def test_output_shape_max_unpool_explicit_matches_torch(n):
    _compare(f"max_unpool{n}d", _unpool_configs(n, seed=50 + n, count=300, explicit=True), min_valid=40)


@pytest.mark.parametrize("size", [(3, 9), (1, 3, 9)], ids=["n+1", "n+2"])
def test_max_unpool_unbatched_output_size_length(size):
    shape, args = (3, 4), dict(kernel_size=2, output_size=size)
    want = _torch_shape("max_unpool1d", shape, args)
    got = _poolspec_shape("max_unpool1d", shape, args)
    assert (isinstance(want, Exception) and isinstance(got, ValueError)) or want == got, (want, got)


def test_max_unpool_negative_output_size_is_refused_as_torch():
    shape, args = (1, 1, 1), dict(kernel_size=1, padding=1, output_size=(-1,))  # default size (1-1)*1 - 2 + 1 = -1
    assert isinstance(_torch_shape("max_unpool1d", shape, args), Exception)
    with pytest.raises(ValueError):
        spec.output_shape("max_unpool1d", shape, **args)


def test_max_unpool_empty_default_output_as_torch():
    shape, args = (2, 3, 1), dict(kernel_size=2, stride=2, padding=1)  # default (1-1)*2 - 2 + 2 = 0
    want = _torch_shape("max_unpool1d", shape, args)
    assert want == (2, 3, 0)
    assert spec.output_shape("max_unpool1d", shape, **args) == want


_INTERP_MODES = {3: ("nearest", "nearest-exact", "linear", "area"),
                 4: ("nearest", "nearest-exact", "bilinear", "bicubic", "area"),
                 5: ("nearest", "nearest-exact", "trilinear", "area")}
_SCALES = (0.1, 0.29, 0.5, 0.7, 1.0, 1 / 3, 1.3, 1.5, 2.0, 2.1, 3)


def _interp_configs(rank: int) -> list[tuple[tuple[int, ...], dict[str, Any]]]:
    n = rank - 2
    rng = random.Random(rank)
    out = []
    lengths = (1, 2, 5, 7, 10, 100) if n == 1 else (1, 2, 5, 7, 10)
    for mode in _INTERP_MODES[rank]:
        for L in lengths:
            shape = (2, 3) + (L,) * n
            for sf in _SCALES:
                args: dict[str, Any] = dict(scale_factor=sf, mode=mode,
                                            recompute_scale_factor=rng.choice((None, False, True)))
                if rng.random() < 0.3:
                    args["align_corners"] = rng.choice((False, True))
                out.append((shape, args))
            for size in (1, 3, 8):
                out.append((shape, dict(size=size, mode=mode)))
                out.append((shape, dict(size=(size,) * n, mode=mode)))
        for _ in range(40):
            shape = (rng.randint(0, 2), 2) + tuple(rng.randint(1, 9) for _ in range(n))
            sf = tuple(rng.choice(_SCALES) for _ in range(n))
            out.append((shape, dict(scale_factor=sf if rng.random() < 0.8 else list(sf), mode=mode)))
            out.append((shape, dict(size=tuple(rng.randint(1, 9) for _ in range(n)), mode=mode)))
    if rank == 4:
        for mode, sf in itertools.product(("bilinear", "bicubic", "lanczos"), (0.3, 0.5, 1.3)):
            out.append(((1, 2, 7, 9), dict(scale_factor=sf, mode=mode, antialias=True)))
        out.append(((1, 2, 7, 9), dict(size=(3, 4), mode="nearest", antialias=True)))  # both refuse
    return out


@pytest.mark.parametrize("rank", (3, 4, 5), ids=["interpolate-3D", "interpolate-4D", "interpolate-5D"])
def test_output_shape_interpolate_matches_torch(rank):
    configs = _interp_configs(rank)
    _compare("interpolate", configs, min_valid=250)


@pytest.mark.parametrize("L,sf,want", [(5, 1.3, 6), (100, 0.29, 28), (10, 0.7, 7), (7, 1 / 3, 2), (10, 1.1, 11)],
                         ids=["5x1.3", "100x0.29", "10x0.7", "7x1/3", "10x1.1"])
def test_output_shape_interpolate_truncates_like_torch(L, sf, want):
    """O = floor(double(L) * sf): 100 * 0.29 = 28.999999999999996 gives 28."""
    assert _torch_shape("interpolate", (1, 1, L), dict(scale_factor=sf)) == (1, 1, want)
    assert spec.output_shape("interpolate", (1, 1, L), scale_factor=sf) == (1, 1, want)
    assert spec.output_shape("interpolate", ("N", 2, L, L), scale_factor=sf, mode="bilinear") == ("N", 2, want, want)


@pytest.mark.parametrize("args", [dict(size=(0, 3), mode="area"), dict(scale_factor=0.1, mode="area")],
                         ids=["size0", "scale0.1"])
def test_interpolate_area_zero_output_as_torch(args):
    want = _torch_shape("interpolate", (1, 2, 5, 5), args)
    assert not isinstance(want, Exception)
    assert spec.output_shape("interpolate", (1, 2, 5, 5), **args) == want


# --- symbolic shapes -------------------------------------------------------------------------------------------

def _sample(name: str) -> tuple[tuple[int, ...], dict[str, Any]]:
    """One valid call per card: spatial sizes and arguments."""
    if name == "interpolate":
        return (7, 9), dict(scale_factor=1.5, mode="bilinear")
    n = int(name[-2])
    spatial = tuple(7 + i for i in range(n))
    args = {
        "avg_pool": dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
        "max_pool": dict(kernel_size=3, stride=2, padding=1, dilation=2),
        "lp_pool": dict(norm_type=2.0, kernel_size=2, stride=3, ceil_mode=True),
        "max_unpool": dict(kernel_size=2, stride=3, padding=1),
        "adaptive_avg_pool": dict(output_size=3),
        "adaptive_max_pool": dict(output_size=4),
    }[_family(name)]
    return spatial, args


@pytest.mark.parametrize("name", POOLING_STYLE)
def test_symbolic_batch_and_channel_dims_are_kept(name):
    spatial, args = _sample(name)
    want = _torch_shape(name, (2, 3) + spatial, args)
    assert isinstance(want, tuple), want
    assert spec.output_shape(name, ("B", "C") + spatial, **args) == ("B", "C") + want[2:]
    assert spec.output_shape(name, ("B", 3) + spatial, **args) == ("B", 3) + want[2:]
    assert spec.output_shape(name, (2, "C") + spatial, **args) == (2, "C") + want[2:]
    if name != "interpolate":  # interpolate has no unbatched form
        want = _torch_shape(name, (3,) + spatial, args)
        assert spec.output_shape(name, ("C",) + spatial, **args) == ("C",) + want[1:]


@pytest.mark.parametrize("name", POOLING_STYLE)
def test_symbolic_spatial_dims_raise_type_error(name):
    spatial, args = _sample(name)
    for i in range(len(spatial)):
        shape = ("B", "C") + spatial[:i] + ("H",) + spatial[i + 1:]
        with pytest.raises(TypeError):
            spec.output_shape(name, shape, **args)
    if name != "interpolate":
        with pytest.raises(TypeError):
            spec.output_shape(name, ("C",) + spatial[:-1] + ("W",), **args)


def test_poolspec_output_shape_is_spec_output_shape():
    assert poolspec.output_shape is spec.output_shape
    assert poolspec.infer_arguments is spec.infer_arguments


# --- infer_arguments -------------------------------------------------------------------------------------------

def test_infer_arguments_adaptive_avg_pool2d():
    got = poolspec.infer_arguments("adaptive_avg_pool2d", ("B", 64, 13, 13), ("B", 64, 7, 7))
    assert got == {"output_size": (7, 7)}


INFER = [
    ("adaptive_avg_pool1d", ("B", 3, 10), ("B", 3, 4), "output_size"),
    ("adaptive_avg_pool2d", (64, 13, 13), (64, 5, 20), "output_size"),
    ("adaptive_avg_pool3d", ("N", "C", 5, 6, 7), ("N", "C", 1, 2, 9), "output_size"),
    ("adaptive_max_pool2d", ("B", 64, 13, 13), ("B", 64, 7, 7), "output_size"),
    ("adaptive_max_pool3d", (2, 3, 5, 6, 7), (2, 3, 5, 0, 3), "output_size"),
    ("interpolate", ("N", 3, 10, 10), ("N", 3, 20, 5), "size"),
    ("interpolate", (2, 3, 10), (2, 3, 4), "size"),
    ("interpolate", ("N", "C", 4, 5, 6), ("N", "C", 8, 5, 3), "size"),
]


@pytest.mark.parametrize("name,inp,out,key", INFER, ids=[f"{c[0]}{list(c[1])}->{list(c[2])}" for c in INFER])
def test_infer_arguments_reproduce_the_output_in_torch(name, inp, out, key):
    got = poolspec.infer_arguments(name, inp, out)
    assert set(got) == {key}
    concrete = tuple(d if isinstance(d, int) else 2 + i for i, d in enumerate(inp))
    want = _torch_shape(name, concrete, got)
    assert want == tuple(d if isinstance(d, int) else 2 + i for i, d in enumerate(out))


INFER_ERRORS = [
    ("adaptive_avg_pool2d", ("B", 64, 13, 13), ("B", 32, 7, 7), ValueError),  # channel changes
    ("adaptive_avg_pool2d", ("B", 64, 13, 13), ("N", 64, 7, 7), ValueError),  # batch symbol changes
    ("adaptive_avg_pool2d", (8, 64, 13, 13), (4, 64, 7, 7), ValueError),
    ("adaptive_avg_pool2d", ("B", 64, 13, 13), ("B", 64, 7), ValueError),  # rank changes
    ("adaptive_max_pool1d", ("B", 3, 10), (3, 4), ValueError),
    ("interpolate", ("N", 3, 10, 10), ("N", 4, 20, 5), ValueError),
    ("avg_pool2d", ("B", 64, 13, 13), ("B", 64, 7, 7), ValueError),  # not adaptive
    ("max_pool2d", ("B", 64, 14, 14), ("B", 64, 7, 7), ValueError),
    ("lp_pool1d", ("B", 64, 14), ("B", 64, 7), ValueError),
    ("max_unpool2d", ("B", 64, 7, 7), ("B", 64, 14, 14), ValueError),
    ("adaptive_avg_pool2d", ("B", 64, 13, 13), ("B", 64, 7, "W"), TypeError),  # symbolic spatial output
]


@pytest.mark.parametrize("name,inp,out,error", INFER_ERRORS,
                         ids=[f"{c[0]}{list(c[1])}->{list(c[2])}" for c in INFER_ERRORS])
def test_infer_arguments_errors(name, inp, out, error):
    with pytest.raises(error):
        poolspec.infer_arguments(name, inp, out)


# --- deviations ------------------------------------------------------------------------------------------------

def test_deviations_are_complete_records():
    devs = spec.deviations()
    assert devs, "no deviations recorded"
    ids = [d["id"] for d in devs]
    assert len(ids) == len(set(ids)), "duplicate deviation ids"
    known = {c.name for c in spec.cards()}
    for d in devs:
        for key in ("id", "torch", "poolspec", "reason"):
            assert isinstance(d.get(key), str) and d[key].strip(), (d.get("id"), key)
        assert isinstance(d["ops"], list) and d["ops"], d["id"]
        assert set(d["ops"]) <= known, f"{d['id']} names ops without a card: {set(d['ops']) - known}"
        for op in d["ops"]:
            assert d["id"] in spec.card(op).deviations
            assert d["id"] in [e["id"] for e in spec.deviations(op)]
    for c in spec.cards():
        assert list(c.deviations) == [d["id"] for d in devs if c.name in d["ops"]]
        assert [d["id"] for d in spec.deviations(c.name)] == list(c.deviations)


def test_deviations_returns_copies():
    first = spec.deviations()
    first[0]["id"] = "changed"
    assert spec.deviations()[0]["id"] != "changed"


def test_deviation_claims_about_torch_hold():
    """What each deviation says torch 2.13 does, checked against torch."""
    torch = _torch()
    F = torch.nn.functional
    ids = {d["id"] for d in spec.deviations()}
    assert {"avg_pool1d_divisor_override", "avg_pool3d_half", "adaptive_pool3d_empty_channels",
            "half_backward_float32_accumulation"} <= ids
    # avg_pool1d_divisor_override: F.avg_pool1d has no divisor_override
    with pytest.raises(TypeError):
        F.avg_pool1d(torch.zeros(1, 1, 4), 2, divisor_override=2)
    # avg_pool3d_half: CPU avg_pool3d refuses float16/bfloat16
    for dt in (torch.float16, torch.bfloat16):
        with pytest.raises(RuntimeError):
            F.avg_pool3d(torch.zeros(1, 1, 2, 2, 2, dtype=dt), 2)
    # adaptive_pool3d_empty_channels: batched C = 0 refused in 3d only
    with pytest.raises(RuntimeError):
        F.adaptive_avg_pool3d(torch.zeros(2, 0, 4, 4, 4), 2)
    assert F.adaptive_avg_pool2d(torch.zeros(2, 0, 4, 4), 2).shape == (2, 0, 2, 2)
    assert F.adaptive_avg_pool3d(torch.zeros(0, 4, 4, 4), 2).shape == (0, 2, 2, 2)
    # half_backward_float32_accumulation: 2x2 -> 300x300 adaptive_avg backward saturates in half
    for dt, cap in ((torch.bfloat16, 256), (torch.float16, 2048)):
        x = torch.zeros(1, 1, 2, 2, dtype=dt, requires_grad=True)
        (g,) = torch.autograd.grad(F.adaptive_avg_pool2d(x, 300), x, torch.ones(1, 1, 300, 300, dtype=dt))
        assert float(g.max()) == cap


# --- import hygiene --------------------------------------------------------------------------------------------

def _loaded_after(statement: str, watched: set[str]) -> dict[str, Any]:
    """Run ``statement`` in a fresh interpreter; report which ``watched`` top-level modules it loaded."""
    code = (f"import json, sys\n{statement}\n"
            f"watched = {sorted(watched)!r}\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in watched)))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


BACKENDS = {"torch", "jax", "jaxlib", "dask", "cupy"}


def test_import_poolspec_loads_no_backend():
    loaded = _loaded_after(f"import poolspec\nassert len(poolspec.spec.cards()) == {len(EXPECTED_OPS)}", BACKENDS)
    assert loaded == [], f"import poolspec loaded {loaded}"


def test_import_probe_sees_loaded_modules():
    """The probe above can fail: it reports a module that the statement does load."""
    assert "numpy" in _loaded_after("import poolspec", BACKENDS | {"numpy"})


def test_max_family_deviation_claims_hold():
    """What the max family's deviations say torch 2.13 does, checked against torch."""
    torch = _torch()
    F = torch.nn.functional
    # max_pool_empty_window: -inf and an index outside the input (L = 1, k = 2, s = 3, p = 1, d = 2)
    values, idx = F.max_pool1d(torch.zeros(1, 1, 1, dtype=torch.float64), 2, 3, 1, 2, return_indices=True)
    assert bool(torch.isneginf(values).all()) and not 0 <= int(idx.flatten()[0]) < 1
    # max_pool1d_integer_values: refused without indices, accepted with them
    with pytest.raises(RuntimeError):
        F.max_pool1d(torch.zeros(1, 1, 4, dtype=torch.int64), 2)
    F.max_pool1d(torch.zeros(1, 1, 4, dtype=torch.int64), 2, return_indices=True)
    # max_unpool_duplicate_indices: the backward feeds every duplicate; deterministic mode raises on CPU
    x = torch.tensor([[[1.0, 2.0]]], dtype=torch.float64, requires_grad=True)
    i = torch.tensor([[[1, 1]]])
    (g,) = torch.autograd.grad(F.max_unpool1d(x, i, 2), x, torch.tensor([[[0.0, 5.0, 0.0, 0.0]]], dtype=torch.float64))
    assert g.tolist() == [[[5.0, 5.0]]]
    prior = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        with pytest.raises(RuntimeError, match="deterministic"):
            F.max_unpool2d(torch.ones(1, 1, 2, 2), torch.zeros(1, 1, 2, 2, dtype=torch.int64), 2)
    finally:
        torch.use_deterministic_algorithms(prior)
    # max_unpool_argument_rules: unchecked geometry, int64-only indices
    z, zi = torch.zeros(1, 1, 3), torch.zeros(1, 1, 3, dtype=torch.int64)
    F.max_unpool1d(z, zi, 2, stride=0)
    F.max_unpool1d(z, zi, 2, padding=-1)
    with pytest.raises(RuntimeError, match="int64"):
        F.max_unpool1d(z, zi.int(), 2)
    # lp_pool1d_tuple_kernel
    with pytest.raises(TypeError):
        F.lp_pool1d(torch.ones(1, 1, 4), 2.0, (2,))
    # lp_pool_integer_input: the result depends on the Python type of norm_type
    xi = torch.tensor([[[2, 3, 4, 3]]])
    assert not torch.equal(F.lp_pool1d(xi, 2, 4).double(), F.lp_pool1d(xi, 2.0, 4).double())


# --- the sampling ops: two array ports ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(SAMPLING))
def test_sampling_cards_match_torch_and_poolspec_signatures(name):
    torch_sig = _torch_signature(name)
    card_sig = _card_signature(name)
    first = {"input": "x"}.get(torch_sig[0][0], torch_sig[0][0])  # poolspec names torch's input x
    assert card_sig == [(first, REQUIRED)] + torch_sig[1:]
    assert _signature(getattr(poolspec, name))[:len(card_sig)] == card_sig
    if name != "affine_grid":  # (a matrix, no image to lay out)
        assert _signature(getattr(poolspec, name))[-1] == ("layout", "channels_first")
    c = spec.card(name)
    assert c.category == ("pooling" if name.startswith("fractional") else "sampling") and c.status == "implemented"
    assert c.torch_reference in (f"torch.nn.functional.{name}", f"torchvision.ops.{name}")
    backward = [p for p in _signature(getattr(poolspec, c.gradient.backward)) if p[0] != "layout"]
    if name.startswith("fractional"):
        assert card_sig[-1] == ("_random_samples", None)
        assert backward[1:-1] == card_sig and backward[-1] == ("indices", None)  # max_pool's keyword-only extra
        assert _signature(getattr(poolspec, name))[-2] == ("rng", None)  # how samples are drawn when omitted
        return
    assert backward[0][0].startswith("grad_") and backward[1:] == card_sig
    arrays = [a.name for a in c.arguments if a.is_array]
    assert arrays[1:] == list(c.shaped_ports) or c.shaped_ports == ()


def test_sampling_cards_resolve_symbols_and_reject_symbolic_spatial_sizes():
    assert spec.output_shape("grid_sample", ("B", "C", 5, 6), grid=("B", 2, 3, 2)) == ("B", "C", 2, 3)
    with pytest.raises(ValueError, match="batch symbol"):
        spec.output_shape("grid_sample", ("B", "C", 5, 6), grid=("M", 2, 3, 2))
    with pytest.raises(TypeError, match="spatial dimension 2"):
        spec.output_shape("grid_sample", ("B", "C", "H", 6), grid=("B", 2, 3, 2))
    with pytest.raises(TypeError, match="output dimension 1"):
        spec.output_shape("grid_sample", ("B", "C", 5, 6), grid=("B", "H", 3, 2))
    assert spec.output_shape("affine_grid", ("B", 2, 3), size=(4, 3, 5, 6)) == ("B", 5, 6, 2)
