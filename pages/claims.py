"""Claims: every registered claim of the seeds, its bound, the shipped measurement, the computed verdict, and
a live re-measurement of any claim on this machine beside it; then how far the claims cover the seeds'
statements, statement by statement."""

import unicodedata

import claims_panels
import pandas as pd
import streamlit as st
import ui
from knobs import Knob, draw, page_knobs

from georesolver_core.claims import CLAIMS, FAILS, VERDICTS, run_claim, words_of
from georesolver_core.claims.report import ClaimRecord, report_settings
from georesolver_core.verdicts import RULE
from georesolver_core.viz.claims import claim_figure
from georesolver_core.viz.style import VERDICT_COLORS

KNOBS = page_knobs(
    "claims",
    Knob("claims_verdicts", "pills", "Show verdicts", tuple(VERDICTS), options=tuple(VERDICTS),
         extra=(("selection_mode", "multi"),)),
    Knob("claims_search", "text_input", "Filter by text (key, section or statement)", ""),
)  # fmt: skip


# --- 1. Knobs and data -------------------------------------------------------------------------------------


def _fold(text: str) -> str:
    """Lower case without accents: "Poincaré" and "poincare" find the same claims."""
    return "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch)).casefold()


def app_pages() -> dict:
    """url path -> st.Page. The default page answers at the root ("" url path), so it is also found by its title."""
    pages = {page.url_path: page for page, _ in ui.page_map() if page.url_path}
    return pages | {page.title.lower(): page for page, _ in ui.page_map() if not page.url_path}


def report_section(report: dict | None) -> None:
    """Where the verdicts come from: the shipped report (its settings) or, without one, a live measurement."""
    if report is None:
        st.warning(
            "No measured report is shipped (assets/claims_report.json is missing or unreadable): the claims below "
            "were measured now with small sweeps. Write it with `python -m georesolver_core claims --json --out "
            "assets/claims_report.json`."
        )
    else:
        s = report_settings(report)
        st.caption(
            f"Shown: the report shipped with the app, measured with {'small sweeps' if s.quick else 'full settings'} "
            f"by georesolver_core {s.version} (torch {s.torch}, {s.generated_utc}, {s.seconds} s). "
            "Claims it lacks are measured now. Re-measure any claim on this machine at the bottom of the page."
        )
    with st.expander("How a verdict is decided"):
        st.markdown(RULE)


def counts_section(results: list[ClaimRecord]) -> None:
    """How many claims hold, hold only under conditions, fail."""
    for col, v in zip(st.columns(len(VERDICTS)), VERDICTS, strict=True):
        col.metric(v, sum(r.verdict == v for r in results))


def filtered(results: list[ClaimRecord]) -> list[ClaimRecord]:
    """The claims the verdict pills and the text filter keep."""
    chosen = draw(KNOBS["claims_verdicts"])
    query = draw(KNOBS["claims_search"]).strip()
    return [
        r
        for r in results
        if r.verdict in (chosen or [])
        and (not query or _fold(query) in _fold(f"{r.key} {r.section} {r.statement}"))
    ]


# --- 2. The table ------------------------------------------------------------------------------------------


def claims_table(shown: list[ClaimRecord], pages: dict, live: dict) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "section": [r.section for r in shown],
            "verdict": [r.verdict for r in shown],
            "statement": [r.statement for r in shown],
            "measured": [r.measured_value for r in shown],
            "bound": [r.bound_value for r in shown],
            "what": [r.what for r in shown],
            "live verdict": [live[r.key].verdict if r.key in live else None for r in shown],
            "live measured": [live[r.key].measured_value if r.key in live else None for r in shown],
            "shown on": [
                pages[r.page].title if r.page in pages else f"{r.page} (not yet in the app)" for r in shown
            ],
            "link": [f"./{pages[r.page].url_path}" if r.page in pages else None for r in shown],
            "key": [r.key for r in shown],
            "seconds": [r.seconds for r in shown],
        }
    )


def table_section(shown: list[ClaimRecord], pages: dict, live: dict) -> None:
    """One row per claim, its verdict coloured, and the downloads."""
    table = claims_table(shown, pages, live)
    # On screen only what a reader scans for, in widths that add up to the ~930 px the table gets in a 1400 px
    # window, so it never scrolls sideways: the statement is in the claim's detail below, the page behind
    # the link, and the CSV has every column. Cells cut short show their whole text on hover.
    on_screen = ["key", "section", "verdict", "measured", "bound", "what", "link"]
    if live:
        on_screen[3:3] = ["live verdict"]
    st.dataframe(
        table.style.map(
            lambda v: f"color: {VERDICT_COLORS.get(v, 'inherit')}; font-weight: 600",
            subset=["verdict", "live verdict"],
        ),
        hide_index=True,
        key="claims_table",
        height=min(38 * (len(table) + 1), 800),
        column_order=on_screen,
        column_config={
            "key": st.column_config.TextColumn(width=200, help="the claim's name, as in its figure's title"),
            "section": st.column_config.TextColumn(
                width=185 - (60 if live else 0), help="where the paper states it"
            ),
            "verdict": st.column_config.TextColumn(width=175 - (50 if live else 0)),
            "live verdict": st.column_config.TextColumn(
                width=110, help="re-measured on this machine, this session"
            ),
            "what": st.column_config.TextColumn(
                width=150,
                help="what the measured and bound columns are, with their unit (an exponent, a count, ...)",
            ),
            "measured": st.column_config.NumberColumn(
                width=75, format="%.4g", help="headline measurement (see the figure)"
            ),
            "bound": st.column_config.NumberColumn(
                width=75, format="%.4g", help="the paper's bound at the same point"
            ),
            "link": st.column_config.LinkColumn(
                "page", width=55, display_text="open", help="open the page that shows the claim"
            ),
        },
    )
    if not shown:
        st.info("No claim matches the filter: select more verdicts or clear the text.")
    left, right = st.columns(2)
    with left:
        ui.download_csv("Download the table (CSV)", table, "claims.csv", "claims_csv")
    with right:
        ui.download_json(
            "Download every measurement (JSON)", [r.result for r in shown], "claims.json", "claims_json"
        )


