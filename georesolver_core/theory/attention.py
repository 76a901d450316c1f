"""Closed-form bounds of the Euclidean Resolver (paper sections 2.3-2.8) and Lemma 5.1.

Every function is vectorised over numpy arrays and returns floats or arrays. Where the paper's
printed formula and its statement disagree, both are here, each with its own name and docstring,
so pages and claims can draw the two against a measurement.
"""

from __future__ import annotations

import numpy as np

DEGRADATION_THRESHOLD = 0.5  # section 2.8: eps (n - 1) / d_min^2 >= 1/2 is the "degradation regime"
RECOMMENDED_EPS_FRACTION = 0.01  # section 2.8: eps ~ 0.01 E||q - k||^2


def _f(x):
    return np.asarray(x, dtype=float)


def retrieval_weight_lower_bound(eps, n, r):
    """Lemma (section 2.3) and dense-key degradation: W_jj >= 1 / (1 + eps (n - 1) / (r^2 + eps)).

    For a query equal to key j whose n - 1 other keys lie at distance >= r, the own-key kernel is
    1/eps and every other one is at most 1/(r^2 + eps). As eps -> 0 the bound tends to 1: exact
    retrieval (Lemma 5.1(a) for any metric).
    """
    eps, n, r = _f(eps), _f(n), _f(r)
    return 1.0 / (1.0 + eps * (n - 1.0) / (r**2 + eps))


def retrieval_leak_upper_bound(eps, n, r):
    """The same bound as the weight leaked to the other keys: 1 - W_jj <= x / (1 + x), x = eps (n-1)/(r^2+eps).

    Written without the subtraction so that leaks of 1e-12 stay exact in floating point.
    """
    eps, n, r = _f(eps), _f(n), _f(r)
    x = eps * (n - 1.0) / (r**2 + eps)
    return x / (1.0 + x)


def orthogonal_ida_weight(n, R, eps):
    """Theorem 1 (section 2.3), IDA side: keys k_j = R e_j, q = k_1 give W_11 = 1 / (1 + eps (n-1) / (2R^2 + eps)).

    Exact, not a bound: every other key is at squared distance 2 R^2.
    """
    n, R, eps = _f(n), _f(R), _f(eps)
    return 1.0 / (1.0 + eps * (n - 1.0) / (2.0 * R**2 + eps))


def orthogonal_softmax_weight(n, R, d):
    """Theorem 1 (section 2.3), softmax side: W_11 = 1 / (1 + (n - 1) exp(-R^2 / sqrt d)) with scale 1/sqrt d.

    Exact on the orthogonal-keys instance: the matched logit is R^2/sqrt d, every other logit is 0.
    """
    n, R, d = _f(n), _f(R), _f(d)
    return 1.0 / (1.0 + (n - 1.0) * np.exp(-(R**2) / np.sqrt(d)))


def delta_log(n, delta):
    """log((n - 1)(1 - delta) / delta): the logit gap softmax needs for W_11 >= 1 - delta among n keys."""
    n, delta = _f(n), _f(delta)
    return np.log((n - 1.0) * (1.0 - delta) / delta)


def softmax_width_paper_formula(n, R, delta):
    """Theorem 1's proof as printed: "d >= (R_max^2 / log((n - 1)/(2 delta)))^2 = Omega((log n)^2)".

    At fixed R this expression *decreases* with n. Solving 1/(1 + (n-1) e^{-R^2/sqrt d}) >= 1 - delta
    for d gives d <= (R^2 / log((n-1)(1-delta)/delta))^2: with the 1/sqrt d scale a wider head makes
    softmax flatter, so the printed inequality points the wrong way and cannot give a lower bound.
    """
    n, R, delta = _f(n), _f(R), _f(delta)
    return (R**2 / np.log((n - 1.0) / (2.0 * delta))) ** 2


def softmax_width_lower_bound_bounded(n, delta, b=1.0):
    """A lower bound on softmax width when every coordinate of q and k lies in [-b, b] (scale 1/sqrt d).

    Then q.k_1 - q.k_j <= 2 d b^2, so every logit gap is at most 2 b^2 sqrt d and
    W_11 <= 1 / (1 + (n - 1) exp(-2 b^2 sqrt d)). W_11 >= 1 - delta therefore needs
    d >= (log((n-1)(1-delta)/delta) / (2 b^2))^2 = Omega((log n)^2): the reading under which
    Theorem 1's width statement holds. (Our derivation; the paper states the growth without this condition.)
    """
    return (delta_log(n, delta) / (2.0 * float(b) ** 2)) ** 2


def softmax_width_lower_bound_all_keys(n, delta, b=1.0):
    """The width softmax needs when EVERY key is retrieved by its own query (W_ii >= 1 - delta for all i),
    coordinates in [-b, b], scale 1/sqrt d (our derivation).

    sum_{i != j} (k_i.k_i - k_i.k_j) = n sum_i |k_i|^2 - |sum_i k_i|^2 <= n^2 d b^2, so some key i has mean
    logit gap at most n b^2 sqrt(d) / (n - 1); by Jensen W_ii <= 1 / (1 + (n - 1) exp(-that)). Hence
    d >= ((n - 1) log((n-1)(1-delta)/delta) / (n b^2))^2, about 4x the single-query bound.
    """
    n = _f(n)
    return ((n - 1.0) * delta_log(n, delta) / (n * float(b) ** 2)) ** 2


