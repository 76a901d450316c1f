"""What the paper draws from its PL inequality and Hessian (section 2.6, the corollary): linear convergence of
gradient descent, and escape from the equidistant start in O(1) steps for IDA against O(n^2) for softmax.

Counted gradient steps, not timed. Float64 on the CPU; the two-key loss is the library's (``landscape``).
"""

from __future__ import annotations

import numpy as np
import torch

from georesolver_core.attention import ida_weights
from georesolver_core.claims.statements_ida import claim
from georesolver_core.landscape.two_key import TwoKeyLine, geodesic_path, loss_star, pl_profile
from georesolver_core.theory.landscape import ida_curvature_at_minimiser
from georesolver_core.verdicts import CONDITIONAL, FAILS, Axes, sweep_evidence, verdict_inequality, verdict_scaling

PAGE = "landscapes"  # its topic page (url path); the Claims page lists every claim
F64 = torch.float64


def max_curvature(setup, keys, half: float) -> float:
    """max |L''(s)| over |s| <= half (autograd on a grid): 1/this is a safe gradient step."""
    s = torch.linspace(-half, half, 2001, dtype=F64, requires_grad=True)
    (g,) = torch.autograd.grad(
        setup.loss(geodesic_path(keys, s, geometry="euclidean"), keys).sum(), s, create_graph=True
    )
    (h,) = torch.autograd.grad(g.sum(), s)
    return float(h.abs().max())


def measure_linear_convergence(quick: bool = False, *, eps: float = 1e-2, delta: float = 1.0):
    """Gradient descent on the two-key IDA loss from starts across the basin: the largest
    (L(t) - L*) / (e^{-mu t} (L(0) - L*)) over the run, mu the measured PL constant, t = step x lr."""
    line = TwoKeyLine("euclidean", eps=eps, delta=delta)
    mu = pl_profile("ida", line, n_basin=501).mu
    setup, keys = line.loss("ida"), line.keys()
    l_star, _ = loss_star(keys, setup)
    half = line.basin * delta / 2
    lr = 0.5 / max_curvature(setup, keys, half)
    starts = torch.linspace(-half, half, 7 if quick else 41, dtype=F64)
    starts = starts[starts.abs() > 1e-3 * half]
    s = starts.clone().requires_grad_(True)
    n_steps = 150 if quick else 4000
    with torch.no_grad():
        l0 = setup.loss(geodesic_path(keys, s, geometry="euclidean"), keys) - l_star  # (S,)
    worst = torch.zeros_like(starts)
    for k in range(1, n_steps + 1):
        loss = setup.loss(geodesic_path(keys, s, geometry="euclidean"), keys)
        (g,) = torch.autograd.grad(loss.sum(), s)
        with torch.no_grad():
            s -= lr * g
            gap = setup.loss(geodesic_path(keys, s, geometry="euclidean"), keys) - l_star
            resolved = gap > 1e-12 * l0
            ratio = gap / (torch.exp(torch.tensor(-mu * lr * k, dtype=F64)) * l0)
            worst = torch.where(resolved, torch.maximum(worst, ratio), worst)
    meas = worst.numpy()
    judged = verdict_inequality(meas, np.ones_like(meas), relation="le")
    note = (
        f". mu = {mu:.4g} (the measured PL constant over the basin, eps = {eps:g}, Delta = {delta:g}), lr = {lr:.3g} "
        f"(half the inverse of the largest curvature in the basin), {n_steps} steps; the curvature at the minimiser is "
        f"{float(ida_curvature_at_minimiser(eps, delta)):.3g}. The flow gives e^(-2 mu t) under PL; the printed "
        "e^(-mu t) has room, and the starts stay in the basin (1D descent is monotone)"
    )
    axes = Axes("start s_0 (arc length from key 1)", "max_t (L(t) - L*) / (e^(-mu t)(L(0) - L*))", "measured <= 1")
    return sweep_evidence(starts.numpy(), meas, np.ones_like(meas), judged, axes, note=note)


