"""The recipe grid's statistics (Holm, the per-recipe table, the verdict) and their words and figure.

Synthetic tables with known answers: the paired differences are built as mean + sd * z with a fixed
standardised z, so every t statistic and p-value is known in advance.
"""

import itertools
import json
import math
import shutil

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from scipy import stats  # noqa: E402

from probdr_lite.experiments import CharLMConfig, validate_results  # noqa: E402
from probdr_lite.experiments.files import RESULTS_DIR  # noqa: E402
from probdr_lite.experiments.results import SCHEMA_VERSION, derived_fields, recipe_of  # noqa: E402
from probdr_lite.experiments import families as F  # noqa: E402
from probdr_lite.experiments.stats import holm, nanogpt_gap, recipe_table  # noqa: E402
from probdr_lite.experiments.sweep import get_grid, grid_status  # noqa: E402
from probdr_lite.presentation.figures import recipes as R  # noqa: E402

N_SEEDS = 6
Z = np.array([-1.2, -0.6, 0.1, 0.3, 0.5, 0.9])
Z = (Z - Z.mean()) / Z.std(ddof=1)  # mean 0, sd 1 exactly


def _row(variant, seed, final, init="gpt2", lr=1e-3):
    config = CharLMConfig(max_iters=30, init=init, lr=lr).to_dict()
    curve = [[0, 4.2, 4.2], [30, final + 0.1, final]]
    return {"schema_version": SCHEMA_VERSION, "task": "charlm", "variant": variant, "seed": seed, "config": config,
            "recipe": recipe_of("charlm", config), "final_val_loss": final, "best_val_loss": min(final, 4.2),
            **derived_fields("charlm", curve, config),
            "curve_columns": ["iter", "train_loss", "val_loss"], "curve": curve, "throughput": 1.0,
            "throughput_unit": "tokens/s", "train_seconds": 1.0, "wall_seconds": 1.0, "torch_version": "x",
            "device": "cpu", "git_commit": "abc", "command": "test", "timestamp": "2026-01-01T00:00:00+00:00"}


def make_rows(effects, noise=0.004):
    """``effects[(init, arm)]`` = mean paired difference (arm - attention) of the final validation loss."""
    rows = []
    for init in dict.fromkeys(k[0] for k in effects):
        base = 1.9 + 0.01 * np.arange(N_SEEDS)
        for s in range(N_SEEDS):
            rows.append(_row("attention", s, float(base[s]), init))
        for (i, arm), mean in effects.items():
            if i != init:
                continue
            for s in range(N_SEEDS):
                rows.append(_row(arm, s, float(base[s] + mean + noise * Z[s]), init))
    return validate_results(rows)


def _t_p(mean, sd, n=N_SEEDS):
    return 2 * stats.t.sf(abs(mean) / (sd / math.sqrt(n)), n - 1)


# ------------------------------------------------------------------------------------------------------- Holm

def _closed_testing(p):
    """Holm's adjusted p by its definition: closed testing with Bonferroni tests of every intersection."""
    m = len(p)
    out = []
    for i in range(m):
        worst = 0.0
        for size in range(1, m + 1):
            for subset in itertools.combinations(range(m), size):
                if i in subset:
                    worst = max(worst, min(1.0, size * min(p[j] for j in subset)))
        out.append(worst)
    return np.array(out)


def test_holm_equals_closed_testing_with_bonferroni():
    rng = np.random.default_rng(3)
    for _ in range(20):
        p = rng.uniform(0, 0.2, size=rng.integers(1, 7))
        np.testing.assert_allclose(holm(p), _closed_testing(p), rtol=1e-12)
    # NaN is not a test: it stays NaN and does not enlarge the family
    np.testing.assert_allclose(holm([0.01, np.nan, 0.04]), [0.02, np.nan, 0.04])
    with pytest.raises(ValueError, match="pvalues"):
        holm([0.5, 1.5])


# ------------------------------------------------------------------------------------------------ recipe table

