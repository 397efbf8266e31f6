"""The live figures' words: the numbers the builders paste (probdr_lite/presentation/live/builders.py) into the
sentences the chapters pass them (book/src/*.py).

Each ``*_facts`` function is checked against the numbers it comes from. Then each chapter's call is read: it passes
its builder exactly the sentences the builder uses, written out as strings, and every one of them takes its numbers
(no slot without a number, every format spec fits). Last, each builder, run on small data with the chapter's own
sentences, puts into its spec the chapter's sentence with the numbers pasted, the same words at every setting of its
grid: no panel carries a sentence chosen per setting, and what a setting leaves (pieces of a graph, directions kept,
the step a run diverged at, the spread of the points) is a readout, checked here against an independent
recomputation.
"""

import functools
import re
import string

import numpy as np
import pytest

from probdr_lite.presentation.live import builders as C

from .chapter_calls import chapter_calls, words_passed

#: The chapter of each live figure's builder.
CHAPTERS = {"neighbours_live": "laplacian_eigenmaps", "beta_live": "probdr_elbo", "eta_live": "unrolled_inference",
            "toy_live": "transformer_block", "mnist_live": "mnist_at_init"}


def chapter_text(builder):
    calls = chapter_calls(CHAPTERS[builder], builder)
    assert len(calls) == 1, f"{CHAPTERS[builder]} calls {builder} {len(calls)} times"
    return words_passed(calls[0], "text")


# ---------------------------------------------------------------------------------------------------------------------
# The facts


def test_neighbours_facts():
    f = C.neighbours_facts((3, 5, 8), (0.5, 1, 2), 0.1234567, [[2, 1, 1], [1, 1, 1], [1, 3, 1]])
    assert f["caption"] == {"n_ks": 3, "n_bandwidths": 3, "factor_first": 0.5, "factor_last": 2, "t0": 0.1234567}
    # row-major over k, then the bandwidth
    assert [s["pieces"] for s in f["states"]] == [2, 1, 1, 1, 1, 1, 1, 3, 1]
    with pytest.raises(ValueError, match=r"pieces must have 2 entries, one per k \(row\); got 1"):
        C.neighbours_facts((3, 5), (1, 2), 0.1, [[1, 1]])


def test_beta_facts_count_the_directions_each_beta_keeps():
    f = C.beta_facts([0.05, 0.3, 1.0, 5.0], [5, 2, 1, 0], 2, 40, 6)
    assert f["caption"] == {"q": 2, "n_show": 6}
    s = f["states"]
    assert [x["kept"] for x in s] == [2, 2, 1, 0] and [x["below"] for x in s] == [5, 2, 1, 0]
    assert [x["threshold"] for x in s] == [20.0, 3.33, 1.0, 0.2] and all(x["n"] == 40 for x in s)
    # with q = 1 one eigenvalue below the threshold or five keep the same single direction
    assert [x["kept"] for x in C.beta_facts([0.1, 1.0], [5, 1], 1, 40, 6)["states"]] == [1, 1]
    with pytest.raises(ValueError, match="n_below must have 2 entries, one per beta; got 1"):
        C.beta_facts([0.1, 1.0], [5], 2, 40, 6)
    with pytest.raises(ValueError, match=r"n_below entry must be in \[0, 6\]; got 7"):
        C.beta_facts([0.1, 1.0], [7, 1], 2, 40, 6)


def test_eta_facts():
    f = C.eta_facts(600, 4, 4, [601, 601, 37, 2])
    assert f["caption"] == {"n_steps": 600, "n_etas": 4, "every": 4}
    assert [s["last_step"] for s in f["states"]] == [600, 600, 36, 1]
    with pytest.raises(ValueError, match="n_iterates must have 2 entries, one per step size; got 1"):
        C.eta_facts(600, 2, 4, [601])


