"""Hyperbolic Curvature Compression (HCC, module M5, paper section 6): polar key quantisation.

A key is split as k = r u, r = ||k||, u = k / r on the unit sphere, and both parts are rounded
(Theorem 6.1):

    u_hat = round((u + 1) / 2 (2^b - 1)) / (2^b - 1) * 2 - 1      (each coordinate, b bits)
    r_hat = round(r 2^{b_r}) / 2^{b_r}                              (b_r bits)
    k_hat = r_hat u_hat

Two storage layouts of the direction, because the paper's proof and its bit count disagree:

- ``direction="all"``: every one of the d coordinates is rounded, exactly the quantiser the proof of
  Theorem 6.1 analyses; d b + b_r bits per key.
- ``direction="implicit"`` (default): the bit count of Theorem 6.2, (d - 1) b + b_r, stores d - 1
  rounded coordinates and recovers the last from ||u|| = 1. Its magnitude follows, but not its
  sign: one more bit per key is needed, (d - 1) b + b_r + 1 in all. If the rounded coordinates
  already have norm > 1, the last is 0 and the rest are rescaled to unit norm.

Radius modes. ``radius="euclidean"`` is the paper's rounding of r in [0, 1). The rounding has
2^{b_r} + 1 levels there (r >= 1 - 2^{-b_r - 1} rounds to 1), one more than b_r bits hold; the
top code is clamped to 2^{b_r} - 1, which keeps |r - r_hat| < 2^{-b_r}. Keys of norm >= 1 are
divided by one float32 scale max(1, max ||k||), stored and counted. ``radius="hyperbolic"``
quantises the distance to the origin rho = (2 / sqrt c) artanh(sqrt c r) on the uniform grid
rho_max j / (2^{b_r} - 1) (rho_max stored in float32) and puts the reconstruction back at
that distance with a unit direction: Euclidean norms crowd near the rim, distances do not.

Zero vectors have no direction: they (and keys of norm below 1e-30) get radius code 0, so they are
reconstructed exactly as 0; their direction codes are those of u = 0.
"""

from __future__ import annotations

import functools
import math

import torch

from georesolver_core.compression.compressed import CompressedKeys, check_fields, check_side, dtype_name
from georesolver_core.compression.packing import check_bits, pack_streams, packed_nbytes, unpack_streams
from georesolver_core.device import one_cpu_thread
from georesolver_core.validate import check_curvature, check_finite, check_in_ball

RADII = ("euclidean", "hyperbolic")
DIRECTIONS = ("implicit", "all")
MIN_NORM = 1e-30  # keys of smaller norm are zero vectors: radius code 0, reconstructed as exactly 0
CHUNK = 4096  # keys per slice: the float temporaries of a slice (1 MB at d = 64) stay in cache


def check_keys(name: str, keys) -> torch.Tensor:
    """A non-empty floating tensor (..., n, d) of finite keys."""
    check_finite(name, keys)
    if keys.dim() < 1 or keys.numel() == 0:
        raise ValueError(f"{name} must be a non-empty tensor of shape (..., n, d) (got shape {tuple(keys.shape)})")
    return keys


