"""Lemma 1's supremum search (labs.lipschitz): what it reports is a supremum over queries, so it
can never fall below the Jacobian norm at any query it was given or started from."""

import pytest
import torch

from georesolver_core.attention.layer import KERNEL_CHOICES
from georesolver_core.labs.lipschitz import (
    KEY_LAYOUTS,
    Ascent,
    lipschitz_across_spread,
    lipschitz_probe_queries,
    lipschitz_sweep,
    query_jacobian_norms,
    sup_jacobian_norm,
)
from georesolver_core.labs.samplers import random_points

QUICK = Ascent(n_each=8, steps=10, lr=0.3)


@pytest.mark.parametrize("kernel", list(KERNEL_CHOICES))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_supremum_is_at_least_every_probe_and_every_key(kernel, seed):
    g = torch.Generator().manual_seed(seed)
    n, eps = 6, 1e-2
    k = random_points(n, 4, generator=g, dtype=torch.float64)  # (n, d)
    v = torch.randn(n, 3, generator=g, dtype=torch.float64)  # (n, dv)
    probes = lipschitz_probe_queries(k, eps=eps, n_random=8, n_near=8, generator=g)  # (Q, d)
    found = sup_jacobian_norm(k, v, kernel=kernel, eps=eps, ascent=QUICK, generator=g, more_starts=probes)
    sup, radius = found.norm, found.radius
    at_probes = float(query_jacobian_norms(probes, k, v, kernel=kernel, eps=eps).max())
    at_keys = float(query_jacobian_norms(k, k, v, kernel=kernel, eps=eps).max())  # n_each >= n: every key starts
    assert sup >= at_probes * (1 - 1e-9)
    assert sup >= at_keys * (1 - 1e-9)
    assert radius > 0.0


def test_sweep_reports_every_n_and_never_less_than_its_probes():
    ns = (4, 8)
    sw = lipschitz_sweep(ns, d=4, eps=1e-2, spread=0.05, ascent=QUICK)
    assert sw.ns == ns
    assert set(sw.sup) == {f"{kernel}_{kind}" for kernel in ("ida", "soft") for kind in KEY_LAYOUTS}
    assert all(len(series) == len(ns) for series in (*sw.sup.values(), *sw.radius.values(), sw.v_max, sw.k_max))
    # the random probes start the ascent, so the IDA supremum on random keys is at least what they found
    assert all(s >= p * (1 - 1e-9) for s, p in zip(sw.sup["ida_random"], sw.probed, strict=True))
    # the same seed draws the same keys and values: the sweep is deterministic
    assert lipschitz_sweep(ns, d=4, eps=1e-2, spread=0.05, ascent=QUICK) == sw


def test_across_spread_reports_the_share_of_the_n_independent_bound():
    rho = [0.1, 10.0]
    across = lipschitz_across_spread(rho, d=4, spread=0.05, ascent=QUICK, n=8)
    assert across.rho.tolist() == rho
    assert len(across.sup) == len(across.fraction) == len(rho)
    # fraction = L sqrt(eps) / max||v||, eps = rho spread^2: the ratio of two entries follows from the sups
    ratio = across.fraction[1] / across.fraction[0]
    expected = across.sup[1] / across.sup[0] * (rho[1] / rho[0]) ** 0.5
    assert ratio == pytest.approx(expected, rel=1e-12)
