"""Kernel speed: the fused IDA / Dense-HIDA / SIDA kernels timed against torch SDPA, live or from a CLI report."""

import pandas as pd
import streamlit as st
import trainer_controls as tc
import ui
from knobs import Knob, draw, page_knobs

from georesolver_core import bench
from georesolver_core.viz.kernels import PHASES, memory_figure, ratio_figure, time_figure

LIVE_LENS = [32, 64, 128, 256, 512, 1024, 2048]  # a live run stays short; the CLI goes to 16384
NAIVE_MAX_LEN = 1024  # naive kernels hold T x T matrices: only timed up to here

KNOBS = page_knobs(
    "kernels",
    Knob("kern_seq_lens", "multiselect", "Sequence lengths T", (128, 256, 512), options=tuple(LIVE_LENS)),
    Knob("kern_kernels", "multiselect", "Kernels", ("sdpa", *bench.FUSED), options=tuple(bench.TIMED_KERNELS),
         format_func=lambda k: bench.TIMED_KERNELS[k].label,
         help=f"Naive kernels materialise T x T matrices and are only timed up to T = {NAIVE_MAX_LEN}."),
    Knob("kern_repeats", "slider", "Timed repeats", 3, lo=1, hi=9),
    Knob("kern_heads", "select_slider", "Heads H", 4, options=(1, 2, 4, 8)),
    Knob("kern_head_dim", "select_slider", "Head size D", 64, options=(8, 16, 32, 64, 128)),
    Knob("kern_eps", "log_slider", "eps", 0.1, lo=1e-4, hi=10.0,
         help="The kernels' regulariser; speed barely depends on it."),
    Knob("kern_causal", "toggle", "Causal mask"),
    Knob("kern_memory", "toggle", "Measure peak memory (one extra profiled call per kernel and length)"),
    Knob("kern_phase", "segmented_control", "Phase", "fwdbwd", options=tuple(PHASES), format_func=PHASES.get),
)  # fmt: skip
LIVE_BUDGET_S = 90.0  # seconds of timing per run; the largest settings would otherwise run for a very long time


# ---- The live benchmark ---------------------------------------------------------------------------------------


def live_knobs(s) -> dict:
    """The live benchmark's knobs, boxed with the CLI's command line: their values by config field."""
    dtype_name = str(s.dtype).replace("torch.", "")
    with st.container(border=True):
        st.markdown(
            "**Live benchmark** (small lengths; every repeat times all kernels back to back, median reported)"
        )
        c1, c2, c3 = st.columns(3)
        seq_lens, kernels = draw(KNOBS["kern_seq_lens"], c1), draw(KNOBS["kern_kernels"], c2)
        repeats = draw(KNOBS["kern_repeats"], c3)
        c4, c5, c6 = st.columns(3)
        heads, head_dim = draw(KNOBS["kern_heads"], c4), draw(KNOBS["kern_head_dim"], c5)
        eps = draw(KNOBS["kern_eps"], c6)
        c7, c8 = st.columns(2)
        causal, memory = draw(KNOBS["kern_causal"], c7), draw(KNOBS["kern_memory"], c8)
        st.caption(
            f"Device **{s.device}**, precision **{dtype_name}** (sidebar). The full benchmark runs headless: "
            "`python -m georesolver_core bench --json > bench.json` (T up to 16384 and a memory check at T = 32768); "
            "load its output below."
        )
    return dict(
        seq_lens=tuple(sorted(seq_lens)),
        kernels=tuple(kernels),
        heads=heads,
        head_dim=head_dim,
        eps=eps,
        causal=causal,
        repeats=repeats,
        dtype=dtype_name,
        device=s.device.type,
        naive_max_len=NAIVE_MAX_LEN,
        memory=memory,
    )


def _draw_live(job: tc.WorkerJob) -> None:
    """The lengths timed so far; at the time budget, what fits instead (the report itself is drawn below)."""
    kept = tc.kept_result(job)
    lens = bench.report_header(kept).seq_lens
    if job.status in tc.ACTIVE:
        st.caption(f"Timed so far: T = {lens}; the table and curves below show them when the run ends.")
    if job.status == tc.BUDGET:
        st.error(
            f"The live benchmark passed its {LIVE_BUDGET_S:.0f} s budget and was stopped; the lengths timed "
            f"before it are kept (T = {lens}). Fewer or shorter lengths, fewer repeats or kernels fit; the full "
            "run belongs to the CLI: `python -m georesolver_core bench --json > bench.json`, then load the file "
            "below."
        )


def live_section(s) -> None:
    """The knobs and the trainer controls: Run benchmark times the kernels in a worker, one length at a time
    (an impossible config shows its fix instead); Stop keeps the lengths already timed."""
    values = live_knobs(s)
    try:
        cfg = bench.BenchConfig(**values)
    except ValueError as err:
        cfg, problem = None, err
    tc.controls(
        "kern",
        tc.in_worker(bench.benchmark_steps, cfg),
        cfg,
        budget_s=LIVE_BUDGET_S,
        disabled=cfg is None,
        what="Run benchmark",
    )
    if cfg is None:
        st.error(f"Cannot run this benchmark: {problem}. Pick at least one length and one kernel.")
    tc.live("kern", _draw_live)
    kept = tc.kept_result(tc.job("kern"))  # read after ``live``'s poll: the newest lengths
    if kept is None:
        st.session_state.pop("kern_report_live", None)
    else:
        st.session_state["kern_report_live"] = kept


