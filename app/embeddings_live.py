"""The Embeddings page's live trainer: the shared Start / Pause / Resume /
Step / Stop / Reset controls (``trainer_controls``) around an ``EmbeddingTrainer``, and the live figure.

The trainer advances as a generator, one epoch per step, so Pause keeps the same trainer (points,
optimiser moments, sampler) and Resume or Step continue it. Redrawing is time-based, so the page trains
mostly: between redraws the fragment trains long enough that training takes TRAIN_SHARE of each cycle
(train, redraw, the browser's rendering), measured as it goes; mean rank and MAP are measured only when
the training since the last measurement took EVAL_RATIO times as long as that measurement took.
"""

from __future__ import annotations

import math
import time

import embeddings_wordnet as wn
import streamlit as st
import trainer_controls as tc
import ui

from georesolver_core.embeddings import EmbeddingTrainer
from georesolver_core.geometry import GEOMETRIES
from georesolver_core.labs import embeddings as lab
from georesolver_core.viz.embeddings import embedding_figure, embedding_view, lineage
from georesolver_core.viz.embeddings import training_history_figure as history_figure

PREFIX = "emb"  # trainer_controls keys: emb_start, emb_pause, emb_resume, emb_step, emb_stop, emb_reset; emb_job
SLICE_S = 0.5  # at most this much of one epoch per step (a large upload's epoch may be long)
EVAL_RATIO = 9.0  # train at least this many times as long as the last measurement took before the next (<= 10%)
BIG = 500  # nodes above which the picture uses smaller markers
TRAIN_SHARE = 0.7  # of each train-redraw cycle spent training
CHUNK_S = (1.0, 8.0)  # seconds of training between redraws: at least (a redraw per second at most), at most
state = st.session_state


def train_steps(trainer: EmbeddingTrainer):
    """trainer_controls' generator: yields (fraction, text, trainer) after each epoch; returns the trainer.

    Mean rank and MAP (``trainer.evaluate``) are added to the epoch's history record when they are due
    (see EVAL_RATIO) and at the end, so the history curve and the metric cards update as it trains."""
    cost, trained_at = 0.0, -math.inf
    while not trainer.done:
        trainer.run(epochs=1, time_budget_s=SLICE_S)
        epoch_end = math.isclose(trainer.progress * trainer.config.epochs, trainer.epoch)
        due = trainer.train_seconds - trained_at >= EVAL_RATIO * cost
        if trainer.history and epoch_end and due and "map" not in trainer.history[-1]:
            t0 = time.perf_counter()
            trainer.history[-1].update(trainer.evaluate())
            cost, trained_at = time.perf_counter() - t0, trainer.train_seconds
        text = f"epoch {trainer.epoch} / {trainer.config.epochs}, {trainer.train_seconds:.1f} s of training"
        yield trainer.progress, text, trainer
    return trainer


def controls(hier, config, *, relation, device, budget_s: float, autoplay: bool) -> None:
    """The six buttons; with ``autoplay`` a changed setting, or a first visit to a small hierarchy, starts a
    fresh run at once."""
    sig = None if config is None else (hier.fingerprint, config, str(device))

    def make():
        return train_steps(EmbeddingTrainer(hier, config, device=device, relation=relation))

    # A first visit starts small hierarchies at once; a big one (WordNet) waits for Train, so the page is
    # quick to open and idle until asked. A changed setting restarts either.
    first = "emb_last_sig" not in state
    if config is not None and autoplay and state.get("emb_last_sig") != sig and not (first and hier.n_nodes > BIG):
        state[f"{PREFIX}_job"] = tc.LiveJob(make(), sig, budget_s)
    state["emb_last_sig"] = sig
    tc.controls(PREFIX, tc.in_process(make), sig, budget_s=budget_s, disabled=config is None)


def _use_float64() -> None:
    # The precision widget sits in the sidebar, outside this fragment: a fragment rerun would not
    # redraw it, and the browser's old value would win on the next full run. Ask for a full run.
    state["dtype"] = "float64"
    state["emb_full_rerun"] = True


def _chunk_s() -> float:
    """Seconds to train before the next redraw, so that training takes TRAIN_SHARE of the cycle: the last
    redraw's seconds on the server plus the wait since then (the browser rendering it) set the rest."""
    timing = state.get("emb_timing")
    if not timing or timing["ended"] is None:
        return CHUNK_S[0]
    rest = timing["last_draw"] + min(time.perf_counter() - timing["ended"], 10.0)
    timing["idle"] += rest - timing["last_draw"]
    return min(CHUNK_S[1], max(CHUNK_S[0], rest * TRAIN_SHARE / (1 - TRAIN_SHARE)))


