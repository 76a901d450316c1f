"""One statement of a seed in the audit (``claims.inventory``): the seed, its section, the seed's words, and the
claims that measure it or the reason it is not measured."""

from __future__ import annotations

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
