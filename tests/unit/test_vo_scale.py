"""The intervention on the scale of W_V and W_O: base weights untouched, W_V and W_O at the other scale.

The expected scales are closed forms: PyTorch's nn.Linear draws U(-b, b) with b = 1/sqrt(fan_in), whose
standard deviation is b/sqrt(3); GPT-2 draws N(0, std^2) and, for the residual output projection,
N(0, std^2 / (2 n_layer)). Each check compares a sample of 128 x 128 = 16,384 draws (a relative standard
error of 0.6 % on its standard deviation) to the closed form within 5 %.
"""

import math

import pytest
import torch

from probdr_lite.experiments import CharLMConfig, ViTConfig
from probdr_lite.experiments.attention import INIT_SCHEMES, VO_SCALE, SelfAttention
from probdr_lite.experiments.charlm import CharLM
from probdr_lite.experiments.sweep import GRIDS
from probdr_lite.experiments.vit import ViT

C, L, STD = 128, 4, 0.02


def _model(init, cls=CharLM, config_cls=CharLMConfig, variant="attention", seed=3):
    torch.manual_seed(12345)  # the model's own draws are replaced by init_weights; this only makes them repeatable
    return cls(config_cls(n_layer=L, n_embd=C, n_head=4, init=init), variant, generator=torch.Generator().manual_seed(seed))


def _vo(model):
    out = []
    for m in model.modules():
        if isinstance(m, SelfAttention):
            out.append((m.c_attn.weight[2 * m.n_embd:].detach(), m.c_proj.weight.detach()))
    return out


@pytest.mark.parametrize("scheme", sorted(VO_SCALE))
def test_intervention_keeps_every_other_weight_of_its_base(scheme):
    base, _ = VO_SCALE[scheme]
    a, b = _model(scheme), _model(base)
    vo_ids = {id(w) for m in a.modules() if isinstance(m, SelfAttention) for w in (m.c_attn.weight, m.c_proj.weight)}
    pb = dict(b.named_parameters())
    for name, p in a.named_parameters():
        if name.endswith("attn.c_attn.weight"):  # q and k rows are the base's, v rows are redrawn
            c = p.shape[1]
            assert torch.equal(p[:2 * c], pb[name][:2 * c])
            assert not torch.equal(p[2 * c:], pb[name][2 * c:])
        elif name.endswith("attn.c_proj.weight"):
            assert not torch.equal(p, pb[name])
        else:
            assert id(p) not in vo_ids and torch.equal(p, pb[name]), name


@pytest.mark.parametrize("scheme", sorted(VO_SCALE))
def test_value_and_output_projections_take_the_other_scale(scheme):
    _, scale = VO_SCALE[scheme]
    for w_v, w_o in _vo(_model(scheme)):
        if scale == "default":
            bound = 1 / math.sqrt(C)
            for w in (w_v, w_o):
                assert w.abs().max() <= bound
                assert float(w.std()) == pytest.approx(bound / math.sqrt(3), rel=0.05)
                assert abs(float(w.mean())) < 5 * bound / math.sqrt(3 * w.numel())
        else:
            assert float(w_v.std()) == pytest.approx(STD, rel=0.05)
            assert float(w_o.std()) == pytest.approx(STD / math.sqrt(2 * L), rel=0.05)


def test_intervention_matches_the_other_schemes_scale_of_the_product():
    """The quantity the intervention is about: the size of W_V W_O follows the scheme W_V and W_O come from."""
    def frob(init):
        return sum(float((w_v.T @ w_o.T).norm()) for w_v, w_o in _vo(_model(init))) / L
    assert frob("gpt2-vo-default") == pytest.approx(frob("default"), rel=0.1)
    assert frob("default-vo-gpt2") == pytest.approx(frob("gpt2"), rel=0.1)
    assert frob("default") > 10 * frob("gpt2")


def test_vit_intervention_and_its_config():
    cfg = ViTConfig(n_layer=2, n_embd=32, n_head=2, init="gpt2-vo-default")
    assert cfg.to_dict()["init"] == "gpt2-vo-default"
    a = ViT(cfg, "diffusion", generator=torch.Generator().manual_seed(0))
    for w_v, w_o in _vo(a):
        for w in (w_v, w_o):  # 1,024 draws each: a relative standard error of 2 % on the standard deviation
            assert w.abs().max() <= 1 / math.sqrt(32)
            assert float(w.std()) == pytest.approx(1 / math.sqrt(3 * 32), rel=0.1)
    with pytest.raises(ValueError, match="init"):
        ViTConfig(init="vo-default")


def test_intervention_grids():
    for name, task in (("charlm-vo", "charlm"), ("vit-vo", "vit")):
        g = GRIDS[name]
        runs = list(g.runs())
        assert g.task == task and g.file.endswith("_vo_scale_epyc.json")
        assert {c.init for c, _, _ in runs} == set(VO_SCALE) and set(VO_SCALE) <= set(INIT_SCHEMES)
        assert {a for _, a, _ in runs} == {"attention", "diffusion"} and {s for _, _, s in runs} == {0, 1, 2}
        assert len(runs) == 2 * 2 * 3
