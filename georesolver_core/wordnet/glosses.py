"""WordNet's glosses as a character-level corpus, split into train and validation by synset.

A gloss is the text after ``" | "`` on a ``data.POS`` line: definitions and example sentences, e.g.
``an entity that has physical existence``. All four parts of speech give about 117,000 glosses.
Each synset goes wholly to one side of the split, decided by a hash of its id (``n:00001930``), so
the split is the same on every machine and no gloss is in both. Characters outside ``VOCAB``
(printable ASCII and newline) become ``"?"``; glosses are joined by newlines.

Where the database is not installed, a gzip subset shipped in ``assets/`` (lines ``id<TAB>gloss``,
written by ``write_subset``) stands in, with WordNet's licence beside it.
"""

from __future__ import annotations

import functools
import gzip
import os
import zlib
from dataclasses import dataclass, replace
from pathlib import Path

from georesolver_core.wordnet.database import LICENCE, POS, POS_LETTER, find_database, read_synsets

VOCAB = "\n" + "".join(chr(i) for i in range(32, 127))  # 96 characters: newline + printable ASCII
UNKNOWN = "?"
ASSETS = Path(__file__).resolve().parents[2] / "assets"
SUBSET = ASSETS / "wordnet_glosses.txt.gz"
LICENCE_FILE = ASSETS / "WORDNET_LICENSE.txt"
VALIDATION_FRACTION = 0.05  # default share of synsets held out
SOURCES = ("auto", "database", "subset")


@dataclass(frozen=True)
class GlossCorpus:
    train: str  # glosses of the training synsets, one per line
    validation: str  # glosses of the held-out synsets, one per line
    train_ids: frozenset[str]  # synset ids ("n:00001930") on each side
    validation_ids: frozenset[str]
    source: str  # "database" or "subset"
    note: str = ""  # why the subset stands in for an installed database that could not be read ("" otherwise)

    def describe(self) -> str:
        text = (
            f"WordNet 3.0 glosses ({self.source}): {len(self.train_ids):,} train / "
            f"{len(self.validation_ids):,} validation synsets, {len(self.train):,} / {len(self.validation):,} characters"
        )
        return f"{text}; {self.note}" if self.note else text


def clean(text: str) -> str:
    """Map characters outside VOCAB to UNKNOWN (tabs and newlines inside a gloss become spaces)."""
    text = text.replace("\t", " ").replace("\n", " ")
    return "".join(ch if ch in _VOCAB_SET else UNKNOWN for ch in text)


_VOCAB_SET = frozenset(VOCAB)


def is_validation(synset_id: str, fraction: float = VALIDATION_FRACTION) -> bool:
    """Whether a synset is held out: crc32 of its id, below ``fraction`` of 2^32 (deterministic)."""
    if not 0 < fraction < 1:
        raise ValueError(f"fraction must be in (0, 1) (got {fraction!r})")
    return zlib.crc32(synset_id.encode()) < fraction * 2**32


def database_glosses(path: str | os.PathLike | None = None) -> list[tuple[str, str]]:
    """(synset id, cleaned gloss) for every synset of the four parts of speech, in file order."""
    out = []
    for pos in POS:
        letter = POS_LETTER[pos]
        for offset, s in read_synsets(pos, path).items():
            if s.gloss:
                out.append((f"{letter}:{offset:08d}", clean(s.gloss)))
    return out


def subset_glosses(path: str | os.PathLike = SUBSET) -> list[tuple[str, str]]:
    """(synset id, gloss) from a ``write_subset`` file."""
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        rows = [line.rstrip("\n").split("\t", 1) for line in fh]
    return [(r[0], clean(r[1])) for r in rows if len(r) == 2]


def split_glosses(
    records: list[tuple[str, str]], fraction: float = VALIDATION_FRACTION, source: str = ""
) -> GlossCorpus:
    """Train/validation corpus of (id, gloss) records, split by synset id (``is_validation``)."""
    train, val = [], []
    for sid, text in records:
        (val if is_validation(sid, fraction) else train).append((sid, text))
    return GlossCorpus(
        train="\n".join(t for _, t in train) + "\n",
        validation="\n".join(t for _, t in val) + "\n",
        train_ids=frozenset(s for s, _ in train),
        validation_ids=frozenset(s for s, _ in val),
        source=source,
    )


@functools.lru_cache(maxsize=4)
def load_corpus(source: str = "auto", fraction: float = VALIDATION_FRACTION) -> GlossCorpus:
    """The corpus from the installed database (``"database"``), the shipped subset (``"subset"``), or
    the database when installed and else the subset (``"auto"``)."""
    if source not in SOURCES:
        raise ValueError(f"source must be one of {list(SOURCES)} (got {source!r})")
    note = ""
    if source in ("auto", "database"):
        try:
            folder = find_database()
        except ValueError:  # not installed: the subset stands in, as documented
            if source == "database":
                raise
        else:
            try:
                return split_glosses(database_glosses(folder), fraction, "database")
            except (OSError, ValueError) as err:  # installed but unreadable or damaged
                if source == "database":
                    raise ValueError(f"the WordNet database could not be read: {err}") from None
                note = f"the installed WordNet database could not be read ({err}), so the shipped subset is used"
    if not SUBSET.is_file():
        raise ValueError(
            f"neither the WordNet database nor the shipped subset ({SUBSET.name}) was found: "
            "install Debian's wordnet-base or reinstall the package from its repository"
        )
    return replace(split_glosses(subset_glosses(SUBSET), fraction, "subset"), note=note)


def write_subset(path: str | os.PathLike, records: list[tuple[str, str]], *, every: int = 12) -> int:
    """Write every ``every``-th record as gzip ``id<TAB>gloss`` lines and the licence beside it. Returns the count."""
    chosen = records[::every]
    with gzip.GzipFile(path, "wb", compresslevel=9, mtime=0) as fh:  # mtime 0: the same bytes on every run
        fh.write("".join(f"{sid}\t{text}\n" for sid, text in chosen).encode())
    notice = Path(path).parent / LICENCE_FILE.name
    if not notice.exists():  # an existing notice may also name other derived files: keep it
        notice.write_text(LICENCE + "\n")
    return len(chosen)
