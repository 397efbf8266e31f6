"""The built site as a product: self-contained, no broken links, launch buttons, size budgets.

These read the files in _build/html; test_browser.py then loads every page in Chromium.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from tests.tool_modules import tool

from . import sitemap
from .conftest import ROOT, toc_pages

pytestmark = pytest.mark.book

#: Budgets of the issue: each page (its HTML plus the images and scripts only it
#: loads) and the whole site, shared theme and vendor assets counted once.
MAX_PAGE_BYTES = 5_000_000
MAX_SITE_BYTES = 80_000_000

#: Remote URLs a page may still *load* (script src, stylesheet, image, iframe), each with
#: why. Links (<a href>: launch, repository and issue buttons) are not loads and are fine.
ALLOWED_REMOTE_LOADS: dict[str, str] = {}

CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
PAGES = toc_pages()
IDS = [d for d, _ in PAGES]


def _notebook(doc):
    return (ROOT / f"{doc}.ipynb").exists()


@pytest.fixture(scope="module")
def all_pages(built_book):
    return sitemap.site_pages(built_book)


def test_no_page_loads_anything_from_a_cdn(built_book, all_pages):
    """MathJax (for maths that appears later), require.js and the widget manager are served from the site's vendor/
    folder."""
    bad = []
    for rel in all_pages:
        for tag, attr, url in sitemap.parse(built_book / rel).urls:
            if tag == "a" or not sitemap.is_remote_http(url):
                continue
            if tag == "link" and sitemap.parse(built_book / rel).link_rel.get(url, "") in (
                "canonical", "alternate", "next", "prev", "index", "search",
            ):
                continue
            if not any(re.search(p, url) for p in ALLOWED_REMOTE_LOADS):
                bad.append(f"{rel}: <{tag} {attr}={url}>")
    assert not bad, "pages load remote files:\n" + "\n".join(bad)


def test_vendor_files_come_from_the_locked_npm_packages(built_book):
    """vendor/ holds exactly the versions package-lock.json pins (a stale node_modules fails here)."""
    lock = json.loads((ROOT / "package-lock.json").read_text())["packages"]
    listed = (built_book / "vendor" / "PACKAGES.txt").read_text()
    for name in json.loads((ROOT / "package.json").read_text())["dependencies"]:
        assert f"- {name} {lock[f'node_modules/{name}']['version']} " in listed, (name, listed)


_FORMULA = re.compile(r'<(span|div) class="math notranslate nohighlight[^"]*"[^>]*>(.*?)</\1>', re.S)


def test_maths_is_typeset_when_the_book_is_built(built_book):
    """Every formula of every page is in the page already typeset (issue 44): MathJax's SVG, hidden from assistive
    technology, with MathJax's assistive MathML, which a screen reader reads and which keeps the TeX as an annotation
    (copied by the copy handler, read by tools/page_numbers.py); the glyphs once per page; no page loads MathJax,
    and no TeX is left in a page's text."""
    speed = tool("site_speed")
    pages_with_maths = 0
    for rel in sitemap.site_pages(built_book):
        html = (built_book / rel).read_text(encoding="utf-8")
        assert not re.search(r'<script[^>]+src="[^"]*mathjax', html, re.I), f"{rel} loads MathJax"
        assert not speed.raw_tex(html), f"{rel}: TeX left untypeset: {speed.raw_tex(html)[:3]}"
        formulas = _FORMULA.findall(html)
        if not formulas:
            continue
        pages_with_maths += 1
        assert 'id="MJX-SVG-global-cache"' in html, f"{rel}: typeset maths without its glyphs"
        for _, inner in formulas:
            assert inner.count('<mjx-container class="MathJax" jax="SVG"') == 1, (rel, inner[:200])
            assert re.search(r'<svg [^>]*aria-hidden="true"', inner), (rel, inner[:200])
            note = re.search(r'<mjx-assistive-mml[^>]*><math[^>]*><semantics>.*<annotation encoding="application/x-tex">'
                             r'([^<]+)</annotation></semantics></math></mjx-assistive-mml>', inner, re.S)
            assert note and note.group(1).strip(), (rel, inner[-300:])
    assert pages_with_maths >= 8, "the chapters' maths was not found"


