"""The objections chapter's claim cells: each fails, naming its sentence, when the facts that make the sentence true
are flipped, and passes with facts like the chapter's.

Each test computes the facts as the chapter does (the chapter's ``*_facts`` functions of
:mod:`probdr_lite.chapters.objections`, on small inputs shaped like the chapter's), reads the hidden cell that holds
the claim from ``book/src/objections.py`` (found by its sentence) and runs it in a namespace holding those facts.
"""

import jupytext
import numpy as np
import pytest

from probdr_lite.metrics import METRICS
from probdr_lite.chapters import objections as V
from probdr_lite.presentation import prose
from probdr_lite.presentation.prose import ClaimError

from .chapter_calls import ROOT
from .test_objections import metrics_dict

CHAPTER = ROOT / "book" / "src" / "objections.py"


def claim_cell(sentence: str) -> str:
    """The source of the chapter's one code cell that claims ``sentence``."""
    nb = jupytext.read(CHAPTER, fmt="py:percent")
    cells = [c.source for c in nb.cells if c.cell_type == "code" and "claim(" in c.source and sentence in c.source]
    assert len(cells) == 1, f"{len(cells)} cells claim {sentence!r}"
    return cells[0]


def run(sentence: str, **namespace):
    names = {"glue": prose.glue, "claim": prose.claim, "num": prose.num, "pct": prose.pct, "sci": prose.sci,
             "verdicts": V, **namespace}
    exec(compile(claim_cell(sentence), str(CHAPTER), "exec"), names)


def raises_naming(sentence: str, **namespace):
    with pytest.raises(ClaimError, match="rewrite it") as err:
        run(sentence, **namespace)
    assert sentence in str(err.value)


# Objection 2: the paper's scale is indefinite and singular at every step
WISHART = "the scale is indefinite and singular at every one of the points of the path"


def test_wishart_claim_holds_with_the_chapters_kind_of_facts_and_fails_when_one_step_is_positive():
    lo, null, sym = [-0.103, -0.09, -0.08], [6.6e-16, 1e-16, 2e-16], [0.0100, 0.011, 0.0105]
    run(WISHART, f2=V.wishart_facts(lo, null, sym, 0.01))
    raises_naming(WISHART, f2=V.wishart_facts([-0.103, 0.02, -0.08], null, sym, 0.01))  # one step not indefinite
    raises_naming(WISHART, f2=V.wishart_facts(lo, [6.6e-16, 0.3, 2e-16], sym, 0.01))  # one step not singular
    raises_naming("with L_sym + gamma I the scale is a valid Wishart parameter",
                  f2=V.wishart_facts(lo, null, [0.0100, -0.001, 0.0105], 0.01))


# Objection 4: no n and not the MNIST latents get below the threshold
REGULARISER = "none of these n gets below the threshold, and neither do the MNIST latents"
NS = (8, 32, 128, 512, 2048)


def regulariser_namespace(errors, mnist_errors, mnist_cosines=(0.449, 0.301, 0.110)):
    reg = {"ns": np.array(NS), "relative_error": np.tile(np.array(errors)[:, None], (1, 3))}
    reg_mnist = [(label, n, {"relative_error": e, "cosine": c, "norm_ratio": 1.0})
                 for (label, n), e, c in zip((("32 MNIST latents", 32), ("2,000 MNIST latents", 2000),
                                              ("the same after 8 steps", 2000)), mnist_errors, mnist_cosines)]
    f4 = V.regulariser_facts(reg["ns"], reg["relative_error"], 128, reg_mnist[1][2]["relative_error"],
                             reg_mnist[1][2]["cosine"], 2000, 1.0)
    return {"f4": f4, "reg": reg, "reg_mnist": reg_mnist, "NS": NS}


def test_regulariser_claim_fails_when_an_error_gets_below_the_threshold():
    chapter_like = ([0.24, 0.49, 0.91, 2.66, 14.54], [0.89, 4.53, 1.96])
    run(REGULARISER, **regulariser_namespace(*chapter_like))
    raises_naming(REGULARISER, **regulariser_namespace([0.05, 0.49, 0.91, 2.66, 14.54], chapter_like[1]))
    raises_naming(REGULARISER, **regulariser_namespace(chapter_like[0], [0.05, 4.53, 1.96]))  # 32 MNIST latents
    raises_naming("correlated rows such as MNIST digits spoil",
                  **regulariser_namespace(*chapter_like, mnist_cosines=(0.449, 0.97, 0.110)))


# The minor objection: the class-level numbers rise, the local ones fall
CLASS_LEVEL = "the two class-level numbers of the paper's update rise"
LOCAL = "the two local numbers fall"


KNN_FOLDS = [np.array([0.873, 0.8715, 0.8685, 0.8825, 0.8695]),  # the chapter's, over five seeds of the folds
             np.array([0.715, 0.7145, 0.7125, 0.711, 0.727])]


def clustering_namespace(last, nmi_spread=0.019, knn_folds=KNN_FOLDS):
    metrics = metrics_dict(([0.873, 0.046, 0.760, 0.425], last), ([0.873, 0.046, 0.760, 0.425], [0.8, 0.02, 1.0, 0.45]),
                           nmi_spread=nmi_spread)
    fm = V.clustering_facts(metrics, *knn_folds, variant="paper")
    return {"fm": fm, "metric_m": {r["metric"]: r for r in fm["metrics"]}, "METRICS": METRICS, "knn_folds": knn_folds}


def test_clustering_claims_fail_when_a_number_turns():
    chapter_like = [0.715, 0.003, 1.542, 0.466]  # 5-NN, silhouette, between/within, NMI at layer 8
    run(CLASS_LEVEL, **clustering_namespace(chapter_like))
    raises_naming(CLASS_LEVEL, **clustering_namespace([0.715, 0.003, 1.542, 0.433]))  # the NMI's runs overlap
    raises_naming(CLASS_LEVEL, **clustering_namespace(chapter_like, nmi_spread=0.03))  # wider runs overlap too
    raises_naming(LOCAL, **clustering_namespace([0.95, 0.003, 1.542, 0.466],  # 5-NN accuracy rises
                                                knn_folds=[KNN_FOLDS[0], KNN_FOLDS[0] + 0.05]))
    raises_naming(LOCAL, **clustering_namespace([0.715, 0.046, 1.542, 0.466]))  # the silhouette unchanged in print
    overlapping = [KNN_FOLDS[0], np.array([0.715, 0.87, 0.71, 0.711, 0.727])]  # one run at layer 8 as high as layer 0's
    raises_naming(LOCAL, **clustering_namespace(chapter_like, knn_folds=overlapping))
