"""Noisy-label memorisation (paper section 2.7, Theorem 3): learn clean classes from flipped labels.

Each example is a sequence of T Gaussian vectors; its clean class is the argmax of a fixed random
linear map of the sequence mean. Training labels are flipped with probability eta to a uniformly
drawn *other* class (symmetric noise); test labels are clean. A model that memorises the flips
reaches zero training error and pays for it on the test split. One example (T=2, dim=3, 2 classes)::

    x = [[ 0.3, -1.2,  0.8], [ 1.1,  0.4, -0.5]]     clean class 1, flipped (train) label 0
    y = [-100, 0]                                    the label sits at the last position
"""

from __future__ import annotations

import torch

from georesolver_core.budget import FLOAT32, elements
from georesolver_core.tasks.base import IGNORE, Batch, FiniteTask
from georesolver_core.validate import check_positive_int, check_range


def flip_labels(y: torch.Tensor, eta: float, n_classes: int, generator: torch.Generator) -> torch.Tensor:
    """Symmetric label noise: each label moves to a uniformly drawn other class with probability eta."""
    flip = torch.rand(y.shape, generator=generator) < eta
    shift = torch.randint(1, max(n_classes, 2), y.shape, generator=generator)
    return torch.where(flip, (y + shift) % n_classes, y)


def test_size(n_train: int) -> int:
    """Clean held-out examples: a quarter of the training set, at least 500."""
    return max(500, n_train // 4)


class NoisyLabels(FiniteTask):
    name = "noisy"

    def __init__(
        self,
        n_train: int = 256,
        eta: float = 0.2,
        dim: int = 16,
        length: int = 4,
        n_classes: int = 2,
        seed: int = 0,
    ):
        check_positive_int("n_train", n_train, 2, 100_000)
        check_range("eta", eta, 0.0, 0.5)
        check_positive_int("dim", dim, 1, 4096)
        check_positive_int("length", length, 1, 1024)
        check_positive_int("n_classes", n_classes, 2, 1000)
        self.check_data("this noisy-label data set", n_train=n_train, length=length, dim=dim)
        n_test = test_size(n_train)
        self.eta, self.n_train = eta, n_train
        self.d_in, self.n_classes, self.seq_len = dim, n_classes, length
        g = torch.Generator().manual_seed(seed)
        x = torch.randn(n_train + n_test, length, dim, generator=g)
        rule = torch.randn(dim, n_classes, generator=g)
        clean = (x.mean(dim=1) @ rule).argmax(dim=-1)  # (N,)
        noisy = flip_labels(clean[:n_train], eta, n_classes, g)
        self.train = Batch(x[:n_train], self._labels(noisy))
        self.test = Batch(x[n_train:], self._labels(clean[n_train:]))
        self.clean_train = Batch(x[:n_train], self._labels(clean[:n_train]))

    @classmethod
    def estimate_bytes(cls, n_train: int, length: int, dim: int) -> int:
        """The inputs, (n_train + n_test, length, dim) float32, and the labels, (n_train + n_test, length)
        int64, of the noisy and the clean training split and the test split."""
        n = n_train + test_size(n_train)
        return FLOAT32 * elements(n, length, dim) + 8 * elements(n + n_train, length)

    def _labels(self, cls: torch.Tensor) -> torch.Tensor:
        y = torch.full((cls.shape[0], self.seq_len), IGNORE, dtype=torch.long)
        y[:, -1] = cls
        return y

    def describe(self) -> str:
        return f"noisy labels: {self.n_train} training sequences, flip rate eta={self.eta:g}"
