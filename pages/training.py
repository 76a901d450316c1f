"""Training lab: GeoResolver models and their softmax baseline trained live, several runs overlaid.

Two sections: runs trained here (knobs -> ``TrainingLabConfig`` -> a worker run -> live curves, then one
run inspected), and the shipped language-model study (softmax against the inverse-distance kinds, tuned
alike). The session's runs, their buttons and the checkpoint upload are in app/training_page.py."""

from dataclasses import asdict, replace
from pathlib import Path

import jobs_ui
import pandas as pd
import streamlit as st
import training_page as tp
import ui
from knobs import Knob, draw, page_knobs

from georesolver_core.attention import ATTENTION
from georesolver_core.attention.layer import HIDA_SIZES
from georesolver_core.device import device_label
from georesolver_core.labs.training import (
    EVAL_EVERY,
    TrainingLabConfig,
    gate_check,
    model_gates,
    record_gates,
    sentence_inputs,
    sentence_map,
)
from georesolver_core.labs.training_runs import DIVERGED, FAILED, PAUSED, RUNNING, TrainingJob
from georesolver_core.tasks import TASKS
from georesolver_core.train import lm_study
from georesolver_core.train.trainer import resolve_device
from georesolver_core.viz.lm_study import equal_steps_table, equal_time_table, landing_figure, lr_figure
from georesolver_core.viz.text import attention_heatmap, bits_curves_figure, gap_at_common_step
from georesolver_core.viz.training import curve_from_history, curves_figure, gate_bound_figure, gate_figure

# How often the live fragment reads the worker's progress and redraws (else 0.5 s): each redraw costs the
# server and the browser, on cores the other sessions share (bench --serve).
POLL_S = {RUNNING: 1.0, PAUSED: 1.0}
SENTENCE = "a small domesticated carnivore"
STUDY = Path(__file__).resolve().parent.parent / "assets" / "lm_study.json"
STUDY_COMMAND = (
    "python -m georesolver_core lm-study --steps 400 --out assets/lm_study.json --kv-out assets/kv_pareto.json"
)


def _model_label(kernel: str) -> str:
    return "Softmax transformer (baseline)" if kernel == "softmax" else f"GeoResolver: {ATTENTION[kernel].label}"


KNOBS = page_knobs(
    "training",
    Knob("trn_task", "selectbox", "Task", "text", options=tuple(TASKS), format_func=lambda k: TASKS[k].label),
    Knob("trn_model", "selectbox", "Model", "ida", options=tuple(ATTENTION), format_func=_model_label),
    Knob("trn_width", "select_slider", "Width d_model", 64, options=(16, 32, 64, 128)),
    Knob("trn_layers", "slider", "Blocks", 1, lo=1, hi=4),
    Knob("trn_eps", "log_slider", "eps (inverse-distance regulariser)", 0.1, lo=1e-4, hi=10.0),
    Knob("trn_lr", "log_slider", "Learning rate", 2e-3, lo=1e-4, hi=1.0),
    Knob("trn_steps", "number_input", "Steps", 300, lo=1, hi=5000, step=50, bind=None),
    Knob("trn_gate", "toggle", "HyperGate (GeoResolver models)", True),
    Knob("trn_memory", "toggle", "Memory path: SIDA -> GSR -> DMG (section 11.1)", False,
         help="A prototype pool on the sphere, grown by surprise (DMG) and read by top-K routing (GSR)."),
    Knob("trn_show_attn", "toggle", "Show one head's attention on a sentence", True, bind=None),
    Knob("trn_sentence", "text_input", "Sentence (its last context-many characters are shown)", SENTENCE, bind=None),
    Knob("trn_show_gates", "toggle", "Show the HyperGate values of this model", True, bind=None),
    Knob("trn_claims", "toggle", "Show the training claims (Theorems 3 and 7.1, section 2.8; the shipped measurements)",
         False, bind=None),
)  # fmt: skip


# ---- knobs -> config -----------------------------------------------------------------------------------


