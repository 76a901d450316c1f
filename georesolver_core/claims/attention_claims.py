"""Claims of the Euclidean Resolver (sections 2.3-2.4) and Lemma 5.1(a), measured on the Attention page:
exact retrieval, Theorem 1, dense keys, the Gaussian nearest-neighbour radius and Lemma 1. The kernel's
effective rank and section 2.8's eps advice, shown on the same page, are in ``rank_claims``.

Every measurement runs in float64 on the CPU from a fixed seed, so the command line, the tests
and the app see the same numbers; bounds come from ``georesolver_core.theory.attention``. The
summaries say what was found in words chosen by the measured outcome, never fixed in advance.
"""

from __future__ import annotations

import numpy as np
import torch

from georesolver_core.attention import ida_weights, softmax_weights
from georesolver_core.claims import attention_search as search
from georesolver_core.geometry import GEOMETRIES, pairwise_distance
from georesolver_core.labs.key_set import nn_distance
from georesolver_core.labs.lipschitz import (
    KEY_LAYOUTS,
    Ascent,
    SpreadSweep,
    lipschitz_across_spread,
    lipschitz_sweep,
)
from georesolver_core.labs.samplers import random_points
from georesolver_core.labs.softmax_width import orthogonal_keys, softmax_min_norm_sq_circle, softmax_min_width
from georesolver_core.theory import attention as th
from georesolver_core.verdicts import (
    CONDITIONAL,
    FAILS,
    HOLDS,
    Axes,
    Claim,
    fit_loglog_slope,
    sweep_evidence,
    verdict_inequality,
    verdict_scaling,
)

PAGE = "attention"
F64 = torch.float64


def seeded(seed: int = 0) -> torch.Generator:
    """A fresh generator: every sweep of these claims draws from a fixed seed."""
    return torch.Generator().manual_seed(seed)


def powers(lo: int, hi: int, step: int) -> list[int]:
    """lo, lo step, lo step^2, ... up to hi: the sizes of a log-spaced sweep."""
    return [int(v) for v in lo * step ** np.arange(int(round(np.log(hi / lo) / np.log(step))) + 1)]


def attention_claim(key: str, section: str, statement: str, bound_text: str, measure, geometry: str = "") -> Claim:
    """A claim shown on the Attention page (``geometry``: the one it is made for, when made per geometry)."""
    return Claim(key, section, statement, bound_text, PAGE, measure, geometry)


# --- Exact retrieval (lemma of section 2.3, Lemma 5.1(a)), one claim per geometry -----------------


def measure_exact_retrieval(quick: bool = False, *, geometry: str = "euclidean", n: int = 16, d: int = 8):
    """q = k_1 among n random keys; the weight leaked to the others, 1 - W_11, against the bound as eps -> 0."""
    eps = np.logspace(-10, 0, 11 if quick else 31)
    k = random_points(n, d, geometry=geometry, generator=seeded(), dtype=F64)  # (n, d)
    k32 = k.float()
    r = float(pairwise_distance(k[:1], k[1:], geometry=geometry).min())
    # The leak is summed over the other keys rather than taken as 1 - W_11, which rounds to 0.
    leak64 = [float(ida_weights(k[:1], k, eps=e, geometry=geometry)[0, 1:].sum()) for e in eps]
    leak32 = [float(ida_weights(k32[:1], k32, eps=e, geometry=geometry)[0, 1:].sum()) for e in eps]
    bound = th.retrieval_leak_upper_bound(eps, n, r)
    judged = verdict_inequality(leak64, bound, relation="le", rtol=1e-9)
    note = (
        f". The leak falls from {leak64[-1]:.3g} at eps={eps[-1]:g} to {leak64[0]:.3g} at eps={eps[0]:g} "
        f"(nearest other key at d={r:.3g}); in float32 it is {leak32[0]:.3g} there"
    )
    axes = Axes("eps (regulariser)", "weight leaked to the other keys, 1 - W_11", "measured <= bound", log="xy")
    extra = {"measured in float32": leak32}
    return sweep_evidence(eps, leak64, bound, judged, axes, note=note, at=0, extra=extra)


