"""The worst key for HCC: Theorem 6.1 claims a bound for every key, so it is tested against the worst we can find.

Three sources of keys per (d, b, b_r), the largest error wins:

- random keys of the paper's form x = 0.9 tanh(z) (``to_ball``), or keys near the rim (norm in [0.99, 1),
  the distance to the rim log-uniform down to 1e-9);
- analytic candidates: r e_1 (d - 1 coordinates at 0, a midpoint of the grid since 2^b - 1 is odd),
  and vectors whose coordinates sit on grid midpoints, each off by half a step;
- a hill climb from the best of those: a population of keys perturbed at random, keeping every
  perturbation that raises the error (radius kept in the allowed range).

All errors are measured through the real quantiser (``hcc_quantize`` -> packed bytes -> ``dequantize``).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from georesolver_core.compression.hcc import hcc_polar, hcc_quantize
from georesolver_core.geometry import to_ball

MAX_MIDPOINTS = 64  # candidate midpoint values per (d, b)
KEY_KINDS = {"tanh": (0.0, 0.9), "rim": (0.99, 1.0 - 1e-9)}  # norm range of each kind of key


@dataclass(frozen=True)
class HccErrors:
    """Per-key errors of one quantisation: the theorem's quantity and the two steps of its proof. (N,) each."""

    sq_error: torch.Tensor  # ||k - k_hat||^2
    direction_error: torch.Tensor  # ||u - u_hat||
    radius_error: torch.Tensor  # |r - r_hat|


def hcc_errors(keys: torch.Tensor, *, bits_dir: int, bits_radius: int, **options) -> HccErrors:
    """Quantise keys (N, d) and return the errors of every key (float64 keys for exact measurement)."""
    ck = hcc_quantize(keys, bits_dir=bits_dir, bits_radius=bits_radius, **options)
    r_hat, u_hat = hcc_polar(ck)
    r = keys.norm(dim=-1).to(torch.float64)  # (N,)
    u = keys / keys.norm(dim=-1, keepdim=True).clamp_min(1e-300)  # (N, d)
    k_hat = ck.dequantize()
    return HccErrors(
        sq_error=((k_hat - keys) ** 2).sum(-1).to(torch.float64),
        direction_error=(u_hat.to(torch.float64) - u.to(torch.float64)).norm(dim=-1),
        radius_error=(r_hat - r).abs(),
    )


def random_keys(n: int, d: int, kind: str, generator: torch.Generator) -> torch.Tensor:
    """n keys (n, d) float64: the paper's 0.9 tanh(z) of Gaussian z, or random directions near the rim."""
    if kind not in KEY_KINDS:
        raise ValueError(f"kind must be one of {sorted(KEY_KINDS)} (got {kind!r})")
    z = torch.randn(n, d, generator=generator, dtype=torch.float64)
    if kind == "tanh":
        return to_ball(z)
    lo, hi = KEY_KINDS[kind]
    # distance to the rim log-uniform in [1 - hi, 1 - lo]: every scale from 1e-2 down to 1e-9 is hit
    # (float32 rounds the closest quarter onto the rim itself)
    span = torch.rand(n, 1, generator=generator, dtype=torch.float64)
    gap = (1.0 - hi) * ((1.0 - lo) / (1.0 - hi)) ** span
    return torch.nn.functional.normalize(z, dim=-1) * (1.0 - gap)


