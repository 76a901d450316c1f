"""Compression lab: HCC polar key quantisation (paper section 6) against the KV-cache quantisers in use."""

import json
from dataclasses import replace
from pathlib import Path

import pandas as pd
import streamlit as st
import torch
import ui
from knobs import Knob, draw, page_knobs

from georesolver_core.compression import QUANTIZERS
from georesolver_core.compression.kv_eval import LABELS as KV_LABELS
from georesolver_core.compression.kv_eval import kv_summary, live_report
from georesolver_core.labs.compression import (
    BASELINES,
    MODELS,
    CompressionConfig,
    EffectConfig,
    MemoryConfig,
    compression_lab,
    memory_table,
    quantised_attention,
    sweep_keys,
)
from georesolver_core.train.lm_study_kv import KVStudy, kv_study_view
from georesolver_core.viz.compression import (
    METHOD_COLORS,
    attention_effect_figure,
    disk_figure,
    error_histogram,
    memory_figure,
    pareto_figure,
    ratio_figure,
)
from georesolver_core.viz.lm_study import kv_winners_table
from georesolver_core.viz.text import kv_pareto_figure

KV_REPORT = Path(__file__).resolve().parent.parent / "assets" / "kv_pareto.json"
KV_COMMAND = "python -m georesolver_core lm-study --steps 400 --kv-out assets/kv_pareto.json"
DIMS = [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
KEY_COUNTS = [1, 10, 100, 500, 1000, 2000, 5000, 10000, 20000]
CONTEXTS = [1024, 4096, 16384, 32768, 131072, 524288, 1048576]
KEY_KINDS = {"tanh": "the paper's keys, x = 0.9 tanh(z)", "rim": "near the rim, 1 - norm from 1e-2 to 1e-9"}
RADIUS_LABELS = {"euclidean": "norm r (paper)", "hyperbolic": "distance rho"}
DIRECTION_LABELS = {
    "implicit": "d_h - 1 coordinates + sign (6.2's count)",
    "all": "every coordinate (6.1's proof)",
}

KNOBS = page_knobs(
    "compression",
    Knob("cmp_b", "slider", "Direction bits b (per coordinate)", 4, lo=1, hi=16),
    Knob("cmp_br", "slider", "Radius bits b_r", 6, lo=1, hi=16),
    Knob("cmp_d", "select_slider", "Key dimension d_h", 64, options=tuple(DIMS)),
    Knob("cmp_n", "select_slider", "Number of keys", 2000, options=tuple(KEY_COUNTS)),
    Knob("cmp_radius", "segmented_control", "Radius mode", "euclidean", options=tuple(RADIUS_LABELS),
         format_func=RADIUS_LABELS.get,
         help="norm r: the paper's rounding of the Euclidean norm. distance rho: quantise the hyperbolic distance "
         "to the origin, uniform in hyperbolic length (finer near the rim)."),
    Knob("cmp_direction", "radio", "Direction layout", "implicit", options=tuple(DIRECTION_LABELS),
         format_func=DIRECTION_LABELS.get),
    Knob("cmp_baseline", "selectbox", "Baseline at the same storage", BASELINES[0], options=tuple(BASELINES),
         format_func=lambda m: QUANTIZERS[m].label,
         help="Its bit width is the largest whose real bytes fit in HCC's bytes for these keys."),
    Knob("cmp_kind", "radio", "Keys", "tanh", options=tuple(KEY_KINDS), format_func=KEY_KINDS.get),
    Knob("cmp_model", "selectbox", "Model", list(MODELS)[2], options=tuple(MODELS)),
    Knob("cmp_context", "select_slider", "Context length (tokens)", 131072, options=tuple(CONTEXTS)),
    Knob("cmp_attention", "toggle", "Measure IDA and Dense-HIDA on quantised keys (512 keys, bits 1-10; a few seconds)"),
    Knob("cmp_claims", "toggle", "Show the claims' panels", True),
)  # fmt: skip


@st.cache_data(show_spinner=False, max_entries=32)
def _lab(config: CompressionConfig):
    return compression_lab(config)


@st.cache_data(show_spinner=False, max_entries=16)
def _effect(method, d, b_r, radius, direction, kind, seed):
    return quantised_attention(EffectConfig(method, d, b_r, radius, direction, kind, seed))


@st.cache_data(show_spinner=False, max_entries=4)
def _kv_live(seed):
    return live_report(seed=seed)


def _knobs(seed: int, dtype: torch.dtype) -> CompressionConfig:
    """The key knobs, in four columns (bits, size, HCC's modes, what HCC is compared with), as the lab's config."""
    c1, c2, c3, c4 = st.columns(4)
    b, br = draw(KNOBS["cmp_b"], c1), draw(KNOBS["cmp_br"], c1)
    d, n = draw(KNOBS["cmp_d"], c2), draw(KNOBS["cmp_n"], c2)
    radius, direction = draw(KNOBS["cmp_radius"], c3), draw(KNOBS["cmp_direction"], c3)
    baseline, kind = draw(KNOBS["cmp_baseline"], c4), draw(KNOBS["cmp_kind"], c4)
    return CompressionConfig(
        n=n, d=d, bits_dir=b, bits_radius=br, radius=radius, direction=direction,
        baseline=baseline, kind=kind, seed=seed, dtype=dtype,
    )  # fmt: skip


def _run_lab(config: CompressionConfig):
    """(lab, config it ran): a mode the keys cannot be quantised in falls back to the Euclidean radius."""
    try:
        with st.spinner("Quantising the keys with HCC and every baseline ..."):
            return _lab(config), config
    except ValueError as err:
        st.error(
            f"These keys cannot be quantised in this mode: {err}. Fix: pick float64 in the sidebar (float32 rounds "
            "keys this close to the rim onto it) or the Euclidean radius mode. Showing the Euclidean radius mode instead."
        )
        config = replace(config, radius="euclidean")
        return _lab(config), config


def _metrics(lab, config: CompressionConfig) -> None:
    """Bits, ratio and the largest error of HCC, beside the baseline at the same storage."""
    st_, n, d, baseline = lab.stats, config.n, config.d, config.baseline
    if lab.n_used < n:
        st.caption(f"{n} keys of d_h = {d} would take too long here: {lab.n_used} keys are quantised.")
    m = st.columns(4)
    m[0].metric(
        "Bits per key, measured", f"{st_.bits_per_key_hcc:.2f}",
        f"stated (d_h - 1) b + b_r = {st_.bits_per_key_stated}", delta_color="off", delta_arrow="off",
    )  # fmt: skip
    m[1].metric(
        "Ratio vs float32, measured", f"{st_.ratio_measured:.3f}x",
        f"formula {st_.ratio_formula:.3f}x", delta_color="off", delta_arrow="off",
    )  # fmt: skip
    over = st_.keys_over_bound
    m[2].metric(
        "Largest ||k - k_hat||^2 (HCC)", f"{st_.max_err_hcc:.3g}",
        f"bound {lab.bound:.3g}: {over} of {lab.n_used} keys over" if over else f"bound {lab.bound:.3g}: all keys within",
        delta_color="red" if over else "green", delta_arrow="off",
    )  # fmt: skip
    m[3].metric(
        f"{QUANTIZERS[baseline].label}, int{lab.baseline_bits}", f"{st_.max_err_baseline:.3g}",
        f"{st_.bits_per_key_baseline:.1f} bits/key; mean error {st_.mean_err_baseline:.3g} "
        f"vs HCC {st_.mean_err_hcc:.3g}", delta_color="off", delta_arrow="off",
    )  # fmt: skip


def _error_figures(lab, config: CompressionConfig) -> None:
    """The d = 2 disk with reconstructions, and the histogram of every key's error against the bound."""
    b, br, d, baseline = config.bits_dir, config.bits_radius, config.d, config.baseline
    left, right = st.columns(2)
    recon = {"HCC": ("hcc", lab.disk_hcc), f"{baseline}, int{lab.baseline_bits}": (baseline, lab.disk_baseline)}
    ui.chart(
        disk_figure(lab.disk_keys, recon, title=f"d = 2 keys in the Poincaré disk, b = {b}, b_r = {br}"),
        key="cmp_disk",
        container=left,
    )
    hist_colors = {"HCC": METHOD_COLORS["hcc"], "baseline": METHOD_COLORS.get(baseline)}
    ui.chart(
        error_histogram(
            {"HCC": lab.errors, "baseline": lab.baseline_errors}, lab.bound, colors=hist_colors,
            title=f"Error of each of {lab.n_used} keys (d_h = {d}); baseline {baseline} int{lab.baseline_bits}",
        ),
        key="cmp_hist", container=right,
    )  # fmt: skip
    st.caption(
        "Left: each black dot is a key, each cross its reconstruction, the line between them the error vector. "
        "The disk uses d = 2 keys of the same kind; the histogram uses your d_h."
    )


def _storage_figures(lab, config: CompressionConfig) -> None:
    """Storage against error for every method, and the compression ratio against d_h."""
    b, br, d = config.bits_dir, config.bits_radius, config.d
    left, right = st.columns(2)
    hcc_bytes = lab.stats.bytes_hcc / lab.n_used
    len_sweep = min(lab.n_used, sweep_keys(d))
    ui.chart(
        pareto_figure(lab.sweep, highlight=("HCC now", hcc_bytes),
                      title=f"Storage vs error, bits 1-10 per method (first {len_sweep} keys)"),
        key="cmp_pareto", container=left,
    )  # fmt: skip
    ui.chart(
        ratio_figure(lab.ratio_by_dim, title=f"Key compression ratio, b = {b}, b_r = {br}"),
        key="cmp_ratio",
        container=right,
    )
    st.caption(
        "Pareto view: lower-left is better; at equal bytes per key compare the curves vertically. Text labels are "
        "bits. Right: the formula counts (d_h - 1) b + b_r bits; storing d_h - 1 coordinates also needs the sign of "
        "the last."
    )
    ui.download_csv("Download the sweep (CSV)", lab.sweep, "compression_sweep.csv", "cmp_dl_sweep")


def _memory_section(config: CompressionConfig) -> None:
    """A public model's KV cache at a context length: float caches against HCC keys (``memory_table``)."""
    st.subheader("Memory saved in a model's KV cache")
    k1, k2 = st.columns([3, 2])
    model, context = draw(KNOBS["cmp_model"], k1), draw(KNOBS["cmp_context"], k2)
    table = memory_table(MemoryConfig(model, context, config.bits_dir, config.bits_radius, config.direction))
    ui.chart(memory_figure(table, title=f"{model}, {context:,} tokens, batch 1"), key="cmp_memory", container=k1)
    k2.dataframe(
        table[["cache", "GiB", "ratio vs float32 cache", "ratio vs float16 cache"]].round(3), hide_index=True
    )
    k2.caption("HCC compresses keys only; values stay at the precision shown. Key bytes: real packed layout.")


def _attention_section(config: CompressionConfig) -> None:
    """IDA and Dense-HIDA with HCC's and the baseline's keys, for 10 bit widths (behind a toggle)."""
    st.subheader("Attention on quantised keys")
    if not draw(KNOBS["cmp_attention"]):
        return
    c, d = config, config.d
    with st.status("Quantising keys and running attention for 10 bit widths ...", expanded=False) as status:
        effects = {
            m_: _effect(m_, d, c.bits_radius, c.radius, c.direction, c.kind, c.seed) for m_ in ("hcc", c.baseline)
        }
        status.update(label="Attention measured", state="complete")
    for m_, eff in effects.items():
        ui.chart(
            attention_effect_figure(
                eff, title=f"{QUANTIZERS[m_].label}: attention with quantised keys (d_h = {d})"
            ),
            key=f"cmp_att_{m_}",
        )
        if eff.n_moved_inside.any():
            st.caption(f"{m_}: dequantised keys outside the ball were moved back inside for Dense-HIDA: "
                       f"{dict(zip(eff.bits, eff.n_moved_inside.tolist(), strict=True))} (bits: keys).")  # fmt: skip
    st.caption(
        "Queries are noisy copies of keys. The top-1 key is the nearest key for every eps, so agreement does not "
        "depend on eps; the output error does (small eps: nearly one-hot weights)."
    )


def _kv_downstream(study: KVStudy) -> None:
    """HCC against KIVI and optimum-quanto at equal bytes on every tuned model of the study."""
    st.markdown(f"**Every tuned model of the study, at equal bytes per key.** {ui.escape_md(study.summary)}.")
    models = {m.label: m for m in study.models}
    pick = st.selectbox("Tuned model", list(models), key="cmp_kv_model")
    m = models[pick]
    st.dataframe(kv_winners_table(m.winners), hide_index=True)
    st.caption(
        f"{pick}: held-out {m.float_loss:.4f} nats/char with float keys (the study's seed 0: "
        f"{m.study_test_nats:.4f}). Within each budget every family (HCC: HCC or HCC after a rotation; KIVI: "
        "per channel or per token; quanto: optimum-quanto as transformers' quantised cache uses it) shows its best "
        "row; a winner is named only when its per-window difference from the runner-up has a 95% interval below zero."
    )


def _shipped_report() -> dict | None:
    """The KV sweep shipped in assets, or None with an error saying how to regenerate it."""
    try:
        return json.loads(KV_REPORT.read_text())
    except (OSError, ValueError) as err:
        st.error(
            f"The shipped report {KV_REPORT.name} could not be read ({err}). Regenerate it with `{KV_COMMAND}`."
        )
        return None


def _kv_section(seed: int) -> None:
    """The shipped (or a live) KV sweep of a trained text model, and the study's tuned models."""
    st.subheader("The KV cache of a trained text model")
    st.markdown(
        "The keys of a character-level model trained on WordNet's glosses, tuned by the language-model study "
        "(Training page, text task: each kind's best rate, seed 0), quantised by every method at 2 to 8 bits per "
        "coordinate; queries and values stay in float. x: the bytes each key really takes (codes, scales, offsets, "
        "norms, seeds); y: how much the loss on held-out windows rises. Ringed points are on the Pareto front "
        "(nothing is both smaller and better)."
    )
    shipped = _shipped_report()
    if st.button("Re-run it live on a small model (1 block, width 32, 150 steps; about a minute on a CPU)",
                 key="cmp_kv_live", icon=":material/play_arrow:"):  # fmt: skip
        with st.status("Training a small text model and quantising its keys ...", expanded=False) as status:
            st.session_state["cmp_kv_live_report"] = _kv_live(seed)
            status.update(label="Live KV sweep done", state="complete")
    live_kv = "cmp_kv_live_report" in st.session_state
    report = st.session_state["cmp_kv_live_report"] if live_kv else shipped
    if report is not None:
        kv = kv_summary(report)
        st.caption(
            f"{'Live' if live_kv else 'Shipped'} report: {kv.attention} model, {kv.n_layers} blocks, width "
            f"{kv.d_model}, {kv.n_heads} heads, {kv.steps} steps; {kv.windows} {kv.split} windows of "
            f"{kv.context} characters ({kv.corpus}); float keys {kv.float_loss:.4f} nats/char. "
            "A loss increase at or below zero (noise) is drawn at 1e-6."
        )
        ui.chart(kv_pareto_figure(kv.rows, KV_LABELS), key="cmp_kv_pareto")
        st.markdown(
            " ".join(f"Best at {b_} bits/coordinate: **{KV_LABELS[r.method]}** (+{r.loss_increase:.2e} nats)."
                     for b_, r in kv.best.items() if r) + f" HCC is **{'on' if kv.hcc_on_front else 'not on'}** the Pareto front."
        )  # fmt: skip
        st.dataframe(
            pd.DataFrame(kv.rows).round(6), hide_index=True, key="cmp_kv_table",
        )  # fmt: skip
    study = kv_study_view(shipped) if shipped is not None else None
    if study is not None:
        _kv_downstream(study)


def main() -> None:
    ui.page_header(
        "Compression lab",
        "**HCC** stores a key as k = r u: the direction u rounded to **b** bits per coordinate, the radius r to "
        "**b_r** bits, packed into real bytes. Below: what is lost (errors against Theorem 6.1's bound), what is "
        "saved (bytes against Theorem 6.2), and how the quantisers in use today (KIVI, int4/int8) do on the same keys.",
    )
    s = ui.settings()
    lab, config = _run_lab(_knobs(s.seed, s.dtype))
    _metrics(lab, config)
    _error_figures(lab, config)
    _storage_figures(lab, config)
    _memory_section(config)
    _attention_section(config)
    _kv_section(s.seed)
    st.header("The paper's claims, measured")
    if draw(KNOBS["cmp_claims"]):
        ui.page_claims("compression", "cmp", figures_on_request=True)


main()
