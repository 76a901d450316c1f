"""The Embeddings page's controls are its knob table (``KNOBS`` in pages/embeddings.py): the widgets drawn
over every source are exactly the table's keys (and the node search and upload, whose options are the
data), the sidebar's are the shared table's, WordNet's recipe takes the place of the optimiser, rate,
negatives and batch (its values in the caption; their link values wait), and a setting that does not apply
to the geometry is drawn disabled."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Widget

from georesolver_core.embeddings.wordnet import WORDNET_RECIPES
from georesolver_core.geometry import GEOMETRIES
from tests.app_pages import open_page, run_until

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "app"))

import knobs  # noqa: E402  (the module the app imports: the same tables)

PAGE = "embeddings.py"
SOURCES = ("tree", "digits", "csv", "wordnet")  # every source draws its own widgets
NO_ROW = {"emb_search", "emb_upload"}  # options are the hierarchy's nodes / a file: no row of the table
ACTIONS = ("Button", "DownloadButton")  # Train, Pause, ...: actions, not settings
RECIPE_WIDGETS = {"emb_c", "emb_learn_c", "emb_opt", "emb_lr", "emb_neg", "emb_batch", "emb_epochs"}


def _open(**params) -> AppTest:
    """The page opened by a link that does not start training."""
    return open_page(PAGE, query={"emb_autoplay": "false", **params}, via_home=False, timeout=90)


def _walk(node):
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _walk(child)


def _settings(block) -> dict[str, Widget]:
    """key -> widget of every setting drawn in ``block`` (actions and the lecturer's panel left out)."""
    return {
        w.key: w
        for w in _walk(block)
        if isinstance(w, Widget) and w.key and type(w).__name__ not in ACTIONS and not w.key.startswith("lec_")
    }


def _table(name: str) -> dict:
    return knobs._TABLES[name]


def test_the_widgets_drawn_over_every_source_are_exactly_the_knob_table():
    drawn: dict[str, set[str]] = {}
    for source in SOURCES:
        at = _open(emb_source=source)
        keys = set(_settings(at.main))
        if [t.label for t in at.tabs] == list(_table("embeddings")["emb_tab"].options):
            keys.add("emb_tab")  # tabs carry no key in AppTest: their labels are the row's options
        drawn[source] = keys
        assert set(_settings(at.sidebar)) == set(_table("shared settings")), source
    at = _open(emb_source="tree")  # a tab's own knobs are drawn only while it is open
    at.session_state["emb_tab"] = "Trees in the disk"
    at.run()
    drawn["trees tab"] = set(_settings(at.main)) - drawn["tree"]
    assert drawn["trees tab"] == {"emb_tau", "emb_to_scale"}
    table = _table("embeddings")
    every = set().union(*drawn.values())
    assert every == set(table) | NO_ROW, (sorted(every - set(table) - NO_ROW), sorted(set(table) - every))
    # each source draws its own data widgets and no other's
    assert {"emb_branch", "emb_depth"} <= drawn["tree"] and "emb_digits_n" not in drawn["tree"]
    assert "emb_digits_n" in drawn["digits"] and "emb_upload" in drawn["csv"]
    assert not drawn["wordnet"] & (RECIPE_WIDGETS | {"emb_branch", "emb_depth", "emb_digits_n", "emb_upload"})
    assert "emb_wn_epochs" in drawn["wordnet"] and "emb_wn_epochs" not in drawn["tree"]
    # every URL-bound row is a setting the link may carry; the source is linked by its key instead
    assert knobs.known_keys("embeddings") == {k for k, row in table.items() if row.bind == knobs.URL}
    assert table["emb_source"].bind is None and "emb_source" not in knobs.known_keys("embeddings")


@pytest.mark.parametrize("geometry", sorted(WORDNET_RECIPES))
def test_wordnet_names_the_recipe_in_place_of_its_widgets_and_their_link_values_wait(geometry):
    """The optimiser, rate, negatives and batch widgets are not drawn with WordNet; the caption gives the
    recipe's values; link values for them are no unknown names and apply once the toy tree is chosen."""
    # a bound choice is linked by its shown label; the default geometry is a link without it
    geo = {} if geometry == "poincare" else {"emb_geo": GEOMETRIES[geometry].label}
    at = _open(**geo, emb_opt="RiemannianSGD", emb_neg="5", emb_batch="64")
    assert at.segmented_control(key="emb_geo").value == geometry
    assert at.selectbox(key="emb_source").value == "wordnet"
    assert not set(_settings(at.main)) & RECIPE_WIDGETS
    recipe = WORDNET_RECIPES[geometry]
    caption = " ".join(c.value for c in at.caption if "published recipe is used" in c.value)
    opt = {"radam": "RiemannianAdam", "rsgd": "RiemannianSGD"}[recipe.optimizer]
    for value in (
        opt,
        f"lr {recipe.lr:g}",
        f"{recipe.negatives} negatives",
        f"{recipe.batch_size} pairs per step",
    ):
        assert value in caption, (value, caption)
    assert not any("were not used" in w.value for w in at.warning), [w.value for w in at.warning]
    at.selectbox(key="emb_source").set_value("tree").run()
    assert not at.exception, at.exception
    assert (at.radio(key="emb_opt").value, at.slider(key="emb_neg").value) == ("rsgd", 5)
    assert at.select_slider(key="emb_batch").value == 64


def test_learning_the_curvature_is_disabled_where_the_geometry_has_none():
    at = _open(emb_source="tree")
    for geometry in GEOMETRIES:
        at.segmented_control(key="emb_geo").set_value(geometry).run()
        assert not at.exception, at.exception
        assert at.toggle(key="emb_learn_c").disabled == (not GEOMETRIES[geometry].has_curvature_parameter), (
            geometry
        )
    at.segmented_control(key="emb_geo").set_value("poincare").run()
    at.toggle(key="emb_learn_c").set_value(True).run()
    at.button(key="emb_start").click().run()
    job = at.session_state["emb_job"]
    run_until(at, lambda: job.partial is not None, "the worker's first snapshot")
    assert job.partial.config.learn_curvature


def test_a_lock_in_the_lecturers_link_disables_the_sidebar_and_the_source():
    """The shared settings and the source picker are drawn through the table, so a locked key is drawn
    disabled and held there."""
    at = _open(emb_source="tree", _lock="seed,emb_source,emb_dim")
    assert at.number_input(key="seed").disabled and at.selectbox(key="emb_source").disabled
    assert at.slider(key="emb_dim").disabled and not at.slider(key="emb_epochs").disabled
    assert at.selectbox(key="emb_source").value == "tree"
