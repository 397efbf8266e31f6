"""The book's Environment page: the versions of :mod:`probdr_lite.environment` as a paragraph and tables."""

from __future__ import annotations

import platform
from pathlib import Path

from probdr_lite.environment import LOCK_NAME, compare, direct_requirements, find_lock, installed_version, use_rank
from probdr_lite.plotting import Table

__all__ = ["summary_markdown", "requirements_table", "lock_table"]


def _platform_words() -> str:
    system = {"Darwin": "macOS"}.get(platform.system(), platform.system())
    return (f"{platform.python_implementation()} {platform.python_version()} "
            f"on {system} ({platform.machine()})")


def summary_markdown(path: Path | None = None) -> str:
    """One paragraph: the build's platform, and whether every package is at its locked version
    (the lock found by :func:`find_lock` unless ``path`` is given)."""
    path = path or find_lock()
    text = f"This copy of the book was built with {_platform_words()}."
    if path is None:
        return text + (f" No `{LOCK_NAME}` was found beside the package or the notebook (as on Colab), "
                       "so the versions below are simply the ones installed.")
    rows = compare(path)
    differ = [r for r in rows if not r.matches]
    n = len(rows)
    if not differ:
        return text + (f" All {n} packages that `{Path(path).name}` pins for this platform were installed "
                       "at exactly their locked versions.")
    return text + (f" {n - len(differ)} of the {n} packages that `{Path(path).name}` pins for this platform "
                   f"were installed at their locked versions; {len(differ)} "
                   f"{'was' if len(differ) == 1 else 'were'} not: "
                   + ", ".join(f"{r.name} ({r.installed or 'not installed'}, locked {r.locked})" for r in differ)
                   + ".")


def requirements_table():
    """A :class:`~probdr_lite.plotting.Table` of the package's own requirements: what each is
    needed for, and the version installed."""
    rows = sorted(direct_requirements().items(), key=lambda kv: (use_rank(kv[1].split(", ")[0]), kv[0]))
    body = [[name, use, installed_version(name) or "not installed"] for name, use in rows]
    return Table(["package", "needed for", "installed version"], body)


def lock_table(path: Path | None = None):
    """A :class:`~probdr_lite.plotting.Table` of every package the lock pins for this platform,
    with its locked and installed versions (``None`` when there is no lock)."""
    path = path or find_lock()
    if path is None:
        return None
    body = [[r.name, r.locked, r.installed or "not installed"] for r in compare(path)]
    return Table(["package", "locked", "installed"], body)
