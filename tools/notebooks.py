"""Conventions for the chapter notebooks, and the one command that writes them from their sources.

Repository tooling, like the rest of ``tools/`` and not part of the installed package: it reads ``_config.yml``,
``_toc.yml``, ``pyproject.toml``, ``references.bib`` and ``book/src`` from the repository root (:data:`ROOT`).

Chapters are written in ``book/src/NAME.py`` in Jupytext's percent format; ``book/NAME.ipynb`` is Jupytext's
conversion of that file, never edited by hand. Every chapter

- starts with the Colab cell, a code cell tagged ``colab`` and ``remove-cell`` whose text is
  :func:`colab_cell_source` (it installs ``probdr_lite`` only on Colab, and only when the import fails; anywhere else
  it does nothing and touches no network);
- is committed without outputs or execution counts (the book build executes it), like ``nbstripout`` leaves it;
- uses the ``python3`` kernel.

``python tools/notebooks.py sync`` (or ``make notebooks``) refreshes the Colab cell in every source and
rewrites every notebook from its source; ``python tools/notebooks.py check`` reports notebooks that break a
rule or differ from their source (the tests call :func:`problems`).
``badges`` prints README's badges. The repository URL and branch come from ``_config.yml`` and from
nowhere else.
"""

from __future__ import annotations

import functools
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "_config.yml"


def _config(config_path: Path = CONFIG) -> dict:
    import yaml  # a build and test dependency; reading the notebooks on Colab never gets here

    return yaml.safe_load(Path(config_path).read_text(encoding="utf-8"))


def repository(config_path: Path = CONFIG) -> tuple[str, str]:
    """``(url, branch)`` of the repository, from ``_config.yml``: the one place they are set.

    The branch is what the book's launch buttons (Binder, Colab) open, and so the ref the
    Colab cell installs the package from: notebook and package come from the same commit.
    """
    repo = _config(config_path).get("repository") or {}
    url, branch = repo.get("url"), repo.get("branch")
    if not (isinstance(url, str) and re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", url)):
        raise ValueError(f"repository.url in {config_path} must be https://github.com/OWNER/NAME, got {url!r}")
    if not (isinstance(branch, str) and re.fullmatch(r"[\w./-]+", branch)):
        raise ValueError(f"repository.branch in {config_path} must be a branch or tag name, got {branch!r}")
    return url, branch


def repository_url(config_path: Path = CONFIG) -> str:
    """The repository URL, read from ``_config.yml``."""
    return repository(config_path)[0]


def colab_ref(config_path: Path = CONFIG) -> str:
    """The ref the Colab cell installs: ``repository.branch``, the one the launch buttons open."""
    return repository(config_path)[1]


def __getattr__(name):
    # COLAB_REF is read from _config.yml when asked for, not at import time
    if name == "COLAB_REF":
        return colab_ref()
    raise AttributeError(name)


def pages_url(config_path: Path = CONFIG) -> str:
    """Where .github/workflows/pages.yml publishes the site (GitHub Pages of the repository)."""
    owner, name = repository_url(config_path).rstrip("/").split("/")[-2:]
    return f"https://{owner.lower()}.github.io/{name}/"


def project_urls(config_path: Path = CONFIG) -> dict[str, str]:
    """``[project.urls]`` of pyproject.toml, as they follow from ``_config.yml`` (a test compares)."""
    url = repository_url(config_path)
    return {"Homepage": pages_url(config_path), "Source": url, "Issues": f"{url}/issues"}


def first_notebook(toc_path: Path = ROOT / "_toc.yml") -> str:
    import yaml

    toc = yaml.safe_load(Path(toc_path).read_text(encoding="utf-8"))
    chapters = toc.get("chapters") or [c for part in toc.get("parts", []) for c in part["chapters"]]
    return f"{chapters[0]['file']}.ipynb"


def readme_badges(config_path: Path = CONFIG) -> str:
    """The badges at the top of README.md: CI, the published book, and Binder and Colab on the first chapter's
    reader notebooks (the same URLs as the book's launch buttons: :func:`launch_urls`)."""
    url, branch = repository(config_path)
    name = Path(first_notebook(Path(config_path).parent / "_toc.yml")).stem
    config = _config(config_path)
    binder = config["launch_buttons"]["binderhub_url"].rstrip("/")
    colab = config["launch_buttons"]["colab_url"].rstrip("/")
    launch = launch_urls(name, config_path)
    return "\n".join([
        f"[![CI]({url}/actions/workflows/ci.yml/badge.svg?branch={branch})]({url}/actions/workflows/ci.yml)",
        f"[![Book]({url}/actions/workflows/pages.yml/badge.svg?branch={branch})]({pages_url(config_path)})",
        f"[![Binder]({binder}/badge_logo.svg)]({launch['binder']})",
        f"[![Open in Colab]({colab}/assets/colab-badge.svg)]({launch['colab']})",
    ])


def _runtime_requirement_names() -> list[str]:
    """The distribution names of pyproject.toml's run-time requirements (the Colab cell checks they are present)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [re.match(r"[A-Za-z0-9_.-]+", r).group(0).lower() for r in project["dependencies"]]


#: The first line of the Colab cell: Colab shows the cell as a collapsed form with this title.
COLAB_TITLE = '#@title Colab only: install this book\'s helper package { display-mode: "form" }'


def colab_cell_source(url: str | None = None, ref: str | None = None) -> str:
    """Source of the first cell of every chapter (and of every reader notebook).

    On Colab it installs the package from the branch the launch buttons open, when it is missing. Colab already
    has every run-time requirement (``tests/unit/test_colab.py`` checks its pinned versions), so the install is
    ``--no-deps`` whenever all of them are present: pip then adds this package and nothing else. A plain install
    would also add ``jedi``, which Colab's IPython 7.34 declares and Colab leaves out. Where one is missing (a
    future Colab), the plain install brings it.
    """
    url = url or repository_url()
    ref = ref or colab_ref()
    names = ", ".join(f'"{n}"' for n in _runtime_requirement_names())
    return (
        f"{COLAB_TITLE}\n"
        "# Anywhere else (the book build, Binder, Jupyter, a local checkout) this cell does nothing.\n"
        "import importlib.metadata, importlib.util, re, sys\n"
        "if \"google.colab\" in sys.modules and importlib.util.find_spec(\"probdr_lite\") is None:\n"
        "    have = {re.sub(r\"[-_.]+\", \"-\", d.metadata[\"Name\"] or \"\").lower() for d in importlib.metadata.distributions()}\n"
        f"    needs = {{{names}}}\n"
        "    no_deps = \"--no-deps\" if needs <= have else \"\"  # Colab has them all: add this package, change nothing\n"
        f"    %pip install --quiet {{no_deps}} \"probdr-lite @ git+{url}@{ref}\""
    )


KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}
#: The tags of the Colab cell in a source; ``remove-cell`` keeps it out of the rendered book.
COLAB_TAGS = ["colab", "remove-cell"]
SOURCES = ROOT / "book" / "src"


def _cell_source(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _read_source(src: Path):
    import jupytext

    return jupytext.read(Path(src), fmt="py:percent")


def notebook_for(src: Path) -> dict:
    """The notebook ``src`` (a percent-format chapter) converts to: Jupytext's conversion, without outputs,
    execution counts, cell ids or Jupytext's own metadata, with the python3 kernel (nbformat 4.4, as JSON data)."""
    nb = _read_source(src)
    cells = []
    for cell in nb.cells:
        out = {"cell_type": cell.cell_type, "metadata": {"tags": list(cell.metadata["tags"])}
               if cell.metadata.get("tags") else {}, "source": cell.source}
        if cell.cell_type == "code":
            out.update(execution_count=None, outputs=[])
        cells.append(out)
    return {"cells": cells, "metadata": {"kernelspec": KERNELSPEC, "language_info": {"name": "python"}},
            "nbformat": 4, "nbformat_minor": 4}


