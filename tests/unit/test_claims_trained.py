"""The trained-transformers chapter's claim cells fail, naming their sentence, when the facts that make the sentence
true are flipped, and pass with the committed facts.

Each test reads the claim cell from ``book/src/trained_transformers.py`` or its appendix ``training_record.py`` (found
by the sentence it names),
computes the facts as the chapter does from the committed results, and executes the cell's source in a namespace
holding them, as they are and flipped.
"""

import copy
import statistics
from pathlib import Path
from types import SimpleNamespace

import jupytext
import pytest

from probdr_lite.experiments.files import load_eval_spread, load_task_results
from probdr_lite.experiments.stats import last_epoch_change
from probdr_lite.presentation import prose
from probdr_lite.presentation.figures import recipes as R
from probdr_lite.presentation.figures import training as TR
from probdr_lite.presentation.prose import ClaimError

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = ROOT / "book" / "src" / "trained_transformers.py"
RECORD = ROOT / "book" / "src" / "training_record.py"  # the chapter's appendix


def claim_cell(sentence: str, source=CHAPTER) -> str:
    """The source of the page's one code cell that calls claim() with ``sentence`` in it."""
    nb = jupytext.read(source, fmt="py:percent")
    cells = [c.source for c in nb.cells if c.cell_type == "code" and "claim(" in c.source and sentence in c.source]
    assert len(cells) == 1, f"expected one claim cell naming {sentence!r}; found {len(cells)}"
    return cells[0]


def run(source: str, **names) -> None:
    namespace = {"claim": prose.claim, "glue": prose.glue, "num": prose.num, "signed": prose.signed,
                 "pct": prose.pct, "statistics": statistics, **names}
    exec(compile(source, "<chapter cell>", "exec"), namespace)


NANO = "the gap is within what one run evaluated on 20 batches can produce"


def test_nanogpt_gap_claim_holds_and_fails_when_flipped():
    charlm = load_task_results("charlm")
    if charlm is None or load_eval_spread() is None:
        pytest.skip("the first sweep's rows or the eval spread are not committed")
    source = claim_cell(NANO, RECORD)
    real = R.nanogpt_facts(charlm, load_eval_spread())
    assert real["within"]
    run(source, R=R, charlm=charlm, load_eval_spread=load_eval_spread)
    flipped = SimpleNamespace(nanogpt_facts=lambda rows, spread: {**real, "within": False})
    with pytest.raises(ClaimError, match="within what one run evaluated on 20 batches"):
        run(source, R=flipped, charlm=charlm, load_eval_spread=load_eval_spread)


LAST = "every arm was still improving when training stopped"


def test_last_epoch_claim_holds_and_fails_when_one_arm_falls():
    vit = load_task_results("vit")
    if vit is None:
        pytest.skip("the first sweep's rows are not committed")
    source = claim_cell(LAST, RECORD)
    real = last_epoch_change(vit, "val_acc")
    run(source, last_change=real)
    flipped = dict(real)
    flipped[next(iter(flipped))] = -abs(flipped[next(iter(flipped))]) - 1e-4  # one arm lost accuracy
    with pytest.raises(ClaimError, match=LAST):
        run(source, last_change=flipped)


GATES = "where a gate ends depends on where it started"


def test_gates_claim_fails_when_the_two_starts_end_together():
    source = claim_cell(GATES, RECORD)
    together = {"n_twins": 4, "apart": False, "together": True, "mixed": False, "apart_threshold": TR.GATES_APART}
    fake = SimpleNamespace(gates_facts=lambda cells: together)
    with pytest.raises(ClaimError, match=GATES):
        run(source, TR=fake, gate_cells={})
    run(source, TR=SimpleNamespace(gates_facts=lambda cells: {**together, "apart": True, "together": False}),
        gate_cells={})


MIDDLE = "On average the gates move towards the middle from either end"


def test_gates_middle_claim_fails_when_the_gates_from_0_stay_at_0():
    source = claim_cell(MIDDLE, RECORD)
    moved = {"cell": [{"variant": "gated", "gates": [[0.1, 0.3]]}, {"variant": "gated-from-1", "gates": [[0.7, 0.9]]}]}
    run(source, gate_cells=moved)
    stayed = {"cell": [{"variant": "gated", "gates": [[0.0, 0.0]]}, {"variant": "gated-from-1", "gates": [[0.7, 0.9]]}]}
    with pytest.raises(ClaimError, match="towards the middle"):
        run(source, gate_cells=stayed)


# ------------------------------------------------------------------------ the exploratory study (issues 36, 42)

def _families():
    from probdr_lite.experiments.families import (EQUIVALENCE_MARGINS, arm_correlations, family_table,
                                                  initialisation_effect, intervention_table, leave_one_out)
    from probdr_lite.experiments.files import intervention_rows, task_rows

    rows = {t: task_rows(t) for t in ("charlm", "vit")}
    explo = family_table("primary", rows, margins=EQUIVALENCE_MARGINS)
    interaction = [initialisation_effect(rows[t], cells="both", budget=b, cov_type="cluster")
                   for t in ("charlm", "vit") for b in ("early", "plateau")]
    vo_rows = {t: intervention_rows(t) for t in rows}
    vo = intervention_table({t: (vo_rows[t], vo_rows[t]) for t in rows})
    return {"rows": rows, "explo": explo, "loo": leave_one_out("primary", rows), "interaction": interaction,
            "vo": vo, "R": R, "TR": TR, "pvalue": prose.pvalue, "arm_correlations": arm_correlations}


def _holds_and_fails_when_flipped(sentence: str, name: str, flip, match: str) -> None:
    """The claim cell naming ``sentence`` passes on the committed rows and raises, naming the sentence, once ``flip``
    has changed one fact in a copy of ``names[name]``."""
    names = _families()
    source = claim_cell(sentence)
    run(source, **names)
    flipped = copy.deepcopy(names[name])
    flip(flipped)
    with pytest.raises(ClaimError, match=match):
        run(source, **{**names, name: flipped})


FRAGILE = "Three of its five sign verdicts hang on single seeds"


def test_fragile_verdict_claim_fails_when_a_fragile_verdict_holds_without_every_seed():
    def lm_default_survives(loo):
        cell = next(e for e in loo if (e["task"], e["init"], e["budget"]) == ("charlm", "default", "early"))
        cell["without"] = {s: cell["verdict"] for s in cell["without"]}

    _holds_and_fails_when_flipped(FRAGILE, "loo", lm_default_survives, "hang on single seeds")


INTERACTION = "In every model and budget the initialisation's effect lies on the side of A - I doing better"


def test_interaction_claim_fails_when_an_interval_holds_zero():
    def charlm_interval_holds_zero(interaction):
        interaction[0]["ci"] = (interaction[0]["ci"][0], 0.01)

    _holds_and_fails_when_flipped(INTERACTION, "interaction", charlm_interval_holds_zero, "In every model and budget")


REVERSE = "The reverse intervention's shift cannot be told from zero"


def test_intervention_claim_fails_when_the_reverse_share_may_be_all_of_it():
    def reverse_set_reaches_all_of_it(vo):
        reverse = next(e for e in vo if (e["task"], e["scheme"]) == ("vit", "default-vo-gpt2"))
        reverse["share_sim_pieces"] = [(reverse["share_sim_pieces"][0][0], 1.2)]

    _holds_and_fails_when_flipped(REVERSE, "vo", reverse_set_reaches_all_of_it, "cannot be told from zero")
