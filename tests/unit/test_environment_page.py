"""probdr_lite.chapters.environment: the Environment page compares the installed versions with the lock."""

import importlib.metadata as metadata
import json
from pathlib import Path

import yaml

from probdr_lite.chapters import environment
from probdr_lite.presentation.figures import versions as page

ROOT = Path(__file__).resolve().parents[2]


def test_installed_versions_are_compared_with_the_lock(tmp_path):
    have = metadata.version("packaging")
    lock = tmp_path / "requirements-lock.txt"
    lock.write_text(f"# comment\npackaging=={have}\n    # via pytest\nno-such-package-probdr==1.0\n"
                    "never-here==9.9 ; sys_platform == 'no-such-os'\n")
    rows = {r.name: r for r in environment.compare(lock)}
    assert set(rows) == {"packaging", "no-such-package-probdr"}  # the pin for another OS does not apply
    assert rows["packaging"].matches and rows["packaging"].installed == have
    assert not rows["no-such-package-probdr"].matches and rows["no-such-package-probdr"].installed is None
    table = page.lock_table(lock)
    assert table.body == [["no-such-package-probdr", "1.0", "not installed"], ["packaging", have, have]]


def test_a_cpu_build_of_the_locked_release_counts_as_locked():
    assert environment.Row("torch", "2.14.1", "2.14.1+cpu").matches
    assert not environment.Row("torch", "2.14.1", "2.15.0").matches


def test_the_package_requirements_are_listed_with_their_purpose():
    body = page.requirements_table().body
    uses = {row[0]: row[1] for row in body}
    assert uses["numpy"] == "the notebooks" and uses["torch"] == "the notebooks"
    assert "building the book" in uses["jupyter-book"] and "the tests" in uses["pytest"]
    assert all(row[2] == metadata.version(row[0]) for row in body if row[2] != "not installed")


def test_the_page_is_in_the_table_of_contents_and_calls_the_package():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    assert "book/environment" in [c["file"] for c in toc["chapters"]]
    cells = json.loads((ROOT / "book" / "environment.ipynb").read_text())["cells"]
    code = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    assert "environment.summary_facts()" in code and "versions.lock_table()" in code
