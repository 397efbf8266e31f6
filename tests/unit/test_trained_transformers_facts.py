"""The trained-transformers chapter's words passed to the package's builders, and the facts those builders compute.

The chapter (``book/src/trained_transformers.py``) writes its sentences as Markdown with glued numbers (their
claims: ``test_claims_trained.py``). The facts come from :mod:`probdr_lite.presentation.figures.recipes` and
:mod:`probdr_lite.presentation.figures.training`. These tests read the words the chapter passes its builders and
fill them from facts of the shape the cell passes, so a slot without a fact fails here rather than in the book
build. (The tests that walked the chapter's own templates went with the templates, issue 35.)
"""

import ast
from pathlib import Path

import pytest

from probdr_lite.experiments.stats import recipe_table, recipe_verdict
from probdr_lite.presentation.figures import recipes as R
from probdr_lite.presentation.prose import fill

from .chapter_calls import chapter_calls, words_passed
from .test_recipes import _vit_cell, make_rows

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = ROOT / "book" / "src" / "trained_transformers.py"


def chapter_assignment(name: str) -> ast.AST:
    """The expression the chapter assigns to ``name`` (once: a label or template is defined in one place)."""
    found = [n.value for n in ast.walk(ast.parse(CHAPTER.read_text(encoding="utf-8"))) if isinstance(n, ast.Assign)
             and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)]
    assert len(found) == 1, f"the chapter assigns {name} {len(found)} times"
    return found[0]


def chapter_words(call: ast.Call, keyword: str):
    """What a chapter call passes as ``keyword``: written out as literals, in the call or in the one assignment of
    the name it passes, and holding only strings (the words are the chapter's, nothing in them computed)."""
    node = {k.arg: k.value for k in call.keywords}[keyword]
    value = ast.literal_eval(chapter_assignment(node.id) if isinstance(node, ast.Name) else node)
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else [value]
    assert all(isinstance(v, str) for v in items), f"line {call.lineno}: {keyword} holds more than words"
    return value


def verdict_example():
    """Facts in which every list is filled: an arm whose sign depends on the recipe, one never told apart, a pending
    recipe, an arm not run."""
    rows = make_rows({("gpt2", "diffusion"): 0.04, ("default", "diffusion"): -0.04,
                      ("gpt2", "gated"): 0.0, ("default", "gated"): 0.0})
    table = recipe_table(rows)
    f = R.verdict_facts(table, recipe_verdict(table), expected_arms=("attention", "diffusion", "gated", "gated-from-1"))
    assert f["any_depends"] and f["any_never_told"] and f["any_not_run"]
    return {**f, "mixed_means": ["$A - I$ (1 better, 1 worse; init)"], "any_mixed_means": True,
            "n_nominal": 2, "any_nominal": True, "n_pending": 1, "any_pending": True}


EXAMPLES = {  # the facts of the package's builders, in the shape the chapter passes them
    "f": verdict_example,
    "vf": lambda: {"model": "character model", "share_g": 0.74, "share_d": 0.04, "g_towards": True,
                             "d_towards": False, "follows": False, "g_only": True, "d_only": False, "shift_g": -0.07,
                             "shift_d": 0.003, "holm_g": 0.011, "holm_d": 0.93},
}


def test_the_plateau_table_fills_the_chapters_summary_from_the_cell_facts():
    """The chapter's ``fired`` template of the plateau table, filled by the builder from ``plateau_cell_facts``."""
    call, = chapter_calls("trained_transformers", "plateau_table")
    fired = words_passed(call, "fired")
    rows = [r for r in _vit_cell(0.0, 0.0) if r["variant"] == "attention"]
    f = R.plateau_cell_facts(rows)
    cell = R.plateau_table({"cell": rows}, fired=fired, header=chapter_words(call, "header")).body[-1][3]
    assert cell == fill(fired, f) and f"{f['stop']:.2f} %" in cell and "4 seeds" in cell
    assert isinstance(words_passed(call, "caption"), str)


