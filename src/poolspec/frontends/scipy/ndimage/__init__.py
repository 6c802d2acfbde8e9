"""``scipy.ndimage`` on poolspec's kernels: the window filters ``uniform_filter1d``, ``uniform_filter``,
``maximum_filter1d``, ``maximum_filter``, ``minimum_filter1d`` and ``minimum_filter`` with SciPy 1.17's names,
signatures, boundary modes and numbers, on any array-API array (NumPy, CuPy, torch, JAX, Dask, array-api-strict),
differentiable with deterministic gradients on torch and JAX.

Each axis is extended by the boundary mode as slices, flips and constants (no gathers) and reduced over shifted
slices; ``output`` is a dtype (the result is returned). Other names are SciPy's own.

>>> import numpy as np
>>> from poolspec.frontends.scipy import ndimage
>>> ndimage.maximum_filter1d(np.array([2, 8, 0, 4, 1, 9, 9, 0]), size=3)
array([8, 8, 8, 4, 9, 9, 9, 9])
"""

from __future__ import annotations

from typing import Any

from ..._common import mirror
from . import _filters
from ._cards import CARDS as CARDS

__all__ = ["maximum_filter", "maximum_filter1d", "minimum_filter", "minimum_filter1d", "uniform_filter",
           "uniform_filter1d", "maximum_filter_backward", "maximum_filter1d_backward", "minimum_filter_backward",
           "minimum_filter1d_backward", "uniform_filter_backward", "uniform_filter1d_backward"]


def uniform_filter1d(input: Any, size: int, axis: int = -1, output: Any = None, mode: str = "reflect",
                     cval: float = 0.0, origin: int = 0) -> Any:
    """The mean over ``size`` cells along ``axis`` (cells ``i - size//2 - origin`` on), as
    ``scipy.ndimage.uniform_filter1d``; the result has ``output``'s dtype (default: the input's; integers
    truncated).

    Parameters
    ----------
    input : array
        Any rank; float32, float64 or an integer dtype (a list is read as a NumPy array).
    size : int
        The window length, >= 1.
    axis : int
        The axis filtered (negative counts from the end).
    output : dtype or None
        The result's dtype (None: the input's); a dtype only, the result is returned.
    mode : str
        The boundary mode: 'reflect' (= 'grid-mirror'), 'mirror', 'nearest', 'wrap' (= 'grid-wrap') or
        'constant' (= 'grid-constant').
    cval : float
        The value beyond the edges in constant mode.
    origin : int
        The window shift: output i reads cells ``i - size//2 - origin`` on; in [-(size//2), (size-1)//2].

    Returns
    -------
    array
        The filtered array, of the input's shape, in the output dtype.

    Raises
    ------
    ValueError
        SciPy's refusals, naming the argument: size < 1, an unknown mode, an invalid origin, an axis out of range.
    TypeError
        An unsupported input or output dtype, a non-int size, axis or origin, a complex cval.

    Examples
    --------
    >>> import numpy as np
    >>> uniform_filter1d(np.array([2.0, 8.0, 0.0, 4.0]), 3)
    array([4.        , 3.33333333, 4.        , 2.66666667])
    """
    return _filters.uniform1d("uniform_filter1d", input, size, axis, output, mode, cval, origin)


def uniform_filter(input: Any, size: Any = 3, output: Any = None, mode: Any = "reflect", cval: float = 0.0,
                   origin: Any = 0, *, axes: Any = None) -> Any:
    """``uniform_filter1d`` along each of ``axes`` in turn (an axis of size <= 1 skipped), each pass stored in
    ``output``'s dtype, as ``scipy.ndimage.uniform_filter``.

    Parameters
    ----------
    input : array
        Any rank; float32, float64 or an integer dtype (a list is read as a NumPy array).
    size : int or sequence of int
        The box, per axis or one for all (an axis of size <= 1 is skipped).
    output : dtype or None
        The result's dtype (None: the input's); a dtype only, the result is returned.
    mode : str or sequence of str
        The boundary mode, as the 1-d filters', or one per axis.
    cval : float
        The value beyond the edges in constant mode.
    origin : int or sequence of int
        The window shift, per axis or one for all.
    axes : int, sequence of int or None
        The axes filtered, in this order (None: all).

    Returns
    -------
    array
        The filtered array, of the input's shape, in the output dtype.

    Raises
    ------
    ValueError
        SciPy's refusals, naming the argument: an unknown mode, an invalid origin, a sequence whose length is not
        the number of axes, repeated or out-of-range axes.
    TypeError
        An unsupported input or output dtype, a non-int origin or axes, a complex cval.

    Examples
    --------
    >>> import numpy as np
    >>> uniform_filter(np.arange(9.0).reshape(3, 3), 2, mode="nearest")
    array([[0. , 0.5, 1.5],
           [1.5, 2. , 3. ],
           [4.5, 5. , 6. ]])
    """
    return _filters.uniform("uniform_filter", input, size, output, mode, cval, origin, axes)


