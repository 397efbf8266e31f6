"""The computed sentences of the ELBO, transformer-block and MNIST chapters that the figure modules no longer write.

(The transformer-block chapter's sentences are Markdown with glued numbers and claims: see test_claims_middle.py.)

- the figures' alt texts, which the chapters now give (``describe(fig, f"...")`` after the builder): every figure
  or panel a chapter builds with figures/elbo.py, block.py, bridge.py or mnist.py is described in the same cell, and
  each description, a sentence or an f-string that pastes numbers and chooses no word, is one the book's screen test
  accepts.
"""

import ast
import importlib
import re
from pathlib import Path

import numpy as np
import pytest

from probdr_lite.chapters import transformer_block as TB
from probdr_lite.presentation.figures import block as K
from probdr_lite.presentation.figures import bridge as B
from probdr_lite.presentation.prose import num

from .chapter_calls import source_cells

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = ("probdr_elbo", "transformer_block", "mnist_at_init")
MODULES = ("probdr_lite.presentation.figures.elbo", "probdr_lite.presentation.figures.block", "probdr_lite.presentation.figures.bridge",
           "probdr_lite.presentation.figures.mnist")


# ---------------------------------------------------------------------------------------------------------------------
# The figures' alt texts, written in the chapters


BUILDERS = {name for m in MODULES for name in importlib.import_module(m).__all__
            if name.endswith(("_figure", "_panel"))}
#: What the chapters pass for the values these tests cannot take from the source (the data's labels).
STAND_INS = {"labels": np.zeros(10_000, dtype=int), "labels_1k": np.zeros(1_000, dtype=int)}


#: The nodes a settings expression may hold: literals, names, attributes and subscripts of settings (``SETUP.q``,
#: ``TOY_SETTINGS[k]["default"]``), generator expressions over them, and ``dict(...)``.
SETTING_NODES = (ast.Constant, ast.Tuple, ast.List, ast.Dict, ast.keyword, ast.Load, ast.Store, ast.Name, ast.Attribute,
                 ast.Subscript, ast.GeneratorExp, ast.comprehension)


def chapter_namespace(chapter):
    """The chapter's imports from probdr_lite and its assignments of settings (``q = SETUP.q``,
    ``gammas = (gamma, 0.1)``, ``masked = dict(n_steps=depth, ...)``, ``kappa, eta = (S[k] for k in ...)``), with
    stand-ins for the data: enough to evaluate what it passes to fill. An assignment that needs a name computed from
    data (not in the namespace) is skipped."""
    ns = dict(STAND_INS)
    for cell in source_cells(ROOT / "book" / "src" / f"{chapter}.py"):
        for node in cell.body:
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("probdr_lite"):
                module = importlib.import_module(node.module)
                ns.update({a.asname or a.name: getattr(module, a.name) for a in node.names})
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 \
                    and isinstance(node.targets[0], (ast.Name, ast.Tuple)):
                setting = all(isinstance(n, SETTING_NODES)
                              or (isinstance(n, ast.Call) and ast.unparse(n.func) == "dict") for n in ast.walk(node.value))
                if not setting:
                    continue
                try:
                    value = eval(compile(ast.Expression(node.value), chapter, "eval"), dict(ns))
                except NameError:
                    continue
                target = node.targets[0]
                if isinstance(target, ast.Name):
                    ns[target.id] = value
                elif all(isinstance(t, ast.Name) for t in target.elts):
                    ns.update(zip((t.id for t in target.elts), value))
    return ns


def alt_texts(chapter):
    """(line, expression) for every alt text the chapter gives: ``describe(fig, ALT)`` or a builder's ``alt=ALT``."""
    found = []
    for cell in source_cells(ROOT / "book" / "src" / f"{chapter}.py"):
        for n in ast.walk(cell):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "describe":
                found.append((n.lineno, n.args[1]))
            elif isinstance(n, ast.Call):
                found += [(n.lineno, k.value) for k in n.keywords if k.arg == "alt"]
    return found


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_figure_the_chapter_builds_is_described_in_its_cell(chapter):
    built = 0
    for cell in source_cells(ROOT / "book" / "src" / f"{chapter}.py"):
        described = {ast.unparse(n.args[0]) for n in ast.walk(cell) if isinstance(n, ast.Call)
                     and isinstance(n.func, ast.Name) and n.func.id == "describe"}
        for node in ast.walk(cell):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                    and isinstance(node.value.func, ast.Name) and node.value.func.id in BUILDERS:
                name = ast.unparse(node.targets[0])
                assert {name, f"{name}.fig"} & described, f"{chapter} line {node.lineno}: {name} has no alt text"
                built += 1
    assert built >= 3


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_alt_text_fills_into_a_sentence(chapter):
    ns = chapter_namespace(chapter)
    alts = alt_texts(chapter)
    assert alts
    for line, alt in alts:
        if isinstance(alt, (ast.Constant, ast.Name)):  # a sentence written out, or the name of one
            text = alt.value if isinstance(alt, ast.Constant) else ns[alt.id]
        else:  # an f-string that pastes numbers (no word chosen)
            assert isinstance(alt, (ast.JoinedStr, ast.BinOp)), f"line {line}: {ast.unparse(alt)}"
            assert not [n for n in ast.walk(alt) if isinstance(n, (ast.IfExp, ast.Compare, ast.BoolOp))], line
            text = eval(compile(ast.Expression(alt), chapter, "eval"), ns)
        assert "{" not in text and "$" not in text, f"line {line}: {text}"  # alt text is not typeset
        assert len(text.split()) >= 5 and text.endswith("."), f"line {line}: {text}"
