"""The versions the book is built with: ``requirements-lock.txt`` against what is installed.

``make install`` installs the exact versions of ``requirements-lock.txt`` (``make lock``
re-resolves them from pyproject.toml's ranges). This module reads and compares
versions; :mod:`probdr_lite.presentation.figures.versions` turns them into the facts and tables of the
book's Environment page, whose sentences the page writes. The page is computed while the book is built, so the page always states the
versions of the build that produced it, and says so when an installed version differs from
the lock.

Needs ``packaging`` (a dependency of the book's build tools, and present on Colab).
"""

from __future__ import annotations

import importlib.metadata as metadata
import platform
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the checkout, above probdr_lite/chapters/
LOCK_NAME = "requirements-lock.txt"
LOCK = ROOT / LOCK_NAME
GROUPS = {None: "the notebooks", "book": "building the book", "lab": "JupyterLab", "test": "the tests"}

_PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[^\s;]+)\s*(?:;\s*(?P<marker>.+?))?\s*$")


@dataclass(frozen=True)
class Pin:
    """One line of the lock: an exact version, for the environments its marker selects."""

    name: str
    version: str
    marker: str | None = None

    def applies(self, environment: dict | None = None) -> bool:
        if self.marker is None:
            return True
        from packaging.markers import Marker

        return Marker(self.marker).evaluate(environment)


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def read_lock(path: Path = LOCK) -> list[Pin]:
    """Every pin of a lock file written by ``make lock`` (comments and blank lines skipped)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"lock file {path} not found: run `make lock` in a checkout")
    pins = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        match = _PIN.match(text)
        if not match:
            raise ValueError(f"{path.name}, line {number}: expected NAME==VERSION [; MARKER], got {text!r}")
        pins.append(Pin(_canonical(match["name"]), match["version"], match["marker"]))
    return pins


def pins_for(pins: list[Pin], environment: dict | None = None) -> dict[str, Pin]:
    """The pins that apply to one environment (default: this interpreter), by package name.

    A lock for several platforms may pin a package twice under exclusive markers; if two pins
    of one package both apply, the lock is broken and this raises.
    """
    chosen: dict[str, Pin] = {}
    for pin in pins:
        if pin.applies(environment):
            if pin.name in chosen:
                raise ValueError(f"{pin.name} is pinned twice for this environment: "
                                 f"{chosen[pin.name].version} and {pin.version}")
            chosen[pin.name] = pin
    return chosen


def installed_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


@dataclass(frozen=True)
class Row:
    name: str
    locked: str
    installed: str | None

    @property
    def matches(self) -> bool:
        if self.installed is None:
            return False
        from packaging.version import Version

        # a CPU-only PyTorch (2.14.1+cpu) is the locked release (2.14.1)
        return Version(self.installed).public == Version(self.locked).public


def find_lock() -> Path | None:
    """The lock of the checkout this package comes from, or of the one the notebook runs in.

    An editable install (``make install``) sits in its checkout; a regular one (Binder's) does
    not, but its notebooks run inside the checkout. On Colab there is none: ``None``.
    """
    cwd = Path.cwd().resolve()
    for folder in (ROOT, cwd, *cwd.parents):
        if (folder / LOCK_NAME).is_file():
            return folder / LOCK_NAME
    return None


def compare(path: Path = LOCK) -> list[Row]:
    """The lock's pins for this interpreter beside the installed versions, sorted by name."""
    here = pins_for(read_lock(path))
    return [Row(name, pin.version, installed_version(name)) for name, pin in sorted(here.items())]


def direct_requirements(dist: str = "probdr-lite") -> dict[str, str]:
    """{package: what for} of the package's own requirements (run time, or the extras that add it)."""
    from packaging.requirements import Requirement

    uses: dict[str, list[str]] = {}
    for text in metadata.requires(dist) or []:
        req = Requirement(text)
        extra = re.search(r"""extra\s*==\s*['"]([^'"]+)['"]""", str(req.marker or ""))
        use = GROUPS.get(extra.group(1) if extra else None, extra and f"the `{extra.group(1)}` extra")
        found = uses.setdefault(_canonical(req.name), [])
        if use not in found:
            found.append(use)
    return {name: ", ".join(sorted(found, key=use_rank)) for name, found in uses.items()}


def use_rank(use: str) -> int:
    order = list(GROUPS.values())
    return order.index(use) if use in order else len(order)


def summary_facts(path: Path | None = None) -> dict:
    """The facts of the page's opening paragraph: the build's platform, and how the installed versions compare with
    the lock found by :func:`find_lock` (unless ``path`` is given).

    ``implementation``, ``python_version``, ``system`` and ``machine`` name the platform; ``has_lock`` says whether a
    lock was found (on Colab none is) and ``lock`` is its file name (the one looked for when there is none); ``n`` of
    its pins apply to this platform, ``n_match`` of them at exactly the installed version and ``n_differ`` not
    (``all_match``); ``differ`` lists those, each with its ``name``, ``locked`` and ``installed``
    version, and whether it is installed at all (``present``). Without a lock the counts are 0 and ``all_match`` is
    False: nothing was compared.
    """
    path = path or find_lock()
    rows = compare(path) if path is not None else []
    differ = [{"name": r.name, "locked": r.locked, "installed": r.installed, "present": r.installed is not None}
              for r in rows if not r.matches]
    return {
        "implementation": platform.python_implementation(),
        "python_version": platform.python_version(),
        "system": {"Darwin": "macOS"}.get(platform.system(), platform.system()),
        "machine": platform.machine(),
        "has_lock": path is not None,
        "lock": Path(path).name if path is not None else LOCK_NAME,
        "n": len(rows),
        "n_match": len(rows) - len(differ),
        "n_differ": len(differ),
        "all_match": path is not None and not differ,
        "differ": differ,
    }
