"""torch.nn's pooling and upsampling modules on poolspec's kernels, without torch.

Each class is written once, on :class:`Module`, a plain base that has what a pooling module uses of
``torch.nn.Module`` (``__call__``, ``forward``, ``extra_repr`` and ``repr``, ``train``/``eval``, buffers and the
state dict). Where torch is imported (``"torch" in sys.modules``; poolspec never imports it), instantiating a class
gives an instance of its torch twin, ``type(name, (cls, torch.nn.Module), ...)``: the same class body with every
method of the plain base replaced by ``torch.nn.Module``'s, so that the modules compose with torch's
(``nn.Sequential``, ``.to()``, hooks, ``torch.compile``, ``state_dict``, pickling) and still pass
``isinstance(m, cls)``. The twins are built on first use (:func:`torch_class`) and found by pickle as
``poolspec.frontends.torch.nn._torch_<Name>``.
"""

from __future__ import annotations

import collections
import sys
import types
from collections.abc import Callable, Iterable, Iterator
from itertools import repeat
from typing import Any, NamedTuple

from ....families.adaptive_avg_pool.ops import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d
from ....families.adaptive_max_pool.ops import adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d
from ....families.avg_pool.ops import avg_pool1d, avg_pool2d, avg_pool3d
from ....families.fractional_max_pool.ops import fractional_max_pool2d, fractional_max_pool3d
from ....families.interpolate.ops import interpolate
from ....families.lp_pool.ops import lp_pool1d, lp_pool2d, lp_pool3d
from ....families.max_pool.ops import max_pool1d, max_pool2d, max_pool3d
from ....families.max_unpool.ops import max_unpool1d, max_unpool2d, max_unpool3d
from ._docs import fill

MODULE = "poolspec.frontends.torch.nn"


def _torch() -> Any:
    """torch, where the caller has imported it; None otherwise (never imported here)."""
    return sys.modules.get("torch")


def _ntuple(n: int) -> Any:
    """torch.nn.modules.utils._ntuple: an iterable as a tuple, anything else repeated n times."""
    def parse(x: Any) -> tuple[Any, ...]:
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))

    return parse


_single, _pair, _triple = _ntuple(1), _ntuple(2), _ntuple(3)


class _IncompatibleKeys(NamedTuple):
    """``load_state_dict``'s answer, as torch.nn.modules.module._IncompatibleKeys."""

    missing_keys: list[str]
    unexpected_keys: list[str]


