"""Landscapes lab: PL constants on the two-key line, 2-D landscapes with Riemannian descent, Lemma 2's
Hessian spread and the slice of a trained model, IDA vs softmax in the plane, the ball and the sphere."""

import pandas as pd
import streamlit as st
import ui
from knobs import Knob, draw, page_knobs
from shared_models import SharedModels, progress_callback

from georesolver_core.attention.layer import KERNEL_CHOICES
from georesolver_core.geometry import GEOMETRIES
from georesolver_core.labs.landscapes import (
    DescentConfig,
    DescentSetup,
    HessianConfig,
    SliceConfig,
    TwoKeyConfig,
    descent_lab,
    hessian_lab,
    pl_sweep_lab,
    slice_lab,
    slice_model_config,
    train_slice_model,
    two_key_lab,
)
from georesolver_core.viz.landscape import (
    hessian_figure,
    history_figure,
    landscape_figure,
    model_slice_figure,
    pl_profile_figure,
    pl_sweep_figures,
)
from georesolver_core.viz.style import ANIMATION_SPEEDS

GEO_LABEL = {g: GEOMETRIES[g].label for g in GEOMETRIES}


TABS = ("Two keys: PL inequality", "2-D landscape and descent", "Hessian spread", "Trained model slice")
EPS = "eps (IDA regulariser)"
# the two-key tab's claims: Theorem 2 in the plane, 5.3 on the ball, 8.1 on the sphere
PL_CLAIMS = ("thm2-pl-ida-eps", "thm2-pl-ida-delta", "thm2-pl-softmax", "thm2-pl-ratio",
             "thm5.3-pl-hyperbolic", "thm8.1-pl-sphere")  # fmt: skip
KNOBS = page_knobs(
    "landscapes",
    Knob("land_claims", "toggle", "Measure the paper's claims on each tab (verdict boxes)", True,
         help="Each claim reruns a small sweep the first time it is shown (a few seconds), then comes from the cache."),
    Knob("land_tab", "tabs", "Tab", options=TABS),
    # 1. the two-key line
    Knob("land_pl_geometry", "geometry", "Geometry"),
    Knob("land_pl_eps", "log_slider", EPS, 1e-3, lo=1e-6, hi=1.0),
    Knob("land_pl_c", "curvature", "Curvature parameter c (curvature k = -c)"),
    Knob("land_pl_delta", "slider", "Key separation Delta (theta on the sphere)", 1.0, lo=0.1, hi=6.0, step=0.1),
    Knob("land_pl_tau", "log_slider", "Softmax temperature tau = sqrt(d)", 1.0, lo=0.1, hi=10.0),
    Knob("land_pl_basin", "slider", "Basin size beta (fraction of the way to the midpoint)", 0.5, lo=0.05, hi=0.95,
         step=0.05),
    Knob("land_pl_sweep", "toggle", "Sweep eps and Delta (mu against the paper's rates)"),
    # 2. the 2-D landscape and descent
    Knob("land_kernel", "kernel", "Kernel", options=tuple(KERNEL_CHOICES), format_func=KERNEL_CHOICES.get),
    Knob("land_geo", "geometry", "Geometry"),
    Knob("land_speed", "select_slider", "Play speed", 1.0, options=tuple(ANIMATION_SPEEDS),
         format_func=lambda v: f"{v:g}x", help="How fast Play descent runs through the steps (1x: 80 ms a frame)."),
    Knob("land_n", "slider", "Number of keys n", 5, lo=2, hi=12),
    Knob("land_eps", "log_slider", EPS, 1e-2, lo=1e-5, hi=1.0),
    Knob("land_tau", "log_slider", "Softmax temperature tau", 1.0, lo=0.1, hi=10.0),
    Knob("land_res", "slider", "Grid resolution", 60, lo=20, hi=80, step=10),
    Knob("land_starts", "slider", "Descent starts", 8, lo=1, hi=12),
    Knob("land_steps", "slider", "Descent steps", 200, lo=10, hi=300, step=10),
    Knob("land_lr", "log_slider", "Learning rate", 2.0, lo=0.01, hi=20.0),
    Knob("land_c", "curvature", "Curvature parameter c (curvature k = -c)"),
    # 3. the Hessian spread
    Knob("land_h_geometry", "geometry", "Geometry"),
    Knob("land_h_c", "curvature", "Curvature parameter c (curvature k = -c)"),
    Knob("land_h_eps", "log_slider", EPS, 1e-2, lo=1e-4, hi=1.0),
    Knob("land_h_rho", "slider", "Distance rho of the keys", 1.0, lo=0.1, hi=1.5, step=0.1),
    Knob("land_h_nmax", "select_slider", "Largest n", 64, options=(8, 16, 32, 64, 128)),
    # 4. the trained model slice
    Knob("land_m_kernel", "kernel", "Kernel", options=tuple(KERNEL_CHOICES), format_func=KERNEL_CHOICES.get),
    Knob("land_m_geometry", "geometry", "Geometry of the prototypes"),
    Knob("land_m_eps", "log_slider", EPS, 0.05, lo=1e-3, hi=1.0),
    Knob("land_m_steps", "slider", "Training steps", 200, lo=20, hi=300, step=20),
    Knob("land_m_span", "slider", "Slice half-width", 1.0, lo=0.1, hi=3.0, step=0.1),
    Knob("land_m_res", "slider", "Slice resolution", 21, lo=5, hi=25, step=2),
)  # fmt: skip


