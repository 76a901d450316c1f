"""The two-key landscape of Theorem 2 (section 2.6) and its analogues, Theorems 5.3 and 8.1.

Set-up (the paper's, made exact). Two keys k_1, k_2 a geodesic distance Delta apart (the angle
theta on the sphere); the query q(s) runs along the geodesic through them with signed arc length s
from k_1 (k_2 sits at s = Delta). The loss of retrieving key 1 is Lemma 2's

    L(q) = (1 - W_1(q))^2,

(Lemma 2 writes L'' = 2 (f - 1) f'' + 2 f'^2 with f = W_11). L* is its infimum over the whole
geodesic. The PL ratio at q is |grad L|^2 / (2 (L - L*)) with the Riemannian gradient of the
geometry, and the measured PL constant mu is its minimum over the basin |s| <= beta * Delta / 2
(the points of key 1's side within a fraction beta of the way to the midpoint, where W_1 = 1/2 and
the gradient vanishes, so no PL constant can cover it).

The kernels (IDA and softmax) and the loss itself live in ``landscape.loss``; ``TwoKeyLine`` holds
this set-up (geometry, eps, Delta, tau, c, the basin beta) once for both kernels.

Along a geodesic both losses depend on s only through d(q, k_1) = |s| and d(q, k_2) = |Delta - s|
(up to wrapping on the sphere), so the three geometries give the same one-dimensional problem;
what the geometry changes is the coordinates and the metric that the gradient is measured in.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

import numpy as np
import torch
from scipy.optimize import minimize_scalar

from georesolver_core.geometry import (
    GEOMETRIES,
    check_geometry,
    check_points,
    distance,
    expmap,
    geodesic,
    pairwise_sq_distance,
)
from georesolver_core.landscape.loss import LossSetup, check_kernel
from georesolver_core.validate import check_curvature, check_positive_int, check_range


def check_delta(delta: float, geometry: str) -> float:
    """Key separation: (0, 50] in the plane and the ball; the angle theta in (0, pi) on the sphere,
    where antipodal keys (theta = pi) have no unique geodesic between them."""
    try:
        value = float(delta)
    except (TypeError, ValueError):
        value = math.nan
    if GEOMETRIES[check_geometry(geometry)].is_compact:  # the sphere
        if not 0.0 < value < math.pi:
            raise ValueError(f"delta (the angle theta on the sphere) must be a number in (0, pi) (got {delta!r})")
        return value
    if not 0.0 < value <= 50.0:
        raise ValueError(f"delta must be a number in (0, 50] (got {delta!r})")
    return value


def two_key_keys(
    delta: float,
    *,
    geometry: str,
    c: float = 1.0,
    dim: int = 2,
    offset: float = 0.0,
    dtype: torch.dtype = torch.float64,
) -> torch.Tensor:
    """Two keys a geodesic distance delta apart, symmetric about a midpoint m. Returns (2, dim).

    Plane: m = offset e_2, keys m -/+ (delta/2) e_1. Ball: m = offset e_2 (|offset| < 1/sqrt c),
    keys exp_m(-/+ (delta/2) e_1 / lambda_m), i.e. delta/2 of arc length each way. Sphere: k_1 = e_1,
    k_2 = cos(theta) e_1 + sin(theta) e_2 with theta = delta (offset unused).
    """
    check_geometry(geometry)
    delta = check_delta(delta, geometry)
    dim = check_positive_int("dim", dim, 2, 64)
    e1 = torch.zeros(dim, dtype=dtype)
    e1[0] = 1.0
    e2 = torch.zeros(dim, dtype=dtype)
    e2[1] = 1.0
    geo = GEOMETRIES[geometry]
    if geo.is_compact:  # the sphere
        return torch.stack([e1, math.cos(delta) * e1 + math.sin(delta) * e2])  # (2, dim)
    if (rim := geo.rim(check_curvature(c))) is not None:  # the ball
        check_range("offset", offset, -0.95 * rim, 0.95 * rim)
        m = offset * e2
        lam = float(geo.norm(m.double(), e1.double(), c))  # |e1|_m, the conformal factor at m
        half = (delta / 2.0) / lam * e1  # tangent vector of Riemannian length delta/2
        keys = torch.stack([expmap(m, -half, geometry=geometry, c=c), expmap(m, half, geometry=geometry, c=c)])
        return check_points("keys (raise the precision or lower delta)", keys, geometry=geometry, c=c)
    check_range("offset", offset, -1e3, 1e3)
    m = offset * e2
    return torch.stack([m - delta / 2.0 * e1, m + delta / 2.0 * e1])


def geodesic_path(keys: torch.Tensor, s: torch.Tensor, *, geometry: str, c: float = 1.0) -> torch.Tensor:
    """Points at signed arc length s from keys[0] along the geodesic towards keys[1]. s (T,) -> (T, d)."""
    delta = float(distance(keys[0], keys[1], geometry=geometry, c=c))
    return geodesic(keys[0], keys[1], s.to(keys) / delta, geometry=geometry, c=c)


@dataclass(frozen=True)
class TwoKeyLine:
    """Theorem 2's set-up for both kernels: two keys Delta apart, the query on the geodesic through them."""

    geometry: str  # where the keys live
    eps: float  # IDA regulariser
    delta: float  # key separation Delta (the angle theta on the sphere)
    tau: float = 1.0  # softmax temperature
    c: float = 1.0  # ball curvature parameter, k = -c
    basin: float = 0.5  # beta: the basin is |s| <= beta * delta / 2
    dim: int = 2  # ambient size of the keys
    offset: float = 0.0  # midpoint of the keys along e_2 (the ball: away from the centre)

    def __post_init__(self):
        self.loss("ida")  # validates geometry, eps, tau and c
        object.__setattr__(self, "delta", check_delta(self.delta, self.geometry))
        object.__setattr__(self, "basin", check_range("basin", self.basin, 0.01, 0.99))

    def loss(self, kernel: str) -> LossSetup:
        """The loss of retrieving key 1 with ``kernel`` on this line."""
        return LossSetup(kernel=kernel, eps=self.eps, geometry=self.geometry, c=self.c, tau=self.tau)

    def keys(self, dtype: torch.dtype = torch.float64) -> torch.Tensor:
        """``two_key_keys`` of this line. (2, dim)."""
        return two_key_keys(
            self.delta, geometry=self.geometry, c=self.c, dim=self.dim, offset=self.offset, dtype=dtype
        )


