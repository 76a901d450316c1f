"""Closed forms of the training claims: HyperGate's gradient bound (section 7, Theorem 7.1) and the
noise-memorisation half of Theorem 3 (section 2.7). Vectorised over numpy arrays."""

from __future__ import annotations

import numpy as np

SIGMOID_SLOPE_MAX = 0.25  # max of sigma'(z) = sigma(z)(1 - sigma(z)), reached at z = 0


def _f(x):
    return np.asarray(x, dtype=float)


def hypergate_gradient_lower_bound(lambda_min, w_norm, x_norm):
    """Theorem 7.1: ||dL/dx_i|| / ||dL/dh_i|| >= lambda_min(G_i) - ||W_g|| ||x_i|| / 4.

    h_i = G_i x_i with G_i = diag(sigma(W_g x_i)) has Jacobian G_i + diag(sigma'(.) x_i) W_g; Weyl's
    inequality and sigma' <= 1/4 give the bound, the paper's O(||W_g|| ||x_i||) with its constant 1/4.
    """
    return _f(lambda_min) - SIGMOID_SLOPE_MAX * _f(w_norm) * _f(x_norm)


def hypergate_vacuous_radius(lambda_min, w_norm):
    """The norm ||x_i|| beyond which the Theorem 7.1 bound is <= 0 and says nothing: 4 lambda_min / ||W_g||."""
    w = _f(w_norm)
    return np.where(w > 0, _f(lambda_min) / (SIGMOID_SLOPE_MAX * np.where(w > 0, w, 1.0)), np.inf)


def softmax_memorisation_train_error(d_h, n):
    """Theorem 3 (section 2.7): once d_h >= n softmax attention can reach zero training error on
    arbitrary (noisy) labels. Returns 0 where d_h >= n and 1 (no statement) elsewhere."""
    return np.where(_f(d_h) >= _f(n), 0.0, 1.0)


def softmax_memorisation_test_error(eta, n_classes=2):
    """Theorem 3: the memorising model's test error on clean labels -> eta (binary) or 2 eta (balanced multi-class)."""
    return _f(eta) * (1.0 if n_classes == 2 else 2.0)


def ida_noise_test_error_bound(eta, n, C=1.0, c_n=1.0):
    """Theorem 3: E_test^IDA <= C eta^2 + O(1/n) (the summary of the paper writes O(1/sqrt n)); C and the
    O-constant are not given, so claims fit the exponents in eta and n rather than judge a number."""
    return C * _f(eta) ** 2 + c_n / _f(n)
