"""Sphinx extension: serve MathJax, require.js, the ipywidgets HTML manager, Thebe and the live figures from the book,
and make every page fast to open on a phone (issue 44; the build steps are in ``tools/site_speed.py``).

By default Sphinx loads MathJax from jsDelivr, and myst-nb loads require.js from
cdnjs and the ipywidgets HTML manager from jsDelivr, so the site shows raw TeX
and dead widgets without a network. Here those files come from ``node_modules``
(``npm ci`` installs the exact versions pinned in ``package-lock.json``; nothing
of them is committed) and are copied into ``_build/html/vendor/``, outside any
``_static`` folder (Jupyter Book adds every ``.js`` file under a source
``_static`` folder to every page).

``_config.yml`` names the files as ``vendor/...`` (``mathjax_path`` and
``nb_ipywidgets_js``). Sphinx would read such a path as relative to
``_static/``; this extension rewrites every script and stylesheet whose path is
``_static/vendor/...`` to ``vendor/...`` on each page, and Sphinx's ``pathto``
then makes the URL relative to that page (``../vendor/...`` from ``book/``), so
the site works from any base URL, including ``file://``.

At the end of the build it checks that every ``vendor/`` file a page refers to
was copied, so a typo in ``_config.yml`` fails the build instead of a page.

Two more things come from here:

- Thebe (``launch_buttons.thebe`` in ``_config.yml``): the site serves Thebe 0.9
  (npm package ``thebe``) from ``vendor/thebe/`` (its code-split chunks sit next
  to ``index.js`` and are found from the script's own URL), and sphinx-thebe's
  inline ``THEBE_JS_URL`` is pointed there instead of unpkg. sphinx-thebe 0.3's
  own launch was written for Thebe 0.8 and never starts a 0.9 kernel, so
  ``THEBE_SETUP_JS`` replaces its ``initThebe`` with the book's own launch,
  ``tools/site/probdr-thebe.js`` (loaded on the first click): it reaches the
  server and starts a kernel before it turns any cell into an editor (a failed
  launch leaves the page as it was, and the next click tries again), gives each
  chapter its own kernel (session path ``book/<page>.ipynb``), makes "restart"
  and "restart & run all" restart the kernel and every run wait for the restart,
  renders Markdown outputs with ``marked`` (npm, ``vendor/marked/``) and the
  site's MathJax, and says in the button what it is doing and where. Nothing but
  the kernel's server (Binder, or the one a page configures) is reached, and
  only after the click.
- The kernel-free live figures (``probdr_lite.presentation.live``): ``live.js`` and
  ``live.css`` are package resources, copied to ``vendor/probdr-live/``; on a page
  that has a live figure ``probdr-site.js`` loads them once the page has painted.
  Each figure's spec (controls, panels, precomputed data) is moved out of its page
  into ``live-data/<page>/<figure>/spec.js`` (:func:`_externalise_specs`), which
  live.js loads when the reader comes near the figure; a figure whose points come
  in chunks (one per setting) has them moved into one file per setting there too
  (:func:`_externalise_chunks`), loaded when the reader first picks that setting.
- Maths: typeset when the book is built (:func:`site_speed.typeset_site`, MathJax
  in Node, SVG with assistive MathML); no page loads MathJax. ``mathjax_path`` is
  the MathJax that ``probdr-site.js`` loads only for maths that appears later
  (search summaries, Live Code's outputs), configured by ``mathjax3_config``.
- Nothing render-blocking that the first screen does not need: every script of
  the head is deferred (the search page's excepted), and at the end of the build
  :func:`site_speed.rewrite_head` and :func:`site_speed.subset_icons` finish the
  head of every page (its scripts fetched once it has painted) and cut the theme's
  icon fonts to the icons the site uses.

The site's own stylesheet and script (``tools/site/``, copied to
``vendor/probdr-site/`` and loaded on every page) and the post-processing of
each page (:func:`_site_page`, :func:`_finish_site`):

- every figure a notebook output shows (an ``<img>`` of ``_images/``) gets the
  alt text its figure builder gave it (``probdr_lite.presentation.style.describe``
  writes it into the PNG), a link to the image itself (the figure at full
  size), a smallest width at which its tick labels are 9 pixels high (a figure
  wider than the column then scrolls sideways, with a cue that is a caption style:
  its words in the stylesheet, not in the page), and sources sized for the screen
  (``srcset``: WebP copies, :func:`site_speed.figure_sources`). The scrub
  animations get their frames' alt text, and their frames become files loaded
  when the figure is near (:func:`site_speed.externalise_frames`);
- Font Awesome's 1.5 MB script is dropped: the theme's stylesheet already
  draws every icon from Font Awesome's web fonts, which the end of the build
  cuts to the icons the site uses (:func:`site_speed.subset_icons`);
- markup of the theme and extensions that axe-core's WCAG rules reject is
  rewritten (:data:`MARKUP_FIXES`: names that differ from the visible text,
  docutils' deprecated ``doc-biblioentry`` role), and the scrub figures'
  frame sliders are named;
- section titles in ``searchindex.js`` read as text, not TeX (``\\kappa`` ->
  κ), and the search page typesets the maths of its result summaries (with the
  MathJax that probdr-site.js loads then);
- a print stylesheet: no navigation, code that wraps, live figures as sharp
  pictures at their current settings without their controls (``live.css``).
"""

from __future__ import annotations

import json
import posixpath
import re
import shutil
import sys
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util import logging

logger = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parent.parent
TOOLS = Path(__file__).resolve().parent
NODE_MODULES = ROOT / "node_modules"
PREFIX = "vendor"

