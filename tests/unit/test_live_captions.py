"""The live figures' sentences: the facts the builders compute (probdr_lite/presentation/live/builders.py) and the
templates the chapters pass them (book/src/*.py).

Each ``*_facts`` function is checked against the numbers it comes from, and each choice of sentence on numbers just
either side of where it turns, so a sentence the numbers do not support is not chosen. Then each chapter's call is
read: it passes its builder exactly the templates the builder fills, written out as strings (a template holds no
threshold, comparison or choice; the builder picks the sentence from a fact), and every template fills from the
facts of every case it is used for (no slot without a fact, every formatter fits). Last, each builder, run on
small data with the chapter's own templates, puts into its spec exactly the sentence the facts choose, in every
setting of its grid, and nothing where they choose none.
"""

import functools
import re
import string

import numpy as np
import pytest

from probdr_lite.presentation.live import builders as C
from probdr_lite.chapters.mnist_at_init import WORDS as MNIST_WORDS
from probdr_lite.presentation.prose import fill

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
    # one piece is a graph with an embedding; two or more are not (row-major over k, then the bandwidth)
    assert [s["apart"] for s in f["states"]] == [True, False, False, False, False, False, False, True, False]
    assert [s["pieces"] for s in f["states"]][:2] == [2, 1] and f["states"][7]["pieces"] == 3
    with pytest.raises(ValueError, match=r"pieces must have 2 entries, one per k \(row\); got 1"):
        C.neighbours_facts((3, 5), (1, 2), 0.1, [[1, 1]])


def test_beta_facts_count_the_directions_each_beta_keeps():
    f = C.beta_facts([0.05, 0.3, 1.0, 5.0], [5, 2, 1, 0], 2, 40, 6)
    assert f["caption"] == {"q": 2, "n_show": 6}
    s = f["states"]
    assert [x["kept"] for x in s] == [2, 2, 1, 0] and [x["below"] for x in s] == [5, 2, 1, 0]
    assert [x["threshold"] for x in s] == [20.0, 3.33, 1.0, 0.2] and all(x["n"] == 40 for x in s)
    assert [x["none_below"] for x in s] == [False, False, False, True]
    assert [x["none_kept"] for x in s] == [False, False, False, True]
    assert [x["one_kept"] for x in s] == [False, False, True, False]
    # with q = 1 one eigenvalue below the threshold or five keep the same single direction: a line either way
    assert [x["one_kept"] for x in C.beta_facts([0.1, 1.0], [5, 1], 1, 40, 6)["states"]] == [True, True]
    with pytest.raises(ValueError, match="n_below must have 2 entries, one per beta; got 1"):
        C.beta_facts([0.1, 1.0], [5], 2, 40, 6)
    with pytest.raises(ValueError, match=r"n_below entry must be in \[0, 6\]; got 7"):
        C.beta_facts([0.1, 1.0], [7, 1], 2, 40, 6)


def test_eta_facts():
    f = C.eta_facts(600, 4, 4, [False, False, True, True], [601, 601, 37, 2])
    assert f["caption"] == {"n_steps": 600, "n_etas": 4, "every": 4}
    assert [s["diverged"] for s in f["states"]] == [False, False, True, True]
    assert [s["last_step"] for s in f["states"]] == [600, 600, 36, 1]
    with pytest.raises(ValueError, match="n_iterates must have 2 entries, one per step size; got 1"):
        C.eta_facts(600, 2, 4, [False, True], [601])


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


def mnist_grid(rms_last, moved_last, ratio_last, L=2):
    """One eta and beta, four images of two classes; frame k after the last block is the points (+-w, 0), so its
    root mean squared spread is w; the frames before it are one spot at the origin."""
    K = len(rms_last)
    xy = np.zeros((K, 1, 1, L + 1, 4, 2))
    xy[:, 0, 0, L, :, 0] = np.outer(rms_last, [1, -1, 1, -1])
    grid = {"xy": xy, "moved": np.zeros((K, 1, 1, L + 1)), "spread": np.ones((K, 1, 1, L + 1)),
            "ratio": np.tile(np.linspace(0.8, 1.2, L + 1), (K, 1, 1, 1))}
    grid["moved"][:, 0, 0, L] = moved_last
    grid["ratio"][:, 0, 0, L] = ratio_last
    return grid


KAPPAS = (0.3, 1.0, 30.0, 100.0, 3000.0)
SPOT, WIDTH = 0.05, 2.0  # a frame is a spot below 0.1
STILL = MNIST_WORDS["still"]  # of the starting spread, 1 here


