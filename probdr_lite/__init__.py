"""probdr-lite: the helper package behind the book *From Laplacian Eigenmaps to Transformers*.

Modules (each one idea, read top to bottom):

- :mod:`probdr_lite.data`      vendored MNIST test set, Tiny Shakespeare, toy manifolds
- :mod:`probdr_lite.graphs`    k-NN and heat-kernel graphs, the three Laplacians
- :mod:`probdr_lite.eigenmaps` Laplacian Eigenmaps (Belkin & Niyogi, 2003)
- :mod:`probdr_lite.probdr`    Wishart KL, the ProbDR ELBOs and their closed-form optima
- :mod:`probdr_lite.unrolled`  the ELBO's gradient step as a transformer block
- :mod:`probdr_lite.metrics`   clustering and embedding-agreement numbers
- :mod:`probdr_lite.plotting`, :mod:`probdr_lite.widgets` figures, sliders and kernel-free twins
"""

__version__ = "0.1.0"
