"""``scipy.ndimage`` on poolspec's kernels: the window filters ``uniform_filter1d``, ``uniform_filter``,
``maximum_filter1d``, ``maximum_filter``, ``minimum_filter1d`` and ``minimum_filter``, and the B-spline functions
``spline_filter1d``, ``spline_filter`` and ``map_coordinates``, and the geometric transforms ``zoom``, ``shift``,
``affine_transform`` and ``rotate``, with SciPy 1.17's names, signatures, boundary modes and numbers, on any
array-API array (NumPy, CuPy, torch, JAX, Dask, array-api-strict), differentiable with deterministic gradients on
torch and JAX.

The filters extend each axis by the boundary mode as slices, flips and constants (no gathers) and reduce over
shifted slices; the spline prefilter is a tap table per axis and map_coordinates one gather of each point's taps.
``output`` is a dtype (the result is returned). Other names are SciPy's own.

>>> import numpy as np
>>> from poolspec.frontends.scipy import ndimage
>>> ndimage.maximum_filter1d(np.array([2, 8, 0, 4, 1, 9, 9, 0]), size=3)
array([8, 8, 8, 4, 9, 9, 9, 9])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ....families._docs import Template
from ..._common import mirror
from . import _filters, _geometry, _splines
from ._cards import CARDS as CARDS
from ._dask import filter_depth, local
from ._graph import captured

__all__ = ["maximum_filter", "maximum_filter1d", "minimum_filter", "minimum_filter1d", "uniform_filter",
           "uniform_filter1d", "maximum_filter_backward", "maximum_filter1d_backward", "minimum_filter_backward",
           "minimum_filter1d_backward", "uniform_filter_backward", "uniform_filter1d_backward", "spline_filter1d",
           "spline_filter", "map_coordinates", "spline_filter1d_backward", "spline_filter_backward",
           "map_coordinates_backward", "zoom", "shift", "affine_transform", "rotate", "zoom_backward", "shift_backward",
           "affine_transform_backward", "rotate_backward"]

# the docstrings' shared text is families/_docs.py's scipy blocks; the fields say what each forward refuses
_1D = {"refusals": "size < 1, an unknown mode, an invalid origin, an axis out of range",
       "non_int": "size, axis or origin"}
_ND = {"refusals": "an unknown mode, an invalid origin, a sequence whose length is not the number of axes, repeated "
                   "or out-of-range axes",
       "non_int": "origin or axes"}
# maximum and minimum: size may be None (a footprint instead), and cval must fit an integer input
_FOOTPRINT = {"size_type": "int, sequence of int or None"}
_CVAL = ", a cval outside an integer input's range"
_EXTREME_1D = {**_1D, "refusals": _1D["refusals"] + _CVAL}
_EXTREME_ND = {**_ND, **_FOOTPRINT,
               "refusals": _ND["refusals"] + ", neither size nor footprint, an all-zero footprint, a footprint whose "
                                             "rank is not len(axes)" + _CVAL}


_UNIFORM_FILTER1D_DOC = Template("""\
The mean over ``size`` cells along ``axis`` (cells ``i - size//2 - origin`` on), as
``scipy.ndimage.uniform_filter1d``; the result has ``output``'s dtype (default: the input's; integers
truncated).

Parameters
----------
{scipy_1d}

{scipy_returns}
>>> uniform_filter1d(np.array([2.0, 8.0, 0.0, 4.0]), 3)
array([4.        , 3.33333333, 4.        , 2.66666667])
""")


@captured("uniform_filter1d")
@local(filter_depth)
@_UNIFORM_FILTER1D_DOC.document(**_1D)
def uniform_filter1d(input: Any, size: int, axis: int = -1, output: Any = None, mode: str = "reflect",
                     cval: float = 0.0, origin: int = 0) -> Any:
    return _filters.uniform1d("uniform_filter1d", input, size, axis, output, mode, cval, origin)


_UNIFORM_FILTER_DOC = Template("""\
``uniform_filter1d`` along each of ``axes`` in turn (an axis of size <= 1 skipped), each pass stored in
``output``'s dtype, as ``scipy.ndimage.uniform_filter``.

