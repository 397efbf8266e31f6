"""Pages that open fast on a phone (issue 44): the build steps of ``tools/sphinx_local_assets.py`` that make them so.

Each function works on the built site (``_build/html``) or on a page's HTML as Sphinx writes it; the extension calls
them while it writes each page (figures, scrub frames) and once at the end of the build (maths, icons, the head of
every page). What they do, and why:

- **Maths typeset when the book is built** (:func:`typeset_site`): every formula of every page (``span.math`` and
  ``div.math``, as Sphinx writes them with ``\\(...\\)`` and ``\\[...\\]``) and the ``$...$`` of the live figures'
  captions goes to MathJax in Node once (``tools/typeset_maths.js``: MathJax 3.2.2 from npm, the release the site
  loads for maths that appears later), which returns SVG with MathJax's assistive MathML, the TeX kept in that
  MathML as ``<annotation encoding="application/x-tex">``. The page keeps its ``span.math`` / ``div.math`` with the
  typeset formula inside, gets one hidden ``<svg>`` of the glyphs it uses after ``<body>``, and loads no MathJax.
  A TeX error or an unknown macro fails the build; so does TeX left untypeset in a page's text.
- **Figures sized for the screen** (:func:`figure_sources`): each matplotlib PNG gets a lossless WebP of itself
  (the same pixels, less than half the bytes) and, where it is wider than the text column, a sharp WebP at the
  column's width for a screen of one device pixel per pixel; ``srcset`` and ``sizes`` let the browser take the one
  its screen needs, the PNG stays the link target, the fallback and what is printed (``probdr-site.js``).
  Converted files are kept in ``_build/.cache/figures`` by content, so a rebuild does not encode them again.
- **Scrub figures' frames as files** (:func:`externalise_frames`): matplotlib's ``to_jshtml`` puts every frame in
  the page as base64; here each frame becomes a lossless WebP in ``_images/``, loaded when the figure comes into
  view (and the others once its first frame is there) instead of with the page.
- **Icons without two icon fonts** (:func:`subset_icons`): the theme draws its header icons with Font Awesome's
  solid and brands fonts (274 KiB of woff2, on the critical path of every page). The fonts are cut to the glyphs the
  site names (every ``fa-*`` class in its pages and scripts), a few KB, and written into the theme's stylesheet,
  which keeps only those icons' rules: no font request waits on the stylesheet before the first paint, and the icons
  are the same glyphs of the same fonts.
- **The first screens first** (:func:`mark_far_blocks`): paragraphs, display formulas and code cells past a page's
  first screens get a class for which probdr-site.css sets ``content-visibility: auto``, so that opening a chapter of
  hundreds of formulas lays out and paints what the reader sees, and the rest as the reader comes near it.
- **Nothing on the way of the first paint that the first screen does not need** (:func:`rewrite_head`): Sphinx's
  tiny ``documentation_options.js`` is written into the page; the search scripts and the 86 KB index load only on
  the search page; the theme's scripts are no longer preloaded; every deferred script (the theme's, Sphinx's, the
  extensions', the site's own: ``tools/sphinx_local_assets.py`` defers them) is fetched once the page has painted
  (:func:`scripts_after_paint`), so that on a slow connection the stylesheets and the text have the bandwidth to
  themselves; the launch menu's logos are fetched at low priority; the theme's ``theme.css``, which only
  ``@import``\\ s ``basic.css`` (a second round trip before the first paint), is replaced by a link to ``basic.css``
  itself; and a reader whose system is in dark mode gets the dark theme from the first paint, not once the theme's
  script has run.
"""

from __future__ import annotations

import hashlib
import html as html_lib
import json
import re
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TYPESET_JS = ROOT / "tools" / "typeset_maths.js"
CACHE = ROOT / "_build" / ".cache" / "figures"


class SiteError(Exception):
    """Something in the built site that the build must not let through (the extension raises it as a Sphinx error)."""


# ---------------------------------------------------------------------------------------------------------------------
# Maths

