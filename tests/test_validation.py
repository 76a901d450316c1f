"""Bad input: every public entry point raises ValueError naming the argument, the value and the allowed range."""

from __future__ import annotations

import math
import re
import subprocess
import sys

import pytest
import torch

from georesolver_core.attention import ida, ida_weights, softmax_attention
from georesolver_core.geometry import GEOMETRIES, distance, geodesic, pairwise_distance, project, to_ball
from tests.conftest import random_points


@pytest.mark.parametrize("eps", [0.0, -0.1, math.nan, math.inf, 1e-40, 1e40, "small", None])
def test_bad_eps(eps):
    k = random_points("euclidean", 3, 2)
    with pytest.raises(ValueError, match=r"eps must be a number > 0 in \[1e-30, 1e\+30\]"):
        ida_weights(k, k, eps=eps)


def test_unknown_geometry():
    k = random_points("euclidean", 3, 2)
    names = re.escape(str(sorted(GEOMETRIES)))  # every registered geometry, whatever else is registered
    with pytest.raises(ValueError, match=rf"geometry must be one of {names} \(got 'hyperbolic'\)"):
        pairwise_distance(k, k, geometry="hyperbolic")


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_non_finite_tensors(bad):
    k = random_points("euclidean", 3, 2)
    q = k.clone()
    q[1, 0] = bad
    with pytest.raises(ValueError, match="q must be finite"):
        ida(q, k, k, eps=0.1)
    with pytest.raises(ValueError, match="v must be finite"):
        ida(k, k, q, eps=0.1)


def test_points_on_or_outside_the_poincare_rim():
    inside = random_points("poincare", 3, 2)
    for norm in (1.0, 1.5):
        rim = torch.tensor([[norm, 0.0]], dtype=torch.float64)
        with pytest.raises(ValueError, match=r"k must lie inside the Poincaré ball: norm < 1/sqrt\(c\) = 1"):
            ida_weights(inside, rim, eps=0.1, geometry="poincare")
    # a smaller ball for larger curvature: norm 0.6 is outside the ball of c = 4 (radius 0.5)
    with pytest.raises(ValueError, match=r"radius|1/sqrt\(c\) = 0.5"):
        pairwise_distance(torch.tensor([[0.6, 0.0]]), torch.zeros(1, 2), geometry="poincare", c=4.0)


@pytest.mark.parametrize("c", [0.0, -1.0, math.nan])
def test_bad_curvature(c):
    x = torch.zeros(2, 2)
    with pytest.raises(ValueError, match="c must be a finite number > 0"):
        pairwise_distance(x, x, geometry="poincare", c=c)


def test_points_off_the_sphere_and_zero_vectors():
    x = torch.tensor([[1.0, 0.0], [0.5, 0.5]])
    with pytest.raises(ValueError, match="x must be unit vectors on the sphere"):
        pairwise_distance(x, x, geometry="sphere")
    with pytest.raises(ValueError, match="zero vector"):
        project(torch.zeros(1, 3), geometry="sphere")


def test_shape_mismatches():
    q, k = random_points("euclidean", 3, 2), random_points("euclidean", 4, 3)
    with pytest.raises(ValueError, match="same last dimension"):
        ida_weights(q, k, eps=0.1)
    k = random_points("euclidean", 4, 2)
    with pytest.raises(ValueError, match=r"v must have shape \(\.\.\., m, dv\) with m = number of keys = 4"):
        ida(q, k, torch.zeros(5, 2, dtype=torch.float64), eps=0.1)
    with pytest.raises(ValueError, match="v must have shape"):
        softmax_attention(q, k, torch.zeros(5, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match="at least one key"):
        ida_weights(q, k[:0], eps=0.1)
    with pytest.raises(ValueError, match="must broadcast"):
        pairwise_distance(torch.zeros(2, 3, 2), torch.zeros(3, 3, 2), geometry="euclidean")
    with pytest.raises(ValueError, match=r"geodesic takes x \(d,\)"):
        geodesic(q, q, torch.linspace(0, 1, 3), geometry="euclidean")


def test_non_tensor_and_integer_inputs():
    with pytest.raises(ValueError, match="must be a torch.Tensor"):
        to_ball([1.0, 2.0])
    with pytest.raises(ValueError, match="floating-point"):
        distance(torch.ones(2, dtype=torch.long), torch.ones(2, dtype=torch.long), geometry="euclidean")


def test_library_import_does_not_import_streamlit():
    code = "import sys, georesolver_core, georesolver_core.claims, georesolver_core.viz.home; print('streamlit' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