def model_knobs() -> dict:
    """The task and model knobs, in a bordered box: the fields of ``TrainingLabConfig`` but seed and device."""
    with st.container(border=True):
        c1, c2, c3, c4 = st.columns(4)
        task, model = draw(KNOBS["trn_task"], c1), draw(KNOBS["trn_model"], c2)
        size_arg = TASKS[task].size_arg
        size = c3.number_input(
            f"Task size ({size_arg})" if size_arg else "Task size (fixed)",
            min_value=2 if task == "text" else 1, max_value=64, value={"recall": 16, "text": 32}.get(task, 8), step=1,
            key="trn_size", disabled=size_arg is None,
            help="recall: key-value pairs; copy: length; hierarchy: tree depth; noisy: training sequences / 8; text: context characters",
        )  # fmt: skip
        width = draw(KNOBS["trn_width"], c4)
        c5, c6, c7, c8 = st.columns(4)
        layers, eps, lr = draw(KNOBS["trn_layers"], c5), draw(KNOBS["trn_eps"], c6), draw(KNOBS["trn_lr"], c7)
        steps = draw(KNOBS["trn_steps"], c8)
        g1, g2 = st.columns(2)
        gating, memory = draw(KNOBS["trn_gate"], g1), draw(KNOBS["trn_memory"], g2)
        sizes = {}  # the HIDA sizes this kernel reads (the registry's list); empty: the paper's default
        names = ATTENTION[model].sizes
        for col, name in zip(st.columns(4) if names else [], names, strict=False):
            sizes[name] = col.number_input(
                HIDA_SIZES[name], 1, 64, None, step=1, key=f"trn_{name}", placeholder="paper's default"
            )
    return dict(
        task=task, size=int(size), kernel=model, width=width, layers=layers, eps=eps, lr=lr, steps=int(steps),
        gating=gating, memory=memory, sizes=tuple(sizes.items()),
    )  # fmt: skip


def run_config(fields: dict):
    """(spec, train config, None), or (None, None, why) when the knobs do not make a valid configuration."""
    s = ui.settings()
    try:
        spec, config = TrainingLabConfig(**fields, seed=s.seed, device=s.device.type).build()
    except ValueError as err:
        return None, None, str(err)
    return spec, config, None


def run_controls(spec, config, spec_error: str | None) -> None:
    """The run buttons, what kept a run from starting, and the device it trains on."""
    tp.run_buttons(spec, config)
    if spec_error:
        st.error(f"{spec_error}. Change the width or the blocks so the configuration is valid.")
    build_error = st.session_state.pop("trn_error", None)
    if build_error:
        st.error(build_error)
    st.caption(
        f"Device: **{device_label(resolve_device(config.device if config else 'auto'))}** "
        "(the sidebar's device: CUDA when available, else CPU)"
    )


# ---- 1. Runs trained here: live curves -----------------------------------------------------------------


def live_section() -> None:
    """The live fragment, polling while a run is active (``POLL_S``), else drawn once."""
    active = tp.active()
    st.session_state["trn_drawn_status"] = active.status if active else None  # what the buttons were drawn for
    st.fragment(live, run_every=POLL_S.get(active.status, 0.5) if active else None)()


def live() -> None:
    """Only this fragment reruns while a run is active: the worker's progress, curves and the runs table."""
    runs = tp.runs()
    for r in runs:
        r.sync()
    jobs_ui.touch()
    run = tp.active()
    if (run.status if run else None) != st.session_state.get("trn_drawn_status"):
        st.rerun()  # the run ended, or paused once its worker said it waits: the whole page, for the buttons
    shown = run or (runs[-1] if runs else None)
    if shown is None:
        st.info("Press **Start** to train the model configured above; curves appear here as it learns.")
        return
    progress_metrics(shown)
    text_runs = [r for r in runs if r.spec.task == "text"]
    if text_runs:
        text_curves(shown, text_runs)
    other = [r for r in runs if r.spec.task != "text"]
    if other:
        curves = [curve_from_history(f"#{r.id} {r.spec.label}", r.figure_history()) for r in other]
        ui.chart(curves_figure(curves), key="trn_curves")
    tp.runs_table()


def progress_metrics(shown: TrainingJob) -> None:
    """The shown run's progress bar, its failure if any, and its latest metrics."""
    metrics = shown.metrics()
    waiting = shown.waiting_text()
    st.progress(
        min(shown.step / shown.config.steps, 1.0),
        text=f"run #{shown.id} ({shown.status}): step {shown.step} of {shown.config.steps}"
        + (f"; {waiting}" if waiting else ""),
    )
    if shown.status in (DIVERGED, FAILED) and shown.message:
        st.error(f"{ui.escape_md(shown.message)}. Change the settings and press Start again.")
    m1, m2, m3 = st.columns(3)
    if metrics.text:
        m1.metric("validation bits/char", "n/a" if metrics.val_bits is None else f"{metrics.val_bits:.3f}")
        train_bits = "n/a" if metrics.train_bits is None else f"{metrics.train_bits:.3f}"
        m2.metric("training bits/char", train_bits)
    else:
        m1.metric("test accuracy", "n/a" if metrics.accuracy is None else f"{metrics.accuracy:.3f}")
        m2.metric("training loss", "n/a" if metrics.train_loss is None else f"{metrics.train_loss:.4f}")
    m3.metric("steps/s", "n/a" if metrics.steps_per_s is None else f"{metrics.steps_per_s:.1f}")


