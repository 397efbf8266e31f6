"""Live Code really runs: the rocket menu's Thebe button starts a kernel, runs chapter 5's cells and its panel.

A Jupyter server starts on 127.0.0.1 (a free port, a random token, ``allow_origin`` set to the site's origin)
over a scratch folder; its kernel is this checkout's python3 (ipywidgets 8, as on Binder). The built site is
served on another port. Chromium opens chapter 5 (``book/transformer_block.html``), the test adds a
``<script type="text/x-thebe-config">`` with ``useBinder: false`` and the server's ``serverSettings`` (Thebe
merges every such script on the page), opens the rocket menu and clicks "Live Code". Then:

1. a kernel starts (the page marks ``data-thebe-kernel="ready"``) and every editor is as tall as its code;
2. the first cells, run with their run buttons in order, print what the book's build printed (numbers that are
   round-off, such as 1.1e-16, are compared by their order of magnitude only), each under its own cell;
3. the kappa slider of the heat-kernel panel (its widgets rendered by Thebe's widget manager, require.js from
   the site) changes the picture when moved with the keyboard;
4. no request leaves the two local servers (no CDN: Thebe, its stylesheet, require.js all come from the site).

It prints the time from the click to the kernel and to the first output (no assertion on them). Without
Chromium or Playwright: skipped, or a failure with ``PROBDR_REQUIRE_BROWSER=1`` (CI).
"""

from __future__ import annotations

import io
import json
import os
import re
import secrets
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from tests.chromium import chromium_path, free_port, require

