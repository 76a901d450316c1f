"""Trained models shared by every session of the server, the newest few kept.

A page that trains outside any cached function (so that its progress bar can follow the steps) keeps the
result here, under ``st.cache_resource``, and reads it back on the next rerun or in another session.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class SharedModels:
    """Trained models keyed by what identifies them (a config and a device), the newest ``size`` kept.

    Sessions run in threads of one process: the lock keeps one session's eviction from breaking another's
    lookup. A stored model is read-only to the sessions: whatever moves it works on a copy.
    """

    def __init__(self, size: int = 8):
        if size < 1:
            raise ValueError(f"size must be an integer >= 1 (got {size!r})")
        self.size, self._lock, self._models = size, threading.Lock(), {}

    def __contains__(self, key) -> bool:
        with self._lock:
            return key in self._models

    def get(self, key):
        with self._lock:
            return self._models.get(key)

    def put(self, key, model):
        """Keeps ``model`` unless another session stored one for ``key`` meanwhile; returns the kept one."""
        with self._lock:
            kept = self._models.setdefault(key, model)
            while len(self._models) > self.size:
                self._models.pop(next(iter(self._models)))
            return kept

    def get_or_train(self, key, train: Callable[[], object]):
        """The model stored under ``key``, else the one ``train()`` returns, stored. Training runs outside the
        lock (it takes seconds to minutes); two sessions training the same key keep the first one stored."""
        model = self.get(key)
        return model if model is not None else self.put(key, train())


def progress_callback(bar, steps: int) -> Callable[[int, float], None]:
    """A trainer's ``callback(step, loss)`` that moves a progress bar (``st.progress``) through ``steps`` steps."""
    return lambda i, loss: bar.progress((i + 1) / steps, text=f"step {i + 1}: loss {loss:.3f}")
