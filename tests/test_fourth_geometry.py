"""A fourth geometry, added by registry entries alone, is picked up by the kernels, the benchmarks, the
figure builders and the pages, and is gone again afterwards.

The geometry is a copy of flat space under another name ("flat": the Euclidean entry's maths, its own
colour, label and Home panel) with one attention entry ("flat-ida", its own colour and speed target)
measuring in it. Being the same
space, every result can be checked against the Euclidean one, so the test sees that each reader really
dispatches through the new entries and not through a name it knows.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from georesolver_core.attention import ATTENTION, AttentionConfig, GeoAttention, ida, inverse_distance_kind
from georesolver_core.attention.flex import augmented, ida_score_mod
from georesolver_core.attention.fused import fused_supported
from georesolver_core.attention.layer import AttentionKind, InverseDistanceKernel
from georesolver_core.attention.spec import KernelSpec
from georesolver_core.attention.timing import dense_timing
from georesolver_core.geometry import GEOMETRIES, Panel, ball_volume
from georesolver_core.labs.cost_scaling import ScalingConfig, cost_scaling, default_kernels, label, scaling_kernels
from georesolver_core.landscape import landscape_grid
from georesolver_core.landscape.grid import charted
from georesolver_core.tasks import balanced_tree
from georesolver_core.viz.attention import geometry_scatter
from georesolver_core.viz.embeddings import embedding_view
from georesolver_core.viz.hida import scaling_figure
from georesolver_core.viz.home import arc_example, arc_figure, panel_geometries
from georesolver_core.viz.landscape import landscape_figure
from tests.app_pages import open_page

ROOT = Path(__file__).resolve().parents[1]
NAME, KIND = "flat", "flat-ida"
COLOUR = "#9467bd"
KIND_COLOUR, KIND_TARGET = "#17becf", 1.5


def entries() -> tuple:
    """The new geometry's and attention entry's registry entries: the Euclidean maths under a new name."""
    geometry = dataclasses.replace(
        GEOMETRIES["euclidean"],
        name=NAME,
        label="Flat copy of R^d",
        colour=COLOUR,
        panel=Panel("Flat copy", lambda z: z),
    )
    kind = AttentionKind(
        "IDA (flat copy)",
        NAME,
        geometry.embed,
        lambda config: InverseDistanceKernel(config, NAME),
        contiguous_heads=True,
        timing=dense_timing(NAME, target_ratio=KIND_TARGET),
        colour=KIND_COLOUR,
    )
    return geometry, kind


def register() -> None:
    """Add the two entries (the subprocess below does this before anything reads the registries)."""
    GEOMETRIES[NAME], ATTENTION[KIND] = entries()


@pytest.fixture
def fourth(monkeypatch):
    geometry, kind = entries()
    monkeypatch.setitem(GEOMETRIES, NAME, geometry)
    monkeypatch.setitem(ATTENTION, KIND, kind)
    yield
    # monkeypatch removes both entries after the test; the pages' process-wide caches may hold results
    # computed with the fourth geometry (Home's example holds one entry per geometry): empty them too
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()


def _qkv(n=64, d=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(2, n, d, generator=g, dtype=torch.float64) for _ in range(3)]


def test_the_kernels_pick_it_up(fourth):
    q, k, v = _qkv()
    want = ida(q, k, v, eps=0.1, geometry="euclidean", impl="reference")
    for impl in ("reference", "fused", "auto"):
        torch.testing.assert_close(ida(q, k, v, eps=0.1, geometry=NAME, impl=impl), want)
    assert fused_supported(q, k, v, KernelSpec(0.1, NAME))  # its entry names a tile class
    assert inverse_distance_kind(NAME) == KIND
    # the GPU path (FlexAttention): the same augmented coordinates and score hook as flat space
    flat = augmented(q, k, KernelSpec(0.1, "euclidean"))
    for ours, theirs in zip(augmented(q, k, KernelSpec(0.1, NAME)), flat, strict=True):
        torch.testing.assert_close(ours, theirs)
    x = torch.linspace(0.0, 4.0, 9, dtype=torch.float64)
    torch.testing.assert_close(
        ida_score_mod(KernelSpec(0.1, NAME))(x, 0, 0, 0, 0),
        ida_score_mod(KernelSpec(0.1, "euclidean"))(x, 0, 0, 0, 0),
    )
    torch.manual_seed(0)
    ours = GeoAttention(AttentionConfig(d_model=16, n_heads=2, kernel=KIND))
    theirs = GeoAttention(AttentionConfig(d_model=16, n_heads=2, kernel="ida"))
    theirs.load_state_dict(ours.state_dict())
    x = torch.randn(2, 12, 16)
    torch.testing.assert_close(ours(x), theirs(x))


def test_a_geometry_without_a_tile_class_runs_on_the_reference_kernel(monkeypatch):
    geometry = dataclasses.replace(entries()[0], tile=None)
    monkeypatch.setitem(GEOMETRIES, NAME, geometry)
    q, k, v = _qkv(n=300)
    assert not fused_supported(q, k, v, KernelSpec(0.1, NAME))
    torch.testing.assert_close(
        ida(q, k, v, eps=0.1, geometry=NAME), ida(q, k, v, eps=0.1, geometry="euclidean", impl="reference")
    )


def test_the_cost_scaling_sweep_picks_it_up(fourth):
    assert {KIND, f"{KIND}-naive"} <= set(scaling_kernels())
    assert KIND not in default_kernels()  # a dense entry: timed when asked for, not in the HIDA sweep
    rep = cost_scaling(ScalingConfig((16, 32), (KIND, f"{KIND}-naive"), head_dim=4, backward=False))
    assert all(t > 0 for t in rep.seconds[KIND] + rep.seconds[f"{KIND}-naive"])
    assert rep.predicted[KIND] == 2.0 and label(KIND) == "IDA (flat copy) (fused)"


def test_the_kernel_benchmark_picks_it_up():
    """The benchmark's rows are built when it is imported: registered first, in a fresh interpreter."""
    script = (
        "from tests.test_fourth_geometry import register; register()\n"
        "import json\n"
        "from georesolver_core.bench import run\n"
        f"cfg = run.BenchConfig(seq_lens=(16,), kernels=('sdpa', {KIND!r}), heads=1, head_dim=4, repeats=1,"
        " memory=False, device='cpu', naive_max_len=16)\n"
        "report = run.run_benchmark(cfg)\n"
        "print(json.dumps({'fused': list(run.FUSED), 'rows': [r['kernel'] for r in report['rows']]}))\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert KIND in got["fused"] and KIND in got["rows"]


def test_the_figure_builders_pick_it_up(fourth):
    ex = arc_example(4, 0.05, 0, 1.2, "random")
    assert panel_geometries()[-1] == NAME and set(ex.points) == set(panel_geometries())
    torch.testing.assert_close(torch.as_tensor(ex.weights[NAME]), torch.as_tensor(ex.weights["euclidean"]))
    fig = arc_figure(ex)
    assert [a.text for a in fig.layout.annotations][-1] == "Flat copy"
    keys = [t for t in fig.data if t.name == f"keys ({NAME})"]
    assert len(keys) == 1 and keys[0].marker.color == COLOUR and keys[0].xaxis == "x4"

    assert NAME in charted()
    keys2 = torch.tensor([[0.5, 0.0], [-0.5, 0.3]], dtype=torch.float64)
    grid = landscape_grid(keys2, geometry=NAME, kernel="ida", eps=0.01, extent=1.5, resolution=16)
    same = landscape_grid(keys2, geometry="euclidean", kernel="ida", eps=0.01, extent=1.5, resolution=16)
    assert (grid.loss == same.loss).all()
    surface = landscape_figure(grid)
    assert surface.layout.xaxis.title.text == GEOMETRIES["euclidean"].chart.axes[0]

    tree = balanced_tree(2, 2)
    view = embedding_view(torch.randn(tree.n_nodes, 2, dtype=torch.float64), tree, geometry=NAME)
    assert view.kind == "plane"
    picture = geometry_scatter(keys2[0].numpy(), keys2.numpy(), [0.4, 0.6], geometry=NAME)
    assert any(getattr(getattr(t, "marker", None), "color", None) == COLOUR for t in picture.data)
    assert ball_volume(NAME)(1.0, 2) == pytest.approx(ball_volume("euclidean")(1.0, 2))


def test_its_colour_and_speed_target_are_picked_up(fourth):
    # imported here: the benchmark builds its rows on import, after ``register`` in the test above
    from georesolver_core.bench import TARGET_SEQ_LEN, judge, target_ratios
    from georesolver_core.viz.kernels import ratio_figure, time_figure

    assert target_ratios()[KIND] == KIND_TARGET
    rows = [
        dict(kernel=k, label=k, seq_len=TARGET_SEQ_LEN, fwd_ms=1.0, fwdbwd_ms=2.0, fwd_ratio=1.2, fwdbwd_ratio=r)
        for k, r in (("sdpa", 1.0), (KIND, 1.2), (f"{KIND}-naive", 3.0))
    ]
    report = {"rows": rows}
    judged = [t for t in judge(report) if t["target"].startswith(f"{KIND} ")]
    assert len(judged) == 1 and judged[0]["measured"] == 1.2 and judged[0]["met"] is True
    assert f"<= {KIND_TARGET}x" in judged[0]["target"]
    lines = {t.name: t.line.color for t in time_figure(report).data}
    assert lines[KIND] == lines[f"{KIND}-naive"] == KIND_COLOUR  # the naive row shares its entry's colour
    marks = [t for t in ratio_figure(report).data if t.name == f"target {KIND} <= {KIND_TARGET}x"]
    assert len(marks) == 1 and marks[0].marker.color == KIND_COLOUR and list(marks[0].y) == [KIND_TARGET]
    sweep = scaling_figure([1, 2], {KIND: [1.0, 4.0]}, {KIND: 2.0}, {}, "s")
    assert [t.line.color for t in sweep.data] == [KIND_COLOUR]


def test_the_pages_pick_it_up(fourth):
    home = open_page("home.py")
    layouts = [json.loads(chart.proto.spec)["layout"] for chart in home.get("plotly_chart")]
    titles = [a["text"] for layout in layouts for a in layout.get("annotations", [])]
    assert "Flat copy" in titles
    attention = open_page("attention.py")
    attention.get_by_key("att_geometry").set_value(NAME).run()
    assert not attention.exception, [e.value for e in attention.exception]


def test_the_entries_are_gone_afterwards():
    assert NAME not in GEOMETRIES and KIND not in ATTENTION
