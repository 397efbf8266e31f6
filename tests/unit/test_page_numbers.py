"""tools/page_numbers.py: every number a reader sees on a built page, and the comparison of two builds.

The pages here are small hand-written imitations of sphinx-book-theme's (navigation and sidebars around an
``<article class="bd-article">``), written to tmp_path; the tool runs as a script, as a person would run it.
"""

import json
import subprocess
import sys
from pathlib import Path

from tests.tool_modules import tool

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "page_numbers.py"

PN = tool("page_numbers")

PAGE = """<!DOCTYPE html>
<html><head><title>4. A chapter &#8212; the book</title>
<style>.x {{ width: 99px }}</style><script>var version = "7.7";</script></head>
<body>
<nav class="bd-header navbar"><a href="#">Chapter 12 of 31</a></nav>
<div class="bd-sidebar-primary bd-sidebar"><nav class="bd-links"><ul>
  <li class="toctree-l1"><a href="one.html">1. One</a></li><li><a href="two.html">2. Two</a></li></ul></nav></div>
<main id="main-content" class="bd-main" role="main">
<div class="bd-article-container">
<article class="bd-article">
<section id="chapter">
<h1><span class="section-number">4. </span>A chapter<a class="headerlink" href="#chapter" title="Link">#</a></h1>
{body}
</section>
</article>
<footer class="prev-next-footer"><a href="three.html">previous: 3. Three</a></footer>
</div>
<div class="bd-sidebar-secondary"><nav class="page-toc"><a href="#s">4.1. Section 99</a></nav></div>
</main>
<footer class="bd-footer">Copyright 2026. Built with Sphinx 7.4.7.</footer>
</body></html>
"""

BODY = """
<p>The loss fell from 2.50 to 1.25 after 8 steps, a drop of 50 % (see <a title="Author, 1999">Smith, 2021</a>).</p>
<section id="s"><h2><span class="section-number">4.1. </span>Results<a class="headerlink" href="#s">#</a></h2>
<p>With <span class="math notranslate nohighlight">\\(\\kappa = 30\\)</span> the gap is 3.7e-14 and the change
is −0.05; the ratio rose by +0.317.</p>
<div class="cell docutils container"><div class="cell_input docutils container">
<div class="highlight-ipython3 notranslate"><div class="highlight">
<pre><span class="n">run</span>(<span class="mi">17</span>)</pre></div></div>
</div><div class="cell_output docutils container">
<div class="output stream highlight-myst-ansi notranslate"><div class="highlight"><pre><span></span>layer 0: 0.947
layer 8: 0.754
</pre></div></div></div></div>
<table class="table"><thead><tr><th>variant</th><th>accuracy</th></tr></thead>
<tbody><tr><td><p>paper</p></td><td><p>0.873</p></td></tr>
<tr><td><p>exact</p></td><td><p>0.742</p></td></tr></tbody></table>
<figure class="probdr-figure"><a href="big.png" title="Open the figure at full size (676 × 295 pixels)">
<img alt="The first 2 coordinates of 10,000 test images after 8 blocks." src="x.png" width="676" height="295"/></a>
<figcaption>Figure 3: the latents.</figcaption></figure>
<div class="math notranslate nohighlight">\\[ X_{t+1} = X_t + 2 \\eta (A - I) X_t \\]</div>
<p>Six sentences say nothing numeric at all.</p>
</section>
"""


def write_build(root: Path, body: str, name: str = "book/chapter.html") -> Path:
    page = root / name
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(PAGE.format(body=body), encoding="utf-8")
    for skipped in ("genindex.html", "search.html", "_static/x.html", "_sources/book/chapter.html"):
        (root / skipped).parent.mkdir(parents=True, exist_ok=True)
        (root / skipped).write_text(PAGE.format(body="<p>666</p>"), encoding="utf-8")
    return root


