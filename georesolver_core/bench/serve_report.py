"""What ``bench --serve`` measures for one class size (``ClassRow``: first visits, slider phases with the
CPU of the server and its workers, memory) and how it is reported: ``row_dict`` (JSON) and ``table`` (the
README's table, one column per class size)."""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field


@dataclass
class Phase:
    """CPU seconds of the server process and of its children over one phase, and its wall seconds."""

    wall_s: float
    server_cpu_s: float
    workers_cpu_s: float

    @property
    def server_cores(self) -> float:
        return self.server_cpu_s / self.wall_s if self.wall_s > 0 else 0.0


@dataclass
class SliderPhase:
    samples_s: list[float]  # browser-side seconds per move, all sessions
    cpu: Phase
    reruns: int  # slider moves answered (one script rerun each)

    @property
    def p50(self) -> float:
        return _quantile(self.samples_s, 0.5)

    @property
    def p95(self) -> float:
        return _quantile(self.samples_s, 0.95)

    @property
    def server_cpu_per_rerun_s(self) -> float:
        return self.cpu.server_cpu_s / self.reruns if self.reruns else 0.0


@dataclass
class ClassRow:
    """One class size's results."""

    sessions: int
    first_visit_s: dict[str, list[float]]  # page -> seconds per session
    sliders: SliderPhase
    rss_mb: float  # server resident memory with every session open, idle
    rss_idle_mb: float  # the fresh server's, before any session
    beside_training: SliderPhase | None = None
    stop_to_idle_s: float | None = None  # Stop pressed -> server and workers idle
    notes: list[str] = field(default_factory=list)
    # page -> the server process's CPU seconds over that arrival, per session: its own share of a first visit
    first_visit_server_cpu_s: dict[str, float] = field(default_factory=dict)

    @property
    def mb_per_session(self) -> float:
        return (self.rss_mb - self.rss_idle_mb) / self.sessions


def _quantile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q * 100) - 1]


# -- the server and /proc -------------------------------------------------------------------------------------


def row_dict(row: ClassRow) -> dict:
    """One row as plain JSON: the samples and the summary numbers the table prints."""

    def phase(p: SliderPhase | None) -> dict | None:
        if p is None:
            return None
        return {
            "p50_s": p.p50,
            "p95_s": p.p95,
            "samples_s": p.samples_s,
            "server_cores": p.cpu.server_cores,
            "server_cpu_s": p.cpu.server_cpu_s,
            "workers_cpu_s": p.cpu.workers_cpu_s,
            "server_cpu_per_rerun_s": p.server_cpu_per_rerun_s,
            "wall_s": p.cpu.wall_s,
        }

    out = asdict(row)
    out["first_visit"] = {
        page: {"median_s": statistics.median(v), "worst_s": max(v)} for page, v in row.first_visit_s.items()
    }
    out["sliders"] = phase(row.sliders)
    out["beside_training"] = phase(row.beside_training)
    out["mb_per_session"] = row.mb_per_session
    return out


def table(rows: list[ClassRow]) -> str:
    """The README's table: one column per class size."""

    def fmt(v: float | None, spec: str = ".2f") -> str:
        return "n/a" if v is None else format(v, spec)

    lines = [
        (
            "first visit of Home, all at once: median / worst (s)",
            lambda r: (
                f"{fmt(statistics.median(r.first_visit_s['home']), '.1f')} / "
                f"{fmt(max(r.first_visit_s['home']), '.1f')}"
            ),
        ),
        (
            "first visit of Attention, all at once: median / worst (s)",
            lambda r: (
                f"{fmt(statistics.median(r.first_visit_s['attention']), '.1f')} / "
                f"{fmt(max(r.first_visit_s['attention']), '.1f')}"
            ),
        ),
        (
            "server CPU per first visit: Home / Attention (s)",
            lambda r: " / ".join(fmt(r.first_visit_server_cpu_s.get(p), ".2f") for p in ("home", "attention")),
        ),
        (
            "eps slider in every session at once: p50 / p95 (s)",
            lambda r: f"{fmt(r.sliders.p50)} / {fmt(r.sliders.p95)}",
        ),
        ("server CPU per rerun (s)", lambda r: fmt(r.sliders.server_cpu_per_rerun_s, ".3f")),
        (
            "the same while one more session trains: p50 / p95 (s)",
            lambda r: (
                "n/a"
                if r.beside_training is None
                else f"{fmt(r.beside_training.p50)} / {fmt(r.beside_training.p95)}"
            ),
        ),
        (
            "server process CPU while that run trains (cores)",
            lambda r: "n/a" if r.beside_training is None else fmt(r.beside_training.cpu.server_cores),
        ),
        (
            "worker processes' CPU while it trains (cores)",
            lambda r: (
                "n/a"
                if r.beside_training is None
                else fmt(r.beside_training.cpu.workers_cpu_s / r.beside_training.cpu.wall_s)
            ),
        ),
        ("Stop clicked -> server and workers idle (s)", lambda r: fmt(r.stop_to_idle_s, ".1f")),
        ("server RSS, all sessions open (MB)", lambda r: f"{r.rss_mb:.0f}"),
        ("server memory per idle session (MB)", lambda r: f"{r.mb_per_session:.0f}"),
    ]
    head = "| sessions on one server | " + " | ".join(str(r.sessions) for r in rows) + " |"
    rule = "| --- |" + " --- |" * len(rows)
    body = [f"| {label} | " + " | ".join(cell(r) for r in rows) + " |" for label, cell in lines]
    return "\n".join([head, rule, *body])
