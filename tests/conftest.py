"""Shared fixtures (dtypes, geometries, random points of each geometry, a page's AppTest) and the test tiers:
the slow list, pytest-xdist's groups."""

from __future__ import annotations

import os
import signal
import sys
import tempfile

import pytest
import torch

from georesolver_core.device import one_cpu_thread, process_threads, set_process_threads
from georesolver_core.geometry import GEOMETRIES, embed
from tests.app_pages import open_page

# The app's job runner writes its run folders here, not under the checkout (pages started in AppTest submit
# real jobs); its workers are spawned, so they read this too.
os.environ.setdefault("GR_RUNS_DIR", tempfile.mkdtemp(prefix="gr-test-runs-"))
# No spare worker warming beside the tests' own (tests/test_jobs.py checks the spare with its own runner).
os.environ.setdefault("GR_SPARE_WORKER", "0")

# The slow tier (`-m slow`; the fast tier, the README's, is `-m "not slow and not browser"`): tests of more than a
# few seconds each (measured one at a time on a 2-core machine, times below), marked here in one list rather
# than at each test; a whole module is marked by its path. The laws, the labs' tests and at least one AppTest of
# every page (tests/test_app.py opens each) stay in the fast tier; what goes here starts a subprocess, runs at a
# real size or runs a live job to its end. Modules whose every test is slow carry their own ``pytestmark``
# (test_app_training, test_training_runs, test_fuzz_library), a few single tests their own marker.
SLOW = {
    # subprocesses: each starts Python and imports torch (3-6 s) before it checks anything
    "tests/test_cli.py::test_claims_json_lists_every_registered_claim_with_a_verdict": "73 s: every claim",
    "tests/test_cli.py::test_claims_only_and_unknown_key": "13 s: two CLI runs",
    "tests/test_cli.py::test_output_piped_into_a_reader_that_closes_early_ends_quietly": "6 s",
    "tests/test_claims_quick_full.py": "45 s: every claim measured twice, quick and full",
    "tests/test_train_ddp.py": "24 s: two gloo processes under torchrun, then one",
    "tests/test_validation.py::test_library_import_does_not_import_streamlit": "11 s",
    "tests/test_claims_imports.py::test_importing_a_maths_module_never_imports_claims": "6 s",
    "tests/test_claims_imports.py::test_importing_the_claims_package_leaves_scipy_stats_to_the_claim_that_needs_it": (
        "5 s"
    ),
    "tests/test_memory_budget_sizes.py::test_a_bad_budget_in_the_environment_is_one_error_line": "5 s",
    "tests/test_embeddings_fast.py::test_a_killed_training_run_leaves_its_last_complete_embedding": "5 s",
    "tests/test_embeddings_fast.py::test_a_killed_writer_leaves_a_whole_file_not_a_mix": "5 s",
    "tests/test_architecture.py::test_no_comparison_against_a_registry_key_outside_the_registries": "4 s",
    "tests/test_architecture.py::test_the_kernels_import_no_lab_benchmark_or_claim_and_the_labs_no_claim_or_benchmark": "3 s",
    # real sizes or long runs
    "tests/test_embeddings_fast.py::test_shipped_noun_points_reproduce_their_report_on_a_sample": "22 s",
    "tests/test_embeddings_fast.py::test_embed_fast_and_construct_write_points_that_match_their_report": "5 s",
    "tests/test_embeddings_fast.py::test_fast_trainer_learns_and_its_file_reproduces_its_figures": "4 s",
    "tests/test_embeddings.py::test_a_long_adam_run_keeps_every_parent_inside_its_children": "7 s",
    "tests/test_embeddings.py::test_binary_tree_31_nodes_poincare_2d_beats_euclidean_at_the_same_budget": "6 s",
    "tests/test_memory_budget_sizes.py::test_the_text_task_checks_its_validation_windows": "8 s",
    "tests/test_fourth_geometry.py::test_the_kernel_benchmark_picks_it_up": "6 s",
    # the benchmark's module report (13 s to measure) and the tests that read it
    "tests/test_bench.py::test_report_has_environment_rows_ratios_and_memory": "13 s: the report",
    "tests/test_bench.py::test_targets_are_judged_only_where_measured": "the report",
    "tests/test_bench.py::test_table_figures_and_complexity": "the report",
    "tests/test_bench.py::test_report_carries_the_headline_and_judges_targets_from_it": "the report",
    "tests/test_bench.py::test_cli_quick_json": "4 s",
    # AppTest: a live run to its end, or a page's heaviest widgets (each page keeps fast tests)
    "tests/test_app_neighbours.py::test_orthogonal_training_button_curves_and_table": "25 s: a training run",
    "tests/test_app_routing.py::test_three_routers_train_and_show_loads": "20 s: three training runs",
    "tests/test_app_routing.py::test_traffic_tab_shows_the_stored_run_and_rejects_a_bad_upload": "5 s",
    "tests/test_app_hida.py::test_error_sweep_and_scaling_run_on_buttons": "18 s: the sweep and scaling runs",
    "tests/test_app_kernels.py::test_live_run_at_the_small_extreme_shows_table_targets_and_curves": "5 s",
    "tests/test_app_landscapes.py::test_landscape_tab_extremes": "8 s",
    "tests/test_app_landscapes.py::test_model_tab_extremes": "5 s",
    "tests/test_app_landscapes.py::test_hessian_tab_extremes": "4 s",
    "tests/test_app_embeddings.py::test_wordnet_mammals_are_the_default_and_train_live_with_the_recipe": "4 s",
    "tests/test_app_embeddings.py::test_pause_resume_step_stop_reset_continue_the_same_run": "4 s",
    "tests/test_app_embeddings.py::test_a_run_that_reaches_the_rim_is_flagged_and_offers_float64": "4 s",
    "tests/test_app_embeddings.py::test_tabs_comparison_norms_sphere_maps_and_data": "4 s",
    "tests/test_app_embeddings.py::test_the_toy_tree_trains_live_to_the_end_off_the_rim": "3 s",
    "tests/test_app_embeddings_knobs.py::test_the_widgets_drawn_over_every_source_are_exactly_the_knob_table": "4 s",
    "tests/test_app_attention.py::test_query_modes_kernel_and_sweep": "3 s",
    "tests/test_app_compression.py::test_extremes": "3 s",
}


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's hook reads the groups and -m reads the marks
def pytest_collection_modifyitems(config, items):
    """Marks the tests of SLOW (by module path, or by test name with or without its parameters) ``slow``, and
    groups for pytest-xdist (``--dist loadgroup``; other modes ignore the groups): the tests that share a
    module-scoped fixture (an AppTest page, a module's measured claims) run on one worker, in file order (the
    fixture built once; some modules' tests go on from the page their predecessor left), and the browser tests
    on one worker (each starts the app and Chromium)."""
    for item in items:
        path, _, rest = item.nodeid.partition("::")
        if path in SLOW or item.nodeid in SLOW or f"{path}::{rest.split('[', 1)[0]}" in SLOW:
            item.add_marker(pytest.mark.slow)
        if item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.xdist_group("browser"))
        # _fixtureinfo: pytest's record of the fixtures a test uses (no public accessor gives their scopes)
        elif any(d[-1].scope == "module" for d in item._fixtureinfo.name2fixturedefs.values()):
            item.add_marker(pytest.mark.xdist_group(path))


