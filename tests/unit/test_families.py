"""The declared families of chapter 7's tests and their statistics, each against an independent answer.

Independent answers: statsmodels (Holm's step-down, TOST, OLS through its formula API), scipy's t-tests, closed
forms (the pooled two-sample t, Bonferroni's t quantile, the delta method), the definition of Fieller's set (the
paired t-test of x - R y, point by point) and small seeded Monte Carlo runs of coverage with loose tolerances.
"""

import copy
import json
import math
import warnings

import numpy as np
import pytest
from scipy import stats

with warnings.catch_warnings():  # statsmodels 0.14.6 imports pandas helpers that pandas 3 deprecates
    warnings.simplefilter("ignore")
    from statsmodels.formula import api as smf
    from statsmodels.stats.multitest import multipletests
    from statsmodels.stats.weightstats import ttost_paired

from probdr_lite.experiments import families as F
from probdr_lite.experiments import validate_results
from probdr_lite.experiments.configs import CharLMConfig
from probdr_lite.experiments.results import SCHEMA_VERSION, derived_fields, recipe_of
from probdr_lite.experiments.stats import holm

# ------------------------------------------------------------------------------------------------ synthetic rows


def _row(variant, seed, final, init="gpt2", lr=1e-3, max_iters=2000):
    config = CharLMConfig(max_iters=max_iters, init=init, lr=lr).to_dict()
    curve = [[0, 4.2, 4.2], [max_iters, final + 0.1, final]]
    return {"schema_version": SCHEMA_VERSION, "task": "charlm", "variant": variant, "seed": seed, "config": config,
            "recipe": recipe_of("charlm", config), "final_val_loss": final, "best_val_loss": min(final, 4.2),
            **derived_fields("charlm", curve, config),
            "curve_columns": ["iter", "train_loss", "val_loss"], "curve": curve, "throughput": 1.0,
            "throughput_unit": "tokens/s", "train_seconds": 1.0, "wall_seconds": 1.0, "torch_version": "x",
            "device": "cpu", "git_commit": "abc", "command": "test", "timestamp": "2026-01-01T00:00:00+00:00"}


#: (init, lr, max_iters) -> {arm: mean difference from attention}; the last recipe is outside the primary family
CELLS = {("gpt2", 1e-3, 2000): {"diffusion": 0.06, "gated": 0.01, "gated-from-1": 0.0},
         ("default", 1e-3, 2000): {"diffusion": -0.03, "gated": -0.005, "gated-from-1": 0.002},
         ("gpt2", 1e-3, 5000): {"diffusion": 0.03, "gated": 0.0},
         ("default", 1e-3, 5000): {"diffusion": -0.01, "gated": 0.01},
         ("gpt2", 3e-3, 2000): {"diffusion": 0.02, "gated": 0.02}}