def text_curves(shown: TrainingJob, text_runs: list[TrainingJob]) -> None:
    """The text runs: the shown one's sample, every validation curve, the gap, the study's seeds."""
    if shown.spec.task == "text" and shown.sample:
        st.markdown(f"**Sample at step {shown.sample_step}** (prompt `a `, temperature 0.8):")
        st.code(shown.sample, language=None, wrap_lines=True)
    ui.chart(
        bits_curves_figure([(f"#{r.id} {r.spec.label}", r.figure_history()) for r in text_runs]),
        key="trn_bits_curves",
    )
    st.caption(
        "Validation loss in bits per character on glosses of synsets never trained on (lower is better; a "
        "uniform guess over the 96 characters is 6.58). Runs share the seed, so they see the same batches "
        "in the same order: at equal steps the gap between two curves is what the attention kernel costs "
        "or gains as a language model, the rest of the model being the same size."
    )
    _text_gap(text_runs)
    _study_landing(shown)


def _text_gap(text_runs: list[TrainingJob]) -> None:
    """The latest GeoResolver run against the latest softmax run, at the last step both were evaluated."""
    geo = next((r for r in reversed(text_runs) if r.spec.kernel != "softmax"), None)
    soft = next((r for r in reversed(text_runs) if r.spec.kernel == "softmax"), None)
    gap = gap_at_common_step(geo.history, soft.history) if geo and soft else None
    if gap is None:
        st.caption("Train a GeoResolver model and the softmax model: the gap between them is measured here.")
        return
    step, g, b = gap
    lower = f"run #{geo.id} (GeoResolver)" if g < b else f"run #{soft.id} (softmax)"
    st.markdown(
        f"**At step {step}** (the last step both were evaluated): GeoResolver run #{geo.id} "
        f"**{g:.3f}** bits/char, softmax run #{soft.id} **{b:.3f}** bits/char; {lower} is lower by "
        f"**{abs(g - b):.3f}** bits/char. The gap can change sign as training goes on: compare at several steps, "
        "and rerun both with another seed (sidebar) to see whether it holds."
    )


# ---- 2. The study: softmax against the inverse-distance kinds, tuned alike (train.lm_study) ------------


@st.cache_data(show_spinner=False, max_entries=1)  # one shipped file
def _study_report() -> dict:
    return lm_study.read_report(STUDY)


def _study_size(report: dict, name: str) -> dict:
    return next(s for s in report["sizes"] if s["name"] == name)


