"""Training experiments: does attention A - I (one step of graph diffusion) beat plain A?

Ravuri & Lawrence (arXiv 2507.21040) report single runs in which replacing the
attention output A V by (A - I) V lowers a character model's validation loss
and raises a vision transformer's accuracy. This package reruns both claims
at laptop scale with several seeds, several training recipes and paired
statistics. Core code only (no figures, no prose; those are in
:mod:`probdr_lite.presentation.figures.training` and :mod:`probdr_lite.presentation.figures.recipes`):

- :mod:`.attention`  one attention module whose ``variant`` selects A, A - I,
  A - g I (g starting at 0 or at 1), A_sym or A_sym - I; the pre-LN block;
  initialisation schemes and learning-rate schedules;
- :mod:`.configs`    the two models' configurations (every setting of a run);
- :mod:`.charlm`     a GPT-style character model on Tiny Shakespeare (nanoGPT's CPU configuration);
- :mod:`.vit`        a small vision transformer on MNIST;
- :mod:`._training`  what both training loops share: the optimiser step, the results row;
- :mod:`.plateau`    the plateau rule (when the validation loss has stopped improving);
- :mod:`.mechanism`  what the attention blocks do along training (the ``mechanism`` of a row);
- :mod:`._runtime`   device, threads and provenance;
- :mod:`.results`    the results-file schema (JSON Schema), reading, safe appending and the paired summary;
- :mod:`.files`      the committed results files and their provenance;
- :mod:`.stats`      seed bands, paired differences, power, Holm, the recipe table (descriptive);
- :mod:`.families`   the families of tests declared up front, simultaneous intervals and the verdict read from them,
  TOST, the initialisation effect (OLS on the paired differences), the W_V W_O intervention's shifts and
  Fieller's sets for its shares;
- :mod:`.sweep`      the recipe grids and their resumable runner;
- :mod:`.confirmatory` the confirmatory round for A - I: declared before its first run (its cells, seeds, power
  calculation, margins, tests and verdict words), its grids, and the one function that reads its rows;
- :mod:`.measure`    the spread of a k-batch loss estimate (nanoGPT's 20 batches vs our 200);
- ``python -m probdr_lite.experiments`` the command line (:mod:`.__main__`).
"""

from .attention import CAUSAL_VARIANTS, VARIANTS, Block, SelfAttention
from .charlm import CharLM, train_charlm
from .configs import CharLMConfig, ViTConfig
from .files import load_task_results, task_rows
from .results import append_results, format_summary, load_results, summarise, validate_results
from .families import family_table, initialisation_effect, intervention_table
from .stats import recipe_table
from .vit import ViT, train_vit

__all__ = [
    "VARIANTS", "CAUSAL_VARIANTS", "SelfAttention", "Block",
    "CharLM", "CharLMConfig", "train_charlm",
    "ViT", "ViTConfig", "train_vit",
    "load_results", "validate_results", "append_results", "summarise", "format_summary",
    "load_task_results", "task_rows", "recipe_table", "family_table", "initialisation_effect", "intervention_table",
]
