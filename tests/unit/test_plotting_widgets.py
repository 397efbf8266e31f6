"""The shared figure helpers: scrub figures and slider panels."""

import base64

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from probdr_lite.presentation.plotting import class_scatter, digit_grid, figure_data, scrub
from probdr_lite.presentation.widgets import SLIDER_LABELS, SLIDER_WIDTH, Slider, SliderPanel, slider_label


def _sine_figure():
    fig, ax = plt.subplots(figsize=(3, 2))
    (line,) = ax.plot([], [])
    ax.set_xlim(0, 2 * np.pi)
    ax.set_ylim(-3, 3)
    x = np.linspace(0, 2 * np.pi, 50)

    def update(amplitude):
        line.set_data(x, amplitude * np.sin(x))
        ax.set_title(f"amplitude = {amplitude:.2f}")

    return fig, update


def test_scrub_embeds_every_frame_and_a_range_control():
    fig, update = _sine_figure()
    out = scrub(fig, update, [0.5, 1.0, 2.0], label="amplitude")
    html = out._repr_html_()
    assert 'type="range"' in html
    assert html.count("data:image/png;base64") == 3 or html.count("frames[") >= 3
    assert 0 < out.n_bytes < 2_000_000
    assert not plt.fignum_exists(fig.number)  # closed, so it is not shown twice


def test_scrub_refuses_to_exceed_its_budget():
    fig, update = _sine_figure()
    with pytest.raises(ValueError, match="over max_bytes"):
        scrub(fig, update, [0.5, 1.0], max_bytes=1000)


def test_scrub_needs_two_frames():
    fig, update = _sine_figure()
    with pytest.raises(ValueError, match="values must hold between 2 and 200"):
        scrub(fig, update, [1.0])


def test_slider_panel_drives_the_figure():
    fig, update = _sine_figure()
    panel = SliderPanel(fig, update, [Slider("amplitude", 0.1, 3.0, 1.0)])
    before = figure_data(fig)
    panel.sliders["amplitude"].value = 2.5
    after = figure_data(fig)
    assert panel.n_updates == 2
    assert any(a.shape != b.shape or not np.allclose(a, b) for a, b in zip(before, after))
    np.testing.assert_allclose(fig.axes[0].get_lines()[0].get_ydata().max(), 2.5, rtol=1e-2)


def _png_pixels(data: bytes) -> np.ndarray:
    import io

    import matplotlib.image

    return matplotlib.image.imread(io.BytesIO(data), format="png")


def test_shown_panel_puts_the_current_figure_into_its_image_widget():
    """The picture is the Image widget's PNG (kernel-side state, so a reloaded page still redraws):
    it is the figure at the current slider values, pixel for pixel as Agg renders it."""
    fig, update = _sine_figure()
    fig.set_facecolor("white")
    panel = SliderPanel(fig, update, [Slider("amplitude", 0.1, 3.0, 1.0)])
    assert panel.image.value == b""  # nothing rendered until the panel is shown
    bundle = panel._repr_mimebundle_()
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == panel.widget.model_id
    assert panel.image in panel.widget.children
    assert set(panel.sliders.values()) <= set(panel.widget.children[1].children)
    first = _png_pixels(panel.image.value)
    static = _png_pixels(base64.b64decode(bundle["image/png"]))  # the static fallback is the same picture
    np.testing.assert_array_equal(first, static)

    def agg_pixels():  # the raw RGBA buffer Agg renders, no PNG involved
        import io

        buf = io.BytesIO()
        fig.savefig(buf, format="raw", dpi=fig.dpi)
        w, h = (int(round(v)) for v in fig.get_size_inches() * fig.dpi)
        return np.frombuffer(buf.getvalue(), dtype=np.uint8).reshape(h, w, 4).astype(np.float32) / 255

    np.testing.assert_allclose(first, agg_pixels(), atol=1 / 255)
    panel.sliders["amplitude"].value = 2.5
    second = _png_pixels(panel.image.value)
    assert first.shape == second.shape  # same size: the picture does not jump
    assert np.abs(first - second).max() > 0.5  # the curve moved
    np.testing.assert_allclose(second, agg_pixels(), atol=1 / 255)
    assert not plt.fignum_exists(fig.number)  # closed when shown, so the inline backend does not show it again


