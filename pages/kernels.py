"""Kernel speed: the fused IDA / Dense-HIDA / SIDA kernels timed against torch SDPA, live or from a CLI report."""

import dataclasses
import time

import pandas as pd
import streamlit as st
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
LIVE_BUDGET_S = 90.0  # a live run stops here; the largest settings would otherwise run for a very long time


class OutOfTime(Exception):
    """The live benchmark passed LIVE_BUDGET_S (raised from its progress callback to end it)."""


# ---- The live benchmark ---------------------------------------------------------------------------------------


def live_knobs(s) -> tuple[dict, bool]:
    """The live benchmark's knobs, boxed with the CLI's command line: (their values by config field, Run pressed)."""
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
        run = st.button("Run benchmark", key="kern_run", icon=":material/play_arrow:", type="primary")
    values = dict(
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
    return values, run


def run_live(cfg: bench.BenchConfig) -> None:
    """Times the kernels one length at a time into ``kern_report_live``, with a progress bar, a Stop button
    and the LIVE_BUDGET_S budget."""
    # Pressing Stop reruns the page, which ends the running benchmark at its next progress report; the
    # benchmark runs one length at a time and keeps each finished length, so Stop loses only the one running.
    stop = st.empty()
    stop.button("Stop", key="kern_stop", icon=":material/stop:", help="Ends the live benchmark now.")
    started = time.perf_counter()
    lens = cfg.seq_lens

    def progress(frac: float, msg: str) -> None:
        if time.perf_counter() - started > LIVE_BUDGET_S:
            raise OutOfTime(msg)
        bar.progress(min(max((i + frac) / len(lens), 0.0), 1.0), text=msg)

    st.session_state.pop("kern_report_live", None)
    with st.status("Timing kernels ...", expanded=True) as status:
        bar = st.progress(0.0, text="starting")
        try:
            for i, seq_len in enumerate(lens):
                last = i == len(lens) - 1
                sub = dataclasses.replace(
                    cfg, seq_lens=(seq_len,), memory_check_len=cfg.memory_check_len if last else 0
                )
                part = bench.run_benchmark(sub, progress=progress)
                report = bench.merge_length(st.session_state.get("kern_report_live"), part, lens[: i + 1])
                st.session_state["kern_report_live"] = report  # kept if Stop or the budget ends the run
        except OutOfTime as where:
            status.update(label="Benchmark stopped", state="error", expanded=False)
            kept = st.session_state.get("kern_report_live")
            st.error(
                f"The live benchmark passed its {LIVE_BUDGET_S:.0f} s budget at {where} and was stopped"
                + (
                    f"; the lengths timed before it are kept (T = {bench.report_header(kept).seq_lens})"
                    if kept
                    else ""
                )
                + ". Fewer or shorter lengths, fewer repeats or kernels fit; the full run belongs to the CLI: "
                "`python -m georesolver_core bench --json > bench.json`, then load the file below."
            )
        else:
            status.update(label="Benchmark finished", state="complete", expanded=False)
    stop.empty()  # no stale Stop once the run has ended


def live_section(s) -> None:
    """The knobs, and on Run the benchmark (an impossible config shows its fix instead)."""
    values, run = live_knobs(s)
    if not run:
        return
    try:
        cfg = bench.BenchConfig(**values)
    except ValueError as err:
        st.error(f"Cannot run this benchmark: {err}. Pick at least one length and one kernel.")
    else:
        run_live(cfg)


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
