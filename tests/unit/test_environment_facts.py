"""The Environment page's opening paragraph: facts from probdr_lite/chapters/environment.py, templates in the chapter.

The facts of :func:`~probdr_lite.chapters.environment.summary_facts` are checked against locks written here, whose
pins match, differ from or miss the installed versions by construction, and against a checkout without a lock (as
on Colab, where the package is installed from git and the notebook runs in ``/content``). The last tests read
``book/src/environment.py``: every piece of every template (each branch of each ``... if facts["x"] else ...``) is
filled from such facts, a template chooses only on boolean facts, and the chapter's cell, run on those facts, says
what the lock and the installed versions say.
"""

import ast
import importlib.metadata as metadata
import platform
import sys
from pathlib import Path

import IPython.display
import pytest

from probdr_lite.chapters import environment as E
from probdr_lite.presentation.figures import versions as F

from .chapter_calls import chapter_calls, check_template, source_cells

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
# The chapter's templates


def summary_cell() -> str:
    """The source of the chapter's cell that states the summary."""
    lines = CHAPTER.read_text(encoding="utf-8").splitlines(keepends=True)
    cells = source_cells(CHAPTER)
    index = next(i for i, c in enumerate(cells) if "summary_facts" in ast.unparse(c))
    starts = [i for i, line in enumerate(lines) if line.startswith("# %%")] + [len(lines)]
    return "".join(lines[starts[index] + 1:starts[index + 1]])


def test_the_chapter_fills_its_summary_from_the_package_facts():
    """The facts are bound by one call of summary_facts, and the packages that differ are each one item of its
    ``differ`` list; the module returns no sentence."""
    assert F.__all__ == ["requirements_table", "lock_table"] and "summary_facts" in dir(E)
    tree = ast.parse(summary_cell())
    bound = {t.id: ast.unparse(n.value) for n in ast.walk(tree) if isinstance(n, ast.Assign) for t in n.targets}
    assert bound["facts"] == "environment.summary_facts()"
    loops = [(ast.unparse(c.target), ast.unparse(c.iter)) for c in ast.walk(tree) if isinstance(c, ast.comprehension)]
    assert loops == [("d", "facts['differ']")]
    calls = chapter_calls("environment", "fill")
    assert sorted(ast.unparse(c.args[1]) for c in calls) == ["d", "facts"]


def test_every_template_of_the_chapter_fills_from_its_facts(tmp_path, colab):
    facts = {**examples(tmp_path), "no lock": E.summary_facts()}
    seen = set()
    for call in chapter_calls("environment", "fill"):
        given = ast.unparse(call.args[1])
        cases = ([d for f in facts.values() for d in f["differ"]] if given == "d" else
                 [{**f, "differ": "some text"} for f in facts.values()])
        for f in cases:
            choices = {ast.unparse(n): f[n.slice.value] for n in ast.walk(call.args[0]) if isinstance(n, ast.Subscript)}
            check_template(call, f, choices)
            seen.update(choices.items())
    branches = {(c, v) for c in ('d["present"]', 'facts["has_lock"]', 'facts["all_match"]')
                for v in (True, False)}
    assert {(c.replace("'", '"'), v) for c, v in seen} == branches  # the examples take every branch


def run_summary_cell(monkeypatch) -> str:
    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj.data))
    exec(compile(summary_cell(), str(CHAPTER), "exec"), {})
    assert len(shown) == 1
    return shown[0]


def test_the_chapter_says_what_the_lock_says(tmp_path, monkeypatch):
    path = lock(tmp_path, f"packaging==0.0.1\npytest=={PYTEST}\nno-such-package-probdr==1.0\n")
    monkeypatch.setattr(E, "ROOT", tmp_path)
    text = run_summary_cell(monkeypatch)
    built = f"{platform.python_implementation()} {platform.python_version()}"
    assert text.startswith(f"This copy of the book was built with {built} on ")
    # the verbs agree with the counts: "1 of the 3 ... was installed", "2 ... were not"
    assert f"1 of the 3 packages that `{path.name}` pins for this platform was installed at their locked" in text
    assert text.endswith(f"; 2 were not: no-such-package-probdr (not installed, locked 1.0), "
                         f"packaging ({PACKAGING}, locked 0.0.1).")
    lock(tmp_path, f"packaging==0.0.1\npytest=={PYTEST}\n")
    assert run_summary_cell(monkeypatch).endswith(f"; 1 was not: packaging ({PACKAGING}, locked 0.0.1).")
    lock(tmp_path, f"packaging=={PACKAGING}\npytest=={PYTEST}\nno-such-package-probdr==1.0\n")
    text = run_summary_cell(monkeypatch)
    assert f"2 of the 3 packages that `{path.name}` pins for this platform were installed at their locked" in text
    assert text.endswith("; 1 was not: no-such-package-probdr (not installed, locked 1.0).")
    lock(tmp_path, f"packaging=={PACKAGING}\npytest=={PYTEST}\n")
    assert run_summary_cell(monkeypatch).endswith(
        f"All 2 packages that `{path.name}` pins for this platform were installed at exactly their locked versions.")


def test_the_chapter_works_without_a_lock_as_on_colab(colab, monkeypatch):
    text = run_summary_cell(monkeypatch)
    assert f"No `{E.LOCK_NAME}` was found" in text and "packages" not in text
