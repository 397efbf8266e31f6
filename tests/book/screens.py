"""What a reader's screen shows: browser contexts at phone and desktop size in either colour mode, and the scripts
the screen tests run in the page (layout, contrast, what the live figures drew).

Shared by test_screens.py (phone, dark mode, static figures, weight, print) and test_live_figures.py.
"""

from __future__ import annotations

import contextlib
from urllib.parse import urlsplit

#: The two screens of the issue: a phone (390 x 844, an iPhone 12 to 15 in CSS pixels) and a desktop window.
SCREENS = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 900}}
THEMES = ("light", "dark")

#: WCAG 2.1 AA: text contrast at least 4.5:1.
MIN_CONTRAST = 4.5
#: Smallest text on a live figure's canvas and smallest tick label of a static figure, in CSS pixels.
MIN_TEXT_PX = 9.0

LOCAL_HOSTS = {"127.0.0.1", "localhost"}
#: Seconds a page may take to load, typeset, render its widgets or go quiet. The heaviest pages (3.2 MB, scrub
#: frames and live data) load in about 2 s on an idle machine; a shared CI runner with both cores busy has taken
#: over 30 s, Playwright's default, to reach "networkidle" on them. A wait that long still fails a page that never
#: goes quiet.
PAGE_TIMEOUT_S = 120
PAGE_TIMEOUT_MS = PAGE_TIMEOUT_S * 1000


def new_context(browser, **options):
    """A browser context for the book's pages: service workers blocked (every visit is a first one) and every wait
    allowed :data:`PAGE_TIMEOUT_MS`."""
    ctx = browser.new_context(service_workers="block", **options)
    ctx.set_default_timeout(PAGE_TIMEOUT_MS)
    return ctx


@contextlib.contextmanager
def screen(browser, screen_name: str, theme: str = "light", remote=None):
    """A fresh browser context (a reader's first visit) of that size, with pydata-sphinx-theme's colour mode set
    as the theme's own switch stores it; every request to another host is aborted (and recorded in ``remote``)."""
    ctx = new_context(browser, viewport=SCREENS[screen_name], color_scheme=theme)
    ctx.add_init_script(f"try {{ localStorage.setItem('theme', '{theme}'); localStorage.setItem('mode', '{theme}'); }}"
                        " catch (e) {}")

    def route(r):
        if urlsplit(r.request.url).hostname in LOCAL_HOSTS:
            r.continue_()
        else:
            if remote is not None:
                remote.append(r.request.url)
            r.abort()

    ctx.route("**/*", route)
    try:
        yield ctx
    finally:
        ctx.close()


#: A stylesheet that lays out and draws the whole page at once: what a reader is not near is drawn only as the reader
#: comes near it (``content-visibility: auto``, probdr-site.css), so a tool that reads pixels or hit-tests points
#: across the whole page (a full-page screenshot, axe-core's colour contrast, which scrolls as it goes) needs it all
#: drawn first, as on paper. It changes where nothing is, only when it is drawn.
ALL_DRAWN_CSS = ".probdr-far, .probdr-far > *, mjx-assistive-mml { content-visibility: visible !important; }"


def open_page(ctx, url: str, live: bool = True):
    """Open ``url`` and wait until the page has settled (:func:`settle`): every formula is typeset (when the book
    was built), the fonts and the images in view have loaded, every live figure is drawn (its points loaded), and
    the layout no longer changes."""
    page = ctx.new_page()
    page.goto(url, wait_until="load")
    settle(page, live=live)
    return page


#: Every live figure drawn, with the points of its setting (live.js marks a figure probdr-live-ready when it has
#: built it and sets aria-busy while a setting's file is on its way).
LIVE_DRAWN_JS = """() => Array.from(document.querySelectorAll('div.probdr-live')).every(
  (d) => d.classList.contains('probdr-live-ready') && d.getAttribute('aria-busy') !== 'true')"""

#: Every script the page holds until it has painted has run (tools/site_speed.py, scripts_after_paint; the search
#: page holds none: its scripts load at once).
SCRIPTS_RAN_JS = "(document.documentElement.dataset.probdrScripts === 'ready' || !document.getElementById('probdr-later'))"

