"""The data side of the kernel-free live figures (probdr_lite.figures.live); the browser side is in tests/book."""

import base64
import json

import numpy as np
import pytest

from probdr_lite.figures.live import (
    ASSET_FILES,
    LiveFigure,
    array,
    asset_text,
    control,
    decode_points,
    grid_cells,
    points,
)


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
    with pytest.raises(ValueError, match="default"):
        control("k", "k", [1, 2], 5)
    with pytest.raises(ValueError, match="at least 2"):
        control("k", "k", [1], 1)
    with pytest.raises(ValueError, match="kind"):
        control("k", "k", [1, 2], 1, kind="knob")
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
    from probdr_lite.figures.live.chapters import beta_live
    from probdr_lite.graphs import knn_graph, laplacian
    from probdr_lite.probdr import le_closed_form

    rng = np.random.default_rng(1)
    Y = np.r_[rng.normal(size=(20, 3)), rng.normal(size=(20, 3)) + 1.0]
    labels = np.repeat([0, 1], 20)
    L = laplacian(knn_graph(Y, n_neighbors=8))
    betas = [0.05, 0.3, 1.0]
    fig = beta_live(L, labels, betas=betas, n_show=6, beta=0.3)
    s1 = _readout(fig, "s1")
    for k, b in enumerate(betas):
        X = le_closed_form(L, 6, b, centre=True)
        assert s1[k] == pytest.approx(float(np.sum(X[:, 0] ** 2)), rel=1e-12)
    assert np.allclose(_readout(fig, "threshold"), 1 / np.array(betas))
    with pytest.raises(ValueError, match="betas entry"):
        beta_live(L, labels, betas=[0.3, -1.0])


def test_toy_controls_cover_chapter_4s_panel():
    from probdr_lite.figures.live.chapters import toy_controls

    c = {x["name"]: x for x in toy_controls()}
    assert c["kappa"]["values"][0] == 1.0 and c["kappa"]["values"][-1] == 1000.0 and 100.0 in c["kappa"]["values"]
    assert c["eta"]["values"][c["eta"]["default"]] == 0.4 and c["depth"]["values"] == list(range(17))
    assert c["variant"]["kind"] == "select" and c["mask"]["kind"] == "checkbox"
