"""Figure and widget builders for the chapters, one module per topic.

The chapters call these functions instead of defining plotting code inline, so
that every figure, slider panel and kernel-free scrub figure is tested here.
Each builder returns a figure, a :class:`probdr_lite.widgets.SliderPanel` (for a kernel),
a :class:`probdr_lite.plotting.ScrubFigure` or a live figure of :mod:`probdr_lite.figures.live`
(for the static site).
"""