def beta_effect(weak=True, variant="paper"):
    """A toy_beta_effect of two kappas (its facts are tested in test_live_figures.py)."""
    rows = [{"kappa": 100.0, "moved": [0.10, 0.103], "moved_1": [0.02, 0.021], "self": [0.05, 0.0], "change": 0.03},
            {"kappa": 1000.0, "moved": [0.05, 0.06], "moved_1": [0.01, 0.012], "self": [0.219, 0.0], "change": 0.2}]
    return {"rows": rows, "betas": [0.1, 10.0], "eta": 0.4, "depth": 8, "variant": variant, "d_q": 16,
            "weak_below": 0.1, "weak": weak}


def test_toy_facts():
    assert C.toy_facts(300) == {"caption": {"n": 300}}


def test_toy_beta_text_formats_the_numbers_of_beta_s_range():
    t = C.toy_beta_text(beta_effect())
    assert (t["beta_lo"], t["beta_hi"], t["kappa_at"], t["kappa_narrow"], t["depth"], t["d_q"]) == (
        "0.1", "10", "100", "1000", "8", "16")
    assert (t["moved_lo_at"], t["moved_hi_at"], t["change_at"], t["self_lo_narrow"]) == ("0.100", "0.103", "3", "21.9")
    assert (t["ff_lo"], t["ff_hi"]) == ("0.124", "0.077")


def test_mnist_facts_are_the_grids_numbers():
    f = C.mnist_facts([0, 1, 0, 1], (0.3, 1.0, 3000.0), (0.2, 0.4), (1.0,), 8, variant="paper", eta=0.4, beta=1.0)
    assert f == {"caption": {"n": 4, "per_class": 2, "variant": "paper", "n_kappas": 3, "n_etas": 2, "n_betas": 1,
                             "kappa_low": 0.3, "kappa_high": 3000.0, "eta": 0.4, "beta": 1.0, "n_layers": 8}}


# ---------------------------------------------------------------------------------------------------------------------
# The chapters' sentences


#: What live.js writes for a control's slot ``{name}`` and a readout's ``{=name}`` (``LiveFigure.prototype.fill``):
#: a slot that names neither stays as it is, braces and all.
BROWSER_SLOT = re.compile(r"\{(=?)([a-z_0-9]+)\}")


def browser_fill(template, spec):
    """``template`` as live.js fills it for the figure ``spec``: each control's and readout's slot becomes a
    value (here a marker naming it), any other slot is left as it is."""
    controls = {c["name"] for c in spec["controls"]}
    readouts = {r["name"] for r in spec["readouts"]}

    def value(m):
        kind, name = m.groups()
        if kind:
            return f"<readout {name}>" if name in readouts else m.group(0)
        return f"<control {name}>" if name in controls else m.group(0)

    return BROWSER_SLOT.sub(value, template)


def browser_values(spec):
    """The same markers as facts: what each of the spec's browser slots becomes, by its slot's name."""
    return {**{c["name"]: f"<control {c['name']}>" for c in spec["controls"]},
            **{"=" + r["name"]: f"<readout {r['name']}>" for r in spec["readouts"]}}


@functools.lru_cache(maxsize=None)
def small_figure(builder):
    """Each builder run on small data with the chapter's own sentences."""
    text = chapter_text(builder)
    rng = np.random.default_rng(3)
    if builder == "toy_live":
        from probdr_lite.presentation.figures.block import make_toy

        from probdr_lite.chapters.transformer_block import toy_beta_range

        toy = make_toy("moons", n=40, noise=0.1, d_q=8)
        return C.toy_live(toy, text=text, effect=toy_beta_range(toy))
    if builder == "mnist_live":
        from probdr_lite.chapters.mnist_at_init import mnist_latents

        X0, labels = mnist_latents(n=100)
        return C.mnist_live(X0, labels, kappas=(0.3, 30.0, 3000.0), etas=(0.2, 0.4), betas=(0.0, 1.0), text=text)
    Y = rng.normal(size=(40, 3))
    if builder == "neighbours_live":
        return C.neighbours_live(Y, np.arange(40.0), ks=(3, 8), factors=(0.5, 1), k=8, factor=1, text=text)
    from probdr_lite.graphs import knn_graph, laplacian

    L = laplacian(knn_graph(Y, n_neighbors=6))
    if builder == "beta_live":
        return C.beta_live(L, np.repeat([0, 1], 20), betas=[0.1, 0.3, 1.0], n_show=6, beta=0.3, text=text)
    return C.eta_live(L, np.repeat([0, 1], 20), etas=[0.01, 0.05, 20.0], eta=0.05, n_steps=20, text=text)


