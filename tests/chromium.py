"""Where the browser tests find Chromium (Debian's package; never a browser Playwright downloads)."""

import os
import shutil
from pathlib import Path


def chromium_path() -> str | None:
    """``PROBDR_CHROMIUM``, else Debian's ``/usr/bin/chromium``, else ``chromium`` or ``chromium-browser`` on PATH."""
    for candidate in (os.environ.get("PROBDR_CHROMIUM"), "/usr/bin/chromium",
                      shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def free_port() -> int:
    """A free TCP port on the loopback address (for the servers the browser tests start)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def require(what: str, missing: str):
    """Skip a browser test whose tools are missing, or fail it where they are required (CI sets
    ``PROBDR_REQUIRE_BROWSER=1``)."""
    import pytest

    if os.environ.get("PROBDR_REQUIRE_BROWSER") == "1":
        pytest.fail(f"the {what} is required here (PROBDR_REQUIRE_BROWSER=1) but {missing}", pytrace=False)
    pytest.skip(f"{what} skipped: {missing}")


#: The longest a browser test waits for a condition (seconds). Only a failing test waits this long: every wait
#: returns as soon as its condition holds, so a generous bound costs nothing on an idle machine and lets a page on
#: two busy cores through.
WAIT_TIMEOUT_S = 120
#: How often a condition is re-checked while it does not hold (milliseconds).
POLL_MS = 150


def wait_until(page, condition: str, what: str, arg=None, timeout_s: float = WAIT_TIMEOUT_S, state: str | None = None,
               polling="interval"):
    """Wait until the page function ``condition`` (JavaScript, called with ``arg``) returns something truthy, re-checked
    every :data:`POLL_MS` ms (``polling="raf"``: at every animation frame, which then must come); return what it
    returned. Never a fixed wait: the read after it depends on that condition.

    On a timeout: an ``AssertionError`` saying what was waited for (``what``), with what the page function ``state``
    (called with ``arg``) reads at that moment, if given."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        return page.wait_for_function(condition, arg=arg, timeout=timeout_s * 1000,
                                      polling=POLL_MS if polling == "interval" else polling).json_value()
    except PlaywrightTimeout:
        seen = ""
        if state is not None:
            try:
                seen = f"; at the end: {page.evaluate(state, arg)!r:.2000}"
            except Exception as exc:  # noqa: BLE001 (the message matters more than this read)
                seen = f"; reading the state failed: {exc}"
        raise AssertionError(f"waited {timeout_s:.0f} s for {what}, in vain{seen}") from None


_STABLE_JS = """async ([arg, timeoutMs, pollMs, frames]) => {
  const measure = %s, ready = %s;
  const until = Date.now() + timeoutMs;
  const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r())));
  const pause = () => new Promise((r) => setTimeout(r, pollMs));
  let last = null;
  for (;;) {
    if (await ready(arg)) {
      const a = JSON.stringify(measure(arg));
      await (frames ? frame() : pause());
      const b = JSON.stringify(measure(arg));
      if (a === b && await ready(arg)) return {ok: true, value: measure(arg)};
      last = b;
    } else last = "(not ready) " + JSON.stringify(measure(arg));
    if (Date.now() > until) return {ok: false, last};
    await pause();
  }
}"""


def wait_stable(page, measure: str, what: str, arg=None, ready: str = "() => true", timeout_s: float = WAIT_TIMEOUT_S,
                frames: bool = True):
    """Wait until the page function ``ready(arg)`` holds (it may be async) and the layout read ``measure(arg)`` (JSON)
    is the same before and after two animation frames (``frames=False``: a poll apart, for a tab behind another,
    which gets few frames); return that measure. For layout that something the page does later (a font, an image,
    an editor drawing its lines, a ResizeObserver) may still change, so that a read after it means something.
    Re-checked every :data:`POLL_MS` ms; on a timeout an ``AssertionError`` says what was waited for and the last
    measure."""
    got = page.evaluate(_STABLE_JS % (measure, ready), [arg, timeout_s * 1000, POLL_MS, frames])
    if not got["ok"]:
        raise AssertionError(f"waited {timeout_s:.0f} s for {what}, in vain; the last read: {got['last']:.2000}")
    return got["value"]


class Requests:
    """The requests of a page that have not finished yet (``pending``) and how many it has made (``made``), kept
    from the page's events, so that a test can wait until the page has nothing left in flight."""

    def __init__(self, page, keep=lambda url: True, finished=None):
        """``keep(url)``: whether to count a request; ``finished(request)``: called when a counted request has
        finished (before it leaves ``pending``), e.g. to record its size."""
        self.pending, self.made = set(), 0

        def start(r):
            if keep(r.url):
                self.pending.add(r)
                self.made += 1

        def end(r):
            if r in self.pending and finished is not None:
                finished(r)
            self.pending.discard(r)

        def failed(r):
            self.pending.discard(r)

        page.on("request", start)
        page.on("requestfinished", end)
        page.on("requestfailed", failed)


def wait_seen(page, check, what: str, timeout_s: float = WAIT_TIMEOUT_S):
    """Wait until ``check()`` (Python: what the page's events have told the test, e.g. a request it has routed)
    holds, re-checked every :data:`POLL_MS` ms, each time after a round trip to the page, in which its events come
    in; return what it returned. On a timeout an ``AssertionError`` says what was waited for."""
    import time

    deadline = time.monotonic() + timeout_s
    while not (got := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout_s:.0f} s for {what}, in vain")
        page.evaluate("(ms) => new Promise((r) => setTimeout(r, ms))", POLL_MS)
    return got


def wait_loaded(page, requests: Requests, ready: str, what: str, timeout_s: float = WAIT_TIMEOUT_S):
    """Wait until ``ready`` (a page function) holds and no request is in flight, twice in a row with no request
    made in between: the page has fetched what it fetches by itself (the events come in while Playwright waits on
    the page, so each check is a round trip to it). On a timeout an ``AssertionError`` names ``what`` and the
    requests still in flight."""
    import time

    deadline = time.monotonic() + timeout_s
    confirmed = None
    while True:
        left = max(1.0, deadline - time.monotonic())
        wait_until(page, ready, what, timeout_s=left)
        if not requests.pending:
            if confirmed == requests.made:
                return
            confirmed = requests.made
        else:
            confirmed = None
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout_s:.0f} s for {what}, in vain; still in flight: "
                                 f"{sorted(r.url for r in requests.pending)[:8]}")
        # check again a poll later (a round trip to the page, in which its network events arrive)
        page.evaluate("(ms) => new Promise((r) => setTimeout(r, ms))", POLL_MS)
