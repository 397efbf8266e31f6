"""The trained-transformers chapter's figures and tables: what they draw is what the results rows say."""

import json
import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.collections import PolyCollection  # noqa: E402
from scipy import stats  # noqa: E402

from probdr_lite.experiments import CharLMConfig, ViTConfig, summarise, validate_results  # noqa: E402
from probdr_lite.experiments import files as F  # noqa: E402
from probdr_lite.experiments import stats as S  # noqa: E402
from probdr_lite.experiments.results import SCHEMA_VERSION, derived_fields, recipe_of  # noqa: E402
from probdr_lite.presentation.figures import training as T  # noqa: E402

ITERS = [0, 10, 20, 30]


def make_row(task, variant, seed, val, *, acc=None, gates=None, command="python -m probdr_lite.experiments sweep"):
    """A schema-valid row whose validation curve is ``val`` (and ``acc`` for the ViT)."""
    config = (CharLMConfig(max_iters=30) if task == "charlm" else ViTConfig(epochs=3)).to_dict()
    if task == "charlm":
        curve = [[it, v + 0.1, v] for it, v in zip(ITERS, val)]
        cols = ["iter", "train_loss", "val_loss"]
    else:
        curve = [[it, v + 0.1, v, a] for it, v, a in zip(ITERS, val, acc)]
        cols = ["iter", "train_loss", "val_loss", "val_acc"]
    row = {
        "schema_version": SCHEMA_VERSION, "task": task, "variant": variant, "seed": seed, "config": config,
        "recipe": recipe_of(task, config), **derived_fields(task, curve, config),
        "final_val_loss": curve[-1][2], "best_val_loss": min(c[2] for c in curve),
        "curve_columns": cols, "curve": curve, "throughput": 1000.0 + seed,
        "throughput_unit": "tokens/s" if task == "charlm" else "images/s",
        "train_seconds": 10.0, "wall_seconds": 12.0, "torch_version": "2.x", "device": "cpu (test, 1 threads)",
        "git_commit": "abc", "command": command, "timestamp": f"2026-01-01T00:00:0{seed}+00:00",
    }
    if task == "vit":
        row["final_val_acc"] = curve[-1][3]
        row["best_val_acc"] = max(c[3] for c in curve)
        row["epochs_run"] = config["epochs"]
    if gates is not None:
        row["gates"] = gates
    return row


@pytest.fixture
def charlm_rows():
    """Three arms x 5 seeds; diffusion is lower than attention by 0.02 + 0.001 * seed at every point."""
    rng = np.random.default_rng(0)
    rows = []
    for seed in range(5):
        base = 3.0 - 0.3 * np.arange(4) + 0.05 * rng.standard_normal(4)
        rows.append(make_row("charlm", "attention", seed, base.tolist()))
        rows.append(make_row("charlm", "diffusion", seed, (base - 0.02 - 0.001 * seed).tolist()))
        gates = (0.1 * (seed + 1) * np.arange(8).reshape(2, 4)).tolist()
        rows.append(make_row("charlm", "gated", seed, (base + 0.003 * (-1) ** seed).tolist(), gates=gates))
    return validate_results(rows)


@pytest.fixture
def vit_rows():
    rows = []
    for seed in range(3):
        val = [2.3, 1.0, 0.5, 0.4 + 0.01 * seed]
        acc = [0.1, 0.7, 0.9, 0.95 - 0.01 * seed]
        rows.append(make_row("vit", "attention", seed, val, acc=acc))
        rows.append(make_row("vit", "symmetric", seed, [v + 0.01 for v in val], acc=[a - 0.02 for a in acc]))
    return validate_results(rows)


