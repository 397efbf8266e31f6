"""Moved to :mod:`probdr_lite._threads` (core: the measurements use it too).

This re-export is kept only until ``probdr_lite/objections.py`` and ``probdr_lite/experiments`` import
``probdr_lite._threads`` directly; then delete this file (``tests/unit/test_layers.py`` lists it as a known offender).
"""

from probdr_lite._threads import one_thread, single_threaded  # noqa: F401
