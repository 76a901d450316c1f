"""Claims: every registered claim of the seeds, its bound, our measurement and the computed verdict."""

import unicodedata

import pandas as pd
import streamlit as st
import ui

from georesolver_core.claims import CLAIMS, FAILS, VERDICTS
from georesolver_core.viz.claims import claim_figure
from georesolver_core.viz.style import VERDICT_COLORS

ui.page_header(
    "Claims",
    "The paper reports no experiments; this page runs one for each of its claims, draws the bound against the "
    "measurement and computes the verdict: **holds**, **holds only under conditions**, or **fails**.",
)

# url path -> st.Page. The default page answers at the root ("" url path), so it is also found by its title.
pages = {page.url_path: page for page, _ in ui.page_map() if page.url_path}
pages |= {page.title.lower(): page for page, _ in ui.page_map() if not page.url_path}
results = ui.measure_claims(list(CLAIMS))

counts = {v: sum(r["verdict"] == v for r in results) for v in VERDICTS}
cols = st.columns(len(VERDICTS))
for col, v in zip(cols, VERDICTS, strict=True):
    col.metric(v, counts[v])

chosen = st.pills(
    "Show verdicts",
    list(VERDICTS),
    selection_mode="multi",
    default=list(VERDICTS),
    key="claims_verdicts",
    bind="query-params",
)
query = st.text_input(
    "Filter by text (key, section or statement)", "", key="claims_search", bind="query-params"
).strip()


def _fold(text: str) -> str:
    """Lower case without accents: "Poincaré" and "poincare" find the same claims."""
    return "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch)).casefold()


shown = [
    r
    for r in results
    if r["verdict"] in (chosen or [])
    and (not query or _fold(query) in _fold(f"{r['key']} {r['section']} {r['statement']}"))
]

table = pd.DataFrame(
    {
        "section": [r["section"] for r in shown],
        "verdict": [r["verdict"] for r in shown],
        "statement": [r["statement"] for r in shown],
        "measured": [r["measured_value"] for r in shown],
        "bound": [r["bound_value"] for r in shown],
        "shown on": [
            pages[r["page"]].title if r["page"] in pages else f"{r['page']} (not yet in the app)" for r in shown
        ],
        "link": [f"./{pages[r['page']].url_path}" if r["page"] in pages else None for r in shown],
        "key": [r["key"] for r in shown],
        "seconds": [r["seconds"] for r in shown],
    }
)
# On screen only what a reader scans for, in widths that add up to the ~930 px the table gets in a 1400 px
# window, so it never scrolls sideways: the statements are in each claim's box below, the page behind
# the link, and the CSV has every column. Cells cut short show their whole text on hover.
st.dataframe(
    table.style.map(lambda v: f"color: {VERDICT_COLORS.get(v, 'inherit')}; font-weight: 600", subset=["verdict"]),
    hide_index=True,
    key="claims_table",
    height=min(38 * (len(table) + 1), 800),
    column_order=["key", "section", "verdict", "measured", "bound", "link"],
    column_config={
        "key": st.column_config.TextColumn(width=235, help="the claim's name, as in its figure's title"),
        "section": st.column_config.TextColumn(width=300, help="where the paper states it"),
        "verdict": st.column_config.TextColumn(width=175),
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
    ui.download_json("Download every measurement (JSON)", shown, "claims.json", "claims_json")

st.subheader("The measurement behind each verdict")
for r in shown:
    # The header names the claim and its verdict; the body states it once, then the evidence.
    with st.expander(f"{ui.VERDICT_BADGE.get(r['verdict'], r['verdict'])} **{r['key']}**: {r['section']}"):
        st.markdown(r["statement"])
        st.markdown(f"Bound: `{r['bound_text']}`; compared as *{r['relation']}*.")
        ui.chart(claim_figure(r), key=f"claims_fig_{r['key']}")
        if r["verdict"] == FAILS:
            st.error(f"Contradicted by the measurement. {r['summary']}")
        else:
            st.caption(r["summary"])
        if r["page"] in pages:
            st.page_link(
                pages[r["page"]], label=f"Open the {pages[r['page']].title} page", icon=":material/open_in_new:"
            )
        else:
            st.caption(f"Its page ({r['page']!r}) is not in the app yet.")