def test_seed_band_mean_and_sd_are_the_seed_statistics(charlm_rows):
    iters, mean, lo, hi, curves = S.seed_band(charlm_rows, "diffusion", "val_loss", "sd")
    expected = np.array([[c[2] for c in r["curve"]] for r in charlm_rows if r["variant"] == "diffusion"])
    np.testing.assert_array_equal(iters, ITERS)
    np.testing.assert_allclose(curves, expected)
    np.testing.assert_allclose(mean, expected.mean(axis=0))
    sd = np.array([np.std(expected[:, j], ddof=1) for j in range(4)])
    np.testing.assert_allclose(hi - mean, sd)
    np.testing.assert_allclose(mean - lo, sd)
    _, _, lo, hi, _ = S.seed_band(charlm_rows, "diffusion", "val_loss", "minmax")
    np.testing.assert_allclose(lo, expected.min(axis=0))
    np.testing.assert_allclose(hi, expected.max(axis=0))


def test_curves_figure_draws_each_arms_mean_and_band(charlm_rows):
    fig = T.curves_figure(charlm_rows, "val_loss", band="minmax", zoom_after=10, reference=1.88,
                          titles={"minmax": "lowest to highest", "sd": "not this band", "zoom": "from iteration 10"})
    assert len(fig.axes) == 2
    assert [a.get_title() for a in fig.axes] == ["lowest to highest", "from iteration 10"]  # the chapter's titles
    ax = fig.axes[0]
    for k, v in enumerate(["attention", "diffusion", "gated"]):
        vals = np.array([[c[2] for c in r["curve"]] for r in charlm_rows if r["variant"] == v])
        line = ax.get_lines()[k]
        np.testing.assert_allclose(line.get_xdata(), ITERS)
        np.testing.assert_allclose(line.get_ydata(), vals.mean(axis=0))
        band = [c for c in ax.collections if isinstance(c, PolyCollection)][k]
        ys = band.get_paths()[0].vertices[:, 1]
        assert np.isclose(ys.min(), vals.min()) and np.isclose(ys.max(), vals.max())
        assert f"(n = 5)" in line.get_label()
    # the reference line sits at 1.88 and the zoomed panel shows only iterations >= 10
    assert np.allclose(ax.get_lines()[3].get_ydata(), 1.88)
    np.testing.assert_allclose(fig.axes[1].get_lines()[0].get_xdata(), [10, 20, 30])
    plt.close(fig)


def test_vit_curves_use_the_accuracy_column(vit_rows):
    fig = T.curves_figure(vit_rows, "val_acc")
    assert fig.axes[0].get_title() == ""  # no title of the builder's own
    acc = np.array([[c[3] for c in r["curve"]] for r in vit_rows if r["variant"] == "symmetric"])
    np.testing.assert_allclose(fig.axes[0].get_lines()[1].get_ydata(), acc.mean(axis=0))
    plt.close(fig)


def test_paired_differences_match_the_rows(charlm_rows):
    diffs = S.paired_differences(charlm_rows, "final_val_loss")
    seeds, d = diffs["diffusion"]
    np.testing.assert_array_equal(seeds, range(5))
    np.testing.assert_allclose(d, [-0.02 - 0.001 * s for s in range(5)])
    np.testing.assert_allclose(diffs["gated"][1], [0.003 * (-1) ** s for s in range(5)], atol=1e-12)


def test_tables_show_the_summary_numbers(charlm_rows, vit_rows):
    s = summarise(charlm_rows)
    arms = T.arms_table(s, "charlm")
    assert [r[0] for r in arms.body] == [T.VARIANT_LABELS[v] for v in ("attention", "diffusion", "gated")]
    a = s["arms"][1]
    assert f"{a['final_val_loss_mean']:.4f} ± {a['final_val_loss_sd']:.4f}" in arms.body[1][2]
    assert arms.caption is None and T.arms_table(s, "charlm", caption="c").caption == "c"
    assert "<table>" in arms._repr_html_() and "| arm |" in str(arms)
    vit = T.arms_table(summarise(vit_rows), "vit")
    assert "95.00 %" not in vit.body[0][2]  # the mean of 0.95, 0.94, 0.93 is 94.00 %
    assert vit.body[0][2].startswith("94.00 %")


