"""``bench --serve``: the class-load benchmark's configuration, its table, and one real run of a class of one."""

from __future__ import annotations

import json
import shutil

import pytest

from georesolver_core.bench.serve import ServeConfig
from georesolver_core.bench.serve_report import ClassRow, Phase, SliderPhase, _quantile, table


@pytest.mark.parametrize(
    "kwargs,words",
    [({"sessions": ()}, "sessions"), ({"sessions": (0,)}, "sessions"), ({"sessions": (17,)}, "[1, 16]"),
     ({"moves": 0}, "moves"), ({"timeout_s": 1}, "timeout_s")],
)  # fmt: skip
def test_a_class_outside_the_ranges_is_refused(kwargs, words):
    with pytest.raises(ValueError, match="must") as err:
        ServeConfig(**kwargs)
    assert words in str(err.value)


def test_quantiles_of_the_samples():
    samples = [float(i) for i in range(1, 101)]
    assert _quantile(samples, 0.5) == pytest.approx(50.5)
    assert _quantile(samples, 0.95) == pytest.approx(95.05)
    assert _quantile([2.0], 0.95) == 2.0


def test_the_table_has_one_column_per_class_size():
    def phase(values, server, workers, wall):
        return SliderPhase(values, Phase(wall, server, workers), reruns=len(values))

    rows = [
        ClassRow(
            n,
            {"home": [1.0 * n, 2.0 * n], "attention": [0.5, 0.7]},
            phase([0.2, 0.4], 0.3, 0.0, 2.0),
            rss_mb=500.0 + n,
            rss_idle_mb=480.0,
            beside_training=phase([0.5, 0.9], 1.0, 3.0, 2.0),
            stop_to_idle_s=1.5,
        )  # fmt: skip
        for n in (1, 4)
    ]
    text = table(rows)
    lines = text.splitlines()
    assert lines[0] == "| sessions on one server | 1 | 4 |"
    assert all(line.count("|") == 4 for line in lines)
    assert "| server CPU per rerun (s) | 0.150 | 0.150 |" in text
    assert "| server process CPU while that run trains (cores) | 0.50 | 0.50 |" in text
    assert "| worker processes' CPU while it trains (cores) | 1.50 | 1.50 |" in text
    assert "| server memory per idle session (MB) | 21 | 6 |" in text


@pytest.mark.browser
@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Debian's chromium")
def test_a_class_of_one_runs_end_to_end(capsys):
    from georesolver_core.__main__ import main

    assert main(["bench", "--serve", "--sessions", "1", "--moves", "2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    row = doc["rows"][0]
    assert row["sessions"] == 1 and set(row["first_visit"]) == {"home", "attention"}
    assert len(row["sliders"]["samples_s"]) == 2 and all(s > 0 for s in row["sliders"]["samples_s"])
    assert row["beside_training"]["server_cpu_s"] + row["beside_training"]["workers_cpu_s"] > 0  # it trained
    assert row["stop_to_idle_s"] is not None and row["rss_mb"] > row["rss_idle_mb"] > 100
