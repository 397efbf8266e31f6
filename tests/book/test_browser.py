"""Every page of the built book in headless Chromium, with the network cut off.

The site in ``_build/html`` is served by ``http.server`` on 127.0.0.1 (in a
thread); Playwright drives Debian's Chromium (``/usr/bin/chromium``, or
``PROBDR_CHROMIUM``; it never downloads a browser). Every request to any other
host is aborted and recorded, so these tests show that the site works with no
network. Each page in ``_toc.yml`` is loaded once, in a fresh browser context
(a reader's first visit), scrolled through as a reader would (figures and live
figures load as they come near), and checked for console errors, maths (typeset
when the book was built), scrub figures, widgets and images; a full-page
screenshot goes to ``_build/screenshots/``.

Without Chromium (or Playwright) the tests are skipped with a message; with
``PROBDR_REQUIRE_BROWSER=1`` (CI) that is a failure instead.
"""

from __future__ import annotations

import functools
import http.server
import re
import threading
from urllib.parse import urlsplit

import pytest

from tests.chromium import chromium_path, require

from .conftest import ROOT, toc_pages
from .screens import ALL_DRAWN_CSS, LOCAL_HOSTS, PAGE_TIMEOUT_S, SCRIPTS_RAN_JS, new_context

pytestmark = [pytest.mark.book, pytest.mark.browser]

SCREENSHOTS = ROOT / "_build" / "screenshots"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", "--disable-quic", "--disable-dev-shm-usage",
]

#: Console errors (console.error, uncaught exceptions) that do not fail a page:
#: regular expression -> why it is harmless. Keep it short; fix the cause instead.
CONSOLE_ALLOWED: dict[str, str] = {}

#: Requests to other hosts that a page may make (they are aborted all the same):
#: regular expression on the URL -> why. Empty: the site needs no network at all.
REMOTE_ALLOWED: dict[str, str] = {}

PAGES = toc_pages()
IDS = [d for d, _ in PAGES]


@pytest.fixture(scope="module")
def browser():
    missing = None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:  # pragma: no cover - playwright is in requirements.txt
        missing = f"Playwright for Python is not installed ({exc})"
    exe = chromium_path()
    if missing is None and exe is None:
        missing = "no Chromium found (apt-get install chromium, or set PROBDR_CHROMIUM to its path)"
    if missing:
        require("browser tests", missing)  # skipped, or failed where CI requires them (PROBDR_REQUIRE_BROWSER=1)
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest's output clean
        pass


@pytest.fixture(scope="module")
def server(built_book):
    """Base URL of the built site, served on 127.0.0.1 by a thread."""
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(built_book)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


# Runs in the page after it has loaded: waits for MathJax (where a page has loaded it) and the widget manager, loads
# every figure and live figure as a reader scrolling through it would, then waits
# until the page has settled: every wait is on a condition, re-checked every 150 ms, never a fixed time. Returns
# whether each held before the deadline, and what was still awaited if not.
_SETTLE_JS = """async (timeoutMs) => {
  const until = Date.now() + timeoutMs, late = [];
  const pause = () => new Promise((r) => setTimeout(r, 150));  // between two checks of a condition
  const frames = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r())));
  const waitFor = async (cond, what) => {
    while (!(await cond())) { if (Date.now() > until) { late.push(what); return; } await pause(); } };
  // the page's scripts are fetched and run once it has painted (tools/site_speed.py, scripts_after_paint)
  await waitFor(() => """ + SCRIPTS_RAN_JS + """, "the page's scripts to run");
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  const views = () => Array.from(document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]'));
  const done = (s) => s.previousElementSibling && s.previousElementSibling.classList.contains("widget-subarea")
                      && s.previousElementSibling.childElementCount > 0;
  await waitFor(() => views().every(done), "the widget views to render");
  // figures load as the reader scrolls to them (loading="lazy"): scroll through the page as a reader would, letting
  // the page render at each step (two animation frames), where it starts the figures in view
  for (let y = 0; y < document.documentElement.scrollHeight; y += Math.max(200, innerHeight / 2)) {
    window.scrollTo(0, y);
    await frames();
  }
  window.scrollTo(0, document.body.scrollHeight);
  await frames();
  await waitFor(() => Array.from(document.images).every((i) => i.complete), "every image to load");
  // live figures are drawn when the reader comes near them (live.js loads once the page has painted): each in view
  // until it is drawn
  for (const fig of document.querySelectorAll("div.probdr-live")) {
    fig.scrollIntoView({block: "center"});
    await frames();
    await waitFor(() => fig.classList.contains("probdr-live-ready") || fig.classList.contains("probdr-live-broken")
                        ? true : (fig.scrollIntoView({block: "center"}), false), "the live figure " + fig.id + " to be drawn");
  }
  window.scrollTo(0, 0);
  const maths = () => Array.from(document.querySelectorAll("span.math, div.math"));
  await waitFor(() => window.scrollY === 0 && document.fonts.status === "loaded"
                      && maths().every((m) => m.querySelector("mjx-container")),
                "the fonts to load and every formula to be typeset");
  // the layout holds: the same sizes before and after two animation frames
  const size = () => JSON.stringify([document.documentElement.scrollWidth, document.documentElement.scrollHeight,
    Array.from(document.images).map((i) => [i.width, i.height]),
    Array.from(document.querySelectorAll("mjx-container")).map((m) => m.getBoundingClientRect().width)]);
  await waitFor(async () => { const a = size(); await frames(); return a === size(); }, "the layout to settle");
  return {ok: late.length === 0 && Date.now() < until, late};
}"""

