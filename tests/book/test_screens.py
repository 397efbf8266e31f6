"""The site on every screen: a phone (390 x 844) and a desktop window (1280 x 900), light and dark, and paper.

In Chromium with the network cut off, as in test_browser.py:

- live figures: nothing in a figure is wider than its container or scrolls sideways, every readout value is
  visible, panels stack on a phone, and every text the figure draws on its canvases stays inside its canvas, is
  at least 9 pixels high and overlaps no other (live.js records each text with its measured box);
- contrast: every text of a live figure (labels, values, readouts, colour key, caption), the cue under a wide
  static figure, and what the canvases draw, against what is actually behind it, at least 4.5:1 in both modes;
- static figures: each has a real alt text (a sentence, not a path), opens at full size, and at desktop width
  its tick labels are at least 9 pixels high; on a phone a figure that does not fit scrolls inside its own box
  with a visible cue, and no page scrolls sideways;
- weight: what each page loads until its figures are drawn (printed, and written to _build/site-weight.json),
  without Font Awesome's script, whose icons the theme's stylesheet draws from fonts cut to the site's icons
  (checked: every icon has a glyph);
- what loads when (issue 44): opening a page on a phone, nothing but what its first screen needs: no MathJax (the
  maths was typeset when the book was built), no Thebe, require.js or widget manager (Live Code's, on its click),
  no search index (the search page's), no whole icon font, no live figure's script before the page has painted
  and no figure's data before the reader comes near it;
- print: a printed chapter has no controls, says each live figure's settings, draws its canvases at three device
  pixels per pixel and wraps its code (Chromium's page.pdf writes _build/print/transformer_block.pdf).
"""

from __future__ import annotations

import json
import re
from urllib.parse import urlsplit

import pytest

from tests.chromium import Requests, wait_loaded, wait_stable, wait_until

from .conftest import ROOT, toc_pages
from .screens import (
    CONTRAST_JS,
    LAYOUT_JS,
    LAYOUT_SIZE_JS,
    LIVE_DRAWN_JS,
    LOADED_JS,
    LOCAL_HOSTS,
    MIN_CONTRAST,
    MIN_TEXT_PX,
    OVERFLOW_JS,
    PAGE_TIMEOUT_MS,
    SCREENS,
    THEMES,
    contrast,
    emulate_print,
    open_page,
    reveal_live,
    screen,
    text_problems,
)
from .test_browser import browser, server  # noqa: F401  (fixtures)
from .test_live_figures import LIVE

pytestmark = [pytest.mark.book, pytest.mark.browser]

PAGES = toc_pages()
IDS = [d for d, _ in PAGES]
WEIGHTS = ROOT / "_build" / "site-weight.json"
#: What a first visit to any page may load until its figures are drawn (bytes, as received): the theme, the page with
#: its typeset maths, the figures in view and each live figure's data (chapter 6's live-figure page has the issue's
#: 3 MB, test_live_figures.py).
FIRST_LOAD_BUDGET = 3_300_000
PRINTS = ROOT / "_build" / "print"


@pytest.fixture(scope="module")
def live_page(browser, server):  # noqa: F811
    """live_page(name, screen, theme) -> the page of a live figure, open in that screen and mode (cached)."""
    opened, stack = {}, []

    def get(name, screen_name, theme="light"):
        key = (LIVE[name], screen_name, theme)
        if key not in opened:
            cm = screen(browser, screen_name, theme)
            ctx = cm.__enter__()
            stack.append(cm)
            opened[key] = open_page(ctx, f"{server}/{LIVE[name]}")
        page = opened[key]
        page.locator(f"#probdr-live-{name}").scroll_into_view_if_needed()
        # the figures now in view load: read the layout once they have and it holds
        wait_stable(page, LAYOUT_SIZE_JS, f"{LIVE[name]} to settle at its live figure {name}",
                    ready=f"() => ({LOADED_JS})() && ({LIVE_DRAWN_JS})()", timeout_s=PAGE_TIMEOUT_MS / 1000)
        return page

    yield get
    for cm in stack:
        cm.__exit__(None, None, None)


