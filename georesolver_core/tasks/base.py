"""What the trainer needs from a task: encoded batches and a fixed test split.

Every task encodes an example as float features ``x`` (T, d_in) and integer targets ``y`` (T,),
with ``IGNORE`` (-100, cross-entropy's ignore_index) at positions that carry no target. Batches
are drawn from a ``torch.Generator``: the same seed gives the same batches on every process, which
is what makes data-parallel training reproduce a one-process run on the same global batch.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from georesolver_core.budget import FLOAT32, check_memory, elements

IGNORE = -100  # target of positions without a label (torch.nn.functional.cross_entropy's ignore_index)


@dataclass(frozen=True)
class Batch:
    x: torch.Tensor  # (N, T, d_in) float
    y: torch.Tensor  # (N, T) long, IGNORE where no target

    def __len__(self) -> int:
        return int(self.x.shape[0])

    def slice(self, start: int, stop: int) -> Batch:
        return Batch(self.x[start:stop], self.y[start:stop])

    def to(self, device) -> Batch:
        return Batch(self.x.to(device), self.y.to(device))


class Task:
    """A supervised sequence task. Subclasses set the four sizes and implement ``sample``."""

    name: str
    d_in: int  # features per position
    n_classes: int  # classes per labelled position
    seq_len: int  # positions per example
    causal: bool = False  # True: position t may see positions <= t only (language modelling)

    def sample(self, n: int, generator: torch.Generator) -> Batch:
        """n training examples (fresh ones for synthetic tasks, drawn from the train split otherwise)."""
        raise NotImplementedError

    def test_set(self) -> Batch:
        """The held-out examples accuracy is reported on (fixed for the task's seed)."""
        raise NotImplementedError

    def describe(self) -> str:
        return self.name

    @classmethod
    def estimate_bytes(cls, **arguments) -> int:
        """Peak bytes of building the task with these (validated) arguments, from the arguments alone: its
        data, its test set and the temporaries on the way. The constructor checks it against the memory
        budget (``check_data``) before allocating anything."""
        raise NotImplementedError

    @classmethod
    def check_data(cls, what: str, **arguments) -> int:
        """``check_memory`` of ``estimate_bytes(**arguments)``, the message naming ``what`` and the arguments."""
        return check_memory(what, cls.estimate_bytes(**arguments), **arguments)

    def batch_bytes(self, n: int) -> int:
        """Peak bytes of drawing n encoded examples (``examples_bytes``)."""
        return examples_bytes(n, self.seq_len, self.d_in)

    def check_batch(self, n: int, what: str = "examples") -> int:
        """``check_memory`` of ``batch_bytes(n)``: call it before drawing n examples (a test set, a batch)."""
        return check_memory(
            f"{n:,} {what} of this task ({self.describe()})", self.batch_bytes(n),
            examples=n, positions=self.seq_len, features=self.d_in,
        )  # fmt: skip


def examples_bytes(n: int, seq_len: int, d_in: int) -> int:
    """Peak bytes of n encoded examples of (seq_len, d_in): x float32, y int64, and the one-hot temporaries
    ``one_hot`` makes on the way (int64, then float32: 12 bytes a feature) — the dominant tensors of every
    task here, a lower bound of what drawing them allocates."""
    return elements(n, seq_len) * ((FLOAT32 + 12) * d_in + 8)


def one_hot(index: torch.Tensor, n: int) -> torch.Tensor:
    """(...,) long -> (..., n) float."""
    return torch.nn.functional.one_hot(index, n).float()


class FiniteTask(Task):
    """A task over a fixed train/test split: training batches sample the train split with replacement."""

    train: Batch
    test: Batch

    def sample(self, n: int, generator: torch.Generator) -> Batch:
        idx = torch.randint(len(self.train), (n,), generator=generator)
        return Batch(self.train.x[idx], self.train.y[idx])

    def test_set(self) -> Batch:
        return self.test


def split(x: torch.Tensor, y: torch.Tensor, test_fraction: float, seed: int) -> tuple[Batch, Batch]:
    """A seeded random train/test split of (N, ...) tensors."""
    g = torch.Generator().manual_seed(seed)
    perm = torch.randperm(x.shape[0], generator=g)
    n_test = max(1, round(test_fraction * x.shape[0]))
    te, tr = perm[:n_test], perm[n_test:]
    return Batch(x[tr], y[tr]), Batch(x[te], y[te])
