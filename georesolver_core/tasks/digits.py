"""scikit-learn's bundled handwritten digits as sequences of rows: 8 positions of 8 pixels.

One example (a "0", pixel values 0..16 scaled to [0, 1])::

    x[0] = [0, 0, .31, .81, .56, .06, 0, 0]      row 1 of the 8x8 image
    ...
    x[7] = [0, 0, .38, .81, .63, 0, 0, 0]        row 8
    y    = [-100] * 7 + [0]                      the class sits at the last position
"""

from __future__ import annotations

import torch

from georesolver_core.budget import FLOAT32, elements
from georesolver_core.tasks.base import IGNORE, FiniteTask, split
from georesolver_core.validate import check_range

N_IMAGES = 1797  # scikit-learn's bundled digits


class DigitRows(FiniteTask):
    name = "digits"

    def __init__(self, test_fraction: float = 0.2, seed: int = 0):
        from sklearn.datasets import load_digits

        check_range("test_fraction", test_fraction, 0.05, 0.9)
        self.check_data("the digits data set")
        data = load_digits()
        x = torch.as_tensor(data.images, dtype=torch.float32) / 16.0  # (1797, 8, 8): rows as positions
        y = torch.full((x.shape[0], 8), IGNORE, dtype=torch.long)
        y[:, -1] = torch.as_tensor(data.target, dtype=torch.long)
        self.d_in, self.n_classes, self.seq_len = 8, 10, 8
        self.train, self.test = split(x, y, test_fraction, seed)

    @classmethod
    def estimate_bytes(cls) -> int:
        """Fixed: the 1,797 images as (8, 8) float32 and their (8,) int64 labels, twice (the split's copies)."""
        return 2 * elements(N_IMAGES, 8) * (8 * FLOAT32 + 8)

    def describe(self) -> str:
        return f"digits as row sequences: {len(self.train)} train, {len(self.test)} test images"
