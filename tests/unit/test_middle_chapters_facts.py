"""The computed sentences of the ELBO, transformer-block and MNIST chapters that the figure modules no longer write.

- the bridge comparison of the two chapters' steps (figures/bridge.py, :func:`bridge_facts`): every fact against
  the numbers computed again here, and every word and boolean on numbers either side of its threshold;
- the chapter's template for it (``book/src/transformer_block.py``), every branch filled from real facts, choosing
  only on boolean facts;
- the figures' alt texts, which the chapters now give (``describe(fig, fill(...))`` after the builder): every figure
  or panel a chapter builds with figures/elbo.py, block.py, bridge.py or mnist.py is described in the same cell, and
  each description fills from the values the cell passes into a sentence the book's screen test accepts.
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
from probdr_lite.presentation.prose import fill, num

from .chapter_calls import check_template, source_cells

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = ("probdr_elbo", "transformer_block", "mnist_at_init")
MODULES = ("probdr_lite.presentation.figures.elbo", "probdr_lite.presentation.figures.block", "probdr_lite.presentation.figures.bridge",
           "probdr_lite.presentation.figures.mnist")


# ---------------------------------------------------------------------------------------------------------------------
# The bridge: the two chapters' steps as h lambda_max


def test_bridge_facts_state_the_numbers():
    f = B.bridge_facts(36.6, 0.025, 1.05, 0.4)
    assert (f["lambda_max_fixed"], f["eta_elbo"], f["lambda_max_rw"], f["eta_block"]) == (36.6, 0.025, 1.05, 0.4)
    assert f["ratio"] == pytest.approx(0.4 / 0.025)
    assert f["h_fixed"] == pytest.approx(0.025 * 36.6) and f["h_block"] == pytest.approx(2 * 0.4 * 1.05)
    assert f["fixed_side"] == f["block_side"] == "inside" and f["same_side"]
    assert f["rw_bounded"] and f["convex"]
    g = B.bridge_facts(36.6, 0.06, 1.05, 0.6)  # 0.06 * 36.6 > 2; h = 1.2 > 1
    assert (g["fixed_side"], g["block_side"], g["same_side"], g["convex"]) == ("at or past", "inside", False, False)


@pytest.mark.parametrize("below", [True, False])
def test_bridge_facts_words_turn_at_their_thresholds(below):
    step = 1e-6 if not below else -1e-6
    f = B.bridge_facts(1.0, B.STABLE + step, 1.0, 0.4)  # h lambda_max of D - W just below / above 2
    assert f["fixed_side"] == ("inside" if below else "at or past") and f["same_side"] is below
    assert B.bridge_facts(1.0, B.STABLE, 1.0, 0.4)["fixed_side"] == "at or past"  # the limit itself is not stable
    f = B.bridge_facts(36.6, 0.025, 2.0 + step, 0.4)  # lambda_max of I - A just below / above the bound 2
    assert f["rw_bounded"] is below
    assert B.bridge_facts(36.6, 0.025, 2.0, 0.4)["rw_bounded"]
    f = B.bridge_facts(36.6, 0.025, 1.05, 0.5 + step)  # h = 2 eta just below / above 1
    assert f["convex"] is below
    assert B.bridge_facts(36.6, 0.025, 1.05, 0.5)["convex"]


@pytest.mark.parametrize("bad", [0.0, -1.0])
def test_bridge_facts_reject_non_positive_numbers(bad):
    for k in range(4):
        args = [36.6, 0.025, 1.05, 0.4]
        args[k] = bad
        with pytest.raises(ValueError, match="must be"):
            B.bridge_facts(*args)


# ---------------------------------------------------------------------------------------------------------------------
# The block chapter's other sentences (figures/block.py)


W = K.WORDS


def test_direction_facts():
    cos = {"attention": 0.97, "diffusion": 0.97, "paper": 0.97, "symmetric": 0.9, "exact": 1.0}
    f = K.direction_facts(cos)
    assert (f["c_A"], f["c_sym"], f["same"], f["hardly_turns"]) == (0.97, 0.9, True, True)
    apart = K.direction_facts({**cos, "paper": 0.97 + 10 * W["same_direction"]})
    assert not apart["same"]
    for side in (-1, 1):
        f = K.direction_facts({**cos, **dict.fromkeys(("attention", "diffusion", "paper"),
                                                          W["hardly_turns"] + side * 1e-6)})
        assert f["same"] and f["hardly_turns"] is (side > 0)
    with pytest.raises(ValueError, match="cosines"):
        K.direction_facts({**cos, "symmetric": 1.5})


def euler_rows(errors):
    return [{"steps": 2 ** k, "h": 1.0 / 2 ** k, "relative_error": e} for k, e in enumerate(errors)]


def test_euler_facts_on_the_chapters_rows_and_either_side_of_first_order():
    from probdr_lite.unrolled import euler_diffusion_errors

    rng = np.random.default_rng(0)
    A = rng.random((12, 12))
    A /= A.sum(1, keepdims=True)
    rows = euler_diffusion_errors(A, rng.normal(size=(12, 3)), t=0.8, n_steps=(1, 2, 4, 8, 16))
    f = K.euler_facts(rows)
    assert f["halving"] == pytest.approx(rows[-2]["relative_error"] / rows[-1]["relative_error"])
    assert f["first_order"]  # explicit Euler is a first-order method
    lo, hi = W["first_order"]
    for h, inside in ((lo - 1e-6, False), (lo + 1e-6, True), (hi - 1e-6, True), (hi + 1e-6, False)):
        assert K.euler_facts(euler_rows([0.1, h * 1e-3, 1e-3]))["first_order"] is inside
    with pytest.raises(ValueError, match=r"len\(rows\) must be in \[2, inf\)"):
        K.euler_facts(euler_rows([0.1]))


def test_regulariser_facts_turn_on_cosine_and_on_ratio():
    lo, hi = W["close_ratio"]
    c = W["close_cosine"]
    assert K.regulariser_facts(c, 1.0)["close"] and not K.regulariser_facts(c - 1e-6, 1.0)["close"]
    assert K.regulariser_facts(0.99, lo + 1e-6)["close"] and not K.regulariser_facts(0.99, lo)["close"]
    assert K.regulariser_facts(0.99, hi - 1e-6)["close"] and not K.regulariser_facts(0.99, hi)["close"]
    f = K.regulariser_facts(0.95, 1.2)
    assert (f["cosine"], f["ratio"]) == (0.95, 1.2)
    with pytest.raises(ValueError, match="ratio"):
        K.regulariser_facts(0.95, 0.0)


def test_logits_facts_turn_on_the_size_of_the_random_correlation():
    for r in (W["weak_link"] - 1e-6, -W["weak_link"] + 1e-6):
        assert K.logits_facts(0.99, r)["random_weak"]
    for r in (W["weak_link"], -W["weak_link"] - 1e-6):
        assert not K.logits_facts(0.99, r)["random_weak"]
    assert K.logits_facts(0.99, 0.05)["r_diagonal"] == 0.99


def test_mask_facts_worse_needs_both_more_asymmetry_and_a_smaller_cosine():
    f = TB.mask_facts(0.5, 0.1, 0.9, 0.98, 0.8)
    assert f["worse"] and (f["upper_full"], f["asym_full"], f["asym_causal"], f["cos_full"], f["cos_causal"]) == (
        0.5, 0.1, 0.9, 0.98, 0.8)
    assert not TB.mask_facts(0.5, 0.1, 0.9, 0.98, 0.99)["worse"]  # the cosine did not drop
    assert not TB.mask_facts(0.5, 0.9, 0.1, 0.98, 0.8)["worse"]  # the asymmetry did not grow
    with pytest.raises(ValueError, match="upper_full"):
        TB.mask_facts(1.5, 0.1, 0.9, 0.98, 0.8)


# ---------------------------------------------------------------------------------------------------------------------
# The block chapter's templates, filled on every branch


COS = {"attention": 0.97, "diffusion": 0.97, "paper": 0.97, "symmetric": 0.9, "exact": 1.0}
#: Facts functions of the chapter and arguments for which, together, every choice takes both values.
EXAMPLES = {
    "bridge_facts": [(36.6, 0.025, 1.05, 0.4), (36.6, 0.06, 1.05, 0.6), (10.0, 0.01, 2.5, 0.4)],
    "direction_facts": [(COS,), ({**COS, "paper": 0.5, "diffusion": 0.5},)],
    "euler_facts": [(euler_rows([0.1, 2e-3, 1e-3]),), (euler_rows([0.1, 4e-3, 1e-3]),)],
    "regulariser_facts": [(0.95, 1.2), (0.5, 3.0)],
    "logits_facts": [(0.99, 0.05), (0.99, -0.6)],
    "mask_facts": [(0.5, 0.1, 0.9, 0.98, 0.8), (0.5, 0.9, 0.1, 0.98, 0.99)],
}
FUNCTIONS = {"bridge_facts": B.bridge_facts, "mask_facts": TB.mask_facts,
             **{name: getattr(K, name) for name in EXAMPLES if hasattr(K, name)}}


def block_fill_calls():
    """(fill call, facts function name) for every fill of the chapter whose facts are bound in its cell."""
    calls = []
    for cell in source_cells(ROOT / "book" / "src" / "transformer_block.py"):
        bound = {t.id: n.value.func.id for n in ast.walk(cell) if isinstance(n, ast.Assign)
                 and isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Name)
                 and n.value.func.id.endswith("_facts") for t in n.targets if isinstance(t, ast.Name)}
        calls += [(n, bound[n.args[1].id]) for n in ast.walk(cell) if isinstance(n, ast.Call)
                  and isinstance(n.func, ast.Name) and n.func.id == "fill" and len(n.args) > 1
                  and isinstance(n.args[1], ast.Name) and n.args[1].id in bound]
    return calls


def test_the_block_chapter_fills_every_sentence_from_the_package_facts():
    assert sorted(name for _, name in block_fill_calls()) == sorted(EXAMPLES)
    for cell in source_cells(ROOT / "book" / "src" / "transformer_block.py"):  # no sentence built in the cell
        for md in (n for n in ast.walk(cell) if isinstance(n, ast.Call) and ast.unparse(n.func) == "Markdown"):
            assert not [n for n in ast.walk(md) if isinstance(n, (ast.JoinedStr, ast.Compare))], ast.unparse(md)


@pytest.mark.parametrize("call,name", block_fill_calls(), ids=lambda x: getattr(x, "lineno", x))
def test_every_template_of_the_block_chapter_fills_on_every_branch(call, name):
    seen = set()
    for args in EXAMPLES[name]:
        facts = FUNCTIONS[name](*args)
        choices = {ast.unparse(s): facts[s.slice.value] for s in ast.walk(call.args[0]) if isinstance(s, ast.Subscript)}
        check_template(call, facts, choices)
        seen |= set(choices.items())
        text = fill(eval(compile(ast.Expression(call.args[0]), "chapter", "eval"), {"facts": facts}), facts)
        assert not re.search(r"\{\w+(:[^}]*)?\}", text) and text.endswith("."), text  # every slot filled
        if name == "bridge_facts":
            assert num(facts["h_fixed"], 2) in text and num(facts["h_block"], 2) in text
    # the examples reach both wordings of every choice
    assert len(seen) == 2 * len({k for k, _ in seen}), seen


# ---------------------------------------------------------------------------------------------------------------------
# The figures' alt texts, written in the chapters


BUILDERS = {name for m in MODULES for name in importlib.import_module(m).__all__
            if name.endswith(("_figure", "_panel"))}
#: What the chapters pass for the values these tests cannot take from the source (the data's labels).
STAND_INS = {"labels": np.zeros(10_000, dtype=int), "labels_1k": np.zeros(1_000, dtype=int)}


def chapter_namespace(chapter):
    """The chapter's imports from probdr_lite and its assignments of literals (``q = 2``, ``gammas = (0.01, 0.1)``,
    ``masked = dict(n_steps=8, ...)``), with stand-ins for the data: enough to evaluate what it passes to fill."""
    ns = dict(STAND_INS)
    for cell in source_cells(ROOT / "book" / "src" / f"{chapter}.py"):
        for node in cell.body:
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("probdr_lite"):
                module = importlib.import_module(node.module)
                ns.update({a.asname or a.name: getattr(module, a.name) for a in node.names})
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                literal = all(isinstance(n, (ast.Constant, ast.Tuple, ast.List, ast.Dict, ast.keyword, ast.Load))
                              or (isinstance(n, ast.Call) and ast.unparse(n.func) == "dict")
                              or (isinstance(n, ast.Name) and n.id == "dict") for n in ast.walk(node.value))
                if literal:
                    ns[node.targets[0].id] = eval(compile(ast.Expression(node.value), chapter, "eval"))
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
        elif isinstance(alt, ast.JoinedStr):  # an f-string that pastes numbers into a fixed sentence
            text = eval(compile(ast.Expression(alt), chapter, "eval"), ns)
        else:
            assert isinstance(alt, ast.Call) and ast.unparse(alt.func) == "fill", f"line {line}"
            value = lambda e: eval(compile(ast.Expression(e), chapter, "eval"), ns)  # noqa: E731
            facts = {**(value(alt.args[1]) if len(alt.args) > 1 else {}),
                     **{k.arg: value(k.value) for k in alt.keywords}}
            check_template(alt, facts, {})  # no choice in an alt text
            text = fill(ast.literal_eval(alt.args[0]), facts)
        assert "{" not in text and "$" not in text, f"line {line}: {text}"  # alt text is not typeset
        assert len(text.split()) >= 5 and text.endswith("."), f"line {line}: {text}"