# ---- The reports: the live run's and an uploaded one -------------------------------------------------------


def report_sources() -> dict:
    """The reports to choose from: the live run's, and a report the CLI wrote, uploaded here."""
    uploaded = st.file_uploader(
        "Or load a report written by `python -m georesolver_core bench --json`",
        type=["json"],
        key="kern_upload",
        help=f"At most {bench.MAX_REPORT_BYTES // 2**20} MB (a full CLI report is a few kB).",
    )
    report_file, report_error = ui.read_upload(
        uploaded, key="kern_upload", max_bytes=bench.MAX_REPORT_BYTES, parse=bench.load_report
    )
    if report_error is not None:
        st.error(
            f"This file is not a benchmark report: {ui.escape_md(report_error)}. Produce one with "
            "`python -m georesolver_core bench --json > bench.json` and upload that file."
        )
    sources = {"live run": st.session_state["kern_report_live"]} if "kern_report_live" in st.session_state else {}
    if report_file is not None:
        sources["uploaded file"] = report_file
    return sources


@st.fragment
def show_report(sources: dict) -> None:
    if not sources:
        st.info("Run the benchmark or load a report to see the table and curves.")
        return
    source = st.segmented_control("Show", list(sources), default=list(sources)[-1], key="kern_source")
    source = source if source in sources else list(sources)[-1]
    try:
        draw_report(sources[source])
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as err:
        st.error(
            f"This report could not be drawn ({type(err).__name__}: {ui.escape_md(err)}); it is set aside. "
            "Upload a report written by `python -m georesolver_core bench --json`."
        )
        if source == "uploaded file":  # keep only the message: the page must not trip over it again
            saved = st.session_state.get("kern_upload_parsed") or {}
            st.session_state["kern_upload_parsed"] = {"id": saved.get("id"), "value": None, "error": str(err)}


def report_caption(report: dict) -> None:
    """Where and how the report was measured."""
    h, esc = bench.report_header(report), ui.escape_md
    st.caption(
        f"torch {esc(h.torch)} on {esc(h.device_name)}, {esc(h.threads)} threads, "
        f"{esc(h.dtype)}, CPU kernel: {esc(h.cpu_path)}, machine load average {esc(h.load_average_1min)} at the start; "
        f"B = {esc(h.batch)}, H = {esc(h.heads)}, D = {esc(h.head_dim)}, "
        f"eps = {esc(h.eps)}, causal = {esc(h.causal)}; median of {esc(h.repeats)} "
        f"repeats after {esc(h.warmup)} warm-up. Memory: {esc(h.memory_method)}"
    )


def report_verdicts(report: dict) -> None:
    """The fused kernels' targets and the scaling checks, judged from the report."""
    targets = bench.report_targets(report)
    with st.container(border=True):
        st.markdown("**Targets of the fused kernels, judged from this report**")
        for t in targets:
            badge = {True: ":green-badge[met]", False: ":red-badge[not met]", None: ":gray-badge[not measured]"}[
                t.met
            ]
            measured = "n/a" if t.measured is None else f"{t.measured:.2f}"
            st.markdown(f"{badge} {ui.escape_md(t.target)}: measured **{measured}**")
    evidence = bench.complexity_evidence(report)
    if evidence:
        ui.theory_box(evidence)
    else:
        st.caption(
            f"The scaling checks (time ~ T^2 by Proposition 1, memory ~ T) need two lengths of at least "
            f"{bench.COMPLEXITY_MIN_LEN}: below that, fixed per-call costs hide the growth."
        )


def report_figures(report: dict) -> None:
    """Time, ratio to SDPA and memory against T, for the chosen phase."""
    phase = draw(KNOBS["kern_phase"])
    tab_time, tab_ratio, tab_mem = st.tabs(["Time vs T", "Ratio to SDPA", "Memory vs T"])
    with tab_time:
        ui.chart(time_figure(report, phase), key="kern_time_fig")
    with tab_ratio:
        ui.chart(ratio_figure(report, phase), key="kern_ratio_fig")
    with tab_mem:
        if bench.has_memory(report):
            ui.chart(memory_figure(report), key="kern_mem_fig")
        else:
            st.info("No memory was measured in this report: switch on 'Measure peak memory' and run again.")


def draw_report(report: dict) -> None:
    """One report: where it was measured, its table, the verdicts, the figures and the downloads."""
    report_caption(report)
    table = pd.DataFrame(bench.report_table(report))
    st.dataframe(
        table,
        hide_index=True,
        column_config={
            c: st.column_config.NumberColumn(format="%.2f")
            for c in table.columns
            if c not in ("kernel", "label", "T")
        },
        key="kern_table",
    )
    report_verdicts(report)
    report_figures(report)
    d1, d2 = st.columns(2)
    with d1:
        ui.download_json("Download the report (JSON)", report, "kernel_bench.json", "kern_dl_json")
    with d2:
        ui.download_csv("Download the table (CSV)", table, "kernel_bench.csv", "kern_dl_csv")


# ---- The page ---------------------------------------------------------------------------------------------


def main() -> None:
    ui.page_header(
        "Kernel speed",
        "How fast is inverse-distance attention? The **fused** kernels stream over key blocks (no T x T matrix, "
        "custom backward; on the CPU one compiled call each way) and are timed here against PyTorch's fused softmax attention (**SDPA**) on the same shapes, "
        "in one run, so the **ratio to SDPA** is the number to read.",
    )
    s = ui.settings()
    live_section(s)
    show_report(report_sources())


main()