# ---------------------------------------------------------------------------------------------------------------------
# Live figures on a phone and on a desktop


@pytest.mark.parametrize("screen_name", list(SCREENS))
@pytest.mark.parametrize("name", list(LIVE))
def test_live_figure_fits_its_screen(live_page, name, screen_name):
    page = live_page(name, screen_name)
    fid = f"probdr-live-{name}"
    seen = page.evaluate(OVERFLOW_JS, fid)
    assert not seen["bad"], f"{name} at {screen_name}: elements wider than the figure or scrolling: {seen['bad'][:5]}"
    assert not seen["hidden"], f"{name} at {screen_name}: readout values not fully visible: {seen['hidden']}"
    panels = page.evaluate(LAYOUT_JS, fid)
    problems = text_problems(panels)
    assert not problems, f"{name} at {screen_name}: " + "; ".join(problems[:6])
    stacked = page.evaluate("(id) => document.getElementById(id).classList.contains('probdr-live-stacked')", fid)
    if screen_name == "phone" and len(panels) > 1:
        assert stacked and all(p["cssWidth"] >= 0.9 * seen["width"] for p in panels), (name, panels[0]["cssWidth"])
    if screen_name == "desktop":
        assert not stacked, f"{name}: panels stacked on a desktop"
    assert page.evaluate("() => document.scrollingElement.scrollWidth <= innerWidth + 1"), \
        f"{LIVE[name]} scrolls sideways at {screen_name}"


# ---------------------------------------------------------------------------------------------------------------------
# Contrast in both colour modes


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("name", list(LIVE))
def test_live_figure_text_contrast(live_page, name, theme, capsys):
    page = live_page(name, "desktop", theme)
    assert page.evaluate("() => document.documentElement.dataset.theme") == theme
    seen = page.evaluate(CONTRAST_JS, [f"#probdr-live-{name}", MIN_CONTRAST])
    assert seen["checked"] >= 5, seen
    assert not seen["low"], f"{name}, {theme} mode: text below {MIN_CONTRAST}:1: {seen['low'][:5]}"
    worst_canvas = min(contrast(t["colour"], t["background"]) for p in page.evaluate(LAYOUT_JS, f"probdr-live-{name}")
                       for t in p["texts"])
    assert worst_canvas >= MIN_CONTRAST, f"{name}: canvas text at {worst_canvas:.2f}:1"
    lowest = seen["lowest"]
    record = ROOT / "_build" / "contrast.json"
    data = json.loads(record.read_text()) if record.exists() else {}
    data[f"{name}/{theme}"] = {"html_text_min": round(lowest, 2), "canvas_text_min": round(worst_canvas, 2)}
    record.write_text(json.dumps(data, indent=1, sort_keys=True))
    with capsys.disabled():
        print(f"\n{name}, {theme}: lowest contrast {lowest:.2f}:1 (page text), {worst_canvas:.2f}:1 (canvas text)")


# ---------------------------------------------------------------------------------------------------------------------
# Static figures

_STATIC_JS = """() => Array.from(document.querySelectorAll('article .cell_output img')).map((im) => {
  const link = im.closest('a'), fig = im.closest('figure.probdr-figure');
  const box = fig ? fig.querySelector('.probdr-figure-scroll') : null, cue = fig ? fig.querySelector('.probdr-figure-cue') : null;
  return {src: im.getAttribute('src') || '', id: im.id, alt: im.getAttribute('alt'),
          natural: Number(im.getAttribute('width')) || im.naturalWidth,
          shown: im.getBoundingClientRect().width, tick: im.dataset.tickPx ? Number(im.dataset.tickPx) : null,
          link: link ? link.getAttribute('href') : null, anim: !!im.closest('.animation'),
          scrolls: box ? box.scrollWidth > box.clientWidth + 1 : false,
          cue: cue ? cue.getBoundingClientRect().height > 0 && getComputedStyle(cue).display !== 'none' : false,
          fits: im.getBoundingClientRect().right <= (box || im.parentElement).getBoundingClientRect().right + 1};
})"""