@st.cache_data(show_spinner=False, max_entries=64)
def _two_key(config: TwoKeyConfig):
    return two_key_lab(config)


@st.cache_data(show_spinner=False, max_entries=32)
def _pl_sweeps(config: TwoKeyConfig):
    return pl_sweep_lab(config)


@st.cache_data(show_spinner=False, max_entries=32)
def _descent(config: DescentConfig):
    return descent_lab(config)


@st.cache_data(show_spinner=False, max_entries=16)
def _hessians(config: HessianConfig):
    return hessian_lab(config)


@st.cache_resource(max_entries=1)
def _models() -> SharedModels:
    """The one store of trained models; trained outside any cached function so that the progress bar can
    follow the steps. A stored model is read-only: ``model_slice`` moves a private copy of it."""
    return SharedModels()


@st.cache_data(show_spinner=False, max_entries=16)
def _model_slice(config, device: str, slicing: SliceConfig, _trained):
    return slice_lab(_trained, slicing)


def _precision(s) -> tuple[str, str]:
    """The sidebar's dtype and device as the names the labs' configs take."""
    return str(s.dtype).replace("torch.", ""), str(s.device)


# ---- 1. The two-key line -------------------------------------------------------------------


def two_key_config(dtype_name: str, device: str) -> TwoKeyConfig:
    """The knobs of the two-key line, as the lab's config."""
    c1, c2, c3 = st.columns(3)
    with c1:
        geometry = draw(KNOBS["land_pl_geometry"])
        eps = draw(KNOBS["land_pl_eps"])
        c = draw(KNOBS["land_pl_c"], geometry=geometry)
    with c2:
        delta = draw(KNOBS["land_pl_delta"])
        tau = draw(KNOBS["land_pl_tau"])
    with c3:
        basin = draw(KNOBS["land_pl_basin"])
    return TwoKeyConfig(geometry, eps, delta, tau, c, basin, dtype=dtype_name, device=device)


def two_key_errors(line: TwoKeyConfig, two_key) -> None:
    """A Delta past pi on the sphere, and a profile the precision could not resolve, each with its fix."""
    if line.delta_clamped:
        st.error(
            f"On the sphere Delta is the angle theta between the keys and must be at most pi "
            f"(got {line.delta:g}). Fix: lower Delta; showing theta = {line.delta_used:g} meanwhile."
        )
    if two_key.error is not None:
        st.error(f"{two_key.error}. Fix: choose float64 in the sidebar, or a larger eps / smaller Delta.")


def two_key_metrics(study, ratio_text: str, dtype_name: str, delta: float) -> None:
    """The PL constants of both kernels, their ratio and the IDA minimiser."""
    ida, soft = study.ida, study.softmax
    m = st.columns(4)
    m[0].metric("mu (IDA)", f"{ida.mu:.4g}")
    m[1].metric("mu (softmax)", f"{soft.mu:.4g}")
    m[2].metric(
        "mu_IDA / mu_soft",
        ratio_text,
        help="Unbounded: softmax's PL constant underflows to 0 at this precision (exp(-Delta^2/tau)).",
    )
    m[3].metric(
        "IDA minimiser s*",
        f"{ida.s_star:.3g}" if ida.s_star is not None else "at infinity",
        help="The IDA minimum sits just behind key 1, at s* ~ -eps/Delta, not on it.",
    )
    if study.ratio is None:
        st.warning(
            f"Softmax's PL constant is 0 at {dtype_name}: exp(-Delta^2/tau) underflows at Delta = {delta:g}, "
            "so the ratio has no finite value here. Choose float64 in the sidebar to resolve it."
        )