def mnist_example(ratio_last=(1.2, 1.2, 1.2, 1.5, 1.2)):
    rms = [0.9 * SPOT * WIDTH, 1.0, 1.0, 1.0, 1.0]  # the first kappa a spot, just below the figure's own test
    moved = [0.5, 0.5, 0.5, 0.5, 0.9 * STILL]  # the last one still, just below WORDS["still"]
    grid = mnist_grid(rms, moved, ratio_last)
    return grid, C.mnist_facts(grid, [0, 1, 0, 1], KAPPAS, (0.4,), (1.0,), (0, 0, 0), 2, variant="paper", eta=0.4,
                               beta=1.0, spot=SPOT, width=WIDTH)


def test_mnist_facts_say_what_each_kappa_does():
    _, f = mnist_example()
    assert f["caption"] == {"n": 4, "per_class": 2, "variant": "paper", "n_kappas": 5, "n_etas": 1, "n_betas": 1,
                            "eta": 0.4, "beta": 1.0, "n_layers": 2}
    g = f["kappa_groups"]
    assert [x["case"] for x in g] == ["spot", "move", "still"]
    assert [x["which"] for x in g] == ["$\\kappa = 0.3$", "$\\kappa$ = 1, 30 and 100", "$\\kappa = 3000$"]
    # the ratios printed to two decimals, once if they all print the same
    assert g[1]["ratios"] == ["1.20", "1.20", "1.50"] and g[0]["ratios"] == ["1.20"] and g[0]["ratio_start"] == 0.8
    assert g[1]["moved"] == ["0.50", "0.50", "0.50"] and all(x["still"] == STILL for x in g)
    _, same = mnist_example(ratio_last=(1.2, 1.204, 1.196, 1.2, 1.2))
    assert same["kappa_groups"][1]["ratios"] == ["1.20"]


@pytest.mark.parametrize("side", [0.9, 1.1])
def test_mnist_facts_cases_turn_at_the_figures_own_tests(side):
    rms = [side * SPOT * WIDTH, 1.0, 1.0, 1.0, 1.0]
    moved = [0.5, 0.5, 0.5, 0.5, side * STILL]
    grid = mnist_grid(rms, moved, [1.2] * 5)
    f = C.mnist_facts(grid, [0, 1, 0, 1], KAPPAS, (0.4,), (1.0,), (0, 0, 0), 2, variant="paper", eta=0.4, beta=1.0,
                      spot=SPOT, width=WIDTH)
    below = side < 1
    # states: kappa, eta, beta, depth row-major; the last depth of the first kappa is index 2
    assert f["states"][2]["is_spot"] is below and f["states"][2]["spread"] == pytest.approx(side * SPOT * WIDTH)
    assert f["states"][5]["is_spot"] is False  # kappa = 1 after the last block: spread 1
    assert f["states"][0]["is_spot"] is True  # before any block every frame here is one point
    cases = [x["case"] for x in f["kappa_groups"]]
    assert cases == (["spot", "move", "still"] if below else ["move"])


# ---------------------------------------------------------------------------------------------------------------------
# The chapters' templates


def facts_examples():
    """Each builder's facts, on numbers for which every sentence it can choose is chosen at least once."""
    return {
        "neighbours_live": C.neighbours_facts((3, 5), (0.5, 2), 0.1234, [[2, 1], [1, 1]]),
        "beta_live": C.beta_facts([0.05, 0.3, 1.0, 5.0], [5, 2, 1, 0], 2, 40, 15),
        "eta_live": C.eta_facts(600, 3, 4, [False, True, True], [601, 37, 2]),
        # the toy's sentence about beta in both wordings, with the paper's clause and without
        "toy_live": [C.toy_facts(300)],
        "mnist_live": mnist_example()[1],
    }


#: The fact that chooses each panel sentence (the builder's own rule, written again here).
CHOSEN_BY = {"apart": "apart", "no_direction": "none_below", "origin": "none_kept", "line": "one_kept",
             "diverged": "diverged", "spot_note": "is_spot"}


def toy_cases(key, examples):
    """The facts each filling of the toy's template ``key`` gets, in ``examples`` (a list of toy_facts)."""
    if key == "caption":
        return [f["caption"] for f in examples]
    if key == "beta":
        return [C.toy_beta_text(beta_effect())]
    return [{}]  # spot and empty: said by the browser; no slot


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
    """Each builder run on small data with the chapter's own templates."""
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


