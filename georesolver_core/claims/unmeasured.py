"""Statements of the seeds that are not claims, or only partly: definitions, settings, pointers, comparisons
with systems the project does not have. The audit in ``claims.inventory`` is the one place they are listed
(with the seed's words and the reason); this module gives the claims report its "not_measured" list from it.
"""

from __future__ import annotations

from dataclasses import dataclass

from georesolver_core.claims import inventory


@dataclass(frozen=True)
class Unmeasured:
    """One statement of a seed (or the part of it) left unmeasured, and why."""

    source: str  # seed and section
    statement: str  # the seed's words
    reason: str  # definition, setting, or not measurable here (and why)


NOT_MEASURED = tuple(Unmeasured(**u) for u in inventory.not_measured())


def not_measured() -> list[dict]:
    """The list as plain JSON-ready dicts, in order."""
    return inventory.not_measured()