def two_key_theory(study, ratio_text: str) -> None:
    """Theorem 2's rates next to the measured constants."""
    ida, soft = study.ida, study.softmax
    with st.container(border=True):
        st.markdown("**What the theory says vs what we measured, at this setting**")
        better = study.ida_better_conditioned
        st.markdown(
            f"- Theorem 2 predicts mu_IDA = Theta(eps^2/Delta^4) = Theta({study.ida_theta:.3g}); "
            f"measured {ida.mu:.4g}. The exact curvature at the minimiser, L''(s*) = "
            f"{study.curvature_at_minimiser:.4g} (derived here), bounds mu from above; for eps << Delta^2 it is "
            f"4 eps/Delta^4 = {study.curvature_small_eps:.4g}, linear in eps.\n"
            f"- Softmax: predicted Theta(exp(-Delta^2/tau) eps^2/Delta^2) = Theta({study.softmax_theta:.3g}); "
            f"measured {soft.mu:.4g}, and it does not change with eps (softmax has none).\n"
            f"- Predicted ratio Omega(exp(Delta^2/tau)/Delta^2) = Omega({study.ratio_omega:.3g}); measured "
            f"{ratio_text}: IDA's landscape is **{'better' if better else 'worse'} conditioned** here "
            f"(ratio {'>=' if better else '<'} 1)."
        )


def pl_sweeps(line: TwoKeyConfig) -> None:
    """On request: mu against eps and against Delta, with the paper's rates."""
    if not draw(KNOBS["land_pl_sweep"]):
        return
    with st.status("Sweeping ...", expanded=False) as status:
        sw = _pl_sweeps(line)
        status.update(label="Sweeps done", state="complete")
    by_eps, by_delta = pl_sweep_figures(sw, line.delta_used, line.eps)
    a, b = st.columns(2)
    ui.chart(container=a, fig=by_eps, key="land_pl_sweep_eps")
    ui.chart(container=b, fig=by_delta, key="land_pl_sweep_delta")
    ui.download_json("Download the sweeps (JSON)", sw.to_dict(), "pl_sweeps.json", "land_pl_sweep_dl")


def two_key_tab(s, show_claims: bool) -> None:
    """Tab 1: the PL inequality along the geodesic through two keys (Theorem 2)."""
    st.markdown(
        "Keys 1 and 2 sit a geodesic distance **Delta** apart (the angle theta on the sphere); the query moves "
        "along the geodesic through them. The PL ratio |grad L|^2 / (2 (L - L*)) is measured with the Riemannian "
        "gradient; its minimum over the grey basin (|s| <= beta Delta/2 around key 1) is the PL constant mu."
    )
    dtype_name, device = _precision(s)
    line = two_key_config(dtype_name, device)
    two_key = _two_key(line)
    two_key_errors(line, two_key)
    study = two_key.study
    ui.chart(pl_profile_figure(study.profiles), key="land_pl_fig")
    ratio_text = f"{study.ratio:.4g}" if study.ratio is not None else "unbounded"
    two_key_metrics(study, ratio_text, dtype_name, line.delta_used)
    two_key_theory(study, ratio_text)
    ui.download_json(
        "Download the profiles (JSON)", [p.to_dict() for p in study.profiles], "pl_profiles.json", "land_pl_dl"
    )
    pl_sweeps(line)
    ui.claims_box(list(PL_CLAIMS), "land_pl", enabled=show_claims)


# ---- 2. A 2-D patch with descent paths -----------------------------------------------------


def descent_config(s) -> tuple[DescentConfig, str, float]:
    """The knobs of the 2-D landscape: (the lab's config, the kernel shown, the play speed)."""
    kernel = draw(KNOBS["land_kernel"])  # its own row: in a quarter column it was cut off
    c1, c2, c3, c4 = st.columns(4)
    with c1:
        geometry = draw(KNOBS["land_geo"])
        speed = draw(KNOBS["land_speed"])
    with c2:
        n = draw(KNOBS["land_n"])
        eps = draw(KNOBS["land_eps"])
    with c3:
        tau = draw(KNOBS["land_tau"])
        resolution = draw(KNOBS["land_res"])
    with c4:
        n_starts = draw(KNOBS["land_starts"])
        steps = draw(KNOBS["land_steps"])
        lr = draw(KNOBS["land_lr"])
    c = draw(KNOBS["land_c"], geometry=geometry)
    dtype_name, device = _precision(s)
    setup = DescentSetup(
        geometry, n=n, eps=eps, tau=tau, c=c, resolution=resolution, n_starts=n_starts, steps=steps, lr=lr,
        seed=s.seed,
    )  # fmt: skip
    return DescentConfig(setup, dtype=dtype_name, device=device), kernel, speed


