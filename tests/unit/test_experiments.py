"""Tests of probdr_lite.experiments: the attention variants, the two models, reproducibility,
the results schema, the paired summary and the command line.

Tiny configurations keep the file to a few tens of seconds on two shared cores.
"""

import copy
import json
import math

import numpy as np
import pytest
import torch
from scipy import stats

from probdr_lite.experiments import (
    CAUSAL_VARIANTS, VARIANTS, CharLM, CharLMConfig, SelfAttention, ViT, ViTConfig, load_results, summarise, train_charlm,
    train_vit, validate_results,
)
from probdr_lite.experiments import charlm as charlm_mod
from probdr_lite.experiments.__main__ import main
from probdr_lite.experiments._training import plateau_index
from probdr_lite.experiments.attention import (configure_optimizer, cosine_lr, decay_lr, onecycle_lr,
                                               symmetric_attention)
from probdr_lite.experiments.charlm import seed_streams
from probdr_lite.experiments.results import SCHEMA_VERSION, derived_fields, format_summary

TINY_LM = dict(n_layer=1, n_head=2, n_embd=32, block_size=16, batch_size=16, max_iters=60, lr=1e-2,
               min_lr=1e-3, warmup_iters=5, eval_interval=30, eval_iters=4)
TINY_VIT = dict(n_layer=1, n_head=2, n_embd=32, n_train=1000, n_val=500, epochs=3, batch_size=50,
                lr=3e-3, min_lr=1e-4, warmup_iters=5, n_train_eval=200)
RUN = dict(device="cpu", threads=1, quiet=True)


@pytest.fixture(scope="module")
def lm_rows():
    return {v: train_charlm(CharLMConfig(**TINY_LM), v, 0, **RUN) for v in ("attention", "gated")}


# ---------------------------------------------------------------- the attention operator

def _hand_softmax(q, k, causal):
    """Row-wise softmax of q k^T / sqrt(hs) written out with numpy (one head)."""
    s = q @ k.T / math.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.tril(np.ones_like(s)) > 0, s, -np.inf)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("causal", [False, True])
def test_diffusion_is_A_v_minus_v_on_a_hand_built_example(causal):
    q = np.array([[1.0, 0.0], [0.5, -1.0], [2.0, 1.0]])
    k = np.array([[0.0, 1.0], [1.0, 1.0], [-1.0, 0.5]])
    v = np.array([[1.0, 2.0], [-3.0, 0.5], [0.0, -1.0]])
    A = _hand_softmax(q, k, causal)
    assert np.allclose(A.sum(axis=1), 1.0)
    t = lambda a: torch.tensor(a, dtype=torch.float64)[None, None]  # (1, 1, T, hs)
    plain = SelfAttention(2, 1, "attention", causal=causal).double().attend(t(q), t(k), t(v))[0, 0]
    diff = SelfAttention(2, 1, "diffusion", causal=causal).double().attend(t(q), t(k), t(v))[0, 0]
    np.testing.assert_allclose(plain.numpy(), A @ v, atol=1e-12)
    np.testing.assert_allclose(diff.numpy(), A @ v - v, atol=1e-12)
    if causal:  # the first token only sees itself: A v - v = 0 there
        np.testing.assert_allclose(diff[0].numpy(), 0.0, atol=1e-12)


def test_module_heads_are_A_v_minus_v_per_head():
    torch.manual_seed(0)
    att = SelfAttention(8, 2, "diffusion", causal=True).double()
    x = torch.randn(2, 5, 8, dtype=torch.float64)
    q, k, v = att.qkv(x)  # (B, nh, T, hs)
    y = att.heads(x)
    for b in range(2):
        for h in range(2):
            A = _hand_softmax(q[b, h].detach().numpy(), k[b, h].detach().numpy(), causal=True)
            vv = v[b, h].detach().numpy()
            np.testing.assert_allclose(y[b, h].detach().numpy(), A @ vv - vv, atol=1e-12)


def test_gated_interpolates_between_attention_and_diffusion():
    torch.manual_seed(1)
    mods = {name: SelfAttention(8, 2, name, causal=True).double() for name in ("attention", "diffusion", "gated")}
    shared = mods["attention"].state_dict()
    mods["diffusion"].load_state_dict(shared)
    mods["gated"].load_state_dict(shared, strict=False)  # everything but the gate
    x = torch.randn(3, 6, 8, dtype=torch.float64)
    with torch.no_grad():
        assert torch.equal(mods["gated"].gate, torch.zeros(2))  # starts as plain attention
        torch.testing.assert_close(mods["gated"](x), mods["attention"](x), rtol=0, atol=1e-12)
        mods["gated"].gate.fill_(1.0)
        torch.testing.assert_close(mods["gated"](x), mods["diffusion"](x), rtol=0, atol=1e-12)
        mods["gated"].gate.copy_(torch.tensor([0.0, 1.0]))  # head 0 plain, head 1 diffusion
        mixed = mods["gated"].heads(x)
        torch.testing.assert_close(mixed[:, 0], mods["attention"].heads(x)[:, 0], rtol=0, atol=1e-12)
        torch.testing.assert_close(mixed[:, 1], mods["diffusion"].heads(x)[:, 1], rtol=0, atol=1e-12)