def notebook_text(src: Path) -> str:
    """:func:`notebook_for` as the JSON text committed in ``book/``."""
    return json.dumps(notebook_for(src), indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def notebook_path(src: Path) -> Path:
    return Path(src).resolve().parents[1] / f"{Path(src).stem}.ipynb"


def source_path(notebook: Path) -> Path:
    return Path(notebook).resolve().parent / "src" / f"{Path(notebook).stem}.py"


def problems(path: Path) -> list[str]:
    """What is wrong with one notebook (an empty list if nothing)."""
    path = Path(path)
    nb = json.loads(path.read_text(encoding="utf-8"))
    out = []
    cells = nb.get("cells", [])
    first = cells[0] if cells else {}
    if first.get("cell_type") != "code" or _cell_source(first) != colab_cell_source() or \
            first.get("metadata", {}).get("tags") != COLAB_TAGS:
        out.append("first cell is not the Colab install cell (tags colab, remove-cell)")
    for i, cell in enumerate(cells):
        if cell.get("cell_type") == "code" and (cell.get("outputs") or cell.get("execution_count")):
            out.append(f"cell {i} has outputs or an execution count")
    if nb.get("metadata", {}).get("kernelspec", {}).get("name") != "python3":
        out.append("kernel is not python3")
    src = source_path(path)
    if not src.exists():
        out.append(f"no source {src.name} in book/src")
    elif nb != notebook_for(src):
        out.append(f"differs from Jupytext's conversion of book/src/{src.name}: run python tools/notebooks.py sync")
    return out


def sync_source(src: Path) -> bool:
    """Put the current :func:`colab_cell_source` into the Colab cell of ``src`` (first, tagged); True if changed."""
    import jupytext
    from nbformat.v4 import new_code_cell

    src = Path(src)
    nb = _read_source(src)
    colab = new_code_cell(colab_cell_source(), metadata={"tags": list(COLAB_TAGS)})
    if nb.cells and ("colab" in nb.cells[0].metadata.get("tags", []) or "google.colab" in nb.cells[0].source):
        if nb.cells[0].source == colab.source and nb.cells[0].metadata.get("tags") == COLAB_TAGS:
            return False
        nb.cells[0] = colab
    else:
        nb.cells.insert(0, colab)
    # no YAML header in the source; cell tags kept (Jupytext drops every cell key of a file that had none)
    nb.metadata["jupytext"] = {"notebook_metadata_filter": "-all", "cell_metadata_filter": "tags,-all"}
    src.write_text(jupytext.writes(nb, fmt="py:percent"), encoding="utf-8")
    return True


def sync(sources=None) -> list[Path]:
    """Refresh the Colab cell of every source and rewrite every notebook from its source; return what changed."""
    explicit = bool(sources)
    sources = sorted(SOURCES.glob("*.py")) if not sources else [Path(s) for s in sources]
    changed = []
    for src in sources:
        if sync_source(src):
            changed.append(src)
        dst = notebook_path(src)
        text = notebook_text(src)
        if not dst.exists() or dst.read_text(encoding="utf-8") != text:
            dst.write_text(text, encoding="utf-8")
            changed.append(dst)
    if not explicit:
        changed += sync_readers()
    return changed


# ---------------------------------------------------------------------------------------------------------------
# Reader notebooks: the chapters rendered for the reader who launches them (Colab, Binder, a local Jupyter).
#
# book/NAME.ipynb is written for the site: MyST roles and directives that Jupyter Book renders, cells tagged
# for the site's layout, and live figures drawn by the site's script. The reader notebooks are a second
# rendering of the same sources in plain Jupyter Markdown, one folder per front end:
#
#   READER/jupyter/NAME.ipynb   links to other chapters are relative paths (Jupyter, JupyterLab, Binder)
#   READER/colab/NAME.ipynb     links to other chapters open the sibling notebook in Colab, on the same branch
#
# where READER is launch_buttons.reader_notebooks in _config.yml. Both are kept in the repository and a test
# compares them with this generation (python tools/notebooks.py sync writes them with the chapters).
# ---------------------------------------------------------------------------------------------------------------

FLAVOURS = ("jupyter", "colab")
#: Cells left out of the reader notebooks: a cell tagged so (prose about the site's live figures, say) ...
SITE_ONLY_TAG = "site-only"
#: ... and every call of a live figure (drawn by the site's script; in a notebook the slider panel does it).
LIVE_MODULE = "probdr_lite.presentation.live"
#: Cells the site shows without their code: collapsed in the reader notebooks (Colab's form, Jupyter's
#: source_hidden), code still there and run.
HIDDEN_TAGS = {"remove-input", "hide-input", "hide-cell", "remove-cell"}
HIDDEN_TITLE = "#@title Helper code (hidden on the book's page; double-click to show it)"
#: A chapter paragraph that pastes glued numbers ({glue:text}`name`) has no plain-Markdown form: Jupyter and
#: Colab would show the role raw. The reader notebooks show it from a folded cell that pastes the numbers the
#: kernel glued above it (:func:`probdr_lite.presentation.prose.paste`); the words stay the author's.
from probdr_lite.presentation.prose import GLUE_ROLE  # noqa: E402  (the paste and this agree on the role)

PASTE_TITLE = "#@title A paragraph with this chapter's numbers (double-click to see how they are pasted)"


def paste_cell_source(markdown: str) -> str:
    """The reader notebooks' cell for one Markdown paragraph with glued numbers."""
    if '"""' in markdown:
        raise ValueError(f'a pasted paragraph cannot hold three double quotes in a row: {markdown[:80]!r}')
    if markdown.endswith("\\"):
        raise ValueError(f"a pasted paragraph cannot end with a backslash: {markdown[-80:]!r}")
    return (f"{PASTE_TITLE}\nfrom probdr_lite.presentation.prose import paste\n\n"
            f'paste(r"""{markdown}""")')


#: MyST directives and how they are written in plain Markdown: dropdowns become <details> (Colab, Jupyter and
#: GitHub all render it, closed), admonitions a block quote with a bold title.
ADMONITIONS = {"note": "Note", "tip": "Tip", "hint": "Hint", "important": "Important", "warning": "Warning",
               "caution": "Caution", "attention": "Attention", "danger": "Danger", "error": "Error",
               "seealso": "See also", "admonition": None}
README_NAME = "README.md"


def reader_folder(config_path: Path = CONFIG) -> str:
    """``launch_buttons.reader_notebooks`` of ``_config.yml``: the folder of the reader notebooks."""
    folder = (_config(config_path).get("launch_buttons") or {}).get("reader_notebooks")
    if not (isinstance(folder, str) and re.fullmatch(r"[A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)*", folder)):
        raise ValueError(f"launch_buttons.reader_notebooks in {config_path} must be a relative folder such as "
                         f"'notebooks', got {folder!r}")
    return folder


def reader_path(name: str, flavour: str, config_path: Path = CONFIG) -> Path:
    if flavour not in FLAVOURS:
        raise ValueError(f"flavour must be one of {FLAVOURS}, got {flavour!r}")
    return Path(config_path).parent / reader_folder(config_path) / flavour / f"{name}.ipynb"


def _owner_name(config_path: Path = CONFIG) -> str:
    return repository_url(config_path).split("github.com/", 1)[1]


def launch_urls(name: str, config_path: Path = CONFIG) -> dict[str, str]:
    """``{"binder": ..., "colab": ...}``: where the launch buttons of chapter ``name`` go (its reader notebooks)."""
    config = _config(config_path)
    _, branch = repository(config_path)
    folder = reader_folder(config_path)
    launch = config["launch_buttons"]
    binder = launch["binderhub_url"].rstrip("/")
    colab = launch["colab_url"].rstrip("/")
    # the same interface prefix as sphinx-book-theme's own Binder buttons (classic: tree/, jupyterlab: lab/tree/)
    tree = "lab/tree" if launch.get("notebook_interface") == "jupyterlab" else "tree"
    return {
        "binder": f"{binder}/v2/gh/{_owner_name(config_path)}/{branch}?urlpath={tree}/{folder}/jupyter/{name}.ipynb",
        "colab": f"{colab}/github/{_owner_name(config_path)}/blob/{branch}/{folder}/colab/{name}.ipynb",
    }


def _toc_files(entry) -> list[str]:
    out = [entry["file"]] if isinstance(entry, dict) and "file" in entry else []
    if isinstance(entry, dict):
        for key in ("chapters", "parts", "sections"):
            for child in entry.get(key) or []:
                out += _toc_files(child)
    return out


def toc_pages(toc_path: Path = ROOT / "_toc.yml") -> list[str]:
    """Every page of ``_toc.yml`` (root first), as docnames without suffix (``book/data``)."""
    import yaml

    toc = yaml.safe_load(Path(toc_path).read_text(encoding="utf-8"))
    pages = [toc["root"]] + _toc_files({k: v for k, v in toc.items() if k in ("chapters", "parts")})
    return list(dict.fromkeys(str(Path(p).with_suffix("")) if Path(p).suffix in (".md", ".ipynb") else p
                              for p in pages))


def reader_chapters(root: Path = ROOT) -> list[tuple[str, Path]]:
    """``(name, source)`` of every page of ``_toc.yml`` that is a chapter written in ``book/src/NAME.py``."""
    out = []
    for page in toc_pages(root / "_toc.yml"):
        src = root / Path(page).parent / "src" / f"{Path(page).name}.py"
        if src.is_file():
            out.append((Path(page).name, src))
    return out


def _plain(text: str) -> str:
    """BibTeX field text as Unicode (LaTeX accents decoded, braces dropped)."""
    import codecs

    import latexcodec  # noqa: F401  (registers the "ulatex" codec; pybtex depends on it)

    text = codecs.decode(text, "ulatex")
    return re.sub(r"\s+", " ", text.replace("{", "").replace("}", "")).strip()


def bibliography(bib_path: Path = ROOT / "references.bib") -> dict[str, dict]:
    """Every entry of ``references.bib``: ``{key: {"authors": [last names], "names": [full names], "year",
    "title", "url"}}``; ``url`` is the entry's ``url`` (arXiv, a publisher), else its DOI, else None."""
    from pybtex.database import parse_file

    out = {}
    for key, entry in parse_file(str(bib_path), bib_format="bibtex").entries.items():
        people = entry.persons.get("author") or entry.persons.get("editor") or []
        fields = entry.fields
        url = fields.get("url") or (f"https://doi.org/{fields['doi']}" if fields.get("doi") else None)
        out[key] = {
            "authors": [_plain(" ".join(p.prelast_names + p.last_names)) for p in people],
            "names": [_plain(" ".join(p.first_names + p.middle_names + p.prelast_names + p.last_names))
                      for p in people],
            "year": _plain(fields.get("year", "n.d.")),
            "title": _plain(fields.get("title", key)),
            "url": url,
        }
    return out


def _authors(entry: dict) -> str:
    """The author part of an author-year citation, as the book's site writes it (sphinxcontrib-bibtex's
    author_year style): one or two last names, or the first followed by "et al."."""
    names = entry["authors"] or [entry["title"]]
    return " and ".join(names) if len(names) <= 2 else f"{names[0]} et al."


class _Context:
    """What converting one chapter needs: the flavour, the bibliography, the chapters, the site's URLs."""

    def __init__(self, flavour: str, root: Path = ROOT):
        self.flavour = flavour
        self.root = root
        config_path = root / "_config.yml"
        self.config_path = config_path
        self.bib = bibliography(root / "references.bib")
        self.chapters = {name for name, _ in reader_chapters(root)}
        self.pages = set(toc_pages(root / "_toc.yml"))
        self.site = pages_url(config_path)
        self.repo, self.branch = repository(config_path)
        self.cited: list[str] = []
        self.equations: dict[str, str] = {}  # {label: "3.1"}, the chapter's numbered equations (equation_numbers)

    def site_page(self, docname: str, anchor: str = "") -> str:
        return f"{self.site}{docname}.html{anchor}"

    def references_page(self) -> str:
        ref = next((p for p in self.pages if Path(p).name == "references"), None)
        return self.site_page(ref) if ref else self.site

    def cite_url(self, key: str) -> str:
        return self.bib[key]["url"] or self.references_page()


_CITE = re.compile(r"\{cite(?::(p|t|ps|ts))?\}`([^`]+)`")
#: A numbered equation: MyST's closing ``$$`` with a label (``$$ (elbo)``), and the role that cites it.
_EQ_LABEL = re.compile(r"^(\s*)\$\$\s*\(([\w:.-]+)\)\s*$")
_EQ_ROLE = re.compile(r"\{eq\}`([^`]+)`")


def equation_numbers(markdown_sources, chapter: int) -> dict[str, str]:
    """``{label: "3.1"}``: the number the site gives each labelled equation of a chapter (chapter ``chapter`` of
    the numbered table of contents; its labelled equations counted in page order), for the reader notebooks."""
    labels = [m.group(2) for text in markdown_sources for line in text.split("\n") if (m := _EQ_LABEL.match(line))]
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise ValueError(f"equation label(s) {repeated} are used more than once in one chapter")
    return {label: f"{chapter}.{k}" for k, label in enumerate(labels, start=1)}


@functools.lru_cache(maxsize=None)
def _chapter_markdown(src: str, stamp: int) -> tuple[str, ...]:
    """The Markdown cells of one chapter source (``stamp``, its modification time, keys the cache)."""
    return tuple(c.source for c in _read_source(Path(src)).cells if c.cell_type == "markdown")


def book_equations(root: Path = ROOT) -> dict[str, str]:
    """``{label: "3.1"}`` for the labelled equations of every chapter: Sphinx's equation labels hold across the
    book, so a chapter may cite another's ({eq}`elbo`), and no two chapters may use one label."""
    pages = toc_pages(root / "_toc.yml")
    out: dict[str, str] = {}
    for name, src in reader_chapters(root):
        chapter = next(i for i, p in enumerate(pages) if Path(p).name == name)  # the root page is not numbered
        numbers = equation_numbers(_chapter_markdown(str(src), src.stat().st_mtime_ns), chapter)
        clash = sorted(set(numbers) & set(out))
        if clash:
            raise ValueError(f"equation label(s) {clash} are used by two chapters; a label names one equation "
                             "of the book")
        out.update(numbers)
    return out


def _equation(label: str, ctx: "_Context") -> str:
    if label not in ctx.equations:
        raise ValueError(f"{{eq}}`{label}` cites no labelled equation of the book ($$ ({label}))")
    return ctx.equations[label]
_LINK = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(([^)\s]+)(\s+\"[^\"]*\")?\)")
_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,}|:{3,})\s*(\{([\w-]+)\})?\s*(.*)$")


