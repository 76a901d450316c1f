"""The Orthogonal residuals page's lab (seed 003): one vector of R^3 under each shortcut operator
(``operator_lab(OperatorConfig) -> OperatorView``), the norm through depth (``drift_lab(DriftConfig) ->
NormGain``) and the kinds trained on one task at matched parameter counts (``compare_lab(ResidualCompareConfig)``,
a generator a worker steps, and ``compare_summary`` of its results). The maths (the operators,
``orthogonality_defect``, ``norm_and_gain``, the tasks and their training) lives in ``extras``, where the
claims measure it too.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from georesolver_core.device import one_cpu_thread
from georesolver_core.extras.orthogonal import (
    RESIDUAL_KINDS,
    cayley_apply,
    cayley_eigenvalues,
    cayley_matrix,
    ddl_apply,
    householder_apply,
    hybrid_apply,
)
from georesolver_core.extras.orthogonal_lab import NormGain, norm_and_gain, orthogonality_defect
from georesolver_core.extras.orthogonal_tasks import (
    RESIDUAL_TASKS,
    RunResult,
    TaskConfig,
    compare_steps,
    expected_params,
    summarise,
)
from georesolver_core.validate import check_positive_int, check_range

__all__ = [
    "RESIDUAL_KINDS",
    "RESIDUAL_TASKS",
    "ResidualCompareConfig",
    "CompareSummary",
    "DriftConfig",
    "KindSummary",
    "OperatorConfig",
    "OperatorView",
    "TaskConfig",
    "compare_lab",
    "drift_lab",
    "expected_params",
    "operator_lab",
    "compare_summary",
]

MAX_SEEDS = 64  # seeds of one comparison: each trains every kind once more


@dataclass(frozen=True)
class OperatorConfig:
    """The 3-D view's operators and vectors (hashable: a page caches ``operator_lab`` on it).

    Validated on construction: beta in [-1e6, 1e6], gamma in [0, 1].
    """

    beta: float  # Cayley magnitude: Q rotates by theta = 2 atan(beta / 2)
    gamma: float  # the hybrid's gate: G = (1 - gamma) Q + gamma H
    ddl_beta: float  # DDL's I - beta k k^T
    plane_tilt_deg: float  # tilt of Q's rotation plane out of the xy plane
    k_azimuth_deg: float  # direction of the reflection normal k
    x_azimuth_deg: float  # direction of the input x (elevation 20 deg)

    def __post_init__(self):
        check_range("beta", self.beta, -1e6, 1e6)
        check_range("gamma", self.gamma, 0.0, 1.0)


@dataclass(frozen=True)
class OperatorDefects:
    """||M^T M - I||_2 of each operator of the 3-D view (seed 003: 0 for Cayley and Householder)."""

    cayley: float  # Q
    householder: float  # H(k)
    hybrid: float  # G = (1 - gamma) Q + gamma H, at most 4 gamma (1 - gamma)
    ddl: float  # I - beta k k^T, |beta (beta - 2)|


@dataclass(frozen=True)
class OperatorView:
    x: np.ndarray  # (3,) the input vector
    images: dict[str, np.ndarray]  # operator name -> (3,) image of x
    u: np.ndarray  # (3,) generator vectors and reflection normal, for drawing
    v: np.ndarray
    k: np.ndarray
    eigenvalues: np.ndarray  # complex (3,) of Q, closed form
    eigenvalues_numeric: np.ndarray  # complex (3,) of Q by torch.linalg.eigvals
    defects: OperatorDefects
    theta: float  # rotation angle of Q in radians


def _unit_from_angles(azimuth_deg: float, elevation_deg: float) -> Tensor:
    a, e = np.radians(azimuth_deg), np.radians(elevation_deg)
    return torch.tensor([np.cos(e) * np.cos(a), np.cos(e) * np.sin(a), np.sin(e)], dtype=torch.float64)


@one_cpu_thread()
def operator_lab(config: OperatorConfig) -> OperatorView:
    """A vector x in R^3 under Q (generator u = e1, v in the plane tilted by plane_tilt), H(k), the hybrid and DDL."""
    beta, gamma, ddl_beta = config.beta, config.gamma, config.ddl_beta
    u = torch.tensor([1.0, 0.0, 0.0], dtype=torch.float64)
    v = _unit_from_angles(90.0, config.plane_tilt_deg)  # tilt 0: v = e2, the rotation plane is the xy plane
    k = _unit_from_angles(config.k_azimuth_deg, 0.0)
    x = _unit_from_angles(config.x_azimuth_deg, 20.0)
    eye = torch.eye(3, dtype=torch.float64)
    mats = {
        "Cayley Q": cayley_matrix(u, v, beta),
        "Householder H": householder_apply(eye, k).T,
        "hybrid G": hybrid_apply(eye, u, v, beta, k, gamma).T,
        "DDL": ddl_apply(eye, k, ddl_beta).T,
    }
    images = {
        "Cayley Q": cayley_apply(x, u, v, beta),
        "Householder H": householder_apply(x, k),
        "hybrid G": hybrid_apply(x, u, v, beta, k, gamma),
        "DDL": ddl_apply(x, k, ddl_beta),
    }
    ev = cayley_eigenvalues(u, v, beta).numpy()
    return OperatorView(
        x=x.numpy(),
        images={name: img.numpy() for name, img in images.items()},
        u=u.numpy(),
        v=v.numpy(),
        k=k.numpy(),
        eigenvalues=ev,
        eigenvalues_numeric=torch.linalg.eigvals(mats["Cayley Q"]).numpy(),
        defects=OperatorDefects(
            cayley=orthogonality_defect(mats["Cayley Q"]),
            householder=orthogonality_defect(mats["Householder H"]),
            hybrid=orthogonality_defect(mats["hybrid G"]),
            ddl=orthogonality_defect(mats["DDL"]),
        ),
        theta=float(np.angle(ev[0])),
    )


def _check_kinds(kinds) -> None:
    unknown = [k for k in kinds if k not in RESIDUAL_KINDS]
    if unknown or not kinds:
        raise ValueError(f"kinds must be a non-empty subset of {list(RESIDUAL_KINDS)} (got {list(kinds)})")


@dataclass(frozen=True)
class DriftConfig:
    """Freshly initialised residual layers of each kind, stacked to each depth (hashable: a page caches on it).

    Validated on construction: kinds a non-empty subset of RESIDUAL_KINDS, depths in [1, 4096], dim in
    [2, 4096], branch in [0, 10], batch in [1, 4096].
    """

    kinds: tuple[str, ...]  # RESIDUAL_KINDS keys
    depths: tuple[int, ...]  # the depths measured (the layers are shared: one stack of max(depths))
    dim: int = 16  # width d
    seed: int = 0  # torch's global seed before each kind's layers and inputs
    branch: float = 0.0  # scale of a random residual branch after every shortcut (0: the shortcut alone)
    batch: int = 64  # inputs averaged over

    def __post_init__(self):
        _check_kinds(self.kinds)
        if not self.depths:
            raise ValueError("depths must name at least one depth (got none)")
        for depth in self.depths:
            check_positive_int("depths", depth, 1, 4096)
        check_positive_int("dim", self.dim, 2, 4096)
        check_range("branch", self.branch, 0.0, 10.0)
        check_positive_int("batch", self.batch, 1, 4096)
        object.__setattr__(self, "kinds", tuple(self.kinds))
        object.__setattr__(self, "depths", tuple(self.depths))


def drift_lab(config: DriftConfig) -> NormGain:
    """Mean |x_L| / |x_0| and the shortcuts' own gain at each depth, for each kind (``norm_and_gain``)."""
    return norm_and_gain(list(config.kinds), config.depths, config.dim, config.seed, config.branch, config.batch)


