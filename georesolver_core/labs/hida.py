"""The HIDA page's lab and the experiments its claims share: each returns a frozen dataclass.

The page draws FP-HIDA's index pattern (``fp_pattern``), L-HIDA's anchors and C-HIDA's summaries in
the disk with the running loss against Theorem 5.6's bound (``disk_view``) and each variant's error
against Dense-HIDA (``error_vs_dense``, ``error_table``); its timing sweep is ``labs.cost_scaling``.
The claims read C-HIDA's stream and regret (``c_hida_stream``), L-HIDA's error (``l_error_sweep``)
and FP-HIDA's retrieval (``fp_retrieval``).

Everything runs on the CPU in float64 from a fixed seed unless told otherwise, so the command line,
the tests and the app see the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from georesolver_core.attention.c_hida import CHIDA
from georesolver_core.attention.fp_hida import FPStats, fp_hida, fp_index, fp_stats
from georesolver_core.attention.fp_hida import default_n_global as default_n_global  # the page's knob defaults
from georesolver_core.attention.fp_hida import default_window as default_window
from georesolver_core.attention.l_hida import hyperbolic_kmeans, l_hida, l_hida_nystrom
from georesolver_core.attention.reference import reference_ida
from georesolver_core.attention.spec import CAUSAL, KernelSpec
from georesolver_core.geometry import pairwise_sq_distance, to_ball
from georesolver_core.theory.hida import c_hida_regret_bound
from georesolver_core.validate import check_eps, check_positive_int

F64 = torch.float64


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(int(seed))


def ball_points(n: int, d: int, *, seed: int = 0, scale: float = 1.5, dtype=F64) -> torch.Tensor:
    """n points spread through the ball: Gaussian with std ``scale`` mapped radially by to_ball. (n, d)."""
    return to_ball(scale * torch.randn(n, d, generator=_gen(seed), dtype=dtype)).to(dtype)


def cluster_stream(T: int, d: int, n_clusters: int, *, seed: int = 0, spread: float = 0.08):
    """A stream from a fixed mixture: cluster centres in the ball, points = centre + noise, mapped back
    into the ball. Returns (points (T, d), true centres (n_clusters, d), labels (T,))."""
    g = _gen(seed)
    centres = to_ball(1.2 * torch.randn(n_clusters, d, generator=g, dtype=F64))
    labels = torch.randint(n_clusters, (T,), generator=g)
    pts = centres[labels] + spread * torch.randn(T, d, generator=g, dtype=F64)
    norm = pts.norm(dim=-1, keepdim=True)
    pts = torch.where(norm > 0.95, pts / norm * 0.95, pts)  # keep the noise inside the ball
    return pts, centres, labels


@dataclass(frozen=True)
class FPPattern:
    """FP-HIDA's index sets S_i as an image, and what they cost (Theorem 5.4)."""

    mask: np.ndarray  # (n, n) bool: key j is in S_i
    stats: FPStats  # |S_i| (mean, max, the bound) and the fraction of the dense work


@dataclass(frozen=True)
class PatternConfig:
    """FP-HIDA's index sets at one size (checked by ``fp_index``, which builds them)."""

    n: int  # queries and keys
    window: int  # band |i - j| <= window
    n_global: int  # global positions every query sees
    causal: bool = False  # keys j <= i only


def fp_pattern(config: PatternConfig) -> FPPattern:
    """S_i for i = 0..n-1 with band |i - j| <= ``window`` and ``n_global`` global positions (causal: j <= i)."""
    n, sizes = config.n, dict(window=config.window, n_global=config.n_global, causal=config.causal)
    return FPPattern(mask=fp_index(n, **sizes).visible(n, n).numpy(), stats=fp_stats(n, **sizes))


@dataclass(frozen=True)
class LErrorSweep:
    """||o - o^Dense||_F of L-HIDA (k-means anchors) and its Nyström form as the number of anchors m grows."""

    n: int
    eps: float
    m: list[int]
    l_hida: list[float]
    nystrom: list[float]
    v_fro: float


