"""Figures of the Landscapes lab, one module per kind of figure; this module gathers their public names.

- ``landscape_pl``: PL profiles and sweeps on the two-key line, Hessian spectra (Lemma 2);
- ``landscape_surface``: 2-D landscapes, surface beside contour map;
- ``landscape_descent``: descent paths animated over a 2-D landscape;
- ``landscape_model``: the slice through a trained model and its training curve.
"""

from __future__ import annotations

from georesolver_core.viz.landscape_descent import PATH_COLORS
from georesolver_core.viz.landscape_model import history_figure, model_slice_figure
from georesolver_core.viz.landscape_pl import (
    fitted_shape,
    hessian_figure,
    pl_profile_figure,
    pl_sweep_figures,
    sweep_figure,
)
from georesolver_core.viz.landscape_surface import landscape_figure

__all__ = [
    "PATH_COLORS",
    "fitted_shape",
    "hessian_figure",
    "history_figure",
    "landscape_figure",
    "model_slice_figure",
    "pl_profile_figure",
    "pl_sweep_figures",
    "sweep_figure",
]
