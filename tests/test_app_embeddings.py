"""The Embeddings page under AppTest: live training, pause/resume/reset, every widget at its extremes,
each geometry, the tabs, and bad uploads (an error, the previous data kept, no exception)."""

import numpy as np
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from georesolver_core.geometry import GEOMETRIES
from georesolver_core.tasks import MAX_NODES

PAGE = "../pages/embeddings.py"


@pytest.fixture(autouse=True)
def _clear_caches():
    st.cache_data.clear()
    st.cache_resource.clear()
    yield


def _page(autoplay: bool = True) -> AppTest:
    at = AppTest.from_file("../app/streamlit_app.py", default_timeout=90)
    at.switch_page(PAGE)  # straight to this page: Home's own work is not part of these tests
    at.run()
    assert not at.exception, at.exception
    if not autoplay:
        # settings changes then rebuild the trainer without training: fast widget sweeps
        at.toggle(key="emb_autoplay").set_value(False)
        at.button(key="emb_reset").click().run()
    return at


def _train_to_end(at: AppTest, max_runs: int = 60) -> None:
    if not at.session_state["emb_running"] and not at.session_state["emb_trainer"].done:
        at.button(key="emb_start").click().run()
    for _ in range(max_runs):
        assert not at.exception, at.exception
        if not at.session_state["emb_running"]:
            return
        at.run()
    raise AssertionError("training did not finish")


def test_default_page_trains_live_to_the_end_and_flags_the_rim():
    at = _page()
    tr = at.session_state["emb_trainer"]
    assert tr.epoch > 0 and (at.session_state["emb_running"] or tr.done)  # starts on the first visit
    _train_to_end(at)
    tr = at.session_state["emb_trainer"]
    assert tr.status == "done" and tr.epoch == tr.config.epochs
    assert "MAP (edges)" in [m.label for m in at.metric]
    assert at.get("plotly_chart")
    # the defaults keep a float32 tree off the rim cap, the root near the centre and levels in rings
    assert not any("rim cap" in w.value for w in at.warning)
    radius = tr.points().double().norm(dim=-1).numpy()
    depth = np.asarray(tr.hierarchy.depth)
    rings = [radius[depth == d].mean() for d in range(int(depth.max()) + 1)]
    assert radius[depth == 0][0] < 0.5, rings
    assert (np.diff(rings[1:]) > 0).all(), rings
    assert tr.rim_report()["n_at_cap"] <= 2


def test_a_run_that_reaches_the_rim_is_flagged_and_offers_float64():
    at = _page(autoplay=False)
    at.select_slider(key="emb_lr").set_value(1.0).run()
    at.slider(key="emb_epochs").set_value(60).run()
    _train_to_end(at)
    assert any("rim cap" in w.value for w in at.warning)
    at.button(key="emb_to_f64").click().run()
    at.run()
    assert not at.exception
    assert at.session_state["emb_trainer"].config.dtype == "float64"


def test_pause_resume_reset():
    at = _page()
    at.slider(key="emb_epochs").set_value(1000).run()
    assert at.session_state["emb_running"]
    at.button(key="emb_pause").click().run()
    epoch = at.session_state["emb_trainer"].epoch
    assert not at.session_state["emb_running"] and epoch > 0
    at.run()
    assert at.session_state["emb_trainer"].epoch == epoch  # paused stays paused
    at.button(key="emb_start").click().run()
    assert at.session_state["emb_running"] and at.session_state["emb_trainer"].epoch > epoch
    at.button(key="emb_reset").click().run()
    assert not at.session_state["emb_running"] and at.session_state["emb_trainer"].epoch == 0
    assert not at.exception


def test_every_widget_at_its_extremes_in_each_geometry():
    at = _page(autoplay=False)
    settings = [
        ("slider", "emb_epochs", 1000),
        ("slider", "emb_epochs", 10),
        ("select_slider", "emb_c", 0.1),
        ("select_slider", "emb_c", 10.0),
        ("select_slider", "emb_lr", 0.001),
        ("select_slider", "emb_lr", 10.0),
        ("slider", "emb_neg", 1),
        ("slider", "emb_neg", 50),
        ("select_slider", "emb_batch", 4),
        ("select_slider", "emb_batch", 128),
        ("radio", "emb_opt", "rsgd"),
        ("toggle", "emb_learn_c", True),
        ("toggle", "emb_centre", True),
    ]
    for geometry in [*GEOMETRIES, "poincare"]:  # every geometry, then back to the ball the checks below read
        settings += [
            ("segmented_control", "emb_geo", geometry),
            ("slider", "emb_dim", 10),
            ("slider", "emb_dim", 1),
        ]
    for kind, key, value in settings:
        getattr(at, kind)(key=key).set_value(value).run()
        assert not at.exception, (key, value, at.exception)
        assert not at.session_state["emb_running"]
    cfg = at.session_state["emb_trainer"].config
    assert (cfg.geometry, cfg.dim, cfg.c, cfg.lr, cfg.optimizer, cfg.learn_curvature) == (
        "poincare", 1, 10.0, 10.0, "rsgd", True,
    )  # fmt: skip
    _train_to_end(at)
    tr = at.session_state["emb_trainer"]
    # learnt curvature at the largest rate may run away: then training stops and says why
    assert not at.error or (tr.status == "diverged" and any("Training stopped" in e.value for e in at.error))


@pytest.mark.parametrize("geometry", ["euclidean", "sphere"])
def test_other_geometries_train_live(geometry):
    at = _page(autoplay=False)
    at.slider(key="emb_epochs").set_value(20).run()
    at.segmented_control(key="emb_geo").set_value(geometry).run()
    _train_to_end(at)
    assert at.session_state["emb_trainer"].config.geometry == geometry
    assert at.session_state["emb_trainer"].status == "done" and not at.error


