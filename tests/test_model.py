"""The GeoResolver model: HyperGate's Jacobian and Theorem 7.1, every registry kernel, the baseline's size."""

from __future__ import annotations

import pytest
import torch

from georesolver_core.attention import ATTENTION, AttentionConfig
from georesolver_core.attention.layer import HIDA_SIZES
from georesolver_core.model import (
    HyperGate,
    ModelConfig,
    build_model,
    count_parameters,
    gate_jacobian,
    softmax_baseline,
)

pytestmark = pytest.mark.usefixtures("one_thread")  # tiny tensors: see conftest


def _gate(C=8, nh=2, seed=0, scale=1.0, dtype=torch.float64):
    torch.manual_seed(seed)
    g = HyperGate(C, nh, memory=True).to(dtype)
    with torch.no_grad():
        g.dim.weight.normal_(0, scale / C**0.5)
        g.dim.bias.normal_(0, 1)
    return g


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_gate_jacobian_matches_autograd(dtype):
    g = _gate(dtype=dtype)
    u = torch.randn(5, 8, dtype=dtype)
    J = gate_jacobian(g, u)  # (5, C, C)
    for i in range(5):
        auto = torch.autograd.functional.jacobian(lambda r: g.dimension(r)[0], u[i])
        torch.testing.assert_close(J[i], auto)


@pytest.mark.parametrize("scale", [0.1, 1.0, 5.0])
def test_theorem_7_1_lower_bound_holds_at_the_worst_upstream_gradient(scale):
    """sigma_min(dh/du) (the worst ||dL/du|| / ||dL/dh|| over upstream gradients) >= lambda_min(G) - ||W|| ||u|| / 4."""
    g = _gate(scale=scale, seed=1)
    u = torch.randn(200, 8, dtype=torch.float64) * 2
    J = gate_jacobian(g, u)
    worst = torch.linalg.svdvals(J)[:, -1]  # (200,)
    G = torch.sigmoid(g.dim(u))
    bound = G.min(dim=-1).values - torch.linalg.matrix_norm(g.dim.weight, ord=2) * u.norm(dim=-1) / 4
    assert bool((worst >= bound - 1e-12).all())
    # and the gradient autograd actually passes back through the gate obeys it too
    uu = u.clone().requires_grad_(True)
    up = torch.randn_like(u)
    (g.dimension(uu)[0] * up).sum().backward()
    assert bool((uu.grad.norm(dim=-1) >= bound * up.norm(dim=-1) - 1e-12).all())


def test_gate_values_are_in_the_unit_interval_and_recorded():
    g = _gate(dtype=torch.float32)
    g.record = True
    heads = torch.randn(3, 2, 5, 4)
    out = g(torch.randn(3, 5, 8), heads, torch.randn(3, 5, 8))
    assert out.shape == (3, 5, 8)
    for t in (g.last.kappa, g.last.beta, g.last.dim_gate):
        assert bool(((t > 0) & (t < 1)).all())
    assert g.last.beta.shape == (3, 5) and g.last.dim_gate.shape == (3, 5, 8)


def test_without_memory_the_token_gate_passes_the_storage_path():
    g = HyperGate(8, 2, memory=False)
    heads = torch.randn(3, 2, 5, 4)
    u, beta = g.mix(torch.randn(3, 5, 8), heads, None)
    kappa = torch.sigmoid(g.head_logit).view(1, 2, 1, 1)
    torch.testing.assert_close(u, (heads * kappa).transpose(1, 2).reshape(3, 5, 8))
    assert bool((beta == 1).all())


@pytest.mark.parametrize("kernel", sorted(ATTENTION))
def test_every_registry_kernel_trains_with_finite_gradients(kernel):
    cfg = ModelConfig(
        d_in=6, n_classes=3, max_len=7, attention=AttentionConfig(d_model=16, n_heads=2, kernel=kernel)
    )
    torch.manual_seed(0)
    model = build_model(cfg)
    x = torch.randn(4, 7, 6)
    x[:, 3] = x[:, 2]  # two equal positions: q = k somewhere, where closed forms lose their gradient
    logits = model(x)
    assert logits.shape == (4, 7, 3) and bool(torch.isfinite(logits).all())
    logits.square().mean().backward()
    assert all(bool(torch.isfinite(p.grad).all()) for p in model.parameters() if p.grad is not None)


