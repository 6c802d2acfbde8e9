"""The one import point of array-api-compat: namespaces, devices, dtypes and host-to-array transfer.

Nothing here imports a backend: array-api-compat recognises arrays by the modules already loaded.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Sequence
from typing import Any

import array_api_compat as _aac
import numpy as np

is_torch_array = _aac.is_torch_array
is_jax_array = _aac.is_jax_array
is_dask_array = _aac.is_dask_array

FLOAT_NAMES = ("float16", "bfloat16", "float32", "float64")
_NAMES = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
)


def namespace(*arrays: Any, names: tuple[str, ...] = ("x",), op: str | None = None) -> Any:
    """The array-API namespace shared by ``arrays``; a TypeError names the op and the argument otherwise."""
    if len(arrays) == 1:
        space = _SPACES.get(type(arrays[0]))
        if space is not None:
            return space
    prefix = f"{op}: " if op else ""
    spaces = []
    for arr, name in zip(arrays, names):
        try:
            spaces.append(_aac.array_namespace(arr))
        except TypeError:
            raise TypeError(
                f"{prefix}{name} must be an array of a supported library (NumPy, CuPy, torch, JAX, Dask, "
                f"array-api-strict), got {type(arr).__module__}.{type(arr).__qualname__}"
            ) from None
    first = spaces[0]
    if len(arrays) == 1 and _cacheable(arrays[0]):
        _SPACES[type(arrays[0])] = first
    for space, name in zip(spaces[1:], names[1:]):
        if space is not first:
            raise TypeError(
                f"{prefix}{name} belongs to {space.__name__} but {names[0]} belongs to {first.__name__}: "
                "all arrays of one call must come from the same library"
            )
    return first


# The namespace of an array is a function of its type for NumPy, CuPy, torch and JAX (array-api-compat's lookup
# costs microseconds, more than a tiny call's kernels); others (array-api-strict's per-version namespaces,
# Dask) keep the lookup.
_SPACES: dict[type, Any] = {}


def _cacheable(x: Any) -> bool:
    return _aac.is_numpy_array(x) or is_torch_array(x) or is_jax_array(x) or _aac.is_cupy_array(x)


def device(x: Any) -> Any:
    if _KINDS.get(type(x)) == "torch":
        return x.device
    return _aac.device(x)


def on(x: Any) -> dict[str, Any]:
    """Keywords that create an array on ``x``'s device: ``xp.zeros(shape, dtype=t, **on(x))``. Empty where
    the library has one device or places new arrays itself (NumPy, Dask, JAX, whose tracers have no device);
    torch, CuPy and array-api-strict take the device, since a 0-d constant on the default device would mix
    devices in the next operation (CUDA or CuPy: an error or a host round trip)."""
    if _aac.is_numpy_array(x) or is_jax_array(x) or _aac.is_dask_array(x):
        return {}
    return {"device": device(x)}


_DTYPE_NAMES: dict[tuple[str, Any], str] = {}


def dtype_name(xp: Any, dtype: Any) -> str:
    """A backend-neutral name for ``dtype`` (``'float32'``, ``'bfloat16'``, ...)."""
    key: tuple[Any, Any] | None
    try:
        key = (xp.__name__, dtype)
        name = _DTYPE_NAMES.get(key)
    except TypeError:  # an unhashable dtype
        key = name = None
    if name is None:
        name = _dtype_name(xp, dtype)
        if key is not None:
            _DTYPE_NAMES[key] = name
    return name


def _dtype_name(xp: Any, dtype: Any) -> str:
    byteorder = getattr(dtype, "byteorder", "=")
    if byteorder not in ("=", "|") and isinstance(dtype, np.dtype) and not dtype.isnative:
        dtype = dtype.newbyteorder("=")  # a big-endian float64 is a float64
    text = str(dtype)
    if "bfloat16" in text:
        return "bfloat16"
    for name in _NAMES:
        candidate = getattr(xp, name, None)
        if candidate is not None and dtype == candidate:
            return name
    return text.rsplit(".", 1)[-1]


def dtype_of(xp: Any, name: str) -> Any:
    """The namespace's dtype for a name from :func:`dtype_name`."""
    if name == "bfloat16" and not hasattr(xp, "bfloat16"):
        # jax.numpy and torch expose bfloat16; the compat torch namespace forwards it.
        raise TypeError(f"{xp.__name__} has no bfloat16")
    return getattr(xp, name)


