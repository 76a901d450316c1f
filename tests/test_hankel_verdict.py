"""The Hankel page's decay verdict comes from the claims' rule: a planted violation fails, the measured
blocks hold."""

from __future__ import annotations

from georesolver_core.extras.hankel_measure import Decay, decay_check, decay_sweep
from georesolver_core.verdicts import FAILS, HOLDS


def test_measured_blocks_hold_against_four_to_the_minus_n():
    check = decay_check(decay_sweep([4, 8, 16, 32], top=8))
    assert check.verdict == HOLDS and check.holds
    assert len(check.worst) == len(check.bound) == 8
    assert check.bound[:3] == [1.0, 0.25, 0.0625] and check.worst[0] == 1.0
    assert all(w <= b for w, b in zip(check.worst, check.bound, strict=True))


def test_a_planted_slow_decay_fails_at_its_worst_block():
    # s_2/s_1 = 0.5 > 1/4 at h = 8 only: the worst over h breaks the bound
    planted = Decay([4.0, 8.0], [[2.0, 0.02, 0.0001], [2.0, 1.0, 0.01]])
    check = decay_check(planted)
    assert check.verdict == FAILS and not check.holds
    assert check.worst[1] == 0.5 and "violated" in check.summary
