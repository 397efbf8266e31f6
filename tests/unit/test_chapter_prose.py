"""Conventions of the chapters' prose that a reader on Colab or in the sidebar depends on.

- Cross-references are Markdown links to the chapter's notebook (``[name](file.ipynb)``), which MyST resolves to the
  document and Colab/JupyterLab show as links; a bare "chapter 4" would not match the numbered sidebar, where the data
  page comes first.
- Solutions use the colon-fence ``:::{dropdown}`` form: on Colab, where MyST directives are not rendered, its body is
  still ordinary Markdown with rendered maths, while a backtick-fenced directive shows as a raw code block.
- No sentence refers to notes the reader cannot see.
"""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "book").glob("*.ipynb"))
PAGES = CHAPTERS + [ROOT / "book" / "intro.md"]


def markdown(path):
    if path.suffix == ".md":
        return path.read_text(encoding="utf-8")
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_no_bare_chapter_numbers(path):
    text = markdown(path)
    assert not re.findall(r"\b[Cc]hapters? \d", text), "refer to a chapter by a link to its notebook"


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_links_point_to_pages_of_the_book(path):
    for target in re.findall(r"\]\(([^)#\s]+\.(?:ipynb|md))(?:#[^)]*)?\)", markdown(path)):
        assert (path.parent / target).is_file(), target


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_solutions_read_on_colab(path):
    text = markdown(path)
    assert "```{admonition}" not in text and "````{dropdown}" not in text and "```{dropdown}" not in text
    opened = len(re.findall(r"^:::\{dropdown\}", text, flags=re.M))
    closed = len(re.findall(r"^:::\s*$", text, flags=re.M))
    assert opened == closed


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_no_reference_to_unseen_notes(path):
    assert not re.search(r"\bthe notes\b|\bnotes'|\bnotes section\b", markdown(path))
