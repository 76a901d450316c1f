"""The Landscapes page's lab: the loss L = (1 - W_target)^2 of one query retrieving one key, four ways.

- ``two_key_lab``: Theorem 2 / 5.3 / 8.1 on the geodesic through two keys Delta apart. The PL ratio
  |grad L|^2 / (2 (L - L*)) is taken with the Riemannian gradient; its minimum over the basin
  |s| <= beta Delta / 2 is the PL constant mu, beside the paper's Theta(eps^2 / Delta^4) (IDA) and
  Theta(exp(-Delta^2 / tau) eps^2 / Delta^2) (softmax). On the sphere Delta is the angle theta <= pi:
  a larger one is shown at ``SPHERE_FALLBACK_DELTA`` and said so; a precision the line cannot be
  measured in falls back to float64, with the reason kept (``TwoKeyLab.error``);
- ``pl_sweep_lab``: mu of both kernels against eps and against Delta, beside the paper's rates;
- ``descent_lab``: n random keys in a chart patch, L on a grid and Riemannian descent from a ring of
  starts (``landscape.study.run_descent``);
- ``hessian_lab``: Lemma 2's Riemannian Hessian at the equidistant start (every weight 1/n), its
  spread max |lambda| / min non-zero |lambda| for n = 2, 4, ... up to n_max;
- ``slice_model_config`` / ``train_slice_model`` / ``slice_lab(trained, SliceConfig)``: a small classifier with prototype keys
  on the manifold, and L over a slice theta(a, b) = exp_theta(a u_1 + b u_2) of two filter-normalised
  directions (Li et al.).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from georesolver_core.device import DTYPES
from georesolver_core.geometry import GEOMETRIES, check_geometry
from georesolver_core.landscape.hessian import HessianSpectrum
from georesolver_core.landscape.model_slice import (
    ModelSlice,
    SliceModelConfig,
    TrainedModel,
    model_slice,
    train_model,
)
from georesolver_core.landscape.study import (
    DescentSetup,
    DescentStudy,
    PLSweeps,
    TwoKeyStudy,
    hessian_study,
    hessian_table,
    pl_sweeps,
    run_descent,
    two_key_study,
)
from georesolver_core.validate import check_positive_int, check_range

SPHERE_FALLBACK_DELTA = 3.1  # theta shown when the one asked for on the sphere exceeds pi


def _check_dtype(dtype: str) -> None:
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {sorted(DTYPES)} (got {dtype!r})")


# --- 1. The two-key line ------------------------------------------------------------------------------


@dataclass(frozen=True)
class TwoKeyConfig:
    """The two-key line of Theorem 2 and the precision it is measured in (hashable: a page caches on it).

    Validated where the line is built (``landscape.two_key.TwoKeyLine``), except the geometry and the
    dtype, checked here; a Delta above pi on the sphere is not an error here (see ``delta_used``).
    """

    geometry: str  # a GEOMETRIES key
    eps: float  # IDA regulariser, > 0
    delta: float  # key separation Delta (the angle theta on the sphere)
    tau: float = 1.0  # softmax temperature
    c: float = 1.0  # ball curvature parameter, k = -c
    basin: float = 0.5  # beta: the basin is |s| <= beta Delta / 2, in [0.01, 0.99]
    dtype: str = "float64"  # a device.DTYPES name: the precision of the profiles
    device: str = "cpu"  # where the profiles are computed

    def __post_init__(self):
        check_geometry(self.geometry)
        _check_dtype(self.dtype)

    @property
    def delta_clamped(self) -> bool:
        """Whether Delta is an angle above pi on the sphere (shown at SPHERE_FALLBACK_DELTA instead)."""
        return GEOMETRIES[self.geometry].is_compact and self.delta > math.pi

    @property
    def delta_used(self) -> float:
        """Delta as measured: SPHERE_FALLBACK_DELTA when ``delta_clamped``, else the one asked for."""
        return SPHERE_FALLBACK_DELTA if self.delta_clamped else self.delta

    def line(self) -> dict:
        """The fields of ``TwoKeyLine`` after the geometry (eps, delta, tau, c, basin), Delta as used."""
        return dict(eps=self.eps, delta=self.delta_used, tau=self.tau, c=self.c, basin=self.basin)


@dataclass(frozen=True)
class TwoKeyLab:
    """Both kernels' PL profiles on the line, and what was changed to measure them."""

    study: TwoKeyStudy  # mu of IDA and softmax, their ratio, the paper's shapes, the exact curvature
    delta: float  # Delta measured (``TwoKeyConfig.delta_used``, or at most SPHERE_FALLBACK_DELTA after an error)
    delta_clamped: bool  # the Delta asked for exceeds pi on the sphere
    dtype: str  # the precision measured in: the config's, or "float64" after an error
    error: str | None  # why the config's precision failed (None: it did not)


def two_key_lab(config: TwoKeyConfig) -> TwoKeyLab:
    """``landscape.study.two_key_study`` on the config's line; if it refuses the line (ValueError: the
    precision cannot resolve it), the same line in float64 with Delta at most SPHERE_FALLBACK_DELTA."""
    line = config.line()
    try:
        study = two_key_study(config.geometry, dtype=DTYPES[config.dtype], device=config.device, **line)
        return TwoKeyLab(
            study=study, delta=line["delta"], delta_clamped=config.delta_clamped, dtype=config.dtype, error=None
        )
    except ValueError as err:
        delta = min(line["delta"], SPHERE_FALLBACK_DELTA)
        study = two_key_study(
            config.geometry, dtype=DTYPES["float64"], device=config.device, **(line | {"delta": delta})
        )
        return TwoKeyLab(
            study=study, delta=delta, delta_clamped=config.delta_clamped, dtype="float64", error=str(err)
        )


