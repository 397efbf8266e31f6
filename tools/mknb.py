"""Write a chapter notebook from a plain-text source (``# %%`` / ``# %% [markdown]`` cells).

Authoring notebooks as JSON by hand is error-prone, so chapters can be drafted in
the "percent" format and converted with::

    python tools/mknb.py book/src/data.py book/data.ipynb

The result has no outputs and starts with the Colab cell
(``probdr_lite._notebooks.fix`` is applied). Cell tags go on the marker line:
``# %% tags=["hide-input"]``.
"""

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from probdr_lite._notebooks import fix  # noqa: E402

MARKER = re.compile(r"^# %%(?P<md> \[markdown\])?(?:\s+tags=(?P<tags>\[.*\]))?\s*$")


def convert(src: Path, dst: Path) -> None:
    cells, kind, tags, lines = [], None, [], []

    def flush():
        if kind is None:
            return
        text = "\n".join(lines).strip("\n")
        if kind == "markdown":
            text = "\n".join(l[2:] if l.startswith("# ") else l.lstrip("#") for l in text.split("\n"))
        cell = {"cell_type": kind, "metadata": {"tags": tags} if tags else {}, "source": text}
        if kind == "code":
            cell.update(outputs=[], execution_count=None)
        cells.append(cell)

    for line in src.read_text(encoding="utf-8").split("\n"):
        m = MARKER.match(line)
        if m:
            flush()
            kind = "markdown" if m.group("md") else "code"
            tags = json.loads(m.group("tags")) if m.group("tags") else []
            lines = []
        elif kind is not None:
            lines.append(line)
    flush()
    nb = {"cells": cells, "metadata": {"kernelspec": {}, "language_info": {"name": "python"}},
          "nbformat": 4, "nbformat_minor": 4}
    dst.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    fix(dst)


if __name__ == "__main__":
    convert(Path(sys.argv[1]), Path(sys.argv[2]))