#: What is copied: (npm package, glob inside the package, folder under vendor/).
#: MathJax's TeX bundle (base, AMS, newcommand, require, autoload), for maths that
#: appears after the book was built (the pages' own is typeset then, by npm's
#: mathjax-full, the same release, in Node); the other TeX extensions are copied
#: too, so that one a page asks for (autoload, ``\\require``) comes from the site,
#: never a CDN. Its CHTML output needs only the woff-v2 fonts. The HTML
#: manager's Font Awesome fonts are loaded from next to embed-amd.js (Chromium,
#: Firefox and Safari all take woff2; woff is the fallback).
ASSETS = [
    ("mathjax", "es5/tex-chtml.js", "mathjax"),
    ("mathjax", "es5/input/tex/extensions/*.js", "mathjax/input/tex/extensions"),
    ("mathjax", "es5/output/chtml/fonts/woff-v2/*.woff", "mathjax/output/chtml/fonts/woff-v2"),
    ("mathjax", "LICENSE", "mathjax"),
    ("requirejs", "require.js", "requirejs"),
    ("@jupyter-widgets/html-manager", "dist/embed-amd.js", "jupyter-widgets/html-manager"),
    ("@jupyter-widgets/html-manager", "dist/*.woff2", "jupyter-widgets/html-manager"),
    ("@jupyter-widgets/html-manager", "dist/*.woff", "jupyter-widgets/html-manager"),
    ("@jupyter-widgets/html-manager", "dist/embed.js.LICENSE.txt", "jupyter-widgets/html-manager"),
    # Thebe's bundle and its chunks (no source maps: they are 3/4 of the package and only help debugging)
    ("thebe", "lib/*.js", "thebe"),
    ("thebe", "lib/*.css", "thebe"),
    ("thebe", "lib/*.LICENSE.txt", "thebe"),
    # Live Code renders Markdown outputs with it (Thebe's renderer has no Markdown parser)
    ("marked", "lib/marked.umd.js", "marked"),
    ("marked", "LICENSE.md", "marked"),
]

#: Where Thebe's bundle is served (``THEBE_JS_URL`` of sphinx-thebe points here), its stylesheet, and the
#: require.js that Thebe's widget manager is given instead of cdnjs's.
THEBE_JS = f"{PREFIX}/thebe/index.js"
THEBE_CSS = f"{PREFIX}/thebe/thebe.css"
REQUIREJS = f"{PREFIX}/requirejs/require.js"
#: The Markdown parser that Live Code gives Thebe's output renderer (which has none) for Markdown outputs.
MARKED = f"{PREFIX}/marked/marked.umd.js"

#: Widget pages: the state and view MIME types myst-nb writes, and the scripts that render them.
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_SCRIPTS = ("/require.js", "/embed-amd.js")

#: The live figures' script and stylesheet: package resources of probdr_lite, copied to vendor/probdr-live/.
LIVE_DIR = f"{PREFIX}/probdr-live"
LIVE_MARKER = 'data-probdr-live="1"'
#: Where the chunks of live figures are written, one folder per page and figure, one file per setting.
LIVE_DATA = "live-data"

#: The site's stylesheet and script (tools/site/), copied to vendor/probdr-site/ and loaded on every page.
SITE_SOURCE = ROOT / "tools" / "site"
SITE_DIR = f"{PREFIX}/probdr-site"
SITE_FILES = ("probdr-site.css", "probdr-site.js", "probdr-thebe.js")
#: Live Code's launch (tools/site/probdr-thebe.js), loaded on the first click of "Live Code" only.
THEBE_LAUNCHER = f"{SITE_DIR}/probdr-thebe.js"

#: The smallest height, in CSS pixels, of a static figure's tick labels on the page (the figure is not shown
#: narrower than that allows; it scrolls sideways instead).
MIN_TICK_PX = 9.0

#: Font Awesome's script in pydata-sphinx-theme's templates: the theme's stylesheet draws the same icons from
#: Font Awesome's web fonts (v4 names such as ``fa fa-play`` included), so the 1.5 MB script is not needed.
FONTAWESOME_JS = re.compile(r'\s*<script\b[^>]*src="[^"]*_static/scripts/fontawesome\.js[^"]*"[^>]*>\s*</script>')
FONTAWESOME_FILES = ("_static/scripts/fontawesome.js", "_static/scripts/fontawesome.js.map",
                     "_static/scripts/fontawesome.js.LICENSE.txt")

#: Markup that the theme and extensions write and that fails axe-core's WCAG 2.2 A/AA rules, rewritten on every page
#: at the end of the build: (pattern, replacement, why). tests/book/test_access.py runs axe-core on every page.
MARKUP_FIXES = [
    # pydata-sphinx-theme's search field shows "Search Ctrl+K" but is named "Search" (label-content-name-mismatch:
    # a speech-input user saying what they see would not reach it); without the aria-label its name is its text.
    (re.compile(r'(<button class="btn search-button-field search-button__button[^"]*" title="[^"]*") aria-label="[^"]*"'),
     r"\1", "the search field's name is its visible text"),
    # myst-nb names every hide-input <summary> "Toggle hidden content" over its visible "Show code cell content"
    # (label-content-name-mismatch); its name is then the visible prompt ("Show"/"Hide code cell content").
    (re.compile(r'<summary aria-label="Toggle hidden content">'), "<summary>", "a summary is named by what it shows"),
    # docutils marks each citation role="doc-biblioentry", deprecated in DPUB-ARIA 1.1 (aria-deprecated-role), inside
    # a role="list" that must then hold list items (aria-required-children): each entry is a list item.
    (re.compile(r'role="doc-biblioentry"'), 'role="listitem"', "citations are the items of their list"),
    # the theme folds a chapter's own pages (chapter 7's record) under a <summary> that holds only a chevron icon
    # (summary-name, serious): it is named by what it does.
    (re.compile(r'<summary><span class="toctree-toggle" role="presentation">'),
     '<summary aria-label="Show or hide this chapter\'s pages"><span class="toctree-toggle" role="presentation">',
     "a table of contents' fold is named"),
]
#: matplotlib's scrub figures (Animation.to_jshtml): the frame slider has no name (axe's "label", critical).
ANIM_SLIDER = re.compile(r'(<input id="_anim_slider[0-9a-f]+" type="range" class="anim-slider")')