def run(*args):
    return subprocess.run([sys.executable, str(TOOL), *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)


def snap(tmp_path: Path, body: str, label: str) -> Path:
    build = write_build(tmp_path / f"build-{label}", body)
    out = tmp_path / f"{label}.json"
    result = run("snapshot", build, out)
    assert result.returncode == 0, result.stderr
    return out


def tokens(tmp_path: Path, body: str = BODY) -> list:
    data = json.loads(snap(tmp_path, body, "t").read_text(encoding="utf-8"))
    assert list(data["pages"]) == ["book/chapter.html"], "genindex, search, _static and _sources are skipped"
    return data["pages"]["book/chapter.html"]["tokens"]


def test_the_numbers_of_paragraphs_outputs_tables_alt_text_and_maths_in_page_order(tmp_path):
    toks = tokens(tmp_path)
    shown = [(t["kind"], t["text"]) for t in toks]
    assert shown == [
        ("text", "4"),  # the chapter's heading number
        ("text", "2.50"), ("text", "1.25"), ("text", "8"), ("text", "50 %"), ("text", "2021"),
        ("text", "4.1"),
        ("math", "\\(\\kappa = 30\\)"), ("text", "3.7e-14"), ("text", "−0.05"), ("text", "+0.317"),
        ("code", "17"),
        ("text", "0"), ("text", "0.947"), ("text", "8"), ("text", "0.754"),
        ("table", "0.873"), ("table", "0.742"),
        ("alt", "2"), ("alt", "10,000"), ("alt", "8"),
        ("text", "3"),
        ("math", "\\[ X_{t+1} = X_t + 2 \\eta (A - I) X_t \\]"),
    ]


def test_navigation_sidebars_footers_scripts_styles_and_tooltips_are_not_read(tmp_path):
    texts = {t["text"] for t in tokens(tmp_path)}
    # the header's "12 of 31", the sidebars' "1.", "2.", "99", the footers' "2026", "7.4.7", "3. Three",
    # the script's "7.7", the style's "99px", the link tooltips' "1999", "676 × 295 pixels", the skipped pages' 666
    for hidden in ("12", "31", "1", "99", "2026", "7.4.7", "7.7", "1999", "676", "295", "666"):
        assert hidden not in texts, hidden


def test_each_number_has_its_section_and_the_words_around_it(tmp_path):
    toks = {t["text"]: t for t in tokens(tmp_path)}
    assert toks["2.50"]["section"] == "4. A chapter"
    assert toks["2.50"]["context"].startswith("The loss fell from [2.50] to 1.25")
    assert toks["3.7e-14"]["section"] == "4.1. Results"
    assert "the gap is [3.7e-14] and the change" in toks["3.7e-14"]["context"]
    assert toks["0.742"]["context"] == "row 'exact', column 'accuracy': [0.742]"
    assert toks["0.947"]["context"] == "layer 0: [0.947]", "a line of printed output is its own context"
    assert toks["−0.05"]["key"] == "-0.05" and toks["50 %"]["key"] == "50%"


def test_numbers_of_every_form():
    spans = lambda s: [s[a:b] for a, b in PN._number_spans(s)]  # noqa: E731
    assert spans("3.7e-14; 1.2×10⁻¹⁵ and 1.2 × 10^-15, 48 % or 67%") == [
        "3.7e-14", "1.2×10⁻¹⁵", "1.2 × 10^-15", "48 %", "67%"]
    assert spans("by +0.088, (−0.05), [-1, 1], x-1, GPT-2 on 10,000 of 2,000 (200 each)") == [
        "+0.088", "−0.05", "-1", "1", "1", "2", "10,000", "2,000", "200"]
    assert spans("6.3. Section; version 4.15.0; C⁻¹ X₀; gpt2 a239c76658 float64") == [
        "6.3", "4.15.0", "⁻¹", "₀", "gpt2", "a239c76658", "float64"]


def test_maths_written_in_the_text_of_an_output_is_a_formula_token(tmp_path):
    body = ('<div class="cell_output"><div class="output text_html">'
            '<p>toy ($300$ points, \\(d_q = 16\\))</p></div></div>')
    toks = tokens(tmp_path, body)
    assert [(t["kind"], t["key"]) for t in toks][1:] == [("math", "math:300"), ("math", "math:d_q=16")]


def compare(tmp_path, before_body, after_body, *flags):
    before = snap(tmp_path, before_body, "before")
    after = snap(tmp_path, after_body, "after")
    return run("compare", before, after, *flags)


def test_a_changed_number_is_named_with_its_context_and_section(tmp_path):
    result = compare(tmp_path, BODY, BODY.replace("3.7e-14", "3.8e-14"))
    assert result.returncode == 0
    out = result.stdout
    assert "changed  3.7e-14 -> 3.8e-14" in out
    assert "before: [4.1. Results] With \\(\\kappa = 30\\) the gap is [3.7e-14] and the change" in out
    assert "after:  [4.1. Results] With \\(\\kappa = 30\\) the gap is [3.8e-14] and the change" in out
    assert out.strip().splitlines()[-1] == "1 pages, 22 numbers before, 22 after, 1 changed, 0 removed, 0 added"


def test_a_rewording_with_the_same_numbers_in_the_same_order_is_no_change(tmp_path):
    reworded = BODY.replace("The loss fell from 2.50 to 1.25 after 8 steps, a drop of 50 %",
                            "From 2.50 the loss went down to 1.25 in only 8 steps, halving it (50%)")
    # the run(17) cell's source changes too: code is not what the reader is told
    reworded = reworded.replace('<span class="mi">17</span>', '<span class="mi">18</span>')
    result = compare(tmp_path, BODY, reworded, "--fail-on-change")
    assert result.returncode == 0, result.stdout
    assert result.stdout.strip() == "1 pages, 22 numbers before, 22 after, 0 changed, 0 removed, 0 added"
    assert compare(tmp_path, BODY, reworded, "--code").stdout.count("changed  17 -> 18") == 1


def test_a_sentence_moved_from_an_output_into_the_prose_is_no_change(tmp_path):
    # printed by the package into a cell's output, with the maths in the text ...
    before = BODY + ('<div class="cell_output"><div class="output text_html">'
                     '<p>Every gap is below 1e-10 at \\(\\kappa = 1\\), over 3 runs.</p></div></div>')
    # ... and written in the chapter's Markdown, reworded, the maths typeset by MyST
    after = BODY + ('<p>All gaps are below 1e-10 at <span class="math notranslate nohighlight">\\(\\kappa=1\\)</span>'
                    ' (3 runs).</p>')
    result = compare(tmp_path, before, after, "--fail-on-change")
    assert result.returncode == 0, result.stdout


def test_an_inserted_sentence_shows_as_its_numbers_added_and_nothing_else(tmp_path):
    inserted = BODY.replace("<p>With ", "<p>We reran it 4 times with 0.5 noise.</p><p>With ")
    result = compare(tmp_path, BODY, inserted)
    out = result.stdout
    assert "only after   4" in out and "only after   0.5" in out
    assert not [line for line in out.splitlines() if line.startswith(("  changed", "  only before"))], out
    assert "We reran it [4] times with 0.5 noise." in out
    assert out.strip().splitlines()[-1] == "1 pages, 22 numbers before, 24 after, 0 changed, 0 removed, 2 added"


def test_removed_numbers_and_pages_are_named(tmp_path):
    shorter = BODY.replace("<figcaption>Figure 3: the latents.</figcaption>", "")
    before = snap(tmp_path, BODY, "before")
    build = write_build(tmp_path / "build-after", shorter)
    write_build(build, "<p>A new page with 7 numbers.</p>", name="book/new.html")
    after = tmp_path / "after.json"
    assert run("snapshot", build, after).returncode == 0
    out = run("compare", before, after).stdout
    assert "page added: book/new.html (2 numbers)" in out  # its heading's 4 and the 7
    assert "only before  3\n      [4.1. Results] Figure [3]: the latents." in out
    assert out.strip().splitlines()[-1] == "2 pages, 22 numbers before, 23 after, 0 changed, 1 removed, 2 added"


def test_fail_on_change_exits_1_when_anything_differs(tmp_path):
    assert compare(tmp_path, BODY, BODY.replace("0.873", "0.874"), "--fail-on-change").returncode == 1
    assert compare(tmp_path, BODY, BODY.replace("0.873", "0.874")).returncode == 0
    same = compare(tmp_path, BODY, BODY, "--fail-on-change")
    assert same.returncode == 0 and "0 changed, 0 removed, 0 added" in same.stdout


def test_unreadable_inputs_exit_2_with_a_message(tmp_path):
    good = snap(tmp_path, BODY, "good")
    missing = run("compare", tmp_path / "missing.json", good)
    assert missing.returncode == 2 and "cannot read snapshot" in missing.stderr
    (tmp_path / "other.json").write_text('{"pages": []}')
    other = run("compare", good, tmp_path / "other.json")
    assert other.returncode == 2 and "is not a page-numbers snapshot" in other.stderr
    nothing = run("snapshot", tmp_path / "no-build", tmp_path / "out.json")
    assert nothing.returncode == 2 and "is not a folder" in nothing.stderr


def test_ignore_page_leaves_a_page_out(tmp_path):
    result = compare(tmp_path, BODY, BODY.replace("0.873", "0.874"), "--fail-on-change",
                     "--ignore-page", "book/chap*.html")
    assert result.returncode == 0, result.stdout
    assert result.stdout.splitlines() == ["not compared: book/chapter.html",
                                          "0 pages, 0 numbers before, 0 after, 0 changed, 0 removed, 0 added"]


def test_mathjax_typeset_copies_and_hidden_assistive_maths_are_not_read_twice(tmp_path):
    # a page saved from a browser: MathJax 3's output with its hidden MathML copy, and MathJax 2's preview and
    # source script; only MathJax 2's source is a formula token, no digit of the copies is a number
    body = ('<p>At <span class="math notranslate nohighlight"><mjx-container class="MathJax"><mjx-math>'
            '<mjx-mn>30</mjx-mn></mjx-math><mjx-assistive-mml><math><mn>30</mn></math></mjx-assistive-mml>'
            '</mjx-container></span> and <span class="MathJax_Preview">x = 5</span><span class="MathJax">'
            '<span class="mn">5</span></span><script type="math/tex">x = 5</script> only.</p>')
    assert [(t["kind"], t["text"]) for t in tokens(tmp_path, body)][1:] == [("math", "\\(x = 5\\)")]
