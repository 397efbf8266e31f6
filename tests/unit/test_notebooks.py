"""Chapter notebooks follow the book's conventions and match their sources."""

import json
import re
from pathlib import Path

import pytest
import yaml

from tests.tool_modules import tool

ROOT = Path(__file__).resolve().parents[2]
notebooks = tool("notebooks")  # tools/notebooks.py: the repository's notebook tooling


def toc_notebooks():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [c["file"] for c in toc.get("chapters", [])]
    for part in toc.get("parts", []):
        files += [c["file"] for c in part["chapters"]]
    return [ROOT / f"{f}.ipynb" for f in files if (ROOT / f"{f}.ipynb").exists()]


def test_every_toc_entry_exists():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    for entry in [toc["root"]] + [c["file"] for c in toc["chapters"]]:
        assert any((ROOT / f"{entry}{ext}").exists() for ext in (".md", ".ipynb")), entry


@pytest.mark.parametrize("path", toc_notebooks(), ids=lambda p: p.name)
def test_notebook_conventions(path):
    """Colab install cell first, no outputs, python3 kernel."""
    assert notebooks.problems(path) == []


@pytest.mark.parametrize("path", toc_notebooks(), ids=lambda p: p.name)
def test_colab_cell_installs_only_on_colab_and_never_touches_the_network(path):
    cell = json.loads(path.read_text())["cells"][0]
    src = "".join(cell["source"])
    assert 'if "google.colab" in sys.modules and importlib.util.find_spec("probdr_lite") is None:' in src
    assert notebooks.repository_url() in src and f"@{notebooks.COLAB_REF}" in src
    # outside Colab the guarded block must not run: execute it with a stub that would fail loudly
    code = src.replace("    %pip", "    raise AssertionError('would install') #")
    exec(compile(code, str(path), "exec"), {})


@pytest.mark.parametrize("path", toc_notebooks(), ids=lambda p: p.name)
def test_notebook_is_jupytexts_conversion_of_its_source(path):
    """Chapters are written in book/src/*.py (percent format); the .ipynb is Jupytext's conversion of it, read here
    by Jupytext directly (not through the package), with no outputs and no execution counts."""
    import jupytext

    src = ROOT / "book" / "src" / f"{path.stem}.py"
    assert src.exists(), f"{path.name} has no source book/src/{src.name}"
    expected = jupytext.read(src, fmt="py:percent")
    committed = json.loads(path.read_text())
    hint = "run: python tools/notebooks.py sync"
    assert [c["cell_type"] for c in committed["cells"]] == [c.cell_type for c in expected.cells], hint
    for ours, theirs in zip(committed["cells"], expected.cells):
        assert ours["source"] == theirs.source, hint
        assert ours["metadata"].get("tags", []) == theirs.metadata.get("tags", []), hint
        if ours["cell_type"] == "code":  # stripped, as nbstripout leaves a notebook
            assert ours["outputs"] == [] and ours["execution_count"] is None
    assert set(committed["metadata"]) <= {"kernelspec", "language_info"}  # no widget state, no Jupytext header


@pytest.mark.parametrize("src", sorted((ROOT / "book" / "src").glob("*.py")), ids=lambda p: p.name)
def test_every_source_starts_with_the_tagged_colab_cell(src):
    import jupytext

    first = jupytext.read(src, fmt="py:percent").cells[0]
    assert first.cell_type == "code" and first.metadata.get("tags") == notebooks.COLAB_TAGS
    assert first.source == notebooks.colab_cell_source()
    assert (ROOT / "book" / f"{src.stem}.ipynb").exists(), "run: python tools/notebooks.py sync"


def test_sync_writes_a_notebook_and_adds_the_colab_cell(tmp_path):
    src_dir = tmp_path / "book" / "src"
    src_dir.mkdir(parents=True)
    src = src_dir / "toy.py"
    src.write_text('# %% [markdown]\n# # A toy\n\n# %% tags=["hide-input"]\nx = 1\n', encoding="utf-8")
    changed = notebooks.sync([src])
    nb_path = tmp_path / "book" / "toy.ipynb"
    assert src in changed and nb_path in changed
    nb = json.loads(nb_path.read_text())
    assert [c["cell_type"] for c in nb["cells"]] == ["code", "markdown", "code"]
    assert nb["cells"][2]["metadata"] == {"tags": ["hide-input"]} and nb["cells"][1]["source"] == "# A toy"
    assert notebooks.problems(nb_path) == []
    assert notebooks.sync([src]) == []  # a second run changes nothing
    nb["cells"][2]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "1"}]
    nb_path.write_text(json.dumps(nb))
    assert any("outputs" in p for p in notebooks.problems(nb_path))


