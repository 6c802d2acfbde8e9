"""What the two ONNX peers share: torch-style calls mapped onto one-node ONNX models built with onnx.helper, one
model per (op, attributes, input shapes and dtypes), run by the peer's ``prepare`` (an onnxruntime session or
onnx's ReferenceEvaluator). Only layout is adapted here (a batch axis for unbatched input; torch's per-plane max
indices re-encoded as ONNX's flat ones); an argument the ONNX op cannot state raises NotExpressible."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ._common import NotExpressible, ntuple, require

if TYPE_CHECKING:  # onnx itself is imported only when a model is built: "installed" must not need it
    import onnx

OPSET = 20  # GridSample N-D and AffineGrid first appear in opset 20; Resize resolves to Resize-19 (antialias)
API = (f"one-node ONNX opset {OPSET} models: AveragePool, MaxPool (Indices), LpPool, GlobalAveragePool, "
       "GlobalMaxPool, MaxUnpool, Resize, GridSample, AffineGrid, RoiAlign (opset 16), MaxRoiPool (opset 1, "
       "onnxruntime)")

# a finding both peers share: Resize's linear mode has no rank or dtype limit (torch's 1-d linear and 3-d trilinear
# refuse uint8: '"compute_indices_weights_linear" not implemented for 'Byte'')
UINT8_LINEAR = {"ops": ["interpolate"], "flags": ["uint8_refused"], "checks": ["raises"],
                "rule": "Resize's linear mode takes uint8 at every rank and returns uint8, where torch refuses uint8 "
                        "in its 1-d linear and 3-d trilinear modes (only bilinear, bicubic and the antialiased "
                        "filters resample uint8)",
                "upstream": "new"}
Runner = Callable[[dict[str, np.ndarray]], list[np.ndarray]]
_RESIZE = {"nearest": "nearest", "nearest-exact": "nearest", "linear": "linear", "bilinear": "linear",
           "trilinear": "linear", "bicubic": "cubic"}  # area (adaptive average) and lanczos have no Resize mode
_GRID_MODES = {"bilinear": "linear", "nearest": "nearest", "bicubic": "cubic"}
# a dtype outside the op's type constraints, as onnxruntime and as onnx's checker word it
_TYPE_ERRORS = (re.compile(r"Type 'tensor\((?P<type>\w+)\)' of input parameter \((?P<input>\w+)\) of operator "
                           r"\((?P<op>\w+)\)"),
                re.compile(r"\(op_type:(?P<op>\w+)\): (?P<input>\w+) typestr: \w+, has unsupported type: "
                           r"tensor\((?P<type>\w+)\)"))
_ONNX_TYPES = {"double": "float64", "float": "float32", "float16": "float16"}


def _frozen(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    return tuple(_frozen(v) for v in value) if isinstance(value, (list, tuple)) else value


def _model(op: str, inputs: list[np.ndarray | None], attributes: dict[str, Any], outputs: int,
           opset: int = OPSET) -> onnx.ModelProto:
    import onnx
    from onnx import helper

    names = [f"i{k}" if a is not None else "" for k, a in enumerate(inputs)]  # "" skips an optional input
    while names[-1] == "":  # trailing ones are left out (onnxruntime's MaxUnpool counts a trailing "" as given)
        names.pop()
    out_names = ["y", "indices"][:outputs]
    node = helper.make_node(op, names, out_names, **attributes)
    typed = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
             for n, a in zip(names, inputs) if a is not None]
    x_type = helper.np_dtype_to_tensor_dtype(inputs[0].dtype)
    # outputs of known rank and unknown extents (onnx's checker wants a shape on every graph output)
    rank = len(inputs[1]) if op == "AffineGrid" else inputs[0].ndim
    dims = [f"d{k}" for k in range(rank)]
    outs = [helper.make_tensor_value_info(n, x_type if n == "y" else onnx.TensorProto.INT64, dims) for n in out_names]
    graph = helper.make_graph([node], op, typed, outs)
    # the IR version that goes with the opset, not onnx's newest (which a runtime may not read yet)
    return helper.make_model_gen_version(graph, opset_imports=[helper.make_opsetid("", opset)])


def _batched(x: np.ndarray, n: int) -> tuple[np.ndarray, bool]:
    """torch's unbatched (C, *spatial) form gets the batch axis ONNX always has."""
    return (x[None], True) if x.ndim == n + 1 else (x, False)


