"""The compiled CPU kernel (attention/compiled.py): built where a compiler is, used by the public calls,
exact against the float64 reference (tests/test_fused.py runs every law on it), and the same on any
thread count and split of its backward."""

import shutil

import pytest
import torch

from georesolver_core.attention import compiled, ida
from georesolver_core.attention.compiled import CompiledIDA
from georesolver_core.attention.fused import fused_ida
from georesolver_core.attention.reference import reference_ida
from georesolver_core.attention.spec import served
from georesolver_core.bench.run import BenchConfig, environment
from georesolver_core.device import thread_count
from tests.test_fused import qkv, rel, spec

GEOMETRIES = served(compiled.SIDES)  # the geometries it has formulas for (the others: refused, test_fused)


def test_the_compiled_path_is_built_and_taken_where_a_compiler_is_present():
    if shutil.which("c++") is None and shutil.which("g++") is None:
        pytest.skip("no C++ compiler on this machine: the Python tile kernel runs (tested in test_fused)")
    assert compiled.module() is not None, compiled.path_name()  # a silent fallback fails here
    assert compiled.path_name() == "compiled"
    q, k, v = (t.float().requires_grad_() for t in qkv("poincare", n=64, m=64, d=8, dup=False))
    out = ida(q, k, v, eps=0.1, geometry="poincare")
    assert type(out.grad_fn.next_functions[0][0]).__name__ == "CompiledIDABackward"  # the public call runs it
    assert environment(BenchConfig(device="cpu"))["cpu_path"] == "compiled"  # bench says which path ran


def test_gr_compiled_0_selects_the_python_tiles(monkeypatch):
    monkeypatch.setenv("GR_COMPILED", "0")
    assert compiled.module() is None and compiled.path_name() == "python tiles (GR_COMPILED=0)"
    q, k, v = (t.float().requires_grad_() for t in qkv("euclidean", n=64, m=64, d=8))
    assert type(ida(q, k, v, eps=0.1).grad_fn.next_functions[0][0]).__name__ == "FusedIDABackward"


@pytest.fixture
def kernel():
    if compiled.module() is None:
        pytest.skip(f"compiled kernel unavailable: {compiled.path_name()}")


@pytest.mark.parametrize("geometry", GEOMETRIES)
@pytest.mark.parametrize("causal", [False, True])
def test_gradcheck_float64_with_duplicates_and_ragged_tiles(kernel, geometry, causal):
    q, k, v = (t.requires_grad_() for t in qkv(geometry, n=9, m=11, d=3, dv=2, heads=2))  # every 3rd key = a query
    s = spec(eps=0.05, geometry=geometry, causal=causal)
    assert torch.autograd.gradcheck(lambda a, b, c: CompiledIDA.apply(a, b, c, s, 4, 4), (q, k, v))


@pytest.mark.parametrize("geometry", GEOMETRIES)
@pytest.mark.parametrize("causal", [False, True])
def test_one_thread_and_two_and_every_backward_split_agree(kernel, geometry, causal):
    q, k, v = qkv(geometry, n=70, m=90, d=6, dv=4, heads=1, dtype=torch.float64, near=1e-6)
    gout = torch.randn(1, 70, 4, dtype=torch.float64)
    s = spec(eps=1e-3, geometry=geometry, causal=causal)
    results = []
    for n_threads in (1, 2):  # one head: with two threads the backward splits its key blocks in groups
        with thread_count(n_threads):
            a, b, c = (t.clone().requires_grad_() for t in (q, k, v))
            out = CompiledIDA.apply(a, b, c, s, 16, 16)
            results.append((out, *torch.autograd.grad(out, (a, b, c), gout)))
    a, b, c = (t.clone().requires_grad_() for t in (q, k, v))
    expected = reference_ida(a, b, c, s)
    grads = torch.autograd.grad(expected, (a, b, c), gout)
    for got in results:
        assert rel(got[0], expected) < 1e-12
        assert all(rel(x, y) < 1e-10 for x, y in zip(got[1:], grads, strict=True))


def test_queries_that_see_no_key_get_zero_output_and_gradient(kernel):
    q, k, v = (t.requires_grad_() for t in qkv("euclidean", n=12, m=5, d=3, dup=False))
    out = fused_ida(q, k, v, spec(eps=0.1, causal=True), block_q=16, block_k=16)  # query i sees keys <= i - 7
    out.square().sum().backward()
    assert torch.equal(out[:, :7], torch.zeros_like(out[:, :7])) and torch.equal(
        q.grad[:, :7], torch.zeros_like(q.grad[:, :7])
    )
    assert torch.isfinite(q.grad).all() and torch.isfinite(k.grad).all()
