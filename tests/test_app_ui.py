"""The shared page furniture's guards, without a browser: formula-safe CSV cells, inert user markdown,
uploads parsed once and refused by size before parsing."""

from __future__ import annotations

import sys
from dataclasses import dataclass

import pandas as pd
import pytest

from tests.app_pages import ROOT, open_page

sys.path.insert(0, str(ROOT / "app"))
import ui  # noqa: E402


def test_csv_cells_that_start_a_formula_are_neutralised_numbers_are_not():
    table = pd.DataFrame(
        {"name": ['=HYPERLINK("x")', "+1", "-cmd", "@SUM(A1)", "plain", "\tx"], "value": [-0.5, 1, 2, 3, 4, 5]}
    )
    safe = ui.csv_safe(table)
    assert list(safe["name"]) == ['\'=HYPERLINK("x")', "'+1", "'-cmd", "'@SUM(A1)", "plain", "'\tx"]
    assert list(safe["value"]) == [-0.5, 1, 2, 3, 4, 5]
    assert list(table["name"])[0].startswith("=")  # the original is untouched
    assert ui.csv_safe(pd.DataFrame({"=x": [1]})).columns[0] == "'=x"


@pytest.mark.parametrize(
    "hostile",
    [
        "![img](http://example.invalid/a.png)",
        "[link](http://example.invalid)",
        "<img src=x onerror=alert(1)>",
        ":red[alarm] :material/home:",
        "**bold** _it_ `code` $x^2$",
    ],
)
def test_user_text_is_made_inert_for_markdown(hostile):
    out = ui.escape_md(hostile)
    # every character that opens a link, image, tag, directive, emphasis, code or maths is escaped
    for ch in "[]<>`*_:$!":
        assert all(out[i - 1] == "\\" for i, c in enumerate(out) if c == ch), (ch, out)
    assert "\n" not in ui.escape_md("a\n\n# b")
    assert ui.escape_md("# heading").startswith("\\#")


@dataclass
class _Upload:
    name: str
    data: bytes
    file_id: str

    @property
    def size(self) -> int:
        return len(self.data)

    def getvalue(self) -> bytes:
        return self.data


def test_read_upload_parses_once_per_file_and_checks_size_first(monkeypatch):
    state: dict = {}
    monkeypatch.setattr(ui.st, "session_state", state)
    calls = []

    def parse(data: bytes):
        calls.append(len(data))
        if data == b"bad":
            raise ValueError("not a report")
        return data.decode()

    bad = _Upload("r.json", b"bad", "id1")
    for _ in range(3):  # reruns with the same rejected file: parsed once, only the message kept
        assert ui.read_upload(bad, key="k", max_bytes=100, parse=parse) == (None, "not a report")
    assert calls == [3] and state["k_parsed"]["value"] is None
    big = _Upload("big.json", b"x" * 101, "id2")
    value, error = ui.read_upload(big, key="k", max_bytes=100, parse=parse)
    assert value is None and "101 bytes" in error and calls == [3]  # refused before parsing
    good = _Upload("g.json", b"ok", "id3")
    assert ui.read_upload(good, key="k", max_bytes=100, parse=parse) == ("ok", None)
    assert ui.read_upload(None, key="k", max_bytes=100, parse=parse) == (None, None)
    assert "k_parsed" not in state
    deep = _Upload("d.json", b"[" * 50_000, "id4")
    import json

    value, error = ui.read_upload(deep, key="k", max_bytes=10**6, parse=lambda b: json.loads(b))
    assert value is None and error


class _Recorder:
    """Stands in for a streamlit container: records the segmented control's options and answers None
    (nothing picked yet), so the picker's own default comes back."""

    def segmented_control(self, label, options, *, default, format_func, key, bind, disabled=False):
        self.options, self.default = list(options), default
        self.labels = [format_func(o) for o in options]
        return None


def test_kernel_picker_defaults_to_the_attention_registry_ida_first():
    from georesolver_core.attention.layer import ATTENTION, KERNEL_CHOICES

    box = _Recorder()
    assert ui.kernel_picker("k", container=box) == "ida"
    assert box.options == list(ATTENTION)
    assert box.labels == [kind.label for kind in ATTENTION.values()]
    table = _Recorder()
    assert ui.kernel_picker("k", KERNEL_CHOICES, container=table) == "ida"  # a page's own table still works
    assert table.labels == list(KERNEL_CHOICES.values())
    assert ui.kernel_picker("k", {"softmax": "softmax"}, container=_Recorder()) == "softmax"