def pl_sweep_lab(config: TwoKeyConfig) -> PLSweeps:
    """mu of both kernels against eps (at the line's Delta) and against Delta (at its eps), float64
    (``landscape.study.pl_sweeps``); the config's dtype and device are not used."""
    return pl_sweeps(config.geometry, **config.line())


# --- 2. The 2-D patch and descent -----------------------------------------------------------------------


@dataclass(frozen=True)
class DescentConfig:
    """n random keys in a chart patch, the loss of retrieving key 0, descent from a ring of starts.

    The setup is validated by ``landscape.study.DescentSetup`` where the study runs; the dtype here.
    """

    setup: DescentSetup  # geometry, keys, eps, tau, c, grid resolution, starts, steps, lr, seed
    dtype: str = "float64"  # a device.DTYPES name
    device: str = "cpu"

    def __post_init__(self):
        check_geometry(self.setup.geometry)
        _check_dtype(self.dtype)


def descent_lab(config: DescentConfig) -> DescentStudy:
    """Both kernels' grids, descent paths and outcomes on the same keys and starts (``run_descent``)."""
    return run_descent(config.setup, dtype=DTYPES[config.dtype], device=config.device)


# --- 3. Lemma 2's Hessian ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HessianConfig:
    """n keys a distance rho from the query in orthogonal directions (every weight 1/n)."""

    geometry: str  # a GEOMETRIES key
    eps: float  # IDA regulariser
    rho: float  # distance of every key from the query
    c: float = 1.0  # ball curvature parameter, k = -c
    n_max: int = 64  # largest n of the sweep, >= 2

    def __post_init__(self):
        check_geometry(self.geometry)


@dataclass(frozen=True)
class HessianLab:
    """Lemma 2's spectra for both kernels, as a table and as a JSON-ready document."""

    spectra: dict[str, list[HessianSpectrum]]  # kernel -> one spectrum per n
    table: list[dict]  # one row per kernel and n: max |lambda|, spread, negative and flat directions

    def to_dict(self) -> dict:
        """kernel -> [{"n", "eigenvalues"}] for each n."""
        return {k: [{"n": h.n, "eigenvalues": h.eigenvalues} for h in hs] for k, hs in self.spectra.items()}


def hessian_lab(config: HessianConfig) -> HessianLab:
    """``landscape.study.hessian_study`` at the config, with its table."""
    spectra = hessian_study(config.geometry, eps=config.eps, rho=config.rho, c=config.c, n_max=config.n_max)
    return HessianLab(spectra=spectra, table=hessian_table(spectra))


# --- 4. A trained model's slice ---------------------------------------------------------------------------


def slice_model_config(geometry: str, kernel: str, eps: float, steps: int, seed: int = 0) -> SliceModelConfig:
    """The page's classifier: 2-D embeddings in the geometry (on the sphere S^2 in R^3, the extra ambient
    dimension), 8 prototype keys, the other fields at SliceModelConfig's defaults."""
    check_geometry(geometry)
    dim = GEOMETRIES[geometry].ambient_dim(2)
    return SliceModelConfig(geometry=geometry, kernel=kernel, eps=eps, steps=steps, seed=seed, dim=dim)


def train_slice_model(
    config: SliceModelConfig, callback: Callable[[int, float], None] | None = None, device: str = "cpu"
) -> TrainedModel:
    """Full-batch RiemannianAdam on the blobs task (``landscape.model_slice.train_model``);
    ``callback(step, loss)`` after every step."""
    return train_model(config, callback=callback, device=device)


@dataclass(frozen=True)
class SliceLab:
    """The loss over a slice of a trained model, and the slice as a JSON-ready document."""

    slice: ModelSlice  # a, b, loss and accuracy over the slice, how far it strayed off the manifold
    accuracy: float  # the trained model's training accuracy
    history: list[float]  # its training loss per step

    def to_dict(self) -> dict:
        return {
            "a": self.slice.a,
            "b": self.slice.b,
            "loss": self.slice.loss,
            "accuracy": self.slice.accuracy,
            "history": self.history,
        }


@dataclass(frozen=True)
class SliceConfig:
    """The slice theta(a, b) = exp_theta(a u_1 + b u_2), a, b in [-span, span] (hashable: a page caches on it).

    Validated on construction: span in [1e-3, 10], resolution in [3, 201] grid points per axis.
    """

    span: float = 1.0  # half-width of the slice along each direction
    resolution: int = 21  # grid points per axis: resolution^2 loss evaluations
    seed: int = 0  # the generator of the two filter-normalised directions (seed, seed + 1)

    def __post_init__(self):
        check_range("span", self.span, 1e-3, 10.0)
        check_positive_int("resolution", self.resolution, 3, 201)


def slice_lab(trained: TrainedModel, config: SliceConfig) -> SliceLab:
    """L(theta(a, b)) for a, b in [-span, span] on a resolution x resolution grid (``model_slice``)."""
    sl = model_slice(trained, span=config.span, resolution=config.resolution, seed=config.seed)
    return SliceLab(slice=sl, accuracy=float(trained.accuracy), history=list(trained.history))