EXACT_RETRIEVAL = tuple(
    attention_claim(
        f"lemma2.3-exact-retrieval-{_geo}",
        "Exact-retrieval lemma (section 2.3) / Lemma 5.1(a)",
        f"Exact retrieval in {GEOMETRIES[_geo].label} geometry: for a query equal to key j* and pairwise "
        "distinct keys, W_j* -> 1 and W_j -> 0 (j != j*) as eps -> 0.",
        "1 - W_j* <= x/(1+x), x = eps (n-1)/(r^2 + eps), r = distance to the nearest other key",
        lambda quick, _g=_geo: measure_exact_retrieval(quick, geometry=_g),
        geometry=_geo,
    )
    for _geo in GEOMETRIES
)


# --- Theorem 1: the orthogonal-keys instance and the softmax width ---------------------------------


def measure_orthogonal(quick: bool = False, *, R: float = 1.0, eps: float = 1e-5, delta: float = 0.01):
    """W_11 of IDA and softmax on k_j = R e_j, q = k_1, d = n, as n grows."""
    ns = powers(2, 256 if quick else 1024, 2)
    ida_w, soft_w = [], []
    for n in ns:
        q, k = orthogonal_keys(n, R=R)
        ida_w.append(float(ida_weights(q, k, eps=eps)[0, 0]))
        soft_w.append(float(softmax_weights(q, k)[0, 0]))
    n_a = np.array(ns, dtype=float)
    bound = th.orthogonal_ida_weight(n_a, R, eps)
    judged = verdict_inequality(ida_w, bound, relation="ge", rtol=1e-9)
    reach = [n for n, w in zip(ns, soft_w, strict=True) if w >= 1 - delta]
    note = (
        f". IDA keeps W_11 >= {min(ida_w):.4f} up to n={ns[-1]} at eps={eps:g}; softmax (R={R:g}, d = n) goes "
        f"from {soft_w[0]:.3f} to {soft_w[-1]:.2g} and reaches 1 - delta = {1 - delta:g} at "
        f"{'no n' if not reach else f'n in {reach}'}. IDA's leak grows like eps (n-1)/(2R^2): W_11 >= 1 - delta "
        f"at n={ns[-1]} needs eps <= {th.orthogonal_ida_eps_for(ns[-1], R, delta):.2g}, a scalar, not width"
    )
    axes = Axes(
        "number of keys n (width d = n)",
        "weight on the matching key, W_11",
        "measured >= bound (the formula is exact)",
        log="x",
    )
    extra = {
        "softmax, measured": soft_w,
        "softmax, formula 1/(1+(n-1)e^{-R^2/sqrt d})": th.orthogonal_softmax_weight(n_a, R, n_a).tolist(),
    }
    return sweep_evidence(ns, ida_w, bound, judged, axes, note=note, extra=extra)


ORTHOGONAL = attention_claim(
    "thm1-orthogonal-keys",
    "Theorem 1 (section 2.3)",
    "On n orthogonal keys k_j = R e_j with q = k_1, IDA retrieves the match exactly as eps -> 0, while "
    "softmax spreads weight over all n keys.",
    "W_11(IDA) = 1/(1 + eps (n-1)/(2R^2 + eps)); W_11(softmax) = 1/(1 + (n-1) e^{-R^2/sqrt d})",
    measure_orthogonal,
)