#: The numbers each small figure's sentences take at build time (the "caption" facts its builder pastes).
BUILD_FACTS = {
    "neighbours_live": {"n_ks", "n_bandwidths", "factor_first", "factor_last", "t0"},
    "beta_live": {"q", "n_show"},
    "eta_live": {"n_steps", "n_etas", "every"},
    "toy_live": {"n"},
    "mnist_live": set(C.mnist_facts([0, 1], (1.0,), (1.0,), (1.0,), 1, variant="paper", eta=1.0,
                                    beta=1.0)["caption"]),
}


def alt_keys(builder, kind="alt"):
    """The builder's sentences for its panels' alt texts (or, with ``kind="title"``, titles), in panel order."""
    return [k for k in C.TEXT_KEYS[builder] if k.startswith(kind)]


@pytest.mark.parametrize("builder", sorted(CHAPTERS))
def test_each_chapter_passes_its_builder_the_sentences_it_uses(builder):
    text = chapter_text(builder)  # a dict of strings, written out in the chapter
    assert tuple(text) == C.TEXT_KEYS[builder]


@pytest.mark.parametrize("builder", sorted(CHAPTERS))
def test_every_slot_of_a_chapters_sentence_is_a_number_it_gets(builder):
    """A caption's slots are the build's numbers; an alt text's or title's are those or the browser's (a control, a
    readout); the toy's sentence about beta takes toy_beta_text's, and its words for a degenerate panel none."""
    text, spec = chapter_text(builder), small_figure(builder).spec
    for key, sentence in text.items():
        slots = {slot for _, slot, _, _ in string.Formatter().parse(sentence) if slot is not None}
        if key == "caption":
            allowed = BUILD_FACTS[builder]
        elif key.startswith(("alt", "title")):
            allowed = BUILD_FACTS[builder] | set(browser_values(spec))
        elif key == "beta":
            allowed = set(C.toy_beta_text(beta_effect()))
        else:
            allowed = set()
        assert slots <= allowed, f"{builder}[{key!r}]: {sorted(slots - allowed)} are no numbers it is given"


@pytest.mark.parametrize("builder", sorted(CHAPTERS))
def test_no_panel_carries_a_sentence_chosen_per_setting(builder):
    """The words are the same at every setting: a panel may say, in the browser, that it has nothing to draw (the
    toy's words for that are the chapter's), but the build chooses no sentence for any setting."""
    spec = small_figure(builder).spec
    assert all("note" not in panel for panel in spec["panels"]), builder


@pytest.mark.parametrize("builder, kind", [(b, "alt") for b in sorted(CHAPTERS)] + [("beta_live", "title")])
def test_each_panels_alt_text_is_the_chapters_with_the_browsers_slots_kept(builder, kind):
    """One alt sentence per panel, in order; in the spec, its build-time slots are filled and every control's and
    readout's slot is still there for live.js, so that what the browser reads out is the chapter's sentence, filled
    completely, for the setting shown. The same for chapter 3's panel titles."""
    text, spec = chapter_text(builder), small_figure(builder).spec
    keys = alt_keys(builder, kind)
    assert len(keys) == len(spec["panels"]), f"{builder}: {len(spec['panels'])} panels, {kind} sentences {keys}"
    browser = browser_values(spec)
    build = {"mnist_live": {"n": 100}, "beta_live": {"n_show": 6, "q": 2}}.get(builder, {})
    for key, panel in zip(keys, spec["panels"]):
        slots = [slot for _, slot, _, _ in string.Formatter().parse(text[key]) if slot is not None]
        assert any(slot in browser for slot in slots), f"{builder}[{key!r}] says nothing of the setting shown"
        assert browser_fill(panel[kind], spec) == text[key].format(**build, **browser)
        assert "{" not in browser_fill(panel[kind], spec)


