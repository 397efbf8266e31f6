"""The presentation layer: everything that draws or words things (matplotlib, ipywidgets, labels, colours, prose).

It sits on top of the package: it may import the maths at the package root, :mod:`probdr_lite.experiments` and
:mod:`probdr_lite.chapters`, and nothing below it imports it (``tests/unit/test_layers.py``). Only modules here
import matplotlib, ipywidgets or IPython.display.

- :mod:`probdr_lite.presentation.style`     the label, colour and alt text of every variant and number
- :mod:`probdr_lite.presentation.prose`     the book's number formatters; ``glue``, which publishes a number for an
  author's Markdown to paste, and ``claim``, which checks a sentence beside it
- :mod:`probdr_lite.presentation.plotting`  shared plotting helpers: class scatters, tables, scrub figures
- :mod:`probdr_lite.presentation.widgets`   slider panels
- :mod:`probdr_lite.presentation.live`      the kernel-free live figures of the static site (data computed in Python,
  drawn by ``live.js`` in the browser); their builders, one per chapter's figure, in ``live.builders``
- :mod:`probdr_lite.presentation.figures`   the chapters' figures, slider panels and tables, one module per topic
"""
