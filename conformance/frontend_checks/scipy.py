"""``poolspec.frontends.scipy.ndimage`` against scipy.ndimage's window filters and B-spline functions: values, and
on torch and JAX the gradients of float64 configurations against SciPy's own vector-Jacobian products computed from
its values (SciPy has no gradients: see ``_vjp``).

Every function is DEDICATED (``check_frontends.py --library scipy --per-function 2000`` draws 2,000 of each), and
so is each explicit ``*_backward`` (float64, against SciPy's VJP from its values):
ranks 1-3, float32 / float64 (and a few integer inputs and outputs), odd and even sizes up to past the axis
length, every mode SciPy's filters accept (grid-* aliases included), cval, origins (a few invalid), axes (negative,
permuted, subsets), footprints (max/min: random, all-True, with sizes given too). No NaN: SciPy's separable
max/min filters give history-dependent results with NaN (its Harter deque), which no window rule reproduces.

The B-spline functions (``SPLINES``): ``spline_filter1d`` / ``spline_filter`` on axes of 1 to 100 cells (the
replayed recursion up to 2w + 1 cells and the folded band beyond), orders 0-5 (a few refused), every mode, float32 /
float64 / integer inputs, float and integer outputs; ``map_coordinates`` on axes of 1 to 20 cells, orders 0-5, every
mode, prefilter on and off, cval, coordinates across and beyond the input (integers, half-integers, the edges). The
gradient w.r.t. the input is compared (the coordinates' is not: SciPy's would be central differences). Integer
outputs (compared exactly) are drawn where SciPy's rounding is not at a tie: spline_filter's integer output on axes
of 18 cells or more with a float input (its card: short axes may differ by 1 per pass), map_coordinates' on
coordinates drawn uniformly (no exact half-integer results).

The geometric transforms (``GEOMETRY``): ``zoom`` (factors 0.2-3, output lengths at round's half ties, grid_mode),
``shift`` (integer, half-integer, fractional, past the axis), ``affine_transform`` (every matrix form: 1-d diagonal
without zero entries, square, offset column, homogeneous (a few not: refused), another output rank; output shapes)
and ``rotate`` (multiples of 90 degrees and random angles, axes, reshape), with map_coordinates' options; integer
outputs from float inputs only, and an integer input's raw coefficients (prefilter=False) only at orders 0 and 1.
map_coordinates' and the transforms' integer results are drawn off SciPy's rounding ties (``_untied``).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from . import Config, Refused

LIBRARY = "scipy"
MODES = ("reflect", "grid-mirror", "mirror", "nearest", "wrap", "grid-wrap", "constant", "grid-constant")
FUNCTIONS = ("uniform_filter1d", "uniform_filter", "maximum_filter1d", "maximum_filter", "minimum_filter1d",
             "minimum_filter")
SPLINES = ("spline_filter1d", "spline_filter", "map_coordinates")
GEOMETRY = ("zoom", "shift", "affine_transform", "rotate")
ALL = FUNCTIONS + SPLINES + GEOMETRY


def available() -> str | None:
    try:
        import scipy.ndimage  # noqa: F401
    except ImportError:
        return "scipy is not installed"
    return None


def version() -> str:
    import scipy

    return f"scipy {scipy.__version__}"


def _input(rng: np.random.Generator, shape: tuple[int, ...], extreme: bool) -> np.ndarray:
    r = rng.random()
    if r < 0.45:
        return rng.standard_normal(shape)
    if r < 0.9:
        x = rng.standard_normal(shape) * 10
        if extreme and rng.random() < 0.3:  # ties: the first tap's rule (float32 only: the stored float64 cases
            x = np.round(x / 5)             # are differentiated, by central differences among others)
        return x.astype(np.float32)
    dtype = str(rng.choice(["uint8", "int16", "int32", "int64"]))
    lo = 0 if dtype == "uint8" else -100
    return rng.integers(lo, 100, shape).astype(dtype)


def _origin(rng: np.random.Generator, size: int) -> int:
    if rng.random() < 0.03:
        return int(rng.choice([-(size // 2) - 1, (size - 1) // 2 + 1]))  # invalid: both refuse
    return int(rng.integers(-(size // 2), (size - 1) // 2 + 1))


def _size(rng: np.random.Generator, length: int) -> int:
    return int(rng.integers(1, min(2 * length + 4, 12) + 1))


def _common(rng: np.random.Generator, x: np.ndarray) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if rng.random() < 0.6:
        out["mode"] = str(rng.choice(MODES))
    if rng.random() < 0.5:
        out["cval"] = float(np.round(rng.uniform(-3, 3), 2)) if x.dtype.kind == "f" else float(rng.integers(0, 50))
    if rng.random() < 0.1:
        out["output"] = str(rng.choice(["float64", "float32"] + (["int32"] if x.dtype.kind != "f" else [])))
    return out


def _axes(rng: np.random.Generator, ndim: int) -> Any:
    r = rng.random()
    if r < 0.5:
        return None
    if r < 0.6:
        return int(rng.integers(-ndim, ndim))
    k = int(rng.integers(1, ndim + 1))
    axes = [int(a) for a in rng.permutation(ndim)[:k]]
    return tuple(a - ndim if rng.random() < 0.3 else a for a in axes)


def _shape(rng: np.random.Generator) -> tuple[int, ...]:
    rank = int(rng.choice([1, 2, 2, 3]))
    top = {1: 40, 2: 12, 3: 7}[rank]
    return tuple(int(v) for v in rng.integers(1, top + 1, rank))


def _config(function: str, x: np.ndarray, options: dict[str, Any]) -> Config:
    scale = max(float(np.abs(x.astype(np.float64)).max(initial=0.0)), abs(options.get("cval", 0.0)), 1e-300)
    if x.dtype == np.float32 or options.get("output") == "float32":
        rtol, atol = 1e-5, 1e-6 * scale
    else:
        rtol, atol = 1e-10, 1e-12 * scale
    differentiable = ("input",) if x.dtype == np.float64 and options.get("output") in (None, "float64") else ()
    return Config(f"scipy.ndimage.{function}", {"input": x}, options, differentiable, rtol=rtol, atol=atol)


def _one_d(function: str, rng: np.random.Generator) -> Config:
    shape = _shape(rng)
    x = _input(rng, shape, function != "uniform_filter1d")
    axis = int(rng.integers(-x.ndim, x.ndim))
    size = _size(rng, shape[axis])
    options: dict[str, Any] = {"size": size, "axis": axis, **_common(rng, x)}
    if rng.random() < 0.7:
        options["origin"] = _origin(rng, size)
    return _config(function, x, options)


def _n_d(function: str, rng: np.random.Generator) -> Config:
    shape = _shape(rng)
    extreme = function != "uniform_filter"
    x = _input(rng, shape, extreme)
    axes = _axes(rng, x.ndim)
    ax = list(range(x.ndim)) if axes is None else ([axes % x.ndim] if isinstance(axes, int)
                                                   else [a % x.ndim for a in axes])
    options: dict[str, Any] = _common(rng, x)
    if axes is not None:
        options["axes"] = axes
    if extreme and rng.random() < 0.5:  # a footprint over the filtered axes, in increasing order
        if isinstance(axes, int) and axes < 0 and x.ndim > 1:
            # SciPy 1.17 keeps a negative int `axes` negative in _expand_footprint and then refuses the footprint
            # (its bug, not a rule: the front-end accepts it; its card says so)
            axes = options["axes"] = axes % x.ndim
        fshape = [int(rng.integers(1, min(shape[a] + 3, 6) + 1)) for a in sorted(ax)]
        fp = rng.random(fshape) < (1.0 if rng.random() < 0.15 else 0.6)
        if not fp.any():
            fp.flat[int(rng.integers(fp.size))] = True
        options["footprint"] = fp
        if rng.random() < 0.1:
            options["size"] = 3  # ignored, with SciPy's warning
        if "mode" in options and rng.random() < 0.05:
            options["mode"] = [options["mode"]] * len(ax)  # SciPy refuses a sequence unless the footprint is full
        if rng.random() < 0.6:
            # _expand_origin: the origins follow `axes` when it names fewer axes than the input has, else the
            # input's axes in order
            lens = ([fshape[sorted(ax).index(a)] for a in ax] if len(ax) < x.ndim
                    else [fshape[d] for d in range(x.ndim)])
            options["origin"] = [_origin(rng, n) for n in lens] if rng.random() < 0.7 else _origin(rng, min(lens))
        return _config(function, x, options)
    sizes = [_size(rng, shape[a]) for a in ax]
    if rng.random() < 0.3 or len(set(sizes)) == 1:
        options["size"] = sizes[0] if rng.random() < 0.5 else min(sizes)
        sizes = [options["size"]] * len(ax)
    else:
        options["size"] = sizes
    if rng.random() < 0.6:
        options["origin"] = [_origin(rng, s) for s in sizes] if rng.random() < 0.7 else _origin(rng, min(sizes))
    if "mode" in options and rng.random() < 0.3:
        options["mode"] = [str(rng.choice(MODES)) for _ in ax]
    return _config(function, x, options)


def _spline_shape(rng: np.random.Generator, function: str) -> tuple[int, ...]:
    rank = int(rng.choice([1, 2, 2, 3]))
    if function == "map_coordinates":
        top = {1: 20, 2: 12, 3: 6}[rank]
        return tuple(int(v) for v in rng.integers(1, top + 1, rank))
    # short axes (the replayed recursion, the 1.17.1 reflect aliasing up to 16 cells) and long ones (the band)
    tops = {1: 100, 2: 60, 3: 20}[rank]
    return tuple(int(rng.integers(1, 18)) if rng.random() < 0.5 else int(rng.integers(18, tops + 1))
                 for _ in range(rank)) if rank < 3 else tuple(int(v) for v in rng.integers(1, tops + 1, rank))


def _spline_order(rng: np.random.Generator, low: int) -> int:
    if rng.random() < 0.03:
        return int(rng.choice([low - 1, 6]))  # refused by both
    return int(rng.integers(low, 6))


def _spline(function: str, rng: np.random.Generator) -> Config:
    """spline_filter1d or spline_filter: the prefilter of random axes, orders, modes and dtypes."""
    shape = _spline_shape(rng, function)
    x = _input(rng, shape, False)
    options: dict[str, Any] = {"order": _spline_order(rng, 0 if function == "spline_filter1d" else 2)}
    if function == "spline_filter1d":
        options["axis"] = int(rng.integers(-x.ndim, x.ndim))
    if rng.random() < 0.85:
        options["mode"] = str(rng.choice(MODES))
    r = rng.random()
    if r < 0.15:
        options["output"] = "float32"
    elif r < 0.25 and x.dtype.kind == "f" and (function == "spline_filter1d" or min(shape) >= 18):
        # an integer output where SciPy's recursion and the table cannot round an exact integer to either side
        options["output"] = str(rng.choice(["int32", "int16"]))
    return _config(function, x, options)


def _coordinates(rng: np.random.Generator, shape: tuple[int, ...], special: bool) -> np.ndarray:
    points = (int(rng.integers(1, 40)),) if rng.random() < 0.7 else tuple(int(v) for v in rng.integers(1, 6, 2))
    c = np.stack([rng.uniform(-n - 2.0, 2.0 * n + 2.0, points) for n in shape])
    if special:
        for d, n in enumerate(shape):  # integers, half-integers and the edges, for a fraction of the points
            pick = rng.random(points) < 0.3
            extra = np.array([0.0, n - 1.0, -0.5, n - 0.5, -1.0, float(n), 1e-16, -1e-14, n - 1.0 + 1e-13,
                              -(n - 1.0), 2.0 * n - 2.0])
            choice = np.where(rng.random(points) < 0.5, rng.choice(extra, points),
                              np.round(c[d] * 2) / (2 if rng.random() < 0.5 else 1))
            c[d] = np.where(pick, choice, c[d])
    if rng.random() < 0.05:
        return np.round(c).astype(np.int64)
    return c.astype(np.float32) if rng.random() < 0.1 else c


def _map(rng: np.random.Generator) -> Config:
    """map_coordinates: random inputs, coordinates, orders, modes, prefilter, cval, dtypes."""
    shape = _spline_shape(rng, "map_coordinates")
    x = _input(rng, shape, False)
    options = _interp_options(rng, x, coordinates=True)
    # integer results (an integer input or output) only at uniform coordinates: no exact ties to round
    integral = x.dtype.kind != "f" or options.get("output") == "int32"
    c = _coordinates(rng, shape, not integral)
    config = _config("map_coordinates", x, options)
    config.arrays["coordinates"] = c
    return config


def _interp_options(rng: np.random.Generator, x: np.ndarray, coordinates: bool = False) -> dict[str, Any]:
    """The options the spline functions share; ``coordinates``: map_coordinates' own draws (an int32 output of
    any input, its coordinates then drawn off ties; raw integer coefficients kept)."""
    options: dict[str, Any] = {"order": _spline_order(rng, 0)}
    if rng.random() < 0.85:
        options["mode"] = str(rng.choice(MODES))
    if rng.random() < 0.5:
        options["cval"] = float(np.round(rng.uniform(-3, 3), 2)) if x.dtype.kind == "f" else float(rng.integers(0, 50))
    if rng.random() < 0.25:
        options["prefilter"] = False
    r = rng.random()
    if r < 0.1:
        options["output"] = "float64" if x.dtype != np.float64 else "float32"
    elif r < 0.15 and (coordinates or x.dtype.kind == "f"):
        options["output"] = "int32"  # a float input: no exact ties to round
    if not coordinates and x.dtype.kind != "f" and not options.get("prefilter", True) and options["order"] > 1:
        options["prefilter"] = True  # an integer input's raw coefficients can sum to exact half-integer ties
    return options


def _geometry_shape(rng: np.random.Generator, low: int = 1) -> tuple[int, ...]:
    rank = int(rng.choice([r for r in (1, 2, 2, 3) if r >= low]))
    top = {1: 20, 2: 12, 3: 6}[rank]
    return tuple(int(v) for v in rng.integers(1, top + 1, rank))


def _per_axis(rng: np.random.Generator, ndim: int, draw: Any) -> Any:
    if rng.random() < 0.4:
        return draw()
    values = [draw() for _ in range(ndim)]
    if rng.random() < 0.03:
        values.append(draw())  # the wrong length: both refuse
    return values


def _geometry(function: str, rng: np.random.Generator) -> Config:
    """zoom, shift, affine_transform or rotate: random inputs, geometry, orders, modes, prefilter, cval, dtypes."""
    shape = _geometry_shape(rng, 2 if function == "rotate" else 1)
    x = _input(rng, shape, False)
    options: dict[str, Any] = {}
    nd = x.ndim
    if function == "zoom":
        def factor() -> float:
            r = rng.random()
            if r < 0.2:  # output lengths at exact half ties of round(L * z)
                return float(rng.choice([0.5, 1.5, 2.5])) if rng.random() < 0.5 else 1.0
            return float(np.round(rng.uniform(0.2, 3.0), int(rng.choice([1, 3]))))
        options["zoom"] = _per_axis(rng, nd, factor)
        if rng.random() < 0.3:
            options["grid_mode"] = True
    elif function == "shift":
        def amount() -> float:
            r = rng.random()
            if r < 0.3:
                return float(rng.integers(-8, 9))
            if r < 0.5:
                return float(rng.integers(-16, 17)) / 2
            return float(np.round(rng.uniform(-25, 25), 3))
        options["shift"] = _per_axis(rng, nd, amount)
    elif function == "affine_transform":
        form = rng.random()
        square = rng.uniform(-1.5, 1.5, (nd, nd)) + np.eye(nd) * rng.choice([0.0, 1.0])
        if rng.random() < 0.2:  # a permutation, a flip, or a rotation by a right angle: exact taps
            square = np.eye(nd)[rng.permutation(nd)] * rng.choice([-1.0, 1.0], nd)[:, None]
        offset = np.round(rng.uniform(-4, 4, nd), int(rng.choice([0, 1, 3])))
        if form < 0.25:  # the diagonal fast path (no zero entry: SciPy segfaults on its NaN coordinates)
            m = rng.choice([-1.0, 1.0], nd) * rng.uniform(0.3, 2.0, nd)
            options["matrix"] = np.round(m, int(rng.choice([1, 3])))
        elif form < 0.55:
            options["matrix"] = square
        elif form < 0.7:
            options["matrix"] = np.concatenate([square, offset[:, None]], axis=1)
        elif form < 0.85:
            h = np.eye(nd + 1)
            h[:nd, :nd], h[:nd, nd] = square, offset
            if rng.random() < 0.05:
                h[nd, 0] = 0.5  # not homogeneous: both refuse
            options["matrix"] = h
        else:  # another output rank: (nd, out_nd), out_nd != nd + 1
            out_nd = int(rng.choice([k for k in (1, 2, 3, 4) if k != nd + 1]))
            options["matrix"] = rng.uniform(-1.5, 1.5, (nd, out_nd))
            options["output_shape"] = tuple(int(v) for v in rng.integers(1, 9, out_nd))
        if "output_shape" not in options and rng.random() < 0.4:
            options["output_shape"] = tuple(int(v) for v in rng.integers(1, 13, nd))
        if rng.random() < 0.6:
            options["offset"] = [float(v) for v in offset] if rng.random() < 0.7 else float(offset[0])
    else:  # rotate
        r = rng.random()
        options["angle"] = (float(rng.choice([0, 90, 180, 270, -90, 360, 45, 135])) if r < 0.4
                            else float(np.round(rng.uniform(-400, 400), int(rng.choice([0, 1, 4])))))
        if rng.random() < 0.6:
            a, b = (int(v) for v in rng.choice(nd, 2, replace=False))
            options["axes"] = (a - nd if rng.random() < 0.3 else a, b)
        if rng.random() < 0.4:
            options["reshape"] = False
    options |= _interp_options(rng, x)
    return _config(function, x, options)


def _untied(draw: Any) -> Any:
    """``draw`` (map_coordinates and the geometric transforms, whose integer outputs SciPy rounds half away from
    zero), redrawn while an integer result would be rounded at a tie: where
    SciPy's float64 value (the same call with a float64 output) lies within 1e-9 of a half-integer, SciPy's own
    rounding depends on the last bits of its sum order (an integer input's prefiltered coefficients at
    half-integer positions meet exact ties), which the comparison of integers cannot ask of another sum."""
    import scipy.ndimage

    def untied(rng: np.random.Generator) -> Config:
        while True:
            config = draw(rng)
            x = config.arrays["input"]
            if np.dtype(config.options.get("output") or x.dtype).kind not in "iu":  # no rounding to an integer
                return config
            others = [v for k, v in config.arrays.items() if k != "input"]
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    f = getattr(scipy.ndimage, config.function.rpartition(".")[2])(
                        x.astype(np.float64), *others, **{**config.options, "output": np.float64})
            except (ValueError, TypeError, RuntimeError, IndexError):
                return config  # refused: no value to round
            f = np.asarray(f)
            if not np.any(np.abs(f - np.floor(f) - 0.5) < 1e-9 * max(1.0, float(np.abs(f).max(initial=0.0)))):
                return config
    return untied


def _generator(function: str) -> Any:
    if function == "map_coordinates":
        return _untied(_map)
    if function in GEOMETRY:
        return _untied(lambda rng: _geometry(function, rng))
    if function in SPLINES:
        return lambda rng: _spline(function, rng)
    if function.endswith("1d"):
        return lambda rng: _one_d(function, rng)
    return lambda rng: _n_d(function, rng)


def _backward(function: str, rng: np.random.Generator) -> Config:
    """A forward configuration's float64 input and options, with a cotangent: the explicit VJP against SciPy's
    own (``_vjp``)."""
    forward = _generator(function)(rng)
    x = rng.standard_normal(forward.arrays["input"].shape)
    options = {k: v for k, v in forward.options.items() if k != "output"}
    others = {k: v for k, v in forward.arrays.items() if k != "input"}  # map_coordinates' coordinates
    if "coordinates" in others:
        cot = rng.standard_normal(others["coordinates"].shape[1:])
    elif function in GEOMETRY:  # the output's shape is SciPy's (zoom, rotate's reshape, affine's output_shape)
        try:
            cot = rng.standard_normal(library(Config(forward.function, {"input": x, **others}, options), None)[0][0]
                                      .shape)
        except Refused:
            cot = rng.standard_normal(x.shape)  # refused by both
    else:
        cot = rng.standard_normal(x.shape)
    exact = not function.startswith(("maximum", "minimum"))  # affine: basis responses; max/min: differences
    scale = float(np.abs(cot).max(initial=1.0))
    return Config(f"scipy.ndimage.{function}_backward", {"grad_output": cot, "input": x, **others}, options,
                  rtol=1e-10 if exact else 1e-9, atol=(1e-12 if exact else 1e-9) * scale)


DEDICATED = {f"scipy.ndimage.{f}": _generator(f) for f in ALL}
DEDICATED |= {f"scipy.ndimage.{f}_backward": (lambda rng, f=f: _backward(f, rng)) for f in ALL}
MODULES: dict[str, Any] = {}  # every function has its own draws


def config(rng: np.random.Generator) -> Config:
    return DEDICATED[str(rng.choice(list(DEDICATED)))](rng)


def _call(module: Any, config: Config, x: Any, *others: Any) -> Any:
    """The function on ``x`` (and the configuration's other arrays: map_coordinates' coordinates)."""
    name = config.function.rpartition(".")[2]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "ignoring size because footprint is set": both warn
        return getattr(module, name)(x, *others, **config.options)


def _others(config: Config) -> list[np.ndarray]:
    return [np.array(v) for k, v in config.arrays.items() if k not in ("input", "grad_output")]


def library(config: Config, cotangents: list[np.ndarray] | None) -> tuple[list[np.ndarray], dict[str, np.ndarray]]:
    import scipy.ndimage

    if config.function.endswith("_backward"):
        forward = Config(config.function.removesuffix("_backward"),
                         {k: v for k, v in config.arrays.items() if k != "grad_output"}, config.options, ("input",))
        library(forward, None)  # SciPy's refusals of the forward are the backward's
        return [_vjp(forward, np.array(config.arrays["input"]), np.array(config.arrays["grad_output"]))], {}
    try:
        out = _call(scipy.ndimage, config, np.array(config.arrays["input"]), *_others(config))
    except (ValueError, TypeError, RuntimeError, IndexError) as e:
        raise Refused(f"{type(e).__name__}: {e}") from None
    outs = [np.asarray(out)]
    if cotangents is None or not config.differentiable:
        return outs, {}
    return outs, {"input": _vjp(config, np.array(config.arrays["input"]), cotangents[0])}


def _vjp(config: Config, x: np.ndarray, cot: np.ndarray) -> np.ndarray:
    """SciPy's own vector-Jacobian product, from its values alone: the uniform filter and the B-spline functions
    (w.r.t. the input) are affine, so column i of its Jacobian is f(e_i) - f(0) (exact); a max/min filter is
    piecewise linear, so central differences with a step below a quarter of the smallest gap between the input's
    distinct values (and cval) select the same taps on both sides (exact up to the rounding of x +- h: about
    ulp(x) / h)."""
    import scipy.ndimage

    others = _others(config)

    def f(v: np.ndarray) -> np.ndarray:
        return np.asarray(_call(scipy.ndimage, config, v, *others))

    g = np.zeros_like(x)
    flat = g.reshape(-1)
    if not any(k in config.function for k in ("maximum", "minimum")):  # uniform and the splines: affine
        base = f(np.zeros_like(x))
        for i in range(x.size):
            e = np.zeros_like(x)
            e.flat[i] = 1.0
            flat[i] = np.sum(cot * (f(e) - base))
        return g
    values = np.unique(np.append(x.reshape(-1), config.options.get("cval", 0.0)))
    gap = float(np.diff(values).min()) if values.size > 1 else 1.0
    h = 2.0 ** np.floor(np.log2(min(gap, 1.0) / 4))
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = h
        flat[i] = np.sum(cot * (f(x + e) - f(x - e))) / (2 * h)
    return g


def frontend(config: Config) -> Any:
    from poolspec.frontends.scipy import ndimage

    if config.function.endswith("_backward"):
        fn = getattr(ndimage, config.function.rpartition(".")[2])

        def backward(grad_output: Any, x: Any, *others: Any) -> Any:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                return fn(grad_output, x, *others, **config.options)

        return backward
    return lambda x, *others: _call(ndimage, config, x, *others)
