"""The Embeddings page under AppTest: WordNet mammals by default, live training in a worker with the shared
controls (Pause keeps the run, Resume and Step continue it), every widget at its extremes, each geometry,
the tabs, links by the source's key, and bad uploads (an error, the previous data kept, no exception)."""

import time

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from georesolver_core.geometry import GEOMETRIES
from georesolver_core.tasks import MAX_NODES
from tests.app_pages import open_page, run_job_to_end, run_until

PAGE = "embeddings.py"
ACTIVE = ("running", "paused", "queued")


def _page(autoplay: bool = True, source: str | None = "tree", **params) -> AppTest:
    """The page opened by a link (``emb_source`` and ``params``): the toy tree unless told otherwise."""
    query = {"emb_source": source} if source is not None else {}
    at = open_page(PAGE, query={**query, **params}, via_home=False, timeout=90)
    if not autoplay:
        # settings changes then rebuild nothing and train nothing: fast widget sweeps
        at.toggle(key="emb_autoplay").set_value(False)
        at.button(key="emb_reset").click().run()
    return at


def _job(at: AppTest):
    return at.session_state["emb_job"] if "emb_job" in at.session_state else None


def _trainer(at: AppTest):
    """The live run's newest snapshot (``labs.embeddings.EmbeddingSnapshot``), or None."""
    job = _job(at)
    return None if job is None else (job.result if job.result is not None else job.partial)


def _first_snapshot(at: AppTest, **config) -> None:
    """Rerun until the worker's first snapshot of a run with ``config`` (EmbeddingConfig fields) arrived."""

    def arrived() -> bool:
        tr = _trainer(at)
        return tr is not None and all(getattr(tr.config, k) == v for k, v in config.items())

    run_until(at, arrived, f"the worker's first snapshot ({config})")


def _param(at: AppTest, key: str):
    value = at.query_params.get(key)
    return value[-1] if isinstance(value, list) else value


def _running(at: AppTest) -> bool:
    return _job(at) is not None and _job(at).status == "running"


def _train_to_end(at: AppTest) -> None:
    job = _job(at)
    if job is None or job.status not in ACTIVE:
        if at.button(key="emb_start").disabled:  # drawn while the job still ran, which ended since: redraw
            at.run()
        at.button(key="emb_start").click().run()
    elif job.status == "paused":
        at.button(key="emb_resume").click().run()
    assert not at.exception, at.exception
    run_job_to_end(at, "emb")


def test_the_toy_tree_trains_live_to_the_end_off_the_rim():
    at = _page()
    assert _job(at) is not None  # starts on the first visit
    _first_snapshot(at)
    assert _trainer(at).epoch > 0
    _train_to_end(at)
    tr = _trainer(at)
    assert tr.status == "done" and tr.epoch == tr.config.epochs and _job(at).status == "finished"
    assert "MAP (edges)" in [m.label for m in at.metric]
    assert at.get("plotly_chart")
    # the defaults keep a float32 tree off the rim cap, the root near the centre and levels in rings
    assert not any("rim cap" in w.value for w in at.warning)
    radius = np.linalg.norm(tr.points.astype(np.float64), axis=-1)
    depth = np.asarray(at.session_state["emb_last_hierarchy"].depth)
    rings = [radius[depth == d].mean() for d in range(int(depth.max()) + 1)]
    assert radius[depth == 0][0] < 0.5, rings
    assert (np.diff(rings[1:]) > 0).all(), rings
    assert tr.rim["n_at_cap"] <= 2


def test_a_run_that_reaches_the_rim_is_flagged_and_offers_float64():
    at = _page(autoplay=False)
    at.select_slider(key="emb_lr").set_value(1.0).run()
    at.slider(key="emb_epochs").set_value(60).run()
    _train_to_end(at)
    assert any("rim cap" in w.value for w in at.warning)
    at.button(key="emb_to_f64").click().run()
    at.run()
    assert not at.exception and at.session_state["dtype"] == "float64"
    at.button(key="emb_start").click().run()
    _first_snapshot(at, dtype="float64")


