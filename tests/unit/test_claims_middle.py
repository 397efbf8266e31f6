"""The claims of the unrolled-inference and transformer-block chapters: each claim cell raises ClaimError, naming its
sentence, when the facts are flipped, and passes with the facts the chapter computes. And one setting, one place:
the toy's sliders are defined once (TOY_SETTINGS), and the live caption's sentence about beta is the chapter's
paragraph, word for word.
"""

import ast
import inspect
import re
from pathlib import Path

import jupytext
import numpy as np
import pytest
import torch

from probdr_lite.chapters.objections import tangent_part
from probdr_lite.chapters.transformer_block import TOY_SETTINGS, make_toy, toy_beta_range
from probdr_lite.chapters.unrolled_inference import ETAS_SHOWN
from probdr_lite.presentation.prose import ClaimError, claim, num, pct
from probdr_lite.unrolled import attention_matrix, euler_diffusion_errors, regulariser_gradient

ROOT = Path(__file__).resolve().parents[2]
SRC = {name: ROOT / "book" / "src" / f"{name}.py" for name in ("unrolled_inference", "transformer_block")}


def claim_cell(chapter, sentence):
    """The source of the chapter's one code cell whose claim names ``sentence``."""
    nb = jupytext.read(SRC[chapter], fmt="py:percent")
    found = [c.source for c in nb.cells if c.cell_type == "code" and "claim(" in c.source and sentence in c.source]
    assert len(found) == 1, (chapter, sentence, len(found))
    return found[0]


def run_cell(source, **facts):
    ns = {"np": np, "torch": torch, "claim": claim, "num": num, "pct": pct, "glue": lambda name, text: None}
    ns.update(facts)
    exec(compile(source, "claim cell", "exec"), ns)


def check(chapter, sentence, real, flipped):
    source = claim_cell(chapter, sentence)
    run_cell(source, **real)
    with pytest.raises(ClaimError, match=re.escape(sentence)):
        run_cell(source, **flipped)


# ---------------------------------------------------------------------------------------------------------------------
# Chapter 4: the step sizes' three bands

def ascent_facts(diverging=(0.06, 0.07), short=(0.002, 0.005, 0.01)):
    """eta_runs' facts as the chapter's nine runs give them (thresholds 1/ell = 0.0251, 0.0569)."""
    etas = list(ETAS_SHOWN)
    diverged = [e in diverging for e in etas]
    gram = [np.nan if d else (0.5 if e in short else 1e-4) / (1 + 10 * e) for e, d in zip(etas, diverged)]
    return {"etas": etas, "diverged": diverged, "diverged_at": [40 if d else None for d in diverged], "gram": gram,
            "converged": [not d and g < 1e-2 for d, g in zip(diverged, gram)], "n_steps": 600, "gram_below": 1e-2,
            "safe": 0.0251, "divergent": 0.0569}


def test_the_divergent_runs_are_those_past_the_threshold():
    sentence = "The runs that diverge are exactly those past the divergence threshold"
    check("unrolled_inference", sentence, {"ascent": ascent_facts(), "marks": {"slowest": 0.59}},
          {"ascent": ascent_facts(diverging=(0.056, 0.06, 0.07)), "marks": {"slowest": 0.59}})


def test_the_three_bands_are_in_order():
    sentence = "The slow runs are still short of a Gram error"
    # a fast step that stays short breaks the order of the bands
    check("unrolled_inference", sentence, {"ascent": ascent_facts(), "marks": {"slowest": 0.59}},
          {"ascent": ascent_facts(short=(0.002, 0.005, 0.01, 0.05)), "marks": {"slowest": 0.59}})


def test_a_larger_step_converges_faster_until_one_does_not():
    sentence = "larger eta, up to the threshold, converges faster"
    slower = ascent_facts()
    slower["gram"][5] = 1e-3  # eta = 0.05 ends further from X* than eta = 0.04
    check("unrolled_inference", sentence, {"ascent": ascent_facts(), "marks": {"slowest": 0.59}},
          {"ascent": slower, "marks": {"slowest": 0.59}})


