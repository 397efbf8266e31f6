"""Presentation for the chapters: figures, slider panels, tables and computed sentences, one module per topic.

The chapters call these functions instead of defining plotting or wording code inline, so that all of it is tested
here. A builder returns

- a matplotlib figure carrying its alt text (:func:`probdr_lite.figures.style.describe`), sometimes with an
  ``update`` function that redraws it;
- a :class:`probdr_lite.widgets.SliderPanel`, for a reader with a kernel;
- a :class:`~probdr_lite.figures.live.LiveFigure`, which moves on the static site without a kernel;
- a :class:`probdr_lite.plotting.ScrubFigure`, only where neither of those fits (CONTRIBUTING.md says when);
- a :class:`probdr_lite.plotting.Table`, shown as Markdown or HTML;
- or a sentence or paragraph (Markdown, maths as MathJax) stating facts the package computed, its numbers printed
  by :mod:`probdr_lite.figures.prose` and its words chosen by thresholds that are arguments.

By chapter: ``eigenmaps``, ``elbo`` and ``unrolling`` (Laplacian Eigenmaps, the ELBO, unrolled inference), with
``chapter_facts`` for the facts of their sentences; ``bridge`` and ``block`` (the transformer block); ``mnist`` and
``mnist_facts`` (MNIST at initialisation); ``training`` and ``recipes`` (trained transformers); ``objections`` and
``verdicts`` (the objections); ``energies``; ``environment`` (the environment page). Shared by all: ``style``
(labels, colours, alt text), ``prose`` (the number formatters and comparison words) and ``live`` (the live figures
and their builders, ``live.chapters``).
"""
