"""Theorem 1's alternative (section 2.3): softmax needs d = Omega((log n)^2) "or H = Omega(log n)" heads for
eps-approximate retrieval. The paper does not say how heads combine; the reading measured here is the one in
which heads can help at all.

Reading: H heads of width d_h = 4 concatenated into one softmax of width H d_h over keys with +-1
coordinates, with the design that needs the least width (the Hamming-shell code of ``attention_search``:
no set of distinct +-1 keys leaks less). H_min(n) = ceil(d_min(n) / d_h) is the fewest heads that reach
W_11 >= 1 - delta. (Averaging the heads' weights instead cannot beat the best single head, so no finite H
would help; that reading gives no growth to measure.) Omega(log n) is judged by the fitted power of H_min
against log n, at least 1 - 0.25.
"""

from __future__ import annotations

import math

import numpy as np

from georesolver_core.claims.attention_search import shell_code_min_width
from georesolver_core.claims.landscape.evidence import fitted, shape_verdict
from georesolver_core.claims.statements_ida import claim
from georesolver_core.verdicts import Axes, sweep_evidence

PAGE = "attention"
HEAD_WIDTH = 4
DELTA = 0.01


def heads_needed(n: int, *, head_width: int = HEAD_WIDTH, delta: float = DELTA) -> int | None:
    """The fewest heads of width ``head_width`` (concatenated) whose best +-1 design reaches W_11 >= 1 - delta."""
    d = shell_code_min_width(n, delta=delta)
    return None if d is None else math.ceil(d / head_width)


def measure_heads(quick: bool = False):
    ns = [2**p for p in range(3, 15 if quick else 25, 2)]
    heads = [heads_needed(n) for n in ns]
    if any(h is None for h in heads):
        raise ValueError(f"the width search ran out before every n was reached (got {heads})")
    shape = np.log(ns)
    verdict, summary, p = shape_verdict(heads, shape, kind="omega", what="heads needed")
    note = (
        f". Heads of width {HEAD_WIDTH}, delta = {DELTA:g}: H_min = {heads[0]} at n = {ns[0]} to {heads[-1]} at n = "
        f"{ns[-1]}; H_min / log n from {heads[0] / shape[0]:.3g} to {heads[-1] / shape[-1]:.3g}. The design is the "
        "best one for +-1 keys (Hamming-shell code), so no +-1 design needs fewer heads: a lower bound tested at its "
        "worst case."
    )
    axes = Axes("number of keys n", "heads needed H_min (width 4 each)", "H_min = Omega(log n): fitted power >= 0.75",
                log="x")  # fmt: skip
    return sweep_evidence(
        ns, heads, fitted(heads, shape), (verdict, summary), axes, note=note, measured_value=p, bound_value=1.0,
        headline="fitted power of H_min against log n (predicted: at least 1)",
        reading="heads concatenated into one softmax, the best +-1 design; averaged heads cannot help",
    )  # fmt: skip


CLAIMS = (
    claim(
        "thm1-heads-omega-log-n",
        "Theorem 1 (section 2.3), the heads alternative",
        "Any softmax architecture needs H = Omega(log n) heads for eps-approximate retrieval (the alternative to "
        "d = Omega((log n)^2)). Reading: heads of width 4 concatenated into one softmax, keys with +-1 coordinates in "
        "the design needing the least width (Hamming-shell code), delta = 0.01; H_min(n) measured, its growth in "
        "log n judged by the fitted power (>= 0.75).",
        "H_min(n) >= C log n",
        measure_heads,
        page=PAGE,
    ),
)