_PATHLIKE = re.compile(r"(^|/)[\w.-]+\.(png|jpe?g|svg|gif)$|_images/", re.I)


def _static(browser, server, rel, screen_name):  # noqa: F811
    with screen(browser, screen_name) as ctx:
        page = open_page(ctx, f"{server}/{rel}", live=False)
        figures = page.evaluate(_STATIC_JS)
        sideways = page.evaluate("() => document.scrollingElement.scrollWidth - innerWidth")
        page.close()
    return figures, sideways


@pytest.mark.parametrize("doc, rel", PAGES, ids=IDS)
def test_static_figures_have_alt_text_full_size_and_readable_ticks(browser, server, doc, rel):  # noqa: F811
    figures, _ = _static(browser, server, rel, "desktop")
    if not figures:
        pytest.skip("no static figure on this page")
    for f in figures:
        alt = (f["alt"] or "").strip()
        assert alt and not _PATHLIKE.search(alt), f"{rel}: {f['src'][:60] or f['id']}: alt text is {alt!r}"
        assert len(alt.split()) >= 5 and alt.endswith("."), f"{rel}: alt text is not a sentence: {alt!r}"
        if f["anim"]:
            continue  # a scrub figure's frame changes with its slider
        assert f["link"] and f["link"] == f["src"], f"{rel}: {f['src']} does not open at full size"
        assert f["fits"] and not f["scrolls"], f"{rel}: {f['src']} is too wide for the column at desktop width"
        assert f["tick"] is None or f["tick"] * f["shown"] / f["natural"] >= MIN_TEXT_PX - 0.05, (
            f"{rel}: {f['src']}: tick labels {f['tick'] * f['shown'] / f['natural']:.1f} px at desktop width")


@pytest.mark.parametrize("doc, rel", PAGES, ids=IDS)
def test_on_a_phone_wide_figures_scroll_with_a_cue_and_pages_do_not(browser, server, doc, rel):  # noqa: F811
    figures, sideways = _static(browser, server, rel, "phone")
    assert sideways <= 1, f"{rel} scrolls sideways by {sideways} px on a phone"
    for f in figures:
        if f["anim"]:
            continue
        assert f["fits"] or (f["scrolls"] and f["cue"]), f"{rel}: {f['src']} is cut off without a cue"
        if f["scrolls"]:
            assert f["cue"], f"{rel}: {f['src']} scrolls sideways without a visible cue"


# ---------------------------------------------------------------------------------------------------------------------
# Weight and icons

_ICONS_JS = """() => Array.from(document.querySelectorAll('i[class*="fa-"], span[class*="fa-"]'))
  .filter((i) => i.getBoundingClientRect().width > 0)
  .map((i) => { const b = getComputedStyle(i, '::before');
    return {cls: i.className, content: b.content, font: b.fontFamily,
            loaded: Array.from(document.fonts).some((f) => b.fontFamily.includes(f.family.replace(/"/g, '')) && f.status === 'loaded')}; })"""


def _wait_loaded(page, requests: Requests, live: bool = True) -> None:
    """Wait until the page has loaded what it loads by itself (fonts, maths, images in view, live figures drawn)
    with no request in flight (:func:`tests.chromium.wait_loaded`). Playwright's "networkidle" (no request for
    500 ms) has twice waited out its whole timeout in CI on pages that had long finished loading, and a quiet time
    is a guess; a page that keeps fetching still fails."""
    if live:
        reveal_live(page)  # live.js draws a figure when the reader comes near it
    ready = f"() => ({LOADED_JS})() && (!{str(live).lower()} || ({LIVE_DRAWN_JS})())"
    wait_loaded(page, requests, ready, f"{page.url} to finish loading", timeout_s=PAGE_TIMEOUT_MS / 1000)


