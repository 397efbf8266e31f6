"""The W_V W_O intervention's statistics, on synthetic rows whose paired differences are known by construction.

Independent answers: scipy's paired t-test (ttest_rel) on the constructed values, Holm's rule over the four one-sided
sign claims of two tests written out (each sign claim's one-sided p is half the two-sided p_i; the two claims against
the means have p above 1/2; sorted p_(1) <= p_(2): 4 p_(1) / 2 and max(4 p_(1) / 2, 3 p_(2) / 2)), the shift and share
by arithmetic, and
Fieller's set by its definition (the ratios a paired t-test of shift - R gap does not reject).
"""

import json

import numpy as np
import pytest
from scipy import stats

from probdr_lite.experiments import validate_results
from probdr_lite.experiments.families import in_set, intervention_table

from .test_recipes import _row

SEEDS = (0, 1, 2)
NOISE = {"gpt2": (0.004, -0.001, -0.003), "default": (-0.002, 0.003, -0.001),
         "gpt2-vo-default": (0.001, 0.002, -0.003), "default-vo-gpt2": (-0.003, 0.0, 0.003)}
MEANS = {"gpt2": 0.06, "default": -0.04, "gpt2-vo-default": -0.02, "default-vo-gpt2": -0.035}


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


def _tables(means=MEANS):
    rows = _rows({k: means[k] for k in ("gpt2", "default")})
    vo = _rows({k: means[k] for k in ("gpt2-vo-default", "default-vo-gpt2")})
    return rows, vo


def test_shift_share_and_holm_against_scipy():
    rows, vo = _tables()
    out = {e["scheme"]: e for e in intervention_table({"charlm": (rows, vo)})}
    p = {}
    for scheme, (base, other) in (("gpt2-vo-default", ("gpt2", "default")), ("default-vo-gpt2", ("default", "gpt2"))):
        e = out[scheme]
        assert (e["base"], e["vo_scale"]) == (base, other) and e["seeds"] == list(SEEDS)
        shift = _d(scheme, MEANS[scheme]) - _d(base, MEANS[base])
        assert e["shift"] == pytest.approx(shift.mean(), abs=1e-12)
        assert e["d_vo"] == pytest.approx(_d(scheme, MEANS[scheme]).mean(), abs=1e-12)
        p[scheme] = stats.ttest_rel(_d(scheme, MEANS[scheme]), _d(base, MEANS[base])).pvalue
        assert e["pvalue"] == pytest.approx(p[scheme], rel=1e-9)
        gap = _d(other, MEANS[other]) - _d(base, MEANS[base])
        assert e["gap"] == pytest.approx(gap.mean(), abs=1e-12) and e["share"] == pytest.approx(shift.mean() / gap.mean())
        half = stats.t.ppf(0.975, 2) * shift.std(ddof=1) / np.sqrt(3)
        assert e["ci"] == pytest.approx((shift.mean() - half, shift.mean() + half), abs=1e-12)
        # Fieller's set, by its definition: R is in it when the paired t-test of shift - R gap does not reject
        for r in np.linspace(-3, 3, 61):
            accepted = stats.ttest_1samp(shift - r * gap, 0.0).pvalue >= 0.05
            if abs(stats.ttest_1samp(shift - r * gap, 0.0).pvalue - 0.05) > 1e-6:
                assert in_set(e["share_pieces"], r) == accepted
    lo, hi = sorted(p, key=p.get)
    assert out[lo]["adjusted_pvalue"] == pytest.approx(4 * p[lo] / 2, rel=1e-9)
    assert out[hi]["adjusted_pvalue"] == pytest.approx(max(4 * p[lo] / 2, 3 * p[hi] / 2), rel=1e-9)
    # gpt2-vo-default moves 0.08 of the 0.10 gap towards default; default-vo-gpt2 only 0.005 of its +0.10 gap
    assert out["gpt2-vo-default"]["share"] == pytest.approx(0.8, abs=0.05)
    assert abs(out["default-vo-gpt2"]["share"]) < 0.1


def test_refuses_missing_recipes_and_wrong_rows():
    rows = _rows({"gpt2": 0.06})
    vo = _rows({"gpt2-vo-default": 0.0})
    with pytest.raises(ValueError, match="at least 2 seeds"):
        intervention_table({"charlm": (rows, vo)})
    with pytest.raises(ValueError, match="task 'vit'"):
        intervention_table({"vit": (rows, vo)})
    with pytest.raises(ValueError, match="alpha"):
        intervention_table({"charlm": (rows, vo)}, alpha=1.5)


def test_intervention_family_table_and_rows_file(tmp_path):
    from probdr_lite.experiments.files import INTERVENTION_FILES, intervention_rows
    from probdr_lite.presentation.figures.recipes import (INTERVENTION_FAMILY_HEADER, SCHEME_LABELS,
                                                          intervention_family_table)

    rows, vo = _tables()
    assert intervention_rows("charlm", tmp_path) == []
    (tmp_path / INTERVENTION_FILES["charlm"]).write_text(json.dumps(vo))
    assert intervention_rows("charlm", tmp_path) == vo
    out = intervention_table({"charlm": (rows, intervention_rows("charlm", tmp_path))})
    table = intervention_family_table(out)
    assert table.header == list(INTERVENTION_FAMILY_HEADER.values()) and len(table.body) == 2
    for e, body in zip(out, table.body):  # rows follow the entries' order
        row = dict(zip(INTERVENTION_FAMILY_HEADER, body))
        assert row["model"] == "character model" and row["share"].endswith("%")
        assert row["scheme"] == SCHEME_LABELS[e["scheme"]]
        assert row["shift"] == f"{e['shift']:+.4f}" and row["seeds"] == str(len(SEEDS))
    assert table.caption is None and intervention_family_table(out, caption="c").caption == "c"
    with pytest.raises(ValueError, match="scheme"):
        intervention_family_table([{**out[0], "scheme": "other"}])
