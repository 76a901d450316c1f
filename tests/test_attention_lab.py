"""Laws of the Attention lab's instruments (labs/attention.py and the key samplers, key-set statistics and
softmax searches beside it), bounds (theory/attention.py) and figures."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
import pytest
import torch

from georesolver_core.attention import ida_weights, ida_weights_from_sq, softmax_weights
from georesolver_core.attention.layer import KERNEL_CHOICES
from georesolver_core.geometry import GEOMETRIES, check_points, distance, pairwise_distance
from georesolver_core.labs import attention as al
from georesolver_core.labs import key_set, samplers, softmax_width
from georesolver_core.labs import lipschitz as lip
from georesolver_core.theory import attention as th
from georesolver_core.verdicts import FAILS, HOLDS
from georesolver_core.viz import attention as va
from tests.conftest import random_points, tol

GEOS = list(GEOMETRIES)


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


# --- effective rank and the kernel matrix ---------------------------------------------------------


def test_effective_rank_of_identity_and_rank_one(dtype):
    n = 7
    assert float(key_set.effective_rank(torch.eye(n, dtype=dtype))) == pytest.approx(n)
    ones = torch.ones(n, n, dtype=dtype)
    assert float(key_set.effective_rank(ones)) == pytest.approx(1.0)
    a = torch.rand(3, n, n, dtype=dtype, generator=_gen())
    batch = key_set.effective_rank(a)
    assert batch.shape == (3,)
    torch.testing.assert_close(key_set.effective_rank(5.0 * a), batch, **tol(dtype))  # scale invariant


@pytest.mark.parametrize("geometry", GEOS)
def test_kernel_matrix_is_symmetric_with_diagonal_one_over_eps(geometry, dtype):
    x = random_points(geometry, 9, 3, dtype=dtype)
    K = key_set.kernel_matrix(x, x, eps=0.01, geometry=geometry)
    torch.testing.assert_close(K, K.T, **tol(dtype))
    torch.testing.assert_close(K.diagonal(), torch.full((9,), 100.0, dtype=dtype), **tol(dtype))


@pytest.mark.parametrize("geometry", GEOS)
def test_effective_rank_tends_to_n_as_eps_to_0_and_to_1_as_eps_grows(geometry):
    """The two limits behind the Theorem 3 verdict: K -> I/eps (rank n) and K -> 11^T/eps (rank 1)."""
    x = random_points(geometry, 12, 4)
    small = float(key_set.effective_rank(key_set.kernel_matrix(x, x, eps=1e-9, geometry=geometry)))
    large = float(key_set.effective_rank(key_set.kernel_matrix(x, x, eps=1e9, geometry=geometry)))
    assert small == pytest.approx(12.0, rel=1e-6)
    assert large == pytest.approx(1.0, rel=1e-6)
    d_min = key_set.min_pairwise_distance(x, geometry=geometry)
    assert small > float(th.effective_rank_bound(12, 1e-9, d_min))  # the stated bound fails at small eps


def test_large_eps_expansion_matches_measurement():
    x = random_points("euclidean", 20, 3)
    msd = key_set.mean_sq_distance(x, x)
    for eps in (1e3, 1e4):
        measured = float(key_set.effective_rank(key_set.kernel_matrix(x, x, eps=eps)))
        predicted = float(th.effective_rank_large_eps(msd, eps, 20))
        assert (measured - 1) == pytest.approx(predicted - 1, rel=0.02)


@pytest.mark.parametrize("geometry", GEOS)
def test_nn_distance_is_the_brute_force_minimum(geometry):
    x = random_points(geometry, 15, 3)
    r = key_set.nn_distance(x, geometry=geometry)
    for j in range(15):
        others = [float(distance(x[j], x[m], geometry=geometry)) for m in range(15) if m != j]
        assert float(r[j]) == pytest.approx(min(others), rel=1e-9)
    assert key_set.min_pairwise_distance(x, geometry=geometry) == pytest.approx(float(r.min()))
    with pytest.raises(ValueError, match="at least 2 points"):
        key_set.nn_distance(x[:1], geometry=geometry)


# --- samplers and query placement -----------------------------------------------------------------


@pytest.mark.parametrize("geometry", GEOS)
def test_samplers_give_valid_points(geometry):
    for pts in (
        samplers.random_points(30, 4, geometry=geometry, c=2.0, spread=3.0, generator=_gen()),
        samplers.clustered_points(30, 4, geometry=geometry, c=2.0, generator=_gen()),
    ):
        assert torch.isfinite(pts).all()
        check_points("pts", pts, geometry=geometry, c=2.0)  # inside the ball's rim, on the sphere


@pytest.mark.parametrize("geometry", GEOS)
def test_query_between_two_keys_lies_on_their_geodesic(geometry):
    k = samplers.random_points(5, 3, geometry=geometry, generator=_gen())
    assert torch.equal(al.place_query(k, mode="key", j=3, geometry=geometry), k[3])
    for t in (0.0, 0.3, 1.0):
        q = al.place_query(k, mode="between", j=1, j2=4, t=t, geometry=geometry)
        d1, d2 = distance(q, k[1], geometry=geometry), distance(q, k[4], geometry=geometry)
        total = float(distance(k[1], k[4], geometry=geometry))
        assert float(d1 + d2) == pytest.approx(total, rel=1e-6)  # a geodesic: no detour
        assert float(d1) == pytest.approx(t * total, rel=1e-6, abs=1e-9)


def test_query_placement_errors_name_the_argument():
    k = samplers.random_points(3, 2, geometry="poincare", generator=_gen())
    with pytest.raises(ValueError, match="coords must lie inside the Poincaré ball"):
        al.place_query(k, mode="custom", coords=[2.0, 0.0], geometry="poincare")
    with pytest.raises(ValueError, match="coords must have d = 2"):
        al.place_query(k, mode="custom", coords=[0.1, 0.1, 0.1], geometry="poincare")
    with pytest.raises(ValueError, match="mode must be one of"):
        al.place_query(k, mode="nowhere")
    with pytest.raises(ValueError, match="needs at least 2 keys"):
        al.place_query(k[:1], mode="between")
    with pytest.raises(ValueError, match="j must be an integer in"):
        al.place_query(k, mode="key", j=3)
    s = samplers.random_points(3, 2, geometry="sphere", generator=_gen())
    q = al.place_query(s, mode="custom", coords=[3.0, 4.0], geometry="sphere")
    torch.testing.assert_close(q, torch.tensor([0.6, 0.8], dtype=s.dtype))
    with pytest.raises(ValueError, match="zero vector"):
        al.place_query(s, mode="custom", coords=[0.0, 0.0], geometry="sphere")


# --- Lemma 1: the query Jacobian ------------------------------------------------------------------


def _fd_jacobian(f, q, h=1e-6):
    cols = []
    for i in range(q.numel()):
        e = torch.zeros_like(q)
        e[i] = h
        cols.append((f(q + e) - f(q - e)) / (2 * h))
    return torch.stack(cols, dim=-1)  # (dv, d)


@pytest.mark.parametrize("kernel", list(KERNEL_CHOICES))
def test_query_jacobian_matches_finite_differences(kernel):
    g = _gen()
    k, v = (
        torch.randn(10, 3, generator=g, dtype=torch.float64),
        torch.randn(10, 2, generator=g, dtype=torch.float64),
    )
    qs = torch.randn(4, 3, generator=g, dtype=torch.float64)
    norms = lip.query_jacobian_norms(qs, k, v, kernel=kernel, eps=0.05)
    for q, norm in zip(qs, norms, strict=True):
        if kernel == "ida":
            J = _fd_jacobian(lambda x: ida_weights(x[None], k, eps=0.05)[0] @ v, q)
        else:
            J = _fd_jacobian(lambda x: softmax_weights(x[None], k)[0] @ v, q)
        assert float(norm) == pytest.approx(float(torch.linalg.matrix_norm(J, ord=2)), rel=1e-6)


@pytest.mark.parametrize("dtype_", [torch.float32, torch.float64])
def test_query_jacobian_obeys_the_n_independent_bounds(dtype_):
    """||do/dq|| <= max||v|| / sqrt(eps) (IDA) and max||v|| max||k|| / sqrt(d) (softmax), for any n."""
    g = _gen(3)
    for n in (2, 50, 400):
        k = torch.randn(n, 4, generator=g, dtype=torch.float64).to(dtype_)
        v = torch.randn(n, 4, generator=g, dtype=torch.float64).to(dtype_)
        probes = lip.lipschitz_probe_queries(k, eps=0.01, generator=g)
        v_max, k_max = float(v.norm(dim=-1).max()), float(k.norm(dim=-1).max())
        ida = float(lip.query_jacobian_norms(probes, k, v, kernel="ida", eps=0.01).max())
        soft = float(lip.query_jacobian_norms(probes, k, v, kernel="softmax").max())
        assert ida <= float(th.lipschitz_ida_sharp_bound(0.01, v_max)) * (1 + 1e-4)
        assert soft <= float(th.lipschitz_softmax_sharp_bound(4, v_max, k_max)) * (1 + 1e-4)


def test_query_jacobian_is_finite_at_a_key():
    """Self-attention evaluates q = k_j: the gradient there must be finite (and is 0 for IDA by symmetry)."""
    k = random_points("euclidean", 6, 3)
    v = torch.randn(6, 2, generator=_gen(), dtype=torch.float64)
    norms = lip.query_jacobian_norms(k, k, v, kernel="ida", eps=1e-6)
    assert torch.isfinite(norms).all()


# --- Theorem 1 instances --------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 17, 128])
def test_orthogonal_instance_matches_the_closed_forms(n, dtype):
    q, k = softmax_width.orthogonal_keys(n, R=1.3, dtype=dtype)
    assert float(ida_weights(q, k, eps=0.01)[0, 0]) == pytest.approx(
        float(th.orthogonal_ida_weight(n, 1.3, 0.01)), rel=1e-5
    )
    assert float(softmax_weights(q, k)[0, 0]) == pytest.approx(
        float(th.orthogonal_softmax_weight(n, 1.3, n)), rel=1e-5
    )
    eps = float(th.orthogonal_ida_eps_for(max(n, 2), 1.3, 0.01))
    assert float(th.orthogonal_ida_weight(max(n, 2), 1.3, eps)) == pytest.approx(0.99, rel=1e-12)


@pytest.mark.parametrize("n", [4, 64, 1024])
def test_softmax_min_width_is_minimal_and_above_the_bounded_lower_bound(n):
    delta = 0.01
    d = softmax_width.softmax_min_width(n, delta=delta, d_max=512, generator=_gen(1))
    assert d is not None and d >= float(th.softmax_width_lower_bound_bounded(n, delta))
    k = softmax_width.sign_keys(n, 512, generator=_gen(1))  # the same draw the search used

    def w11(width):
        kk = k[:, :width]
        return float(softmax_weights(kk[:1], kk)[0, 0])

    assert w11(d) >= 1 - delta
    if d > 1:
        assert w11(d - 1) < 1 - delta
    assert softmax_width.softmax_min_width(n, delta=delta, d_max=4, generator=_gen(1)) is None


def test_bounded_lower_bound_is_a_true_upper_limit_on_softmax_weight():
    """With coordinates in [-1, 1] every logit gap is <= 2 sqrt d: W_11 <= 1/(1 + (n-1) e^{-2 sqrt d})."""
    g = _gen(2)
    for n, d in [(8, 3), (100, 20), (500, 60)]:
        k = torch.rand(n, d, generator=g, dtype=torch.float64) * 2 - 1
        w = float(softmax_weights(k[:1], k)[0, 0])
        assert w <= 1 / (1 + (n - 1) * math.exp(-2 * math.sqrt(d))) + 1e-12


def test_circle_counter_example_reaches_the_target_at_width_two():
    for n in (4, 100):
        r2 = softmax_width.softmax_min_norm_sq_circle(n, delta=0.01)
        angle = 2 * math.pi * torch.arange(n, dtype=torch.float64) / n
        k = torch.stack([torch.cos(angle), torch.sin(angle)], dim=-1)
        assert float(softmax_weights(math.sqrt(r2) * k[:1], math.sqrt(r2) * k)[0, 0]) >= 0.99
        assert float(softmax_weights(math.sqrt(0.98 * r2) * k[:1], math.sqrt(0.98 * r2) * k)[0, 0]) < 0.99


# --- the bounds themselves ------------------------------------------------------------------------


@pytest.mark.parametrize("geometry", GEOS)
def test_retrieval_bound_holds_for_random_keys(geometry, dtype):
    k = random_points(geometry, 20, 3, dtype=dtype)
    r = key_set.nn_distance(k.double(), geometry=geometry).numpy()
    for eps in (1e-6, 1e-2, 1.0):
        w = ida_weights(k, k, eps=eps, geometry=geometry).diagonal().double().numpy()
        bound = th.retrieval_weight_lower_bound(eps, 20, r)
        assert (w >= bound * (1 - 1e-5)).all()
        leak = th.retrieval_leak_upper_bound(eps, 20, r)
        np.testing.assert_allclose(leak, 1 - bound, rtol=1e-9, atol=1e-15)


def test_degradation_helpers_are_consistent():
    eps = th.max_safe_eps(101, 0.3)
    assert float(th.degradation_index(eps, 101, 0.3)) == pytest.approx(th.DEGRADATION_THRESHOLD)
    assert float(th.recommended_eps(5.0)) == pytest.approx(0.05)
    assert th.in_degradation_regime(1.01 * eps, 101, 0.3) and not th.in_degradation_regime(0.99 * eps, 101, 0.3)
    assert float(th.softmax_width_paper_formula(1000, 3.0, 0.01)) < float(
        th.softmax_width_paper_formula(10, 3.0, 0.01)
    )


# --- eps sweep and the lab ------------------------------------------------------------------------


@pytest.mark.parametrize("geometry", GEOS)
def test_eps_sweep_sharpens_to_one_hot(geometry, dtype):
    config = al.LabConfig(geometry=geometry, n=6, d=3, eps=0.1, mode="key", j=2)
    sweep = al.attention_lab(config, dtype=dtype, sweep_eps=np.logspace(-10, 2, 25)).sweep
    np.testing.assert_allclose(sweep.ida.sum(axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(sweep.softmax.sum(), 1.0, rtol=1e-5)
    own = sweep.ida[:, 2]
    assert (np.diff(own) <= 1e-6).all()  # as eps grows, the matching key only loses weight
    assert own[0] == pytest.approx(1.0, abs=1e-6)
    with pytest.raises(ValueError, match="eps_values must be a"):
        al.check_eps_values([0.1, -1.0])


def test_the_lab_checks_eps_once_and_measures_each_distance_matrix_once(monkeypatch):
    """One call: eps checked by the config, the kernel and the sweep as a whole (not once per sweep value);
    the query's distances computed once for the bars and the sweep, the keys' once for the statistics."""
    calls = {"check_eps": 0, "distances": []}
    check_eps, pairwise = al.check_eps, al.pairwise_sq_distance

    def counted_check(*args, **kwargs):
        calls["check_eps"] += 1
        return check_eps(*args, **kwargs)

    def counted_distances(x, y, **kwargs):
        calls["distances"].append((x.shape[0], y.shape[0]))
        return pairwise(x, y, **kwargs)

    monkeypatch.setattr(al, "check_eps", counted_check)
    monkeypatch.setattr(al, "pairwise_sq_distance", counted_distances)
    lab = al.attention_lab(al.LabConfig(geometry="poincare", n=8, d=2, eps=0.05, mode="key", j=1))
    assert calls["check_eps"] == 3 and len(lab.sweep.eps) == 41  # the config, the sweep's smallest and largest
    assert calls["distances"] == [(1, 8), (8, 8)]
    with pytest.raises(ValueError, match="temperature"):
        al.LabConfig(geometry="poincare", n=8, d=2, eps=0.05, temperature=0.0)


def test_weights_from_squared_distances_unchecked_equal_the_checked():
    sq = torch.rand(3, 5, generator=torch.Generator().manual_seed(0))
    assert torch.equal(ida_weights_from_sq(sq, eps=0.1, validate=False), ida_weights_from_sq(sq, eps=0.1))


@pytest.mark.parametrize("geometry", GEOS)
@pytest.mark.parametrize("n", [1, 2, 40])
def test_attention_lab_rows_sum_to_one_and_bound_holds(geometry, n, dtype):
    mode = "key" if n > 1 else "random"
    lab = al.attention_lab(al.LabConfig(geometry=geometry, n=n, d=3, eps=0.01, mode=mode, j=n - 1), dtype=dtype)
    assert lab.ida.shape == lab.softmax.shape == (n + 1, n)
    np.testing.assert_allclose(lab.ida.sum(axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(lab.softmax.sum(axis=1), 1.0, rtol=1e-5)
    q, k = torch.as_tensor(lab.query)[None], torch.as_tensor(lab.keys)
    expected = pairwise_distance(q, k, geometry=geometry)[0].numpy() ** 2
    np.testing.assert_allclose(lab.sq_dist, expected, rtol=1e-4, atol=1e-6)
    if n > 1:
        assert lab.stats.retrieval_weight >= lab.stats.retrieval_bound * (1 - 1e-5)
        assert 1 <= lab.stats.eff_rank <= n + 1e-9
        ret = lab.retrieval
        assert (ret.key, ret.weight, ret.verdict) == (n - 1, lab.stats.retrieval_weight, HOLDS)
        assert ret.bound == lab.stats.retrieval_bound
        assert lab.degraded == (lab.stats.degradation_index >= th.DEGRADATION_THRESHOLD)
        assert lab.stats.to_dict()["effective rank of K"] == lab.stats.eff_rank  # the export keeps its labels
    else:
        assert lab.retrieval is None and lab.degraded is None
        assert "key separation d_min" not in lab.stats.to_dict()  # no pairs: not measured, not exported


def test_retrieval_verdict_allows_float32_rounding_only():
    assert al.retrieval_check(0.9, 0.9, 2).verdict == HOLDS
    assert al.retrieval_check(0.9 * (1 - 0.5 * al.RETRIEVAL_RTOL), 0.9, 2).verdict == HOLDS
    assert al.retrieval_check(0.9 * (1 - 2 * al.RETRIEVAL_RTOL), 0.9, 2).verdict == FAILS
    off_key = al.attention_lab(al.LabConfig(geometry="euclidean", n=5, d=2, eps=0.01, mode="random"))
    assert off_key.retrieval is None  # no query on a key: nothing to judge


def test_attention_lab_rejects_bad_arguments():
    with pytest.raises(ValueError, match="eps must be a"):
        al.attention_lab(al.LabConfig(geometry="euclidean", n=3, d=2, eps=0.0))
    with pytest.raises(ValueError, match="n must be an integer in"):
        al.attention_lab(al.LabConfig(geometry="euclidean", n=0, d=2, eps=0.1))
    with pytest.raises(ValueError, match="d must be an integer in"):
        al.attention_lab(al.LabConfig(geometry="sphere", n=3, d=1, eps=0.1))
    with pytest.raises(ValueError, match="temperature must be a number in"):
        al.LabConfig(geometry="euclidean", n=3, d=2, eps=0.1, temperature=0.0)


# --- figures --------------------------------------------------------------------------------------


def test_figures_build_from_a_lab():
    lab = al.attention_lab(al.LabConfig(geometry="poincare", n=5, d=2, eps=0.05, c=2.0))
    labels = ["q"] + va.key_labels(5)
    heat = va.weights_heatmap(lab.ida, labels, va.key_labels(5), "W")
    assert heat.data[0].zmin == 0 and heat.data[0].zmax == 1
    bars = va.weights_bars({"IDA": lab.ida[0], "softmax": lab.softmax[0]}, lab.sq_dist, "bars")
    assert [t.type for t in bars.data].count("bar") == 2 and bars.layout.xaxis.title.text
    limit = [t for t in bars.data if t.type == "scatter"]  # the eps -> 0 limit drawn beside the bars
    assert len(limit) == 1 and np.isclose(np.sum(limit[0].y), 1.0)
    scatter = va.geometry_scatter(lab.query, lab.keys, lab.ida[0], geometry="poincare", c=2.0)
    assert scatter.layout.shapes[0].x1 == pytest.approx(1 / math.sqrt(2.0))  # the rim of the ball
    sw = lab.sweep
    anim = va.eps_sweep_animation(sw.eps, sw.ida, sw.softmax)
    assert len(anim.frames) == len(sw.eps)
    assert anim.layout.updatemenus[0].buttons[0].label == "Play"
    assert len(anim.layout.sliders[0].steps) == len(sw.eps)
    assert float(anim.frames[0].name) > float(anim.frames[-1].name)  # large eps first
    curves = va.sweep_summary_figure(sw.eps, sw.ida, sw.softmax, eps_now=0.05)
    assert isinstance(curves, go.Figure) and len(curves.data) == 4


def test_geometry_scatter_draws_the_sphere_in_3d_and_refuses_4d():
    lab = al.attention_lab(al.LabConfig(geometry="sphere", n=4, d=3, eps=0.05))
    fig = va.geometry_scatter(lab.query, lab.keys, lab.ida[0], geometry="sphere")
    assert any(isinstance(t, go.Scatter3d) for t in fig.data)
    lab4 = al.attention_lab(al.LabConfig(geometry="euclidean", n=4, d=4, eps=0.05))
    with pytest.raises(ValueError, match="keys must be 2-D"):
        va.geometry_scatter(lab4.query, lab4.keys, lab4.ida[0], geometry="euclidean")


def test_many_keys_get_the_nearest_bars_and_one_for_the_rest_and_few_names():
    n = 256
    lab = al.attention_lab(al.LabConfig(geometry="euclidean", n=n, d=2, eps=0.05))
    bars = va.weights_bars({"IDA": lab.ida[0], "softmax": lab.softmax[0]}, lab.sq_dist, "bars")
    ida = next(t for t in bars.data if t.name == "IDA")
    assert len(ida.x) == va.TOP_KEYS + 1 and ida.x[-1] == "rest"
    assert f"the other {n - va.TOP_KEYS} (rest)" in bars.layout.xaxis.title.text
    assert np.isclose(np.sum(ida.y), 1.0)  # the last bar holds the others' total: nothing is dropped
    nearest = int(np.argmin(lab.sq_dist))
    assert ida.x[0] == va.key_labels(n)[nearest] and ida.y[0] == pytest.approx(lab.ida[0][nearest])
    limit = next(t for t in bars.data if t.type == "scatter")
    assert np.isclose(np.sum(limit.y), 1.0)
    few = va.weights_bars({"IDA": lab.ida[0][:5]}, lab.sq_dist[:5], "bars")
    assert list(few.data[0].x) == va.key_labels(5)  # few keys: one bar each, in key order
    sw = lab.sweep
    anim = va.eps_sweep_animation(sw.eps, sw.ida, sw.softmax)
    assert all(len(bar.x) == va.TOP_KEYS + 1 for frame in anim.frames for bar in frame.data)
    scatter = va.geometry_scatter(lab.query, lab.keys, lab.ida[0], geometry="euclidean")
    keys = next(t for t in scatter.data if t.name == "keys (size = weight)")
    named = [j for j, text in enumerate(keys.text) if text]
    assert 1 <= len(named) <= va.MAX_KEY_LABELS and keys.text[int(np.argmax(lab.ida[0]))]  # the heaviest first
    gaps = [np.linalg.norm(lab.keys[i] - lab.keys[j]) for i in named for j in named if i < j]
    assert min(gaps, default=np.inf) >= va.LABEL_GAP * scatter.layout.xaxis.range[1]  # names stand apart
    assert len(keys.hovertext) == n  # every key is named in its hover
