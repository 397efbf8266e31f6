# %% tags=["colab", "remove-cell"]
#@title Colab only: install this book's helper package { display-mode: "form" }
# Anywhere else (the book build, Binder, Jupyter, a local checkout) this cell does nothing.
import importlib.metadata, importlib.util, re, sys
if "google.colab" in sys.modules and importlib.util.find_spec("probdr_lite") is None:
    have = {re.sub(r"[-_.]+", "-", d.metadata["Name"] or "").lower() for d in importlib.metadata.distributions()}
    needs = {"numpy", "scipy", "scikit-learn", "matplotlib", "ipywidgets", "ipython", "torch", "torchvision", "tqdm", "threadpoolctl", "jsonschema"}
    no_deps = "--no-deps" if needs <= have else ""  # Colab has them all: add this package, change nothing
    # %pip install --quiet {no_deps} "probdr-lite @ git+https://github.com/probdr-lite/probdr-lite@main"

# %% [markdown]
# # Environment
#
# The numbers in this book come from code, and code's answers depend on the versions of the
# libraries under it: a new NumPy, SciPy or PyTorch can move a figure's last digits or change a
# random stream. This page is computed while the book is built, so it always names the versions
# of the build you are reading.
#
# `make install` installs the exact versions pinned in `requirements-lock.txt`; `make lock`
# re-resolves that file from the ranges in `pyproject.toml` when a dependency should move on,
# and `make test` then rebuilds the whole book with the new versions before the change is
# committed. The notebooks themselves ask only for ranges (see `pyproject.toml`), so they also
# run on Colab and Binder with the versions installed there.

# %% tags=["hide-input"]
from IPython.display import Markdown, display

from probdr_lite.chapters import environment
from probdr_lite.presentation.figures import versions
from probdr_lite.presentation.prose import fill

facts = environment.summary_facts()
differ = ", ".join(fill("{name} ({installed}, locked {locked})" if d["present"] else
                        "{name} (not installed, locked {locked})", d) for d in facts["differ"])
display(Markdown(fill(
    "This copy of the book was built with {implementation} {python_version} on {system} ({machine}). "
    + (("All {n} packages that `{lock}` pins for this platform were installed at exactly their locked versions."
        if facts["all_match"] else
        "{n_match} of the {n} packages that `{lock}` pins for this platform {n_match:agree:was/were} installed "
        "at their locked versions; {n_differ} {n_differ:agree:was/were} not: {differ}.")
       if facts["has_lock"] else
       "No `{lock}` was found beside the package or the notebook (as on Colab), so the versions below are simply "
       "the ones installed."),
    facts, differ=differ)))

# %% [markdown]
# The packages that the book's code and tools ask for by name, and what for:

# %% tags=["hide-input"]
versions.requirements_table()

# %% [markdown]
# ## Every locked package
#
# The whole set that the lock pins for the platform of this build, with the version that was
# installed beside each.

# %% tags=["hide-input"]
versions.lock_table()
