"""Read the built site: the tags, links and ids of each page, and where a URL points.

Shared by the static site checks (test_site.py) and the browser tests.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from functools import lru_cache
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

#: Folders of the built site that hold assets every page shares (counted once for the
#: whole site, not per page) or that are not pages.
SHARED_PREFIXES = ("_static/", "vendor/", "searchindex.js", "_sphinx_design_static/")
NOT_PAGES = ("_static", "vendor", "_sources", "reports", "_images", "jupyter_execute")


@dataclass
class Page:
    ids: set = field(default_factory=set)
    #: (tag, attribute, value) of every URL-valued attribute that loads or links something
    urls: list = field(default_factory=list)
    #: rel of each <link href=...>, keyed by the href
    link_rel: dict = field(default_factory=dict)


class _Parser(HTMLParser):
    URL_ATTRS = {
        "a": ("href",), "img": ("src",), "script": ("src",), "link": ("href",),
        "iframe": ("src",), "source": ("src",), "video": ("src", "poster"), "audio": ("src",),
        "embed": ("src",), "object": ("data",),
    }

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.page = Page()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("id", "name") if tag == "a" else ("id",):
            if attrs.get(key):
                self.page.ids.add(attrs[key])
        for attr in self.URL_ATTRS.get(tag, ()):
            value = attrs.get(attr)
            if value is not None:
                self.page.urls.append((tag, attr, value))
                if tag == "link":
                    self.page.link_rel[value] = (attrs.get("rel") or "").lower()

    handle_startendtag = handle_starttag


@lru_cache(maxsize=None)
def parse(path: Path) -> Page:
    parser = _Parser()
    parser.feed(Path(path).read_text(encoding="utf-8", errors="replace"))
    return parser.page


def is_external(url: str) -> bool:
    parts = urlsplit(url)
    return bool(parts.scheme) or url.startswith("//")


def is_remote_http(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") or url.startswith("//")


def resolve(site: Path, page_rel: str, url: str) -> tuple[str, str]:
    """Site-relative path (posix) and fragment that a local ``url`` on ``page_rel`` points to.

    The path is "" for a link to the page itself (``#anchor``).
    """
    parts = urlsplit(url)
    path = unquote(parts.path)
    if not path:
        return page_rel, unquote(parts.fragment)
    if path.startswith("/"):
        target = path.lstrip("/")
    else:
        target = posixpath.normpath(posixpath.join(posixpath.dirname(page_rel), path))
    if target.endswith("/") or (site / target).is_dir():
        target = posixpath.join(target, "index.html")
    return target, unquote(parts.fragment)


def site_pages(site: Path) -> list[str]:
    """Every HTML page Sphinx wrote (toc pages, index, genindex, search), site-relative."""
    return sorted(
        p.relative_to(site).as_posix()
        for p in site.rglob("*.html")
        if p.relative_to(site).parts[0] not in NOT_PAGES
        and not any(part.startswith(".") for part in p.relative_to(site).parts)
    )


def is_shared(target: str) -> bool:
    return target.startswith(SHARED_PREFIXES)


def page_weight(site: Path, page_rel: str) -> tuple[int, dict]:
    """Bytes of the page plus the local images, scripts and stylesheets only it loads.

    Shared theme and vendor assets (``SHARED_PREFIXES``) are left out; the site
    size counts them once. Returns (total, {resource: bytes}).
    """
    page = parse(site / page_rel)
    parts = {page_rel: (site / page_rel).stat().st_size}
    for tag, attr, url in page.urls:
        if tag == "a" or is_external(url):
            continue
        if tag == "link" and not any(r in page.link_rel.get(url, "") for r in ("stylesheet", "preload", "icon")):
            continue
        target, _ = resolve(site, page_rel, url)
        if is_shared(target) or target in parts:
            continue
        f = site / target
        if f.is_file():
            parts[target] = f.stat().st_size
    return sum(parts.values()), parts


def site_bytes(site: Path) -> int:
    return sum(f.stat().st_size for f in site.rglob("*") if f.is_file())
