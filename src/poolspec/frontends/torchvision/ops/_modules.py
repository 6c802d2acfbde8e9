"""torchvision.ops' RoI module classes: plain classes on poolspec's pooling-module base (torch.nn's front-end's),
``torch.nn.Module`` twins where the caller has imported torch; ``forward`` calls this front-end's function with
the arguments torchvision's passes, ``repr`` is torchvision's ``__repr__``."""

from __future__ import annotations

from typing import Any

from ...torch.nn.modules import Module
from ._functions import ps_roi_align, ps_roi_pool, roi_align, roi_pool
from .poolers import HOME

_RAISES = """Raises
    ------
    ValueError
        At the call, where the function refuses the arguments (torchvision checks none at construction).
    TypeError
        At the call: boxes neither an array nor a list of arrays, or arrays of different libraries or dtypes."""


class _RoIModule(Module):
    """What the four RoI modules share: ``forward(input, rois)`` calls ``_fn`` with the attributes ``_args`` names,
    in order, as torchvision's modules pass them; ``repr`` lists them as torchvision's ``__repr__`` does."""

    _poolspec_home = HOME
    _fn: Any = None
    _args: tuple[str, ...] = ("output_size", "spatial_scale")

    def __init__(self, output_size: Any, spatial_scale: float) -> None:
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale

    def forward(self, input: Any, rois: Any) -> Any:
        return self._fn(input, rois, *[getattr(self, name) for name in self._args])

    def __repr__(self) -> str:
        args = ", ".join(f"{name}={getattr(self, name)}" for name in self._args)
        return f"{self.__class__.__name__}({args})"


class RoIAlign(_RoIModule, fn=roi_align, _args=("output_size", "spatial_scale", "sampling_ratio", "aligned")):
    __doc__ = f"""RoI Align as a module, as ``torchvision.ops.RoIAlign``: ``forward(input, rois)`` is
    ``roi_align(input, rois, output_size, spatial_scale, sampling_ratio, aligned)``.

    Parameters
    ----------
    output_size : int or tuple of int
        The bins per roi (PH, PW); stored as given.
    spatial_scale : float
        The factor from box coordinates to input's cells.
    sampling_ratio : int
        Samples per bin along each axis; <= 0: adaptive.
    aligned : bool, default False
        The half-pixel shift.

    Returns
    -------
    array
        ``forward(input, rois)``: (K, C, PH, PW).

    {_RAISES}

    Examples
    --------
    >>> import numpy as np
    >>> from poolspec.frontends.torchvision import ops
    >>> m = ops.RoIAlign(1, 1.0, 2, aligned=True)
    >>> m
    RoIAlign(output_size=1, spatial_scale=1.0, sampling_ratio=2, aligned=True)
    >>> m(np.arange(16.0).reshape(1, 1, 4, 4), np.array([[0, 0.0, 0.0, 2.0, 2.0]])).ravel().tolist()
    [2.5]
    """

    def __init__(self, output_size: Any, spatial_scale: float, sampling_ratio: int, aligned: bool = False) -> None:
        super().__init__(output_size, spatial_scale)
        self.sampling_ratio = sampling_ratio
        self.aligned = aligned


class RoIPool(_RoIModule, fn=roi_pool):
    __doc__ = f"""RoI max pooling as a module, as ``torchvision.ops.RoIPool``: ``forward(input, rois)`` is
    ``roi_pool(input, rois, output_size, spatial_scale)``.

    Parameters
    ----------
    output_size : int or tuple of int
        The bins per roi (PH, PW); stored as given.
    spatial_scale : float
        The factor from box coordinates to input's cells.

    Returns
    -------
    array
        ``forward(input, rois)``: (K, C, PH, PW).

    {_RAISES}

    Examples
    --------
    >>> import numpy as np
    >>> from poolspec.frontends.torchvision import ops
    >>> m = ops.RoIPool((2, 2), 1.0)
    >>> m
    RoIPool(output_size=(2, 2), spatial_scale=1.0)
    >>> m(np.arange(16.0).reshape(1, 1, 4, 4), [np.array([[0.0, 0.0, 3.0, 3.0]])]).ravel().tolist()
    [5.0, 7.0, 13.0, 15.0]
    """


class PSRoIAlign(_RoIModule, fn=ps_roi_align, _args=("output_size", "spatial_scale", "sampling_ratio")):
    __doc__ = f"""Position-sensitive RoI Align as a module, as ``torchvision.ops.PSRoIAlign``: ``forward(input,
    rois)`` is ``ps_roi_align(input, rois, output_size, spatial_scale, sampling_ratio)``.

    Parameters
    ----------
    output_size : int or tuple of int
        The bins per roi (PH, PW); stored as given.
    spatial_scale : float
        The factor from box coordinates to input's cells.
    sampling_ratio : int
        Samples per bin along each axis; <= 0: adaptive.

    Returns
    -------
    array
        ``forward(input, rois)``: (K, C / (PH * PW), PH, PW).

    {_RAISES}

    Examples
    --------
    >>> from poolspec.frontends.torchvision import ops
    >>> ops.PSRoIAlign(2, 0.5, -1)
    PSRoIAlign(output_size=2, spatial_scale=0.5, sampling_ratio=-1)
    """

    def __init__(self, output_size: Any, spatial_scale: float, sampling_ratio: int) -> None:
        super().__init__(output_size, spatial_scale)
        self.sampling_ratio = sampling_ratio


class PSRoIPool(_RoIModule, fn=ps_roi_pool):
    __doc__ = f"""Position-sensitive RoI pooling as a module, as ``torchvision.ops.PSRoIPool``: ``forward(input,
    rois)`` is ``ps_roi_pool(input, rois, output_size, spatial_scale)``.

    Parameters
    ----------
    output_size : int or tuple of int
        The bins per roi (PH, PW); stored as given.
    spatial_scale : float
        The factor from box coordinates to input's cells.

    Returns
    -------
    array
        ``forward(input, rois)``: (K, C / (PH * PW), PH, PW).

    {_RAISES}

    Examples
    --------
    >>> from poolspec.frontends.torchvision import ops
    >>> ops.PSRoIPool(2, 1.0)
    PSRoIPool(output_size=2, spatial_scale=1.0)
    """