#: The page has loaded what the layout depends on: the document and its fonts, every formula typeset (each span.math
#: or div.math holds its mjx-container: typeset when the book was built, or by MathJax for maths that came later),
#: every image loaded but those that load lazily and are out of view, and probdr-site.js has done what it does once
#: the page has painted (the figures' cues, skip links, Tab stops of what scrolls: data-probdr-site="ready"), after
#: every other script the page holds until then (:data:`SCRIPTS_RAN_JS`).
LOADED_JS = """() => {
  const inView = (el) => { const r = el.getBoundingClientRect(); return r.bottom >= 0 && r.top <= innerHeight; };
  return document.readyState === 'complete' && document.fonts.status === 'loaded'
    && document.documentElement.dataset.probdrSite === 'ready'
    && """ + SCRIPTS_RAN_JS + """
    && Array.from(document.querySelectorAll('span.math, div.math')).every((m) => m.querySelector('mjx-container'))
    && Array.from(document.images).every((im) => im.complete || (im.loading === 'lazy' && !inView(im)));
}"""

#: What is not loaded yet (for the message of a wait that timed out).
NOT_LOADED_JS = """() => ({readyState: document.readyState, fonts: document.fonts.status,
  site: document.documentElement.dataset.probdrSite || '(probdr-site.js not done)',
  scripts: document.documentElement.dataset.probdrScripts || '(not every held script has run)',
  untypeset: Array.from(document.querySelectorAll('span.math, div.math')).filter((m) => !m.querySelector('mjx-container'))
    .map((m) => m.textContent.slice(0, 60)).slice(0, 5),
  images: Array.from(document.images).filter((im) => !im.complete).map((im) => im.currentSrc.slice(-60)).slice(0, 5),
  live: Array.from(document.querySelectorAll('div.probdr-live')).map((d) => [d.id, d.className, d.getAttribute('aria-busy')])})"""

#: The page's layout, read: its size and that of every canvas, and how many of its images have loaded.
LAYOUT_SIZE_JS = """() => { const se = document.scrollingElement;
  return [se.scrollWidth, se.scrollHeight, innerWidth, innerHeight,
          Array.from(document.querySelectorAll('canvas')).map((c) => [c.clientWidth, c.clientHeight, c.width, c.height]),
          Array.from(document.images).filter((im) => im.complete).length]; }"""


#: Each live figure brought into view, as a reader scrolling to it would, until live.js has drawn it (live.js, which
#: the page loads once it has painted, draws a figure when the reader comes near it), then the page back where it
#: was. Re-checked every 150 ms, bounded by the deadline given; returns whether every figure was drawn.
REVEAL_LIVE_JS = """async (timeoutMs) => {
  const until = Date.now() + timeoutMs, x = scrollX, y = scrollY;
  const frames = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r())));
  const pause = () => new Promise((r) => setTimeout(r, 150));
  const done = (d) => d.classList.contains('probdr-live-ready') || d.classList.contains('probdr-live-broken');
  for (const fig of document.querySelectorAll('div.probdr-live')) {
    while (!done(fig) && Date.now() < until) {
      fig.scrollIntoView({block: 'center'});
      await frames();
      if (!done(fig)) await pause();
    }
  }
  window.scrollTo(x, y);
  await frames();
  return Array.from(document.querySelectorAll('div.probdr-live')).every(done);
}"""


def reveal_live(page, timeout_s: float = PAGE_TIMEOUT_S) -> bool:
    """Bring each live figure of the page into view until it is drawn, then scroll back (:data:`REVEAL_LIVE_JS`)."""
    return page.evaluate(REVEAL_LIVE_JS, timeout_s * 1000)


def settle(page, live: bool = True, what: str = ""):
    """Wait (never a fixed time) until the page has settled: MathJax, if a page loaded it for maths that came later,
    has started and typeset (once more, as a reader's late formulas would be), the fonts and images have loaded
    (:data:`LOADED_JS`), every live figure is drawn (``live``: each brought into view as a reader would, then the
    page back at the top; :data:`LIVE_DRAWN_JS`), and the layout reads the same before and after two animation
    frames. Every wait is bounded by :data:`PAGE_TIMEOUT_S` and fails saying what it waited for."""
    from tests.chromium import wait_stable, wait_until

    where = what or page.url
    page.evaluate(MATHJAX_JS)
    wait_until(page, LOADED_JS, f"{where} to load its fonts and images and typeset its maths", timeout_s=PAGE_TIMEOUT_S,
               state=NOT_LOADED_JS)
    if live:
        reveal_live(page)
        wait_until(page, LIVE_DRAWN_JS, f"the live figures of {where} to be drawn", timeout_s=PAGE_TIMEOUT_S,
                   state=NOT_LOADED_JS)
    wait_stable(page, LAYOUT_SIZE_JS, f"the layout of {where} to settle", timeout_s=PAGE_TIMEOUT_S,
                ready=f"() => ({LOADED_JS})() && (!{str(live).lower()} || ({LIVE_DRAWN_JS})())")