def coverage_section() -> None:
    """How far the claims cover the seeds: per seed, statements measured and not, with the reasons."""
    st.subheader("The seeds, statement by statement")
    claims_panels.inventory_panel()


# --- 3. The figures ----------------------------------------------------------------------------------------


def detail_section(shown: list[ClaimRecord], pages: dict, live: dict) -> None:
    """One claim's statement, bound, parts and figure (beside its live re-measurement, if any)."""
    st.subheader("The measurement behind a verdict")
    by_key = {r.key: r for r in shown}
    if not by_key:
        return
    key = st.selectbox(
        "Claim",
        list(by_key),
        key="claims_detail",
        format_func=lambda k: f"{k}: {by_key[k].section} ({by_key[k].verdict})",
    )
    r = by_key[key]
    st.markdown(f"{ui.VERDICT_BADGE.get(r.verdict, r.verdict)} {r.statement}")
    for said in words_of(key):  # the seed's own words, whole, beside the claim's reading of them
        st.markdown(f"> {ui.escape_md(said.words)}\n>\n> *{said.source}, in the seed's words*")
    st.markdown(f"Bound: `{r.bound_text}`; compared as *{r.relation}*.")
    if r.reading:
        st.markdown(f"Reading judged: {r.reading}")
    for part in r.parts:
        st.markdown(f"- {ui.VERDICT_BADGE.get(part.verdict, part.verdict)} **{part.part}**: {part.summary}")
    shipped_col, live_col = st.columns(2) if key in live else (st.container(), None)
    with shipped_col:
        ui.chart(claim_figure(r.result), key=f"claims_fig_{key}")
        (st.error if r.verdict == FAILS else st.caption)(f"Shipped: {r.summary}")
    if live_col is not None:
        with live_col:
            lv = live[key]
            ui.chart(claim_figure(lv.result), key=f"claims_live_fig_{key}")
            (st.error if lv.verdict == FAILS else st.caption)(
                f"Live ({lv.seconds} s, {lv.settings}): {lv.summary}"
            )
    if r.page in pages:
        st.page_link(pages[r.page], label=f"Open the {pages[r.page].title} page", icon=":material/open_in_new:")
    else:
        st.caption(f"Its page ({r.page!r}) is not in the app yet.")


# --- 4. Re-measure on this machine -------------------------------------------------------------------------


def remeasure_section(results: list[ClaimRecord], live: dict) -> None:
    """Re-measure one claim or all of them here; a broken one shows an error and the others go on."""
    st.subheader("Re-measure on this machine")
    c1, c2, c3, c4 = st.columns([3, 1.2, 1, 1], vertical_alignment="bottom")
    target = c1.selectbox("Claim to re-measure", ["all claims", *CLAIMS], key="claims_live_target")
    full = c2.toggle("full settings", key="claims_live_full", help="off: the small sweeps the tests use (faster)")
    if c3.button("Re-measure", key="claims_live_run", type="primary"):
        st.session_state["claims_live_queue"] = list(CLAIMS) if target == "all claims" else [target]
    if c4.button("Stop", key="claims_live_stop"):  # a click interrupts the running loop; what was measured stays
        st.session_state.pop("claims_live_queue", None)
    queue: list = st.session_state.get("claims_live_queue", [])
    if queue:
        total = len(queue)
        bar = st.progress(0.0, text=f"re-measuring {total} claim(s) ...")
        while queue:
            key = queue[0]
            bar.progress(1 - len(queue) / total, text=f"{key} ({total - len(queue) + 1} of {total})")
            try:
                live[key] = ClaimRecord.from_result(
                    run_claim(key, quick=not full), settings="full settings" if full else "small sweeps"
                )
            except Exception as err:  # one broken claim does not stop the others
                st.error(f"Claim {key!r} could not be measured: {err}.")
            queue.pop(0)
        st.session_state.pop("claims_live_queue", None)
        st.rerun()
    if live:
        changed = [k for k, lv in live.items() if any(r.key == k and r.verdict != lv.verdict for r in results)]
        st.caption(
            f"{len(live)} claim(s) re-measured this session; verdict differs from the shipped one for: "
            f"{', '.join(changed) or 'none'}."
        )


# --- The page ----------------------------------------------------------------------------------------------


def main() -> None:
    ui.page_header(
        "Claims",
        "The paper reports no experiments; this page shows one run for each of its claims, draws the bound against "
        "the measurement and computes the verdict: **holds**, **holds only under conditions**, or **fails**.",
    )
    pages = app_pages()
    report = ui.shipped_report()
    results = [ClaimRecord.from_result(r) for r in ui.shipped_claims(list(CLAIMS))]
    live: dict = st.session_state.setdefault("claims_live", {})  # key -> ClaimRecord measured on this machine
    report_section(report)
    counts_section(results)
    shown = filtered(results)
    table_section(shown, pages, live)
    coverage_section()
    detail_section(shown, pages, live)
    remeasure_section(results, live)


main()
