"""The Routing & memory page's lab: GSR's decisions on the sphere, Theorem 10.1's error against K with
its verdicts, three routers trained on one task, a DMG stream, and the distributed traffic report.

- ``sphere_lab``: prototypes spread evenly on S^2, queries around them, GSR's Top-K and weights
  w_e = (d_S(q, p_e)^2 + eps)^-1 / sum_{e' <= K} (...)^-1, the tail mass T = sum_{e > K} w_(e) of the
  full SIDA weights, and the routing entropy H(c) of the first-choice load beside log K_pool (section 10);
- ``quality_lab``: ||o - o*|| of the Top-K mix against full soft routing, with the worst-case values
  (v = +u on the Top-K, -u elsewhere) and random ones, judged against Theorem 10.1's printed bound
  by ``verdicts.verdict_inequality``: unit-norm values at every K, and values of norm 0.1/sqrt(K_pool),
  where the bound (quadratic in the values' scale) falls below the error (linear in it);
- ``routers_steps`` / ``router_table``: GSR, a Switch-style softmax gate and expert choice in one
  mixture-of-experts layer, trained one step at a time, and their load statistics as a table;
- ``dmg_lab``: DMG's pool fed a stream whose clusters rotate at one step; a point spawns when its loss
  exceeds tau_t = tau_base + kappa sigma_t + gamma r_t (Lemma 9.1);
- ``traffic_lab(TrafficConfig)`` / ``live_traffic``: bytes and messages of section 10.3's protocols,
  from a report document (an upload, a live run, or the repository's stored run).
"""

from __future__ import annotations

import math
from collections.abc import Generator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from georesolver_core.routing.compare import CompareConfig, RouterComparison, compare_routers_steps
from georesolver_core.routing.demo import DMGStream, RoutingDemo, ShiftingStream, dmg_stream, routing_demo
from georesolver_core.routing.distributed import DistConfig, run_headless
from georesolver_core.routing.dmg import DMGConfig
from georesolver_core.routing.quality import QualitySweep, quality_sweep
from georesolver_core.routing.traffic import (
    MAX_RUNS,
    MAX_TRAFFIC_BYTES,
    TrafficRun,
    load_traffic_report,
    traffic_runs,
)
from georesolver_core.routing.traffic import traffic_table as _traffic_rows
from georesolver_core.theory.routing import routing_entropy_bound
from georesolver_core.validate import check_eps, check_positive_int, check_range
from georesolver_core.verdicts import HOLDS, verdict_inequality

__all__ = [
    "MAX_TRAFFIC_BYTES",
    "CompareConfig",
    "DMGLab",
    "DMGLabConfig",
    "QualityConfig",
    "QualityLab",
    "SphereConfig",
    "SphereLab",
    "TrafficConfig",
    "TrafficLab",
    "dmg_lab",
    "live_traffic",
    "load_traffic_report",
    "quality_lab",
    "router_table",
    "routers_steps",
    "sphere_lab",
    "traffic_lab",
]

QUALITY_QUERIES = 150  # queries of the page's error-vs-K sweep
DMG_WINDOW = 32  # W = W_r: losses and spawns the page's DMG thresholds look back on


# --- 1. Routing decisions on the sphere ------------------------------------------------------------------


@dataclass(frozen=True)
class SphereConfig:
    """Prototypes and queries on S^2 and GSR's Top-K (hashable: a page caches ``sphere_lab`` on it)."""

    n_protos: int  # K_pool prototypes, evenly spread (Fibonacci sphere), in [1, 512]
    n_queries: int  # queries, in [1, 5000]
    k: int  # Top-K asked for, >= 1; routed to min(k, n_protos)
    eps: float  # SIDA regulariser, > 0
    spread: float  # queries' spread around random prototypes (radians, roughly), in [0, 10]
    seed: int = 0  # the generator of the queries

    def __post_init__(self):
        check_positive_int("n_protos", self.n_protos, 1, 512)
        check_positive_int("n_queries", self.n_queries, 1, 5000)
        check_positive_int("k", self.k, 1)
        check_eps(self.eps)
        check_range("spread", self.spread, 0.0, 10.0)

    @property
    def k_used(self) -> int:
        """The Top-K routed to: no more than there are prototypes."""
        return min(self.k, self.n_protos)


@dataclass(frozen=True)
class SphereLab:
    """GSR's decisions for every query, and the numbers the page prints beside them."""

    demo: RoutingDemo  # queries (n, 3), prototypes (m, 3), Top-K indices and weights (n, K), tail mass, load
    k: int  # the Top-K routed to (``SphereConfig.k_used``)
    entropy_bound: float  # log K_pool: the largest entropy of a load over K_pool prototypes
    never_chosen: int  # prototypes that are no query's first choice
    table: pd.DataFrame  # one row per query: its Top-K choices, their weights (4 decimals) and the tail mass


