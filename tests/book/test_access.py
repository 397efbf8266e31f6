"""The site for every reader, measured in Chromium on the built site with the network cut off (issue 26, item 6).

- axe-core (npm, pinned in package.json's devDependencies; its script is injected from node_modules, never
  committed) runs its WCAG 2.2 A and AA rules on every page in light and dark mode: no serious or critical
  violation; and no formula is in error, with every MathJax file from the site itself;
- every text of every page, against what is actually behind it, at least 4.5:1 in both modes (not only inside the
  live figures, as test_screens.py checks);
- keyboard: a formula is not a Tab stop; from the top of a page a few key presses reach each live figure's first
  control (its skip link), and the focus ring there is at least 3:1 against the figure's background in both modes;
- paper (A4): no table, figure or formula is cut or wider than the page;
- a phone: in a stacked live figure the main picture and its first control are on one screen, and every control
  of a live figure is a touch target of at least 24 x 24 pixels (WCAG 2.2, 2.5.8);
- search: no result's summary shows raw TeX;
- chapter 5's toy: every two neighbouring positions of the kappa slider draw different pictures.

The measurements go to _build/access.json (axe violations, lowest contrast, Tab presses, print) for the record.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import ROOT, toc_pages
from .screens import (ALL_DRAWN_CSS, CONTRAST_JS, MIN_CONTRAST, THEMES, emulate_print, open_page, screen,
                      wait_search_done)
from .test_browser import browser, server  # noqa: F401  (fixtures)
from .test_live_figures import LIVE, _PIXELS, _wait_drawn

pytestmark = [pytest.mark.book, pytest.mark.browser]

PAGES = toc_pages()
IDS = [d for d, _ in PAGES]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
RECORD = ROOT / "_build" / "access.json"
#: axe-core's tags for the WCAG 2.0, 2.1 and 2.2 success criteria at levels A and AA.
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22a", "wcag22aa"]
FAILING_IMPACTS = ("serious", "critical")
#: Key presses (Tab and Enter) from the top of a page to a live figure's first control, at most.
MAX_KEYS = 6
#: WCAG 2.2, 1.4.11 (non-text contrast) and 2.4.13: a focus ring at least 3:1 against what is next to it.
MIN_FOCUS_CONTRAST = 3.0
#: WCAG 2.2, 2.5.8 (target size, minimum).
MIN_TARGET_PX = 24
#: A4 at 96 CSS pixels per inch, less Chromium's default print margins (0.4 inch each side): 210 mm = 793.7 px.
A4_PRINT_WIDTH = 718
A4_PRINT_HEIGHT = 1046
PHONE = {"width": 390, "height": 844}


def _record(section: str, key: str, value) -> None:
    data = json.loads(RECORD.read_text()) if RECORD.exists() else {}
    data.setdefault(section, {})[key] = value
    RECORD.parent.mkdir(parents=True, exist_ok=True)
    RECORD.write_text(json.dumps(data, indent=1, sort_keys=True))


# ---------------------------------------------------------------------------------------------------------------------
# axe-core and the contrast of every text


_AXE_RUN = """async (tags) => {
  const rules = axe.getRules(tags).map((r) => r.ruleId);  // experimental WCAG rules included (named explicitly)
  const res = await axe.run(document, {runOnly: {type: 'rule', values: rules}, resultTypes: ['violations']});
  return res.violations.map((v) => ({id: v.id, impact: v.impact, count: v.nodes.length,
    targets: v.nodes.slice(0, 3).map((n) => n.target.join(' ') + ': ' + (n.failureSummary || '').slice(0, 160))}));
}"""


@pytest.fixture(scope="module")
def axe_source():
    if not AXE.is_file():
        pytest.fail(f"{AXE} is missing: run `npm ci` (axe-core is pinned in package.json's devDependencies)",
                    pytrace=False)
    return AXE.read_text(encoding="utf-8")


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("doc, rel", PAGES, ids=IDS)
def test_axe_finds_no_serious_violation_and_every_text_is_readable(browser, server, axe_source, doc, rel, theme,
                                                                   capsys):  # noqa: F811
    with screen(browser, "desktop", theme) as ctx:
        page = open_page(ctx, f"{server}/{rel}")
        assert page.evaluate("() => document.documentElement.dataset.theme") == theme
        page.add_style_tag(content=ALL_DRAWN_CSS)  # axe hit-tests points as it scrolls: the whole page drawn first
        page.add_script_tag(content=axe_source)
        violations = page.evaluate(_AXE_RUN, WCAG_TAGS)
        seen = page.evaluate(CONTRAST_JS, ["body", MIN_CONTRAST])
        maths = page.evaluate("""() => ({
          files: performance.getEntriesByType('resource').map((e) => e.name).filter((u) => /mathjax/i.test(u)),
          errors: Array.from(document.querySelectorAll('mjx-merror, mjx-container [data-mjx-error]'))
            .map((e) => (e.getAttribute('data-mjx-error') || e.textContent).slice(0, 80)),
          formulas: document.querySelectorAll('mjx-container').length})""")
        page.close()
    assert not maths["errors"], f"{rel}: formulas in error: {maths['errors'][:5]}"
    assert all(u.startswith(server) for u in maths["files"]), f"{rel}: MathJax from elsewhere: {maths['files']}"
    _record("axe", f"{doc}/{theme}", {v["id"]: [v["impact"], v["count"]] for v in violations})
    _record("contrast", f"{doc}/{theme}", {"lowest": round(seen["lowest"], 2), "checked": seen["checked"],
                                            "below": len(seen["low"])})
    with capsys.disabled():
        print(f"\n{doc}, {theme}: axe {[(v['id'], v['impact'], v['count']) for v in violations] or 'clean'}; "
              f"lowest text contrast {seen['lowest']:.2f}:1 over {seen['checked']} elements")
    bad = [v for v in violations if v["impact"] in FAILING_IMPACTS]
    assert not bad, f"{rel}, {theme} mode: axe-core: " + json.dumps(bad, indent=1)[:3000]
    assert seen["checked"] > 50, seen
    assert not seen["low"], f"{rel}, {theme} mode: text below {MIN_CONTRAST}:1: {seen['low'][:6]}"


# ---------------------------------------------------------------------------------------------------------------------
# Keyboard

_ACTIVE = """() => { const a = document.activeElement; if (!a || a === document.body) return null;
  const fig = a.closest('div.probdr-live');
  return {tag: a.tagName, cls: String(a.className || ''), href: a.getAttribute('href'), figure: fig ? fig.id : null,
          maths: !!a.closest('mjx-container'), id: a.id}; }"""

_FIRST_CONTROL = """(id) => { const c = document.querySelector('#' + id + ' input, #' + id + ' select'); return c ? c.id : null; }"""

# The focus ring of the focused element against what is behind the element (composited down to the page).
_RING = """() => {
  const parse = (c) => { const m = c.match(/rgba?\\(([^)]+)\\)/); if (!m) return null;
    const v = m[1].split(/[ ,\\/]+/).filter(Boolean).map(Number); return [v[0], v[1], v[2], v.length > 3 ? v[3] : 1]; };
  const over = (top, under) => { const a = top[3]; return [0, 1, 2].map((i) => top[i] * a + under[i] * (1 - a)).concat([1]); };
  const el = document.activeElement, st = getComputedStyle(el);
  const layers = [];
  for (let e = el.parentElement; e; e = e.parentElement) {
    const c = parse(getComputedStyle(e).backgroundColor);
    if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
  }
  let bg = [255, 255, 255, 1];
  for (let i = layers.length - 1; i >= 0; i--) bg = over(layers[i], bg);
  const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
  const ring = over(parse(st.outlineColor), bg), x = lum(ring), y = lum(bg);
  return {style: st.outlineStyle, width: parseFloat(st.outlineWidth), colour: st.outlineColor,
          background: 'rgb(' + bg.slice(0, 3).map(Math.round).join(',') + ')',
          ratio: (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05)};
}"""


def _tabs_to(page, fid: str, first: str, use_skip: bool, limit: int) -> tuple[int, list]:
    """Key presses from the top of the page until ``first`` (the figure's first control) has the focus."""
    # the sequential focus starts at the top of the page: at a mark (not itself a Tab stop) before everything else
    page.evaluate("""() => { window.scrollTo(0, 0); let top = document.getElementById('probdr-test-top');
      if (!top) { top = document.createElement('span'); top.id = 'probdr-test-top'; top.tabIndex = -1;
                  document.body.prepend(top); }
      top.focus(); }""")
    presses, path = 0, []

    def press(key: str):
        """Press ``key``; (what has the focus now, whether it is ``first``)."""
        nonlocal presses
        page.keyboard.press(key)
        presses += 1
        seen = page.evaluate(_ACTIVE)
        path.append(seen)
        return seen, bool(seen and seen["id"] == first)

    while presses < limit:
        seen, there = press("Tab")
        if not there and use_skip and seen and seen["href"] == f"#{fid}":
            seen, there = press("Enter")
        if there:
            return presses, path
    return presses + 1, path


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("name", list(LIVE))
def test_a_keyboard_reaches_each_live_figure_in_a_few_presses_with_a_visible_ring(browser, server, name, theme,
                                                                                capsys):  # noqa: F811
    fid = f"probdr-live-{name}"
    with screen(browser, "desktop", theme) as ctx:
        page = open_page(ctx, f"{server}/{LIVE[name]}")
        # a formula may be a Tab stop only where it scrolls sideways (then a keyboard must reach it to scroll it)
        stops = page.evaluate("""() => Array.from(document.querySelectorAll('mjx-container')).filter((m) =>
          m.tabIndex >= 0 && !(m.clientWidth > 0 && m.scrollWidth > m.clientWidth + 1)).length""")
        first = page.evaluate(_FIRST_CONTROL, fid)
        keys, path = _tabs_to(page, fid, first, use_skip=True, limit=40)
        ring = page.evaluate(_RING) if keys <= 40 else None
        plain, _ = _tabs_to(page, fid, first, use_skip=False, limit=400)
        page.close()
    _record("keyboard", f"{name}/{theme}", {"with_skip_link": keys, "tab_only": plain, "formula_tab_stops": stops,
                                            "ring": ring})
    with capsys.disabled():
        print(f"\n{name}, {theme}: {keys} key presses to the first control with its skip link, {plain} Tabs without; "
              f"focus ring {ring and round(ring['ratio'], 2)}:1")
    assert stops == 0, f"{LIVE[name]}: {stops} formulas are Tab stops"
    assert keys <= MAX_KEYS, f"{name}: {keys} presses to its first control: {path[:12]}"
    assert ring["style"] != "none" and ring["width"] >= 2, ring
    assert ring["ratio"] >= MIN_FOCUS_CONTRAST, f"{name}, {theme}: focus ring {ring}"


# ---------------------------------------------------------------------------------------------------------------------
# Paper

# Every table, figure, picture and display formula of the article: the part of it (its cells, its own width) that
# lies outside the printed page or is clipped by a box around it.
_CUT_JS = """(width) => {
  const out = [];
  const clips = (el) => { const list = [];
    for (let e = el.parentElement; e && e !== document.body; e = e.parentElement) {
      const st = getComputedStyle(e);
      if (st.overflowX !== 'visible' || st.overflow !== 'visible') list.push(e);
    }
    return list; };
  const name = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
    (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\\s+/).slice(0, 2).join('.') : '');
  const check = (el, parts) => {
    const r = el.getBoundingClientRect();
    if (!r.width || !r.height) return;
    let worst = 0;
    const boxes = clips(el).map((c) => c.getBoundingClientRect());
    for (const p of parts) {
      const q = p.getBoundingClientRect();
      if (!q.width) continue;
      worst = Math.max(worst, q.right - width, -q.left);
      for (const b of boxes) worst = Math.max(worst, q.right - b.right, b.left - q.left);
    }
    const own = getComputedStyle(el).overflowX !== 'visible' ? el.scrollWidth - el.clientWidth : 0;
    worst = Math.max(worst, own);
    if (worst > 1) out.push({el: name(el), cut: Math.round(worst), text: (el.textContent || '').trim().slice(0, 50)});
  };
  document.querySelectorAll('article table').forEach((t) => check(t, [t, ...t.querySelectorAll('th, td')]));
  document.querySelectorAll('article img, article canvas, article figure, article div.probdr-live, article mjx-container[display="true"]')
    .forEach((f) => check(f, [f]));
  return {cut: out, tables: document.querySelectorAll('article table').length};
}"""


@pytest.mark.parametrize("doc, rel", PAGES, ids=IDS)
def test_on_a4_paper_no_table_or_figure_is_cut(browser, server, doc, rel, capsys):  # noqa: F811
    from .screens import new_context

    ctx = new_context(browser, viewport={"width": A4_PRINT_WIDTH, "height": A4_PRINT_HEIGHT})
    ctx.route("**/*", lambda r: r.continue_() if r.request.url.startswith(server) else r.abort())
    try:
        page = open_page(ctx, f"{server}/{rel}")
        emulate_print(page, f"{rel} to be laid out for A4 paper", beforeprint=True)
        seen = page.evaluate(_CUT_JS, A4_PRINT_WIDTH)
        page.close()
    finally:
        ctx.close()
    _record("print", doc, {"tables": seen["tables"], "cut": len(seen["cut"])})
    with capsys.disabled():
        print(f"\n{doc}: {len(seen['cut'])} of its tables and figures cut on A4 ({seen['tables']} tables)")
    assert not seen["cut"], f"{rel} on A4: " + json.dumps(seen["cut"][:8])


# ---------------------------------------------------------------------------------------------------------------------
# A phone

_PHONE_JS = """(id) => {
  const root = document.getElementById(id), canvas = root.querySelector('canvas');
  const control = root.querySelector('.probdr-live-controls input, .probdr-live-controls select');
  const c = canvas.getBoundingClientRect(), k = control.getBoundingClientRect();
  const small = Array.from(root.querySelectorAll('input, select, button')).map((e) => {
    const r = e.getBoundingClientRect(); return {id: e.id || e.name, w: r.width, h: r.height}; })
    .filter((t) => t.w > 0 && (t.w < %d || t.h < %d));
  return {stacked: root.classList.contains('probdr-live-stacked'), span: Math.max(c.bottom, k.bottom) - Math.min(c.top, k.top),
          small};
}""" % (MIN_TARGET_PX, MIN_TARGET_PX)


@pytest.mark.parametrize("name", list(LIVE))
def test_on_a_phone_the_picture_and_its_controls_share_a_screen(browser, server, name, capsys):  # noqa: F811
    with screen(browser, "phone") as ctx:
        page = open_page(ctx, f"{server}/{LIVE[name]}")
        seen = page.evaluate(_PHONE_JS, f"probdr-live-{name}")
        page.close()
    _record("phone", name, {"stacked": seen["stacked"], "picture_to_control_px": round(seen["span"])})
    with capsys.disabled():
        print(f"\n{name} on a phone: picture and first control span {seen['span']:.0f} px "
              f"({'stacked' if seen['stacked'] else 'side by side'})")
    assert seen["span"] <= PHONE["height"], f"{name}: picture and first control {seen['span']:.0f} px apart"
    assert not seen["small"], f"{name}: touch targets under {MIN_TARGET_PX} px: {seen['small']}"


# ---------------------------------------------------------------------------------------------------------------------
# Search


def test_search_summaries_show_maths_not_tex(browser, server):  # noqa: F811
    with screen(browser, "desktop") as ctx:
        page = open_page(ctx, f"{server}/search.html?q=kappa", live=False)
        page.wait_for_function("() => document.querySelectorAll('#search-results li p.context').length >= 3",
                               timeout=60_000)
        page.evaluate("async () => { if (window.MathJax && MathJax.startup) await MathJax.startup.promise; }")
        wait_search_done(page, "the search for kappa to finish and typeset its summaries")
        seen = page.evaluate("""() => Array.from(document.querySelectorAll('#search-results li p.context')).map((p) => {
          const c = p.cloneNode(true); c.querySelectorAll('mjx-container').forEach((m) => m.remove());
          return {raw: c.textContent, maths: p.querySelectorAll('mjx-container').length,
                  errors: p.querySelectorAll('mjx-merror, [data-mjx-error]').length,
                  highlighted: p.querySelectorAll('.highlighted').length}; })""")
        page.close()
    tex = [s["raw"][:120] for s in seen if "\\(" in s["raw"] or "\\kappa" in s["raw"] or "\\)" in s["raw"]]
    _record("search", "kappa", {"results": len(seen), "raw_tex": len(tex)})
    assert not tex, f"{len(tex)} of {len(seen)} summaries show TeX: {tex}"
    assert sum(s["maths"] for s in seen) > 0 and not any(s["errors"] for s in seen), seen


# ---------------------------------------------------------------------------------------------------------------------
# Chapter 5's kappa slider


def test_every_kappa_position_of_the_toy_draws_a_different_picture(browser, server):  # noqa: F811
    with screen(browser, "desktop") as ctx:
        page = open_page(ctx, f"{server}/{LIVE['toy']}")
        fid = "probdr-live-toy"
        n = page.evaluate("(id) => document.getElementById(id).probdrLive.controls.kappa.values.length", fid)
        pictures, kappas = [], []
        for k in range(n):
            page.evaluate("""([id, k]) => { const f = document.getElementById(id).probdrLive, input = f.inputs.kappa;
              input.value = String(k); input.dispatchEvent(new Event('input', {bubbles: true})); }""", [fid, k])
            _wait_drawn(page, "toy")
            kappas.append(page.evaluate("(id) => document.getElementById(id).probdrLive.value('kappa')", fid))
            pictures.append(page.evaluate(_PIXELS, fid))
        page.close()
    same = [(kappas[k], kappas[k + 1]) for k in range(n - 1) if pictures[k] == pictures[k + 1]]
    assert not same, f"neighbouring kappa positions that draw the same picture: {same}"