#: Where a page has loaded MathJax (for maths that came after the build: search summaries, Live Code's outputs), its
#: start, then one more typeset of the whole page; a page whose maths was all typeset when the book was built has no
#: MathJax (window.MathJax is at most its configuration) and nothing to wait for.
MATHJAX_JS = """async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  if (window.MathJax && MathJax.typesetPromise) await MathJax.typesetPromise();
  await document.fonts.ready;
  return true;
}"""


#: Under print media (as Chromium prints): every image loaded (probdr-site.js loads the lazy ones for paper), the
#: fonts and maths as on screen, and every live figure redrawn since the switch (live.js redraws its canvases at
#: three device pixels per pixel: each draw records a new canvas.probdrLayout, so one that is not among those
#: recorded on screen is a new drawing).
PRINTED_JS = """() => matchMedia('print').matches && document.fonts.status === 'loaded'
  && Array.from(document.images).every((im) => im.complete)
  && Array.from(document.querySelectorAll('div.probdr-live canvas')).every(
       (c) => c.probdrLayout && !(window.__probdrScreenLayouts || new Set()).has(c.probdrLayout))"""


def emulate_print(page, what: str, beforeprint: bool = False):
    """Switch the page to print media (and send it ``beforeprint`` if asked, as a print dialog does), then wait until
    it is laid out for paper (:data:`PRINTED_JS`, and the layout the same across two animation frames)."""
    from tests.chromium import wait_stable

    page.evaluate("""() => { window.__probdrScreenLayouts = new Set(
      Array.from(document.querySelectorAll('div.probdr-live canvas')).map((c) => c.probdrLayout)); }""")
    page.emulate_media(media="print")
    if beforeprint:
        page.evaluate("() => window.dispatchEvent(new Event('beforeprint'))")
    wait_stable(page, LAYOUT_SIZE_JS, what, ready=PRINTED_JS, timeout_s=PAGE_TIMEOUT_S)


#: The search page has finished (Sphinx says so under its results) and probdr-site.js has handled every summary
#: (it marks each data-probdr-maths) and MathJax has typeset those that keep a formula: a summary with \\( in its text
#: holds an mjx-container once typeset.
SEARCH_DONE_JS = """() => { const r = document.getElementById('search-results');
  if (!r || !/Search finished|did not match/.test(r.textContent)) return false;
  return Array.from(r.querySelectorAll('li p.context')).every((p) => p.dataset.probdrMaths
    && (p.querySelector('mjx-container') || !/\\\\\\(/.test(p.textContent)));
}"""
SEARCH_STATE_JS = """() => { const r = document.getElementById('search-results');
  return r ? {status: r.textContent.slice(0, 80), summaries: Array.from(r.querySelectorAll('li p.context')).map((p) =>
    [!!p.dataset.probdrMaths, p.querySelectorAll('mjx-container').length, p.textContent.slice(0, 60)]).slice(0, 8)} : null; }"""


def wait_search_done(page, what: str):
    """Wait until the search page has listed its results and typeset their summaries (:data:`SEARCH_DONE_JS`)."""
    from tests.chromium import wait_until

    wait_until(page, SEARCH_DONE_JS, what, timeout_s=PAGE_TIMEOUT_S, state=SEARCH_STATE_JS)


# Colour contrast of every visible text element inside `selector` against what is actually behind it: the first
# ancestor (or the element itself) with a background colour, alpha-composited over the ones behind it, down to the
# page. Returns the elements below `min` and the lowest ratio of all.
CONTRAST_JS = """([selector, min]) => {
  const parse = (c) => { const m = c.match(/rgba?\\(([^)]+)\\)/); if (!m) return null;
    const v = m[1].split(/[ ,\\/]+/).filter(Boolean).map(Number); return [v[0], v[1], v[2], v.length > 3 ? v[3] : 1]; };
  const over = (top, under) => { const a = top[3]; return [0, 1, 2].map((i) => top[i] * a + under[i] * (1 - a)).concat([1]); };
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    let bg = [255, 255, 255, 1];
    for (let i = layers.length - 1; i >= 0; i--) bg = over(layers[i], bg);
    return bg;
  };
  const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
  const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
  const out = [];
  let checked = 0, lowest = Infinity;
  document.querySelectorAll(selector).forEach((root) => {
    root.querySelectorAll('*').forEach((el) => {
      const own = Array.from(el.childNodes).some((n) => n.nodeType === 3 && n.textContent.trim());
      if (!own || el.closest('mjx-assistive-mml, script, style')) return;
      const r = el.getBoundingClientRect(), st = getComputedStyle(el);
      if (!r.width || !r.height || st.visibility === 'hidden' || st.display === 'none') return;
      const bg = background(el), fg = over(parse(st.color), bg), k = ratio(fg, bg);
      checked++;
      lowest = Math.min(lowest, k);
      if (k < min) out.push({text: el.textContent.trim().slice(0, 60), tag: el.tagName, colour: st.color,
                            background: 'rgb(' + bg.slice(0, 3).map(Math.round).join(',') + ')', ratio: k});
    });
  });
  return {checked, low: out, lowest};
}"""

