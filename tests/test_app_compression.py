"""AppTest of the Compression page: widgets at their extremes, errors shown with the page still working."""

from __future__ import annotations

from tests.app_pages import set_and_run

PAGE = "compression.py"  # the page of the module's shared AppTest, ``at`` (tests/conftest.py)


def test_page_shows_metrics_figures_verdicts_and_downloads(at):
    assert at.title[0].value == "Compression lab"
    assert len(at.get("plotly_chart")) >= 5  # disk, histogram, Pareto, ratio, memory
    before = len(at.get("plotly_chart"))
    set_and_run(at, cmp_claims_figs=True)
    assert len(at.get("plotly_chart")) >= before + 4  # + one per claim, on request
    assert any("What the theory says vs what we measured" in m.value for m in at.markdown)
    assert len(at.get("download_button")) >= 2
    ratio = at.metric[1].value
    assert float(ratio.rstrip("x")) >= 7.9  # d_h = 64, b = 4, b_r = 6 by default
    set_and_run(at, cmp_claims=False)


def test_the_page_reports_the_dequantised_error(at):
    """The largest error on the page is the one the library measures for the same keys."""
    import torch

    from georesolver_core.compression import hcc_quantize
    from georesolver_core.compression.worst_case import random_keys

    set_and_run(at, cmp_b=4, cmp_br=6, cmp_d=64, cmp_n=500, cmp_radius="euclidean", cmp_kind="tanh")
    keys = random_keys(500, 64, "tanh", torch.Generator().manual_seed(0)).float()
    err = ((hcc_quantize(keys, bits_dir=4, bits_radius=6).dequantize() - keys) ** 2).sum(-1)
    assert at.metric[2].value == f"{float(err.max()):.3g}"


def test_extremes(at):
    set_and_run(at, cmp_b=1, cmp_br=1, cmp_d=2, cmp_n=1)
    for baseline in ("kivi-channel", "kivi-token", "hcc-rotated", "uniform"):  # small keys: cheap reruns
        set_and_run(at, cmp_baseline=baseline)
    set_and_run(at, cmp_radius="hyperbolic", cmp_direction="all")
    model = at.get_by_key("cmp_model").options[0]
    set_and_run(at, cmp_b=16, cmp_br=16, cmp_d=1024, cmp_n=20000, cmp_context=1048576, cmp_model=model)
    assert any("keys are quantised" in c.value for c in at.caption)  # n d too large: subsampled, and said so
    set_and_run(at, cmp_b=4, cmp_br=6, cmp_d=64, cmp_n=2000, cmp_radius="euclidean", cmp_context=1024)


def test_rim_keys_in_hyperbolic_mode_in_float32_show_an_error_and_the_page_still_works(at):
    set_and_run(at, cmp_b=4, cmp_br=6, cmp_d=8, cmp_n=100, cmp_kind="rim", cmp_radius="hyperbolic")
    assert any("cannot be quantised" in e.value for e in at.error)
    assert len(at.get("plotly_chart")) >= 5
    set_and_run(at, cmp_kind="tanh", cmp_radius="euclidean")
    assert not any("cannot be quantised" in e.value for e in at.error)


def test_attention_panel(at):
    set_and_run(at, cmp_d=8, cmp_n=100, cmp_attention=False)
    before = len(at.get("plotly_chart"))
    set_and_run(at, cmp_attention=True)
    assert len(at.get("plotly_chart")) == before + 2  # HCC and the baseline
    set_and_run(at, cmp_attention=False)


def test_the_shipped_kv_report_is_drawn_with_its_verdicts(at):
    assert at.get_by_key("cmp_kv_pareto") is not None
    assert any("Best at 3 bits/coordinate" in m.value and "Pareto front" in m.value for m in at.markdown)
    assert any("Shipped report" in c.value for c in at.caption)


def test_every_tuned_model_of_the_study_is_compared_at_equal_bytes(at):
    assert any("at equal bytes per key" in m.value for m in at.markdown)
    picker = at.selectbox(key="cmp_kv_model")
    assert "default / ida" in picker.options and "baby / sida" in picker.options
    set_and_run(at, cmp_kv_model="baby / sida")
    table = next(d.value for d in at.dataframe if "winner" in d.value.columns)
    assert {"HCC", "KIVI", "quanto"} <= set(table.columns) and len(table) >= 5
    assert set(table["word"]) <= {"smaller", "no measurable difference", "only one fits"}
    assert any(c.value.startswith("baby / sida: held-out") for c in at.caption)
