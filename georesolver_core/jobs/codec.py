"""A function's arguments as plain JSON values and back: how a "steps" job's arguments cross to its worker
(a job's config is JSON: it is written to the run folder's spec.json). Imports nothing of the package."""

from __future__ import annotations

import importlib
from dataclasses import fields, is_dataclass


def encode_value(value):
    """A function argument as plain JSON values (a job's config must be JSON: it is written to spec.json):
    a dataclass instance as its class path and fields, a tuple marked as one (JSON has only lists), lists
    and dicts item by item; anything else as it is. ``decode_value`` undoes it in the worker."""
    if is_dataclass(value) and not isinstance(value, type):
        cls = type(value)
        return {"__dataclass__": f"{cls.__module__}:{cls.__qualname__}",
                "fields": {f.name: encode_value(getattr(value, f.name)) for f in fields(value)}}  # fmt: skip
    if isinstance(value, tuple):
        return {"__tuple__": [encode_value(v) for v in value]}
    if isinstance(value, list):
        return [encode_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): encode_value(v) for k, v in value.items()}
    return value


def decode_value(value):
    """``encode_value`` undone: dataclasses rebuilt from their fields (their own checks run again), tuples."""
    if isinstance(value, list):
        return [decode_value(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "__tuple__" in value:
        return tuple(decode_value(v) for v in value["__tuple__"])
    if "__dataclass__" in value:
        module, _, name = value["__dataclass__"].partition(":")
        cls = importlib.import_module(module)
        for part in name.split("."):
            cls = getattr(cls, part)
        if not is_dataclass(cls):
            raise ValueError(f"{value['__dataclass__']} is not a dataclass")
        return cls(**{k: decode_value(v) for k, v in value["fields"].items()})
    return {k: decode_value(v) for k, v in value.items()}
