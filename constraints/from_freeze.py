"""Turn a published `pip freeze` of a hosted notebook service into a pip constraints file.

    python constraints/from_freeze.py FREEZE.txt "HEADER LINE" ... > constraints/NAME.txt

Each `name==version` line is kept as it is; a `name @ URL` line becomes `name==version`
when the URL ends in a wheel or sdist file name that carries the version (Colab installs
torch and torchvision from such URLs); a line from a VCS URL carries no version and is kept
as a comment, since no version can be compared against it. The file can be used as it is:
`pip install -c constraints/NAME.txt .` resolves as that service would.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from urllib.parse import unquote

_ARCHIVE = re.compile(r"/(?P<dist>[A-Za-z0-9_.]+?)-(?P<version>\d[^-/]*?)(?:-[^/]*\.whl|\.tar\.gz|\.zip)(?:#.*)?$")


def pins(freeze: str) -> list[str]:
    """The constraint lines (and comments for unversioned entries) for one `pip freeze` text."""
    out = []
    for raw in freeze.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if "==" in line and " @ " not in line:
            out.append(line)
            continue
        name, _, url = (part.strip() for part in line.partition(" @ "))
        match = _ARCHIVE.search(unquote(url))
        if match and not url.startswith("git+"):
            out.append(f"{name}=={match.group('version')}")
        else:
            out.append(f"# {name}: installed from {url.split('://')[0]} with no version to compare")
    return out


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    freeze = Path(argv[0]).read_text(encoding="utf-8")
    for header in argv[1:]:
        print(f"# {header}")
    print("\n".join(pins(freeze)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
