"""Housekeeping a reader notices: no machine's paths in the repository, the licences, CITATION.cff,
and one place (_config.yml) for the repository's URL and branch."""

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.tool_modules import tool

ROOT = Path(__file__).resolve().parents[2]
notebooks = tool("notebooks")  # tools/notebooks.py: the repository's notebook tooling


def tracked_text_files():
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    for name in out.decode().split("\0"):
        path = ROOT / name
        if name and path.is_file() and not name.endswith((".gz", ".png", ".json.gz")):
            try:
                yield name, path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue


# home folders (home/NAME, Users/NAME), root's, C:\Users\..., and this project's own machines' work, tmp and opt folders
# (the roots are joined here, not written out, so that no path checker flags this file's own pattern)
_ROOTS = (r"home/\w", r"Users/\w", r"root/", r"work/", r"tmp/\w", r"opt/\w")
MACHINE_PATH = re.compile(r"(?<![\w.:/-])(" + "|".join("/" + root for root in _ROOTS) + r"|[A-Z]:\\\\Users)")


def test_no_absolute_machine_paths_in_the_repository():
    this = Path(__file__).relative_to(ROOT).as_posix()
    bad = [f"{name}:{i}: {line.strip()[:100]}"
           for name, text in tracked_text_files() if name != this and name != "package-lock.json"
           for i, line in enumerate(text.splitlines(), 1) if MACHINE_PATH.search(line)]
    assert not bad, "\n".join(bad)


def test_the_path_check_finds_a_machine_path():
    assert MACHINE_PATH.search('MNIST = Path("' + "/wo" + 'rk/shared/data/mnist")')  # split so no checker flags it
    assert MACHINE_PATH.search("Run from the repository root (`/" + "home/ada/probdr`)")
    assert not MACHINE_PATH.search("https://example.org/work/x and ../shared/data and _build/html")


def test_the_repository_url_is_written_only_where_it_is_checked():
    """_config.yml sets it; every other file that names it is compared with _config.yml by a test."""
    url = notebooks.repository_url()
    owner = url.split("github.com/", 1)[1].split("/")[0]
    checked = {"_config.yml", "README.md", "pyproject.toml", "CITATION.cff", "requirements-lock.txt"}
    naming = {name for name, text in tracked_text_files()
              if url in text or f"{owner}.github.io" in text}
    # the Colab cell of each chapter source and its notebook: tests/unit/test_notebooks.py compares it
    naming -= {n for n in naming if n.startswith("book/") and n.endswith((".ipynb", ".py"))}
    # the reader notebooks: generated from _config.yml, and test_notebooks.py compares them with the generation
    naming -= {n for n in naming if n.startswith(notebooks.reader_folder() + "/")}
    assert naming <= checked, naming - checked


def test_readme_badges_are_generated_from_config():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- badges:[^\n]*-->\n(.*?)\n<!-- /badges -->", readme, re.S)
    assert block, "README.md lost its badges block"
    assert block.group(1) == notebooks.readme_badges(), "run: python tools/notebooks.py badges"


def test_licences_for_code_and_text():
    assert "MIT License" in (ROOT / "LICENSE").read_text(encoding="utf-8")
    text = (ROOT / "LICENSE-text.md").read_text(encoding="utf-8")
    assert "CC BY-SA 4.0" in text and "creativecommons.org/licenses/by-sa/4.0" in text
    footer = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["html"]["extra_footer"]
    assert "CC BY-SA 4.0" in footer and "MIT" in footer


def test_mnist_is_attributed_where_the_digits_are_shown():
    src = (ROOT / "book" / "src" / "data.py").read_text(encoding="utf-8")
    shown = src.index("digit_grid(images")
    note = src.index("Yann LeCun, Corinna Cortes and Christopher J. C. Burges")
    assert shown < note and "CC BY-SA 3.0" in src[note:note + 400]


CFF_REQUIRED = {"cff-version", "message", "title", "authors"}
CFF_KEYS = CFF_REQUIRED | {"abstract", "commit", "contact", "date-released", "doi", "identifiers", "keywords",
                           "license", "license-url", "preferred-citation", "references", "repository",
                           "repository-artifact", "repository-code", "type", "url", "version"}


def test_citation_cff():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert CFF_REQUIRED <= set(cff) and set(cff) <= CFF_KEYS, set(cff) - CFF_KEYS
    assert cff["cff-version"] == "1.2.0" and cff["type"] in ("software", "dataset")
    assert cff["authors"] and all(("name" in a) or ("family-names" in a) for a in cff["authors"])
    assert cff["repository-code"] == notebooks.repository_url()
    assert cff["url"] == notebooks.pages_url()
    assert set(cff["license"]) == {"MIT", "CC-BY-SA-4.0"}
    import tomllib
    assert cff["version"] == tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    for ref in cff.get("references", []):
        assert {"type", "title", "authors"} <= set(ref)
