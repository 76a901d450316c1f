"""Closed forms behind the seeds' smaller statements: proof steps, identities and side remarks of the paper
(sections 2.2-2.8, 5.1-5.3, 8.1, 11.4) and of seed 004, one function per formula with its section.

Every function is vectorised over numpy arrays. Where the paper prints a formula that a measurement
contradicts, the printed form is what is here; the claims beside it measure the truth.
"""

from __future__ import annotations

import numpy as np

FLOAT64_ULP = 2.0**-52  # unit round-off of float64


def _f(x):
    return np.asarray(x, dtype=float)


def far_key_relative_bound(eps, d):
    """Section 2.2: (d^2 + eps)^-1 <= (eps / d^2)(1 / eps): a key at distance d weighs at most eps/d^2 of the
    own-key kernel 1/eps."""
    return _f(eps) / _f(d) ** 2


def concentration_tail_paper(t, d, c, sigma=1.0):
    """Section 2.2, distance concentration as printed: P(| ||q - k||^2 - 2 d sigma^2 | >= t) <= 2 exp(-c d t^2 / sigma^4),
    q, k ~ N(0, sigma^2 I_d) independent; the constant c is not given."""
    return np.exp(concentration_log_tail_paper(t, d, c, sigma))


def concentration_log_tail_paper(t, d, c, sigma=1.0):
    """The logarithm of ``concentration_tail_paper``, log 2 - c d t^2 / sigma^4 (no underflow at large t)."""
    return np.log(2.0) - _f(c) * _f(d) * _f(t) ** 2 / _f(sigma) ** 4


def gaussian_ball_radius_paper(d, sigma=1.0, C=1.0):
    """Section 2.3: Gaussian keys lie in a ball of radius O(d_h sigma) with high probability, read as C d_h sigma."""
    return _f(C) * _f(d) * _f(sigma)


def inverse_square_gradient_argmax_sq(eps):
    """Lemma 1, proof step: a / (a^2 + eps)^2 is largest at a^2 = eps / 3 (set its derivative to zero)."""
    return _f(eps) / 3.0


def inverse_square_gradient_peak(eps):
    """Lemma 1, proof step: the peak value sqrt(eps/3) / (4 eps / 3)^2 = (9 / 16) 3^-1/2 eps^-3/2 = O(eps^-3/2)."""
    return 9.0 / (16.0 * np.sqrt(3.0)) * _f(eps) ** -1.5


def kernel_taylor_third_order(q, eps):
    """Theorem 2, proof: A(q) = (q^2 + eps)^-1 = 1/eps - q^2/eps^2 + q^4/eps^3 + O(q^6) (series for q^2 < eps)."""
    q, eps = _f(q), _f(eps)
    return 1.0 / eps - q**2 / eps**2 + q**4 / eps**3


def kernel_taylor_remainder_bound(q, eps):
    """The O(q^6) remainder of ``kernel_taylor_third_order`` made explicit: |R(q)| <= q^6 / eps^4 (geometric series)."""
    return _f(q) ** 6 / _f(eps) ** 4


def two_key_logit_gap(q, delta, scale):
    """Theorem 2, proof: s(q) = scale (q k_1 - q k_2) = -scale delta q with k_1 = 0, k_2 = delta (printed scale 1/d)."""
    return -_f(scale) * _f(delta) * _f(q)


def gershgorin_offdiagonal_bound(n, d_min):
    """Theorem 3, proof: |lambda_m(E)| <= max_i sum_{j != i} |E_ij| <= (n - 1) / d_min^2."""
    return (_f(n) - 1.0) / _f(d_min) ** 2


def effective_rank_from_offdiagonal(n, eps, e_fro_sq):
    """Theorem 3, proof: eff-rank(K) = (n / eps)^2 / (n / eps^2 + ||E||_F^2) when K_ii = 1/eps and E = K - diag(K)."""
    n, eps = _f(n), _f(eps)
    return (n / eps) ** 2 / (n / eps**2 + _f(e_fro_sq))


def kernel_frobenius_bound(n, d_min, eps):
    """Lemma 5.1, proof: ||E||_F^2 <= n (n - 1) / (d_min^2 + eps)^2, E the off-diagonal part of the kernel."""
    n = _f(n)
    return n * (n - 1.0) / (_f(d_min) ** 2 + _f(eps)) ** 2


def hyperbolic_lower_bound_paper(euclidean_distance, rho):
    """Section 5.3: d_H(x, y) >= ||x - y|| / (1 - rho^2) for ||x||, ||y|| <= rho < 1 (as printed)."""
    return _f(euclidean_distance) / (1.0 - _f(rho) ** 2)


