"""The docs site (mkdocs.yml: the guides in docs/, the generated op pages with every public function's numpydoc
docstring, the backend author's guide and the peer matrix from conformance/) builds with no warning. Its Python
blocks run in test_readme.py and its docstring examples in test_docs.py."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import yaml

import poolspec

ROOT = Path(__file__).resolve().parents[1]


def _nav_pages(nav: list) -> list[str]:
    pages: list[str] = []
    for entry in nav:
        for value in entry.values():
            pages += _nav_pages(value) if isinstance(value, list) else [value]
    return pages


def test_the_site_builds_strict_with_every_function_documented(tmp_path: Path) -> None:
    site = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "WARNING" not in log, log
    nav = _nav_pages(yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)["nav"])
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