def test_tree_extremes_a_tree_too_big_and_digits():
    at = _page(autoplay=False)
    at.slider(key="emb_epochs").set_value(10).run()
    at.slider(key="emb_branch").set_value(1).run()
    at.slider(key="emb_depth").set_value(1).run()  # two nodes: no negatives exist, training still works
    assert at.session_state["emb_trainer"].hierarchy.n_nodes == 2
    _train_to_end(at)
    at.slider(key="emb_branch").set_value(6).run()
    at.slider(key="emb_depth").set_value(12).run()
    assert not at.exception
    assert any(str(MAX_NODES) in e.value for e in at.error)
    assert (
        at.session_state["emb_trainer"].hierarchy.n_nodes == 7
    )  # the previous one (branching 6, depth 1) is kept
    at.selectbox(key="emb_source").set_value("digits").run()
    at.slider(key="emb_digits_n").set_value(8).run()
    assert at.session_state["emb_trainer"].hierarchy.n_nodes == 15
    _train_to_end(at)
    assert not at.exception and not at.error


BAD_UPLOADS = {
    "wrong columns": (b"from,to\na,b\n", "columns"),
    "empty": (b"", "empty"),
    "self loop": (b"parent,child\na,b\nb,b\n", "self-loops"),
    "cycle": (b"parent,child\na,b\nb,c\nc,a\n", "cycle"),
    "name too long": (b"parent,child\nroot," + b"x" * 200 + b"\n", "at most 80 characters"),
    "too many nodes": (
        ("parent,child\n" + "\n".join(f"n{i // 2},n{i + 1}" for i in range(MAX_NODES))).encode(),
        f"at most {MAX_NODES}",
    ),
}


def test_bad_uploads_show_an_error_and_keep_the_previous_data():
    at = _page(autoplay=False)
    at.slider(key="emb_epochs").set_value(10).run()
    at.selectbox(key="emb_source").set_value("csv").run()
    assert at.session_state["emb_trainer"].hierarchy.nodes[0] == "animal"  # the bundled taxonomy
    at.file_uploader(key="emb_upload").set_value(("good.csv", b"parent,child\nx,y\nx,z\ny,w\n", "text/csv")).run()
    assert at.session_state["emb_trainer"].hierarchy.nodes == ("x", "y", "z", "w")
    for case, (data, fragment) in BAD_UPLOADS.items():
        at.file_uploader(key="emb_upload").set_value((f"{case}.csv", data, "text/csv")).run()
        assert not at.exception, (case, at.exception)
        assert any(fragment in e.value for e in at.error), (case, [e.value for e in at.error])
        assert at.session_state["emb_trainer"].hierarchy.nodes == ("x", "y", "z", "w"), case
    _train_to_end(at)  # the page keeps working


def test_tabs_comparison_norms_sphere_maps_and_data():
    at = _page(autoplay=False)
    at.slider(key="emb_epochs").set_value(20).run()
    _train_to_end(at)
    at.button(key="emb_compare_run").click().run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert set(table["geometry"]) == {"Euclidean", "Poincaré ball", "Sphere"}
    assert any("Section 5.2(A)" in m.value for m in at.markdown)
    for tab in ["Norm vs depth", "Onto the sphere", "Data & downloads"]:
        at.session_state["emb_tab"] = tab
        at.run()
        assert not at.exception, (tab, at.exception)
        if tab == "Onto the sphere":
            at.button(key="emb_maps_run").click().run()
            assert not at.exception
            assert set(at.dataframe[-1].value["mapping"]) == {"norm", "stereographic", "learnable"}
    assert at.get("download_button")


def test_hostile_node_names_are_escaped_and_oversized_files_refused():
    at = _page(autoplay=False)
    at.slider(key="emb_epochs").set_value(10).run()
    at.selectbox(key="emb_source").set_value("csv").run()
    hostile = b"parent,child\n![img](http://example.invalid/x.png),[link](http://example.invalid)\n"
    at.file_uploader(key="emb_upload").set_value(("h.csv", hostile + b"a,a\n", "text/csv")).run()
    assert not at.exception
    shown = " ".join(e.value for e in at.error)
    assert "self-loops" in shown and "](http" not in shown
    at.file_uploader(key="emb_upload").set_value(("h.csv", hostile, "text/csv")).run()
    names = at.session_state["emb_trainer"].hierarchy.nodes
    assert names[0].startswith("![img]")
    at.toggle(key="emb_names").set_value(True).run()
    assert not at.exception
    big = b"parent,child\n" + b"a,b\n" * 400_000
    at.file_uploader(key="emb_upload").set_value(("big.csv", big, "text/csv")).run()
    assert not at.exception
    assert any("bytes; at most" in e.value for e in at.error)
    assert at.session_state["emb_upload_parsed"]["value"] is None


def test_wordnet_mammals_train_live_with_the_recipe_and_the_benchmark_tab():
    at = _page(autoplay=False)
    at.selectbox(key="emb_source").set_value("wordnet").run()
    assert not at.exception, at.exception
    tr = at.session_state["emb_trainer"]
    assert tr.hierarchy.n_nodes == 1181 and tr.config.optimizer == "rsgd" and tr.pairs.shape[0] == 6541
    at.button(key="emb_start").click().run()
    assert not at.exception, at.exception
    assert at.session_state["emb_trainer"].epoch > 0
    assert any("Nickel & Kiela" in c.value for c in at.caption)
    at.session_state["emb_tab"] = "WordNet benchmark"
    at.run()
    assert not at.exception, at.exception
    shown = [d.value for d in at.dataframe if "model" in d.value.columns]
    assert shown and "this project, poincare d=5" in set(shown[0]["model"])