def ida_line_minimiser(delta: float, eps: float) -> float:
    """Arc length s* of the minimiser of the IDA two-key loss on a line (plane or ball).

    1 - W_1 = a/(a+b) with a = s^2 + eps, b = (s - Delta)^2 + eps is increasing in a/b, whose
    stationary points solve s^2 - Delta s - eps = 0; the root on key 1's side is
    s* = (Delta - sqrt(Delta^2 + 4 eps)) / 2 ~ -eps/Delta, just *behind* the key, not on it.
    """
    return 0.5 * (delta - math.sqrt(delta * delta + 4.0 * eps))


def loss_star(keys: torch.Tensor, setup: LossSetup) -> tuple[float, float | None]:
    """(L*, s*): the infimum of the two-key loss along the whole geodesic and where it is attained.

    Plane and ball: IDA from ``ida_line_minimiser``; softmax has L* = 0 reached only as s -> -inf
    (the logit gap (Delta^2 - 2 s Delta) / (2 tau) grows without bound), s* = None. Sphere (a
    closed great circle): grid of 4096 points, then Brent's method around the best one (float64).
    """
    keys = keys.to(torch.float64)
    geo = dict(geometry=setup.geometry, c=setup.c)
    delta = float(torch.sqrt(pairwise_sq_distance(keys[:1], keys[1:], **geo, validate=False))[0, 0])

    def f(s: float) -> float:
        q = geodesic_path(keys, torch.tensor([s], dtype=torch.float64), **geo)
        return float(setup.loss(q, keys)[0])

    if not GEOMETRIES[setup.geometry].is_compact:  # a line, not a great circle
        if setup.kernel == "softmax":
            return 0.0, None
        s_star = ida_line_minimiser(delta, setup.eps)
        return f(s_star), s_star
    s = torch.linspace(-math.pi, math.pi, 4097, dtype=torch.float64)[:-1]
    q = geodesic_path(keys, s, **geo)
    values = setup.loss(q, keys)
    i = int(torch.argmin(values))
    h = float(s[1] - s[0])
    best = minimize_scalar(
        f, bounds=(float(s[i]) - 2 * h, float(s[i]) + 2 * h), method="bounded", options={"xatol": 1e-12}
    )
    s_star = float(best.x) if best.fun <= float(values[i]) else float(s[i])
    s_star = (s_star + math.pi) % (2 * math.pi) - math.pi
    return min(float(best.fun), float(values[i])), s_star


