"""Slider panels that work with ipywidgets 7 (Colab) and 8, and survive a page reload.

A :class:`SliderPanel` owns one matplotlib figure and a set of sliders. Its
``update(**values)`` function changes the figure's artists; moving a slider
calls it, renders the figure to PNG and puts the bytes into an
``ipywidgets.Image``. The picture is widget state that lives in the kernel, so
a front end that reconnects to the kernel (a browser reload in JupyterLab or
Notebook) shows the current picture and keeps redrawing it; a redraw through
an IPython display handle, as before, is orphaned by a reload.

:meth:`SliderPanel.show` displays one output: a widget box (the picture above
the sliders, with the CSS classes ``probdr-panel``, ``probdr-panel-figure`` and
``probdr-panel-sliders``), together with a static PNG of the default picture in
the same output bundle. A front end with a widget manager shows the box; one
without (a notebook viewer on a forge, an export without widget state) shows the
static PNG. The rendered book shows the box from the notebook's saved widget
state, whose Image holds the default picture's PNG, so a reader without a kernel
still sees a meaningful picture (the sliders there do nothing).

Sliders of a panel share one description width and one total width, so their
tracks line up; a slider whose range spans two decades or more must be
logarithmic (:class:`Slider` refuses it otherwise).

:data:`SLIDER_LABELS` holds the label of every control that several figures share
(kappa, eta, beta, the depth, the neighbours and bandwidth of a graph), defined once; :func:`slider_label` reads it and
raises for a control without one.
"""

from __future__ import annotations

import base64
import io
import math
from dataclasses import dataclass
from typing import Callable

import matplotlib.pyplot as plt

from .._validation import check_scalar

__all__ = ["Slider", "SliderPanel", "SLIDER_WIDTH", "LOG_DECADES", "range_slider", "SLIDER_LABELS", "slider_label"]

#: The labels of the book's shared controls, defined once: every kernel panel (and, through
#: :func:`slider_label`, every live figure) that moves one of these settings shows this label.
SLIDER_LABELS = {
    "kappa": "κ (sharpness)",
    "eta": "η (step size)",
    "beta": "β (regulariser)",
    "depth": "depth (blocks)",
    "n_neighbors": "neighbours k",
    "bandwidth": "bandwidth t",
}


def slider_label(name: str) -> str:
    """The label of the control ``name`` (:data:`SLIDER_LABELS`); a control without one raises ``KeyError``
    naming it (no label falls back to the name)."""
    try:
        return SLIDER_LABELS[name]
    except KeyError:
        raise KeyError(f"the control {name!r} has no label; labels defined: {sorted(SLIDER_LABELS)}") from None

#: Total width of every slider of a panel (description, track and readout); the
#: description width is set per panel from its longest description.
SLIDER_WIDTH = "36em"

#: A float slider whose range ``high / low`` spans this many decades or more must be logarithmic:
#: on a linear track the lowest decades would share a few pixels.
LOG_DECADES = 2.0

VIEW_MIME = "application/vnd.jupyter.widget-view+json"


@dataclass(frozen=True)
class Slider:
    """Description of one slider: name, range, default, and whether it is logarithmic.

    For ``log=True`` the range and the default are the actual values (e.g.
    kappa from 0.1 to 1000), not exponents. A float slider with ``low > 0`` whose
    range spans :data:`LOG_DECADES` decades or more must have ``log=True``.
    """

    name: str
    low: float
    high: float
    value: float
    step: float | None = None
    log: bool = False
    integer: bool = False
    description: str | None = None
    fmt: str = ".3g"

    def __post_init__(self):
        if not self.low < self.high:
            raise ValueError(f"slider {self.name!r}: low must be below high; got {self.low} >= {self.high}")
        check_scalar(self.value, f"slider {self.name!r} value", low=self.low, high=self.high)
        if self.log and self.low <= 0:
            raise ValueError(f"slider {self.name!r}: a log slider needs low > 0; got {self.low}")
        if not self.log and not self.integer and self.low > 0 and self.decades >= LOG_DECADES:
            raise ValueError(f"slider {self.name!r}: the range {self.low:g} to {self.high:g} spans "
                             f"{self.decades:.1f} decades; a range of {LOG_DECADES:g} decades or more needs log=True")

    @property
    def decades(self) -> float:
        """Decades the range spans (``log10(high / low)``); infinite when ``low <= 0``."""
        return math.log10(self.high / self.low) if self.low > 0 else math.inf

    @property
    def label(self) -> str:
        return self.description or self.name

    def make_widget(self, description_width: str = "initial", width: str | None = None):
        """Build the ipywidgets slider (FloatLogSlider, IntSlider or FloatSlider).

        ``description_width`` and ``width`` (CSS lengths) let a panel give all its
        sliders the same geometry, so that their tracks line up.
        """
        import ipywidgets as w

        common = dict(description=self.label, continuous_update=False,
                      style={"description_width": description_width})
        if width is not None:
            common["layout"] = w.Layout(width=width, max_width="100%")
        if self.log:
            lo, hi = math.log10(self.low), math.log10(self.high)
            step = self.step or _log_step(lo, hi, math.log10(self.value))
            return w.FloatLogSlider(value=self.value, base=10, min=lo, max=hi,
                                    step=step, readout_format=self.fmt, **common)
        if self.integer:
            return w.IntSlider(value=int(self.value), min=int(self.low), max=int(self.high),
                               step=int(self.step or 1), **common)
        return w.FloatSlider(value=self.value, min=self.low, max=self.high,
                             step=self.step or (self.high - self.low) / 50, readout_format=self.fmt, **common)


