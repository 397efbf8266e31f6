"""A chapter's slider panel in a real JupyterLab, driven from headless Chromium with the keyboard.

A JupyterLab server starts on 127.0.0.1 (a free port, a random token) over a
temporary folder holding a copy of the transformer-block chapter's notebook; its kernel imports
this checkout's ``probdr_lite`` (``PYTHONPATH``). Playwright drives Debian's
Chromium (``/usr/bin/chromium`` or ``PROBDR_CHROMIUM``; it never downloads a
browser): run all cells, move each slider of the kappa/eta/beta/depth panel with
the arrow keys and check that the figure's pixels change after every move,
printing the time from key press to the new picture decoded on screen (no
assertion on it: timing belongs in benchmarks). Then the page is reloaded, as a
reader might, and moving a slider must still change the picture: the panel
draws into an ``ipywidgets.Image`` whose state lives in the kernel, which a
reload reconnects to (a redraw through a display handle is orphaned by it).

Without Chromium, Playwright or JupyterLab the test is skipped with a message;
with ``PROBDR_REQUIRE_BROWSER=1`` (CI) that is a failure instead. Run it alone
with ``pytest tests/frontend -s`` to see the timings.
"""

from __future__ import annotations

import base64
import io
import json
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from tests.chromium import chromium_path, free_port, require, wait_stable, wait_until

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = ROOT / "book" / "transformer_block.ipynb"
SCREENSHOTS = ROOT / "_build" / "screenshots"
#: The panel's sliders, by the description the reader sees (probdr_lite.presentation.figures.block.variant_panel).
SLIDERS = {"kappa": "κ (sharpness)", "eta": "η (step size)", "beta": "β (regulariser)", "depth": "depth (blocks)"}
#: Key presses per slider (one step each way); every press must change the picture.
KEYS = ["ArrowRight", "ArrowLeft"]
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", "--disable-quic", "--disable-dev-shm-usage",
]
#: Seconds to wait for the server, for all cells to run, for one redraw (two busy cores can be slow).
SERVER_TIMEOUT_S, RUN_ALL_TIMEOUT_S, REDRAW_TIMEOUT_S = 90, 240, 60