def test_recipe_table_numbers_match_scipy():
    rows = make_rows({("gpt2", "diffusion"): 0.03, ("gpt2", "gated"): -0.002,
                      ("default", "diffusion"): 0.01, ("default", "gated"): 0.0005})
    table = recipe_table(rows)
    assert table.n_tests == 4 and table.quantity == "final_val_loss"
    assert [e["arm"] for e in table.entries] == ["diffusion", "gated"] * 2
    d = np.array([r["final_val_loss"] for r in rows if r["variant"] == "diffusion" and r["recipe"]["init"] == "gpt2"])
    a = np.array([r["final_val_loss"] for r in rows if r["variant"] == "attention" and r["recipe"]["init"] == "gpt2"])
    e = table.entries[0]
    assert e["mean_diff"] == pytest.approx(np.mean(d - a))
    assert e["t_pvalue"] == pytest.approx(stats.ttest_rel(d, a).pvalue)
    lo, hi = stats.t.interval(0.95, N_SEEDS - 1, loc=np.mean(d - a), scale=stats.sem(d - a))
    assert (e["ci_low"], e["ci_high"]) == (pytest.approx(lo), pytest.approx(hi))
    # a description only: no adjusted p and no verdict word (those come from the declared families)
    assert not {"holm_pvalue", "outcome"} & set(e)
    assert table.baselines[0]["mean"] == pytest.approx(a.mean())


# ----------------------------------------------------------------------------------------------------- verdict

# ------------------------------------------------------------------------------------------ table and figure

#: what the chapter passes, written here apart (the chapter writes its own): each table's header is its columns' keys
GRIDS = {"header": list(R.GRIDS_COLUMNS)}
READING_WORDS = {"stop": "STOP", "checkpoint": "BEST", "final": "END"}

def test_pending_cells_are_named_with_the_command(tmp_path):
    shutil.copy(RESULTS_DIR / "vit_mnist.json", tmp_path / "vit_mnist.json")
    status = grid_status(get_grid("vit-ofat"), tmp_path)
    assert status[0]["recipe"] == {"init": "gpt2", "lr": 3e-3, "schedule": "cosine", "epochs": 10, "patience": 0,
                                   "decay_epochs": 0}
    assert status[0]["seeds_done"]["attention"] == [0, 1, 2, 3, 4] and status[0]["seeds_done"]["symmetric"] == []
    assert [s["n_done"] for s in status[1:]] == [0, 0, 0, 0]
    row, = R.grids_table(tmp_path, grids={"vit": "vit-ofat"}, **GRIDS).body
    assert row[:3] == ["vision transformer", "vit-ofat", "0 of 5"]
    assert row[3] == "gpt2 init, lr 3e-3, warm-up + cosine, 10 epochs: 20 of 25 runs; $A_{\\rm sym} - I$ (seeds: 0)"
    assert len(row[4].split("; ")) == 4  # the four cells not run yet
    assert row[5] == "python -m probdr_lite.experiments grid vit-ofat --threads 1"


# ---------------------------------------------------------------------------------------------------- nanoGPT

def test_nanogpt_gap_against_monte_carlo_and_its_wording():
    g = nanogpt_gap(1.906, 0.009, 5, 0.1)
    # the sd of a 20-batch mean, and of one nanoGPT-style number (seed spread without our own 200-batch noise)
    assert g["their_batch_sd"] == pytest.approx(0.1 / math.sqrt(20))
    seed_var = 0.009 ** 2 - 0.1 ** 2 / 200
    rng = np.random.default_rng(0)
    one_run = rng.normal(0, math.sqrt(seed_var), 200_000) + rng.normal(0, 0.1, (200_000, 20)).mean(axis=1)
    assert g["sd_one_run"] == pytest.approx(one_run.std(), rel=0.01)
    assert g["z"] == pytest.approx((0.026 - 0.005) / math.sqrt(g["sd_one_run"] ** 2 + 0.009 ** 2 / 5))
    assert g["within"]
    tight = nanogpt_gap(1.906, 0.009, 5, 0.01)  # if single batches barely varied, 0.026 would be a real gap
    assert not tight["within"]
    with pytest.raises(ValueError, match="batch_sd"):
        nanogpt_gap(1.9, 0.01, 5, -1.0)


