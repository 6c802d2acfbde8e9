"""Eager calls on torch run as compiled programs: one ``torch.compile``d program per (op, arguments, input
shapes, dtypes, devices, grad mode), cached, built from the same graph node as inside a user's
``torch.compile`` (and so fused by inductor, see ``torch_inductor.fuse``). Off by default; on with
``poolspec.set_eager_fusion(True)`` or ``POOLSPEC_EAGER_FUSION=1``. Meant for GPUs, where a poolspec call
is otherwise a chain of small kernels launched one by one from Python; the first call of each key pays the
compilation (0.2-4 s on CPU), later calls a cache lookup. Calls under torch.func transforms, forward-mode AD
or on the meta device, and calls with array arguments a program cannot hold as constants (fractional
pooling's samples), take the plain eager path, as do the max pools and max_unpool (``_pays``). A compiled
program has no double backward: leave the switch off for higher-order gradients.

>>> import torch, poolspec
>>> before = poolspec.set_eager_fusion(True)
>>> poolspec.avg_pool2d(torch.ones(1, 1, 4, 4), 2).shape
torch.Size([1, 1, 2, 2])
>>> _ = poolspec.set_eager_fusion(before)
"""

from __future__ import annotations

import builtins
import os
import types
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

ENABLED = [os.environ.get("POOLSPEC_EAGER_FUSION", "0") == "1"]
# set while a call takes the plain eager path (arguments a compiled program cannot hold as constants)
PLAIN = [False]
_PROGRAMS: OrderedDict[Any, Any] = OrderedDict()
_MAX_PROGRAMS = 256


def set_eager_fusion(enabled: bool) -> bool:
    """Switch running eager torch calls of the ops as cached compiled programs on or off.

    Meant for GPUs, where a call is otherwise a chain of small kernels launched one by one; the first call of
    each key pays the compilation, later ones a cache lookup. Other libraries are unaffected; calls under
    torch.func transforms, forward-mode AD or on the meta device, with fractional pooling's samples, and the max
    pools and max_unpool take the plain eager path. A compiled program has no double backward: leave it off for
    higher-order gradients. Initially on where ``POOLSPEC_EAGER_FUSION=1``.

    Parameters
    ----------
    enabled : bool
        True to run eligible eager torch calls as compiled programs, False for the plain eager path.

    Returns
    -------
    bool
        The previous setting.

    Raises
    ------
    ValueError
        Never for a bool; only propagated from ``bool(enabled)``, e.g. for a NumPy array of more than one
        element. The setting is then unchanged.
    RuntimeError
        Likewise, from ``bool(enabled)`` for a torch tensor of more than one element.

    Examples
    --------
    >>> import poolspec
    >>> previous = poolspec.set_eager_fusion(False)
    >>> poolspec.set_eager_fusion(previous)
    False
    """
    before = ENABLED[0]
    ENABLED[0] = bool(enabled)
    return before


def _literal(v: Any) -> bool:
    if v is None or isinstance(v, (bool, int, float, str)):
        return True
    return isinstance(v, (tuple, list)) and all(_literal(e) for e in v)


def _compilable(torch: Any, tensors: tuple[Any, ...]) -> bool:
    """Plain tensors outside torch.func and forward-mode AD, on a real device: what a compiled program takes."""
    wrapped = torch._C._functorch.is_functorch_wrapped_tensor
    if torch.autograd.forward_ad._current_level >= 0:
        return False
    return not any(t is not None and (wrapped(t) or t.device.type == "meta") for t in tensors)


def _pays(op: str) -> bool:
    """Whether a program beats the plain path: not for the ops whose eager kernels index by data (max and
    fractional pools, max_unpool), whose slot and put routes beat the gathers a program runs (measured on
    CPU, max_pool2d 3x3/2 on 16x32x32x32, one thread, forward+backward: 4.6 ms plain, 8.1 ms as a
    program)."""
    from ..registry import op as record

    rec = record(op)
    return rec.kind != "routed" and not rec.takes_indices


def _meta(t: Any) -> Any:
    return None if t is None else (tuple(t.shape), t.stride(), t.dtype, t.device, t.requires_grad)


def _template(*tensors: Any) -> Any:
    return _TARGET(*tensors)  # type: ignore[name-defined]  # noqa: F821  (each program's own globals)


def _program(key: Any, target: Callable[..., Any]) -> Any:
    """A compiled program calling ``target``, with a code object of its own (Dynamo keeps its compiled
    variants per code object, at most a few: one per key keeps every key compiled once)."""
    import torch

    found = _PROGRAMS.get(key)
    if found is not None:
        _PROGRAMS.move_to_end(key)
        return found
    code = _template.__code__.replace(co_name=f"poolspec_program_{id(key)}")
    fn = types.FunctionType(code, {"_TARGET": target, "__builtins__": builtins}, code.co_name)
    found = _PROGRAMS[key] = torch.compile(fn, fullgraph=True, dynamic=False)
    if len(_PROGRAMS) > _MAX_PROGRAMS:
        _PROGRAMS.popitem(last=False)
    return found


def run(kind: str, op: str, args: dict[str, Any], tensors: tuple[Any, ...], node: Callable[..., Any],
        plain: Callable[[], Any]) -> Any:
    """``node(*tensors)`` (the op's graph binding) as a cached compiled program; ``plain()`` (the public op on
    the plain eager path) where the arguments are not constants a program can hold."""
    import torch

    if not _literal(list(args.values())) or not _compilable(torch, tensors) or not _pays(op):
        PLAIN[0] = True
        try:
            return plain()
        finally:
            PLAIN[0] = False
    key = (kind, op, repr(sorted(args.items())), tuple(_meta(t) for t in tensors), torch.is_grad_enabled())
    return _program(key, node)(*tensors)