Parameters
----------
{scipy_box}
{scipy_nd}

{scipy_returns}
>>> uniform_filter(np.arange(9.0).reshape(3, 3), 2, mode="nearest")
array([[0. , 0.5, 1.5],
       [1.5, 2. , 3. ],
       [4.5, 5. , 6. ]])
""")


@captured("uniform_filter")
@local(filter_depth)
@_UNIFORM_FILTER_DOC.document(**_ND)
def uniform_filter(input: Any, size: Any = 3, output: Any = None, mode: Any = "reflect", cval: float = 0.0,
                   origin: Any = 0, *, axes: Any = None) -> Any:
    return _filters.uniform("uniform_filter", input, size, output, mode, cval, origin, axes)


_MAXIMUM_FILTER1D_DOC = Template("""\
The maximum over ``size`` cells along ``axis``, as ``scipy.ndimage.maximum_filter1d``.

Parameters
----------
{scipy_1d}

{scipy_returns}
>>> maximum_filter1d(np.array([2.0, 8.0, 0.0, 4.0]), 2, mode="constant", cval=5.0)
array([5., 8., 8., 4.])
""")


@captured("maximum_filter1d")
@local(filter_depth)
@_MAXIMUM_FILTER1D_DOC.document(**_EXTREME_1D)
def maximum_filter1d(input: Any, size: int, axis: int = -1, output: Any = None, mode: str = "reflect",
                     cval: float = 0.0, origin: int = 0) -> Any:
    return _filters.extreme1d("maximum_filter1d", input, size, axis, output, mode, cval, origin, False)


_MINIMUM_FILTER1D_DOC = Template("""\
The minimum over ``size`` cells along ``axis``, as ``scipy.ndimage.minimum_filter1d``.

Parameters
----------
{scipy_1d}

{scipy_returns}
>>> minimum_filter1d(np.array([2, 8, 0, 4, 1, 9, 9, 0]), 3)
array([2, 0, 0, 0, 1, 1, 0, 0])
""")


@captured("minimum_filter1d")
@local(filter_depth)
@_MINIMUM_FILTER1D_DOC.document(**_EXTREME_1D)
def minimum_filter1d(input: Any, size: int, axis: int = -1, output: Any = None, mode: str = "reflect",
                     cval: float = 0.0, origin: int = 0) -> Any:
    return _filters.extreme1d("minimum_filter1d", input, size, axis, output, mode, cval, origin, True)


_MAXIMUM_FILTER_DOC = Template("""\
The maximum over a ``size`` box (nested 1-D maxima over ``axes``) or over the True cells of
``footprint``, as ``scipy.ndimage.maximum_filter``.

Parameters
----------
{scipy_box}
{scipy_footprint}
{scipy_nd}

{scipy_returns}
>>> maximum_filter(np.array([[1.0, 5.0, 2.0], [0.0, 3.0, 4.0]]), footprint=[[True, False], [False, True]])
array([[1., 5., 5.],
       [1., 3., 5.]])
""")


@captured("maximum_filter")
@local(filter_depth)
@_MAXIMUM_FILTER_DOC.document(**_EXTREME_ND)
def maximum_filter(input: Any, size: Any = None, footprint: Any = None, output: Any = None, mode: Any = "reflect",
                   cval: float = 0.0, origin: Any = 0, *, axes: Any = None) -> Any:
    return _filters.extreme("maximum_filter", input, size, footprint, output, mode, cval, origin, axes, False)


_MINIMUM_FILTER_DOC = Template("""\
The minimum over a ``size`` box or over the True cells of ``footprint``, as
``scipy.ndimage.minimum_filter``.

Parameters
----------
{scipy_box}
{scipy_footprint}
{scipy_nd}

{scipy_returns}
>>> minimum_filter(np.array([[1.0, 5.0, 2.0], [0.0, 3.0, 4.0]]), size=(1, 2))
array([[1., 1., 2.],
       [0., 0., 3.]])
