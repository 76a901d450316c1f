"""The README's two commands are the ones CI runs and the ones that work."""

from __future__ import annotations

import re

from tests.app_pages import ROOT


def _command_after(heading: str) -> str:
    text = (ROOT / "README.md").read_text()
    section = text.split(f"## {heading}", 1)[1]
    return re.search(r"```bash\n(.+?)\n```", section, re.S).group(1).strip()


def test_ci_runs_the_readme_test_command_verbatim():
    command = _command_after("Run the tests")
    assert "pytest" in command
    assert command in (ROOT / ".ci" / "run").read_text()


def test_readme_app_command_launches_the_app_folder():
    command = _command_after("Run the app")
    assert command.endswith("streamlit run app")
    assert (ROOT / "app" / "streamlit_app.py").is_file()
    from streamlit.web.server.app_discovery import discover_asgi_app

    # `streamlit run app` finds the server's st.App there, which serves the navigation script
    assert discover_asgi_app(ROOT / "app" / "streamlit_app.py").is_asgi_app
    assert (ROOT / "app" / "main.py").is_file()


def test_torch_is_pinned_to_the_version_that_resolves_to_the_cpu_wheel_here():
    assert '"torch==2.13.0"' in (ROOT / "pyproject.toml").read_text()


def test_the_library_example_in_the_readme_runs():
    text = (ROOT / "README.md").read_text()
    example = re.search(r"```python\n(.+?)\n```", text.split("## Use the library", 1)[1], re.S).group(1)
    namespace: dict = {}
    exec(compile(example, "README.md", "exec"), namespace)  # noqa: S102 - our own documentation
    assert namespace["W"].sum(-1).allclose(namespace["torch"].ones(4))
    assert namespace["o"].shape == (1, 16, 8)
    assert namespace["packed"].nbytes > 0


def test_the_fast_tier_command_and_the_slow_list_are_current():
    """The README's fast tier leaves out what tests/conftest.py's SLOW names: each entry names a test file, and
    a test defined in it."""
    import ast

    from tests.conftest import SLOW

    assert '-m "not slow and not browser"' in (ROOT / "README.md").read_text()
    for entry in SLOW:
        path, _, name = entry.partition("::")
        assert (ROOT / path).is_file(), entry
        if name:
            tree = ast.parse((ROOT / path).read_text())
            defined = {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
            assert name.split("[", 1)[0] in defined, entry
