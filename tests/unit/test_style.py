"""The book's colours stay distinguishable for readers with a colour-vision deficiency.

Each palette is passed through the simulation matrices of Machado, Oliveira & Fernandes (2009, severity 1:
protanopia, deuteranopia, tritanopia; applied to linear sRGB), converted to CIELAB, and every pair of colours
must stay at least ``MIN_DELTA_E`` apart (CIE76). Matplotlib's tab10, which the book used before, fails this
for protanopes (two classes 4.6 apart), so the test can fail.
"""

from __future__ import annotations

import itertools

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.colors import to_rgb

from probdr_lite.presentation.live.builders import CLASS_PALETTE
from probdr_lite.presentation.style import CLASS_COLOURS, VARIANT_STYLE
from probdr_lite.presentation.plotting import CLASS_COLOURS as PLOTTING_CLASS_COLOURS

SIMULATIONS = {
    "normal": np.eye(3),
    "protanopia": np.array([[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                            [-0.003882, -0.048116, 1.051998]]),
    "deuteranopia": np.array([[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                              [-0.011820, 0.042940, 0.968881]]),
    "tritanopia": np.array([[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602],
                            [0.004733, 0.691367, 0.303900]]),
}
SRGB_TO_XYZ = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
WHITE = np.array([0.95047, 1.0, 1.08883])
MIN_DELTA_E = 12.0


def linear(rgb):
    rgb = np.asarray(rgb, dtype=float)
    return np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)


def lab(rgb_linear):
    t = rgb_linear @ SRGB_TO_XYZ.T / WHITE
    f = np.where(t > (6 / 29) ** 3, np.cbrt(t), t / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.stack([116 * f[:, 1] - 16, 500 * (f[:, 0] - f[:, 1]), 200 * (f[:, 1] - f[:, 2])], axis=1)


def smallest_difference(colours, simulation):
    rgb = linear([to_rgb(c) for c in colours])
    L = lab(np.clip(rgb @ SIMULATIONS[simulation].T, 0.0, 1.0))
    return min(np.linalg.norm(L[i] - L[j]) for i, j in itertools.combinations(range(len(L)), 2))


def test_lab_of_white_and_black():
    assert np.allclose(lab(linear([[1, 1, 1], [0, 0, 0]])), [[100, 0, 0], [0, 0, 0]], atol=0.05)


@pytest.mark.parametrize("simulation", sorted(SIMULATIONS))
def test_class_colours_stay_apart(simulation):
    assert len(set(CLASS_COLOURS)) == 10
    assert smallest_difference(CLASS_COLOURS, simulation) >= MIN_DELTA_E


@pytest.mark.parametrize("simulation", ["protanopia", "deuteranopia"])
def test_the_old_palette_fails_the_same_check(simulation):
    assert smallest_difference(plt.get_cmap("tab10").colors, simulation) < MIN_DELTA_E


@pytest.mark.parametrize("family", sorted(VARIANT_STYLE))
@pytest.mark.parametrize("simulation", sorted(SIMULATIONS))
def test_variant_colours_stay_apart(family, simulation):
    colours = [style.colour for style in VARIANT_STYLE[family].values()]
    assert smallest_difference(colours, simulation) >= MIN_DELTA_E


def test_every_figure_uses_the_one_class_palette():
    assert tuple(PLOTTING_CLASS_COLOURS) == CLASS_COLOURS
    assert [c.lower() for c in CLASS_PALETTE] == [c.lower() for c in CLASS_COLOURS]


def test_describe_writes_the_alt_text_and_tick_size_into_every_png(tmp_path):
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from PIL import Image

    from probdr_lite.presentation.style import describe

    fig, ax = plt.subplots(figsize=(3, 2), dpi=50)
    ax.plot([0, 1], [0, 1])
    ax.tick_params(labelsize=12)
    ax.set_title("a title", fontsize=9)
    assert describe(fig, "A rising line from the origin to one.") is fig
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    fig.savefig(tmp_path / "line.png", dpi=100)
    for src, dpi in ((buf, 50), (tmp_path / "line.png", 100)):
        buf.seek(0)
        text = Image.open(src).text
        assert text["Description"] == "A rising line from the origin to one."
        assert float(text["probdr:tick-px"]) == pytest.approx(12 * dpi / 72, abs=0.01)
        assert float(text["probdr:text-px"]) <= float(text["probdr:tick-px"])
    describe(fig, "The same line, described again.")
    fig.savefig(tmp_path / "again.png")
    assert Image.open(tmp_path / "again.png").text["Description"] == "The same line, described again."
    with pytest.raises(ValueError, match="one sentence"):
        describe(fig, "../_images/x.png")
    plt.close(fig)


def test_variant_style_names_the_family_and_its_variants():
    from probdr_lite.presentation.style import variant_style

    assert variant_style("paper") is VARIANT_STYLE["block"]["paper"]
    with pytest.raises(ValueError, match="family must be one of"):
        variant_style("paper", family="other")
    with pytest.raises(ValueError, match=r"block variant must be one of .*'paper'.*; got 'plain'"):
        variant_style("plain")
