"""Copy / echo: read L tokens, then write them back in order at L marker positions.

One encoded example with length=3, vocab=4 (d_in = 4 + 1)::

    tokens  2 0 3  then three markers
    x  = [[0 0 1 0 | 0], [1 0 0 0 | 0], [0 0 0 1 | 0], [0 0 0 0 | 1] x 3]
    y  = [-100, -100, -100, 2, 0, 3]

Position L + i must attend to position i: the task tests positional addressing, not content.
"""

from __future__ import annotations

import torch

from georesolver_core.tasks.base import IGNORE, Batch, Task, examples_bytes, one_hot
from georesolver_core.validate import check_positive_int

TEST_SIZE = 1000


class Copy(Task):
    name = "copy"

    def __init__(self, length: int = 8, vocab: int = 8, seed: int = 0):
        check_positive_int("length", length, 1, 1024)
        check_positive_int("vocab", vocab, 2, 4096)
        self.check_data(f"{TEST_SIZE:,} test examples of the copy task", length=length, vocab=vocab)
        self.length, self.vocab = length, vocab
        self.d_in, self.n_classes, self.seq_len = vocab + 1, vocab, 2 * length
        self._test = self.sample(TEST_SIZE, torch.Generator().manual_seed(20_000 + seed))

    @classmethod
    def estimate_bytes(cls, length: int, vocab: int) -> int:
        """The test set: ``TEST_SIZE`` examples of 2 * length positions and vocab + 1 features."""
        return examples_bytes(TEST_SIZE, 2 * length, vocab + 1)

    def sample(self, n: int, generator: torch.Generator) -> Batch:
        L = self.length
        tokens = torch.randint(self.vocab, (n, L), generator=generator)  # (n, L)
        x = torch.zeros(n, 2 * L, self.d_in)
        x[:, :L, : self.vocab] = one_hot(tokens, self.vocab)
        x[:, L:, -1] = 1.0
        y = torch.full((n, 2 * L), IGNORE, dtype=torch.long)
        y[:, L:] = tokens
        return Batch(x, y)

    def test_set(self) -> Batch:
        return self._test

    def describe(self) -> str:
        return f"copy: {self.length} tokens of a vocabulary of {self.vocab}"