def test_the_numbers_in_the_maths_are_read_from_its_tex(built_book):
    """tools/page_numbers.py records each formula's TeX source from its annotation, with Sphinx's delimiters, so that a
    snapshot of this build pairs its formulas with one of a build whose maths MathJax typeset in the browser."""
    page_numbers = tool("page_numbers")
    html = (built_book / "book" / "transformer_block.html").read_text(encoding="utf-8")
    maths = [t for t in page_numbers.page_tokens(html)["tokens"] if t["kind"] == "math"]
    assert maths and all(t["text"].startswith(("\\(", "\\[")) and t["text"].endswith(("\\)", "\\]"))
                         for t in maths), maths[:3]
    assert not [t for t in maths if re.search(r"<(?:mjx|svg|math|g|use)\b|xlink", t["text"])]


def test_no_page_blocks_its_first_paint_on_what_it_does_not_need(built_book):
    """Issue 44: in the head of every page (the search page's own search scripts aside) no script blocks, and every
    script file waits for the first paint (probdr-site.js last, so that its "ready" means all have run);
    documentation_options.js is written into the page; no script is preloaded; the theme's stylesheets
    come without the @import of theme.css; the search index and its scripts load on the search page only."""
    speed = tool("site_speed")
    for rel in sitemap.site_pages(built_book):
        html = (built_book / rel).read_text(encoding="utf-8")
        if "</head>" not in html:
            continue  # index.html: a redirect to the first page
        head = html[:html.index("</head>")]
        held = re.search(rf'<template id="{speed.LATER_ID}">(.*?)</template>', head, re.S)
        blocking = [m.group(0) for m in re.finditer(r"<script\b[^>]*\bsrc=[^>]*>",
                                                     head.replace(held.group(0), "") if held else head)
                    if not re.search(r"\b(defer|async)\b", m.group(0))]
        if rel == "search.html":
            assert all(re.search(r"searchtools|language_data|searchindex|_static/[\w/.-]+\.js", b) for b in blocking)
            assert "searchindex.js" in html
            continue
        assert not blocking, f"{rel}: scripts that block the first paint: {blocking}"
        # every script file of the page waits, in a <template>, for the first paint (site_speed.scripts_after_paint)
        assert held and speed.SCRIPTS_READY_EVENT in head, f"{rel}: the page's scripts are not held for after the first paint"
        outside = [t for t in re.findall(r"<script\b[^>]*\bsrc=[^>]*>", html.replace(held.group(0), ""))
                   if re.search(r"\b(defer|async)\b", t)]
        assert not outside, f"{rel}: deferred scripts fetched with the page: {outside}"
        assert "probdr-site.js" in held.group(1).split("<script")[-1], f"{rel}: probdr-site.js is not the last script"
        assert "documentation_options.js" not in head and "const DOCUMENTATION_OPTIONS" in head, rel
        assert not re.search(r'<link rel="preload" as="script"', head), rel
        assert "searchindex.js" not in html and "searchtools.js" not in html, rel
        assert "_static/styles/theme.css" not in head and "_static/basic.css" in head, rel


