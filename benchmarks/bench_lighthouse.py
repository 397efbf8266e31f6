"""Benchmark: Lighthouse's mobile audit of every page of the book, the site before and after, in one run (issue 44).

    python benchmarks/bench_lighthouse.py [--after DIR] [--before DIR | --before-commit REV] [--pages GLOB ...]
                                          [--runs N] [--json OUT]

For each page in ``_toc.yml`` it prints Lighthouse's performance score, largest contentful paint (LCP), total
blocking time (TBT) and the bytes transferred, and its accessibility score, for the site as it was before
(``--before``) beside the site as it is now (``--after``, default ``_build/html``: run ``make book`` first). The
two sites are measured page by page, one after the other, in the same run, so that both see the same load on the
machine. Nothing is asserted (tests never assert seconds); the targets of issue 44 are shown beside the numbers:
performance at least 0.90, LCP at most 2.5 s, TBT at most 200 ms, accessibility 1.00.

How it measures. Each site is served from 127.0.0.1 as a static host such as GitHub Pages serves it: gzip for
text (HTML, CSS, JavaScript, JSON, SVG), files as they are otherwise, ``Cache-Control: max-age=600``. Lighthouse
12.2.3 (npm, ``node_modules/.bin/lighthouse``; 13 needs Node 22) runs its default mobile audit: a mid-range phone's
screen, simulated slow 4G (150 ms round trip, 1.6 Mbit/s) and a CPU slowed 4x, in Debian's Chromium
(``tests/chromium.py`` finds it; headless). With ``--runs N`` each page is audited N times per site and the median
run (by performance score) is printed. Lighthouse's own warnings (e.g. a busy machine's CPU benchmark) are printed
under the tables.

Two tables. Lighthouse simulates the phone's slower CPU by multiplying the time each task took on this host by 4,
which assumes a host whose CPU benchmark index (Lighthouse measures it at the start of each run) is about 1,500; a
busy shared machine scores far lower and its pages look slower than a phone would make them. So each page load is
audited twice: at Lighthouse's default 4x (the first table, the issue's measure) and at the slowdown calibrated to
the benchmark index of that very run (:func:`cpu_multiplier`, the Lighthouse team's calibration), both printed.

The site before. ``--before DIR`` names a built site. Without it, the site of ``--before-commit`` (default
:data:`BEFORE_COMMIT`, main before issue 44) is used from ``~/.cache/probdr-lite/site-<commit>/``; when that folder
is missing it is built once: a ``git worktree`` of that commit under the cache folder, this checkout's
``node_modules`` and Python, ``tools/build_book.py`` (a full build, every notebook executed: 10-20 minutes), then the
worktree is removed and its ``_build/html`` kept.
"""

from __future__ import annotations

import argparse
import fnmatch
import functools
import gzip
import http.server
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.chromium import chromium_path  # noqa: E402
from tests.tool_modules import tool  # noqa: E402

#: main before issue 44: the site whose numbers the issue quotes.
BEFORE_COMMIT = "f2d98a5"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "probdr-lite"
LIGHTHOUSE = ROOT / "node_modules" / ".bin" / "lighthouse"
#: What a static host compresses (GitHub Pages gzips these; images and fonts are sent as they are).
GZIP_TYPES = ("text/html", "text/css", "application/javascript", "text/javascript", "application/json",
              "image/svg+xml", "text/plain", "application/xml", "text/xml")
TARGETS = {"performance": 0.90, "lcp_s": 2.5, "tbt_ms": 200.0, "accessibility": 1.00}
CHROME_FLAGS = "--headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage --disable-background-networking " \
               "--disable-component-update --no-first-run"


class StaticHost(http.server.SimpleHTTPRequestHandler):
    """A static host on loopback: gzip for text, the file itself otherwise, a short cache lifetime, no log."""

    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".js": "application/javascript",
                      ".mjs": "application/javascript", ".json": "application/json", ".svg": "image/svg+xml",
                      ".woff2": "font/woff2", ".woff": "font/woff", ".webp": "image/webp", ".wasm": "application/wasm"}
    _gz: dict = {}
    _gz_lock = threading.Lock()

    def log_message(self, *args):
        pass

    def end_headers(self):
        self.send_header("Cache-Control", "max-age=600")
        super().end_headers()

    def send_head(self):
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            return super().send_head()  # redirects and index.html, as the base class does
        ctype = self.guess_type(str(path))
        if not path.is_file() or not ctype.startswith(GZIP_TYPES) or "gzip" not in self.headers.get(
                "Accept-Encoding", ""):
            return super().send_head()
        key = (str(path), path.stat().st_mtime_ns)
        with self._gz_lock:
            body = self._gz.get(key)
            if body is None:
                body = self._gz[key] = gzip.compress(path.read_bytes(), compresslevel=6)
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Vary", "Accept-Encoding")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        import io

        return io.BytesIO(body)


