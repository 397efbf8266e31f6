"""Presentation for the chapters: figures, slider panels, tables and the facts their sentences state, one module per topic.

The chapters call these functions instead of defining plotting code inline, so that all of it is tested here; the
words are the chapters'. A builder returns

- a matplotlib figure, sometimes with an ``update`` function that redraws it; the chapter gives it its alt text
  (:func:`probdr_lite.presentation.style.describe`) in the cell that builds it;
- a :class:`probdr_lite.presentation.widgets.SliderPanel`, for a reader with a kernel;
- a :class:`~probdr_lite.presentation.live.LiveFigure`, which moves on the static site without a kernel;
- a :class:`probdr_lite.presentation.plotting.ScrubFigure`, only where neither of those fits (CONTRIBUTING.md says when);
- a :class:`probdr_lite.presentation.plotting.Table`, shown as Markdown or HTML;
- or facts (``*_facts``: numbers, booleans, keys and short lists, each decided by a threshold given as an
  argument), which a chapter glues into its Markdown and checks with claims
  (:func:`probdr_lite.presentation.prose.glue`, :func:`~probdr_lite.presentation.prose.claim`).

The facts that are measurements and statistics are not here but in the chapters' modules
(:mod:`probdr_lite.chapters`, one per page). The facts here are tied to the presentation (its words, labels,
wording thresholds or figures), or belong to pages that have no module there (the ELBO and trained-transformers
chapters).

By chapter: ``neighbourhoods``, ``elbo`` and ``unrolling`` (Laplacian Eigenmaps, the ELBO, unrolled inference);
``bridge`` and ``block`` (the transformer block); ``mnist`` (MNIST at initialisation); ``training`` and ``recipes``
(trained transformers); ``objection_tests`` (the objections, with its tables' labels); ``readings`` (the
energies chapter); ``versions`` (the environment page). Shared by all, one level up in
:mod:`probdr_lite.presentation`: ``style`` (labels, colours, alt text), ``prose`` (the number formatters, glue and
claims), ``plotting``, ``widgets`` and ``live`` (the live figures and their builders,
``live.builders``).
"""