def test_the_icon_fonts_hold_only_the_sites_icons(built_book):
    """The theme's Font Awesome fonts (274 KiB of woff2) are cut to the icons the site names and written into its
    stylesheet (no font file is fetched after it), which keeps only those icons' rules; every icon a page names keeps
    its rule, and every glyph a kept rule draws is in the cut font of its family."""
    import base64
    import io

    from fontTools.ttLib import TTFont

    speed = tool("site_speed")
    css = (built_book / speed.FA_CSS).read_text(encoding="utf-8")
    assert "fa-solid-900.woff2" not in css and "fa-brands-400.woff2" not in css
    assert not re.search(r"url\([^)]*webfonts/fa-", css), "the stylesheet still fetches Font Awesome's font files"
    faces = re.findall(r"@font-face\{[^}]*font-family:Font Awesome\\? 6 (\w+)[^}]*font-weight:(\d+)[^}]*"
                       r"src:url\(data:font/woff;base64,([A-Za-z0-9+/=]+)\)", css)
    assert {(family, weight) for family, weight, _ in faces} >= {("Free", "900"), ("Brands", "400")}, faces
    cmaps = {}
    for family, weight, data in faces:
        raw = base64.b64decode(data)
        assert len(raw) < 20_000, (family, weight, len(raw))
        cmaps[(family, weight)] = set(TTFont(io.BytesIO(raw)).getBestCmap())
    drawn = {int(m.group(1), 16) for m in re.finditer(r'\.fa-[a-z0-9-]+:before\{content:"\\([0-9a-fA-F]+)"\}', css)}
    assert drawn and drawn <= cmaps[("Free", "900")] | cmaps[("Brands", "400")], sorted(
        drawn - cmaps[("Free", "900")] - cmaps[("Brands", "400")])
    rules = set(re.findall(r"\.(fa-[a-z0-9-]+):before", css))
    named = set()
    for rel in sitemap.site_pages(built_book):
        named |= set(re.findall(r'class="[^"]*\b(fa-[a-z0-9-]+)', (built_book / rel).read_text(encoding="utf-8")))
    modifiers = {"fa-solid", "fa-brands", "fa-regular", "fa-lg", "fa-fw", "fa-flip-horizontal", "fa-2x", "fa-xs",
                 "fa-sm"}
    missing = sorted(n for n in named - modifiers if n not in rules)
    assert not missing, f"icons named by pages without a rule: {missing}"
    assert len(rules) < 200, f"{len(rules)} icon rules kept"


@pytest.mark.parametrize("doc, rel", PAGES, ids=IDS)
def test_figures_offer_sources_sized_for_the_screen(built_book, doc, rel):
    """Each figure: its PNG (the link and the fallback), a lossless WebP of it and, where the figure is wider than the
    column, a WebP at the column's width, offered by srcset with the width the page shows it at (sizes); its width
    and height given; lazy unless it is the page's first and close to the top. The scrub figures' frames are files."""
    import numpy as np
    from PIL import Image

    html = (built_book / rel).read_text(encoding="utf-8")
    imgs = re.findall(r"<img [^>]*>", html[html.index("<article"):])
    figures = [i for i in imgs if "_images/" in i and "srcset=" in i]
    plain = [i for i in imgs if re.search(r'src="[^"]*_images/[^"]+\.png"', i) and "srcset=" not in i]
    assert not plain, f"{rel}: figures without sources sized for the screen: {plain[:2]}"
    for k, img in enumerate(figures):
        attrs = dict(re.findall(r'([a-z-]+)="([^"]*)"', img))
        png = built_book / sitemap.resolve(built_book, rel, attrs["src"])[0]
        with Image.open(png) as im:
            size = im.size
        assert (int(attrs["width"]), int(attrs["height"])) == size, (rel, attrs["src"])
        candidates = [c.strip().rsplit(" ", 1) for c in attrs["srcset"].split(",")]
        for url, width in candidates:
            target = built_book / sitemap.resolve(built_book, rel, url)[0]
            assert target.is_file() and url.endswith(".webp"), (rel, url)
            with Image.open(target) as im:
                assert im.size[0] == int(width[:-1]), (rel, url, im.size)
        full = built_book / sitemap.resolve(built_book, rel, candidates[-1][0])[0]
        with Image.open(full) as im, Image.open(png) as orig:  # what shows: alpha, and colour where not transparent
            a, b = np.asarray(im.convert("RGBA")), np.asarray(orig.convert("RGBA"))
            assert a.shape == b.shape and np.array_equal(a[..., 3], b[..., 3]), full
            assert np.array_equal(a[a[..., 3] > 0], b[b[..., 3] > 0]), f"{full} is not the PNG's picture"
        assert attrs.get("sizes"), (rel, attrs["src"])
        assert attrs.get("loading") == "lazy" or (k == 0 and attrs.get("fetchpriority") == "high"), (rel, img[:200])
    assert 'frames[0] = "data:image' not in html, f"{rel}: a scrub figure's frames inside the page"
@pytest.mark.parametrize("doc, rel", PAGES, ids=IDS)
def test_widget_pages_load_the_local_widget_manager(built_book, doc, rel):
    html = (built_book / rel).read_text(encoding="utf-8")
    if "application/vnd.jupyter.widget-view+json" not in html:
        pytest.skip("no widgets on this page")
    assert re.search(r'<script src="(\.\./)*vendor/requirejs/require\.js', html)
    assert re.search(r'<script src="(\.\./)*vendor/jupyter-widgets/html-manager/embed-amd\.js', html)
    assert "__jupyter_widgets_assets_path__" in html
    assert "application/vnd.jupyter.widget-state+json" in html, "views without saved widget state"


