"""Figures and tables of the language-model study (``train.lm_study``): rate curves, seed bands, verdicts."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from georesolver_core.viz.style import base_layout, kernel_colour, log_axis


def lr_figure(size: dict, height: int = 400) -> go.Figure:
    """Validation nats against the learning rate per kind (seed 0, the grid), and at each kind's best rate
    its seeds' held-out nats: mean with the 95% interval as an error bar, every seed as a dot (kinds that share
    a best rate are spread a few percent apart along the axis so that their bars do not hide each other)."""
    fig = go.Figure()
    n = len(size["kinds"])
    for i, (kind, k) in enumerate(size["kinds"].items()):
        colour = kernel_colour(kind)
        at = k["best_lr"] * 1.06 ** (i - (n - 1) / 2)  # kinds sharing a best rate drawn side by side
        curve = [p for p in k["lr_curve"] if p["val_nats"] is not None]  # None: that rate diverged
        fig.add_trace(go.Scatter(
            x=[p["lr"] for p in curve], y=[p["val_nats"] for p in curve], mode="lines+markers", name=kind,
            legendgroup=kind, line=dict(color=colour), hovertemplate="lr %{x:.0e}: validation %{y:.4f} nats",
        ))  # fmt: skip
        lo, hi = k["test_nats_ci95"]
        mean = k["test_nats_mean"]
        fig.add_trace(go.Scatter(
            x=[at], y=[mean], mode="markers", name=f"{kind}: seeds (held-out)", legendgroup=kind,
            marker=dict(color=colour, symbol="diamond", size=11, line=dict(color="black", width=1)),
            error_y=dict(type="data", symmetric=False, array=[hi - mean], arrayminus=[mean - lo], color=colour),
            hovertemplate=f"best lr {k['best_lr']:.0e}: held-out %{{y:.4f}} nats, 95% [{lo:.4f}, {hi:.4f}]",
        ))  # fmt: skip
        seeds = [s["test_nats"] for s in k["seeds"]]
        fig.add_trace(go.Scatter(
            x=[at] * len(seeds), y=seeds, mode="markers", showlegend=False, legendgroup=kind,
            marker=dict(color=colour, size=5, opacity=0.6), hovertemplate="a seed: %{y:.4f} nats",
        ))  # fmt: skip
    base_layout(fig, height=height)
    log_axis(fig, "x", title_text="peak learning rate (nanogpt recipe)")
    fig.update_yaxes(title_text="cross-entropy (nats per character)")
    return fig


def _verdict(k: dict) -> tuple[str, str]:
    v = k.get("verdict")
    if v is None:
        return "", "(reference)"
    lo, hi = v["ci95"]
    return f"{v['diff']:+.4f} [{lo:+.4f}, {hi:+.4f}]", v["word"]


def equal_steps_table(size: dict) -> pd.DataFrame:
    """One row per kind: best rate, held-out nats (mean, 95% interval), bits per character, speed, and the
    difference from softmax with its interval and the word it earns."""
    rows = []
    for kind, k in size["kinds"].items():
        lo, hi = k["test_nats_ci95"]
        diff, word = _verdict(k)
        rows.append({
            "kind": kind, "best lr": f"{k['best_lr']:.0e}" + (" (grid edge)" if k.get("best_at_grid_edge") else ""),
            "held-out nats": round(k["test_nats_mean"], 4), "95% interval": f"[{lo:.4f}, {hi:.4f}]",
            "bits/char": round(k["test_bits_per_char"], 4), "steps/s": round(k["steps_per_s_mean"], 1),
            "vs softmax (nats)": diff, "verdict": word,
        })  # fmt: skip
    return pd.DataFrame(rows)


def equal_time_table(size: dict) -> pd.DataFrame:
    """One row per kind: the steps it ran in softmax's seconds, held-out nats and the verdict at equal time."""
    rows = []
    for kind, k in size["kinds"].items():
        eq = k["equal_time"]
        if eq["test_nats_mean"] is None:
            rows.append({"kind": kind, "steps": eq["steps"], "seconds": round(eq["seconds"], 1),
                         "held-out nats": None, "95% interval": "a seed diverged", "vs softmax (nats)": "",
                         "verdict": ""})  # fmt: skip
            continue
        lo, hi = eq["test_nats_ci95"]
        v = eq.get("verdict")
        rows.append({
            "kind": kind, "steps": eq["steps"], "seconds": round(eq["seconds"], 1),
            "held-out nats": round(eq["test_nats_mean"], 4), "95% interval": f"[{lo:.4f}, {hi:.4f}]",
            "vs softmax (nats)": "" if v is None else f"{v['diff']:+.4f} [{v['ci95'][0]:+.4f}, {v['ci95'][1]:+.4f}]",
            "verdict": "(reference)" if v is None else v["word"],
        })  # fmt: skip
    return pd.DataFrame(rows)


def landing_figure(runs: list[tuple[str, list[dict]]], size: dict, kind: str, height: int = 360) -> go.Figure:
    """Live runs of one kind's tuned configuration (name, history rows with ``test_loss`` at evaluations):
    their validation nats against the step, and where the study's seeds ended (a band from the lowest to
    the highest seed's validation nats at the last step, seed 0 as a star)."""
    k = size["kinds"][kind]
    steps = size["config"]["steps"]
    vals = [s["val_nats"] for s in k["seeds"]]
    fig = go.Figure()
    fig.add_shape(type="rect", x0=0, x1=steps, y0=min(vals), y1=max(vals), line=dict(width=0),
                  fillcolor=kernel_colour(kind), opacity=0.2, layer="below")  # fmt: skip
    seed0 = next(s for s in k["seeds"] if s["seed"] == 0)
    fig.add_trace(go.Scatter(
        x=[steps], y=[seed0["val_nats"]], mode="markers", name=f"study, seed 0: {seed0['val_nats']:.4f}",
        marker=dict(symbol="star", size=14, color=kernel_colour(kind), line=dict(color="black", width=1)),
    ))  # fmt: skip
    for name, history in runs:
        evals = [r for r in history if r.get("test_loss") is not None]
        fig.add_trace(go.Scatter(x=[r["step"] for r in evals], y=[r["test_loss"] for r in evals],
                                 mode="lines+markers", name=name))  # fmt: skip
    base_layout(fig, height=height)
    fig.update_xaxes(title_text="optimiser step", range=[0, steps * 1.03])
    fig.update_yaxes(title_text="validation cross-entropy (nats per character)")
    return fig


def kv_winners_table(winners: list[dict]) -> pd.DataFrame:
    """One row per bytes-per-key budget of a KV-study model (``train.lm_study_kv.winners``): the best each
    family does within it (method, bits, held-out nats increase), the winner and the word its interval earns."""
    rows = []
    for w in winners:
        row = {"bytes per key <=": round(w["bytes_per_key"], 2)}
        for family, r in w["families"].items():
            row[family] = (
                "does not fit" if r is None else f"+{r['loss_increase']:.4f} ({r['method']}, {r['bits']} b)"
            )
        ci = w.get("ci95")
        row["winner"] = w["winner"]
        row["vs runner-up (nats)"] = "" if ci is None else f"{w['diff']:+.4f} [{ci[0]:+.4f}, {ci[1]:+.4f}]"
        row["word"] = w["word"]
        rows.append(row)
    return pd.DataFrame(rows)