def _cite(match: re.Match, ctx: _Context) -> str:
    kind, keys = match.group(1) or "p", [k.strip() for k in match.group(2).split(",")]
    unknown = [k for k in keys if k not in ctx.bib]
    if unknown:
        raise ValueError(f"citation key(s) {unknown} are not in references.bib")
    for k in keys:
        if k not in ctx.cited:
            ctx.cited.append(k)
    if kind.startswith("t"):
        return "; ".join(f"[{_authors(ctx.bib[k])} ({ctx.bib[k]['year']})]({ctx.cite_url(k)})" for k in keys)
    return "(" + "; ".join(f"[{_authors(ctx.bib[k])}, {ctx.bib[k]['year']}]({ctx.cite_url(k)})" for k in keys) + ")"


def _link_target(target: str, image: bool, ctx: _Context) -> str:
    """A link of a chapter, rewritten to work where the reader notebook is opened."""
    if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
        return target  # absolute (https:, mailto:) or within the page
    path, _, anchor = target.partition("#")
    anchor = f"#{anchor}" if anchor else ""
    full = (ctx.root / "book" / path).resolve()
    try:
        rel = full.relative_to(ctx.root.resolve()).as_posix()
    except ValueError:
        raise ValueError(f"link {target!r} points outside the repository") from None
    if not full.exists():
        raise ValueError(f"link {target!r} points to a file that does not exist ({rel})")
    docname = str(Path(rel).with_suffix(""))
    if full.suffix == ".ipynb" and full.stem in ctx.chapters:
        if ctx.flavour == "jupyter":
            return f"{full.stem}.ipynb{anchor}"
        return launch_urls(full.stem, ctx.config_path)["colab"]
    if full.suffix in (".md", ".ipynb") and docname in ctx.pages:
        return ctx.site_page(docname, anchor)  # a page of the site that has no reader notebook (the introduction)
    if image:
        return f"{ctx.repo}/blob/{ctx.branch}/{rel}?raw=true"
    return f"{ctx.repo}/blob/{ctx.branch}/{rel}{anchor}"


