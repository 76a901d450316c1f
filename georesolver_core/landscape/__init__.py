"""Loss landscapes of inverse-distance attention vs softmax, in the plane, the Poincaré ball and on the sphere.

- ``loss``: Lemma 2's retrieval loss and ``LossSetup``, the kernel and geometry every view shares;
- ``two_key``: Theorem 2 / 5.3 / 8.1 set-up: L, |grad L|^2, the PL ratio along the geodesic, mu;
- ``grid``: the loss of one query over a 2-D patch of each geometry, and its local minima;
- ``descent``: Riemannian gradient descent paths (geoopt RiemannianSGD on ManifoldParameters);
- ``hessian``: Lemma 2's Hessian at the equidistant initialisation;
- ``model_slice``: a small model trained here, sliced along filter-normalised directions that
  move manifold parameters along the manifold.
"""

from georesolver_core.landscape.descent import (
    OUTCOMES,
    DescentPaths,
    classify_paths,
    confirmed_spurious,
    descent_paths,
    manifold_of,
    reached_global,
)
from georesolver_core.landscape.grid import (
    LandscapeGrid,
    Patch,
    chart_to_points,
    grid_local_minima,
    landscape_grid,
    points_to_chart,
    random_keys,
)
from georesolver_core.landscape.hessian import (
    HessianSpectrum,
    equidistant_setup,
    hessian_spectrum,
    hessian_sweep,
    riemannian_hessian,
)
from georesolver_core.landscape.loss import (
    LossSetup,
    retrieval_loss,
    retrieval_weights,
    riemannian_grad_sq,
)
from georesolver_core.landscape.model_slice import (
    ModelSlice,
    ProtoNet,
    SliceModelConfig,
    TrainedModel,
    blobs_task,
    filter_normalised_directions,
    model_slice,
    train_model,
)
from georesolver_core.landscape.two_key import (
    PLProfile,
    TwoKeyLine,
    loss_star,
    mu_sweep,
    pl_profile,
    two_key_keys,
)

__all__ = [
    "OUTCOMES",
    "DescentPaths",
    "HessianSpectrum",
    "LandscapeGrid",
    "LossSetup",
    "ModelSlice",
    "PLProfile",
    "Patch",
    "ProtoNet",
    "SliceModelConfig",
    "TrainedModel",
    "TwoKeyLine",
    "blobs_task",
    "chart_to_points",
    "classify_paths",
    "confirmed_spurious",
    "descent_paths",
    "equidistant_setup",
    "filter_normalised_directions",
    "grid_local_minima",
    "hessian_spectrum",
    "hessian_sweep",
    "landscape_grid",
    "loss_star",
    "manifold_of",
    "model_slice",
    "mu_sweep",
    "pl_profile",
    "points_to_chart",
    "random_keys",
    "reached_global",
    "retrieval_loss",
    "retrieval_weights",
    "riemannian_grad_sq",
    "riemannian_hessian",
    "train_model",
    "two_key_keys",
]
