"""probdr-lite: the helper package behind the book *From Laplacian Eigenmaps to Transformers*.

The package's folders are its layers, and imports only go downward (``tests/unit/test_layers.py`` checks it):

    maths (the package root, data/)  <-  experiments/  <-  chapters/  <-  presentation/

A module may import modules of its own layer or of lower ones, never of a higher one; only presentation imports
matplotlib, ipywidgets or IPython.display. The chapters of the book (``book/src/*.py``, not part of the package) call
all four.

The maths, at the package root (no matplotlib, no widgets):

- :mod:`probdr_lite.data`          vendored MNIST test set, Tiny Shakespeare, toy manifolds
- :mod:`probdr_lite.graphs`        k-NN and heat-kernel graphs, the three Laplacians, heat-kernel attention
- :mod:`probdr_lite.eigenmaps`     Laplacian Eigenmaps (Belkin & Niyogi, 2003)
- :mod:`probdr_lite.probdr`        Wishart KL, the ProbDR ELBOs, their closed-form optima and step sizes
- :mod:`probdr_lite.unrolled`      the ELBO's gradient step as a transformer block (torch), its variants
- :mod:`probdr_lite.diagonal_transformer`  the same steps as an ordinary torch transformer with diagonal weights
- :mod:`probdr_lite.tangent`       what LayerNorm keeps of a step (tangent parts) and cosines
- :mod:`probdr_lite.metrics`       clustering and embedding-agreement numbers, with the book's settings ``METRICS``
- :mod:`probdr_lite._elbo`         the one ELBO gradient, C^{-1} X and log det C (NumPy or torch), used by
  ``probdr`` and ``unrolled``
- :mod:`probdr_lite._tiled_attention`  the attention kernel ``unrolled`` calls: A X and A^T X from row blocks and
  symmetric tiles of the logits, never the n x n matrix
- :mod:`probdr_lite._validation`, :mod:`probdr_lite._threads`  input checks; one-thread execution

:mod:`probdr_lite.experiments`: trained transformers (character model, ViT): models, one training step
(``_training``), results files and their schema (``files``, ``results``), statistics and the per-recipe verdict
(``stats``), the recipe grids (``sweep``, ``python -m probdr_lite.experiments grid``). Their committed results are
in ``probdr_lite/results/`` (data, not modules).

:mod:`probdr_lite.chapters`: each chapter's measurements and the facts its computed sentences state (numbers,
booleans, directions, metric keys, each choice decided by a stated threshold), one module per page of the book,
named like its source ``book/src/<page>.py``: ``laplacian_eigenmaps``, ``unrolled_inference``,
``transformer_block``, ``mnist_at_init``, ``objections``, ``energies``, ``environment``.

:mod:`probdr_lite.presentation`: everything that draws or words things: figures, slider panels, tables and live
figures per topic (``presentation.figures``, ``presentation.live``), the label and colour of every variant and
number (``presentation.style``), the number formatters and ``fill``, which fills a chapter's sentence with computed
facts (``presentation.prose``), and the shared plotting helpers and widgets (``presentation.plotting``,
``presentation.widgets``).

The repository's tooling is not in the package: ``tools/notebooks.py`` writes the chapters' notebooks (the
book's and the reader notebooks for Jupyter and Colab) from their Jupytext sources and checks the committed ones.

Importing :mod:`probdr_lite` imports nothing else (no torch, no matplotlib): ``from probdr_lite import graphs``
imports the one module asked for.
"""

__version__ = "0.1.0"