def test_no_broken_internal_links_images_or_anchors(built_book, all_pages):
    """Every local <a href>, <img src>, script and stylesheet exists; #anchors exist in their target."""
    bad = []
    for rel in all_pages:
        page = sitemap.parse(built_book / rel)
        for tag, attr, url in page.urls:
            if sitemap.is_external(url) or url in ("", "#"):
                continue
            target, frag = sitemap.resolve(built_book, rel, url)
            f = built_book / target
            if not f.is_file():
                bad.append(f"{rel}: <{tag} {attr}={url}> -> {target} does not exist")
            elif frag and tag == "a" and target.endswith(".html") and frag not in sitemap.parse(f).ids:
                bad.append(f"{rel}: <a href={url}> -> no id {frag!r} in {target}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("doc, rel", PAGES, ids=IDS)
def test_page_weight(built_book, doc, rel):
    total, parts = sitemap.page_weight(built_book, rel)
    biggest = sorted(parts.items(), key=lambda kv: -kv[1])[:5]
    assert total <= MAX_PAGE_BYTES, f"{rel} weighs {total:,} bytes (> {MAX_PAGE_BYTES:,}); largest: {biggest}"


def test_site_size(built_book):
    total = sitemap.site_bytes(built_book)
    assert total <= MAX_SITE_BYTES, f"the site is {total:,} bytes (> {MAX_SITE_BYTES:,})"


def _repo():
    url = CONFIG["repository"]["url"].rstrip("/")
    owner_repo = re.match(r"https://github\.com/([^/]+/[^/]+)$", url)
    assert owner_repo, f"repository.url must be a GitHub repository: {url}"
    return url, owner_repo.group(1), CONFIG["repository"].get("branch", "main")


@pytest.mark.parametrize("doc, rel", PAGES, ids=IDS)
def test_repository_and_issue_buttons(built_book, doc, rel):
    url, _, _ = _repo()
    hrefs = [u for t, _, u in sitemap.parse(built_book / rel).urls if t == "a"]
    assert url in hrefs, f"no repository button on {rel}"
    assert any(h.startswith(f"{url}/issues/new") for h in hrefs), f"no issue button on {rel}"


@pytest.mark.parametrize("doc, rel", [p for p in PAGES if _notebook(p[0])],
                         ids=[d for d, _ in PAGES if _notebook(d)])
def test_binder_and_colab_buttons_open_this_notebook_on_main(built_book, doc, rel):
    """The launch URLs are built from _config.yml's repository (the one place it is set) and open the chapter's
    reader notebook (``launch_buttons.reader_notebooks``: ``jupyter/`` on Binder, ``colab/`` on Colab), which
    exists in the repository."""
    _, owner_repo, branch = _repo()
    assert branch == "main"
    launch = CONFIG["launch_buttons"]
    folder, name = launch["reader_notebooks"].strip("/"), Path(doc).name
    for flavour in ("jupyter", "colab"):
        assert (ROOT / folder / flavour / f"{name}.ipynb").is_file(), f"no {flavour} reader notebook for {doc}"
    hrefs = [u for t, _, u in sitemap.parse(built_book / rel).urls if t == "a"]
    binder = (f"{launch['binderhub_url'].rstrip('/')}/v2/gh/{owner_repo}/{branch}"
              f"?urlpath=tree/{folder}/jupyter/{name}.ipynb")
    colab = f"{launch['colab_url'].rstrip('/')}/github/{owner_repo}/blob/{branch}/{folder}/colab/{name}.ipynb"
    assert binder in hrefs, f"no Binder button for {doc}: {[h for h in hrefs if 'binder' in h]}"
    assert colab in hrefs, f"no Colab button for {doc}: {[h for h in hrefs if 'colab' in h]}"


@pytest.mark.parametrize("doc, rel", [p for p in PAGES if _notebook(p[0])],
                         ids=[d for d, _ in PAGES if _notebook(d)])
def test_the_colab_install_cell_is_not_shown(built_book, doc, rel):
    assert "google.colab" not in (built_book / rel).read_text(encoding="utf-8")