def analytic_candidates(d: int, bits_dir: int, bits_radius: int, kind: str) -> torch.Tensor:
    """Keys built to hit half-step errors in every coordinate, at the largest allowed radius and at radius midpoints."""
    levels = 2**bits_dir - 1
    lo, hi = KEY_KINDS[kind]
    top = 2**bits_radius
    mid = (torch.floor(torch.tensor(hi * top - 0.5)) + 0.5) / top  # the largest radius midpoint below hi
    radii = torch.tensor([hi, max(float(mid) - 1e-12, lo)], dtype=torch.float64)
    # The grid -1 + 2 j / L has its midpoints at 2 i / L (i = 0 .. (L - 1) / 2 on the positive side; 0
    # included). Put as many coordinates as fit on the sphere at one midpoint; the others stay at 0.
    # At most MAX_MIDPOINTS values of i, spread evenly: b = 16 would give 32767.
    i = torch.unique(torch.linspace(1, max((levels - 1) // 2, 1), MAX_MIDPOINTS).round()).to(torch.float64)
    v = (2.0 * i / levels).unsqueeze(-1)  # (c, 1) a midpoint value per candidate
    m = torch.clamp(torch.floor(1.0 / (v * v)), max=d)  # (c, 1) coordinates at v
    rest = (1.0 - m * v * v).clamp_min(0.0).sqrt()  # (c, 1) what is left of the unit norm
    cols = torch.arange(d, dtype=torch.float64)  # (d,)
    dirs = torch.where(cols < m, v, 0.0) + torch.where(cols == m, rest, 0.0)  # (c, d)
    e1 = torch.zeros(1, d, dtype=torch.float64)
    e1[0, 0] = 1.0
    dirs = torch.nn.functional.normalize(torch.cat([e1, dirs]), dim=-1)  # (c + 1, d)
    return (dirs.unsqueeze(0) * radii.view(-1, 1, 1)).reshape(-1, d)  # (2 c, d)


def _clip_radius(keys: torch.Tensor, kind: str) -> torch.Tensor:
    lo, hi = KEY_KINDS[kind]
    norm = keys.norm(dim=-1, keepdim=True).clamp_min(1e-300)
    return keys * (norm.clamp(lo, hi) / norm)


@dataclass(frozen=True)
class WorstCase:
    """The largest errors found for one (d, b, b_r, kind) and where they came from."""

    random_max: float  # max ||k - k_hat||^2 over the random keys
    analytic_max: float  # over the analytic candidates
    search_max: float  # after the hill climb (>= both)
    direction_max: float  # max ||u - u_hat|| over every key evaluated
    radius_max: float  # max |r - r_hat|
    worst_key: torch.Tensor  # (d,) the key that reached search_max
    random_errors: torch.Tensor  # (n,) ||k - k_hat||^2 of the random keys (the distribution)


def worst_case(
    d: int,
    bits_dir: int,
    bits_radius: int,
    *,
    kind: str = "tanh",
    n_random: int = 512,
    population: int = 32,
    steps: int = 30,
    seed: int = 0,
    **options,
) -> WorstCase:
    """Search for the key that maximises ||k - k_hat||^2 (see the module docstring). float64 throughout."""
    g = torch.Generator().manual_seed(seed)
    rnd = random_keys(n_random, d, kind, g)
    cand = analytic_candidates(d, bits_dir, bits_radius, kind)
    pool = torch.cat([rnd, cand])  # (n + c, d)
    # one quantisation for both sets: HCC treats keys one by one (its only shared datum, the radius
    # scale, is 1 for keys inside the unit ball; rho_max of the hyperbolic mode is the pool's largest)
    e_pool = hcc_errors(pool, bits_dir=bits_dir, bits_radius=bits_radius, **options)
    err = e_pool.sq_error
    random_errors = err[:n_random]
    dir_max, rad_max = float(e_pool.direction_error.max()), float(e_pool.radius_error.max())
    best = torch.topk(err, min(population, err.numel())).indices
    pop, pop_err = pool[best], err[best]  # (p, d), (p,)
    for step in range(steps):
        sigma = 0.3 * 0.85**step / d**0.5  # per-coordinate step, shrinking
        trial = _clip_radius(pop + sigma * torch.randn(pop.shape, generator=g, dtype=torch.float64), kind)
        e = hcc_errors(trial, bits_dir=bits_dir, bits_radius=bits_radius, **options)
        dir_max = max(dir_max, float(e.direction_error.max()))
        rad_max = max(rad_max, float(e.radius_error.max()))
        better = e.sq_error > pop_err
        pop = torch.where(better.unsqueeze(-1), trial, pop)
        pop_err = torch.where(better, e.sq_error, pop_err)
    i = int(pop_err.argmax())
    return WorstCase(
        random_max=float(random_errors.max()),
        analytic_max=float(err[n_random:].max()),
        search_max=max(float(pop_err[i]), float(err.max())),
        direction_max=dir_max,
        radius_max=rad_max,
        worst_key=pop[i],
        random_errors=random_errors,
    )
