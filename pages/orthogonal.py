"""Orthogonal residuals (seed 003): Cayley rotation, Householder reflection, their hybrid, DDL and additive."""

import lecture
import pandas as pd
import streamlit as st
import trainer_controls as tc
import ui

from georesolver_core.extras.orthogonal import KINDS
from georesolver_core.extras.orthogonal_lab import norm_and_gain, operator_view
from georesolver_core.extras.orthogonal_tasks import (
    TASKS,
    TaskConfig,
    compare_steps,
    expected_params,
    summarise,
)
from georesolver_core.theory.orthogonal import (
    cayley_gap_to_minus_one,
    ddl_orthogonality_defect,
    hybrid_orthogonality_defect_bound,
)
from georesolver_core.viz.orthogonal import eigenvalue_figure, norm_drift_figure, operator_figure, training_figure

ui.page_header(
    "Orthogonal residuals",
    "A residual shortcut can **rotate** (data-dependent Cayley Q, always orthogonal, never a pure flip), "
    "**reflect** (Householder H, det -1), or **mix** both with a gate gamma (the hybrid, orthogonal only at "
    "gamma in {0, 1}). Move the sliders and watch lengths, angles and the spectrum of Q.",
)
s = ui.settings()
TRAIN_BUDGET_S = 120.0  # seconds of training per run of the Train button (6 seeds x 5 kinds x 600 steps fits)


@st.cache_data(show_spinner=False, max_entries=64)
def _view(beta, gamma, ddl_beta, tilt, k_az, x_az):
    return operator_view(beta, gamma, ddl_beta, tilt, k_az, x_az)


@st.cache_data(show_spinner=False, max_entries=16)
def _drift(depth, dim, branch, seed):
    depths = sorted({d for d in (1, 2, 4, 8, 16, 32, 64, 128, 256) if d <= depth} | {depth})
    return depths, *norm_and_gain(list(KINDS), depths, dim=dim, seed=seed, branch=branch, batch=32)


# --- One vector under each operator -------------------------------------------------------------------------
st.subheader("One vector under Q, H, the hybrid and DDL")
c1, c2, c3 = st.columns(3)
with c1:
    beta = ui.log_slider(
        "Cayley magnitude beta", "orth_beta", 0.01, 10000.0, 1.0, help="Q rotates by theta = 2 atan(beta/2) here."
    )
    tilt = lecture.widget(
        st.slider, "Tilt of the rotation plane (deg)", 0, 90, 0, key="orth_tilt", bind="query-params"
    )
with c2:
    gamma = lecture.widget(
        st.slider,
        "Hybrid gate gamma (1: Cayley, 0: Householder)",
        0.0,
        1.0,
        0.5,
        0.05,
        key="orth_gamma",
        bind="query-params",
    )
    ddl_beta = lecture.widget(
        st.slider,
        "DDL beta (orthogonal only at 0 and 2)",
        0.0,
        3.0,
        1.0,
        0.05,
        key="orth_ddl_beta",
        bind="query-params",
    )
with c3:
    k_az = lecture.widget(
        st.slider, "Direction of the reflection normal k (deg)", 0, 360, 30, key="orth_k_az", bind="query-params"
    )
    x_az = lecture.widget(st.slider, "Direction of x (deg)", 0, 360, 60, key="orth_x_az", bind="query-params")

view = _view(beta, gamma, ddl_beta, tilt, k_az, x_az)
left, right = st.columns([3, 2])
ui.chart(operator_figure(view), key="orth_operator_fig", container=left)
ui.chart(eigenvalue_figure(view), key="orth_eigen_fig", container=right)

area = 1.0  # u = e1 and v a unit vector orthogonal to it: |u ^ v| = 1
with st.container(border=True):
    st.markdown("**What the theory says vs what we measured, for these sliders**")
    gap = min(abs(ev + 1) for ev in view.eigenvalues_numeric)
    st.markdown(
        "\n".join(
            [
                f"- Cayley: ||Q^T Q - I|| = {view.defects.cayley:.2g} (theory: 0); rotation angle "
                f"{abs(view.theta) * 57.29578:.3f} deg < 180; closest eigenvalue to -1 at distance {gap:.3g} "
                f"(theory 2/sqrt(1 + (beta/2)^2) = {float(cayley_gap_to_minus_one(beta, area)):.3g}).",
                f"- Householder: ||H^T H - I|| = {view.defects.householder:.2g} (theory: 0), det -1.",
                f"- Hybrid at gamma = {gamma:g}: ||G^T G - I|| = {view.defects.hybrid:.3g} <= 4 gamma (1 - gamma) "
                f"= {float(hybrid_orthogonality_defect_bound(gamma)):.3g}.",
                f"- DDL at beta = {ddl_beta:g}: ||H^T H - I|| = {view.defects.ddl:.3g} (theory |beta (beta - 2)| = "
                f"{float(ddl_orthogonality_defect(ddl_beta)):.3g}).",
            ]
        )
    )

