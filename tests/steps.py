"""Running a lab's step generator to its end, as a worker does: every yield, then the generator's return value."""


def drain(steps) -> tuple[list, object]:
    """(the yields in order, the return value carried by StopIteration)."""
    yielded = []
    while True:
        try:
            yielded.append(next(steps))
        except StopIteration as done:
            return yielded, done.value
