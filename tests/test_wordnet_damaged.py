"""A damaged WordNet database is refused with the file and line, never looped over or half-read.

Before: a hypernym cycle or self-loop in data.noun made the noun closure loop forever (memory growing about
30 MB/s), and malformed lines gave raw IndexError / KeyError in ``embed`` and ``train --task text``.
Each database here is three nouns in the files' own format (wndb(5WN)): c -> b -> a.
"""

from __future__ import annotations

import time

import pytest

from georesolver_core.__main__ import main
from georesolver_core.wordnet.closure import ancestors, hypernym_graph, noun_closure
from georesolver_core.wordnet.database import read_synsets, sense_names

LICENCE = "  1 This software and database is being provided to you, the LICENSEE, by Princeton University\n"


def _synset(offset: int, lemma: str, hypernyms: list[int]) -> str:
    pointers = " ".join(f"@ {h:08d} n 0000" for h in hypernyms)
    return f"{offset:08d} 03 n 01 {lemma} 0 {len(hypernyms):03d} {pointers} | the gloss of {lemma}".replace(
        "  ", " "
    )


def _database(folder, lines: list[str]):
    folder.mkdir(exist_ok=True)
    (folder / "data.noun").write_text(LICENCE + "\n".join(lines) + "\n")
    index = [f"{lemma} n 1 0 1 0 {off:08d}" for off, lemma in ((100, "a"), (200, "b"), (300, "c"))]
    (folder / "index.noun").write_text(LICENCE + "\n".join(index) + "\n")
    return folder


GOOD = [_synset(100, "a", []), _synset(200, "b", [100]), _synset(300, "c", [200])]


def test_a_well_formed_small_database_reads(tmp_path):
    db = _database(tmp_path / "wn", GOOD)
    names, parents = hypernym_graph(db)
    assert names == ["a.n.01", "b.n.01", "c.n.01"] and parents == [[], [0], [1]]
    assert read_synsets("noun", db)[300].line == 4  # the licence line comes first
    closure = noun_closure(db)
    assert closure.n_nodes == 3 and closure.n_pairs == 3  # (b, a), (c, b), (c, a)


DAMAGED = {
    "a self-loop": ([_synset(100, "a", [100]), *GOOD[1:]], "data.noun, line 2: a synset is its own hypernym"),
    "a cycle": ([_synset(100, "a", [300]), *GOOD[1:]], "form a cycle through"),
    "a pointer to no synset": ([*GOOD[:2], _synset(300, "c", [999])], "line 4: a hypernym pointer names offset 00000999"),
    "a truncated line": ([*GOOD[:2], "00000300 03 n 01 c 0 002 @ 00000200"], "line 4: the line ends early"),
    "an offset that is no number": ([*GOOD[:2], _synset(300, "c", [200]).replace("00000200", "0000x200")],
                                    "line 4: a count or offset is not a number"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(DAMAGED), ids=list(DAMAGED))
def test_a_damaged_database_is_refused_with_its_line(tmp_path, case):
    lines, words = DAMAGED[case]
    db = _database(tmp_path / "wn", lines)
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="malformed WordNet database") as err:
        noun_closure(db)
    assert words in str(err.value), str(err.value)
    assert time.perf_counter() - t0 < 2


def test_a_malformed_index_line_is_named(tmp_path):
    db = _database(tmp_path / "wn", GOOD)
    (db / "index.noun").write_text(LICENCE + "a n 1 0 1 0 00000100\nb n x\n")
    with pytest.raises(ValueError, match=r"index.noun, line 3"):
        sense_names("noun", db)


def test_ancestors_refuse_any_cycle_and_keep_a_dag():
    assert ancestors([[], [0], [1], [1, 2]]) == [frozenset(), {0}, {0, 1}, {0, 1, 2}]
    for parents in ([[1], [0]], [[0]], [[], [2], [3], [1]], [[1], [2], [3], [4], [0]]):
        with pytest.raises(ValueError, match="cycle"):
            ancestors(parents)


def test_embed_and_the_text_task_on_a_damaged_database(tmp_path, monkeypatch, capsys):
    from georesolver_core.wordnet.glosses import load_corpus

    db = _database(tmp_path / "wn", [*GOOD[:2], "00000300 03 n 01 c 0 002 @ 00000200"])
    monkeypatch.setenv("WNSEARCHDIR", str(db))
    load_corpus.cache_clear()
    try:
        assert main(["embed", "--dataset", "wordnet-nouns", "--counts"]) == 2
        err = capsys.readouterr().err
        assert "malformed WordNet database" in err and "line 4" in err and "Traceback" not in err
        corpus = load_corpus("auto")  # the text task's corpus: the shipped subset, and why
        assert corpus.source == "subset" and "could not be read" in corpus.note and "line 4" in corpus.note
        assert "could not be read" in corpus.describe()
        with pytest.raises(ValueError, match="could not be read"):
            load_corpus("database")
    finally:
        load_corpus.cache_clear()


def test_the_text_task_falls_back_on_a_database_it_cannot_open(tmp_path, monkeypatch, capsys):
    """data.noun reads but data.verb is missing: an OSError, which the fallback (ValueError only) let through."""
    from georesolver_core.tasks import text
    from georesolver_core.wordnet.glosses import load_corpus

    monkeypatch.setenv("WNSEARCHDIR", str(_database(tmp_path / "wn", GOOD)))
    monkeypatch.chdir(tmp_path)
    load_corpus.cache_clear()
    text._encoded.cache_clear()
    try:
        task = text.TextTask(context=8)
        assert task.corpus.source == "subset" and len(task.train_ids) > 1000
        assert "could not be read" in task.describe() and "data.verb" in task.describe()
        argv = ["train", "--task", "text", "--size", "8", "--d-model", "16", "--layers", "1", "--steps", "1",
                "--batch-size", "2", "--eval-every", "1"]  # fmt: skip
        assert main(argv) == 0
        err = capsys.readouterr().err
        assert "note: the installed WordNet database could not be read" in err and "Traceback" not in err
    finally:
        load_corpus.cache_clear()
        text._encoded.cache_clear()