def copy_assets(outdir: Path, node_modules: Path = NODE_MODULES) -> list[Path]:
    """Copy the files in ``ASSETS`` into ``outdir/vendor``; return the paths written.

    Writes ``vendor/PACKAGES.txt`` with each package's version and licence.
    Raises ``ExtensionError`` when a package or file is missing (run ``npm ci``).
    """
    target = outdir / PREFIX
    if target.exists():
        shutil.rmtree(target)
    written, notes = [], []
    for package, pattern, dest in ASSETS:
        pkg_dir = node_modules / package
        meta = pkg_dir / "package.json"
        if not meta.is_file():
            raise ExtensionError(
                f"{meta} is missing: the book serves {package} itself; run `npm ci` (or `make install`)"
            )
        files = sorted(pkg_dir.glob(pattern))
        if not files:
            raise ExtensionError(f"{package} has no file matching {pattern!r}; is package-lock.json current?")
        for src in files:
            dst = target / dest / src.name
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
            written.append(dst)
        info = json.loads(meta.read_text(encoding="utf-8"))
        note = f"{info['name']} {info['version']} ({info.get('license', 'see package')})"
        if note not in notes:
            notes.append(note)
    from probdr_lite.presentation.live import ASSET_FILES, asset_text

    live = outdir / LIVE_DIR
    live.mkdir(parents=True, exist_ok=True)
    for name in ASSET_FILES:
        (live / name).write_text(asset_text(name), encoding="utf-8")
        written.append(live / name)
    site = outdir / SITE_DIR
    site.mkdir(parents=True, exist_ok=True)
    for name in SITE_FILES:
        shutil.copyfile(SITE_SOURCE / name, site / name)
        written.append(site / name)
    (target / "PACKAGES.txt").write_text(
        "Third-party files served by this site, copied from npm at build time (see package-lock.json):\n"
        + "".join(f"- {n}\n" for n in notes),
        encoding="utf-8",
    )
    return written


def _local(filename: str) -> str | None:
    """``_static/vendor/x`` -> ``vendor/x``; anything else -> None."""
    head = f"_static/{PREFIX}/"
    return filename[len("_static/"):] if filename.startswith(head) else None


def _builder_inited(app: Sphinx) -> None:
    if app.builder.format != "html":
        return
    shutil.rmtree(Path(app.outdir) / LIVE_DATA, ignore_errors=True)
    written = copy_assets(Path(app.outdir))
    logger.info(f"[local assets] {len(written)} files copied into {PREFIX}/")


#: Inline script for pages with widgets, placed between require.js and embed-amd.js.
#: 1. The HTML manager's bundles are named AMD modules; webpack takes the folder of their
#:    require.js URL (by default the page's folder + the module name) as the base of the
#:    Font Awesome fonts its CSS loads. ``require.config`` maps those names to the folder
#:    the files are really in (``__jupyter_widgets_assets_path__`` is set too, but the
#:    bundle reads it only after its CSS is in place).
#: 2. ipywidgets' base package typesets widget labels with MathJax 2's ``MathJax.Hub.Queue``
#:    whenever ``window.MathJax`` exists; Sphinx loads MathJax 3, which has no ``Hub``, so
#:    every widget view threw "Cannot read properties of undefined (reading 'Queue')".
#:    A small ``Hub.Queue`` that forwards to MathJax 3's ``typesetPromise`` fixes it
#:    (deferred MathJax has run by DOMContentLoaded; widgets render on window load).
WIDGET_SETUP_JS = """(function () {
  var base = new URL("%s", document.baseURI).href;
  window.__jupyter_widgets_assets_path__ = base;
  if (window.require && window.require.config) {
    window.require.config({paths: {
      "@jupyter-widgets/html-manager": base + "embed-amd",
      "@jupyter-widgets/html-manager/dist": base.replace(/\\/$/, "")
    }});
  }
  document.addEventListener("DOMContentLoaded", function () {
    var MJ = window.MathJax;
    if (!MJ || !MJ.version || MJ.Hub || !MJ.startup) return;
    MJ.Hub = {Queue: function () {
      Array.prototype.forEach.call(arguments, function (job) {
        if (Array.isArray(job) && job[0] === "Typeset" && job[2]) {
          MJ.startup.promise.then(function () { return MJ.typesetPromise([job[2]]); })
            .catch(function (err) { console.warn("MathJax could not typeset a widget label", err); });
        }
      });
    }};
  });
})();"""

