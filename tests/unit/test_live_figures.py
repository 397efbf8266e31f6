"""The data side of the kernel-free live figures (probdr_lite.presentation.live); the browser side is in tests/book."""

import base64
import json

import numpy as np
import pytest

from probdr_lite.presentation.live import (
    ASSET_FILES,
    LiveFigure,
    array,
    asset_text,
    control,
    decode_points,
    grid_cells,
    points,
)

from .chapter_calls import chapter_calls, words_passed


def chapter_text(chapter, builder):
    """The templates the chapter passes its live figure (see test_live_captions.py)."""
    return words_passed(chapter_calls(chapter, builder)[0], "text")


def test_assets_are_package_resources():
    for name in ASSET_FILES:
        assert len(asset_text(name)) > 500
    assert "function toyStep" in asset_text("live.js")
    with pytest.raises(ValueError, match="name must be one of"):
        asset_text("other.js")


@pytest.mark.parametrize("bits", [8, 16])
def test_points_round_trip_within_half_a_quantisation_step(bits):
    rng = np.random.default_rng(0)
    xy = rng.normal(size=(3, 4, 50, 2)) * np.array([1.0, 30.0])  # very different extents per axis
    xy[1, 2, 7] = np.nan  # a point that is not drawn
    ref = points(xy, ["a", "b"], bits=bits)
    back = decode_points(ref)
    assert back.shape == xy.shape
    assert np.array_equal(np.isnan(back), np.isnan(xy))
    ok = np.isfinite(xy)
    # each frame's own box: error at most half a step of its extent, per axis
    extent = np.nanmax(xy, axis=2, keepdims=True) - np.nanmin(xy, axis=2, keepdims=True)
    step = extent / ((255 if bits == 8 else 65535) - 1)
    err = np.abs(back - xy)
    assert np.all(err[ok] <= (0.5 * step * (1 + 1e-9) + 1e-12).repeat(50, axis=2)[ok])


def test_points_with_a_fixed_box_clip_nothing_inside_it():
    xy = np.array([[[0.0, 0.0], [1.0, -1.0], [-1.0, 1.0]]])
    back = decode_points(points(xy, ["a"], bits=16, box=(-2, 2, -2, 2)))
    assert np.allclose(back, xy, atol=4 / 65534)
    with pytest.raises(ValueError, match="bits must be one of 8, 16; got 12"):
        points(xy, ["a"], bits=12)


def test_array_is_little_endian_in_control_order():
    a = np.arange(6.0).reshape(2, 3)
    ref = array(a, ["x", "y"])
    raw = np.frombuffer(base64.b64decode(ref["b64"]), dtype="<f8")
    assert ref["grid"] == [2, 3] and ref["item"] == [] and np.array_equal(raw, a.ravel())
    with pytest.raises(ValueError, match="dtype"):
        array(a, ["x"], "f16")


def test_controls_check_their_values():
    c = control("k", "k", [1, 2, 3], 2)
    assert c["default"] == 1 and c["kind"] == "range"
    with pytest.raises(ValueError, match="control 'k' default must be one of 1, 2; got 5"):
        control("k", "k", [1, 2], 5)
    with pytest.raises(ValueError, match=r"control 'k' len\(values\) must be in \[2, inf\); got 1"):
        control("k", "k", [1], 1)
    with pytest.raises(ValueError, match="kind"):
        control("k", "k", [1, 2], 1, kind="knob")
    with pytest.raises(ValueError, match="control 'k' labels must have 2 entries, one per value; got 3"):
        control("k", "k", [1, 2], 1, labels=["a", "b", "c"])
    cells = list(grid_cells([control("a", "a", [1, 2], 1), control("b", "b", ["x", "y", "z"], "x")], ["a", "b"]))
    assert len(cells) == 6 and cells[1] == ((0, 1), {"a": 1, "b": "y"})


def test_live_figure_html_holds_its_spec_and_keeps_its_budget():
    spec = {"controls": [control("k", "k", [1, 2], 1)], "panels": [], "readouts": [],
            "caption": "a </script> in text must not end the script"}
    fig = LiveFigure(spec, "demo")
    html = fig._repr_html_()
    assert 'id="probdr-live-demo"' in html and 'data-probdr-live="1"' in html
    data = html.split('class="probdr-live-spec">', 1)[1].rsplit("</script>", 1)[0]
    assert "</script>" not in data and json.loads(data)["caption"] == spec["caption"]
    with pytest.raises(ValueError, match="max_bytes"):
        LiveFigure({**spec, "caption": "x" * 5000}, "big", max_bytes=4000)


def _readout(fig, name):
    spec = [r for r in fig.spec["readouts"] if r["name"] == name][0]
    dtype = {"f64": "<f8", "f32": "<f4", "u8": "u1"}[spec["dtype"]]
    return np.frombuffer(base64.b64decode(spec["b64"]), dtype=dtype).reshape(spec["grid"] + spec["item"])


