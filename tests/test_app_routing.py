"""AppTest of the Routing & memory page: widgets at their extremes, every tab, a training run, uploads."""

from __future__ import annotations

import json

import pytest

from tests.app_pages import run_job_to_end, set_and_run

PAGE = "routing.py"  # the page of the module's shared AppTest, ``at`` (tests/conftest.py)


def test_default_view_draws_the_sphere_and_the_error_curve(at):
    assert at.title[0].value == "Routing & memory"
    assert len(at.get("plotly_chart")) == 2  # the sphere, and the first tab's error vs K
    assert any("Theorem 10.1" in m.value for m in at.markdown)


def test_the_routing_table_is_drawn_only_while_its_expander_is_open(at):
    """A closed expander's content would still reach the browser (and load the data grid's JavaScript)."""
    assert not at.dataframe  # closed by default: no table on a first visit
    at.session_state["rt_table_open"] = True
    at.run()
    box = next(e for e in at.expander if e.label.startswith("Routing table"))
    table = box.dataframe[0].value
    assert table.shape[0] == 120 and not at.exception  # one row per query at the defaults
    at.session_state["rt_table_open"] = False
    at.run()
    assert not at.dataframe


@pytest.mark.parametrize(
    "widgets",
    [
        dict(rt_protos=1, rt_queries=1, rt_k=16, rt_eps=1e-6, rt_spread=0.0),
        dict(rt_protos=64, rt_queries=400, rt_k=1, rt_eps=10.0, rt_spread=2.0, rt_at_protos=True),
    ],
)
def test_sphere_widgets_at_their_extremes(at, widgets):
    set_and_run(at, **widgets)
    assert len(at.get("plotly_chart")) == 2


def test_three_routers_train_and_show_loads(at):
    at.session_state["rt_tab"] = "Three routers"
    at.run()
    set_and_run(at, rt_cmp_steps=20, rt_cmp_experts=2, rt_cmp_k=2, rt_cmp_cf=0.5, rt_cmp_aux=1.0)
    at.button(key="rt_cmp_start").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    run_job_to_end(at, "rt_cmp")
    table = at.dataframe[-1].value  # a statistic per row, a router per column: it fits the page
    assert table.shape[1] == 3 and (table.loc["dropped slots"] >= 0).all() and "test MSE" in table.index
    assert len(at.get("plotly_chart")) == 3  # sphere, loads, losses


@pytest.mark.parametrize(
    "widgets",
    [
        dict(
            rt_dmg_n=200,
            rt_dmg_shift=2000,
            rt_dmg_angle=0.0,
            rt_dmg_tau=0.01,
            rt_dmg_kappa=0.0,
            rt_dmg_gamma=0.0,
            rt_dmg_cap=4,
        ),
        dict(
            rt_dmg_n=400,
            rt_dmg_shift=100,
            rt_dmg_angle=3.14,
            rt_dmg_tau=1.0,
            rt_dmg_kappa=5.0,
            rt_dmg_gamma=5.0,
            rt_dmg_cap=128,
        ),
    ],
)
def test_dmg_stream_at_its_extremes(at, widgets):
    at.session_state["rt_tab"] = "DMG stream"
    at.run()
    set_and_run(at, **widgets)
    assert len(at.get("plotly_chart")) == 3  # sphere, stream, pool
    assert any("Lemma 9.1" in m.value for m in at.markdown)


def test_traffic_tab_shows_the_stored_run_and_rejects_a_bad_upload(at):
    at.session_state["rt_tab"] = "Distributed traffic"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    table = at.dataframe[-1].value
    assert {"gsr-candidates", "a2a-switch"} <= set(table["protocol"]) and set(table["world_size"]) == {2, 4}
    set_and_run(at, rt_comm_per="query")
    good = json.dumps(
        {
            "runs": [
                {
                    "config": {"world_size": 3},
                    "max_abs_diff": {},
                    "same_indices": {},
                    "rows": [
                        {
                            "protocol": "gsr-candidates",
                            "world_size": 3,
                            "batch": 96,
                            "bytes": 10,
                            "messages": 6,
                            "bytes_per_query": 0.1,
                            "messages_per_query": 0.06,
                            "dropped_slots": 0,
                        }
                    ],
                }
            ]
        }
    ).encode()
    at.file_uploader(key="rt_comm_upload").set_value(("routing.json", good, "application/json"))
    at.run()
    assert not at.exception and set(at.dataframe[-1].value["world_size"]) == {3}
    for bad in (b"not json", json.dumps({"nothing": 1}).encode(), json.dumps([1, 2]).encode()):
        at.file_uploader(key="rt_comm_upload").set_value(("bad.json", bad, "application/json"))
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        assert any("Not a routing report" in e.value for e in at.error)


def test_claims_tab_waits_for_its_button(at):
    at.session_state["rt_tab"] = "Claims"
    at.run()
    assert not at.exception
    assert any("Measure the routing claims" in i.value for i in at.info)
