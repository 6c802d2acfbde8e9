"""The docs site (mkdocs.yml: the guides in docs/, the generated op pages with every public function's numpydoc
docstring, the backend author's guide and the peer matrix from conformance/) builds with no warning, and shows each
function's docstring as ``help()`` does (the families' docstrings are filled at import: families/_docs.py). Its
Python blocks run in test_readme.py and its docstring examples in test_docs.py."""

from __future__ import annotations

import html
import importlib
import inspect
import re
import subprocess
import sys
from pathlib import Path

import griffe
import pytest
import yaml

import poolspec
from poolspec.families._docs import rank_fields

ROOT = Path(__file__).resolve().parents[1]


def _nav_pages(nav: list) -> list[str]:
    pages: list[str] = []
    for entry in nav:
        for value in entry.values():
            pages += _nav_pages(value) if isinstance(value, list) else [value]
    return pages


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The site, built once for this module's tests, and the build's log."""
    site = tmp_path_factory.mktemp("site")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return site, proc.stdout + proc.stderr


def test_the_site_builds_strict_with_every_function_documented(built: tuple[Path, str]) -> None:
    site, log = built
    assert "WARNING" not in log, log
    from mkdocs_hooks import _op_pages  # scripts/: the op pages the hook adds, one per card

    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)["nav"]
    _op_pages(config)
    nav = _nav_pages(config)
    assert {f"ops/{c.name}.md" for c in poolspec.spec.cards()} <= set(nav)
    assert all((site / "ops" / c.name / "index.html").is_file() for c in poolspec.spec.cards())
    docs = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    assert docs <= set(nav), f"pages missing from the nav: {sorted(docs - set(nav))}"
    for page in nav:
        stem = page[:-3]
        folder = stem.rsplit("/", 1)[0] if stem.endswith(("README", "index")) and "/" in stem else stem
        html = site / "index.html" if stem == "index" else site / folder / "index.html"
        assert html.exists(), page
    documented = set()
    for card in poolspec.spec.cards():
        text = (site / "ops" / card.name / "index.html").read_text(encoding="utf-8")
        for section in ("Parameters", "Returns", "Raises", "Examples"):
            assert text.count(f">{section}") >= (2 if card.gradient.backward else 1), (card.name, section)
        documented |= set(re.findall(r'id="poolspec\.(\w+)"', text))
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    documented |= set(re.findall(r'id="poolspec\.(?:spec\.)?(\w+)"', api))
    public = {n for n in poolspec.__all__ if callable(getattr(poolspec, n))}
    assert public <= documented, sorted(public - documented)
    bench = (site / "BENCHMARKS" / "index.html").read_text(encoding="utf-8")
    assert re.search(r'<img [^>]*src="\.\./img/cpu-2core\.png"', bench) and (site / "img" / "cpu-2core.png").exists()
    home = (site / "index.html").read_text(encoding="utf-8")
    for backend in ("NumPy", "torch", "JAX", "CuPy", "Dask and array-api-strict"):
        assert f">{backend}</h3>" in home or f">{backend}<a" in home or f'">{backend}' in home, backend


_ITEM = re.compile(r"^([-*+]|\d+[.)])\s+\S")


def test_lists_start_after_a_blank_line() -> None:
    """Python-Markdown (unlike GitHub) runs a list into the paragraph above it unless a blank line separates
    them: every page of the site must have one."""
    pages = [p for p in (ROOT / "docs").rglob("*.md")] + [ROOT / "conformance" / "README.md",
                                                           ROOT / "conformance" / "MATRIX.md"]
    wrong = []
    for path in pages:
        lines = path.read_text(encoding="utf-8").splitlines()
        fenced = False
        for i, line in enumerate(lines):
            if line.lstrip().startswith("```"):
                fenced = not fenced
                continue
            prev = lines[i - 1] if i else ""
            if (not fenced and _ITEM.match(line) and prev.strip() and not _ITEM.match(prev)
                    and not prev.startswith((" ", "|", "#", "<"))):
                wrong.append(f"{path.relative_to(ROOT)}:{i + 1}: {line[:50]!r}")
    assert not wrong, "\n".join(wrong)


def _letters(text: str) -> str:
    """``text``'s letters, digits and underscores: how a docstring's paragraph and its rendering compare, whatever
    the markup (Markdown takes a ``*`` pair in a formula for emphasis and drops it, as it did before templates)."""
    return re.sub(r"\W", "", text)


def _section(page: str, name: str) -> str:
    """The rendered text of ``poolspec.<name>``'s entry on an op page, tags and spacing removed."""
    start = page.index(f'id="poolspec.{name}"')
    end = page.find('<div class="doc doc-object doc-function">', start)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", page[start:end if end > 0 else None])).split())