def test_panel_sliders_share_one_geometry():
    """All sliders of a panel get one description width (from the longest description) and one width,
    so that their tracks line up."""
    fig, update = _sine_figure()
    panel = SliderPanel(fig, lambda amplitude, kappa, n: update(amplitude), [
        Slider("amplitude", 0.1, 3.0, 1.0),
        Slider("kappa", 0.3, 3000.0, 30.0, log=True, description="κ (sharpness)"),
        Slider("n", 1, 9, 3, integer=True),
    ])
    widths = {s.style.description_width for s in panel.sliders.values()}
    assert widths == {f"{len('κ (sharpness)') + 2}ch"}
    assert {s.layout.width for s in panel.sliders.values()} == {SLIDER_WIDTH}
    plt.close(fig)


def test_log_and_integer_sliders_round_trip_their_values():
    log = Slider("kappa", 0.1, 1000.0, 30.0, log=True).make_widget()
    assert log.value == pytest.approx(30.0)
    log.value = 300.0
    assert log.value == pytest.approx(300.0)
    depth = Slider("depth", 0, 8, 8, integer=True).make_widget()
    assert depth.value == 8 and depth.max == 8


@pytest.mark.parametrize("low, high, value", [(1.0, 1000.0, 100.0), (0.3, 3000.0, 30.0), (0.1, 10.0, 1.0),
                                               (0.5, 5000.0, 5.0)])
def test_log_slider_default_lies_on_its_grid(low, high, value):
    """A key press and its reverse return to the default: the default's exponent is a whole number of steps
    from the low end, as is the high end, and there are 20 to 80 steps."""
    import math

    s = Slider("kappa", low, high, value, log=True).make_widget()
    steps_to_default = (math.log10(value) - s.min) / s.step
    steps_to_high = (s.max - s.min) / s.step
    assert steps_to_default == pytest.approx(round(steps_to_default), abs=1e-6)
    assert steps_to_high == pytest.approx(round(steps_to_high), abs=1e-6) and 20 <= round(steps_to_high) <= 80


def test_log_slider_keeps_forty_steps_when_no_grid_holds_the_default():
    s = Slider("kappa", 1.0, 1000.0, 7.0, log=True).make_widget()  # log10(7) / 3 is irrational
    assert s.step == pytest.approx(3 / 40)


def test_slider_spec_is_validated():
    with pytest.raises(ValueError, match="low must be below high"):
        Slider("eta", 1.0, 0.5, 0.7)
    with pytest.raises(ValueError, match="value must be in"):
        Slider("eta", 0.0, 1.0, 2.0)
    with pytest.raises(ValueError, match="log slider needs low > 0"):
        Slider("kappa", 0.0, 10.0, 1.0, log=True)
    with pytest.raises(ValueError, match="spans 3.0 decades; a range of 2 decades or more needs log=True"):
        Slider("kappa", 1.0, 1000.0, 10.0)
    assert Slider("eta", 0.02, 1.0, 0.5).decades < 2  # 1.7 decades: linear is allowed
    assert Slider("depth", 1, 100, 8, integer=True).integer  # integer ranges stay linear


@pytest.mark.parametrize("module", ["block", "mnist", "neighbourhoods", "elbo", "unrolling"])
def test_every_slider_spanning_two_decades_in_the_figure_modules_is_logarithmic(module):
    """The Slider(...) specs written in the figure modules, read from their source: every float range from
    low > 0 spanning two decades or more says log=True (Slider also refuses it when built)."""
    import ast
    import importlib
    import math

    mod = importlib.import_module(f"probdr_lite.presentation.figures.{module}")
    source = open(mod.__file__, encoding="utf-8").read()
    checked = 0
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Slider" and len(node.args) >= 3:
            checked += 1
            try:
                low, high = (ast.literal_eval(a) for a in node.args[1:3])
            except ValueError:
                continue  # computed bounds: Slider checks them when built
            kw = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg in ("log", "integer")}
            if low > 0 and not kw.get("integer") and math.log10(high / low) >= 2:
                assert kw.get("log"), f"{module}.py line {node.lineno}: {low} to {high} needs log=True"
    assert checked or "Slider(" not in source, f"no Slider spec of {module}.py was read"