""")


@captured("minimum_filter")
@local(filter_depth)
@_MINIMUM_FILTER_DOC.document(**_EXTREME_ND)
def minimum_filter(input: Any, size: Any = None, footprint: Any = None, output: Any = None, mode: Any = "reflect",
                   cval: float = 0.0, origin: Any = 0, *, axes: Any = None) -> Any:
    return _filters.extreme("minimum_filter", input, size, footprint, output, mode, cval, origin, axes, True)


_UNIFORM_FILTER1D_BACKWARD_DOC = Template("""\
The VJP of :func:`uniform_filter1d` w.r.t. ``input``: the filter's transpose (a window sum of the zero-extended
cotangent, folded back onto the cells the mode copies), deterministic on every backend.

Parameters
----------
{scipy_grad_output}
{scipy_1d}

{scipy_backward_returns}
>>> uniform_filter1d_backward(np.array([3.0, 0.0, 0.0]), np.zeros(3), 3)
array([2., 1., 0.])
""")


@local(filter_depth, arrays=2)
@_UNIFORM_FILTER1D_BACKWARD_DOC.document()
def uniform_filter1d_backward(grad_output: Any, input: Any, size: int, axis: int = -1, output: Any = None,
                              mode: str = "reflect", cval: float = 0.0, origin: int = 0) -> Any:
    return _filters.uniform1d_backward("uniform_filter1d_backward", grad_output, input, size, axis, output, mode,
                                       cval, origin)


_UNIFORM_FILTER_BACKWARD_DOC = Template("""\
The VJP of :func:`uniform_filter` w.r.t. ``input``: the per-axis transposes in reverse order.

Parameters
----------
{scipy_grad_output}
{scipy_box}
{scipy_nd}

{scipy_backward_returns}
>>> uniform_filter_backward(np.ones((2, 2)), np.zeros((2, 2)), 2)
array([[2.25, 0.75],
       [0.75, 0.25]])
""")


@local(filter_depth, arrays=2)
@_UNIFORM_FILTER_BACKWARD_DOC.document()
def uniform_filter_backward(grad_output: Any, input: Any, size: Any = 3, output: Any = None, mode: Any = "reflect",
                            cval: float = 0.0, origin: Any = 0, *, axes: Any = None) -> Any:
    return _filters.uniform_backward("uniform_filter_backward", grad_output, input, size, output, mode, cval,
                                     origin, axes)


_MAXIMUM_FILTER1D_BACKWARD_DOC = Template("""\
The VJP of :func:`maximum_filter1d` w.r.t. ``input``: each output's cotangent goes whole to its selected tap
(the first maximum of its window), summed per input cell in a fixed order.

Parameters
----------
{scipy_grad_output}
{scipy_1d}