def measure_softmax_width(quick: bool = False, *, delta: float = 0.01):
    """Smallest softmax width reaching W_11 >= 1 - delta with coordinates +-1, vs the (log n)^2 statement.

    A lower bound over all designs is judged on the best design: the Hamming-shell code (the least width
    any distinct +-1 keys need with q = k_1); random +-1 keys and, for the reading where every key is
    retrieved by its own query, the Hadamard code and its own lower bound are reported beside it.
    """
    ns = powers(4, 4096, 4) if quick else powers(4, 4096, 2)
    seeds = range(3 if quick else 5)
    widths = []
    for n in ns:
        found = [softmax_min_width(n, delta=delta, d_max=512, generator=seeded(s)) for s in seeds]
        widths.append(float(np.median([np.nan if w is None else w for w in found])))
    shell = [float(search.shell_code_min_width(n, delta=delta)) for n in ns]
    hadamard = [float(search.hadamard_code_min_width(n, delta=delta)) for n in ns]
    n_a, w = np.array(ns, dtype=float), np.array(shell)
    bound = th.softmax_width_lower_bound_bounded(n_a, delta)
    all_keys = th.softmax_width_lower_bound_all_keys(n_a, delta)
    ok_verdict, ok_summary = verdict_inequality(w, bound, relation="ge", rtol=1e-9)
    all_verdict, _ = verdict_inequality(hadamard, all_keys, relation="ge", rtol=1e-9)
    fit_verdict, fit_summary, p = verdict_scaling(th.delta_log(n_a, delta), w, exponent=2.0, tol=0.5, what="width")
    p_logn = fit_loglog_slope(np.log(n_a), w)
    # Without a norm bound, width 2 (keys on a circle of radius R) serves every n.
    r2 = [softmax_min_norm_sq_circle(n, delta=delta, d=2) for n in ns]
    R_fixed = np.sqrt(np.sqrt(w[0]) * np.log((n_a[0] - 1) / (2 * delta)))  # printed formula = measured at n_0
    paper = th.softmax_width_paper_formula(n_a, R_fixed, delta)
    if FAILS in (ok_verdict, fit_verdict, all_verdict):
        verdict = FAILS
    else:
        verdict = CONDITIONAL if np.isfinite(r2).all() else HOLDS
    tight = w / bound
    summary = (
        f"Reading judged: one query q = k_1, coordinates in [-1, 1], the best design. The Hamming-shell code (the "
        f"other keys on the shells farthest from k_1: no distinct +-1 keys need less width) needs d = {shell[0]:.0f}"
        f" (n={ns[0]}) ... {shell[-1]:.0f} (n={ns[-1]}), {tight.min():.2f}-{tight.max():.2f}x the bound: {ok_summary}; "
        f"the {fit_summary} in log((n-1)(1-delta)/delta) (against log n alone {p_logn:.2f}). Real-valued keys "
        f"approaching -k_1 attain the bound in the limit (derivation, not measured). Random +-1 keys need {widths[0]:.0f} ... {widths[-1]:.0f}. "
        f"Reading 'every key retrieved by its own query': d >= ((n-1)/n log(...))^2 = {all_keys[0]:.1f} ... "
        f"{all_keys[-1]:.1f} (our derivation, ~4x); the Hadamard code needs {hadamard[0]:.0f} ... {hadamard[-1]:.0f} "
        f"(it needs d >= n/2, so it is close to that bound only for small n). Without a norm bound, width d = 2 "
        f"suffices: keys on a circle reach W_11 >= {1 - delta:g} once R^2 >= {r2[0]:.3g} (n={ns[0]}) ... "
        f"{r2[-1]:.3g} (n={ns[-1]}). The printed formula d >= (R^2/log((n-1)/(2 delta)))^2 at fixed R goes from "
        f"{paper[0]:.0f} to {paper[-1]:.1f} as n grows: with the 1/sqrt d scale it is an upper limit on d, and the "
        "(log n)^2 growth appears only when ||k||^2 <= d"
    )
    axes = Axes(
        "number of keys n",
        f"smallest softmax width d with W_11 >= {1 - delta:g}",
        "measured (best design: Hamming-shell code) >= bound (coordinates in [-1, 1], q = k_1)",
        log="xy",
    )
    extra = {
        "random +-1 keys (median of seeds)": widths,
        "every key retrieved: Hadamard code": hadamard,
        "every key retrieved: lower bound (our derivation)": all_keys.tolist(),
        "paper's printed formula at fixed R": paper.tolist(),
        "fitted exponent of log((n-1)(1-delta)/delta)": p,
        "fitted exponent of log n": p_logn,
        "width-2 counter-example": {"n": ns, "R^2 needed": r2},
    }
    return sweep_evidence(ns, shell, bound, (verdict, summary), axes, extra=extra)


