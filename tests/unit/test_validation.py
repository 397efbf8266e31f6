"""The shared input checks: each names the parameter and what it must be, and lets good input through unchanged."""

import pytest

from probdr_lite._validation import check_choice, check_length, check_result, check_text
from probdr_lite.chapters.objections import metrics_by_variant


def test_check_result_names_the_parameter_and_the_producer_read_from_the_function():
    with pytest.raises(TypeError, match=r"metrics must be the dict returned by "
                                        r"probdr_lite\.chapters\.objections\.metrics_by_variant; got list"):
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


def test_check_choice_takes_strings_or_numbers_but_never_one_for_the_other():
    assert check_choice("fixed", "axes", ("fixed", "follow")) == "fixed"
    assert check_choice(16, "bits", (8, 16)) == 16
    with pytest.raises(ValueError, match="bits must be one of 8, 16; got 12"):
        check_choice(12, "bits", (8, 16))
    with pytest.raises(ValueError, match="bits must be one of 8, 16; got '8'"):
        check_choice("8", "bits", (8, 16))
    with pytest.raises(ValueError, match="axes must be one of 'fixed', 'follow'; got 1"):
        check_choice(1, "axes", ("fixed", "follow"))


def test_check_text_wants_a_string_for_every_key_and_no_other_key():
    words = {"caption": "A {n}-point figure", "alt": "the points"}
    assert check_text(words, "text", ("caption", "alt")) is words
    with pytest.raises(ValueError, match=r"text must be a dict of strings with exactly the keys \['caption', 'alt'\]; "
                                         r"got \['caption'\]"):
        check_text({"caption": "A figure"}, "text", ("caption", "alt"))
    with pytest.raises(ValueError, match=r"got \['alt', 'caption', 'extra'\]"):
        check_text({**words, "extra": "more"}, "text", ("caption", "alt"))
    with pytest.raises(ValueError, match=r"got a value that is not a string \(\['alt'\]\)"):
        check_text({"caption": "A figure", "alt": 3}, "text", ("caption", "alt"))
    with pytest.raises(ValueError, match="got list"):
        check_text(["caption", "alt"], "text", ("caption", "alt"))
