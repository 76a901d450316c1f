"""The claims report document: built from the registry, written and read back, the shipped copy valid."""

import json
from pathlib import Path

import pytest

from georesolver_core import __version__
from georesolver_core.__main__ import main
from georesolver_core.claims import CLAIMS
from georesolver_core.claims.report import build_report, load_report, missing_keys, write_report

ROOT = Path(__file__).resolve().parent.parent
FAST = ["sec5.2b-rim-separation", "hankel-rank-rule"]


def test_report_round_trip_names_version_settings_and_missing_claims(tmp_path):
    seen = []
    report = build_report(quick=True, keys=FAST, on_claim=lambda i, n, k: seen.append((i, n, k)))
    assert seen == [(0, 2, FAST[0]), (1, 2, FAST[1])]
    assert report["version"] == __version__ and report["settings"]["quick"] is True
    assert report["settings"]["keys"] == FAST and report["settings"]["failed"] == {}
    assert [r["key"] for r in report["claims"]] == FAST
    back = load_report(write_report(report, tmp_path / "r.json"))
    assert back == json.loads(json.dumps(report))
    assert missing_keys(back, FAST) == [] and set(missing_keys(back)) == set(CLAIMS) - set(FAST)


def test_bad_report_files_are_refused(tmp_path):
    with pytest.raises(ValueError, match="could not be read"):
        load_report(tmp_path / "absent.json")
    (tmp_path / "list.json").write_text("[]")
    with pytest.raises(ValueError, match="version"):
        load_report(tmp_path / "list.json")


def test_the_command_line_writes_the_report(tmp_path):
    out = tmp_path / "report.json"
    assert main(["claims", "--json", "--quick", "--only", FAST[0], "--out", str(out)]) == 0
    assert [r["key"] for r in load_report(out)["claims"]] == [FAST[0]]


def test_the_shipped_report_is_a_valid_report_of_registered_claims():
    report = load_report(ROOT / "assets" / "claims_report.json")
    assert {"quick", "torch", "generated_utc", "seconds"} <= set(report["settings"])
    assert report["claims"] and all(r["key"] in CLAIMS for r in report["claims"])
