"""The WordNet 3.0 database files, parsed without any download (format: Princeton's wndb(5WN)).

A ``data.POS`` line is one synset::

    synset_offset lex_filenum ss_type w_cnt word lex_id [word lex_id ...] p_cnt [ptr ...] [frames] | gloss

with ``w_cnt`` two hexadecimal digits, ``p_cnt`` three decimal digits and each pointer
``pointer_symbol synset_offset pos source/target`` (``@`` hypernym, ``@i`` instance hypernym, ...).
Lines of the licence header start with two spaces. An ``index.POS`` line lists a lemma's synsets in
sense order, which gives the usual ``lemma.n.NN`` names (NN: the sense number of the synset's first lemma).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

POS = ("noun", "verb", "adj", "adv")
POS_LETTER = {"noun": "n", "verb": "v", "adj": "a", "adv": "r"}
_FILE_POS = {"n": "noun", "v": "verb", "a": "adj", "s": "adj", "r": "adv"}  # a synset's letter -> its data file
# Where Debian's wordnet-base puts the files; WNSEARCHDIR (WordNet's own variable) comes first.
DEFAULT_DIRS = ("/usr/share/wordnet",)
LICENCE = (
    "WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved. Permission to use, copy, "
    "modify and distribute this software and database and its documentation for any purpose and without fee "
    "or royalty is hereby granted, provided that this copyright notice and these statements appear on all "
    'copies. THIS SOFTWARE AND DATABASE IS PROVIDED "AS IS" AND PRINCETON UNIVERSITY MAKES NO '
    "REPRESENTATIONS OR WARRANTIES, EXPRESS OR IMPLIED. The name of Princeton University or Princeton may not "
    "be used in advertising or publicity pertaining to distribution of the software and/or database."
)


@dataclass(frozen=True)
class Pointer:
    symbol: str  # "@" hypernym, "@i" instance hypernym, "~" hyponym, ...
    offset: int  # target synset's byte offset in its data file
    pos: str  # target's part of speech letter: n, v, a, s, r


@dataclass(frozen=True)
class Synset:
    offset: int  # byte offset in data.POS: the synset's id within its part of speech
    pos: str  # "n", "v", "a", "s" (satellite adjective) or "r"
    lemmas: tuple[str, ...]  # in file order; the first names the synset
    pointers: tuple[Pointer, ...]
    gloss: str  # definition and examples, the text after " | "
    line: int = 0  # its line in the data file (1-based; 0: not read from a file)


def find_database(path: str | os.PathLike | None = None) -> Path:
    """The folder holding ``data.noun`` etc.: ``path``, else ``$WNSEARCHDIR``, else Debian's place.

    Raises ``ValueError`` saying how to get the files when none is found.
    """
    candidates = [path] if path is not None else [os.environ.get("WNSEARCHDIR"), *DEFAULT_DIRS]
    for c in candidates:
        if c and (Path(c) / "data.noun").is_file():
            return Path(c)
    where = path if path is not None else " or ".join(str(c) for c in candidates if c)
    raise ValueError(
        f"WordNet database not found at {where}: install Debian's wordnet-base "
        "(apt-get install wordnet-base) or pass the folder holding data.noun"
    )


def _parse_data_line(line: str) -> Synset:
    """One ``data.POS`` line; ValueError saying what is malformed (the caller adds the file and line)."""
    head, _, gloss = line.partition(" | ")
    f = head.split()
    try:
        offset, pos = int(f[0]), f[2]
        n_words = int(f[3], 16)
        lemmas = tuple(f[4 + 2 * i] for i in range(n_words))
        i = 4 + 2 * n_words
        n_ptr = int(f[i])
        pointers = tuple(Pointer(f[i + 1 + 4 * j], int(f[i + 2 + 4 * j]), f[i + 3 + 4 * j]) for j in range(n_ptr))
    except IndexError:
        raise ValueError(f"the line ends early: {len(f)} fields, fewer than its counts announce") from None
    except ValueError as err:  # int() of a field that is not a number
        raise ValueError(f"a count or offset is not a number ({err})") from None
    return Synset(offset, pos, lemmas, pointers, gloss.strip())


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """(1-based line number, line) of a database file, the licence header left out."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.startswith("  "):  # the licence header
                yield number, line.rstrip("\n")


def _where(path: Path, number: int) -> str:
    return f"{path}, line {number}"


def read_synsets(pos: str = "noun", path: str | os.PathLike | None = None) -> dict[int, Synset]:
    """Every synset of one part of speech, keyed by offset."""
    if pos not in POS:
        raise ValueError(f"pos must be one of {POS} (got {pos!r})")
    file = find_database(path) / f"data.{pos}"
    out: dict[int, Synset] = {}
    for number, line in _lines(file):
        try:
            synset = _parse_data_line(line)
        except ValueError as err:
            raise ValueError(f"malformed WordNet database: {_where(file, number)}: {err}") from None
        out[synset.offset] = replace(synset, line=number)
    return out


def line_of(synset: Synset, path: str | os.PathLike | None = None) -> str:
    """ "FILE, line N" of a synset read by ``read_synsets`` (for error messages)."""
    return _where(find_database(path) / f"data.{_FILE_POS[synset.pos]}", synset.line)


def sense_names(pos: str = "noun", path: str | os.PathLike | None = None) -> dict[int, str]:
    """offset -> ``lemma.n.NN``, NN the synset's sense number for its first lemma (from ``index.POS``).

    An index line is ``lemma pos synset_cnt p_cnt [ptr_symbol ...] sense_cnt tagsense_cnt offset ...``
    with the offsets in sense order.
    """
    if pos not in POS:
        raise ValueError(f"pos must be one of {POS} (got {pos!r})")
    folder = find_database(path)
    synsets = read_synsets(pos, folder)
    rank: dict[tuple[str, int], int] = {}
    index = folder / f"index.{pos}"
    for number, line in _lines(index):
        f = line.split()
        try:
            lemma, n_syn, n_ptr = f[0], int(f[2]), int(f[3])
            offsets = [int(off) for off in f[4 + n_ptr + 2 :][:n_syn]]
        except (IndexError, ValueError):
            raise ValueError(
                f"malformed WordNet database: {_where(index, number)}: expected "
                "'lemma pos synset_cnt p_cnt [ptr ...] sense_cnt tagsense_cnt offset ...'"
            ) from None
        for sense, off in enumerate(offsets, start=1):
            rank[(lemma, off)] = sense
    letter = POS_LETTER[pos]
    names = {}
    for off, s in synsets.items():
        lemma = s.lemmas[0].lower()
        if pos == "adj" and "(" in lemma:  # adjective markers such as "(p)" are not part of the lemma
            lemma = lemma[: lemma.index("(")]
        names[off] = f"{lemma}.{letter}.{rank.get((lemma, off), 1):02d}"
    return names
