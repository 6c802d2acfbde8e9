"""The op card: one frozen record per op, the single source of its arguments, checks and shape rule."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ._rules import layout_order

_MISSING = object()
REQUIRED = "<required>"


@dataclass(frozen=True)
class Argument:
    """One argument of an op, as documented and as validated."""

    name: str
    type: str
    default: Any = REQUIRED
    constraints: tuple[str, ...] = ()
    description: str = ""
    # an array port that must share the named port's dtype and device (grid and _random_samples: "x"); its
    # shape enters the shape rule as a keyword
    like: str | None = None

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    @property
    def is_array(self) -> bool:
        """Array inputs (x, indices) are the op's operands, not options a shape rule reads."""
        return "array" in self.type

    def to_dict(self) -> dict[str, Any]:
        default = self.default
        return {
            "name": self.name,
            "type": self.type,
            "required": self.required,
            "default": None if self.required else _jsonable(default),
            "constraints": list(self.constraints),
            "description": self.description,
        } | ({"like": self.like} if self.like else {})


@dataclass(frozen=True)
class Gradient:
    """How gradients are available: the explicit VJP and what each autodiff system supports."""

    backward: str | None
    torch: tuple[str, ...] = ()
    jax: tuple[str, ...] = ()
    notes: str = ""
    # the array arguments the backward differentiates, in the order it returns their gradients (empty: the first)
    wrt: tuple[str, ...] = ()
    # further explicit VJPs, w.r.t. ports the backward does not differentiate (roi_align's boxes)
    others: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"backward": self.backward, "torch": list(self.torch), "jax": list(self.jax),
                "notes": self.notes, "wrt": list(self.wrt), "others": list(self.others)}


@dataclass(frozen=True)
class Port:
    """An array an op returns (its inputs are its array-typed arguments)."""

    name: str
    type: str
    shape: str
    description: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "shape": self.shape, "description": self.description}


@dataclass(frozen=True)
class Example:
    """An example call for the docs: an input shape (batch and channel may be symbols) and arguments; its
    output shape is computed from the card, never written by hand."""

    input_shape: tuple[Any, ...]
    arguments: Mapping[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"input_shape": list(self.input_shape), "arguments": {k: _jsonable(v) for k, v in
                                                                     self.arguments.items()}}


@dataclass(frozen=True)
class Resolved:
    """Validated, normalised arguments and the output shape they imply."""

    op: str
    input_shape: tuple[Any, ...]
    output_shape: tuple[Any, ...]
    params: Mapping[str, Any]
    batched: bool
    # the op whose memory-format rule the result follows, where it is another's (torch's interpolate in area mode
    # is adaptive average pooling, lp_pool with p = +-inf is max pooling)
    layout_as: str | None = None

    def __getitem__(self, key: str) -> Any:
        return self.params[key]


@dataclass(frozen=True)
class Card:
    """A machine-readable op card. ``card.resolve`` is the op's validation and shape inference."""

    name: str
    version: int
    category: str
    summary: str
    spatial_dims: tuple[int, ...]
    input_ranks: tuple[int, ...]
    dtypes: tuple[str, ...]
    arguments: tuple[Argument, ...]
    shape_relation: str
    determinism: str
    gradient: Gradient
    torch_reference: str
    status: str = "implemented"
    notes: tuple[str, ...] = ()
    deviations: tuple[str, ...] = ()
    outputs: tuple[Port, ...] = ()
    examples: tuple[Example, ...] = ()
    torch_determinism: str = ""  # what torch's own kernels do, for the determinism table
    # input ranks at which torch gives a channels_last (channels_last_3d) output for such an input, as its
    # kernels follow suggest_memory_format(); poolspec's torch outputs do the same
    channels_last: tuple[int, ...] = ()
    # array arguments besides the first whose shapes the shape rule reads (grid_sample's grid): resolve and
    # output_shape take each as a shape, under its name
    shaped_ports: tuple[str, ...] = ()
    _resolve: Callable[..., Resolved] | None = field(default=None, repr=False, compare=False)
    # whether the first array argument is an image (N, C, *S) that the layout argument may lay out channels-last
    image: bool = field(default=True, repr=False, compare=False)
    # the inverse of the shape rule where the output size is an argument: (card, input shape, output shape) ->
    # the arguments that give it (spec.infer_arguments)
    _infer: Callable[..., dict[str, Any]] | None = field(default=None, repr=False, compare=False)

    @property
    def id(self) -> str:
        return f"{self.name}@{self.version}"

    def argument(self, name: str) -> Argument:
        for arg in self.arguments:
            if arg.name == name:
                return arg
        raise KeyError(name)

    def bind(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Fill the defaults of the non-array arguments; reject unknown and missing ones by name."""
        options = [a for a in self.arguments if not a.is_array or a.name in self.shaped_ports]
        unknown = sorted(set(arguments) - {a.name for a in options})
        if unknown:
            raise TypeError(f"{self.name}: unexpected argument(s) {', '.join(unknown)}; "
                            f"it takes {', '.join(a.name for a in options)}")
        bound = {}
        for arg in options:
            value = arguments.get(arg.name, _MISSING)
            if value is _MISSING:
                if arg.required:
                    raise TypeError(f"{self.name}: missing required argument {arg.name!r}")
                value = arg.default
            bound[arg.name] = value
        return bound

    def resolve(self, input_shape: tuple[Any, ...], dtype: str | None = None,
                **arguments: Any) -> Resolved:
        """Check ``arguments`` for an input of ``input_shape`` (and dtype name) and infer the output shape.

        Leading (batch, channel) dimensions may be symbols; spatial ones must be integers.
        """
        if self._resolve is None:
            raise NotImplementedError(f"{self.id} has no shape rule")
        bound = self.bind(arguments)
        layout = bound.pop("layout", "channels_first")
        if layout == "channels_first":
            return self._resolve(self, tuple(input_shape), dtype, bound)
        if not isinstance(layout, str) or layout != "channels_last":
            kind = ValueError if isinstance(layout, str) else TypeError
            raise kind(f"{self.name}: layout={layout!r}: must be 'channels_first' or 'channels_last'")
        shape = tuple(input_shape)
        n = self.spatial_dims[0] if len(self.spatial_dims) == 1 else len(shape) - 2
        if len(shape) not in (n + 1, n + 2) or n < 1:
            return self._resolve(self, shape, dtype, bound)  # the rule's own rank error
        first, back = layout_order(len(shape), n)
        r = self._resolve(self, tuple(shape[i] for i in first), dtype, bound)
        out = tuple(r.output_shape)
        return Resolved(r.op, shape, tuple(out[i] for i in back), r.params, r.batched, r.layout_as)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "version": self.version,
            "category": self.category,
            "status": self.status,
            "summary": self.summary,
            "torch_reference": self.torch_reference,
            "spatial_dims": list(self.spatial_dims),
            "input_ranks": list(self.input_ranks),
            "dtypes": list(self.dtypes),
            "arguments": [a.to_dict() for a in self.arguments],
            "shape_relation": self.shape_relation,
            "determinism": self.determinism,
            "gradient": self.gradient.to_dict(),
            "notes": list(self.notes),
            "deviations": list(self.deviations),
            "outputs": [p.to_dict() for p in self.outputs],
            "examples": [e.to_dict() for e in self.examples],
            "torch_determinism": self.torch_determinism,
            "channels_last": list(self.channels_last),
            "shaped_ports": list(self.shaped_ports),
        }


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return str(value)
    return value