@pytest.mark.parametrize("d_model,layers", [(16, 1), (64, 2), (96, 3)])
def test_softmax_baseline_has_the_same_size_and_parameter_count(d_model, layers):
    geo = ModelConfig(d_in=10, n_classes=5, n_layers=layers, attention=AttentionConfig(d_model=d_model, n_heads=4))
    base = softmax_baseline(geo)
    assert (base.attention.kernel, base.gating, base.d_model, base.n_layers) == ("softmax", False, d_model, layers)
    n_geo, n_base = count_parameters(build_model(geo)), count_parameters(build_model(base))
    assert abs(n_geo - n_base) <= layers * (2 * d_model + 1)  # within one MLP unit per layer


@pytest.mark.parametrize(
    "model,attention,match",
    [
        ({}, {"kernel": "nope"}, "kernel must be one of"),
        ({"attention": "ida"}, None, "attention must be an AttentionConfig"),
        ({}, {"d_model": 0}, "d_model must be"),
        (
            {},
            {"d_model": 2048, "n_heads": 4},
            r"d_model must be an integer in \[1, 1024\]",
        ),  # the model's width cap
        ({"n_layers": -1}, {}, "n_layers must be"),
        ({}, {"eps": 0.0}, "eps must be"),
        ({"memory": "tape"}, {}, "memory must be one of"),
        ({}, {"n_heads": 3}, "divisible"),
        ({}, {"window": 4}, "window applies to kernel fp-hida only"),
        ({}, {"kernel": "fp-hida", "n_anchors": 4}, "n_anchors applies to kernel l-hida only"),
        ({}, {"kernel": "c-hida", "n_summaries": 0}, "n_summaries must be"),
        ({"max_len": 8}, {"kernel": "fp-hida", "n_global": 9}, "n_global must be at most the sequence length"),
    ],
)
def test_bad_config_is_a_clear_error(model, attention, match):
    with pytest.raises(ValueError, match=match):
        nested = {} if attention is None else {"attention": AttentionConfig(**attention)}
        ModelConfig(d_in=4, n_classes=2, **nested, **model)


def test_every_hida_size_reaches_the_kernel_that_reads_it():
    """Each HIDA size of the attention config builds a kernel of that size (registry: ``AttentionKind.sizes``)."""
    cfg = AttentionConfig(d_model=8, n_heads=2, kernel="l-hida", n_anchors=3)
    model = build_model(ModelConfig(d_in=4, n_classes=2, max_len=6, attention=cfg))
    assert model.blocks[0].attn.kernel.anchors.shape == (2, 3, 4)  # (heads, m, head size)
    fp = AttentionConfig(d_model=8, n_heads=2, kernel="fp-hida", window=2, n_global=1)
    assert (
        build_model(ModelConfig(d_in=4, n_classes=2, max_len=6, attention=fp)).blocks[0].attn.kernel.config == fp
    )
    chida = AttentionConfig(d_model=8, n_heads=2, kernel="c-hida", n_summaries=5)
    kernel = build_model(ModelConfig(d_in=4, n_classes=2, max_len=6, attention=chida)).blocks[0].attn.kernel
    assert kernel.chida.n_summaries == 5
    assert {n for kind in ATTENTION.values() for n in kind.sizes} == set(HIDA_SIZES)  # every size has a reader
    assert cfg.with_kernel("softmax") == AttentionConfig(d_model=8, n_heads=2, kernel="softmax")  # sizes dropped


def test_wrong_input_shape_is_a_clear_error():
    model = build_model(
        ModelConfig(d_in=4, n_classes=2, max_len=5, attention=AttentionConfig(d_model=8, n_heads=2))
    )
    with pytest.raises(ValueError, match="x must have shape"):
        model(torch.randn(2, 6, 4))


def test_memory_path_routes_to_a_growing_preallocated_pool():
    """SIDA -> GSR -> DMG: the pool spawns prototypes, the value table keeps its shape, gradients reach it."""
    torch.manual_seed(0)
    model = build_model(
        ModelConfig(d_in=6, n_classes=3, max_len=7, attention=AttentionConfig(d_model=16, n_heads=2), memory="gsr")
    )
    memory = model.blocks[0].memory
    shape = memory.values.shape
    for _ in range(3):
        model(torch.randn(4, 7, 6)).square().mean().backward()
    assert 1 <= memory.pool.n_active <= memory.pool.config.capacity
    assert memory.values.shape == shape and memory.values.grad is not None
    assert bool(torch.isfinite(memory.values.grad).all()) and memory.values.grad.abs().sum() > 0
    assert model.blocks[0].gate.token is not None  # the token gate beta_i mixes the two paths
    model.eval()
    n = memory.pool.n_active
    model(torch.randn(2, 7, 6))
    assert memory.pool.n_active == n  # evaluation does not grow the pool