def test_symmetric_attention_matches_naive_formula_and_is_stable():
    g = torch.Generator().manual_seed(2)
    q, k = torch.randn(1, 1, 6, 4, generator=g, dtype=torch.float64), torch.randn(1, 1, 6, 4, generator=g,
                                                                                   dtype=torch.float64)
    eye = torch.eye(6, dtype=torch.float64)[None, None]
    A = symmetric_attention(q, k, eye)[0, 0]  # the matrix itself
    s = (q @ k.transpose(-2, -1))[0, 0] / 2.0
    E = torch.exp((s + s.T) / 2)
    d = E.sum(dim=1)
    torch.testing.assert_close(A, E / torch.sqrt(d[:, None] * d[None, :]), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(A, A.T)
    # largest eigenvalue of D^{-1/2} E D^{-1/2} is 1 (eigenvector D^{1/2} 1)
    assert torch.linalg.eigvalsh(A).max().item() == pytest.approx(1.0, abs=1e-10)
    # logits of order 1e4 would overflow exp() in a naive implementation
    big = symmetric_attention(300 * q, 300 * k, eye)[0, 0]
    assert torch.isfinite(big).all() and big.max() <= 1 + 1e-12


def test_symmetric_arm_is_A_sym_minus_I_and_sym_normalised_is_A_sym():
    """"symmetric" is (A_sym - I) v, as in the transformer-block, MNIST and objections chapters;
    "sym-normalised" is A_sym v (no "- v")."""
    torch.manual_seed(3)
    mods = {v: SelfAttention(8, 2, v).double() for v in ("sym-normalised", "symmetric")}
    mods["symmetric"].load_state_dict(mods["sym-normalised"].state_dict())
    x = torch.randn(2, 5, 8, dtype=torch.float64)
    q, k, v = mods["symmetric"].qkv(x)
    with torch.no_grad():
        for b in range(2):
            for h in range(2):
                s = (q[b, h] @ k[b, h].T).numpy() / 2.0  # head size 4
                E = np.exp((s + s.T) / 2)
                d = E.sum(axis=1)
                A_sym = E / np.sqrt(np.outer(d, d))
                vv = v[b, h].numpy()
                np.testing.assert_allclose(mods["sym-normalised"].heads(x)[b, h].numpy(), A_sym @ vv, atol=1e-12)
                np.testing.assert_allclose(mods["symmetric"].heads(x)[b, h].numpy(), (A_sym - np.eye(5)) @ vv,
                                           atol=1e-12)


@pytest.mark.parametrize("variant", ["symmetric", "sym-normalised"])
def test_symmetric_with_causal_mask_is_refused(variant):
    with pytest.raises(ValueError, match="causal mask"):
        SelfAttention(8, 2, variant, causal=True)
    with pytest.raises(ValueError, match="variant must be one of"):
        SelfAttention(8, 2, "laplacian")
    with pytest.raises(ValueError, match="divisible"):
        SelfAttention(10, 4)


def test_lr_schedule_and_weight_decay_groups():
    kw = dict(lr=1e-3, min_lr=1e-4, warmup_iters=100, decay_iters=2000)
    lrs = np.array([cosine_lr(i, **kw) for i in range(2100)])
    assert lrs[0] == pytest.approx(1e-3 / 101) and lrs[99] == pytest.approx(1e-3 * 100 / 101)
    assert lrs[100] == pytest.approx(1e-3)
    assert np.all(np.diff(lrs[100:2000]) <= 0) and np.all(lrs[2000:] == 1e-4)
    assert lrs[1050] == pytest.approx(0.5 * (1e-3 + 1e-4))  # cosine midpoint
    model = CharLM(CharLMConfig(**TINY_LM), "gated")
    decay, no_decay = configure_optimizer(model, lr=1e-3, weight_decay=0.1).param_groups
    assert decay["weight_decay"] == 0.1 and all(p.ndim == 2 for p in decay["params"])
    assert no_decay["weight_decay"] == 0.0 and all(p.ndim == 1 for p in no_decay["params"])
    assert any(p is model.blocks[0].attn.gate for p in no_decay["params"])


# ---------------------------------------------------------------- models and training

def test_charlm_init_matches_gpt2_scheme():
    model = CharLM(CharLMConfig(), "attention", torch.Generator().manual_seed(0))
    assert model.lm_head.weight is model.wte.weight  # tied
    assert model.num_parameters() == 804_096  # nanoGPT's CPU model, no biases, tied
    assert model.wte.weight.std().item() == pytest.approx(0.02, rel=0.02)
    assert model.blocks[0].attn.c_proj.weight.std().item() == pytest.approx(0.02 / math.sqrt(8), rel=0.05)


@pytest.mark.parametrize("variant", ["attention", "diffusion"])
def test_charlm_tiny_training_lowers_the_loss(variant):
    row = train_charlm(CharLMConfig(**TINY_LM), variant, 0, **RUN)
    first, last = row["curve"][0], row["curve"][-1]
    assert first[2] == pytest.approx(math.log(65), abs=0.1)  # uniform guess at initialisation
    assert last[2] < first[2] - 0.7 and last[1] < first[1] - 0.7
    assert [p[0] for p in row["curve"]] == [0, 30, 60]


@pytest.mark.parametrize("variant", ["attention", "sym-normalised"])
def test_vit_tiny_training_lowers_the_loss(variant):
    row = train_vit(ViTConfig(**TINY_VIT), variant, 0, **RUN)
    first, last = row["curve"][0], row["curve"][-1]
    assert first[2] == pytest.approx(math.log(10), abs=0.1)
    # 60 steps on 1,000 images: a ViT starts slowly, but well clear of chance (0.1)
    assert last[2] < first[2] - 0.25 and last[3] > 0.25
    assert row["final_val_acc"] == last[3] and row["best_val_acc"] == max(p[3] for p in row["curve"])


def test_vit_patchify_is_row_major_7x7_blocks():
    model = ViT(ViTConfig(n_layer=1, n_embd=32, n_head=2))
    img = torch.arange(784.0).view(1, 784)
    patches = model.patchify(img)  # (1, 16, 49)
    assert patches.shape == (1, 16, 49)
    pixel = torch.arange(784.0).view(28, 28)
    torch.testing.assert_close(patches[0, 0], pixel[:7, :7].reshape(-1))
    torch.testing.assert_close(patches[0, 5], pixel[7:14, 7:14].reshape(-1))  # second row, second column


@pytest.mark.parametrize("task", ["charlm", "vit"])
def test_same_seed_gives_the_same_initial_weights_in_every_arm(task):
    cls, cfg, variants = ((CharLM, CharLMConfig(**TINY_LM), ("attention", "diffusion", "gated")) if task == "charlm"
                          else (ViT, ViTConfig(**TINY_VIT), ("attention", "diffusion", "gated", "sym-normalised", "symmetric")))
    s_init = seed_streams(3)[0]
    states = {v: cls(cfg, v, torch.Generator().manual_seed(s_init)).state_dict() for v in variants}
    ref = states["attention"]
    for v, sd in states.items():
        extra = set(sd) - set(ref)
        assert extra == ({f"blocks.{i}.attn.gate" for i in range(cfg.n_layer)} if v == "gated" else set())
        for key in ref:
            assert torch.equal(sd[key], ref[key]), (v, key)
    other = cls(cfg, "attention", torch.Generator().manual_seed(seed_streams(4)[0])).state_dict()
    assert not torch.equal(other["blocks.0.attn.c_attn.weight"], ref["blocks.0.attn.c_attn.weight"])


def test_same_seed_gives_the_same_batches_in_every_arm(monkeypatch):
    seen = {}
    original = charlm_mod.get_batch

    def recording(data, block_size, batch_size, generator, device="cpu"):
        x, y = original(data, block_size, batch_size, generator, device)
        seen.setdefault(current, []).append(x.clone())
        return x, y

    monkeypatch.setattr(charlm_mod, "get_batch", recording)
    cfg = CharLMConfig(**{**TINY_LM, "max_iters": 8, "eval_interval": 4})
    for current in ("attention", "diffusion"):
        train_charlm(cfg, current, 5, **RUN)
    # 8 training batches, 3 evaluations of both splits, and the one probe batch of the mechanism record
    assert len(seen["attention"]) == len(seen["diffusion"]) == 8 + 3 * 2 * cfg.eval_iters + 1
    assert all(torch.equal(a, b) for a, b in zip(seen["attention"], seen["diffusion"]))


def test_same_seed_same_start_and_repeatable(lm_rows):
    # with g = 0 the gated arm is plain attention, so the two evaluate identically at step 0:
    # same weights, same evaluation batches
    assert lm_rows["gated"]["curve"][0] == lm_rows["attention"]["curve"][0]
    assert lm_rows["gated"]["curve"][-1] != lm_rows["attention"]["curve"][-1]  # the gates did learn
    assert len(lm_rows["gated"]["gates"]) == 1 and any(g != 0 for g in lm_rows["gated"]["gates"][0])
    again = train_charlm(CharLMConfig(**TINY_LM), "attention", 0, **RUN)
    assert again["curve"] == lm_rows["attention"]["curve"]  # CPU training is deterministic


# ---------------------------------------------------------------- results schema and summary

def test_results_rows_pass_the_schema_and_broken_rows_are_refused(lm_rows, tmp_path):
    rows = validate_results(list(lm_rows.values()))
    path = tmp_path / "r.json"
    path.write_text(json.dumps(rows))
    assert load_results(path) == rows
    breakages = {
        "final_val_loss": lambda r: r.pop("final_val_loss"),
        "seed": lambda r: r.update(seed="0"),
        "variant": lambda r: r.update(variant="symmetric"),  # not admissible for charlm
        "curve": lambda r: r["curve"].append([1, 2.0]),
        "best_val_loss": lambda r: r.update(best_val_loss=r["best_val_loss"] - 0.1),  # disagrees with curve
        "task": lambda r: r.update(task="gpt"),
        "throughput": lambda r: r.update(throughput=float("nan")),
    }
    for field, breaker in breakages.items():
        bad = copy.deepcopy(rows)
        breaker(bad[1])
        with pytest.raises(ValueError, match=f"row 1.*'{field}'"):
            validate_results(bad)
    with pytest.raises(ValueError, match="JSON list"):
        validate_results(rows[0])
    path.write_text("[{")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_results(path)


def _fake_row(variant, seed, final, best, task="charlm"):
    curve = [[0, 4.0, 4.0], [10, best, best], [20, final, final]]
    config = {"x": 1, "init": "gpt2", "lr": 1e-3, "max_iters": 20}
    row = {"schema_version": SCHEMA_VERSION, **derived_fields(task, curve, config), "task": task, "variant": variant, "seed": seed, "config": config,
           "recipe": {"init": "gpt2", "lr": 1e-3, "max_iters": 20},
           "final_val_loss": final, "best_val_loss": min(best, final, 4.0), "curve_columns":
           ["iter", "train_loss", "val_loss"], "curve": curve, "throughput": 1.0, "throughput_unit": "tokens/s",
           "train_seconds": 1.0, "wall_seconds": 1.0, "torch_version": "x", "device": "cpu", "git_commit": "unknown",
           "command": "test", "timestamp": "2026-01-01T00:00:00+00:00"}
    return row


def test_summarise_pairs_by_seed_and_matches_scipy():
    att = [1.90, 1.80, 2.00, 1.85, 1.95]
    dif = [1.86, 1.79, 1.97, 1.86, 1.90]
    rows = [_fake_row("diffusion", s, dif[s], dif[s]) for s in (4, 2, 0, 3, 1)]  # shuffled
    rows += [_fake_row("attention", s, att[s], att[s]) for s in range(5)]
    summary = summarise(rows)
    arm = {a["variant"]: a for a in summary["arms"]}
    assert arm["attention"]["final_val_loss_mean"] == pytest.approx(np.mean(att))
    assert arm["diffusion"]["final_val_loss_sd"] == pytest.approx(np.std(dif, ddof=1))
    p = next(p for p in summary["paired"] if p["quantity"] == "final_val_loss")
    d = np.array(dif) - np.array(att)
    assert p["n"] == 5 and p["mean_diff"] == pytest.approx(d.mean())
    assert (p["n_better"], p["n_worse"]) == (4, 1)
    assert p["t_pvalue"] == pytest.approx(stats.ttest_rel(dif, att).pvalue)
    assert p["sign_pvalue"] == pytest.approx(0.375)  # P(|K - 2.5| >= 1.5), K ~ Bin(5, 1/2)
    assert "diffusion - attention" in format_summary(summary)
    with pytest.raises(ValueError, match="twice"):
        summarise(rows + [_fake_row("attention", 0, 1.9, 1.9)])
    mixed = copy.deepcopy(rows)
    mixed[0]["config"]["x"] = 2
    with pytest.raises(ValueError, match="configurations"):
        summarise(mixed)


# ---------------------------------------------------------------- command line

def test_sweep_from_the_command_line(tmp_path, capsys):
    out = tmp_path / "sweep.json"
    argv = ["sweep", "--task", "charlm", "--variants", "attention,diffusion", "--seeds", "0,1", "--out", str(out),
            "--iters", "12", "--eval-interval", "6", "--eval-iters", "2", "--n-layer", "1", "--n-embd", "16",
            "--n-head", "2", "--block-size", "8", "--warmup-iters", "2", "--quiet", "--threads", "1",
            "--device", "cpu"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""  # --quiet means silent
    rows = load_results(out)
    assert sorted((r["variant"], r["seed"]) for r in rows) == [("attention", 0), ("attention", 1),
                                                              ("diffusion", 0), ("diffusion", 1)]
    assert all(r["config"]["max_iters"] == 12 and r["config"]["n_embd"] == 16 for r in rows)
    assert rows[0]["command"].startswith("python -m probdr_lite.experiments sweep --task charlm")
    assert summarise(rows)["paired"][0]["n"] == 2
    assert main(argv + ["--skip-existing"]) == 0  # nothing left to run
    assert len(load_results(out)) == 4
    vit_out = tmp_path / "vit.json"
    assert main(["vit", "--variant", "symmetric", "--epochs", "1", "--n-train", "200", "--n-val", "100",
                 "--n-layer", "1", "--n-embd", "16", "--n-head", "2", "--out", str(vit_out), "--quiet",
                 "--threads", "1", "--device", "cpu", "--schedule", "onecycle", "--init", "default"]) == 0
    row = load_results(vit_out)[0]
    assert row["variant"] == "symmetric"
    assert row["recipe"] == {"init": "default", "lr": 3e-3, "schedule": "onecycle", "epochs": 1, "patience": 0,
                             "decay_epochs": 0}


@pytest.mark.parametrize("argv, message", [
    (["charlm", "--variant", "laplacian"], "variant must be one of 'attention', 'diffusion', 'gated'"),
    (["charlm", "--variant", "symmetric"], "not admissible with a causal mask"),
    (["vit", "--schedule", "linear"], "schedule must be one of"),
    (["vit", "--init", "xavier"], "init must be one of"),
    (["grid", "nope"], "invalid choice"),
    (["grid", "tiny", "--shard", "2/2"], "--shard"),
    (["sweep", "--task", "charlm", "--variants", "attention,symmetric", "--out", "x.json"], "causal mask"),
    (["sweep", "--task", "vit", "--variants", "attention,bogus", "--out", "x.json"], "variant must be one of"),
    (["sweep", "--task", "vit", "--seeds", "0,x", "--out", "x.json"], "--seeds"),
    (["charlm", "--n-embd", "30"], "n_embd must be divisible by n_head"),
    (["charlm", "--lr", "-1"], "lr must be in"),
    (["vit", "--n-train", "9000"], "n_train \\+ n_val \\+ n_test must be at most 10000"),
    (["charlm", "--seed", "-2"], "--seed must be >= 0"),
    (["charlm", "--no-such-option", "1"], "unrecognized arguments"),
])
def test_bad_command_lines_exit_with_a_clear_message(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert __import__("re").search(message, capsys.readouterr().err)


def test_config_round_trips_through_a_results_row_and_refuses_typos():
    """A results row's config rebuilds the exact config of that run (how a reader reproduces one row)."""
    from probdr_lite.experiments.charlm import CharLMConfig
    from probdr_lite.experiments.vit import ViTConfig

    for cls, changed in ((CharLMConfig, {"max_iters": 7, "lr": 5e-4}), (ViTConfig, {"epochs": 2})):
        config = cls(**changed)
        assert cls.from_dict(config.to_dict()) == config
        with pytest.raises(ValueError, match=f"unknown {cls.__name__} field"):
            cls.from_dict({**config.to_dict(), "learning_rate": 1e-3})


# ---------------------------------------------------------------- recipe factors

def test_onecycle_matches_torch_onecycle_lr():
    """Our one-cycle schedule is PyTorch's OneCycleLR (cosine annealing, momentum not cycled)."""
    total, lr = 137, 3e-3
    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=lr)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=total, cycle_momentum=False)
    expected = []
    for _ in range(total):
        expected.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    ours = [onecycle_lr(i, lr=lr, total_iters=total) for i in range(total)]
    np.testing.assert_allclose(ours, expected, rtol=1e-10)


def test_default_init_is_pytorchs_layer_init_and_the_same_in_every_arm():
    cfg = ViTConfig(**{**TINY_VIT, "init": "default"})
    models = {v: ViT(cfg, v, torch.Generator().manual_seed(5)) for v in ("attention", "gated", "symmetric")}
    ref = models["attention"]
    for v, m in models.items():
        theirs = dict(m.named_parameters())
        for name, p in ref.named_parameters():
            assert torch.equal(p, theirs[name]), (v, name)
    lin = ref.blocks[0].mlp.c_fc  # fan_in 32: PyTorch draws U(-1/sqrt(32), 1/sqrt(32)) for weight and bias
    bound = 1 / math.sqrt(32)
    for t in (lin.weight, lin.bias):
        assert t.abs().max().item() <= bound
    # the variance of U(-b, b) is b^2 / 3 (4,096 draws: 5 % relative tolerance is > 5 standard errors)
    assert lin.weight.var().item() == pytest.approx(bound ** 2 / 3, rel=0.05)
    assert torch.equal(ref.blocks[0].ln_1.weight, torch.ones(32)) and torch.equal(ref.blocks[0].ln_1.bias,
                                                                                   torch.zeros(32))
    assert torch.equal(models["gated"].blocks[0].attn.gate, torch.zeros(2))
    # parameters of no module (class token, position embeddings) get N(0, 0.02^2) as in the gpt2 scheme
    assert ref.pos_emb.std().item() == pytest.approx(0.02, rel=0.2)
    gpt2 = ViT(ViTConfig(**TINY_VIT), "attention", torch.Generator().manual_seed(5))
    assert gpt2.blocks[0].mlp.c_fc.weight.std().item() == pytest.approx(0.02, rel=0.05)
    assert gpt2.pos_emb.abs().max().item() > 0  # the gpt2 scheme draws the position embeddings too (not zeros)
    # a different seed, different weights
    other = ViT(cfg, "attention", torch.Generator().manual_seed(6))
    assert not torch.equal(other.blocks[0].mlp.c_fc.weight, lin.weight)


def test_plateau_rule_on_hand_sequences():
    # best at index 2 (0.5); indices 3, 4, 5 do not improve: with patience 3 the rule fires at index 5
    assert plateau_index([1.0, 0.8, 0.5, 0.6, 0.55, 0.7, 0.4], 3) == (5, 2)
    assert plateau_index([1.0, 0.8, 0.5, 0.6, 0.55, 0.7, 0.4], 4) == (None, 6)
    assert plateau_index([3, 2, 1], 0) == (None, 2)  # patience 0: a fixed budget
    # an improvement smaller than min_delta does not count
    assert plateau_index([1.0, 0.99, 0.98], 2, min_delta=0.05) == (2, 0)
    with pytest.raises(ValueError, match="patience"):
        plateau_index([1.0], -1)


def test_vit_patience_stops_where_the_rule_says():
    cfg = ViTConfig(**{**TINY_VIT, "epochs": 6, "patience": 1, "lr": 3e-2})
    row = train_vit(cfg, "attention", 0, **RUN)
    stop, _ = plateau_index([p[2] for p in row["curve"]], 1)
    assert row["epochs_run"] == len(row["curve"]) - 1
    assert row["epochs_run"] == (stop if stop is not None else cfg.epochs)
    assert row["recipe"]["patience"] == 1 and row["config"]["epochs"] == 6


def test_version_1_rows_are_upgraded_with_the_factors_they_were_run_with(tmp_path):
    from probdr_lite.experiments.results import RECIPE_FACTORS, upgrade_row

    committed = load_results(__import__("probdr_lite.experiments.files", fromlist=["x"]).RESULTS_DIR
                             / "vit_mnist.json")
    row = copy.deepcopy(committed[0])
    old = copy.deepcopy(row)
    old["schema_version"] = 1
    for f in ("init", "schedule", "patience"):
        del old["config"][f]
    del old["recipe"], old["epochs_run"]
    old["variant"] = "symmetric"  # version 1's name of A_sym v
    new = upgrade_row(old)
    assert new["variant"] == "sym-normalised" and new["schema_version"] == 3  # through version 2
    assert new["recipe"] == {"init": "gpt2", "lr": 3e-3, "schedule": "cosine", "epochs": 10, "patience": 0,
                             "decay_epochs": 0}
    assert ViTConfig.from_dict(new["config"]) == ViTConfig()  # the first sweep's recipe is the default config
    path = tmp_path / "v1.json"
    path.write_text(json.dumps([old]))
    assert load_results(path)[0]["variant"] == "sym-normalised"
    # every recipe factor is required in a version 3 row, in the config and in the recipe
    for f in RECIPE_FACTORS["vit"]:
        bad = copy.deepcopy(row)
        del bad["config"][f]
        with pytest.raises(ValueError, match="config"):
            validate_results([bad])
        bad = copy.deepcopy(row)
        del bad["recipe"][f]
        with pytest.raises(ValueError, match="recipe"):
            validate_results([bad])
    bad = copy.deepcopy(row)
    bad["recipe"]["lr"] = 1e-3  # disagrees with the config
    with pytest.raises(ValueError, match="'recipe'.*config gives"):
        validate_results([bad])


def test_tiny_grid_runs_resumes_and_feeds_the_recipe_table(tmp_path, capsys):
    """The 2-recipe x 2-arm x 2-seed grid from the command line, then again (nothing left), then its table."""
    from probdr_lite.experiments.stats import recipe_table
    from probdr_lite.experiments.sweep import get_grid, grid_status

    argv = ["grid", "tiny", "--results-dir", str(tmp_path), "--threads", "1", "--device", "cpu", "--quiet"]
    assert main(argv) == 0
    rows = load_results(tmp_path / "charlm_recipes.json")
    assert len(rows) == 8
    assert sorted({r["recipe"]["init"] for r in rows}) == ["default", "gpt2"]
    assert all(r["command"].startswith("python -m probdr_lite.experiments grid tiny") for r in rows)
    assert all(r["config"]["max_iters"] == 6 for r in rows)
    status = grid_status(get_grid("tiny"), tmp_path)
    assert [s["complete"] for s in status] == [True, True]
    assert main(argv) == 0 and len(load_results(tmp_path / "charlm_recipes.json")) == 8  # resumed: nothing to do
    assert main(argv[:4] + ["--estimate"]) == 0
    assert "0 pending" in capsys.readouterr().out
    table = recipe_table(rows)
    assert table.n_tests == 2 and [e["n"] for e in table.entries] == [2, 2]
    assert {e["arm"] for e in table.entries} == {"diffusion"}


# ---------------------------------------------------------------- the gate from both ends

@pytest.mark.parametrize("task", ["charlm", "vit"])
def test_gated_from_1_starts_as_diffusion_with_every_other_weight_shared(task):
    cls, cfg = (CharLM, CharLMConfig(**TINY_LM)) if task == "charlm" else (ViT, ViTConfig(**TINY_VIT))
    s_init = seed_streams(2)[0]
    models = {v: cls(cfg, v, torch.Generator().manual_seed(s_init)) for v in ("diffusion", "gated", "gated-from-1")}
    for layer in models["gated-from-1"].blocks:
        assert torch.equal(layer.attn.gate, torch.ones(cfg.n_head))  # g = 1: A - I
    ref = models["diffusion"].state_dict()
    for v in ("gated", "gated-from-1"):
        sd = models[v].state_dict()
        assert set(sd) - set(ref) == {f"blocks.{i}.attn.gate" for i in range(cfg.n_layer)}
        assert all(torch.equal(sd[k], ref[k]) for k in ref)
    x = (torch.randint(0, 65, (2, 8)) if task == "charlm" else torch.randn(2, 784))
    with torch.no_grad():
        torch.testing.assert_close(models["gated-from-1"](x)[0], models["diffusion"](x)[0], rtol=0, atol=0)
    assert models["gated-from-1"].gates() == [[1.0] * cfg.n_head] * cfg.n_layer


def test_gated_from_1_row_records_where_its_gates_end():
    cfg = CharLMConfig(**TINY_LM)
    rows = {v: train_charlm(cfg, v, 0, **RUN) for v in ("diffusion", "gated-from-1")}
    # the same weights, batches and evaluation batches, and g = 1: the first evaluation is the diffusion arm's
    assert rows["gated-from-1"]["curve"][0] == rows["diffusion"]["curve"][0]
    gates = rows["gated-from-1"]["gates"]
    assert np.shape(gates) == (cfg.n_layer, cfg.n_head) and np.all(np.array(gates) != 1.0)  # they moved
    record = rows["gated-from-1"]["mechanism"]["gates"]
    assert record[0] == [[1.0] * cfg.n_head] and np.allclose(record[-1], gates, rtol=1e-5)
    assert "gates" not in rows["diffusion"]
    validate_results(list(rows.values()))


# ---------------------------------------------------------------- the plateau rule that ends its schedule

def test_decay_lr_ends_at_its_minimum():
    lrs = np.array([decay_lr(j, start=2e-3, end=1e-5, steps=50) for j in range(50)])
    assert lrs[-1] == 1e-5 and lrs[0] < 2e-3 and np.all(np.diff(lrs) < 0)
    assert lrs[24] == pytest.approx(1e-5 + 0.5 * (1 + math.cos(math.pi * 25 / 50)) * (2e-3 - 1e-5))
    with pytest.raises(ValueError, match="step"):
        decay_lr(50, start=1.0, end=0.0, steps=50)
    with pytest.raises(ValueError, match="decay_epochs must be 0 when patience is 0"):
        ViTConfig(decay_epochs=3)


PLATEAU_VIT = dict(n_layer=1, n_head=2, n_embd=32, n_train=500, n_val=300, epochs=10, batch_size=50, lr=3e-2,
                   min_lr=1e-4, warmup_iters=5, n_train_eval=100, patience=1)
#: The validation losses the plateau tests script, one per evaluation (before training, then after each epoch): the
#: loss improves up to evaluation 4 and not at 5, so the rule (patience 1) fires there; it improves again after.
SCRIPTED_VAL_LOSS = (2.30, 2.00, 1.80, 1.70, 1.65, 1.66, 1.50, 1.40, 1.30, 1.20, 1.10)


@pytest.fixture
def scripted_validation(monkeypatch):
    """The ViT loop's validation loss follows SCRIPTED_VAL_LOSS; training, and its training-set loss, stay real.

    A real run's validation curve depends on the CPU's vector path (where a tiny model's loss first stops falling
    moves by an epoch from one machine to the next), so the rule is tested on a curve whose plateau is known. Each
    run restarts the script at its first evaluation.
    """
    from probdr_lite.experiments import vit as vit_mod

    real, state = vit_mod.evaluate, {"model": None, "evaluations": 0}

    def evaluate(model, x, y, device, batch_size=1000):
        if len(y) != PLATEAU_VIT["n_val"]:  # the training-set evaluation
            return real(model, x, y, device, batch_size)
        if model is not state["model"]:  # a new run (the reference keeps the old model's id from being reused)
            state.update(model=model, evaluations=0)
        loss = SCRIPTED_VAL_LOSS[state["evaluations"]]
        state["evaluations"] += 1
        return loss, 1.0 - loss / 3.0

    monkeypatch.setattr(vit_mod, "evaluate", evaluate)
    return SCRIPTED_VAL_LOSS


def test_plateau_rule_decays_to_the_minimum_then_stops_and_changes_nothing_before(scripted_validation):
    """On a validation curve that plateaus at evaluation 5 (patience 1): the old rule stops there, the new one
    decays the learning rate to min_lr over 3 more epochs. Up to the plateau the two runs are the same run."""
    stop = train_vit(ViTConfig(**PLATEAU_VIT), "attention", 1, **RUN)
    decay = train_vit(ViTConfig(**PLATEAU_VIT, decay_epochs=3), "attention", 1, **RUN)
    fired, _ = plateau_index(scripted_validation, PLATEAU_VIT["patience"])
    assert fired == 5
    assert stop["plateau_index"] == stop["epochs_run"] == len(stop["curve"]) - 1 == fired
    assert decay["plateau_index"] == fired and decay["epochs_run"] == fired + 3 and len(decay["curve"]) == fired + 4
    assert decay["curve"][:fired + 1] == stop["curve"]  # bit for bit up to where the rule fired (training included)
    assert [row[2] for row in decay["curve"]] == list(scripted_validation[:fired + 4])
    lr = decay["mechanism"]["lr"]  # the learning rate of each epoch's last step
    assert lr[:fired] == stop["mechanism"]["lr"]
    assert lr[-1] == pytest.approx(PLATEAU_VIT["min_lr"], rel=1e-5)  # the run stops at the minimum
    assert np.all(np.diff(lr[fired - 1:]) < 0)
    # the row's numbers at the plateau, at the best checkpoint and at the end, all read from the curve
    c = np.array(decay["curve"])
    assert (decay["plateau_val_loss"], decay["plateau_val_acc"]) == (c[fired, 2], c[fired, 3])
    i = int(np.argmin(c[:, 2]))
    assert i == fired + 3  # the loss fell again during the decay: the best checkpoint is the last
    assert decay["checkpoint_index"] == i and decay["checkpoint_val_acc"] == c[i, 3]
    assert decay["final_val_acc"] == c[-1, 3]
    assert decay["recipe"]["decay_epochs"] == 3 and stop["recipe"]["decay_epochs"] == 0
    validate_results([stop, decay])


def test_derived_fields_must_agree_with_the_curve(scripted_validation):
    row = train_vit(ViTConfig(**PLATEAU_VIT), "attention", 1, **RUN)
    assert row["plateau_index"] == 5 and row["checkpoint_index"] == 4
    for field, value in (("checkpoint_index", 0), ("plateau_index", 4), ("plateau_index", None),
                         ("plateau_val_acc", 0.5), ("checkpoint_val_acc", 0.0)):
        bad = copy.deepcopy(row)
        bad[field] = value
        with pytest.raises(ValueError, match=f"'{field}'"):
            validate_results([bad])
    bad = copy.deepcopy(row)
    bad["mechanism"]["grad_norm"].pop()
    with pytest.raises(ValueError, match="'mechanism'.*grad_norm"):
        validate_results([bad])


# ---------------------------------------------------------------- the mechanism record

def test_measuring_does_not_change_training():
    cfg = ViTConfig(**{**TINY_VIT, "init": "default", "epochs": 2})
    measured = train_vit(cfg, "diffusion", 3, **RUN)
    plain = train_vit(cfg, "diffusion", 3, **RUN, measure=False)
    assert measured["curve"] == plain["curve"] and "mechanism" not in plain
    lm = CharLMConfig(**TINY_LM)
    assert train_charlm(lm, "gated", 1, **RUN)["curve"] == train_charlm(lm, "gated", 1, **RUN, measure=False)["curve"]


def _numpy_layer_measures(model, images):
    """The per-layer mechanism numbers of a one-layer ViT, recomputed with numpy from its weights."""
    with torch.no_grad():
        x = model.patch_embed(model.patchify(images))
        x = torch.cat([model.cls_token.expand(len(images), -1, -1), x], dim=1) + model.pos_emb
    x = x.double().numpy()
    blk = model.blocks[0]
    w = {k: p.detach().double().numpy() for k, p in blk.named_parameters()}
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    h = (x - mu) / np.sqrt(var + 1e-5) * w["ln_1.weight"] + w["ln_1.bias"]
    C, nh = x.shape[-1], blk.attn.n_head
    hs = C // nh
    qkv = h @ w["attn.c_attn.weight"].T + w["attn.c_attn.bias"]
    q, k, v = (qkv[..., i * C:(i + 1) * C].reshape(*x.shape[:2], nh, hs).transpose(0, 2, 1, 3) for i in range(3))
    s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(hs)
    a = np.exp(s - s.max(-1, keepdims=True))
    a /= a.sum(-1, keepdims=True)
    av = a @ v
    y = av - v if blk.attn.variant == "diffusion" else av
    merge = lambda t: t.transpose(0, 2, 1, 3).reshape(*x.shape[:2], C)  # noqa: E731
    w_o, b_o = w["attn.c_proj.weight"], w["attn.c_proj.bias"]
    update = merge(y) @ w_o.T + b_o
    m = w["attn.c_attn.weight"][2 * C:].T @ w_o.T
    return {"update_ratio": np.linalg.norm(update) / np.linalg.norm(x),
            "v_over_av": np.linalg.norm(v) / np.linalg.norm(av),
            "shrink": 1 - np.linalg.norm(merge(av - v) @ w_o.T) / np.linalg.norm(merge(av) @ w_o.T),
            "wvwo_top_sv": np.linalg.svd(m, compute_uv=False)[0],
            "wvwo_mean_eig": np.linalg.eigvals(m).real.mean()}, np.linalg.svd(m, compute_uv=False)


@pytest.mark.parametrize("variant", ["attention", "diffusion"])
def test_layer_measures_match_a_numpy_recomputation(variant):
    from probdr_lite.experiments.mechanism import layer_measures, spectrum

    cfg = ViTConfig(**{**TINY_VIT, "init": "default"})
    model = ViT(cfg, variant, torch.Generator().manual_seed(7))
    images = torch.randn(6, 784, generator=torch.Generator().manual_seed(8))
    ours = layer_measures(model, images)
    expected, sv = _numpy_layer_measures(model, images)
    for name, value in expected.items():
        assert ours[name][0] == pytest.approx(value, rel=2e-5, abs=1e-7), name
    np.testing.assert_allclose(spectrum(model)[0], sv, rtol=2e-5, atol=1e-9)


def test_recorded_gradient_norms_are_the_clipped_norms(monkeypatch):
    """With an evaluation after every step, each interval's mean gradient norm is the one clip_grad_norm_ saw."""
    from probdr_lite.experiments import _training

    seen = []
    original = torch.nn.utils.clip_grad_norm_

    def spy(params, max_norm, *a, **k):
        norm = original(params, max_norm, *a, **k)
        seen.append(float(norm))
        return norm

    monkeypatch.setattr(_training.torch.nn.utils, "clip_grad_norm_", spy)
    cfg = CharLMConfig(**{**TINY_LM, "max_iters": 4, "eval_interval": 1, "grad_clip": 0.5})
    row = train_charlm(cfg, "attention", 0, **RUN)
    mech = row["mechanism"]
    assert mech["iters"] == [0, 1, 2, 3, 4] and len(seen) == 4
    np.testing.assert_allclose(mech["grad_norm"], seen, rtol=1e-5)
    assert mech["clipped"] == [float(n > 0.5) for n in seen]
    assert mech["lr"] == pytest.approx([cosine_lr(i, lr=cfg.lr, min_lr=cfg.min_lr, warmup_iters=cfg.warmup_iters,
                                                  decay_iters=cfg.max_iters) for i in range(4)], rel=1e-5)
    # per layer the attention weights' share of the whole gradient
    assert all(0 < a[0] <= g * (1 + 1e-5) for a, g in zip(mech["attn_grad_norm"], mech["grad_norm"]))


def test_the_new_grids_and_the_committed_cells():
    from probdr_lite.experiments.sweep import FIRST_VIT_ARMS, PLATEAU_DECAY, get_grid, grid_status

    g = get_grid("vit-plateau")
    runs = list(g.runs())
    assert len(runs) == 6 * (5 + 3) and {a for _, a, _ in runs} == set(VARIANTS)
    cells = {(c.init, s) for c, _, s in runs}
    assert cells == {("default", s) for s in range(5)} | {("gpt2", s) for s in range(3)}
    assert all((c.epochs, c.patience, c.decay_epochs) == (60, 5, 5) for c, _, _ in runs) and PLATEAU_DECAY["decay_epochs"] == 5
    assert [s for _, _, s in runs][::6] == [0, 0, 1, 1, 2, 2, 3, 4]  # seed-major: a cut-short sweep stays paired
    lm = list(get_grid("charlm-5k").runs())
    assert len(lm) == 2 * 4 * 3 and {(c.init, c.max_iters) for c, _, _ in lm} == {("default", 5000), ("gpt2", 5000)}
    assert {a for _, a, _ in lm} == set(CAUSAL_VARIANTS) and "gated-from-1" in CAUSAL_VARIANTS
    # the committed one-factor cells were planned without the new arm and stay complete
    assert get_grid("vit-ofat").arms == FIRST_VIT_ARMS
    assert all(s["complete"] for s in grid_status(get_grid("vit-ofat")))
    assert all(s["complete"] for s in grid_status(get_grid("charlm-ofat")))