@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server over a folder with a copy of the chapter; yields (base URL, token); stops it after."""
    import importlib.util

    for module, package in (("jupyterlab", "jupyterlab"), ("jupyterlab_myst", "jupyterlab-myst")):
        if importlib.util.find_spec(module) is None:
            require("front-end test", f"{package} is not installed (pip install jupyterlab jupyterlab-myst)")
    tmp = tmp_path_factory.mktemp("lab")
    notebooks = tmp / "notebooks"
    notebooks.mkdir()
    shutil.copy(CHAPTER, notebooks / CHAPTER.name)
    settings = tmp / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    # no news or update check (there is no network; the toast would cover the page)
    (settings / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false",
                                                                          "checkForUpdates": False}))
    port, token = free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        "JUPYTER_CONFIG_DIR": str(tmp / "config"), "JUPYTER_RUNTIME_DIR": str(tmp / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(tmp / "settings"), "JUPYTERLAB_WORKSPACES_DIR": str(tmp / "workspaces"),
        "IPYTHONDIR": str(tmp / "ipython"), "MPLCONFIGDIR": str(tmp / "mpl"), "JUPYTER_PLATFORM_DIRS": "1",
    }
    log = open(tmp / "server.log", "w")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}", "--port-retries=0",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={notebooks}",
         "--LabApp.expose_app_in_browser=True", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
         "--LabApp.extension_manager=readonly", "--ServerApp.terminals_enabled=False",
         *(["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else [])],  # CI containers run as root
        env=env, stdout=log, stderr=subprocess.STDOUT, cwd=notebooks)
    base = f"http://127.0.0.1:{port}"
    try:
        until = time.monotonic() + SERVER_TIMEOUT_S
        while True:
            if server.poll() is not None:
                pytest.fail(f"JupyterLab exited ({server.returncode}):\n{(tmp / 'server.log').read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > until:
                pytest.fail(f"JupyterLab did not answer in {SERVER_TIMEOUT_S} s:\n"
                            f"{(tmp / 'server.log').read_text()[-3000:]}")
            time.sleep(0.5)
        yield base, token
    finally:
        server.terminate()  # the server shuts its kernels down on SIGTERM
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


@pytest.fixture(scope="module")
def page(lab):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:  # pragma: no cover - playwright is in requirements.txt
        require("front-end test", f"Playwright for Python is not installed ({exc})")
    exe = chromium_path()
    if exe is None:
        require("front-end test", "no Chromium found (apt-get install chromium, or set PROBDR_CHROMIUM to its path)")
    base, token = lab
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS, headless=True)
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            # nothing but the local server: JupyterLab must work without network
            context.route("**/*", lambda route: route.continue_() if route.request.url.startswith(base)
                          or route.request.url.startswith(("blob:", "data:")) else route.abort())
            p = context.new_page()
            p.on("dialog", lambda dialog: dialog.accept())
            p.set_default_timeout(REDRAW_TIMEOUT_S * 1000)
            p.goto(f"{base}/lab/tree/{CHAPTER.name}?token={token}")
            yield p
        finally:
            browser.close()


# In the page: the open notebook, ready, with its kernel idle (each condition re-checked every 200 ms until a
# deadline; past it, an error saying what was awaited).
_READY_JS = """async (timeoutMs) => {
  const until = Date.now() + timeoutMs;
  const poll = async (cond, what) => { while (!cond()) {
    if (Date.now() > until) throw new Error("waited " + timeoutMs / 1000 + " s for " + what + ", in vain");
    await new Promise((r) => setTimeout(r, 200)); } };
  await poll(() => window.jupyterapp && window.jupyterapp.shell.currentWidget
                   && window.jupyterapp.shell.currentWidget.sessionContext, "JupyterLab to open the notebook");
  const nb = window.jupyterapp.shell.currentWidget;
  await nb.context.ready;
  await nb.sessionContext.ready;
  await poll(() => nb.sessionContext.session && nb.sessionContext.session.kernel
                   && nb.sessionContext.session.kernel.status === "idle", "the notebook's kernel to be idle");
  return nb.context.path;
}"""

# Run every cell; return the error outputs (ename: evalue), if any.
_RUN_ALL_JS = """async (timeoutMs) => {
  const app = window.jupyterapp, nb = app.shell.currentWidget, until = Date.now() + timeoutMs;
  await app.commands.execute("notebook:run-all-cells");
  while (nb.sessionContext.session.kernel.status !== "idle") {
    if (Date.now() > until) throw new Error("waited " + timeoutMs / 1000 + " s for the cells to run, in vain");
    await new Promise((r) => setTimeout(r, 200));
  }
  const errors = [];
  for (const cell of nb.content.widgets) {
    if (cell.model.type !== "code") continue;
    for (let i = 0; i < cell.model.outputs.length; i++) {
      const o = cell.model.outputs.get(i).toJSON();
      if (o.output_type === "error") errors.push(o.ename + ": " + o.evalue);
    }
  }
  return errors;
}"""

# Record the time of every key press (capture phase, before the slider sees it), once per page.
_KEY_CLOCK_JS = """() => {
  if (window.__probdrKeyClock) return;
  window.__probdrKeyClock = true;
  document.addEventListener("keydown", () => { window.__probdrKeyTime = performance.now(); }, true);
}"""

# Arm a watch on the panel's <img>: resolves with ms from the last key press to the next picture, decoded.
_ARM_JS = """(img) => {
  window.__probdrRedraw = new Promise((resolve) => {
    const obs = new MutationObserver(async () => {
      obs.disconnect();
      try { await img.decode(); } catch (e) {}
      resolve(performance.now() - window.__probdrKeyTime);
    });
    obs.observe(img, {attributes: true, attributeFilter: ["src"]});
    setTimeout(() => { obs.disconnect(); resolve(null); }, %d);
  });
}""" % (REDRAW_TIMEOUT_S * 1000)


def _panel(page):
    """The transformer-block chapter's panel (the only one with a depth slider): its <img> and a locator per slider
    handle."""
    panel = page.locator(".probdr-panel", has=page.get_by_text(SLIDERS["depth"], exact=True))
    panel.wait_for(state="visible")
    img = panel.locator(".probdr-panel-figure")
    img.wait_for(state="visible")
    # the picture loaded (the checks after this read it, and its layout) ...
    wait_until(page, "(im) => im.complete && im.naturalWidth > 0", "the panel's picture to load",
               arg=img.element_handle(), timeout_s=REDRAW_TIMEOUT_S)
    handles = {}
    for name, label in SLIDERS.items():
        row = panel.locator(".widget-slider", has=page.get_by_text(label, exact=True))
        handles[name] = row.locator(".noUi-handle, .ui-slider-handle").first
    # ... and the panel laid out: its sliders' tracks where they stay (the same before and after two frames)
    wait_stable(page, _TRACKS_JS, "the panel's sliders to be laid out", arg=panel.element_handle(),
                ready="() => document.fonts.status === 'loaded'", timeout_s=REDRAW_TIMEOUT_S)
    return img, handles


_TRACKS_JS = """(panel) => Array.from(panel.querySelectorAll('.noUi-target, .ui-slider'))
  .map((t) => { const r = t.getBoundingClientRect(); return [r.left, r.right, r.top]; })"""


def _pixels(img) -> np.ndarray:
    import matplotlib.image

    return matplotlib.image.imread(io.BytesIO(img.screenshot()), format="png")


def _move(page, img, handle, key):
    """Press ``key`` on a slider handle; return ms from the key press to the new picture (None: none came)."""
    handle.focus()
    page.evaluate(_KEY_CLOCK_JS)
    page.evaluate(_ARM_JS, img.element_handle())
    page.keyboard.press(key)
    return page.evaluate("() => window.__probdrRedraw")


def _png(img) -> bytes:
    """The PNG bytes the panel's <img> shows (its blob), as the kernel sent them."""
    data = img.evaluate("""async (im) => {
      const bytes = new Uint8Array(await (await fetch(im.src)).arrayBuffer());
      let s = ""; for (const b of bytes) s += String.fromCharCode(b);
      return btoa(s);
    }""")
    return base64.b64decode(data)


