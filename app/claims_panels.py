"""The paper's claims on a page: verdict badges, the theory-vs-measurement box, each claim's figure, and the
audit of the seeds statement by statement (``inventory_panel``).

Pages show the claims report shipped in assets/ (measured at full settings) and measure live, with
small sweeps, only what it lacks; ``claim_result`` is the app's one cached runner, shared with the
start-up warm-up. The claims registry is imported on first use, not when a page imports this module.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import streamlit as st
from charts import chart, download_json
from user_input import escape_md

from georesolver_core.verdicts import FAILS

VERDICT_BADGE = {
    "holds": ":green-badge[:material/check: holds]",
    "holds only under conditions": ":orange-badge[:material/rule: holds only under conditions]",
    "fails": ":red-badge[:material/close: fails]",
}

CLAIMS_REPORT = Path(__file__).resolve().parent.parent / "assets" / "claims_report.json"


def claims_box(keys: list[str], prefix: str, *, enabled: bool = True) -> None:
    """The verdict box for these claims (the shipped report's measurements, ``shipped_claims``), and each
    claim's measurement behind a toggle."""
    if not enabled:
        st.caption("The paper's claims for this view are switched off at the top of the page.")
        return
    results = shipped_claims(keys)
    theory_box(results)
    if st.toggle("Show the measurements behind the verdicts", key=f"{prefix}_claims_show"):
        claims_grid(results, prefix)
    download_json("Download the claims' data (JSON)", results, f"{prefix}_claims.json", f"{prefix}_claims_dl")


@st.cache_data(show_spinner=False, max_entries=1)
def shipped_report() -> dict | None:
    """The claims report shipped in assets/ (measured at full settings), or None when it is absent or unreadable."""
    from georesolver_core.claims.report import load_report

    try:
        return load_report(CLAIMS_REPORT)
    except ValueError:
        return None


def shipped_claims(keys: list[str]) -> list[dict]:
    """These claims as the shipped report measured them, in order; a claim it lacks is measured live
    (small sweeps, ``measure_claims``), so a page opens at once and a new claim still shows."""
    report = shipped_report()
    have = {} if report is None else {r["key"]: r for r in report["claims"]}
    live = (
        {r["key"]: r for r in measure_claims([k for k in keys if k not in have])} if set(keys) - set(have) else {}
    )
    return [have.get(k) or live[k] for k in keys if k in have or k in live]


def page_claims(page: str, prefix: str, *, figures_on_request: bool = False) -> list[dict]:
    """Every claim shown on ``page`` (its url path): the shipped report's measurement (claims it lacks are
    measured live), the verdict box, their figures, a JSON download. ``figures_on_request``: the figures
    wait behind a toggle (for pages that show their claims by default)."""
    from georesolver_core.claims import CLAIMS

    results = shipped_claims([key for key, claim in CLAIMS.items() if claim.page == page])
    theory_box(results)
    # A page's claims have up to 28 interactive figures, and a browser on a small machine takes seconds
    # to draw them, on every first visit, before the page settles: where the claims show by default,
    # their figures wait for the toggle.
    label = f"Show each claim's figure ({len(results)})"
    help_text = "Each claim's measurement against its bound, two to a row"
    if not figures_on_request or st.toggle(label, key=f"{prefix}_claims_figs", help=help_text):
        claims_grid(results, prefix)
    download_json("Download the claims' data (JSON)", results, f"{page}_claims.json", f"{prefix}_claims_dl")
    return results


@st.cache_resource(show_spinner=False, max_entries=256)
def claim_chart(result: dict, height: int = 360):
    """``claim_figure(result, height)``, built once per server for each measurement (the shipped ones are
    the same for every session, and the warm-up builds them before the pages ask). The figure is shared:
    nothing may change it (``chart`` draws a copy in presentation mode)."""
    from georesolver_core.viz.claims import claim_figure

    return claim_figure(result, height=height)


GRID_HEIGHT = 320  # a claim figure's height in the two-column grid


def claims_grid(results: list[dict], prefix: str) -> None:
    """Each claim's measurement against its bound, two to a row. The statements and summaries are in the
    verdict box above; a failed claim repeats its counter-example in red under its figure."""
    cols = st.columns(2)
    for i, r in enumerate(results):
        with cols[i % 2].container(border=True):
            chart(claim_chart(r, GRID_HEIGHT), key=f"{prefix}_claim_{r['key']}")
            if r["verdict"] == FAILS:
                st.error(f"Contradicted by the measurement. {r['summary']}")


@st.cache_data(show_spinner=False, max_entries=256)  # one entry per registered claim at most
def claim_result(key: str) -> dict:
    """One claim measured with its small sweeps (``run_claim(key, quick=True)``).

    The one cached runner of the app: a claim measured on one page is not measured again on another.
    A measurement that raises is not cached, so it is retried on the next run.
    """
    from georesolver_core.claims import run_claim

    return run_claim(key, quick=True)


def measure_claims(keys: list[str]) -> list[dict]:
    """Measure these claims under a status box with a progress bar; returns the results that succeeded.

    One broken measurement must not hide the other claims: it shows an error with the command that reruns it.
    """
    results, failures = [], []
    with st.status(f"Measuring {len(keys)} claims (small sweeps) ...", expanded=False) as status:
        bar = st.progress(0.0)
        for i, key in enumerate(keys):
            try:
                results.append(claim_result(key))
            except Exception as err:  # any error of one measurement, reported below; the others still show
                failures.append((key, err))
            bar.progress((i + 1) / len(keys), text=key)
        status.update(
            label=f"{len(results)} of {len(keys)} claims measured (small sweeps)",
            state="error" if failures else "complete",
        )
    for key, err in failures:
        st.error(
            f"Claim {key!r} could not be measured: {err}. Run `python -m georesolver_core claims --only {key}`."
        )
    return results


def theory_box(results: list[dict], title: str = "What the theory says vs what we measured") -> None:
    """One bordered box: for each claim its statement, bound, headline measurement and verdict."""
    with st.container(border=True):
        st.markdown(f"**{title}**")
        for r in results:
            # the verdict is for the sweep measured, not for whatever setting the page shows beside it
            where = f"  \n*Verdict for the sweep over* {r['x_label']}" if r.get("x_label") else ""
            st.markdown(
                f"{VERDICT_BADGE.get(r['verdict'], r['verdict'])} **{r['section']}**: {escape_md(r['statement'])}{where}"
            )
            st.markdown(f"Bound: `{r['bound_text']}`  \nMeasured: {r['summary']}")


def inventory_panel() -> None:
    """The audit of the seeds (``claims.inventory``): per seed, how many statements, how many claims measure,
    how many are not measured, and those with their reason; the whole audit, statement by statement."""
    import pandas as pd

    from georesolver_core.claims.inventory import coverage, not_measured, statements

    rows = coverage()
    st.caption(
        "Every numbered result and every quantitative sentence of the three seeds, listed with the claims that "
        "measure it or the reason it is not measured (a definition, a pointer, or not measurable here)."
    )
    for col, row in zip(st.columns(len(rows)), rows, strict=True):
        col.metric(
            f"Seed {row.seed}: {row.document}, statements measured",
            f"{row.measured} / {row.statements}",
            f"{row.not_measured} not measured, {row.in_part} in part",
            delta_color="off",
            delta_arrow="off",
            help=f"{row.claims} claims measure this seed's statements",
        )
    table = pd.DataFrame([asdict(r) for r in rows])
    st.dataframe(table, hide_index=True, key="claims_coverage")
    listed = not_measured()
    with st.expander(f"Statements of the seeds that are not claims, or only in part ({len(listed)})"):
        st.caption(
            "Definitions, settings, or comparisons with systems the project does not have, with the reason."
        )
        st.dataframe(pd.DataFrame(listed), hide_index=True, key="claims_not_measured")
    with st.expander(f"The whole audit, statement by statement ({len(statements())})"):
        audit = pd.DataFrame(
            [
                {"source": s.source, "statement": s.words, "claims": ", ".join(s.keys), "reason": s.reason}
                for s in statements()
            ]
        )
        st.dataframe(audit, hide_index=True, key="claims_inventory")
        download_json(
            "Download the audit (JSON)", audit.to_dict("records"), "claims_audit.json", "claims_audit_dl"
        )