def test_class_scatter_and_digit_grid():
    rng = np.random.default_rng(0)
    fig, ax = plt.subplots()
    pts = class_scatter(ax, rng.normal(size=(30, 3)), np.arange(30) % 10)
    assert pts.get_offsets().shape == (30, 2)
    with pytest.raises(ValueError, match="labels must have shape"):
        class_scatter(ax, rng.normal(size=(30, 2)), np.arange(29))
    plt.close(fig)
    alt = "Twelve digits in 3 rows of 4, each titled with its label."
    grid = digit_grid(rng.uniform(size=(12, 784)), np.arange(12), n_rows=3, n_cols=4, alt=alt)
    assert len(grid.axes) == 12 and grid._probdr_alt == alt  # the caller's words, not the package's
    plt.close(grid)
    with pytest.raises(ValueError, match="784 columns"):
        digit_grid(rng.uniform(size=(12, 100)), n_rows=1, n_cols=2, alt=alt)
    with pytest.raises(ValueError, match="alt must be one sentence"):
        digit_grid(rng.uniform(size=(12, 784)), n_rows=1, n_cols=2, alt="digits")


def test_fixed_layout_keeps_the_axes_still_when_the_titles_change():
    from probdr_lite.presentation.plotting import fixed_layout

    fig, axes = plt.subplots(1, 2, figsize=(6, 3))
    assert fixed_layout(fig, "Two empty panels with changing titles.", left=0.1, right=0.95, top=0.8, bottom=0.2,
                        wspace=0.3) is fig
    assert fig._probdr_alt == "Two empty panels with changing titles."
    # the margins are the figure fractions given: the left axes start at 0.1, the right one ends at 0.95
    assert axes[0].get_position().x0 == pytest.approx(0.1) and axes[1].get_position().x1 == pytest.approx(0.95)
    assert axes[0].get_position().y1 == pytest.approx(0.8) and axes[0].get_position().y0 == pytest.approx(0.2)
    before = [ax.get_position().bounds for ax in axes]
    for titles in (("a", "b"), ("a much longer title\non two lines", "x")):  # what an update does
        for ax, t in zip(axes, titles):
            ax.set_title(t)
        fig.canvas.draw()
        assert [ax.get_position().bounds for ax in axes] == before
    plt.close(fig)


def test_table_renders_html_and_markdown_and_refuses_ragged_rows():
    from probdr_lite.presentation.plotting import Table

    t = Table(["a", "b"], [[1, "<x>"], [2.5, "y"]], caption="note")
    html = t._repr_html_()
    assert html.startswith("<table><caption>note</caption>") and "<td>&lt;x&gt;</td>" in html
    assert str(t).splitlines()[:3] == ["| a | b |", "| --- | --- |", "| 1 | <x> |"]
    assert str(t).endswith("\n\nnote")
    with pytest.raises(ValueError, match="every row of body must have 2 cells"):
        Table(["a", "b"], [[1]])


_KERNEL_PANEL = """
import matplotlib.pyplot as plt
import numpy as np
from probdr_lite.presentation.widgets import Slider, SliderPanel
fig, ax = plt.subplots(figsize=(3, 2), dpi=50)
x = np.linspace(0, 2 * np.pi, 50)
(line,) = ax.plot(x, np.sin(x))
ax.set_ylim(-3, 3)
panel = SliderPanel(fig, lambda amplitude: line.set_ydata(amplitude * np.sin(x)), [Slider("amplitude", 0.1, 3.0, 1.0)])
panel.show()
print(panel.image.model_id, panel.sliders["amplitude"].model_id)
import IPython, ipykernel, ipywidgets, traitlets
print(IPython.__version__, ipykernel.__version__, ipywidgets.__version__, traitlets.__version__)
"""