@dataclass
class PLProfile:
    """The two-key landscape along the geodesic and its PL constant over the basin."""

    kernel: str
    line: TwoKeyLine
    s: np.ndarray  # (T,) arc length along the path, key 1 at 0 and key 2 at delta
    loss: np.ndarray  # (T,) L(q(s))
    grad_sq: np.ndarray  # (T,) Riemannian |grad L|^2
    ratio: np.ndarray  # (T,) |grad L|^2 / (2 (L - L*)); NaN where L - L* is below the precision
    s_basin: np.ndarray  # (B,) the basin grid
    ratio_basin: np.ndarray  # (B,)
    mu: float  # min of the ratio over the basin (grid, then Brent between grid points): the PL constant
    s_mu: float  # where the minimum sits
    loss_star: float
    s_star: float | None  # None when L* is only approached at the end of the geodesic
    points: np.ndarray  # (T, d) the path in the geometry's coordinates
    keys: np.ndarray  # (2, d)

    @property
    def delta(self) -> float:
        return self.line.delta

    def to_dict(self) -> dict:
        """JSON-ready: the line's fields beside the arrays (NaN ratios as None)."""
        fields = {k: v for k, v in self.__dict__.items() if k != "line"}
        out = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in fields.items()} | asdict(self.line)
        for k in ("ratio", "ratio_basin"):
            out[k] = [None if not math.isfinite(x) else x for x in out[k]]
        return out


def _pl_ratio(loss: torch.Tensor, grad_sq: torch.Tensor, l_star: float) -> torch.Tensor:
    gap = loss.to(torch.float64) - l_star
    # L - L* keeps only the digits of L that L* does not cancel: a gap below sqrt(machine eps) * L*
    # has fewer than half the dtype's digits left (near the minimiser the ratio is 0/0), so those
    # points are left out rather than trusted.
    floor = math.sqrt(torch.finfo(loss.dtype).eps) * max(abs(l_star), float(torch.finfo(torch.float64).tiny))
    ratio = grad_sq.to(torch.float64) / (2.0 * gap)
    return torch.where(gap > floor, ratio, torch.full_like(ratio, math.nan))


