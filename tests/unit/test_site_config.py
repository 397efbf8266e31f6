"""The site's configuration: self-contained JavaScript, pinned versions, one place for the repository.

Fast checks of the files (no build); tests/book checks the built site itself.
"""

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.tool_modules import tool

ROOT = Path(__file__).resolve().parents[2]
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
SPHINX = CONFIG["sphinx"]["config"]
notebooks = tool("notebooks")  # tools/notebooks.py: the repository's notebook tooling


def _assets_module():
    return tool("sphinx_local_assets")


def test_npm_packages_are_pinned_exactly_and_locked():
    deps = json.loads((ROOT / "package.json").read_text())["dependencies"]
    # marked: Live Code's parser for Markdown outputs (Thebe's renderer has none)
    assert set(deps) == {"mathjax", "requirejs", "@jupyter-widgets/html-manager", "thebe", "marked"}
    for name, version in deps.items():
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"{name} must be pinned to an exact version: {version}"
    assert deps["mathjax"].startswith("3."), "Sphinx's mathjax3_config needs MathJax 3"
    assert deps["@jupyter-widgets/html-manager"].startswith("1.0."), "ipywidgets 8 uses the 1.0.x HTML manager"
    # sphinx-thebe 0.3 drives Thebe through window.thebelab (bootstrap, on("status")), which 0.9 still provides
    assert deps["thebe"].startswith("0.9."), "sphinx-thebe's launch code needs Thebe's thebelab API"
    lock = json.loads((ROOT / "package-lock.json").read_text())
    assert lock["packages"][""]["dependencies"] == deps, "package-lock.json is stale: run `npm install`"
    for name, version in deps.items():
        assert lock["packages"][f"node_modules/{name}"]["version"] == version


def test_build_and_test_npm_packages_are_pinned_and_never_served():
    """The tools that build and check the site, never copied into it: axe-core (injected into pages by the browser
    tests), Lighthouse (benchmarks/bench_lighthouse.py; 12.x runs on Node 20, 13 needs 22) and mathjax-full, MathJax
    for Node, which typesets the maths when the book is built (tools/typeset_maths.js) and must be the release of the
    MathJax the site serves, so that maths typeset later looks the same. Pinned exactly and locked."""
    deps = json.loads((ROOT / "package.json").read_text())["dependencies"]
    dev = json.loads((ROOT / "package.json").read_text())["devDependencies"]
    assert set(dev) == {"axe-core", "lighthouse", "mathjax-full"}
    for name, version in dev.items():
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"{name} must be pinned to an exact version: {version}"
    assert re.fullmatch(r"4\.\d+\.\d+", dev["axe-core"]), dev
    assert dev["lighthouse"].startswith("12."), "Lighthouse 13 needs Node 22"
    assert dev["mathjax-full"] == deps["mathjax"]
    lock = json.loads((ROOT / "package-lock.json").read_text())
    assert lock["packages"][""]["devDependencies"] == dev
    for name, version in dev.items():
        assert lock["packages"][f"node_modules/{name}"]["version"] == version
    assets = _assets_module()
    assert not set(dev) & {package for package, _, _ in assets.ASSETS}


def test_the_site_points_at_its_own_copies_of_the_javascript():
    """mathjax_path and nb_ipywidgets_js name files that tools/sphinx_local_assets.py copies."""
    assets = _assets_module()
    copied = {f"{assets.PREFIX}/{dest}/{Path(pattern).name}" for _, pattern, dest in assets.ASSETS}
    urls = [SPHINX["mathjax_path"], *SPHINX["nb_ipywidgets_js"]]
    assert [Path(u).name for u in SPHINX["nb_ipywidgets_js"]] == ["require.js", "embed-amd.js"]  # order matters
    for url in urls:
        assert "://" not in url and not url.startswith("/"), url
        assert url in copied, f"{url} is not among the files copied into vendor/: {sorted(copied)}"
    for attrs in SPHINX["nb_ipywidgets_js"].values():
        assert not any("://" in str(v) for v in attrs.values()), "no CDN in the widget script attributes"
    assert "sphinx_local_assets" in CONFIG["sphinx"]["local_extensions"]


def test_vendor_assets_copy_from_node_modules(tmp_path):
    assets = _assets_module()
    if not (assets.NODE_MODULES / "mathjax" / "package.json").exists():
        pytest.skip("node_modules is not installed (make install runs npm ci)")
    written = assets.copy_assets(tmp_path)
    names = {p.relative_to(tmp_path).as_posix() for p in written}
    assert "vendor/mathjax/tex-chtml.js" in names
    assert "vendor/mathjax/input/tex/extensions/autoload.js" in names
    assert "vendor/requirejs/require.js" in names
    assert "vendor/jupyter-widgets/html-manager/embed-amd.js" in names
    assert any(n.startswith("vendor/mathjax/output/chtml/fonts/woff-v2/") for n in names)
    assert sum(p.stat().st_size for p in written) < 10_000_000
    assert "Apache" in (tmp_path / "vendor" / "PACKAGES.txt").read_text()


def test_no_third_party_javascript_is_committed():
    try:
        files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    tracked = files.split()
    third_party = re.compile(r"(^|/)(node_modules|vendor)/|(^|/)(tex-[\w-]+|mml-[\w-]+|require(\.min)?|embed(-amd)?)\.js$")
    assert not [f for f in tracked if third_party.search(f)]
    ignored = (ROOT / ".gitignore").read_text().split()
    assert "node_modules" in ignored or "node_modules/" in ignored


