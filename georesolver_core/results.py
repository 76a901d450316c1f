"""Typed results: what a page reads from the library is a frozen dataclass with named fields.

A page reads ``lab.stats.d_min``, never ``lab.stats["key separation d_min"]``, so a renamed label cannot
break it. Tables, CSV and JSON exports keep their human labels through ``labelled``.
"""

from __future__ import annotations

from dataclasses import fields
from typing import ClassVar


def labelled(result, labels: dict[str, str]) -> dict:
    """``{label: value}`` for each field of the dataclass ``result`` named in ``labels`` (field -> label),
    in the order of ``labels``; fields that are None (not measured for this input) are left out."""
    unknown = set(labels) - {f.name for f in fields(result)}
    if unknown:
        raise ValueError(f"labels must name fields of {type(result).__name__} (got {sorted(unknown)})")
    values = ((label, getattr(result, name)) for name, label in labels.items())
    return {label: v for label, v in values if v is not None}


class Labelled:
    """Mixin of a frozen result dataclass whose ``LABELS`` (field -> label) name its export columns."""

    LABELS: ClassVar[dict[str, str]] = {}

    def to_dict(self) -> dict:
        """The measured numbers under their labels (a table or a JSON export)."""
        return labelled(self, self.LABELS)