def compute_dtype_name(name: str) -> str:
    """Half precision is weighted and accumulated in float32 and rounded once (torch's CPU rule)."""
    return "float32" if name in ("float16", "bfloat16") else name


def to_compute(xp: Any, x: Any) -> Any:
    """``x`` in its compute dtype (float32 for half precision, else unchanged)."""
    name = dtype_name(xp, x.dtype)
    compute = compute_dtype_name(name)
    return x if compute == name else xp.astype(x, dtype_of(xp, compute))


def to_host(a: Any) -> np.ndarray:
    """A small device array's values as NumPy (a host sync: for data-dependent sizes of a kernel's
    schedule only)."""
    if is_torch_array(a):
        t = a.detach().cpu()
        try:
            return t.numpy()
        except RuntimeError:  # inside a torch.func transform no tensor's storage may be read, its values may
            return np.array(t.tolist(), dtype=np.dtype(str(t.dtype).removeprefix("torch.")))
    if _aac.is_cupy_array(a):
        return a.get()
    if _aac.is_array_api_strict_namespace(namespace(a)):
        import array_api_strict

        a = a.to_device(array_api_strict.Device("CPU_DEVICE"))
    return np.asarray(a)


def to_namespace(host: np.ndarray, xp: Any, like: Any, dtype: Any = None) -> Any:
    """Move a small host-side plan array into ``like``'s namespace and device.

    Under ``jax.jit`` the result is a compile-time constant.
    """
    dev = device(like)
    if is_dask_array(like):
        # Plan arrays are small and shared by every chunk: keep them NumPy so dask embeds them
        # in the graph as constants instead of making them arrays of their own.
        out = np.asarray(host)
        return out if dtype is None else out.astype(_host_dtype(dtype))
    if not host.flags.writeable and is_torch_array(like):
        host = host.copy()  # torch warns on read-only NumPy buffers
    out = xp.asarray(host, device=dev) if dev is not None else xp.asarray(host)
    if dtype is not None and out.dtype != dtype:
        out = xp.astype(out, dtype)
    return out


def _host_dtype(dtype: Any) -> np.dtype:
    try:
        return np.dtype(dtype)  # NumPy's own dtypes and scalar types (Dask's namespace hands those out)
    except TypeError:
        return np.dtype(str(dtype).rsplit(".", 1)[-1])


def take(xp: Any, x: Any, indices: Any, axis: int) -> Any:
    """``xp.take`` for indices known to be in range and non-negative (plan tables, winners): on torch,
    ``index_select`` itself (array-api-compat's ``take`` adds three ops to map negative indices)."""
    if _KINDS.get(type(x)) == "torch":
        return sys.modules["torch"].index_select(x, axis, indices)
    if isinstance(x, np.ndarray) and not x.flags.c_contiguous and isinstance(indices, np.ndarray):
        # NumPy's take copies a strided array whole first (a channels-last view: the whole input per tap);
        # one index array indexes it in place, with the same result
        return x[(slice(None),) * (axis % x.ndim) + (indices,)]
    return xp.take(x, indices, axis=axis)


def put(mod: Any, out: Any, indices: Any, values: Any) -> None:
    """``out[indices] = values`` in place, 1-d (numpy, cupy or torch, as ``writable_module`` gives): torch's
    ``scatter_``, several times faster on CPU than its indexed assignment. Deterministic where the indices are
    distinct; callers that may pass repeats use only what does not depend on which write stays."""
    if mod.__name__ == "torch":
        out.scatter_(0, indices, values)
    else:
        out[indices] = values