if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
    # pytest-xdist's workers share the machine: each gets its share of the cores for torch's intra-op threads
    # (not every worker all of them)
    set_process_threads(max(1, process_threads() // int(os.environ["PYTEST_XDIST_WORKER_COUNT"])))
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    # pytest-xdist's workers, and a run a shell started in the background, begin with Ctrl-C ignored; the tests
    # of Ctrl-C send a real SIGINT and expect Python's KeyboardInterrupt, as in a terminal
    signal.signal(signal.SIGINT, signal.default_int_handler)


DTYPES = [torch.float32, torch.float64]
GEOMETRY_NAMES = list(GEOMETRIES)  # every geometry of the registry


@pytest.fixture(params=DTYPES, ids=["float32", "float64"])
def dtype(request):
    return request.param


@pytest.fixture(params=GEOMETRY_NAMES)
def geometry(request):
    return request.param


def random_points(geometry: str, *shape: int, dtype=torch.float64, seed: int = 0, c: float = 1.0) -> torch.Tensor:
    """Random valid points of a geometry: Gaussian in R^d, mapped into the ball, or normalised."""
    g = torch.Generator().manual_seed(seed)
    z = torch.randn(*shape, generator=g, dtype=torch.float64)
    return embed(z, geometry=geometry, c=c).to(dtype)


def tol(dtype) -> dict:
    """Tolerances per dtype: float32 is looser, as in geoopt's own tests."""
    return dict(rtol=1e-4, atol=1e-5) if dtype == torch.float32 else dict(rtol=1e-10, atol=1e-12)


@pytest.fixture
def one_thread():
    """torch on one intra-op thread for a test of tiny tensors (extra threads only add synchronisation)."""
    with one_cpu_thread():
        yield


@pytest.fixture(autouse=True)
def _no_job_outlives_its_test():
    """Jobs a page started in a test (AppTest sessions are never closed, so the runner would wait a minute
    to cancel them) are stopped when the test ends: the next test's run does not queue behind them."""
    yield
    runner = sys.modules.get("georesolver_core.jobs.runner")
    default = getattr(runner, "_DEFAULT", None)
    if default is not None and not default.closed:
        for owner in {h.owner for h in list(default.jobs.values())}:
            default.cancel_owner(owner)


@pytest.fixture(scope="module")
def at(request):
    """The AppTest of the module's page (its ``PAGE``, a file of pages/), shared by the module's tests in the
    order they run: clean caches to start, cleared again when the module is done."""
    import streamlit as st

    app = open_page(request.module.PAGE, timeout=180)
    yield app
    st.cache_data.clear()
    st.cache_resource.clear()


@pytest.fixture
def page(file):
    """A fresh AppTest of the whole app on the page ``file`` (a test's parameter, a file of pages/: e.g.
    ``@pytest.mark.parametrize("file", FILES)``), with clean caches: the test's own session."""
    return open_page(file)