#: Sphinx's maths: inline ``<span class="math notranslate nohighlight">\(...\)</span>``; display ``<div class="math
#: notranslate nohighlight" [id=...]>`` with an optional equation number (``<span class="eqno">``) and ``\[...\]``.
MATH_SPAN = re.compile(r'(<span class="math notranslate nohighlight">)(.*?)(</span>)', re.S)
MATH_DIV = re.compile(r'(<div class="math notranslate nohighlight"[^>]*>)(\s*(?:<span class="eqno">.*?</span>)?)'
                      r'(.*?)(</div>)', re.S)
_DELIMITED = re.compile(r"^\s*(?:\\\((?P<i>(?:(?!\\\)).)*)\\\)|\\\[(?P<d>(?:(?!\\\]).)*)\\\]|\$\$(?P<dd>(?:(?!\$\$).)*)\$\$"
                        r"|(?P<env>\\begin\{(?P<name>[A-Za-z*]+)\}.*\\end\{(?P=name)\}))\s*$", re.S)
#: The live figures' captions write maths as $...$ and code as `...` (live.js splits them so).
CAPTION_PARTS = re.compile(r"(\$[^$]+\$|`[^`]+`)")
#: A spec file of a live figure (written by tools/sphinx_local_assets.py): ``probdrLive.spec("<id>",<spec>);``.
SPEC_FILE = re.compile(r'^probdrLive\.spec\(("(?:[^"\\]|\\.)*"),(.*)\);\s*$', re.S)
BODY_OPEN = re.compile(r"<body\b[^>]*>")


def formula(text: str, where: str) -> tuple[str, bool]:
    """(TeX, display) of one formula as Sphinx writes it (HTML-escaped, with its delimiters)."""
    m = _DELIMITED.match(html_lib.unescape(text))
    if not m:
        raise SiteError(f"{where}: maths that is not one delimited formula: {text[:120]!r}")
    if m.group("i") is not None:
        return m.group("i"), False
    if m.group("env") is not None:
        return m.group("env"), True
    return (m.group("d") if m.group("d") is not None else m.group("dd")), True


def page_formulas(html: str, where: str) -> list[tuple[str, bool]]:
    """Every formula of a page, in the order :func:`replace_formulas` fills them in."""
    out = [formula(m.group(2), where) for m in MATH_SPAN.finditer(html)]
    out += [formula(m.group(3), where) for m in MATH_DIV.finditer(html)]
    return out


def replace_formulas(html: str, typeset: list[str]) -> str:
    """The page with each formula's TeX replaced by its typeset HTML (as many, in :func:`page_formulas`' order)."""
    it = iter(typeset)
    html = MATH_SPAN.sub(lambda m: m.group(1) + next(it) + m.group(3), html)
    html = MATH_DIV.sub(lambda m: m.group(1) + m.group(2) + next(it) + m.group(4), html)
    if next(it, None) is not None:
        raise SiteError("more typeset formulas than formulas")
    return html


def caption_html(caption: str, typeset: list[str]) -> str:
    """A live figure's caption as HTML, as live.js would build it, its maths typeset (one HTML per $...$ part)."""
    it, out = iter(typeset), []
    for part in CAPTION_PARTS.split(caption):
        if not part:
            continue
        if part[0] == "`":
            out.append(f"<code>{html_lib.escape(part[1:-1])}</code>")
        elif part[0] == "$":
            out.append(f'<span class="math notranslate nohighlight">{next(it)}</span>')
        else:
            out.append(html_lib.escape(part, quote=False))
    return "".join(out)


def caption_formulas(caption: str) -> list[tuple[str, bool]]:
    return [(p[1:-1], False) for p in CAPTION_PARTS.split(caption or "") if p.startswith("$")]


def read_spec(path: Path) -> tuple[str, dict]:
    m = SPEC_FILE.match(path.read_text(encoding="utf-8"))
    if not m:
        raise SiteError(f"{path} is not a live figure's spec file")
    return json.loads(m.group(1)), json.loads(m.group(2))