class Module:
    """What a pooling module uses of ``torch.nn.Module``, without torch: ``__call__`` runs ``forward``, ``repr`` is
    ``Name(extra_repr)``, ``train``/``eval`` set ``training``, buffers (``register_buffer``; None buffers are kept
    out of the state dict) and ``state_dict``/``load_state_dict`` as torch's (strict: unexpected or missing keys
    raise RuntimeError with torch's message). Where torch is imported, instantiating a subclass of this module's
    classes gives its ``torch.nn.Module`` twin (see the module's docstring)."""

    training: bool

    def __init_subclass__(cls, fn: Any = None, **attrs: Any) -> None:
        """A public class of a family's ranks in one line, ``class MaxPool2d(_MaxPoolNd, fn=max_pool2d): ...``:
        ``fn`` the function its forward calls (``_fn``), ``attrs`` its further class attributes; marked public."""
        super().__init_subclass__()
        if fn is not None:
            for name, value in {"_fn": staticmethod(fn), **attrs}.items():
                setattr(cls, name, value)
            _plain(cls)

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        torch = _torch()
        if torch is not None and cls.__dict__.get("_poolspec_plain", False):
            cls = torch_class(cls)
        return object.__new__(cls)

    def __init__(self) -> None:
        super().__init__()
        if "_buffers" not in self.__dict__:  # the plain base (torch's Module.__init__ has set its own state)
            self.training = True
            self._buffers: dict[str, Any] = {}

    def __getattr__(self, name: str) -> Any:
        buffers = self.__dict__.get("_buffers")
        if buffers is not None and name in buffers:
            return buffers[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def register_buffer(self, name: str, tensor: Any, persistent: bool = True) -> None:
        self._buffers[name] = tensor

    def extra_repr(self) -> str:
        return ""

    def __setstate__(self, state: dict[str, Any]) -> None:
        parent = getattr(super(), "__setstate__", None)
        if parent is not None:  # torch.nn.Module's, in a torch twin
            parent(state)
        else:
            self.__dict__.update(state)

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        extra = self.extra_repr()
        lines = extra.split("\n") if extra else []
        if len(lines) == 1:
            return f"{self._get_name()}({lines[0]})"
        body = "\n  ".join(lines)
        return f"{self._get_name()}(\n  {body}\n)" if lines else f"{self._get_name()}()"

    def train(self, mode: bool = True) -> Module:
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        return self

    def eval(self) -> Module:
        return self.train(False)

    def parameters(self, recurse: bool = True) -> Iterator[Any]:
        return iter(())

    def buffers(self, recurse: bool = True) -> Iterator[Any]:
        return iter([b for b in self._buffers.values() if b is not None])

    def children(self) -> Iterator[Any]:
        return iter(())

    def state_dict(self, *args: Any, destination: Any = None, prefix: str = "", keep_vars: bool = False) -> Any:
        out = collections.OrderedDict() if destination is None else destination
        for name, value in self._buffers.items():
            if value is not None:
                out[prefix + name] = value
        return out

    def load_state_dict(self, state_dict: Any, strict: bool = True, assign: bool = False) -> _IncompatibleKeys:
        if not isinstance(state_dict, collections.abc.Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        own = [name for name, value in self._buffers.items() if value is not None]
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        if strict and (missing or unexpected):
            msgs: list[str] = []
            if unexpected:
                msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(self._get_name(),
                                                                                    "\n\t".join(msgs)))
        for k in own:
            if k in state_dict:
                self._buffers[k] = state_dict[k]
        return _IncompatibleKeys(missing, unexpected)


_TWINS: dict[type, type] = {}


def torch_class(cls: type) -> type:
    """The ``torch.nn.Module`` twin of the plain class ``cls`` (built once, where torch is imported): ``cls``'s
    body on ``torch.nn.Module``, every method that ``cls`` takes from the plain :class:`Module` replaced by
    torch's, named as ``cls`` (``repr`` and ``Upsample.name`` read ``__name__``) and found by pickle as
    ``poolspec.frontends.torch.nn._torch_<Name>`` (or ``<_poolspec_home>._torch_<Name>``)."""
    twin = _TWINS.get(cls)
    if twin is not None:
        return twin
    import torch  # only called where torch is in sys.modules (or a pickle of a twin is loaded)

    base = torch.nn.Module
    # a class of another front-end (torchvision.ops') names the module its twin is found in
    home = getattr(cls, "_poolspec_home", MODULE)
    namespace: dict[str, Any] = {"__module__": home, "__doc__": cls.__doc__, "_poolspec_plain": False}
    for name in vars(Module):
        if name in ("__new__", "__init__", "__init_subclass__", "__module__", "__qualname__", "__doc__", "__dict__",
                    "__weakref__", "__annotations__", "training"):
            continue
        owner = next(k for k in cls.__mro__ if name in vars(k))
        if owner is Module:
            namespace[name] = getattr(base, name) if hasattr(base, name) else None
    twin = type(cls.__name__, (cls, base), namespace)
    twin.__qualname__ = f"_torch_{cls.__name__}"
    _TWINS[cls] = twin
    return twin


def torch_aware(module: str, classes: Iterable[str], pass_on: Callable[[str], Any]) -> Callable[[str], Any]:
    """Make the front-end module ``module`` torch-aware: a class of ``classes`` read from it is its torch twin where
    torch is imported (:func:`torch_class`). The answer is the module's ``__getattr__``: ``_torch_<Name>``, the
    twin of a class (as pickle finds it), and every other name from ``pass_on``."""
    names = frozenset(classes)
    home = sys.modules[module]
    defined = vars(home)

    def __getattr__(name: str) -> Any:
        if name.startswith("_torch_") and name[7:] in names:
            return torch_class(defined[name[7:]])
        return pass_on(name)

    class _TorchAware(types.ModuleType):
        """The module's type: a class read from it is its torch twin where torch is imported."""

        def __getattribute__(self, name: str) -> Any:
            value = super().__getattribute__(name)
            if name in names and sys.modules.get("torch") is not None:
                return torch_class(value)
            return value

    home.__class__ = _TorchAware
    return __getattr__


def _plain(cls: type) -> type:
    """Mark ``cls`` as one of the public plain classes (instantiated as its torch twin where torch is imported)."""
    cls._poolspec_plain = True  # type: ignore[attr-defined]
    return cls


# ---------------------------------------------------------------------------------------------------- max pool


class _MaxPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode"]
    _fn: Any = None

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return ("kernel_size={kernel_size}, stride={stride}, padding={padding}"
                ", dilation={dilation}, ceil_mode={ceil_mode}".format(**self.__dict__))

    def forward(self, input: Any) -> Any:
        return self._fn(input, self.kernel_size, self.stride, self.padding, self.dilation,
                              ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool1d(_MaxPoolNd, fn=max_pool1d): ...
class MaxPool2d(_MaxPoolNd, fn=max_pool2d): ...
class MaxPool3d(_MaxPoolNd, fn=max_pool3d): ...


# ---------------------------------------------------------------------------------------------------- max unpool


class _MaxUnpoolNd(Module):
    _fn: Any = None
    _tuple: Any = None

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        parse = type(self)._tuple
        self.kernel_size = parse(kernel_size)
        self.stride = parse(stride if (stride is not None) else kernel_size)
        self.padding = parse(padding)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input: Any, indices: Any, output_size: Any = None) -> Any:
        return self._fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool1d(_MaxUnpoolNd, fn=max_unpool1d, _tuple=staticmethod(_single)): ...
class MaxUnpool2d(_MaxUnpoolNd, fn=max_unpool2d, _tuple=staticmethod(_pair)): ...
class MaxUnpool3d(_MaxUnpoolNd, fn=max_unpool3d, _tuple=staticmethod(_triple)): ...


# ---------------------------------------------------------------------------------------------------- avg pool


class _AvgPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"]

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


@_plain
class AvgPool1d(_AvgPoolNd):
    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Any) -> Any:
        return avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad)