def put_rows(mod: Any, out: Any, rows: Any, values: Any) -> None:
    """``out[r, rows[r, j]] = values[r, j]`` in place, 2-d (numpy, cupy or torch, as ``writable_module``
    gives; ``values`` may broadcast along the rows); int64 ``rows``. Deterministic where each row's indices
    are distinct; callers that may pass repeats use only what does not depend on which write stays."""
    if mod.__name__ == "torch":
        out.scatter_(1, rows, values if values.shape == rows.shape else values.expand(rows.shape))
    elif hasattr(mod, "put_along_axis"):
        mod.put_along_axis(out, rows, values, axis=1)
    else:  # an older CuPy: flat positions
        width = out.shape[1]
        out.reshape(-1)[(rows + mod.arange(0, out.size, width)[:, None]).reshape(-1)] = \
            mod.broadcast_to(values, rows.shape).reshape(-1)


def take_rows(mod: Any, a: Any, rows: Any) -> Any:
    """``a[r, rows[r, j]]`` (numpy, cupy or torch), int64 ``rows``."""
    if mod.__name__ == "torch":
        return mod.gather(a, 1, rows)
    return mod.take_along_axis(a, rows, axis=1)


# Set while a captured graph's poolspec node is decomposed into torch ops for inductor
# (autodiff/torch_graph.py): every kernel takes its functional path and reads no values. A list, not a
# global rebinding, so modules that imported it see the change; one element read per check.
FUNCTIONAL = [False]


@contextlib.contextmanager
def _raised(flag: list[bool]) -> Iterator[None]:
    """``flag[0]`` True inside the block, as it was after it."""
    before = flag[0]
    flag[0] = True
    try:
        yield
    finally:
        flag[0] = before


def functional() -> contextlib.AbstractContextManager[None]:
    """Run the ops' functional path on traced tensors (a decomposition for torch.compile's inductor)."""
    return _raised(FUNCTIONAL)


# Set while a captured graph's node runs a max pool's backward at the winners its own forward node gave: the
# public backward then skips comparing them with a fresh forward (families._routed.routed_vjp).
WINNERS = [False]


def own_winners() -> contextlib.AbstractContextManager[None]:
    """Indices passed to a max pool's backward in this block are its forward's winners."""
    return _raised(WINNERS)


# Set by ``bench_counts.as_on_a_gpu()`` or POOLSPEC_AS_ON_A_GPU=1: arrays on the CPU take the paths a GPU takes,
# so that their operations can be counted, and their values checked, where no GPU is (the same code, the same
# array operations; only the device differs).
AS_ON_A_GPU = [os.environ.get("POOLSPEC_AS_ON_A_GPU") == "1"]


def launch_bound(x: Any) -> bool:
    """Whether each array operation on ``x`` costs a kernel launch and host time whatever its size (torch CUDA,
    CuPy): the kernels then take their few-operation paths (one gather over every tap, one reduction) instead
    of the CPU's many cheap strided passes."""
    kind = library_of(x)
    if kind == "cupy":
        return True
    if kind == "torch":
        return x.device.type not in ("cpu", "meta") or (AS_ON_A_GPU[0] and x.device.type == "cpu")
    if kind == "numpy":
        return AS_ON_A_GPU[0]
    return bool(getattr(x, "poolspec_launch_bound", False))  # an array that says so (poolspec.counting's)


def library_of(x: Any) -> str:
    """Which of the libraries with in-place arrays ``x`` belongs to ("numpy", "torch", "cupy"), else "": a
    classification (for caches keyed by library), not a choice of path."""
    kind = _KINDS.get(type(x))
    if kind is None:  # once per array type: array-api-compat's tests cost more than the kernels of a tiny call
        kind = _KINDS[type(x)] = ("numpy" if _aac.is_numpy_array(x) else "torch" if is_torch_array(x)
                                  else "cupy" if _aac.is_cupy_array(x) else "")
    return kind


