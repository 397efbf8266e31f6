"""tools/site_speed.py (issue 44): the maths typeset when the book is built, figures sized for the screen, the head of
every page, and the tools that read the built pages (page_numbers, prose_tables, page_words) on typeset maths.

The pages are small hand-written imitations of Sphinx's (``span.math`` / ``div.math`` with ``\\(...\\)`` and
``\\[...\\]``); where the maths is typeset it is by the build's own step (MathJax in Node, ``tools/typeset_maths.js``),
so these tests need ``node_modules`` (``npm ci``) and are skipped without it.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.tool_modules import tool

ROOT = Path(__file__).resolve().parents[2]
SPEED = tool("site_speed")
PN = tool("page_numbers")
PT = tool("prose_tables")
PW = tool("page_words")

PAGE = """<!DOCTYPE html><html><head><title>t</title></head><body>
<article class="bd-article"><section><h1>A chapter<a class="headerlink" href="#">#</a></h1>
{body}
</section></article></body></html>"""

BODY = """<p>At <span class="math notranslate nohighlight">\\(\\kappa = 0.3\\)</span> the spread falls to 0.25 and at
<span class="math notranslate nohighlight">\\(\\eta &lt; 1\\)</span> it holds; the norm is
<span class="math notranslate nohighlight">\\(\\lVert X \\rVert_2 = 1.5\\)</span>.</p>
<table><tr><td><span class="math notranslate nohighlight">\\(\\beta = 0.3\\)</span></td><td>0.25</td></tr></table>
<div class="math notranslate nohighlight">
\\[
\\operatorname{tr}(X^\\top L X) = \\tfrac{1}{2} \\sum_{ij} W_{ij} \\lVert x_i - x_j \\rVert^2 .
\\]</div>
<ul><li>A list item with <span class="math notranslate nohighlight">\\(A - I\\)</span> in it.</li></ul>"""


def _needs_mathjax():
    if shutil.which("node") is None or not (ROOT / "node_modules" / "mathjax-full" / "package.json").is_file():
        pytest.skip("Node.js or node_modules/mathjax-full is missing (make install runs npm ci)")


def typeset(html: str) -> str:
    """The page as the build leaves it: its maths typeset by tools/typeset_maths.js, the glyphs after <body>."""
    formulas = SPEED.page_formulas(html, "test")
    done = SPEED.run_mathjax([{"name": "t", "formulas": [{"tex": t, "display": d} for t, d in formulas]}])
    page = done["pages"][0]
    assert not page["errors"], page["errors"]
    html = SPEED.replace_formulas(html, page["html"])
    body = SPEED.BODY_OPEN.search(html)
    return html[:body.end()] + page["defs"] + html[body.end():]


def test_sphinx_formulas_are_read_with_their_delimiters_and_escapes():
    assert SPEED.formula("\\(\\eta &lt; 1\\)", "p") == ("\\eta < 1", False)
    assert SPEED.formula("\n\\[\nx = 1\n\\]", "p") == ("\nx = 1\n", True)
    assert SPEED.formula("\\begin{aligned} a &amp;= b \\end{aligned}", "p") == (
        "\\begin{aligned} a &= b \\end{aligned}", True)
    with pytest.raises(SPEED.SiteError, match="not one delimited formula"):
        SPEED.formula("\\(x\\) and \\(y\\)", "p")
    found = SPEED.page_formulas(PAGE.format(body=BODY), "p")  # the inline ones, then the display ones
    assert len(found) == 6 and found[4] == ("A - I", False) and found[5][1] is True


def test_typeset_maths_is_svg_for_the_eye_mathml_for_a_screen_reader_and_keeps_its_tex():
    _needs_mathjax()
    html = typeset(PAGE.format(body=BODY))
    formulas = re.findall(r'<(span|div) class="math notranslate nohighlight">(.*?)</\1>', html, re.S)
    assert len(formulas) == 6
    for _, inner in formulas:
        assert '<mjx-container class="MathJax" jax="SVG"' in inner
        assert re.search(r'<svg [^>]*aria-hidden="true"', inner)  # the picture is hidden from assistive technology
        assert "<mjx-assistive-mml" in inner and "<math" in inner  # what a screen reader reads
    assert '<annotation encoding="application/x-tex">\\eta &lt; 1</annotation>' in html
    assert 'fill="currentColor"' in html  # the colour of the text around it (dark mode)
    assert html.count('id="MJX-SVG-global-cache"') == 1  # every glyph once per page
    assert "\\(" not in re.sub(r"<annotation.*?</annotation>", "", html) and not SPEED.raw_tex(html)


def test_a_tex_error_or_an_unknown_macro_is_reported_not_drawn():
    _needs_mathjax()
    done = SPEED.run_mathjax([{"name": "t", "formulas": [{"tex": "\\kappa = \\kapa", "display": False},
                                                          {"tex": "x^{2", "display": True}]}])
    errors = done["pages"][0]["errors"]
    assert len(errors) == 2 and "\\kapa" in errors[0], errors


def test_tex_left_in_a_pages_text_is_found_and_code_is_not():
    assert SPEED.raw_tex("<p>as \\(x\\) says</p>")
    assert SPEED.raw_tex("<p>$$x$$</p>")
    assert not SPEED.raw_tex("<pre>print('\\(x\\)')</pre><code>$$</code><script>var a = '\\[';</script>")


def test_the_tools_read_typeset_maths_as_they_read_its_tex():
    """page_numbers, prose_tables and page_words give the same answers for a page before and after its maths is
    typeset: a formula is its TeX source (the numbers in it, one word), never its glyphs or MathML."""
    _needs_mathjax()
    before = PAGE.format(body=BODY)
    after = typeset(before)
    tokens = lambda html: [(t["text"], t["kind"], t["key"]) for t in PN.page_tokens(html)["tokens"]]  # noqa: E731
    assert tokens(after) == tokens(before)
    assert any(text.startswith("\\[") and kind == "math" for text, kind, _ in tokens(after))
    assert PN.compare_page(PN.page_tokens(before)["tokens"], PN.page_tokens(after)["tokens"]) == {
        "changed": [], "removed": [], "added": []}
    assert PT.page_share(after) == PT.page_share(before)
    assert PT.page_share(after)["words"] == PT.page_share(before)["words"] > 20
    assert PW.page_words(after) == PW.page_words(before)


def test_a_live_figures_caption_is_built_as_live_js_builds_it():
    caption = "Moving $\\kappa$ sharpens it; `depth` counts <blocks> & $\\eta$ steps."
    assert SPEED.caption_formulas(caption) == [("\\kappa", False), ("\\eta", False)]
    html = SPEED.caption_html(caption, ["K", "E"])
    assert html == ('Moving <span class="math notranslate nohighlight">K</span> sharpens it; <code>depth</code> counts '
                    '&lt;blocks&gt; &amp; <span class="math notranslate nohighlight">E</span> steps.')


def test_a_figure_gets_a_lossless_webp_and_a_column_copy_only_where_it_pays(tmp_path, monkeypatch):
    import numpy as np
    from PIL import Image

    monkeypatch.setattr(SPEED, "CACHE", tmp_path / "cache")
    rng = np.random.default_rng(0)
    wide = (rng.random((300, 1000, 4)) * 255).astype("uint8")  # noise: a smaller copy saves a lot
    wide[..., 3] = 255
    Image.fromarray(wide).save(tmp_path / "wide.png")
    flat = np.full((200, 500, 4), 255, dtype="uint8")  # narrower than the column: the full size only
    Image.fromarray(flat).save(tmp_path / "flat.png")
    out = tmp_path / "_images"
    sources = SPEED.figure_sources(tmp_path / "wide.png", out, "wide.png")
    assert sources == [(f"wide-{SPEED.COLUMN_PX}.webp", SPEED.COLUMN_PX), ("wide.webp", 1000)]
    with Image.open(out / "wide.webp") as im:
        assert np.array_equal(np.asarray(im.convert("RGBA")), wide)  # the PNG's very pixels
    with Image.open(out / f"wide-{SPEED.COLUMN_PX}.webp") as im:
        assert im.size == (SPEED.COLUMN_PX, 228)
    assert SPEED.figure_sources(tmp_path / "flat.png", out, "flat.png") == [("flat.webp", 500)]
    assert len(list((tmp_path / "cache").iterdir())) == 3  # a rebuild takes them from the cache
    sizes = SPEED.sizes_attr(1000, 700, 900)
    assert sizes.startswith(f"(max-width: {SPEED.PHONE_MAX_PX}px) max(900px,") and "max(700px" in sizes


def test_the_head_loses_what_the_first_paint_does_not_need():
    head = """<link href="../_static/styles/theme.css?digest=1" rel="stylesheet" />
    <link rel="preload" as="script" href="../_static/scripts/bootstrap.js?digest=1" />
    <script src="../_static/documentation_options.js?v=1"></script>
    <script>DOCUMENTATION_OPTIONS.pagename = 'x';</script>
    <script src="../_static/searchtools.js"></script>
    <script src="../_static/language_data.js"></script>
    <script src="../searchindex.js"></script>"""
    out = SPEED.rewrite_head(head, False, "const DOCUMENTATION_OPTIONS = {};", True)
    assert "searchindex" not in out and "searchtools" not in out and "preload" not in out
    assert "<script>const DOCUMENTATION_OPTIONS = {};</script>" in out
    assert '<link href="../_static/basic.css" rel="stylesheet" />' in out and "theme.css" not in out
    kept = SPEED.rewrite_head(head, True, None, False)  # the search page keeps its index
    assert "searchindex.js" in kept and "theme.css" in kept


def test_the_pages_scripts_wait_in_order_for_the_first_paint():
    """Deferred and asynchronous scripts (head and end of body) move, in their order with probdr-site.js last and
    without defer / async, into the held template, which the loader after it runs; inline scripts stay where they
    were; a page without such scripts, or rewritten twice, is unchanged. The colour theme is resolved before the
    paint as the theme resolves it, and the launch menu's logos are fetched at low priority."""
    page = """<html><head>
  <script data-cfasync="false">
    document.documentElement.dataset.mode = localStorage.getItem("mode") || "auto";
    document.documentElement.dataset.theme = localStorage.getItem("theme") || "auto";
  </script>
    <script defer="defer" src="../_static/doctools.js?v=1"></script>
    <script>let toggleHintShow = 'Click to show';</script>
    <script data-live-js="../vendor/live.js" defer="defer" src="../vendor/probdr-site/probdr-site.js?v=2"></script>
    <script async="async" src="../_static/sphinx-thebe.js?v=3"></script>
</head><body><img alt="Binder logo" src="../_static/images/logo_binder.svg">
  <script defer src="../_static/scripts/bootstrap.js?digest=4"></script>
<script src="../vendor/requirejs/require.js"></script>
</body></html>"""
    out = SPEED.rewrite_head(page, False, None, False)
    held = re.search(rf'<template id="{SPEED.LATER_ID}">(.*?)</template>', out, re.S).group(1)
    srcs = re.findall(r'<script([^>]*)src="([^"]*)"', held)
    assert [src for _, src in srcs] == ["../_static/doctools.js?v=1", "../_static/sphinx-thebe.js?v=3",
                                       "../_static/scripts/bootstrap.js?digest=4",
                                       "../vendor/probdr-site/probdr-site.js?v=2"]
    assert not [a for a, _ in srcs if re.search(r"\b(defer|async)\b", a)]
    assert 'data-live-js="../vendor/live.js"' in held  # the attributes a script reads from its own element
    assert out.index("</template>") < out.index(SPEED.SCRIPTS_READY_EVENT) < out.index("</head>")
    assert out.index("let toggleHintShow") < out.index("</head>") and "require.js" in out.split("</template>")[1]
    assert len(re.findall(r"<script\b[^>]*\bsrc=", out.replace(held, ""))) == 1  # require.js: not deferred, kept
    assert 'matchMedia("(prefers-color-scheme: dark)")' in out and '|| "auto";' not in out.split("dataset.mode")[2]
    assert '<img alt="Binder logo" fetchpriority="low" src="../_static/images/logo_binder.svg">' in out
    assert SPEED.rewrite_head(out, False, None, False) == out
    bare = "<html><head><title>x</title></head><body></body></html>"
    assert SPEED.rewrite_head(bare, False, None, False) == bare
    search = SPEED.rewrite_head(page, True, None, False)  # the search page's scripts stay as they are
    assert SPEED.LATER_ID not in search and 'defer="defer" src="../_static/doctools.js' in search


