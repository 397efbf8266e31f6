"""probdr-lite: the helper package behind the book *From Laplacian Eigenmaps to Transformers*.

The package's folders are its layers, and imports only go downward (``tests/unit/test_layers.py`` checks it):

    maths (the package root, data/)  <-  experiments/  <-  chapters/  <-  presentation/

A module may import modules of its own layer or of lower ones, never of a higher one; only presentation imports
matplotlib, ipywidgets or IPython.display. The chapters of the book (``book/src/*.py``, not part of the package) call
all four; what they import is listed in :data:`PUBLIC_API` (``tests/unit/test_public_api.py`` checks that the list
is complete and that every name in it exists).

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
named like its source ``book/src/<page>.py``: ``laplacian_eigenmaps``, ``probdr_elbo`` (the set-up chapters 3 to
5 share), ``unrolled_inference``, ``transformer_block``, ``mnist_at_init``, ``objections``, ``energies``,
``environment``.

:mod:`probdr_lite.presentation`: everything that draws or words things: figures, slider panels, tables and live
figures per topic (``presentation.figures``, ``presentation.live``), the label and colour of every variant and
number (``presentation.style``), the number formatters, the glue that pastes a number into a chapter's Markdown and
the claim that checks a sentence (``presentation.prose``), and the shared plotting helpers and widgets
(``presentation.plotting``, ``presentation.widgets``).

The repository's tooling is not in the package: ``tools/notebooks.py`` writes the chapters' notebooks (the
book's and the reader notebooks for Jupyter and Colab) from their Jupytext sources and checks the committed ones.

Importing :mod:`probdr_lite` imports nothing else (no torch, no matplotlib): ``from probdr_lite import graphs``
imports the one module asked for.
"""

__version__ = "0.1.0"

#: The maths modules at the package root that a reader imports (``from probdr_lite import graphs, probdr``).
__all__ = ["data", "graphs", "eigenmaps", "probdr", "unrolled", "diagonal_transformer", "tangent", "metrics"]

