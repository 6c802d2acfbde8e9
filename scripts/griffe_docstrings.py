"""A griffe extension for the docs site (mkdocs.yml): a function's docstring as ``help()`` shows it.

mkdocstrings reads the source without running it, so a docstring filled at import (the families' templates,
``poolspec/families/_docs.py``) would be missing from the site. A family's public function, or a torchvision.ops
or scipy.ndimage front-end function, without a docstring in its source gets the imported function's: the site
renders exactly the text of ``help(poolspec.<name>)`` (tests/test_docs_site.py checks it, variant by variant)."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path
from typing import Any

import griffe

# the checkout's package, as mkdocs.yml's ``paths: [src]`` reads it (not an installed copy)
SRC = Path(__file__).resolve().parents[1] / "src"
# the families' public functions, and torchvision.ops' and scipy.ndimage's front-end functions (their modules
# import neither torch, torchvision nor SciPy): the other front-ends' modules import TensorFlow, Keras and Flax
FUNCTION_MODULES = ("poolspec.families.", "poolspec.frontends.torchvision.", "poolspec.frontends.scipy.")


# the front-ends whose classes' docstrings are filled at import (torch.nn's modules: one template per family)
CLASS_MODULES = ("poolspec.frontends.torch.nn.",)


class RuntimeDocstrings(griffe.Extension):
    """Give a public function (or a torch.nn front-end class) that has no docstring in its source the one it has
    once imported."""

    def on_class_instance(self, *, node: Any, cls: griffe.Class, agent: Any, **kwargs: Any) -> None:
        if cls.docstring is not None or cls.name.startswith("_") or not cls.path.startswith(CLASS_MODULES):
            return
        try:
            runtime = griffe.dynamic_import(cls.path, import_paths=[SRC, *sys.path])
        except ImportError:
            return
        text = inspect.getdoc(runtime)
        if text:
            cls.docstring = griffe.Docstring(text, parent=cls)

    def on_function_instance(self, *, node: Any, func: griffe.Function, agent: Any, **kwargs: Any) -> None:
        if func.docstring is not None or func.name.startswith("_") or not func.path.startswith(FUNCTION_MODULES):
            return
        try:
            # import_paths replaces sys.path for the import: the checkout first, then the installed dependencies
            runtime = griffe.dynamic_import(func.path, import_paths=[SRC, *sys.path])
        except ImportError:
            return
        text = inspect.getdoc(runtime)
        if not text:
            return
        func.docstring = griffe.Docstring(text, parent=func)