def _log_step(lo: float, hi: float, at: float, n: int = 40) -> float:
    """An exponent step near ``(hi - lo) / n`` whose grid (from ``lo``) holds ``at``, the default's exponent.

    Off the grid, a slider snaps on the first key press, and a press back does not
    return to the default (kappa 1 to 1000 in 40 steps put 100 between two points).
    Whole steps from ``n / 2`` to ``2 n`` are tried, nearest ``n`` first; ``(hi - lo) / n``
    when none fits.
    """
    for k in sorted(range(n // 2, 2 * n + 1), key=lambda k: abs(k - n)):
        where = (at - lo) * k / (hi - lo)
        if abs(where - round(where)) < 1e-6:
            return (hi - lo) / k
    return (hi - lo) / n


def figure_png(fig) -> bytes:
    """The figure as PNG bytes at its own dpi, on white (the inline backend's figures are transparent).

    The whole canvas, not a tight box: every redraw of a panel has the same size,
    so the picture does not jump when a title gets longer.
    """
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=fig.dpi, facecolor="white")
    return buf.getvalue()


def _view_bundle(widget) -> dict:
    """The display bundle of a widget view (ipywidgets 8: ``_repr_mimebundle_``; 7: what ``_ipython_display_`` sends)."""
    repr_bundle = getattr(widget, "_repr_mimebundle_", None)
    data = dict(repr_bundle() or {}) if repr_bundle is not None else {}
    if VIEW_MIME not in data:
        data[VIEW_MIME] = {"version_major": 2, "version_minor": 0, "model_id": widget.model_id}
    data.setdefault("text/plain", repr(widget)[:110])
    return data


class SliderPanel:
    """A figure with sliders; see the module docstring.

    Parameters
    ----------
    fig : matplotlib Figure
    update : callable
        ``update(**values)`` redraws the figure for the slider values (keyword
        arguments named like the sliders). It is called once at construction,
        so the figure shows the defaults.
    sliders : list of Slider

    Attributes
    ----------
    sliders : dict of name -> ipywidgets slider
        Setting ``panel.sliders["kappa"].value`` runs ``update`` exactly as a
        reader's drag would; the tests use this.
    image : ipywidgets.Image
        The picture; its PNG is rendered once the panel is shown, then after
        every update.
    widget : ipywidgets.VBox
        The image above the sliders.
    """

    def __init__(self, fig, update: Callable, sliders):
        import ipywidgets as w

        self.fig = fig
        self._update = update
        self.specs = {s.name: s for s in sliders}
        if len(self.specs) != len(sliders):
            raise ValueError("sliders must have distinct names")
        # one description width for the panel (the longest description, in character widths), one total width:
        # every track then starts and ends at the same x
        label_width = f"{max(len(s.label) for s in sliders) + 2}ch"
        self.sliders = {name: spec.make_widget(description_width=label_width, width=SLIDER_WIDTH)
                        for name, spec in self.specs.items()}
        self.image = w.Image(format="png", layout=w.Layout(max_width="100%", height="auto"))
        controls = w.VBox(list(self.sliders.values()))
        self.widget = w.VBox([self.image, controls])
        for box, name in ((self.widget, "probdr-panel"), (self.image, "probdr-panel-figure"),
                          (controls, "probdr-panel-sliders")):
            box.add_class(name)
        self._shown = False  # until shown, a move runs update only (the tests and the benchmark need no PNG)
        self.n_updates = 0
        for widget in self.sliders.values():
            widget.observe(self._on_change, names="value")
        self.redraw()

    @property
    def values(self) -> dict:
        return {name: widget.value for name, widget in self.sliders.items()}

    def redraw(self):
        """Run ``update`` for the current values and, once shown, refresh the picture."""
        self._update(**self.values)
        self.n_updates += 1
        if self._shown:
            self.image.value = figure_png(self.fig)

    def _on_change(self, change):
        self.redraw()

    def _repr_mimebundle_(self, include=None, exclude=None):
        """The widget view, with a static PNG of the current picture for front ends without widgets."""
        if not self._shown:
            self._shown = True
            self.image.value = figure_png(self.fig)
            plt.close(self.fig)  # the inline backend must not show it a second time
        data = _view_bundle(self.widget)
        data["image/png"] = base64.b64encode(self.image.value).decode("ascii")
        return data

    def show(self):
        """Display the panel: one output holding the widget box and a static PNG (see the module docstring)."""
        from IPython.display import display

        display(self._repr_mimebundle_(), raw=True)
        return None


def range_slider(name, rng, *, lower=None, upper=None, positive=False, integer=False,
                 log=False, description=None, fmt=".3g") -> Slider:
    """A :class:`~probdr_lite.presentation.widgets.Slider` from a ``(low, high, default)`` triple.

    Each of the three numbers must lie in ``[lower, upper]`` (``(0, upper]`` with
    ``positive=True``); the Slider itself checks ``low < high`` and that the
    default lies between them. Every message names the slider.
    """
    if not isinstance(rng, (tuple, list)) or len(rng) != 3:
        raise TypeError(f"{name} must be a (low, high, default) triple; got {rng!r}")
    lo_incl = not positive
    low = 0 if positive and lower is None else lower
    parts = [
        check_scalar(v, f"{name} {part}", low=low, high=upper, low_inclusive=lo_incl,
                     integer=integer)
        for v, part in zip(rng, ("low", "high", "default"))
    ]
    return Slider(name, parts[0], parts[1], parts[2], log=log, integer=integer,
                  description=description, fmt=fmt)