def test_a_builder_without_the_chapters_sentences_says_so():
    Y = np.random.default_rng(0).normal(size=(30, 3))
    with pytest.raises(ValueError, match="neighbours_live: text must be a dict of strings with exactly the keys"):
        C.neighbours_live(Y, np.arange(30.0), ks=(5, 8), factors=(1, 2), k=5, factor=1,
                          text={"caption": "no alt text"})
    with pytest.raises(KeyError, match="slot 'nowhere' has no number; numbers given"):
        C.neighbours_live(Y, np.arange(30.0), ks=(5, 8), factors=(1, 2), k=5, factor=1,
                          text={"caption": "a {nowhere} slot", "alt": "k = {n_neighbors}"})


# ---------------------------------------------------------------------------------------------------------------------
# The builders paste the numbers, and a setting's state is a readout


def _values(fig, name):
    import base64

    spec = [r for r in fig.spec["readouts"] if r["name"] == name][0]
    dtype = {"f64": "<f8", "f32": "<f4", "u8": "u1"}[spec["dtype"]]
    return np.frombuffer(base64.b64decode(spec["b64"]), dtype=dtype).reshape(spec["grid"] + spec["item"])


def test_neighbours_live_counts_where_the_graph_falls_apart():
    from scipy.sparse.csgraph import connected_components

    from probdr_lite.graphs import default_bandwidth, knn_graph

    rng = np.random.default_rng(0)  # two blobs far apart: few neighbours leave the graph in pieces
    Y = np.r_[rng.normal(size=(30, 3)), rng.normal(size=(30, 3)) + np.r_[4.0, 0, 0]]
    ks, factors = (2, 3, 20), (0.5, 1, 20)
    text = chapter_text("neighbours_live")
    fig = C.neighbours_live(Y, np.arange(60.0), ks=ks, factors=factors, k=3, factor=1, text=text)
    t0 = default_bandwidth(Y, 3)
    pieces = _values(fig, "pieces")
    for a, k in enumerate(ks):
        for b, f in enumerate(factors):
            W = knn_graph(Y, n_neighbors=k, mode="heat", bandwidth=float(f"{f * t0:.4g}"))
            assert pieces[a, b] == connected_components(W, directed=False)[0]
    assert (pieces > 1).any() and (pieces == 1).any()  # both kinds of setting are in this grid
    assert fig.spec["caption"] == text["caption"].format(n_ks=3, n_bandwidths=3, factor_first=0.5, factor_last=20,
                                                         t0=t0)


def test_beta_live_counts_the_directions_left():
    from probdr_lite.graphs import knn_graph, laplacian
    from probdr_lite.probdr import le_closed_form

    rng = np.random.default_rng(1)
    Y = np.r_[rng.normal(size=(20, 3)), rng.normal(size=(20, 3)) + 1.0]
    L = laplacian(knn_graph(Y, n_neighbors=8))
    _, lam = le_closed_form(L, 6, 0.01, centre=True, return_eigenvalues=True)
    # two directions kept, one (1/lambda_2 <= beta < 1/lambda_1), none (the threshold below lambda_1)
    betas = sorted({0.01, 0.3, float(f"{1 / np.sqrt(lam[0] * lam[1]):.3g}"), float(f"{2 / lam[0]:.3g}"), 1000.0})
    text = chapter_text("beta_live")
    fig = C.beta_live(L, np.repeat([0, 1], 20), betas=betas, n_show=6, beta=0.3, text=text)
    below, kept = _values(fig, "below").astype(int), _values(fig, "kept").astype(int)
    assert below.tolist() == [int((lam < 1.0 / b).sum()) for b in betas]
    assert kept.tolist() == [min(k, 2) for k in below.tolist()]
    assert {0, 1, 2} <= set(kept.tolist())  # the grid reaches every case
    assert fig.spec["caption"] == text["caption"].format(q=2, n_show=6)