def test_recipe_label_words():
    assert R.recipe_label({"init": "default", "lr": 1e-3, "schedule": "onecycle", "epochs": 60, "patience": 5}) == \
        "default init, lr 1e-3, one-cycle, plateau (≤ 60 epochs, patience 5, stop)"
    assert R.recipe_label({"init": "gpt2", "lr": 3e-3, "schedule": "cosine", "epochs": 60, "patience": 5,
                           "decay_epochs": 5}) == \
        "gpt2 init, lr 3e-3, warm-up + cosine, plateau (≤ 60 epochs, patience 5, then 5 epochs of decay)"
    assert json.dumps(R.recipe_label({"init": "gpt2", "lr": 1e-3, "max_iters": 5000})) == \
        json.dumps("gpt2 init, lr 1e-3, 5,000 iterations")
    with pytest.raises(ValueError, match="recipe"):
        R.recipe_label({"lr": 1})


def test_grids_table_and_nanogpt_paragraph_follow_the_files(tmp_path):
    from probdr_lite.experiments.files import load_eval_spread, task_rows

    shutil.copy(RESULTS_DIR / "charlm_cpu.json", tmp_path / "charlm_cpu.json")
    first, = (r for r in R.grids_table(tmp_path, grids={"charlm": "charlm"}, **GRIDS).body)
    assert first[2] == "1 of 5" and first[-1] == "python -m probdr_lite.experiments grid charlm --threads 1"
    rows = task_rows("charlm", tmp_path)
    from probdr_lite.experiments.files import rows_provenance

    header = list(R.PROVENANCE_COLUMNS)
    shown = R.provenance_table([rows_provenance(rows)], header)
    assert shown.body[0][:3] == ["character model", "15", "1"] and shown.header == header
    with pytest.raises(ValueError, match=r"infos\[0\] must be the dict returned by .*rows_provenance; it lacks"):
        R.provenance_table([{"task": "charlm"}], header)
    with pytest.raises(ValueError, match="header must have 10 entries, one per column"):
        R.provenance_table([rows_provenance(rows)], header[:3])
    base = [r["final_val_loss"] for r in rows if r["variant"] == "attention"]
    gap = np.mean(base) - 1.88
    # without the measured batch spread the gap is stated but not judged
    assert load_eval_spread(tmp_path) is None
    pending = R.nanogpt_facts(rows, None)
    assert pending["gap"] == pytest.approx(gap) and not pending["judged"] and "within" not in pending
    spread = {"batch_sd": 0.1, "n_batches": 1000, "seed": 0, "batch_losses": [2.0] * 1000}
    (tmp_path / "charlm_eval_spread.json").write_text(json.dumps(spread))
    judged = R.nanogpt_facts(rows, load_eval_spread(tmp_path))
    expected = nanogpt_gap(float(np.mean(base)), float(np.std(base, ddof=1)), 5, 0.1)
    assert judged["judged"] and judged["z"] == pytest.approx(expected["z"]) and judged["n_batches"] == 1000
    assert judged["within"] == expected["within"] and isinstance(judged["within"], bool)
    (tmp_path / "charlm_eval_spread.json").write_text("{}")
    with pytest.raises(ValueError, match="batch_sd"):
        load_eval_spread(tmp_path)


def test_plateau_cell_facts_average_the_seeds_that_decayed():
    rows = [r for r in _vit_cell(0.0, 0.0) if r["variant"] == "attention"]
    f = R.plateau_cell_facts(rows)
    acc = {k: [100 * r["curve"][r[k]][3] for r in rows] for k in ("plateau_index", "checkpoint_index")}
    assert (f["n_seeds"], f["n_decayed"], f["any_decayed"]) == (4, 4, True)
    assert f["stop"] == pytest.approx(np.mean(acc["plateau_index"]))
    assert f["ckpt"] == pytest.approx(np.mean(acc["checkpoint_index"]))
    assert f["end"] == pytest.approx(np.mean([100 * r["curve"][-1][3] for r in rows]))
    # a rule that fired at the last epoch left no decay: that seed is not in the means
    last = {**rows[0], "plateau_index": len(rows[0]["curve"]) - 1}
    g = R.plateau_cell_facts([last] + rows[1:])
    assert (g["n_seeds"], g["n_decayed"]) == (4, 3)
    assert g["end"] == pytest.approx(np.mean([100 * r["curve"][-1][3] for r in rows[1:]]))
    never = [{**r, "plateau_index": None} for r in rows]
    h = R.plateau_cell_facts(never)
    assert not h["any_decayed"] and h["n_decayed"] == 0 and math.isnan(h["stop"])
    # the table pastes them into its summary row, and writes "—" where no seed decayed
    header = list(R.PLATEAU_COLUMNS)
    table = R.plateau_table({"cell": rows}, header=header, caption="c")
    summary = table.body[-1][3]
    assert summary.startswith("mean over the 4 that decayed: ") and table.caption == "c"
    assert [f"{f[k]:.2f} %" in summary for k in ("stop", "ckpt", "end")] == [True] * 3
    assert table.header == header
    assert R.plateau_table({"cell": never}, header=header).body[-1][3] == "—"


