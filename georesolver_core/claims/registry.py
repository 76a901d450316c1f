"""The claims table: every claim by key, in the order of ``georesolver_core.claims.MODULES``.

Topic modules export ``CLAIMS = (Claim(...), ...)`` and never register themselves; ``collect``
adds a tuple of such modules in order. ``register`` adds one claim (keys are unique).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from types import ModuleType

from georesolver_core import verdicts
from georesolver_core.verdicts import Claim

CLAIMS: dict[str, Claim] = {}

NOT_DECIDED = "not decided at quick settings"
# Claims whose quick settings cannot decide their verdict: a quick run reports NOT_DECIDED (with what it
# measured) instead of a word the full run would contradict. Each entry says why.
_QUICK_ECHO = (
    "the quick echo benchmark (32 positions, delay 8, 60 Adam steps, one seed) has learned no echo yet and has "
    "no spread of seeds, while the full one (128 positions, 127 predicted steps, 500 steps, three seeds) is judged "
    "on the seeds' spread"
)
QUICK_UNDECIDED: dict[str, str] = {
    "orth-echo-lowest-loss": _QUICK_ECHO,
    "orth-echo-vs-gpt": _QUICK_ECHO,
    "orth-echo-norm-deviation": _QUICK_ECHO + "; after 60 steps the hybrid's gate is still near its midpoint 1/2",
    "thm3-ida-noise-robust": "the quick sizes (n = 32, 64, two noise rates) cannot separate the n-term from the "
    "eta-term: the fit of C eta^alpha + A n^-p is degenerate there; the full run fits n = 128..1024",
}


def register(claim: Claim) -> Claim:
    """Add a claim to the registry (keys are unique)."""
    if not isinstance(claim, Claim):
        raise ValueError(f"claim must be a Claim (got {type(claim).__name__})")
    if claim.key in CLAIMS:
        raise ValueError(f"claim key {claim.key!r} is already registered")
    CLAIMS[claim.key] = claim
    return claim


def collect(modules: Iterable[ModuleType]) -> None:
    """Register every module's ``CLAIMS`` tuple, module by module, in order."""
    for module in modules:
        claims = getattr(module, "CLAIMS", None)
        if not isinstance(claims, tuple):
            raise ValueError(
                f"{module.__name__} must export CLAIMS as a tuple of Claim (got {type(claims).__name__})"
            )
        for claim in claims:
            register(claim)


def run_claim(key: str, quick: bool = False) -> dict:
    """Run one claim's measurement; returns the claim's fields, the evidence and the run time.

    A quick run of a claim in ``QUICK_UNDECIDED`` reports the verdict ``NOT_DECIDED`` (the full run decides it)."""
    if key not in CLAIMS:
        raise ValueError(f"claim must be one of {sorted(CLAIMS)} (got {key!r})")
    claim = CLAIMS[key]
    t0 = time.perf_counter()
    evidence = claim.measure(quick)
    out = {
        "key": claim.key,
        "section": claim.section,
        "statement": claim.statement,
        "bound_text": claim.bound_text,
        "page": claim.page,
        "seconds": round(time.perf_counter() - t0, 3),
        **evidence.to_dict(),
    }
    if quick and key in QUICK_UNDECIDED:
        out["summary"] = (
            f"Not decided at quick settings: {QUICK_UNDECIDED[key]}. The quick measurement alone would say "
            f"'{out['verdict']}': {out['summary']}"
        )
        out["verdict"] = NOT_DECIDED
    return out


def __getattr__(name: str):
    """The verdict helpers were defined here before ``georesolver_core.verdicts``: old imports keep working."""
    if name in verdicts.__all__:
        return getattr(verdicts, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def run_all(quick: bool = False, keys: Sequence[str] | None = None) -> list[dict]:
    """Run every registered claim (or the named ones) in registration order."""
    return [run_claim(k, quick) for k in (keys or list(CLAIMS))]