def pl_profile(
    kernel: str,
    line: TwoKeyLine,
    *,
    n_points: int = 801,
    n_basin: int = 2001,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str = "cpu",
) -> PLProfile:
    """L, |grad L|^2 and the PL ratio along the two-key geodesic; mu = min ratio over the basin.

    Theorem 2 (section 2.6) in the plane, Theorem 5.3 in the Poincaré ball (Delta = Delta_H),
    Theorem 8.1 on the sphere (Delta = theta). The path shown runs over s in [-Delta/2, 3 Delta/2].
    """
    setup = line.loss(check_kernel(kernel))
    n_points = check_positive_int("n_points", n_points, 11, 100_001)
    n_basin = check_positive_int("n_basin", n_basin, 11, 100_001)
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"dtype must be torch.float32 or torch.float64 (got {dtype})")
    keys = line.keys(dtype).to(device)
    l_star, s_star = loss_star(keys, setup)
    delta, geo = line.delta, dict(geometry=line.geometry, c=line.c)

    s = torch.linspace(-0.5 * delta, 1.5 * delta, n_points, dtype=torch.float64)
    path = geodesic_path(keys, s, **geo)  # (T, d)
    loss, grad_sq = setup.loss_and_grad_sq(path, keys)
    ratio = _pl_ratio(loss, grad_sq, l_star)

    half = line.basin * delta / 2
    sb = torch.linspace(-half, half, n_basin, dtype=torch.float64)
    rb = _pl_ratio(*setup.loss_and_grad_sq(geodesic_path(keys, sb, **geo), keys), l_star)
    if not bool(torch.isfinite(rb).any()):
        raise ValueError(
            f"the PL ratio is unresolved everywhere in the basin at {str(dtype).replace('torch.', '')} "
            f"(eps={line.eps:g}, delta={delta:g}): raise the precision to float64"
        )
    i = int(torch.argmin(torch.nan_to_num(rb, nan=math.inf)))
    mu, s_mu = float(rb[i]), float(sb[i])

    def ratio_at(x: float) -> float:
        q = geodesic_path(keys, torch.tensor([x], dtype=torch.float64), **geo).to(dtype)
        value = float(_pl_ratio(*setup.loss_and_grad_sq(q, keys), l_star)[0])
        return value if math.isfinite(value) else 1e300  # unresolved: Brent needs a finite value

    # The infimum often sits between grid points, next to the minimiser; Brent's method between the
    # neighbours of the best grid point finds it.
    lo, hi = float(sb[max(i - 1, 0)]), float(sb[min(i + 1, n_basin - 1)])
    best = minimize_scalar(ratio_at, bounds=(lo, hi), method="bounded", options={"xatol": 1e-12 * delta})
    if math.isfinite(best.fun) and best.fun < mu:
        mu, s_mu = float(best.fun), float(best.x)
    return PLProfile(
        kernel=kernel,
        line=line,
        s=s.numpy(),
        loss=loss.cpu().double().numpy(),
        grad_sq=grad_sq.cpu().double().numpy(),
        ratio=ratio.cpu().numpy(),
        s_basin=sb.numpy(),
        ratio_basin=rb.cpu().numpy(),
        mu=mu,
        s_mu=s_mu,
        loss_star=l_star,
        s_star=s_star,
        points=path.detach().cpu().double().numpy(),
        keys=keys.cpu().double().numpy(),
    )


SWEPT = ("delta", "eps", "tau")  # the fields of TwoKeyLine that ``mu_sweep`` can vary


def mu_sweep(
    kernel: str,
    geometry: str,
    *,
    vary: str,
    values,
    n_basin: int = 2001,
    dtype: torch.dtype = torch.float64,
    **line,
) -> np.ndarray:
    """mu over a sweep of ``vary`` ("eps", "delta" or "tau"), the others held fixed. Returns (len(values),).

    ``line``: the other fields of ``TwoKeyLine`` (eps = 1e-3 and delta = 1 unless given).
    """
    base = TwoKeyLine(geometry, **({"eps": 1e-3, "delta": 1.0} | line))
    return mu_over(kernel, base, vary, values, n_basin=n_basin, dtype=dtype)


def mu_over(
    kernel: str, line: TwoKeyLine, vary: str, values, *, n_basin: int = 2001, dtype: torch.dtype = torch.float64
) -> np.ndarray:
    """mu on ``line`` with its field ``vary`` (one of SWEPT) set to each of ``values`` in turn. (len(values),)."""
    if vary not in SWEPT:
        raise ValueError(f"vary must be one of {list(SWEPT)} (got {vary!r})")
    lines = [replace(line, **{vary: float(v)}) for v in values]
    return np.asarray([pl_profile(kernel, x, n_points=11, n_basin=n_basin, dtype=dtype).mu for x in lines])


__all__ = [
    "PLProfile",
    "TwoKeyLine",
    "geodesic_path",
    "ida_line_minimiser",
    "loss_star",
    "mu_over",
    "mu_sweep",
    "pl_profile",
    "two_key_keys",
]
