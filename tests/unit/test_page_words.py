"""tools/page_words.py: a chapter's prose, printed-output and rendered words (issues 42.6, 43.2-3).

The page is a small hand-written imitation of sphinx-book-theme's (an ``<article class="bd-article">`` inside
navigation) with every kind of text the tool tells apart; the counts are made by hand from the words written here.
"""

import pytest

from tests.tool_modules import tool

PW = tool("page_words")

PAGE = """<!DOCTYPE html><html><head><title>t t t</title><script>var a = "one two";</script></head><body>
<nav><p>navigation is not the article at all</p></nav>
<article class="bd-article"><section><h1>A chapter<a class="headerlink" href="#">#</a></h1>
<p>Five words of plain prose.</p>
<ul><li>a list item of seven words</li></ul>
<p>Maths <span class="math notranslate nohighlight">\\(A - I\\)</span> counts once.</p>
<table><tr><td>three table words</td></tr></table>
<div class="cell docutils container"><div class="cell_input"><pre>x = 1  # code is not counted</pre></div>
<div class="cell_output"><div class="output stream"><pre>printed four words here</pre></div>
<table><tr><td>two cells</td></tr></table></div></div>
<details><summary>Solution</summary><p>folded words are not counted</p></details>
<p hidden>hidden words</p><p style="display: none">more hidden words</p>
</section></article><footer><p>footer words</p></footer></body></html>"""


def test_prose_output_and_rendered_words_are_counted_apart():
    words = PW.page_words(PAGE)
    assert words["prose"] == 5 + 6 + 4  # paragraphs and list items; the formula is one word
    assert words["output"] == 4  # the printout, not the table the cell displayed
    assert words["rendered"] == 2 + 5 + 6 + 4 + 3 + 4 + 2  # heading, prose, table, printout, displayed table


def test_limits_name_the_page_and_what_is_over():
    words = {"book/energies": {"prose": 3301, "output": 0, "rendered": 10}, "book/data": {"prose": 1, "output": 1,
                                                                                       "rendered": 1}}
    assert PW.over_limits(words) == [("book/energies", "prose", 3301, 3300)]


def test_the_command_line_exits_2_on_a_folder_without_a_book(tmp_path, capsys):
    assert PW.main([str(tmp_path)]) == 2
    book = tmp_path / "book"
    book.mkdir()
    (book / "energies.html").write_text(PAGE.replace("Five words of plain prose.", "word " * 3400))
    assert PW.main([str(tmp_path), "--check"]) == 1
    assert "book/energies: prose" in capsys.readouterr().out


@pytest.mark.parametrize("limit", list(PW.LIMITS.values()))
def test_every_limit_is_a_prose_output_rendered_triple(limit):
    assert len(limit) == 3 and limit[0] > 0 and limit[1] > 0
