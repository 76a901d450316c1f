"""Every claim of the seeds as a measurement beside its bound, with a verdict.

Topic modules register their claims on import; add one import line per module below.
"""

# Topic modules (each registers its claims on import):
from georesolver_core.claims import (
    attention_claims,  # noqa: E402,F401
    geometry_claims,  # noqa: E402,F401
    landscape_claims,  # noqa: E402,F401
)
from georesolver_core.claims.registry import (
    CLAIMS,
    CONDITIONAL,
    FAILS,
    HOLDS,
    VERDICTS,
    Claim,
    Evidence,
    fit_loglog_slope,
    register,
    run_all,
    run_claim,
    verdict_inequality,
    verdict_scaling,
)

__all__ = [
    "CLAIMS",
    "CONDITIONAL",
    "FAILS",
    "HOLDS",
    "VERDICTS",
    "Claim",
    "Evidence",
    "fit_loglog_slope",
    "register",
    "run_all",
    "run_claim",
    "verdict_inequality",
    "verdict_scaling",
]

# Modules that export CLAIMS and do not register themselves.
from georesolver_core.claims import hankel_claims, orthogonal_claims  # noqa: E402

for _c in (*orthogonal_claims.CLAIMS, *hankel_claims.CLAIMS):
    register(_c)
