"""Front-end cards: one per function (or torch.nn module class) of ``poolspec.frontends``, which mirror other
libraries' module paths, names, signatures and rules (TensorFlow, Keras, JAX, Flax, ONNX, torch.nn, SciPy) on
poolspec's kernels.

A front-end card says what the mirrored function is, its arguments with the library's defaults, the core ops it
calls, its layout and index convention, where the library's behaviour is a bug that poolspec does not copy, what
it refuses, and how it was checked against the live library. ``poolspec cards --frontends --out docs/frontends``
writes a page per card.

>>> from poolspec.spec import frontend_card
>>> frontend_card("tf.nn.max_pool2d").mirrors
'tf.nn.max_pool2d'
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ._card import Argument, Gradient, Port, _jsonable
from .markdown import cell, code, prose

# what every front-end claims, and tests/test_frontend_transforms.py checks on each function's stored cases:
# the front-ends are compositions of poolspec's ops, tap tables and slices, which carry these transforms
TORCH_TRANSFORMS = ("autograd (any order)", "torch.func.grad", "torch.func.vmap", "torch.func.jvp",
                    "torch.func.jacrev")
JAX_TRANSFORMS = ("jit", "grad", "grad-of-grad", "vmap", "jvp", "jacfwd", "jacrev")


def gradient(notes: str, wrt: tuple[str, ...] = ()) -> Gradient:
    """A front-end's gradient entry: the transforms every front-end carries, and what its gradient is."""
    return Gradient(None, TORCH_TRANSFORMS, JAX_TRANSFORMS, notes, wrt)


# the modules of poolspec.frontends that hold cards, in page order
MODULES = ("keras.ops", "keras.ops.image", "jax.image", "flax.linen", "tf.nn", "tf.image", "onnx", "torch.nn",
           "torchvision.ops", "scipy.ndimage")


@dataclass(frozen=True)
class FrontendCard:
    """A machine-readable card of one front-end function (``poolspec.frontends.<name>``)."""

    name: str  # the path under poolspec.frontends, e.g. "tf.nn.max_pool2d"
    version: int
    library: str  # "tensorflow 2.21", "keras 3.15 (JAX backend)", ...
    mirrors: str  # the mirrored function, e.g. "tf.nn.max_pool2d" or "onnx MaxPool (opset 22)"
    summary: str
    arguments: tuple[Argument, ...]
    outputs: tuple[Port, ...]
    core: tuple[str, ...]  # the poolspec ops (or plans) it calls
    layout: str  # the layout it takes and returns
    gradient: Gradient
    determinism: str
    indices: str = ""  # the index convention of any index output
    notes: tuple[str, ...] = ()  # the library's rules, as established against it
    differences: tuple[str, ...] = ()  # where the library's behaviour is a bug that poolspec does not copy
    refuses: tuple[str, ...] = ()  # what the library accepts and the front-end refuses, and why
    checked: str = ""  # how it is checked against the live library

    @property
    def id(self) -> str:
        return f"frontends.{self.name}@{self.version}"

    @property
    def function(self) -> str:
        return f"poolspec.frontends.{self.name}"

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "version": self.version, "library": self.library,
                "mirrors": self.mirrors, "summary": self.summary,
                "arguments": [a.to_dict() for a in self.arguments], "outputs": [p.to_dict() for p in self.outputs],
                "core": list(self.core), "layout": self.layout, "gradient": self.gradient.to_dict(),
                "determinism": self.determinism, "indices": self.indices, "notes": list(self.notes),
                "differences": list(self.differences), "refuses": list(self.refuses), "checked": self.checked}


@lru_cache(maxsize=1)
def _cards() -> dict[str, FrontendCard]:
    found: dict[str, FrontendCard] = {}
    for module in MODULES:
        for c in getattr(importlib.import_module(f"poolspec.frontends.{module}"), "CARDS", ()):
            found[c.name] = c
    return found


def frontend_cards() -> list[FrontendCard]:
    """Every front-end card, module by module."""
    return list(_cards().values())


def frontend_card(name: str) -> FrontendCard:
    """The card of front-end function ``name`` (``"tf.nn.max_pool2d"``, with or without ``frontends.``)."""
    base = name.removeprefix("poolspec.").removeprefix("frontends.").partition("@")[0]
    found = _cards().get(base)
    if found is None:
        raise ValueError(f"unknown front-end function {name!r}; known: {', '.join(sorted(_cards()))}")
    return found