#: The facts a panel's alt text may use at build time, in the small figures (the "caption" facts its builder
#: passes); every other slot is the browser's.
BUILD_FACTS = {"mnist_live": {"n": 100}, "beta_live": {"n_show": 6, "q": 2}}


def alt_keys(builder, kind="alt"):
    """The builder's templates for its panels' alt texts (or, with ``kind="title"``, titles), in panel order."""
    return [k for k in C.TEXT_KEYS[builder] if k.startswith(kind)]


def facts_for(builder, key, facts):
    """The facts each filling of template ``key`` gets, in the examples."""
    if key.startswith(("alt", "title")):  # what the build fills, and what live.js fills for the spec's controls and readouts
        caption = (facts[0] if builder == "toy_live" else facts)["caption"]
        return [{**caption, **browser_values(small_figure(builder).spec)}]
    if builder == "toy_live":
        return toy_cases(key, facts)
    if key == "caption":
        extra = {"kappa_cases": "for $\\kappa = 1$ the points move"} if builder == "mnist_live" else {}
        return [{**facts["caption"], **extra}]
    if key.startswith("kappa_"):
        return [g for g in facts["kappa_groups"] if g["case"] == key[len("kappa_"):]]
    chosen = [s for s in facts["states"] if s[CHOSEN_BY[key]]]
    if key == "origin":  # the scatter's sentences exclude each other: no direction first
        return chosen
    if key == "line":
        return [s for s in chosen if not s["none_kept"]]
    return chosen


@pytest.mark.parametrize("builder", sorted(CHAPTERS))
def test_each_chapter_passes_its_builder_the_templates_it_fills(builder):
    text = chapter_text(builder)  # a dict of strings, written out in the chapter
    assert tuple(text) == C.TEXT_KEYS[builder]


@pytest.mark.parametrize("builder", sorted(CHAPTERS))
def test_every_template_fills_from_the_facts_of_every_case(builder):
    text, facts = chapter_text(builder), facts_examples()[builder]
    for key, template in text.items():
        cases = facts_for(builder, key, facts)
        assert cases, f"{builder}: the examples never choose {key!r}"
        for case in cases:
            for _, slot, _, _ in string.Formatter().parse(template):
                if slot is not None:
                    assert slot in case, f"{builder}[{key!r}]: the slot {slot!r} has no fact"
            filled = fill(template, case)
            assert "{" not in filled and "}" not in filled, filled


@pytest.mark.parametrize("builder, kind", [(b, "alt") for b in sorted(CHAPTERS)] + [("beta_live", "title")])
def test_each_panels_alt_text_is_the_chapters_with_the_browsers_slots_kept(builder, kind):
    """One alt template per panel, in order; in the spec, its build-time slots are filled and every control's and
    readout's slot is still there for live.js, so that what the browser reads out is the chapter's sentence, filled
    completely, for the setting shown. The same for chapter 3's panel titles."""
    text, spec = chapter_text(builder), small_figure(builder).spec
    keys = alt_keys(builder, kind)
    assert len(keys) == len(spec["panels"]), f"{builder}: {len(spec['panels'])} panels, {kind} templates {keys}"
    browser = browser_values(spec)
    for key, panel in zip(keys, spec["panels"]):
        slots = [slot for _, slot, _, _ in string.Formatter().parse(text[key]) if slot is not None]
        assert any(slot in browser for slot in slots), f"{builder}[{key!r}] says nothing of the setting shown"
        for slot in slots:
            assert slot in browser or slot in BUILD_FACTS.get(builder, {}), (
                f"{builder}[{key!r}]: {slot!r} is neither a control, a readout nor a fact of the build")
        assert browser_fill(panel[kind], spec) == fill(text[key], BUILD_FACTS.get(builder, {}), **browser)
        assert "{" not in browser_fill(panel[kind], spec)


def test_a_builder_without_the_chapters_templates_says_so():
    Y = np.random.default_rng(0).normal(size=(30, 3))
    with pytest.raises(ValueError, match="neighbours_live: text must be a dict of strings with exactly the keys"):
        C.neighbours_live(Y, np.arange(30.0), ks=(5, 8), factors=(1, 2), k=5, factor=1,
                          text={"caption": "no sentence for a graph in pieces"})


# ---------------------------------------------------------------------------------------------------------------------
# The builders put the chosen sentence into every setting


def _values(fig, name):
    import base64

    spec = [r for r in fig.spec["readouts"] if r["name"] == name][0]
    dtype = {"f64": "<f8", "f32": "<f4", "u8": "u1"}[spec["dtype"]]
    return np.frombuffer(base64.b64decode(spec["b64"]), dtype=dtype).reshape(spec["grid"] + spec["item"])