@pytest.mark.parametrize("doc, rel", PAGES, ids=IDS)
def test_first_load_weight_and_icons(browser, server, doc, rel):  # noqa: F811
    sizes = {}
    with screen(browser, "desktop") as ctx:
        page = ctx.new_page()

        def record(request):
            response = request.response()
            if urlsplit(request.url).hostname in LOCAL_HOSTS and response and response.ok and request.method == "GET":
                sizes[request.url] = len(response.body())

        requests = Requests(page, finished=record)
        page.goto(f"{server}/{rel}", wait_until="load")
        _wait_loaded(page, requests)  # the live figures drawn, the fonts loaded, nothing in flight
        icons = page.evaluate(_ICONS_JS)
        page.close()
    assert not [u for u in sizes if "fontawesome.js" in u], "Font Awesome's script is still loaded"
    whole = [u for u in sizes if re.search(r"/fa-(?:solid|brands|regular)-\d+\.(?:woff2|ttf)$", urlsplit(u).path)]
    assert not whole, f"{rel}: Font Awesome's whole fonts loaded: {whole}"
    assert icons, f"{rel}: no icon found"
    blank = [i for i in icons if i["content"] in ("none", "normal", '""') or "Font Awesome" not in i["font"]]
    assert not blank, f"{rel}: icons without a glyph: {blank[:5]}"
    assert all(i["loaded"] for i in icons), f"{rel}: icon fonts not loaded: {[i for i in icons if not i['loaded']][:3]}"
    kinds = {"script": 0, "style": 0, "font": 0, "image": 0, "live data": 0, "page": 0, "other": 0}
    for url, n in sizes.items():
        path = urlsplit(url).path
        kind = ("live data" if "/live-data/" in path else "script" if path.endswith(".js") else
                "style" if path.endswith(".css") else "font" if re.search(r"\.(woff2?|ttf)$", path) else
                "image" if re.search(r"\.(png|svg|jpe?g|gif)$", path) else
                "page" if path.endswith(".html") else "other")
        kinds[kind] += n
    data = json.loads(WEIGHTS.read_text()) if WEIGHTS.exists() else {}
    data[rel] = {"total": sum(sizes.values()), **kinds}
    WEIGHTS.write_text(json.dumps(data, indent=1, sort_keys=True))
    assert sum(sizes.values()) <= FIRST_LOAD_BUDGET, f"{rel}: first load {sum(sizes.values()):,} bytes"


#: A first visit's requests that its first screen never needs, by what they are (issue 44): URL pattern -> why.
NOT_AT_FIRST = {
    r"/vendor/mathjax/": "MathJax (the maths is typeset when the book is built)",
    r"/vendor/thebe/|/require\.js|/embed-amd\.js|/marked/": "Live Code's scripts (loaded on its click)",
    r"/searchindex\.js|/searchtools\.js|/language_data\.js": "the search index (the search page's)",
    r"/fa-(?:solid|brands|regular)-\d+\.(?:woff2|ttf)$": "a whole Font Awesome font (the site's are cut to its icons)",
    r"fontawesome\.js": "Font Awesome's script",
}


@pytest.mark.parametrize("doc, rel", PAGES, ids=IDS)
def test_a_first_visit_loads_only_what_its_first_screen_needs(browser, server, doc, rel):  # noqa: F811
    """Opened on a phone and left alone (no scrolling, no click) until it has loaded what it loads by itself: none of
    :data:`NOT_AT_FIRST`; the live figures' script only after the page's first paint, and a live figure's data only
    for a figure within a screen and a half of the top (live.js loads one when the reader comes near it)."""
    with screen(browser, "phone") as ctx:
        page = ctx.new_page()
        urls = []
        page.on("request", lambda r: urls.append(r.url) if urlsplit(r.url).hostname in LOCAL_HOSTS else None)
        requests = Requests(page)
        page.goto(f"{server}/{rel}", wait_until="load")
        live = page.evaluate("() => document.querySelectorAll('div.probdr-live').length")
        ready = f"() => ({LOADED_JS})() && (!{str(bool(live)).lower()} || !!window.probdrLive)"
        wait_loaded(page, requests, ready, f"{rel} to load what it loads by itself", timeout_s=PAGE_TIMEOUT_MS / 1000)
        seen = page.evaluate("""() => ({
          paint: (performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime,
          live: (performance.getEntriesByType('resource').find((e) => e.name.includes('/live.js')) || {}).startTime,
          near: Array.from(document.querySelectorAll('div.probdr-live')).filter(
            (d) => d.getBoundingClientRect().top < 1.5 * innerHeight).map((d) => d.id)})""")
        page.close()
    early = [f"{u} ({why})" for u in urls for pattern, why in NOT_AT_FIRST.items() if re.search(pattern, u)]
    assert not early, f"{rel} loaded at once what its first screen does not need:\n" + "\n".join(early)
    data = [u for u in urls if "/live-data/" in u and not any(f"/{fid}/" in u for fid in seen["near"])]
    assert not data, f"{rel} loaded the data of live figures far below its first screen: {data}"
    if live:
        assert seen["live"] is not None and seen["paint"] is not None and seen["live"] > seen["paint"], (
            f"{rel}: live.js was requested at {seen['live']} ms, before the first paint at {seen['paint']} ms")