@pytest.mark.parametrize("path", toc_notebooks(), ids=lambda p: p.name)
def test_chapter_title_has_no_maths(path):
    """The title appears in the sidebar of every page, and pages without maths do not load MathJax:
    a $...$ in a title would show as raw TeX there (write A − I, κ, η in Unicode instead)."""
    cells = json.loads(path.read_text())["cells"]
    title = next(l for c in cells if c["cell_type"] == "markdown"
                 for l in "".join(c["source"]).splitlines() if l.startswith("# "))
    assert "$" not in title and "\\(" not in title, title


# --- reader notebooks (notebooks/jupyter, notebooks/colab): the chapters written out for launching ---------------

READER = ROOT / notebooks.reader_folder()
CHAPTERS = notebooks.reader_chapters()
READERS = [(name, flavour) for name, _ in CHAPTERS for flavour in notebooks.FLAVOURS]


def _reader(name, flavour):
    return json.loads(notebooks.reader_path(name, flavour).read_text(encoding="utf-8"))


def _markdown(nb):
    return "\n\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")


def test_every_chapter_of_the_toc_has_its_reader_notebooks():
    """Read from _toc.yml: every page written in book/src gets both flavours, and nothing else is there."""
    toc_chapters = [Path(p).name for p in notebooks.toc_pages() if (ROOT / Path(p).parent / "src" /
                                                                       f"{Path(p).name}.py").exists()]
    assert [name for name, _ in CHAPTERS] == toc_chapters and len(toc_chapters) >= 9
    expected = {notebooks.reader_path(n, f) for n, f in READERS}
    assert set(READER.rglob("*.ipynb")) == expected


def test_reader_notebooks_equal_their_generation():
    """The folder is generated (make notebooks); a stale or hand-edited file fails here."""
    for path, text in notebooks.reader_texts().items():
        assert path.exists(), f"{path.relative_to(ROOT)} is missing: run make notebooks"
        assert path.read_text(encoding="utf-8") == text, f"{path.relative_to(ROOT)} is stale: run make notebooks"


@pytest.mark.parametrize("name,flavour", READERS, ids=lambda x: x)
def test_reader_notebook_has_no_myst_no_book_tags_no_live_figure(name, flavour):
    assert notebooks.reader_problems(notebooks.reader_path(name, flavour)) == []


#: What only the book's site has: a sentence of a reader notebook that names one of these names the site too.
SITE_ONLY = re.compile(r"rocket menu|Live Code|move without a kernel|live figure", re.IGNORECASE)