def test_quantity_numbers_carry_their_unit_and_never_a_sign_they_lack():
    # accuracies in percent (2 decimals), their differences and spreads in percentage points; losses in 4 decimals
    assert T.quantity_level(0.969, "best_val_acc") == "96.90 %"
    assert T.quantity_level(1.77101, "final_val_loss") == "1.7710"
    assert T.quantity_difference(0.0123, "final_val_acc") == "+1.23 pp"
    assert T.quantity_difference(-0.0123, "final_val_loss") == "-0.0123"
    assert T.quantity_spread(0.0123, "final_val_acc") == "1.23 pp"
    assert T.quantity_spread(0.0123, "best_val_loss") == "0.0123"
    assert T.quantity_difference(0.01234, "final_val_loss", digits=2) == "+0.01"
    # a difference that rounds to zero has no sign, either way ("+.4f" printed "-0.0000" and "+0.0000")
    assert T.quantity_difference(-0.00001, "final_val_loss") == "0.0000"
    assert T.quantity_difference(0.00001, "final_val_loss") == "0.0000"
    assert T.quantity_difference(-0.00001, "final_val_acc") == "0.00 pp"
    for f in (T.quantity_level, T.quantity_difference, T.quantity_spread):  # not measured
        assert f(None, "final_val_acc") == "n/a" == f(math.nan, "final_val_loss") == f(math.nan, "final_val_acc")


def test_gates_are_read_and_drawn(charlm_rows):
    seeds, g = S.gate_values(charlm_rows)
    assert g.shape == (5, 2, 4)
    np.testing.assert_allclose(g[2], 0.3 * np.arange(8).reshape(2, 4))
    fig = T.gates_figure(charlm_rows, title="the gates", ylabel="g")
    ax = fig.axes[0]
    assert ax.get_title() == "the gates" and ax.get_ylabel() == "g"
    # layer 1, head 3 is the 8th collection: one point per seed
    np.testing.assert_allclose(ax.collections[7].get_offsets()[:, 1], g[:, 1, 3])
    plt.close(fig)
    no_gates = [r for r in charlm_rows if r["variant"] != "gated"]
    assert S.gate_values(no_gates) is None
    with pytest.raises(ValueError, match="gates"):
        T.gates_figure(no_gates)


def test_provenance_commands_and_config(charlm_rows, tmp_path):
    rows = [dict(r) for r in charlm_rows]
    rows[0]["command"] = "other"
    assert F.run_commands(rows) == ["other", "python -m probdr_lite.experiments sweep"]
    info = F.rows_provenance(charlm_rows)
    assert info["seeds"]["diffusion"] == [0, 1, 2, 3, 4] and info["n_rows"] == 15
    assert math.isclose(info["wall_hours"], 15 * 12 / 3600)
    diffs = S.config_differences(info["config"])
    assert diffs == {"max_iters": (30, 2000)}  # the fixture shortened training, nothing else
    assert S.config_differences(CharLMConfig().to_dict()) == {}
    (tmp_path / "README.md").write_text(
        "Made with\n\n```bash\n$ .venv/bin/python -m probdr_lite.experiments sweep --task charlm \\\n"
        "    --seeds 0-4 --out x.json\n```\nand `OMP_NUM_THREADS=1 python -m probdr_lite.experiments sweep --task vit`.\n")
    assert F.readme_commands(tmp_path) == [
        ".venv/bin/python -m probdr_lite.experiments sweep --task charlm --seeds 0-4 --out x.json",
        "OMP_NUM_THREADS=1 python -m probdr_lite.experiments sweep --task vit"]
    assert F.readme_commands(tmp_path / "missing") == []


def test_load_task_results_reads_or_returns_none(charlm_rows, tmp_path, monkeypatch):
    assert F.load_task_results("charlm", tmp_path) is None
    (tmp_path / "charlm_cpu.json").write_text(json.dumps(charlm_rows))
    assert len(F.load_task_results("charlm", tmp_path)) == 15
    monkeypatch.setenv("PROBDR_RESULTS_DIR", str(tmp_path))
    assert F.results_dir() == tmp_path and len(F.load_task_results("charlm")) == 15
    (tmp_path / "vit_mnist.json").write_text("[{\"task\": \"vit\"}]")
    with pytest.raises(ValueError, match="results row 0"):
        F.load_task_results("vit")


