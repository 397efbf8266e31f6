"""Training experiments: does attention A - I (one step of graph diffusion) beat plain A?

Ravuri & Lawrence (arXiv 2507.21040) report single runs in which replacing the
attention output A V by (A - I) V lowers a character model's validation loss
and raises a vision transformer's accuracy. This package reruns both claims
at laptop scale with several seeds and paired statistics:

- :mod:`.attention` one attention module whose ``variant`` argument selects
  A, A - I, A - g I or D^{-1/2} E D^{-1/2}, and the shared pre-LN block;
- :mod:`.charlm`    a GPT-style character model on Tiny Shakespeare
  (nanoGPT's CPU configuration);
- :mod:`.vit`       a small vision transformer on MNIST;
- :mod:`.results`   the results-file schema, loading and the paired summary;
- ``python -m probdr_lite.experiments`` the command line (:mod:`.__main__`).
"""

from .attention import CAUSAL_VARIANTS, VARIANTS, Block, SelfAttention
from .charlm import CharLM, CharLMConfig, train_charlm
from .results import append_results, format_summary, load_results, summarise, validate_results
from .vit import ViT, ViTConfig, train_vit

__all__ = [
    "VARIANTS", "CAUSAL_VARIANTS", "SelfAttention", "Block",
    "CharLM", "CharLMConfig", "train_charlm",
    "ViT", "ViTConfig", "train_vit",
    "load_results", "validate_results", "append_results", "summarise", "format_summary",
]
