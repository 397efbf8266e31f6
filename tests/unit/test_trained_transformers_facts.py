"""The trained-transformers chapter's tables and figures: the chapter names every column it is asked to, describes
every figure it builds, and its figure facts give the labels its alt texts paste.

The chapter (``book/src/trained_transformers.py``) writes its sentences as Markdown with glued numbers; their claims
are tested in ``test_claims_trained.py``. Its labels live in :mod:`probdr_lite.presentation.figures.recipes` and
:mod:`probdr_lite.presentation.figures.training`, defined once.
"""

import ast
from pathlib import Path

import pytest

from probdr_lite.presentation.figures import recipes as R
from probdr_lite.presentation.figures import training as TR

from .chapter_calls import chapter_calls, source_cells

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = ROOT / "book" / "src" / "trained_transformers.py"
RECORD = ROOT / "book" / "src" / "training_record.py"  # the chapter's appendix: the full record
PAGES = (CHAPTER, RECORD)


def chapter_assignment(name: str) -> ast.AST:
    """The expression the two pages assign to ``name`` (once: a label is defined in one place)."""
    found = [n.value for page in PAGES for n in ast.walk(ast.parse(page.read_text(encoding="utf-8")))
             if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)]
    assert len(found) == 1, f"the pages assign {name} {len(found)} times"
    return found[0]


def test_the_figure_facts_give_the_labels_the_alt_texts_paste():
    assert TR.curves_facts("val_loss")["Label"] == "Validation loss (cross-entropy, nats)"
    labels = ast.literal_eval(chapter_assignment("mechanism_labels"))
    m = TR.mechanism_facts(labels, ("update_ratio", "grad_norm"))
    assert m["n_series"] == 2 and m["series_text"] == f"{labels['update_ratio']}, {labels['grad_norm']}"
    with pytest.raises(ValueError, match="series"):
        TR.mechanism_facts(labels, ("nope",))
    with pytest.raises(ValueError, match="metric"):
        TR.curves_facts("nope")


@pytest.mark.parametrize("builder,columns", [("provenance_table", "PROVENANCE_COLUMNS"),
                                             ("grids_table", "GRIDS_COLUMNS"), ("plateau_table", "PLATEAU_COLUMNS"),
                                             ("gates_table", "GATES_COLUMNS"), ("mechanism_table", "MECHANISM_COLUMNS")])
def test_the_record_names_every_column_of_its_tables(builder, columns):
    call, = chapter_calls("training_record", builder)
    header = ast.literal_eval({k.arg: k.value for k in call.keywords}["header"])
    assert len(header) == len(getattr(R, columns, None) or getattr(TR, columns)) and len(set(header)) == len(header)


def test_the_family_tables_label_every_column_once():
    for labels in (R.FAMILY_HEADER, R.INTERACTION_HEADER, R.INTERVENTION_FAMILY_HEADER, R.EXPLORATORY_HEADER,
                   R.ROUND_HEADER):
        assert len(set(labels.values())) == len(labels)
    from probdr_lite.experiments.families import BUDGETS, INITS, VERDICTS

    assert set(R.BUDGET_LABELS) == set(BUDGETS) and set(R.INIT_LABELS) == set(INITS)
    assert set(R.VERDICT_MARKS) == set(VERDICTS)


def test_the_pages_describe_every_figure_they_build():
    """The builders leave the alt text to the chapter: each figure a cell builds is described in that cell."""
    builders = {"curves_figure", "plateau_figure", "round_figure", "gates_figure", "mechanism_figure"}
    seen = set()
    for cell in [c for page in PAGES for c in source_cells(page)]:
        calls = [n for n in ast.walk(cell) if isinstance(n, ast.Call)]
        names = {n.func.id if isinstance(n.func, ast.Name) else getattr(n.func, "attr", "") for n in calls}
        built = [n for n in calls if (n.func.id if isinstance(n.func, ast.Name) else getattr(n.func, "attr", ""))
                 in builders]
        described = [n for n in calls if isinstance(n.func, ast.Name) and n.func.id == "describe"]
        seen |= names & builders
        assert len(described) == len(built), (cell.body[0].lineno, len(built), len(described))
    assert seen == builders


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_the_pages_choose_no_word_in_code(page):
    """No template is filled and no Markdown is displayed from code: the pages' sentences are their Markdown."""
    source = page.read_text(encoding="utf-8")
    assert "fill(" not in source and "Markdown(" not in source