def maximum_filter1d(input: Any, size: int, axis: int = -1, output: Any = None, mode: str = "reflect",
                     cval: float = 0.0, origin: int = 0) -> Any:
    """The maximum over ``size`` cells along ``axis``, as ``scipy.ndimage.maximum_filter1d``.

    Parameters
    ----------
    input : array
        Any rank; float32, float64 or an integer dtype (a list is read as a NumPy array).
    size : int
        The window length, >= 1.
    axis : int
        The axis filtered (negative counts from the end).
    output : dtype or None
        The result's dtype (None: the input's); a dtype only, the result is returned.
    mode : str
        The boundary mode: 'reflect' (= 'grid-mirror'), 'mirror', 'nearest', 'wrap' (= 'grid-wrap') or
        'constant' (= 'grid-constant').
    cval : float
        The value beyond the edges in constant mode.
    origin : int
        The window shift: output i reads cells ``i - size//2 - origin`` on; in [-(size//2), (size-1)//2].

    Returns
    -------
    array
        The filtered array, of the input's shape, in the output dtype.

    Raises
    ------
    ValueError
        SciPy's refusals, naming the argument: size < 1, an unknown mode, an invalid origin, an axis out of range, a
        cval outside an integer input's range.
    TypeError
        An unsupported input or output dtype, a non-int size, axis or origin, a complex cval.

    Examples
    --------
    >>> import numpy as np
    >>> maximum_filter1d(np.array([2.0, 8.0, 0.0, 4.0]), 2, mode="constant", cval=5.0)
    array([5., 8., 8., 4.])
    """
    return _filters.extreme1d("maximum_filter1d", input, size, axis, output, mode, cval, origin, False)


def minimum_filter1d(input: Any, size: int, axis: int = -1, output: Any = None, mode: str = "reflect",
                     cval: float = 0.0, origin: int = 0) -> Any:
    """The minimum over ``size`` cells along ``axis``, as ``scipy.ndimage.minimum_filter1d``.

    Parameters
    ----------
    input : array
        Any rank; float32, float64 or an integer dtype (a list is read as a NumPy array).
    size : int
        The window length, >= 1.
    axis : int
        The axis filtered (negative counts from the end).
    output : dtype or None
        The result's dtype (None: the input's); a dtype only, the result is returned.
    mode : str
        The boundary mode: 'reflect' (= 'grid-mirror'), 'mirror', 'nearest', 'wrap' (= 'grid-wrap') or
        'constant' (= 'grid-constant').
    cval : float
        The value beyond the edges in constant mode.
    origin : int
        The window shift: output i reads cells ``i - size//2 - origin`` on; in [-(size//2), (size-1)//2].

    Returns
    -------
    array
        The filtered array, of the input's shape, in the output dtype.

    Raises
    ------
    ValueError
        SciPy's refusals, naming the argument: size < 1, an unknown mode, an invalid origin, an axis out of range, a
        cval outside an integer input's range.
    TypeError
        An unsupported input or output dtype, a non-int size, axis or origin, a complex cval.

    Examples
    --------
    >>> import numpy as np
    >>> minimum_filter1d(np.array([2, 8, 0, 4, 1, 9, 9, 0]), 3)
    array([2, 0, 0, 0, 1, 1, 0, 0])
    """
    return _filters.extreme1d("minimum_filter1d", input, size, axis, output, mode, cval, origin, True)