def _usage(card: FrontendCard) -> list[str]:
    """The import line of the port and a call: the mirrored library's own import with poolspec's prefix."""
    module, _, name = card.function.rpartition(".")          # poolspec.frontends.keras.ops, max_pool
    package, _, leaf = module.rpartition(".")                 # poolspec.frontends.keras, ops
    original = card.name.rpartition(".")[0]                   # keras.ops
    original = "tensorflow" + original[2:] if original == "tf" or original.startswith("tf.") else original
    lib_package, _, lib_leaf = original.rpartition(".")
    instead = f"from {lib_package} import {lib_leaf}" if lib_package else f"import {original}"
    if package == "poolspec":
        return []
    line = f"from {package} import {leaf}"
    note = f"  # in place of: {instead}" if not original.startswith("onnx") else "  # one function per ONNX operator"
    return ["```python", line + note, f"{leaf}.{name}(...)", "```", ""]


def page(card: FrontendCard) -> str:
    """The Markdown page of one front-end card."""
    lines = [f"# {card.name}", "",
             f"<!-- generated by `poolspec cards --frontends --out docs/frontends` from {card.id}; do not edit -->",
             "", f"`{card.function}`: {prose(card.summary)}", "", *_usage(card),
             "| identity | |", "|---|---|", f"| id | `{card.id}` |", f"| mirrors | `{card.mirrors}` |",
             f"| library | {card.library} |", f"| calls | {', '.join(f'`{c}`' for c in card.core)} |",
             f"| layout | {cell(card.layout)} |"]
    if card.indices:
        lines.append(f"| indices | {cell(card.indices)} |")
    lines += ["", "## Ports", "", "| port | direction | type | description |", "|---|---|---|---|"]
    lines += [f"| `{a.name}` | in | {cell(a.type)} | {cell(a.description)} |" for a in card.arguments if a.is_array]
    lines += [f"| `{p.name}` | out | {cell(p.type)} | {cell(p.shape)}: {cell(p.description)} |"
              for p in card.outputs]
    lines += ["", "## Arguments", "", "| argument | type | default | constraints | description |",
              "|---|---|---|---|---|"]
    for a in card.arguments:
        if not a.is_array:
            default = "required" if a.required else f"`{_jsonable(a.default)!r}`"
            lines.append(f"| `{a.name}` | {code(a.type)} | {default} | {cell('; '.join(a.constraints))} | "
                         f"{cell(a.description)} |")
    lines += ["", "## Rules", ""] + [f"- {prose(n)}" for n in card.notes]
    if card.differences:
        lines += ["", "## Where the library's behaviour is a bug (poolspec keeps its rule)", ""]
        lines += [f"- {prose(d)}" for d in card.differences]
    if card.refuses:
        lines += ["", "## Refused", ""] + [f"- {prose(r)}" for r in card.refuses]
    g = card.gradient
    lines += ["", "## Gradients and determinism", "", f"- forward: {prose(card.determinism)}",
              f"- torch autograd: {prose(', '.join(g.torch) or 'none')}", f"- JAX: {prose(', '.join(g.jax) or 'none')}"]
    if g.notes:
        lines.append(f"- {prose(g.notes)}")
    if card.checked:
        lines += ["", "## Checked against the library", "", prose(card.checked)]
    lines += ["", "## Function", "", f"::: {card.function}", ""]
    return "\n".join(lines)


def index(cards: list[FrontendCard]) -> str:
    lines = ["# Front-ends: other libraries' conventions", "",
             "<!-- generated by `poolspec cards --frontends --out docs/frontends`; do not edit -->", "",
             "Each function mirrors a library's own path, name and signature: changing the import prefix to "
             "`poolspec.frontends.` is the whole port. They take any array-API array and call poolspec's kernels, "
             "so the gradients are deterministic on every backend. Every other name of the mirrored module is the "
             "library's own (imported from it on first use), and `dir()` lists the mirrored names. Keras' "
             "front-ends take KerasTensors and read Keras' global data format (their cards say how).", "",
             "```python",
             "from poolspec.frontends.keras import ops        # in place of: from keras import ops",
             "from poolspec.frontends.flax import linen as nn  # in place of: from flax import linen as nn",
             "from poolspec.frontends.jax import image        # in place of: from jax import image",
             "from poolspec.frontends.tf import nn            # in place of: from tensorflow import nn",
             "from poolspec.frontends import onnx             # one function per ONNX operator",
             "from poolspec.frontends.torch import nn         # in place of: from torch import nn (modules)",
             "from poolspec.frontends.torchvision import ops  # in place of: from torchvision import ops",
             "from poolspec.frontends.scipy import ndimage    # in place of: from scipy import ndimage",
             "```", "",
             "| function | mirrors | library | summary |", "|---|---|---|---|"]
    for c in cards:
        lines.append(f"| [`{c.name}`]({c.name}.md) | `{c.mirrors}` | {c.library} | {cell(c.summary)} |")
    return "\n".join(lines) + "\n"


def write(out: str | Path) -> list[Path]:
    """Write every front-end card's page and the index to ``out``; returns the paths."""
    from .markdown import write_pages

    return write_pages(out, frontend_cards(), page, index)