def spec_text(fid: str, spec: dict) -> str:
    """The text of a live figure's spec file (a script that hands the spec to live.js)."""
    return f"probdrLive.spec({json.dumps(fid)},{json.dumps(spec, separators=(',', ':'), allow_nan=False)});\n"


def run_mathjax(pages: list[dict], node: str = "node") -> dict:
    """Typeset ``[{"name", "formulas": [{"tex", "display"}]}]`` with tools/typeset_maths.js (one Node process)."""
    if shutil.which(node) is None:
        raise SiteError("Node.js is needed to typeset the maths when the book is built (apt-get install nodejs npm)")
    with tempfile.TemporaryDirectory(prefix="probdr-maths-") as tmp:
        src, dst = Path(tmp) / "in.json", Path(tmp) / "out.json"
        src.write_text(json.dumps({"pages": pages}), encoding="utf-8")
        proc = subprocess.run([node, str(TYPESET_JS), str(src), str(dst)], cwd=ROOT, capture_output=True, text=True)
        if proc.returncode != 0 or not dst.is_file():
            raise SiteError(f"typesetting the maths failed (node {TYPESET_JS.name}):\n{proc.stderr[-3000:]}")
        return json.loads(dst.read_text(encoding="utf-8"))


def typeset_site(outdir: Path, pages: list[Path], live_data: str = "live-data") -> dict:
    """Typeset every formula of ``pages`` and of their live figures' captions; rewrite the pages and spec files.

    Returns ``{"formulas": n, "pages": n, "css": MathJax's stylesheet for its SVG output}``."""
    jobs, texts = [], {}
    for page in pages:
        rel = page.relative_to(outdir).as_posix()
        html = page.read_text(encoding="utf-8")
        formulas = page_formulas(html, rel)
        specs = sorted((outdir / live_data / rel[: -len(".html")]).glob("*/spec.js"))
        captions = []
        for spec_path in specs:
            fid, spec = read_spec(spec_path)
            found = caption_formulas(spec.get("caption", ""))
            captions.append((spec_path, fid, spec, len(found)))
            formulas += found
        if formulas:
            jobs.append({"name": rel, "formulas": [{"tex": t, "display": d} for t, d in formulas]})
            texts[rel] = (page, html, captions)
    if not jobs:
        return {"formulas": 0, "pages": 0, "css": ""}
    result = run_mathjax(jobs)
    errors = [f"{job['name']}: {e}" for job, done in zip(jobs, result["pages"]) for e in done["errors"]]
    if errors:
        raise SiteError("TeX errors in the book's maths (fix the TeX in the chapter):\n" + "\n".join(errors[:20]))
    n = 0
    for job, done in zip(jobs, result["pages"]):
        page, html, captions = texts[job["name"]]
        typeset = done["html"]
        n += len(typeset)
        k = len(typeset) - sum(c[3] for c in captions)
        html = replace_formulas(html, typeset[:k])
        for spec_path, fid, spec, count in captions:
            if count:
                spec["captionHtml"] = caption_html(spec["caption"], typeset[k:k + count])
                text = spec_text(fid, spec)
                spec_path.write_text(text, encoding="utf-8")
                html = _spec_bytes(html, fid, len(text.encode("utf-8")))
            k += count
        if done["defs"]:
            body = BODY_OPEN.search(html)
            if not body:
                raise SiteError(f"{job['name']}: no <body> to put the formulas' glyphs in")
            html = html[:body.end()] + done["defs"] + html[body.end():]
        left = raw_tex(html)
        if left:
            raise SiteError(f"{job['name']}: TeX left in the page's text, outside span.math and div.math (MathJax no "
                            f"longer runs in the reader's browser; write it as $...$ in the chapter): {left[:3]}")
        page.write_text(html, encoding="utf-8")
    for page in pages:  # pages without maths: still no TeX in their text
        rel = page.relative_to(outdir).as_posix()
        if rel not in texts:
            left = raw_tex(page.read_text(encoding="utf-8"))
            if left:
                raise SiteError(f"{rel}: TeX left in the page's text: {left[:3]}")
    return {"formulas": n, "pages": len(jobs), "css": result["css"]}