_INSPECT_JS = """() => {
  const maths = Array.from(document.querySelectorAll("span.math, div.math"));
  const views = Array.from(document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]'));
  const widgets = views.map((s) => {
    const area = s.previousElementSibling;
    const rendered = !!(area && area.classList.contains("widget-subarea") && area.childElementCount > 0);
    const out = s.closest(".cell_output") || s.parentElement;
    const pictures = Array.from(out.querySelectorAll("img")).filter(
      (im) => im.compareDocumentPosition(s) & Node.DOCUMENT_POSITION_FOLLOWING);
    return {
      rendered,
      errors: area ? area.querySelectorAll(".jupyter-widgets-error-widget").length
                     + (area.textContent.includes("Error displaying widget") ? 1 : 0) : 0,
      sliders: area ? area.querySelectorAll(".widget-slider, .jupyter-widget-slider").length : 0,
      picture: pictures.length > 0,
      pictureLoaded: pictures.some((im) => im.complete && im.naturalWidth > 0),
    };
  });
  const images = Array.from(document.images).map((im) => ({
    src: im.currentSrc.slice(0, 120), ok: im.complete && im.naturalWidth > 0 }));
  return {
    maths: maths.length,
    mathsTypeset: maths.filter((m) => m.querySelector("mjx-container")).length,
    untypeset: maths.filter((m) => !m.querySelector("mjx-container")).map((m) => m.textContent.slice(0, 80)),
    mjx: document.querySelectorAll("mjx-container").length,
    mathErrors: Array.from(document.querySelectorAll("mjx-merror, mjx-container [data-mjx-error]")).map(
      (e) => (e.getAttribute("data-mjx-error") || e.textContent).slice(0, 80)),
    // display equations wider than the text column (the reader would have to scroll sideways)
    mathTooWide: Array.from(document.querySelectorAll("div.math")).map((d) => {
      const inner = d.querySelector("mjx-container > *");
      return inner ? {width: Math.round(inner.getBoundingClientRect().width), column: d.clientWidth,
                      tex: d.textContent.trim().slice(0, 60)} : null;
    }).filter((m) => m && m.width > m.column + 1),
    widgets,
    images,
    height: document.documentElement.scrollHeight,
  };
}"""