def _timing(job: tc.LiveJob) -> dict:
    """Where this run's time went: drawing and waiting for the browser (training and measuring: the job)."""
    timing = state.get("emb_timing")
    if timing is None or timing["job"] != id(job):
        timing = state["emb_timing"] = {"job": id(job), "draw": 0.0, "idle": 0.0, "last_draw": 0.0, "ended": None}
    return timing


def _time_caption(job: tc.LiveJob, tr: EmbeddingTrainer, timing: dict) -> None:
    measuring = max(0.0, job.seconds - tr.train_seconds)
    st.caption(
        f"Time of this run: {tr.train_seconds:.1f} s training, {measuring:.1f} s measuring, {timing['draw']:.1f} s "
        f"drawing, {timing['idle']:.1f} s waiting for the browser to render."
    )


def draw(job: tc.LiveJob) -> None:
    """The live run: its metrics (WordNet: beside the published record), the picture and the history."""
    if state.pop("emb_full_rerun", False):
        st.rerun(scope="app")
    t0, timing = time.perf_counter(), _timing(job)
    tr: EmbeddingTrainer = job.result if job.result is not None else job.partial
    if tr.status == "diverged":
        st.error(
            f"Training stopped: {tr.message}. Press Reset after changing the setting.", icon=":material/error:"
        )
        if not (math.isfinite(tr.model.c) and tr.model.c > 0):
            return  # the learnt curvature collapsed: there is no ball left to measure or draw the points in
    if job.status != tc.RUNNING and tr.history and "map" not in tr.history[-1]:
        tr.history[-1].update(tr.evaluate())  # paused or stopped between measurements: measure where it stands
    metrics = tr.metrics or tr.evaluate()
    wordnet = tr.relation is not tr.hierarchy.adjacency
    if wordnet:
        wn.record_cards(tr, metrics)
    else:
        cols = [col for _ in range(2) for col in st.columns(3)]  # three to a row: five cut labels short
        for col, (key, label, fmt, explain) in zip(cols, lab.METRIC_LABELS, strict=False):
            col.metric(label, format(metrics[key], fmt), help=explain)
        cols[4].metric(
            "c (k = -c)",
            f"{tr.model.c:.3g}" if GEOMETRIES[tr.config.geometry].has_curvature_parameter else "n/a",
            help="The ball's curvature parameter (learnt when 'Learn the curvature' is on).",
        )
    if warning := lab.rim_warning(tr):
        st.warning(warning, icon=":material/warning:")
        st.button("Switch to float64", key="emb_to_f64", on_click=_use_float64, icon=":material/swap_horiz:")
    found = state.get("emb_search")
    index = tr.hierarchy.nodes.index(found) if found in tr.hierarchy.nodes else None
    view = embedding_view(
        tr.points(),
        tr.hierarchy,
        geometry=tr.config.geometry,
        c=tr.model.c,
        root_at_centre=bool(state.get("emb_centre", False)),
        centre=index if index is not None and state.get("emb_recentre") else None,
    )
    fig = embedding_figure(
        view,
        names=bool(state.get("emb_names")),
        height=720 if wordnet else 680,
        marker_size=6 if tr.hierarchy.n_nodes > BIG else 10,
        highlight=lineage(tr.hierarchy, index) if index is not None else None,
        groups=wn.orders(tr.hierarchy) if wordnet else None,
    )
    ui.chart(fig, key="emb_live_fig")
    if tr.history:
        ui.chart(history_figure(tr.history), key="emb_hist_fig")
    _time_caption(job, tr, timing)
    timing["last_draw"] = time.perf_counter() - t0
    timing["draw"] += timing["last_draw"]
    timing["ended"] = time.perf_counter() if job.status == tc.RUNNING else None


def live() -> None:
    """The progress bar and ``draw``, retrained and redrawn in a fragment while the run goes on."""
    if tc.job(PREFIX) is None:
        st.info(
            "Press **Train** to train live; Pause, Step and Resume continue the same run, Stop keeps what was "
            "trained, Reset forgets it."
        )
    tc.live(PREFIX, draw, chunk_s=_chunk_s, every_s=0.2)