def test_beta_live_numbers_are_the_closed_forms():
    from probdr_lite.presentation.live.builders import beta_live
    from probdr_lite.graphs import knn_graph, laplacian
    from probdr_lite.probdr import le_closed_form

    rng = np.random.default_rng(1)
    Y = np.r_[rng.normal(size=(20, 3)), rng.normal(size=(20, 3)) + 1.0]
    labels = np.repeat([0, 1], 20)
    L = laplacian(knn_graph(Y, n_neighbors=8))
    betas = [0.05, 0.3, 1.0]
    text = chapter_text("probdr_elbo", "beta_live")
    fig = beta_live(L, labels, betas=betas, n_show=6, beta=0.3, text=text)
    s1 = _readout(fig, "s1")
    for k, b in enumerate(betas):
        X = le_closed_form(L, 6, b, centre=True)
        assert s1[k] == pytest.approx(float(np.sum(X[:, 0] ** 2)), rel=1e-12)
    assert np.allclose(_readout(fig, "threshold"), 1 / np.array(betas))
    with pytest.raises(ValueError, match="betas entry"):
        beta_live(L, labels, betas=[0.3, -1.0], text=text)


def test_toy_controls_cover_chapter_4s_panel():
    from probdr_lite.presentation.live.builders import toy_controls

    c = {x["name"]: x for x in toy_controls()}
    assert c["kappa"]["values"][0] == 14.1 and c["kappa"]["values"][-1] == 1000.0 and 100.0 in c["kappa"]["values"]
    assert {20.0, 50.1} <= set(c["kappa"]["values"])  # the settings tests/book compares with probdr_lite
    assert c["eta"]["values"][c["eta"]["default"]] == 0.4 and c["depth"]["values"] == list(range(17))
    assert c["variant"]["kind"] == "select" and c["mask"]["kind"] == "checkbox"


def test_chunks_stay_out_of_the_page_budget_and_keep_their_own():
    spec = {"controls": [control("k", "k", [1, 2, 3], 1), control("d", "d", [0, 1], 0)], "panels": [],
            "readouts": [], "chunks": {"dims": ["k"], "grid": [3]}}
    chunks = [{"xy": points(np.full((2, 5, 2), float(k)), ["d"])} for k in range(3)]
    fig = LiveFigure(spec, "chunky", chunks=chunks, max_bytes=2000)
    html = fig.html
    assert 'class="probdr-live-chunks"' in html and fig.n_bytes < len(html.encode())
    embedded = json.loads(html.split('class="probdr-live-chunks">', 1)[1].rsplit("</script>", 1)[0])
    assert len(embedded) == 3 and len(fig.chunk_bytes) == 3
    assert np.allclose(decode_points(embedded[2]["xy"]), 2.0)
    with pytest.raises(ValueError, match="max_chunk_bytes"):
        LiveFigure(spec, "chunky", chunks=chunks, max_chunk_bytes=100)
    with pytest.raises(ValueError, match=r"chunks must have 3 entries, one per cell of \['k'\]; got 2"):
        LiveFigure(spec, "chunky", chunks=chunks[:2])
    with pytest.raises(ValueError, match="go together"):
        LiveFigure(spec, "chunky")
    with pytest.raises(ValueError, match=r"spec\['chunks'\]\['dims'\] entry must be one of 'k', 'd'; got 'x'"):
        LiveFigure({**spec, "chunks": {"dims": ["x"], "grid": [3]}}, "chunky", chunks=chunks)


def test_mnist_live_uses_the_chapters_function_and_its_ranges():
    """On a small subset and grid: the default frames are run_blocks's, each chunk holds one setting's depths; by
    default the grid is the chapter's (SLIDERS, the kernel panel's ranges too), opening at PAPER's settings."""
    from probdr_lite.presentation.live.builders import mnist_live
    from probdr_lite.chapters.mnist_at_init import PAPER, SLIDERS, mnist_latents, run_blocks

    X0, labels = mnist_latents(n=100)
    text = chapter_text("mnist_at_init", "mnist_live")
    fig = mnist_live(X0, labels, kappas=(0.3, 30.0, 3000.0), etas=(0.2, 0.4), betas=(0.0, 1.0), text=text)
    assert fig.spec["chunks"] == {"dims": ["kappa", "eta", "beta"], "grid": [3, 2, 2]}
    xy = decode_points(fig.chunks[4 + 3]["xy"])  # kappa = 30, eta = 0.4, beta = 1: every depth of the default
    path = run_blocks(X0, 8, 30.0, 0.4, 1.0)
    span = np.ptp(path[-1][:, :2], axis=0)
    assert xy.shape == (9, 100, 2) and np.all(np.abs(xy[-1] - path[-1][:, :2]) <= span / 254 + 1e-6)
    assert fig.spec["panels"][0]["key"]["labels"] == [str(d) for d in range(10)]
    small = mnist_latents(n=20)
    whole = mnist_live(*small, n_layers=1, text=text)  # the chapter's grid: 72 settings of one block on 20 images
    controls = {c["name"]: c for c in whole.spec["controls"]}
    for name, s in SLIDERS.items():
        values = controls[name]["values"]
        assert values == list(s["grid"]) and values[controls[name]["default"]] == getattr(PAPER, name)


