"""Op cards: identity, arguments, shape rule and determinism notes of every op, and what derives from them.

>>> from poolspec import spec
>>> spec.card("avg_pool2d").id
'avg_pool2d@1'
>>> spec.output_shape("avg_pool2d", ("B", 3, 32, 32), kernel_size=2)
('B', 3, 16, 16)
"""

from __future__ import annotations

import dataclasses
import json
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from ._card import Argument, Card, Gradient, Resolved
from .frontends import FrontendCard, frontend_card, frontend_cards

__all__ = ["Argument", "Card", "FrontendCard", "Gradient", "Resolved", "card", "cards", "deviations",
           "frontend_card", "frontend_cards", "output_shape", "infer_arguments"]


@lru_cache(maxsize=1)
def _deviations() -> tuple[dict[str, Any], ...]:
    text = resources.files("poolspec").joinpath("data/deviations.json").read_text(encoding="utf-8")
    return tuple(json.loads(text)["deviations"])


def deviations(op: str | None = None) -> list[dict[str, Any]]:
    """The recorded deviations from (and extensions of) torch 2.13, all or those touching ``op``."""
    return [dict(d) for d in _deviations() if op is None or op in d["ops"]]


def _with_deviations(c: Card) -> Card:
    return dataclasses.replace(c, deviations=tuple(d["id"] for d in _deviations() if c.name in d["ops"]))


# every op with an image input takes its layout (Card.resolve permutes the shapes; the public functions pass
# channels-first views to the kernels): one argument, the same on every card
LAYOUT = Argument("layout", "str", "channels_first", ("'channels_first' or 'channels_last'",),
                  "'channels_last' takes and returns arrays (N, *spatial, C) (or (*spatial, C)), as TensorFlow, "
                  "Keras, Flax and JAX images are laid out: the kernels read them through a permuted view, "
                  "nothing is copied to change layout; indices keep their meaning (flat positions in each "
                  "spatial plane)")


def _with_layout(c: Card) -> Card:
    return dataclasses.replace(c, arguments=c.arguments + (LAYOUT,)) if c.image else c


def _catalogue() -> dict[str, Card]:
    # the cards live in the families' folders (poolspec/families/<family>/card.py), which import only spec's
    # rules: the catalogue is read from them once spec's own modules are in place
    from ..families import catalogue

    return {c.name: _with_layout(_with_deviations(c)) for c in catalogue()}


_CARDS: dict[str, Card] = _catalogue()


def card(name: str) -> Card:
    """The card of op ``name`` (``"avg_pool2d"`` or ``"avg_pool2d@1"``)."""
    base, at, version = name.partition("@")
    found = _CARDS.get(base)
    if found is None:
        raise ValueError(f"unknown op {name!r}; known ops: {', '.join(sorted(_CARDS))}")
    if at and version != str(found.version):
        raise ValueError(f"{base} has version {found.version}, not {version}")
    return found


def cards() -> list[Card]:
    """All cards, in a stable order."""
    return list(_CARDS.values())


def output_shape(name: str, input_shape: tuple[Any, ...], **arguments: Any) -> tuple[Any, ...]:
    """The output shape of op ``name`` on an input of ``input_shape``, without running it.

    The op card's shape rule and argument checks, as a call would run them (defaults filled in). Batch and
    channel dimensions may be symbols (strings), carried through; spatial ones must be ints.

    Parameters
    ----------
    name : str
        The op, e.g. ``"avg_pool2d"``, or with its card version, ``"avg_pool2d@1"``.
    input_shape : tuple
        The shape of the op's input (``x``; ``theta`` for affine_grid), ints or (leading dimensions only) symbols.

    Other Parameters
    ----------------
    **arguments : Any
        The op's non-array arguments as in a call (``kernel_size=2``), and the shapes of its other input arrays
        given as tuples (grid_sample's ``grid``, fractional_max_pool's ``_random_samples``).

    Returns
    -------
    tuple
        The output shape, with the input's symbols in place.

    Raises
    ------
    ValueError
        If ``name`` is not a known op (or not its card's version), or the shape or arguments break the op's rules.
    TypeError
        If an argument is unexpected, missing or of a wrong type, or a spatial dimension is a symbol.

    Examples
    --------
    >>> output_shape("adaptive_avg_pool2d", ("N", "C", 13, 13), output_size=7)
    ('N', 'C', 7, 7)
    """
    c = card(name)
    return c.resolve(tuple(input_shape), None, **arguments).output_shape


def infer_arguments(name: str, input_shape: tuple[Any, ...], output_shape: tuple[Any, ...]) -> dict[str, Any]:
    """The arguments that make op ``name`` map ``input_shape`` to ``output_shape``.

    For the ops whose output size is an argument: the adaptive pools and fractional_max_pool (``output_size``),
    interpolate (``size``) and grid_sample (the ``grid``'s shape). Leading dimensions must agree (equal ints or
    equal symbols).

    Parameters
    ----------
    name : str
        The op, e.g. ``"adaptive_avg_pool2d"``.
    input_shape : tuple
        The shape of the op's input (``x``; ``theta`` for affine_grid), ints or (leading dimensions only) symbols.
    output_shape : tuple
        The wanted output shape, of ``input_shape``'s rank; its spatial dimensions must be ints.

    Returns
    -------
    dict
        ``{"output_size": ...}``, ``{"size": ...}`` or ``{"grid": grid_shape}``, to pass to the op or to
        :func:`output_shape`.

    Raises
    ------
    ValueError
        If ``name`` is not a known op or not one of those above, the ranks or leading dimensions differ, or
        ``output_shape`` is not reachable from ``input_shape``.
    TypeError
        If a spatial dimension of ``output_shape`` (or of ``input_shape``) is not an int.

    Examples
    --------
    >>> infer_arguments("adaptive_avg_pool2d", ("B", 64, 13, 13), ("B", 64, 7, 7))
    {'output_size': (7, 7)}
    """
    c = card(name)
    if c._infer is None:
        raise ValueError(f"{name}: infer_arguments supports the adaptive pools, interpolate, grid_sample and "
                         f"fractional_max_pool, whose output size is an argument; {c.category} ops fix it by "
                         "their windows")
    return c._infer(c, tuple(input_shape), tuple(output_shape))


def write_pages(out: str | Path) -> list[Path]:
    """Write every card's page and the index (``poolspec cards --out``) to ``out``; returns the paths."""
    from .markdown import index, page, write_pages

    return write_pages(out, cards(), lambda c: page(c, deviations(c.name)), index)