def _changed(before, after) -> bool:
    return before.shape != after.shape or float(np.abs(before - after).max()) > 0.1


def test_panel_redraws_on_every_key_press_and_after_a_reload(page):
    t0 = time.monotonic()
    page.evaluate(_READY_JS, SERVER_TIMEOUT_S * 1000)
    t1 = time.monotonic()
    errors = page.evaluate(_RUN_ALL_JS, RUN_ALL_TIMEOUT_S * 1000)
    print(f"\nnotebook ready in {t1 - t0:.1f} s, all cells run in {time.monotonic() - t1:.1f} s")
    assert not errors, f"cells raised in JupyterLab: {errors}"
    img, handles = _panel(page)  # the picture loaded, the sliders laid out
    assert img.evaluate("(im) => im.complete && im.naturalWidth > 0"), "the panel's picture did not load"
    tracks = [h.evaluate("""(h) => { const r = h.closest('.noUi-target, .ui-slider').getBoundingClientRect();
                                      return [r.left, r.right]; }""") for h in handles.values()]
    for side, edges in zip(("left", "right"), zip(*tracks)):
        assert max(edges) - min(edges) < 1.5, f"the slider tracks do not line up: {side} ends at {edges} px"
    print(f"slider tracks: {tracks[0][1] - tracks[0][0]:.0f} px long")

    times = {}
    shown = _pixels(img)
    for name, handle in handles.items():
        times[name] = []
        readout = handle.locator("xpath=ancestor::*[contains(@class, 'widget-slider')][1]").locator(
            ".widget-readout")
        assert readout.count() == 1, f"{name}: no readout beside the slider"
        start = readout.text_content()
        for key in KEYS:
            ms = _move(page, img, handle, key)
            assert ms is not None, f"{name}: no new picture {REDRAW_TIMEOUT_S} s after {key}"
            before, shown = shown, _pixels(img)
            assert _changed(before, shown), f"{name}: the picture on screen did not change after {key}"
            times[name].append(ms)
        # one step each way: back at the default, which lies on the slider's grid
        assert readout.text_content() == start, f"{name}: {KEYS} went from {start} to {readout.text_content()}"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.locator(".probdr-panel", has=page.get_by_text(SLIDERS["depth"], exact=True)).screenshot(
        path=SCREENSHOTS / "jupyterlab_panel.png")
    print("\nJupyterLab redraw, key press to new picture decoded (ms), median of "
          f"{len(KEYS)}: " + ", ".join(f"{n} {statistics.median(t):.0f}" for n, t in times.items()))

    # A reader reloads the page: the notebook (saved with its outputs) reconnects to the running kernel.
    last = _png(img)
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    page.reload()
    page.evaluate(_READY_JS, SERVER_TIMEOUT_S * 1000)
    img, handles = _panel(page)
    assert img.evaluate("(im) => im.complete && im.naturalWidth > 0"), "after a reload the picture did not load"
    assert _png(img) == last, "after a reload the panel does not show the picture it last drew"
    before = _pixels(img)
    ms = _move(page, img, handles["depth"], "ArrowRight")
    assert ms is not None and _changed(before, _pixels(img)), (
        "after a reload, moving a slider no longer changes the picture")
    print(f"after a reload: depth {ms:.0f} ms")