def test_eta_live_gives_the_step_of_the_iterate_it_draws():
    from probdr_lite.graphs import knn_graph, laplacian
    from probdr_lite.probdr import fit_le_elbo

    rng = np.random.default_rng(2)
    Y = rng.normal(size=(40, 3))
    L = laplacian(knn_graph(Y, n_neighbors=6))
    etas, T = [0.01, 0.05, 2.0, 20.0], 40
    text = chapter_text("eta_live")
    fig = C.eta_live(L, np.repeat([0, 1], 20), etas=etas, eta=0.05, n_steps=T, text=text)
    shown = _values(fig, "shown")
    fits = [fit_le_elbo(L, 2, 0.3, eta=e, n_steps=T, seed=0, centre=True, store_every=T) for e in etas]
    assert shown.tolist() == [len(fit.elbo) - 1 for fit in fits]
    assert any(fit.diverged for fit in fits) and not all(fit.diverged for fit in fits)
    assert fig.spec["caption"] == text["caption"].format(n_steps=T, n_etas=4, every=1)


@pytest.mark.parametrize("variant", ["paper", "diffusion"])
def test_toy_live_caption_says_what_beta_does(variant):
    """The caption is the chapter's words: its caption with the number of points, then its sentence about beta
    with the numbers of beta's range pasted (no word chosen by code); the beta control's weak note is that
    sentence."""
    from probdr_lite.presentation.figures.block import make_toy
    from probdr_lite.chapters.transformer_block import toy_beta_range

    text = chapter_text("toy_live")
    toy = make_toy("moons", n=40, noise=0.1, d_q=8)
    effect = toy_beta_range(toy, variant=variant)
    fig = C.toy_live(toy, text=text, effect=effect, variant=variant)
    sentence = text["beta"].format(**C.toy_beta_text(effect))
    assert fig.spec["caption"] == text["caption"].format(n=40) + " " + sentence
    control = [c for c in fig.spec["controls"] if c["name"] == "beta"][0]
    assert control.get("weak") == sentence
    assert fig.spec["panels"][0]["degenerate"] == {"spot": text["spot"], "empty": text["empty"]}


def test_mnist_live_caption_pastes_the_grid_and_the_spread_is_a_readout():
    from probdr_lite.chapters.mnist_at_init import PAPER, mnist_latents
    from probdr_lite.metrics import rms_spread

    X0, labels = mnist_latents(n=100)
    text = chapter_text("mnist_live")
    kappas, etas, betas = (0.3, 30.0, 3000.0), (0.2, 0.4), (0.0, 1.0)
    fig = C.mnist_live(X0, labels, kappas=kappas, etas=etas, betas=betas, text=text)
    assert fig.spec["caption"] == text["caption"].format(
        n=100, per_class=10, variant="paper", n_kappas=3, n_etas=2, n_betas=2, kappa_low=0.3, kappa_high=3000.0,
        eta=PAPER.eta, beta=PAPER.beta, n_layers=PAPER.n_layers)
    grid = C.mnist_grid(X0, labels, kappas, etas, betas)
    spread = _values(fig, "spread")
    np.testing.assert_allclose(spread, rms_spread(grid["xy"]), rtol=1e-12)
    # the two coordinates gather at the wide kernel's end and stay put at the narrow one's, at the defaults
    assert spread[0, 1, 1, -1] < 0.01 * spread[0, 1, 1, 0] and spread[-1, 1, 1, -1] == pytest.approx(
        spread[-1, 1, 1, 0], rel=1e-3)
    assert [c["values"] for c in fig.spec["controls"][:3]] == [list(kappas), list(etas), list(betas)]
