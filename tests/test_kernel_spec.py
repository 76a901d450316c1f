"""The kernel spec's index sets and multiplicities, reference and fused kernels (float64).

Laws: counts all ones is plain attention; a key of multiplicity n is n copies of that key (outputs
and every gradient, the copies' gradients summed); multiplicity 0 removes a key; a Gathered index
set listing every key is dense attention, and a partial one equals the masked weights.
"""

import pytest
import torch

from georesolver_core.attention import ALL_KEYS, Gathered, KernelSpec, attend, attend_weights, ida_weights_from_sq
from georesolver_core.attention.fused import fused_ida, fused_ida_weights
from georesolver_core.attention.fused_geometry import fused_serves
from georesolver_core.attention.reference import reference_ida, reference_ida_weights
from georesolver_core.geometry import GEOMETRIES as REGISTRY
from georesolver_core.geometry import embed, pairwise_sq_distance

GEOMETRIES = list(REGISTRY)  # every geometry of the registry
FUSED = [g for g in REGISTRY if fused_serves(g)]  # those with a tile class (the others: test_fused)
SMALL = dict(block_q=16, block_k=16)  # several tiles with ragged edges


def kernels(weights: bool):
    """(name, fn(q, k, [v,] spec)) for the reference and the fused kernel."""
    if weights:
        return [
            ("reference", reference_ida_weights),
            ("fused", lambda q, k, s: fused_ida_weights(q, k, s, **SMALL)),
        ]
    return [("reference", reference_ida), ("fused", lambda q, k, v, s: fused_ida(q, k, v, s, **SMALL))]


def served(weights: bool):
    """(geometry, name, fn) for every geometry and kernel, the fused one on the geometries it has a tile for."""
    return [
        (g, name, fn) for g in GEOMETRIES for name, fn in kernels(weights) if name == "reference" or g in FUSED
    ]


def inputs(geometry, n=21, m=18, d=4, dv=3, heads=2, seed=0):
    g = torch.Generator().manual_seed(seed)
    q = embed(torch.randn(heads, n, d, generator=g, dtype=torch.float64), geometry=geometry)
    k = embed(torch.randn(heads, m, d, generator=g, dtype=torch.float64), geometry=geometry)
    v = torch.randn(heads, m, dv, generator=g, dtype=torch.float64)
    return q, k, v


def grads(fn, tensors, gout):
    xs = [t.detach().clone().requires_grad_() for t in tensors]
    out = fn(*xs)
    return (out, *torch.autograd.grad(out, xs, gout))


def close(a, b, tol=1e-10):
    a, b = a.detach(), b.detach()
    return float((a - b).abs().max()) <= tol * max(1.0, float(b.abs().max()))


@pytest.mark.parametrize("geometry,impl,kernel", served(weights=False))
def test_counts_all_ones_equal_plain_attention(geometry, impl, kernel):
    q, k, v = inputs(geometry)
    gout = torch.randn(2, 21, 3, dtype=torch.float64)
    plain = grads(lambda a, b, c: kernel(a, b, c, KernelSpec(0.05, geometry)), (q, k, v), gout)
    ones = torch.ones(18, dtype=torch.float64)
    counted = grads(lambda a, b, c: kernel(a, b, c, KernelSpec(0.05, geometry, counts=ones)), (q, k, v), gout)
    for name, a, b in zip(["o", "dq", "dk", "dv"], counted, plain, strict=True):
        assert close(a, b), f"{impl} {name}"


@pytest.mark.parametrize("geometry,impl,kernel", served(weights=False))
def test_a_key_of_multiplicity_n_is_n_copies_of_it(geometry, impl, kernel):
    q, k, v = inputs(geometry)
    counts = torch.ones(18, dtype=torch.float64)
    counts[[2, 7]] = torch.tensor([3.0, 5.0], dtype=torch.float64)  # key 2 stands for 3 keys, key 7 for 5
    copies = torch.repeat_interleave(torch.arange(18), counts.long())  # (m') indices into the keys
    gout = torch.randn(2, 21, 3, dtype=torch.float64)
    summary = grads(lambda a, b, c: kernel(a, b, c, KernelSpec(0.05, geometry, counts=counts)), (q, k, v), gout)
    spread = grads(
        lambda a, b, c: kernel(a, b[:, copies], c[:, copies], KernelSpec(0.05, geometry)), (q, k, v), gout
    )
    for name, a, b in zip(["o", "dq", "dk", "dv"], summary, spread, strict=True):
        assert close(a, b), f"{impl} {name}: {float((a - b).abs().max()):.2e}"