def maximum_filter(input: Any, size: Any = None, footprint: Any = None, output: Any = None, mode: Any = "reflect",
                   cval: float = 0.0, origin: Any = 0, *, axes: Any = None) -> Any:
    """The maximum over a ``size`` box (nested 1-D maxima over ``axes``) or over the True cells of
    ``footprint``, as ``scipy.ndimage.maximum_filter``.

    Parameters
    ----------
    input : array
        Any rank; float32, float64 or an integer dtype (a list is read as a NumPy array).
    size : int, sequence of int or None
        The box, per axis or one for all (an axis of size <= 1 is skipped).
    footprint : array or None
        Booleans over the filtered axes (True: the cell is in the window); wins over ``size``.
    output : dtype or None
        The result's dtype (None: the input's); a dtype only, the result is returned.
    mode : str or sequence of str
        The boundary mode, as the 1-d filters', or one per axis.
    cval : float
        The value beyond the edges in constant mode.
    origin : int or sequence of int
        The window shift, per axis or one for all.
    axes : int, sequence of int or None
        The axes filtered, in this order (None: all).

    Returns
    -------
    array
        The filtered array, of the input's shape, in the output dtype.

    Raises
    ------
    ValueError
        SciPy's refusals, naming the argument: an unknown mode, an invalid origin, a sequence whose length is not
        the number of axes, repeated or out-of-range axes, neither size nor footprint, an all-zero footprint, a
        footprint whose rank is not len(axes), a cval outside an integer input's range.
    TypeError
        An unsupported input or output dtype, a non-int origin or axes, a complex cval.

    Examples
    --------
    >>> import numpy as np
    >>> maximum_filter(np.array([[1.0, 5.0, 2.0], [0.0, 3.0, 4.0]]), footprint=[[True, False], [False, True]])
    array([[1., 5., 5.],
           [1., 3., 5.]])
    """
    return _filters.extreme("maximum_filter", input, size, footprint, output, mode, cval, origin, axes, False)


def minimum_filter(input: Any, size: Any = None, footprint: Any = None, output: Any = None, mode: Any = "reflect",
                   cval: float = 0.0, origin: Any = 0, *, axes: Any = None) -> Any:
    """The minimum over a ``size`` box or over the True cells of ``footprint``, as
    ``scipy.ndimage.minimum_filter``.

    Parameters
    ----------
    input : array
        Any rank; float32, float64 or an integer dtype (a list is read as a NumPy array).
    size : int, sequence of int or None
        The box, per axis or one for all (an axis of size <= 1 is skipped).
    footprint : array or None
        Booleans over the filtered axes (True: the cell is in the window); wins over ``size``.
    output : dtype or None
        The result's dtype (None: the input's); a dtype only, the result is returned.
    mode : str or sequence of str
        The boundary mode, as the 1-d filters', or one per axis.
    cval : float
        The value beyond the edges in constant mode.
    origin : int or sequence of int
        The window shift, per axis or one for all.
    axes : int, sequence of int or None
        The axes filtered, in this order (None: all).

    Returns
    -------
    array
        The filtered array, of the input's shape, in the output dtype.

    Raises
    ------
    ValueError
        SciPy's refusals, naming the argument: an unknown mode, an invalid origin, a sequence whose length is not
        the number of axes, repeated or out-of-range axes, neither size nor footprint, an all-zero footprint, a
        footprint whose rank is not len(axes), a cval outside an integer input's range.
    TypeError
        An unsupported input or output dtype, a non-int origin or axes, a complex cval.

    Examples
    --------
    >>> import numpy as np
    >>> minimum_filter(np.array([[1.0, 5.0, 2.0], [0.0, 3.0, 4.0]]), size=(1, 2))
    array([[1., 1., 2.],
           [0., 0., 3.]])
    """
    return _filters.extreme("minimum_filter", input, size, footprint, output, mode, cval, origin, axes, True)


def uniform_filter1d_backward(grad_output: Any, input: Any, size: int, axis: int = -1, output: Any = None,
                              mode: str = "reflect", cval: float = 0.0, origin: int = 0) -> Any:
    """The VJP of :func:`uniform_filter1d` w.r.t. ``input``: the filter's transpose (a window sum of the zero-extended
    cotangent, folded back onto the cells the mode copies), deterministic on every backend.

    Parameters
    ----------
    grad_output : array
        The cotangent of the filter's output (its shape; float).
    input : array
        Any rank; float32, float64 or an integer dtype (a list is read as a NumPy array).
    size : int
        The window length, >= 1.
    axis : int
        The axis filtered (negative counts from the end).
    output : dtype or None
        The result's dtype (None: the input's); a dtype only, the result is returned.
    mode : str
        The boundary mode: 'reflect' (= 'grid-mirror'), 'mirror', 'nearest', 'wrap' (= 'grid-wrap') or
        'constant' (= 'grid-constant').
    cval : float
        The value beyond the edges in constant mode.
    origin : int
        The window shift: output i reads cells ``i - size//2 - origin`` on; in [-(size//2), (size-1)//2].

    Returns
    -------
    array
        The gradient w.r.t. ``input``, in the input's dtype.

    Raises
    ------
    ValueError
        As the forward; a grad_output whose shape is not the input's.
    TypeError
        As the forward; an integer input or output dtype (not differentiable).

    Examples
    --------
    >>> import numpy as np
    >>> uniform_filter1d_backward(np.array([3.0, 0.0, 0.0]), np.zeros(3), 3)
    array([2., 1., 0.])
    """
    return _filters.uniform1d_backward("uniform_filter1d_backward", grad_output, input, size, axis, output, mode,
                                       cval, origin)