def sphere_lab(config: SphereConfig) -> SphereLab:
    """GSR on the sphere for ``config`` (``routing.demo.routing_demo``), with the routing table."""
    k = config.k_used
    demo = routing_demo(
        config.n_protos, config.n_queries, k=k, eps=config.eps, spread=config.spread, seed=config.seed
    )
    table = pd.DataFrame(
        {
            "query": np.arange(config.n_queries),
            **{f"choice {j + 1}": demo.indices[:, j] for j in range(k)},
            **{f"weight {j + 1}": np.round(demo.weights[:, j], 4) for j in range(k)},
            "tail mass": demo.tail_mass,
        }
    )
    return SphereLab(
        demo=demo,
        k=k,
        entropy_bound=float(routing_entropy_bound(config.n_protos)),
        never_chosen=int((demo.load == 0).sum()),
        table=table,
    )


# --- 2. Theorem 10.1: the error of keeping the Top-K ------------------------------------------------------


@dataclass(frozen=True)
class QualityConfig:
    """The error-vs-K sweep of Theorem 10.1 on S^2 (hashable)."""

    n_pool: int  # K_pool prototypes, in [2, 512]; K runs over 1..K_pool
    eps: float  # SIDA regulariser, > 0
    at_prototypes: bool = False  # queries equal to the prototypes (else uniform random queries)
    seed: int = 0  # the generator of the queries and of the random values
    n_queries: int = QUALITY_QUERIES  # random queries (ignored at the prototypes), in [1, 5000]

    def __post_init__(self):
        check_positive_int("n_pool", self.n_pool, 2, 512)
        check_eps(self.eps)
        check_positive_int("n_queries", self.n_queries, 1, 5000)


@dataclass(frozen=True)
class QualityLab:
    """The sweep and the two verdicts the page shows (both from ``verdict_inequality``, relation "le")."""

    sweep: QualitySweep  # ks, worst and random errors, tail mass, printed and exact bounds, small-norm case
    unit_verdict: str  # worst error with unit-norm values <= printed bound at every K: HOLDS or FAILS
    unit_summary: str  # the verdict's margin, or its worst point
    small_verdict: str  # at K = 1 with values of norm ``sweep.small_scale``: HOLDS or FAILS
    small_summary: str

    @property
    def unit_holds(self) -> bool:
        """Whether the printed bound holds for unit-norm values at every K."""
        return self.unit_verdict == HOLDS

    @property
    def small_holds(self) -> bool:
        """Whether the printed bound holds for the small-norm values at K = 1."""
        return self.small_verdict == HOLDS


def judge_quality(sweep: QualitySweep) -> QualityLab:
    """Theorem 10.1's printed bound against the sweep, for unit-norm values at every K and for the small-norm
    values at K = 1: ||o - o*|| <= bound, ``verdict_inequality``."""
    unit_verdict, unit_summary = verdict_inequality(sweep.worst_error, sweep.paper_bound, relation="le")
    small_verdict, small_summary = verdict_inequality(sweep.small_error[:1], sweep.small_bound[:1], relation="le")
    return QualityLab(
        sweep=sweep,
        unit_verdict=unit_verdict,
        unit_summary=unit_summary,
        small_verdict=small_verdict,
        small_summary=small_summary,
    )


def quality_lab(config: QualityConfig) -> QualityLab:
    """``routing.quality.quality_sweep`` at ``config``, judged by ``judge_quality``."""
    sweep = quality_sweep(
        n_pool=config.n_pool,
        n_queries=config.n_queries,
        eps=config.eps,
        at_prototypes=config.at_prototypes,
        seed=config.seed,
    )
    return judge_quality(sweep)


# --- 3. Three routers trained on one task -----------------------------------------------------------------


def routers_steps(config: CompareConfig) -> Generator[tuple[float, str, dict], None, RouterComparison]:
    """GSR, a Switch-style top-k gate and expert choice trained on ``config``'s cluster-maps task, one
    optimiser step per ``next`` (``routing.compare.compare_routers_steps``); returns the comparison."""
    return compare_routers_steps(config)


def router_table(result: RouterComparison) -> pd.DataFrame:
    """One row per router: test MSE and the held-out load statistics (CV of the load before and after the
    capacity cut, dead experts, load entropy beside log E, dropped slots and tokens) and training time."""
    return pd.DataFrame(
        [
            {
                "router": r.label,
                "test MSE": r.test_mse,
                "CV before capacity": r.stats.cv_requested,
                "CV after": r.stats.cv_kept,
                "dead experts": r.stats.dead_experts,
                "load entropy (nats)": r.stats.entropy,
                "log E": r.stats.entropy_max,
                "dropped slots": r.stats.dropped_slots,
                "tokens with no expert": r.stats.dropped_tokens,
                "train seconds": r.seconds,
            }
            for r in result.runs
        ]
    )


# --- 4. DMG on a shifting stream --------------------------------------------------------------------------


