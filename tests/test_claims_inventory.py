"""The audit of the seeds (claims.inventory): every key it names is registered, every registered claim is in it,
every statement not measured says why, the report's not_measured list is read from it, and the claims the audit
added run at quick settings with the verdict of their full run (the cheap ones are run both ways here)."""

import pytest

from georesolver_core.claims import CLAIMS, NOT_DECIDED, QUICK_UNDECIDED, VERDICTS, run_claim
from georesolver_core.claims import statements_audit as audit
from georesolver_core.claims.inventory import SEEDS, Statement, coverage, named_keys, not_measured, statements
from georesolver_core.claims.report import build_report

AUDIT_KEYS = [c.key for c in audit.CLAIMS]
# Full settings within a few CPU seconds: run both ways here. The others (the Theorem 6.1 steps, ~15 s at full
# settings) run quick in tests/test_statement_claims.py and full in the shipped report.
CHEAP = [k for k in AUDIT_KEYS if k not in ("thm6.1-radius-step", "thm6.1-key-step")]


def test_every_named_key_is_registered():
    assert named_keys() - set(CLAIMS) == set()


def test_every_registered_claim_is_in_the_inventory():
    # a claim made once per geometry is in it through its family: the same key for another geometry
    named = named_keys()
    families = {k.removesuffix(f"-{c.geometry}") for k, c in CLAIMS.items() if c.geometry and k in named}
    missing = {
        k
        for k in set(CLAIMS) - named
        if not (CLAIMS[k].geometry and k.removesuffix(f"-{CLAIMS[k].geometry}") in families)
    }
    assert missing == set()


def test_every_statement_has_its_words_a_seed_and_keys_or_a_reason():
    entries = statements()
    assert {s.seed for s in entries} == set(SEEDS)
    for s in entries:
        assert s.words.strip() and s.section.strip()
        assert s.keys or s.reason.strip(), s.words
    # one entry per statement: no statement is listed twice
    assert len({(s.seed, s.section, s.words) for s in entries}) == len(entries)


def test_a_statement_without_keys_or_reason_is_refused():
    with pytest.raises(ValueError, match="claim keys or a reason"):
        Statement("000", "section 1", "A sentence.")
    with pytest.raises(ValueError, match="seed must be one of"):
        Statement("002", "section 1", "A sentence.", reason="none")


def test_not_measured_keeps_the_report_format_and_every_entry_has_a_reason():
    listed = not_measured()
    assert listed and all(set(u) == {"source", "statement", "reason"} for u in listed)
    assert all(u["source"].startswith("Seed ") and u["statement"] and u["reason"].strip() for u in listed)
    assert build_report(quick=True, keys=["sec1.4-heavy-tail"])["not_measured"] == listed
    # every statement no claim measures is in the list
    assert {s.words for s in statements() if not s.keys} <= {u["statement"] for u in listed}


def test_coverage_adds_up_per_seed():
    rows = coverage()
    assert [r.seed for r in rows] == list(SEEDS)
    for r in rows:
        assert r.statements == r.measured + r.not_measured > 0
        assert 0 <= r.in_part <= r.measured and 0 < r.claims
    assert sum(r.statements for r in rows) == len(statements())


def test_the_audit_claims_are_registered_once_with_the_seeds_words():
    assert AUDIT_KEYS and all(k in CLAIMS for k in AUDIT_KEYS)
    words = {s.words for s in statements()}
    for claim in audit.CLAIMS:
        # each new claim's statement is a statement of the inventory (the seed's words), or starts with one
        assert any(claim.statement.startswith(w) or w.startswith(claim.statement) for w in words), claim.key


@pytest.mark.parametrize("key", CHEAP)
def test_cheap_audit_claims_give_the_same_verdict_quick_and_full(key):
    quick, full = run_claim(key, quick=True), run_claim(key, quick=False)
    assert full["verdict"] in VERDICTS
    assert quick["verdict"] == (NOT_DECIDED if key in QUICK_UNDECIDED else full["verdict"])
    assert quick["summary"].strip() and len(quick["x"]) == len(quick["measured"]) == len(quick["bound"]) > 0
