"""The built docs site as a reader sees it: every page rendered in headless Chromium (Debian's, driven by
Playwright) at 1280 and 1366 px. A page fails on a console error or an uncaught script error (the theme's script
stops, and with it the tables' styling and the navigation), on a literal ``\\|`` or a formula that lost its ``*``
to emphasis, on a table left unstyled, on anything wider than the window, and on a resource fetched from
another host (the site must work offline).

Chromium is a system package: ``.ci/run`` installs it; where it is missing the test skips, unless
POOLSPEC_REQUIRE_BROWSER is set (as in CI), where it fails."""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import poolspec

ROOT = Path(__file__).resolve().parents[1]
WIDTHS = (1280, 1366)
SHOTS = {"": "home", "ops/max_pool2d/": "op-max_pool2d", "frontends/": "frontends-index",
         "frontends/keras.ops.max_pool/": "frontend-keras.ops.max_pool"}
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None or __import__("importlib").util.find_spec("playwright") is None:
        reason = "Debian's chromium and the playwright package are needed (.ci/run installs them)"
        if os.environ.get("POOLSPEC_REQUIRE_BROWSER"):
            pytest.fail(reason)
        pytest.skip(reason)
    return path


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(out))
    handler.log_message = lambda *a: None  # type: ignore[method-assign]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield out, f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


def _pages(site_dir: Path) -> list[str]:
    return sorted(p.parent.relative_to(site_dir).as_posix() + "/" if p.parent != site_dir else ""
                  for p in site_dir.rglob("index.html") if "search" not in p.parts and "assets" not in p.parts)


def _formulas() -> dict[str, list[str]]:
    """Per generated page, formulas whose '*' must survive: each card's shape relation and layout note."""
    out: dict[str, list[str]] = {}
    for card in poolspec.spec.cards():
        out[f"ops/{card.name}/"] = [t for t in (card.shape_relation,) if "*" in t]
    return out


# what each page is checked for, in the page
_PROBE = """() => {
  const main = document.querySelector('[role="main"]') || document.body;
  const tables = [...main.querySelectorAll('table')];
  return {
    text: main.innerText,
    unstyled: tables.filter(t => !t.classList.contains('table')).length,
    tables: tables.length,
    docWidth: document.documentElement.scrollWidth,
    headings: [...main.querySelectorAll('h1')].map(h => [h.innerText, h.getBoundingClientRect().height,
        parseFloat(getComputedStyle(h).lineHeight)]),
  };
}"""


def test_every_page_renders_in_a_browser(site):
    chromium = _chromium()
    from playwright.sync_api import sync_playwright

    site_dir, base = site
    pages = _pages(site_dir)
    assert len(pages) > 60, pages
    formulas = _formulas()
    problems: list[str] = []
    shots = os.environ.get("POOLSPEC_SCREENSHOTS")  # a folder for screenshots of a few pages, for a person
    if shots:
        Path(shots).mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=FLAGS)
        for width in WIDTHS:
            context = browser.new_context(viewport={"width": width, "height": 900})
            page = context.new_page()
            errors: list[str] = []
            foreign: list[str] = []
            page.on("console", lambda m, e=errors: e.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda exc, e=errors: e.append(str(exc)))
            page.on("request", lambda r, f=foreign: None if r.url.startswith(base) or r.url.startswith("data:")
                    else f.append(r.url))
            for rel in pages:
                errors.clear()
                foreign.clear()
                page.goto(base + rel, wait_until="load")
                page.wait_for_timeout(50)
                if shots and rel in SHOTS:
                    page.screenshot(path=str(Path(shots) / f"{SHOTS[rel]}-{width}.png"))
                seen = page.evaluate(_PROBE)
                where = f"{rel or 'home'} at {width} px"
                problems += [f"{where}: console: {e}" for e in errors]
                problems += [f"{where}: fetches {u} (offline readers have no network)" for u in foreign]
                if "\\|" in seen["text"]:
                    problems.append(f"{where}: a literal \\| in the text")
                if seen["unstyled"]:
                    problems.append(f"{where}: {seen['unstyled']} of {seen['tables']} tables unstyled")
                if seen["docWidth"] > width:
                    problems.append(f"{where}: the page is {seen['docWidth']} px wide")
                for title, height, line in seen["headings"]:
                    if height > 1.5 * line and not re.search(r"\s", title.strip()):
                        problems.append(f"{where}: the title {title!r} breaks inside a word")
                for formula in formulas.get(rel, []):
                    if formula not in seen["text"]:
                        problems.append(f"{where}: the formula {formula!r} is not in the text as written")
            context.close()
        browser.close()
    assert not problems, "\n".join(problems) + f"\n({len(problems)} problems)"


def test_the_site_is_self_contained(site):
    """No page loads a script, style or font from another host; the sitemap lists every page; an op's signature
    is its real one (not the typing overloads, whose defaults read "= ...")."""
    site_dir, _ = site
    pages = _pages(site_dir)
    for rel in pages:
        html = (site_dir / rel / "index.html").read_text(encoding="utf-8")
        loads = re.findall(r'<script[^>]+src="((?:https?:)?//[^"]+)"'
                           r'|<link(?![^>]*rel="canonical")[^>]+href="((?:https?:)?//[^"]+)"', html)
        assert not loads, (rel, loads)
    sitemap = (site_dir / "sitemap.xml").read_text(encoding="utf-8")
    assert len(re.findall(r"<loc>", sitemap)) == len(pages)
    for card in poolspec.spec.cards():
        html = (site_dir / "ops" / card.name / "index.html").read_text(encoding="utf-8")
        signatures = re.findall(r'class="doc-signature[^"]*">(.*?)</div>', html, flags=re.S)
        assert signatures and not any("= ..." in re.sub(r"<[^>]+>", "", s) for s in signatures), card.name