def hyperbolic_origin_sq_paper(q):
    """Section 5.3: d_H(q, k_1)^2 = q^2 + O(q^4) for k_1 at the origin (leading term as printed)."""
    return _f(q) ** 2


def sphere_w1_second_derivative_paper(eps, theta):
    """Theorem 8.1, proof: W_1''(0) = -4 eps / theta^4 + O(eps^2 / theta^6) (leading term as printed)."""
    return -4.0 * _f(eps) / _f(theta) ** 4


def sphere_logit_gap(theta, scale):
    """Theorem 8.1, proof: the softmax logit difference at t = 0 is s(0) = scale (1 - cos theta) (printed scale 1/d_h)."""
    return _f(scale) * (1.0 - np.cos(_f(theta)))


def poincare_volume_element(norm, d):
    """Proposition 2 (section 11.4): the Riemannian volume element of the Poincaré ball, (2 / (1 - ||c||^2))^d;
    its logarithm is d log(1/(1 - ||c||^2)) + d log 2, the reading of I(k; c_e) ~ log(1/(1 - ||c_e||^2))."""
    return (2.0 / (1.0 - _f(norm) ** 2)) ** int(d)


def plunge_log_term(eps):
    """Seed 004: L~ = ln(1 / (eps (1 - eps)))."""
    eps = _f(eps)
    return np.log(1.0 / (eps * (1.0 - eps)))


def plunge_bound(eps, ca, C=1.0):
    """Seed 004, plunge estimate: Lambda_eps <= C L~ (1 + ln_+(c a / L~)), L~ = ln(1/(eps(1 - eps)))."""
    L = plunge_log_term(eps)
    return _f(C) * L * (1.0 + np.maximum(np.log(_f(ca) / L), 0.0))


def power_law_tail_bound(m, C, alpha):
    """Theorem 5.5, spectral-decay variant: lambda_k <= C k^-alpha (alpha > 1/2) gives
    sum_{k > m} lambda_k^2 <= C^2 int_m^inf x^(-2 alpha) dx = C^2 m^(1 - 2 alpha) / (2 alpha - 1) = O(m^(-2 alpha + 1))."""
    alpha = _f(alpha)
    return _f(C) ** 2 * _f(m) ** (1.0 - 2.0 * alpha) / (2.0 * alpha - 1.0)


def pl_ratio_sphere_omega(theta):
    """Theorem 8.1 (section 8.1): mu_SIDA / mu_soft = Omega(exp(1 - cos theta) / theta^2), the ratio of
    Theta(eps^2/theta^4) and Theta(exp(-(1 - cos theta)) eps^2/theta^2)."""
    theta = _f(theta)
    return np.exp(1.0 - np.cos(theta)) / theta**2


def memoriser_test_error_paper(eta):
    """Theorem 3 (section 2.7), proof: a model at zero training error on labels flipped at rate eta has test
    error eta (binary) or 2 eta (balanced multi-class) on clean labels, as printed."""
    return 2.0 * _f(eta)


def noisy_pair_disagreement(eta, n_classes):
    """P(two independent symmetric flips of one label differ) = 1 - (1 - eta)^2 - eta^2 / (K - 1): the test
    error of a perfect memoriser scored against noisy test labels (about 2 eta for small eta)."""
    eta, k = _f(eta), _f(n_classes)
    return 1.0 - (1.0 - eta) ** 2 - eta**2 / (k - 1.0)


def lemma1_weight_jacobian_bound(n, radius, eps):
    """Lemma 1 (section 2.4), proof: sum_j ||dW_ij / dq_i||_2 <= 4 n R / eps, R bounding ||q_i - k_j||."""
    return 4.0 * _f(n) * _f(radius) / _f(eps)


def lhida_output_error_bound(v_fro, eps, kernel_error_fro):
    """Theorem 5.5 (section 5.5), proof, last line: ||o^L-HIDA - o^HIDA||_F <= (2 ||V||_F / eps) ||K~_nn - K_nn||_F."""
    return 2.0 * _f(v_fro) / _f(eps) * _f(kernel_error_fro)


def nystrom_frobenius_step_bound(kmm_inv_norm, knm_fro, e_fro):
    """Theorem 5.5 (section 5.5), proof: ||K_nn^(m) - K_nm K_mm^-1 K_mn||_F <= ||K_mm^-1||_2 ||K_nm||_F ||E||_F,
    E not defined in the paper (the claim measures each reading)."""
    return _f(kmm_inv_norm) * _f(knm_fro) * _f(e_fro)