def _check_choice(name: str, value, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {list(allowed)} (got {value!r})")
    return value


def _work_dtype(keys: torch.Tensor) -> torch.dtype:
    return torch.float64 if keys.dtype == torch.float64 else torch.float32


def _code_dtype(bits: int) -> torch.dtype:
    return torch.uint8 if bits <= 8 else torch.int32


def _layout(n: int, d: int, params: dict) -> list[tuple[int, int]]:
    """(count, bits) of each packed stream: direction codes, radius codes, and signs (implicit)."""
    nd = d - 1 if params["direction"] == "implicit" else d
    layout = [(n * nd, params["bits_dir"]), (n, params["bits_radius"])]
    if params["direction"] == "implicit":
        layout.append((n, 1))
    return layout


def hcc_nbytes(n: int, d: int, params: dict, shape=None) -> int:
    """Storage of n keys of dimension d under these parameters: the packed streams + one float32 radius scale."""
    return sum(packed_nbytes(count, bits) for count, bits in _layout(n, d, params)) + 4


def _row_norms(k: torch.Tensor) -> torch.Tensor:
    """|k_i| of finite rows (m, d) -> (m, 1). Where the sum of squares overflows (float32 norms from
    about 1e19) the row is measured in units of its largest entry, |k| = a |k / a|; a norm that is
    itself beyond the dtype's range is a ValueError."""
    r = torch.linalg.vector_norm(k, dim=-1, keepdim=True)  # (m, 1)
    over = ~torch.isfinite(r).squeeze(-1)  # (m,)
    if bool(over.any()):
        a = k[over].abs().amax(dim=-1, keepdim=True)  # (o, 1), > 0 for these rows
        r[over] = a * torch.linalg.vector_norm(k[over] / a, dim=-1, keepdim=True)
        if not bool(torch.isfinite(r).all()):
            raise ValueError(
                f"keys must have norms below {torch.finfo(k.dtype).max:.3g} in {k.dtype} (got a larger one); "
                "rescale them first"
            )
    return r


def _encode(keys: torch.Tensor, params: dict) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Packed payload and side data of keys (..., n, d) (validated by the caller)."""
    d = keys.shape[-1]
    flat = keys.reshape(-1, d)  # (N, d)
    n = flat.shape[0]
    b, br, implicit = params["bits_dir"], params["bits_radius"], params["direction"] == "implicit"
    nd = d - 1 if implicit else d
    levels = 2**b - 1
    work = _work_dtype(keys)
    dir_codes = torch.empty(n, nd, dtype=_code_dtype(b))
    norms = torch.empty(n, dtype=torch.float64)
    signs = torch.empty(n, dtype=torch.uint8)
    half = torch.tensor(levels / 2.0, dtype=work)
    for s in range(0, n, CHUNK):
        k = flat[s : s + CHUNK].to(work)  # (m, d)
        r = _row_norms(k)  # (m, 1)
        norms[s : s + CHUNK] = r.squeeze(-1)
        signs[s : s + CHUNK] = k[:, -1] < 0
        # (u + 1)/2 L = L/2 + k (L/2) / r in one pass. |k_i| <= r keeps codes in [0, L] without a clamp;
        # the floor MIN_NORM keeps (L/2)/r finite in float32 (keys below it are stored as zero vectors).
        dir_codes[s : s + CHUNK] = torch.addcmul(half, k[:, :nd], half / r.clamp_min(MIN_NORM)).round_()
    top = 2**br - 1
    if params["radius"] == "euclidean":
        if float(norms.max()) > torch.finfo(torch.float32).max:  # the stored radius scale is float32
            raise ValueError(
                f"keys must have norms below {torch.finfo(torch.float32).max:.3g} to be compressed "
                f"(got a norm of {float(norms.max()):.3g}); rescale them first"
            )
        scale = torch.tensor([max(1.0, float(norms.max()))], dtype=torch.float32)
        # The paper's r_hat = round(r 2^br) / 2^br; the code 2^br (r near 1) is clamped to fit b_r bits.
        r_codes = (norms / float(scale)).mul_(2**br).round_().clamp_(0, top)
    else:
        sc = math.sqrt(params["c"])
        # float64 keeps rho exact up to norms 1 - 1e-16; the keys were checked to lie inside the ball
        rho = (2.0 / sc) * torch.atanh((sc * norms).clamp_max(1.0 - 1e-16))
        rho_max = float(rho.max())
        scale = torch.tensor([rho_max if rho_max > 0 else 1.0], dtype=torch.float32)
        r_codes = (rho / float(scale)).mul_(top).round_().clamp_(0, top)
    r_codes[norms < MIN_NORM] = 0  # zero vectors (and norms below 1e-30): reconstructed exactly as 0
    streams = [(dir_codes, b), (r_codes.to(_code_dtype(br)), br)]
    if implicit:
        streams.append((signs, 1))
    return pack_streams(streams), {"radius_scale": scale}


def hcc_polar(ck: CompressedKeys) -> tuple[torch.Tensor, torch.Tensor]:
    """The decoded polar parts: r_hat (N,) float64 and u_hat (N, d) in the work dtype (N = number of keys).

    u_hat is the paper's rounded direction (not renormalised) for ``direction="all"`` in Euclidean
    radius mode, and a unit vector otherwise. k_hat = r_hat u_hat.
    """
    p, n, d = ck.params, ck.n_keys, ck.dim
    implicit = p["direction"] == "implicit"
    nd = d - 1 if implicit else d
    streams = unpack_streams(ck.payload, _layout(n, d, p))
    work = torch.float64 if ck.dtype == "float64" else torch.float32
    levels = 2 ** p["bits_dir"] - 1
    u = streams[0].view(n, nd).to(work).mul_(2.0 / levels).sub_(1.0)  # (N, nd) the paper's u_hat
    if implicit:
        sq = (u * u).sum(-1)  # (N,)
        sign = 1.0 - 2.0 * streams[2].to(work)  # (N,) +1 / -1
        last = torch.sqrt((1.0 - sq).clamp_min(0.0)) * sign
        # Rounded coordinates of norm > 1 leave no room for the last one: rescale them onto the sphere.
        u = u / torch.where(sq > 1.0, sq.sqrt(), torch.ones_like(sq)).unsqueeze(-1)
        u = torch.cat([u, last.unsqueeze(-1)], dim=-1)  # (N, d)
    if p["radius"] == "hyperbolic" and not implicit:
        u = u / torch.linalg.vector_norm(u, dim=-1, keepdim=True)  # never 0: no grid level is 0
    scale = float(ck.side["radius_scale"][0])
    codes = streams[1].to(torch.float64)  # (N,)
    if p["radius"] == "euclidean":
        r_hat = codes / 2 ** p["bits_radius"] * scale
    else:
        sc = math.sqrt(p["c"])
        r_hat = torch.tanh(sc * codes / (2 ** p["bits_radius"] - 1) * scale / 2.0) / sc
    return r_hat, u


def _decode(ck: CompressedKeys) -> torch.Tensor:
    r_hat, u = hcc_polar(ck)
    return (r_hat.to(u.dtype).unsqueeze(-1) * u).reshape(ck.shape).to(ck.torch_dtype())


def hcc_params(
    bits_dir, bits_radius, radius: str = "euclidean", direction: str = "implicit", c: float = 1.0
) -> dict:
    """Checked parameters of HCC, as stored in ``CompressedKeys.params`` (defaults: those of ``hcc_quantize``)."""
    return {
        "bits_dir": check_bits("bits_dir", bits_dir),
        "bits_radius": check_bits("bits_radius", bits_radius),
        "radius": _check_choice("radius", radius, RADII),
        "direction": _check_choice("direction", direction, DIRECTIONS),
        "c": check_curvature(c),
    }


def check_hcc_state(params: dict, side: dict, shape: tuple[int, ...], rotated: bool = False) -> None:
    """A stored HCC state: its parameters as ``hcc_params`` accepts them, a finite positive radius scale
    (and, rotated, the seed in both places)."""
    names = {"bits_dir", "bits_radius", "radius", "direction", "c"}
    check_fields("params", params, names | ({"seed"} if rotated else set()))
    if hcc_params(**{k: params[k] for k in names}) != {k: params[k] for k in names}:
        raise ValueError(f"state params must be as hcc_params returns them (got {params})")
    spec = {"radius_scale": (torch.float32, 1)}
    if rotated:
        seed = params["seed"]
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
            raise ValueError(f"state params seed must be an integer in [0, 2^63) (got {seed!r})")
        spec["seed"] = (torch.int64, 1)
    check_side(side, spec)
    if not float(side["radius_scale"][0]) > 0:
        raise ValueError(f"state side radius_scale must be > 0 (got {float(side['radius_scale'][0])})")
    if rotated and int(side["seed"][0]) != params["seed"]:
        raise ValueError("state side seed and params seed differ: the file is corrupt")


def _encode_1t(keys: torch.Tensor, params: dict):
    # Slices of 1 MB: extra threads only add synchronisation (measured ~10x slower with 2 on a busy 2-core CPU).
    with one_cpu_thread(keys.device):
        return _encode(keys, params)


def _check_keys_for(keys: torch.Tensor, params: dict) -> None:
    """Finite float keys, inside the Poincaré ball when the radius is measured hyperbolically."""
    check_keys("keys", keys)
    if params["radius"] == "hyperbolic":
        check_in_ball("keys", keys, params["c"])


def hcc_quantize(
    keys: torch.Tensor,
    *,
    bits_dir: int,
    bits_radius: int,
    radius: str = "euclidean",
    direction: str = "implicit",
    c: float = 1.0,
) -> CompressedKeys:
    """HCC (section 6): keys (..., n, d) -> ``CompressedKeys`` with real packed storage.

    bits_dir = b bits per direction coordinate, bits_radius = b_r bits for the radius (1..16 each).
    ``radius="hyperbolic"`` needs keys inside the Poincaré ball of curvature -c (norm < 1/sqrt c).
    See the module docstring for the two direction layouts and what is stored.
    """
    params = hcc_params(bits_dir, bits_radius, radius, direction, c)
    _check_keys_for(keys, params)
    payload, side = _encode_1t(keys, params)
    return CompressedKeys("hcc", tuple(keys.shape), dtype_name(keys.dtype), params, payload, side)


@functools.lru_cache(maxsize=16)
def _rotation64(d: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    q, r = torch.linalg.qr(torch.randn(d, d, generator=g, dtype=torch.float64))
    return q * torch.sign(torch.diagonal(r))  # (d, d)


def random_rotation(d: int, seed: int, dtype=torch.float64) -> torch.Tensor:
    """A fixed random orthogonal (d, d) matrix drawn from ``seed`` (Haar: QR of a Gaussian, signs fixed)."""
    return _rotation64(int(d), int(seed)).to(dtype, copy=True)


def hcc_rotated_quantize(keys: torch.Tensor, *, seed: int = 0, **options) -> CompressedKeys:
    """HCC after a fixed random rotation k -> Q k (the preconditioning of PolarQuant / TurboQuant).

    ``options`` are the keywords of ``hcc_quantize`` (bits_dir, bits_radius, radius, direction, c).
    Q is regenerated from the stored 8-byte seed; rotation keeps norms, so radius modes are unchanged.
    """
    params = hcc_params(**options)
    _check_keys_for(keys, params)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise ValueError(f"seed must be an integer in [0, 2^63) (got {seed!r})")
    rot = random_rotation(keys.shape[-1], seed, dtype=_work_dtype(keys))  # (d, d)
    payload, side = _encode_1t(keys.to(rot.dtype) @ rot.T, params)  # (..., n, d) rotated
    side["seed"] = torch.tensor([seed], dtype=torch.int64)
    return CompressedKeys(
        "hcc-rotated", tuple(keys.shape), dtype_name(keys.dtype), {**params, "seed": seed}, payload, side
    )


def _decode_rotated(ck: CompressedKeys) -> torch.Tensor:
    r_hat, u = hcc_polar(ck)
    rot = random_rotation(ck.dim, int(ck.side["seed"][0]), dtype=u.dtype)  # (d, d)
    k_rot = r_hat.to(u.dtype).unsqueeze(-1) * u  # (N, d) in the rotated frame
    return (k_rot @ rot).reshape(ck.shape).to(ck.torch_dtype())


def hcc_rotated_nbytes(n: int, d: int, params: dict, shape=None) -> int:
    return hcc_nbytes(n, d, params) + 8