@pytest.fixture(scope="module")
def watched_run():
    """The chapter's watched run: gradient ascent at eta = 1/ell for N_STEPS steps on its 300 digits."""
    from probdr_lite.chapters.probdr_elbo import SETUP
    from probdr_lite.chapters.unrolled_inference import N_STEPS
    from probdr_lite.data import load_mnist
    from probdr_lite.graphs import knn_graph, laplacian
    from probdr_lite.probdr import fit_le_elbo, le_closed_form, step_sizes

    Y, _ = load_mnist(n=SETUP.n, stratified=True)
    L = laplacian(knn_graph(Y.astype(np.float64), n_neighbors=SETUP.k))
    eta = step_sizes(L, SETUP.beta, n_components=SETUP.q)["safe"]
    fit = fit_le_elbo(L, SETUP.q, SETUP.beta, eta=eta, n_steps=N_STEPS, seed=0, centre=True, store_every=1)
    return {"fit": fit, "X_star": le_closed_form(L, SETUP.q, SETUP.beta, centre=True), "shown": (0, 10, 50, 150, N_STEPS),
            "T": N_STEPS}


class _Fit:
    """A stand-in for fit_le_elbo's result with some of its arrays replaced."""

    def __init__(self, fit, **arrays):
        self.__dict__.update({k: getattr(fit, k) for k in ("X", "elbo", "gram_error", "iterates")}, **arrays)


def test_the_three_phases_fail_when_the_run_does_something_else(watched_run):
    smoothing, growth = "Smoothing (the first frames)", "Growth (the middle frames)"
    alignment = "Alignment (the last and longest phase)"
    fit = watched_run["fit"]
    check("unrolled_inference", smoothing, watched_run,
          {**watched_run, "fit": _Fit(fit, iterates=fit.iterates * 0.1)})  # a start smaller than the answer
    grown = fit.iterates.copy()
    grown[150] *= 0.5  # at step 150 the embedding is still far short of its size
    check("unrolled_inference", growth, watched_run, {**watched_run, "fit": _Fit(fit, iterates=grown)})
    aligned = fit.gram_error.copy()
    aligned[150] = 1e-3  # already aligned when the size is reached: no alignment phase
    check("unrolled_inference", alignment, watched_run, {**watched_run, "fit": _Fit(fit, gram_error=aligned)})


def test_the_hand_run_and_the_slope_claims(watched_run):
    fit = watched_run["fit"]
    sentence = "The two give the same iterate to round-off"
    check("unrolled_inference", sentence, {"X": fit.X.copy(), "fit": fit}, {"X": fit.X + 1e-6, "fit": fit})
    falling = fit.elbo.copy()
    falling[300] -= 1.0  # one step that lowers the ELBO
    check("unrolled_inference", sentence, {"X": fit.X.copy(), "fit": fit},
          {"X": fit.X.copy(), "fit": _Fit(fit, elbo=falling)})
    check("unrolled_inference", "The fitted slope of the Gram error", {"measured": 0.014905, "predicted": 0.0149051},
          {"measured": 0.0160, "predicted": 0.0149051})


def test_the_curvature_bound_claim_fails_past_ell_or_outside_the_log_det_interval():
    sentence = "the largest curvature met is below ell"
    beta, marks = 0.3, {"safe": 0.0251}  # ell = 39.8; the log-det interval [-0.417, 3.333]
    measured = {"largest": 36.28, "lowest": -36.28, "highest": 1.46, "logdet_low": -0.254, "logdet_high": 3.138}
    check("unrolled_inference", sentence, {"curvature": measured, "marks": marks, "beta": beta},
          {"curvature": {**measured, "largest": 40.0}, "marks": marks, "beta": beta})
    check("unrolled_inference", sentence, {"curvature": measured, "marks": marks, "beta": beta},
          {"curvature": {**measured, "logdet_low": -0.5}, "marks": marks, "beta": beta})


def test_the_start_is_small_entry_by_entry_and_larger_than_the_answer():
    sentence = "Each entry is small, but its norm is larger than the answer's"
    X_0 = 0.1 * np.random.default_rng(0).standard_normal((300, 2))
    X_0 -= X_0.mean(axis=0)
    check("unrolled_inference", sentence, {"X_0": X_0, "start_ratio": 3.1}, {"X_0": X_0, "start_ratio": 0.9})
    check("unrolled_inference", sentence, {"X_0": X_0, "start_ratio": 3.1}, {"X_0": X_0 + 0.5, "start_ratio": 3.1})