def serve(site: Path):
    """Serve ``site`` on 127.0.0.1 (a thread); return (base URL, server)."""
    handler = type("Host", (StaticHost,), {"_gz": {}})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(site)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{httpd.server_address[1]}", httpd


def cpu_multiplier(benchmark_index: float) -> float:
    """The CPU slowdown that makes this host a mid-range phone, from the benchmark index Lighthouse measured on it
    (the Lighthouse team's calibration, github.com/patrickhulce/lighthouse-cpu-throttling-calculator, to which
    Lighthouse's docs/throttling.md points): 4x at an index of 1533 (Lighthouse's default assumes such a host)."""
    if benchmark_index >= 1300:
        return 3 + (benchmark_index - 1300) / 233
    if benchmark_index >= 800:
        return 2 + (benchmark_index - 800) / 500
    if benchmark_index >= 150:
        return 1 + (benchmark_index - 150) / 650
    return 1.0


def _numbers(lhr: dict) -> dict:
    audits, cats = lhr["audits"], lhr["categories"]
    return {
        "performance": cats["performance"]["score"],
        "accessibility": cats["accessibility"]["score"],
        "lcp_s": audits["largest-contentful-paint"]["numericValue"] / 1000,
        "fcp_s": audits["first-contentful-paint"]["numericValue"] / 1000,
        "tbt_ms": audits["total-blocking-time"]["numericValue"],
        "cls": audits["cumulative-layout-shift"]["numericValue"],
        "kib": audits["total-byte-weight"]["numericValue"] / 1024,
        "benchmark_index": lhr.get("environment", {}).get("benchmarkIndex"),
        "cpu_multiplier": lhr["configSettings"]["throttling"]["cpuSlowdownMultiplier"],
        "warnings": lhr.get("runWarnings", []),
        "failed_a11y": sorted(k for k, a in audits.items() if a.get("scoreDisplayMode") == "binary"
                              and a.get("score") == 0 and k in {r["id"] for r in cats["accessibility"]["auditRefs"]}),
    }