def test_makefile_installs_the_javascript_only_when_the_lock_changes():
    makefile = (ROOT / "Makefile").read_text()
    rule = re.search(r"^\$\(NPM_STAMP\):(.*)$", makefile, re.M)
    assert rule and "package-lock.json" in rule.group(1) and "package.json" in rule.group(1)
    assert "npm ci" in makefile
    assert re.search(r"^install: .*\$\(NPM_STAMP\)", makefile, re.M)


def test_repository_and_launch_buttons_are_set_in_one_place():
    repo = CONFIG["repository"]
    assert re.fullmatch(r"https://github\.com/[^/]+/[^/]+", repo["url"])
    assert repo["branch"] == "main"
    launch = CONFIG["launch_buttons"]
    assert launch["binderhub_url"] == "https://mybinder.org"
    assert launch["colab_url"] == "https://colab.research.google.com"
    assert CONFIG["html"]["use_repository_button"] and CONFIG["html"]["use_issues_button"]


def test_ci_requires_the_browser_tests():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "PROBDR_REQUIRE_BROWSER=1" in ci and "chromium" in ci and "make test" in ci


def test_colab_cell_installs_the_branch_the_launch_buttons_open():
    """Jupyter Book's Binder and Colab buttons open repository.branch; the Colab cell must install
    the package from that same ref, so notebook and package come from one commit."""
    repo = CONFIG["repository"]
    assert notebooks.repository() == (repo["url"], repo["branch"])
    assert notebooks.COLAB_REF == repo["branch"]
    cell = notebooks.colab_cell_source()
    assert cell.rstrip().endswith(f'git+{repo["url"]}@{repo["branch"]}"')
    # and the ref follows the config: another branch in _config.yml gives another cell
    assert "@v9.9-test\"" in notebooks.colab_cell_source(ref="v9.9-test")


def test_repository_settings_are_validated(tmp_path):
    bad = tmp_path / "_config.yml"
    bad.write_text("repository:\n  url: https://example.org/x\n  branch: main\n")
    with pytest.raises(ValueError, match="repository.url"):
        notebooks.repository(bad)
    bad.write_text("repository:\n  url: https://github.com/a/b\n  branch: 'no spaces allowed'\n")
    with pytest.raises(ValueError, match="repository.branch"):
        notebooks.repository(bad)


#: The major version of @jupyter-widgets/controls (JavaScript) and the ipywidgets release it renders.
CONTROLS_TO_IPYWIDGETS = {5: 8, 4: 7, 3: 7}


def test_binders_ipywidgets_is_the_one_thebes_widget_manager_renders():
    """Live Code runs the page's cells on Binder and renders their widgets with the widget manager bundled in the
    Thebe the site serves: the Binder environment must hold the ipywidgets of that manager (7 and 8 speak
    different protocols). Read from package-lock.json (what npm ci installs) and binder/environment.yml."""
    from packaging.specifiers import SpecifierSet

    lock = json.loads((ROOT / "package-lock.json").read_text())["packages"]
    controls = lock["node_modules/thebe"]["dependencies"]["@jupyter-widgets/controls"]
    major = CONTROLS_TO_IPYWIDGETS[int(re.match(r"\D*(\d+)", controls).group(1))]
    env = yaml.safe_load((ROOT / "binder" / "environment.yml").read_text())
    spec = next(SpecifierSet(re.sub(r"^ipywidgets\s*", "", d.split("#")[0]).strip())
                for d in env["dependencies"] if isinstance(d, str) and d.startswith("ipywidgets"))
    assert spec.contains(f"{major}.1.0") and not spec.contains(f"{major - 1}.99") and not spec.contains(f"{major + 1}.0"), (
        f"Thebe bundles @jupyter-widgets/controls {controls} (ipywidgets {major}); binder/ asks for ipywidgets{spec}")
    from probdr_lite.chapters import environment
    pins = {p.name: p.version for p in environment.read_lock(ROOT / "requirements-lock.txt")}
    assert pins["ipywidgets"].split(".")[0] == str(major), "the Live Code test's kernel (the lock) must match too"


def test_live_code_script_fixes_thebe_09_under_sphinx_thebe():
    """The launch that replaces sphinx-thebe's (THEBE_SETUP_JS in tools/sphinx_local_assets.py, which loads
    tools/site/probdr-thebe.js on the first click) carries each fix the Live Code tests rely on; the browser tests
    (tests/book/test_live_code.py) check that they work."""
    assets = _assets_module()
    inline = assets.THEBE_SETUP_JS
    assert "window.initThebe = function" in inline and "urls.launcher" in inline and "probdrLiveCode.launch" in inline
    assert "probdr-thebe.js" in assets.SITE_FILES and assets.THEBE_LAUNCHER.endswith("/probdr-thebe.js")
    js = (ROOT / "tools" / "site" / "probdr-thebe.js").read_text()
    for needle in ("requestKernel: true", "useBinder: binder", "kernelName:", "data-output", "urls.requirejs",
                   "font-awesome", "css.href",
                   "Promise.race([server.ready",     # connect and start a kernel before touching the cells
                   "urls.notebook",                  # one kernel session per chapter
                   "session.restart()", "settled()",  # a real restart; runs wait for it
                   "markdownParser", "typesetPromise",  # Markdown outputs: marked, the site's MathJax
                   "where(options)"):                # the button names the server used
        assert needle in js, needle
    assert "cdnjs" in js and "abs(urls.requirejs)" in js  # the cdnjs URL is only matched, never fetched  # the cdnjs URL is only matched, never fetched