def test_the_faster_step_claim_of_exercise_3(watched_run):
    sentence = "on this start it does, and the number of layers needed to bring the Gram error below 1e-2 falls"
    fit = watched_run["fit"]
    faster = _Fit(fit, gram_error=np.r_[fit.gram_error[::2], fit.gram_error[-1:]])  # there in about half the steps
    falling = fit.elbo.copy()
    falling[5] -= 1.0
    check("unrolled_inference", sentence, {"fit": fit, "fast": faster}, {"fit": fit, "fast": _Fit(faster, elbo=falling)})
    check("unrolled_inference", sentence, {"fit": fit, "fast": faster}, {"fit": faster, "fast": fit})


# ---------------------------------------------------------------------------------------------------------------------
# Chapter 5: computed here as the chapter computes them, on the chapter's toy

@pytest.fixture(scope="module")
def toy():
    return make_toy("moons", n=300, noise=0.07, d_q=16)


def test_the_regulariser_approximation_is_poor_on_the_toy(toy):
    X0, beta, d_q = toy.X0, TOY_SETTINGS["beta"]["default"], toy.d_q
    exact, paper = regulariser_gradient(X0, beta), 2 * X0 / (d_q + beta)
    cos = float((exact * paper).sum() / (exact.norm() * paper.norm()))
    ratio = float(exact.norm() / paper.norm())
    sentence = "On this toy the approximation is poor in direction and in size"
    check("transformer_block", sentence, {"cos_reg": cos, "ratio_reg": ratio}, {"cos_reg": 0.95, "ratio_reg": 1.2})


def test_halving_h_halves_the_error(toy):
    kappa, eta, beta = (TOY_SETTINGS[k]["default"] for k in ("kappa", "eta", "beta"))
    A = attention_matrix(toy.X0, kappa, beta)
    rows = euler_diffusion_errors(A.numpy(), toy.X0.numpy(), tau=2 * eta, n_steps=(1, 2, 4, 8, 16))
    second_order = [{**r, "relative_error": 1e-3 / 4 ** i} for i, r in enumerate(rows)]
    check("transformer_block", "Halving h about halves the error", {"rows": rows}, {"rows": second_order})


def test_beta_barely_changes_the_picture(toy):
    effect = toy_beta_range(toy)
    sentence = "Over the whole range of beta the picture barely changes"
    from probdr_lite.presentation.live.builders import toy_beta_text

    def facts(e):  # the cell computes the effect itself: hand it the real one, or the flipped one
        return {"toy": toy, "toy_beta_range": lambda t: e, "toy_beta_text": toy_beta_text, **beads_namespace(toy)}

    check("transformer_block", sentence, facts(effect), facts({**effect, "weak": False}))


def beads_namespace(toy, paths=None):
    from probdr_lite.chapters.transformer_block import bead_facts, toy_paths

    names = {k: TOY_SETTINGS[k]["default"] for k in ("kappa", "eta", "beta", "depth")}
    return {**names, "bead_facts": bead_facts,
            "toy_paths": toy_paths if paths is None else (lambda *args, **kwargs: paths)}


def test_the_points_gather_into_beads_only_after_the_blocks(toy):
    """At the sliders' defaults every variant gathers the points into beads along each moon; the points before any
    block (each path's first row) do not form beads, and the claim fails on them."""
    from probdr_lite.chapters.transformer_block import toy_paths

    sentence = "At these values the points gather into beads along each moon"
    effect = toy_beta_range(toy)
    from probdr_lite.presentation.live.builders import toy_beta_text

    common = {"toy": toy, "toy_beta_range": lambda t: effect, "toy_beta_text": toy_beta_text}
    paths = toy_paths(toy, TOY_SETTINGS["depth"]["default"], *(TOY_SETTINGS[k]["default"] for k in ("kappa", "eta",
                                                                                                  "beta")))
    unmoved = {v: p[:1] for v, p in paths.items()}  # layer 0 only: the moons as drawn
    check("transformer_block", sentence, {**common, **beads_namespace(toy, paths)},
          {**common, **beads_namespace(toy, unmoved)})