def test_bad_input_names_the_parameter(charlm_rows, vit_rows):
    s = summarise(charlm_rows)
    cases = [
        (lambda: F.load_task_results("gpt"), "task"),
        (lambda: S.seed_band(charlm_rows, "symmetric"), "variant"),
        (lambda: S.seed_band(charlm_rows, "diffusion", metric="val_acc"), "metric"),
        (lambda: S.seed_band(charlm_rows, "diffusion", band="iqr"), "band"),
        (lambda: T.curves_figure([]), "rows"),
        (lambda: T.curves_figure("rows.json"), "rows"),
        (lambda: T.curves_figure(charlm_rows + vit_rows), "rows"),
        (lambda: T.curves_figure(charlm_rows, zoom_after=-1), "zoom_after"),
        (lambda: T.curves_figure(charlm_rows, variants=["nope"]), "variants"),
        (lambda: S.paired_differences(charlm_rows, "final_val_acc"), "quantity"),
        (lambda: S.paired_differences(charlm_rows, baseline="symmetric"), "baseline"),
        (lambda: T.arms_table({"arms": []}, "charlm"), "summary"),
        (lambda: T.arms_table(s, "vit"), "task 'vit'"),
        (lambda: S.config_differences(None), "config"),
    ]
    for call, word in cases:
        with pytest.raises(ValueError, match=word):
            call()
    # curves whose evaluation points differ between seeds cannot be averaged point by point
    bad = json.loads(json.dumps(charlm_rows))
    bad[1]["curve"][1][0] = 11
    with pytest.raises(ValueError, match="evaluation iterations"):
        S.seed_band(bad, "diffusion")


def test_seeds_needed_gives_the_requested_power():
    # s / delta = 2: (2.80 * 2)^2 = 31.4, so 32 seeds
    assert S.seeds_needed(0.01, 0.02) == 32
    assert S.seeds_needed(-0.01, 0.02) == 32
    # Monte Carlo: with that many paired seeds a two-sided z-test at 0.05 detects the effect about 80 % of the time
    rng = np.random.default_rng(1)
    n = S.seeds_needed(0.5, 1.0)
    means = rng.normal(0.5, 1.0, size=(20000, n)).mean(axis=1)
    power = np.mean(np.abs(means) / (1.0 / np.sqrt(n)) > stats.norm.ppf(0.975))
    assert 0.78 < power < 0.85
    for kwargs, word in [({"mean_diff": 0.0, "sd_diff": 1.0}, "mean_diff"), ({"mean_diff": 1.0, "sd_diff": 0.0}, "sd_diff"),
                         ({"mean_diff": 1.0, "sd_diff": 1.0, "power": 1.0}, "power")]:
        with pytest.raises(ValueError, match=word):
            S.seeds_needed(**kwargs)


def test_gates_table_reports_the_range(charlm_rows):
    g = S.gate_values(charlm_rows)[1]
    row = T.gates_table({"cell": charlm_rows}, GATES_HEADER).body[0]
    assert row[:2] == ["cell", "$g = 0$"]
    assert row[4:6] == [f"{g.min():.2f} to {g.max():.2f}", f"{g.mean():.2f}"]
    assert row[6] == ", ".join(f"{m:.2f}" for m in g.mean(axis=(0, 2)))
    assert row[7] == f"{int((g > 0.5).sum())} of {g.size}" and row[8] == ""
    assert T.gates_table({"cell": [r for r in charlm_rows if r["variant"] != "gated"]}, GATES_HEADER).body == []
    with pytest.raises(ValueError, match="header must have 9 entries"):
        T.gates_table({"cell": charlm_rows}, GATES_HEADER[:-1])
    f = T.gates_facts({"cell": charlm_rows})  # one start only: nothing to compare
    assert f["n_twins"] == 0 and not (f["apart"] or f["together"] or f["mixed"])


#: a header for the tables (the chapter writes its own): the columns' keys
GATES_HEADER = list(T.GATES_COLUMNS)
MECHANISM_HEADER = list(T.MECHANISM_COLUMNS)
#: labels for the mechanism figure and the agreement table (the chapter writes its own), each its key in capitals
MECHANISM_LABELS = {s: s.upper() for s in S.MECHANISM_SERIES}
DIRECTION_WORDS = {d: d.upper() for d in T.DIRECTIONS}