def eager_library(x: Any) -> str | None:
    """The kind of array whose constants may be kept between calls (an eager array with values: "numpy",
    "torch", "cupy", or another eager library's type name), else None (a JAX array or trace, a Dask graph, a
    torch.func wrapper, a meta or fake tensor)."""
    kind = library_of(x)
    if kind and writable_module(x) is not None:  # the common case, without readable's checks
        return kind
    if is_jax_array(x) or not readable(x):
        return None
    return kind or type(x).__module__ + "." + type(x).__name__


def writable_module(x: Any) -> Any:
    """The array module (numpy, cupy or torch) whose ``out=`` and in-place ops may fill a fresh result that
    has the type of ``x``; None for immutable or lazy arrays (JAX, Dask, array-api-strict), which take
    the functional path. torch qualifies only where autograd does not record (inside the bindings'
    Functions, or for tensors without ``requires_grad``)."""
    if FUNCTIONAL[0]:
        return None
    kind = library_of(x)
    if kind == "numpy":
        return np
    if kind == "torch":
        torch = sys.modules["torch"]
        if x.device.type == "meta" or (x.requires_grad and torch.is_grad_enabled()):
            return None  # meta tensors have no values to branch on
        return torch
    return sys.modules["cupy"] if kind == "cupy" else None


_KINDS: dict[type, str] = {}


# the fewest innermost channels for which passes over channels-last data follow memory: runs of 3 or 4 cells
# (RGB, RGBA) cost more per cell than strided reads into channels-first buffers (measured: 3 and 4 lose, 16
# and 32 win, on NumPy and torch)
LANES = 8


def buffer(mod: Any, shape: tuple[int, ...], dtype: Any, like: Any, zero: bool = False) -> Any:
    """A fresh output buffer of ``mod`` (numpy, cupy or torch) on ``like``'s device.

    Large torch CPU buffers get transparent-huge-page advice before their first touch, as NumPy gives its
    own: otherwise every 4 KiB of a fresh buffer costs a page fault, which on a VM takes longer than the
    kernel's writes (a 200 MB fill: 71 ms with 4 KiB faults, 13 ms with huge pages, on the CI VM).
    """
    if mod.__name__ != "torch":
        return (mod.zeros if zero else mod.empty)(shape, dtype=dtype)
    fmt = mod.contiguous_format
    if like.ndim == len(shape) and like.ndim in (4, 5) and not like.is_contiguous() and like.shape[1] >= LANES:
        # a channels-last input (torch's memory format, or poolspec's layout="channels_last" view): the buffer
        # in its order, so that writes follow the reads and no layout copy is left for the end (not with
        # fewer than LANES channels, where the passes run in axis order)
        last = mod.channels_last if like.ndim == 4 else mod.channels_last_3d
        if like.is_contiguous(memory_format=last):
            fmt = last
    out = mod.empty(shape, dtype=dtype, device=like.device, memory_format=fmt)
    if like.device.type == "cpu" and out.numel() * out.element_size() >= _HUGE:
        _advise_huge(out.data_ptr(), out.numel() * out.element_size())
    return out.zero_() if zero else out


def permuted_buffer(like: Any, shape: tuple[int, ...], dtype: Any) -> Any | None:
    """For a NumPy array or torch tensor ``like`` whose axes are permuted in memory (a ``layout="channels_last"``
    view of any rank), an empty buffer of ``shape`` laid out in ``like``'s memory order, so that a pass that
    writes as it reads follows memory; None where ``like``'s axes are in order."""
    order = memory_order(like) if isinstance(like, np.ndarray) or is_torch_array(like) else None
    if order is None or len(shape) != like.ndim:
        return None
    memory = tuple(shape[a] for a in order)
    back = tuple(order.index(a) for a in range(like.ndim))
    if isinstance(like, np.ndarray):
        return np.empty(memory, dtype=dtype).transpose(back)
    return buffer(sys.modules["torch"], memory, dtype, permute(like, order)).permute(back)