class _AvgPoolWithDivisor(_AvgPoolNd):
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"]
    _fn: Any = None

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Any) -> Any:
        return self._fn(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                              self.count_include_pad, self.divisor_override)


class AvgPool2d(_AvgPoolWithDivisor, fn=avg_pool2d): ...


class AvgPool3d(_AvgPoolWithDivisor, fn=avg_pool3d):
    def __setstate__(self, d: dict[str, Any]) -> None:  # torch's: modules pickled before these attributes existed
        super().__setstate__(d)
        self.__dict__.setdefault("padding", 0)
        self.__dict__.setdefault("ceil_mode", False)
        self.__dict__.setdefault("count_include_pad", True)


# ---------------------------------------------------------------------------------------------------- fractional


class _FractionalMaxPoolNd(Module):
    __constants__ = ["kernel_size", "return_indices", "output_size", "output_ratio"]
    _n = 2
    _fn: Any = None

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: Any = None) -> None:
        super().__init__()
        n, name = type(self)._n, f"FractionalMaxPool{type(self)._n}d"
        parse = _pair if n == 2 else _triple
        if n == 3 and ((isinstance(kernel_size, int) and kernel_size <= 0)
                       or (isinstance(kernel_size, (tuple, list)) and not all(k > 0 for k in kernel_size))):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        self.kernel_size = parse(kernel_size)
        self.return_indices = return_indices
        torch = _torch()
        if (torch is not None and isinstance(self, torch.nn.Module) and _random_samples is not None
                and not isinstance(_random_samples, torch.Tensor)):
            # another library's array on a torch twin: torch's buffers hold tensors only, so the samples are a
            # plain attribute (out of the state dict), the buffer None as torch registers it without samples
            self.register_buffer("_random_samples", None)
            self.__dict__["_random_samples"] = _random_samples
        else:
            self.register_buffer("_random_samples", _random_samples)
        self.output_size = parse(output_size) if output_size is not None else None
        self.output_ratio = parse(output_ratio) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio[:n]):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Any) -> Any:
        return self._fn(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                              _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd, fn=fractional_max_pool2d, _n=2): ...
