"""The app's side of the job runner (``georesolver_core.jobs``): who a browser session is to the runner,
and the one runner of this server.

Every session is an owner, named by Streamlit's session id (and a token of its own). The runner cancels the jobs of an owner it
has not heard from for a minute, unless Streamlit still counts that session as connected
(``Runtime.is_active_session``, thread-safe): an idle open tab keeps its run, a closed one frees its
worker a minute later.
"""

from __future__ import annotations

import uuid

import streamlit as st
from streamlit.runtime import Runtime
from streamlit.runtime.scriptrunner import get_script_run_ctx

from georesolver_core.jobs import JobRunner, default_runner


def _connected(owner: str) -> bool:
    """Whether Streamlit still holds ``owner``'s session as connected (False outside a server)."""
    session_id = owner.split("/", 1)[0]
    return Runtime.exists() and Runtime.instance().is_active_session(session_id)


def runner() -> JobRunner:
    """This server's runner: workers on this machine, or on Ray with ``GR_JOBS=ray`` / ``ray://HOST:PORT``.
    A runner that cannot start (Ray missing or unreachable) is a ValueError saying how to serve without it."""
    try:
        return default_runner(present=_connected)
    except ValueError as err:
        raise ValueError(
            f"{err}; or start the server with --jobs local (worker processes on this machine)"
        ) from None
    except Exception as err:  # Ray's own connection errors: a page says so instead of a traceback
        raise ValueError(
            f"the job runner could not reach its cluster ({type(err).__name__}: {err}); start the server with "
            "--jobs local (worker processes on this machine), or check the Ray address"
        ) from None


def owner() -> str:
    """This browser session's name to the runner: its Streamlit session id and a token of its own (a test
    harness gives every session the same id), kept in the session's state."""
    if "_job_owner" not in st.session_state:
        ctx = get_script_run_ctx()
        st.session_state["_job_owner"] = f"{ctx.session_id if ctx else 'no-session'}/{uuid.uuid4().hex[:12]}"
    return st.session_state["_job_owner"]


def touch() -> None:
    """Tell the runner this session is here (a page with jobs calls it on each rerun)."""
    runner().touch(owner())


def stop_jobs() -> int:
    """Stop every job of this session (its state is about to be forgotten); returns how many were running."""
    try:
        return runner().cancel_owner(owner())
    except ValueError:  # no runner: nothing of this session runs
        return 0