SOFTMAX_WIDTH = attention_claim(
    "thm1-softmax-width",
    "Theorem 1 (section 2.3), softmax side",
    "Any softmax-based architecture needs width d = Omega((log n)^2) (or H = Omega(log n) heads) for a "
    "delta-approximation of exact retrieval.",
    "d >= (log((n-1)(1-delta)/delta) / 2)^2 when |q_i|, |k_i| <= 1 (our derivation); printed: "
    "d >= (R^2/log((n-1)/(2 delta)))^2",
    measure_softmax_width,
)


# --- Dense-key degradation (section 2.3) -----------------------------------------------------------


def measure_dense_keys(quick: bool = False, *, d: int = 2, eps: float = 1e-2):
    """Self-attention over n Gaussian keys in R^2: W_jj against 1/(1 + eps(n-1)/(r_j^2 + eps)) at the tightest key."""
    ns = powers(4, 256, 4) if quick else powers(4, 1024, 2)
    tight_w, tight_b, mean_w, soft_w = [], [], [], []
    for n in ns:
        k = random_points(n, d, generator=seeded(), dtype=F64)  # (n, d)
        w = ida_weights(k, k, eps=eps).diagonal().numpy()  # (n,)
        b = th.retrieval_weight_lower_bound(eps, n, nn_distance(k).numpy())  # (n,)
        j = int(np.argmin((w - b) / b))
        tight_w.append(w[j])
        tight_b.append(b[j])
        mean_w.append(float(w.mean()))
        soft_w.append(float(softmax_weights(k, k).diagonal().mean()))
    judged = verdict_inequality(tight_w, tight_b, relation="ge", rtol=1e-9)
    note = (
        f". Mean own-key weight {mean_w[0]:.3f} (n={ns[0]}) -> {mean_w[-1]:.3f} (n={ns[-1]}) at eps={eps:g}; "
        f"softmax {soft_w[0]:.3f} -> {soft_w[-1]:.3g}"
    )
    axes = Axes(
        f"number of Gaussian keys n in R^{d}",
        "own-key weight W_jj (key with the tightest margin)",
        "measured >= bound",
        log="x",
    )
    extra = {"IDA mean W_jj": mean_w, "softmax mean W_jj": soft_w}
    return sweep_evidence(ns, tight_w, tight_b, judged, axes, note=note, extra=extra)


DENSE_KEYS = attention_claim(
    "sec2.3-dense-key-degradation",
    "Section 2.3, dense-key degradation",
    "If the other keys lie at distance >= r from key j, its self-attention weight is at least "
    "1/(1 + eps (n-1)/(r^2 + eps)).",
    "W_jj >= 1/(1 + eps (n-1)/(r^2 + eps))",
    measure_dense_keys,
)


