"""The seeds' smaller statements (proof steps, identities, side remarks, reported results), one module per
part of the seeds, in the order of the seeds' sections; the claims table appends them after the main claims."""

from georesolver_core.claims import (
    statements_audit,
    statements_descent,
    statements_dmg,
    statements_heads,
    statements_hida,
    statements_ida,
    statements_noise,
    statements_nystrom,
    statements_rank,
    statements_seed003,
    statements_seed004,
    statements_sphere,
)

STATEMENT_MODULES = (
    statements_ida,
    statements_heads,
    statements_rank,
    statements_noise,
    statements_descent,
    statements_hida,
    statements_nystrom,
    statements_sphere,
    statements_dmg,
    statements_seed003,
    statements_seed004,
    statements_audit,  # statements found by the audit in claims.inventory
)
