"""AppTest of the two uploads whose pages had no upload test: a training checkpoint (good, hostile,
truncated, then removed) and a routing traffic report that crashed the page before it was checked."""

from __future__ import annotations

import io
import json

import pytest
import streamlit as st
import torch

from georesolver_core.attention import AttentionConfig
from georesolver_core.device import set_process_threads
from georesolver_core.model import ModelConfig
from georesolver_core.train import RunSpec, TrainConfig, build_trainer
from tests.app_pages import open_page
from tests.test_upload_fuzz import _Exploit

TINY = RunSpec(
    task="recall", size=4, model=ModelConfig(n_layers=1, attention=AttentionConfig(d_model=8, n_heads=2))
)


def _saved(payload) -> bytes:
    buf = io.BytesIO()
    torch.save(payload, buf)
    return buf.getvalue()


def _upload(at, key: str, name: str, data: bytes | None) -> None:
    at.file_uploader(key=key).set_value(None if data is None else (name, data, "application/octet-stream"))
    at.run()
    assert not at.exception, [e.value for e in at.exception]


@pytest.fixture(scope="module")
def training():
    set_process_threads(1)
    app = open_page("training.py")
    yield app
    st.cache_data.clear()


def test_training_checkpoint_upload_good_hostile_truncated_removed(training):
    at = training
    good = _saved(
        {"format": "georesolver-train/1", **build_trainer(TINY, TrainConfig(steps=2, batch_size=4)).state()}
    )
    _upload(at, "trn_upload", "run.pt", good)
    assert not at.error and any("Checkpoint of **ida** on **recall**, step 0" in m.value for m in at.markdown)
    assert at.button(key="trn_continue")
    for name, data, words in [
        ("evil.pt", _saved({"format": "georesolver-train/1", "x": _Exploit()}), "not a readable checkpoint"),
        ("cut.pt", good[: len(good) // 3], "not a readable checkpoint"),
        ("zeros.pt", b"\x00" * 10, "not a readable checkpoint"),
    ]:
        _upload(at, "trn_upload", name, data)
        assert any(words in e.value for e in at.error), [e.value for e in at.error]
    _upload(at, "trn_upload", "", None)
    assert not at.error and "trn_upload_parsed" not in at.session_state


def test_routing_upload_of_a_bare_string_is_refused():
    at = open_page("routing.py")
    at.session_state["rt_tab"] = "Distributed traffic"
    at.run()
    for data in (b'"rows"', json.dumps({"runs": [{"rows": [1]}]}).encode()):
        _upload(at, "rt_comm_upload", "rows.json", data)
        assert any("Not a routing report" in e.value for e in at.error), [e.value for e in at.error]
    _upload(at, "rt_comm_upload", "", None)
    assert not at.error and set(at.dataframe[-1].value["world_size"]) == {2, 4}  # the stored run again
