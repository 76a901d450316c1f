"""The audit of the seeds, statement by statement: the list a referee ticks off.

Every numbered theorem, lemma, proposition and corollary of seeds 000, 003 and 004, and every quantitative
sentence (scales as, at most, reduces by, matches), is one ``Statement``: the seed, its section as the seed
numbers it, the seed's words whole, and either the claim keys that measure it or the reason it is not measured
(a definition, a pointer to another statement, or not measurable here, and why). A statement that is measured
only in part has both: its keys, and the reason for the part left out.

The data live one module per part of the seeds (``inventory_paper`` and ``inventory_modules`` for seed 000,
``inventory_seeds`` for seeds 003 and 004); this module collects them. ``claims.unmeasured`` derives the claims
report's "not_measured" list from it.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass

SEEDS = {
    "000": "the GeoResolver paper",
    "003": "the E-Delta-MHC-Geo Transformer",
    "004": "Dyadic Hankel Boundary Attention",
}


@dataclass(frozen=True)
class Statement:
    """One statement of a seed and how the project accounts for it."""

    seed: str  # "000", "003" or "004"
    section: str  # where the seed states it, as the seed numbers it
    words: str  # the seed's words, whole (formulas in plain text)
    keys: tuple[str, ...] = ()  # the claims that measure it
    reason: str = ""  # why it, or the part the keys leave out, is not measured ("" when the keys cover it)

    def __post_init__(self):
        if self.seed not in SEEDS:
            raise ValueError(f"seed must be one of {sorted(SEEDS)} (got {self.seed!r})")
        if not self.words.strip() or not self.section.strip():
            raise ValueError(f"section and words must be non-empty (got {self.section!r}, {self.words!r})")
        if not self.keys and not self.reason.strip():
            raise ValueError(f"a statement needs claim keys or a reason (got neither for {self.words[:60]!r})")

    @property
    def source(self) -> str:
        """'Seed 000, section 2.3': the seed and section, as the claims report lists them."""
        return f"Seed {self.seed}, {self.section}"

    @property
    def measured(self) -> bool:
        """Whether a claim measures it (in whole or in part)."""
        return bool(self.keys)


@functools.cache
def statements() -> tuple[Statement, ...]:
    """Every statement, seed by seed in the seeds' order."""
    # The data modules build their entries with this module's Statement, so they are read here, on first use.
    from georesolver_core.claims import inventory_modules, inventory_paper, inventory_seeds

    return (*inventory_paper.STATEMENTS, *inventory_modules.STATEMENTS, *inventory_seeds.STATEMENTS)


def named_keys(entries: Iterable[Statement] | None = None) -> set[str]:
    """Every claim key the inventory names."""
    return {k for s in (statements() if entries is None else entries) for k in s.keys}


def not_measured(entries: Iterable[Statement] | None = None) -> list[dict]:
    """The statements (or parts) not measured, with the reason: {source, statement, reason}, in order. The reason
    of a statement measured in part names the claims that measure the rest."""
    return [
        {
            "source": s.source,
            "statement": s.words,
            "reason": s.reason + (f" (measured: {', '.join(s.keys)})" if s.keys else ""),
        }
        for s in (statements() if entries is None else entries)
        if s.reason
    ]


def coverage(entries: Iterable[Statement] | None = None) -> list[dict]:
    """Per seed: how many statements, how many a claim measures (wholly or in part), how many no claim does,
    and how many claims measure the seed."""
    entries = list(statements() if entries is None else entries)
    rows = []
    for seed, title in SEEDS.items():
        mine = [s for s in entries if s.seed == seed]
        rows.append(
            {
                "seed": seed,
                "document": title,
                "statements": len(mine),
                "measured by claims": sum(s.measured for s in mine),
                "in part only": sum(s.measured and bool(s.reason) for s in mine),
                "not measured": sum(not s.measured for s in mine),
                "claims": len(named_keys(mine)),
            }
        )
    return rows
