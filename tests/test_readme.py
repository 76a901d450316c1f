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
