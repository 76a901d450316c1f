"""Text and files that come from users, made safe: markdown made inert, uploads size-checked and parsed once."""

from __future__ import annotations

import re

import streamlit as st

_MD_INLINE = re.compile(r"([\\`*_{}\[\]<>~$:&|!])")  # links, images, HTML, emphasis, code, directives, maths
_MD_LEADING = re.compile(r"^([#+\-.=>])")  # headings, list markers, quotes: only at the start of a line
# Bare addresses become links after escapes are resolved (GFM autolink literals: http://, www., a@b.c);
# a zero-width space after the ":" of "://", after "www" and after "@" keeps them plain text.
_MD_AUTOLINK = re.compile(r"(?i)(\\:(?=//)|\bwww(?=\.)|@)")


def escape_md(text) -> str:
    """User text (file names, node names, report fields) made inert for st.markdown / st.error:
    markdown punctuation that forms links, images, HTML, emphasis, colour or emoji directives is
    backslash-escaped, so none of it renders, and line breaks become spaces (one message stays one
    line, so block syntax can only appear at its start, which is escaped too); bare web and e-mail
    addresses get a zero-width space so that they are not turned into links either."""
    escaped = _MD_LEADING.sub(r"\\\1", _MD_INLINE.sub(r"\\\1", " ".join(str(text).split())))
    return _MD_AUTOLINK.sub("\\g<0>\u200b", escaped)


def read_upload(uploaded, *, key: str, max_bytes: int, parse):
    """(value, error) of an uploaded file, parsed once per upload.

    The size is checked before any byte is read; ``parse(bytes)`` runs once per file (its outcome is
    kept under ``<key>_parsed`` by the file's id), so a rejected file is not parsed again on every
    rerun; only the error text is kept for it, never its data. Removing the file forgets both.
    """
    state, slot = st.session_state, f"{key}_parsed"
    if uploaded is None:
        state.pop(slot, None)
        return None, None
    file_id = getattr(uploaded, "file_id", None) or (uploaded.name, uploaded.size)
    saved = state.get(slot)
    if saved is not None and saved["id"] == file_id:
        return saved["value"], saved["error"]
    value, error = None, None
    if uploaded.size > max_bytes:
        error = f"the file has {uploaded.size:,} bytes; at most {max_bytes:,} are allowed"
    else:
        try:
            value = parse(uploaded.getvalue())
        except (ValueError, TypeError, KeyError, UnicodeDecodeError, RecursionError) as err:
            error = str(err) or type(err).__name__
    state[slot] = {"id": file_id, "value": value, "error": error}
    return value, error