{scipy_backward_returns}
>>> maximum_filter1d_backward(np.ones(4), np.array([1.0, 3.0, 3.0, 0.0]), 2)
array([1., 2., 1., 0.])
""")


@local(filter_depth, arrays=2)
@_MAXIMUM_FILTER1D_BACKWARD_DOC.document()
def maximum_filter1d_backward(grad_output: Any, input: Any, size: int, axis: int = -1, output: Any = None,
                              mode: str = "reflect", cval: float = 0.0, origin: int = 0) -> Any:
    return _filters.extreme1d_backward("maximum_filter1d_backward", grad_output, input, size, axis, output,
                                       mode, cval, origin, False)


_MAXIMUM_FILTER_BACKWARD_DOC = Template("""\
The VJP of :func:`maximum_filter` w.r.t. ``input``: each pass's cotangent to its selected taps, passes in
reverse order (or the footprint's selected taps).

Parameters
----------
{scipy_grad_output}
{scipy_box}
{scipy_footprint}
{scipy_nd}

{scipy_backward_returns}
>>> maximum_filter_backward(np.ones((1, 3)), np.array([[1.0, 5.0, 2.0]]), size=2)
array([[1., 2., 0.]])
""")


@local(filter_depth, arrays=2)
@_MAXIMUM_FILTER_BACKWARD_DOC.document(**_FOOTPRINT)
def maximum_filter_backward(grad_output: Any, input: Any, size: Any = None, footprint: Any = None, output: Any = None,
                            mode: Any = "reflect", cval: float = 0.0, origin: Any = 0, *, axes: Any = None) -> Any:
    return _filters.extreme_backward("maximum_filter_backward", grad_output, input, size, footprint, output,
                                     mode, cval, origin, axes, False)


_MINIMUM_FILTER1D_BACKWARD_DOC = Template("""\
The VJP of :func:`minimum_filter1d` w.r.t. ``input``: each output's cotangent goes whole to its selected tap
(the first minimum of its window).

Parameters
----------
{scipy_grad_output}
{scipy_1d}

{scipy_backward_returns}
>>> minimum_filter1d_backward(np.ones(3), np.array([2.0, 1.0, 1.0]), 3)
array([0., 3., 0.])
""")


@local(filter_depth, arrays=2)
@_MINIMUM_FILTER1D_BACKWARD_DOC.document()
def minimum_filter1d_backward(grad_output: Any, input: Any, size: int, axis: int = -1, output: Any = None,
                              mode: str = "reflect", cval: float = 0.0, origin: int = 0) -> Any:
    return _filters.extreme1d_backward("minimum_filter1d_backward", grad_output, input, size, axis, output,
                                       mode, cval, origin, True)


_MINIMUM_FILTER_BACKWARD_DOC = Template("""\
The VJP of :func:`minimum_filter` w.r.t. ``input``.

Parameters
----------
{scipy_grad_output}
{scipy_box}
{scipy_footprint}
{scipy_nd}

{scipy_backward_returns}
>>> minimum_filter_backward(np.ones(3), np.array([2.0, 1.0, 3.0]), footprint=[True, False, True])
array([1., 2., 0.])
""")


@local(filter_depth, arrays=2)
@_MINIMUM_FILTER_BACKWARD_DOC.document(**_FOOTPRINT)
def minimum_filter_backward(grad_output: Any, input: Any, size: Any = None, footprint: Any = None, output: Any = None,
                            mode: Any = "reflect", cval: float = 0.0, origin: Any = 0, *, axes: Any = None) -> Any:
    return _filters.extreme_backward("minimum_filter_backward", grad_output, input, size, footprint, output,
                                     mode, cval, origin, axes, True)


# the B-spline functions: the fields say which orders each takes and what it refuses
_SPLINE_1D = {"orders": "0 to 5 (0 and 1: a copy into the output dtype)",
              "refusals": "an order outside [0, 5], an unknown mode, a 0-d input, an axis out of range"}
_SPLINE_ND = {"orders": "2 to 5", "refusals": "an order outside [2, 5], an unknown mode"}
_MAP = {"refusals": "an order outside [0, 5], an unknown mode, a 0-d or empty input, coordinates whose first axis "
                    "is not the input's rank"}


_SPLINE_FILTER1D_DOC = Template("""\
The B-spline prefilter along ``axis`` (the coefficients whose spline interpolates the samples, with the mode's
boundary), as ``scipy.ndimage.spline_filter1d``, SciPy 1.17.1's short-axis reflect rounding included.

Parameters
----------
{scipy_spline_input}
{scipy_spline_order}
axis : int
    The axis filtered (negative counts from the end).
{scipy_spline_output}
{scipy_spline_mode}

{scipy_spline_returns}
>>> spline_filter1d(np.array([0.0, 1.0, 0.0, 0.0]), 2).round(6)
array([-0.485714,  1.457143, -0.257143,  0.085714])
""")


@captured("spline_filter1d")
@_SPLINE_FILTER1D_DOC.document(**_SPLINE_1D)
def spline_filter1d(input: Any, order: int = 3, axis: int = -1, output: Any = np.float64,
                    mode: str = "mirror") -> Any:
    return _splines.spline_filter1d(input, order, axis, output, mode)


_SPLINE_FILTER_DOC = Template("""\
``spline_filter1d`` along every axis in turn, each pass stored in ``output``'s dtype, as
``scipy.ndimage.spline_filter``.

Parameters
----------
{scipy_spline_input}
{scipy_spline_order}
{scipy_spline_output}
{scipy_spline_mode}

{scipy_spline_returns}
>>> spline_filter(np.eye(3), 3).round(6)[0]
array([ 4.125, -3.   ,  1.875])
""")


@captured("spline_filter")
@_SPLINE_FILTER_DOC.document(**_SPLINE_ND)
def spline_filter(input: Any, order: int = 3, output: Any = np.float64, mode: str = "mirror") -> Any:
    return _splines.spline_filter(input, order, output, mode)


_MAP_COORDINATES_DOC = Template("""\
``input``'s B-spline interpolant at ``coordinates`` (row d: the points' coordinate along axis d), with SciPy's
boundary modes, as ``scipy.ndimage.map_coordinates``.