def gaussian_nn_radius_sq(n, d, sigma=1.0):
    """Dense-key degradation (section 2.3): for Gaussian keys, r^2 = Theta(d sigma^2 n^{-2/d}) (constant 1 here).

    A Theta statement: only the exponent -2/d of n is testable; the constant is not given.
    """
    n, d = _f(n), _f(d)
    return d * float(sigma) ** 2 * n ** (-2.0 / d)


def lipschitz_ida_paper_bound(n, eps, R, v_max):
    """Lemma 1 (section 2.4), general case: sum_j ||dW_ij/dq_i|| <= 4 n R / eps, so ||do_i/dq_i|| <= 4 n R v_max / eps.

    R bounds ||q - k_j||, v_max bounds ||v_j||. Grows linearly in n.
    """
    n, eps, R, v_max = _f(n), _f(eps), _f(R), _f(v_max)
    return 4.0 * n * R * v_max / eps


def lipschitz_ida_sharp_bound(eps, v_max):
    """An n-independent bound: ||do/dq|| <= v_max / sqrt(eps) for IDA with any number of keys (our derivation).

    do/dq = sum_j W_j (v_j - vbar) g_j^T with g_j = -2 (q - k_j) / (||q - k_j||^2 + eps), and
    ||g_j|| = 2a / (a^2 + eps) <= 1/sqrt(eps) (AM-GM); Cauchy-Schwarz over the weights gives the bound.
    """
    return _f(v_max) / np.sqrt(_f(eps))


def lipschitz_softmax_sharp_bound(d, v_max, k_max):
    """The softmax analogue: do/dq = (1/sqrt d) Cov_W(v, k), so ||do/dq|| <= v_max k_max / sqrt(d) (our derivation)."""
    return _f(v_max) * _f(k_max) / np.sqrt(_f(d))


def effective_rank_bound(n, eps, d_min):
    """Theorem 3 (section 2.7) and Lemma 5.1(b): eff-rank(K) <= 1 + n eps^2 / d_min^4, stated for eps << d_min^2.

    K_ij = (d(x_i, x_j)^2 + eps)^-1 and eff-rank(K) = (tr K)^2 / tr(K^2).
    """
    n, eps, d_min = _f(n), _f(eps), _f(d_min)
    return 1.0 + n * eps**2 / d_min**4


def effective_rank_small_eps_limit(n):
    """As eps -> 0, K -> I / eps and eff-rank(K) -> n (our derivation): the opposite of the stated bound."""
    return _f(n)


def effective_rank_large_eps(mean_sq_dist, eps, n):
    """For eps >> d^2, K ~ (1/eps) 1 1^T - D/eps^2 and eff-rank(K) ~ 1 + 2 ((n-1)/n) mean_{i!=j} d_ij^2 / eps.

    First order in d^2/eps (our expansion; the diagonal's zeros give the (n-1)/n). This is the regime
    where the rank collapses towards 1, i.e. where the paper's E_ij = K_ij - 1/eps is small.
    """
    n = _f(n)
    return 1.0 + 2.0 * (n - 1.0) / n * _f(mean_sq_dist) / _f(eps)


def degradation_index(eps, n, d_min):
    """Section 2.8: eps (n - 1) / d_min^2. At or above DEGRADATION_THRESHOLD the own-key weight is degraded."""
    eps, n, d_min = _f(eps), _f(n), _f(d_min)
    return eps * (n - 1.0) / d_min**2


def in_degradation_regime(eps, n, d_min, threshold=DEGRADATION_THRESHOLD):
    """Section 2.8's verdict for these keys: degradation_index(eps, n, d_min) >= threshold (1/2)."""
    return degradation_index(eps, n, d_min) >= float(threshold)


def recommended_eps(mean_sq_dist, fraction=RECOMMENDED_EPS_FRACTION):
    """Section 2.8's advice: eps ~ 0.01 E||q_i - k_j||^2."""
    return float(fraction) * _f(mean_sq_dist)


def max_safe_eps(n, d_min, threshold=DEGRADATION_THRESHOLD):
    """The largest eps outside the degradation regime: eps < threshold d_min^2 / (n - 1). Shrinks like 1/n."""
    n, d_min = _f(n), _f(d_min)
    return float(threshold) * d_min**2 / np.maximum(n - 1.0, 1.0)


def orthogonal_ida_eps_for(n, R, delta):
    """The largest eps with W_11 >= 1 - delta on the orthogonal instance: eps <= 2 R^2 delta / ((1-delta)(n-1) - delta).

    Solved from Theorem 1's closed form; it shrinks like 1/n.
    """
    n, R, delta = _f(n), _f(R), _f(delta)
    return 2.0 * R**2 * delta / ((1.0 - delta) * (n - 1.0) - delta)
