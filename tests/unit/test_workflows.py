"""The GitHub workflows parse and run README's two commands: CI runs .ci/run (which runs the test
command), Pages builds with the build command and publishes _build/html on pushes to the branch
that _config.yml names."""

import re
from pathlib import Path

import pytest
import yaml

from tests.tool_modules import tool

ROOT = Path(__file__).resolve().parents[2]
notebooks = tool("notebooks")  # tools/notebooks.py: the repository's notebook tooling
WORKFLOWS = ROOT / ".github" / "workflows"


def readme_commands():
    """{"build": ..., "test": ...} from the bash block under README's "The two commands"."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## The two commands", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    commands = [line.split("#", 1)[0].strip() for line in block.splitlines() if line.strip()]
    assert len(commands) == 2, commands
    return {"build": commands[0], "test": commands[1]}


def load(name):
    wf = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    wf["on"] = wf.pop("on", None) or wf.pop(True)  # YAML 1.1 reads the key `on` as True
    return wf


def steps(wf):
    return [step for job in wf["jobs"].values() for step in job["steps"]]


def test_readme_names_the_build_and_test_commands():
    assert readme_commands() == {"build": "make book", "test": "make test"}


def test_ci_runs_ci_run_on_every_push_and_pull_request():
    wf = load("ci.yml")
    assert {"push", "pull_request"} <= set(wf["on"])
    assert (wf["on"]["push"] or {}).get("branches") is None, "every branch, not only main"
    runs = [s.get("run", "").strip() for s in steps(wf)]
    assert "bash .ci/run" in runs
    assert any(s.get("uses", "").startswith("actions/checkout@") for s in steps(wf))


def test_ci_run_runs_readmes_test_command_then_the_unit_suite_on_another_vector_path():
    """.ci/run ends in README's test command, then the unit suite again on PyTorch's portable kernels, MKL's
    compatible path and one thread (Makefile's OTHER_CPU), so a test pinned to one CPU's rounding fails CI."""
    lines = [l.strip() for l in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    commands = [l for l in lines if l and not l.startswith("#")]
    assert commands[-2:] == [readme_commands()["test"], "make unit-other-cpu"]
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    other = re.search(r"^OTHER_CPU := (.*)$", make, flags=re.M).group(1).split()
    assert {"ATEN_CPU_CAPABILITY=default", "MKL_CBWR=COMPATIBLE", "OMP_NUM_THREADS=1"} <= set(other)
    assert not any(v.startswith("OPENBLAS_CORETYPE") for v in other)  # the machine's own setting stays
    assert re.search(r"^unit-other-cpu: install\n(\t.*\n)*\tenv \$\(OTHER_CPU\) \$\(PY\) -m pytest tests/unit", make,
                     flags=re.M)


def test_pages_builds_with_readmes_command_and_deploys_the_html():
    wf = load("pages.yml")
    branch = notebooks.repository()[1]
    assert wf["on"]["push"]["branches"] == [branch]
    assert wf["permissions"]["pages"] == "write" and wf["permissions"]["id-token"] == "write"
    build, deploy = wf["jobs"]["build"], wf["jobs"]["deploy"]
    assert [s["run"].strip() for s in build["steps"] if "run" in s] == [readme_commands()["build"]]
    upload = [s for s in build["steps"] if s.get("uses", "").startswith("actions/upload-pages-artifact@")]
    assert len(upload) == 1 and upload[0]["with"]["path"] == "_build/html"
    assert deploy["needs"] == "build" and deploy["environment"]["name"] == "github-pages"
    assert any(s.get("uses", "").startswith("actions/deploy-pages@") for s in deploy["steps"])


@pytest.mark.parametrize("name", ["ci.yml", "pages.yml"])
def test_actions_are_pinned_to_a_major_version(name):
    for step in steps(load(name)):
        if "uses" in step:
            assert re.fullmatch(r"actions/[\w-]+@v\d+", step["uses"]), step["uses"]


def test_the_build_makes_what_pages_publishes():
    """`make book` builds into _build/html, the folder the Pages workflow uploads."""
    assert 'HTML = ROOT / "_build" / "html"' in (ROOT / "tools" / "build_book.py").read_text(encoding="utf-8")
    assert re.search(r"^book: install\n\t\$\(PY\) tools/build_book\.py", (ROOT / "Makefile").read_text(), re.M)