# ---------------------------------------------------------------------------------------------------------------------
# Print

PRINTED = "book/transformer_block.html"


def test_a_printed_chapter_shows_sharp_figures_without_controls_and_wraps_code(browser, server):  # noqa: F811
    with screen(browser, "desktop") as ctx:
        page = open_page(ctx, f"{server}/{PRINTED}")
        requests = Requests(page)
        # the lazy figures load as the reader scrolls to them: each step lets the page render (two animation frames)
        page.evaluate("""async () => { const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
          for (let y = 0; y < document.documentElement.scrollHeight; y += 400) { window.scrollTo(0, y); await frame(); } }""")
        wait_until(page, "() => Array.from(document.images).every((im) => im.complete)",
                   f"every figure of {PRINTED} to load once scrolled to", timeout_s=PAGE_TIMEOUT_MS / 1000,
                   state="() => Array.from(document.images).filter((im) => !im.complete).map((im) => im.currentSrc)")
        _wait_loaded(page, requests)
        emulate_print(page, f"{PRINTED} to be laid out and its live figures redrawn for print")
        seen = page.evaluate("""() => ({
          controls: Array.from(document.querySelectorAll('.probdr-live-controls')).map((f) => getComputedStyle(f).display),
          settings: Array.from(document.querySelectorAll('.probdr-live-settings')).map((p) => [getComputedStyle(p).display, p.textContent]),
          scale: Array.from(document.querySelectorAll('.probdr-live canvas')).map((c) => c.width / c.getBoundingClientRect().width),
          aspect: Array.from(document.querySelectorAll('.probdr-live canvas')).map((c) => {
            const r = c.getBoundingClientRect(); return (c.width / c.height) / (r.width / r.height); }),
          code: Array.from(document.querySelectorAll('article pre')).filter((p) => p.getBoundingClientRect().width > 0)
                 .map((p) => [getComputedStyle(p).whiteSpace, p.scrollWidth - p.clientWidth]),
          nav: Array.from(document.querySelectorAll('.bd-sidebar-primary, .bd-header')).map((e) => getComputedStyle(e).display),
        })""")
        PRINTS.mkdir(parents=True, exist_ok=True)
        pdf = page.pdf(path=str(PRINTS / "transformer_block.pdf"), format="A4", print_background=True)
        page.close()
    assert seen["controls"] and all(d == "none" for d in seen["controls"]), seen["controls"]
    assert all(d != "none" and text.startswith("Shown at") for d, text in seen["settings"]), seen["settings"]
    assert seen["scale"] and min(seen["scale"]) >= 2.9, f"canvases drawn at {min(seen['scale']):.2f} px per px"
    assert all(abs(a - 1) < 0.02 for a in seen["aspect"]), f"printed canvases stretched: {seen['aspect']}"
    assert all(ws in ("pre-wrap", "break-spaces") and over <= 1 for ws, over in seen["code"]), \
        [c for c in seen["code"] if c[0] not in ("pre-wrap", "break-spaces") or c[1] > 1][:5]
    assert all(d == "none" for d in seen["nav"]), seen["nav"]
    assert pdf[:5] == b"%PDF-" and pdf.count(b"/Type /Page") >= 3
