"""Character-level language modelling on WordNet's glosses: predict every next character.

One encoded example with context=4 from the text ``"a dog"`` (VOCAB index of each character)::

    chars  "a", " ", "d", "o"      ->   targets " ", "d", "o", "g"
    x = one-hot rows of VOCAB (d_in = 96), y = [index(" "), index("d"), index("o"), index("g")]

The model is causal (``causal = True``): position t sees characters up to t only. A one-hot input
through the model's linear embedding is a token embedding (plus a bias). Training windows start at
uniform random offsets of the train text; the validation set is fixed, non-overlapping windows of
the held-out synsets' text (``wordnet.glosses``: split by synset, no gloss on both sides).
"""

from __future__ import annotations

import functools
import math

import torch

from georesolver_core.tasks.base import Batch, Task, one_hot
from georesolver_core.validate import check_positive_int
from georesolver_core.wordnet.glosses import UNKNOWN, VOCAB, load_corpus

VALIDATION_WINDOWS = 256  # fixed held-out windows the validation loss is measured on
NATS_PER_BIT = math.log(2)
_INDEX = {ch: i for i, ch in enumerate(VOCAB)}


def _lookup() -> torch.Tensor:
    table = torch.full((256,), _INDEX[UNKNOWN], dtype=torch.long)  # byte -> VOCAB index
    for ch, i in _INDEX.items():
        table[ord(ch)] = i
    return table


_LOOKUP = _lookup()


def encode(text: str) -> torch.Tensor:
    """str -> (len,) long VOCAB indices (characters outside VOCAB map to "?")."""
    raw = text.encode("ascii", errors="replace")  # one byte per character; non-ASCII -> "?"
    return (
        _LOOKUP[torch.frombuffer(bytearray(raw), dtype=torch.uint8).long()]
        if raw
        else torch.zeros(0, dtype=torch.long)
    )


@functools.lru_cache(maxsize=4)
def _encoded(source: str) -> tuple[torch.Tensor, torch.Tensor]:
    corpus = load_corpus(source)
    return encode(corpus.train), encode(corpus.validation)


def preload(source: str = "auto") -> None:
    """Read and encode the corpus now (about 4 s of CPU, once per process): a process that will train on
    text (a spare job worker) pays it before the run is asked for."""
    _encoded(source)


def decode(ids) -> str:
    return "".join(VOCAB[int(i)] for i in ids)


def bits_per_char(nats: float) -> float:
    """Cross-entropy in nats per character -> bits per character (divide by ln 2)."""
    return nats / NATS_PER_BIT


class TextTask(Task):
    name = "text"
    causal = True  # every position is a target: it must not see the future

    def __init__(self, context: int = 64, seed: int = 0, source: str = "auto"):
        check_positive_int("context", context, 2, 1024)
        self.corpus = load_corpus(source)
        self.train_ids, self.validation_ids = _encoded(source)  # (N_train,), (N_val,)
        if len(self.validation_ids) < context + 1:
            raise ValueError(
                f"context must be below the validation text's {len(self.validation_ids)} characters (got {context})"
            )
        self.context = context
        self.d_in = self.n_classes = len(VOCAB)
        self.seq_len = context
        n = min(VALIDATION_WINDOWS, (len(self.validation_ids) - 1) // context)
        self.check_batch(n, "validation windows")  # up to 256 x 1024 one-hot windows: about 300 MB
        starts = torch.arange(n) * context
        self._test = self._windows(self.validation_ids, starts)

    def _windows(self, ids: torch.Tensor, starts: torch.Tensor) -> Batch:
        idx = starts[:, None] + torch.arange(self.context + 1)  # (n, T + 1)
        chunk = ids[idx]  # (n, T + 1)
        return Batch(one_hot(chunk[:, :-1], self.d_in), chunk[:, 1:])

    def sample(self, n: int, generator: torch.Generator) -> Batch:
        starts = torch.randint(len(self.train_ids) - self.context - 1, (n,), generator=generator)
        return self._windows(self.train_ids, starts)

    def test_set(self) -> Batch:
        return self._test

    def heldout_set(self, n: int = VALIDATION_WINDOWS) -> Batch:
        """Up to ``n`` windows of the validation text after those ``test_set`` reads: a test split that no
        training run evaluates on (the LM study's final report reads it, and nothing else)."""
        check_positive_int("n", n, 1, 1 << 20)
        first = self._test.x.shape[0]  # test_set's windows start at 0, T, 2T, ...
        n = min(n, (len(self.validation_ids) - 1) // self.context - first)
        if n < 1:
            raise ValueError(
                f"the validation text ({len(self.validation_ids)} characters) has no windows beyond the "
                f"{first} the evaluation reads at context {self.context}: install WordNet for the full corpus"
            )
        self.check_batch(n, "held-out windows")
        return self._windows(self.validation_ids, (first + torch.arange(n)) * self.context)

    def describe(self) -> str:
        return f"text: next character after up to {self.context} characters; {self.corpus.describe()}"


@torch.no_grad()
def generate(
    model, prompt: str, n: int, *, temperature: float = 0.8, generator: torch.Generator | None = None
) -> str:
    """``n`` characters sampled after ``prompt`` (the last ``max_len`` characters as context)."""
    check_positive_int("n", n, 0, 100_000)
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0 (got {temperature!r})")
    model.eval()
    device = next(model.parameters()).device
    ids = encode(prompt or "\n").tolist()
    T = model.config.max_len
    for _ in range(n):
        x = one_hot(torch.tensor(ids[-T:], device=device), len(VOCAB))[None]  # (1, t, V)
        logits = model(x)[0, -1] / temperature  # (V,)
        probs = torch.softmax(logits.float().cpu(), dim=-1)
        ids.append(int(torch.multinomial(probs, 1, generator=generator)))
    return decode(ids[len(encode(prompt or "\n")) :])


def sentence_attention(model, sentence: str, layer: int, head: int) -> torch.Tensor:
    """One head's (T, T) weights on ``sentence`` (its last ``max_len`` characters)."""
    from georesolver_core.model.attention_map import head_weights

    text = sentence[-model.config.max_len :] or " "
    x = one_hot(encode(text), len(VOCAB))[None].to(next(model.parameters()).device)  # (1, T, V)
    return head_weights(model, x, layer, head)