@dataclass(frozen=True)
class ResidualCompareConfig:
    """Every kind trained on one task of ``TaskConfig`` at matched parameter counts, once per seed (seed 003's
    comparison; a worker rebuilds it from its fields, so its checks run there again).

    Validated on construction: kinds a non-empty subset of RESIDUAL_KINDS, the task by ``TaskConfig.check``,
    1 to MAX_SEEDS seeds each >= 0, eval_every in [1, 10^6].
    """

    kinds: tuple[str, ...]  # RESIDUAL_KINDS keys, trained in this order
    task: TaskConfig  # the task, width, parameter budget and optimiser steps every kind shares
    seeds: tuple[int, ...] = (0, 1, 2)  # torch seeds: one run of every kind per seed
    eval_every: int = 10  # optimiser steps between two evaluations (one progress report each)

    def __post_init__(self):
        object.__setattr__(self, "kinds", tuple(self.kinds))
        object.__setattr__(self, "seeds", tuple(self.seeds))
        _check_kinds(self.kinds)
        if not isinstance(self.task, TaskConfig):
            raise ValueError(f"task must be a TaskConfig (got {type(self.task).__name__})")
        self.task.check()
        if not 1 <= len(self.seeds) <= MAX_SEEDS:
            raise ValueError(f"seeds must name 1 to {MAX_SEEDS} seeds (got {len(self.seeds)})")
        for seed in self.seeds:
            check_positive_int("seeds", seed, 0, 2**63 - 1)
        check_positive_int("eval_every", self.eval_every, 1, 10**6)


def compare_lab(config: ResidualCompareConfig) -> Generator[tuple[float, str, list[dict]], None, list[RunResult]]:
    """The comparison of ``config``, one evaluation per ``next`` (``extras.orthogonal_tasks.compare_steps``):
    yields (fraction done, text, runs so far as dicts of kind, seed and history) and returns the RunResults.
    At module level, so that a worker imports it by name."""
    return compare_steps(list(config.kinds), config.task, config.seeds, config.eval_every)


@dataclass(frozen=True)
class KindSummary:
    """One kind's final held-out numbers over its seeds (mean and sample standard deviation)."""

    seeds: int  # runs averaged over
    cosine_mean: float  # cosine between output and target
    cosine_std: float
    gate_mean: float  # the hybrid's gate gamma (NaN for a kind without one)
    gate_std: float


@dataclass(frozen=True)
class CompareSummary:
    """The comparison's results summed up: the table the page shows and downloads, and the hybrid's row
    by name (the seed's negation claim is about its gate: gamma ~ 0.05 at cosine 0.96)."""

    table: pd.DataFrame  # one row per kind: "kind", then mean and std over seeds of every final metric
    hybrid: KindSummary | None  # None when the hybrid was not trained


def compare_summary(results: list[RunResult]) -> CompareSummary:
    """Mean and standard deviation over seeds of each kind's final loss, cosine and gate
    (``extras.orthogonal_tasks.summarise``), as a table and, for the hybrid, by name."""
    rows = summarise(results)
    hybrid = rows.get("hybrid")
    return CompareSummary(
        table=pd.DataFrame.from_dict(rows, orient="index").reset_index(names="kind"),
        hybrid=None
        if hybrid is None
        else KindSummary(
            seeds=int(hybrid["seeds"]),
            cosine_mean=hybrid["cosine mean"],
            cosine_std=hybrid["cosine std"],
            gate_mean=hybrid["gate mean"],
            gate_std=hybrid["gate std"],
        ),
    )