def _toy_effect(betas=(0.1, 10.0), **kw):
    from probdr_lite.presentation.figures.block import make_toy
    from probdr_lite.chapters.transformer_block import toy_beta_effect

    toy = make_toy("moons", n=40, noise=0.1, d_q=8)
    return toy, toy_beta_effect(toy, kappas=(30.0, 100.0), betas=betas, eta=0.4, depth=4, **kw)


def test_toy_beta_effect_measures_the_blocks_and_turns_weak_at_its_threshold():
    """The distances against blocks run step by step here, the weight a point gives itself against the softmax of
    the logits kappa cos - beta [i = j], and ``weak`` on both sides of the largest change."""
    from scipy.special import logsumexp

    from probdr_lite.unrolled import block_step

    toy, effect = _toy_effect()
    X0 = toy.X0.numpy()
    cos = X0 @ X0.T / toy.d_q
    start = toy.unlift(toy.X0)
    for row in effect["rows"]:
        kappa = row["kappa"]
        for beta, moved, moved_1, own in zip(effect["betas"], row["moved"], row["moved_1"], row["self"]):
            S = kappa * cos - beta * np.eye(len(X0))
            assert own == pytest.approx(np.exp(np.diag(S) - logsumexp(S, axis=1)).mean(), rel=1e-9)
            X, dist = toy.X0, []
            for _ in range(4):
                X = block_step(X, kappa, 0.4, beta, "paper")
                dist.append(np.linalg.norm(toy.unlift(X) - start, axis=1).mean())
            assert (moved_1, moved) == pytest.approx((dist[0], dist[-1]), rel=1e-9)
        assert row["change"] == pytest.approx(row["moved"][1] / row["moved"][0] - 1)
    # weak: every kappa's change is below the threshold, so it turns at the largest one
    smallest, largest = sorted(abs(r["change"]) for r in effect["rows"])
    assert 0 < smallest < largest < 0.9 and effect["weak_below"] == 0.1 and effect["weak"] is (largest < 0.1)
    assert _toy_effect(weak=1.01 * largest)[1]["weak"] is True
    assert _toy_effect(weak=0.99 * largest)[1]["weak"] is False
    assert _toy_effect(weak=(smallest + largest) / 2)[1]["weak"] is False
    with pytest.raises(ValueError, match="betas must be the two ends"):
        _toy_effect(betas=(10.0, 0.1))


def toy_rows(first_step=(0.02, 0.021)):
    """Two kappas; one block at kappa = 1000 changes its distance by 20 %, at kappa = 100 by what ``first_step``
    says (5 % by default)."""
    return [{"kappa": 100.0, "moved": [0.10, 0.103], "moved_1": list(first_step), "self": [0.05, 0.001],
             "change": 0.03},
            {"kappa": 1000.0, "moved": [0.05, 0.06], "moved_1": [0.01, 0.012], "self": [0.219, 0.0002],
             "change": 0.2}]


def test_toy_beta_facts_state_the_effects_numbers():
    from probdr_lite.chapters.transformer_block import toy_beta_facts

    effect = {"rows": toy_rows(), "betas": [0.1, 10.0], "eta": 0.4, "depth": 8, "variant": "paper", "d_q": 16,
              "weak_below": 0.1, "weak": False}
    f = toy_beta_facts(effect)
    assert (f["beta_lo"], f["beta_hi"], f["depth"], f["d_q"], f["weak_below"]) == (0.1, 10.0, 8, 16, 0.1)
    assert (f["ff_lo"], f["ff_hi"]) == pytest.approx((2 / 16.1, 2 / 26))  # the feed-forward weight 2/(d_q + beta)
    assert (f["kappa_at"], f["kappa_narrow"]) == (100.0, 1000.0)
    assert (f["moved_lo_narrow"], f["moved_hi_narrow"], f["change_percent_narrow"]) == pytest.approx((0.05, 0.06, 20))
    assert (f["self_lo_narrow"], f["self_hi_narrow"]) == pytest.approx((21.9, 0.02))
    assert (f["first_lo_narrow"], f["first_hi_narrow"]) == (0.01, 0.012)
    for weak in (True, False):
        assert toy_beta_facts({**effect, "weak": weak})["weak"] is weak
    with pytest.raises(ValueError, match="two kappas"):
        toy_beta_facts({**effect, "rows": toy_rows()[:1]})