def test_pause_resume_step_stop_reset_continue_the_same_run():
    at = _page()
    at.slider(key="emb_epochs").set_value(1000).run()
    assert _running(at) or _job(at).status == "queued"
    _first_snapshot(at, epochs=1000)
    job = _job(at)
    at.button(key="emb_pause").click().run()
    run_until(at, lambda: job.status == "paused", "the worker to say it waits")
    at.run()  # epochs reported before the pause may arrive after it: read them before the epoch is pinned
    epoch = _trainer(at).epoch
    assert epoch > 0
    time.sleep(0.5)
    at.run()
    assert _trainer(at).epoch == epoch  # paused stays paused
    at.button(key="emb_step").click().run()
    run_until(at, lambda: _trainer(at).epoch == epoch + 1 and job.status == "paused", "one epoch more, a wait")
    points = _trainer(at).points
    at.button(key="emb_resume").click().run()
    # the same run carries on from where it stood: the same job, more epochs, history unbroken
    run_until(at, lambda: _trainer(at).epoch > epoch + 1, "more epochs after Resume")
    tr = _trainer(at)
    assert _job(at) is job and [r["epoch"] for r in tr.history] == list(range(1, tr.epoch + 1))
    assert not np.allclose(tr.points, points)
    at.button(key="emb_stop").click().run()
    assert _job(at).status == "stopped" and at.get("plotly_chart")  # what was trained stays on screen
    run_until(at, lambda: job.handle.state == "stopped", "the worker to end")
    at.run()  # the page reads what the worker reported before it ended (its last epochs may arrive after the Stop)
    stopped = _trainer(at).epoch
    time.sleep(0.5)
    at.run()
    assert _trainer(at).epoch == stopped  # nothing trains once the run has ended
    at.button(key="emb_reset").click().run()
    assert _job(at) is None and not at.exception


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
        assert _job(at) is None  # no restart while "Restart training when a setting changes" is off
    at.button(key="emb_start").click().run()
    _first_snapshot(at)
    cfg = _trainer(at).config
    assert (cfg.geometry, cfg.dim, cfg.c, cfg.lr, cfg.optimizer, cfg.learn_curvature) == (
        "poincare", 1, 10.0, 10.0, "rsgd", True,
    )  # fmt: skip
    _train_to_end(at)
    tr = _trainer(at)
    # learnt curvature at the largest rate may run away: then training stops and says why
    assert not at.error or (tr.status == "diverged" and any("Training stopped" in e.value for e in at.error))


@pytest.mark.parametrize("geometry", ["euclidean", "sphere"])
def test_other_geometries_train_live(geometry):
    at = _page(autoplay=False)
    at.slider(key="emb_epochs").set_value(20).run()
    at.segmented_control(key="emb_geo").set_value(geometry).run()
    _train_to_end(at)
    assert _trainer(at).config.geometry == geometry
    assert _trainer(at).status == "done" and not at.error


def test_tree_extremes_a_tree_too_big_and_digits():
    at = _page(autoplay=False)
    at.slider(key="emb_epochs").set_value(10).run()
    at.slider(key="emb_branch").set_value(1).run()
    at.slider(key="emb_depth").set_value(1).run()  # two nodes: no negatives exist, training still works
    assert at.session_state["emb_last_hierarchy"].n_nodes == 2
    _train_to_end(at)
    assert _trainer(at).n_nodes == 2
    at.slider(key="emb_branch").set_value(6).run()
    at.slider(key="emb_depth").set_value(12).run()
    assert not at.exception
    assert any(str(MAX_NODES) in e.value for e in at.error)
    assert at.session_state["emb_last_hierarchy"].n_nodes == 7  # the previous one (branching 6, depth 1) is kept
    at.selectbox(key="emb_source").set_value("digits").run()
    at.slider(key="emb_digits_n").set_value(8).run()
    assert at.session_state["emb_last_hierarchy"].n_nodes == 15
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
    assert at.session_state["emb_last_hierarchy"].nodes[0] == "animal"  # the bundled taxonomy
    at.file_uploader(key="emb_upload").set_value(("good.csv", b"parent,child\nx,y\nx,z\ny,w\n", "text/csv")).run()
    assert at.session_state["emb_last_hierarchy"].nodes == ("x", "y", "z", "w")
    for case, (data, fragment) in BAD_UPLOADS.items():
        at.file_uploader(key="emb_upload").set_value((f"{case}.csv", data, "text/csv")).run()
        assert not at.exception, (case, at.exception)
        assert any(fragment in e.value for e in at.error), (case, [e.value for e in at.error])
        assert at.session_state["emb_last_hierarchy"].nodes == ("x", "y", "z", "w"), case
    _train_to_end(at)  # the page keeps working