def uniform_filter_backward(grad_output: Any, input: Any, size: Any = 3, output: Any = None, mode: Any = "reflect",
                            cval: float = 0.0, origin: Any = 0, *, axes: Any = None) -> Any:
    """The VJP of :func:`uniform_filter` w.r.t. ``input``: the per-axis transposes in reverse order.

    Parameters
    ----------
    grad_output : array
        The cotangent of the filter's output (its shape; float).
    input : array
        Any rank; float32, float64 or an integer dtype (a list is read as a NumPy array).
    size : int or sequence of int
        The box, per axis or one for all (an axis of size <= 1 is skipped).
    output : dtype or None
        The result's dtype (None: the input's); a dtype only, the result is returned.
    mode : str or sequence of str
        The boundary mode, as the 1-d filters', or one per axis.
    cval : float
        The value beyond the edges in constant mode.
    origin : int or sequence of int
        The window shift, per axis or one for all.
    axes : int, sequence of int or None
        The axes filtered, in this order (None: all).

    Returns
    -------
    array
        The gradient w.r.t. ``input``, in the input's dtype.

    Raises
    ------
    ValueError
        As the forward; a grad_output whose shape is not the input's.
    TypeError
        As the forward; an integer input or output dtype (not differentiable).

    Examples
    --------
    >>> import numpy as np
    >>> uniform_filter_backward(np.ones((2, 2)), np.zeros((2, 2)), 2)
    array([[2.25, 0.75],
           [0.75, 0.25]])
    """
    return _filters.uniform_backward("uniform_filter_backward", grad_output, input, size, output, mode, cval,
                                     origin, axes)


def maximum_filter1d_backward(grad_output: Any, input: Any, size: int, axis: int = -1, output: Any = None,
                              mode: str = "reflect", cval: float = 0.0, origin: int = 0) -> Any:
    """The VJP of :func:`maximum_filter1d` w.r.t. ``input``: each output's cotangent goes whole to its selected tap
    (the first maximum of its window), summed per input cell in a fixed order.

    Parameters
    ----------
    grad_output : array
        The cotangent of the filter's output (its shape; float).
    input : array
        Any rank; float32, float64 or an integer dtype (a list is read as a NumPy array).
    size : int
        The window length, >= 1.
    axis : int
        The axis filtered (negative counts from the end).
    output : dtype or None
        The result's dtype (None: the input's); a dtype only, the result is returned.
    mode : str
        The boundary mode: 'reflect' (= 'grid-mirror'), 'mirror', 'nearest', 'wrap' (= 'grid-wrap') or
        'constant' (= 'grid-constant').
    cval : float
        The value beyond the edges in constant mode.
    origin : int
        The window shift: output i reads cells ``i - size//2 - origin`` on; in [-(size//2), (size-1)//2].

    Returns
    -------
    array
        The gradient w.r.t. ``input``, in the input's dtype.

    Raises
    ------
    ValueError
        As the forward; a grad_output whose shape is not the input's.
    TypeError
        As the forward; an integer input or output dtype (not differentiable).

    Examples
    --------
    >>> import numpy as np
    >>> maximum_filter1d_backward(np.ones(4), np.array([1.0, 3.0, 3.0, 0.0]), 2)
    array([1., 2., 1., 0.])
    """
    return _filters.extreme1d_backward("maximum_filter1d_backward", grad_output, input, size, axis, output,
                                       mode, cval, origin, False)