Parameters
----------
{scipy_spline_input}
coordinates : array
    Shaped (input.ndim, ...): bool, integer, float32 or float64 (read in the work dtype); the result has the shape
    of the trailing axes.
output : dtype or None
    The result's dtype (None: the input's); integer outputs are rounded half up (unsigned) or half away from zero
    (signed) and clipped, as SciPy. A dtype only, the result is returned.
{scipy_spline_order}
mode : str
    The boundary mode: 'constant' (cval beyond the edges, exactly 0 and L-1 inside), 'grid-constant' (cval
    for the taps beyond), 'nearest', 'mirror', 'reflect' (= 'grid-mirror'), 'wrap' (SciPy's period L-1) or
    'grid-wrap' (period L).
cval : float
    The value beyond the edges in the constant modes.
prefilter : bool
    Whether ``input`` is prefiltered (``spline_filter`` in float64, padded by 12 cells for 'nearest' and
    'grid-constant') for orders > 1; False: ``input`` is taken as the coefficients.

Returns
-------
array
    The interpolated values, shaped ``coordinates.shape[1:]``, in the output dtype.

Raises
------
ValueError
    SciPy's refusals, naming the argument: {refusals}.
TypeError
    An unsupported input, output or coordinates dtype (an output array included), a non-int order, a complex
    cval, a non-bool prefilter.

{scipy_examples}
>>> map_coordinates(np.arange(12.0).reshape(4, 3), np.array([[0.5, 2.0], [0.5, 1.0]]), order=1)
array([2., 7.])
""")


@captured("map_coordinates", arrays=("coordinates",))
@_MAP_COORDINATES_DOC.document(**_MAP)
def map_coordinates(input: Any, coordinates: Any, output: Any = None, order: int = 3, mode: str = "constant",
                    cval: float = 0.0, prefilter: bool = True) -> Any:
    return _splines.map_coordinates(input, coordinates, output, order, mode, cval, prefilter)


_SPLINE_FILTER1D_BACKWARD_DOC = Template("""\
The VJP of :func:`spline_filter1d` w.r.t. ``input``: the prefilter's transposed tap table along ``axis``,
deterministic on every backend.

Parameters
----------
{scipy_grad_output}
{scipy_spline_input}
{scipy_spline_order}
axis : int
    The axis filtered (negative counts from the end).
{scipy_spline_output}
{scipy_spline_mode}

{scipy_spline_backward_returns}
>>> spline_filter1d_backward(np.array([1.0, 0.0, 0.0]), np.zeros(3), 3)
array([ 1.75, -1.  ,  0.25])
""")


@_SPLINE_FILTER1D_BACKWARD_DOC.document(**_SPLINE_1D)
def spline_filter1d_backward(grad_output: Any, input: Any, order: int = 3, axis: int = -1, output: Any = np.float64,
                             mode: str = "mirror") -> Any:
    return _splines.spline_filter1d_backward(grad_output, input, order, axis, output, mode)


_SPLINE_FILTER_BACKWARD_DOC = Template("""\
The VJP of :func:`spline_filter` w.r.t. ``input``: the transposed prefilters, last axis first.

Parameters
----------
{scipy_grad_output}
{scipy_spline_input}
{scipy_spline_order}
{scipy_spline_output}
{scipy_spline_mode}

{scipy_spline_backward_returns}
>>> spline_filter_backward(np.array([[1.0, 0.0], [0.0, 0.0]]), np.zeros((2, 2)), 2)
array([[ 2.25, -0.75],
       [-0.75,  0.25]])
""")


@_SPLINE_FILTER_BACKWARD_DOC.document(**_SPLINE_ND)
def spline_filter_backward(grad_output: Any, input: Any, order: int = 3, output: Any = np.float64,
                           mode: str = "mirror") -> Any:
    return _splines.spline_filter_backward(grad_output, input, order, output, mode)


_MAP_COORDINATES_BACKWARD_DOC = Template("""\
The VJP of :func:`map_coordinates` w.r.t. ``input`` (cval and the coordinates get none here): each point's
cotangent times its tap weights, summed into the coefficients it read (sorted, no scatter-add), then the
transposed prefilter and the pad folded back.

Parameters
----------
grad_output : array
    The cotangent of the forward's output (shaped ``coordinates.shape[1:]``; float).
{scipy_spline_input}
coordinates : array
    The forward's coordinates, shaped (input.ndim, ...).
output : dtype or None
    The forward's output dtype (None: the input's); float only.
{scipy_spline_order}
mode : str
    The forward's boundary mode.