def test_plateau_figure_and_last_epoch_sentence():
    config = {"patience": 2, "epochs": 9}
    curve = [[0, 2.3, 2.3, 0.1], [1, 1.0, 0.9, 0.8], [2, 0.5, 0.6, 0.9], [3, 0.4, 0.65, 0.91], [4, 0.3, 0.7, 0.9]]
    row = {"task": "vit", "variant": "attention", "seed": 0, "config": config, "curve": curve, "epochs_run": 4}
    fig = R.plateau_figure(row, title="one seed")
    assert fig.axes[0].get_lines()[1].get_xdata()[0] == 2  # the lowest validation loss, epoch 2
    # the legend names each seed's curve and its best epoch
    assert [ln.get_label() for ln in fig.axes[0].get_lines()] == ["seed 0: stopped after epoch 4",
                                                                  "seed 0: lowest validation loss (epoch 2)"]
    assert fig._suptitle.get_text() == "one seed"
    # without a learning-rate record the figure has no learning-rate panel, and its facts say so
    assert len(fig.axes) == 2 and R.plateau_facts(row) == {
        "with_lr": False, "n_seeds": 1, "one_seed": True, "seed": 0, "arm": R.ARM_STYLE["attention"]["label"],
        "init": None, "epochs": 9, "patience": 2, "decay": 0, "decays": False}
    assert R.plateau_facts({**row, "config": {**config, "decay_epochs": 1}})["decays"]  # either side of 0 epochs
    assert R.plateau_facts([{**row, "mechanism": {}}])["with_lr"]
    assert not R.plateau_facts([{**row, "mechanism": {}}, {**row, "seed": 1}])["with_lr"]
    np.testing.assert_allclose(fig.axes[1].get_lines()[0].get_ydata(), [c[3] for c in curve])
    plt.close(fig)
    with pytest.raises(ValueError, match="rows must be plateau-rule ViT rows"):
        R.plateau_figure({**row, "config": {"patience": 0, "epochs": 9}})
    # several seeds: one curve and one best-epoch line each; the sentence states each seed and the mean
    other = {**row, "seed": 1, "curve": curve[:3] + [[3, 0.3, 0.5, 0.95]], "epochs_run": 3, "final_val_acc": 0.95}
    row = {**row, "final_val_acc": 0.9}
    fig = R.plateau_figure([other, row])
    assert len(fig.axes[1].get_lines()) == 4 and fig._suptitle is None  # no title of the builder's own
    assert R.plateau_facts([other, row])["n_seeds"] == 2 and not R.plateau_facts([other, row])["one_seed"]
    plt.close(fig)
    body = R.plateau_table({"cell": [other, row]}, header=list(R.PLATEAU_COLUMNS)).body
    # one step per epoch, still inside the 50-step warm-up: the last step's rate is (step + 1) / 51 of the peak
    assert body[0] == ["cell", "0", "0.600 (2)", "—", "4", f"{100 * 4 / 51:.0f} %", "90.00 %"]  # sorted by seed
    assert body[1][:3] == ["cell", "1", "0.500 (3)"] and body[1][5] == f"{100 * 3 / 51:.0f} %"
    assert body[2][1] == "2 seeds" and body[2][-1] == f"92.50 % (sd {np.std([90, 95], ddof=1):.2f})"
    with pytest.raises(ValueError, match="one arm"):
        R.plateau_table({"cell": [row, {**other, "variant": "diffusion"}]}, header=list(R.PLATEAU_COLUMNS))


def test_compute_facts_add_up_the_rows():
    rows = make_rows({("gpt2", "diffusion"): 0.04})
    f = R.compute_facts({"charlm": rows, "vit": rows[:2]})
    assert f["n_runs"] == len(rows) + 2
    assert f["train_hours"] == pytest.approx(sum(r["train_seconds"] for r in rows + rows[:2]) / 3600)
    assert f["wall_hours"] == pytest.approx(sum(r["wall_seconds"] for r in rows + rows[:2]) / 3600)


