"""AppTest: the entry script runs, every registered page renders with no exception, shared settings work."""

from __future__ import annotations

import pytest

from tests.app_pages import ROOT, open_page, registered_pages

PAGES = registered_pages()


def test_every_page_file_exists_and_paths_are_unique():
    assert PAGES[0][3] == "home"
    for file, *_ in PAGES:
        assert (ROOT / "pages" / file).is_file(), file
    assert len({row[3] for row in PAGES}) == len(PAGES)


@pytest.mark.parametrize("file", [row[0] for row in PAGES])
def test_page_renders_without_exception(file, page):
    assert page.title, f"{file} shows no title"  # and no exception (the fixture checks)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_shared_settings_extremes(dtype):
    at = open_page()
    at.number_input(key="seed").set_value(2**31 - 1)
    at.run()
    at.session_state["dtype"] = dtype
    at.run()
    assert not at.exception
    assert f"precision **{dtype}**" in " ".join(m.value for m in at.markdown)


def test_home_widgets_at_extremes():
    at = open_page()
    for n_keys, eps, spread, sphere_3d in [(1, 1e-4, 0.2, False), (12, 10.0, 3.0, True), (12, 1e-4, 3.0, False)]:
        at.slider(key="home_n_keys").set_value(n_keys)
        at.select_slider(key="home_eps").set_value(eps)
        at.slider(key="home_spread").set_value(spread)
        at.toggle(key="home_sphere_3d").set_value(sphere_3d)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        assert ("drag it to turn it" in " ".join(c.value for c in at.caption)) == sphere_3d


def test_home_draws_the_claims_measurement_only_when_asked():
    at = open_page("home.py")
    assert len(at.get("plotly_chart")) == 1  # the three geometries; the claim's figure waits in its expander
    at.session_state["home_claim_open"] = True
    at.run()
    assert len(at.get("plotly_chart")) == 2 and not at.exception


def test_reset_button_restores_defaults():
    at = open_page()
    at.slider(key="home_n_keys").set_value(9)
    at.run()
    at.button(key="reset_settings").click()
    at.run()
    assert not at.exception
    assert at.slider(key="home_n_keys").value == 5