cval : float
    The forward's cval (it does not enter the gradient).
prefilter : bool
    The forward's flag.

{scipy_spline_backward_returns}
>>> map_coordinates_backward(np.array([1.0]), np.zeros(3), np.array([[0.25]]), order=1)
array([0.75, 0.25, 0.  ])
""")


@_MAP_COORDINATES_BACKWARD_DOC.document(**_MAP)
def map_coordinates_backward(grad_output: Any, input: Any, coordinates: Any, output: Any = None, order: int = 3,
                             mode: str = "constant", cval: float = 0.0, prefilter: bool = True) -> Any:
    return _splines.map_coordinates_backward(grad_output, input, coordinates, output, order, mode, cval, prefilter)


# the geometric transforms: the output's shape and what each refuses
_COMMON_REFUSALS = "an order outside [0, 5], an unknown mode, a 0-d input"
_ZOOM = {"out_shape": "``round(input.shape * zoom)`` (Python's round, half to even)",
         "refusals": _COMMON_REFUSALS + ", a zoom sequence whose length is not the input's rank, a negative zoom",
         "type_refusals": ", a non-bool grid_mode"}
_SHIFT = {"out_shape": "like ``input``",
          "refusals": _COMMON_REFUSALS + ", a shift sequence whose length is not the input's rank",
          "type_refusals": ""}
_AFFINE = {"out_shape": "``output_shape`` (default: the input's)",
           "refusals": _COMMON_REFUSALS + ", a matrix that is not 1-d or 2-d, a wrong number of rows or columns, a "
                                          "homogeneous matrix whose last row is not [0, ..., 0, 1], an offset "
                                          "sequence whose length is not the input's rank",
           "type_refusals": ""}
_ROTATE = {"out_shape": "the input's, the rotated plane enlarged to hold the rotated input with ``reshape``",
           "refusals": _COMMON_REFUSALS + ", a 1-d input, axes that are not two ints in range",
           "type_refusals": ", a non-bool reshape"}


_ZOOM_DOC = Template("""\
``input`` resampled on a grid ``zoom`` times as fine per axis (output ``k`` reads coordinate
``k * (L - 1) / (O - 1)``; with ``grid_mode``, ``(k + 0.5) * L / O - 0.5``), as ``scipy.ndimage.zoom``.

Parameters
----------
{scipy_spline_input}
zoom : float or sequence of float
    The zoom factor per axis, or one for all.
{scipy_interp_tail}
grid_mode : bool
    Keyword-only: the pixel-edge grid (``L / O`` per output cell) instead of the corner samples.

{scipy_interp_returns}
>>> zoom(np.arange(4.0), 1.5, order=1)
array([0. , 0.6, 1.2, 1.8, 2.4, 3. ])
""")


@captured("zoom")
@_ZOOM_DOC.document(**_ZOOM)
def zoom(input: Any, zoom: Any, output: Any = None, order: int = 3, mode: str = "constant", cval: float = 0.0,
         prefilter: bool = True, *, grid_mode: bool = False) -> Any:
    return _geometry.zoom(input, zoom, output, order, mode, cval, prefilter, grid_mode=grid_mode)


_SHIFT_DOC = Template("""\
``input`` shifted by ``shift`` cells per axis (output ``k`` reads coordinate ``k - shift``), as
``scipy.ndimage.shift``.