@dataclass(frozen=True)
class DMGLabConfig:
    """A shifting stream on S^2 and the DMG thresholds of its pool (hashable)."""

    n: int  # stream length, in [2, 20000]
    shift_at: int  # the first rotated step, >= 1; clipped to n
    angle: float  # rotation of every cluster at the shift, radians in [0, pi]
    tau_base: float  # base spawn threshold on the loss d_S^2 (rad^2), in [0, 40]
    kappa: float  # weight of the window's standard deviation sigma_t, in [0, 100]
    gamma: float  # weight of the recent spawn rate r_t, in [0, 100]
    capacity: int  # prototype slots, >= 1
    window: int = DMG_WINDOW  # W = W_r, the look-back of sigma_t and r_t, >= 2
    seed: int = 0  # the stream's generator

    def __post_init__(self):
        check_positive_int("shift_at", self.shift_at, 1)
        self.stream()  # validates n and the angle (ShiftingStream)
        self.dmg_config()  # validates the thresholds, the window and the capacity (DMGConfig)

    @property
    def shift_step(self) -> int:
        """The shift inside the stream: min(shift_at, n)."""
        return min(self.shift_at, self.n)

    def dmg_config(self) -> DMGConfig:
        """The pool's DMGConfig (validated there)."""
        return DMGConfig(
            capacity=self.capacity,
            tau_base=self.tau_base,
            kappa=self.kappa,
            gamma=self.gamma,
            window=self.window,
            rate_window=self.window,
        )

    def stream(self) -> ShiftingStream:
        return ShiftingStream(self.n, shift_at=self.shift_step, shift_angle=self.angle, seed=self.seed)


@dataclass(frozen=True)
class DMGLab:
    """The stream through the pool: losses, thresholds, spawns, and where the prototypes ended."""

    stream: DMGStream  # t, loss, tau, spawn_t, n_active, points, protos, births, ...
    shift_at: int  # the shift inside the stream (``DMGLabConfig.shift_step``)
    capacity: int  # the pool's slots
    used: int  # slots used at the end


def dmg_lab(config: DMGLabConfig) -> DMGLab:
    """Feed the pool the stream one point at a time (``routing.demo.dmg_stream``)."""
    res = dmg_stream(config.stream(), config.dmg_config())
    return DMGLab(stream=res, shift_at=config.shift_step, capacity=config.capacity, used=len(res.protos))


# --- 5. Distributed traffic -------------------------------------------------------------------------------


RUN_FIELDS = ("config", "rows", "max_abs_diff", "same_indices")  # what ``traffic_runs`` reads of a run


@dataclass(frozen=True)
class TrafficConfig:
    """The report documents to type and table: ``load_traffic_report``'s runs, or ``live_traffic``'s one.

    Validated on construction: 0 to MAX_RUNS runs, each a dict holding RUN_FIELDS with ``config`` naming a
    ``world_size`` (the fields' types and ranges are checked where a document enters: ``load_traffic_report``
    for an upload, ``routing.distributed`` for a live run). No runs: an empty lab (nothing to draw yet).
    """

    runs: tuple[dict, ...]  # one report document per world size

    def __post_init__(self):
        object.__setattr__(self, "runs", tuple(self.runs))
        if len(self.runs) > MAX_RUNS:
            raise ValueError(f"runs must hold 0 to {MAX_RUNS} report documents (got {len(self.runs)})")
        for i, run in enumerate(self.runs):
            missing = [f for f in RUN_FIELDS if not isinstance(run, dict) or f not in run]
            if missing or not isinstance(run["config"], dict) or "world_size" not in run["config"]:
                raise ValueError(
                    f"runs[{i}] must be a report document with {list(RUN_FIELDS)} and config.world_size "
                    f"(missing {missing or ['config.world_size']})"
                )


@dataclass(frozen=True)
class TrafficLab:
    """A traffic report, typed: its runs, every row, and the table the page shows."""

    runs: list[TrafficRun]  # one per world size
    rows: list[dict]  # every protocol and batch size of every run (``comm_figure``'s input)
    table: pd.DataFrame  # the rows' TABLE_COLUMNS


def traffic_lab(config: TrafficConfig) -> TrafficLab:
    """The runs of ``config`` (from ``load_traffic_report`` or ``live_traffic``), typed and tabled."""
    typed = traffic_runs(list(config.runs))
    rows = [r for run in typed for r in run.rows]
    return TrafficLab(runs=typed, rows=rows, table=pd.DataFrame(_traffic_rows(typed)))


def live_traffic(batches: tuple[int, ...], world: int, *, timeout_s: float = 60.0) -> dict:
    """One distributed run over gloo in fresh worker processes (``routing.distributed.run_headless``):
    its report document. Raises RuntimeError, TimeoutError or OSError when the workers fail."""
    check_positive_int("world", world, 1, 64)
    if not (math.isfinite(timeout_s) and timeout_s > 0):
        raise ValueError(f"timeout_s must be a positive number of seconds (got {timeout_s!r})")
    return run_headless(
        DistConfig(world_size=world, batch_sizes=tuple(batches), backend="gloo", timeout_s=timeout_s)
    )