def descent_figures(study, kernel: str, geometry: str, speed: float) -> None:
    """The landscape with its descent paths, the counts of minima, and where each descent ended."""
    res = study.results[kernel]
    grid, paths, outcomes = res.grid, res.paths, res.outcomes
    ui.chart(
        landscape_figure(
            grid, paths, outcomes, speed=speed, title=f"{GEO_LABEL[geometry]}: {KERNEL_CHOICES[kernel]}"
        ),
        key="land_fig",
    )
    m = st.columns(4)
    m[0].metric("Starts reaching the global minimum", f"{res.reached} / {len(outcomes)}")
    m[1].metric("Grid local minima", len(grid.minima_loss))
    m[2].metric("Spurious (confirmed by descent)", f"{grid.n_spurious} ({res.confirmed})")
    m[3].metric(
        "Global grid minimum",
        f"{grid.global_min_loss:.3g}",
        "on the border" if grid.global_on_border else "inside",
        delta_color="off",
    )
    summary = pd.DataFrame(study.summary()).replace({"kernel": KERNEL_CHOICES})
    st.dataframe(summary, hide_index=True, key="land_compare")
    with st.expander("Where each descent ended"):
        st.dataframe(pd.DataFrame(res.outcome_rows()), hide_index=True, key="land_outcomes")
    ui.download_json("Download the grid and the paths (JSON)", study.to_dict(kernel), "landscape.json", "land_dl")


@st.fragment
def landscape_lab(s) -> None:
    """The 2-D landscape and its descents; a fragment, so that moving its knobs reruns only this tab."""
    st.markdown(
        "n keys in a patch of the plane, the Poincaré disk or the sphere (normal coordinates at the north pole); the "
        "surface is the loss of retrieving the **star** key. Starts on a ring run Riemannian gradient descent "
        "(geoopt's RiemannianSGD, steps capped at 4% of the patch): press **Play descent**."
    )
    config, kernel, speed = descent_config(s)
    with st.spinner("Computing the landscapes and the descent paths ..."):
        study = _descent(config)
    descent_figures(study, kernel, config.setup.geometry, speed)


def descent_tab(s, show_claims: bool) -> None:
    """Tab 2: the loss over a 2-D patch and Riemannian gradient descent on it (no spurious minima)."""
    landscape_lab(s)
    ui.claims_box(["thm2-no-spurious-minima"], "land_grid", enabled=show_claims)


# ---- 3. Lemma 2's Hessian --------------------------------------------------------------------


def hessian_config() -> HessianConfig:
    """The knobs of the equidistant start, as the lab's config."""
    c1, c2, c3 = st.columns(3)
    with c1:
        geometry = draw(KNOBS["land_h_geometry"])
        c = draw(KNOBS["land_h_c"], geometry=geometry)
    with c2:
        eps = draw(KNOBS["land_h_eps"])
        rho = draw(KNOBS["land_h_rho"])
    with c3:
        n_max = draw(KNOBS["land_h_nmax"])
    return HessianConfig(geometry, eps, rho, c, n_max)


def hessian_tab(show_claims: bool) -> None:
    """Tab 3: the spread of the Riemannian Hessian at the equidistant start (Lemma 2)."""
    st.markdown(
        "n keys a distance rho from the query in orthogonal directions, so every key starts with weight 1/n. The "
        "Riemannian Hessian of L at that start comes from autograd (plus the connection terms of the ball or the "
        "sphere); its spread is largest / smallest non-zero |eigenvalue|."
    )
    config = hessian_config()
    with st.status("Computing Hessians ...", expanded=False) as status:
        hessians = _hessians(config)
        status.update(label="Hessians computed", state="complete")
    ui.chart(hessian_figure(hessians.spectra), key="land_h_fig")
    rows = pd.DataFrame(hessians.table).replace({"kernel": KERNEL_CHOICES})
    st.dataframe(rows, hide_index=True, key="land_h_table")
    ui.download_json("Download the spectra (JSON)", hessians.to_dict(), "hessian_spectra.json", "land_h_dl")
    ui.claims_box(["lemma2-hessian-spread", "lemma2-softmax-curvature"], "land_h", enabled=show_claims)


# ---- 4. A trained model ----------------------------------------------------------------------


