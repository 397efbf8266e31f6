"""The book's Environment page: the versions of :mod:`probdr_lite.chapters.environment` as tables (the facts of its
opening paragraph are :func:`probdr_lite.chapters.environment.summary_facts`)."""

from __future__ import annotations

from pathlib import Path

from probdr_lite.chapters.environment import compare, direct_requirements, find_lock, installed_version, use_rank
from probdr_lite.presentation.plotting import Table

__all__ = ["requirements_table", "lock_table"]


def requirements_table():
    """A :class:`~probdr_lite.presentation.plotting.Table` of the package's own requirements: what each is
    needed for, and the version installed."""
    rows = sorted(direct_requirements().items(), key=lambda kv: (use_rank(kv[1].split(", ")[0]), kv[0]))
    body = [[name, use, installed_version(name) or "not installed"] for name, use in rows]
    return Table(["package", "needed for", "installed version"], body)


def lock_table(path: Path | None = None):
    """A :class:`~probdr_lite.presentation.plotting.Table` of every package the lock pins for this platform,
    with its locked and installed versions (``None`` when there is no lock)."""
    path = path or find_lock()
    if path is None:
        return None
    body = [[r.name, r.locked, r.installed or "not installed"] for r in compare(path)]
    return Table(["package", "locked", "installed"], body)
