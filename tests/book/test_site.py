"""The built site as a product: self-contained, no broken links, launch buttons, size budgets.

These read the files in _build/html; test_browser.py then loads every page in Chromium.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

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
    """MathJax, require.js and the widget manager are served from the site's vendor/ folder."""
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


def test_maths_pages_load_the_local_mathjax(built_book):
    n = 0
    for doc, rel in PAGES:
        html = (built_book / rel).read_text(encoding="utf-8")
        if 'class="math notranslate' in html:
            n += 1
            assert re.search(r'<script[^>]+src="(\.\./)*vendor/mathjax/tex-chtml\.js', html), rel
    assert n >= 1, "no page with maths at all?"


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