def test_a_scrub_figures_frames_become_files_it_loads_when_shown(tmp_path, monkeypatch):
    import base64
    from io import BytesIO

    from PIL import Image

    monkeypatch.setattr(SPEED, "CACHE", tmp_path / "cache")
    frames = []
    for shade in (10, 200):
        buf = BytesIO()
        Image.new("RGBA", (40, 30), (shade, 0, 0, 255)).save(buf, "PNG")
        frames.append(base64.b64encode(buf.getvalue()).decode())
    script = ("function Animation(frames){for (var i=0; i<frames.length; i++)\n    {\n     this.frames[i] = new Image();\n"
              "     this.frames[i].src = frames[i];\n    }}\n" + "".join(
                  f'  frames[{k}] = "data:image/png;base64,{f[:20]}\\\n{f[20:]}"\n' for k, f in enumerate(frames)))
    out, urls, size = SPEED.externalise_frames(script, tmp_path / "_images", lambda name: f"../_images/{name}")
    assert size == (40, 30) and len(urls) == 2 and "data:image" not in out
    assert f'frames[1] = "{urls[1]}"' in out and "this.frames[i] = {src: frames[i]};" in out
    for url in urls:
        with Image.open(tmp_path / "_images" / url.rsplit("/", 1)[1]) as im:
            assert im.format == "WEBP" and im.size == (40, 30)
