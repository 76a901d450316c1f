"""Running a lab's step generator to its end, as a worker does: every yield, then the generator's return value."""

from georesolver_core.steps import run_to_end


def drain(steps) -> tuple[list, object]:
    """(the yields in order, the return value carried by StopIteration)."""
    yielded: list = []
    return yielded, run_to_end(steps, yielded.append)