def test_neighbours_live_says_where_the_graph_falls_apart():
    rng = np.random.default_rng(0)  # two blobs far apart: few neighbours leave the graph in pieces
    Y = np.r_[rng.normal(size=(30, 3)), rng.normal(size=(30, 3)) + np.r_[4.0, 0, 0]]
    ks, factors = (2, 3, 20), (0.5, 1, 20)
    text = chapter_text("neighbours_live")
    fig = C.neighbours_live(Y, np.arange(60.0), ks=ks, factors=factors, k=3, factor=1, text=text)
    pieces = _values(fig, "pieces")
    facts = C.neighbours_facts(ks, factors, 0.0, pieces)
    notes = fig.spec["panels"][0]["note"]["text"]
    assert notes == [fill(text["apart"], s) if s["pieces"] > 1 else "" for s in facts["states"]]
    assert any(notes) and not all(notes)  # both kinds of setting are in this grid
    from probdr_lite.graphs import default_bandwidth

    t0 = default_bandwidth(Y, 3)
    assert fig.spec["caption"] == fill(text["caption"], n_ks=3, n_bandwidths=3, factor_first=0.5, factor_last=20,
                                       t0=t0)


def test_beta_live_says_how_many_directions_are_left():
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
    assert {0, 1, 2} <= set(kept.tolist())  # the grid reaches every case
    bars, scatter = fig.spec["panels"][1]["note"]["text"], fig.spec["panels"][2]["note"]["text"]
    for b, k, q, bar, dots in zip(betas, below, kept, bars, scatter):
        facts = {"threshold": float(f"{1 / b:.3g}"), "n": 40}
        assert bar == (fill(text["no_direction"], facts) if k == 0 else "")
        assert dots == {0: fill(text["origin"], facts), 1: fill(text["line"], facts)}.get(q, "")
    assert fig.spec["caption"] == fill(text["caption"], q=2)


def test_eta_live_says_where_a_run_diverged():
    from probdr_lite.graphs import knn_graph, laplacian
    from probdr_lite.probdr import fit_le_elbo

    rng = np.random.default_rng(2)
    Y = rng.normal(size=(40, 3))
    L = laplacian(knn_graph(Y, n_neighbors=6))
    etas, T = [0.01, 0.05, 2.0, 20.0], 40
    text = chapter_text("eta_live")
    fig = C.eta_live(L, np.repeat([0, 1], 20), etas=etas, eta=0.05, n_steps=T, text=text)
    notes = fig.spec["panels"][2]["note"]["text"]
    for e, note in zip(etas, notes):
        fit = fit_le_elbo(L, 2, 0.3, eta=e, n_steps=T, seed=0, centre=True, store_every=T)
        assert note == (fill(text["diverged"], last_step=len(fit.elbo) - 1) if fit.diverged else "")
    assert any(notes) and not all(notes)
    assert fig.spec["caption"] == fill(text["caption"], n_steps=T, n_etas=4, every=1)


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


def test_mnist_live_caption_and_spot_notes_are_the_chapters_sentences():
    from probdr_lite.chapters.mnist_at_init import mnist_latents

    X0, labels = mnist_latents(n=100)
    text = chapter_text("mnist_live")
    kappas = (0.3, 30.0, 3000.0)
    fig = C.mnist_live(X0, labels, kappas=kappas, etas=(0.2, 0.4), betas=(0.0, 1.0), text=text)
    grid = C.mnist_grid(X0, labels, kappas, (0.2, 0.4), (0.0, 1.0))
    fixed = fig.spec["panels"][0]["fixed_bounds"]
    width = min(fixed[1] - fixed[0], fixed[3] - fixed[2])
    facts = C.mnist_facts(grid, labels, kappas, (0.2, 0.4), (0.0, 1.0), (1, 1, 1), 8, variant="paper", eta=0.4,
                          beta=1.0, spot=0.01, width=width)
    notes = fig.spec["panels"][0]["note"]["text"]
    assert notes == [fill(text["spot_note"], s) if s["is_spot"] else "" for s in facts["states"]]
    assert any(notes)
    clauses = "; ".join(fill(text["kappa_" + g["case"]], g) for g in facts["kappa_groups"])
    assert fig.spec["caption"] == fill(text["caption"], facts["caption"], kappa_cases=clauses)
    assert all(k in " ".join(g["which"] for g in facts["kappa_groups"]) for k in ("0.3", "30", "3000"))