@pytest.mark.parametrize("geometry", FUSED)
def test_counts_agree_between_reference_and_fused_with_gradients(geometry):
    q, k, v = inputs(geometry, n=40, m=37)
    counts = torch.rand(2, 37, generator=torch.Generator().manual_seed(1), dtype=torch.float64) * 4  # per head
    counts[0, 5] = 0.0
    spec = KernelSpec(1e-3, geometry, c=1.0, counts=counts)
    gout = torch.randn(2, 40, 3, dtype=torch.float64)
    ref = grads(lambda a, b, c: reference_ida(a, b, c, spec), (q, k, v), gout)
    fast = grads(lambda a, b, c: fused_ida(a, b, c, spec, **SMALL), (q, k, v), gout)
    for name, a, b in zip(["o", "dq", "dk", "dv"], fast, ref, strict=True):
        assert close(a, b, 1e-9), f"{name}: {float((a - b).abs().max()):.2e}"
    gW = torch.randn(2, 40, 37, dtype=torch.float64)
    ref_w = grads(lambda a, b: reference_ida_weights(a, b, spec), (q, k), gW)
    fast_w = grads(lambda a, b: fused_ida_weights(a, b, spec, **SMALL), (q, k), gW)
    for a, b in zip(fast_w, ref_w, strict=True):
        assert close(a, b, 1e-9)
    assert torch.allclose(fast_w[0].sum(-1), torch.ones(2, 40, dtype=torch.float64))
    assert fast_w[0][0, :, 5].abs().max() == 0  # multiplicity 0: the key is absent


@pytest.mark.parametrize("impl,kernel", kernels(weights=True))
def test_multiplicity_zero_removes_the_key(impl, kernel):
    q, k, _ = inputs("poincare")
    counts = torch.ones(18, dtype=torch.float64)
    counts[4] = 0.0
    k[:, 4] = q[:, 0]  # the removed key sits on query 0: it must not take that row's weight
    W = kernel(q, k, KernelSpec(1e-8, "poincare", counts=counts))
    keep = [j for j in range(18) if j != 4]
    W_without = kernel(q, k[:, keep], KernelSpec(1e-8, "poincare"))
    assert W[..., 4].abs().max() == 0
    assert close(W[..., keep], W_without)


def test_counts_and_gradcheck_through_the_public_entry_point():
    q, k, v = inputs("sphere", n=5, m=6, d=3, dv=2, heads=1)
    spec = KernelSpec(0.05, "sphere", counts=torch.tensor([1.0, 2.0, 0.5, 1.0, 3.0, 1.0], dtype=torch.float64))
    xs = [t.clone().requires_grad_() for t in (q, k, v)]
    assert torch.autograd.gradcheck(lambda a, b, c: attend(a, b, c, spec, impl="fused"), xs, fast_mode=True)
    assert torch.autograd.gradgradcheck(lambda a, b, c: attend(a, b, c, spec, impl="fused"), xs, fast_mode=True)


@pytest.mark.parametrize("geometry", GEOMETRIES)
def test_gathered_every_key_equals_dense(geometry):
    q, k, v = inputs(geometry, heads=1)
    q, k, v = q[0], k[0], v[0]
    everyone = torch.arange(18).repeat(21, 1)  # (n, m): every query lists every key
    shuffled = everyone[:, torch.randperm(18, generator=torch.Generator().manual_seed(2))]
    dense = reference_ida(q, k, v, KernelSpec(0.05, geometry))
    for index in (everyone, shuffled):
        assert close(reference_ida(q, k, v, KernelSpec(0.05, geometry, keys=Gathered(index))), dense)


def test_gathered_subset_equals_masked_weights_and_padding_is_ignored():
    q, k, _ = inputs("euclidean", heads=1)
    q, k = q[0], k[0]
    g = torch.Generator().manual_seed(3)
    index = torch.stack([torch.randperm(18, generator=g)[:5] for _ in range(21)])  # (n, 5)
    index[::4, -2:] = -1  # padding: those queries see 3 keys
    mask = torch.zeros(21, 18, dtype=torch.bool)
    for i, row in enumerate(index.tolist()):
        mask[i, [j for j in row if j >= 0]] = True
    W = reference_ida_weights(q, k, KernelSpec(0.05, keys=Gathered(index)))
    expected = ida_weights_from_sq(pairwise_sq_distance(q, k, geometry="euclidean"), eps=0.05, mask=mask)
    assert close(W, expected)
    assert (W > 0).sum(-1).tolist() == mask.sum(-1).tolist()


def test_gathered_runs_in_the_reference_kernel_only():
    q, k, v = inputs("euclidean", n=64, m=64, heads=1)
    spec = KernelSpec(0.05, keys=Gathered(torch.arange(64).repeat(64, 1)))
    assert close(attend(q[0], k[0], v[0], spec), attend(q[0], k[0], v[0], KernelSpec(0.05, keys=ALL_KEYS)))
    with pytest.raises(ValueError, match="keys=ALL_KEYS or CAUSAL"):
        attend(q[0], k[0], v[0], spec, impl="fused")
    with pytest.raises(ValueError, match="one row per query"):
        attend_weights(q[0, :10], k[0], spec)


def test_counts_must_match_the_keys():
    q, k, v = inputs("euclidean", heads=1)
    with pytest.raises(ValueError, match="counts must have shape"):
        attend(q, k, v, KernelSpec(0.05, counts=torch.ones(5)))
    with pytest.raises(ValueError, match="counts must be >= 0"):
        KernelSpec(0.05, counts=-torch.ones(18))
