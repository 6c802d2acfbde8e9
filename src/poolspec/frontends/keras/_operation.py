"""The operation a front-end call on a ``KerasTensor`` records in a Keras graph, as ``keras.ops`` records its
own: its output spec from the front-end's shape rule, its call the front-end function, its config the function's
name and arguments, registered with Keras' serialisation (``"poolspec>FrontendOperation"``), so that a functional
model using the front-ends saves and loads. Imported only where Keras is."""

from __future__ import annotations

import importlib
from typing import Any

import keras

from ._registry import FUNCTIONS, SPECS


def _functions() -> None:
    """The front-end modules, which fill FUNCTIONS and SPECS (a model loaded in a fresh process may not have
    imported them): found by name, since they import this module's caller (``_keras``) themselves."""
    for module in ("ops", "ops.image"):
        importlib.import_module(f"{__package__}.{module}")


@keras.saving.register_keras_serializable(package="poolspec")
class FrontendOperation(keras.Operation):
    """One call of a Keras front-end function (``function``, e.g. "keras.ops.max_pool") with ``arguments``."""

    def __init__(self, function: str, arguments: dict[str, Any], name: str | None = None) -> None:
        super().__init__(name=name)
        _functions()
        if function not in FUNCTIONS:
            raise ValueError(f"FrontendOperation: function={function!r}: must be one of {sorted(FUNCTIONS)}")
        self.function = function
        self.arguments = dict(arguments)

    def call(self, inputs: Any) -> Any:
        return FUNCTIONS[self.function](inputs, **self.arguments)

    def compute_output_spec(self, inputs: Any) -> Any:
        shape, dtype = SPECS[self.function](tuple(inputs.shape), str(inputs.dtype), **self.arguments)
        return keras.KerasTensor(shape, dtype=dtype)

    def get_config(self) -> dict[str, Any]:
        return {"function": self.function, "arguments": dict(self.arguments), "name": self.name}