def test_bead_facts_count_groups_by_hand(toy):
    """Three tight pairs and two lone points of the toy's shape: five groups, 60 % of the points shared."""
    from probdr_lite.chapters.transformer_block import bead_facts

    P = np.full(toy.Y.shape, np.nan)
    P[:8] = [[0, 0], [0, 0.001], [0.5, 0], [0.5, 0.001], [-0.5, 0], [-0.5, 0.001], [0.9, 0.9], [-0.9, -0.9]]
    f = bead_facts(toy, P)
    assert f["n"] == 8 and f["groups"] == 5 and f["shared"] == pytest.approx(6 / 8)
    assert f["pure"] == pytest.approx(1.0)  # the first points of the toy are all of its first class
    with pytest.raises(ValueError, match="positions"):
        bead_facts(toy, P[:10])


def test_the_identity_and_agreement_claims_fail_off_round_off():
    check("transformer_block", "With the diagonal weights an A - I block is a plain attention block",
          {"gap_plain": 1e-16, "gap_back": 2e-16}, {"gap_plain": 1e-16, "gap_back": 1e-6})
    check("transformer_block", "The two agree to rounding error.", {"forward_gaps": {"paper": 5e-14}},
          {"forward_gaps": {"paper": 5e-14, "attention": 1e-8}})


def test_the_layer_norm_claim_fails_when_a_random_point_is_closer():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(1, 16, generator=gen, dtype=torch.float64) * 3 + 1
    from probdr_lite.unrolled import layer_norm

    ln = torch.nn.LayerNorm(16, eps=0.0, elementwise_affine=False)
    ns = {"x": x, "ln": ln, "layer_norm": layer_norm, "candidates": torch.zeros(20_000, 16)}
    sentence = "Pi(x) against 20,000 random points of the constraint set"
    check("transformer_block", sentence, {**ns, "closest": torch.tensor(11.0)}, {**ns, "closest": torch.tensor(9.0)})


def test_the_causal_claim_needs_a_large_change():
    sentence = "The mask makes A far more asymmetric"
    real = {"upper_full": 0.5, "A_causal": torch.tril(torch.ones(3, 3)), "asym_full": 0.152, "asym_causal": 1.330,
            "cos_causal": 0.417, "cosines": {"diffusion": 0.991}, "pct": pct}
    check("transformer_block", sentence, real, {**real, "asym_causal": 0.3, "cos_causal": 0.95})


def test_the_symmetric_variant_scores_one(toy):
    """The claim cell beside the +1.000 recomputes its numbers from the chapter's names; a cosine of 0.999 fails."""
    from probdr_lite.unrolled import update_direction

    kappa, beta = TOY_SETTINGS["kappa"]["default"], TOY_SETTINGS["beta"]["default"]
    X0 = toy.X0
    n, d_q = X0.shape
    exact_part = tangent_part(update_direction(X0, kappa, beta, "exact"), X0)
    cosines = {}
    for v in ("attention", "diffusion", "paper", "symmetric"):
        part = tangent_part(update_direction(X0, kappa, beta, v), X0)
        cosines[v] = float((part * exact_part).sum() / (part.norm() * exact_part.norm()))
    real = dict(X0=X0, kappa=kappa, beta=beta, d_q=d_q, I=torch.eye(n, dtype=X0.dtype),
                A=attention_matrix(X0, kappa, beta), tangent=tangent_part, regulariser_gradient=regulariser_gradient,
                update_direction=update_direction, exact_part=exact_part, cosines=cosines)
    check("transformer_block", "The symmetric variant scores +1.000", real,
          {**real, "cosines": {**cosines, "symmetric": 0.999}})


# ---------------------------------------------------------------------------------------------------------------------
# One setting, one place

def chapter_toy_text():
    """The text dict the chapter passes to toy_live, read from its source."""
    tree = ast.parse(SRC["transformer_block"].read_text(encoding="utf-8"))
    call = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n.func) == "toy_live"]
    assert len(call) == 1
    return ast.literal_eval([k.value for k in call[0].keywords if k.arg == "text"][0])