# ------------------------------------------------------------------------------- readings, baseline, scale

def _vit_row(variant, seed, acc_stop, acc_end, init="default"):
    """A plateau-rule ViT row whose rule fires at epoch 4 (patience 2) and then decays for 2 epochs."""
    from probdr_lite.experiments import ViTConfig

    config = ViTConfig(init=init, epochs=10, patience=2, decay_epochs=2).to_dict()
    losses = [2.3, 1.0, 0.5, 0.6, 0.7, 0.45, 0.4]
    accs = [0.1, 0.8, 0.9, 0.89, acc_stop, acc_end - 0.001, acc_end]
    curve = [[i * 10, l + 0.05, l, a] for i, (l, a) in enumerate(zip(losses, accs))]
    return {"schema_version": SCHEMA_VERSION, "task": "vit", "variant": variant, "seed": seed, "config": config,
            "recipe": recipe_of("vit", config), "final_val_loss": 0.4, "best_val_loss": 0.4,
            "final_val_acc": acc_end, "best_val_acc": max(accs), "epochs_run": 6,
            **derived_fields("vit", curve, config), "n_params": 1234,
            "curve_columns": ["iter", "train_loss", "val_loss", "val_acc"], "curve": curve, "throughput": 1.0,
            "throughput_unit": "images/s", "train_seconds": 1.0, "wall_seconds": 1.0, "torch_version": "x",
            "device": "cpu", "git_commit": "abc", "command": "test", "timestamp": "2026-01-01T00:00:00+00:00"}


def _vit_cell(stop_shift, end_shift, n=4, init="default", arm="diffusion"):
    rows = []
    for s in range(n):
        base_stop, base_end = 0.93 + 0.002 * s, 0.96 + 0.001 * s
        rows.append(_vit_row("attention", s, base_stop, base_end, init))
        rows.append(_vit_row(arm, s, base_stop + stop_shift + 0.001 * (s % 2), base_end + end_shift
                             + 0.001 * (s % 2), init))
    return validate_results(rows)


def test_the_three_readings_of_a_plateau_run():
    from probdr_lite.experiments.stats import row_quantity

    rows = _vit_cell(-0.01, +0.005)
    r = rows[1]
    assert r["plateau_index"] == 4 and r["checkpoint_index"] == 6
    assert row_quantity(r, "stop_val_acc") == r["curve"][4][3] and row_quantity(r, "final_val_acc") == r["curve"][-1][3]
    no_rule = {**r, "plateau_val_acc": None}
    assert row_quantity(no_rule, "stop_val_acc") == r["final_val_acc"]  # a rule that never fired: the end
    tables = {k: recipe_table(rows, f"{k}_val_acc") for k in ("stop", "checkpoint", "final")}
    d_stop = [b["curve"][4][3] - a["curve"][4][3] for a, b in zip(rows[::2], rows[1::2])]
    assert tables["stop"].entries[0]["mean_diff"] == pytest.approx(np.mean(d_stop))
    assert tables["final"].entries[0]["mean_diff"] == pytest.approx(0.005 + 0.0005)
    shown = R.readings_table(tables, READING_WORDS)
    assert shown.header[2:4] == ["attention, STOP", "arm − attention, STOP [95 % interval, unadjusted]"]
    assert shown.body[0][2] == f"{100 * np.mean([a['curve'][4][3] for a in rows[::2]]):.2f} %"
    assert shown.body[0][3].startswith(f"{100 * np.mean(d_stop):+.2f} pp [")
    f, = R.readings_facts(tables, READING_WORDS)
    assert f["flips"] == ["$A - I$"] and f["any_flips"] and f["n_readings"] == 3
    same = {k: recipe_table(_vit_cell(0.004, 0.005), f"{k}_val_acc") for k in ("stop", "final")}
    g, = R.readings_facts(same, READING_WORDS)
    assert g["flips"] == [] and not g["any_flips"] and g["n_readings"] == 2
    assert all(bool(x["excl"]) == x["any_excl"] for x in (f, g))
    with pytest.raises(ValueError, match="tables' keys must be one of 'stop', 'checkpoint', 'final'; got 'start'"):
        R.readings_table({"start": tables["final"]}, READING_WORDS)
    with pytest.raises(ValueError, match=r"words must hold \['final'\]"):
        R.readings_table(tables, {"stop": "STOP", "checkpoint": "BEST"})


