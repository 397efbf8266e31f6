"""The shared input checks: each names the parameter and what it must be, and lets good input through unchanged."""

import pytest

from probdr_lite._validation import check_length, check_result
from probdr_lite.objections import metrics_by_variant


def test_check_result_names_the_parameter_and_the_producer_read_from_the_function():
    with pytest.raises(TypeError, match=r"metrics must be the dict returned by "
                                        r"probdr_lite\.objections\.metrics_by_variant; got list"):
        check_result([], "metrics", metrics_by_variant)
    with pytest.raises(ValueError, match="got an empty dict"):
        check_result({}, "metrics", metrics_by_variant)
    with pytest.raises(ValueError, match=r"it lacks \['b'\]"):
        check_result({"a": 1}, "sweep", "a.sweep", keys=("a", "b"))
    good = {"a": 1, "b": 2}
    assert check_result(good, "sweep", "a.sweep", keys=("a", "b")) is good
    assert check_result([], "rows", "m.f", kind=list, nonempty=False) == []


def test_check_length_states_the_count_and_what_each_entry_is_for():
    with pytest.raises(ValueError, match="gaps must have 3 entries, one per kappa_2; got 2"):
        check_length([1, 2], "gaps", 3, "kappa_2")
    assert check_length((1, 2, 3), "gaps", 3, "kappa_2") == (1, 2, 3)
