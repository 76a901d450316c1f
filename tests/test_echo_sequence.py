"""Seed 003's echo benchmark in its own setting: the data echo, the shortcuts' norms, matched counts, causality."""

from __future__ import annotations

import math

import pytest
import torch

from georesolver_core.extras.echo_sequence import (
    ECHO_KINDS,
    GPT,
    EchoConfig,
    EchoTransformer,
    Shortcut,
    compare_echo,
    count_params,
    echo_batch,
    matched_mlp,
    param_tolerance,
    sinusoidal_positions,
    summarise_echo,
)

F64 = torch.float64
SMALL = EchoConfig(seq_len=16, delay=4, vocab=5, d_model=8, n_heads=2, mlp_hidden=8, mixer_hidden=4, steps=3)


def test_the_answer_is_the_heard_sequence_delayed_with_silence_before_the_first_echo():
    cfg = EchoConfig()
    x, y = echo_batch(cfg, 5, torch.Generator().manual_seed(0))
    assert x.shape == (5, 128) and y.shape == (5, 127)  # 127 predicted steps, as in the seed
    k = cfg.delay
    for t in range(1, cfg.seq_len):
        expected = x[:, t - k] if t >= k else torch.full((5,), cfg.silence)
        assert torch.equal(y[:, t - 1], expected)
    assert int(x.max()) < cfg.vocab and int(x.min()) >= 0


@pytest.mark.parametrize("kind", ["cayley", "householder"])
def test_orthogonal_shortcuts_keep_the_norm_of_every_position_in_float64(kind):
    torch.manual_seed(0)
    short = Shortcut(kind, 16, 8).to(F64)
    s = 3.0 * torch.randn(4, 10, 16, dtype=F64)  # (B, T, C)
    with torch.no_grad():
        out, mixed = short(s)
    assert out.shape == s.shape and mixed.gamma is None
    torch.testing.assert_close(out.norm(dim=-1), s.norm(dim=-1), rtol=1e-13, atol=0)
    assert float(mixed.deviation.max()) < 1e-13
    assert float(mixed.move.min()) > 1e-3  # it does mix every position: not the identity
    torch.testing.assert_close(mixed.move, (out - s).norm(dim=-1) / s.norm(dim=-1))


def test_the_gpt_shortcut_is_the_identity_and_the_hybrid_at_its_midpoint_is_not_an_isometry():
    s = torch.randn(2, 6, 16, dtype=F64)
    out, mixed = Shortcut(GPT, 16, 8).to(F64)(s)
    assert out is s and mixed == (None, None, None)
    torch.manual_seed(1)
    with torch.no_grad():
        out, mixed = Shortcut("hybrid", 16, 8).to(F64)(s)
    torch.testing.assert_close(mixed.gamma, torch.full_like(mixed.gamma, 0.5))  # the gate starts at the midpoint
    assert float(mixed.deviation.mean()) > 1e-3  # gamma Q + (1 - gamma) H is orthogonal only at gamma in {0, 1}
    torch.testing.assert_close(mixed.deviation, (out.norm(dim=-1) / s.norm(dim=-1) - 1).abs())


@pytest.mark.parametrize("cfg", [EchoConfig(), SMALL], ids=["default", "small"])
def test_parameter_counts_match_the_hybrid_within_half_an_mlp_unit_per_layer(cfg):
    target = count_params("hybrid", cfg, cfg.mlp_hidden)
    tol = param_tolerance(cfg)
    assert tol == math.ceil(cfg.n_layers * (2 * cfg.d_model + 1) / 2)
    for kind in ECHO_KINDS:
        hidden = matched_mlp(kind, cfg)
        n = count_params(kind, cfg, hidden)
        assert abs(n - target) <= tol, (kind, n, target)
        built = sum(p.numel() for p in EchoTransformer(kind, cfg, hidden).parameters())
        assert built == n  # the meta-device count is the real one
    assert matched_mlp(GPT, cfg) > cfg.mlp_hidden  # GPT gets the mixers' parameters as MLP width


def test_the_model_is_causal_every_kind():
    x, _ = echo_batch(SMALL, 2, torch.Generator().manual_seed(2))
    x2 = x.clone()
    x2[:, 9:] = (x2[:, 9:] + 1) % SMALL.vocab  # change only the future of position 8
    for kind in ECHO_KINDS:
        torch.manual_seed(0)
        model = EchoTransformer(kind, SMALL, matched_mlp(kind, SMALL))
        with torch.no_grad():
            a, stats = model(x)
            b, _ = model(x2)
        assert a.shape == (2, SMALL.seq_len, SMALL.vocab + 1) and len(stats) == 2 * SMALL.n_layers
        torch.testing.assert_close(a[:, :9], b[:, :9])
        assert not torch.allclose(a[:, 9:], b[:, 9:])


def test_a_shift_of_the_positions_is_one_fixed_rotation():
    T, C, k = 40, 8, 7
    p = sinusoidal_positions(T, C).to(F64)  # (T, C): columns (sin, cos) of t w_i
    w = 10000.0 ** (-torch.arange(0, C, 2, dtype=F64) / C)  # (C/2,)
    rot = torch.zeros(C, C, dtype=F64)  # block-diagonal: each (sin, cos) pair turns by k w_i
    for i, wi in enumerate(w):
        c, s = math.cos(k * wi), math.sin(k * wi)
        rot[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = torch.tensor([[c, -s], [s, c]], dtype=F64)
    torch.testing.assert_close(p[:-k] @ rot, p[k:], atol=1e-5, rtol=0)  # the same map at every t
    torch.testing.assert_close(rot.T @ rot, torch.eye(C, dtype=F64))


def test_short_runs_report_every_kind_and_seed():
    runs = compare_echo(["hybrid", GPT], SMALL, seeds=(0, 1))
    table = summarise_echo(runs)
    assert [r.kind for r in runs] == ["hybrid", "hybrid", GPT, GPT]
    hyb = table["hybrid"]
    assert hyb["seeds"] == 2 and len(hyb["loss"]["values"]) == 2
    assert hyb["loss"]["min"] <= hyb["loss"]["mean"] <= hyb["loss"]["max"]
    assert all(math.isfinite(r.loss) and 0 <= r.echo_accuracy <= 1 for r in runs)
    assert 0 < hyb["gate"]["mean"] < 1 and hyb["norm_deviation"]["mean"] > 0
    assert 0 < hyb["midpoint"]["mean"] <= 1  # mean 4 gamma (1 - gamma)
    assert math.isnan(table[GPT]["midpoint"]["mean"])
    assert math.isnan(table[GPT]["norm_deviation"]["mean"])  # GPT has no mixing step


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("seq_len", 2),
        ("delay", 0),
        ("delay", 127),  # at least one echoed step must be left
        ("vocab", 1),
        ("n_heads", 3),  # must divide d_model
        ("steps", 0),
        ("lr", 0.0),
        ("gate_weight", -1.0),
        ("mixer_hidden", 0),
    ],
)
def test_a_config_error_names_its_field(field, value):
    with pytest.raises(ValueError, match=field):
        EchoConfig(**{field: value})


def test_an_unknown_kind_is_refused_with_the_choices():
    with pytest.raises(ValueError, match="kind must be one of"):
        EchoTransformer("sinkhorn", SMALL, 8)