#: Stylesheets that notebook outputs link from a CDN, and why dropping the link is safe.
#: matplotlib's ``Animation.to_jshtml`` (the scrub figures) links Font Awesome 4.4 for its
#: buttons' ``fa fa-*`` icons; the book theme already ships Font Awesome 6, whose
#: script on every page draws those icons (v4 names included), so the link is dropped.
CDN_LINKS_DROPPED = [
    re.compile(r'<link\b[^>]*\bhref="https?://maxcdn\.bootstrapcdn\.com/font-awesome/[^"]*"[^>]*>\s*'),
]


#: Inline script on every page, after sphinx-thebe's: "Live Code" is this book's own launch of the Thebe 0.9 the
#: site serves (sphinx-thebe 0.3's launch code was written for Thebe 0.8). ``%s`` is a JSON object of the site's
#: own URLs, relative to the page (the launch script, Thebe's bundle and stylesheet, require.js, marked, MathJax),
#: and the name of the page's notebook (the kernel session's path). It replaces sphinx-thebe's ``initThebe``: the
#: first click loads ``probdr-thebe.js`` (``tools/site/``, copied to ``vendor/probdr-site/``; its comments say
#: what it does), every click calls ``probdrLiveCode.launch``. Nothing is loaded before the click; a launch script
#: that does not load is reported in the button, and the next click tries again.
THEBE_SETUP_JS = """(function () {
  var urls = %s, done = false;
  var say = function (text) {
    document.querySelectorAll(".thebe-launch-button").forEach(function (b) {
      b.textContent = text; b.setAttribute("role", "status"); b.classList.add("probdr-live-button");
    });
  };
  function setup() {
    if (done || typeof window.initThebe !== "function") return;
    done = true;
    var loading = false;
    window.initThebe = function () {
      if (window.probdrLiveCode) { window.probdrLiveCode.launch(urls); return; }
      if (loading) return;
      loading = true;
      say("Loading Live Code…");
      var script = document.createElement("script");
      script.src = new URL(urls.launcher, document.baseURI).href;
      script.addEventListener("load", function () { loading = false; window.probdrLiveCode.launch(urls); });
      script.addEventListener("error", function () {
        loading = false; script.remove();
        say("Could not load Live Code from this site. Click Live Code to try again.");
      });
      document.head.appendChild(script);
    };
  }
  // sphinx-thebe.js has run by the window's load or, where the page fetches its scripts once it has painted, by the
  // event that says they have all run (SCRIPTS_READY_EVENT of tools/site_speed.py)
  window.addEventListener("load", setup);
  document.addEventListener("%s", setup);
})();"""


def _tool(name: str):
    """``tools/NAME.py``, a sibling of this file, as a module, by the loader the tools and tests share
    (``tools/tool_loader.py``): Sphinx puts ``tools/`` on ``sys.path`` for this extension, and the tests register
    the loader before they load it."""
    import tool_loader

    return tool_loader.tool(name)


def _launch_to_reader_notebooks(app: Sphinx, pagename: str, context) -> None:
    """Point this page's Binder and Colab buttons at the chapter's reader notebooks (``notebooks/...``).

    sphinx-book-theme builds them from the page's own path (``book/NAME.ipynb``), written for the site; the
    reader notebooks (``launch_buttons.reader_notebooks`` in ``_config.yml``, see ``tools/notebooks.py``)
    are the ones written for launching. A page without a reader notebook keeps no Binder or Colab button.
    """
    notebooks = _tool("notebooks")

    buttons = context.get("header_buttons")
    if not isinstance(buttons, list):
        return
    name = Path(pagename).name
    has_reader = name in {n for n, _ in notebooks.reader_chapters(ROOT)}
    urls = notebooks.launch_urls(name, ROOT / "_config.yml") if has_reader else {}
    for group in buttons:
        if not (isinstance(group, dict) and group.get("label") == "launch-buttons"):
            continue
        kept = []
        for button in group.get("buttons", []):
            kind = {"Binder": "binder", "Colab": "colab"}.get(button.get("text"))
            if kind is None:
                kept.append(button)
            elif kind in urls:
                kept.append({**button, "url": urls[kind]})
                app.__dict__.setdefault("_reader_launch_urls", {})[(pagename, kind)] = urls[kind]
        group["buttons"] = kept