def l_error_sweep(n: int, d: int, eps: float, ms, *, seed: int = 0) -> LErrorSweep:
    check_positive_int("n", n, 2)
    eps = check_eps(eps)
    q, k = ball_points(n, d, seed=seed), ball_points(n, d, seed=seed + 1)
    v = torch.randn(n, d, generator=_gen(seed + 2), dtype=F64)
    dense = reference_ida(q, k, v, KernelSpec(eps, "poincare"))
    errs, nys = [], []
    for m in ms:
        anchors, _ = hyperbolic_kmeans(k, int(m), generator=_gen(seed + 3))
        errs.append(float((l_hida(q, k, v, anchors, eps=eps) - dense).norm()))
        nys.append(float((l_hida_nystrom(q, k, v, anchors, eps=eps) - dense).norm()))
    return LErrorSweep(n=n, eps=eps, m=[int(m) for m in ms], l_hida=errs, nystrom=nys, v_fro=float(v.norm()))


@dataclass(frozen=True)
class StreamResult:
    """One C-HIDA stream: the keys, the summaries after each token, the online loss and the regret."""

    keys: np.ndarray  # (T, d)
    labels: np.ndarray  # (T,) true mixture component
    history: np.ndarray | None  # (T, c, d) summaries after each token (NaN: slot not yet open)
    counts: np.ndarray  # (c,) final counts
    assignment: np.ndarray  # (T,) summary each key is nearest to at the end
    online_loss: np.ndarray  # (T,) min_k d_H(k_t, s_k^(t))^2
    cumulative_loss: np.ndarray  # (T,) running sum: the left side of Theorem 5.6
    checkpoints: list[int]  # T values at which the best fixed centres were computed
    best_fixed: list[float]  # min over fixed centres of sum_{t <= T} min_k d_H^2 (hyperbolic k-means)
    regret: list[float]  # cumulative_loss[T - 1] - best_fixed
    diameter: float  # Delta_H: the largest hyperbolic distance between two keys
    n_summaries: int


def c_hida_stream(
    T: int, n_summaries: int, *, d: int = 2, n_clusters: int | None = None, seed: int = 0, record: bool = False,
    checkpoints=None, order: str = "random",
) -> StreamResult:  # fmt: skip
    """Stream T keys from a mixture of ``n_clusters`` (default: n_summaries) through C-HIDA.

    ``order="sorted"`` is the adversarial order: the clusters arrive one after another, so the first
    c keys (which open the summaries) all come from one cluster.
    """
    check_positive_int("T", T, 1)
    check_positive_int("n_summaries", n_summaries, 1)
    if order not in ("random", "sorted"):
        raise ValueError(f"order must be 'random' or 'sorted' (got {order!r})")
    n_clusters = n_clusters or n_summaries
    keys, true_centres, labels = cluster_stream(T, d, n_clusters, seed=seed)
    if order == "sorted":
        perm = torch.sort(labels, stable=True).indices
        keys, labels = keys[perm], labels[perm]
    model = CHIDA(n_summaries, d, eps=0.1)
    with torch.no_grad():
        model(keys[None], keys[None], keys[None], record=record)
    loss = model.online_loss[0].numpy()
    cum = np.cumsum(loss)
    checkpoints = sorted({int(t) for t in ([T] if checkpoints is None else checkpoints) if 1 <= int(t) <= T})
    best = []
    for t in checkpoints:
        # The comparator min_s sum_t min_k d^2 is non-convex: the best of two k-means++ restarts and
        # of Lloyd started at the mixture's true centres (when there are as many) stands in for it.
        m = min(n_summaries, t)
        starts = [dict(generator=_gen(seed + 7 + r)) for r in range(2)]
        if n_clusters == m:
            starts.append(dict(init=true_centres))
        losses = []
        for kw in starts:
            centres, _ = hyperbolic_kmeans(keys[:t], m, iters=20, **kw)
            losses.append(float(pairwise_sq_distance(keys[:t], centres, geometry="poincare").amin(-1).sum()))
        best.append(min(losses))
    diam = float(pairwise_sq_distance(keys, keys, geometry="poincare").max().sqrt())
    final = model.summaries[0]
    assignment = pairwise_sq_distance(keys, final, geometry="poincare").argmin(-1).numpy()
    hist = model.history[:, 0].numpy() if record else None
    return StreamResult(
        keys=keys.numpy(), labels=labels.numpy(), history=hist, counts=model.counts[0].numpy(), assignment=assignment,
        online_loss=loss, cumulative_loss=cum, checkpoints=checkpoints, best_fixed=best,
        regret=[float(cum[t - 1] - b) for t, b in zip(checkpoints, best, strict=True)], diameter=diam,
        n_summaries=n_summaries,
    )  # fmt: skip