def stride_order(like: Any) -> list[int] | None:
    """The axes of a NumPy array or torch tensor by decreasing stride, ties in axis order (size-1 axes then
    tell a channels-last (N, C, 1, 1) from a channels-first one); None for other backends and tensors whose
    strides are not to be read (torch.func's wrappers, graphs being decomposed)."""
    if isinstance(like, np.ndarray):
        strides = like.strides
    elif (is_torch_array(like) and like.layout == sys.modules["torch"].strided and not FUNCTIONAL[0]
          and not sys.modules["torch"]._C._functorch.is_functorch_wrapped_tensor(like)):
        strides = like.stride()
    else:
        return None
    return sorted(range(like.ndim), key=lambda a: -strides[a])


def memory_order(like: Any) -> list[int] | None:
    """The axes of a NumPy array or torch tensor in memory order (outermost first), where that is not their
    own order: a permuted array (a ``layout="channels_last"`` view, a channels_last tensor, or a block sliced
    from one); None for arrays in their own order and where :func:`stride_order` is None. Torch tensors
    must also be dense in that order."""
    if like.ndim < 3 or 0 in like.shape:
        return None
    if isinstance(like, np.ndarray) and like.flags.c_contiguous:
        return None
    if is_torch_array(like) and like.is_contiguous():
        return None
    order = stride_order(like)
    if order is None or order == list(range(like.ndim)):
        return None
    if is_torch_array(like) and not like.permute(order).is_contiguous():
        return None  # a slice of an ordered tensor, or overlapping strides: left to the kernels as it is
    return order


def permute(a: Any, order: Sequence[int]) -> Any:
    """``a``'s axes in ``order`` (a view), by the array's own method."""
    return a.permute(tuple(order)) if is_torch_array(a) else a.transpose(tuple(order))


def laid_out(xp: Any, a: Any, shape: Sequence[int], order: Sequence[int]) -> Any:
    """The array of ``shape`` whose elements ``a`` holds in memory ``order`` (outermost axis first): ``a``
    reshaped to the axes in that order, then viewed in axis order."""
    memory = tuple(shape[i] for i in order)
    return permute(xp.reshape(a, memory), [list(order).index(i) for i in range(len(order))])


# glibc serves smaller buffers from its heap once warm (no fresh pages, nothing to gain), and advice there
# would split the heap's mappings; from its largest mmap threshold up, every call maps fresh pages
_HUGE = 1 << 25
_MADV_HUGEPAGE = 14
_madvise: Any = None


