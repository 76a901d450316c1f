"""The cluster back-end: each job a Ray task, so one app serves several classes with the work spread over
machines (``pip install -e ".[cluster]"``; ``GR_JOBS=ray`` or ``GR_JOBS=ray://HOST:PORT``).

The task runs the same ``worker.run_job`` as a local worker. Its progress and its commands go through a
small actor per job (``Channel``): the task pushes events to it without waiting and reads its command
at most every ``COMMAND_POLL_S`` while running; the runner drains it and sets commands. A kind that wants
a GPU (``JobKind.gpu``: training) asks Ray for one when the cluster has any.

Every node runs the job in its own file system: ``runs_dir`` should be shared storage for checkpoints to
reach the server (the runner writes result.json itself from the task's final event in any case).
"""

from __future__ import annotations

import time

from georesolver_core.jobs.control import RUN, Event
from georesolver_core.jobs.worker import run_job

COMMAND_POLL_S = 0.05  # a running task asks for its command at most this often (one round trip each)


def _ray():
    try:
        import ray
    except ImportError:
        raise ValueError(
            'backend "ray" needs the cluster extra: pip install -e ".[cluster]" (ray is not installed)'
        ) from None
    return ray


class Channel:
    """The actor between one task and the runner: events one way, command and granted steps the other."""

    def __init__(self):
        self.pending: list[Event] = []
        self.command, self.steps = RUN, 0

    def put(self, event: Event) -> None:
        self.pending.append(event)

    def drain(self) -> list[Event]:
        out, self.pending = self.pending, []
        return out

    def set(self, command: int) -> None:
        self.command = command

    def grant_step(self) -> None:
        self.steps += 1

    def poll(self, take_step: bool) -> tuple[int, bool]:
        """The command, and whether a granted step was consumed (``take_step``)."""
        if take_step and self.steps > 0:
            self.steps -= 1
            return self.command, True
        return self.command, False


class RayControl:
    """The task's end of its channel (``control.Control``), with the events' ``put`` beside it."""

    def __init__(self, channel):
        self.channel = channel
        self._command, self._asked = RUN, float("-inf")

    def put(self, event: Event) -> None:
        self.channel.put.remote(event)  # not waited on: calls from one caller reach the actor in order

    def command(self) -> int:
        now = time.monotonic()
        if self._command != RUN or now - self._asked >= COMMAND_POLL_S:
            self._command = _ray().get(self.channel.poll.remote(False))[0]
            self._asked = now
        return self._command

    def take_step(self) -> bool:
        command, took = _ray().get(self.channel.poll.remote(True))
        self._command = command
        return took


def _task(job_id, kind, config, run_dir, threads, channel) -> Event:
    control = RayControl(channel)
    final = run_job(job_id, kind, config, run_dir, threads, control, control)
    _ray().get(channel.poll.remote(False))  # after every progress event: one caller's calls run in order
    return final


class RayWorker:
    """One Ray task and its channel, as the runner sees it."""

    pid = None  # the process is Ray's, possibly on another machine

    def __init__(self, ref, channel):
        self.ref, self.control_actor = ref, channel
        self.exitcode: int | None = None
        self._final: Event | None = None
        self._error: str | None = None
        self.control = self  # the runner sets commands through ``worker.control``

    def set(self, command: int) -> None:
        self.control_actor.set.remote(command)

    def grant_step(self) -> None:
        self.control_actor.grant_step.remote()

    def alive(self) -> bool:
        ray = _ray()
        ready, _ = ray.wait([self.ref], timeout=0)
        if ready and self._final is None and self._error is None:
            try:
                self._final = ray.get(self.ref)
                self.exitcode = 0
            except Exception as err:  # the task's process was killed or lost: the job failed
                self._error, self.exitcode = f"{type(err).__name__}: {str(err).splitlines()[0]}", 1
        return not ready

    def final_event(self) -> Event | None:
        return self._final

    def failure(self) -> str:
        return f"the Ray task ended without a result ({self._error})"

    def terminate(self) -> None:
        _ray().cancel(self.ref, force=True)

    kill = terminate

    def join(self, timeout: float | None = None) -> None:
        _ray().wait([self.ref], timeout=timeout)


class RayBackend:
    """Jobs as Ray tasks. ``address``: "auto" or None (Ray's own default: a running cluster, else a local
    one), or "ray://HOST:PORT"; ``init`` adds ``ray.init`` arguments. An already connected Ray is used as is."""

    name = "ray"

    def __init__(self, address: str | None = None, **init):
        ray = _ray()
        self.owns_ray = not ray.is_initialized()
        if self.owns_ray:
            ray.init(address=address, ignore_reinit_error=True, log_to_driver=False, **init)
        self.channels: dict[str, object] = {}
        self._task = ray.remote(max_retries=0)(_task)
        self._channel = ray.remote(num_cpus=0)(Channel)

    def gpus(self) -> float:
        return float(_ray().cluster_resources().get("GPU", 0))

    def start(self, job_id: str, kind: str, config: dict, run_dir: str, threads: int, gpu: bool) -> RayWorker:
        channel = self._channel.remote()
        options = {"num_cpus": threads, "num_gpus": 1 if gpu and self.gpus() > 0 else 0}
        ref = self._task.options(**options).remote(job_id, kind, config, run_dir, threads, channel)
        self.channels[job_id] = channel
        return RayWorker(ref, channel)

    def events(self, timeout: float) -> list[Event]:
        ray = _ray()
        batches = ray.get([c.drain.remote() for c in self.channels.values()]) if self.channels else []
        out = [e for batch in batches for e in batch]
        if not out:
            time.sleep(timeout)
        return out

    def release(self, job_id: str) -> None:
        """Forget a finished job's channel (after its last events were drained)."""
        channel = self.channels.pop(job_id, None)
        if channel is not None:
            _ray().kill(channel)

    def close(self) -> None:
        for job_id in list(self.channels):
            self.release(job_id)
        if self.owns_ray:
            _ray().shutdown()