def _inline(text: str, ctx: _Context) -> str:
    text = _CITE.sub(lambda m: _cite(m, ctx), text)
    text = _EQ_ROLE.sub(lambda m: f"({_equation(m.group(1), ctx)})", text)  # the number the site shows

    def link(m):
        return f"{m.group(1)}[{m.group(2)}]({_link_target(m.group(3), bool(m.group(1)), ctx)}{m.group(4) or ''})"

    # inline code spans are left as they are
    parts = re.split(r"(`[^`\n]*`)", text)
    return "".join(p if p.startswith("`") and p.endswith("`") and len(p) > 1 else _LINK.sub(link, p)
                   for p in parts)


def markdown_for_reader(text: str, ctx: _Context) -> str:
    """One Markdown cell of a chapter in plain Jupyter Markdown (see the section comment above)."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _FENCE.match(line)
        if m and not m.group(3) and m.group(2).startswith((":",)):
            raise ValueError(f"a ':::' fence without a directive: {line!r}")
        if m and m.group(3):  # a MyST directive: find its closing fence (same character, at least as long)
            indent, fence, name, title = m.group(1), m.group(2), m.group(4), m.group(5).strip()
            j, depth = i + 1, 0
            while j < len(lines):
                n = _FENCE.match(lines[j])
                if n and n.group(2)[0] == fence[0] and n.group(3):
                    depth += 1
                elif n and n.group(2)[0] == fence[0] and not n.group(3) and not n.group(5).strip():
                    if depth == 0 and len(n.group(2)) >= len(fence):
                        break
                    depth -= 1
                j += 1
            if j == len(lines):
                raise ValueError(f"the directive {{{name}}} opened by {line!r} is never closed")
            body = lines[i + 1:j]
            while body and re.match(r"\s*:[\w-]+:", body[0]):  # directive options (:class:, :open:, ...)
                body = body[1:]
            inner = markdown_for_reader("\n".join(body), ctx).strip("\n")
            if name == "dropdown":
                summary = _inline(title, ctx) or "Details"
                out += [f"{indent}<details>", f"{indent}<summary>{summary}</summary>", "", inner, "",
                        f"{indent}</details>"]
            elif name in ADMONITIONS:
                heading = _inline(title, ctx) if name == "admonition" else ADMONITIONS[name]
                quoted = [f"{indent}> **{heading}.**", f"{indent}>"] + [f"{indent}> {l}".rstrip()
                                                                       for l in inner.split("\n")]
                out += quoted
            else:
                raise ValueError(f"the MyST directive {{{name}}} has no plain-Markdown rendering here; "
                                 f"add one to markdown_for_reader in tools/notebooks.py")
            i = j + 1
            continue
        if m:  # a plain code fence: copied as it is, up to its end
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith(m.group(2)):
                j += 1
            out += lines[i:j + 1]
            i = j + 1
            continue
        eq = _EQ_LABEL.match(line)
        if eq:  # a labelled equation's closing $$: the site's number as a tag, which Jupyter's and Colab's maths show
            out += [f"{eq.group(1)}\\tag{{{_equation(eq.group(2), ctx)}}}", f"{eq.group(1)}$$"]
            i += 1
            continue
        if re.match(r"\s*\([\w:.-]+\)=\s*$", line) or re.match(r"%( |$)", line) or line.strip() == "+++":
            i += 1  # MyST targets, comments and block breaks have no meaning outside the site
            continue
        out.append(_inline(line, ctx))
        i += 1
    return "\n".join(out)


def _live_names(cells) -> set[str]:
    import ast

    names = set()
    for cell in cells:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(LIVE_MODULE):
                names.update(a.asname or a.name for a in node.names)
    return names


def _without_live(source: str, names: set[str]) -> str:
    """``source`` less its imports from the live-figure modules and its calls of live figures."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:  # IPython syntax (%pip): nothing of the live figures in it
        return source
    drop = set()
    for node in tree.body:
        live_import = (isinstance(node, ast.ImportFrom) and (node.module or "").startswith(LIVE_MODULE)) or (
            isinstance(node, ast.Import) and any(a.name.startswith(LIVE_MODULE) for a in node.names))
        live_call = (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
                     and isinstance(node.value.func, ast.Name) and node.value.func.id in names)
        if live_import or live_call:
            drop.update(range(node.lineno, node.end_lineno + 1))
    if not drop:
        return source
    kept = [l for n, l in enumerate(source.split("\n"), start=1) if n not in drop]
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip("\n")
    return text if any(l.strip() and not l.lstrip().startswith("#") for l in text.split("\n")) else ""