@dataclass(frozen=True)
class RetrievalResult:
    """Copy task q_i = k_j*: how often FP-HIDA and Dense-HIDA return v_j* (relative error < 10%)."""

    n: int
    probes: int
    fp_rate: float  # fraction retrieved by FP-HIDA
    dense_rate: float  # fraction retrieved by Dense-HIDA
    coverage: float  # fraction of probes whose target lies in S_i: the most FP-HIDA can retrieve
    fp_error_outside: float  # mean relative error of FP-HIDA on targets outside S_i


def fp_retrieval(
    n: int, *, probes: int = 64, d: int = 16, eps: float = 1e-6, seed: int = 0, window=None, n_global=None
):
    """Plant ``probes`` queries equal to a random key at a random position; measure retrieval."""
    check_positive_int("n", n, 2)
    g = _gen(seed)
    k = ball_points(n, d, seed=seed)
    v = torch.randn(n, d, generator=g, dtype=F64)
    rows = torch.randperm(n, generator=g)[: min(probes, n)]
    targets = torch.randint(n, (rows.numel(),), generator=g)
    q = ball_points(n, d, seed=seed + 5)
    q[rows] = k[targets]
    fp = fp_hida(q, k, v, eps=eps, window=window, n_global=n_global)[rows]
    dense = reference_ida(q[rows], k, v, KernelSpec(eps, "poincare"))
    rel = lambda o: (o - v[targets]).norm(dim=-1) / v[targets].norm(dim=-1)  # noqa: E731
    from georesolver_core.attention.fp_hida import fp_index

    index = fp_index(n, window=window, n_global=n_global).index[rows]  # (probes, s)
    inside = (index == targets.unsqueeze(1)).any(1)
    err = rel(fp)
    outside = float(err[~inside].mean()) if bool((~inside).any()) else float("nan")
    return RetrievalResult(
        n=n, probes=rows.numel(), fp_rate=float((err < 0.1).double().mean()),
        dense_rate=float((rel(dense) < 0.1).double().mean()), coverage=float(inside.double().mean()),
        fp_error_outside=outside,
    )  # fmt: skip


@dataclass(frozen=True)
class ErrorVsDense:
    """Relative error ||o - o^Dense||_F / ||o^Dense||_F of one variant as its size parameter grows."""

    variant: str  # "fp-hida (w)", "fp-hida (g)", "l-hida (m)", "c-hida (c)"
    values: list[int]
    error: list[float]
    work_fraction: list[float]  # distances evaluated per query / n


def error_table(sweeps: list[ErrorVsDense]) -> list[dict]:
    """One row per variant and size (variant, value, rel_error, work_fraction): the sweep as a table."""
    return [
        dict(variant=sw.variant, value=v, rel_error=e, work_fraction=f)
        for sw in sweeps
        for v, e, f in zip(sw.values, sw.error, sw.work_fraction, strict=True)
    ]


@dataclass(frozen=True)
class ErrorSweepConfig:
    """The four size knobs against Dense-HIDA on n random points of the ball.

    Validated on construction: n >= 2, d >= 1, eps as ``check_eps`` allows, steps >= 2.
    """

    n: int = 128  # queries and keys
    d: int = 8  # dimension
    eps: float = 0.1  # IDA regulariser
    seed: int = 0  # the points' and values' generators
    steps: int = 6  # sizes per knob, log spaced from 1 to n

    def __post_init__(self):
        check_positive_int("n", self.n, 2)
        check_positive_int("d", self.d, 1)
        check_eps(self.eps)
        check_positive_int("steps", self.steps, 2)