def test_tabs_comparison_norms_sphere_maps_and_data():
    at = _page(autoplay=False)
    at.slider(key="emb_epochs").set_value(20).run()
    _train_to_end(at)
    at.button(key="emb_compare_start").click().run()  # trains in a worker (trainer_controls, prefix emb_compare)
    assert not at.exception, at.exception
    run_job_to_end(at, "emb_compare")
    assert at.session_state["emb_compare_job"].status == "finished"
    table = at.dataframe[0].value
    assert set(table["geometry"]) == {entry.label for entry in GEOMETRIES.values()}  # every geometry compared
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
    names = at.session_state["emb_last_hierarchy"].nodes
    assert names[0].startswith("![img]")
    at.toggle(key="emb_names").set_value(True).run()
    assert not at.exception
    big = b"parent,child\n" + b"a,b\n" * 400_000
    at.file_uploader(key="emb_upload").set_value(("big.csv", big, "text/csv")).run()
    assert not at.exception
    assert any("bytes; at most" in e.value for e in at.error)
    assert at.session_state["emb_upload_parsed"]["value"] is None


def test_wordnet_mammals_are_the_default_and_train_live_with_the_recipe():
    at = _page(source=None)
    assert at.selectbox(key="emb_source").value == "wordnet" and "emb_source" not in at.query_params
    assert _job(at) is None  # 1,181 nodes: the first visit waits for Train
    at.button(key="emb_start").click().run()
    _first_snapshot(at)
    tr = _trainer(at)
    assert tr.n_nodes == 1181 and tr.n_pairs == 6541 and tr.epoch > 0
    assert (tr.config.geometry, tr.config.dim, tr.config.optimizer, tr.config.dtype) == (
        "poincare", 2, "rsgd", "float64",
    )  # fmt: skip
    # the recipe decides these: their widgets are not drawn, a caption says so
    keys = {w.key for kind in ("radio", "select_slider", "slider", "toggle") for w in getattr(at, kind)}
    assert not keys & {"emb_opt", "emb_lr", "emb_neg", "emb_batch", "emb_c", "emb_learn_c"}
    assert any("published recipe is used" in c.value for c in at.caption)
    assert {"MAP", "Mean rank", "published MAP, d = 2"} <= {m.label for m in at.metric}
    assert "map" in tr.history[0] and any("Nickel & Kiela" in c.value for c in at.caption)
    spec = at.get("plotly_chart")[0].proto.spec
    assert "carnivores" in spec and "primates" in spec and "scattergl" in spec  # coloured by order, WebGL
    at.segmented_control(key="emb_geo").set_value("sphere").run()  # the same in the other geometries
    assert not at.exception
    _first_snapshot(at, geometry="sphere", optimizer="radam")
    at.session_state["emb_tab"] = "WordNet benchmark"
    at.run()
    assert not at.exception, at.exception
    shown = [d.value for d in at.dataframe if "model" in d.value.columns]
    assert shown and "this project, poincare d=5" in set(shown[0]["model"])
    nouns = [d.value for d in at.dataframe if "closure" in d.value.columns]  # the shipped noun-closure row
    assert nouns and "82,115 nodes" in nouns[0]["closure"][0] and 0.0 < nouns[0]["MAP"][0] <= 1.0


@pytest.mark.parametrize(
    ("link", "source", "notice"),
    [("csv", "csv", False), ("Edge list (CSV)", "csv", False), ("no-such-source", "wordnet", True)],
)
def test_the_source_links_by_its_key_and_old_label_links_still_work(link, source, notice):
    """``?emb_source=csv``; a label (how a bound selectbox wrote it) still selects; anything else: the default
    and the link notice."""
    at = _page(source=link, emb_autoplay="false")  # a link that also says: do not start training
    assert _job(at) is None and at.selectbox(key="emb_source").value == source
    assert any("no-such-source" in w.value and "not used" in w.value for w in at.warning) == notice
    assert _param(at, "emb_source") == (None if source == "wordnet" else source)  # the default leaves it out
    at.selectbox(key="emb_source").set_value("tree").run()
    assert _param(at, "emb_source") == "tree"  # the key, not the label