# What each live figure drew on its canvases (live.js records every text with its measured box), with the
# canvases' sizes: for the layout tests.
LAYOUT_JS = """(id) => { const root = document.getElementById(id);
  return Array.from(root.querySelectorAll('canvas')).map((c) => {
    const L = c.probdrLayout || {}; const r = c.getBoundingClientRect();
    return {id: c.id, width: L.width, height: L.height, cssWidth: r.width, texts: L.texts || [], notes: L.notes || [],
            degenerate: L.degenerate || [], points: L.points, outside: L.outside, plot: L.plot};
  }); }"""

# Elements of a figure that stick out of it (wider than its container) or scroll sideways inside it, and the
# readout values that are not fully visible.
OVERFLOW_JS = """(id) => {
  const root = document.getElementById(id), box = root.getBoundingClientRect(), bad = [], hidden = [];
  root.querySelectorAll('*').forEach((el) => {
    const r = el.getBoundingClientRect();
    if (!r.width && !r.height) return;
    if (r.left < box.left - 1 || r.right > box.right + 1) bad.push({tag: el.tagName, cls: el.className, left: r.left - box.left, right: r.right - box.right});
    // (a formula's italic overhang, a pixel or few that the theme's span.math clips, is not a sideways scroll)
    const maths = el.closest('.math, mjx-container');
    if (el.scrollWidth > el.clientWidth + (maths ? 12 : 1) && getComputedStyle(el).overflowX !== 'visible') bad.push({tag: el.tagName, cls: el.className, scrolls: el.scrollWidth - el.clientWidth});
  });
  root.querySelectorAll('dd[data-readout]').forEach((dd) => {
    if (dd.closest('[hidden]')) return;
    const r = dd.getBoundingClientRect();
    const ok = r.width > 0 && r.height > 0 && r.left >= box.left - 1 && r.right <= box.right + 1 && r.right <= innerWidth + 1
      && dd.scrollWidth <= dd.clientWidth + 1 && dd.textContent.trim() !== '';
    if (!ok) hidden.push({readout: dd.dataset.readout, text: dd.textContent, left: r.left, right: r.right});
  });
  return {bad, hidden, width: box.width, scrollWidth: root.scrollWidth, clientWidth: root.clientWidth};
}"""


def boxes_overlap(a, b, slack: float = 0.5) -> bool:
    return a["x0"] < b["x1"] - slack and b["x0"] < a["x1"] - slack and a["y0"] < b["y1"] - slack and b["y0"] < a["y1"] - slack


def text_problems(panels) -> list:
    """Texts of the live figures' canvases that leave their canvas, are set below MIN_TEXT_PX, or overlap."""
    bad = []
    for p in panels:
        texts = p["texts"]
        for t in texts:
            if t["x0"] < -0.5 or t["x1"] > p["width"] + 0.5 or t["y0"] < -0.5 or t["y1"] > p["height"] + 0.5:
                bad.append(f"{p['id']}: {t['role']} {t['text']!r} leaves the canvas ({t['x0']:.1f}..{t['x1']:.1f} of "
                           f"{p['width']}, {t['y0']:.1f}..{t['y1']:.1f} of {p['height']})")
            if t["size"] < MIN_TEXT_PX - 1e-9:
                bad.append(f"{p['id']}: {t['role']} {t['text']!r} is {t['size']} px")
        for i, a in enumerate(texts):
            for b in texts[i + 1:]:
                if boxes_overlap(a, b):
                    bad.append(f"{p['id']}: {a['role']} {a['text']!r} overlaps {b['role']} {b['text']!r}")
    return bad


def contrast(colour_a: str, colour_b: str) -> float:
    """WCAG contrast of two '#rrggbb' colours (for what live.js records of its canvas texts)."""
    def lum(h):
        v = [int(h[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        v = [x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4 for x in v]
        return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]

    a, b = lum(colour_a), lum(colour_b)
    return (max(a, b) + 0.05) / (min(a, b) + 0.05)
