"""Slider panels that work with ipywidgets 7 (Colab) and 8.

A :class:`SliderPanel` owns one matplotlib figure and a set of sliders. Its
``update(**values)`` function changes the figure's artists; moving a slider
calls it and redraws the figure *in place* (through an IPython display
handle, so no Output widget is needed and the same code runs on Colab,
JupyterLab and classic Notebook).

:meth:`SliderPanel.show` first displays the figure at the default values as
an ordinary static image, then the sliders. On the rendered site, where no
kernel runs, the reader therefore still sees a meaningful picture.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import matplotlib.pyplot as plt

from ._validation import check_scalar

__all__ = ["Slider", "SliderPanel", "range_slider"]


@dataclass(frozen=True)
class Slider:
    """Description of one slider: name, range, default, and whether it is logarithmic.

    For ``log=True`` the range and the default are the actual values (e.g.
    kappa from 0.1 to 1000), not exponents.
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

    def make_widget(self):
        """Build the ipywidgets slider (FloatLogSlider, IntSlider or FloatSlider)."""
        import math

        import ipywidgets as w

        common = dict(description=self.description or self.name, continuous_update=False,
                      style={"description_width": "initial"})
        if self.log:
            lo, hi = math.log10(self.low), math.log10(self.high)
            return w.FloatLogSlider(value=self.value, base=10, min=lo, max=hi,
                                    step=self.step or (hi - lo) / 40, readout_format=self.fmt, **common)
        if self.integer:
            return w.IntSlider(value=int(self.value), min=int(self.low), max=int(self.high),
                               step=int(self.step or 1), **common)
        return w.FloatSlider(value=self.value, min=self.low, max=self.high,
                             step=self.step or (self.high - self.low) / 50, readout_format=self.fmt, **common)


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
    """

    def __init__(self, fig, update: Callable, sliders):
        self.fig = fig
        self._update = update
        self.specs = {s.name: s for s in sliders}
        if len(self.specs) != len(sliders):
            raise ValueError("sliders must have distinct names")
        self.sliders = {name: spec.make_widget() for name, spec in self.specs.items()}
        self._handle = None
        self.n_updates = 0
        for widget in self.sliders.values():
            widget.observe(self._on_change, names="value")
        self.redraw()

    @property
    def values(self) -> dict:
        return {name: widget.value for name, widget in self.sliders.items()}

    def redraw(self):
        """Run ``update`` for the current values and refresh the displayed image."""
        self._update(**self.values)
        self.n_updates += 1
        if self._handle is not None:
            self._handle.update(self.fig)

    def _on_change(self, change):
        self.redraw()

    def show(self):
        """Display the static figure (first output), then the sliders below it."""
        import ipywidgets as w
        from IPython.display import display

        self._handle = display(self.fig, display_id=True)
        display(w.VBox(list(self.sliders.values())))
        plt.close(self.fig)  # the inline backend must not show it a second time
        return None


def range_slider(name, rng, *, lower=None, upper=None, positive=False, integer=False,
                 log=False, description=None, fmt=".3g") -> Slider:
    """A :class:`~probdr_lite.widgets.Slider` from a ``(low, high, default)`` triple.

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
