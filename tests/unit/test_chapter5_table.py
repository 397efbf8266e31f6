"""Chapter 5's per-layer tables are unchanged by the move of the metrics pipeline into probdr_lite.metrics.

``tests/fixtures/chapter5_table.json`` holds the numbers chapter 5 prints (``layer_table`` of the paper's block on
all 10,000 images and ``metrics_table`` of the five variants on 2,000), computed by
``tests/fixtures/chapter5_table.py`` on main before the move (commit 03b59d8). The same script, run on this code,
must give the same numbers to 1e-6: the settings (5 neighbours, 5 folds, at most 2,000 points for the silhouette,
4 k-means restarts) and the seeds are the chapter's.
"""

import importlib.util
import json
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _script():
    spec = importlib.util.spec_from_file_location("chapter5_table", FIXTURES / "chapter5_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_chapter5_tables_are_unchanged():
    before = json.loads((FIXTURES / "chapter5_table.json").read_text())
    after = _script().chapter5_rows()
    assert set(after) == set(before) == {"full", "variants"}
    for table in before:
        assert len(after[table]) == len(before[table])
        for old, new in zip(before[table], after[table]):
            assert {k: new[k] for k in ("variant", "n", "layer")} == {k: old[k] for k in ("variant", "n", "layer")}
            for metric in ("knn_accuracy", "silhouette", "between_within", "kmeans_nmi"):
                assert new[metric] == pytest.approx(old[metric], abs=1e-6), (table, old["variant"], old["layer"],
                                                                             metric)
