"""The confirmatory round for A - I: its declaration, its grids and the one function that reads it.

Everything the trained-transformers chapter ran before this round is *exploratory*: its cells were run and read
before its families of tests were written down, and seeds were added to cells already looked at (the results README
tells that history). This module declares a round that settles the question the exploratory study raised, before a
single run of it exists: which cells, which arms, which seeds, how many, what is measured, how training stops, which
margins, which tests and which correction, and what each verdict word will mean. ``declaration()`` renders it as the
committed file ``probdr_lite/results/confirmatory/declaration.md`` (a test keeps the two identical), and
:func:`confirmatory_table` is the only function that turns the round's rows into verdicts. After the first run the
declaration is frozen; a mistake found later is reported as a deviation, never edited in.

The design in one paragraph. Four cells: the ViT at its plateau (the plateau rule with its decay) and the character
model at nanoGPT's CPU recipe (2,000 iterations, its schedule finished), each under PyTorch's default initialisation
and under GPT-2's. In each cell attention and A - I are trained from the same seed (same weights, same batches),
on seeds no exploratory run used. The ViT is trained on 6,000 images, stopped by the rule on 2,000 validation images
and scored once on 2,000 test images that neither training nor the rule ever sees. The four paired mean differences
are one family: each gets a Bonferroni interval at level 1 - 0.05/4 (together they cover with probability at least
95 %), and every verdict word is read from that interval alone, with an exact sign-flip permutation test as a check
on the t-test. The number of pairs per cell comes from a power calculation for the equivalence test on the spread
of the matching exploratory cell (:func:`power_equivalence`).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .._validation import check_choice, check_scalar
from .families import EQUIVALENCE_MARGINS, t_summary
from .files import check_task_rows
from .stats import row_quantity
from .sweep import PLATEAU_DECAY, Grid

#: The two arms: plain attention (y = A v) and the paper's A - I (y = A v - v), trained from one seed each pair.
ARMS = ("attention", "diffusion")
#: The initialisations: PyTorch's default layer initialisation and GPT-2's N(0, 0.02^2).
INITS = ("default", "gpt2")
#: The ViT's data: a test split held out first, then training and validation images from the rest (stratified,
#: split seed 0, the same for every run). The plateau rule reads the validation loss only.
VIT_SPLIT = {"n_train": 6000, "n_val": 2000, "n_test": 2000}
#: The recipe of each cell, less its initialisation. ViT: the exploratory plateau cell's recipe (lr 3e-3, warm-up +
#: cosine over at most 60 epochs; once the validation loss has not improved for 5 epochs the learning rate decays to
#: its minimum over 5 more and the run stops) on the split above. Character model: nanoGPT's CPU recipe, 2,000
#: iterations, the cosine schedule ending at iteration 2,000.
RECIPES = {"vit": {"lr": 3e-3, "schedule": "cosine", **PLATEAU_DECAY, **VIT_SPLIT},
           "charlm": {"lr": 1e-3, "max_iters": 2000}}
#: The metric of each task (a field of the row) and whether lower is better.
METRICS = {"vit": ("test_acc", False), "charlm": ("final_val_loss", True)}
#: The exploratory cell whose paired spread plans each confirmatory cell: (budget of :mod:`.families`).
PLANNING_CELLS = {"vit": "plateau", "charlm": "early"}
#: The confirmatory seeds start here; every exploratory run used seeds 0-7.
FIRST_SEED = 100
#: The family-wise error rate of the round and the number of tests in its family (the four cells).
ALPHA = 0.05
FAMILY_SIZE = 4
#: Pairs per cell: the default-initialisation cells take the smallest n in this range whose equivalence test has
#: :data:`TARGET_POWER` at the exploratory spread (the largest if none); the GPT-2 cells take :data:`GPT2_PAIRS`.
DEFAULT_PAIRS_RANGE = (12, 16)
GPT2_PAIRS = 8
TARGET_POWER = 0.8
#: The margins (as :data:`.families.EQUIVALENCE_MARGINS`), with the reasons that fix them before any outcome.
MARGINS = {"vit": EQUIVALENCE_MARGINS["vit"], "charlm": EQUIVALENCE_MARGINS["charlm"]}
#: The verdict words, each defined in :func:`verdict_word`.
VERDICTS = ("better", "worse", "equivalent", "cannot tell")
#: The commit that declared the round and its time (written after the commit: the declaration itself cannot know
#: its own hash; every row of the round records this commit as its ``git_commit``).
DECLARED_AT = ("adbac62", "2026-12-05T13:48:03+00:00")
#: Where the declaration and the rows live, inside the results folder.
FOLDER = "confirmatory"
FILES = {"vit": f"{FOLDER}/vit.json", "charlm": f"{FOLDER}/charlm.json"}
DECLARATION_FILE = f"{FOLDER}/declaration.md"


# ------------------------------------------------------------------------------------------------ power

def power_equivalence(sd: float, margin: float, n: int, *, level: float, difference: float = 0.0) -> float:
    """Probability that the two-sided (1 - level) t interval of n paired differences lies inside (-margin, margin).

    The differences are taken as N(``difference``, sd^2). The interval is mean +- q s / sqrt(n) with q the
    (1 - level/2) quantile of t with n - 1 degrees of freedom, so this is the power of the two one-sided tests
    (TOST) at level/2 each. Computed exactly by integrating over the chi-square law of the sample variance:
    P = E_s[ Phi((m - q s/sqrt(n) - delta) sqrt(n)/sd) - Phi((-m + q s/sqrt(n) - delta) sqrt(n)/sd) ]^+.
    """
    from scipy import integrate, stats

    sd = check_scalar(sd, "sd", low=0, low_inclusive=False)
    margin = check_scalar(margin, "margin", low=0, low_inclusive=False)
    n = check_scalar(n, "n", low=2, integer=True)
    level = check_scalar(level, "level", low=0, high=1, low_inclusive=False, high_inclusive=False)
    difference = check_scalar(difference, "difference")
    q = stats.t.ppf(1 - level / 2, n - 1)
    root = math.sqrt(n)

    def given(u):  # u = (n - 1) s^2 / sd^2, chi-square with n - 1 degrees of freedom
        half = q * sd * math.sqrt(u / (n - 1)) / root
        if half >= margin:
            return 0.0
        hi = stats.norm.cdf((margin - half - difference) * root / sd)
        lo = stats.norm.cdf((-margin + half - difference) * root / sd)
        return max(0.0, hi - lo) * stats.chi2.pdf(u, n - 1)

    # the integrand is zero once the half-width reaches the margin: u >= (n - 1) (margin sqrt(n) / (q sd))^2
    top = (n - 1) * (margin * root / (q * sd)) ** 2
    value, _ = integrate.quad(given, 0.0, top, limit=200)
    return float(min(1.0, max(0.0, value)))


def power_sign(sd: float, difference: float, n: int, *, level: float) -> float:
    """Probability that the two-sided (1 - level) t interval of n paired differences ~ N(difference, sd^2)
    excludes zero (the noncentral t law, integrated over the sample variance as in :func:`power_equivalence`)."""
    from scipy import stats

    sd = check_scalar(sd, "sd", low=0, low_inclusive=False)
    difference = check_scalar(difference, "difference")
    n = check_scalar(n, "n", low=2, integer=True)
    level = check_scalar(level, "level", low=0, high=1, low_inclusive=False, high_inclusive=False)
    from scipy import integrate

    q = stats.t.ppf(1 - level / 2, n - 1)
    nc = difference * math.sqrt(n) / sd

    def given(u):  # u = (n - 1) s^2 / sd^2; the interval excludes 0 when |Z + nc| > q s / sd
        h = q * math.sqrt(u / (n - 1))
        return (stats.norm.cdf(nc - h) + stats.norm.cdf(-nc - h)) * stats.chi2.pdf(u, n - 1)

    value, _ = integrate.quad(given, 0.0, np.inf, limit=200)
    return float(min(1.0, max(0.0, value)))


def planning(rows_by_task: dict) -> list:
    """The power calculation of the round, from the exploratory rows: one entry per cell, in :func:`cells` order.

    Each entry: ``task``, ``init``, ``planning_n`` and ``planning_sd`` (the paired seeds and the sd of the paired
    differences of the matching exploratory cell, :data:`PLANNING_CELLS`), ``planning_mean`` (its mean difference,
    used only for the GPT-2 cells' sign power), ``pairs`` (the declared number of pairs), ``power_equivalence`` (at
    difference 0, at the family's level) and ``power_sign`` (at the exploratory mean difference).
    """
    from .families import family_table

    table = family_table("primary", rows_by_task)
    out = []
    level = ALPHA / FAMILY_SIZE
    for task, init in _cell_keys():
        budget = PLANNING_CELLS[task]
        c = next(c for c in table if c["task"] == task and c["init"] == init and c["budget"] == budget)
        sd, mean = float(c["sd_diff"]), float(c["mean_diff"])
        if init == "default":
            lo, hi = DEFAULT_PAIRS_RANGE
            pairs = next((n for n in range(lo, hi + 1)
                          if power_equivalence(sd, MARGINS[task], n, level=level) >= TARGET_POWER), hi)
        else:
            pairs = GPT2_PAIRS
        out.append({"task": task, "init": init, "planning_budget": budget, "planning_n": int(c["n"]),
                    "planning_sd": sd, "planning_mean": mean, "pairs": pairs,
                    "power_equivalence": power_equivalence(sd, MARGINS[task], pairs, level=level),
                    "power_sign": power_sign(sd, mean, pairs, level=level) if mean != 0 else None})
    return out


# ------------------------------------------------------------------------------------------------ the cells

def _cell_keys():
    return [(task, init) for task in ("vit", "charlm") for init in INITS]


#: Pairs per cell, fixed by :func:`planning` on the exploratory rows on 2026-12-05 and frozen here (a test checks
#: that :func:`planning` still gives them).
PAIRS = {("vit", "default"): 12, ("vit", "gpt2"): 8, ("charlm", "default"): 14, ("charlm", "gpt2"): 8}


def seeds(task: str, init: str) -> tuple:
    """The declared seeds of one cell: :data:`FIRST_SEED` onwards, :data:`PAIRS` of them."""
    task = check_choice(task, "task", tuple(RECIPES))
    init = check_choice(init, "init", INITS)
    return tuple(range(FIRST_SEED, FIRST_SEED + PAIRS[(task, init)]))


def recipe(task: str, init: str) -> dict:
    """The config overrides of one cell."""
    task = check_choice(task, "task", tuple(RECIPES))
    init = check_choice(init, "init", INITS)
    return {**RECIPES[task], "init": init}


def cells() -> list:
    """The four declared cells, in the order the tables print them: ``[{"task", "init", "recipe", "seeds"}]``."""
    return [{"task": t, "init": i, "recipe": recipe(t, i), "seeds": seeds(t, i)} for t, i in _cell_keys()]


#: The grids that run the round (``python -m probdr_lite.experiments grid confirmatory-vit``); every row they write
#: carries ``"study": "confirmatory"``.
GRIDS = {
    f"confirmatory-{task}": Grid(f"confirmatory-{task}", task, tuple(recipe(task, i) for i in INITS), ARMS,
                                 cell_seeds=tuple(seeds(task, i) for i in INITS), file=FILES[task],
                                 study="confirmatory",
                                 description=f"the confirmatory round's {task} cells (declared in "
                                             f"{DECLARATION_FILE}): both initialisations, attention and A - I")
    for task in ("vit", "charlm")
}


# ------------------------------------------------------------------------------------------------ the tests

def sign_flip_pvalue(differences) -> float:
    """Exact two-sided sign-flip permutation p-value of the mean of paired differences.

    Under the null hypothesis that each difference is symmetric about zero, every one of the 2^n patterns of
    signs is equally likely; the p-value is the share of patterns whose |mean| is at least the observed |mean|
    (the observed pattern included). Exact enumeration, n at most 20.
    """
    d = np.asarray(differences, dtype=float)
    if d.ndim != 1 or not 2 <= len(d) <= 20 or not np.all(np.isfinite(d)):
        raise ValueError(f"differences must be 1-D, finite, with 2 to 20 entries; got shape {d.shape}")
    signs = np.array(list(itertools.product((1.0, -1.0), repeat=len(d))))  # (2^n, n)
    sums = np.abs(signs @ d)
    observed = abs(d.sum())
    # a pattern ties the observed sum when equal up to round-off of the summation
    return float(np.mean(sums >= observed - 1e-12 * max(1.0, np.abs(d).sum())))


def verdict_word(interval, margin: float, *, lower_is_better: bool) -> str:
    """The declared verdict word of one cell, read from its family interval (low, high) of A - I minus attention.

    - ``"better"``: the interval lies entirely on A - I's better side of zero (below it when lower is better);
    - ``"worse"``: entirely on its worse side;
    - ``"equivalent"``: the interval holds zero and lies strictly inside (-margin, margin);
    - ``"cannot tell"``: the interval holds zero and reaches the margin on at least one side.

    A sign verdict whose interval also lies inside the margin is still "better" / "worse"; :func:`confirmatory_table`
    reports the equivalence result beside it. The sign-flip check can only turn a sign verdict into "cannot tell".
    """
    try:
        low, high = (float(v) for v in interval)
    except (TypeError, ValueError):
        raise ValueError(f"interval must be a pair of numbers (low, high); got {interval!r}") from None
    if not (math.isfinite(low) and math.isfinite(high) and low <= high):
        raise ValueError(f"interval must be finite with low <= high; got {interval!r}")
    margin = check_scalar(margin, "margin", low=0, low_inclusive=False)
    if low > 0 or high < 0:
        return "better" if (high < 0) == lower_is_better else "worse"
    if -margin < low and high < margin:
        return "equivalent"
    return "cannot tell"


def _rows_of_cell(rows: list, task: str, init: str) -> dict:
    want = recipe(task, init)
    out = {}
    for r in rows:
        if r.get("study") != "confirmatory" or r["task"] != task:
            continue
        if all(r["config"].get(k) == v for k, v in want.items()):
            key = (r["variant"], r["seed"])
            if key in out:
                raise ValueError(f"rows hold two confirmatory runs of {task} {init} {r['variant']} seed {r['seed']}")
            out[key] = r
    return out


def confirmatory_table(rows_by_task: dict, *, partial: bool = False) -> list:
    """Every declared cell with its test, its interval, its check and its verdict: the round's only reading.

    ``rows_by_task``: ``{"vit": rows, "charlm": rows}`` of the confirmatory files. Every declared (arm, seed) of
    every cell must be there (else ValueError naming what is missing) unless ``partial=True``, which reads what is
    there and marks each entry ``complete`` (for progress only: no verdict of a partial table is ever quoted).

    Per cell: ``n``, ``seeds``, ``differences`` (A - I minus attention, seed by seed, in the metric's units),
    ``attention_mean``, ``mean_diff``, ``sd_diff``, ``correlation`` (between the arms' values across seeds),
    ``ci`` (the unadjusted 95 % t interval), ``interval`` (the family's: the t interval at level 1 - alpha/4),
    ``pvalue`` and ``adjusted_pvalue`` (two-sided paired t, and times 4 capped at 1), ``perm_pvalue`` and
    ``perm_adjusted`` (the exact sign-flip test, the same correction), ``t_verdict`` (:func:`verdict_word` of the
    interval), ``agree`` (whether the sign-flip check agrees with the t-test on the sign), ``verdict`` (the t verdict,
    or "cannot tell" where a sign verdict and the check disagree), ``equivalent`` (whether the interval lies inside
    the margin), ``margin``, ``n_better`` / ``n_worse``, ``leave_one_out`` (the verdict with each seed left out in
    turn, the other cells unchanged) and, ViT, ``test_se`` (the test images' sampling error of the mean difference,
    from the discordant images of each pair).
    """
    from scipy import stats

    if not isinstance(rows_by_task, dict):
        raise ValueError("rows_by_task must be a dict {task: confirmatory rows}")
    level = ALPHA / FAMILY_SIZE
    out, missing = [], []
    for cell in cells():
        task, init = cell["task"], cell["init"]
        rows = rows_by_task.get(task) or []
        if rows:
            rows, _ = check_task_rows(rows, f"rows_by_task[{task!r}]")
        have = _rows_of_cell(rows, task, init)
        paired = [s for s in cell["seeds"] if all((a, s) in have for a in ARMS)]
        missing += [(task, init, a, s) for s in cell["seeds"] for a in ARMS if (a, s) not in have]
        extra = sorted({s for _, s in have} - set(cell["seeds"]))
        if extra:
            raise ValueError(f"rows hold confirmatory {task} {init} runs of undeclared seeds {extra}")
        metric, lower = METRICS[task]
        if len(paired) < 2:
            out.append({"task": task, "init": init, "n": len(paired), "complete": False})
            continue
        a = np.array([row_quantity(have[("attention", s)], metric) for s in paired])
        b = np.array([row_quantity(have[("diffusion", s)], metric) for s in paired])
        d = b - a
        s = t_summary(d, ALPHA)
        q = float(stats.t.ppf(1 - level / 2, s["df"]))
        interval = (s["mean"] - q * s["se"], s["mean"] + q * s["se"])
        margin = MARGINS[task]
        t_verdict = verdict_word(interval, margin, lower_is_better=lower)
        perm = sign_flip_pvalue(d)
        perm_adj = min(1.0, FAMILY_SIZE * perm)
        sign_claim = t_verdict in ("better", "worse")
        agree = (perm_adj < ALPHA) == sign_claim
        better = d < 0 if lower else d > 0
        worse = d > 0 if lower else d < 0
        entry = {"task": task, "init": init, "metric": metric, "lower_is_better": lower, "complete": not any(
            m[:2] == (task, init) for m in missing), "n": len(paired), "seeds": paired, "differences": d,
            "attention_mean": float(a.mean()), "diffusion_mean": float(b.mean()),
            "mean_diff": s["mean"], "sd_diff": s["sd"],
            "correlation": float(np.corrcoef(a, b)[0, 1]) if a.std() > 0 and b.std() > 0 else float("nan"),
            "ci": s["ci"], "interval": interval, "level": 1 - level, "pvalue": s["pvalue"],
            "adjusted_pvalue": min(1.0, FAMILY_SIZE * s["pvalue"]), "perm_pvalue": perm, "perm_adjusted": perm_adj,
            "t_verdict": t_verdict, "agree": agree,
            "verdict": t_verdict if (agree or not sign_claim) else "cannot tell",
            "equivalent": bool(-margin < interval[0] and interval[1] < margin), "margin": margin,
            "n_better": int(better.sum()), "n_worse": int(worse.sum())}
        entry["leave_one_out"] = [_verdict_without(d, i, q_for=level, margin=margin, lower=lower)
                                  for i in range(len(d))] if len(d) > 2 else []
        if task == "vit":
            entry["test_se"] = _test_sampling_error(have, paired)
        out.append(entry)
    if missing and not partial:
        raise ValueError(f"the confirmatory rows are incomplete: {len(missing)} declared runs missing, e.g. "
                         f"(task, init, arm, seed) {missing[:4]}; read a partial table with partial=True")
    return out


def _verdict_without(d, i, *, q_for, margin, lower) -> str:
    from scipy import stats

    rest = np.delete(d, i)
    s = t_summary(rest, ALPHA)
    q = float(stats.t.ppf(1 - q_for / 2, s["df"]))
    interval = (s["mean"] - q * s["se"], s["mean"] + q * s["se"])
    word = verdict_word(interval, margin, lower_is_better=lower)
    if word in ("better", "worse") and not min(1.0, FAMILY_SIZE * sign_flip_pvalue(rest)) < ALPHA:
        return "cannot tell"
    return word


def _test_sampling_error(have: dict, paired: list) -> float:
    """The test images' share of the uncertainty of the mean accuracy difference: for each pair, the variance of
    the difference of two accuracies on the same N images is (b + c - (b - c)^2 / N) / N^2, with b and c the images
    only one arm gets right; the mean difference's is the mean of those over the pairs, divided by their number."""
    from .configs import ViTConfig
    from .vit import load_test_split

    labels = None
    variances = []
    for s in paired:
        att, dif = have[("attention", s)], have[("diffusion", s)]
        if labels is None:
            _, y = load_test_split(ViTConfig.from_dict(att["config"]))
            labels = "".join(str(int(v)) for v in y.tolist())
        right_a = np.array([p == t for p, t in zip(att["test_predictions"], labels)])
        right_b = np.array([p == t for p, t in zip(dif["test_predictions"], labels)])
        n_img = len(labels)
        b_only, a_only = int((right_b & ~right_a).sum()), int((right_a & ~right_b).sum())
        variances.append((b_only + a_only - (b_only - a_only) ** 2 / n_img) / n_img ** 2)
    return float(math.sqrt(np.mean(variances) / len(paired)))


# ------------------------------------------------------------------------------------------------ the declaration

_WORD_RULES = (
    ("better", "the family interval lies entirely on A - I's better side of zero (above it for the ViT's test "
               "accuracy, below it for the character model's loss), and the sign-flip check agrees"),
    ("worse", "the same on the worse side"),
    ("equivalent", "the interval holds zero and lies strictly inside (-margin, +margin): A - I and attention differ "
                   "by less than the margin in this cell (the two one-sided tests at level 0.05/8 each)"),
    ("cannot tell", "the interval holds zero and reaches the margin on at least one side, or it lies on one side "
                    "of zero and the sign-flip check does not confirm that sign"),
)


def declaration(rows_by_task: dict) -> str:
    """The declaration as Markdown, with the power calculation computed from the exploratory ``rows_by_task``."""
    plan = planning(rows_by_task)
    for p in plan:
        if p["pairs"] != PAIRS[(p["task"], p["init"])]:
            raise ValueError(f"PAIRS[{(p['task'], p['init'])!r}] = {PAIRS[(p['task'], p['init'])]} but the power "
                             f"calculation gives {p['pairs']}")
    level = ALPHA / FAMILY_SIZE
    unit = {"vit": ("pp", 100.0), "charlm": ("nats", 1.0)}

    def amount(task, x, digits=None):
        name, scale = unit[task]
        return f"{x * scale:.{digits or (2 if task == 'vit' else 4)}f} {name}"

    lines = [
        "# The confirmatory round for A - I: declaration",
        "",
        "Written and committed before the first run of the round. Generated by "
        "`python -m probdr_lite.experiments confirmatory --declare` from `probdr_lite/experiments/confirmatory.py` "
        "(a test keeps the two identical). Nothing here may change after the first run; a mistake found later is "
        "reported as a deviation in the results README and the chapter.",
        "",
        "## Question",
        "",
        "Does replacing attention A by the graph-Laplacian term A - I (y = A v - v per head, the paper's proposal) "
        "change what a trained transformer reaches, in the four cells where the exploratory study pointed, and in "
        "which direction? The exploratory study (every earlier row, seeds 0-7) motivated the round and is not "
        "pooled with it.",
        "",
        "## Cells and arms",
        "",
        "| cell | model | initialisation | recipe | metric (A - I minus attention) | pairs | seeds |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    recipe_words = {
        "vit": "ViT on MNIST, the plateau rule with its decay: lr 3e-3, warm-up + cosine over at most 60 epochs; when "
               "the validation loss has not improved for 5 epochs, the learning rate decays to its minimum over 5 "
               "more and the run stops",
        "charlm": "character model, nanoGPT's CPU recipe: 2,000 iterations, lr 1e-3 warmed up over 100 then cosine "
                  "to 1e-4 at iteration 2,000",
    }
    metric_words = {"vit": "test accuracy of the final model, percentage points (higher is better)",
                    "charlm": "validation loss after iteration 2,000, nats (lower is better)"}
    for k, c in enumerate(cells(), 1):
        lines.append(f"| {k} | {c['task']} | {c['init']} | {recipe_words[c['task']]} | {metric_words[c['task']]} | "
                     f"{len(c['seeds'])} | {c['seeds'][0]}-{c['seeds'][-1]} |")
    lines += [
        "",
        "Arms: `attention` (y = A v per head) and `diffusion` (A - I: y = A v - v), nothing else. One seed fixes the "
        "initial weights, the batch order and the evaluation batches, identically in both arms, so the two runs of a "
        "seed form a pair. Seeds start at 100; every exploratory run used seeds 0-7. Every setting not named here is "
        "the default of `ViTConfig` / `CharLMConfig`; the rows store their full configuration.",
        "",
        f"ViT data: the 10,000 vendored MNIST images split once (stratified, split seed 0, the same for every run) "
        f"into a test split of {VIT_SPLIT['n_test']:,} images held out first, then {VIT_SPLIT['n_train']:,} training "
        f"and {VIT_SPLIT['n_val']:,} validation images. Training reads the training images; the plateau rule reads "
        f"the validation loss after every epoch; the test images are scored once, on the final model, and both arms "
        f"of a pair on the same images. The row keeps each test image's predicted class, so the test images' "
        f"sampling error of each difference is stated beside it.",
        "",
        "Character-model metric: the mean cross-entropy over 200 random batches (12 x 64 characters) of the "
        "validation text (the last 10 %), drawn from the seed's evaluation stream, the same batches for both arms. No "
        "decision in training reads it (the run length is fixed), so it serves as the held-out score.",
        "",
        "## Stopping rules",
        "",
        "- Training: the ViT stops by the plateau rule above (or after 60 epochs); the character model after 2,000 "
        "iterations.",
        "- The round: every declared run is made, and none other. Rows are appended as they finish; no test, "
        "interval or difference of the round is computed until all "
        f"{sum(2 * len(c['seeds']) for c in cells())} rows are in. A run that fails is run again with the same seed. "
        "A run that cannot be made is reported as a deviation, and its cell is read on the pairs that exist.",
        "",
        "## Margins (fixed without the outcome)",
        "",
        f"- Character model: {MARGINS['charlm']} nats, a 2 % change in perplexity (exp(0.02) = 1.020). nanoGPT reports "
        "this configuration's validation loss to two decimals (1.88), so a difference inside the margin moves that "
        "published number by at most two units of its last digit.",
        f"- ViT: {MARGINS['vit'] * 100:.1f} percentage points of test accuracy: the binomial standard error of one "
        f"model's accuracy on {VIT_SPLIT['n_test']:,} test images at 95 % accuracy is "
        f"{math.sqrt(0.95 * 0.05 / VIT_SPLIT['n_test']) * 100:.2f} pp, so a smaller difference is below what "
        "scoring a single model on this test split can resolve.",
        "",
        "Neither reason uses a paired difference or a seed spread. The values are the exploratory study's margins; "
        "there they were justified partly by the seed spread, which this round no longer relies on.",
        "",
        "## Tests, family and correction",
        "",
        f"- Family: the {FAMILY_SIZE} cells, corrected together by Bonferroni at a family-wise level of {ALPHA}. Each "
        f"cell's interval is the two-sided paired t interval at level 1 - {ALPHA}/{FAMILY_SIZE} = "
        f"{(1 - level) * 100:.2f} %, so the four intervals hold together with probability at least 95 %.",
        "- Paired t-test: the mean of the seed-paired differences, its t interval as above, its two-sided p-value "
        f"and the same times {FAMILY_SIZE} (capped at 1).",
        f"- Sign-flip permutation check: the exact two-sided sign-flip test of the same mean (all 2^n sign patterns), "
        f"its p-value times {FAMILY_SIZE}. A sign verdict needs both: the interval on one side of zero and the "
        f"check's adjusted p below {ALPHA}. A sign the check does not confirm makes the cell \"cannot tell\"; a sign "
        "the check finds and the interval does not leaves the interval's verdict standing. Either disagreement is "
        "reported.",
        f"- Equivalence: the two one-sided tests against the margin at level {level / 2} each, which is the family "
        "interval lying strictly inside (-margin, +margin). It is reported for every cell.",
        "- Descriptive, not verdicts: each arm's mean, the sd of the differences, the correlation of the arms across "
        "seeds, seeds better / worse, the verdict with each seed left out in turn, and (ViT) the test images' sampling "
        "error of the mean difference.",
        "- The function that computes every verdict: `probdr_lite.experiments.confirmatory.confirmatory_table` "
        "(with `verdict_word` and `sign_flip_pvalue`), run on the rows of `probdr_lite/results/confirmatory/vit.json` "
        "and `charlm.json`, which every row marks `\"study\": \"confirmatory\"` with its commit and timestamp.",
        "",
        "## Verdict words",
        "",
    ]
    lines += [f"- **{w}**: {rule}." for w, rule in _WORD_RULES]
    lines += [
        "",
        "A sign verdict whose interval also lies inside the margin is reported as the sign verdict with \"within the "
        "margin\" beside it. An interval is printed with both ends; no verdict word is said of a cell whose interval "
        "contradicts it.",
        "",
        "## Sample size: the power calculation",
        "",
        f"On the spread of the paired differences of the matching exploratory cell (the ViT's plateau cells, test "
        f"accuracy standing in for validation accuracy; the character model's 2,000-iteration cells), for the "
        f"equivalence test at the family's level (interval at {(1 - level) * 100:.2f} %) when the true difference is "
        f"0, and for the sign claim at the exploratory mean difference. Default-initialisation cells: the smallest n "
        f"from {DEFAULT_PAIRS_RANGE[0]} to {DEFAULT_PAIRS_RANGE[1]} with power at least {TARGET_POWER:.0%} for "
        f"equivalence ({DEFAULT_PAIRS_RANGE[1]} if none reaches it); GPT-2 cells: {GPT2_PAIRS} pairs, where the "
        "exploratory effect is large.",
        "",
        "| cell | exploratory cell: pairs, mean difference, sd of the differences | declared pairs | power, equivalence "
        "at 0 | power, sign at the exploratory mean |",
        "| --- | --- | --- | --- | --- |",
    ]
    for k, p in enumerate(plan, 1):
        sign = "" if p["power_sign"] is None else f"{p['power_sign']:.2f}"
        lines.append(f"| {k} | {p['planning_n']} pairs, {amount(p['task'], p['planning_mean'])}, "
                     f"{amount(p['task'], p['planning_sd'])} | {p['pairs']} | {p['power_equivalence']:.2f} | {sign} |")
    lines += [
        "",
        "The exploratory spreads rest on 5-8 pairs and the ViT's on validation rather than test accuracy, so these "
        "powers are planning figures, not guarantees. Runs: "
        f"{sum(2 * len(c['seeds']) for c in cells())} in all, about 4 minutes per ViT run and 6.5 per character-model "
        "run on one thread.",
        "",
        "## Commands",
        "",
        "```",
        "python -m probdr_lite.experiments grid confirmatory-vit --threads 1 --device cpu --quiet --shard 0/2",
        "python -m probdr_lite.experiments grid confirmatory-charlm --threads 1 --device cpu --quiet --shard 0/2",
        "# and the same with --shard 1/2 in a second process",
        "```",
        "",
    ]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------ reading

def load_rows(directory=None) -> dict:
    """``{task: rows}`` of the confirmatory files (an empty list where a file does not exist yet)."""
    from .files import results_dir
    from .results import load_results

    out = {}
    for task, name in FILES.items():
        path = results_dir(directory) / name
        out[task] = [r for r in load_results(path) if r["task"] == task] if path.is_file() else []
    return out


def format_table(table: list) -> str:
    """The round's table as Markdown, as the declaration describes it (intervals with both ends)."""
    def amount(task, x):
        return f"{x * 100:+.2f} pp" if task == "vit" else f"{x:+.4f}"

    lines = ["| model | init | pairs | attention | A - I - attention | family interval | t p (x4) | sign-flip p (x4) | "
             "better / worse | verdict | inside the margin |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for c in table:
        if "mean_diff" not in c:
            lines.append(f"| {c['task']} | {c['init']} | {c['n']} | | | | | | | | |")
            continue
        base = f"{c['attention_mean'] * 100:.2f} %" if c["task"] == "vit" else f"{c['attention_mean']:.4f}"
        lo, hi = c["interval"]
        lines.append(f"| {c['task']} | {c['init']} | {c['n']} | {base} | {amount(c['task'], c['mean_diff'])} | "
                     f"[{amount(c['task'], lo)}, {amount(c['task'], hi)}] | {c['adjusted_pvalue']:.2g} | "
                     f"{c['perm_adjusted']:.2g} | {c['n_better']} / {c['n_worse']} | {c['verdict']} | "
                     f"{'yes' if c['equivalent'] else 'no'} |")
    return "\n".join(lines)