def _title_of(cells) -> str:
    for cell in cells:
        if cell.cell_type == "markdown":
            for line in cell.source.split("\n"):
                if line.startswith("# "):
                    return line[2:].strip()
    return ""


def reader_notebook_for(src: Path, flavour: str, root: Path = ROOT) -> dict:
    """The reader notebook (``flavour`` "jupyter" or "colab") of the chapter written in ``src``, as JSON data."""
    if flavour not in FLAVOURS:
        raise ValueError(f"flavour must be one of {FLAVOURS}, got {flavour!r}")
    ctx = _Context(flavour, root)
    nb = _read_source(src)
    names = _live_names(nb.cells)
    config = _config(ctx.config_path)
    name = Path(src).stem
    page = next(p for p in toc_pages(root / "_toc.yml") if Path(p).name == name)
    ctx.equations = book_equations(root)
    cells = []
    hidden_meta = {"cellView": "form", "jupyter": {"source_hidden": True}}
    for cell in nb.cells:
        tags = list(cell.metadata.get("tags", []))
        if SITE_ONLY_TAG in tags:
            continue
        if cell.cell_type == "markdown":
            text = markdown_for_reader(cell.source, ctx)
            if GLUE_ROLE.search(text):  # the author's paragraph, its numbers pasted by the kernel that computed them
                cells.append({"cell_type": "code", "execution_count": None, "outputs": [],
                              "metadata": json.loads(json.dumps(hidden_meta)), "source": paste_cell_source(text)})
            else:
                cells.append({"cell_type": "markdown", "metadata": {}, "source": text})
            continue
        if cell.cell_type != "code":
            cells.append({"cell_type": cell.cell_type, "metadata": {}, "source": cell.source})
            continue
        if "colab" in tags:
            source, meta = colab_cell_source(*repository(ctx.config_path)), dict(hidden_meta)
        else:
            source = _without_live(cell.source, names)
            if not source:
                continue
            meta = {}
            if HIDDEN_TAGS & set(tags):
                source, meta = f"{HIDDEN_TITLE}\n{source}", json.loads(json.dumps(hidden_meta))
                if "hide-cell" in tags:
                    meta["jupyter"]["outputs_hidden"] = True
        cells.append({"cell_type": "code", "execution_count": None, "metadata": meta, "outputs": [],
                      "source": source})
    where = "Jupyter" if flavour == "jupyter" else "Colab"
    # Only a chapter with live figures (figures the site's script redraws) has figures that move without a kernel.
    site = f"[The same chapter on the book's site]({ctx.site_page(page)})"
    note = (f"*A chapter of [{config.get('title', 'the book')}]({ctx.site}), written out for {where} from "
            f"`book/src/{name}.py`. "
            + (f"{site} also has figures that move without a kernel.*" if names else f"{site} is the rendered page.*"))
    first_md = next((i for i, c in enumerate(cells) if c["cell_type"] == "markdown"), len(cells))
    cells.insert(first_md + 1, {"cell_type": "markdown", "metadata": {}, "source": note})
    if ctx.cited:
        entries = []
        for k in ctx.cited:
            e = ctx.bib[k]
            people = e["names"]
            who = ", ".join(people[:-1]) + f" and {people[-1]}" if len(people) > 1 else (people[0] if people else "")
            link = f" [{e['url']}]({e['url']})" if e["url"] else ""
            entries.append(f"- {who} ({e['year']}). *{e['title']}*.{link}")
        cells.append({"cell_type": "markdown", "metadata": {},
                      "source": "## References\n\n" + "\n".join(entries)
                      + f"\n\nAll the book's references: [the references page]({ctx.references_page()})."})
    metadata = {"kernelspec": KERNELSPEC, "language_info": {"name": "python"}}
    if flavour == "colab":
        metadata["colab"] = {"provenance": [], "toc_visible": True}
    return {"cells": cells, "metadata": metadata, "nbformat": 4, "nbformat_minor": 4}


