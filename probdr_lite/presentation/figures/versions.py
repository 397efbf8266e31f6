"""The book's Environment page: the versions of :mod:`probdr_lite.chapters.environment` as facts and tables."""

from __future__ import annotations

import platform
from pathlib import Path

from probdr_lite.chapters.environment import LOCK_NAME, compare, direct_requirements, find_lock, installed_version, use_rank
from probdr_lite.presentation.plotting import Table

__all__ = ["summary_facts", "requirements_table", "lock_table"]


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
