"""Every Python block of README.md and of the guides in docs/ (and of conformance/README.md, but for the blocks
that stand for an author's own module ``mypkg``) runs verbatim, so the documentation cannot drift from the code.

A block of ``>>>`` lines runs as a doctest in a fresh namespace; any other block runs as a script in a fresh
interpreter, which must exit 0 without a traceback or a warning about cancelled work.
"""

from __future__ import annotations

import doctest
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
GUIDES = [README] + sorted((README.parent / "docs").glob("*.md"))


def _blocks(path: Path) -> list[tuple[str, str]]:
    text = path.read_text(encoding="utf-8")
    name = path.relative_to(README.parent).as_posix()
    return [(f"{name}:{text[: m.start()].count(chr(10)) + 2}", m.group(1))
            for m in re.finditer(r"```python\n(.*?)```", text, re.S)]


BLOCKS = list({block: (line, block) for path in reversed(GUIDES) for line, block in _blocks(path)}.values())
# (a block shown in two places runs once)
AUTHORS = README.parent / "conformance" / "README.md"
_AUTHORS_TEXT = AUTHORS.read_text(encoding="utf-8")
AUTHOR_BLOCKS = [(_AUTHORS_TEXT[: m.start()].count("\n") + 2, m.group(1))
                 for m in re.finditer(r"```python\n(.*?)```", _AUTHORS_TEXT, re.S) if "mypkg" not in m.group(1)]
LIBRARIES = {"torch": "torch", "jax": "jax", "dask": "dask", "distributed": "distributed", "cupy": "cupy",
             "array_api_strict": "array_api_strict"}


def test_readme_has_python_blocks():
    assert len(_blocks(README)) >= 4 and len(BLOCKS) >= 9


@pytest.mark.parametrize("line, block", BLOCKS, ids=[line for line, _ in BLOCKS])
def test_readme_block_runs_verbatim(line, block):
    for name, module in LIBRARIES.items():
        if re.search(rf"^\s*(import|from) {name}\b", block, re.M) and importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed")
    if block.lstrip().startswith(">>>"):
        test = doctest.DocTestParser().get_doctest(block, {}, line, str(README), 0)
        assert test.examples
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        lines: list[str] = []
        result = runner.run(test, out=lines.append)
        assert result.failed == 0, "".join(lines)
        return
    proc = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True, timeout=600,
                          cwd=README.parent)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for bad in ("Traceback", "CancelledError", "Warning"):
        assert bad not in proc.stderr, proc.stderr[-3000:]


@pytest.mark.parametrize("line, block", AUTHOR_BLOCKS,
                         ids=[f"conformance/README.md:{line}" for line, _ in AUTHOR_BLOCKS])
def test_authors_guide_block_runs_verbatim(line, block):
    proc = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True, timeout=600,
                          cwd=README.parent)
    assert proc.returncode == 0, proc.stderr[-3000:]