def _with_gated_from_1(rows, shift):
    out = json.loads(json.dumps(rows))
    for r in rows:
        if r["variant"] == "gated":
            twin = json.loads(json.dumps(r))
            twin["variant"] = "gated-from-1"
            twin["gates"] = (np.array(r["gates"]) + shift).tolist()
            out.append(twin)
    return out


def test_both_gated_arms_are_drawn_and_compared(charlm_rows):
    rows = _with_gated_from_1(charlm_rows, 0.5)
    seeds, g1 = S.gate_values(rows, "gated-from-1")
    g0 = S.gate_values(rows)[1]
    np.testing.assert_allclose(g1, g0 + 0.5)
    fig = T.gates_figure(rows)
    colls = fig.axes[0].collections
    assert len(colls) == 2 * 8  # arm, layer, head
    np.testing.assert_allclose(colls[8 + 7].get_offsets()[:, 1], g1[:, 1, 3])  # from 1, layer 1, head 3
    plt.close(fig)
    body = T.gates_table({"cell": rows}, GATES_HEADER).body
    assert body[1][1] == "$g = 1$" and body[1][8].startswith("+0.50 (+0.50 to +0.50)")
    assert T.gates_facts({"cell": rows})["apart"]
    # either side of GATES_APART: the word follows the numbers
    below = T.gates_facts({"cell": _with_gated_from_1(charlm_rows, 0.9 * T.GATES_APART)})
    above = T.gates_facts({"cell": _with_gated_from_1(charlm_rows, 1.1 * T.GATES_APART)})
    assert below["together"] and not below["apart"] and above["apart"] and not above["together"]
    mixed = T.gates_facts({"a": _with_gated_from_1(charlm_rows, 0.05), "b": rows})
    assert mixed["mixed"] and mixed["n_twins"] == 2 and not (mixed["apart"] or mixed["together"])
    with pytest.raises(ValueError, match="arm"):
        S.gate_values(rows, "attention")


# ---------------------------------------------------------------------------------------------------- mechanism

def _with_mechanism(row, scale, n_points=None):
    """``row`` with a hand-made mechanism record: per-layer series scale * (point + 1) * (layer + 1)."""
    r = json.loads(json.dumps(row))
    if n_points is not None:
        r["curve"] = r["curve"][:n_points]
        r.update(F_derived(r))
    iters = [p[0] for p in r["curve"]]
    layers = 2
    per_layer = lambda k: [[scale * (i + 1) * (layer + 1) for layer in range(layers)] for i in range(k)]  # noqa: E731
    r["mechanism"] = {"probe": "test", "iters": iters, "update_ratio": per_layer(len(iters)),
                      "v_over_av": per_layer(len(iters)), "shrink": per_layer(len(iters)),
                      "wvwo_top_sv": per_layer(len(iters)), "wvwo_mean_eig": per_layer(len(iters)),
                      "lr": [1e-3] * (len(iters) - 1), "grad_norm": [scale * (i + 2) for i in range(len(iters) - 1)],
                      "clipped": [0.5] * (len(iters) - 1), "attn_grad_norm": per_layer(len(iters) - 1)}
    return r


def F_derived(row):
    from probdr_lite.experiments.results import derived_fields

    c = row["curve"]
    return {"final_val_loss": c[-1][2], "best_val_loss": min(p[2] for p in c), **derived_fields(row["task"], c, row["config"])}