def test_panel_state_lives_in_the_kernel_as_a_front_end_sees_it():
    """In a real kernel, talking the widget protocol as JupyterLab, Notebook or Colab do.

    ``show()`` sends one display with the widget view and a static PNG; a slider update sent over the
    slider's comm comes back as a new PNG on the Image's comm; and asking the Image for its state, as a
    reloaded page does, returns the new picture, not the default: the picture lives in the kernel.
    """
    import os
    import queue
    import sys
    from pathlib import Path

    from jupyter_client.manager import start_new_kernel

    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in [root, os.environ.get("PYTHONPATH")] if p),
           "MPLBACKEND": "agg"}
    km, kc = start_new_kernel(startup_timeout=120, kernel_name="python3", env=env)

    def messages(msg_id):
        """iopub messages answering msg_id, up to its idle status."""
        out = []
        while True:
            try:
                msg = kc.get_iopub_msg(timeout=120)
            except queue.Empty:
                pytest.fail(f"the kernel went quiet; got so far: {[m['msg_type'] for m in out]}")
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                return out
            out.append(msg)

    def send_comm(comm_id, data):
        msg = kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
        kc.shell_channel.send(msg)
        return messages(msg["header"]["msg_id"])

    def png_of(msgs, comm_id):
        found = [m for m in msgs if m["msg_type"] in ("comm_open", "comm_msg") and m["content"]["comm_id"] == comm_id
                 and ["value"] in m["content"]["data"].get("buffer_paths", [])]
        assert found, f"no PNG sent on the Image's comm: {[m['msg_type'] for m in msgs]}"
        return bytes(found[-1]["buffers"][0])

    try:
        msgs = messages(kc.execute(_KERNEL_PANEL))
        errors = [m["content"] for m in msgs if m["msg_type"] == "error"]
        assert not errors, errors
        printed = "".join(m["content"]["text"] for m in msgs if m["msg_type"] == "stream").split()
        image_id, slider_id = printed[:2]
        import IPython
        import ipykernel
        import ipywidgets
        import traitlets

        # the kernel runs the same widget stack as this test (Colab's, under tests/unit/test_ipywidgets7.py)
        assert printed[2:] == [m.__version__ for m in (IPython, ipykernel, ipywidgets, traitlets)]
        displays = [m["content"]["data"] for m in msgs if m["msg_type"] == "display_data"]
        assert len(displays) == 1, "show() sends one output"
        view = displays[0]["application/vnd.jupyter.widget-view+json"]
        first = png_of(msgs, image_id)  # the Image's state as the front end first receives it
        assert first == base64.b64decode(displays[0]["image/png"])  # the static fallback shows the same picture
        assert first[:8] == b"\x89PNG\r\n\x1a\n"
        assert view["model_id"] not in (image_id, slider_id)  # the view is the box holding both

        moved = png_of(send_comm(slider_id, {"method": "update", "state": {"value": 2.5}, "buffer_paths": []}),
                       image_id)
        a, b = _png_pixels(first), _png_pixels(moved)
        assert a.shape == b.shape and np.abs(a - b).max() > 0.5, "the slider update did not redraw the picture"
        # what a reloaded page asks for: the Image's current state
        assert png_of(send_comm(image_id, {"method": "request_state"}), image_id) == moved
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
        sys.stdout.flush()


def test_a_control_without_a_label_raises_and_the_panels_read_the_labels():
    """One label per shared control: the toy's panel shows SLIDER_LABELS' words, and a control that has none raises
    KeyError naming it instead of showing its name."""
    from probdr_lite.chapters.transformer_block import make_toy
    from probdr_lite.presentation.figures.block import variant_panel

    with pytest.raises(KeyError, match="'gamma' has no label"):
        slider_label("gamma")
    panel = variant_panel(make_toy("moons", n=30, noise=0.1, d_q=8))
    assert {name: spec.label for name, spec in panel.specs.items()} == {
        name: SLIDER_LABELS[name] for name in ("kappa", "eta", "beta", "depth")}
    plt.close(panel.fig)
