"""The audit of the seeds, statement by statement: the list a referee ticks off.

Every numbered theorem, lemma, proposition and corollary of seeds 000, 003 and 004, and every quantitative
sentence (scales as, at most, reduces by, matches), is one ``Statement``: the seed, its section as the seed
numbers it, the seed's words whole, and either the claim keys that measure it or the reason it is not measured
(a definition, a pointer to another statement, or not measurable here, and why). A statement that is measured
only in part has both: its keys, and the reason for the part left out.

One entry is a ``claims.audit_entry.Statement``. The data live one module per part of the seeds
(``inventory_intro``, ``inventory_paper`` and ``inventory_modules`` for seed 000, ``inventory_seeds`` for seeds 003 and 004); this
module collects them, and gives the claims report its "not_measured" list (``not_measured``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from georesolver_core.claims import inventory_intro, inventory_modules, inventory_paper, inventory_seeds
from georesolver_core.claims.audit_entry import SEEDS, Statement

STATEMENTS = (
    *inventory_intro.STATEMENTS,
    *inventory_paper.STATEMENTS,
    *inventory_modules.STATEMENTS,
    *inventory_seeds.STATEMENTS,
)


def statements() -> tuple[Statement, ...]:
    """Every statement, seed by seed in the seeds' order."""
    return STATEMENTS


def named_keys(entries: Iterable[Statement] | None = None) -> set[str]:
    """Every claim key the inventory names."""
    return {k for s in (statements() if entries is None else entries) for k in s.keys}


def words_of(key: str) -> tuple[Statement, ...]:
    """The seed's statements a claim measures, in the seeds' order: its words, whole, beside the claim's own
    text (which says what is measured, and how it reads the statement)."""
    return tuple(s for s in statements() if key in s.keys)


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


@dataclass(frozen=True)
class SeedCoverage:
    """How far the claims cover one seed's statements."""

    seed: str  # "000", "003" or "004"
    document: str  # what the seed is
    statements: int  # statements found in it
    measured: int  # measured by claims, wholly or in part
    in_part: int  # of those, measured only in part (the rest has a reason)
    not_measured: int  # no claim measures them: definitions, pointers, not measurable here
    claims: int  # distinct claims that measure its statements


def coverage(entries: Iterable[Statement] | None = None) -> list[SeedCoverage]:
    """Per seed, in the seeds' order: how many statements, how many a claim measures, how many none does."""
    entries = list(statements() if entries is None else entries)
    rows = []
    for seed, title in SEEDS.items():
        mine = [s for s in entries if s.seed == seed]
        rows.append(
            SeedCoverage(
                seed=seed,
                document=title,
                statements=len(mine),
                measured=sum(s.measured for s in mine),
                in_part=sum(s.measured and bool(s.reason) for s in mine),
                not_measured=sum(not s.measured for s in mine),
                claims=len(named_keys(mine)),
            )
        )
    return rows