@pytest.mark.parametrize("name,flavour", READERS, ids=lambda x: x)
def test_reader_notebook_promises_only_what_it_has(name, flavour):
    """Opened on Colab, Binder or in Jupyter, a notebook says nothing that is true only on the site: a sentence
    about Live Code, the rocket menu or figures that move without a kernel says that it means the site, and the
    note under the title promises such figures only for a chapter that has them (a live figure in its source)."""
    nb = json.loads(notebooks.reader_path(name, flavour).read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        for sentence in re.split(r"(?<=[.!?:])\s+", text.replace("\n", " ")):
            if SITE_ONLY.search(sentence):
                assert "site" in sentence, (name, flavour, sentence)
    src = dict(CHAPTERS)[name].read_text(encoding="utf-8")
    note = next("".join(c["source"]) for c in nb["cells"] if "written out for" in "".join(c["source"]))
    assert ("move without a kernel" in note) == (notebooks.LIVE_MODULE in src), (name, note)


@pytest.mark.parametrize("text,kind", [
    ("as shown {cite:p}`ravuri2025transformers`", "role"),
    ("see {ref}`sec-x` and {numref}`fig-y`", "role"),
    (":::{dropdown} Solution\nbody\n:::", "directive"),
    ("```{note}\nbody\n```", "directive"),
    ("body\n:::", "colon fence"),
    ("(sec-x)=\n# Heading", "target"),
    ("% a MyST comment", "comment"),
    ("+++", "block break"),
    ("{{ substitution }}", "substitution"),
    ("[intro](intro.md)", "link to a MyST page"),
])
def test_the_scanner_catches_each_kind_of_myst(text, kind):
    assert any(f.startswith(kind) for f in notebooks.myst_leftovers(text)), (text, notebooks.myst_leftovers(text))


def test_the_scanner_leaves_plain_markdown_alone():
    text = ("A [link](https://arxiv.org/abs/2507.21040), `code {x}` in code, $A - I$, $$x$$,\n\n"
            "<details>\n<summary>Solution</summary>\n\n**bold**\n\n</details>\n\n```python\n:::{not myst here}\n```")
    assert notebooks.myst_leftovers(text) == []


@pytest.mark.parametrize("name,src", CHAPTERS, ids=lambda x: str(x))
def test_citations_become_author_year_links(name, src):
    """Every {cite:p}/{cite:t} of the source becomes "(Author, Year)" linking to the entry's URL or DOI (or the
    references page), and the notebook ends with the chapter's references."""
    import jupytext

    source = "\n".join(c.source for c in jupytext.read(src, fmt="py:percent").cells if c.cell_type == "markdown")
    keys = [k.strip() for group in re.findall(r"\{cite(?::\w+)?\}`([^`]+)`", source) for k in group.split(",")]
    bib = notebooks.bibliography()
    for flavour in notebooks.FLAVOURS:
        text = _markdown(_reader(name, flavour))
        for key in keys:
            entry = bib[key]
            url = entry["url"] or notebooks.pages_url() + "book/references.html"
            assert f"{entry['year']}]({url})" in text or f"({entry['year']})]({url})" in text, key
            assert entry["title"] in text.split("## References", 1)[-1], f"{key} missing from the references"
        if not keys:
            assert "## References" not in text


def test_every_reference_of_the_bibliography_renders():
    """All keys of references.bib at once (new ones included): each gets its author, year and link."""
    bib = notebooks.bibliography()
    ctx = notebooks._Context("jupyter")
    text = notebooks.markdown_for_reader("{cite:p}`" + ",".join(bib) + "` and {cite:t}`" + next(iter(bib)) + "`",
                                          ctx)
    for key, entry in bib.items():
        assert entry["authors"] and re.fullmatch(r"\d{4}", entry["year"]), key
        assert f"{notebooks._authors(entry)}, {entry['year']}]" in text, key
    assert ctx.cited == list(bib)
    with pytest.raises(ValueError, match="not in references.bib"):
        notebooks.markdown_for_reader("{cite:p}`no_such_key`", ctx)


def test_author_year_labels_follow_the_sites_style():
    one = {"authors": ["Belkin"], "year": "2003", "title": "t"}
    two = {"authors": ["Ravuri", "Lawrence"], "year": "2026", "title": "t"}
    four = {"authors": ["Ravuri", "Vargas", "Lalchand", "Lawrence"], "year": "2023", "title": "t"}
    assert [notebooks._authors(e) for e in (one, two, four)] == ["Belkin", "Ravuri and Lawrence", "Ravuri et al."]


@pytest.mark.parametrize("name,src", CHAPTERS, ids=lambda x: str(x))
def test_dropdowns_become_closed_details(name, src):
    """Every dropdown, in a plain Markdown cell or in one whose numbers are pasted (a ``paste`` cell), is folded."""
    text = src.read_text(encoding="utf-8")
    n = len(re.findall(r"^# :::\{dropdown\}", text, re.M))
    for flavour in notebooks.FLAVOURS:
        nb = _reader(name, flavour)
        pasted = ["".join(c["source"]) for c in nb["cells"]
                  if c["cell_type"] == "code" and "paste(r" in "".join(c["source"])]
        md = "\n\n".join([_markdown(nb)] + pasted)
        assert md.count("<details>") == md.count("</details>") == md.count("<summary>") == n
        assert "<details open" not in md


@pytest.mark.parametrize("name,src", CHAPTERS, ids=lambda x: str(x))
def test_links_between_chapters_work_where_the_notebook_is_opened(name, src):
    """Jupyter: a relative path to a sibling reader notebook that exists. Colab: the sibling's Colab URL on the
    branch of _config.yml. Pages without a notebook (the introduction): the site."""
    url, branch = notebooks.repository()
    owner_name = url.split("github.com/")[1]
    for flavour in notebooks.FLAVOURS:
        for target in re.findall(r"\]\(([^)\s]+)\)", _markdown(_reader(name, flavour))):
            if flavour == "jupyter" and not re.match(r"[a-z]+:", target):
                assert (notebooks.reader_path(name, flavour).parent / target.split("#")[0]).is_file(), target
            elif "colab.research.google.com" in target:
                assert flavour == "colab", target
                prefix = f"https://colab.research.google.com/github/{owner_name}/blob/{branch}/"
                assert target.startswith(prefix), target
                assert (ROOT / target[len(prefix):]).is_file() and "/colab/" in target, target
            else:
                assert re.match(r"https://", target), f"{name} ({flavour}): relative link {target!r}"
            assert not target.endswith(".md"), target


def test_link_rewriting(tmp_path):
    jupyter, colab = notebooks._Context("jupyter"), notebooks._Context("colab")
    assert notebooks._link_target("probdr_elbo.ipynb#the-elbo", False, jupyter) == "probdr_elbo.ipynb#the-elbo"
    assert notebooks._link_target("probdr_elbo.ipynb", False, colab) == notebooks.launch_urls("probdr_elbo")["colab"]
    assert notebooks._link_target("intro.md", False, jupyter) == notebooks.pages_url() + "book/intro.html"
    assert notebooks._link_target("../LICENSE", False, jupyter).endswith("/blob/main/LICENSE")
    with pytest.raises(ValueError, match="does not exist"):
        notebooks._link_target("no_such_chapter.ipynb", False, jupyter)


def test_numbered_equations_carry_the_sites_numbers():
    """A labelled equation ($$ (elbo)) and its citations ({eq}`elbo`) read in Jupyter and Colab as the site numbers
    them: chapter.k, the chapter's labelled equations counted in page order."""
    ctx = notebooks._Context("jupyter")
    ctx.equations = notebooks.equation_numbers(["$$\nE = 1\n$$ (elbo)", "so\n\n$$\ns = 2\n$$ (shrinkage)"], 3)
    assert ctx.equations == {"elbo": "3.1", "shrinkage": "3.2"}
    text = notebooks.markdown_for_reader("$$\nE = 1\n$$ (elbo)\n\nBy {eq}`shrinkage` and {eq}`elbo`.", ctx)
    assert text == "$$\nE = 1\n\\tag{3.1}\n$$\n\nBy (3.2) and (3.1)."
    assert notebooks.myst_leftovers(text) == []
    with pytest.raises(ValueError, match="cites no labelled equation"):
        notebooks.markdown_for_reader("By {eq}`missing`.", ctx)
    with pytest.raises(ValueError, match="more than once"):
        notebooks.equation_numbers(["$$\na\n$$ (x)", "$$\nb\n$$ (x)"], 1)
    # across the book: the ELBO chapter's (elbo) is its first labelled equation, numbered with the chapter's place
    pages = notebooks.toc_pages(ROOT / "_toc.yml")
    chapter = next(i for i, p in enumerate(pages) if p.endswith("/probdr_elbo"))
    assert notebooks.book_equations(ROOT)["elbo"] == f"{chapter}.1"


@pytest.mark.parametrize("name,src", CHAPTERS, ids=lambda x: str(x))
def test_site_only_cells_are_left_out_and_helper_cells_folded(name, src):
    import jupytext

    cells = jupytext.read(src, fmt="py:percent").cells
    live = notebooks._live_names(cells)  # a hidden cell that only draws a live figure is left out, not folded
    hidden = [c for c in cells if c.cell_type == "code" and notebooks.HIDDEN_TAGS & set(c.metadata.get("tags", []))
              and "colab" not in c.metadata.get("tags", []) and notebooks._without_live(c.source, live)]
    site_only = [c for c in cells if notebooks.SITE_ONLY_TAG in c.metadata.get("tags", [])]
    for flavour in notebooks.FLAVOURS:
        nb = _reader(name, flavour)
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        folded = [c for c in code if "".join(c["source"]).startswith(notebooks.HIDDEN_TITLE)]
        assert len(folded) == len(hidden)
        for c in folded:
            assert c["metadata"]["cellView"] == "form" and c["metadata"]["jupyter"]["source_hidden"] is True
        text = json.dumps(nb)
        for c in site_only:
            assert c.source.split("\n")[0] not in text
        # the install cell comes first, folded too, and is the one every chapter starts with
        assert "".join(code[0]["source"]) == notebooks.colab_cell_source()


def test_live_figure_calls_are_removed_and_nothing_else():
    names = {"toy_live"}
    src = "etas = [1, 2]  # kept\ntoy_live(toy)\n"
    assert notebooks._without_live(src, names) == "etas = [1, 2]  # kept"
    assert notebooks._without_live("toy_live(toy)\n", names) == ""
    imports = "import numpy as np\nfrom probdr_lite.presentation.live.builders import toy_live\nfrom x import y\n"
    assert notebooks._without_live(imports, names) == "import numpy as np\nfrom x import y"
    assert notebooks._without_live("fig = other(toy_live)\n", names) == "fig = other(toy_live)\n"


def test_a_paragraph_with_glued_numbers_reads_on_colab_and_jupyter(tmp_path, monkeypatch):
    """A reader notebook shows the author's paragraph with its numbers: a folded cell pastes what the kernel glued."""
    from probdr_lite.presentation import prose

    text = "The energy falls to {glue:text}`e_after` ($\\lambda$ fixed), see [the ELBO](probdr_elbo.ipynb)."
    ctx = notebooks._Context("colab")
    source = notebooks.paste_cell_source(notebooks.markdown_for_reader(text, ctx))
    assert source.startswith(notebooks.PASTE_TITLE)
    assert notebooks.launch_urls("probdr_elbo")["colab"] in source  # the link is rewritten for Colab
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, **kw: shown.append(obj))
    prose.glue("e_after", "0.123")
    exec(compile(source, "<reader cell>", "exec"), {})
    assert shown[-1].data.startswith("The energy falls to 0.123 ($\\lambda$ fixed), see [the ELBO](https://")
    with pytest.raises(ValueError, match="double quotes"):
        notebooks.paste_cell_source('He said """no""".')