def escape_steps(
    kernel: str, n: int, *, rho: float = 1.0, eps: float = 1e-2, lr: float = 0.1, cap: int = 200_000
) -> int:
    """Gradient steps on L = (1 - W_11)^2 from q = 0 (equidistant from k_j = rho e_j, W_11 = 1/n) until W_11 >= 1/2.

    The weights are the library's: IDA ``ida_weights``; softmax of q.k_j (tau = 1). Steps are counted."""
    k = rho * torch.eye(n, dtype=F64)
    q = torch.zeros(1, n, dtype=F64, requires_grad=True)
    for step in range(cap):
        w = ida_weights(q, k, eps=eps)[0, 0] if kernel == "ida" else torch.softmax(q @ k.T, -1)[0, 0]
        if float(w.detach()) >= 0.5:
            return step
        (g,) = torch.autograd.grad((1 - w) ** 2, q)
        with torch.no_grad():
            q -= lr * g
    return cap


def _escape(quick: bool, kernel: str, exponent: float, claim_text: str, upper_bound_reading: bool = False):
    ns = [4, 8, 16, 32] if quick else [4, 8, 16, 32, 64, 128]
    steps = [float(escape_steps(kernel, n)) for n in ns]
    other = [float(escape_steps("softmax" if kernel == "ida" else "ida", n)) for n in ns]
    verdict, summary, p = verdict_scaling(ns, steps, exponent=exponent, tol=0.35, what=f"{kernel} escape steps")
    if upper_bound_reading and verdict == FAILS and p <= exponent:
        verdict = CONDITIONAL
        summary += f"; as an upper bound (O(n^{exponent:g})) it holds, as the contrast's rate Theta(n^{exponent:g}) it fails"
    summary = (
        f"Reading: the saddle as Lemma 2's equidistant initialisation (the point its curvature contrast is taken at): "
        f"q = 0 with keys rho e_j, W_11 = 1/n; escape time as gradient steps (lr = 0.1, counted) until W_11 >= 1/2. {summary}: {steps[0]:.0f} (n = {ns[0]}) -> {steps[-1]:.0f} "
        f"(n = {ns[-1]}); the other kernel needs {other[0]:.0f} -> {other[-1]:.0f}. {claim_text}"
    )
    pred = steps[0] * (np.array(ns) / ns[0]) ** exponent
    axes = Axes("number of keys n", "gradient steps to W_11 >= 1/2", f"log-log slope = {exponent:g}", log="xy")
    return sweep_evidence(
        ns,
        steps,
        pred,
        (verdict, summary),
        axes,
        measured_value=p,
        bound_value=exponent,
        headline="log-log exponent of the escape steps in n (fitted; predicted)",
        extra={"other kernel": other},
    )


def measure_escape_ida(quick: bool = False):
    return _escape(quick, "ida", 0.0, "The start's gradient is nonzero but O(1/n) for both kernels")


def measure_escape_softmax(quick: bool = False):
    return _escape(
        quick,
        "softmax",
        2.0,
        "Softmax's curvature Theta(n^-2) (Lemma 2) would predict n^2; its slope O(1/n) at the "
        "start already moves it",
        upper_bound_reading=True,
    )


CLAIMS = (
    claim("thm2-linear-convergence", "Theorem 2, corollary (section 2.6)",
          "Gradient descent converges linearly: L(t) - L* <= e^(-mu t) (L(0) - L*).",
          "(L(t) - L*) / (e^(-mu t) (L(0) - L*)) <= 1", measure_linear_convergence, page=PAGE),
    claim("thm2-saddle-escape-ida", "Theorem 2, corollary (section 2.6), IDA",
          "Lemma 2's Theta(1) Hessian spread enables O(1) escape from saddles for IDA.",
          "escape steps = O(1) in n (slope 0)", measure_escape_ida, page=PAGE),
    claim("thm2-saddle-escape-softmax", "Theorem 2, corollary (section 2.6), softmax",
          "Softmax needs O(n^2) escape time from saddles.", "escape steps ~ n^2 (slope 2)",
          measure_escape_softmax, page=PAGE),
)  # fmt: skip