def maximum_filter_backward(grad_output: Any, input: Any, size: Any = None, footprint: Any = None, output: Any = None,
                            mode: Any = "reflect", cval: float = 0.0, origin: Any = 0, *, axes: Any = None) -> Any:
    """The VJP of :func:`maximum_filter` w.r.t. ``input``: each pass's cotangent to its selected taps, passes in
    reverse order (or the footprint's selected taps).

    Parameters
    ----------
    grad_output : array
        The cotangent of the filter's output (its shape; float).
    input : array
        Any rank; float32, float64 or an integer dtype (a list is read as a NumPy array).
    size : int, sequence of int or None
        The box, per axis or one for all (an axis of size <= 1 is skipped).
    footprint : array or None
        Booleans over the filtered axes (True: the cell is in the window); wins over ``size``.
    output : dtype or None
        The result's dtype (None: the input's); a dtype only, the result is returned.
    mode : str or sequence of str
        The boundary mode, as the 1-d filters', or one per axis.
    cval : float
        The value beyond the edges in constant mode.
    origin : int or sequence of int
        The window shift, per axis or one for all.
    axes : int, sequence of int or None
        The axes filtered, in this order (None: all).

    Returns
    -------
    array
        The gradient w.r.t. ``input``, in the input's dtype.

    Raises
    ------
    ValueError
        As the forward; a grad_output whose shape is not the input's.
    TypeError
        As the forward; an integer input or output dtype (not differentiable).

    Examples
    --------
    >>> import numpy as np
    >>> maximum_filter_backward(np.ones((1, 3)), np.array([[1.0, 5.0, 2.0]]), size=2)
    array([[1., 2., 0.]])
    """
    return _filters.extreme_backward("maximum_filter_backward", grad_output, input, size, footprint, output,
                                     mode, cval, origin, axes, False)


def minimum_filter1d_backward(grad_output: Any, input: Any, size: int, axis: int = -1, output: Any = None,
                              mode: str = "reflect", cval: float = 0.0, origin: int = 0) -> Any:
    """The VJP of :func:`minimum_filter1d` w.r.t. ``input``: each output's cotangent goes whole to its selected tap
    (the first minimum of its window).

    Parameters
    ----------
    grad_output : array
        The cotangent of the filter's output (its shape; float).
    input : array
        Any rank; float32, float64 or an integer dtype (a list is read as a NumPy array).
    size : int
        The window length, >= 1.
    axis : int
        The axis filtered (negative counts from the end).
    output : dtype or None
        The result's dtype (None: the input's); a dtype only, the result is returned.
    mode : str
        The boundary mode: 'reflect' (= 'grid-mirror'), 'mirror', 'nearest', 'wrap' (= 'grid-wrap') or
        'constant' (= 'grid-constant').
    cval : float
        The value beyond the edges in constant mode.
    origin : int
        The window shift: output i reads cells ``i - size//2 - origin`` on; in [-(size//2), (size-1)//2].

    Returns
    -------
    array
        The gradient w.r.t. ``input``, in the input's dtype.

    Raises
    ------
    ValueError
        As the forward; a grad_output whose shape is not the input's.
    TypeError
        As the forward; an integer input or output dtype (not differentiable).

    Examples
    --------
    >>> import numpy as np
    >>> minimum_filter1d_backward(np.ones(3), np.array([2.0, 1.0, 1.0]), 3)
    array([0., 3., 0.])
    """
    return _filters.extreme1d_backward("minimum_filter1d_backward", grad_output, input, size, axis, output,
                                       mode, cval, origin, True)


def minimum_filter_backward(grad_output: Any, input: Any, size: Any = None, footprint: Any = None, output: Any = None,
                            mode: Any = "reflect", cval: float = 0.0, origin: Any = 0, *, axes: Any = None) -> Any:
    """The VJP of :func:`minimum_filter` w.r.t. ``input``.

    Parameters
    ----------
    grad_output : array
        The cotangent of the filter's output (its shape; float).
    input : array
        Any rank; float32, float64 or an integer dtype (a list is read as a NumPy array).
    size : int, sequence of int or None
        The box, per axis or one for all (an axis of size <= 1 is skipped).
    footprint : array or None
        Booleans over the filtered axes (True: the cell is in the window); wins over ``size``.
    output : dtype or None
        The result's dtype (None: the input's); a dtype only, the result is returned.
    mode : str or sequence of str
        The boundary mode, as the 1-d filters', or one per axis.
    cval : float
        The value beyond the edges in constant mode.
    origin : int or sequence of int
        The window shift, per axis or one for all.
    axes : int, sequence of int or None
        The axes filtered, in this order (None: all).

    Returns
    -------
    array
        The gradient w.r.t. ``input``, in the input's dtype.

    Raises
    ------
    ValueError
        As the forward; a grad_output whose shape is not the input's.
    TypeError
        As the forward; an integer input or output dtype (not differentiable).

    Examples
    --------
    >>> import numpy as np
    >>> minimum_filter_backward(np.ones(3), np.array([2.0, 1.0, 3.0]), footprint=[True, False, True])
    array([1., 2., 0.])
    """
    return _filters.extreme_backward("minimum_filter_backward", grad_output, input, size, footprint, output,
                                     mode, cval, origin, axes, True)


# other names are scipy.ndimage's own: the import prefix is the whole port
__getattr__, __dir__ = mirror(__name__, "scipy.ndimage", __all__ + ["CARDS"])