class Peer:
    """The torch-style functions over one ONNX runtime. ``prepare(model)`` returns a runner (feeds -> outputs);
    ``runtime`` names the runtime in the reason for a dtype it has no kernel for."""

    def __init__(self, runtime: str, prepare: Callable[[onnx.ModelProto], Runner]) -> None:
        self.runtime, self._prepare = runtime, prepare
        self._cache: dict[Any, Runner] = {}

    def run(self, op: str, inputs: list[np.ndarray | None], attributes: dict[str, Any],
            outputs: int = 1, opset: int = OPSET) -> list[np.ndarray]:
        key = (op, _frozen(attributes), tuple(None if a is None else (a.shape, a.dtype.str) for a in inputs), outputs,
               opset)
        runner = self._cache.get(key)
        if runner is None:
            try:
                runner = self._prepare(_model(op, inputs, attributes, outputs, opset))
            except Exception as e:
                self._refuse_dtype(e, op, inputs[0].dtype.name)
                raise
            self._cache[key] = runner
        return runner({f"i{k}": a for k, a in enumerate(inputs) if a is not None})

    def _refuse_dtype(self, error: Exception, op: str, dtype: str) -> None:
        """A dtype ONNX's type constraints leave out, or one the runtime registered no kernel for, is a call the
        peer cannot make (never cast): NotExpressible. Every other refusal stays the runtime's error."""
        text = str(error)
        for pattern in _TYPE_ERRORS:
            bad = pattern.search(text)
            if bad:
                raise NotExpressible(f"ONNX {bad['op']} does not take {_ONNX_TYPES.get(bad['type'], bad['type'])} "
                                     f"(input {bad['input']})") from error
        if "NOT_IMPLEMENTED" in text and "Could not find an implementation" in text:
            raise NotExpressible(f"{self.runtime} has no {op} kernel for {dtype}") from error
        if "InsertedPrecisionFreeCast" in text:  # onnxruntime's cast to a kernel's float, which fails to build
            raise NotExpressible(f"{self.runtime} has no {op} kernel for {dtype}") from error

    # ------------------------------------------------------------------------------------------------ pooling

    @staticmethod
    def _window(n: int, kernel_size: Any, stride: Any, padding: Any) -> dict[str, list[int]]:
        k = ntuple(kernel_size, n)
        s = ntuple(stride, n) if stride not in (None, (), []) else k  # torch: stride defaults to the kernel
        p = ntuple(padding, n)
        return {"kernel_shape": list(k), "strides": list(s), "pads": list(p) * 2}  # begins, then ends

    def avg_pool(self, n: int, x: np.ndarray, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: Any = None) -> np.ndarray:
        require(divisor_override is None, "AveragePool divides by the window's count: no divisor_override")
        xb, unbatched = _batched(x, n)
        attributes = {**self._window(n, kernel_size, stride, padding), "ceil_mode": int(ceil_mode),
                      "count_include_pad": int(count_include_pad)}
        (y,) = self.run("AveragePool", [xb], attributes)
        return y[0] if unbatched else y

    def max_pool(self, n: int, x: np.ndarray, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
        xb, unbatched = _batched(x, n)
        attributes = {**self._window(n, kernel_size, stride, padding), "dilations": list(ntuple(dilation, n)),
                      "ceil_mode": int(ceil_mode), "storage_order": 0}
        out = self.run("MaxPool", [xb], attributes, 2 if return_indices else 1)
        y = out[0][0] if unbatched else out[0]
        if not return_indices:
            return y
        # ONNX counts Indices over the whole NCHW input, torch within each (n, c) plane
        N, C, *spatial = xb.shape
        planes = math.prod(spatial) * np.arange(N * C, dtype=np.int64).reshape(N, C, *(1,) * n)
        indices = out[1] - planes
        return y, (indices[0] if unbatched else indices)

    def lp_pool(self, n: int, x: np.ndarray, norm_type: Any, kernel_size: Any, stride: Any = None,
                ceil_mode: bool = False) -> np.ndarray:
        p = float(norm_type)
        require(math.isfinite(p) and p == int(p), f"LpPool's p is an integer attribute: norm_type={norm_type}")
        xb, unbatched = _batched(x, n)
        (y,) = self.run("LpPool", [xb], {**self._window(n, kernel_size, stride, 0), "p": int(p),
                                          "ceil_mode": int(ceil_mode)})
        return y[0] if unbatched else y

    def _global(self, op: str, n: int, x: np.ndarray, output_size: Any) -> np.ndarray:
        xb, unbatched = _batched(x, n)
        sizes = [L if o is None else o for o, L in zip(ntuple(output_size, n), xb.shape[2:])]
        require(all(o == 1 for o in sizes), f"{op} pools every plane to one value: output_size={output_size}")
        (y,) = self.run(op, [xb], {})
        return y[0] if unbatched else y

    def adaptive_avg_pool(self, n: int, x: np.ndarray, output_size: Any) -> np.ndarray:
        return self._global("GlobalAveragePool", n, x, output_size)

    def adaptive_max_pool(self, n: int, x: np.ndarray, output_size: Any, return_indices: bool = False) -> Any:
        y = self._global("GlobalMaxPool", n, x, output_size)
        return (y, None) if return_indices else y  # GlobalMaxPool has no Indices output

    def max_unpool(self, n: int, x: np.ndarray, indices: np.ndarray, kernel_size: Any, stride: Any = None,
                   padding: Any = 0, output_size: Any = None) -> np.ndarray:
        xb, unbatched = _batched(x, n)
        ib = indices[None] if unbatched else indices
        w = self._window(n, kernel_size, stride, padding)
        N, C = xb.shape[:2]
        if output_size is None:  # ONNX's default output shape is torch's; needed here for the index encoding
            S = [(L - 1) * s - 2 * p + k for L, k, s, p in zip(xb.shape[2:], w["kernel_shape"], w["strides"],
                                                               w["pads"])]
        else:
            S = list(output_size)[-n:]
        plane, total = math.prod(S), N * C * math.prod(S)
        planes = plane * np.arange(N * C, dtype=np.int64).reshape(N, C, *(1,) * n)
        # torch's index is within its (n, c) plane, ONNX's over the whole output; one outside its plane is kept
        # outside the whole output, so that ONNX's own range rule judges it
        flat = np.where(ib < 0, ib, np.where(ib >= plane, ib - plane + total, ib + planes)).astype(np.int64)
        shape = None if output_size is None else np.array([N, C, *S], dtype=np.int64)
        (y,) = self.run("MaxUnpool", [xb, flat, shape], w)
        return y[0] if unbatched else y

    # --------------------------------------------------------------------------------------------- sampling

    def interpolate(self, x: np.ndarray, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                    align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                    antialias: bool = False) -> np.ndarray:
        require(mode in _RESIZE, f"Resize has no mode like torch's {mode!r}")
        n = x.ndim - 2
        attributes: dict[str, Any] = {"mode": _RESIZE[mode]}
        if mode == "nearest":  # torch: floor(i * L / O)
            attributes.update(coordinate_transformation_mode="asymmetric", nearest_mode="floor")
        elif mode == "nearest-exact":  # torch: floor((i + 1/2) * L / O) = round half up of half_pixel's x
            attributes.update(coordinate_transformation_mode="half_pixel", nearest_mode="round_prefer_ceil")
        else:  # torch: x = r(i + 1/2) - 1/2 for every O. (pytorch_half_pixel, torch.onnx's choice, puts an O = 1
            # output at x = 0 instead of torch's L/2 - 1/2, so it is not torch's rule.)
            attributes["coordinate_transformation_mode"] = "half_pixel"
        if align_corners:
            # torch's antialiased filters keep the centres r(i + 1/2) and only take r = (L-1)/(O-1) from it
            require(not antialias, "Resize's align_corners samples at r*i, torch's antialias at r*(i + 1/2) "
                                   "with r = (L-1)/(O-1)")
            attributes["coordinate_transformation_mode"] = "align_corners"
        if mode == "bicubic":  # torch's plain cubic: Keys A = -0.75, taps clamped into the input
            attributes.update(cubic_coeff_a=-0.75, exclude_outside=0)
        if antialias:
            # torch's antialiased filters (PIL's) keep only the taps inside the input, renormalised; its cubic
            # one uses a = -0.5
            attributes.update(antialias=1, exclude_outside=1)
            if mode == "bicubic":
                attributes["cubic_coeff_a"] = -0.5
        lead = list(x.shape[:2])
        sizes = scales = None
        if size is not None:
            sizes = np.array(lead + list(ntuple(size, n)), dtype=np.int64)
        if scale_factor is not None:
            sf = ntuple(scale_factor, n)
            if recompute_scale_factor:  # torch keeps only the size trunc(L * sf) (in double)
                sizes = np.array(lead + [math.floor(float(L) * f) for L, f in zip(x.shape[2:], sf)], dtype=np.int64)
            else:  # the scale reaches the coordinates, as in torch (ONNX holds it in float32)
                scales = np.array([1.0, 1.0, *sf], dtype=np.float32)
        (y,) = self.run("Resize", [x, None, scales, sizes], attributes)
        return y

    def grid_sample(self, x: np.ndarray, grid: np.ndarray, mode: str = "bilinear", padding_mode: str = "zeros",
                    align_corners: bool | None = None) -> np.ndarray:
        # torch's bilinear is trilinear on 5-D input: ONNX's N-D linear. A name torch does not know has no ONNX
        # name (passing it on would make torch's invalid "cubic" ONNX's valid one); padding names are ONNX's own,
        # so ONNX judges those
        require(mode in _GRID_MODES, f"{mode!r} is no torch grid_sample mode: there is no ONNX mode for it")
        (y,) = self.run("GridSample", [x, grid], {"mode": _GRID_MODES[mode], "padding_mode": padding_mode,
                                                   "align_corners": int(bool(align_corners))})
        return y

    def affine_grid(self, theta: np.ndarray, size: Any, align_corners: bool | None = None) -> np.ndarray:
        (y,) = self.run("AffineGrid", [theta, np.array(list(size), dtype=np.int64)],
                        {"align_corners": int(bool(align_corners))})
        return y

    # ------------------------------------------------------------------------------------------------ boxes

    @staticmethod
    def _rois(boxes: np.ndarray) -> None:
        require(boxes.ndim == 2 and boxes.shape[1] == 5, f"boxes of shape {boxes.shape}: the ONNX ops take rois "
                "with their batch indices, which only torchvision's (K, 5) form carries")

    def roi_align(self, x: np.ndarray, boxes: np.ndarray, output_size: Any, spatial_scale: float = 1.0,
                  sampling_ratio: int = -1, aligned: bool = False) -> np.ndarray:
        # torchvision's aligned=True is half_pixel; aligned=False is output_half_pixel, which (as torchvision)
        # clamps the roi size to at least 1; torchvision's adaptive sampling (<= 0) is ONNX's 0. The opset is 16,
        # the newest onnxruntime registers (17 to 22 change only the types)
        self._rois(boxes)
        require(isinstance(sampling_ratio, int) and not isinstance(sampling_ratio, bool),
                f"sampling_ratio {sampling_ratio!r}: an ONNX int attribute holds ints only")
        ph, pw = ntuple(output_size, 2)
        attributes = {"coordinate_transformation_mode": "half_pixel" if aligned else "output_half_pixel",
                      "mode": "avg", "output_height": ph, "output_width": pw,
                      "sampling_ratio": max(sampling_ratio, 0), "spatial_scale": float(spatial_scale)}
        (y,) = self.run("RoiAlign", [x, np.ascontiguousarray(boxes[:, 1:]), boxes[:, 0].astype(np.int64)],
                        attributes, 1, 16)
        return y

    def roi_pool(self, x: np.ndarray, boxes: np.ndarray, output_size: Any, spatial_scale: float = 1.0) -> np.ndarray:
        # MaxRoiPool's rois are torchvision's boxes (batch index, x1, y1, x2, y2); opset 1, as onnxruntime registers
        self._rois(boxes)
        (y,) = self.run("MaxRoiPool", [x, boxes], {"pooled_shape": list(ntuple(output_size, 2)),
                                                   "spatial_scale": float(spatial_scale)}, 1, 1)
        return y


def functions(peer: Peer) -> dict[str, Callable[..., Any]]:
    """The torch-style functions an adapter module exports, by poolspec's op names (fractional_max_pool: none)."""
    out: dict[str, Callable[..., Any]] = {}
    for family in ("avg_pool", "max_pool", "lp_pool", "adaptive_avg_pool", "adaptive_max_pool", "max_unpool"):
        for n in (1, 2, 3):
            out[f"{family}{n}d"] = functools.partial(getattr(peer, family), n)
    out.update(interpolate=peer.interpolate, grid_sample=peer.grid_sample, affine_grid=peer.affine_grid,
               roi_align=peer.roi_align)
    if peer.runtime == "onnxruntime":  # onnx's reference evaluator has no MaxRoiPool
        out["roi_pool"] = peer.roi_pool
    return out