def measure_nn_radius(quick: bool = False):
    """Median squared nearest-neighbour distance of n Gaussian keys, d = 2 and 4, against n^{-2/d}."""
    ns = powers(16, 1024, 4) if quick else powers(16, 1024, 2)
    seeds = range(2 if quick else 3)
    r2 = {d: [] for d in (2, 4)}
    for d, series in r2.items():
        for n in ns:
            radii = [nn_distance(random_points(n, d, generator=seeded(s))).pow(2).median() for s in seeds]
            series.append(float(np.mean(radii)))
    fits = {d: verdict_scaling(ns, r2[d], exponent=-2.0 / d, tol=0.15, what=f"r^2 (d={d})") for d in r2}
    verdict = HOLDS if all(f[0] == HOLDS for f in fits.values()) else FAILS
    summary = "; ".join(f[1] for f in fits.values()) + ". The constant in Theta(d sigma^2 n^{-2/d}) is not given"
    n_a = np.array(ns, dtype=float)
    axes = Axes(
        "number of Gaussian keys n (sigma = 1)",
        "median squared nearest-neighbour distance r^2",
        "log-log slope of measured = slope of the prediction (-2/d)",
        log="xy",
    )
    extra = {"measured, d = 4": r2[4], "d n^{-2/d}, d = 4": th.gaussian_nn_radius_sq(n_a, 4).tolist()}
    headline = dict(
        measured_value=fits[2][2],
        bound_value=-2.0 / 2,
        headline="log-log exponent of r^2 in n at d = 2 (fitted; predicted)",
    )  # the fitted exponent for d = 2
    predicted = th.gaussian_nn_radius_sq(n_a, 2)
    return sweep_evidence(ns, r2[2], predicted, (verdict, summary), axes, extra=extra, **headline)


NN_RADIUS = attention_claim(
    "sec2.3-gaussian-nn-radius",
    "Section 2.3, Gaussian keys",
    "For Gaussian keys with covariance sigma^2 I, the squared radius around a key scales as "
    "r^2 = Theta(d sigma^2 n^{-2/d}).",
    "r^2 = Theta(d sigma^2 n^{-2/d}); headline: fitted exponent of n for d = 2 (predicted -1)",
    measure_nn_radius,
)


# --- Lemma 1: Lipschitz scaling --------------------------------------------------------------------


ASCENT_QUICK = Ascent(n_each=8, steps=40, lr=0.3)  # a few seconds for the app and the tests
ASCENT_FULL = Ascent(n_each=16, steps=150, lr=0.3)  # the CLI sweep: ~16 min at 32 starts x 300 steps


