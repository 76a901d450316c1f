"""Hierarchy embeddings in the Poincaré ball, on the sphere and in flat space (paper sections 4, 5.2, 8.2)."""

from georesolver_core.embeddings.metrics import (
    center_on,
    compare_hierarchy_capacity,
    distance_to_origin,
    distortion,
    embedding_distances,
    embedding_metrics,
    node_table,
    reconstruction,
    relative_radius,
    rim_saturation,
)
from georesolver_core.embeddings.model import (
    OPTIMIZERS,
    EmbeddingConfig,
    HierarchyEmbedding,
    make_manifold,
    nickel_kiela_loss,
    norm_order_penalty,
)
from georesolver_core.embeddings.trainer import EVENTS, EmbeddingTrainer, history_table, train_embedding

__all__ = [
    "EVENTS",
    "OPTIMIZERS",
    "EmbeddingConfig",
    "EmbeddingTrainer",
    "HierarchyEmbedding",
    "center_on",
    "compare_hierarchy_capacity",
    "distance_to_origin",
    "distortion",
    "embedding_distances",
    "embedding_metrics",
    "history_table",
    "make_manifold",
    "nickel_kiela_loss",
    "node_table",
    "norm_order_penalty",
    "reconstruction",
    "relative_radius",
    "rim_saturation",
    "train_embedding",
]