# Moves every range control inside a cell output through all its values; records the picture.
# (The live figures' range controls are tested in test_live_figures.py.)
_SCRUB_JS = """() => Array.from(document.querySelectorAll(".cell_output input[type=range]"))
  .filter((range) => !range.closest(".probdr-live")).map((range) => {
  const box = range.closest(".animation") || range.closest(".output") || range.closest(".cell_output");
  const img = box.querySelector("img");
  if (!img) return {id: range.id, error: "no <img> next to the range control"};
  const set = (v) => {
    range.value = String(v);
    range.dispatchEvent(new Event("input", {bubbles: true}));
    range.dispatchEvent(new Event("change", {bubbles: true}));
    return img.src;
  };
  const lo = Number(range.min || 0), hi = Number(range.max || 100), step = Number(range.step || 1);
  const first = set(lo);
  const seen = new Set();
  for (let v = lo; v <= hi; v += step) seen.add(set(v));
  const last = img.src;
  const back = set(lo);
  return {id: range.id, frames: Math.round((hi - lo) / step) + 1, distinct: seen.size,
          changed: first !== last, returns: back === first};
})"""


_SCRUBBED = "probdr-test: the scrubbing is over"
_AFTER_SCRUB_JS = """async ([message, timeoutMs]) => {
  const until = Date.now() + timeoutMs;
  const imgs = Array.from(document.querySelectorAll(".cell_output input[type=range]")).map((range) => {
    const box = range.closest(".animation") || range.closest(".output") || range.closest(".cell_output");
    return box.querySelector("img"); }).filter(Boolean);
  while (!imgs.every((i) => i.complete) && Date.now() < until) await new Promise((r) => setTimeout(r, 150));
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r())));
  console.log(message);
}"""


@pytest.fixture(scope="module")
def visit(browser, server):
    """visit(page) -> what one load of the page showed (loaded once, then cached)."""
    cache = {}

    def load(doc, rel):
        if rel in cache:
            return cache[rel]
        result = {"console": [], "remote": [], "local_failures": [], "aborted": [], "settled": False,
                  "late": ["(not run)"]}
        context = new_context(browser, viewport={"width": 1280, "height": 900})

        def route(r):
            if urlsplit(r.request.url).hostname in LOCAL_HOSTS:
                r.continue_()
            else:
                result["remote"].append(r.request.url)
                r.abort()

        context.route("**/*", route)
        page = context.new_page()
        page.on("console", lambda m: result["console"].append(f"console.{m.type}: {m.text}")
                if m.type == "error" else None)
        page.on("pageerror", lambda e: result["console"].append(f"uncaught: {e}"))

        def failed(req):
            if urlsplit(req.url).hostname in LOCAL_HOSTS:
                # a request the browser dropped itself (a lazy figure's source it no longer needs once the whole page
                # is drawn for the screenshot, or the page closing) is not a failure to find the file: the test
                # checks that the file is there instead
                key = "aborted" if req.failure == "net::ERR_ABORTED" else "local_failures"
                result[key].append(req.url if key == "aborted" else f"{req.url}: {req.failure}")

        def response(resp):
            if urlsplit(resp.url).hostname in LOCAL_HOSTS and resp.status >= 400:
                result["local_failures"].append(f"{resp.url}: HTTP {resp.status}")

        page.on("requestfailed", failed)
        page.on("response", response)
        try:
            page.goto(f"{server}/{rel}", wait_until="load")
            settled = page.evaluate(_SETTLE_JS, PAGE_TIMEOUT_S * 1000)
            result["settled"], result["late"] = settled["ok"], settled["late"]
            result.update(page.evaluate(_INSPECT_JS))
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            shot = SCREENSHOTS / (doc.replace("/", "__") + ".png")
            # the whole page drawn for the picture, as on paper: on screen what is far from the reader is drawn only
            # as the reader comes near it (content-visibility, probdr-site.css)
            page.add_style_tag(content=ALL_DRAWN_CSS)
            page.screenshot(path=str(shot), full_page=True)
            result["screenshot"] = shot
            result["scrubs"] = page.evaluate(_SCRUB_JS)
            # errors raised by the scrubbing reach the listeners before a message the page logs after it: the
            # page logs one once every scrubbed picture has loaded its frame and two animation frames have passed
            # (the console and errors come in the order the page raised them)
            with page.expect_console_message(lambda m: m.text == _SCRUBBED, timeout=PAGE_TIMEOUT_S * 1000):
                page.evaluate(_AFTER_SCRUB_JS, [_SCRUBBED, PAGE_TIMEOUT_S * 1000])
        finally:
            context.close()
        cache[rel] = result
        return result

    return load


