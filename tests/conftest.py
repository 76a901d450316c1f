"""Shared fixtures: dtypes, geometries, random points of each geometry."""

from __future__ import annotations

import os
import sys
import tempfile

import pytest
import torch

from georesolver_core.device import one_cpu_thread
from georesolver_core.geometry import GEOMETRIES, embed

# The app's job runner writes its run folders here, not under the checkout (pages started in AppTest submit
# real jobs); its workers are spawned, so they read this too.
os.environ.setdefault("GR_RUNS_DIR", tempfile.mkdtemp(prefix="gr-test-runs-"))
# No spare worker warming beside the tests' own (tests/test_jobs.py checks the spare with its own runner).
os.environ.setdefault("GR_SPARE_WORKER", "0")

DTYPES = [torch.float32, torch.float64]
GEOMETRY_NAMES = list(GEOMETRIES)  # every geometry of the registry


@pytest.fixture(params=DTYPES, ids=["float32", "float64"])
def dtype(request):
    return request.param


@pytest.fixture(params=GEOMETRY_NAMES)
def geometry(request):
    return request.param


def random_points(geometry: str, *shape: int, dtype=torch.float64, seed: int = 0, c: float = 1.0) -> torch.Tensor:
    """Random valid points of a geometry: Gaussian in R^d, mapped into the ball, or normalised."""
    g = torch.Generator().manual_seed(seed)
    z = torch.randn(*shape, generator=g, dtype=torch.float64)
    return embed(z, geometry=geometry, c=c).to(dtype)


def tol(dtype) -> dict:
    """Tolerances per dtype: float32 is looser, as in geoopt's own tests."""
    return dict(rtol=1e-4, atol=1e-5) if dtype == torch.float32 else dict(rtol=1e-10, atol=1e-12)


@pytest.fixture
def one_thread():
    """torch on one intra-op thread for a test of tiny tensors (extra threads only add synchronisation)."""
    with one_cpu_thread():
        yield


@pytest.fixture(autouse=True)
def _no_job_outlives_its_test():
    """Jobs a page started in a test (AppTest sessions are never closed, so the runner would wait a minute
    to cancel them) are stopped when the test ends: the next test's run does not queue behind them."""
    yield
    runner = sys.modules.get("georesolver_core.jobs.runner")
    default = getattr(runner, "_DEFAULT", None)
    if default is not None and not default.closed:
        for owner in {h.owner for h in list(default.jobs.values())}:
            default.cancel_owner(owner)