def test_mechanism_points_paths_and_ratios_by_hand(charlm_rows):
    rows = []
    for r in charlm_rows:
        if r["variant"] in ("attention", "diffusion"):
            scale = 1.0 if r["variant"] == "attention" else 2.0 + 0.1 * r["seed"]
            rows.append(_with_mechanism(r, scale, n_points=4 if r["seed"] != 3 else 3))
    start = S.mechanism_points(rows, "v_over_av", "start")
    assert set(start) == {("gpt2", "attention"), ("gpt2", "diffusion")}
    # layer mean at point 0: scale * 1 * (1 + 2) / 2
    np.testing.assert_allclose(start[("gpt2", "diffusion")]["values"], [1.5 * (2.0 + 0.1 * s) for s in range(5)])
    assert start[("gpt2", "attention")]["per_layer"] == [1.0, 2.0]
    end = S.mechanism_points(rows, "grad_norm", "end")
    np.testing.assert_allclose(end[("gpt2", "attention")]["values"], [4, 4, 4, 3, 4])  # seed 3 stopped earlier
    path = S.mechanism_path(rows, "update_ratio")[("gpt2", "diffusion")]
    assert list(path["iters"]) == ITERS[:3]  # the points every seed reached
    np.testing.assert_allclose(path["mean"], 1.5 * np.mean([2.0 + 0.1 * s for s in range(5)]) * np.arange(1, 4))
    ratio = S.mechanism_ratio(rows, "v_over_av")["gpt2"]
    np.testing.assert_allclose(ratio["ratios"], [2.0 + 0.1 * s for s in range(5)])
    assert ratio["min"] == pytest.approx(2.0) and ratio["max"] == pytest.approx(2.4)
    fig = T.mechanism_figure(rows, MECHANISM_LABELS, series=("update_ratio", "grad_norm"), title="blocks")
    assert [ax.get_title() for ax in fig.axes] == ["UPDATE_RATIO", "GRAD_NORM"] and fig._suptitle.get_text() == "blocks"
    thick = fig.axes[0].get_lines()[:2]
    np.testing.assert_allclose(thick[1].get_ydata(), path["mean"])
    assert len(fig.axes[0].get_lines()) == 2 + 10  # two means, ten seeds
    plt.close(fig)
    with pytest.raises(ValueError, match="series must be one of 'grad_norm'"):  # a series the labels do not name
        T.mechanism_figure(rows, {"grad_norm": "g"}, series=("update_ratio",))
    with pytest.raises(ValueError, match="mechanism"):
        S.mechanism_points(charlm_rows, "shrink")
    with pytest.raises(ValueError, match="series"):
        S.mechanism_points(rows, "loss")


def _two_init_rows(charlm_rows):
    rows = []
    for r in charlm_rows:
        if r["variant"] not in ("attention", "diffusion"):
            continue
        for init, scale in (("gpt2", 0.1), ("default", 1.0)):
            x = _with_mechanism(r, scale * (1.5 if r["variant"] == "diffusion" else 1.0))
            x["config"] = {**x["config"], "init": init}
            x["recipe"] = {**x["recipe"], "init": init}
            if init == "gpt2" and x["variant"] == "diffusion":  # its -v ends up cancelling part of the update
                x["mechanism"]["shrink"][-1] = [0.3, 0.5]
            rows.append(x)
    return rows


def test_mechanism_table_states_the_measured_numbers(charlm_rows):
    rows = _two_init_rows(charlm_rows)
    table = T.mechanism_table({"case": rows}, MECHANISM_HEADER,
                              effects={"case": {"gpt2": ("+0.06 [+0.04, +0.07]", "hurts")}})
    by = {r[1]: r for r in table.body}
    assert [r[1] for r in table.body] == ["GPT-2", "PyTorch default"] and len(table.header) == len(table.body[0])
    sv = S.mechanism_points(rows, "wvwo_top_sv", "start")
    assert by["GPT-2"][4] == f"{sv[('gpt2', 'attention')]['mean']:.3f}"  # the smaller: no ratio
    assert by["PyTorch default"][4].endswith("(10 times the other's)")
    assert by["GPT-2"][3] == "+0.06 [+0.04, +0.07] (hurts)" and by["PyTorch default"][3] == "n/a"
    assert by["GPT-2"][7] == "40 %"  # its -v cancels part of the update
    end = S.mechanism_points(rows, "shrink", "end")[("default", "diffusion")]["mean"]
    assert by["PyTorch default"][7] == f"{100 * end:.0f} %"
    ratio = S.mechanism_ratio(rows, "grad_norm")["gpt2"]
    assert by["GPT-2"][13].startswith(f"{ratio['mean']:.2f} ({ratio['min']:.2f} to {ratio['max']:.2f})")
    neg = json.loads(json.dumps(rows))
    for r in neg:
        if r["variant"] == "diffusion" and r["config"]["init"] == "gpt2":
            r["mechanism"]["shrink"][-1] = [-0.2, -0.4]
    assert T.mechanism_table({"case": neg}, MECHANISM_HEADER).body[0][7] == "-30 %"  # negative: the -v enlarges the update
    with pytest.raises(ValueError, match="rows must record 'diffusion' and 'attention'"):
        T.mechanism_table({"case": [r for r in rows if r["variant"] == "attention"]}, MECHANISM_HEADER)
    with pytest.raises(ValueError, match="cases"):
        T.mechanism_table({}, MECHANISM_HEADER)
    with pytest.raises(ValueError, match="header must have 15 entries, one per column"):
        T.mechanism_table({"case": rows}, MECHANISM_HEADER[1:])