pytestmark = [pytest.mark.book, pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[2]
PAGE = "book/transformer_block.html"
#: Code cells run, counted among the page's inputs: imports, the toy, one block, the variants, the heat-kernel
#: bump, then its panel (the sixth).
N_CELLS = 6
PANEL_LABEL = "κ (sharpness)"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic", "--disable-dev-shm-usage"]
KERNEL_TIMEOUT_S, CELL_TIMEOUT_S = 120, int(os.environ.get("PROBDR_LIVE_CELL_TIMEOUT", 240))




def _wait_for(url: str, proc: subprocess.Popen, log: Path, timeout: float = 90):
    until = time.monotonic() + timeout
    while time.monotonic() < until:
        if proc.poll() is not None:
            pytest.fail(f"server exited ({proc.returncode}):\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"{url} did not answer in {timeout} s:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def servers(built_book, tmp_path_factory):
    """(site URL, Jupyter server URL, token); both stopped afterwards."""
    tmp = tmp_path_factory.mktemp("livecode")
    (tmp / "root" / "book").mkdir(parents=True)  # the kernel's folder: sphinx-thebe asks for path "book"
    site_port, server_port, token = free_port(), free_port(), secrets.token_hex(16)
    site, server = f"http://127.0.0.1:{site_port}", f"http://127.0.0.1:{server_port}"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "JUPYTER_CONFIG_DIR": str(tmp / "config"),
           "JUPYTER_RUNTIME_DIR": str(tmp / "runtime"), "IPYTHONDIR": str(tmp / "ipython"),
           "MPLCONFIGDIR": str(tmp / "mpl"), "JUPYTER_PLATFORM_DIRS": "1", "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
    logs = [open(tmp / "site.log", "w"), open(tmp / "server.log", "w")]
    procs = [
        subprocess.Popen([sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(site_port),
                          "--directory", str(built_book)], stdout=logs[0], stderr=subprocess.STDOUT),
        subprocess.Popen([sys.executable, "-m", "jupyter_server", "--no-browser", "--ServerApp.ip=127.0.0.1",
                          f"--ServerApp.port={server_port}", "--ServerApp.port_retries=0",
                          f"--IdentityProvider.token={token}", f"--ServerApp.allow_origin={site}",
                          f"--ServerApp.root_dir={tmp / 'root'}", "--ServerApp.terminals_enabled=False",
                          *(["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else [])],
                         env=env, stdout=logs[1], stderr=subprocess.STDOUT, cwd=tmp / "root"),
    ]
    try:
        _wait_for(f"{site}/{PAGE}", procs[0], tmp / "site.log")
        _wait_for(f"{server}/api/status?token={token}", procs[1], tmp / "server.log")
        yield site, server, token
    finally:
        for proc in procs:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for log in logs:
            log.close()


@pytest.fixture(scope="module")
def page(servers):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:  # pragma: no cover
        require("Live Code test", f"Playwright for Python is not installed ({exc})")
    exe = chromium_path()
    if exe is None:
        require("Live Code test", "no Chromium found (apt-get install chromium, or set PROBDR_CHROMIUM to its path)")
    site, server, _ = servers
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS, headless=True)
        try:
            context = browser.new_context(viewport={"width": 1300, "height": 1000})
            blocked = []

            def route(r):
                url = r.request.url
                if url.startswith((site, server, "data:", "blob:", "ws://127.0.0.1")):
                    r.continue_()
                else:
                    blocked.append(url)
                    r.abort()

            context.route("**/*", route)
            p = context.new_page()
            p.blocked = blocked
            p.console_errors = []
            p.on("console", lambda m: p.console_errors.append(m.text) if m.type == "error" else None)
            p.set_default_timeout(CELL_TIMEOUT_S * 1000)
            p.goto(f"{site}/{PAGE}")
            yield p
        finally:
            browser.close()


def _mask(text: str) -> str:
    """Outputs as compared: round-off-sized numbers (|x| < 1e-6 in e-notation) by their order of magnitude."""
    return re.sub(r"(\d\.\d+)e-(\d+)", lambda m: "ROUNDOFF" if int(m.group(2)) >= 6 else m.group(0), text).strip()


def _pixels(locator) -> np.ndarray:
    import matplotlib.image

    return matplotlib.image.imread(io.BytesIO(locator.screenshot()), format="png")


def test_live_code_runs_the_first_cells_and_a_panel(page, servers):
    site, server, token = servers
    cells = page.locator("div.cell")
    inputs = page.locator("div.cell:has(div.cell_input)")
    saved = [inputs.nth(i).locator(".cell_output").all_inner_texts() for i in range(N_CELLS)]
    assert any(saved) and not saved[0], "chapter 5 starts with an import cell, then cells that print"
    # point Thebe at the local server: one more page configuration, merged with sphinx-thebe's
    page.evaluate("""(cfg) => { const s = document.createElement("script");
        s.type = "text/x-thebe-config"; s.textContent = JSON.stringify(cfg); document.head.appendChild(s); }""",
                  {"useBinder": False, "requestKernel": True,
                   "serverSettings": {"baseUrl": server, "wsUrl": server.replace("http", "ws"), "token": token,
                                      "appendToken": True}})
    page.locator("button[aria-label='Launch interactive content'], .dropdown-launch-buttons > button").first.click()
    t0 = time.monotonic()
    page.get_by_role("button", name="Live Code").click()
    page.wait_for_selector("body[data-thebe-kernel=ready]", timeout=KERNEL_TIMEOUT_S * 1000)
    t_kernel = time.monotonic() - t0
    assert cells.count() > N_CELLS
    thebe = page.locator(".thebe-cell")
    assert thebe.count() >= N_CELLS
    # editors as tall as their code (thebe.css linked): a one-line cell is far below 300 px
    heights = page.evaluate("""() => Array.from(document.querySelectorAll('.thebe-cell .CodeMirror'))
        .map((e) => [e.getBoundingClientRect().height, e.CodeMirror ? e.CodeMirror.lineCount() : null])""")
    # not CodeMirror's fixed 300 px: the 38-line import cell is taller, a one-line cell far shorter
    assert max(h for h, _ in heights) > 300 and min(h for h, n in heights if n == 1) < 60, heights
    live_cells = page.locator("div.cell:has(.thebe-cell)")
    t_first = None
    for i in range(N_CELLS):
        cell = live_cells.nth(i)
        output = cell.locator("[data-output]")
        assert output.count() == 1, f"cell {i}: {output.count()} output areas"
        # mark what is shown now (the build's saved output) so that the kernel's new output can be told apart
        output.evaluate("(el) => el.querySelectorAll('*').forEach((c) => c.setAttribute('data-saved', ''))")
        cell.locator(".thebe-run-button").click()
        if saved[i]:
            page.wait_for_function("""(el) => el.querySelector('.jp-OutputArea-child:not([data-saved])') && el.innerText.trim()""",
                                   arg=output.element_handle(), timeout=CELL_TIMEOUT_S * 1000)
            if t_first is None:
                t_first = time.monotonic() - t0
    # the panel (cell N_CELLS) renders its widgets; wait for all queued cells to finish first
    panel = live_cells.nth(N_CELLS - 1).locator(".probdr-panel")
    panel.wait_for(state="visible", timeout=CELL_TIMEOUT_S * 1000)
    live = [live_cells.nth(i).locator("[data-output]").all_inner_texts() for i in range(N_CELLS)]
    for i in range(N_CELLS - 1):
        if saved[i]:
            assert [_mask(t) for t in live[i]] == [_mask(t) for t in saved[i]], (i, live[i], saved[i])
        else:  # an input without output gets none (Thebe pairs inputs and outputs one to one)
            assert not "".join(live[i]).strip(), (i, live[i])
    assert "Traceback" not in page.locator("article").inner_text()
    img = panel.locator(".probdr-panel-figure, img").first
    img.wait_for(state="visible")
    row = panel.locator(".widget-slider", has=page.get_by_text(PANEL_LABEL, exact=True))
    handle = row.locator(".noUi-handle, .ui-slider-handle").first
    before = _pixels(img)
    src = img.get_attribute("src")
    handle.focus()
    t_key = time.monotonic()
    page.keyboard.press("ArrowRight")
    page.wait_for_function("([el, src]) => el.getAttribute('src') !== src && el.complete",
                           arg=[img.element_handle(), src], timeout=60_000)
    t_redraw = time.monotonic() - t_key
    after = _pixels(img)
    assert before.shape != after.shape or float(np.abs(before - after).max()) > 0.1, "the picture did not change"
    assert page.blocked == [], f"requests outside the two local servers: {page.blocked[:5]}"
    shots = ROOT / "_build" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    live_cells.nth(N_CELLS - 1).screenshot(path=shots / "live_code_panel.png")
    print(f"\nLive Code: click to kernel {t_kernel:.1f} s, click to first output {t_first:.1f} s, "
          f"key press to new picture {t_redraw:.2f} s")