# --- Norm drift through depth -------------------------------------------------------------------------------
st.subheader("Norm drift through depth")
d1, d2, d3 = st.columns(3)
depth = lecture.widget(
    d1.select_slider, "Depth", [1, 2, 4, 8, 16, 32, 64, 128, 256], value=32, key="orth_depth", bind="query-params"
)
dim = lecture.widget(
    d2.select_slider, "Width d", [2, 4, 8, 16, 32, 64], value=16, key="orth_dim", bind="query-params"
)
branch = lecture.widget(
    d3.slider,
    "Residual branch scale (0: the shortcut alone)",
    0.0,
    1.0,
    0.0,
    0.05,
    key="orth_branch",
    bind="query-params",
    help="Adds branch * tanh(W x + b) after every shortcut, as in a transformer block.",
)
with st.spinner("Pushing vectors through the stacks ..."):
    depths, drift, gain = _drift(depth, dim, branch, s.seed)
ui.chart(norm_drift_figure(depths, drift, preserved=gain if branch > 0 else None), key="orth_drift_fig")
if branch == 0:
    st.caption(
        "Freshly initialised layers, mean over 32 random vectors, float32. The shortcut alone: Cayley and Householder "
        "stay at 1 to rounding; the hybrid shrinks (a convex mix of two orthogonal maps), DDL with beta in (0, 2) "
        "shrinks, additive grows."
    )
else:
    grow = {k: v[-1] for k, v in drift.items()}
    st.caption(
        f"Freshly initialised layers, mean over 32 random vectors, float32. With branch scale {branch:g} **no kind "
        f"preserves the norm** (at depth {depths[-1]}: Cayley x{grow.get('cayley', float('nan')):.3g}, Householder "
        f"x{grow.get('householder', float('nan')):.3g}): the branch adds up to {branch:g} sqrt(d) per layer. What an "
        "orthogonal shortcut still preserves is its own gain, |Q x| = |x| at every layer (dashed lines: the product "
        "of the shortcuts' gains along the same path: 1 for Cayley and Householder, not 1 for the other kinds)."
    )

# --- Small training runs ------------------------------------------------------------------------------------
st.subheader("Small training runs at matched parameter counts")
t1, t2, t3, t4 = st.columns(4)
task = lecture.widget(
    t1.selectbox, "Task", list(TASKS), format_func=TASKS.get, key="orth_task", bind="query-params"
)
kinds = lecture.widget(
    t2.multiselect, "Residual kinds", list(KINDS), default=list(KINDS), key="orth_kinds", bind="query-params"
)
steps = lecture.widget(t3.slider, "Adam steps", 20, 600, 150, 10, key="orth_steps", bind="query-params")
n_seeds = lecture.widget(t4.slider, "Seeds", 3, 6, 3, key="orth_seeds", bind="query-params")
angle = 179.9
if task == "rotation":
    angle = lecture.widget(
        st.slider, "Rotation angle theta (deg)", 0.0, 180.0, 179.9, 0.1, key="orth_angle", bind="query-params"
    )
cfg = TaskConfig(task=task, steps=steps, angle_deg=angle, batch=64)
st.caption(
    "Parameters per kind: "
    + ", ".join(f"{k} {expected_params(k, cfg)}" for k in (kinds or []))
    + f". d = {cfg.dim}; the hybrid adds {cfg.gate_weight} x 4 gamma (1 - gamma) to its loss."
)
run_key = (task, tuple(kinds or ()), steps, n_seeds, angle, s.seed)
seeds = tuple(range(s.seed, s.seed + n_seeds))
tc.controls(
    "orth",
    lambda: compare_steps(kinds, cfg, seeds),
    run_key,
    budget_s=TRAIN_BUDGET_S,
    disabled=not kinds,
)


def _draw(job: tc.LiveJob) -> None:
    runs = [r.to_dict() for r in job.result] if job.result is not None else job.partial
    metric = lecture.widget(
        st.segmented_control,
        "Curve",
        ["cosine", "loss", "gate"],
        default="cosine",
        key="orth_metric",
        bind="query-params",
    )
    ui.chart(training_figure(runs, metric or "cosine"), key="orth_train_fig")
    if job.result is None:
        return
    table = pd.DataFrame.from_dict(summarise(job.result), orient="index").reset_index(names="kind")
    st.dataframe(table, hide_index=True, key="orth_train_table")
    if cfg.task == "negation" and "hybrid" in table["kind"].values:
        row = table.set_index("kind").loc["hybrid"]
        st.info(
            f"Negation, hybrid: gate gamma {row['gate mean']:.3f} +- {row['gate std']:.3f}, cosine "
            f"{row['cosine mean']:.4f} +- {row['cosine std']:.4f} over {int(row['seeds'])} seeds. "
            "The seed reports gamma ~ 0.05 and cosine 0.96."
        )
    ui.download_csv("Download the summary (CSV)", table, f"orthogonal_{cfg.task}.csv", "orth_train_csv")


if tc.job("orth") is None:
    st.info(
        "Press **Train** to run every chosen kind on the task, live; Pause, Step and Resume continue the same "
        f"run, Stop keeps what was trained (time budget {TRAIN_BUDGET_S:g} s)."
    )
tc.live("orth", _draw)

# --- Claims ---------------------------------------------------------------------------------------------------
st.header("The seed's claims, measured")
if lecture.widget(
    st.toggle, "Measure the claims (about 20 s: includes 3 negation runs)", key="orth_claims", bind="query-params"
):
    ui.page_claims("orthogonal", "orth")
else:
    st.caption("`python -m georesolver_core claims --only orth-negation-gate` runs the full sweeps headless.")