def test_mechanism_agreement_sorts_the_measurements_by_direction(charlm_rows):
    rows = _two_init_rows(charlm_rows)
    other = json.loads(json.dumps(rows))
    for r in other:  # the second "model": the last shrink of A - I goes the other way between the inits
        if r["variant"] == "diffusion":
            r["mechanism"]["shrink"][-1] = [0.9, 0.9] if r["config"]["init"] == "gpt2" else [0.0, 0.0]
    agreement = S.mechanism_agreement({"charlm": rows, "vit": other})
    by = {(a["series"], a["at"]): a for a in agreement}
    top = by[("wvwo_top_sv", "start")]
    assert top["same_sign"] and top["values"]["charlm"] == pytest.approx((0.15 * 1.5, 1.5 * 1.5))
    assert not by[("shrink", "end")]["same_sign"] and by[("shrink", "end")]["values"]["vit"] == (0.9, 0.0)
    names = {key: f"{key[0]} at {key[1]}" for key in by}
    labels = {"charlm": "character model", "vit": "vision transformer"}
    table = T.agreement_table(agreement, names, DIRECTION_WORDS, labels=labels)
    words = {row[0]: row[-1] for row in table.body}
    assert words["wvwo_top_sv at start"] == "LOWER"
    assert words["shrink at end"] == "DIFFERS"
    assert words["clipped at end"] == "EQUAL"
    top = next(row for row in table.body if row[0] == "wvwo_top_sv at start")
    assert top[1] == "0.225 / 2.25" and table.header[1] == "character model: GPT-2 / default"
    assert T.agreement_table(agreement, names, DIRECTION_WORDS, labels={**labels, "charlm": "first"}).header[1] == \
        "first: GPT-2 / default"
    with pytest.raises(ValueError, match=r"labels must name every case; missing \['vit'\]"):
        T.agreement_table(agreement, names, DIRECTION_WORDS, labels={"charlm": "first"})
    # the direction turns with the numbers, not with the order of the cases
    up = {**top_entry(agreement), "same_sign": True, "values": {"charlm": (2.0, 1.0), "vit": (3.0, 1.0)}}
    assert T.agreement_direction(up) == "higher"
    assert T.agreement_direction({**up, "values": {"charlm": (1.0, 2.0), "vit": (1.0, 3.0)}}) == "lower"
    with pytest.raises(ValueError, match="agreement must be the list returned by .*mechanism_agreement"):
        T.agreement_table([], names, DIRECTION_WORDS, labels=labels)
    with pytest.raises(ValueError, match="directions and rows must name.*'equal'"):
        T.agreement_table(agreement, names, {d: d for d in ("lower", "higher", "differs")}, labels=labels)
    with pytest.raises(ValueError, match="wvwo_top_sv"):
        T.agreement_table(agreement, {k: v for k, v in names.items() if k[0] != "wvwo_top_sv"}, DIRECTION_WORDS,
                          labels=labels)


def top_entry(agreement):
    return next(a for a in agreement if (a["series"], a["at"]) == ("wvwo_top_sv", "start"))