def test_curvature_slider_is_drawn_for_the_geometries_with_a_curvature_parameter(monkeypatch):
    import url_widgets

    from georesolver_core.geometry import GEOMETRIES

    drawn = []
    monkeypatch.setattr(
        url_widgets, "log_slider", lambda label, key, lo, hi, default, help=None: drawn.append(key) or 2.0
    )
    for geometry, entry in GEOMETRIES.items():
        assert ui.curvature_slider(geometry, geometry) == (2.0 if entry.has_curvature_parameter else 1.0)
    assert drawn == [g for g, entry in GEOMETRIES.items() if entry.has_curvature_parameter]
    assert "poincare" in drawn
    assert ui.curvature_slider("always", "sphere", always=True) == 2.0


def test_every_ui_name_the_pages_use_is_exported_by_the_furniture_modules():
    import re

    used = set()
    for path in [*(ROOT / "pages").glob("*.py"), *(ROOT / "app").glob("*.py")]:
        used |= set(re.findall(r"\bui\.([A-Za-z_]\w*)", path.read_text()))
    assert used and not [name for name in used if not hasattr(ui, name)]


def test_no_app_code_reads_streamlits_private_session_state():
    for path in [*(ROOT / "pages").glob("*.py"), *(ROOT / "app").glob("*.py")]:
        assert "._state" not in path.read_text(), path


def test_drawn_controls_are_widget_values_not_the_pages_own_objects(monkeypatch):
    class State(dict):
        def to_dict(self):
            return dict(self)

    state = State(seed=3, dtype="float32", picks=["a"], _url_seen=set(), emb_job=object(), hk_speeds={})
    monkeypatch.setattr(ui.st, "session_state", state)
    assert ui.drawn_controls() == {"seed": 3, "dtype": "float32", "picks": ["a"]}


def test_a_link_notice_shows_on_every_run_until_the_link_is_clean():
    """The same unusable link loaded again in the same session (a reload) is told again, and a value that
    stays in the URL keeps its notice on every rerun; a clean link has none."""

    def notice(app) -> str:
        assert not app.exception, [e.value for e in app.exception]
        return " ".join(w.value for w in app.warning if "were not used" in w.value)

    app = open_page(query={"seed": "inf", "no_such_setting": "1"}, fresh_caches=False)
    first = notice(app)
    assert "`seed=inf`" in first and "`no_such_setting=1`" in first, first
    app.run()  # a rerun: seed=inf was dropped, the unknown name is still in the URL
    assert "`no_such_setting=1`" in notice(app) and "seed=" not in notice(app), notice(app)
    app.query_params["seed"] = "inf"  # the same link again, in the same session
    app.run()
    assert "`seed=inf`" in notice(app) and "`no_such_setting=1`" in notice(app), notice(app)
    app.query_params.clear()
    app.run()
    assert notice(app) == ""


@pytest.mark.parametrize(
    ("file", "key", "label", "value"),
    [
        ("embeddings.py", "emb_geo", "Poincaré ball", "poincare"),  # a geometry picker's default, by its label
        ("embeddings.py", "emb_geo", "Sphere", "sphere"),  # another option, by its label
        ("attention.py", "att_geometry", "Euclidean", "euclidean"),  # a selectbox's default, by its label
        ("attention.py", "att_kernel", "IDA", "ida"),  # a segmented control's default, by its label
        ("home.py", "home_query", None, None),  # the home page's query place, default, by its label
    ],
)
def test_a_link_that_names_a_choice_by_its_label_gets_no_notice(file, key, label, value):
    """Bound choice widgets write their labels into links; a link naming the default by its label leaves the
    URL (it is the default) and must not be reported as a value that was not used."""
    if label is None:  # the label of the default, read off the widget
        widget = open_page(file, via_home=False, fresh_caches=False).get_by_key(key)
        value = widget.value
        label = widget.format_func(value) if hasattr(widget, "format_func") else str(value)
    app = open_page(file, query={key: label}, via_home=False, fresh_caches=False)
    assert app.get_by_key(key).value == value
    assert not [w.value for w in app.warning if "were not used" in w.value]
    bad = open_page(file, query={key: label + " (no such choice)"}, via_home=False, fresh_caches=False)
    assert [w.value for w in bad.warning if "were not used" in w.value and key in w.value]
