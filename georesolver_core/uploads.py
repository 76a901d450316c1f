"""Uploaded JSON documents: the size checked before parsing, then UTF-8, JSON, finite numbers, bounded nesting.

Shared by every JSON upload of the app (the benchmark report, the routing traffic report): a hostile
or broken file is refused with a ValueError saying what is wrong, never a parser's own exception.
The fields of each document are checked by its own validator afterwards.
"""

from __future__ import annotations

import json


def json_depth(doc, most: int) -> int:
    """Nesting depth of a parsed document, iteratively (no recursion on hostile input); stops past ``most``."""
    deepest, stack = 0, [(doc, 1)]
    while stack:
        node, d = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, d)
            if deepest > most:
                return deepest
            stack.extend((v, d + 1) for v in (node.values() if isinstance(node, dict) else node))
    return deepest


def read_json(data: bytes | str, *, what: str, max_bytes: int, max_depth: int):
    """The parsed document of an upload named ``what`` (e.g. "a benchmark report").

    Refused with ValueError: more than ``max_bytes`` (before any parsing), text that is not UTF-8 or not
    JSON, the NaN / Infinity literals (JSON has no such numbers), integers longer than Python parses,
    and nesting deeper than ``max_depth`` (or than the parser's recursion allows).
    """
    size = len(data)
    if size > max_bytes:
        raise ValueError(f"{what} must be at most {max_bytes / 2**20:g} MB (got {size / 2**20:.1f} MB)")
    if isinstance(data, (bytes, bytearray)):
        try:
            data = bytes(data).decode("utf-8-sig")  # a byte order mark (some editors write one) is read past
        except UnicodeDecodeError as err:
            raise ValueError(f"{what} must be UTF-8 text ({err.reason} at byte {err.start})") from None

    def no_constant(name: str):
        raise ValueError(f"{what} must not contain {name} (JSON has no such number)")

    too_deep = f"{what} nests at most {max_depth} levels deep (this one nests deeper)"
    try:
        doc = json.loads(data, parse_constant=no_constant)
    except RecursionError:
        raise ValueError(too_deep) from None
    except json.JSONDecodeError as err:
        raise ValueError(f"{what} must be JSON ({err.msg} at line {err.lineno}, column {err.colno})") from None
    if json_depth(doc, max_depth) > max_depth:
        raise ValueError(too_deep)
    return doc