_SPEC_REF = re.compile(r'(<script type="application/json" class="probdr-live-spec-file">)(.*?)(</script>)', re.S)


def _spec_bytes(html: str, fid: str, size: int) -> str:
    """The page with the size its reference to a live figure's spec file gives updated (the caption's typeset maths
    went into the file)."""
    def fix(m):
        info = json.loads(m.group(2))
        if not info.get("src", "").endswith(f"/{fid}/spec.js"):
            return m.group(0)
        info["bytes"] = size
        return m.group(1) + json.dumps(info, separators=(",", ":")).replace("</", "<\\/") + m.group(3)

    return _SPEC_REF.sub(fix, html)


class _Text(HTMLParser):
    """The text a reader sees, outside code, scripts and typeset maths."""

    SKIP = {"script", "style", "pre", "code", "textarea", "noscript", "svg", "annotation", "mjx-container", "template"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.depth, self.parts = 0, []

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIP:
            self.depth += 1

    def handle_endtag(self, tag):
        if tag in self.SKIP and self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if not self.depth:
            self.parts.append(data)


def raw_tex(html: str) -> list[str]:
    """Delimited TeX (``\\(``, ``\\[``, ``$$``, ``\\begin{``) in a page's visible text: what MathJax would have typeset
    in the browser and nothing typesets now."""
    parser = _Text()
    parser.feed(html)
    text = "".join(parser.parts)
    return [text[max(0, m.start() - 40):m.end() + 40] for m in re.finditer(r"\\\(|\\\[|\$\$|\\begin\{", text)]


#: The visible text of a page's article, in characters, after which its paragraphs, code cells and display formulas
#: are rendered
#: only as the reader comes near them (:func:`mark_far_blocks`): about three screens of a phone.
NEAR_CHARS = 3000
_BLOCK = re.compile(r'<p(?=[\s>])[^>]*>|<div class="(?:math notranslate nohighlight|cell docutils container)"')
FAR = "probdr-far"


def mark_far_blocks(html: str, near: int = NEAR_CHARS) -> str:
    """Mark each paragraph, code cell and display formula of the article that starts more than ``near``
    characters of visible text down the page with the class :data:`FAR`, for which probdr-site.css sets
    ``content-visibility: auto``: the browser lays out and paints them when the reader comes near them, not all at
    once when the page opens (a chapter holds hundreds of typeset formulas, thousands of elements). Those of the first
    screens are left alone, so that nothing there moves when the rest is laid out."""
    start = html.find("<article")
    if start < 0:
        return html
    out, pos, seen = [html[:start]], start, 0
    for m in _BLOCK.finditer(html, start):
        seen += text_before(html[pos:m.start()])
        tag = m.group(0)
        out.append(html[pos:m.start()])
        if seen > near:
            if 'class="' in tag:
                tag = re.sub(r'class="([^"]*)"', lambda c: f'class="{c.group(1)} {FAR}"', tag, count=1)
            else:
                name = re.match(r"<([a-z]+)", tag).group(1)
                tag = f'<{name} class="{FAR}"' + tag[1 + len(name):]
        out.append(tag)
        pos = m.end()
    out.append(html[pos:])
    return "".join(out)


# ---------------------------------------------------------------------------------------------------------------------
# Figures

#: The text column of the book's pages at its widest (CSS pixels; sphinx-book-theme: 672-755 px from 800 px up).
COLUMN_PX = 760
#: Below this window width the page is a phone's: one column, the figure at its phone width (probdr-site.css).
PHONE_MAX_PX = 720
#: A column-width copy is made only where it saves at least this share of the full-size WebP's bytes.
MIN_SAVING = 0.25


def _cached(key: str, suffix: str, make) -> bytes:
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"{key}{suffix}"
    if not path.is_file():
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_bytes(make())
        tmp.replace(path)
    return path.read_bytes()


def _webp(im, **options) -> bytes:
    from io import BytesIO

    buf = BytesIO()
    im.save(buf, "WEBP", **options)
    return buf.getvalue()


def figure_sources(png: Path, images: Path, name: str) -> list[tuple[str, int]]:
    """Write the WebP copies of one figure into ``images`` (the site's ``_images/``); return ``[(file name, width
    in pixels)]``, smallest first: the column-width copy where it pays (:data:`MIN_SAVING`), then the full size.

    The full-size copy is lossless (the PNG's very pixels); the column-width copy is the figure resampled to
    :data:`COLUMN_PX` (Lanczos) and encoded at WebP quality 92, for screens of one device pixel per CSS pixel."""
    from PIL import Image

    data = png.read_bytes()
    key = hashlib.sha256(data).hexdigest()[:32]
    stem = Path(name).stem
    images.mkdir(parents=True, exist_ok=True)
    with Image.open(png) as im:
        im.load()
        w, h = im.size
        full = _cached(key, "-full.webp", lambda: _webp(im, lossless=True, quality=80, method=4))
        out = []
        if w > COLUMN_PX * 1.15:
            small = _cached(key, f"-{COLUMN_PX}.webp", lambda: _webp(
                im.resize((COLUMN_PX, max(1, round(h * COLUMN_PX / w))), Image.LANCZOS), quality=92, method=6))
            if len(small) <= (1 - MIN_SAVING) * len(full):
                (images / f"{stem}-{COLUMN_PX}.webp").write_bytes(small)
                out.append((f"{stem}-{COLUMN_PX}.webp", COLUMN_PX))
    (images / f"{stem}.webp").write_bytes(full)
    out.append((f"{stem}.webp", w))
    return out


def sizes_attr(width: int, desktop_min: int, phone_min: int) -> str:
    """The width the figure is shown at, as ``sizes`` says it (probdr-site.css: never below its smallest readable
    width, never wider than itself or the column; on a phone at least its phone width)."""
    return (f"(max-width: {PHONE_MAX_PX}px) max({phone_min}px, min({width}px, 100vw - 32px)), "
            f"max({desktop_min}px, min({width}px, {COLUMN_PX}px))")


#: The visible text before a figure, in characters, under which it is taken to be on the first screen of a phone
#: (about 30 lines of 45 characters on 390 x 844): loaded with the page, not lazily.
FIRST_SCREEN_CHARS = 1500


def text_before(html: str) -> int:
    """How many characters of visible text ``html`` holds (scripts, styles and tags left out)."""
    text = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    text = html_lib.unescape(re.sub(r"<[^>]+>", " ", text))
    return len(re.sub(r"\s+", " ", text).strip())


#: matplotlib's scrub figures (Animation.to_jshtml): each frame as a data URI, and the loop that loads them all.
ANIM_FRAME = re.compile(r'frames\[(\d+)\] = "data:image/png;base64,((?:[A-Za-z0-9+/=]|\\\n)+)"')
ANIM_PRELOAD = re.compile(r"this\.frames\[i\] = new Image\(\);\s*this\.frames\[i\]\.src = frames\[i\];")


def externalise_frames(script: str, images: Path, url_of) -> tuple[str, list[str], tuple[int, int] | None]:
    """A scrub figure's script with its frames as files: each base64 PNG frame becomes a lossless WebP in ``images``
    (named by its content) and the script names its URL (``url_of(file name)``) instead; the loop that loaded every
    frame with the page only records the URLs (the page shows a frame when asked, probdr-site.js fetches the rest
    once the figure is in view). Returns the script, the frames' URLs and the frames' size."""
    import base64
    from io import BytesIO

    from PIL import Image

    urls, size = [], None

    def frame(m):
        nonlocal size
        data = base64.b64decode(m.group(2).replace("\\\n", ""))
        key = hashlib.sha256(data).hexdigest()[:32]
        with Image.open(BytesIO(data)) as im:
            im.load()
            size = size or im.size
            webp = _cached(key, "-frame.webp", lambda: _webp(im, lossless=True, quality=80, method=4))
        name = f"scrub-{key[:20]}.webp"
        images.mkdir(parents=True, exist_ok=True)
        (images / name).write_bytes(webp)
        urls.append(url_of(name))
        return f'frames[{m.group(1)}] = "{urls[-1]}"'

    script = ANIM_FRAME.sub(frame, script)
    if urls:
        script = ANIM_PRELOAD.sub("this.frames[i] = {src: frames[i]};", script)
    return script, urls, size


# ---------------------------------------------------------------------------------------------------------------------
# Icons

#: The theme's Font Awesome fonts (pydata-sphinx-theme's vendor folder, as Sphinx copied it) and their families.
FA_DIR = "_static/vendor/fontawesome/webfonts"
FA_FONTS = ("fa-solid-900", "fa-brands-400", "fa-regular-400")
FA_CSS = "_static/styles/pydata-sphinx-theme.css"
_FA_RULE = re.compile(r'((?:\.fa-[a-z0-9-]+:(?:before|:before),?)+)\{content:"([^"]+)"\}')
_FA_NAME = re.compile(r"\bfa-[a-z0-9-]+")
_FA_SRC = re.compile(r"src:url\(\.\./vendor/fontawesome/webfonts/(fa-[a-z]+-\d+)\.woff2\) format\(\"woff2\"\),"
                     r"url\(\.\./vendor/fontawesome/webfonts/\1\.ttf\) format\(\"truetype\"\)")


def icon_names(outdir: Path) -> set[str]:
    """Every ``fa-*`` name that the site's pages and scripts mention (a page's icons, and those scripts add).

    The ipywidgets HTML manager is left out: it bundles Font Awesome's whole stylesheet and fonts of its own."""
    names = set()
    for path in list(outdir.rglob("*.html")) + list(outdir.rglob("*.js")):
        rel = path.relative_to(outdir).as_posix()
        if path.name.startswith("fontawesome") or rel.startswith(("live-data/", "vendor/jupyter-widgets/")) \
                or path.name == "searchindex.js":
            continue
        names |= set(_FA_NAME.findall(path.read_text(encoding="utf-8", errors="replace")))
    return names


def subset_icons(outdir: Path) -> dict:
    """Cut the theme's Font Awesome fonts to the icons the site uses and its stylesheet to their rules.

    Rewrites the theme's stylesheet (in the built site only) with each cut font in it as a ``data:`` URL (a few KB:
    a font file would be one more request after the stylesheet, on the way of the first paint, for the header's
    icons); returns what it kept. Does nothing (returns ``{}``) if the theme's files are not where it expects."""
    import base64
    import io

    from fontTools import subset

    css_path = outdir / FA_CSS
    if not css_path.is_file() or not all((outdir / FA_DIR / f"{f}.ttf").is_file() for f in FA_FONTS):
        return {}
    css = css_path.read_text(encoding="utf-8")
    used = icon_names(outdir)
    kept, codepoints = [], set()

    def rule(m):
        names = re.findall(r"\.(fa-[a-z0-9-]+)", m.group(1))
        if not any(n in used for n in names):
            return ""
        kept.extend(names)
        content = m.group(2)
        hexa = re.fullmatch(r"\\([0-9a-fA-F]{1,6})\s?", content)
        codepoints.add(int(hexa.group(1), 16) if hexa else ord(content.lstrip("\\")[0]))
        return m.group(0)

    trimmed = _FA_RULE.sub(rule, css)
    sizes, fonts = {}, {}
    for font in FA_FONTS:
        options = subset.Options()
        options.flavor = "woff"
        options.layout_features = ["*"]
        font_obj = subset.load_font(str(outdir / FA_DIR / f"{font}.ttf"), options)
        sub = subset.Subsetter(options)
        sub.populate(unicodes=sorted(codepoints))
        sub.subset(font_obj)
        buffer = io.BytesIO()
        subset.save_font(font_obj, buffer, options)
        fonts[font] = buffer.getvalue()
        sizes[font] = len(fonts[font])
        (outdir / FA_DIR / f"{font}.subset.woff").unlink(missing_ok=True)  # a file of an earlier build's
    trimmed, n = _FA_SRC.subn(lambda m: "src:url(data:font/woff;base64," + base64.b64encode(fonts[m.group(1)]).decode()
                                        + ') format("woff")', trimmed)
    if n < 2:
        raise SiteError(f"{FA_CSS}: found {n} Font Awesome @font-face rules to point at the cut fonts (expected 2 "
                        "or 3); has the theme changed?")
    css_path.write_text(trimmed, encoding="utf-8")
    return {"icons": sorted(set(kept)), "glyphs": len(codepoints), "font_bytes": sizes,
            "css_bytes": (len(css.encode()), len(trimmed.encode()))}


# ---------------------------------------------------------------------------------------------------------------------
# The head of every page

_SCRIPT_SRC = r'<script\b[^>]*\bsrc="([^"]*?)(?:\?[^"]*)?"[^>]*>\s*</script>\s*'
SEARCH_SCRIPTS = re.compile(r'[ \t]*<script\b[^>]*\bsrc="[^"]*(?:_static/searchtools\.js|_static/language_data\.js|'
                            r'searchindex\.js)[^"]*"[^>]*>\s*</script>\s*')
DOC_OPTIONS = re.compile(r'<script\b[^>]*\bsrc="[^"]*_static/documentation_options\.js[^"]*"[^>]*>\s*</script>')
THEME_PRELOADS = re.compile(r'[ \t]*<link rel="preload" as="script" href="[^"]*_static/scripts/'
                            r'(?:bootstrap|pydata-sphinx-theme)\.js[^"]*" />\s*')
THEME_CSS = re.compile(r'<link href="((?:\.\./)*)_static/styles/theme\.css[^"]*" rel="stylesheet" />')


#: The theme's first script sets the colour theme before the page paints, but leaves "auto" (the reader's system
#: setting) for its own script to resolve, which runs after the first paint: a reader in dark mode would see the page
#: drawn light first. Resolved here as the theme's script resolves it (its ``p(mode)``: "auto" follows
#: ``prefers-color-scheme``).
THEME_AUTO = re.compile(r'document\.documentElement\.dataset\.theme = localStorage\.getItem\("theme"\) \|\| "auto";')
THEME_RESOLVED = ('document.documentElement.dataset.theme = /^(light|dark)$/.test(document.documentElement.dataset.mode)'
                  ' ? document.documentElement.dataset.mode'
                  ' : (matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light");')

#: A deferred or asynchronous script of the page (the head's and the two of the theme at the end of the body).
LATER_SCRIPT = re.compile(r'[ \t]*<script\b(?=[^>]*\b(?:defer|async)\b)(?=[^>]*\bsrc=")[^>]*>\s*</script>[ \t]*\n?')
#: The element that holds them until the page has painted, and the event the loader sends once every one has run
#: (the book's own launch of Live Code waits for it: ``THEBE_SETUP_JS`` in ``tools/sphinx_local_assets.py``).
LATER_ID = "probdr-later"
SCRIPTS_READY_EVENT = "probdr-scripts"
#: Runs each held script, in the page's order, once the page is parsed and has painted. A script written to run
#: deferred expects to run before DOMContentLoaded and the window's load; a listener it adds for either event, once
#: that event is past, is called in a task of its own, as the event would have called it. When every script has
#: run: ``data-probdr-scripts="ready"`` on the root element and the event :data:`SCRIPTS_READY_EVENT`.
LATER_LOADER_JS = """(function () {
  var doc = document;
  function run() {
    var held = doc.getElementById("%(id)s"), left;
    if (!held) return;
    var scripts = Array.prototype.slice.call(held.content.querySelectorAll("script"));
    var past = function (target, type) {
      return (target === doc && type === "DOMContentLoaded" && doc.readyState !== "loading")
        || (target === window && type === "load" && doc.readyState === "complete");
    };
    [doc, window].forEach(function (target) {
      target.addEventListener = function (type, listener, options) {
        if (listener && past(target, type)) {
          setTimeout(function () {
            var event = new Event(type);
            if (typeof listener === "function") listener.call(target, event); else listener.handleEvent(event);
          }, 0);
        }
        return EventTarget.prototype.addEventListener.call(target, type, listener, options);
      };
    });
    var settled = function () {
      if (--left > 0) return;
      delete doc.addEventListener;
      delete window.addEventListener;
      doc.documentElement.dataset.probdrScripts = "ready";
      doc.dispatchEvent(new Event("%(event)s"));
    };
    left = scripts.length + 1;  // each script once it has run or failed, and this function once all are in
    scripts.forEach(function (inert) {
      var script = doc.createElement("script");
      Array.prototype.forEach.call(inert.attributes, function (a) { script.setAttribute(a.name, a.value); });
      script.async = false;
      script.addEventListener("load", settled);
      script.addEventListener("error", settled);
      doc.head.appendChild(script);
    });
    settled();
  }
  function afterPaint() {
    if (doc.visibilityState === "hidden") run();
    else requestAnimationFrame(function () { setTimeout(run, 0); });
  }
  if (doc.readyState === "loading") doc.addEventListener("DOMContentLoaded", afterPaint, {once: true});
  else afterPaint();
})();""" % {"id": LATER_ID, "event": SCRIPTS_READY_EVENT}


def scripts_after_paint(html: str) -> str:
    """A page whose deferred and asynchronous scripts (the theme's, Sphinx's, the extensions' and the site's own) are
    fetched once it has painted, not beside the stylesheets and the text the first screen needs: they are moved, in
    their order (``probdr-site.js`` last, so that its "ready" means every script has run), into a ``<template>`` in the
    head, which the browser neither fetches nor runs, and :data:`LATER_LOADER_JS` runs them after the first paint.
    Deferred, they mostly ran after it already (a long page paints before it is parsed to its end); what changes is
    that they no longer take the phone's bandwidth from the stylesheets the first paint waits for."""
    found = list(LATER_SCRIPT.finditer(html))
    head_end = html.find("</head>")
    if not found or head_end < 0 or found[0].start() > head_end:
        return html
    tags = [re.sub(r'\s(?:defer|async)(?:="(?:defer|async)")?(?=[\s>])', "", m.group(0).strip()) for m in found]
    tags.sort(key=lambda t: "probdr-site.js" in t)
    block = (f'<template id="{LATER_ID}">' + "".join(tags) + "</template>\n"
             f"<script>{LATER_LOADER_JS}</script>\n")
    start = found[0].start()  # the held scripts and their loader where the first of them was
    return html[:start] + block + LATER_SCRIPT.sub("", html[start:])


#: The logos of the launch menu (Binder, Colab): hidden until the reader opens the menu, but fetched with the page at
#: a higher priority than its figures; at low priority they wait for what the first screen needs.
LAUNCH_LOGO = re.compile(r'<img (alt="[^"]*" )src="((?:\.\./)*_static/images/logo_[a-z]+\.(?:svg|png))">')


def rewrite_head(html: str, is_search: bool, doc_options: str | None, theme_imports_basic: bool) -> str:
    """A page with the changes of this module's docstring ("Nothing on the way of the first paint ...") made to it."""
    html = THEME_AUTO.sub(THEME_RESOLVED, html, count=1)
    html = LAUNCH_LOGO.sub(r'<img \1fetchpriority="low" src="\2">', html)
    if not is_search:
        html = SEARCH_SCRIPTS.sub("", html)
        html = scripts_after_paint(html)
    if doc_options is not None:
        html = DOC_OPTIONS.sub(lambda m: "<script>" + doc_options.strip() + "</script>", html, count=1)
    html = THEME_PRELOADS.sub("", html)
    if theme_imports_basic:
        html = THEME_CSS.sub(lambda m: f'<link href="{m.group(1)}_static/basic.css" rel="stylesheet" />', html)
    return html


def theme_css_imports_only_basic(outdir: Path) -> bool:
    path = outdir / "_static" / "styles" / "theme.css"
    if not path.is_file():
        return False
    text = re.sub(r"/\*.*?\*/", "", path.read_text(encoding="utf-8"), flags=re.S).strip()
    return text in ('@import "../basic.css";', "@import url(../basic.css);") and (outdir / "_static" / "basic.css").is_file()
