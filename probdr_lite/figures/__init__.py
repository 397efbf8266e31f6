"""Presentation for the chapters: figures, slider panels, tables and the facts their sentences state, one module per topic.

The chapters call these functions instead of defining plotting code inline, so that all of it is tested here; the
words are the chapters'. A builder returns

- a matplotlib figure, sometimes with an ``update`` function that redraws it; the chapter gives it its alt text
  (:func:`probdr_lite.figures.style.describe`) in the cell that builds it;
- a :class:`probdr_lite.widgets.SliderPanel`, for a reader with a kernel;
- a :class:`~probdr_lite.figures.live.LiveFigure`, which moves on the static site without a kernel;
- a :class:`probdr_lite.plotting.ScrubFigure`, only where neither of those fits (CONTRIBUTING.md says when);
- a :class:`probdr_lite.plotting.Table`, shown as Markdown or HTML;
- or facts (``*_facts``: numbers, booleans, short lists, and the words a threshold chooses, the threshold an
  argument), which a chapter's template fills with :func:`probdr_lite.figures.prose.fill`.

By chapter: ``eigenmaps``, ``elbo`` and ``unrolling`` (Laplacian Eigenmaps, the ELBO, unrolled inference), with
``chapter_facts`` for the facts of their sentences; ``bridge`` and ``block`` (the transformer block); ``mnist`` and
``mnist_facts`` (MNIST at initialisation); ``training`` and ``recipes`` (trained transformers); ``objections`` and
``verdicts`` (the objections); ``energies``; ``environment`` (the environment page). Shared by all: ``style``
(labels, colours, alt text), ``prose`` (the number formatters, comparison words and ``fill``) and ``live`` (the live figures
and their builders, ``live.chapters``).
"""
