"""The headless command line: `python -m georesolver_core claims --json` measures every registered claim."""

from __future__ import annotations

import json
import subprocess
import sys

from georesolver_core.claims import (
    NOT_DECIDED,
    QUICK_UNDECIDED,
    VERDICTS,
    run_claim,
    verdict_inequality,
    verdict_scaling,
)
from tests.app_pages import ROOT, registered_pages


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "georesolver_core", *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


def test_claims_json_lists_every_registered_claim_with_a_verdict():
    out = _cli("claims", "--json", "--quick")
    assert out.returncode == 0, out.stderr
    results = json.loads(out.stdout)
    # the claims the command's own process registers (a test run may register a further geometry in its own)
    registered = subprocess.run(
        [sys.executable, "-c", "from georesolver_core.claims import CLAIMS; print(*CLAIMS)"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert [r["key"] for r in results] == registered.stdout.split()
    pages = {row[3] for row in registered_pages()}
    for r in results:
        # a quick run says NOT_DECIDED where its settings cannot decide (claims.QUICK_UNDECIDED)
        assert r["verdict"] in VERDICTS or (r["verdict"] == NOT_DECIDED and r["key"] in QUICK_UNDECIDED)
        assert len(r["x"]) == len(r["measured"]) == len(r["bound"]) > 0
        assert r["summary"] and r["statement"] and r["bound_text"] and r["section"]
        assert r["page"] in pages, f"claim {r['key']} links to unregistered page {r['page']!r}"


def test_claims_only_and_unknown_key():
    out = _cli("claims", "--only", "sec5.2b-rim-separation", "--quick")
    assert out.returncode == 0 and "sec5.2b-rim-separation" in out.stdout
    bad = _cli("claims", "--only", "no-such-claim")
    assert bad.returncode == 2 and "unknown claim" in bad.stderr


def test_rim_separation_claim_is_measured_not_hard_coded():
    r = run_claim("sec5.2b-rim-separation", quick=True)
    # the stated lower bound 2 delta/(1 - rho^2) is exceeded by the exact distance everywhere
    assert r["verdict"] == "fails"
    assert all(m < b for m, b in zip(r["measured"], r["bound"], strict=True))
    # while the distance itself grows without bound towards the rim
    assert r["measured"] == sorted(r["measured"]) and r["measured"][-1] > 10 * r["measured"][0]


def test_verdict_helpers():
    assert verdict_inequality([1, 2], [2, 3])[0] == "holds"
    assert verdict_inequality([1, 4], [2, 3])[0] == "fails"
    # a break outside the statement's hypotheses is no counterexample (the verdict rule)
    assert verdict_inequality([1, 4], [2, 3], condition=[True, False])[0] == "holds"
    assert verdict_inequality([3, 4], [2, 3], relation="ge")[0] == "holds"
    x = [1, 2, 4, 8, 16]
    verdict, _, slope = verdict_scaling(x, [v**-2 for v in x], exponent=-2)
    assert verdict == "holds" and abs(slope + 2) < 1e-9
    assert verdict_scaling(x, [v**-1 for v in x], exponent=-2)[0] == "fails"


def test_output_piped_into_a_reader_that_closes_early_ends_quietly():
    """``python -m georesolver_core claims | head -1``: no BrokenPipeError traceback."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "georesolver_core", "claims", "--quick", "--only", "sec5.2b-rim-separation"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.close()  # the reader goes away before the first line is written
    err = proc.stderr.read().decode()
    proc.wait(timeout=120)
    proc.stderr.close()
    assert "Traceback" not in err and "BrokenPipeError" not in err
    assert proc.returncode == 141
