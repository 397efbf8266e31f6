"""The Environment page's opening paragraph: facts from probdr_lite/chapters/environment.py, shown as tables.

The facts of :func:`~probdr_lite.chapters.environment.summary_facts` are checked against locks written here, whose
pins match, differ from or miss the installed versions by construction, and against a checkout without a lock (as
on Colab, where the package is installed from git and the notebook runs in ``/content``). The last tests check
the page's tables of those facts (:func:`probdr_lite.presentation.figures.versions.summary_table` and
``differ_table``) and that the page's sentences are the author's Markdown.
"""

import importlib.metadata as metadata
import platform
import sys
from pathlib import Path

import pytest

from probdr_lite.chapters import environment as E
from probdr_lite.presentation.figures import versions as F


ROOT = Path(__file__).resolve().parents[2]
CHAPTER = ROOT / "book" / "src" / "environment.py"
PACKAGING, PYTEST = metadata.version("packaging"), metadata.version("pytest")


def lock(folder: Path, text: str, name: str = E.LOCK_NAME) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def colab(tmp_path, monkeypatch):
    """A package installed away from any checkout, and a notebook running in a folder without a lock."""
    monkeypatch.setattr(E, "ROOT", tmp_path / "site-packages")
    (tmp_path / "content").mkdir()
    monkeypatch.chdir(tmp_path / "content")
    assert E.find_lock() is None


def examples(tmp_path):
    """The facts of a build with a lock: every pin installed, one differing, two differing (one not installed)."""
    return {
        "all": E.summary_facts(lock(tmp_path / "all", f"packaging=={PACKAGING}\npytest=={PYTEST}\n")),
        "one": E.summary_facts(lock(tmp_path / "one", f"packaging=={PACKAGING}\nno-such-package-probdr==1.0\n")),
        "two": E.summary_facts(lock(tmp_path / "two", f"packaging=={PACKAGING}\npytest==0.0.1\nno-such-probdr==2\n")),
    }


# ---------------------------------------------------------------------------------------------------------------------
# The facts


def test_summary_facts_name_the_platform_of_the_build(monkeypatch, tmp_path):
    f = E.summary_facts(lock(tmp_path, ""))
    assert f["implementation"].lower() == sys.implementation.name
    assert f["python_version"] == "{}.{}.{}".format(*sys.version_info[:3])
    assert f["machine"] == platform.uname().machine
    for system, name in (("Linux", "Linux"), ("Windows", "Windows"), ("Darwin", "macOS")):
        monkeypatch.setattr(platform, "system", lambda: system)
        assert E.summary_facts(lock(tmp_path, ""))["system"] == name


def test_summary_facts_count_the_pins_that_differ(tmp_path):
    path = lock(tmp_path, f"# comment\npackaging=={PACKAGING}\npytest==0.0.1\nno-such-package-probdr==1.0\n"
                          "never-here==9.9 ; sys_platform == 'no-such-os'\n", name="lock-for-this-build.txt")
    f = E.summary_facts(path)
    assert f["has_lock"] and f["lock"] == "lock-for-this-build.txt"
    assert (f["n"], f["n_match"], f["n_differ"]) == (3, 1, 2)  # the pin for another OS does not count
    assert not f["all_match"]
    assert f["differ"] == [{"name": "no-such-package-probdr", "locked": "1.0", "installed": None, "present": False},
                           {"name": "pytest", "locked": "0.0.1", "installed": PYTEST, "present": True}]


def test_summary_facts_with_one_differing_package(tmp_path):
    f = E.summary_facts(lock(tmp_path, f"packaging==0.0.1\npytest=={PYTEST}\n"))
    assert (f["n"], f["n_match"], f["n_differ"]) == (2, 1, 1) and not f["all_match"]
    assert f["differ"] == [{"name": "packaging", "locked": "0.0.1", "installed": PACKAGING, "present": True}]


def test_summary_facts_when_everything_matches(tmp_path):
    f = E.summary_facts(lock(tmp_path, f"packaging=={PACKAGING}\npytest=={PYTEST}\n"))
    assert f["has_lock"] and f["all_match"]
    assert (f["n"], f["n_match"], f["n_differ"], f["differ"]) == (2, 2, 0, [])


def test_summary_facts_without_a_lock_as_on_colab(colab):
    f = E.summary_facts()
    assert not f["has_lock"] and f["lock"] == E.LOCK_NAME
    assert (f["n"], f["n_match"], f["n_differ"], f["differ"]) == (0, 0, 0, [])
    assert not f["all_match"]  # nothing was compared
    assert F.lock_table() is None


def test_summary_facts_find_the_lock_of_the_checkout():
    f = E.summary_facts()
    assert f["has_lock"] and f["lock"] == E.LOCK_NAME
    assert f["n"] == len(E.compare(E.LOCK)) == f["n_match"] + f["n_differ"]


# ---------------------------------------------------------------------------------------------------------------------
# The page's tables of those facts


def test_the_summary_tables_show_the_counts_and_the_packages_that_differ(tmp_path):
    """The page states its summary as two tables of summary_facts: the counts, and the pins that were not met."""
    assert F.__all__ == ["requirements_table", "lock_table", "summary_table", "differ_table", "LABELS"]
    f = E.summary_facts(lock(tmp_path, f"packaging==0.0.1\npytest=={PYTEST}\nno-such-package-probdr==1.0\n"))
    counts = F.summary_table(f)
    assert counts.body == [[F.LABELS["pinned"], "3"], [F.LABELS["match"], "1"], [F.LABELS["differ"], "2"]]
    assert F.differ_table(f).body == [["no-such-package-probdr", "1.0", F.LABELS["missing"]],
                                      ["packaging", "0.0.1", PACKAGING]]
    every = E.summary_facts(lock(tmp_path / "every", f"packaging=={PACKAGING}\npytest=={PYTEST}\n"))
    assert F.summary_table(every).body[1:] == [[F.LABELS["match"], "2"], [F.LABELS["differ"], "0"]]
    assert F.differ_table(every).body == []


def test_the_summary_tables_without_a_lock_as_on_colab(colab):
    f = E.summary_facts()
    assert [row[1] for row in F.summary_table(f).body] == ["0", "0", "0"] and F.differ_table(f).body == []


def test_a_missing_label_raises_naming_it(monkeypatch, tmp_path):
    f = E.summary_facts(lock(tmp_path, f"packaging=={PACKAGING}\n"))
    monkeypatch.delitem(F.LABELS, "match")
    with pytest.raises(KeyError, match="match"):
        F.summary_table(f)


def test_the_page_assembles_no_sentence():
    """The page's words are in its Markdown cells: no template, no Markdown displayed by code."""
    text = CHAPTER.read_text(encoding="utf-8")
    assert "fill(" not in text and "display(Markdown" not in text
    assert "{glue:text}`python`" in text and "versions.summary_table(facts)" in text