def test_scale_facts_and_table_read_the_rows():
    lm = make_rows({("gpt2", "diffusion"): 0.01})
    c = lm[0]["config"]
    f = R.scale_facts(lm)
    assert (f["n_layer"], f["n_head"], f["n_embd"], f["block_size"]) == (c["n_layer"], c["n_head"], c["n_embd"],
                                                                         c["block_size"])
    assert f["budgets"] == [{"iters": 30, "chars": pytest.approx(30 * c["batch_size"] * c["block_size"] / 1e6)}]
    assert (f["n_cells"], f["seeds"], f["train_fraction"]) == (1, [N_SEEDS], c["train_fraction"])
    vit = _vit_cell(0.0, 0.0)
    g = R.scale_facts(vit)
    assert (g["n_patches"], g["patch_size"], g["budgets"], g["any_plateau"]) == (16, 7, [], True)
    assert (g["max_epochs"], g["fewest"], g["most"], g["params"], g["gated_more"]) == (10, 6, 6, [1234], False)
    # a gated arm with one gate per head more: the parameters' note, with the difference
    gated = vit + [{**vit[1], "variant": "gated", "n_params": 1234 + 16}]
    assert (R.scale_facts(gated)["n_more"], R.scale_facts(gated)["gated_more"]) == (16, True)
    table = R.scale_table({"charlm": lm, "vit": gated}, caption="c")
    char, vis = table.body
    assert char == ["character model", f"{c['n_layer']} × {c['n_head']}", str(c["n_embd"]),
                    f"a context of {c['block_size']} characters", "n/a",
                    f"Tiny Shakespeare: the first {100 * c['train_fraction']:.0f} % of its characters for training, "
                    "the rest for validation", str(c["batch_size"]),
                    f"30 iterations ({f['budgets'][0]['chars']:.2f} M characters)", f"1 ({N_SEEDS})"]
    assert vis[4] == "1,234 (16 more in the gated arms, one gate per head)" and table.caption == "c"
    assert vis[7] == "the plateau rule (at most 10 epochs; the runs took 6 to 6)"
    with pytest.raises(ValueError, match="rows"):
        R.scale_table([])


def test_grids_table_takes_several_grids_per_task(tmp_path):
    shutil.copy(RESULTS_DIR / "vit_mnist.json", tmp_path / "vit_mnist.json")
    body = R.grids_table(tmp_path, grids={"vit": ["vit-ofat", "vit-plateau"]}, **GRIDS).body
    assert [r[1:3] for r in body] == [["vit-ofat", "0 of 5"], ["vit-plateau", "0 of 2"]]
    assert body[0][3].endswith("20 of 25 runs; $A_{\\rm sym} - I$ (seeds: 0)")
    assert body[1][5] == "python -m probdr_lite.experiments grid vit-plateau --threads 1"

# --------------------------------------------------------------------------------------- the declared families

def _family_rows():
    """Both initialisations, early: A - I clearly worse under gpt2, within noise under default; a gated arm."""
    return make_rows({("gpt2", "diffusion"): 0.05, ("default", "diffusion"): -0.001, ("gpt2", "gated"): 0.0})


def test_family_results_table_prints_both_intervals_and_the_verdict_read_from_the_simultaneous_one():
    families = {"primary": {"arms": ("diffusion",), "baseline": "attention", "cells": "all", "correction": "holm"}}
    entries = F.family_table("primary", {"charlm": _family_rows()}, families=families, margins={"charlm": 0.02})
    table = R.family_results_table(entries, caption="c")
    assert table.header == list(R.FAMILY_HEADER.values()) and table.caption == "c"
    assert len(table.body) == len(entries) == 2
    for e, body in zip(entries, table.body):
        row = dict(zip(R.FAMILY_HEADER, body))
        assert row["difference"] == f"{e['mean_diff']:+.4f}"
        assert row["ci"] == f"[{e['ci'][0]:+.4f}, {e['ci'][1]:+.4f}]".replace("+0.0000", "0.0000")
        assert row["sim_ci"] == R.interval_text(e["sim_ci"], "final_val_loss") and row["verdict"] == e["verdict"]
        assert row["signs"] == f"{e['n_better']} / {e['n_worse']} / {e['n_tied']}" and row["seeds"] == str(N_SEEDS)
        assert row["cell"] == "character model, " + R.recipe_label(e["recipe"])
        # the word never contradicts the interval printed beside it
        low, high = e["sim_ci"]
        assert (e["verdict"] == "worse") == (low >= 0 and high > 0)
    with pytest.raises(ValueError, match="entries"):
        R.family_results_table([{"task": "charlm"}])