def _parts(doc: str) -> list[str]:
    """A numpydoc docstring's paragraphs as the site renders them: text, each entry's description, each example."""
    parts: list[str] = []
    for section in griffe.Docstring(doc, parser="numpy").parse():
        value = section.value
        if isinstance(value, str):
            parts.append(value)
        elif section.kind.value == "examples":
            parts += [text for _, text in value]
        else:
            parts += [item.description for item in value]
    return parts


def test_each_variant_shows_its_filled_docstring(built: tuple[Path, str]) -> None:
    """Every function on an op page shows help()'s text, paragraph by paragraph; a 1d/2d/3d variant its own shapes
    and its own example (its docstring is a family template filled at import, absent from the source)."""
    site, _ = built
    for card in poolspec.spec.cards():
        page = (site / "ops" / card.name / "index.html").read_text(encoding="utf-8")
        for name in (card.name, f"{card.name}_backward"):
            fn = getattr(poolspec, name, None)
            if fn is None:
                continue
            doc = inspect.getdoc(fn)
            text = _section(page, name)
            for part in _parts(doc):
                assert _letters(part) in _letters(text), (name, part)
            rank = re.fullmatch(r"\w+?([123])d(?:_backward)?", name)
            if rank:
                assert rank_fields(int(rank[1]))["x"] in text, name
            for line in doc.splitlines():
                if line.startswith(">>> "):
                    assert " ".join(line[4:].split()) in text, (name, line)


def test_the_site_reads_the_docstrings_help_shows() -> None:
    """mkdocstrings' loader, with mkdocs.yml's paths and griffe extensions, reads for every public function the
    text of ``inspect.getdoc`` (``help()``): the families' filled docstrings, not their templates."""
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    plugin = next(p["mkdocstrings"] for p in config["plugins"] if isinstance(p, dict) and "mkdocstrings" in p)
    python = plugin["handlers"]["python"]
    extensions = griffe.load_extensions(*[str(ROOT / e) for e in python["options"]["extensions"]])
    package = griffe.load("poolspec", search_paths=[str(ROOT / p) for p in python["paths"]], extensions=extensions)
    public = [n for n in poolspec.__all__ if inspect.isfunction(getattr(poolspec, n))]
    for name in public:
        found = package[name]
        docstring = (found.final_target if isinstance(found, griffe.Alias) else found).docstring
        assert docstring is not None and docstring.value == inspect.getdoc(getattr(poolspec, name)), name
    # the front-ends' functions filled at import too (scripts/griffe_docstrings.py's FUNCTION_MODULES)
    for module in ("poolspec.frontends.scipy.ndimage", "poolspec.frontends.torchvision.ops"):
        imported = importlib.import_module(module)
        for name in imported.__all__:
            fn = getattr(imported, name)
            if not inspect.isfunction(fn):
                continue
            found = package[f"{module.removeprefix('poolspec.')}.{name}"]
            docstring = (found.final_target if isinstance(found, griffe.Alias) else found).docstring
            assert docstring is not None and docstring.value == inspect.getdoc(fn), f"{module}.{name}"
