"""Associative recall: n key-value pairs, then a query key; the answer is the query's value.

Each pair sits at one position as two one-hot blocks, the query at the last position with a flag.
One encoded example with n_pairs=3, n_keys=6, n_values=4 (d_in = 6 + 4 + 1 = 11)::

    pairs      (k=4, v=1) (k=0, v=3) (k=2, v=1)   query k=0   ->  answer v=3
    x[0]   = [0 0 0 0 1 0 | 0 1 0 0 | 0]
    x[1]   = [1 0 0 0 0 0 | 0 0 0 1 | 0]
    x[2]   = [0 0 1 0 0 0 | 0 1 0 0 | 0]
    x[3]   = [1 0 0 0 0 0 | 0 0 0 0 | 1]      the query: its key block, no value, the flag
    y      = [-100, -100, -100, 3]            only the last position is labelled

Keys within an example are distinct (drawn without replacement), values are drawn with
replacement. This is exact retrieval (paper section 2.3, Theorem 1): the query must find the one
position whose key block equals its own and read that position's value block.
"""

from __future__ import annotations

import torch

from georesolver_core.budget import elements
from georesolver_core.tasks.base import IGNORE, Batch, Task, examples_bytes, one_hot
from georesolver_core.validate import check_positive_int

TEST_SIZE = 2000


class AssociativeRecall(Task):
    name = "recall"

    def __init__(self, n_pairs: int = 16, n_keys: int | None = None, n_values: int = 16, seed: int = 0):
        check_positive_int("n_pairs", n_pairs, 1, 512)
        n_keys = max(32, 2 * n_pairs) if n_keys is None else n_keys  # twice the pairs: a query cannot guess
        check_positive_int("n_keys", n_keys, n_pairs, 4096)  # distinct keys need n_keys >= n_pairs
        check_positive_int("n_values", n_values, 2, 4096)
        self.check_data(
            f"{TEST_SIZE:,} test examples of the recall task", n_pairs=n_pairs, n_keys=n_keys, n_values=n_values
        )
        self.n_pairs, self.n_keys, self.n_values = n_pairs, n_keys, n_values
        self.d_in = n_keys + n_values + 1
        self.n_classes = n_values
        self.seq_len = n_pairs + 1
        self._test = self.sample(TEST_SIZE, torch.Generator().manual_seed(10_000 + seed))

    @classmethod
    def estimate_bytes(cls, n_pairs: int, n_keys: int, n_values: int) -> int:
        """The test set: ``TEST_SIZE`` examples of n_pairs + 1 positions and n_keys + n_values + 1 features,
        and the key draw's (TEST_SIZE, n_keys) float32 scores with their int64 argsort."""
        keys = 12 * elements(TEST_SIZE, n_keys)
        return examples_bytes(TEST_SIZE, n_pairs + 1, n_keys + n_values + 1) + keys

    def sample(self, n: int, generator: torch.Generator) -> Batch:
        P = self.n_pairs
        keys = torch.rand(n, self.n_keys, generator=generator).argsort(dim=-1)[:, :P]  # (n, P) distinct
        values = torch.randint(self.n_values, (n, P), generator=generator)  # (n, P)
        which = torch.randint(P, (n,), generator=generator)  # (n,) the queried pair
        query = keys.gather(1, which[:, None])  # (n, 1)
        x = torch.zeros(n, P + 1, self.d_in)
        x[:, :P, : self.n_keys] = one_hot(keys, self.n_keys)
        x[:, :P, self.n_keys : self.n_keys + self.n_values] = one_hot(values, self.n_values)
        x[:, P, : self.n_keys] = one_hot(query[:, 0], self.n_keys)
        x[:, P, -1] = 1.0
        y = torch.full((n, P + 1), IGNORE, dtype=torch.long)
        y[:, P] = values.gather(1, which[:, None])[:, 0]
        return Batch(x, y)

    def test_set(self) -> Batch:
        return self._test

    def describe(self) -> str:
        return f"associative recall: {self.n_pairs} pairs, {self.n_keys} keys, {self.n_values} values"
