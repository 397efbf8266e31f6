"""The transformer-block chapter's toy: 2-D points lifted onto the LayerNorm sphere, and their paths through blocks.

The block acts on latents whose rows lie on the LayerNorm sphere {x : 1^T x = 0, ||x||^2 = d_q} (notes 3.6), so a
2-D toy data set has to be *lifted* there before a block can move it, and the moved latents have to be brought back
to the plane to be looked at. :func:`make_toy` / :func:`lift_toy` do both without distortion:

- a 2-D point y becomes u = (y, c) / ||(y, c)||, a unit vector in R^3 (c > 0 is the ``offset``);
- x = sqrt(d_q) u Q, where Q (3, d_q) has orthonormal rows orthogonal to 1, so 1^T x = 0 and ||x||^2 = d_q.

Every variant's update is a combination of rows of X (A X, A^T X, X (X^T X + beta I)^{-1}), and LayerNorm only
centres and rescales, so the latents never leave the 3-D span of Q: the dynamics happen on an ordinary sphere, and
:meth:`LiftedToy.unlift` maps them back to the plane exactly (the gnomonic projection c (z_1, z_2) / z_3 with
z = x Q^T / sqrt(d_q)). At layer 0 it returns the toy data themselves. d_q enters only through the feed-forward term
2 / (d_q + beta) of the "paper" variant.

:data:`TOY_SETTINGS` holds the toy's sliders (range and default of kappa, eta, beta and depth), read everywhere
they are used. :func:`toy_beta_effect` runs the toy's blocks at both ends of beta's range (:func:`toy_beta_range`
over the range of :data:`TOY_SETTINGS`), and :func:`toy_beta_facts` gives the numbers of the chapter's sentence
about it, which the chapter pastes into its own words and its live figure's caption
(:func:`probdr_lite.presentation.live.builders.toy_live`).

The figures of the toy are presentation, in :mod:`probdr_lite.presentation.figures.block`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from probdr_lite._validation import check_array, check_choice, check_result, check_scalar, check_seed
from probdr_lite._threads import single_threaded
from probdr_lite.unrolled import CHAPTER_VARIANTS, attention_matrix, check_block_variants, unroll

__all__ = ["TOY_SETTINGS", "BUMP_KAPPAS", "LiftedToy", "lift_toy", "make_toy", "toy_paths", "bead_facts",
           "toy_beta_effect", "toy_beta_facts",
           "toy_beta_range"]


def _sig(x: float, digits: int = 3) -> float:
    return float(f"{x:.{digits}g}")


#: The toy's sliders, defined once: each setting's grid of ``values`` (the live figure's positions; the kernel
#: panel's slider runs over the same range, ``log`` or linear) and its ``default``. The kernel panel
#: (:func:`probdr_lite.presentation.figures.block.variant_panel`), the live figure
#: (:func:`probdr_lite.presentation.live.builders.toy_controls`), the chapter's text and the tests read it.
#: kappa's grid has ten steps per decade from the first value at which the toy is not yet one spot: below about 14
#: the default eight blocks gather all 300 points within a pixel of each other.
TOY_SETTINGS = {
    "kappa": {"values": tuple(_sig(10 ** (i / 20)) for i in range(23, 61)), "default": 100.0, "log": True},
    "eta": {"values": tuple(round(0.02 * k, 2) for k in range(1, 51)), "default": 0.4, "log": False},
    "beta": {"values": tuple(round(0.1 * k, 1) for k in range(1, 101)), "default": 1.0, "log": True},
    "depth": {"values": tuple(range(17)), "default": 8, "log": False},
}
for _name, _s in TOY_SETTINGS.items():
    if _s["default"] not in _s["values"]:
        raise ValueError(f"TOY_SETTINGS[{_name!r}]: the default {_s['default']} is not one of its values")

#: The kappas of the heat-kernel bump (one row of A on the unit sphere), defined once: the kernel-free scrub's frames,
#: whose ends are the kernel panel's logarithmic slider range, and the chapter's text pastes their count and ends.
BUMP_KAPPAS = (0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0)


@dataclass(frozen=True)
class LiftedToy:
    """A 2-D data set lifted onto the LayerNorm sphere of R^{d_q} (see the module docstring).

    Attributes
    ----------
    Y : ndarray (n, 2)
        The toy points in the plane (after :func:`lift_toy`'s rescaling).
    labels : ndarray (n,) of int
    X0 : torch.Tensor (n, d_q), float64
        The lifted latents; ``layer_norm(X0) == X0``.
    Q : ndarray (3, d_q)
        Orthonormal rows, each orthogonal to the all-ones vector.
    offset : float
        The c of u = (y, c) / ||(y, c)||.
    """

    Y: np.ndarray
    labels: np.ndarray
    X0: torch.Tensor
    Q: np.ndarray
    offset: float

    @property
    def d_q(self) -> int:
        return int(self.Q.shape[1])

    def unlift(self, X) -> np.ndarray:
        """Map latents (n, d_q) back to the plane: c (z_1, z_2) / z_3 with z = X Q^T / sqrt(d_q).

        Rows with z_3 <= 1e-6 (pushed past the equator, which only a step with eta well above 1/2 does) have no
        image and come back as NaN, so a scatter plot simply leaves them out.
        """
        X = check_array(X, "X", ndim=2)
        if X.shape[1] != self.d_q:
            raise ValueError(f"X must have d_q = {self.d_q} columns to match the toy; got shape {X.shape}")
        z = X.astype(np.float64) @ self.Q.T / math.sqrt(self.d_q)  # (n, 3), unit rows
        out = np.full((X.shape[0], 2), np.nan)
        ok = z[:, 2] > 1e-6
        out[ok] = self.offset * z[ok, :2] / z[ok, 2:3]
        return out


def lift_toy(Y, labels, d_q: int = 16, offset: float = 1.0, seed: int = 0) -> LiftedToy:
    """Lift 2-D points onto the LayerNorm sphere: x = sqrt(d_q) Q^T (y, c) / ||(y, c)|| (module docstring).

    Parameters
    ----------
    Y : array (n, 2), n >= 2
    labels : array (n,) of non-negative integers (the colours)
    d_q : int in [4, 4096]
        Latent width (at least 4: the three directions of Q plus the all-ones direction LayerNorm removes).
    offset : float in (0, 100]
        c; the larger it is, the smaller the angles between the lifted points (a smaller c spreads the toy over
        more of the sphere). With the toy scaled to radius 1 and c = 1 the points span up to 45 degrees.
    seed : int >= 0
        Seed of the random orthonormal Q.

    Returns
    -------
    LiftedToy
    """
    Y = check_array(Y, "Y", ndim=2, min_rows=2).astype(np.float64)
    if Y.shape[1] != 2:
        raise ValueError(f"Y must have 2 columns (a 2-D toy); got shape {Y.shape}")
    labels = np.asarray(labels)
    if labels.shape != (Y.shape[0],) or not np.issubdtype(labels.dtype, np.integer) or labels.min() < 0:
        raise ValueError(f"labels must be {Y.shape[0]} non-negative integers to match Y; got {labels.shape} "
                         f"{labels.dtype}")
    d_q = check_scalar(d_q, "d_q", low=4, high=4096, integer=True)
    offset = check_scalar(offset, "offset", low=0.0, high=100.0, low_inclusive=False)
    rng = np.random.default_rng(check_seed(seed))
    G = rng.normal(size=(d_q, 3))
    G -= G.mean(0)  # columns orthogonal to 1, so every lifted row is centred
    Q = np.linalg.qr(G)[0].T  # (3, d_q), orthonormal rows
    U = np.c_[Y, np.full(Y.shape[0], offset)]
    U /= np.linalg.norm(U, axis=1, keepdims=True)  # (n, 3), unit rows
    X0 = torch.from_numpy(math.sqrt(d_q) * U @ Q)  # (n, d_q): centred, squared norm d_q
    return LiftedToy(Y=Y, labels=labels.astype(int), X0=X0, Q=Q, offset=offset)


def make_toy(name: str = "moons", n: int = 300, noise: float = 0.07, d_q: int = 16, seed: int = 0) -> LiftedToy:
    """The chapter's toy: scikit-learn's two moons (or circles), centred, scaled to radius 1 and lifted.

    The points are sorted by class and then along the x axis, so that an image of A shows the neighbourhoods as
    bands and a causal mask means "attend to the points on your left (and to the whole first class)".
    """
    from probdr_lite.data import toy_manifold

    name = check_choice(name, "name", ("moons", "circles"))
    Y, t = toy_manifold(name, n=n, noise=noise, seed=seed)
    Y = Y - Y.mean(0)
    Y = Y / np.linalg.norm(Y, axis=1).max()
    order = np.lexsort((Y[:, 0], t))
    return lift_toy(Y[order], t[order].astype(int), d_q=d_q, seed=seed)


def toy_paths(toy: LiftedToy, n_steps: int, kappa, eta, beta, variants=CHAPTER_VARIANTS, mask=None) -> dict:
    """For each variant, the toy's positions in the plane after 0..n_steps blocks: {variant: (n_steps + 1, n, 2)}."""
    check_result(toy, "toy", make_toy, kind=LiftedToy, nonempty=False)
    variants = check_block_variants(variants)
    with single_threaded():  # a few hundred points: threads cost more than they save (see _threads)
        return {
            v: np.stack([toy.unlift(X) for X in unroll(toy.X0, n_steps, kappa, eta, beta, v, mask=mask)])
            for v in variants
        }


def bead_facts(toy: LiftedToy, positions, scale: float = 0.01) -> dict:
    """How the toy's points have gathered: groups of points that lie within ``scale`` of the toy's extent of each
    other (single linkage, so a chain of such neighbours is one group), read in the plane.

    ``positions`` are the toy's points in the plane after some blocks (a row of :func:`toy_paths`; points pushed past
    the equator, NaN, are left out). Returns ``groups`` (how many), ``per_class`` (how many groups hold points of each
    class, a list over the classes), ``shared`` (the share of points in a group of two or more) and ``pure`` (the
    share of points whose group's most common class is theirs: groups that stay on one moon) and ``n`` (the points
    counted).
    """
    from scipy.cluster.hierarchy import fcluster, linkage

    check_result(toy, "toy", make_toy, kind=LiftedToy, nonempty=False)
    P = np.asarray(positions, dtype=np.float64)  # NaN rows allowed: points with no image in the plane
    if P.shape != toy.Y.shape:
        raise ValueError(f"positions must have the toy's shape {toy.Y.shape}; got {P.shape}")
    scale = check_scalar(scale, "scale", low=0.0, high=1.0, low_inclusive=False)
    ok = np.isfinite(P).all(axis=1)
    if ok.sum() < 2:
        raise ValueError("positions must hold at least two finite points")
    labels = toy.labels[ok]
    group = fcluster(linkage(P[ok], "single"), scale * float(np.ptp(toy.Y, axis=0).max()), "distance")
    sizes = np.bincount(group)
    majority = sum(int(np.bincount(labels[group == g]).max()) for g in np.unique(group))
    return {"n": int(ok.sum()), "groups": int(group.max()),
            "per_class": [int(np.unique(group[labels == c]).size) for c in np.unique(toy.labels)],
            "shared": float(np.mean(sizes[group] >= 2)), "pure": majority / int(ok.sum())}


def toy_beta_effect(toy, kappas, betas, *, eta, depth, variant="paper", weak: float = 0.1) -> dict:
    """What beta's range does to the transformer-block chapter's toy (:func:`make_toy`) at each kappa.

    For each kappa in ``kappas`` and the two ends ``betas`` = (lowest, highest): the mean distance the points move in
    ``depth`` blocks and in one block (:func:`toy_paths`, points pushed past the equator left out), and the mean
    weight A_ii a point gives itself in the first block (:func:`probdr_lite.unrolled.attention_matrix`). ``weak`` is True when, at every kappa, the distance moved in
    ``depth`` blocks changes by less than the fraction ``weak`` over the range.
    """
    weak = check_scalar(weak, "weak", low=0.0, high=1.0)
    depth = check_scalar(depth, "depth", low=1, high=1000, integer=True)
    if len(betas) != 2 or not betas[0] < betas[1]:
        raise ValueError(f"betas must be the two ends of beta's range, lowest first; got {betas!r}")

    def moved(path, t):
        ok = np.isfinite(path[t][:, 0])
        return float(np.linalg.norm(path[t][ok] - path[0][ok], axis=1).mean())

    rows = []
    for kappa in kappas:
        row = {"kappa": float(kappa), "moved": [], "moved_1": [], "self": []}
        for beta in betas:
            path = toy_paths(toy, depth, kappa, eta, beta, [variant])[variant]
            row["moved"].append(moved(path, depth))
            row["moved_1"].append(moved(path, 1))
            A = attention_matrix(toy.X0, kappa, beta)
            row["self"].append(float(A.diagonal().mean()))
        row["change"] = row["moved"][1] / row["moved"][0] - 1.0
        rows.append(row)
    return {"rows": rows, "betas": [float(b) for b in betas], "eta": float(eta), "depth": depth, "variant": variant,
            "d_q": toy.d_q, "weak_below": weak, "weak": all(abs(r["change"]) < weak for r in rows)}


def toy_beta_facts(effect) -> dict:
    """The numbers of the toy's sentence about beta, from :func:`toy_beta_effect`'s ``effect`` of two kappas (the
    chapter's and the narrowest kernel's, in that order): numbers and booleans only, no words.

    ``beta_lo``, ``beta_hi`` (the ends of beta's range), ``depth``, ``d_q``, ``weak`` and ``weak_below`` (the
    effect's); ``ff_lo`` and ``ff_hi``, the feed-forward weight 2/(d_q + beta) at both ends; for the chapter's kappa
    (suffix ``_at``) and the narrowest (suffix ``_narrow``): ``kappa``, ``moved_lo`` / ``moved_hi`` (mean distance
    moved in ``depth`` blocks at both ends), ``change_percent``, ``self_lo`` / ``self_hi`` (mean weight a point gives
    itself in the first block, in %), ``first_lo`` / ``first_hi`` (mean distance moved in one block).
    """
    (b0, b1), d_q = effect["betas"], effect["d_q"]
    rows = effect["rows"]
    if len(rows) != 2:
        raise ValueError("effect must hold two kappas' rows, the chapter's and the narrowest (see toy_beta_effect)")
    out = {"beta_lo": b0, "beta_hi": b1, "depth": effect["depth"], "d_q": d_q, "weak": bool(effect["weak"]),
           "weak_below": effect["weak_below"], "ff_lo": 2 / (d_q + b0), "ff_hi": 2 / (d_q + b1)}
    for suffix, r in zip(("at", "narrow"), rows):
        out.update({f"kappa_{suffix}": r["kappa"], f"moved_lo_{suffix}": r["moved"][0],
                    f"moved_hi_{suffix}": r["moved"][1], f"change_percent_{suffix}": 100 * r["change"],
                    f"self_lo_{suffix}": 100 * r["self"][0], f"self_hi_{suffix}": 100 * r["self"][1],
                    f"first_lo_{suffix}": r["moved_1"][0], f"first_hi_{suffix}": r["moved_1"][1]})
    return out


def toy_beta_range(toy, variant: str = "paper") -> dict:
    """:func:`toy_beta_effect` over the whole beta range of :data:`TOY_SETTINGS`, at the default kappa and at the
    narrowest kernel (the largest kappa, where a point's own weight is largest), with the default eta and depth."""
    kappas, betas = TOY_SETTINGS["kappa"]["values"], TOY_SETTINGS["beta"]["values"]
    return toy_beta_effect(toy, kappas=(TOY_SETTINGS["kappa"]["default"], kappas[-1]), betas=(betas[0], betas[-1]),
                           eta=TOY_SETTINGS["eta"]["default"], depth=TOY_SETTINGS["depth"]["default"],
                           variant=variant)
