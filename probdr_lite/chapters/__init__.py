"""The chapters' measurements and facts: one module per page of the book, named like its source ``book/src/<page>.py``.

Each module holds what its chapter measures (runs of the maths at the chapter's settings) and the facts its computed
sentences state (numbers, booleans, directions, metric keys; each choice decided by a threshold given as an
argument). The sentences, labels, colours and figures are not here: they are the chapter's templates and
:mod:`probdr_lite.presentation`. A module here imports the maths at the package root, :mod:`probdr_lite.experiments`
and other chapters' modules, never the presentation layer (``tests/unit/test_layers.py``).

- :mod:`probdr_lite.chapters.laplacian_eigenmaps`  the order along the Swiss roll, the agreement with the reference
  embeddings, the smoothest functions on a graph
- :mod:`probdr_lite.chapters.probdr_elbo`          the set-up of the ELBO chapter (data, graph, beta), which the next
  two chapters share
- :mod:`probdr_lite.chapters.unrolled_inference`   what gradient ascent on the LE-ELBO does at each step size
- :mod:`probdr_lite.chapters.transformer_block`    the 2-D toy on the LayerNorm sphere, its paths through blocks, and
  what beta does to it
- :mod:`probdr_lite.chapters.mnist_at_init`        untrained blocks on MNIST, measured per layer, and the facts of the
  chapter's sentences and live figure
- :mod:`probdr_lite.chapters.objections`           the measurements behind the published objections and the facts of
  their verdicts
- :mod:`probdr_lite.chapters.energies`             the energy readings of a block and their harness; principal
  subspaces against Laplacian Eigenmaps (does a block perform LE?)
- :mod:`probdr_lite.chapters.environment`          the locked and the installed versions of every package
"""