def _advise_huge(address: int, nbytes: int) -> None:
    global _madvise
    if _madvise is None:
        _madvise = False
        try:
            import ctypes
            import sys

            if sys.platform.startswith("linux"):
                libc = ctypes.CDLL(None, use_errno=True)
                libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
                _madvise = libc.madvise
        except (OSError, AttributeError):
            pass
    if _madvise:
        start = -(-address // (1 << 21)) << 21  # whole 2 MiB pages inside the buffer only
        stop = ((address + nbytes) >> 21) << 21
        if stop > start:
            _madvise(start, stop - start, _MADV_HUGEPAGE)  # advice only: a refusal changes nothing


def is_traced(a: Any) -> bool:
    """Whether ``a`` is a JAX tracer (inside jit or a transform): its values cannot be read on the host."""
    if not is_jax_array(a):
        return False
    import jax

    return isinstance(a, jax.core.Tracer)


def is_symbolic(a: Any) -> bool:
    """No values to branch on: a JAX tracer, a torch meta or fake tensor, a tensor being decomposed."""
    if FUNCTIONAL[0]:
        return True
    if is_jax_array(a):
        return is_traced(a)
    if not is_torch_array(a):
        return False
    if a.device.type == "meta":
        return True
    fake = getattr(getattr(sys.modules["torch"], "_subclasses", None), "FakeTensor", None)
    return fake is not None and isinstance(a, fake)


def readable(a: Any) -> bool:
    """Whether ``a``'s values can be read on the host as they are: not symbolic, not lazy (Dask), not wrapped
    by a torch.func transform."""
    if is_symbolic(a) or is_dask_array(a):
        return False
    return not (is_torch_array(a) and sys.modules["torch"]._C._functorch.is_functorch_wrapped_tensor(a))


def extremes(xp: Any, a: Any) -> tuple[Any, Any] | None:
    """(min, max) of a non-empty array as Python numbers, for an argument check before any computation;
    None where the values cannot be read (a JAX tracer, a torch meta or fake tensor). Under torch.func
    transforms the check reads the tensor they wrap (vmap of a per-sample index: every sample's values),
    since ``.item()`` on a batched tensor is refused."""
    if is_jax_array(a):
        if is_traced(a):
            return None
        host = np.asarray(a)  # concrete, but a jnp reduction inside a jit trace would be staged
        return host.min().item(), host.max().item()
    if is_torch_array(a):
        functorch = sys.modules["torch"]._C._functorch
        while functorch.is_functorch_wrapped_tensor(a):
            a = functorch.get_unwrapped(a)
        if is_symbolic(a):
            return None
        torch = sys.modules["torch"]
        if a.requires_grad:
            a = a.detach()
        lo, hi = torch.stack(torch.aminmax(a)).tolist()  # one reduction and one read: on a GPU each is a sync
        return lo, hi
    number = int if xp.isdtype(a.dtype, "integral") else float
    return number(xp.min(a)), number(xp.max(a))


def sign(xp: Any, x: Any) -> Any:
    """``xp.sign`` without a write: array-api-compat's torch sign patches NaNs in place (torch's gives 0),
    which a traced graph for inductor refuses."""
    if is_torch_array(x):
        torch = sys.modules["torch"]
        return torch.where(torch.isnan(x), x, torch.sign(x))
    return xp.sign(x)


def matmul(xp: Any, a: Any, b: Any) -> Any:
    """``a @ b`` at full precision: JAX's default float32 matmul on NVIDIA GPUs (and TPUs) rounds its
    operands to TF32 (bfloat16 on TPU), off by about 1e-3."""
    if is_jax_array(a):
        import jax

        return jax.numpy.matmul(a, b, precision=jax.lax.Precision.HIGHEST)
    return xp.matmul(a, b)


def index_dtype(xp: Any, like: Any) -> Any:
    """int64, torch's index dtype - except on JAX without 64-bit mode, whose widest integer is int32 (asking
    for int64 there only earns a warning and an int32)."""
    if is_jax_array(like):
        import jax

        if not jax.config.read("jax_enable_x64"):
            return xp.int32
    return xp.int64


def stop_gradient(x: Any) -> Any:
    """``x`` cut from autodiff (torch's detach, JAX's stop_gradient), for a computation that is not
    differentiated (a search for winners)."""
    if is_torch_array(x):
        return x.detach()
    if is_jax_array(x):
        return sys.modules["jax"].lax.stop_gradient(x)
    return x


def dense_copy(view: Any) -> Any:
    """A C-contiguous copy of a NumPy array or torch tensor (a view in another order)."""
    if is_torch_array(view):
        return view.clone(memory_format=sys.modules["torch"].contiguous_format)
    return np.array(view, order="C")


def copy(xp: Any, x: Any) -> Any:
    """A new array equal to ``x`` (torch's ``clone`` keeps it out of torch.asarray's requires_grad rule)."""
    return x.clone() if is_torch_array(x) else xp.asarray(x, copy=True)