def _unexplained(messages, allowed):
    return [m for m in messages if not any(re.search(p, m) for p in allowed)]


@pytest.mark.parametrize("doc, rel", PAGES, ids=IDS)
def test_page_loads_without_console_errors(visit, doc, rel):
    seen = visit(doc, rel)
    assert seen["settled"], f"{rel} did not settle in {PAGE_TIMEOUT_S} s: waited in vain for {seen['late']}"
    bad = _unexplained(seen["console"], CONSOLE_ALLOWED)
    assert not bad, f"console errors on {rel} (fix them, or allow them in CONSOLE_ALLOWED with a reason):\n" + \
        "\n".join(bad)


@pytest.mark.parametrize("doc, rel", PAGES, ids=IDS)
def test_page_needs_no_network(visit, doc, rel):
    """Nothing is requested from other hosts (all such requests are aborted, and recorded)."""
    bad = _unexplained(visit(doc, rel)["remote"], REMOTE_ALLOWED)
    assert not bad, f"{rel} requested (blocked):\n" + "\n".join(bad)


@pytest.mark.parametrize("doc, rel", PAGES, ids=IDS)
def test_page_requests_no_missing_local_file(visit, doc, rel, built_book):
    seen = visit(doc, rel)
    bad = seen["local_failures"] + [f"{url}: dropped, and not in the site" for url in seen["aborted"]
                                    if not (built_book / urlsplit(url).path.lstrip("/")).is_file()]
    assert not bad, f"{rel}:\n" + "\n".join(bad)


@pytest.mark.parametrize("doc, rel", PAGES, ids=IDS)
def test_every_image_renders(visit, doc, rel):
    broken = [im["src"] for im in visit(doc, rel)["images"] if not im["ok"]]
    assert not broken, f"images that did not render on {rel}: {broken}"


@pytest.mark.parametrize("doc, rel", PAGES, ids=IDS)
def test_maths_is_typeset(visit, doc, rel):
    seen = visit(doc, rel)
    if not seen["maths"]:
        pytest.skip("no maths on this page")
    assert seen["mathsTypeset"] == seen["maths"], f"not typeset by MathJax on {rel}: {seen['untypeset'][:5]}"
    assert seen["mjx"] >= seen["maths"]
    assert not seen["mathErrors"], f"TeX errors on {rel}: {seen['mathErrors'][:5]}"


@pytest.mark.parametrize("doc, rel", PAGES, ids=IDS)
def test_display_maths_fits_the_text_column(visit, doc, rel):
    """At a 1280-pixel window no display equation is wider than the column (break long ones with aligned)."""
    seen = visit(doc, rel)
    if not seen["maths"]:
        pytest.skip("no maths on this page")
    assert not seen["mathTooWide"], f"display maths wider than the text column on {rel}: {seen['mathTooWide']}"


@pytest.mark.parametrize("doc, rel", PAGES, ids=IDS)
def test_scrub_figures_change_with_their_control(visit, doc, rel):
    """Each kernel-free scrub figure shows a different picture when its range control moves."""
    scrubs = visit(doc, rel)["scrubs"]
    if not scrubs:
        pytest.skip("no scrub figure on this page")
    for s in scrubs:
        assert "error" not in s, f"{rel}: {s}"
        assert s["changed"] and s["distinct"] >= 2, f"{rel}: moving the control does not change the figure: {s}"
        assert s["returns"], f"{rel}: going back to the first value does not restore its picture: {s}"


@pytest.mark.parametrize("doc, rel", PAGES, ids=IDS)
def test_widgets_show_their_static_picture_and_render(visit, doc, rel):
    """Widget pages: each view is rendered by the HTML manager, with a static figure before it."""
    widgets = visit(doc, rel)["widgets"]
    if not widgets:
        pytest.skip("no widgets on this page")
    for i, w in enumerate(widgets):
        assert w["rendered"], f"{rel}: widget view {i} was not rendered by the widget manager"
        assert not w["errors"], f"{rel}: widget view {i} shows an error"
        assert w["picture"] and w["pictureLoaded"], (
            f"{rel}: widget view {i} has no (loaded) static figure before it in its cell output; "
            "show the figure first (probdr_lite.presentation.widgets.SliderPanel.show does)"
        )
    assert sum(w["sliders"] for w in widgets) >= 1, f"{rel}: widgets rendered, but no slider among them"