def _start_tuned(size: dict, kind: str) -> None:
    """The study's seed-0 run of ``kind`` at its best rate, as a run of this page (evaluated 8 times)."""
    s = lm_study.StudySize(name=size["name"], **size["config"])
    k = size["kinds"][kind]
    config = lm_study.train_config(s, k["best_lr"], 0, s.steps)
    tp.start(lm_study.run_spec(s, kind), replace(config, eval_every=max(s.steps // 8, 1)))
    runs = tp.runs()
    if runs and runs[-1].spec.kernel == kind:
        st.session_state.setdefault("trn_study_runs", {})[runs[-1].id] = (size["name"], kind)


def _study_landing(shown: TrainingJob) -> None:
    """Where the shown run lands against the study's seeds, when it is a tuned configuration of the study."""
    tagged_runs = st.session_state.get("trn_study_runs", {})
    tag = tagged_runs.get(shown.id)
    if tag is None:
        return
    tagged = [r for r in tp.runs() if tagged_runs.get(r.id) == tag]
    size = _study_size(_study_report(), tag[0])
    ui.chart(landing_figure([(f"#{r.id} {r.spec.label}", r.figure_history()) for r in tagged], size, tag[1]),
             key="trn_study_landing")  # fmt: skip
    st.caption(
        f"The {tag[1]} configuration of the study's {tag[0]} size, trained here: its validation nats against the "
        "step; the band spans the study's seeds at the last step, the star is its seed 0 (this run's seed)."
    )


def study_section() -> None:
    """The shipped study: validation loss against the rate per kind, the seeds, both tables, a live run."""
    st.subheader("Softmax or inverse distance on text, tuned alike: the study")
    try:
        report = _study_report()
    except (OSError, ValueError) as err:
        st.error(f"The shipped study cannot be read: {ui.escape_md(err)}. Regenerate it with `{STUDY_COMMAND}`.")
        return
    names = [s["name"] for s in report["sizes"]]
    c1, c2, c3 = st.columns([1, 1, 2])
    name = c1.selectbox("Model size", names, key="trn_study_size")
    size = _study_size(report, name)
    kind = c2.selectbox("Kind to train live", list(size["kinds"]), key="trn_study_kind")
    c3.button(
        f"Train {kind}'s tuned configuration live", key="trn_study_start", icon=":material/play_arrow:",
        on_click=_start_tuned, args=(size, kind),
        help="its best rate, seed 0, the study's size and steps on the CPU: it appears in the curves above",
    )  # fmt: skip
    c = size["config"]
    st.caption(
        f"Every kind: {c['n_layers']} blocks, width {c['d_model']}, {c['n_heads']} heads, context {c['context']}, "
        f"batch {c['batch_size']}, {c['steps']} steps; the same rate grid, best rate on the validation windows, then "
        f"{report['seeds']} seeds on held-out windows nothing else reads. Recipe: {report['recipe']}. "
        f"Regenerate: `{STUDY_COMMAND}`."
    )
    ui.chart(lr_figure(size), key="trn_study_lr")
    st.markdown(
        "**Equal steps.** A difference from softmax is *better* or *worse* only when its 95% interval (Welch) "
        "excludes zero; otherwise *no measurable difference*."
    )
    st.dataframe(equal_steps_table(size), hide_index=True, key="trn_study_steps")
    st.markdown("**Equal time.** Every kind trains for the seconds softmax needed, at its own speed.")
    st.dataframe(equal_time_table(size), hide_index=True, key="trn_study_time")
    ui.download_json("Study (JSON)", report, "lm_study.json", "trn_study_dl")


# ---- 1 (cont.). One run: downloads, its attention and its HyperGates ------------------------------------


def downloads(chosen: TrainingJob) -> None:
    """The chosen run's history (CSV, JSON with its configuration) and its newest checkpoint."""
    pick = chosen.id
    meta = {"spec": asdict(chosen.spec), "train_config": asdict(chosen.config), "status": chosen.status}
    d1, d2, d3 = st.columns(3)
    with d1:
        ui.download_csv("History (CSV)", pd.DataFrame(chosen.history), f"run{pick}_history.csv", "trn_dl_csv")
    with d2:
        ui.download_json(
            "History (JSON)", {"meta": meta, "history": chosen.history}, f"run{pick}_history.json", "trn_dl_json"
        )
    checkpoint = chosen.checkpoint_bytes()
    if checkpoint is None:
        d3.caption("Checkpoint (.pt): written at the run's first evaluation.")
    else:
        d3.download_button(
            "Checkpoint (.pt)",
            checkpoint,
            f"run{pick}_checkpoint.pt",
            key="trn_dl_ckpt",
            icon=":material/download:",
        )


def inspect(chosen: TrainingJob) -> None:
    """The chosen run's attention map and HyperGates, read from the newest checkpoint its worker wrote."""
    try:
        ins = chosen.inspected()
    except ValueError as err:  # a checkpoint damaged on disk: say so, the rest of the page stays
        st.error(f"Run #{chosen.id}'s checkpoint cannot be read: {ui.escape_md(err)}. Start the run again.")
        return
    if ins is None:
        st.info(
            f"Run #{chosen.id}'s model is read from its first checkpoint, written at its first evaluation "
            f"(step {min(EVAL_EVERY, chosen.config.steps)}): its attention and HyperGate values appear here then."
        )
        return
    st.caption(
        f"The model below is run #{chosen.id} at step {ins.step} (its newest checkpoint; rerun to refresh)."
    )
    sentence = SENTENCE
    if chosen.spec.task == "text" and draw(KNOBS["trn_show_attn"]):
        sentence = attention_map(chosen, ins)
    gates = model_gates(ins.model)
    if draw(KNOBS["trn_show_gates"]) and gates:
        hypergates(ins, gates, sentence)
    elif not gates:
        st.caption("This model has no HyperGate (the softmax baseline, or the gate switched off).")


def attention_map(chosen: TrainingJob, ins) -> str:
    """One head's causal attention over the sentence typed in; returns that sentence."""
    a1, a2, a3 = st.columns([3, 1, 1])
    sentence = draw(KNOBS["trn_sentence"], a1) or SENTENCE
    layer = a2.number_input("Block", 1, len(ins.model.blocks), 1, key="trn_attn_layer") - 1
    head = a3.number_input("Head", 1, chosen.spec.model.attention.n_heads, 1, key="trn_attn_head") - 1
    att = sentence_map(ins.model, sentence, int(layer), int(head))
    ui.chart(attention_heatmap(att.weights, att.text), key="trn_attn_fig")
    st.caption(
        "Row i: how the query at character i (predicting character i + 1) spreads its weight over characters "
        "0..i (causal: the upper triangle is zero)."
    )
    return sentence


def hypergates(ins, gates: list, sentence: str) -> None:
    """The gate values of one block and Theorem 7.1's gradient bound on them (section 7)."""
    # one forward pass: over 16 test examples, or the text model over the sentence above
    x = ins.examples if ins.examples is not None else sentence_inputs(ins.model, sentence)
    recorded = record_gates(ins.model, x)
    layer = st.slider("Block", 1, len(gates), 1, key="trn_gate_layer") - 1 if len(gates) > 1 else 0
    example = st.slider("Test example", 1, len(x), 1, key="trn_gate_example") - 1 if len(x) > 1 else 0
    if ins.examples is None:
        st.caption(
            f"HyperGate values of the text model on the sentence {sentence[-ins.model.config.max_len :]!r}."
        )
    values = recorded[layer]
    ui.chart(gate_figure(values, example, layer), key="trn_gate_fig")
    check = gate_check(gates[layer], values.u)  # verdicts.verdict_inequality per token, in the lab
    gb, holds = check.bound, check.holds
    with st.container(border=True):
        st.markdown("**What the theory says vs what we measured** (Theorem 7.1, section 7)")
        st.markdown(
            "`||dL/dx_i|| >= (lambda_min(G_i) - ||W_g|| ||x_i|| / 4) ||dL/dh_i||`: gradients through the gate do "
            f"not vanish while the bound is positive. On {check.n_tokens} tokens of this model (||W_g|| = "
            f"{gb.w_norm:.3g}): the bound **{'holds at every token' if holds else 'is violated somewhere'}**; it is "
            f"**vacuous** (<= 0) at {100 * check.vacuous:.0f}% of them; the smallest measured "
            f"ratio is {check.min_ratio:.3g}."
        )
    ui.chart(gate_bound_figure(gb), key="trn_gate_bound")


def run_section() -> None:
    """Pick a run: its downloads, then its model inspected."""
    runs = tp.runs()
    if not runs:
        return
    pick = st.selectbox("Run to inspect and download", [r.id for r in runs], index=len(runs) - 1, key="trn_pick")
    chosen = next(r for r in runs if r.id == pick)
    downloads(chosen)
    inspect(chosen)


# ---- The page ----------------------------------------------------------------------------------------------


def main() -> None:
    ui.page_header(
        "Training lab",
        "Train a small **GeoResolver** model (inverse-distance storage path + HyperGate, section 11.1) or the "
        "**softmax transformer** of the same size and parameter count on a task, live: start, pause, resume, step, "
        "stop. Runs stay overlaid so you can compare them; the HyperGate values of a trained model are drawn below. "
        "The default task is **English text** (WordNet's glosses, next character): train the GeoResolver model, "
        "then the softmax model, and compare their validation curves in bits per character. Runs train in a worker "
        "process beside the web server (one at a time per session; a server-wide queue when the workers are busy).",
    )
    for r in tp.runs():  # what the workers reported since the last rerun
        r.sync()
    try:
        jobs_ui.touch()
    except ValueError as err:  # no runner, no training: the page says why and how to serve it
        st.error(f"Training is not available on this server: {ui.escape_md(err)}.")
        st.stop()
    fields = model_knobs()
    spec, config, spec_error = run_config(fields)
    run_controls(spec, config, spec_error)
    live_section()
    if fields["task"] == "text":
        study_section()
    run_section()
    tp.upload_checkpoint()
    if draw(KNOBS["trn_claims"]):
        ui.page_claims("training", "trn")


main()
