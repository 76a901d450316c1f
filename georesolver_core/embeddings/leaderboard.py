"""The WordNet leaderboard: per closure (mammals, nouns) and dimension (2, 5, 10), each method's MAP and mean
rank (the published protocol, ``sparse.sparse_reconstruction``) and the CPU seconds it took on this machine.

Rows come from four sources, each labelled:

* ``trained here``: ``fast.FastPoincareTrainer`` for a fixed time budget, measured here;
* ``constructed here``: Sarkar's construction (``construct.py``) at d = 2, measured here (no training: its CPU
  seconds are the construction's);
* ``gensim``: gensim's ``PoincareModel`` (``benchmark.gensim_poincare``) for the same budget, when installed;
* ``quoted``: published figures with their source, never measured here (``cpu_seconds`` None).

A row may also be read from a report written earlier by a documented command (the shipped noun run,
``assets/wordnet_nouns.json``): its ``source`` names the file.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

from georesolver_core.embeddings.benchmark import GENSIM_SETTINGS
from georesolver_core.embeddings.fast import FastConfig
from georesolver_core.embeddings.runs import DEFAULT_TAU, SAMPLE_ABOVE, SAMPLE_ROWS, embed_construct, embed_fast
from georesolver_core.embeddings.wordnet import PUBLISHED_MAMMALS, PUBLISHED_NOUNS
from georesolver_core.validate import check_range
from georesolver_core.wordnet.closure import Closure

DIMS = (2, 5, 10)
NK2017 = "Nickel & Kiela (2017), Poincaré embeddings, Table 1"
QUOTED = {  # dataset -> dim -> figures, source: published, not measured here
    "wordnet-mammals": {
        d: {**q, "source": "the mammal record this project measures against (embeddings/wordnet.py)"}
        for d, q in PUBLISHED_MAMMALS["poincare"].items()
    },
    "wordnet-nouns": {10: {**PUBLISHED_NOUNS["poincare"][10], "source": NK2017}},
}
COLUMNS = ("dataset", "dim", "method", "map", "mean_rank", "cpu_seconds", "source")


def quoted_rows() -> list[dict]:
    """The published rows, labelled as quoted."""
    return [
        {"dataset": ds, "dim": d, "method": "published (quoted)", "map": q["map"], "mean_rank": q["mean_rank"],
         "cpu_seconds": None, "source": f"quoted: {q['source']}"}
        for ds, by_dim in QUOTED.items()
        for d, q in by_dim.items()
    ]  # fmt: skip


# The fast trainer's per-dataset settings where they differ from FastConfig's (tuned on the nouns): the
# mammal closure's 6,541 pairs make two 4,096-pair steps an epoch, so its batch is 512, at lr 0.05 per pair
# (MAP 0.93 at d = 5 within 10 CPU seconds, measured here).
TRAIN_SETTINGS = {"wordnet-mammals": {"batch_size": 512, "lr": 0.05}}


def trained_row(
    dataset: str, closure: Closure, dim: int, *, budget_s: float, seed: int = 0, out_points: str | None = None
) -> dict:
    """The fast trainer for ``budget_s`` CPU seconds (the same compute whatever else loads the machine);
    its points written to ``out_points`` when given."""
    cpu = time.process_time()
    config = FastConfig(dim=dim, seed=seed, sample=min(2000, closure.n_nodes), **TRAIN_SETTINGS.get(dataset, {}))
    sample = _sample(closure)
    doc = embed_fast(
        closure, config, time_budget_s=budget_s, cpu_budget=True, out_points=out_points, sample=sample
    )
    return {
        "dataset": dataset,
        "dim": dim,
        "method": "trained here",
        **_figures(doc["metrics"]),
        "cpu_seconds": time.process_time() - cpu,
        "wall_seconds": doc["wall_seconds"],
        "epochs": doc["epochs_run"],
        "settings": doc["settings"],
        "metrics_rows": doc["metrics_rows"],
        "source": f"measured here: embed --method fast, {budget_s:g} CPU-second budget{_estimated(doc['metrics_rows'], sample)}",
    }


def _sample(closure: Closure) -> int | None:
    """Rows ranked for a row measured here: all, or SAMPLE_ROWS above SAMPLE_ABOVE nodes (a short run's or a
    tree's points leave many unrelated nodes before a far ancestor, and sorting them for all 82,115 nouns takes
    tens of CPU minutes)."""
    return SAMPLE_ROWS if closure.n_nodes > SAMPLE_ABOVE else None


def _estimated(rows: int, sample: int | None) -> str:
    return "" if sample is None else f"; estimated on {rows:,} sampled nodes' rows"


def constructed_row(dataset: str, closure: Closure, *, tau: float) -> dict:
    cpu = time.process_time()
    sample = _sample(closure)
    doc = embed_construct(closure, tau=tau, sample=sample)
    rows = _estimated(doc["metrics_rows"], sample)
    return {
        "dataset": dataset,
        "dim": 2,
        "method": "constructed here",
        **_figures(doc["metrics"]),
        "edge_map": doc["edge_metrics"]["map"],
        "edge_mean_rank": doc["edge_metrics"]["mean_rank"],
        "tau": tau,
        "cpu_seconds": doc["build_cpu_seconds"],
        "eval_cpu_seconds": time.process_time() - cpu - doc["build_cpu_seconds"],
        "metrics_rows": doc["metrics_rows"],
        "source": f"measured here: embed --method construct --tau {tau:g}{rows}",
    }


GENSIM_OVERRUN = 1.5  # a row past this many budgets ran whole epochs beyond it: the notes say so
GENSIM_PROBE_PAIRS = 20_000  # pairs of a large closure timed for one gensim epoch before its row is run


def gensim_row(dataset: str, closure: Closure, dim: int, *, budget_s: float, seed: int = 0) -> dict | None:
    from georesolver_core.embeddings.benchmark import gensim_poincare

    cpu = time.process_time()
    sample = _sample(closure)
    g = gensim_poincare(closure, dim=dim, budget_s=budget_s, seed=seed, cpu_budget=True, sample=sample)
    if g is None:
        return None
    rows = closure.n_nodes if sample is None else min(sample, closure.n_nodes)
    return {
        "dataset": dataset,
        "dim": dim,
        "method": "gensim PoincareModel",
        **_figures(g),
        "cpu_seconds": time.process_time() - cpu,
        "train_cpu_seconds": g["train_cpu_seconds"],
        "epochs": g["epochs_run"],
        "metrics_rows": rows,
        "source": f"measured here: gensim defaults (benchmark.GENSIM_SETTINGS), {budget_s:g} CPU-second budget"
        + _estimated(rows, sample),
    }


def _gensim_fits(name: str, closure: Closure, dim: int, budget_s: float, seed: int, notes: list[str]) -> bool:
    """Whether one gensim epoch on a large closure fits the budget, timed on GENSIM_PROBE_PAIRS of its pairs;
    when it does not (or gensim is missing), a note says so with the measured figures."""
    from georesolver_core.embeddings.benchmark import gensim_epoch_cpu

    probe = gensim_epoch_cpu(closure, dim=dim, pairs=GENSIM_PROBE_PAIRS, seed=seed)
    if probe is None:
        return True  # gensim_row finds it missing and notes that
    if probe["epoch_cpu_seconds"] <= budget_s:
        return True
    notes.append(
        f"{name} d={dim}: no gensim row: one epoch of {probe['pairs']:,} sampled pairs took "
        f"{probe['cpu_seconds']:.0f} CPU s here, so one epoch of all {closure.n_pairs:,} would take about "
        f"{probe['epoch_cpu_seconds']:.0f}, past the {budget_s:g} CPU-second budget"
    )
    return False


def report_row(dataset: str, path: str | os.PathLike) -> dict:
    """A trained row from a report an ``embed --method fast`` run wrote (its figures, CPU and wall seconds)."""
    doc = json.loads(Path(path).read_text())
    if doc.get("method") != "fast":
        raise ValueError(f"path must be a report of embed --method fast (got method {doc.get('method')!r})")
    return {
        "dataset": dataset,
        "dim": doc["settings"]["dim"],
        "method": "trained here",
        **_figures(doc["metrics"]),
        "cpu_seconds": doc["cpu_seconds"],
        "wall_seconds": doc["wall_seconds"],
        "epochs": doc["epochs_run"],
        "source": f"measured here: {Path(path).name} (embed --method fast, {doc['settings']['time_budget_s']:g} "
        f"{doc['settings'].get('budget_clock', 'wall')} s budget)",
    }


def _figures(metrics: dict) -> dict:
    return {"map": float(metrics["map"]), "mean_rank": float(metrics["mean_rank"])}


def run_leaderboard(
    closures: dict[str, Closure],
    *,
    budget_s: float,
    dims=DIMS,
    reports: dict[str, str] | None = None,
    train: tuple[str, ...] = ("wordnet-mammals",),
    with_gensim: bool = True,
    seed: int = 0,
    log: Callable[[str], object] | None = None,
    on_row: Callable[[dict], object] | None = None,
    points_dir: str | os.PathLike | None = None,
) -> dict:
    """Rows for every closure in ``closures`` (dataset name -> Closure): trained here at each of ``dims`` for
    ``budget_s`` CPU seconds (datasets in ``train``; beside a longer run ``reports`` gives), constructed
    here at d = 2, gensim at each of ``dims`` (on a large closure only if one epoch fits the budget), the rows
    of ``reports`` (dataset -> a fast run's report), and the quoted rows. ``on_row(doc)`` gets the report so far after every row. With
    ``points_dir`` the trained d = 2 points go to ``<dataset>_d2.npz`` there (what the page draws)."""
    check_range("budget_s", budget_s, 0.1, 86_400.0)
    rows: list[dict] = []
    notes: list[str] = []

    def add(row: dict | None) -> None:
        if row is None:
            return
        rows.append(row)
        if log is not None:
            log(
                f"{row['dataset']} d={row['dim']} {row['method']}: MAP {row['map']:.3f}, mean rank {row['mean_rank']:.2f}"
            )
        if on_row is not None:
            on_row(_doc(rows, notes, budget_s, complete=False))

    for name, closure in closures.items():
        reported = report_row(name, reports[name]) if reports and name in reports else None
        for dim in dims if name in train else ():  # at a reported dimension too: the same budget as gensim's
            drawn = points_dir and dim == 2 and closure.n_nodes <= SAMPLE_ABOVE  # the page draws the mammals' disk
            out = str(Path(points_dir) / f"{name.replace('-', '_')}_d2.npz") if drawn else None
            add(trained_row(name, closure, dim, budget_s=budget_s, seed=seed, out_points=out))
        add(reported)
        add(constructed_row(name, closure, tau=DEFAULT_TAU.get(name, 3.0)))
        for dim in dims if with_gensim else ():
            if closure.n_nodes > SAMPLE_ABOVE and not _gensim_fits(name, closure, dim, budget_s, seed, notes):
                continue
            g = gensim_row(name, closure, dim, budget_s=budget_s, seed=seed)
            if g is None:
                notes.append("gensim rows skipped: gensim is not installed")
                break
            add(g)
            burn_in = GENSIM_SETTINGS["burn_in"]
            if g["epochs"] <= burn_in:
                notes.append(
                    f"{name} d={dim}: gensim ran {g['epochs']} epochs in the budget, all in its burn-in (its first "
                    f"{burn_in} epochs at rate {GENSIM_SETTINGS['burn_in_alpha']:g})"
                )
            if g["train_cpu_seconds"] > GENSIM_OVERRUN * budget_s:
                notes.append(
                    f"{name}: one gensim epoch outlasts the {budget_s:g} CPU-second budget "
                    f"({g['train_cpu_seconds'] / g['epochs']:.0f} CPU s an epoch): its row is what one epoch reaches"
                )
    rows.extend(quoted_rows())
    return _doc(rows, notes, budget_s, complete=True)


def _doc(rows: list[dict], notes: list[str], budget_s: float, *, complete: bool) -> dict:
    return {
        "protocol": "published reconstruction (directed hyponym -> ancestor closure), every node ranked exactly",
        "budget_s_per_trained_row": budget_s,
        "columns": list(COLUMNS),
        "machine_note": "2 CPU cores shared with other work: cpu_seconds is what each row used, wall seconds are "
        "pessimistic; quoted rows were not measured here",
        "load_average_1_5_15min": list(os.getloadavg()),
        "complete": complete,
        "notes": sorted(set(notes)),
        "rows": sorted(rows, key=lambda r: (r["dataset"], r["dim"], r["method"])),
    }


def merge_leaderboard(old: dict | None, new: dict) -> dict:
    """``new`` with the measured rows of ``old`` for datasets ``new`` has no measured rows of (one command per
    dataset writes into one file); quoted rows come from ``new`` only."""
    if not old:
        return new
    measured = {r["dataset"] for r in new["rows"] if r["cpu_seconds"] is not None}
    kept = [r for r in old.get("rows", []) if r["dataset"] not in measured and r["cpu_seconds"] is not None]
    notes = sorted(set(new["notes"]) | set(old.get("notes", [])))
    return {
        **new,
        "notes": notes,
        "rows": sorted(kept + new["rows"], key=lambda r: (r["dataset"], r["dim"], r["method"])),
    }


def leaderboard_table(doc: dict) -> list[dict]:
    """The rows as a table for display: dataset, d, method, MAP, mean rank, CPU s, source (pure data)."""
    return [
        {
            "dataset": r["dataset"],
            "d": r["dim"],
            "method": r["method"],
            "MAP": round(r["map"], 3),
            "mean rank": round(r["mean_rank"], 2),
            "CPU s": None if r.get("cpu_seconds") is None else round(r["cpu_seconds"], 1),
            "source": r["source"],
        }
        for r in doc["rows"]
    ]