def audit(url: str, chrome: str, workdir: Path) -> dict:
    """One Lighthouse run of ``url`` (mobile, simulated throttling): ``{"standard": numbers at Lighthouse's default
    4x CPU slowdown, "calibrated": the same page load's numbers at the slowdown calibrated to this host's benchmark
    index}`` (Lighthouse simulates the throttling after the load, so one load gives both)."""
    artifacts, out = workdir / "artifacts", workdir / "report.json"
    shutil.rmtree(artifacts, ignore_errors=True)
    out.unlink(missing_ok=True)
    env = {**os.environ, "CHROME_PATH": chrome}
    common = [str(LIGHTHOUSE), url, "--quiet", "--output=json", f"--output-path={out}",
              "--only-categories=performance,accessibility", "--max-wait-for-load=90000"]
    proc = subprocess.run(common + [f"-GA={artifacts}", f"--chrome-flags={CHROME_FLAGS}"],
                          env=env, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0 or not out.is_file():
        return {"standard": {"error": (proc.stderr or proc.stdout)[:600]}}
    standard = _numbers(json.loads(out.read_text(encoding="utf-8")))
    multiplier = round(cpu_multiplier(standard["benchmark_index"] or 1533), 2)
    # the same load audited again at the calibrated slowdown (the saved settings must say it too)
    saved = json.loads((artifacts / "artifacts.json").read_text(encoding="utf-8"))
    saved["settings"]["throttling"]["cpuSlowdownMultiplier"] = multiplier
    (artifacts / "artifacts.json").write_text(json.dumps(saved), encoding="utf-8")
    out.unlink()
    proc = subprocess.run(common + [f"-A={artifacts}", f"--throttling.cpuSlowdownMultiplier={multiplier}"],
                          env=env, capture_output=True, text=True, timeout=600)
    calibrated = (_numbers(json.loads(out.read_text(encoding="utf-8"))) if proc.returncode == 0 and out.is_file()
                  else {"error": (proc.stderr or proc.stdout)[:600]})
    return {"standard": standard, "calibrated": calibrated}


def median_run(runs: list, kind: str) -> dict:
    """The run whose ``kind`` ("standard" or "calibrated") performance score is the median of the runs."""
    ok = [r.get(kind, {}) for r in runs if "error" not in r.get(kind, {"error": 1})]
    if not ok:
        return runs[-1].get(kind) or runs[-1]["standard"]
    ok.sort(key=lambda r: r["performance"])
    return ok[(len(ok) - 1) // 2]


def before_site(commit: str) -> Path:
    """The built site of ``commit`` in the cache, built once (see the module's docstring)."""
    sha = subprocess.run(["git", "rev-parse", "--short=7", commit], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.strip()
    site = CACHE / f"site-{sha}"
    if (site / "index.html").is_file():
        return site
    print(f"building the site of {sha} once into {site} (every notebook executed: 10-20 minutes)", flush=True)
    CACHE.mkdir(parents=True, exist_ok=True)
    tree = Path(tempfile.mkdtemp(prefix=f"worktree-{sha}-", dir=CACHE))
    subprocess.run(["git", "worktree", "add", "--detach", str(tree), sha], cwd=ROOT, check=True)
    try:
        (tree / "node_modules").symlink_to(ROOT / "node_modules")
        env = {**os.environ, "PYTHONPATH": str(tree)}
        proc = subprocess.run([sys.executable, str(tree / "tools" / "build_book.py")], cwd=tree, env=env)
        if proc.returncode != 0:
            raise SystemExit(f"the build of {sha} failed; pass a built site with --before DIR")
        shutil.copytree(tree / "_build" / "html", site.with_suffix(".partial"), dirs_exist_ok=True)
        site.with_suffix(".partial").rename(site)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=False)
    return site


#: What a page that one of the two sites does not have shows in the tables.
NEW_PAGE = "not in this site"


def fmt(r: dict | None, key: str) -> str:
    if not r or "error" in r:
        return "-" if not r or r["error"] == NEW_PAGE else "error"
    v = r[key]
    return {"performance": f"{v:.2f}", "accessibility": f"{v:.2f}", "lcp_s": f"{v:.1f} s",
            "tbt_ms": f"{v:,.0f} ms", "kib": f"{v:,.0f}"}[key]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--after", type=Path, default=ROOT / "_build" / "html", help="the site now (default _build/html)")
    ap.add_argument("--before", type=Path, help="the site before, built (default: --before-commit's, cached)")
    ap.add_argument("--before-commit", default=BEFORE_COMMIT, help=f"the commit of the site before ({BEFORE_COMMIT})")
    ap.add_argument("--pages", nargs="*", default=["*"], help="only the toc pages matching these globs")
    ap.add_argument("--runs", type=int, default=1, help="Lighthouse runs per page and site (the median is shown)")
    ap.add_argument("--json", type=Path, help="also write every number to this file")
    args = ap.parse_args(argv)
    chrome = chromium_path()
    if chrome is None:
        print("no Chromium found (apt-get install chromium, or set PROBDR_CHROMIUM)", file=sys.stderr)
        return 2
    if not LIGHTHOUSE.exists():
        print(f"{LIGHTHOUSE} is missing: run `npm ci` (Lighthouse is pinned in package.json's devDependencies)",
              file=sys.stderr)
        return 2
    if args.after == ROOT / "_build" / "html":
        build_book = tool("build_book")
        if not (args.after / "index.html").is_file():
            if build_book.build() != 0:  # make book's build, every notebook executed
                return 1
        elif not build_book.is_current():
            print(f"note: {args.after} is not a build of the checkout as it is now (make book builds one); measuring "
                  "it as it is", flush=True)
    if not (args.after / "index.html").is_file():
        print(f"{args.after} is not a built site", file=sys.stderr)
        return 2
    before = args.before or before_site(args.before_commit)
    pages = [f"{d}.html" for d in tool("notebooks").toc_pages(ROOT / "_toc.yml")]
    pages = [p for p in pages if any(fnmatch.fnmatch(p, g) or fnmatch.fnmatch(Path(p).stem, g) for g in args.pages)]
    (b_url, b_srv), (a_url, a_srv) = serve(before), serve(args.after)
    runs = {}
    version = subprocess.run([str(LIGHTHOUSE), "--version"], capture_output=True, text=True).stdout.strip()
    print(f"Lighthouse {version}, mobile (simulated slow 4G, the CPU slowed); before: {before}; after: {args.after}",
          flush=True)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for page in pages:
                runs[page] = {"before": [], "after": []}
                for _ in range(args.runs):  # before and after in turn, so that both meet the same load
                    for name, url, site in (("before", b_url, before), ("after", a_url, args.after)):
                        if not (site / page).is_file():  # a page that the site before did not have yet
                            runs[page][name].append({kind: {"error": NEW_PAGE} for kind in ("standard", "calibrated")})
                            continue
                        runs[page][name].append(audit(f"{url}/{page}", chrome, Path(tmp)))
                b, a = (median_run(runs[page][n], "standard") for n in ("before", "after"))
                print(f"  {page}: {fmt(b, 'performance')} -> {fmt(a, 'performance')}", flush=True)
    finally:
        b_srv.shutdown()
        a_srv.shutdown()
    results = {kind: {page: {n: median_run(r[n], kind) for n in r} for page, r in runs.items()}
               for kind in ("standard", "calibrated")}
    index = [s.get("benchmark_index") for r in results["standard"].values() for s in r.values() if "error" not in s]
    mult = [s.get("cpu_multiplier") for r in results["calibrated"].values() for s in r.values() if "error" not in s]
    titles = {"standard": "Lighthouse's default mobile audit (CPU slowed 4x)",
              "calibrated": "CPU slowdown calibrated to this host's benchmark index"
                            + (f" ({min(mult):.1f}x to {max(mult):.1f}x)" if mult else "")}
    for kind, title in titles.items():
        table(results[kind], title)
    if index:
        print(f"\nthis host's CPU benchmark index (Lighthouse's): {min(index):.0f} to {max(index):.0f} over the runs; "
              "Lighthouse's default 4x assumes about 1,500 (a busy or slow host scores lower, and the pages with it)")
    notes = sorted({w for r in results["standard"].values() for s in r.values() if "error" not in s
                    for w in s["warnings"]})
    for w in notes:
        print(f"Lighthouse: {w}")
    for page, r in results["standard"].items():
        for name, s in r.items():
            if "error" in s and s["error"] == NEW_PAGE:
                print(f"{page} ({name}): {NEW_PAGE}")
            elif "error" in s:
                print(f"{page} ({name}): Lighthouse failed: {s['error']}")
            elif s["failed_a11y"]:
                print(f"{page} ({name}): accessibility audits failed: {', '.join(s['failed_a11y'])}")
    if args.json:
        args.json.write_text(json.dumps({"runs": runs, **results}, indent=1), encoding="utf-8")
    return 0


def table(results: dict, title: str) -> None:
    head = f"{'page':24s} {'performance':>13s} {'LCP':>15s} {'TBT':>19s} {'KiB':>13s} {'accessibility':>13s}"
    print(f"\n{title}\n{head}\n" + "-" * len(head))
    for page, r in results.items():
        b, a = r["before"], r["after"]
        print(f"{Path(page).stem:24s} {fmt(b, 'performance'):>5s} -> {fmt(a, 'performance'):>5s} "
              f"{fmt(b, 'lcp_s'):>6s} -> {fmt(a, 'lcp_s'):>6s} {fmt(b, 'tbt_ms'):>8s} -> {fmt(a, 'tbt_ms'):>8s} "
              f"{fmt(b, 'kib'):>5s} -> {fmt(a, 'kib'):>5s} {fmt(b, 'accessibility'):>5s} -> {fmt(a, 'accessibility'):>5s}")
    after = [r["after"] for r in results.values() if "error" not in r["after"]]
    if after:
        print(f"after, worst page: performance {min(r['performance'] for r in after):.2f} (target "
              f">= {TARGETS['performance']:.2f}), LCP {max(r['lcp_s'] for r in after):.1f} s (<= {TARGETS['lcp_s']} s), "
              f"TBT {max(r['tbt_ms'] for r in after):,.0f} ms (<= {TARGETS['tbt_ms']:.0f} ms), accessibility "
              f"{min(r['accessibility'] for r in after):.2f} (target {TARGETS['accessibility']:.2f})")


if __name__ == "__main__":
    sys.exit(main())
