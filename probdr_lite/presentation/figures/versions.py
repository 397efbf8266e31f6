"""The book's Environment page: the versions of :mod:`probdr_lite.chapters.environment` as tables.

:func:`summary_table` and :func:`differ_table` show :func:`probdr_lite.chapters.environment.summary_facts`: how many
pins of the lock the build installed at their versions, and which it did not. Their labels are :data:`LABELS`,
defined once (a missing one raises ``KeyError`` naming it)."""

from __future__ import annotations

from pathlib import Path

from probdr_lite.chapters.environment import compare, direct_requirements, find_lock, installed_version, use_rank
from probdr_lite.presentation.plotting import Table

__all__ = ["requirements_table", "lock_table", "summary_table", "differ_table", "LABELS"]

#: The labels of the page's tables.
LABELS = {
    "count": "packages",
    "pinned": "pinned by the lock for this platform",
    "match": "installed at the locked version",
    "differ": "installed at another version, or not installed",
    "package": "package",
    "locked": "locked",
    "installed": "installed",
    "missing": "not installed",
    "needed": "needed for",
    "installed_version": "installed version",
}


def requirements_table():
    """A :class:`~probdr_lite.presentation.plotting.Table` of the package's own requirements: what each is
    needed for, and the version installed."""
    rows = sorted(direct_requirements().items(), key=lambda kv: (use_rank(kv[1].split(", ")[0]), kv[0]))
    body = [[name, use, installed_version(name) or LABELS["missing"]] for name, use in rows]
    return Table([LABELS["package"], LABELS["needed"], LABELS["installed_version"]], body)


def lock_table(path: Path | None = None):
    """A :class:`~probdr_lite.presentation.plotting.Table` of every package the lock pins for this platform,
    with its locked and installed versions (``None`` when there is no lock)."""
    path = path or find_lock()
    if path is None:
        return None
    body = [[r.name, r.locked, r.installed or LABELS["missing"]] for r in compare(path)]
    return Table([LABELS["package"], LABELS["locked"], LABELS["installed"]], body)


def summary_table(facts: dict):
    """The counts of :func:`probdr_lite.chapters.environment.summary_facts` as a
    :class:`~probdr_lite.presentation.plotting.Table`: the pins that apply to this platform, those installed at their
    locked version and the others (all 0 without a lock)."""
    body = [[LABELS[key], str(facts[n])] for key, n in (("pinned", "n"), ("match", "n_match"), ("differ", "n_differ"))]
    return Table(["", LABELS["count"]], body)


def differ_table(facts: dict):
    """The packages of :func:`probdr_lite.chapters.environment.summary_facts` whose installed version is not the
    locked one, with both versions (a table with no rows when every pin matches, or there is no lock)."""
    body = [[d["name"], d["locked"], d["installed"] if d["present"] else LABELS["missing"]] for d in facts["differ"]]
    return Table([LABELS["package"], LABELS["locked"], LABELS["installed"]], body)
