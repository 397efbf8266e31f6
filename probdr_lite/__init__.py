"""probdr-lite: the helper package behind the book *From Laplacian Eigenmaps to Transformers*.

The package has three layers, and imports only go downward (``tests/unit/test_layers.py`` checks it):
core maths and measurements, then presentation (figures, labels, colours, widgets), then the chapters
(``book/src``), which call both.

Core (no matplotlib, no widgets):

- :mod:`probdr_lite.data`          vendored MNIST test set, Tiny Shakespeare, toy manifolds
- :mod:`probdr_lite.graphs`        k-NN and heat-kernel graphs, the three Laplacians, heat-kernel attention
- :mod:`probdr_lite.eigenmaps`     Laplacian Eigenmaps (Belkin & Niyogi, 2003)
- :mod:`probdr_lite.probdr`        Wishart KL, the ProbDR ELBOs, their closed-form optima and step sizes
- :mod:`probdr_lite.unrolled`      the ELBO's gradient step as a transformer block (torch), its variants
- :mod:`probdr_lite.diagonal_transformer`  the same steps as an ordinary torch transformer with diagonal weights
- :mod:`probdr_lite.metrics`       clustering and embedding-agreement numbers, with the book's settings ``METRICS``
- :mod:`probdr_lite.mnist_blocks`  the MNIST chapter's experiment: untrained blocks on MNIST, measured per layer
- :mod:`probdr_lite.objections`    the measurements behind the objections chapter
- :mod:`probdr_lite.chapter_facts`, :mod:`probdr_lite.mnist_facts`, :mod:`probdr_lite.verdicts`  the facts the
  chapters' computed sentences state (numbers, booleans, directions, metric keys, each choice decided by a stated
  threshold): of the Laplacian Eigenmaps and unrolled-inference chapters and the block toy's caption about beta; of
  the MNIST chapter; of the objections' verdicts
- :mod:`probdr_lite.lifted_toy`    the transformer-block chapter's 2-D toy on the LayerNorm sphere, and its paths
- :mod:`probdr_lite.tangent`       what LayerNorm keeps of a step (tangent parts) and cosines
- :mod:`probdr_lite.energies`      the energy readings of a block (PLE ELBO, Phi, Hopfield, Energy Transformer,
  tokens on the sphere, CRATE, Sinkformer, GRAND), their gradients, and the harness along a path
- :mod:`probdr_lite.thesis`        does a block perform Laplacian Eigenmaps? principal subspaces against LE
- :mod:`probdr_lite.experiments`   trained transformers (character model, ViT): models, one training step
  (``_training``), results files and their schema (``files``, ``results``), statistics and the per-recipe
  verdict (``stats``), the recipe grids (``sweep``, ``python -m probdr_lite.experiments grid``)
- :mod:`probdr_lite.environment`   the locked and the installed versions of every package
- :mod:`probdr_lite._elbo`         the one ELBO gradient, C^{-1} X and log det C (NumPy or torch), used by
  ``probdr`` and ``unrolled``
- :mod:`probdr_lite._tiled_attention`  the attention kernel ``unrolled`` calls: A X and A^T X from row blocks and
  symmetric tiles of the logits, never the n x n matrix
- :mod:`probdr_lite._validation`, :mod:`probdr_lite._threads`  input checks; one-thread execution

Presentation:

- :mod:`probdr_lite.presentation.figures`       figures, slider panels, tables and the facts that the chapters' sentences state,
  per topic (``eigenmaps``, ``elbo``, ``unrolling``, ``bridge``, ``block``, ``mnist``, ``training``, ``recipes``,
  ``objections``, ``energies``, ``environment``);
  :mod:`probdr_lite.presentation.style` the label and colour of every variant and number;
  :mod:`probdr_lite.presentation.prose` the book's number formatters and ``fill``, which fills a chapter's sentence
  with computed facts (``glue`` publishes one for another page to paste), and the words of the core facts'
  directions (``TREND_WORDS``);
  :mod:`probdr_lite.presentation.live` the kernel-free live figures of the static site (data computed here,
  drawn by ``live.js`` in the browser)
- :mod:`probdr_lite.presentation.plotting`, :mod:`probdr_lite.presentation.widgets`  shared plotting helpers, tables, sliders, scrub figures

The repository's tooling is not in the package: ``tools/notebooks.py`` writes the chapters' notebooks (the
book's and the reader notebooks for Jupyter and Colab) from their Jupytext sources and checks the committed ones.
"""

__version__ = "0.1.0"