Parameters
----------
{scipy_spline_input}
shift : float or sequence of float
    The shift per axis, or one for all.
{scipy_interp_tail}

{scipy_interp_returns}
>>> shift(np.array([1.0, 2.0, 4.0, 8.0]), 1, order=1)
array([0., 1., 2., 4.])
""")


@captured("shift", arrays=("shift",))
@_SHIFT_DOC.document(**_SHIFT)
def shift(input: Any, shift: Any, output: Any = None, order: int = 3, mode: str = "constant", cval: float = 0.0,
          prefilter: bool = True) -> Any:
    return _geometry.shift(input, shift, output, order, mode, cval, prefilter)


_AFFINE_TRANSFORM_DOC = Template("""\
``input`` read at ``matrix @ o + offset`` for each output index ``o`` (pull resampling), as
``scipy.ndimage.affine_transform``.

Parameters
----------
{scipy_spline_input}
matrix : array
    (ndim, ndim) or (ndim, out_ndim); (ndim, ndim + 1) with the offset as its last column; (ndim + 1, ndim + 1)
    homogeneous; or (ndim,): a diagonal, read ``(o + offset / m) * m`` as SciPy's zoom-shift path.
offset : float or sequence of float
    The offset per input axis, or one for all (ignored with an offset column).
output_shape : tuple of int or None
    The output's shape (None: the input's).
{scipy_interp_tail}

{scipy_interp_returns}
>>> affine_transform(np.arange(6.0).reshape(2, 3), [[0, 1], [1, 0]], output_shape=(3, 2), order=1)
array([[0., 3.],
       [1., 4.],
       [2., 5.]])
""")


@captured("affine_transform", arrays=("matrix", "offset"))
@_AFFINE_TRANSFORM_DOC.document(**_AFFINE)
def affine_transform(input: Any, matrix: Any, offset: Any = 0.0, output_shape: Any = None, output: Any = None,
                     order: int = 3, mode: str = "constant", cval: float = 0.0, prefilter: bool = True) -> Any:
    return _geometry.affine_transform(input, matrix, offset, output_shape, output, order, mode, cval, prefilter)


_ROTATE_DOC = Template("""\
``input`` rotated by ``angle`` degrees in the plane of ``axes`` about the plane's centre (every other axis
plane by plane), as ``scipy.ndimage.rotate``.

