"""Tests of probdr_lite.diagonal_transformer: its forward pass against probdr_lite.unrolled.unroll, its layers, its
input checks."""

import math

import pytest
import torch
import torch.nn as nn

from probdr_lite import diagonal_transformer as DT
from probdr_lite import unrolled as U

F64 = torch.float64


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/unit/conftest.py


@pytest.mark.parametrize("variant", DT.TRANSFORMER_VARIANTS)
@pytest.mark.parametrize("mask", [None, "causal"])
def test_diagonal_transformer_equals_unroll(variant, mask):
    # float32 at kappa = 30: rounding in the logits is amplified by the sharp softmax, so over 8 layers the two
    # orders of summation differ by up to a few 1e-5 on unlucky inputs; the input is seeded so the test is
    # repeatable, and the float64 test below checks the equality to round-off.
    X = U.embed(torch.rand(60, 30, generator=torch.Generator().manual_seed(0)), d_q=32, seed=1).float()
    model = DT.DiagonalTransformer(d_q=32, n_layers=8, kappa=30.0, eta=0.4, beta=1.0, variant=variant)
    with torch.no_grad():
        out = model(X, mask=mask)
    ref = U.unroll(X, 8, 30.0, 0.4, 1.0, variant, mask=mask)[-1]
    assert (out - ref).abs().max() < 1e-5
    batched = model(torch.stack([X, X.flip(0)]), mask=mask)  # (B, n, d_q) works like any transformer
    assert torch.allclose(batched[0], out, atol=1e-6)


def test_diagonal_transformer_is_made_of_ordinary_layers():
    model = DT.DiagonalTransformer(d_q=16, n_layers=8, kappa=30.0, eta=0.4, beta=1.0, variant="paper")
    linears = [m for m in model.modules() if isinstance(m, nn.Linear)]
    assert len(linears) == 5  # q, k, v, o and the feed-forward, once: the 8 layers share them
    assert sum(p.numel() for p in model.parameters()) == 5 * 16 * 16
    attn = model.h[0].attn
    WqWk = attn.q_proj.weight.T @ attn.k_proj.weight / math.sqrt(16)  # logit matrix per unit X X^T
    assert torch.allclose(WqWk, 30.0 / 16 * torch.eye(16))
    assert torch.allclose(attn.v_proj.weight.T @ attn.o_proj.weight.T, 0.8 * torch.eye(16))
    assert torch.allclose(model.h[0].mlp.c_fc.weight, 0.8 / 17 * torch.eye(16))
    text = repr(model)
    assert "Linear" in text and "LayerNorm" in text and "8 x DiagonalBlock" in text
    with pytest.raises(ValueError, match="variant"):
        DT.DiagonalTransformer(variant="exact")
    with pytest.raises(TypeError, match="X"):
        model(torch.zeros(4, 16, dtype=F64))


def test_diagonal_transformer_built_in_float64_matches_unroll_to_round_off():
    """dtype=torch.float64 puts the diagonal weights in float64 (no float32 rounding left in them)."""
    g = torch.Generator().manual_seed(5)
    X = U.layer_norm(torch.randn(40, 16, generator=g, dtype=torch.float64))
    for variant in DT.TRANSFORMER_VARIANTS:
        model = DT.DiagonalTransformer(d_q=16, n_layers=4, kappa=5.0, eta=0.3, beta=1.0, variant=variant,
                                       dtype=torch.float64)
        assert model.h[0].attn.q_proj.weight.dtype == torch.float64
        expected = U.unroll(X, 4, 5.0, 0.3, 1.0, variant)[-1]
        assert (model(X) - expected).abs().max().item() < 1e-12
    with pytest.raises(TypeError, match="dtype must be None, torch.float32 or torch.float64"):
        DT.DiagonalTransformer(d_q=16, dtype=torch.int64)


BAD = [
    (lambda: DT.DiagonalTransformer(d_q=8, kappa=-1.0), ValueError, "kappa"),
    (lambda: DT.DiagonalTransformer(d_q=8)(torch.zeros(5, 6)), ValueError, "d_q"),
]


@pytest.mark.parametrize("call, error, word", BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_input_names_the_parameter(call, error, word):
    with pytest.raises(error, match=word):
        call()
