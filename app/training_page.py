"""The Training page's runs (pages/training.py draws the rest): the session's worker runs, what the Start /
Pause / Resume / Step / Stop / Reset buttons do to them, the runs table, and a checkpoint uploaded to go on.

Only that page uses this module. It is apart from the page because together they run past 450 lines, and
a helper cannot sit under pages/: every file there is read as a page (the navigation's list, the page tests).

Buttons act in callbacks, before the page reruns, so every button is drawn with the state it changed. The
runs live in session state (``trn_runs``): a callback and a fragment rerun read the same list.
"""

from __future__ import annotations

import io
import uuid

import jobs_ui
import pandas as pd
import streamlit as st
import torch
import ui

from georesolver_core.jobs import JobSpec, train_config
from georesolver_core.labs.training_runs import PAUSED, RUNNING, TrainingJob, stop_all
from georesolver_core.train import RunSpec, TrainConfig
from georesolver_core.train.checkpoint import MAX_CHECKPOINT_BYTES
from georesolver_core.train.run import read_checkpoint_upload

SAMPLE_EVERY = 50  # steps between refreshed text samples (generating costs about as much as a few steps)
SAMPLE_CHARS = 160


def runs() -> list[TrainingJob]:
    """This session's runs, oldest first."""
    return st.session_state.setdefault("trn_runs", [])


def active() -> TrainingJob | None:
    """The newest run still training or paused, if any."""
    return next((r for r in reversed(runs()) if r.active), None)


def submit(spec: RunSpec, config: TrainConfig, job: dict) -> None:
    """Stop this session's run, if any, and queue a worker for ``job`` (a ``jobs.train_job`` config)."""
    stop_all(runs())
    job = {**job, "sample_chars": SAMPLE_CHARS, "sample_every": SAMPLE_EVERY}
    try:
        handle = jobs_ui.runner().submit(JobSpec("train", job), owner=jobs_ui.owner())
    except ValueError as err:
        st.session_state["trn_error"] = f"Could not start this run: {err}"
        return
    runs().append(TrainingJob(len(runs()) + 1, spec, config, handle))


def start(spec: RunSpec, config: TrainConfig) -> None:
    submit(spec, config, train_config(spec, config))


def _pause() -> None:
    run = active()
    if run is not None:
        run.handle.pause()


def _resume() -> None:
    run = active()
    if run is not None:
        run.handle.resume()  # the same worker: its step, optimiser state and batch stream go on


def _step() -> None:
    """One optimiser step: a running run pauses after the step in flight, then takes one more."""
    run = active()
    if run is not None:
        run.handle.pause()
        run.handle.step()


def _stop() -> None:
    run = active()
    if run is not None:
        run.handle.stop()  # the worker checkpoints the run so far and ends within a second


def _reset() -> None:
    stop_all(runs())
    runs().clear()


def run_buttons(spec: RunSpec | None, config: TrainConfig | None) -> None:
    """Start (disabled without a valid configuration), Pause, Resume, Step, Stop and Reset, in one row."""
    run = active()
    status = run.status if run else None
    b1, b2, b6, b3, b4, b5 = st.columns(6)
    b1.button(
        "Start", key="trn_start", icon=":material/play_arrow:", type="primary", disabled=spec is None,
        on_click=start, args=(spec, config),
    )  # fmt: skip
    b2.button("Pause", key="trn_pause", icon=":material/pause:", disabled=status != RUNNING, on_click=_pause)
    b6.button(
        "Resume", key="trn_resume", icon=":material/resume:", disabled=status != PAUSED, on_click=_resume,
        help="continue the paused run where it stopped (Start begins a new run)",
    )  # fmt: skip
    b3.button(
        "Step",
        key="trn_step",
        icon=":material/skip_next:",
        disabled=status not in (RUNNING, PAUSED),
        on_click=_step,
    )
    b4.button("Stop", key="trn_stop", icon=":material/stop:", disabled=run is None, on_click=_stop)
    b5.button("Reset", key="trn_reset", icon=":material/restart_alt:", disabled=not runs(), on_click=_reset)


def runs_table() -> None:
    """Every run with its current step: drawn in the live fragment, so it follows the run that trains."""
    table = pd.DataFrame(
        [
            {
                "run": r.id, "model": r.spec.label, "task": r.spec.task, "size": r.spec.size,
                "d_model": r.spec.model.d_model, "blocks": r.spec.model.n_layers,
                "eps": r.spec.model.attention.eps, "gate": r.spec.model.gating, "lr": r.config.lr,
                "steps": r.step, "test accuracy": r.metrics().accuracy,
                "seconds": round(r.seconds, 2), "status": r.status,
            }
            for r in runs()
        ]
    )  # fmt: skip
    st.dataframe(table, hide_index=True, key="trn_table")


def upload_checkpoint() -> None:
    """A checkpoint uploaded, checked, and continued in a worker."""
    with st.expander("Upload a checkpoint to inspect or continue it"):
        upload = st.file_uploader(
            "Checkpoint (.pt) from this page or `python -m georesolver_core train`", key="trn_upload"
        )
        upload, error = ui.read_upload(
            upload, key="trn_upload", max_bytes=MAX_CHECKPOINT_BYTES, parse=read_checkpoint_upload
        )
        if error is not None:
            st.error(
                f"{ui.escape_md(error)}. Upload a checkpoint downloaded from this page or written by the train command."
            )
        if upload is not None:
            st.markdown(f"Checkpoint of **{upload.spec.kernel}** on **{upload.spec.task}**, step {upload.step}.")
            if st.button("Continue this run", key="trn_continue"):
                # the checkpoint as read and checked, written where the worker reads it (torch's safe loader)
                path = jobs_ui.runner().runs_dir / "uploads" / f"{uuid.uuid4().hex}.pt"
                path.parent.mkdir(parents=True, exist_ok=True)
                buf = io.BytesIO()
                torch.save(upload.data, buf)
                path.write_bytes(buf.getvalue())
                submit(upload.spec, TrainConfig(**upload.data["train_config"]), {"resume": str(path)})
                st.rerun()