def measure_lipschitz(quick: bool = False, *, d: int = 8, eps: float = 1e-2, spread: float = 0.05):
    """Lemma 1's constants as suprema: the largest query-Jacobian norm found by gradient ascent from many
    starts (keys, sqrt(eps/3) from keys, midpoints, random), random vs clustered keys, IDA vs softmax, as n
    grows; and, for clustered keys, the IDA constant as eps moves across the cluster spread^2."""
    ns = powers(8, 512, 8) if quick else powers(4, 1024, 4)
    ascent = ASCENT_QUICK if quick else ASCENT_FULL
    sw = lipschitz_sweep(ns, d=d, eps=eps, spread=spread, ascent=ascent)
    series = sw.sup
    # (N, 2): random, clustered keys; R is the distance from the best query to the farthest key
    paper = np.array(
        [
            [float(th.lipschitz_ida_paper_bound(n, eps, sw.radius[kind][i], sw.v_max[i])) for kind in KEY_LAYOUTS]
            for i, n in enumerate(ns)
        ]
    )
    sharp = [float(th.lipschitz_ida_sharp_bound(eps, v_max)) for v_max in sw.v_max]
    soft_sharp = [
        float(th.lipschitz_softmax_sharp_bound(d, vm, km)) for vm, km in zip(sw.v_max, sw.k_max, strict=True)
    ]
    ida_all = series["ida_random"] + series["ida_clustered"]
    verdict, summary = verdict_inequality(ida_all, paper.T.ravel(), relation="le", rtol=1e-9)
    slopes = {name: fit_loglog_slope(ns, s) for name, s in series.items()}
    under_sharp = all(m <= b * (1 + 1e-9) for m, b in zip(series["ida_random"], sharp, strict=True))
    soft_under = all(m <= b * (1 + 1e-9) for m, b in zip(series["soft_random"], soft_sharp, strict=True))
    ratio = series["ida_random"][-1] / series["soft_random"][-1]
    contrast = slopes["soft_random"] > slopes["ida_random"] and ratio < 1
    across = lipschitz_across_spread(np.logspace(-2, 2, 3 if quick else 9), d=d, spread=spread, ascent=ascent)
    summary += (
        f". Suprema estimated by gradient ascent on ||d o/d q|| from many starts ({ascent.steps} Adam steps from "
        f"{ascent.n_each} starts of each kind: a lower estimate of each sup; random probes alone found "
        f"{sw.probed[-1] / series['ida_random'][-1]:.2f}x the ascent's value at n={ns[-1]}). The bound exceeds the "
        f"measurement {np.min(paper.T.ravel() / ida_all):.3g}-fold or more. Growth with n: IDA "
        f"n^{slopes['ida_random']:.2f} (random keys), n^{slopes['ida_clustered']:.2f} (clustered); softmax "
        f"n^{slopes['soft_random']:.2f}, n^{slopes['soft_clustered']:.2f}. IDA stays "
        f"{'under' if under_sharp else 'ABOVE'} the n-independent bound max||v||/sqrt(eps) and softmax "
        f"{'under' if soft_under else 'ABOVE'} max||v|| max||k||/sqrt(d) (our derivations). L_IDA / L_softmax = "
        f"{ratio:.3g} at n={ns[-1]}, eps={eps:g}: the table's softmax-O(n)-vs-IDA-O(log n) contrast is "
        f"{'seen' if contrast else 'not seen'} here. " + _spread_sentence(across, spread)
    )
    axes = Axes(
        "number of keys n",
        "sup ||d o / d q||_2 (gradient ascent on the query)",
        "measured <= bound (random and clustered keys)",
        log="xy",
    )
    extra = {
        "IDA, clustered keys": series["ida_clustered"],
        "softmax, random keys": series["soft_random"],
        "softmax, clustered keys": series["soft_clustered"],
        "IDA, random keys, random probes only": sw.probed,
        "max||v||/sqrt(eps) (n-independent)": sharp,
        "max||v|| max||k|| / sqrt(d) (softmax, random keys)": soft_sharp,
        "clustered keys: L_IDA across eps / spread^2": {
            "eps / spread^2": across.rho.tolist(),
            "L_IDA": across.sup,
            "L_IDA sqrt(eps) / max||v||": across.fraction,
        },
    }
    return sweep_evidence(ns, series["ida_random"], paper[:, 0], (verdict, summary), axes, extra=extra)


def _spread_sentence(across: SpreadSweep, spread: float) -> str:
    """What the eps / spread^2 sweep found, in words chosen by the numbers."""
    rho, L, frac = across.rho, np.array(across.sup), np.array(across.fraction)
    i = int(np.argmax(frac))
    return (
        f"Clustered keys (spread {spread:g}, n = 64), eps from {rho[0]:g} to {rho[-1]:g} spread^2: L_IDA goes "
        f"{L[0]:.3g} -> {L[-1]:.3g}, {'falling' if L[-1] < L[0] else 'rising'} with eps; as a fraction of the "
        f"n-independent bound max||v||/sqrt(eps) it is {frac[0]:.2g} at the smallest eps, largest ({frac[i]:.2g}) at "
        f"eps = {rho[i]:g} spread^2 and {frac[-1]:.2g} at the largest: for eps << spread^2 the constant is set by "
        "the distances between keys inside a cluster, not by eps"
    )


LIPSCHITZ = attention_claim(
    "lemma1-lipschitz",
    "Lemma 1 (section 2.4)",
    "The attention output is Lipschitz in the query with L_IDA = O(1 + log n L_W^2 R^2) for clustered keys and "
    "O(n) in general; L_soft = O(n L_W^2 R^2 / d).",
    "||d o_i / d q_i|| <= max||v|| * 4 n R / eps (general case, R = max ||q - k_j||)",
    measure_lipschitz,
)


CLAIMS = (
    *EXACT_RETRIEVAL,
    ORTHOGONAL,
    SOFTMAX_WIDTH,
    DENSE_KEYS,
    NN_RADIUS,
    LIPSCHITZ,
)