def error_vs_dense(config: ErrorSweepConfig) -> list[ErrorVsDense]:
    """The four size knobs swept from 1 to n (log spaced), each against Dense-HIDA on the same q, k, v."""
    n, d, eps, seed, steps = config.n, config.d, config.eps, config.seed, config.steps
    q, k = ball_points(n, d, seed=seed), ball_points(n, d, seed=seed + 1)
    v = torch.randn(n, d, generator=_gen(seed + 2), dtype=F64)
    dense = reference_ida(q, k, v, KernelSpec(eps, "poincare"))
    dense_causal = reference_ida(q, k, v, KernelSpec(eps, "poincare", keys=CAUSAL))
    values = sorted({int(round(x)) for x in np.geomspace(1, n, steps)})
    rel = lambda o, ref: float((o - ref).norm() / ref.norm())  # noqa: E731
    out = []
    for knob in ("w", "g"):
        errs, work = [], []
        for x in values:
            kw = {"window": x, "n_global": 1} if knob == "w" else {"window": 1, "n_global": x}
            errs.append(rel(fp_hida(q, k, v, eps=eps, **kw), dense))
            work.append(fp_stats(n, **kw).work_fraction)
        out.append(ErrorVsDense(variant=f"fp-hida ({knob})", values=values, error=errs, work_fraction=work))
    errs = []
    for m in values:
        anchors, _ = hyperbolic_kmeans(k, m, generator=_gen(seed + 3))
        errs.append(rel(l_hida(q, k, v, anchors, eps=eps), dense))
    out.append(
        ErrorVsDense(variant="l-hida (m)", values=values, error=errs, work_fraction=[m / n for m in values])
    )
    errs = []
    with torch.no_grad():
        for c in values:
            errs.append(rel(CHIDA(c, d, eps=eps)(q[None], k[None], v[None])[0], dense_causal))
    work = [min(c, n) / n for c in values]
    out.append(ErrorVsDense(variant="c-hida (c)", values=values, error=errs, work_fraction=work))
    return out


@dataclass(frozen=True)
class DiskView:
    """Keys of one clustered stream in the Poincaré disk, L-HIDA's k-means anchors on them, and the C-HIDA
    stream over the same keys (summaries recorded after every token) with Theorem 5.6's bound beside its loss."""

    keys: np.ndarray  # (T, 2)
    anchors: np.ndarray  # (m, 2)
    anchor_assignment: np.ndarray  # (T,)
    stream: StreamResult
    tokens: np.ndarray  # (T,) t = 1..T
    regret_bound: np.ndarray  # (T,) Delta_H^2 c log t, Delta_H the stream's diameter (``theory.hida``)


@dataclass(frozen=True)
class DiskConfig:
    """One clustered stream of T keys in the disk, with m anchors and c summaries.

    Validated on construction: T >= 1, n_anchors in [1, T]; the summaries and clusters by ``c_hida_stream``.
    """

    n_anchors: int  # m: L-HIDA's k-means anchors
    n_summaries: int  # c: C-HIDA's summaries
    T: int  # keys in the stream
    n_clusters: int = 4  # components of the mixture the keys come from
    seed: int = 0

    def __post_init__(self):
        check_positive_int("T", self.T, 1)
        check_positive_int("n_anchors", self.n_anchors, 1, self.T)


def disk_view(config: DiskConfig) -> DiskView:
    """What the page draws in the disk: m anchors and c summaries absorbing the same T keys."""
    n_anchors, n_summaries, T, n_clusters, seed = (
        config.n_anchors, config.n_summaries, config.T, config.n_clusters, config.seed
    )  # fmt: skip
    # No best-fixed comparator here (k-means restarts per checkpoint): the regret claim measures that.
    stream = c_hida_stream(T, n_summaries, d=2, n_clusters=n_clusters, seed=seed, record=True, checkpoints=[])
    keys = torch.from_numpy(stream.keys)
    anchors, labels = hyperbolic_kmeans(keys, n_anchors, generator=_gen(seed + 11))
    tokens = np.arange(1, T + 1)
    bound = c_hida_regret_bound(tokens, n_summaries, stream.diameter)
    return DiskView(
        keys=stream.keys, anchors=anchors.numpy(), anchor_assignment=labels.numpy(), stream=stream, tokens=tokens,
        regret_bound=bound,
    )  # fmt: skip