def test_cell_labels_raise_on_a_missing_label():
    e = {"task": "charlm", "budget": "early", "init": "gpt2", "recipe": {}}
    assert R.cell_label(e) == "character model, early, GPT-2"
    with pytest.raises(ValueError, match="no budget label for 'late'"):
        R.cell_label({**e, "budget": "late"})
    with pytest.raises(ValueError, match="no schedule label for 'linear'"):
        R.recipe_label({"init": "gpt2", "lr": 1e-3, "schedule": "linear"})


def test_interaction_table_shows_the_initialisation_effect():
    rows = make_rows({("gpt2", "diffusion"): 0.05, ("default", "diffusion"): -0.02})
    for r in rows:  # nanoGPT's 2,000 iterations, the recipe LM-2k
        r["config"]["max_iters"] = r["recipe"]["max_iters"] = r["curve"][-1][0] = 2000
    effect = F.initialisation_effect(rows, cells="both", budget="early", cov_type="cluster")
    body, = R.interaction_table([effect]).body
    row = dict(zip(R.INTERACTION_HEADER, body))
    assert row["cells"] == "LM-2k" and row["pairs"] == f"{2 * N_SEEDS} ({N_SEEDS})"
    assert row["estimate"].startswith(f"{effect['estimate']:+.4f} [")
    assert row["signs_gpt2"] == f"0 / {N_SEEDS} / 0" and row["signs_default"] == f"{N_SEEDS} / 0 / 0"
    with pytest.raises(ValueError, match="effects"):
        R.interaction_table({"charlm": effect})


def test_half_open_intervals_print_an_end_at_zero_as_open():
    assert R.interval_text((0.0, 0.0706), "final_val_loss", half_open=True) == "(0, +0.0706]"
    assert R.interval_text((-0.1064, 0.0), "final_val_acc", half_open=True) == "[-10.64 pp, 0)"
    assert R.interval_text((-0.01, 0.02), "final_val_loss", half_open=True) == "[-0.0100, +0.0200]"
    assert R.interval_text((0.0, 0.0706), "final_val_loss") == "[0.0000, +0.0706]"


def test_recipe_names_are_defined_once_and_refuse_unknown_recipes():
    assert R.recipe_name("charlm", {"init": "gpt2", "lr": 1e-3, "max_iters": 5000}) == "LM-5k, GPT-2"
    plateau = {"init": "default", "lr": 3e-3, "schedule": "cosine", "epochs": 60, "patience": 5, "decay_epochs": 5}
    assert R.recipe_name("vit", plateau, init=False) == "ViT-plateau"
    names = [n for entries in R.RECIPE_NAMES.values() for _, n in entries]
    assert len(set(names)) == len(names)
    with pytest.raises(ValueError, match="no short name"):
        R.recipe_name("charlm", {"init": "gpt2", "lr": 1e-2, "max_iters": 2000})
    table = R.recipe_names_table(["m", "n", "r"], {n: f"words {n}" for n in names})
    assert [row[1] for row in table.body] == names
    with pytest.raises(ValueError, match="recipe description"):
        R.recipe_names_table(["m", "n", "r"], {})


def test_set_text_writes_fieller_sets_in_interval_notation():
    inf = math.inf
    assert R.set_text([(0.45, 1.24)]) == "[45 %, 124 %]"
    assert R.set_text([(-inf, -1.99), (1.24, inf)]) == "(-∞, -199 %] ∪ [124 %, ∞)"
    assert R.set_text([(-inf, inf)]) == "(-∞, ∞)"
    assert R.set_text([(0.5, inf)]) == "[50 %, ∞)"
