"""mkdocs hooks for the docs site: pages and images that live outside docs/ (the backend author's guide and the
peer matrix in conformance/, the benchmark plot in benchmarks/results/) join the site under their own names, and
links to repository files the site does not hold become plain text, so that ``mkdocs build --strict`` passes while
the Markdown stays readable in the repository itself."""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[1]
# repository path -> site path
EXTERNAL = {
    "conformance/README.md": "authors.md",
    "conformance/MATRIX.md": "matrix.md",
    "benchmarks/results/cpu-2core.png": "img/cpu-2core.png",
}
_SOURCE = {site: repo for repo, site in EXTERNAL.items()}
_LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")


def _slugify(value: str, separator: str) -> str:
    """Markdown's heading ids, prefixed where they would begin with a digit ("## 1. Run the suite"): the theme's
    script looks each one up as a CSS selector, which cannot begin with a digit, and stops at the first."""
    from markdown.extensions.toc import slugify

    slug = slugify(value, separator)
    return f"s{separator}{slug}" if slug[:1].isdigit() else slug


def on_config(config: Any) -> Any:
    config.mdx_configs.setdefault("toc", {})["slugify"] = _slugify
    _op_pages(config["nav"])
    return config


def _op_pages(nav: list[Any]) -> None:
    """The op reference lists one page per card, in catalogue order, after its first entry and before the entries
    that are not op pages: a new family's pages join the site with no edit to mkdocs.yml."""
    import sys

    sys.path.insert(0, str(ROOT / "src"))  # the checkout's package, as the pages were generated from it
    try:
        from poolspec import spec
    finally:
        sys.path.pop(0)
    for section in nav:
        if isinstance(section, dict) and "Op reference" in section:
            entries = section["Op reference"]
            cards = [{c.name: f"ops/{c.name}.md"} for c in spec.cards()]
            section["Op reference"] = entries[:1] + cards + entries[1:]


def on_files(files: Files, config: Any) -> Files:
    for repo, site in EXTERNAL.items():
        data = (ROOT / repo).read_bytes()
        content: str | bytes = data.decode("utf-8") if repo.endswith(".md") else data
        files.append(File.generated(config, site, content=content))
    from pygments.formatters import HtmlFormatter

    # code highlighted at build time (Python-Markdown's codehilite, mkdocstrings' signatures): its colours
    css = "\n".join(HtmlFormatter(style="default").get_style_defs(scope) for scope in (".codehilite", ".highlight"))
    files.append(File.generated(config, "css/pygments.css", content=css))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    site_uri = page.file.src_uri
    repo_path = _SOURCE.get(site_uri, f"docs/{site_uri}")

    def fix(m: re.Match[str]) -> str:
        bang, text, target = m.groups()
        if re.match(r"[a-z]+:|#", target):
            return m.group(0)
        path, _, anchor = target.partition("#")
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(repo_path), path))
        if resolved.startswith("docs/"):
            new = posixpath.relpath(resolved[len("docs/"):], posixpath.dirname(site_uri) or ".")
        elif resolved in EXTERNAL:
            new = posixpath.relpath(EXTERNAL[resolved], posixpath.dirname(site_uri) or ".")
        else:
            return text  # a repository file the site does not hold: the link text names it
        return f"{bang}[{text}]({new}{'#' + anchor if anchor else ''})"

    return _LINK.sub(fix, markdown)