def _rewrite(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """Point this page's vendor scripts and stylesheets at the site's own vendor/ folder.

    Also drops exact duplicate scripts (sphinx-thebe registers its inline
    ``const THEBE_JS_URL`` twice, a SyntaxError on every page), sets up pages
    with widgets (``WIDGET_SETUP_JS``) and removes the CDN links in
    ``CDN_LINKS_DROPPED`` from the page body.
    """
    from sphinx.builders.html._assets import _CascadingStyleSheet, _JavaScript

    used = app.__dict__.setdefault("_local_assets_used", set())
    _launch_to_reader_notebooks(app, pagename, context)
    # A notebook whose widget outputs are all removed (remove-output: the slider panels are for a kernel)
    # still carries its saved widget state; without a view on the page it and the manager are dead weight.
    body_html = context.get("body")
    views = not isinstance(body_html, str) or WIDGET_VIEW in body_html
    for key, cls in (("script_files", _JavaScript), ("css_files", _CascadingStyleSheet)):
        files = context.get(key)
        if not isinstance(files, list):
            continue
        seen, kept = set(), []
        for asset in files:
            name = getattr(asset, "filename", None)
            if not views and (getattr(asset, "attributes", {}).get("type") == WIDGET_STATE
                              or str(name or "").endswith(WIDGET_SCRIPTS)):
                continue
            new = _local(str(name)) if name else None
            if new is not None:
                asset = cls(new, priority=asset.priority, **asset.attributes)
                used.add(new)
            if key == "script_files" and new is not None and new == str(app.config.mathjax_path):
                continue  # the maths is typeset when the book is built (site_speed); MathJax loads only when needed
            if key == "script_files" and name and pagename != "search" \
                    and not str(name).endswith("documentation_options.js") \
                    and not {"async", "defer"} & set(getattr(asset, "attributes", {})):
                # nothing blocks the first paint: the scripts run in order once the page is parsed, as before but
                # after it; documentation_options.js is written into the page at the end of the build instead. (The
                # search page keeps them as they were: its search scripts, which the theme writes after them and
                # which need them, block.)
                asset = cls(asset.filename, priority=asset.priority, **{**asset.attributes, "defer": "defer"})
            # an inline script is registered with filename None or "" depending on the route
            ident = (str(getattr(asset, "filename", asset) or ""),
                     repr(sorted(getattr(asset, "attributes", {}).items())))
            if ident in seen:
                continue
            seen.add(ident)
            if new is not None and new.endswith("/embed-amd.js"):
                folder = context["pathto"](posixpath.dirname(new) + "/", resource=True)
                kept.append(_JavaScript("", priority=asset.priority, body=WIDGET_SETUP_JS % folder))
            body = getattr(asset, "attributes", {}).get("body", "") if key == "script_files" else ""
            if "THEBE_JS_URL" in body:
                local = context["pathto"](THEBE_JS, resource=True)
                body = re.sub(r'const THEBE_JS_URL = "[^"]*"', f'const THEBE_JS_URL = "{local}"', body)
                asset = cls(asset.filename, priority=asset.priority, **{**asset.attributes, "body": body})
                used.add(THEBE_JS)
            kept.append(asset)
            if getattr(asset, "filename", None) == "sphinx-thebe.js" or str(getattr(asset, "filename", "")).endswith(
                    "/sphinx-thebe.js"):
                urls = {"launcher": THEBE_LAUNCHER, "thebe": THEBE_JS, "css": THEBE_CSS, "requirejs": REQUIREJS,
                        "marked": MARKED, "mathjax": str(app.config.mathjax_path)}
                setup = {k: context["pathto"](v, resource=True) for k, v in urls.items()}
                setup["notebook"] = f"{Path(pagename).name}.ipynb"  # the chapter's own kernel session
                kept.append(_JavaScript("", priority=asset.priority, body=THEBE_SETUP_JS % (
                    json.dumps(setup), _tool("site_speed").SCRIPTS_READY_EVENT)))
                used.update(urls.values())
        files[:] = kept
    if isinstance(body_html, str) and LIVE_MARKER in body_html:
        # probdr-site.js loads live.js and live.css once the page has painted (see _site_page)
        used.update(f"{LIVE_DIR}/{name}" for name in ("live.js", "live.css"))
    if isinstance(context.get("body"), str):
        for pattern in CDN_LINKS_DROPPED:
            context["body"] = pattern.sub("", context["body"])
        # Thebe would fetch MathJax 2 from cdnjs to typeset LaTeX outputs; the site has only MathJax 3, so
        # an empty URL turns that renderer off (text/latex outputs show as text) instead of reaching a CDN.
        # The maths of Markdown outputs is typeset by probdr-thebe.js with the site's MathJax 3.
        context["body"] = context["body"].replace(
            '<script type="text/x-thebe-config">\n    {\n        requestKernel: true,',
            '<script type="text/x-thebe-config">\n    {\n        requestKernel: true,\n        mathjaxUrl: "",')


# ---------------------------------------------------------------------------------------------------------------------
# The site's own stylesheet and script, live figures' chunks, static figures, icons and the search index


def _site_page(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """Every page: the site's stylesheet and script; the body's live-figure chunks and static figures."""
    from sphinx.builders.html._assets import _CascadingStyleSheet, _JavaScript

    used = app.__dict__.setdefault("_local_assets_used", set())
    css, scripts = context.get("css_files"), context.get("script_files")
    if isinstance(css, list):
        css.append(_CascadingStyleSheet(f"{SITE_DIR}/probdr-site.css", priority=900))
        used.add(f"{SITE_DIR}/probdr-site.css")
    if isinstance(scripts, list):
        # where probdr-site.js finds what it loads only when it is needed: MathJax (maths that appears after the
        # page is built: search summaries, Live Code's outputs), and the live figures' script and stylesheet
        mathjax = str(app.config.mathjax_path)
        lazy = {"data-mathjax": mathjax, "data-live-js": f"{LIVE_DIR}/live.js", "data-live-css": f"{LIVE_DIR}/live.css"}
        used.update(lazy.values())
        attrs = {k: context["pathto"](v, resource=True) for k, v in lazy.items()}
        scripts.append(_JavaScript(f"{SITE_DIR}/probdr-site.js", priority=900, defer="defer", **attrs))
        used.add(f"{SITE_DIR}/probdr-site.js")
        # the search page typesets the maths of its result summaries (taken from the pages' own text) with the
        # MathJax that probdr-site.js loads once a summary holds some, configured as the pages' own was
        if pagename == "search" and app.config.mathjax3_config and not any(
                "window.MathJax" in str(getattr(a, "attributes", {}).get("body", "")) for a in scripts):
            scripts.append(_JavaScript("", priority=500, body="window.MathJax = "
                                       + json.dumps(app.config.mathjax3_config)))
    if isinstance(context.get("body"), str):
        context["body"] = _externalise_chunks(app, pagename, context["body"], context["pathto"])
        context["body"] = _externalise_specs(app, pagename, context["body"], context["pathto"])
        context["body"] = _static_figures(app, context["body"], context["pathto"])


_CHUNKS = re.compile(r'<script type="application/json" class="probdr-live-chunks">(.*?)</script>', re.S)
_LIVE_DIV = re.compile(r'<div class="probdr-live" id="([^"]+)" data-probdr-live="1">')


def _enclosing_live_figure(body: str, pos: int, pagename: str, what: str) -> str:
    """The id of the live figure whose markup comes last before ``pos`` (the one ``what`` belongs to)."""
    ids = _LIVE_DIV.findall(body, 0, pos)
    if not ids:
        raise ExtensionError(f"{pagename}: {what} outside a live figure")
    return ids[-1]


def _externalise_chunks(app: Sphinx, pagename: str, body: str, pathto) -> str:
    """Move each live figure's embedded chunks into ``live-data/<page>/<figure id>/<cell>.js``, one file per setting.

    Each file calls ``probdrLive.chunk(id, cell, payload)``; a <script> loads it, which works from ``file://`` as
    well as over HTTP. In the page the chunks are replaced by where they are and how large each file is.
    """
    out, pos = [], 0
    for m in _CHUNKS.finditer(body):
        fid = _enclosing_live_figure(body, m.start(), pagename, "live-figure chunks")
        chunks = json.loads(m.group(1))
        folder = f"{LIVE_DATA}/{pagename}/{fid}"
        target = Path(app.outdir) / folder
        target.mkdir(parents=True, exist_ok=True)
        sizes = []
        for k, chunk in enumerate(chunks):
            text = f"probdrLive.chunk({json.dumps(fid)},{k},{json.dumps(chunk, separators=(',', ':'))});\n"
            (target / f"{k}.js").write_text(text, encoding="utf-8")
            sizes.append(len(text.encode("utf-8")))
        info = json.dumps({"base": pathto(folder + "/", resource=True), "count": len(chunks), "bytes": sizes},
                          separators=(",", ":")).replace("</", "<\\/")
        out += [body[pos:m.start()], f'<script type="application/json" class="probdr-live-chunk-files">{info}</script>']
        pos = m.end()
    return "".join(out) + body[pos:] if out else body


_SPEC = re.compile(r'<script type="application/json" class="probdr-live-spec">(.*?)</script>', re.S)


def _externalise_specs(app: Sphinx, pagename: str, body: str, pathto) -> str:
    """Move each live figure's spec (its controls, panels and precomputed data) into ``live-data/<page>/<figure
    id>/spec.js``, which live.js loads when the reader comes near the figure: the page itself carries only its text.

    The file calls ``probdrLive.spec(id, spec)`` (a <script>, so it works from ``file://`` too); in the page the spec
    is replaced by where it is and how large. At the end of the build the caption's maths is typeset into the file
    (``spec["captionHtml"]``, :func:`site_speed.typeset_site`)."""
    speed = _tool("site_speed")
    out, pos = [], 0
    for m in _SPEC.finditer(body):
        fid = _enclosing_live_figure(body, m.start(), pagename, "a live-figure spec")
        folder = f"{LIVE_DATA}/{pagename}/{fid}"
        target = Path(app.outdir) / folder
        target.mkdir(parents=True, exist_ok=True)
        text = speed.spec_text(fid, json.loads(m.group(1)))
        (target / "spec.js").write_text(text, encoding="utf-8")
        info = json.dumps({"src": pathto(folder + "/spec.js", resource=True), "bytes": len(text.encode("utf-8"))},
                          separators=(",", ":")).replace("</", "<\\/")
        out += [body[pos:m.start()], f'<script type="application/json" class="probdr-live-spec-file">{info}</script>']
        pos = m.end()
    return "".join(out) + body[pos:] if out else body


def png_text(data) -> tuple[dict, tuple[int, int]]:
    """The text chunks (tEXt, zTXt, iTXt) and the size of a PNG, from its path or bytes."""
    from io import BytesIO

    from PIL import Image

    with Image.open(BytesIO(data) if isinstance(data, bytes) else data) as im:
        return dict(getattr(im, "text", {}) or {}), im.size


_IMG = re.compile(r'<img alt="([^"]*)" src="([^"]*_images/([^"/]+\.png))" />')
_ANIM_IMG = re.compile(r'<img id="(_anim_img[0-9a-f]+)">')
_ANIM_FRAME = re.compile(r'frames\[0\] = "data:image/png;base64,((?:[A-Za-z0-9+/=]|\\\n)+)"')
_ANIM_SCRIPT = re.compile(r'<script language="javascript">(?:(?!</script>).)*?frames\[0\] = "data:image/png;base64,.*?</script>',
                          re.S)


def _static_figures(app: Sphinx, body: str, pathto=None) -> str:
    """Alt text, a full-size link, a smallest readable width and sources sized for the screen for every figure of a
    notebook output; the frames of the scrub figures as files.

    The alt text and the height of the smallest tick label (``probdr:tick-px``) are read from the PNG, where
    ``probdr_lite.presentation.style.describe`` put them (and the smallest text's, ``probdr:text-px``, for phones).
    The image is never shown so small that its tick labels fall below ``MIN_TICK_PX`` pixels (nor wider than it is):
    where the column is narrower, the figure scrolls sideways and ``probdr-site.js`` shows the cue below it. A figure
    without a description keeps Sphinx's alt (its path), which the book's tests reject.

    Sources (``tools/site_speed.py``, :func:`site_speed.figure_sources`): the PNG stays the ``src`` (the link
    target, what is printed); ``srcset`` offers a lossless WebP of it and, for a figure wider than the column, a WebP
    at the column's width, and ``sizes`` says how wide the page shows it, so a browser fetches the smallest that is
    sharp on its screen. Its width and height are given, so the page does not jump when it arrives. The first figure
    of a page loads with the page when little text comes before it (on a phone's first screen); every other one
    when the reader scrolls near it (``loading="lazy"``).
    """
    import time

    speed = _tool("site_speed")
    started = time.perf_counter()
    try:
        return _figures(app, body, pathto, speed)
    finally:
        app.__dict__["_figure_seconds"] = app.__dict__.get("_figure_seconds", 0.0) + time.perf_counter() - started


def _figures(app: Sphinx, body: str, pathto, speed) -> str:
    import base64
    import html as html_lib

    images = {dest: uri for uri, dest in getattr(app.builder, "images", {}).items()}
    outimages = Path(app.outdir) / "_images"
    first = [True]

    def figure(m):
        alt, src, name = m.group(1), m.group(2), m.group(3)
        uri = images.get(name)
        path = Path(uri) if uri and Path(uri).is_absolute() else Path(app.srcdir) / (uri or "")
        if not uri or not path.is_file():
            return m.group(0)
        text, (w, h) = png_text(path)
        alt = text.get("Description", alt)

        def px(key):
            try:
                v = float(text.get(key, "nan"))
            except ValueError:
                return None
            return v if v == v and v > 0 else None

        tick, smallest = px("probdr:tick-px"), px("probdr:text-px")
        # on a desktop the tick labels decide (a figure without them, an image grid, has no smallest width); on a
        # phone every text does (probdr-site.css picks one by the screen's width)
        narrowest = min(w, round(w * MIN_TICK_PX / tick)) if tick else 0
        phone = max(narrowest, min(w, round(w * MIN_TICK_PX / smallest))) if smallest else narrowest
        extra = f' data-tick-px="{tick:.2f}"' if tick else ""
        folder = src[: -len(name)]
        sources = speed.figure_sources(path, outimages, name)
        srcset = ", ".join(f"{folder}{file} {width}w" for file, width in sources)
        sizes = speed.sizes_attr(w, narrowest, phone)
        eager = first[0] and speed.text_before(body[:m.start()]) < speed.FIRST_SCREEN_CHARS
        first[0] = False
        load = 'fetchpriority="high"' if eager else 'loading="lazy"'
        return (f'<figure class="probdr-figure"><div class="probdr-figure-scroll">'
                f'<a class="probdr-figure-link" href="{src}" title="Open the figure at full size ({w} × {h} pixels)">'
                f'<img alt="{html_lib.escape(alt, quote=True)}" src="{src}" srcset="{srcset}" sizes="{sizes}" '
                f'width="{w}" height="{h}"{extra} {load} decoding="async" '
                f'style="--probdr-min: {narrowest}px; --probdr-min-phone: {phone}px" />'
                '</a></div>'
                # the cue's words are the stylesheet's (probdr-site.css), shown only while the figure scrolls: the
                # page's text, as a reader mode or a text dump reads it, holds no sentence about the page's width
                '<figcaption class="probdr-figure-cue"></figcaption></figure>')

    body = _IMG.sub(figure, body)

    def animation(m):
        frame = _ANIM_FRAME.search(body, m.end())
        if not frame:
            return m.group(0)
        text, (w, h) = png_text(base64.b64decode(frame.group(1).replace("\\\n", "")))
        alt = text.get("Description")
        attrs = f' alt="{html_lib.escape(alt, quote=True)}"' if alt else ""
        # its frames come as files when the figure is near (site_speed.externalise_frames): sized, so nothing jumps
        return f'<img id="{m.group(1)}"{attrs} width="{w}" height="{h}" loading="lazy" decoding="async">'

    body = _ANIM_IMG.sub(animation, body)
    if pathto is None:
        return body

    def frames(m):
        script, urls, _ = speed.externalise_frames(
            m.group(0), outimages, lambda file: pathto(f"_images/{file}", resource=True))
        ids = re.search(r'var img_id = "(_anim_img[0-9a-f]+)"', script)
        if ids and urls:
            found[ids.group(1)] = urls
        return script

    found: dict = {}
    body = _ANIM_SCRIPT.sub(frames, body)
    for img_id, urls in found.items():  # probdr-site.js fetches the other frames once the first is in
        body = body.replace(f'<img id="{img_id}" ', f'<img id="{img_id}" data-probdr-frames="{" ".join(urls)}" ', 1)
    return body


#: TeX that section titles hold (Sphinx indexes a heading's maths as its TeX source), written as text.
_TEX_WORDS = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε", "eta": "η",
    "theta": "θ", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν", "pi": "π", "rho": "ρ", "sigma": "σ",
    "tau": "τ", "phi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Lambda": "Λ",
    "Pi": "Π", "Sigma": "Σ", "Phi": "Φ", "Omega": "Ω", "top": "ᵀ", "infty": "∞", "le": "≤", "leq": "≤",
    "ge": "≥", "geq": "≥", "approx": "≈", "neq": "≠", "times": "×", "cdot": "·", "to": "→", "max": "max",
    "min": "min", "log": "log", "exp": "exp",
}
_SUB = str.maketrans("0123456789+-=()aehijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ")
_SUP = str.maketrans("0123456789+-=()inT", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁱⁿᵀ")


def tex_to_text(text: str) -> str:
    """Section-title TeX as plain Unicode text: ``Sweeps of \\kappa and \\eta`` -> ``Sweeps of κ and η``."""
    text = re.sub(r"\\(?:mathrm|text|mathbf|operatorname|mathit)\{([^{}]*)\}", r"\1", text)
    text = re.sub(r"\\([A-Za-z]+)", lambda m: _TEX_WORDS.get(m.group(1), m.group(1)), text)

    def script(m, table, mark):
        body = m.group(1) if m.group(1) is not None else m.group(2)
        if body and all(ord(c) in table for c in body):
            return body.translate(table)
        return body if body in ("ᵀ",) else f"{mark}({body})" if len(body) > 1 else f"{mark}{body}"

    text = re.sub(r"_\{([^{}]*)\}|_([^\s{}])", lambda m: script(m, _SUB, "_"), text)
    text = re.sub(r"\^\{([^{}]*)\}|\^([^\s{}])", lambda m: script(m, _SUP, "^"), text)
    text = text.replace("\\,", " ").replace("\\ ", " ").replace("{", "").replace("}", "")
    return re.sub(r"\s+", " ", text.replace(" - ", " − ")).strip()


def fix_markup(html: str) -> str:
    """A page's HTML with :data:`MARKUP_FIXES` applied and every scrub figure's frame slider named."""
    for pattern, replacement, _why in MARKUP_FIXES:
        html = pattern.sub(replacement, html)
    return ANIM_SLIDER.sub(r'\1 aria-label="Frame of the animation"', html)


def _finish_site(app: Sphinx, exception) -> None:
    """After the build: every page made fast to open (``tools/site_speed.py``), Font Awesome's script dropped, the
    markup fixes applied, and the TeX taken out of the search index's titles.

    In order: the markup of each page; the icon fonts cut to the icons the pages and scripts name; the head of each
    page (nothing render-blocking it does not need); the maths of every page typeset in one run of MathJax in Node,
    its stylesheet added to the site's own. A TeX error, or TeX left untypeset in a page, fails the build."""
    if exception is not None or app.builder.format != "html":
        return
    import time

    speed = _tool("site_speed")
    started = time.perf_counter()
    out = Path(app.outdir)
    pages = [p for p in sorted(out.rglob("*.html")) if p.relative_to(out).parts[0] not in (PREFIX, "_static", LIVE_DATA)]
    for page in pages:
        text = page.read_text(encoding="utf-8")
        new = fix_markup(FONTAWESOME_JS.sub("", text))
        if new != text:
            page.write_text(new, encoding="utf-8")
    for name in FONTAWESOME_FILES:
        (out / name).unlink(missing_ok=True)
    try:
        icons = speed.subset_icons(out)
        options = out / "_static" / "documentation_options.js"
        doc_options = options.read_text(encoding="utf-8") if options.is_file() else None
        basic = speed.theme_css_imports_only_basic(out)
        for page in pages:
            text = page.read_text(encoding="utf-8")
            new = speed.rewrite_head(text, page.relative_to(out).as_posix() == "search.html", doc_options, basic)
            if new != text:
                page.write_text(new, encoding="utf-8")
        maths = speed.typeset_site(out, pages, LIVE_DATA)
        for page in pages:  # past the first screens, rendered as the reader comes near (probdr-site.css)
            text = page.read_text(encoding="utf-8")
            new = speed.mark_far_blocks(text)
            if new != text:
                page.write_text(new, encoding="utf-8")
    except speed.SiteError as exc:
        raise ExtensionError(str(exc)) from exc
    if maths["css"]:
        css = out / SITE_DIR / "probdr-site.css"
        with css.open("a", encoding="utf-8") as f:
            f.write("\n/* MathJax's stylesheet for its SVG output (the maths typeset when the book was built) */\n"
                    + re.sub(r"\s*\n\s*", " ", maths["css"]).strip() + "\n")
    logger.info(f"[local assets] {maths['formulas']} formulas typeset on {maths['pages']} pages; "
                f"{icons.get('glyphs', 0)} icons kept of Font Awesome's fonts; the end of the build took "
                f"{time.perf_counter() - started:.1f} s, the figures' sources "
                f"{app.__dict__.get('_figure_seconds', 0.0):.1f} s")
    index = out / "searchindex.js"
    if index.is_file():
        raw = index.read_text(encoding="utf-8")
        head, tail = "Search.setIndex(", ")"
        if raw.startswith(head) and raw.rstrip().endswith(tail):
            data = json.loads(raw[len(head):raw.rstrip().rindex(tail)])
            data["alltitles"] = {tex_to_text(k): v for k, v in data.get("alltitles", {}).items()}
            data["titles"] = [tex_to_text(t) for t in data.get("titles", [])]
            index.write_text(head + json.dumps(data, ensure_ascii=False) + tail, encoding="utf-8")


def _check(app: Sphinx, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    missing = sorted(u for u in app.__dict__.get("_local_assets_used", ()) if not (Path(app.outdir) / u).is_file())
    if missing:
        raise ExtensionError(
            "pages refer to vendor files that were not copied: " + ", ".join(missing)
            + " (compare mathjax_path / nb_ipywidgets_js in _config.yml with ASSETS in tools/sphinx_local_assets.py)"
        )


def setup(app: Sphinx) -> dict:
    app.connect("builder-inited", _builder_inited)
    # after sphinx.ext.mathjax and myst-nb have added their scripts (both at the default 500)
    app.connect("html-page-context", _rewrite, priority=900)
    app.connect("html-page-context", _site_page, priority=901)
    app.connect("build-finished", _finish_site, priority=400)
    app.connect("build-finished", _check)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