Parameters
----------
{scipy_spline_input}
angle : float
    The rotation in degrees (SciPy's cosdg / sindg: exact at multiples of 90).
axes : tuple of int
    The two axes of the rotation plane (sorted: (1, 0) and (0, 1) are the same plane).
reshape : bool
    Enlarge the plane to hold the whole rotated input (False: the input's shape).
{scipy_interp_tail}

{scipy_interp_returns}
>>> rotate(np.arange(6.0).reshape(2, 3), 90, order=0)
array([[2., 5.],
       [1., 4.],
       [0., 3.]])
""")


@captured("rotate")
@_ROTATE_DOC.document(**_ROTATE)
def rotate(input: Any, angle: float, axes: Any = (1, 0), reshape: bool = True, output: Any = None, order: int = 3,
           mode: str = "constant", cval: float = 0.0, prefilter: bool = True) -> Any:
    return _geometry.rotate(input, angle, axes, reshape, output, order, mode, cval, prefilter)


_GEOMETRY_GRAD_OUTPUT = """\
grad_output : array
    The cotangent of the forward's output (its shape; float)."""


_ZOOM_BACKWARD_DOC = Template("""\
The VJP of :func:`zoom` w.r.t. ``input``: the per-axis interpolation and prefilter tables transposed,
deterministic on every backend.

Parameters
----------
{grad_output}
{scipy_spline_input}
zoom : float or sequence of float
    The forward's zoom.
{scipy_interp_tail}
grid_mode : bool
    Keyword-only: the forward's flag.

{scipy_spline_backward_returns}
>>> zoom_backward(np.array([1.0, 0.0, 0.0, 0.0]), np.zeros(2), 2, order=1)
array([1., 0.])
""", defaults={"grad_output": _GEOMETRY_GRAD_OUTPUT})


@_ZOOM_BACKWARD_DOC.document()
def zoom_backward(grad_output: Any, input: Any, zoom: Any, output: Any = None, order: int = 3,
                  mode: str = "constant", cval: float = 0.0, prefilter: bool = True, *, grid_mode: bool = False) -> Any:
    return _geometry.zoom_backward(grad_output, input, zoom, output, order, mode, cval, prefilter,
                                   grid_mode=grid_mode)


_SHIFT_BACKWARD_DOC = Template("""\
The VJP of :func:`shift` w.r.t. ``input``: the per-axis tables transposed.

Parameters
----------
{grad_output}
{scipy_spline_input}
shift : float or sequence of float
    The forward's shift.
{scipy_interp_tail}

{scipy_spline_backward_returns}
>>> shift_backward(np.ones(3), np.zeros(3), 0.5, order=1)
array([0.5, 1. , 0.5])
""", defaults={"grad_output": _GEOMETRY_GRAD_OUTPUT})


@_SHIFT_BACKWARD_DOC.document()
def shift_backward(grad_output: Any, input: Any, shift: Any, output: Any = None, order: int = 3,
                   mode: str = "constant", cval: float = 0.0, prefilter: bool = True) -> Any:
    return _geometry.shift_backward(grad_output, input, shift, output, order, mode, cval, prefilter)


_AFFINE_TRANSFORM_BACKWARD_DOC = Template("""\
The VJP of :func:`affine_transform` w.r.t. ``input`` (the matrix and offset get none): each output's cotangent
times its tap weights, summed into the coefficients it read (sorted, no scatter-add), then the transposed
prefilter.

Parameters
----------
{grad_output}
{scipy_spline_input}
matrix : array
    The forward's matrix.
offset : float or sequence of float
    The forward's offset.
output_shape : tuple of int or None
    The forward's output shape.
{scipy_interp_tail}

{scipy_spline_backward_returns}
>>> affine_transform_backward(np.ones(4), np.zeros(4), [0.5], order=1)
array([1.5, 2. , 0.5, 0. ])
""", defaults={"grad_output": _GEOMETRY_GRAD_OUTPUT})


@_AFFINE_TRANSFORM_BACKWARD_DOC.document()
def affine_transform_backward(grad_output: Any, input: Any, matrix: Any, offset: Any = 0.0, output_shape: Any = None,
                              output: Any = None, order: int = 3, mode: str = "constant", cval: float = 0.0,
                              prefilter: bool = True) -> Any:
    return _geometry.affine_transform_backward(grad_output, input, matrix, offset, output_shape, output, order, mode,
                                               cval, prefilter)


_ROTATE_BACKWARD_DOC = Template("""\
The VJP of :func:`rotate` w.r.t. ``input`` (the angle gets none).

Parameters
----------
{grad_output}
{scipy_spline_input}
angle : float
    The forward's angle in degrees.
axes : tuple of int
    The forward's rotation plane.
reshape : bool
    The forward's flag.
{scipy_interp_tail}

{scipy_spline_backward_returns}
>>> rotate_backward(np.arange(6.0).reshape(3, 2), np.zeros((2, 3)), 90, order=0)
array([[4., 2., 0.],
       [5., 3., 1.]])
""", defaults={"grad_output": _GEOMETRY_GRAD_OUTPUT})


@_ROTATE_BACKWARD_DOC.document()
def rotate_backward(grad_output: Any, input: Any, angle: float, axes: Any = (1, 0), reshape: bool = True,
                    output: Any = None, order: int = 3, mode: str = "constant", cval: float = 0.0,
                    prefilter: bool = True) -> Any:
    return _geometry.rotate_backward(grad_output, input, angle, axes, reshape, output, order, mode, cval, prefilter)


# other names are scipy.ndimage's own: the import prefix is the whole port
__getattr__, __dir__ = mirror(__name__, "scipy.ndimage", __all__ + ["CARDS"])
