"""tools/package_weight.py: the count of prose words in the package's string literals, on a module written here
whose words are counted by hand, and the line measure on the real package against ``wc -l``'s rule."""

import subprocess
import sys
from pathlib import Path

from tests.tool_modules import tool

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "package_weight.py"
PW = tool("package_weight")

SOURCE = '''"""A module docstring of many words that is not counted."""
def f(x):
    """A function docstring, also not counted at all."""
    label = "three words only"
    caption = "the four words here"
    mixed = "x = 3, 4 and 5 items"
    if x < 0:
        raise ValueError(f"x must be at least 0; got {x!r} today")
    describe(x, "A figure of the toy, coloured by position.")
    return f"{x} points moved past the line"
'''


def test_prose_words_counts_by_hand():
    c = PW.prose_words(SOURCE)
    # "the four words here" (4) + "x = 3, 4 and 5 items" (x, and, items: 3) + the f-string (its slot, a word, and
    # points moved past the line: 6)
    assert c["other"] == 4 + 3 + 6
    # "x must be at least 0; got {x!r} today": x must be at least got, the slot, today
    assert c["raise"] == 8
    assert c["describe"] == 8


def test_words_inside_inline_maths_are_counted_and_can_be_left_out():
    src = 'C = "the energy $\\\\tfrac12 \\\\lVert X \\\\rVert_F^2$ of a reading"\n'
    # outside the maths: the, energy, of, a, reading (5); inside: tfrac, lVert, X, rVert and F (the underscore ends a run)
    assert PW.prose_words(src)["other"] == 5 + 5
    assert PW.prose_words(src, maths=False)["other"] == 5


def test_a_literal_of_three_words_and_docstrings_are_not_prose():
    assert sum(PW.prose_words('"""Many words in a docstring here."""\nA = "three words only"\n').values()) == 0


def test_lines_follow_the_files(tmp_path):
    pkg = tmp_path / "probdr_lite"
    (pkg / "presentation" / "figures").mkdir(parents=True)
    (pkg / "presentation" / "live").mkdir()
    (pkg / "experiments").mkdir()
    (pkg / "chapters").mkdir()
    (pkg / "presentation" / "figures" / "a.py").write_text("x = 1\ny = 2\n")
    (pkg / "presentation" / "live" / "live.js").write_text("a;\nb;\nc;\n")
    (pkg / "presentation" / "plotting.py").write_text("p = 1\n")
    (pkg / "maths.py").write_text("m = 1\nn = 2\no = 3\nq = 4\n")
    (pkg / "experiments" / "run.py").write_text("r = 1\n")
    (pkg / "chapters" / "page.py").write_text("c = 1\nd = 2\n")
    w = PW.weight(pkg)
    assert (w["presentation_lines"], w["core_lines"], w["experiments_lines"], w["chapters_lines"]) == (6, 4, 1, 2)


def test_the_script_runs():
    out = subprocess.run([sys.executable, str(TOOL), "--files"], capture_output=True, text=True, check=True).stdout
    assert "prose words under probdr_lite/presentation:" in out and "times" in out
