"""A fourth geometry, added by registry entries alone, is picked up by the kernels, the benchmarks, the
figure builders and the pages, and is gone again afterwards; one made of its maths alone is served or
refused clearly everywhere.

"flat" is flat space written out from its formulas (``tests/fourth_geometry.py``, not a copy of the
Euclidean entry). Dressed for the app (its own colour, label, Home panel and landscape chart, and the
flat-space kernel maths named as its tile) it comes with one attention entry ("flat-ida", its own colour
and speed target) measuring in it. Being the same space, every result can be checked against the
Euclidean one, so the test sees that each reader really dispatches through the new entries and not
through a name it knows. Bare (its maths only: no tile, chart or panel), the kernels refuse it by name,
the reference kernel and the figures serve it, and the geometry laws of ``tests/test_geometry.py`` take
it with nothing added there.
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
from georesolver_core.attention.compiled import CompiledIDA
from georesolver_core.attention.flex import augmented, ida_score_mod
from georesolver_core.attention.fused import fused_supported
from georesolver_core.attention.layer import AttentionKind, InverseDistanceKernel
from georesolver_core.attention.spec import KernelSpec
from georesolver_core.attention.timing import dense_timing
from georesolver_core.geometry import GEOMETRIES, Chart, Panel, ball_volume, distance
from georesolver_core.labs.cost_scaling import ScalingConfig, cost_scaling, default_kernels, label, scaling_kernels
from georesolver_core.landscape import landscape_grid
from georesolver_core.landscape.grid import charted
from georesolver_core.tasks import balanced_tree
from georesolver_core.theory.geometry import euclidean_ball_volume
from georesolver_core.viz.attention import geometry_scatter
from georesolver_core.viz.embeddings import embedding_view
from georesolver_core.viz.hida import scaling_figure
from georesolver_core.viz.home import arc_example, arc_figure, panel_geometries
from georesolver_core.viz.landscape import landscape_figure
from tests.app_pages import open_page
from tests.fourth_geometry import flat_geometry

ROOT = Path(__file__).resolve().parents[1]
NAME, KIND = "flat", "flat-ida"
COLOUR = "#9467bd"
KIND_COLOUR, KIND_TARGET = "#17becf", 1.5


def entries() -> tuple:
    """The new geometry's and attention entry's registry entries: flat space from its formulas, dressed
    for the app, and an IDA entry measuring in it."""
    geometry = dataclasses.replace(
        flat_geometry(NAME),
        label="Flat copy of R^d",
        colour=COLOUR,
        chart=Chart("square of the plane", ("x", "y"), 1.5, max_extent=100.0),
        panel=Panel("Flat copy", lambda z: z),
        ball_volume=lambda R, d, c=1.0: euclidean_ball_volume(R, d),
        tile="Euclidean",  # flat space's kernel maths: the fused tile class and the flex score hook
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


@pytest.fixture
def bare(monkeypatch):
    """The fourth geometry with its maths only: no tile, landscape chart, Home panel or attention entry."""
    monkeypatch.setitem(GEOMETRIES, NAME, flat_geometry(NAME))
    yield
    import streamlit as st  # the pages' process-wide caches may hold results of the fourth geometry

    st.cache_data.clear()
    st.cache_resource.clear()


def test_its_maths_answers_what_callers_ask(bare):
    geo, flat = GEOMETRIES[NAME], GEOMETRIES["euclidean"]
    for question in ("is_compact", "is_flat", "is_embedded", "has_curvature_parameter", "has_bounded_coordinates"):
        assert getattr(geo, question) == getattr(flat, question), question
    assert geo.ambient_dim(3) == 3 and geo.rim(1.0) is None
    x = torch.randn(5, 3, dtype=torch.float64)
    v = torch.randn(5, 3, dtype=torch.float64)
    torch.testing.assert_close(geo.norm(x, v), flat.norm(x, v))
    torch.testing.assert_close(geo.metric(x, v, v), flat.metric(x, v, v))
    y = x.flip(0)
    assert torch.equal(distance(x, y, geometry=NAME), distance(x, y, geometry="euclidean"))


def test_the_kernels_serve_it_or_refuse_it_by_name(bare):
    q, k, v = _qkv(n=300)
    assert not fused_supported(q, k, v, KernelSpec(0.1, NAME))
    want = ida(q, k, v, eps=0.1, geometry="euclidean", impl="reference")
    for impl in ("auto", "reference"):  # auto: the reference kernel, the fused one having no tile for it
        torch.testing.assert_close(ida(q, k, v, eps=0.1, geometry=NAME, impl=impl), want)
    refusals = {
        "fused": lambda: ida(q, k, v, eps=0.1, geometry=NAME, impl="fused"),
        "flex": lambda: ida(q, k, v, eps=0.1, geometry=NAME, impl="flex"),
        "compiled": lambda: CompiledIDA.apply(q, k, v, KernelSpec(0.1, NAME), 16, 16),
    }
    for kernel, call in refusals.items():
        with pytest.raises(ValueError, match=rf"geometry must be one of .* for the {kernel} kernel .*'{NAME}'"):
            call()
    with pytest.raises(ValueError, match=f"flex kernel.*'{NAME}'"):
        ida_score_mod(KernelSpec(0.1, NAME))
    with pytest.raises(ValueError, match=f"geometry must be one of .* for a landscape .*'{NAME}'"):
        landscape_grid(torch.zeros(2, 2, dtype=torch.float64), geometry=NAME, kernel="ida", eps=0.1, extent=1.0)
    with pytest.raises(ValueError, match=f"geometry must be one of .*'{NAME}'"):
        ball_volume(NAME)


def test_the_figures_draw_it_where_it_has_a_picture(bare):
    assert NAME not in charted() and NAME not in panel_geometries()  # no chart, no Home panel: left out
    keys = torch.tensor([[0.5, 0.0], [-0.5, 0.3]], dtype=torch.float64)
    picture = geometry_scatter(keys[0].numpy(), keys.numpy(), [0.4, 0.6], geometry=NAME)
    assert len(picture.data) > 0
    tree = balanced_tree(2, 2)
    assert embedding_view(torch.randn(tree.n_nodes, 2, dtype=torch.float64), tree, geometry=NAME).kind == "plane"


def test_the_pages_take_it_bare(bare):
    home = open_page("home.py")
    assert not home.exception, [e.value for e in home.exception]
    attention = open_page("attention.py")
    attention.get_by_key("att_geometry").set_value(NAME).run()
    assert not attention.exception, [e.value for e in attention.exception]


def test_the_geometry_laws_take_it_with_nothing_added():
    """tests/test_geometry.py with the bare fourth geometry registered (the plugin), in a fresh interpreter."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    run = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-p",
        "tests.fourth_geometry",
        "tests/test_geometry.py",
    ]
    listed = subprocess.run(
        [*run, "--collect-only", "-q"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert "[flat]" in listed.stdout, listed.stdout[-2000:]  # the fixture-parametrised laws take it
    out = subprocess.run([*run, "-q"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-3000:]


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


def test_the_entries_are_gone_afterwards(request):
    if request.config.pluginmanager.has_plugin("tests.fourth_geometry"):
        pytest.skip(
            "the fourth_geometry plugin keeps its own bare entry of this name registered for the whole run"
        )
    assert NAME not in GEOMETRIES and KIND not in ATTENTION
