"""The confirmatory round: its declaration, the held-out test split, the power calculation and the one reading.

Checked against independent answers: Monte Carlo for the powers, SciPy's permutation test for the sign-flip
p-value, SciPy's paired t-test for the intervals, a recount of the predictions for the test accuracy.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from probdr_lite.experiments import confirmatory as C
from probdr_lite.experiments import validate_results
from probdr_lite.experiments.configs import CharLMConfig, ViTConfig
from probdr_lite.experiments.files import RESULTS_DIR, task_rows
from probdr_lite.experiments.results import SCHEMA_VERSION, derived_fields, recipe_of


# ------------------------------------------------------------------------------------------------ the declaration

def test_committed_declaration_is_what_the_module_declares():
    rows = {task: task_rows(task) for task in ("charlm", "vit")}
    text = (RESULTS_DIR / C.DECLARATION_FILE).read_text()
    assert text == C.declaration(rows) + "\n", (
        "probdr_lite/results/confirmatory/declaration.md differs from confirmatory.declaration(): the declaration "
        "is frozen once the round has started; report a change as a deviation instead")


def test_declared_cells_use_only_new_seeds_and_the_declared_sizes():
    used = {r["seed"] for task in ("charlm", "vit") for r in task_rows(task)}
    for cell in C.cells():
        assert not set(cell["seeds"]) & used
        n = len(cell["seeds"])
        if cell["init"] == "default":
            assert C.DEFAULT_PAIRS_RANGE[0] <= n <= C.DEFAULT_PAIRS_RANGE[1]
        else:
            assert n >= C.GPT2_PAIRS


def test_confirmatory_grids_run_every_declared_pair_once():
    for task in ("vit", "charlm"):
        grid = C.GRIDS[f"confirmatory-{task}"]
        runs = [(c.to_dict()["init"], arm, seed) for c, arm, seed in grid.runs()]
        want = [(cell["init"], arm, s) for cell in C.cells() if cell["task"] == task for s in cell["seeds"]
                for arm in C.ARMS]
        assert sorted(runs) == sorted(want) and len(set(runs)) == len(runs)
        assert grid.study == "confirmatory" and grid.file == C.FILES[task]
    vit = next(C.GRIDS["confirmatory-vit"].runs())[0]
    assert (vit.n_train, vit.n_val, vit.n_test, vit.patience, vit.decay_epochs) == (6000, 2000, 2000, 5, 5)


# ------------------------------------------------------------------------------------------------ power

@pytest.mark.parametrize("sd, margin, n, delta", [(0.0173, 0.02, 14, 0.0), (0.0036, 0.005, 12, 0.001),
                                                  (1.0, 1.5, 9, -0.3)])
def test_equivalence_power_against_monte_carlo(sd, margin, n, delta):
    rng = np.random.default_rng(7)
    d = rng.normal(delta, sd, (200_000, n))
    q = stats.t.ppf(1 - 0.0125 / 2, n - 1)
    half = q * d.std(axis=1, ddof=1) / math.sqrt(n)
    hits = np.mean((d.mean(axis=1) - half > -margin) & (d.mean(axis=1) + half < margin))
    # the Monte Carlo standard error is at most 0.0012
    assert C.power_equivalence(sd, margin, n, level=0.0125, difference=delta) == pytest.approx(hits, abs=0.006)


@pytest.mark.parametrize("sd, delta, n, level", [(1.0, 0.8, 10, 0.05), (0.5, -0.3, 8, 0.0125), (2.0, 0.1, 16, 0.01)])
def test_sign_power_is_the_noncentral_t(sd, delta, n, level):
    q = stats.t.ppf(1 - level / 2, n - 1)
    nc = delta * math.sqrt(n) / sd
    exact = stats.nct.sf(q, n - 1, nc) + stats.nct.cdf(-q, n - 1, nc)
    assert C.power_sign(sd, delta, n, level=level) == pytest.approx(exact, rel=1e-6)


def test_power_refuses_bad_input():
    with pytest.raises(ValueError, match="sd"):
        C.power_equivalence(0.0, 0.02, 10, level=0.05)
    with pytest.raises(ValueError, match="n"):
        C.power_equivalence(0.01, 0.02, 1, level=0.05)
    with pytest.raises(ValueError, match="level"):
        C.power_sign(0.01, 0.02, 10, level=1.5)


# ------------------------------------------------------------------------------------------------ the tests

@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sign_flip_pvalue_matches_scipy_permutation_test(seed):
    d = np.random.default_rng(seed).normal(0.3, 1.0, 9)
    ref = stats.permutation_test((d,), np.mean, permutation_type="samples", alternative="two-sided",
                                 n_resamples=np.inf).pvalue
    assert C.sign_flip_pvalue(d) == pytest.approx(ref, rel=1e-9)


def test_sign_flip_pvalue_extremes_and_bad_input():
    assert C.sign_flip_pvalue(np.arange(1, 9)) == 2 / 256
    assert C.sign_flip_pvalue([1.0, -1.0, 1.0, -1.0]) == 1.0
    with pytest.raises(ValueError, match="differences"):
        C.sign_flip_pvalue([1.0])
    with pytest.raises(ValueError, match="differences"):
        C.sign_flip_pvalue([1.0, float("nan")])


@pytest.mark.parametrize("interval, lower, word", [
    ((0.001, 0.004), False, "better"), ((0.001, 0.004), True, "worse"), ((-0.03, -0.01), True, "better"),
    ((-0.004, 0.004), False, "equivalent"), ((-0.004, 0.005), False, "cannot tell"),
    ((-0.006, 0.001), False, "cannot tell")])
def test_verdict_word_follows_the_declared_rule(interval, lower, word):
    assert C.verdict_word(interval, 0.005, lower_is_better=lower) == word


def test_verdict_word_never_contradicts_its_interval():
    rng = np.random.default_rng(3)
    for _ in range(2000):
        lo, hi = np.sort(rng.normal(0, 0.01, 2))
        word = C.verdict_word((lo, hi), 0.005, lower_is_better=False)
        assert (word == "better") == (lo > 0)
        assert (word == "worse") == (hi < 0)
        assert (word == "equivalent") == (lo <= 0 <= hi and -0.005 < lo and hi < 0.005)


def test_verdict_word_refuses_bad_input():
    with pytest.raises(ValueError, match="interval"):
        C.verdict_word((1.0, 0.0), 0.1, lower_is_better=False)
    with pytest.raises(ValueError, match="margin"):
        C.verdict_word((0.0, 1.0), -0.1, lower_is_better=False)


# ------------------------------------------------------------------------------------------------ the reading

def _charlm_row(variant, seed, final, init, study="confirmatory"):
    config = CharLMConfig(**C.recipe("charlm", init)).to_dict()
    curve = [[0, 4.2, 4.2], [2000, final + 0.1, final]]
    row = {"schema_version": SCHEMA_VERSION, "task": "charlm", "variant": variant, "seed": seed, "config": config,
           "recipe": recipe_of("charlm", config), "final_val_loss": final, "best_val_loss": min(final, 4.2),
           **derived_fields("charlm", curve, config), "curve_columns": ["iter", "train_loss", "val_loss"],
           "curve": curve, "throughput": 1.0, "throughput_unit": "tokens/s", "train_seconds": 1.0,
           "wall_seconds": 1.0, "torch_version": "x", "device": "cpu", "git_commit": "abc", "command": "test",
           "timestamp": "2026-01-01T00:00:00+00:00"}
    if study:
        row["study"] = study
    return row


def _vit_row(variant, seed, predictions, labels, init):
    config = ViTConfig(**C.recipe("vit", init)).to_dict()
    acc = float(np.mean([p == t for p, t in zip(predictions, labels)]))
    curve = [[0, 2.3, 2.3, 0.1], [47, 0.2, 0.2, 0.95]]
    return {"schema_version": SCHEMA_VERSION, "task": "vit", "variant": variant, "seed": seed, "config": config,
            "recipe": recipe_of("vit", config), "final_val_loss": 0.2, "best_val_loss": 0.2, "final_val_acc": 0.95,
            "best_val_acc": 0.95, "epochs_run": 1, **derived_fields("vit", curve, config),
            "curve_columns": ["iter", "train_loss", "val_loss", "val_acc"], "curve": curve, "throughput": 1.0,
            "throughput_unit": "images/s", "train_seconds": 1.0, "wall_seconds": 1.0, "torch_version": "x",
            "device": "cpu", "git_commit": "abc", "command": "test", "timestamp": "2026-01-01T00:00:00+00:00",
            "study": "confirmatory", "test_loss": 0.2, "test_acc": acc, "test_predictions": predictions}


@pytest.fixture(scope="module")
def test_labels():
    from probdr_lite.experiments.vit import load_test_split

    _, y = load_test_split(ViTConfig(**C.recipe("vit", "default")))
    return "".join(str(int(v)) for v in y.tolist())


def _flip(labels, idx):
    out = list(labels)
    for i in idx:
        out[i] = str((int(out[i]) + 1) % 10)
    return "".join(out)


@pytest.fixture(scope="module")
def round_rows(test_labels):
    rng = np.random.default_rng(11)
    effects = {("charlm", "default"): -0.03, ("charlm", "gpt2"): 0.0}
    rows = {"charlm": [], "vit": []}
    for cell in C.cells():
        task, init = cell["task"], cell["init"]
        for s in cell["seeds"]:
            if task == "charlm":
                base = 1.9 + 0.05 * rng.standard_normal()
                rows[task].append(_charlm_row("attention", s, base, init))
                rows[task].append(_charlm_row("diffusion", s, base + effects[(task, init)]
                                              + 0.004 * rng.standard_normal(), init))
            else:
                wrong_a = rng.choice(2000, 100, replace=False)
                wrong_b = rng.choice(2000, 100 + (30 if init == "gpt2" else 0) + int(rng.integers(-5, 6)),
                                     replace=False)
                rows[task].append(_vit_row("attention", s, _flip(test_labels, wrong_a), test_labels, init))
                rows[task].append(_vit_row("diffusion", s, _flip(test_labels, wrong_b), test_labels, init))
    # exploratory rows of the same recipe are never read
    rows["charlm"].append(_charlm_row("attention", 0, 3.0, "default", study=None))
    return {task: validate_results(r) for task, r in rows.items()}


def test_table_against_scipy_paired_t(round_rows):
    table = C.confirmatory_table(round_rows)
    assert [(c["task"], c["init"]) for c in table] == [(c["task"], c["init"]) for c in C.cells()]
    for c in table:
        metric = "test_acc" if c["task"] == "vit" else "final_val_loss"
        rows = [r for r in round_rows[c["task"]] if r.get("study") == "confirmatory"
                and r["config"]["init"] == c["init"]]
        a = np.array([next(r[metric] for r in rows if r["variant"] == "attention" and r["seed"] == s)
                      for s in c["seeds"]])
        b = np.array([next(r[metric] for r in rows if r["variant"] == "diffusion" and r["seed"] == s)
                      for s in c["seeds"]])
        ref = stats.ttest_rel(b, a)
        lo, hi = ref.confidence_interval(confidence_level=1 - 0.05 / 4)
        assert c["n"] == len(C.seeds(c["task"], c["init"]))
        assert c["mean_diff"] == pytest.approx(np.mean(b - a), abs=1e-12)
        assert c["interval"] == pytest.approx((lo, hi), rel=1e-9)
        assert c["pvalue"] == pytest.approx(ref.pvalue, rel=1e-9)
        assert c["adjusted_pvalue"] == pytest.approx(min(1, 4 * ref.pvalue), rel=1e-9)
        assert c["verdict"] == C.verdict_word((lo, hi), C.MARGINS[c["task"]], lower_is_better=(c["task"] == "charlm")) \
            or not c["agree"]


def test_table_reads_the_built_in_effects(round_rows):
    verdicts = {(c["task"], c["init"]): c for c in C.confirmatory_table(round_rows)}
    assert verdicts[("charlm", "default")]["verdict"] == "better"
    assert verdicts[("charlm", "gpt2")]["verdict"] == "equivalent"
    assert verdicts[("vit", "gpt2")]["verdict"] == "worse"  # 30 more wrong images of 2,000: -1.5 pp


def test_test_sampling_error_is_the_paired_binomial_one(round_rows, test_labels):
    c = next(c for c in C.confirmatory_table(round_rows) if c["task"] == "vit" and c["init"] == "default")
    rows = round_rows["vit"]
    var = []
    for s in c["seeds"]:
        pa, pb = (next(r["test_predictions"] for r in rows if r["variant"] == v and r["seed"] == s
                       and r["config"]["init"] == "default") for v in ("attention", "diffusion"))
        ra = np.array([p == t for p, t in zip(pa, test_labels)], dtype=float)
        rb = np.array([p == t for p, t in zip(pb, test_labels)], dtype=float)
        var.append(np.var(rb - ra) / len(test_labels))  # the sample variance of the per-image difference / N
    assert c["test_se"] == pytest.approx(math.sqrt(np.mean(var) / len(c["seeds"])), rel=1e-9)


def test_table_refuses_incomplete_and_undeclared_rows(round_rows):
    short = {task: list(r) for task, r in round_rows.items()}
    short["charlm"] = [r for r in short["charlm"] if not (r["seed"] == 100 and r["variant"] == "diffusion")]
    with pytest.raises(ValueError, match="incomplete"):
        C.confirmatory_table(short)
    partial = C.confirmatory_table(short, partial=True)
    assert sum(not c["complete"] for c in partial) == 2  # both charlm cells lack seed 100's A - I run
    extra = {task: list(r) for task, r in round_rows.items()}
    extra["charlm"].append(_charlm_row("attention", 999, 1.9, "gpt2"))
    with pytest.raises(ValueError, match="undeclared seeds"):
        C.confirmatory_table(extra)


# ------------------------------------------------------------------------------------------------ the test split

def test_test_split_is_held_out_stratified_and_leaves_the_old_split_alone():
    from sklearn.model_selection import train_test_split

    from probdr_lite.data import load_mnist
    from probdr_lite.experiments.vit import _split, load_split

    cfg = ViTConfig(n_train=6000, n_val=2000, n_test=2000)
    tr_x, tr_y, va_x, va_y, te_x, te_y = _split(cfg)
    assert (len(tr_y), len(va_y), len(te_y)) == (6000, 2000, 2000)
    key = {x.numpy().tobytes() for x in te_x}
    assert not key & {x.numpy().tobytes() for x in tr_x}
    assert not key & {x.numpy().tobytes() for x in va_x}
    _, labels = load_mnist(split="test")
    share = np.bincount(labels, minlength=10) / len(labels)
    assert np.allclose(np.bincount(te_y.numpy(), minlength=10) / 2000, share, atol=0.001)
    # without a test split, the split of the exploratory rows
    old = ViTConfig()
    _, y_train, _, y_val = load_split(old)
    idx_train, idx_val = train_test_split(np.arange(10_000), train_size=8000, test_size=2000, stratify=labels,
                                          random_state=0)
    assert np.array_equal(y_train.numpy(), labels[idx_train]) and np.array_equal(y_val.numpy(), labels[idx_val])
    assert "n_test" not in old.to_dict() and cfg.to_dict()["n_test"] == 2000


def test_test_split_refuses_bad_sizes():
    with pytest.raises(ValueError, match="n_train \\+ n_val \\+ n_test"):
        ViTConfig(n_train=7000, n_val=2000, n_test=2000)
    with pytest.raises(ValueError, match="n_test"):
        ViTConfig(standard_split=True, n_test=100)
    from probdr_lite.experiments.vit import load_test_split

    with pytest.raises(ValueError, match="n_test"):
        load_test_split(ViTConfig())


def test_a_run_with_a_test_split_scores_it_once_and_keeps_its_predictions(tmp_path):
    from probdr_lite.experiments.sweep import Grid, run_grid
    from probdr_lite.experiments.vit import load_test_split

    small = dict(n_layer=1, n_head=2, n_embd=16, epochs=1, n_train=256, n_val=128, n_test=200, batch_size=64,
                 warmup_iters=1, n_train_eval=64)
    grid = Grid("t", "vit", (small,), ("attention",), seeds=(100,), file="c.json", study="confirmatory")
    (row,) = run_grid(grid, tmp_path / "c.json", directory=tmp_path, quiet=True)
    validate_results([row])
    assert row["study"] == "confirmatory" and len(row["test_predictions"]) == 200
    _, y = load_test_split(ViTConfig(**small))
    recount = np.mean([int(p) == t for p, t in zip(row["test_predictions"], y.tolist())])
    assert row["test_acc"] == pytest.approx(recount, abs=1e-12)
    bad = dict(row, test_predictions=row["test_predictions"][:-1])
    with pytest.raises(ValueError, match="test_predictions"):
        validate_results([bad])
    with pytest.raises(ValueError, match="test_acc"):
        validate_results([{k: v for k, v in row.items() if k != "test_acc"}])
