"""The Hankel attention page's lab (seed 004): the cross block and its dyadic blocks
(``kernel_lab(KernelConfig) -> KernelView``), the singular values of each block with the ranks they need and
the decay judged against 4^-N (``decay_lab(DecayConfig) -> DecayLab``), the error of the factorised
output at the rank the seed's rule gives (``error_lab(ErrorConfig) -> OutputErrors``), and its speed
against the dense block (``speed_steps(SpeedConfig)``, a worker's steps returning a ``Speed``). The measurements
themselves live in ``extras.hankel_measure``, where the claims make them too.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass

from georesolver_core.extras.hankel import check_eps_unit
from georesolver_core.extras.hankel_measure import (
    Decay,
    DecayCheck,
    KernelView,
    Ranks,
    Speed,
    decay_check,
    decay_sweep,
    kernel_view,
    output_error,
    rank_sweep,
    speedup_steps,
)
from georesolver_core.theory.hankel import EPS_LIST, rank_rule
from georesolver_core.validate import check_positive_int

HS = (4, 8, 16, 32, 64, 128, 256, 512, 1024)  # block scales h measured (up to a config's h_max)


@dataclass(frozen=True)
class KernelConfig:
    """The picture's sequence: its length, split point and first dyadic scale (checked by ``kernel_view``)."""

    length: int  # L tokens
    split: int  # b: tokens 0..b-1 before the boundary, b..L-1 after it
    h0: float = 4.0  # first dyadic scale: keys with r < h0 form the dense boundary layer
    delta: float = 1.0  # offset of the distances s, r


def kernel_lab(config: KernelConfig) -> KernelView:
    """The cross block H[i, j] = 1/(s_i + r_j) of the sequence and its dyadic column blocks."""
    return kernel_view(config.length, config.split, config.h0, config.delta)


def _scales(h_max: int) -> list[int]:
    return [h for h in HS if h <= h_max]


@dataclass(frozen=True)
class DecayConfig:
    """Blocks of every scale in HS up to ``h_max``, ``top`` singular values each.

    Validated on construction: h_max in [HS[0], HS[-1]], top in [2, 64].
    """

    h_max: int  # largest block scale h
    top: int = 12  # leading singular values per block

    def __post_init__(self):
        check_positive_int("h_max", self.h_max, HS[0], HS[-1])
        check_positive_int("top", self.top, 2, 64)


@dataclass(frozen=True)
class DecayLab:
    """Each block's singular values, the rank each eps of EPS_LIST needs, and the decay judged."""

    decay: Decay  # per scale h: leading singular values
    ranks: Ranks  # observed rank per eps and h, beside the rule ceil(log4(1/eps))
    check: DecayCheck  # s_(N+1)/s_1 <= 4^-N at the worst h, index by index (``verdict_inequality``)


def decay_lab(config: DecayConfig) -> DecayLab:
    decay = decay_sweep(_scales(config.h_max), top=config.top)
    return DecayLab(decay=decay, ranks=rank_sweep(EPS_LIST, decay), check=decay_check(decay))


@dataclass(frozen=True)
class ErrorConfig:
    """The factorised output at the rank ``rank_rule(eps)`` on blocks of every scale up to ``h_max``.

    Validated on construction: h_max in [HS[0], HS[-1]], eps in (0, 1).
    """

    h_max: int  # largest block scale h
    eps: float  # target relative error

    def __post_init__(self):
        check_positive_int("h_max", self.h_max, HS[0], HS[-1])
        check_eps_unit(self.eps)


@dataclass(frozen=True)
class OutputErrors:
    """||H X - U (V^T X)||_F / ||H X||_F per block scale, at one rank."""

    hs: list[int]  # block scales h
    errors: list[float]  # (len(hs),) relative error of the factorised output
    rank: int  # N = ceil(log4(1/eps))


def error_lab(config: ErrorConfig) -> OutputErrors:
    hs, rank = _scales(config.h_max), rank_rule(config.eps)
    return OutputErrors(hs=hs, errors=[output_error(h, rank) for h in hs], rank=rank)


@dataclass(frozen=True)
class SpeedConfig:
    """Dense H X against U (V^T X) on the dyadic block of each size, at one rank.

    Validated on construction: sizes a non-empty list of block sizes >= 1, rank >= 1, repeats >= 1,
    threads in [1, 256].
    """

    sizes: tuple[int, ...]  # block sizes m (m targets, r in [m, 2m))
    rank: int  # N of the factorisation
    repeats: int = 7  # timings per size (the median is kept)
    threads: int = 1  # torch intra-op threads while timing
    d_v: int = 64  # value dimension

    def __post_init__(self):
        if not self.sizes:
            raise ValueError("sizes must name at least one block size (got none)")
        for m in self.sizes:
            check_positive_int("size", int(m), 1)
        check_positive_int("rank", self.rank)
        check_positive_int("repeats", self.repeats)
        check_positive_int("threads", self.threads, 1, 256)
        object.__setattr__(self, "sizes", tuple(self.sizes))


def speed_steps(config: SpeedConfig) -> Generator[tuple[float, str, Speed], None, Speed]:
    """``extras.hankel_measure.speedup_steps`` at ``config``: one block size per step (a worker job)."""
    return (
        yield from speedup_steps(
            list(config.sizes), config.rank, d_v=config.d_v, repeats=config.repeats, threads=config.threads
        )
    )
