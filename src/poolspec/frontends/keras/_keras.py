"""What ties the Keras front-ends to a live Keras, without importing it: the global ``image_data_format`` read as
Keras reads it, and calls on a ``KerasTensor`` answered as ``keras.ops`` answers them (a symbolic result recorded
as a serialisable operation, so that functional models build, save and load)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any

from ..._compat import dtype_name, namespace
from .._common import over_symbolic_axes, symbolic_axes
from .._geometry import spatial_axes
from .._tensorflow import is_tensorflow, on_tensorflow
from ._registry import SPECS

_FORMATS = ("channels_first", "channels_last")
SYMBOLIC_NOTE = ("Keras' symbolic calls as keras.ops makes them: on a KerasTensor the result is a KerasTensor (None "
                 "sizes kept, arguments checked at once) recorded as a serialisable operation "
                 "('poolspec>FrontendOperation': a functional model using it saves, and loads where "
                 "poolspec.frontends.keras is imported); inside a layer during Keras' symbolic build on JAX, symbolic "
                 "batch or channel sizes are mapped over with jax.vmap (so is jax.export's shape polymorphism), and "
                 "unknown spatial sizes there give the output's spec alone. Keras backends: jax, torch and numpy "
                 "(poolspec's array libraries), and tensorflow through the front-ends' host bridge (NumPy kernels "
                 "in tf.numpy_function, the gradient by poolspec's torch or JAX bindings: first order)")


def _keras_json() -> str:
    """The path of Keras' configuration file: ``$KERAS_HOME/keras.json``, else ``~/.keras/keras.json`` (or
    ``/tmp/.keras/keras.json`` where the home directory is not writable), as keras/src/backend/config.py."""
    if "KERAS_HOME" in os.environ:
        home = os.environ["KERAS_HOME"]
    else:
        base = os.path.expanduser("~")
        home = os.path.join(base if os.access(base, os.W_OK) else "/tmp", ".keras")
    return os.path.expanduser(os.path.join(home, "keras.json"))


def image_data_format() -> str:
    """Keras' global image data format: ``keras.config.image_data_format()`` where Keras is imported (it may
    have been set there), else the value Keras would load from its keras.json, else "channels_last"."""
    keras = sys.modules.get("keras")
    config = getattr(keras, "config", None)
    if config is not None and hasattr(config, "image_data_format"):
        return str(config.image_data_format())
    path = _keras_json()
    try:
        with open(path) as f:
            fmt = json.load(f).get("image_data_format", "channels_last")
    except (OSError, ValueError, AttributeError):
        return "channels_last"
    if fmt not in _FORMATS:
        raise ValueError(f"{path}: image_data_format={fmt!r}: must be 'channels_first' or 'channels_last' "
                         "(Keras refuses this file too)")
    return str(fmt)


def data_format(function: str, value: Any) -> str:
    """``data_format`` as Keras' ``standardize_data_format``: None is the global image data format, any case."""
    if value is None:
        return image_data_format()
    fmt = str(value).lower()
    if fmt not in _FORMATS:
        raise ValueError(f"{function}: data_format={value!r}: must be 'channels_first' or 'channels_last' (any "
                         "case), or None for keras.config.image_data_format()")
    return fmt


def is_keras_tensor(x: Any) -> bool:
    """Whether ``x`` is a Keras symbolic tensor (only possible once Keras is imported)."""
    keras = sys.modules.get("keras")
    tensor = getattr(keras, "KerasTensor", None)
    return tensor is not None and isinstance(x, tensor)


def in_symbolic_scope() -> bool:
    """Whether Keras is computing output specs (its symbolic build): the values of the arrays are never read."""
    scope = sys.modules.get("keras.src.backend.common.symbolic_scope")
    return scope is not None and bool(scope.in_symbolic_scope())


def symbolic_call(function: str, inputs: Any, arguments: dict[str, Any]) -> Any:
    """``keras.ops``' answer to a KerasTensor: the result of a recorded operation, its shape and dtype from the
    front-end's own shape rule (the arguments are checked now, as Keras checks them)."""
    from ._operation import FrontendOperation

    return FrontendOperation(function, arguments).symbolic_call(inputs)


def frontend_call(function: str, impl: Callable[..., Any], inputs: Any, arguments: dict[str, Any],
                  spatial_rank: int | None = None) -> Any:
    """A Keras front-end call as Keras makes it: ``data_format`` standardised (None: the global format); on a
    KerasTensor, a symbolic result; on a JAX array with symbolic batch or channel sizes (Keras' symbolic build,
    jax.export), ``impl`` mapped over those axes; else ``impl(inputs, **arguments)``. ``spatial_rank``: the
    number of spatial axes (None: all but batch and channels)."""
    arguments = dict(arguments, data_format=data_format(function, arguments.get("data_format")))
    if is_keras_tensor(inputs):
        return symbolic_call(function, inputs, arguments)
    if is_tensorflow(inputs):  # Keras on its TensorFlow backend
        return on_tensorflow(function, lambda a: impl(a, **arguments), inputs)
    free = symbolic_axes(inputs)
    if not free:
        return impl(inputs, **arguments)
    nd = inputs.ndim
    n = nd - 2 if spatial_rank is None else spatial_rank
    spatial = spatial_axes(nd, n, arguments["data_format"] == "channels_first")
    if set(free) & set(spatial) and in_symbolic_scope():
        # Keras only asks for the output's spec here, and the spatial sizes are unknown: the spec alone
        import jax.numpy as jnp

        shape, dtype = SPECS[function](tuple(inputs.shape), dtype_name(namespace(inputs), inputs.dtype),
                                       **arguments)
        return jnp.zeros(shape, dtype)
    return over_symbolic_axes(function, lambda x: impl(x, **arguments), inputs, spatial)