def test_the_live_caption_says_the_chapters_sentence_about_beta():
    """The caption's sentence about beta (numbers pasted into ``{name}`` slots) and the chapter's paragraph (the same
    numbers glued as ``bt_name``) are the same words: a change to one that is not made to the other fails here."""
    caption = chapter_toy_text()["beta"]
    nb = jupytext.read(SRC["transformer_block"], fmt="py:percent")
    paragraphs = [p for c in nb.cells if c.cell_type == "markdown" for p in c.source.split("\n\n")
                  if "{glue:text}`bt_" in p]
    assert len(paragraphs) == 1
    markdown = re.sub(r"\{glue:text\}`bt_(\w+)`", r"{\1}", " ".join(paragraphs[0].split()))
    assert " ".join(caption.split()) == markdown


SETTING_NAMES = ("kappa", "eta", "beta", "depth")


def literal_settings(tree):
    """(name, value) for every keyword, default or assignment that gives kappa, eta, beta or depth a number."""
    found = []
    for n in ast.walk(tree):
        if isinstance(n, ast.keyword) and n.arg in SETTING_NAMES and isinstance(n.value, ast.Constant):
            found.append((n.arg, n.value.value))
        elif isinstance(n, ast.arguments):
            args = n.args[len(n.args) - len(n.defaults):] + n.kwonlyargs
            defaults = list(n.defaults) + list(n.kw_defaults)
            found += [(a.arg, d.value) for a, d in zip(args, defaults)
                      if a.arg in SETTING_NAMES and isinstance(d, ast.Constant) and d.value is not None]
        elif isinstance(n, ast.Assign):
            for t in n.targets:
                names = [t] if isinstance(t, ast.Name) else list(getattr(t, "elts", []))
                values = [n.value] if isinstance(t, ast.Name) else list(getattr(n.value, "elts", []))
                found += [(a.id, v.value) for a, v in zip(names, values) if isinstance(a, ast.Name)
                          and a.id in SETTING_NAMES and isinstance(v, ast.Constant)]
    return found


def test_the_toys_sliders_are_defined_once():
    """No second literal of a toy setting: the chapter, the kernel panel and the live figure read TOY_SETTINGS."""
    from probdr_lite.presentation.figures import block
    from probdr_lite.presentation.live import builders

    sources = {"chapter": SRC["transformer_block"].read_text(encoding="utf-8"),
               "block": inspect.getsource(block), "toy_controls": inspect.getsource(builders.toy_controls),
               "toy_live": inspect.getsource(builders.toy_live)}
    for where, text in sources.items():
        assert literal_settings(ast.parse(text)) == [], where
    from probdr_lite.presentation.figures.block import TOY_DEFAULTS
    assert TOY_DEFAULTS == {k: TOY_SETTINGS[k]["default"] for k in ("kappa", "eta", "beta")}
    controls = {c["name"]: c for c in builders.toy_controls()}
    for name in SETTING_NAMES:
        c = controls[name]
        assert tuple(c["values"]) == tuple(TOY_SETTINGS[name]["values"])
        assert c["values"][c["default"]] == TOY_SETTINGS[name]["default"]


def test_the_kernel_panel_reads_the_same_ranges():
    from probdr_lite.presentation.figures.block import variant_panel

    panel = variant_panel(make_toy("moons", n=40, noise=0.1, d_q=8))
    for name in SETTING_NAMES:
        values = TOY_SETTINGS[name]["values"]
        s = panel.specs[name]
        # a log slider's ends are the grid's ends unrounded (the values carry 3 significant figures), so that its
        # default lies exactly on the slider's own grid: equal to the rounding of the values
        assert (s.low, s.high) == pytest.approx((values[0], values[-1]), rel=5e-3)
        assert s.value == TOY_SETTINGS[name]["default"]
    import matplotlib.pyplot as plt
    plt.close(panel.fig)


def test_a_setting_literal_is_caught():
    found = literal_settings(ast.parse("kappa, eta, beta = 100.0, 0.4, 1.0\nf(kappa=30.0)\ndef g(beta=1.0): pass"))
    assert sorted(found) == sorted([("kappa", 100.0), ("eta", 0.4), ("beta", 1.0), ("kappa", 30.0), ("beta", 1.0)])
