"""The W_V W_O intervention's statistics, on synthetic rows whose paired differences are known by construction.

Independent answers: scipy's paired t-test (ttest_rel) on the constructed values, Holm's rule for two tests
written out (sorted p_(1) <= p_(2): 2 p_(1) and max(2 p_(1), p_(2))), and the shift and share by arithmetic.
"""

import numpy as np
import pytest
from scipy import stats

from probdr_lite.experiments import validate_results
from probdr_lite.experiments.intervention import MOST, follows_scale, vo_scale_effects

from .test_recipes import _row

SEEDS = (0, 1, 2)
NOISE = {"gpt2": (0.004, -0.001, -0.003), "default": (-0.002, 0.003, -0.001),
         "gpt2-vo-default": (0.001, 0.002, -0.003), "default-vo-gpt2": (-0.003, 0.0, 0.003)}


def _rows(effects):
    """effects[init] = mean A - I minus attention; seed s adds NOISE[init][s]."""
    rows = []
    for init, mean in effects.items():
        for s in SEEDS:
            base = 1.9 + 0.01 * s
            rows += [_row("attention", s, base, init), _row("diffusion", s, base + mean + NOISE[init][s], init)]
    return validate_results(rows)


def _d(init, mean):
    return np.array([mean + NOISE[init][s] for s in SEEDS])


def test_shift_share_and_holm_against_scipy():
    means = {"gpt2": 0.06, "default": -0.04, "gpt2-vo-default": -0.02, "default-vo-gpt2": -0.035}
    rows = _rows({k: means[k] for k in ("gpt2", "default")})
    vo = _rows({k: means[k] for k in ("gpt2-vo-default", "default-vo-gpt2")})
    out = vo_scale_effects({"charlm": (rows, vo)})["charlm"]
    p = {}
    for scheme, (base, other) in (("gpt2-vo-default", ("gpt2", "default")), ("default-vo-gpt2", ("default", "gpt2"))):
        e = out[scheme]
        assert (e["base"], e["vo_scale"]) == (base, other) and e["seeds"] == list(SEEDS)
        shift = _d(scheme, means[scheme]) - _d(base, means[base])
        assert e["shift"] == pytest.approx(shift.mean(), abs=1e-12)
        assert e["d_vo"] == pytest.approx(_d(scheme, means[scheme]).mean(), abs=1e-12)
        p[scheme] = stats.ttest_rel(_d(scheme, means[scheme]), _d(base, means[base])).pvalue
        assert e["shift_pvalue"] == pytest.approx(p[scheme], rel=1e-9)
        gap = _d(other, means[other]).mean() - _d(base, means[base]).mean()
        assert e["gap"] == pytest.approx(gap, abs=1e-12) and e["share"] == pytest.approx(shift.mean() / gap)
        half = stats.t.ppf(0.975, 2) * shift.std(ddof=1) / np.sqrt(3)
        assert e["shift_ci"] == pytest.approx((shift.mean() - half, shift.mean() + half), abs=1e-12)
    lo, hi = sorted(p, key=p.get)
    assert out[lo]["shift_holm"] == pytest.approx(2 * p[lo], rel=1e-9)
    assert out[hi]["shift_holm"] == pytest.approx(max(2 * p[lo], p[hi]), rel=1e-9)
    # gpt2-vo-default moves 0.08 of the 0.10 gap towards default; default-vo-gpt2 only 0.005 of its +0.10 gap
    g = out["gpt2-vo-default"]
    assert g["share"] == pytest.approx(0.8, abs=0.05) and g["towards"] == (g["shift_holm"] < 0.05)
    d = out["default-vo-gpt2"]
    assert d["share"] < MOST and not d["carries_most"] and not d["towards"]
    assert follows_scale({"charlm": out}) == {"charlm": False}


def test_follows_scale_when_both_interventions_carry_the_effect():
    means = {"gpt2": 0.06, "default": -0.04, "gpt2-vo-default": -0.035, "default-vo-gpt2": 0.055}
    rows = _rows({k: means[k] for k in ("gpt2", "default")})
    vo = _rows({k: means[k] for k in ("gpt2-vo-default", "default-vo-gpt2")})
    out = vo_scale_effects({"charlm": (rows, vo)})
    assert all(e["carries_most"] and e["share"] > 0.9 for e in out["charlm"].values())
    assert follows_scale(out) == {"charlm": True}


def test_refuses_missing_recipes_and_wrong_rows():
    rows = _rows({"gpt2": 0.06})
    vo = _rows({"gpt2-vo-default": 0.0})
    with pytest.raises(ValueError, match="at least 2 seeds"):
        vo_scale_effects({"charlm": (rows, vo)})
    with pytest.raises(ValueError, match="intervention_rows must be of"):
        vo_scale_effects({"charlm": (rows, rows)})
    with pytest.raises(ValueError, match="task 'vit'"):
        vo_scale_effects({"vit": (rows, vo)})
    with pytest.raises(ValueError, match="alpha"):
        vo_scale_effects({"charlm": (rows, vo)}, alpha=1.5)


def test_intervention_table_and_rows_file(tmp_path):
    import json

    from probdr_lite.experiments.files import INTERVENTION_FILES, intervention_rows
    from probdr_lite.presentation.figures.recipes import INTERVENTION_HEADER, intervention_table, intervention_table_facts

    means = {"gpt2": 0.06, "default": -0.04, "gpt2-vo-default": -0.035, "default-vo-gpt2": 0.055}
    rows = _rows({k: means[k] for k in ("gpt2", "default")})
    vo = _rows({k: means[k] for k in ("gpt2-vo-default", "default-vo-gpt2")})
    assert intervention_rows("charlm", tmp_path) == []
    (tmp_path / INTERVENTION_FILES["charlm"]).write_text(json.dumps(vo))
    assert intervention_rows("charlm", tmp_path) == vo
    out = vo_scale_effects({"charlm": (rows, intervention_rows("charlm", tmp_path))})
    table = intervention_table(out, row="{base} <- {vo_scale}")
    assert table.header == INTERVENTION_HEADER and len(table.body) == 2
    row = dict(zip(table.header, table.body[0]))
    e = next(iter(out["charlm"].values()))  # rows follow the entries' order
    assert row["model"] == "character model" and row["share"].endswith("%")
    assert row["initialisation"] == f"{e['base']} <- {e['vo_scale']}" and e["base"] != e["vo_scale"]
    assert row["intervention [95 % CI]"].startswith(f"{e['d_vo']:+.4f} [")
    # the caption is the chapter's; its facts count the paired seeds, each count once
    assert table.caption is None and intervention_table(out, row="x", caption="c").caption == "c"
    assert intervention_table_facts(out) == {"n_seeds": [len(SEEDS)]}
    fewer = vo_scale_effects({"charlm": (rows, [r for r in vo if r["seed"] != SEEDS[-1]
                                               or r["recipe"]["init"] != "gpt2-vo-default"])})
    assert intervention_table_facts(fewer) == {"n_seeds": [len(SEEDS) - 1, len(SEEDS)]}
