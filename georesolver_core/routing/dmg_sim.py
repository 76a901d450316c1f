"""Fast, vectorised simulations of DMG's spawn rule (Lemma 9.1) and its quantisation error (Proposition 3).

The threshold test of ``dmg.AdaptiveThreshold`` at step s (s = 0, 1, ... after the founding point):
spawn iff l_s > tau_base + kappa sigma_s + gamma r_s, sigma_s the population std of l over the last
W steps (0 with fewer than 2), r_s the fraction of surprises among the last W_r steps. The rate r
only changes when a surprise enters or leaves its window, so between those events the test is one
vectorised comparison: T = 1e6 steps cost a few thousand numpy scans, not a Python loop.

Two readings of "stationary stream":
  null      the lemma's literal model: l_s i.i.d. sub-Gaussian (here Gaussian), unaffected by spawns;
  pool      DMG's own loss l_s = min_e d_S(x_s, c_e)^2: a spawn at x_s lowers later losses (lr = 0).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from georesolver_core.routing.dmg import DMGConfig


def window_sigma(losses: np.ndarray, window: int) -> np.ndarray:
    """sigma_s = population std of losses[max(0, s-W):s] (0 when fewer than 2). (n,) -> (n,)."""
    n = losses.shape[0]
    c1 = np.concatenate([[0.0], np.cumsum(losses)])
    c2 = np.concatenate([[0.0], np.cumsum(losses * losses)])
    s = np.arange(n)
    lo = np.maximum(0, s - window)
    cnt = s - lo
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = (c1[s] - c1[lo]) / cnt
        var = (c2[s] - c2[lo]) / cnt - mean * mean
    # Cumulative sums cancel: the clamp keeps a (rounding-)negative variance at 0.
    return np.where(cnt >= 2, np.sqrt(np.maximum(var, 0.0)), 0.0)


def _first_above(excess: np.ndarray, start: int, stop: int, thr: float) -> int:
    """First s in [start, stop) with excess[s] > thr, or -1; scans in growing chunks."""
    chunk = 256
    while start < stop:
        end = min(stop, start + chunk)
        hit = np.flatnonzero(excess[start:end] > thr)
        if hit.size:
            return start + int(hit[0])
        start, chunk = end, chunk * 2
    return -1


def spawn_times(excess_fn, n_steps: int, gamma: float, rate_window: int) -> list[int]:
    """Steps that spawn. ``excess_fn(spawns)`` returns l_s - tau_base - kappa sigma_s given the spawns so far."""
    spawns: list[int] = []
    excess = excess_fn(spawns)
    s = 0
    while s < n_steps:
        live = [t for t in spawns if t >= s - rate_window]
        rate = len(live) / rate_window
        stop = min(n_steps, live[0] + rate_window + 1) if live else n_steps  # next change of the rate
        hit = _first_above(excess, s, stop, gamma * rate)
        if hit < 0:
            s = stop
            continue
        spawns.append(hit)
        excess = excess_fn(spawns)
        s = hit + 1
    return spawns


def null_spawns(
    n_steps: int, cfg: DMGConfig, *, mu0: float = 0.0, sigma0: float = 1.0, seed: int = 0
) -> list[int]:
    """Spawn steps on i.i.d. Gaussian losses N(mu0, sigma0^2) (the lemma's null model)."""
    losses = np.random.default_rng(seed).normal(mu0, sigma0, n_steps)
    excess = losses - cfg.tau_base - cfg.kappa * window_sigma(losses, cfg.window)
    return spawn_times(lambda _: excess, n_steps, cfg.gamma, cfg.rate_window)


def sphere_sq_dist(x: np.ndarray, c: np.ndarray) -> np.ndarray:
    """d_S(x_i, c)^2 = (2 atan2(|x - c|, |x + c|))^2, the library's stable angle. (n, d), (d,) -> (n,)."""
    return (2.0 * np.arctan2(np.linalg.norm(x - c, axis=1), np.linalg.norm(x + c, axis=1))) ** 2


def pool_spawns(points: np.ndarray, cfg: DMGConfig) -> list[int]:
    """Spawn steps of a DMG pool (lr = 0, unbounded capacity) fed ``points`` (n, d); points[0] founds it.

    Step s sees point s + 1. Each spawn lowers the later losses: min_d2 = min(min_d2, d^2(x, new)).
    """
    stream = points[1:]
    min_d2 = sphere_sq_dist(stream, points[0])
    out = min_d2 - cfg.tau_base - cfg.kappa * window_sigma(min_d2, cfg.window)
    state = {"n": 0}

    def excess(spawns):
        new = spawns[state["n"] :]
        state["n"] = len(spawns)
        if not new:
            return out
        for t in new:
            min_d2[t + 1 :] = np.minimum(min_d2[t + 1 :], sphere_sq_dist(stream[t + 1 :], stream[t]))
        # Only steps after the first new spawn change; sigma there needs the W losses before them.
        t0 = new[0] + 1
        lo = max(0, t0 - cfg.window)
        sig = window_sigma(min_d2[lo:], cfg.window)[t0 - lo :]
        # window_sigma on a suffix sees fewer than W losses only where the full array does too.
        out[t0:] = min_d2[t0:] - cfg.tau_base - cfg.kappa * sig
        return out

    return spawn_times(excess, stream.shape[0], cfg.gamma, cfg.rate_window)


def cluster_stream(
    n: int,
    dim: int = 3,
    n_clusters: int = 6,
    spread: float = 0.15,
    *,
    seed: int = 0,
    centres: np.ndarray | None = None,
) -> np.ndarray:
    """A stationary stream on S^{dim-1}: Gaussian bumps around fixed centres, normalised. (n, dim)."""
    rng = np.random.default_rng(seed)
    if centres is None:
        centres = rng.normal(size=(n_clusters, dim))
        centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    x = centres[rng.integers(len(centres), size=n)] + spread * rng.normal(size=(n, dim))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@dataclass
class SpawnCurve:
    """Cumulative spawns at checkpoints T for both readings."""

    t: list[int]
    null: list[int]
    pool: list[int]
    extra: dict = field(default_factory=dict)


def decade_grid(t_max: int) -> np.ndarray:
    """T = 10^2, 10^3, ..., t_max."""
    return np.array([10**j for j in range(2, int(round(np.log10(t_max))) + 1)])


def spawn_curve(t_max: int, cfg: DMGConfig, *, reading: str, seed: int = 0) -> SpawnCurve:
    """Spawns up to each T = 10^2..t_max, for the null model ("null") or a DMG pool on S^2 ("pool")."""
    ts = decade_grid(t_max)
    if reading == "null":
        times = np.asarray(null_spawns(int(ts[-1]), cfg, seed=seed))
    elif reading == "pool":
        times = np.asarray(pool_spawns(cluster_stream(int(ts[-1]) + 1, seed=seed), cfg))
    else:
        raise ValueError(f"reading must be 'null' or 'pool' (got {reading!r})")
    counts = [int((times < t).sum()) for t in ts]
    return SpawnCurve(ts.tolist(), counts if reading == "null" else [], counts if reading == "pool" else [])


def spherical_kmeans(x: np.ndarray, k: int, *, iters: int = 25, seed: int = 0) -> tuple[np.ndarray, float]:
    """Lloyd's algorithm on the sphere (k-means++ seeding); returns centres (k, d) and mean min d_S^2."""
    rng = np.random.default_rng(seed)
    centres = [x[rng.integers(len(x))]]
    d2 = sphere_sq_dist(x, centres[0])
    for _ in range(1, k):
        centres.append(x[rng.choice(len(x), p=d2 / d2.sum())])
        d2 = np.minimum(d2, sphere_sq_dist(x, centres[-1]))
    c = np.stack(centres)
    for _ in range(iters):
        assign = np.argmax(x @ c.T, axis=1)  # nearest by angle = largest cosine
        for j in range(k):
            m = x[assign == j]
            if len(m):
                s = m.sum(0)
                c[j] = s / max(np.linalg.norm(s), 1e-300)  # the clamp guards an antipodal cancellation
    dots = np.clip(x @ c.T, -1.0, 1.0)
    return c, float(np.mean(np.arccos(dots.max(1)) ** 2))


def quantisation_curve(ks, dim: int, n: int = 4000, *, seed: int = 0) -> list[float]:
    """Mean squared geodesic quantisation error of k-means on a compact cap of S^{dim-1}, per K."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, dim))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    x = x[x[:, -1] > 0.0]  # a hemisphere: compact, bounded away from nothing that matters
    return [spherical_kmeans(x, int(k), seed=seed)[1] for k in ks]


def ball_quantisation_curve(ks, dim: int, n: int = 4000, *, radius: float = 0.5, seed: int = 0) -> list[float]:
    """Mean squared Poincaré-distance quantisation error of K centres on the ball ||x|| <= radius (c = 1),
    per K: a compact set away from the rim (Proposition 3 in the ball).

    Lloyd's algorithm with Euclidean centroids (k-means++ seeding): inside ||x|| <= 1/2 the Poincaré metric
    is within a factor 2/(1 - radius^2) of the Euclidean one, so the error's rate in K is the same.
    """
    from georesolver_core.geometry import pairwise_distance

    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, dim))
    x *= (
        radius * rng.random((n, 1)) ** (1.0 / dim) / np.linalg.norm(x, axis=1, keepdims=True)
    )  # uniform in the ball
    xt = torch_from(x)
    out = []
    for k in ks:
        c = [x[rng.integers(n)]]
        d2 = ((x - c[0]) ** 2).sum(1)
        for _ in range(1, int(k)):
            c.append(x[rng.choice(n, p=d2 / d2.sum())])
            d2 = np.minimum(d2, ((x - c[-1]) ** 2).sum(1))
        c = np.stack(c)
        for _ in range(25):
            assign = np.argmin(((x[:, None, :] - c[None]) ** 2).sum(-1), axis=1)
            for j in range(int(k)):
                if (assign == j).any():
                    c[j] = x[assign == j].mean(0)
        d = pairwise_distance(xt, torch_from(c), geometry="poincare")  # (n, K)
        out.append(float((d.min(1).values ** 2).mean()))
    return out


def torch_from(a: np.ndarray):
    """float64 tensor of an array (the distances of the ball need float64 near nothing here, but match theory/)."""
    import torch

    return torch.as_tensor(a, dtype=torch.float64)
