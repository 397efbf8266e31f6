"""The claim checks of the Laplacian Eigenmaps and ELBO chapters fail when their numbers stop making the sentence true.

Each test computes the facts as the chapter does (on the chapter's data, or on small inputs of the same shape),
executes the chapter's own claim cell, read from ``book/src/NAME.py``, in a namespace holding them, and checks that
it passes; then it flips one fact (or feeds numbers that make the sentence false) and checks that the same cell
raises :class:`~probdr_lite.presentation.prose.ClaimError` naming the sentence.
"""

import ast
import copy
from functools import lru_cache
from pathlib import Path

import jupytext
import numpy as np
import pytest

from probdr_lite.presentation import prose
from probdr_lite.presentation.prose import ClaimError

ROOT = Path(__file__).resolve().parents[2]


def strings(source: str) -> list:
    """The string literals of a cell (Python joins the pieces of a sentence split over lines into one)."""
    return [n.value for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def claim_cell(chapter: str, sentence: str) -> str:
    """The source of the one code cell of ``chapter`` that checks ``sentence`` (or a sentence that begins with it)."""
    nb = jupytext.read(ROOT / "book" / "src" / f"{chapter}.py", fmt="py:percent")
    cells = [c.source for c in nb.cells if c.cell_type == "code" and "claim(" in c.source
             and any(sentence in text for text in strings(c.source))]
    assert len(cells) == 1, f"{chapter}: {len(cells)} claim cells name {sentence!r}"
    return cells[0]


def run(source: str, namespace: dict) -> dict:
    """Execute a chapter cell with the chapter's claim, and a glue that only records (no kernel here)."""
    glued = {}
    env = {"np": np, "claim": prose.claim, "num": prose.num, "glue": lambda name, text: glued.update({name: text}),
           **namespace}
    exec(compile(source, "<chapter cell>", "exec"), env)
    return glued


def raises_naming(source: str, namespace: dict, sentence: str):
    with pytest.raises(ClaimError) as err:
        run(source, namespace)
    assert sentence in str(err.value)


# ---------------------------------------------------------------------------------------------------------------------
# Laplacian Eigenmaps: where the order along the roll is kept and lost


ORDER_LOST = ("at the widest bandwidth the first coordinate keeps the order up to k = 20 neighbours and loses it "
              "from k = 30 on")
ORDER_BACK = "with 40 neighbours the order comes back once t is shrunk to t0 and stays at a quarter of it"


@lru_cache(maxsize=1)
def roll_facts():
    """The chapter's order facts on the chapter's swiss roll (computed once: nine graphs of 800 points)."""
    from probdr_lite.chapters.laplacian_eigenmaps import harmonic_score, order_score, unrolling_facts
    from probdr_lite.data import toy_manifold
    from probdr_lite.eigenmaps import embed_graph
    from probdr_lite.graphs import default_bandwidth, knn_graph
    from probdr_lite.presentation.figures.neighbourhoods import BANDWIDTH_FACTORS, NEIGHBOURS

    Y_roll, t_roll = toy_manifold("swiss_roll", n=800, seed=0)
    source = claim_cell("laplacian_eigenmaps", ORDER_LOST)
    computed = {}

    def record(*args, **kwargs):
        computed["order"] = unrolling_facts(*args, **kwargs)
        return computed["order"]

    ns = {"Y_roll": Y_roll, "t_roll": t_roll, "unrolling_facts": record, "default_bandwidth": default_bandwidth,
          "NEIGHBOURS": NEIGHBOURS, "BANDWIDTH_FACTORS": BANDWIDTH_FACTORS, "k_sweep": (6, 10, 20, 30, 40),
          "t_sweep": (20, 5, 1, 0.25), "k_many": 40, "embed_graph": embed_graph, "knn_graph": knn_graph,
          "order_score": order_score, "harmonic_score": harmonic_score}
    glued = run(source, ns)  # the real facts make the sentences true
    return source, ns, computed["order"], glued


def with_order(ns, order):
    return {**ns, "unrolling_facts": lambda *args, **kwargs: order}


def test_the_order_claims_hold_on_the_chapters_numbers():
    _, _, order, glued = roll_facts()
    assert glued["k_kept_last"] == "20" and glued["k_lost_first"] == "30" and glued["in_order_from"] == "0.90"
    assert [f["in_order"] for f in order["frames"]] == [True, True, True, False, False, False, False, True, True]


def test_the_order_claim_fails_if_k_30_kept_the_order():
    source, ns, order, _ = roll_facts()
    flipped = copy.deepcopy(order)
    flipped["frames"][3]["in_order"] = True  # k = 30 at the widest bandwidth
    raises_naming(source, with_order(ns, flipped), ORDER_LOST)


def test_the_order_claim_fails_if_the_order_did_not_come_back():
    source, ns, order, _ = roll_facts()
    flipped = copy.deepcopy(order)
    flipped["frames"][-1]["in_order"] = False  # k = 40 at t0 / 4
    raises_naming(source, with_order(ns, flipped), ORDER_BACK)


def test_the_order_claim_fails_if_a_graph_fell_apart():
    source, ns, order, _ = roll_facts()
    flipped = copy.deepcopy(order)
    flipped["frames"][0]["apart"] = True
    raises_naming(source, with_order(ns, flipped), "the graph stays in one piece at every setting of the table")


UNROLLED = "With k = 10 neighbours and heat-kernel weights at t = t0 ... the colours run in order along the first"
HARMONIC = "the second coordinate is mostly a second harmonic of the first"


def test_the_default_claims_fail_when_the_default_folds():
    source, ns, _, _ = roll_facts()
    # the default setting's first coordinate no longer sorts the points along the roll
    raises_naming(source, {**ns, "order_score": lambda x, t: 0.5}, UNROLLED)
    # and a second coordinate unrelated to the first
    raises_naming(source, {**ns, "harmonic_score": lambda a, b: 0.1}, HARMONIC)


def test_harmonic_and_order_scores_against_closed_forms():
    """A second harmonic along a line, cos(2 theta) against cos(theta), scores 1; an unrelated vector near 0; the
    order score is 1 for any monotone function of the position."""
    from probdr_lite.chapters.laplacian_eigenmaps import harmonic_score, order_score

    theta = np.linspace(0.01, np.pi - 0.01, 501)
    assert harmonic_score(np.cos(theta), np.cos(2 * theta)) == pytest.approx(1.0, abs=1e-4)  # ties at equal |rank - mid|
    assert harmonic_score(np.cos(theta), np.random.default_rng(0).normal(size=501)) < 0.1
    assert order_score(np.exp(theta), theta) == pytest.approx(1.0) and order_score(-theta, theta) == pytest.approx(1.0)


# ---------------------------------------------------------------------------------------------------------------------
# Laplacian Eigenmaps: the three Laplacians, the energy, and the smoothest functions


ZERO = "All three Laplacians send something to zero"
SYMMETRIC = "L and L_sym are symmetric; L_rw is not"


def laplacians_namespace(W):
    import scipy.sparse as sp

    from probdr_lite.graphs import laplacian

    D = sp.diags(np.asarray(W.sum(axis=1)).ravel())
    return {"L": laplacian(W, kind="unnormalized"), "L_sym": laplacian(W, kind="symmetric"),
            "L_rw": laplacian(W, kind="random_walk"), "D": D, "ones": np.ones(W.shape[0]),
            "sqrt_d": np.sqrt(D.diagonal())}


def test_the_laplacian_claims_hold_on_a_path_and_fail_on_a_ring():
    import scipy.sparse as sp

    from probdr_lite.graphs import knn_graph

    source = claim_cell("laplacian_eigenmaps", SYMMETRIC)
    s = np.linspace(0, 3 * np.pi, 12) + np.random.default_rng(0).normal(0, 0.1, 12)
    run(source, laplacians_namespace(knn_graph(np.column_stack([s, np.sin(s)]), n_neighbors=2)))
    # a ring: every point has degree 2, so D^{-1} W = W / 2 is symmetric and the sentence's reason is gone
    ring = sp.csr_matrix(np.roll(np.eye(12), 1, axis=1) + np.roll(np.eye(12), -1, axis=1))
    raises_naming(source, laplacians_namespace(ring), SYMMETRIC)
    broken = laplacians_namespace(ring)
    broken["ones"] = np.arange(12.0)  # not the constant vector: L does not send it to zero
    raises_naming(source, broken, ZERO)


SAME_ENERGY = "Added up edge by edge or computed as the trace, the energy of a random embedding of the twelve points"


def test_the_energy_claim_fails_when_the_two_sums_differ():
    source = claim_cell("laplacian_eigenmaps", SAME_ENERGY)
    glued = run(source, {"E_edges": 49.674001738929135, "E_trace": 49.674001738929114})
    assert glued["energy_small"] == "49.6740"
    raises_naming(source, {"E_edges": 49.674001738929135, "E_trace": 49.6740018}, SAME_ENERGY)


SLOW = "The first eigenvector changes slowly from one end of the spiral to the other"
OSCILLATES = "The twelfth oscillates along the spiral; a random vector changes colour at most edges"
UNROLLS = "The first eigenvector alone already unrolls the spiral"


@lru_cache(maxsize=1)
def spiral_namespace():
    from probdr_lite.chapters.laplacian_eigenmaps import order_score, smooth_functions, smoothness_facts
    from probdr_lite.data import toy_manifold
    from probdr_lite.graphs import knn_graph

    Y, t = toy_manifold("swiss_roll", n=300, seed=0)
    return {"W_spiral": knn_graph(Y[:, [0, 2]], n_neighbors=6), "t_spiral": t, "colour_index": 12,
            "smooth_functions": smooth_functions, "smoothness_facts": smoothness_facts, "order_score": order_score}


def test_the_smoothness_claims_hold_and_fail_with_their_functions():
    from probdr_lite.chapters.laplacian_eigenmaps import smooth_functions

    source = claim_cell("laplacian_eigenmaps", SLOW)
    ns = spiral_namespace()
    run(source, ns)
    real = smooth_functions(ns["W_spiral"], 12)
    # the random vector drawn first: it does not change slowly
    raises_naming(source, {**ns, "smooth_functions": lambda W, m: [real[2], real[1], real[0]]}, SLOW)
    # a "random" vector that is v_1 again: it changes colour nowhere
    raises_naming(source, {**ns, "smooth_functions": lambda W, m: [real[0], real[1], real[0]]}, OSCILLATES)
    # positions shuffled: sorting by v_1 no longer lists the points in their order
    shuffled = np.random.default_rng(0).permutation(ns["t_spiral"])
    raises_naming(source, {**ns, "t_spiral": shuffled}, UNROLLS)


def test_smoothness_facts_against_hand_counts():
    """On a path of 5 points: the energy is the sum over both directions of each edge, the largest step and the
    sign changes are counted by hand."""
    import scipy.sparse as sp

    from probdr_lite.chapters.laplacian_eigenmaps import smoothness_facts

    W = sp.csr_matrix(np.eye(5, k=1) + np.eye(5, k=-1))
    f = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
    g = np.array([1.0, -1.0, 1.0, -1.0, 1.0])
    out = smoothness_facts(W, [{"f": f}, {"f": g}], colour_step=0.3)
    assert out["energy"] == pytest.approx([2 * 4 * 1.0, 2 * 4 * 4.0])
    assert out["largest_step"] == pytest.approx([0.25, 1.0]) and out["changes"] == [0.0, 1.0]
    assert out["crossings"] == [1, 4]


# ---------------------------------------------------------------------------------------------------------------------
# Laplacian Eigenmaps: the agreement with scikit-learn


ROUNDOFF = "on the same graph the two implementations agree to round-off on every data set"
MNIST_MOST = "the Belkin-Niyogi graph moves the embedding most on MNIST"
MNIST = "MNIST (1,000 digits)"


def agreement_rows(same=1.0, mnist_cosines=(0.99751, 0.99507)):
    """Rows shaped like compare_figure's, with the chapter's cosines (to 5 decimals)."""
    return [{"name": "swiss roll", "n": 800, "cosines": np.array([0.99989, 0.99954]), "agreement_same_graph": 1.0},
            {"name": "S-curve", "n": 800, "cosines": np.array([0.9998, 0.99927]), "agreement_same_graph": same},
            {"name": MNIST, "n": 1000, "cosines": np.array(mnist_cosines), "agreement_same_graph": 1.0}]


def test_the_agreement_claims_hold_and_fail_with_their_numbers():
    from probdr_lite.chapters.laplacian_eigenmaps import agreement_facts

    source = claim_cell("laplacian_eigenmaps", ROUNDOFF)
    glued = run(source, {"agreement": agreement_facts(agreement_rows()), "mnist": MNIST})
    assert (glued["same_decimals_min"], glued["bn_decimals_min"], glued["bn_decimals_max"]) == ("15", "2", "3")
    # the same graph agreeing to only 6 decimals on one data set: not round-off
    raises_naming(source, {"agreement": agreement_facts(agreement_rows(same=1.0 - 1e-6)), "mnist": MNIST}, ROUNDOFF)
    # MNIST agreeing as well as the S-curve: no longer the data set the convention moves most
    raises_naming(source, {"agreement": agreement_facts(agreement_rows(mnist_cosines=(0.9999, 0.9992))),
                           "mnist": MNIST}, MNIST_MOST)
    # the flipped fact itself, with the numbers unchanged
    flipped = agreement_facts(agreement_rows())
    flipped["to_roundoff"] = False
    raises_naming(source, {"agreement": flipped, "mnist": MNIST}, ROUNDOFF)


APART = "the first two coordinates, found with no labels, already set the 0s and the 1s apart"


def test_the_digits_claim_holds_and_fails_with_the_digits_set_apart():
    """The claim cell reads which digits classes_apart sets apart; any other set, or none, makes it fail."""
    source = claim_cell("laplacian_eigenmaps", APART)
    facts = {"classes": list(range(10)), "purity": [0.865, 0.814, 0.41, 0.6, 0.47, 0.37, 0.69, 0.6, 0.34, 0.43],
             "apart": [0, 1], "others_max": 0.69}
    ns = {"k_compare": 10, "Y_mnist": None, "labels_mnist": None, "laplacian_eigenmaps": lambda *a, **k: None,
          "pct": prose.pct}
    glued = run(source, {**ns, "classes_apart": lambda *a, **k: facts})
    assert (glued["purity_0"], glued["purity_1"], glued["purity_others"]) == ("86 %", "81 %", "69 %")
    for apart in ([0], [0, 1, 6], []):
        raises_naming(source, {**ns, "classes_apart": lambda *a, apart=apart, **k: {**facts, "apart": apart}}, APART)


# ---------------------------------------------------------------------------------------------------------------------
# The ELBO chapter: the closed form and PCA


CLOSED_FORM = "The squared column lengths match (shrinkage)"


@lru_cache(maxsize=1)
def elbo_namespace():
    """The closed form as the chapter computes it, on the chapter's 300 digits and graph."""
    from probdr_lite.data import load_mnist
    from probdr_lite.eigenmaps import laplacian_eigenmaps
    from probdr_lite.graphs import knn_graph, laplacian
    from probdr_lite.metrics import subspace_agreement
    from probdr_lite.presentation.figures.elbo import BETA
    from probdr_lite.probdr import le_closed_form, le_elbo_grad

    Y, _ = load_mnist(n=300, stratified=True)
    Y = Y.astype(np.float64)
    q, k, beta = 2, 10, BETA[2]
    L = laplacian(knn_graph(Y, n_neighbors=k))
    X_star, lam = le_closed_form(L, q, beta, centre=True, return_eigenvalues=True)
    return {"Y": Y, "q": q, "k": k, "beta": beta, "L": L, "X_star": X_star, "lam": lam,
            "grad": le_elbo_grad(X_star, L, beta), "le_elbo_grad": le_elbo_grad,
            "laplacian_eigenmaps": laplacian_eigenmaps, "subspace_agreement": subspace_agreement}


def test_the_closed_form_claims_hold_and_fail_with_their_numbers():
    source = claim_cell("probdr_elbo", CLOSED_FORM)
    ns = elbo_namespace()
    run(source, ns)
    raises_naming(source, {**ns, "lam": ns["lam"] * 1.01}, CLOSED_FORM)  # eigenvalues 1 % off: lengths disagree
    raises_naming(source, {**ns, "grad": ns["grad"] + 1e-3}, "the gradient vanishes there")
    # the Laplacian-eigenmaps subspace itself: then the two are equal, not "close but not equal"
    same = {**ns, "laplacian_eigenmaps": lambda Y, q, n_neighbors: ns["X_star"]}
    raises_naming(source, same, "the two subspaces are close but not equal")


def test_the_pca_claim_fails_if_a_nearby_x_scored_higher():
    from probdr_lite.probdr import pca_closed_form, pca_elbo
    from sklearn.decomposition import PCA

    source = claim_cell("probdr_elbo", "every nearby X scores lower")
    rng = np.random.default_rng(0)
    Y = rng.normal(size=(40, 6)) * np.array([5.0, 3.0, 1.0, 1.0, 1.0, 1.0])
    Yc = Y - Y.mean(axis=0)
    C_hat = Yc @ Yc.T / Y.shape[1]
    sigma2 = np.linalg.eigvalsh(C_hat)[::-1][2:].mean()
    X_pca = pca_closed_form(C_hat, 2, sigma2)
    best = pca_elbo(X_pca, C_hat, sigma2, Y.shape[1])
    ns = {"X_pca": X_pca, "C_hat": C_hat, "sigma2": sigma2, "d": Y.shape[1], "Y": Y, "q": 2,
          "pca_scores": PCA(n_components=2, svd_solver="full").fit_transform(Y),
          "pca_elbo": pca_elbo, "subspace_agreement": __import__("probdr_lite.metrics").metrics.subspace_agreement}
    run(source, {**ns, "worse": [best - 1.0, best - 2.0]})
    raises_naming(source, {**ns, "worse": [best - 1.0, best + 1.0]}, "every nearby X scores lower")


# ---------------------------------------------------------------------------------------------------------------------
# The ELBO chapter: the readings of beta, the trap and the symmetric Laplacian


def test_the_gap_to_minus_kl_claim_fails_when_it_depends_on_x():
    sentence = "Its difference from -KL must not depend on X"
    source = claim_cell("probdr_elbo", sentence)
    run(source, {"elbo_plus_kl": [-161133.01628347556, -161133.01628595754]})  # the chapter's, 1.5e-11 apart
    raises_naming(source, {"elbo_plus_kl": [-161133.01628347556, -161132.0]}, sentence)


def test_the_symmetric_laplacian_claim_fails_short_of_exact():
    sentence = "recovers the degree-weighted version exactly"
    source = claim_cell("probdr_elbo", sentence)
    run(source, {"sym_cosines": np.array([1.0, 1.0 - 1e-14])})
    raises_naming(source, {"sym_cosines": np.array([1.0, 0.9999])}, sentence)


def test_the_beta_claim_needs_both_thresholds_inside_the_slider():
    from probdr_lite.presentation.figures.elbo import BETA

    sentence = "As beta grows, the embedding shrinks"
    source = claim_cell("probdr_elbo", sentence)
    ns = elbo_namespace()
    glued = run(source, {**ns, "BETA": BETA, "N_SHOW": 15})
    assert glued["n_show"] == "15"
    # lambda_1 so small that 1/lambda_1 lies above the slider's largest beta: the first coordinate never goes
    raises_naming(source, {**ns, "BETA": BETA, "N_SHOW": 15, "lam": np.array([0.5, ns["lam"][1]])}, sentence)


def test_the_trap_claims_fail_for_a_regularised_laplacian():
    from probdr_lite.probdr import regularize_laplacian, unbounded_direction_demo

    source = claim_cell("probdr_elbo", "climbs without end")
    ns = elbo_namespace()
    ns = {"L": ns["L"], "beta": ns["beta"], "gammas": (0.01, 0.1), "unbounded_direction_demo": unbounded_direction_demo,
          "regularize_laplacian": regularize_laplacian}
    run(source, ns)
    # a Laplacian that is already L + gamma I: its ELBO along the constant direction turns down
    raises_naming(source, {**ns, "L": regularize_laplacian(ns["L"], 0.05)}, "climbs without end")
    # curves drawn for twice each gamma: they peak where sqrt(1/gamma - beta) of the stated gamma is not
    doubled = {**ns, "regularize_laplacian": lambda L, g: regularize_laplacian(L, 2 * g)}
    raises_naming(source, doubled, "peaks where t^2 = 1/gamma - beta")