def test_the_scale_table_fills_the_chapters_cells_from_the_scale_facts():
    """The chapter's ``text`` templates of the scale table: every one fills from its task's ``scale_facts``."""
    call, = chapter_calls("trained_transformers", "scale_table")
    text = words_passed(call, "text")
    assert set(text) == set(R.SCALE_TEXT) and isinstance(words_passed(call, "caption"), str)
    lm = make_rows({("gpt2", "diffusion"): 0.01})
    vit = _vit_cell(0.0, 0.0)
    c = lm[0]["config"]
    char, vis = R.scale_table({"charlm": lm, "vit": vit + [{**vit[1], "variant": "gated", "n_params": 1250}]},
                              text=text).body
    assert char[3] == f"a context of {c['block_size']} characters"
    assert char[5] == f"Tiny Shakespeare: the first {100 * c['train_fraction']:.0f} % of its characters for training, "\
                      "the rest for validation"
    assert char[7] == f"30 iterations ({30 * c['batch_size'] * c['block_size'] / 1e6:.2f} M characters)"
    assert vis[3] == "16 patches of 7 × 7 pixels and a class token"
    assert vis[4] == "1,234 (16 more in the gated arms, one gate per head)"
    assert vis[5] == f"MNIST: {vit[0]['config']['n_train']:,} training and {vit[0]['config']['n_val']:,} validation "\
                     "images from its test set"
    assert vis[7] == "the plateau rule (at most 10 epochs; the runs took 6 to 6)"
    fixed = [{**r, "config": {**r["config"], "patience": 0}} for r in _vit_cell(0.0, 0.0)]
    both = R.scale_table({"vit": vit + fixed}, text=text).body[0][7]
    assert both == "10 epochs; the plateau rule (at most 10 epochs; the runs took 6 to 6)"


def test_the_intervention_table_fills_the_chapters_row_from_the_entries():
    from probdr_lite.experiments.intervention import vo_scale_effects

    from .test_intervention import _rows

    call, = chapter_calls("trained_transformers", "intervention_table")
    row = words_passed(call, "row")
    means = {"gpt2": 0.06, "default": -0.04, "gpt2-vo-default": -0.02, "default-vo-gpt2": -0.035}
    out = vo_scale_effects({"charlm": (_rows({k: means[k] for k in ("gpt2", "default")}),
                                       _rows({k: means[k] for k in ("gpt2-vo-default", "default-vo-gpt2")}))})
    cells = [r[1] for r in R.intervention_table(out, row=row).body]
    assert cells == ["gpt2, $W_V$ and $W_O$ at default's scale", "default, $W_V$ and $W_O$ at gpt2's scale"]


def test_the_figure_facts_give_the_labels_the_alt_texts_paste():
    from probdr_lite.presentation.figures import training as TR

    assert TR.curves_facts("val_loss")["Label"] == "Validation loss (cross-entropy, nats)"
    labels = ast.literal_eval(chapter_assignment("mechanism_labels"))
    m = TR.mechanism_facts(labels, ("update_ratio", "grad_norm"))
    assert m["n_series"] == 2 and m["series_text"] == f"{labels['update_ratio']}, {labels['grad_norm']}"
    with pytest.raises(ValueError, match="series"):
        TR.mechanism_facts(labels, ("nope",))


@pytest.mark.parametrize("builder,columns", [("provenance_table", "PROVENANCE_COLUMNS"),
                                             ("grids_table", "GRIDS_COLUMNS"), ("plateau_table", "PLATEAU_COLUMNS"),
                                             ("gates_table", "GATES_COLUMNS"), ("mechanism_table", "MECHANISM_COLUMNS")])
def test_the_chapter_names_every_column_of_its_tables(builder, columns):
    from probdr_lite.presentation.figures import training as TR

    call, = chapter_calls("trained_transformers", builder)
    header = chapter_words(call, "header")
    assert len(header) == len(getattr(R, columns, None) or getattr(TR, columns)) and len(set(header)) == len(header)


