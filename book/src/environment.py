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

# %% tags=["hide-cell"]
from probdr_lite.chapters import environment
from probdr_lite.presentation.figures import versions
from probdr_lite.presentation.prose import glue

facts = environment.summary_facts()
glue("python", f"{facts['implementation']} {facts['python_version']}")
glue("platform_name", f"{facts['system']} ({facts['machine']})")
glue("lock_name", facts["lock"])

# %% [markdown]
# This copy of the book was built with {glue:text}`python` on {glue:text}`platform_name`. The
# first table counts the packages that {glue:text}`lock_name` pins for this platform, and how many
# of them the build installed at exactly the pinned version; the second lists those it did not,
# with both versions, and is empty when every pin was met. Where no lock lies beside the package
# or the notebook (as on Colab) nothing is compared, every count is 0, and the versions further
# down are simply the ones installed.

# %% tags=["hide-input"]
versions.summary_table(facts)

# %% tags=["hide-input"]
versions.differ_table(facts)

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