def model_knobs(seed: int) -> tuple[str, str, float, int, SliceConfig]:
    """The knobs of the trained model and its slice: (kernel, geometry, eps, steps, the slice's config)."""
    kernel = draw(KNOBS["land_m_kernel"])  # its own row, as on the descent tab
    c1, c2, c3 = st.columns(3)
    with c1:
        geometry = draw(KNOBS["land_m_geometry"])
    with c2:
        eps = draw(KNOBS["land_m_eps"])
        steps = draw(KNOBS["land_m_steps"])
    with c3:
        span = draw(KNOBS["land_m_span"])
        res = draw(KNOBS["land_m_res"])
    return kernel, geometry, eps, steps, SliceConfig(span=span, resolution=res, seed=seed)


def train_and_slice(config, device: str, slicing: SliceConfig):
    """Trains the model (or takes the stored one) with a progress bar and a Stop button, then slices it."""
    # Pressing Stop reruns the page, which ends the training at its next progress report; a model
    # trained to the end is kept for every session, so the Stop button goes once it is done.
    stop = st.empty()
    if (config, device) not in _models():
        stop.button("Stop", key="land_m_stop", icon=":material/stop:", help="Ends the training now.")
    with st.status("Training the model and slicing its landscape ...", expanded=True) as status:
        bar = st.progress(0.0, text="training")
        step = progress_callback(bar, config.steps)
        trained = _models().get_or_train((config, device), lambda: train_slice_model(config, step, device))
        res = slicing.resolution
        bar.progress(1.0, text=f"trained ({config.steps} steps); slicing {res} x {res} models ...")
        sliced = _model_slice(config, device, slicing, trained)
        status.update(label="Model trained and sliced", state="complete", expanded=False)
    stop.empty()
    return sliced


def model_figures(sliced, geometry: str, kernel: str) -> None:
    """The slice, its accuracy and manifold checks, and the training history."""
    sl = sliced.slice
    ui.chart(
        model_slice_figure(sl, title=f"{GEO_LABEL[geometry]} prototypes, {KERNEL_CHOICES[kernel]}"),
        key="land_m_fig",
    )
    m = st.columns(4)
    m[0].metric("Training accuracy", f"{sliced.accuracy:.1%}")
    m[1].metric("Loss at the trained point", f"{sl.centre_loss:.4g}")
    m[2].metric(
        "Largest distance off the manifold",
        f"{sl.max_violation:.2g}",
        help="ball: how far sqrt(c)|key| exceeds 1 (0 = inside); sphere: max ||key| - 1|",
    )
    m[3].metric(
        "Additive slice off the manifold",
        f"{sl.additive_off_manifold:.0%}",
        help="Share of slice points where theta + a d1 + b d2 (Li et al.'s additive slice) would move a "
        "key off the ball / sphere.",
    )
    ui.chart(history_figure(sliced.history), key="land_m_hist")
    ui.download_json("Download the slice (JSON)", sliced.to_dict(), "model_slice.json", "land_m_dl")


def model_tab(s) -> None:
    """Tab 4: a slice through the loss of a small trained model, moved along the manifold."""
    st.markdown(
        "A small classifier trained here: an encoder puts each 2-D input into the geometry, attention over 8 "
        "learnable prototype keys (which live on the manifold) mixes class logits. The slice follows two random "
        "filter-normalised directions (Li et al.); prototype keys move by the **exponential map** of tangent "
        "directions, so every point of the slice is a valid model."
    )
    kernel, geometry, eps, steps, slicing = model_knobs(s.seed)
    config = slice_model_config(geometry, kernel, eps, steps, s.seed)  # 2-D embeddings (the sphere: S^2 in R^3)
    sliced = train_and_slice(config, str(s.device), slicing)
    model_figures(sliced, geometry, kernel)


# ---- The page ------------------------------------------------------------------------------------


def main() -> None:
    ui.page_header(
        "Landscapes",
        "The loss L = (1 - W_target)^2 of one query retrieving one key, seen four ways: along the line between two "
        "keys (the PL inequality of Theorem 2), over a 2-D patch with gradient-descent paths, through the Hessian "
        "at the equidistant start (Lemma 2), and as a slice through a small trained model. IDA vs softmax, in "
        "every geometry.",
    )
    s = ui.settings()
    show_claims = draw(KNOBS["land_claims"])
    sections = (
        lambda: two_key_tab(s, show_claims),
        lambda: descent_tab(s, show_claims),
        lambda: hessian_tab(show_claims),
        lambda: model_tab(s),
    )
    for tab, section in zip(draw(KNOBS["land_tab"]), sections, strict=True):
        if tab.open:  # a closed tab draws nothing: its figures cost nothing
            with tab:
                section()
    # Every claim of this page (the tabs' boxes show the ones each tab draws)
    st.header("Every claim of this page, measured")
    if show_claims:
        ui.page_claims("landscapes", "land_all", figures_on_request=True)


main()