def test_the_chapter_writes_every_label_its_figures_and_tables_need():
    """The words passed to the builders cover every key they read, and the templates fill from the builders' facts."""
    from probdr_lite.experiments.stats import MECHANISM_SERIES
    from probdr_lite.presentation.figures import training as TR

    (verdict,) = chapter_calls("trained_transformers", "verdict_figure")
    text = chapter_words(verdict, "text")
    assert set(text) == set(R.VERDICT_TEXT)
    table = recipe_table(make_rows({("gpt2", "diffusion"): 0.04}))
    facts = {**R.table_facts(table), "quantity": "final validation loss", "level": 95.0}
    assert fill(text["title"], facts) == f"character model: paired difference, 95 % interval, Holm reading over " \
                                         f"{table.n_tests} tests"
    assert fill(text["lower"], facts).endswith("left of 0") and fill(text["higher"], facts).endswith("right of 0")
    (plateau,) = chapter_calls("trained_transformers", "plateau_figure")
    labels = chapter_words(plateau, "labels")
    assert set(labels) == set(R.PLATEAU_LABELS)
    for key in ("stopped", "best", "fired"):
        fill(labels[key], {"seed": 0, "epochs_run": 9, "best": 4, "fired": 5})
    curves = chapter_calls("trained_transformers", "curves_figure")
    titles = {ast.unparse(c.keywords[[k.arg for k in c.keywords].index("titles")].value) for c in curves}
    assert titles == {"curve_titles"}  # one set of panel titles for every curves figure
    assert fill(ast.literal_eval(chapter_assignment("curve_titles"))["zoom"], unit="step", zoom_after=500) == \
        "zoom: from step 500"
    mechanism_labels = ast.literal_eval(chapter_assignment("mechanism_labels"))
    assert set(TR.MECHANISM_SHOWN) <= set(mechanism_labels) <= set(MECHANISM_SERIES)
    (agreement,) = chapter_calls("trained_transformers", "agreement_table")
    assert set(chapter_words(agreement, "directions")) == set(TR.DIRECTIONS)
    assert all(isinstance(k, tuple) and k[0] in (*MECHANISM_SERIES, "grad_ratio") and k[1] in ("start", "end")
               for k in ast.literal_eval(chapter_assignment("agreement_rows")))
    (readings,) = chapter_calls("trained_transformers", "readings_table")
    assert set(chapter_words(readings, "words")) == set(R.READINGS)


def test_the_chapter_describes_every_figure_it_builds():
    """The builders leave the alt text to the chapter: each figure a cell builds is described in that cell."""
    from .chapter_calls import source_cells

    builders = {"curves_figure", "plateau_figure", "verdict_figure", "gates_figure", "mechanism_figure"}
    seen = set()
    for cell in source_cells(CHAPTER):
        calls = [n for n in ast.walk(cell) if isinstance(n, ast.Call)]
        names = {n.func.id if isinstance(n.func, ast.Name) else getattr(n.func, "attr", "") for n in calls}
        built = [n for n in calls if (n.func.id if isinstance(n.func, ast.Name) else getattr(n.func, "attr", ""))
                 in builders]
        described = [n for n in calls if isinstance(n.func, ast.Name) and n.func.id == "describe"]
        seen |= names & builders
        assert len(described) == len(built), (cell.body[0].lineno, len(built), len(described))
    assert seen == builders


def test_intervention_facts_have_the_example_keys_and_follow_the_entries():
    from probdr_lite.experiments.intervention import follows_scale, vo_scale_effects

    from .test_intervention import _rows

    means = {"gpt2": 0.06, "default": -0.04, "gpt2-vo-default": -0.02, "default-vo-gpt2": -0.035}
    out = vo_scale_effects({"charlm": (_rows({k: means[k] for k in ("gpt2", "default")}),
                                       _rows({k: means[k] for k in ("gpt2-vo-default", "default-vo-gpt2")}))})
    f = R.intervention_facts(out["charlm"], "charlm", follows_scale(out)["charlm"])
    assert set(f) == set(EXAMPLES["vf"]())
    g = out["charlm"]["gpt2-vo-default"]
    assert f["g_towards"] == g["towards"] and f["g_only"] == (g["towards"] and not f["d_towards"])
    assert not (f["g_only"] and f["d_only"]) and not (f["follows"] and (f["g_only"] or f["d_only"]))
