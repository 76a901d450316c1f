"""One frozen config dataclass from parsed command-line arguments, matched by field name.

The command lines give each flag the ``dest`` of the dataclass field it sets (``--layers`` ->
``n_layers``), so a config is built from the fields the namespace has; the others keep their
dataclass defaults, and the dataclass validates the whole on construction.
"""

from __future__ import annotations

import argparse
from dataclasses import fields


def from_args(cls, args: argparse.Namespace, **overrides):
    """``cls`` from the attributes of ``args`` named like its fields; ``overrides`` win (converted values)."""
    given = {f.name: getattr(args, f.name) for f in fields(cls) if hasattr(args, f.name)}
    return cls(**{**given, **overrides})