#: What the chapters (``book/src/*.py``) import: module -> the names they take from it, by ``from ... import`` or
#: through the module (``U.unroll``). Kept complete by ``tests/unit/test_public_api.py``, which also checks that each
#: name exists, so that renaming one of them fails there before it fails in a chapter.
PUBLIC_API: dict[str, tuple[str, ...]] = {
    "probdr_lite.data": ("load_mnist", "load_shakespeare", "toy_manifold"),
    "probdr_lite.diagonal_transformer": ("DiagonalTransformer",),
    "probdr_lite.eigenmaps": ("embed_graph", "laplacian_eigenmaps"),
    "probdr_lite.experiments": ("CharLMConfig", "summarise", "train_charlm", "ViTConfig"),
    "probdr_lite.graphs": ("default_bandwidth", "graph_energy", "heat_kernel_attention", "knn_graph", "laplacian"),
    "probdr_lite.metrics": ("between_within_ratio", "knn_accuracy", "METRIC_NAMES", "METRICS", "subspace_agreement"),
    "probdr_lite.probdr": ("fit_le_elbo", "le_closed_form", "le_elbo", "le_elbo_grad", "pca_closed_form", "pca_elbo",
                           "regularize_laplacian", "step_sizes", "unbounded_direction_demo", "wishart_kl"),
    "probdr_lite.tangent": ("cosine", "tangent_cosine"),
    "probdr_lite.unrolled": ("attention_matrix", "attention_step", "block_step", "CHAPTER_VARIANTS",
                             "euler_diffusion_errors", "layer_norm", "regulariser_gradient", "STEP_FAMILY", "unroll",
                             "update_direction"),
    "probdr_lite.experiments.attention": ("SelfAttention",),
    "probdr_lite.experiments.files": ("intervention_rows", "load_eval_spread", "load_task_results", "mechanism_rows",
                                      "rows_provenance", "task_rows"),
    "probdr_lite.experiments.confirmatory": ("ALPHA", "cells", "confirmatory_table", "DECLARED_AT", "FAMILY_SIZE",
                                             "FIRST_SEED", "load_rows", "MARGINS", "planning", "TARGET_POWER",
                                             "verdict_word", "VIT_SPLIT"),
    "probdr_lite.experiments.families": ("arm_correlations", "DECLARED", "EQUIVALENCE_MARGINS", "exploratory_history",
                                         "family_table", "initialisation_effect", "intervention_table",
                                         "leave_one_out"),
    "probdr_lite.experiments.stats": ("last_epoch_change", "mechanism_agreement", "NANOGPT_CPU_VAL_LOSS", "recipe_key",
                                      "recipe_table", "row_quantity"),
    "probdr_lite.chapters.energies": ("attention_spectrum", "CEILING", "compare_ends", "differential_gap",
                                      "effective_rank_path", "energy_table", "frozen_graph_path",
                                      "gradient_field_asymmetry", "graph_modes", "graph_targets", "GRAPHS",
                                      "le_alignment", "le_targets", "mode_retention",
                                      "MOVE_TOL", "participation_ratio", "phi", "proposition_gaps", "QS",
                                      "random_baseline", "random_level", "RANDOM_SD", "READINGS", "robustness",
                                      "robustness_facts", "SENSE", "spectrum_facts", "step_family_facts",
                                      "update_alignment", "UPDATES"),
    "probdr_lite.chapters.environment": ("summary_facts",),
    "probdr_lite.chapters.laplacian_eigenmaps": ("agreement_facts", "classes_apart", "harmonic_score", "order_score",
                                                 "smooth_functions", "smoothness_facts", "unrolling_facts"),
    "probdr_lite.chapters.mnist_at_init": ("kappa_ends", "knn_over_seeds", "layer_rows", "mnist_latents", "nmi_facts",
                                           "PAPER", "pick", "rule_p_value", "run_blocks", "self_attention_share",
                                           "SLIDERS", "sweep", "variant_metrics"),
    "probdr_lite.chapters.probdr_elbo": ("SETUP",),
    "probdr_lite.chapters.objections": ("THRESHOLDS", "asymmetry_along_path", "asymmetry_by_kappa", "asymmetry_facts",
                                        "clustering_facts", "full_gradient", "metrics_by_variant", "mnist_paths",
                                        "regulariser_approximation", "regulariser_facts", "regulariser_sweep",
                                        "rescaled_step_gaps", "single_runs_facts", "spectrum_along_path",
                                        "stop_gradient_facts", "stop_gradient_sweep", "symmetric_part_min_eigenvalue",
                                        "tangent_part", "THRESHOLDS", "training_runs", "wishart_facts"),
    "probdr_lite.chapters.transformer_block": ("bead_facts", "BUMP_KAPPAS", "TOY_SETTINGS", "toy_beta_range",
                                               "toy_paths"),
    "probdr_lite.chapters.unrolled_inference": ("curvature_facts", "ETA_SLIDER", "ETAS_SHOWN", "eta_runs",
                                                "N_STEPS"),
    "probdr_lite.presentation.figures.block": ("make_toy", "mask_figure", "toy_beta_text", "variant_panel"),
    "probdr_lite.presentation.figures.bridge": ("bump_panel", "bump_scrub", "euler_limits",
                                                "laplacian_eigenvalues", "spectra_figure"),
    "probdr_lite.presentation.figures.elbo": ("BETA", "beta_panel", "elbo_terms_figure", "N_SHOW", "pca_figure",
                                              "trap_figure"),
    "probdr_lite.presentation.figures.mnist": ("before_after_figure", "layer_table", "metric_lines_figure",
                                               "metrics_table", "mnist_panel", "settings_table", "step_family_figure",
                                               "sweep_figure"),
    "probdr_lite.presentation.figures.neighbourhoods": ("BANDWIDTH_FACTORS", "NEIGHBOURS", "agreement_table", "compare_figure",
                                                        "energy_figure", "laplacians_figure", "neighbours_panel",
                                                        "order_table"),
    "probdr_lite.presentation.figures.objection_tests": ("asymmetry_figure",
                                                         "layer_metrics_figure", "regulariser_figure",
                                                         "regulariser_table", "single_runs_table", "spectrum_figure",
                                                         "stop_gradient_figure", "thresholds_table"),
    "probdr_lite.presentation.figures.readings": ("alignment_table", "closest", "energy_path_figure",
                                                  "exact_for", "gradient_field_table", "harness_table", "NAMES",
                                                  "retention_facts", "robustness_table", "spectrum_figure",
                                                  "step_family_figure", "thesis_figure", "thesis_table"),
    "probdr_lite.presentation.figures.recipes": ("compute_facts", "exploratory_table", "family_results_table",
                                                 "grids_table", "interaction_table", "interval_text",
                                                 "intervention_family_table", "nanogpt_facts", "paired_seeds_table",
                                                 "plateau_facts", "plateau_figure", "plateau_table",
                                                 "provenance_table", "readings_facts", "readings_table",
                                                 "recipe_name", "recipe_names_table", "round_cell", "round_figure",
                                                 "round_table", "scale_table", "SCHEME_LABELS", "set_text"),
    "probdr_lite.presentation.figures.training": ("agreement_table", "arms_table", "curves_facts", "curves_figure",
                                                  "gates_facts", "gates_figure", "gates_table", "mechanism_facts",
                                                  "mechanism_figure", "mechanism_table", "OPERATOR_TEXT", "quantity_difference",
                                                  "quantity_spread", "TASK_NAMES"),
    "probdr_lite.presentation.figures.unrolling": ("eta_panel", "steps_figure", "steps_scrub"),
    "probdr_lite.presentation.figures.versions": ("differ_table", "lock_table", "requirements_table",
                                                  "summary_table"),
    "probdr_lite.presentation.live.builders": ("beta_live", "eta_live", "mnist_live", "neighbours_live", "toy_live"),
    "probdr_lite.presentation.plotting": ("digit_grid", "Table"),
    "probdr_lite.presentation.prose": ("claim", "glue", "num", "pct", "sci", "signed"),
    "probdr_lite.presentation.style": ("describe", "METRIC_LABELS"),
}
