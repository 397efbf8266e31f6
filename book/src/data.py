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
# # The data
#
# Every chapter runs on data that ships with the helper package, so the book builds and runs
# without a network. This page loads it once and shows what it looks like.
#
# - **MNIST test set** {cite:p}`lecun1998mnist`: 10,000 handwritten digits of 28 x 28 pixels with
#   their labels. The loader checks the files against their published SHA-256 digests, so a
#   damaged copy is refused rather than silently used. The 60,000-image training set is not
#   shipped; `load_mnist(split="train")` fetches it with torchvision where a network exists.
# - **Tiny Shakespeare** {cite:p}`karpathy2015charrnn`: about a million characters of the plays,
#   used in the chapter on [trained transformers](trained_transformers.ipynb).
# - **Toy manifolds** from scikit-learn's generators (swiss roll, S-curve, two moons, circles),
#   seeded so that every figure is the same on every build.

# %%
import matplotlib.pyplot as plt
import numpy as np

from probdr_lite.data import load_mnist, load_shakespeare, toy_manifold
from probdr_lite.presentation.style import describe
from probdr_lite.presentation.plotting import digit_grid

# %% [markdown]
# ## MNIST
#
# `load_mnist` returns the images as a float32 matrix with one row of 784 pixel intensities in
# $[0, 1]$ per image, and the labels as integers. The mean and standard deviation of the pixels
# are the figures usually quoted for this set (0.1325 and 0.3105), a quick check that nothing
# went wrong in loading.

# %%
images, labels = load_mnist()
print(f"images: {images.shape} {images.dtype}, labels: {labels.shape} {labels.dtype}")
print(f"pixel mean {images.mean():.5f}, pixel std {images.std():.5f}")
print("images per class:", dict(enumerate(np.bincount(labels).tolist())))

# %%
fig = digit_grid(images, labels, n_rows=4, n_cols=10,
                 alt="40 MNIST digits in 4 rows of 10, each titled with its label.")
fig.suptitle("The first 40 images of the MNIST test set, with their labels", y=1.02)
plt.show()

# %% [markdown]
# The MNIST database is the work of Yann LeCun, Corinna Cortes and Christopher J. C. Burges
# {cite:p}`lecun1998mnist`, licensed under Creative Commons Attribution-ShareAlike 3.0
# (CC BY-SA 3.0). The package ships its test set unchanged (`probdr_lite/data/NOTICE.md`); this
# figure and the others in the book that show digits are adaptations, shared alike under the
# book's CC BY-SA 4.0 licence.

# %% [markdown]
# Later chapters often work on a subset. `load_mnist(n=1000, stratified=True)` picks the images
# so that the ten classes are as balanced as possible, still deterministically.

# %%
_, sub_labels = load_mnist(n=1000, stratified=True)
print("stratified subset of 1,000, images per class:", np.bincount(sub_labels).tolist())

# %% [markdown]
# ## Tiny Shakespeare
#
# The character-level language model of [trained transformers](trained_transformers.ipynb) reads
# this text one character at a
# time. The first 90 % is for training and the last 10 % for validation.

# %%
corpus = load_shakespeare()
print(f"{len(corpus.text):,} characters, {len(corpus.vocab)} distinct")
print(f"train {len(corpus.train):,} / validation {len(corpus.val):,}")
print(corpus.text[:250])

# %% [markdown]
# ## Toy manifolds
#
# Two-dimensional sheets rolled up in three dimensions are the classic test for a method that
# claims to find the low-dimensional structure of data: a straight-line method such as PCA
# cannot unroll them, a graph-based one can. The colour is the position along the sheet.

# %%
fig = plt.figure(figsize=(10, 2.8))
for k, name in enumerate(["swiss_roll", "s_curve", "moons", "circles"]):
    Y, t = toy_manifold(name, n=1000, noise=0.05 if name in ("moons", "circles") else 0.0, seed=0)
    if Y.shape[1] == 3:
        ax = fig.add_subplot(1, 4, k + 1, projection="3d")
        ax.scatter(Y[:, 0], Y[:, 1], Y[:, 2], c=t, s=3, cmap="viridis")
        ax.set_xticks([]); ax.set_yticks([]); ax.set_zticks([])
    else:
        ax = fig.add_subplot(1, 4, k + 1)
        ax.scatter(Y[:, 0], Y[:, 1], c=t, s=3, cmap="coolwarm")
        ax.set_xticks([]); ax.set_yticks([])
    ax.set_title(name.replace("_", " "))
fig.tight_layout()
describe(fig, "The four toy data sets, each coloured by position along its sheet: the Swiss roll and the S-curve "
         "in three dimensions, the two moons and the two circles in the plane.")
plt.show()