@pytest.mark.parametrize("doc, rel", PAGES, ids=IDS)
def test_screenshot_is_saved(visit, doc, rel):
    shot = visit(doc, rel)["screenshot"]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000, shot


# ---------------------------------------------------------------------------------------------------------------------
# What the first paint waits for (issue 44): the page's scripts are fetched once it has painted, and then work

#: Added before any script of the page: what the page holds at its first animation frame (the frame of its first
#: paint: a document's frames wait for its stylesheets), which is before the site's loader may fetch anything.
_FIRST_FRAME_JS = """requestAnimationFrame(() => { window.__probdrFirstFrame = {
  t: performance.now(), theme: document.documentElement.dataset.theme,
  inserted: document.querySelectorAll('head > script[src]').length }; });"""

_AFTER_SCRIPTS_JS = """() => {
  const held = document.getElementById('probdr-later');
  const urls = held ? Array.from(held.content.querySelectorAll('script')).map(
    (s) => new URL(s.getAttribute('src'), document.baseURI).href) : [];
  const fetched = performance.getEntriesByType('resource');
  return {first: window.__probdrFirstFrame, held: urls,
    starts: urls.map((u) => fetched.filter((e) => e.name === u).map((e) => e.startTime)),
    liveCode: !!document.querySelector("button[onclick='initThebeSBT()']"),
    siteLaunch: typeof window.initThebe === 'function' && String(window.initThebe).includes('probdrLiveCode'),
    code: document.querySelectorAll('div.cell_input div.highlight pre').length,
    copyButtons: document.querySelectorAll('div.cell_input button.copybtn').length,
    mode: document.documentElement.dataset.mode};
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("doc, rel", PAGES, ids=IDS)
def test_scripts_wait_for_the_first_paint_and_then_work(browser, server, doc, rel, scheme):
    """At a phone's size, a first visit with the system in light or dark mode: the page is drawn in the system's
    colours from its first frame, before any of its scripts is fetched; every held script is fetched once, after
    that frame, and runs: copy buttons on the code cells, the book's own Live Code launch in place of
    sphinx-thebe's, and the theme's colour switch."""
    context = new_context(browser, viewport={"width": 412, "height": 823}, color_scheme=scheme)
    context.add_init_script(_FIRST_FRAME_JS)
    context.route("**/*", lambda r: r.continue_() if urlsplit(r.request.url).hostname in LOCAL_HOSTS else r.abort())
    page = context.new_page()
    try:
        page.goto(f"{server}/{rel}", wait_until="load")
        page.wait_for_function("() => document.documentElement.dataset.probdrScripts === 'ready'"
                               " && document.documentElement.dataset.probdrSite === 'ready' && window.__probdrFirstFrame")
        seen = page.evaluate(_AFTER_SCRIPTS_JS)
        first = seen["first"]
        assert first["theme"] == scheme, f"{rel}: first frame drawn in the {first['theme']} theme, the system's is {scheme}"
        assert first["inserted"] == 0, f"{rel}: scripts were in the page before its first frame"
        assert len(seen["held"]) >= 10, f"{rel}: the page's scripts are not held for after the first paint"
        late = [(u, s) for u, s in zip(seen["held"], seen["starts"]) if len(s) != 1 or s[0] < first["t"]]
        assert not late, f"{rel}: scripts fetched before the first frame, or not once: {late}"
        if seen["code"]:
            assert seen["copyButtons"] == seen["code"], f"{rel}: {seen['copyButtons']} copy buttons, {seen['code']} cells"
        if seen["liveCode"]:
            assert seen["siteLaunch"], f"{rel}: Live Code would start sphinx-thebe's launch, not the book's"
        assert seen["mode"] == "auto"
        page.evaluate("() => document.querySelector('.theme-switch-button').click()")  # on a phone it is in a menu
        page.wait_for_function("() => document.documentElement.dataset.mode !== 'auto'")
    finally:
        context.close()