def _reader_readme(root: Path = ROOT) -> str:
    folder = reader_folder(root / "_config.yml")
    rows = "\n".join(f"| {name} | [{name}.ipynb](jupyter/{name}.ipynb) | [Colab]({launch_urls(name, root / '_config.yml')['colab']}) |"
                     for name, _ in reader_chapters(root))
    return (f"# Reader notebooks\n\n"
            f"The book's chapters written out for running them: plain Jupyter Markdown (citations as links, "
            f"solutions folded in `<details>`), the site's live figures left out (the slider panels do their work), "
            f"the helper cells folded. `jupyter/` links between chapters by relative path (Jupyter, JupyterLab, "
            f"Binder); `colab/` links to the sibling notebooks on Colab.\n\n"
            f"Generated from `book/src/*.py` by `make notebooks` (`python tools/notebooks.py sync`); "
            f"do not edit them here. The folder is `launch_buttons.reader_notebooks` in `_config.yml` (`{folder}`); "
            f"`tests/unit/test_notebooks.py` checks that these files equal the generation.\n\n"
            f"| chapter | Jupyter | Colab |\n| --- | --- | --- |\n{rows}\n")


def reader_texts(root: Path = ROOT) -> dict[Path, str]:
    """Every file of the reader-notebook folder, as it is generated: ``{path: text}``."""
    out = {}
    for name, src in reader_chapters(root):
        for flavour in FLAVOURS:
            nb = reader_notebook_for(src, flavour, root)
            out[reader_path(name, flavour, root / "_config.yml")] = json.dumps(
                nb, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    out[root / reader_folder(root / "_config.yml") / README_NAME] = _reader_readme(root)
    return out


def sync_readers(root: Path = ROOT) -> list[Path]:
    """Write the reader notebooks (and remove stale ones); return what changed."""
    texts = reader_texts(root)
    folder = root / reader_folder(root / "_config.yml")
    changed = []
    for stale in sorted(folder.rglob("*.ipynb")) if folder.is_dir() else []:
        if stale not in texts:
            stale.unlink()
            changed.append(stale)
    for path, text in texts.items():
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            changed.append(path)
    return changed


#: MyST syntax that plain Jupyter Markdown shows raw (the scanner of the reader notebooks).
MYST_PATTERNS = {
    "role": re.compile(r"\{[A-Za-z][\w:+-]*\}`[^`\n]+`"),
    "directive": re.compile(r"^\s*(`{3,}|~{3,}|:{3,})\s*\{", re.M),
    "colon fence": re.compile(r"^\s*:{3,}", re.M),
    "directive option": re.compile(r"^\s*:(class|name|open|label|width|align|figwidth|header-rows):", re.M),
    "target": re.compile(r"^\s*\([\w:.-]+\)=\s*$", re.M),
    "comment": re.compile(r"^%( |$)", re.M),
    "block break": re.compile(r"^\+\+\+", re.M),
    "substitution": re.compile(r"\{\{[^}]*\}\}"),
    "link to a MyST page": re.compile(r"\]\((?![a-z][a-z0-9+.-]*:)[^)]*\.md(#[^)]*)?\)"),
}


def myst_leftovers(text: str) -> list[str]:
    """The MyST constructs left in one Markdown text (outside fenced code), as ``"kind: excerpt"``."""
    prose = re.sub(r"^(`{3,}|~{3,})(?!\s*\{).*?^\1\s*$", "", text, flags=re.M | re.S)  # fenced code blocks
    without_code = re.sub(r"`[^`\n]*`", "``", prose)  # inline code, after the roles (whose key is code-like) below
    found = []
    for kind, pattern in MYST_PATTERNS.items():
        where = prose if kind == "role" else without_code
        for m in pattern.finditer(where):
            found.append(f"{kind}: {where[max(0, m.start() - 20):m.end() + 20]!r}")
    return found


def reader_problems(path: Path) -> list[str]:
    """What is wrong with one reader notebook: MyST left in its Markdown, book tags, live figures, outputs."""
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    out = []
    for i, cell in enumerate(nb.get("cells", [])):
        src = _cell_source(cell)
        if cell.get("cell_type") == "markdown":
            out += [f"cell {i}: MyST {f}" for f in myst_leftovers(src)]
        if cell.get("metadata", {}).get("tags"):
            out.append(f"cell {i}: carries the book's tags {cell['metadata']['tags']}")
        if cell.get("cell_type") == "code":
            if LIVE_MODULE in src or re.search(r"\b\w+_live\(", src):
                out.append(f"cell {i}: calls a live figure (the site draws those; leave them out)")
            if cell.get("outputs") or cell.get("execution_count"):
                out.append(f"cell {i}: has outputs or an execution count")
    return out


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["badges"]:
        print(readme_badges())
        return 0
    if not argv or argv[0] not in ("check", "sync"):
        print("usage: python tools/notebooks.py sync [book/src/NAME.py ...]\n"
              "       python tools/notebooks.py check [book/NAME.ipynb ...]\n"
              "       python tools/notebooks.py badges", file=sys.stderr)
        return 2
    if argv[0] == "sync":
        for path in sync(argv[1:]):
            print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
        return 0
    notebooks = [Path(n) for n in argv[1:]] or [notebook_path(s) for s in sorted(SOURCES.glob("*.py"))]
    bad = 0
    for path in notebooks:
        for p in problems(path):
            print(f"{path}: {p}")
            bad += 1
    if not argv[1:]:
        for path, text in reader_texts().items():
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                print(f"{path}: differs from the generation: run python tools/notebooks.py sync")
                bad += 1
            elif path.suffix == ".ipynb":
                for p in reader_problems(path):
                    print(f"{path}: {p}")
                    bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
