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
4. "run all" then runs every cell of the chapter without an error (each shown cell needs only the shown cells
   above it: Live Code never runs a cell whose input is removed);
5. no request leaves the two local servers (no CDN: Thebe, its stylesheet, require.js all come from the site).

More tests, each in a new tab, clicking as a reader does:

- "restart" and "restart & run all" make the server restart the kernel (a POST to ``.../restart``); a run
  clicked at once after "restart" runs in the new kernel (``NameError`` for a name of the old one), and "run
  all" right after "restart" runs every cell to the end (``book/data.html``);
- two chapters in two tabs get two sessions and two kernels, and a restart in one leaves the other alone;
- the energies chapter's Markdown outputs arrive as HTML: tables as ``<table>``, maths typeset by the site's
  MathJax;
- with the Jupyter server stopped, the launch fails: the button names the local server (not mybinder.org),
  stops its spinner, holds its whole message, and the cells are left as they were; with the server started
  again, a second click starts a kernel and makes each cell one editor (no editor inside an editor).

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

from tests.chromium import chromium_path, free_port, require, wait_stable, wait_until

from .screens import SCRIPTS_RAN_JS

pytestmark = [pytest.mark.book, pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[2]
PAGE = "book/transformer_block.html"
#: Code cells run, counted among the page's inputs: imports (folded), the toy (with the sliders' defaults), one block
#: against its formula, LayerNorm against torch's, the heat-kernel check, then the bump's panel (the sixth).
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


class Servers:
    """The built site and a Jupyter server on 127.0.0.1; the Jupyter server can be stopped and started again
    (same port, same token), as a reader's server may go down and come back."""

    def __init__(self, built_book: Path, tmp: Path):
        self.tmp = tmp
        (tmp / "root" / "book").mkdir(parents=True)  # the kernels' folder: sessions are book/<page>.ipynb
        site_port, server_port, self.token = free_port(), free_port(), secrets.token_hex(16)
        self.site, self.server = f"http://127.0.0.1:{site_port}", f"http://127.0.0.1:{server_port}"
        self.server_port = server_port
        self.env = {**os.environ, "PYTHONPATH": str(ROOT), "JUPYTER_CONFIG_DIR": str(tmp / "config"),
                    "JUPYTER_RUNTIME_DIR": str(tmp / "runtime"), "IPYTHONDIR": str(tmp / "ipython"),
                    "MPLCONFIGDIR": str(tmp / "mpl"), "JUPYTER_PLATFORM_DIRS": "1",
                    "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
        self.site_log = open(tmp / "site.log", "w")
        self.site_proc = subprocess.Popen(
            [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(site_port), "--directory",
             str(built_book)], stdout=self.site_log, stderr=subprocess.STDOUT)
        self.jupyter, self.jupyter_log = None, None
        try:
            _wait_for(f"{self.site}/{PAGE}", self.site_proc, tmp / "site.log")
            self.start_jupyter()
        except BaseException:
            self.close()
            raise

    def __iter__(self):
        return iter((self.site, self.server, self.token))

    def start_jupyter(self):
        assert self.jupyter is None
        if self.jupyter_log is not None:
            self.jupyter_log.close()
        self.jupyter_log = open(self.tmp / "server.log", "a")
        self.jupyter = subprocess.Popen(
            [sys.executable, "-m", "jupyter_server", "--no-browser", "--ServerApp.ip=127.0.0.1",
             f"--ServerApp.port={self.server_port}", "--ServerApp.port_retries=0",
             f"--IdentityProvider.token={self.token}", f"--ServerApp.allow_origin={self.site}",
             f"--ServerApp.root_dir={self.tmp / 'root'}", "--ServerApp.terminals_enabled=False",
             *(["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else [])],
            env=self.env, stdout=self.jupyter_log, stderr=subprocess.STDOUT, cwd=self.tmp / "root")
        _wait_for(f"{self.server}/api/status?token={self.token}", self.jupyter, self.tmp / "server.log")

    def stop_jupyter(self):
        if self.jupyter is not None:
            _stop(self.jupyter)
            self.jupyter = None
        if self.jupyter_log is not None:
            self.jupyter_log.close()
            self.jupyter_log = None

    def api(self, path: str):
        with urllib.request.urlopen(f"{self.server}/api/{path}?token={self.token}", timeout=30) as r:
            return json.load(r)

    def close(self):
        self.stop_jupyter()
        _stop(self.site_proc)
        self.site_log.close()


def _stop(proc: subprocess.Popen):
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="module")
def servers(built_book, tmp_path_factory):
    """The site and the Jupyter server (``Servers``); both stopped afterwards."""
    s = Servers(built_book, tmp_path_factory.mktemp("livecode"))
    try:
        yield s
    finally:
        s.close()


@pytest.fixture(scope="module")
def browser(servers):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:  # pragma: no cover
        require("Live Code test", f"Playwright for Python is not installed ({exc})")
    exe = chromium_path()
    if exe is None:
        require("Live Code test", "no Chromium found (apt-get install chromium, or set PROBDR_CHROMIUM to its path)")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


def _open(browser, servers, path: str):
    """A new tab on ``path`` of the site, in its own browser context; every request outside the two local
    servers is aborted and listed in ``page.blocked``, and every POST to the Jupyter server in ``page.posts``."""
    site, server, _ = servers
    context = browser.new_context(viewport={"width": 1300, "height": 1000})
    blocked, posts = [], []

    def route(r):
        url = r.request.url
        if url.startswith((site, server, "data:", "blob:", "ws://127.0.0.1")):
            if url.startswith(server) and r.request.method == "POST":
                posts.append(url.split("?")[0][len(server):])
            r.continue_()
        else:
            blocked.append(url)
            r.abort()

    context.route("**/*", route)
    p = context.new_page()
    p.blocked, p.posts, p.console_errors = blocked, posts, []
    p.on("console", lambda m: p.console_errors.append(m.text) if m.type == "error" else None)
    p.set_default_timeout(CELL_TIMEOUT_S * 1000)
    p.goto(f"{site}/{path}")
    # the page's scripts (copy buttons, the launch menu, the book's Live Code launch) run once it has painted
    p.wait_for_function(SCRIPTS_RAN_JS)
    return p


@pytest.fixture(scope="module")
def page(browser, servers):
    p = _open(browser, servers, PAGE)
    yield p
    p.context.close()


@pytest.fixture
def open_page(browser, servers):
    """``open_page(path)``: a new tab (closed after the test)."""
    opened = []

    def open_(path):
        opened.append(_open(browser, servers, path))
        return opened[-1]

    yield open_
    for p in opened:
        p.context.close()


def _configure(page, servers):
    """Point Thebe at the local server: one more page configuration, merged with sphinx-thebe's."""
    _, server, token = servers
    page.evaluate("""(cfg) => { const s = document.createElement("script");
        s.type = "text/x-thebe-config"; s.textContent = JSON.stringify(cfg); document.head.appendChild(s); }""",
                  {"useBinder": False, "requestKernel": True,
                   "serverSettings": {"baseUrl": server, "wsUrl": server.replace("http", "ws"), "token": token,
                                      "appendToken": True}})


def _click_live_code(page):
    """Open the rocket menu and click "Live Code", as a reader does."""
    page.locator("button[aria-label='Launch interactive content'], .dropdown-launch-buttons > button").first.click()
    page.get_by_role("button", name="Live Code").click()


def _launch(page, servers):
    """Configure, click Live Code, wait for the kernel; the seconds it took."""
    _configure(page, servers)
    t0 = time.monotonic()
    _click_live_code(page)
    page.wait_for_selector("body[data-thebe-kernel=ready]", timeout=KERNEL_TIMEOUT_S * 1000)
    return time.monotonic() - t0


def _mask(text: str) -> str:
    """Outputs as compared: round-off-sized numbers (|x| < 1e-6 in e-notation) by their order of magnitude."""
    return re.sub(r"(\d\.\d+)e-(\d+)", lambda m: "ROUNDOFF" if int(m.group(2)) >= 6 else m.group(0), text).strip()


def _pixels(locator) -> np.ndarray:
    import matplotlib.image

    return matplotlib.image.imread(io.BytesIO(locator.screenshot()), format="png")


#: Each Live Code editor (CodeMirror 5, as Thebe makes it): its height, its number of lines, the lines it has drawn.
_EDITORS_JS = """() => Array.from(document.querySelectorAll('.thebe-cell .CodeMirror')).map((e) =>
  [Math.round(e.getBoundingClientRect().height * 10) / 10, e.CodeMirror ? e.CodeMirror.lineCount() : null,
   e.querySelectorAll('.CodeMirror-code .CodeMirror-line').length])"""
#: Every editor is there (``n``: as many as the Live Code cells) and has drawn its code: it holds drawn lines, and
#: the last of them lies inside it; the fonts that measure them have loaded.
_EDITORS_DRAWN_JS = """(n) => { const eds = Array.from(document.querySelectorAll('.thebe-cell .CodeMirror'));
  return document.fonts.status === 'loaded' && eds.length >= n && eds.every((e) => {
    const lines = e.querySelectorAll('.CodeMirror-code .CodeMirror-line');
    if (!e.CodeMirror || !lines.length) return false;
    const box = e.getBoundingClientRect(), last = lines[lines.length - 1].getBoundingClientRect();
    return last.height > 0 && last.bottom <= box.bottom + 1 && box.height > last.height; }); }"""


def _editor_heights(page, n: int) -> list:
    """[height, lines] of each Live Code editor, once all ``n`` have drawn their code and their heights hold."""
    return [[h, lines] for h, lines, _ in wait_stable(
        page, _EDITORS_JS, f"the {n} Live Code editors to draw their code", arg=n, ready=_EDITORS_DRAWN_JS,
        timeout_s=KERNEL_TIMEOUT_S)]


def test_live_code_runs_the_first_cells_and_a_panel(page, servers):
    site, server, token = servers
    cells = page.locator("div.cell")
    inputs = page.locator("div.cell:has(div.cell_input)")
    saved = [inputs.nth(i).locator(".cell_output").all_inner_texts() for i in range(N_CELLS)]
    assert any(saved) and not saved[0], "chapter 5 starts with an import cell, then cells that print"
    _configure(page, servers)
    t0 = time.monotonic()
    _click_live_code(page)
    page.wait_for_selector("body[data-thebe-kernel=ready]", timeout=KERNEL_TIMEOUT_S * 1000)
    t_kernel = time.monotonic() - t0
    assert cells.count() > N_CELLS
    thebe = page.locator(".thebe-cell")
    assert thebe.count() >= N_CELLS
    # editors as tall as their code (thebe.css linked): a one-line cell is far below 300 px; read once every editor
    # has drawn its lines and its height holds across two animation frames (under load Thebe's editors are
    # measured late: read earlier, every one was its 10 px of padding)
    heights = _editor_heights(page, thebe.count())
    # not CodeMirror's fixed 300 px: the 24-line import cell is taller, a one-line cell far shorter
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
    wait_until(page, "(im) => im.complete && im.naturalWidth > 0", "the panel's picture to load",
               arg=img.element_handle(), timeout_s=CELL_TIMEOUT_S)
    row = panel.locator(".widget-slider", has=page.get_by_text(PANEL_LABEL, exact=True))
    handle = row.locator(".noUi-handle, .ui-slider-handle").first
    before = _pixels(img)
    src = img.get_attribute("src")
    handle.focus()
    t_key = time.monotonic()
    page.keyboard.press("ArrowRight")
    wait_until(page, "([el, src]) => el.getAttribute('src') !== src && el.complete && el.naturalWidth > 0",
               "the panel's new picture after the key press", arg=[img.element_handle(), src], timeout_s=CELL_TIMEOUT_S)
    t_redraw = time.monotonic() - t_key
    after = _pixels(img)
    assert before.shape != after.shape or float(np.abs(before - after).max()) > 0.1, "the picture did not change"
    assert page.blocked == [], f"requests outside the two local servers: {page.blocked[:5]}"
    shots = ROOT / "_build" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    live_cells.nth(N_CELLS - 1).screenshot(path=shots / "live_code_panel.png")
    print(f"\nLive Code: click to kernel {t_kernel:.1f} s, click to first output {t_first:.1f} s, "
          f"key press to new picture {t_redraw:.2f} s")
    # every cell of the chapter runs in Live Code: "run all", then no error in any output
    t_all = time.monotonic()
    page.evaluate("() => document.querySelectorAll('[data-output] *').forEach((c) => c.setAttribute('data-saved', ''))")
    live_cells.nth(0).locator(".thebe-runall-button").click()
    last = live_cells.nth(live_cells.count() - 1).locator("[data-output]")
    page.wait_for_function("(el) => el.querySelector('.jp-OutputArea-child:not([data-saved])')",
                           arg=last.element_handle(), timeout=CELL_TIMEOUT_S * 1000)
    page.wait_for_function("() => Array.from(document.querySelectorAll('.thebe-busy')).every((b) => b.style.display === 'none')",
                           timeout=CELL_TIMEOUT_S * 1000)
    errors = [(i, text[:300]) for i, text in enumerate(live_cells.locator("[data-output]").all_inner_texts())
              if re.search(r"\b\w+Error\b|Traceback", text)]
    assert not errors, errors
    print(f"run all: {live_cells.count()} cells in {time.monotonic() - t_all:.1f} s")


# ---------------------------------------------------------------------------------------------------------------------
# Restart, one kernel per chapter, Markdown outputs, a server that is down and comes back

#: A cheap chapter for the kernel tests: an import cell, then cells that print or draw (MNIST, its grid, ...).
DATA_PAGE = "book/data.html"
#: A second chapter, for the two-tab test (only its import cell runs).
OTHER_PAGE = "book/laplacian_eigenmaps.html"
ENERGIES_PAGE = "book/energies.html"


def _live_cells(page):
    return page.locator("div.cell:has(.thebe-cell)")


def _mark_shown(page):
    """Mark every output shown now, so that the next outputs can be told apart."""
    page.evaluate("() => document.querySelectorAll('[data-output] *').forEach((c) => c.setAttribute('data-saved', ''))")


def _wait_for_new_output(page, cell, timeout_s=CELL_TIMEOUT_S):
    """Wait for a cell's first new output (text or a picture); its text once nothing runs on the page."""
    page.wait_for_function("""(el) => { const child = el.querySelector('.jp-OutputArea-child:not([data-saved])');
                                        return child && (el.innerText.trim() || child.querySelector('img')); }""",
                           arg=cell.locator("[data-output]").element_handle(), timeout=timeout_s * 1000)
    _wait_until_idle(page)
    return cell.locator("[data-output]").inner_text().strip()


def _wait_until_idle(page):
    """Every cell's busy spinner is off (Thebe shows one per cell from the click until its run is over)."""
    page.wait_for_function("() => Array.from(document.querySelectorAll('.thebe-busy')).every((b) => b.style.display === 'none')",
                           timeout=CELL_TIMEOUT_S * 1000)


def _saved_outputs(page) -> list[str]:
    """The build's outputs of the page's code cells (before Live Code), one text per cell."""
    return [t.strip() for t in page.eval_on_selector_all(
        "div.cell:has(div.cell_input)", "(cells) => cells.map((c) => (c.querySelector('.cell_output') || {}).innerText || '')")]


def _restarts(page) -> list[str]:
    return [u for u in page.posts if re.fullmatch(r"/api/kernels/[0-9a-f-]+/restart", u)]


def _run_all_to_the_end(page, saved, click):
    """Click (``click()``), then wait until every cell that printed in the build has printed again and nothing
    runs; compare the printed text with the build's. Figures are compared by their presence."""
    _mark_shown(page)
    click()
    cells = _live_cells(page)
    for i, text in enumerate(saved):
        if text or cells.nth(i).locator(".cell_output img").count():
            _wait_for_new_output(page, cells.nth(i))
    _wait_until_idle(page)
    live = [cells.nth(i).locator("[data-output]").inner_text().strip() for i in range(len(saved))]
    for i, (now, before) in enumerate(zip(live, saved)):
        assert "Error" not in now, (i, now)
        assert _mask(now) == _mask(before), (i, now, before)


def test_restart_restarts_the_kernel_and_runs_wait_for_it(open_page, servers):
    """"restart" and "restart & run all" send the server a restart; a run clicked right after waits for it."""
    page = open_page(DATA_PAGE)
    saved = _saved_outputs(page)
    assert not saved[0] and saved[1].startswith("images: (10000, 784)"), saved[:2]
    print(f"\nLive Code ({DATA_PAGE}): click to kernel {_launch(page, servers):.1f} s")
    cells = _live_cells(page)
    assert cells.count() == len(saved)
    _mark_shown(page)
    cells.nth(0).locator(".thebe-run-button").click()
    cells.nth(1).locator(".thebe-run-button").click()
    assert _mask(_wait_for_new_output(page, cells.nth(1))) == _mask(saved[1])
    # restart, then at once run the second cell: it runs in the new kernel, which has not run the imports
    _mark_shown(page)
    cells.nth(0).locator(".thebe-restart-button").click()
    cells.nth(1).locator(".thebe-run-button").click()
    text = _wait_for_new_output(page, cells.nth(1))
    assert "NameError" in text and "load_mnist" in text, text
    assert len(_restarts(page)) == 1, page.posts
    # restart & run all: a restart, then every cell in order, each printing what the build printed
    _run_all_to_the_end(page, saved, lambda: cells.nth(2).locator(".thebe-restartall-button").click())
    assert len(_restarts(page)) == 2, page.posts
    # "run all" clicked right after "restart" runs every cell once the new kernel is up (none is left spinning)
    _run_all_to_the_end(page, saved, lambda: (cells.nth(3).locator(".thebe-restart-button").click(),
                                              cells.nth(3).locator(".thebe-runall-button").click()))
    assert len(_restarts(page)) == 3, page.posts
    assert page.blocked == [], page.blocked[:5]


def test_each_chapter_has_its_own_kernel(open_page, servers):
    """Two chapters in two tabs: two sessions, two kernels; a restart in one tab leaves the other's names alone."""
    data, other = open_page(DATA_PAGE), open_page(OTHER_PAGE)
    saved = _saved_outputs(data)
    _launch(data, servers)
    _launch(other, servers)
    sessions = {s["path"]: s["kernel"]["id"] for s in servers.api("sessions")}
    assert {"book/data.ipynb", "book/laplacian_eigenmaps.ipynb"} <= set(sessions), sessions
    assert sessions["book/data.ipynb"] != sessions["book/laplacian_eigenmaps.ipynb"]
    cells = _live_cells(data)
    _mark_shown(data)
    cells.nth(0).locator(".thebe-run-button").click()
    cells.nth(1).locator(".thebe-run-button").click()
    assert _mask(_wait_for_new_output(data, cells.nth(1))) == _mask(saved[1])
    # restart the other chapter's kernel and run its import cell there (so its restart is over) ...
    theirs = _live_cells(other)
    theirs.nth(0).locator(".thebe-restart-button").click()
    theirs.nth(0).locator(".thebe-run-button").click()
    _wait_until_idle(other)
    assert "Error" not in theirs.nth(0).locator("[data-output]").inner_text()
    assert len(_restarts(other)) == 1, other.posts
    # ... and this chapter's next cell still finds digit_grid and the images: it draws the grid
    cells.nth(2).locator(".thebe-run-button").click()
    _wait_for_new_output(data, cells.nth(2))
    out = cells.nth(2).locator("[data-output]")
    assert "Error" not in out.inner_text(), out.inner_text()
    out.locator(".jp-OutputArea-child:not([data-saved]) img").first.wait_for(state="visible")
    assert len(_restarts(data)) == 0


def test_markdown_outputs_render_as_html_with_typeset_maths(open_page, servers):
    """The energies chapter's display(Markdown(...)) outputs: tables become tables, maths is typeset by the
    site's MathJax (no CDN), as on the static page."""
    page = open_page(ENERGIES_PAGE)
    inputs = page.locator("div.cell:has(div.cell_input)")
    # the first shown cells: imports, the computations, then the first table (the chapter's prose is Markdown now; its displayed Markdown outputs are tables, with maths in their headers)
    static = [inputs.nth(i).locator(".cell_output table").count() for i in range(8)]
    assert any(static), static
    t = next(i for i, n in enumerate(static) if n)
    p = t  # the first table: its maths is typeset and it is a table, in Live Code as on the static page
    n_rows = inputs.nth(t).locator(".cell_output table tbody tr").count()
    assert n_rows > 1
    print(f"\nLive Code ({ENERGIES_PAGE}): click to kernel {_launch(page, servers):.1f} s")
    cells = _live_cells(page)
    _mark_shown(page)
    t0 = time.monotonic()
    for i in range(t + 1):
        cells.nth(i).locator(".thebe-run-button").click()
    for i in (p, t):
        _wait_for_new_output(page, cells.nth(i))
    print(f"{t + 1} cells of {ENERGIES_PAGE} in {time.monotonic() - t0:.1f} s")
    prop, table = (cells.nth(i).locator(".jp-OutputArea-child:not([data-saved]) .jp-RenderedMarkdown") for i in (p, t))
    prop.locator("mjx-container").first.wait_for(state="attached", timeout=60_000)
    for out in (prop, table):
        assert out.locator("pre").count() == 0, out.first.inner_html()[:500]
    assert "$" not in prop.inner_text() and "\\kappa" not in prop.inner_text(), prop.inner_text()
    assert table.locator("table tbody tr").count() == n_rows, table.inner_html()[:500]
    assert "|---" not in table.inner_text() and "| ---" not in table.inner_text()
    if table.locator(".math").count():
        table.locator("mjx-container").first.wait_for(state="attached", timeout=60_000)
    shots = ROOT / "_build" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    cells.nth(t).locator("[data-output]").screenshot(path=shots / "live_code_markdown_table.png")
    assert page.blocked == [], page.blocked[:5]


def _button(page) -> dict:
    """The launch button's text, whether its spinner shows, and whether its text fits inside it: read once the fonts
    have loaded and the button's layout holds across two animation frames (its text has just changed)."""
    return wait_stable(page, _BUTTON_JS, "the Live Code button's layout to settle",
                       ready="() => document.fonts.status === 'loaded' && !!document.querySelector('.thebe-launch-button')")


_BUTTON_JS = """() => {
        const b = document.querySelector('.thebe-launch-button');
        const r = b.getBoundingClientRect(), range = document.createRange();
        range.selectNodeContents(b);
        const t = range.getBoundingClientRect();
        const spin = b.querySelector('.spinner');
        return {text: b.innerText.trim(), spinner: !!spin && spin.getBoundingClientRect().height > 0
                && getComputedStyle(spin).display !== 'none',
                fits: t.left >= r.left - 1 && t.right <= r.right + 1 && t.top >= r.top - 1 && t.bottom <= r.bottom + 1
                && b.scrollWidth <= b.clientWidth + 1 && b.scrollHeight <= b.clientHeight + 1,
                box: [r.left, r.top, r.width, r.height], textBox: [t.left, t.top, t.width, t.height]};
    }"""


def _cells_html(page) -> list[str]:
    """The cells' inputs as HTML, less the ``tabindex`` attributes. The theme sets those itself from layout: every
    ``pre`` that overflows its box gets 0, any other -1, recomputed 300 ms after any change to the page (the Live
    Code button changing its text is one), so a font arriving late can flip one between two reads of the same cells."""
    return page.eval_on_selector_all(
        "div.cell:has(div.cell_input) div.cell_input",
        "(cells) => cells.map((c) => { const k = c.cloneNode(true);"
        " k.querySelectorAll('[tabindex]').forEach((e) => e.removeAttribute('tabindex')); return k.innerHTML; })")


def test_a_launch_against_a_server_that_is_down_fails_cleanly_and_a_second_click_retries(open_page, servers):
    """With the Jupyter server down, Live Code says that the Jupyter server (not mybinder.org) did not answer, in
    its button, with its spinner stopped, and leaves the cells as they were; with the server back, one more click
    starts a kernel, and every cell becomes one editor (none nested)."""
    host = f"127.0.0.1:{servers.server_port}"
    servers.stop_jupyter()
    try:
        page = open_page(DATA_PAGE)
        saved, before = _saved_outputs(page), _cells_html(page)
        _configure(page, servers)
        _click_live_code(page)
        # what a reader waits for: the button saying that it could not
        page.wait_for_function("() => /could not/i.test((document.querySelector('.thebe-launch-button') || {}).innerText)",
                               timeout=KERNEL_TIMEOUT_S * 1000)
        failed = _button(page)
        shots = ROOT / "_build" / "screenshots"
        shots.mkdir(parents=True, exist_ok=True)
        page.locator(".thebe-launch-button").screenshot(path=shots / "live_code_failed.png")
        assert host in failed["text"] and "binder" not in failed["text"].lower(), failed
        assert not failed["spinner"] and failed["fits"], failed
        assert page.locator(".thebe-cell, .CodeMirror, .thebe-run-button").count() == 0
        assert _cells_html(page) == before, "a failed launch changed the cells"
    finally:
        servers.start_jupyter()
    t0 = time.monotonic()
    _click_live_code(page)
    page.wait_for_selector("body[data-thebe-kernel=ready]", timeout=KERNEL_TIMEOUT_S * 1000)
    print(f"\nLive Code, second click after a failure: click to kernel {time.monotonic() - t0:.1f} s")
    ready = _button(page)
    page.locator(".thebe-launch-button").screenshot(path=ROOT / "_build" / "screenshots" / "live_code_ready.png")
    assert host in ready["text"] and "binder" not in ready["text"].lower(), ready
    assert not ready["spinner"] and ready["fits"], ready
    assert page.locator(".thebe-cell").count() == len(saved)
    assert page.locator(".thebe-cell .thebe-cell, .thebe-cell .CodeMirror .CodeMirror").count() == 0
    assert page.locator("div.cell").evaluate_all("(cells) => cells.every((c) => c.querySelectorAll('.thebe-cell').length <= 1)")
    cells = _live_cells(page)
    _mark_shown(page)
    cells.nth(0).locator(".thebe-run-button").click()
    cells.nth(1).locator(".thebe-run-button").click()
    assert _mask(_wait_for_new_output(page, cells.nth(1))) == _mask(saved[1])
    assert page.blocked == [], page.blocked[:5]
