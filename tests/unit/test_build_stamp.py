"""The digest that lets ``make test`` reuse the build ``make book`` left (tools/build_book.py): it changes with
everything the build reads and with nothing it does not read."""

from __future__ import annotations

import subprocess

import pytest

from tests.tool_modules import tool

build_book = tool("build_book")


@pytest.fixture
def checkout(tmp_path):
    """A small git checkout: a chapter, the package, a test, an ignored build folder."""
    for name, text in {"book/intro.md": "# Intro\n", "probdr_lite/graphs.py": "K = 5\n", "_config.yml": "title: x\n",
                       "tests/unit/test_x.py": "def test_x(): pass\n", ".gitignore": "_build/\n",
                       "_build/html/index.html": "<html></html>\n"}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "add", "-A"], cwd=tmp_path, check=True)
    return tmp_path


@pytest.mark.parametrize("name", ["book/intro.md", "probdr_lite/graphs.py", "_config.yml"])
def test_an_edit_to_what_the_build_reads_changes_the_digest(checkout, name):
    before = build_book.inputs_digest(checkout)
    (checkout / name).write_text((checkout / name).read_text() + "# edited\n")
    assert build_book.inputs_digest(checkout) != before, name


def test_a_new_untracked_chapter_changes_the_digest(checkout):
    before = build_book.inputs_digest(checkout)
    (checkout / "book" / "new.md").write_text("# New\n")  # untracked, not ignored: the build reads it
    assert build_book.inputs_digest(checkout) != before


def test_a_rename_changes_the_digest(checkout):
    before = build_book.inputs_digest(checkout)
    (checkout / "book" / "intro.md").rename(checkout / "book" / "preface.md")
    subprocess.run(["git", "add", "-A"], cwd=checkout, check=True)
    assert build_book.inputs_digest(checkout) != before


def test_the_tests_and_the_build_output_do_not_change_the_digest(checkout):
    before = build_book.inputs_digest(checkout)
    (checkout / "tests" / "unit" / "test_x.py").write_text("def test_x(): assert True\n")
    (checkout / "_build" / "html" / "index.html").write_text("<html>rebuilt</html>\n")  # ignored by git
    assert build_book.inputs_digest(checkout) == before


def test_the_installed_packages_are_part_of_the_digest(checkout, tmp_path_factory, monkeypatch):
    before = build_book.inputs_digest(checkout)
    real = build_book.importlib.metadata.distributions
    info = tmp_path_factory.mktemp("site") / "fake-1.0.dist-info"  # outside the checkout
    info.mkdir()
    (info / "METADATA").write_text("Name: fake\nVersion: 1.0\n")

    def one_more(**kw):
        yield from real(**kw)
        yield build_book.importlib.metadata.PathDistribution(info)

    monkeypatch.setattr(build_book.importlib.metadata, "distributions", one_more)
    assert build_book.inputs_digest(checkout) != before
