"""Uploaded JSON documents: the size checked before parsing, then UTF-8, JSON, finite numbers, bounded nesting;
uploaded torch files: the stored and the expanded size checked before torch reads them.

Shared by every JSON upload of the app (the benchmark report, the routing traffic report): a hostile
or broken file is refused with a ValueError saying what is wrong, never a parser's own exception.
The fields of each document are checked by its own validator afterwards.
"""

from __future__ import annotations

import io
import json
import os
import zipfile

import torch


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


# A torch file holds at most this many entries (one per tensor storage, plus a handful): bounds the
# reader's per-entry work whatever the sizes say.
MAX_TORCH_ENTRIES = 100_000


def read_torch(source, *, what: str, max_bytes: int, max_expanded: int):
    """``torch.load(weights_only=True, map_location="cpu")`` of a path, bytes or binary file holding a
    ``what`` (a noun for messages: "checkpoint").

    Refused with ValueError before torch reads anything: more than ``max_bytes`` as stored, a file that
    is not torch's zip format (every torch.save since torch 1.6 writes one), more than
    ``MAX_TORCH_ENTRIES`` entries, or entries whose uncompressed sizes add up to more than
    ``max_expanded`` (a small compressed file that would expand to gigabytes). torch's reader allocates
    each entry from its recorded size and stops at it, so the recorded sizes bound what loading takes.
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        size, stream = len(source), io.BytesIO(bytes(source))
    else:
        try:
            stream = source if hasattr(source, "read") else open(source, "rb")  # noqa: SIM115 (closed below)
        except OSError as err:
            kind = "not found" if isinstance(err, FileNotFoundError) else f"not readable ({err.strerror})"
            raise ValueError(f"{what} file {kind}: {source}") from None
        stream.seek(0, os.SEEK_END)
        size = stream.tell()
        stream.seek(0)
    try:
        if size > max_bytes:
            raise ValueError(f"a {what} must be at most {max_bytes / 2**20:g} MB (got {size / 2**20:.1f} MB)")
        if size == 0:
            raise ValueError(f"not a readable {what}: the file is empty (0 bytes)")
        try:
            with zipfile.ZipFile(stream) as archive:
                entries = archive.infolist()
        except (zipfile.BadZipFile, OSError, EOFError, ValueError) as err:
            raise ValueError(f"not a readable {what} (truncated, or not written by torch.save): {err}") from None
        expanded = sum(e.file_size for e in entries)
        if len(entries) > MAX_TORCH_ENTRIES or expanded > max_expanded:
            raise ValueError(
                f"this {what} would expand to {expanded / 2**20:.1f} MB in {len(entries)} entries when loaded; "
                f"at most {max_expanded / 2**20:g} MB and {MAX_TORCH_ENTRIES} entries are allowed"
            )
        stream.seek(0)
        try:
            return torch.load(stream, map_location="cpu", weights_only=True)
        except Exception as err:  # torch raises several types for a damaged or foreign file
            first = str(err).splitlines()[0] if str(err) else ""
            raise ValueError(
                f"not a readable {what} (corrupt, truncated, or not written by torch.save): "
                f"{type(err).__name__}: {first[:200]}"
            ) from None
    finally:
        if stream is not source:
            stream.close()
