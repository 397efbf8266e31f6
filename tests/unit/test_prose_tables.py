"""tools/prose_tables.py: the share of a chapter's prose that reads its own tables out (issue 35, item 4).

The pages are small hand-written imitations of sphinx-book-theme's (an ``<article class="bd-article">`` inside
navigation), with a Markdown table, a table a code cell printed, a printed ``<pre>`` output and paragraphs; the
shares are counted by hand from the words written here.
"""

import subprocess
import sys
from pathlib import Path

import pytest

from tests.tool_modules import tool

ROOT = Path(__file__).resolve().parents[2]
PT = tool("prose_tables")

PAGE = """<!DOCTYPE html><html><head><title>t</title><script>var v = "0.463 0.029";</script></head><body>
<nav><p>Chapter 0.463 of 0.029 (navigation is not the article)</p></nav>
<article class="bd-article"><section><h1>A chapter<a class="headerlink" href="#">#</a></h1>
{body}
</section></article></body></html>"""

TABLES = """
<table><thead><tr><th>layer</th><th>NMI</th></tr></thead>
<tbody><tr><td>0</td><td>0.463 ± 0.029</td></tr><tr><td>8</td><td>0.476 ± 0.006</td></tr></tbody></table>
<div class="cell docutils container"><div class="cell_input"><pre>x = 0.776; y = 0.913</pre></div>
<div class="cell_output"><table><tr><td>1,250</td><td>−0.0752</td><td>36 %</td><td>1.5e-03</td></tr></table>
<pre>printed 0.5 and 0.25</pre></div></div>
"""


def _share(body):
    return PT.page_share(PAGE.format(body=TABLES + body))


def test_a_sentence_with_two_table_numbers_reads_the_table_out_and_one_with_one_does_not():
    result = _share("<p>The NMI is 0.463 at layer 0 and 0.476 at layer 8. It barely moves, by 0.013 in all.</p>")
    assert result["words"] == 12 + 7
    assert result["reciting"] == 12
    assert result["share"] == pytest.approx(12 / 19)
    assert [s for s, _ in result["sentences"]] == ["The NMI is 0.463 at layer 0 and 0.476 at layer 8."]
    assert result["sentences"][0][1] == [0.463, 0.476]
    assert result["tables"] == 2


def test_numbers_from_a_printed_table_count_with_their_sign_and_format_left_aside():
    # -0.0752 (Unicode minus), 1.5e-03 and 36 % stand in the printed table
    result = _share("<p>It moves by +0.0752 to 0.0015 there. A share of 36 % and 0.0752 again.</p>")
    assert result["reciting"] == 7 + 8  # "%" stands apart, a word of its own


def test_integers_zero_code_and_printed_text_are_not_table_numbers():
    body = ("<p>After 8 blocks of 1,250 and 8 layers in 2021 the interval ends at 0.000.</p>"
            "<p>The code set 0.776 and 0.913, and printed 0.5 and 0.25.</p>")
    result = _share(body)
    assert result["reciting"] == 0
    assert result["words"] == 15 + 11


def test_prose_inside_a_table_or_an_output_is_not_prose():
    body = ("<table><tr><td><p>The NMI is 0.463 and 0.476.</p></td></tr></table>"
            "<div class='cell_output'><p>0.463 and 0.476 printed.</p></div><p>Plain words here.</p>")
    result = _share(body)
    assert (result["words"], result["reciting"]) == (3, 0)


def test_sentences_split_after_a_full_stop_but_not_inside_a_decimal():
    assert PT.sentences("It is 0.463. Then (see 4.1) it is 0.476! Done") == [
        "It is 0.463.", "Then (see 4.1) it is 0.476!", "Done"]


def test_measured_numbers():
    assert PT.measured_numbers("8 layers, 2,000 images, 1999, 0.50, −3.5e-04, 12 %, 0, +0.000") == {
        0.5, 3.5e-04, 12.0}


def _site(tmp_path, share_words):
    html = tmp_path / "html"
    (html / "book").mkdir(parents=True)
    (html / "_static").mkdir()
    prose = "<p>The NMI is 0.463 at layer 0 and 0.476 at layer 8.</p>" + "<p>Plain words.</p>" * share_words
    (html / "book" / "chapter.html").write_text(PAGE.format(body=TABLES + prose), encoding="utf-8")
    (html / "_static" / "skipped.html").write_text(PAGE.format(body=TABLES + prose), encoding="utf-8")
    (html / "index.html").write_text("<meta http-equiv='refresh' content='0; url=book/chapter.html'>")
    return html


def test_the_script_lists_pages_and_fails_above_its_limit(tmp_path):
    over = subprocess.run([sys.executable, str(ROOT / "tools" / "prose_tables.py"), str(_site(tmp_path, 10)),
                           "--limit", "0.1", "--sentences"], capture_output=True, text=True)
    assert over.returncode == 1, over.stdout + over.stderr
    assert "book/chapter.html" in over.stdout and "_static" not in over.stdout
    assert "The NMI is 0.463 at layer 0 and 0.476 at layer 8." in over.stdout
    assert "above 10%: book/chapter.html" in over.stdout


def test_the_script_passes_at_or_below_its_limit_and_rejects_a_missing_folder(tmp_path):
    # 12 words recite, 12 + 2 * 50 = 112 in all: 10.7 % with 50 plain paragraphs, 9.8 % with 56
    ok = subprocess.run([sys.executable, str(ROOT / "tools" / "prose_tables.py"), str(_site(tmp_path, 56)),
                         "--limit", "0.1"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    missing = subprocess.run([sys.executable, str(ROOT / "tools" / "prose_tables.py"), str(tmp_path / "none")],
                             capture_output=True, text=True)
    assert missing.returncode == 2 and "not a folder" in missing.stderr