class FractionalMaxPool3d(_FractionalMaxPoolNd, fn=fractional_max_pool3d, _n=3): ...


# ---------------------------------------------------------------------------------------------------- lp pool


class _LPPoolNd(Module):
    __constants__ = ["norm_type", "kernel_size", "stride", "ceil_mode"]
    _fn: Any = None

    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return ("norm_type={norm_type}, kernel_size={kernel_size}, stride={stride}, "
                "ceil_mode={ceil_mode}".format(**self.__dict__))

    def forward(self, input: Any) -> Any:
        return self._fn(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class LPPool1d(_LPPoolNd, fn=lp_pool1d): ...
class LPPool2d(_LPPoolNd, fn=lp_pool2d): ...
class LPPool3d(_LPPoolNd, fn=lp_pool3d): ...


# ---------------------------------------------------------------------------------------------------- adaptive


def _sized(module: Any) -> None:
    """torch's adaptive modules refuse output_size=None (a TypeError from its len(); poolspec's functions read it as
    every axis kept): so do these."""
    if module.output_size is None:
        name = type(module).__name__
        raise TypeError(f"{name}: output_size=None: must be an int or a tuple of ints (None entries keep that axis' "
                        f"size), as torch.nn.{name} requires")


class _AdaptiveMaxPoolNd(Module):
    __constants__ = ["output_size", "return_indices"]
    _fn: Any = None

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"

    def forward(self, input: Any) -> Any:
        _sized(self)
        return self._fn(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd, fn=adaptive_max_pool1d): ...
class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd, fn=adaptive_max_pool2d): ...
class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd, fn=adaptive_max_pool3d): ...


class _AdaptiveAvgPoolNd(Module):
    __constants__ = ["output_size"]
    _fn: Any = None

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"

    def forward(self, input: Any) -> Any:
        _sized(self)
        return self._fn(input, self.output_size)


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd, fn=adaptive_avg_pool1d): ...
class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd, fn=adaptive_avg_pool2d): ...
class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd, fn=adaptive_avg_pool3d): ...


# ---------------------------------------------------------------------------------------------------- upsampling


@_plain
class Upsample(Module):
    __constants__ = ["size", "scale_factor", "mode", "align_corners", "name", "recompute_scale_factor"]

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: bool | None = None, recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor: Any = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Any) -> Any:
        return interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                           recompute_scale_factor=self.recompute_scale_factor)

    def __setstate__(self, state: dict[str, Any]) -> None:  # torch's: modules pickled before the flag existed
        if "recompute_scale_factor" not in state:
            state["recompute_scale_factor"] = True
        super().__setstate__(state)

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        info += ", mode=" + repr(self.mode)
        return info


@_plain
class UpsamplingNearest2d(Upsample):
    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


@_plain
class UpsamplingBilinear2d(Upsample):
    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


CLASSES: tuple[str, ...] = (
           "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d",
           "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
           "LPPool1d", "LPPool2d", "LPPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "FractionalMaxPool2d",
           "FractionalMaxPool3d", "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d")

fill({name: globals()[name] for name in CLASSES})