def _rows(cells=CELLS, n_seeds=5, noise=0.01, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for (init, lr, iters), arms in cells.items():
        for s in range(n_seeds):
            base = 1.9 + 0.02 * rng.standard_normal()
            rows.append(_row("attention", s, base, init, lr, iters))
            for arm, mean in arms.items():
                rows.append(_row(arm, s, base + mean + noise * rng.standard_normal(), init, lr, iters))
    return validate_results(rows)


@pytest.fixture(scope="module")
def rows():
    return _rows()


# ---------------------------------------------------------------------------------------------------- Holm


def test_holm_matches_statsmodels():
    rng = np.random.default_rng(1)
    for m in (1, 2, 5, 12):  # statsmodels' multipletests takes a good part of a second a call here
        for _ in range(4):
            p = rng.uniform(0, 0.2, m) ** rng.uniform(0.5, 3)
            p[rng.random(m) < 0.2] = p[0]  # ties
            expected = multipletests(p, method="holm")[1]
            np.testing.assert_allclose(holm(p), expected, rtol=1e-12, atol=0)


def test_holm_leaves_nan_out_of_the_family_as_statsmodels_would_without_them():
    p = np.array([0.01, np.nan, 0.04, 0.03, np.nan])
    out = holm(p)
    assert np.isnan(out[[1, 4]]).all()
    np.testing.assert_allclose(out[[0, 2, 3]], multipletests(p[[0, 2, 3]], method="holm")[1], rtol=1e-12)


# -------------------------------------------------------------------------------------------- one paired cell


def test_t_summary_against_scipy():
    d = np.random.default_rng(2).normal(0.3, 1.0, 7)
    s = F.t_summary(d, alpha=0.1)
    r = stats.ttest_1samp(d, 0.0)
    assert math.isclose(s["pvalue"], r.pvalue, rel_tol=1e-10)
    assert math.isclose(s["p_greater"], stats.ttest_1samp(d, 0.0, alternative="greater").pvalue, rel_tol=1e-10)
    assert math.isclose(s["p_less"], stats.ttest_1samp(d, 0.0, alternative="less").pvalue, rel_tol=1e-10)
    np.testing.assert_allclose(s["ci"], r.confidence_interval(0.9), rtol=1e-10)


# ------------------------------------------------------------------------------------- simultaneous intervals


def _family(rng, m=5):
    n = rng.integers(3, 9, m)
    data = [rng.normal(rng.normal(0, 1.5), 1.0, k) for k in n]
    s = [F.t_summary(d) for d in data]
    return [x["mean"] for x in s], [x["se"] for x in s], [x["df"] for x in s], s


def test_bonferroni_intervals_are_t_intervals_at_alpha_over_m():
    rng = np.random.default_rng(3)
    means, ses, dfs, s = _family(rng)
    out = F.simultaneous_intervals(means, ses, dfs, 0.05, "bonferroni")
    m = len(means)
    for i in range(m):
        q = stats.t.ppf(1 - 0.05 / (2 * m), dfs[i])
        assert math.isclose(out["low"][i], means[i] - q * ses[i], rel_tol=1e-10, abs_tol=1e-12)
        assert math.isclose(out["high"][i], means[i] + q * ses[i], rel_tol=1e-10, abs_tol=1e-12)
    np.testing.assert_allclose(out["adjusted"], multipletests([x["pvalue"] for x in s], method="bonferroni")[1],
                               rtol=1e-10)


def test_holm_intervals_decide_as_statsmodels_holm_over_the_one_sided_claims():
    rng = np.random.default_rng(4)
    for _ in range(12):
        means, ses, dfs, s = _family(rng)
        m = len(means)
        one_sided = np.array([x["p_greater"] for x in s] + [x["p_less"] for x in s])
        reject = multipletests(one_sided, alpha=0.05, method="holm")[0]
        out = F.simultaneous_intervals(means, ses, dfs, 0.05, "holm")
        for i in range(m):
            up, down = reject[i], reject[m + i]
            assert out["sign"][i] == (1 if up else -1 if down else 0)
            assert (out["low"][i] == 0) == up and (out["high"][i] == 0) == down
            if not up:
                assert out["low"][i] < 0  # an unrejected side never reaches zero
            if not down:
                assert out["high"][i] > 0
            assert out["low"][i] <= means[i] <= out["high"][i]
        if not reject.any():  # nothing rejected: the Bonferroni intervals
            bonf = F.simultaneous_intervals(means, ses, dfs, 0.05, "bonferroni")
            np.testing.assert_allclose(out["low"], bonf["low"], rtol=1e-10)


@pytest.mark.parametrize("method", F.METHODS)
def test_simultaneous_intervals_cover_every_mean_at_least_95_percent_of_the_time(method):
    """Monte Carlo (seeded): 4 cells of 5 seeds, two with no effect, two with effects of a few standard errors."""
    rng = np.random.default_rng(5)
    truth = np.array([0.0, 0.0, 1.0, -2.0])
    n, reps = 5, 2000
    covered = 0
    for _ in range(reps):
        data = truth[:, None] + rng.standard_normal((4, n))
        means, ses = data.mean(1), data.std(1, ddof=1) / math.sqrt(n)
        out = F.simultaneous_intervals(means, ses, [n - 1] * 4, 0.05, method)
        covered += bool(np.all((out["low"] <= truth) & (truth <= out["high"])))
    assert covered / reps >= 0.95 - 0.015  # about 3 Monte Carlo standard errors below the level


def test_simultaneous_intervals_refuse_bad_input():
    with pytest.raises(ValueError, match="alpha"):
        F.simultaneous_intervals([1.0], [1.0], [2], alpha=0.6)
    with pytest.raises(ValueError, match="method"):
        F.simultaneous_intervals([1.0], [1.0], [2], method="sidak")
    with pytest.raises(ValueError, match="same length"):
        F.simultaneous_intervals([1.0, 2.0], [1.0], [2])
    with pytest.raises(ValueError, match="ses"):
        F.simultaneous_intervals([1.0], [-1.0], [2])


# ------------------------------------------------------------------------------------------------- verdicts


def test_verdict_follows_the_side_of_zero_the_interval_lies_on():
    assert F.verdict_category(0.2, (0.1, 0.3)) == "better"
    assert F.verdict_category(0.2, (0.1, 0.3), lower_is_better=True) == "worse"
    assert F.verdict_category(0.2, (0.0, 0.3)) == "better"  # Holm's bound of a rejected side
    assert F.verdict_category(-0.2, (-0.3, 0.0), lower_is_better=True) == "better"
    assert F.verdict_category(0.01, (-0.02, 0.04)) == "cannot tell"
    assert F.verdict_category(0.01, (-0.02, 0.04), 0.05) == "equivalent"
    assert F.verdict_category(0.01, (-0.02, 0.06), 0.05) == "cannot tell"
    assert F.verdict_category(0.01, (0.005, 0.02), 0.05) == "better"  # a known sign before equivalence


def test_verdict_never_contradicts_its_interval():
    rng = np.random.default_rng(6)
    for _ in range(500):
        low, high = np.sort(rng.normal(0, 1, 2))
        d = rng.uniform(low, high)
        lower = bool(rng.random() < 0.5)
        margin = float(rng.uniform(0.1, 2))
        v = F.verdict_category(d, (low, high), margin, lower_is_better=lower)
        assert v in F.VERDICTS
        if v in ("better", "worse"):
            assert low >= 0 or high <= 0
            assert (v == "better") == ((low >= 0) != lower)
        else:
            assert low < 0 < high
        assert (v == "equivalent") == (low < 0 < high and -margin <= low and high <= margin)


def test_verdict_refuses_bad_input():
    with pytest.raises(ValueError, match="interval"):
        F.verdict_category(0.5, (0.6, 0.7))
    with pytest.raises(ValueError, match="interval"):
        F.verdict_category(0.5, "wide")
    with pytest.raises(ValueError, match="margin"):
        F.verdict_category(0.5, (0.4, 0.6), margin=0.0)
    with pytest.raises(ValueError, match="lower_is_better"):
        F.verdict_category(0.5, (0.4, 0.6), lower_is_better="yes")


# ----------------------------------------------------------------------------------------------------- TOST


def test_tost_matches_statsmodels_ttost_paired():
    rng = np.random.default_rng(7)
    for _ in range(30):
        n = int(rng.integers(3, 12))
        x0 = rng.normal(2.0, 0.1, n)
        x1 = x0 + rng.normal(rng.normal(0, 0.02), 0.02, n)
        margin = float(rng.uniform(0.005, 0.05))
        p, lower, upper = ttost_paired(x1, x0, -margin, margin)
        ours = F.tost_paired(x1 - x0, margin)
        assert math.isclose(ours["pvalue"], p, rel_tol=1e-8, abs_tol=1e-14)
        assert math.isclose(ours["p_lower"], lower[1], rel_tol=1e-8, abs_tol=1e-14)
        assert math.isclose(ours["p_upper"], upper[1], rel_tol=1e-8, abs_tol=1e-14)
        low, high = ours["ci"]  # equivalence at alpha <=> the (1 - 2 alpha) interval inside the margins
        assert ours["equivalent"] == (-margin < low and high < margin)


def test_tost_refuses_bad_input():
    with pytest.raises(ValueError, match="margin"):
        F.tost_paired([0.1, 0.2], margin=-1.0)
    with pytest.raises(ValueError, match="differences"):
        F.tost_paired([0.1], margin=1.0)


# ------------------------------------------------------------------------------------------ the families


def test_primary_cells_are_the_recipes_of_the_power_grids():
    from probdr_lite.experiments.sweep import GRIDS, PLATEAU_DECAY

    def key(r):
        return json.dumps(r, sort_keys=True)

    for task in F.PRIMARY_RECIPES:
        for name, budgets in ((f"{task}-power", F.BUDGETS), (f"{task}-vo-rerun", ("early",))):
            grid = GRIDS[name]  # the power grids run the primary cells; the reruns the intervention's base cells
            grid_recipes = [recipe_of(task, grid.config(r).to_dict()) for r in grid.recipes]
            declared = [F.primary_recipe(task, i, b) for b in budgets for i in F.INITS]
            assert sorted(map(key, grid_recipes)) == sorted(map(key, declared)), name
    plateau = F.PRIMARY_RECIPES["vit"]["plateau"]
    assert {k: plateau[k] for k in PLATEAU_DECAY} == PLATEAU_DECAY


def test_family_table_against_scipy(rows):
    table = F.family_table("primary", {"charlm": rows}, complete=False)
    assert [(e["init"], e["budget"]) for e in table] == [(i, b) for b in F.BUDGETS for i in F.INITS]
    by = {(r["recipe"]["init"], r["recipe"]["max_iters"], r["variant"], r["seed"]): r["final_val_loss"]
          for r in rows if r["recipe"]["lr"] == 1e-3}
    p_one = []
    for e in table:
        iters = 2000 if e["budget"] == "early" else 5000
        a = np.array([by[(e["init"], iters, "attention", s)] for s in range(5)])
        d = np.array([by[(e["init"], iters, "diffusion", s)] for s in range(5)])
        r = stats.ttest_rel(d, a)
        assert math.isclose(e["mean_diff"], float(np.mean(d - a)), rel_tol=1e-10)
        assert math.isclose(e["pvalue"], r.pvalue, rel_tol=1e-8)
        np.testing.assert_allclose(e["ci"], r.confidence_interval(0.95), rtol=1e-8)
        assert e["m"] == 4 and e["n"] == 5
        p_one.append((stats.ttest_rel(d, a, alternative="greater").pvalue,
                      stats.ttest_rel(d, a, alternative="less").pvalue))
    reject = multipletests([p for p, _ in p_one] + [q for _, q in p_one], method="holm")[0]
    for i, e in enumerate(table):
        established = reject[i] or reject[len(table) + i]
        assert (e["verdict"] in ("better", "worse")) == established
        if established:  # loss: lower is better
            assert e["verdict"] == ("worse" if reject[i] else "better")


def _same(a, b):
    """Two family tables are equal entry by entry (the arrays of differences by value)."""
    return len(a) == len(b) and all(
        x.keys() == y.keys() and all(np.array_equal(x[k], y[k]) if isinstance(x[k], np.ndarray) else x[k] == y[k]
                                     for k in x)
        for x, y in zip(a, b))


def test_adding_an_arm_to_a_secondary_family_never_moves_a_primary_verdict(rows):
    primary = F.family_table("primary", {"charlm": rows}, complete=False)
    only = [r for r in rows if r["variant"] in ("attention", "diffusion") and r["recipe"]["lr"] == 1e-3]
    assert _same(F.family_table("primary", {"charlm": validate_results(only)}, complete=False), primary)
    wider = {**F.FAMILIES, "arms": {**F.FAMILIES["arms"], "arms": ("gated", "gated-from-1", "symmetric")}}
    narrower = {**F.FAMILIES, "arms": {**F.FAMILIES["arms"], "arms": ("gated",)}}
    for families in (wider, narrower):
        assert _same(F.family_table("primary", {"charlm": rows}, complete=False, families=families), primary)
    # the secondary family itself does change with its arms: its m counts its own tests only
    arms = F.family_table("arms", {"charlm": rows})
    assert {e["m"] for e in arms} == {len(arms)} and {e["arm"] for e in arms} == {"gated", "gated-from-1"}
    assert len(F.family_table("arms", {"charlm": rows}, families=narrower)) < len(arms)


def test_secondary_recipe_family_reads_only_recipes_outside_the_primary_cells(rows):
    table = F.family_table("recipes", {"charlm": rows})
    assert [e["recipe"]["lr"] for e in table] == [3e-3] and table[0]["budget"] is None


def test_family_table_verdicts_read_the_margin_by_tost(rows):
    table = F.family_table("primary", {"charlm": rows}, complete=False, margins={"charlm": 0.05})
    for e in table:
        assert e["margin"] == 0.05
        assert math.isclose(e["tost_pvalue"], ttost_paired(e["differences"], np.zeros(e["n"]), -0.05, 0.05)[0],
                            rel_tol=1e-8)
        low, high = e["sim_ci"]
        if e["verdict"] == "equivalent":
            assert -0.05 <= low and high <= 0.05


def test_family_table_refuses_bad_input(rows):
    with pytest.raises(ValueError, match="family"):
        F.family_table("tertiary", {"charlm": rows})
    with pytest.raises(ValueError, match="rows_by_task"):
        F.family_table("primary", {})
    with pytest.raises(ValueError, match="every declared cell"):  # the ViT's four cells are not there
        F.family_table("primary", {"charlm": rows})
    with pytest.raises(ValueError, match="margins"):
        F.family_table("primary", {"charlm": rows}, complete=False, margins={"charlm": -1.0})


# ------------------------------------------------------------------------------------ the interaction test


def _frame(rng, n=40):
    import pandas as pd

    init = rng.choice(["gpt2", "default"], n)
    lr = rng.choice([1e-3, 3e-3], n)
    budget = rng.choice(["early", "plateau", "late"], n)
    y = (0.05 * (init == "gpt2") - 0.02 * (lr == 3e-3) + 0.01 * (budget == "plateau")
         + 0.02 * rng.standard_normal(n))
    return pd.DataFrame({"d": y, "init": init, "lr": lr, "budget": budget})


def test_initialisation_effect_matches_statsmodels_ols():
    rng = np.random.default_rng(8)
    for _ in range(5):
        df = _frame(rng)
        fit = smf.ols("d ~ C(init, Treatment('gpt2')) + C(lr) + C(budget)", data=df).fit()
        name = "C(init, Treatment('gpt2'))[T.default]"
        ours = F.ols_group_effect(df["d"], df["init"], {"lr": df["lr"], "budget": df["budget"]})
        assert math.isclose(ours["estimate"], fit.params[name], rel_tol=1e-8)
        assert math.isclose(ours["se"], fit.bse[name], rel_tol=1e-8)
        assert math.isclose(ours["pvalue"], fit.pvalues[name], rel_tol=1e-6)
        assert ours["df"] == fit.df_resid
        np.testing.assert_allclose(ours["ci"], fit.conf_int().loc[name], rtol=1e-8)


def test_initialisation_effect_with_hc3_matches_statsmodels():
    rng = np.random.default_rng(15)
    df = _frame(rng)
    df.loc[df["budget"] == "late", "d"] *= 4  # cells that spread differently
    fit = smf.ols("d ~ C(init, Treatment('gpt2')) + C(lr) + C(budget)", data=df).fit(cov_type="HC3", use_t=True)
    name = "C(init, Treatment('gpt2'))[T.default]"
    ours = F.ols_group_effect(df["d"], df["init"], {"lr": df["lr"], "budget": df["budget"]}, cov_type="HC3")
    assert math.isclose(ours["se"], fit.bse[name], rel_tol=1e-8)
    assert math.isclose(ours["pvalue"], fit.pvalues[name], rel_tol=1e-6)
    np.testing.assert_allclose(ours["ci"], fit.conf_int().loc[name], rtol=1e-8)
    with pytest.raises(ValueError, match="cov_type"):
        F.ols_group_effect(df["d"], df["init"], cov_type="HC0")


def test_initialisation_effect_of_two_groups_is_the_pooled_two_sample_t():
    rng = np.random.default_rng(9)
    a, b = rng.normal(0.0, 1.0, 6), rng.normal(1.0, 1.0, 9)
    ours = F.ols_group_effect(np.r_[a, b], ["gpt2"] * 6 + ["default"] * 9)
    r = stats.ttest_ind(b, a, equal_var=True)
    assert math.isclose(ours["estimate"], b.mean() - a.mean(), rel_tol=1e-10)
    assert math.isclose(ours["pvalue"], r.pvalue, rel_tol=1e-8)
    np.testing.assert_allclose(ours["ci"], r.confidence_interval(0.95), rtol=1e-8)


def test_initialisation_effect_drops_factors_it_cannot_estimate():
    rng = np.random.default_rng(10)
    df = _frame(rng)
    ours = F.ols_group_effect(df["d"], df["init"], {"budget": df["budget"], "again": df["budget"]})
    fit = smf.ols("d ~ C(init, Treatment('gpt2')) + C(budget)", data=df).fit()
    assert ours["factors"] == ["budget"]
    assert math.isclose(ours["estimate"], fit.params["C(init, Treatment('gpt2'))[T.default]"], rel_tol=1e-8)


def test_initialisation_effect_on_rows_matches_statsmodels(rows):
    import pandas as pd

    out = F.initialisation_effect(rows)
    records = []
    for (init, lr, iters), _ in CELLS.items():
        pick = {(r["variant"], r["seed"]): r["final_val_loss"] for r in rows
                if r["recipe"] == {"init": init, "lr": lr, "max_iters": iters}}
        records += [{"d": pick[("diffusion", s)] - pick[("attention", s)], "init": init, "lr": str(lr),
                     "iters": str(iters)} for s in range(5)]
    df = pd.DataFrame(records)
    fit = smf.ols("d ~ C(init, Treatment('gpt2')) + C(lr) + C(iters)", data=df).fit()
    name = "C(init, Treatment('gpt2'))[T.default]"
    assert math.isclose(out["estimate"], fit.params[name], rel_tol=1e-8)
    np.testing.assert_allclose(out["ci"], fit.conf_int().loc[name], rtol=1e-8)
    assert out["n"] == len(df) and out["signs"]["gpt2"]["worse"] == int((df["d"][df["init"] == "gpt2"] > 0).sum())
    primary = F.initialisation_effect(rows, cells="primary")
    assert primary["n"] == 20 and primary["factors"] == ["max_iters"]


def test_cluster_robust_initialisation_effect_matches_statsmodels():
    rng = np.random.default_rng(21)
    df = _frame(rng, n=32)
    df["seed"] = np.tile(np.arange(8), 4)
    df["d"] += 0.03 * rng.standard_normal(8)[df["seed"]]  # a shared part per seed
    fit = smf.ols("d ~ C(init, Treatment('gpt2')) + C(lr)", data=df).fit(
        cov_type="cluster", cov_kwds={"groups": df["seed"]}, use_t=True)
    name = "C(init, Treatment('gpt2'))[T.default]"
    ours = F.ols_group_effect(df["d"], df["init"], {"lr": df["lr"]}, cov_type="cluster", clusters=df["seed"])
    assert math.isclose(ours["se"], fit.bse[name], rel_tol=1e-8)
    assert math.isclose(ours["pvalue"], fit.pvalues[name], rel_tol=1e-6)
    np.testing.assert_allclose(ours["ci"], fit.conf_int().loc[name], rtol=1e-8)
    assert ours["df"] == 7 and ours["clusters"] == 8
    with pytest.raises(ValueError, match="clusters"):
        F.ols_group_effect(df["d"], df["init"], cov_type="cluster")
    with pytest.raises(ValueError, match="clusters"):
        F.ols_group_effect(df["d"], df["init"], clusters=df["seed"])


def test_initialisation_effect_per_budget_reads_only_recipes_run_under_both(rows):
    out = F.initialisation_effect(rows, cells="both", budget="early", cov_type="cluster")
    # the 2,000-iteration recipes run under both initialisations: lr 1e-3 only (lr 3e-3 ran under GPT-2's alone)
    assert sorted(r["init"] for r in out["recipes"]) == ["default", "gpt2"]
    assert all(r["lr"] == 1e-3 and r["max_iters"] == 2000 for r in out["recipes"])
    def value(init, arm, seed):
        return next(r["final_val_loss"] for r in rows if r["recipe"] == {"init": init, "lr": 1e-3, "max_iters": 2000}
                    and r["variant"] == arm and r["seed"] == seed)

    means = {i: np.mean([value(i, "diffusion", s) - value(i, "attention", s) for s in range(5)])
             for i in ("gpt2", "default")}
    assert out["n"] == 10 and out["seeds"] == list(range(5)) and out["clusters"] == 5
    assert math.isclose(out["estimate"], means["default"] - means["gpt2"], rel_tol=1e-9)
    late = F.initialisation_effect(rows, cells="both", budget="plateau")
    assert {r["max_iters"] for r in late["recipes"]} == {5000}
    with pytest.raises(ValueError, match="budget"):
        F.initialisation_effect(rows, budget="late")


def test_leave_one_out_recomputes_the_family_without_each_seed(rows):
    full = F.family_table("primary", {"charlm": rows}, margins=F.EQUIVALENCE_MARGINS, complete=False)
    loo = F.leave_one_out("primary", {"charlm": rows}, complete=False)
    assert [(e["task"], e["init"], e["budget"]) for e in loo] == [(e["task"], e["init"], e["budget"]) for e in full]
    cell = full[0]
    dropped = [r for r in rows if not (r["seed"] == cell["seeds"][0] and r["recipe"] == cell["recipe"])]
    again = F.family_table("primary", {"charlm": dropped}, margins=F.EQUIVALENCE_MARGINS, complete=False)
    assert loo[0]["without"][cell["seeds"][0]] == again[0]["verdict"]
    assert loo[0]["verdict"] == cell["verdict"] and set(loo[0]["without"]) == set(cell["seeds"])


def test_arm_correlations_are_pearson_across_seeds(rows):
    out = F.arm_correlations({"charlm": rows})
    cell = F.family_cells("primary", {"charlm": rows})[0]
    a = [next(r["final_val_loss"] for r in rows if r["recipe"] == cell["recipe"] and r["variant"] == "attention"
              and r["seed"] == s) for s in cell["seeds"]]
    b = [next(r["final_val_loss"] for r in rows if r["recipe"] == cell["recipe"] and r["variant"] == "diffusion"
              and r["seed"] == s) for s in cell["seeds"]]
    assert math.isclose(out[0]["correlation"], stats.pearsonr(a, b)[0], rel_tol=1e-9)


def test_exploratory_history_splits_pairs_at_the_declaration(rows):
    late = copy.deepcopy(rows)
    for r in late:
        r["timestamp"] = "2026-12-04T10:00:00+00:00" if r["seed"] >= 3 else "2026-12-01T10:00:00+00:00"
    out = F.exploratory_history({"charlm": late})
    assert out and all(h["before"] == [0, 1, 2] and h["after"] == [3, 4] for h in out)
    assert out[0]["first"] == "2026-12-01" and out[0]["last"] == "2026-12-04"


def test_initialisation_effect_refuses_bad_input(rows):
    with pytest.raises(ValueError, match="groups"):
        F.ols_group_effect([1.0, 2.0, 3.0, 4.0], ["gpt2"] * 4)
    with pytest.raises(ValueError, match="cells"):
        F.initialisation_effect(rows, cells="some")


# ------------------------------------------------------------------------------------------ Fieller's sets


def _ttest_p(x, y, ratio):
    """The paired t-test's p of x - R y, for one R or an array of them."""
    r = np.atleast_1d(np.asarray(ratio, dtype=float))
    p = stats.ttest_1samp(np.asarray(x)[:, None] - r[None, :] * np.asarray(y)[:, None], 0.0, axis=0).pvalue
    return p if np.ndim(ratio) else float(p[0])


def test_fieller_set_is_where_the_paired_t_test_does_not_reject():
    rng = np.random.default_rng(11)
    kinds = set()
    for _ in range(100):
        n = int(rng.integers(3, 8))
        y = rng.normal(rng.normal(0, 1.0), 1.0, n)
        x = rng.normal(0.5, 1.0, n) + 0.3 * y
        f = F.fieller_ratio(x, y)
        kinds.add(f["kind"])
        ends = [e for piece in f["pieces"] for e in piece if math.isfinite(e)]
        for e in ends:  # the boundary: p = alpha (loosely: the roots carry round-off)
            assert math.isclose(_ttest_p(x, y, e), 0.05, rel_tol=1e-4)
        grid = np.r_[np.linspace(-20, 20, 41), [e + s * max(1.0, abs(e)) for e in ends for s in (-0.01, 0.01)]]
        for r, p in zip(grid, _ttest_p(x, y, grid)):
            if abs(p - 0.05) > 1e-6:  # points on the boundary itself are left to the check above
                assert F.in_set(f["pieces"], r) == (p > 0.05)
    assert {"bounded", "complement", "line"} <= kinds


def test_fieller_says_when_the_set_is_unbounded():
    x = np.array([1.0, 1.2, 0.9, 1.1])
    complement = F.fieller_ratio(x, np.array([0.5, -0.4, 0.3, -0.2]))
    assert complement["kind"] == "complement"
    assert complement["pieces"][0][0] == -math.inf and complement["pieces"][1][1] == math.inf
    line = F.fieller_ratio(np.array([0.1, -0.2, 0.15, -0.1]), np.array([0.5, -0.4, 0.3, -0.2]))
    assert line["kind"] == "line" and line["pieces"] == [(-math.inf, math.inf)]


def test_fieller_is_close_to_the_delta_method_when_the_denominator_is_clear_of_zero():
    rng = np.random.default_rng(12)
    n = 400
    y = rng.normal(5.0, 0.5, n)
    x = 0.7 * y + rng.normal(0.0, 0.5, n)
    f = F.fieller_ratio(x, y)
    r = x.mean() / y.mean()
    var = np.cov(x, y, ddof=1)
    se = math.sqrt((var[0, 0] - 2 * r * var[0, 1] + r * r * var[1, 1]) / n) / abs(y.mean())
    q = stats.t.ppf(0.975, n - 1)
    assert f["kind"] == "bounded"
    np.testing.assert_allclose(f["pieces"][0], (r - q * se, r + q * se), rtol=1e-3)


def test_fieller_covers_the_true_ratio_about_95_percent_of_the_time():
    """Monte Carlo (seeded): 5 paired seeds, the denominator's mean 2.5 standard errors from zero, so that
    unbounded sets occur too."""
    rng = np.random.default_rng(13)
    ratio, reps, n = 0.6, 2000, 5
    covered, unbounded = 0, 0
    for _ in range(reps):
        y = rng.normal(1.0, 0.8 * math.sqrt(n) / 2, n)
        x = ratio * y + rng.normal(0.0, 0.5, n)
        f = F.fieller_ratio(x, y)
        covered += F.in_set(f["pieces"], ratio)
        unbounded += f["kind"] != "bounded"
    assert abs(covered / reps - 0.95) < 0.02
    assert unbounded > 0


def test_fieller_refuses_bad_input():
    with pytest.raises(ValueError, match="paired"):
        F.fieller_ratio([1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="numerator"):
        F.fieller_ratio([1.0], [1.0])
    with pytest.raises(ValueError, match="alpha"):
        F.fieller_ratio([1.0, 2.0], [1.0, 2.0], alpha=0.0)


# ------------------------------------------------------------------------------------------ the intervention


def test_intervention_table_against_scipy_and_the_shares_by_arithmetic():
    rng = np.random.default_rng(14)
    base_rows, vo_rows = [], []
    effects = {"gpt2": 0.06, "default": -0.03, "gpt2-vo-default": 0.01, "default-vo-gpt2": 0.02}
    d = {}
    for init, mean in effects.items():
        target = vo_rows if "-vo-" in init else base_rows
        for s in range(5):
            a = 1.9 + 0.02 * rng.standard_normal()
            x = a + mean + 0.01 * rng.standard_normal()
            d.setdefault(init, []).append(x - a)
            target += [_row("attention", s, a, init), _row("diffusion", s, x, init)]
    d = {k: np.array(v) for k, v in d.items()}
    base_rows, vo_rows = validate_results(base_rows), validate_results(vo_rows)
    table = F.intervention_table({"charlm": (base_rows, vo_rows)})
    assert [e["scheme"] for e in table] == ["gpt2-vo-default", "default-vo-gpt2"]
    for e in table:
        shift, gap = d[e["scheme"]] - d[e["base"]], d[e["vo_scale"]] - d[e["base"]]
        assert math.isclose(e["shift"], shift.mean(), rel_tol=1e-10)
        assert math.isclose(e["pvalue"], stats.ttest_1samp(shift, 0.0).pvalue, rel_tol=1e-8)
        assert math.isclose(e["share"], shift.mean() / gap.mean(), rel_tol=1e-10)
        assert e["m"] == 2 and e["n"] == 5
        for piece in e["share_pieces"]:
            assert piece[0] <= piece[1]
        if e["share_kind"] == "bounded":
            assert e["share_pieces"][0][0] <= e["share"] <= e["share_pieces"][0][1]
        # the simultaneous set (Fieller at alpha / m) holds the unadjusted one
        for r in np.linspace(-5, 5, 101):
            if F.in_set(e["share_pieces"], r):
                assert F.in_set(e["share_sim_pieces"], r)


# ---------------------------------------------------------------------------------- the committed rows


def test_primary_family_on_the_committed_rows_has_its_cells_and_consistent_verdicts():
    """Structure only: every declared primary cell is there, and each verdict word agrees with its interval."""
    from probdr_lite.experiments.files import task_rows

    table = F.family_table("primary", {t: task_rows(t) for t in F.PRIMARY_RECIPES})
    assert {(e["task"], e["init"], e["budget"]) for e in table} == {
        (t, i, b) for t in F.PRIMARY_RECIPES for i in F.INITS for b in F.BUDGETS}
    for e in table:
        low, high = e["sim_ci"]
        ci_low, ci_high = e["ci"]
        assert low <= ci_low <= e["mean_diff"] <= ci_high <= high or low == 0 or high == 0
        assert e["verdict"] == F.verdict_category(e["mean_diff"], e["sim_ci"], lower_is_better=e["lower_is_better"])
        assert e["n_better"] + e["n_worse"] + e["n_tied"] == e["n"] >= 3


def test_intervention_family_on_the_committed_rows_has_every_scheme_and_labelled_sets():
    """Structure only: both schemes in both models, one family, each share with a set of a declared kind."""
    from probdr_lite.experiments.files import intervention_rows, task_rows

    table = F.intervention_table({t: (intervention_rows(t), intervention_rows(t)) for t in F.PRIMARY_RECIPES})
    # the intervention files hold their base cells, run with them: the same seeds in every cell of a model
    for t in F.PRIMARY_RECIPES:
        cells = {}
        for r in intervention_rows(t):
            cells.setdefault((r["recipe"]["init"], r["variant"]), set()).add(r["seed"])
        assert len(cells) == 8 and len({frozenset(v) for v in cells.values()}) == 1
        assert {r["git_commit"] for r in intervention_rows(t)} != {"unknown"} and len(task_rows(t)) > 0
    assert {(e["task"], e["scheme"]) for e in table} == {(t, s) for t in F.PRIMARY_RECIPES
                                                          for s in F.FAMILIES["intervention"]["schemes"]}
    for e in table:
        assert e["m"] == len(table) and e["share_kind"] in F.FIELLER_KINDS and e["share_sim_kind"] in F.FIELLER_KINDS
        assert e["n"] >= 3 and e["sim_ci"][0] <= e["shift"] <= e["sim_ci"][1]


def test_format_families_prints_the_chapter_numbers():
    rows = _rows()
    text = F.format_families({"charlm": rows}, complete=False)
    with pytest.raises(ValueError, match="every declared cell"):
        F.format_families({"charlm": rows})
    e = F.initialisation_effect(rows, cells=F.INTERACTION["cells"], cov_type=F.INTERACTION["cov_type"])
    assert f"| charlm | {e['n']} | {e['estimate']:+.4f} [{e['ci'][0]:+.4f}, {e['ci'][1]:+.4f}] |" in text
    for c in F.family_table("primary", {"charlm": rows}, complete=False, margins=F.EQUIVALENCE_MARGINS):
        assert f"| {c['mean_diff']:+.4f} | [{c['ci'][0]:+.4f}, {c['ci'][1]:+.4f}] |" in text
    assert "Intervention family" not in text
