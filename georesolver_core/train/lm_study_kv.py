"""The KV cache of the study's tuned models: HCC against KIVI and a library quantiser, on held-out text.

``python -m georesolver_core lm-study ... --kv-out FILE``. After the study (``train.lm_study``), each size's
and kind's best-rate seed-0 run is trained again with its checkpoint kept (runs are reproducible: the report
gives its held-out nats beside the study's), then every key quantiser at every width
(``compression.kv_eval``: HCC and HCC after a rotation, KIVI per channel and per token, uniform, the rotated
scalar quantiser, and optimum-quanto where installed) replaces that model's cached keys on the held-out
windows. Per model and width:

    increase = L(quantised keys) - L(float keys)      test nats per character, held-out windows
    bytes per key = stored bytes / keys                (codes + every scale, offset, norm)

and, at equal bytes (each budget a row's bytes per key), the best each family (HCC, KIVI, quanto: its best
member) does within the budget; a family wins a budget only when its per-window difference from the
runner-up has a 95% interval below zero. The report's top-level fields are those of one model (the default
size's IDA model), the layout the Compression page reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from georesolver_core.train.lm_study import Run, StudySize, mean_ci95, run_jobs

KV_SCHEMA = "georesolver-kv-study/1"
FAMILIES = {"HCC": ("hcc", "hcc-rot"), "KIVI": ("kivi-channel", "kivi-token"), "quanto": ("quanto",)}
PAGE_MODEL = ("default", "ida")  # the model whose sweep is the report's top level


def kv_job(config: dict, ctx) -> dict:
    """A job kind (``georesolver_core.train.lm_study_kv:kv_job``): ``kv_eval.checkpoint_report`` of one
    checkpoint on the held-out windows with every available method, and ``winners`` at equal bytes (the
    per-window losses they are judged on are dropped after). ``config``: checkpoint, windows."""
    from georesolver_core.compression.kv_eval import available_methods, checkpoint_report

    def tick(row: dict) -> None:
        ctx.progress(0.0, f"{row['method']} {row['bits']} bits: +{row['loss_increase']:.4f} nats")
        ctx.tick()

    report = checkpoint_report(config["checkpoint"], windows=config.get("windows"), methods=available_methods(),
                               progress=tick, split="heldout", keep_windows=True)  # fmt: skip
    report["winners"] = winners(report["rows"])
    for row in report["rows"]:
        del row["window_loss"]
    return report


def paired_ci95(a: list[float], b: list[float]) -> tuple[float, list[float]]:
    """mean(a - b) over paired windows and its 95% interval (Student t, n - 1 degrees of freedom)."""
    return mean_ci95([x - y for x, y in zip(a, b, strict=True)])


def winners(rows: list[dict]) -> list[dict]:
    """At equal bytes: for each budget (the bytes per key of some family's row), the best each family does
    within it (its smallest increase among rows of at most that many bytes; None when none fits). The family
    with the smallest increase is called the winner ("smaller") only when the per-window difference from the
    runner-up has a 95% interval below zero, else "no measurable difference". Rows need ``window_loss``."""
    fam = {f: [r for r in rows if r["method"] in methods] for f, methods in FAMILIES.items()}
    out = []
    for budget in sorted({r["bytes_per_key"] for rs in fam.values() for r in rs}):
        best = {}
        for f, rs in fam.items():
            fits = [r for r in rs if r["bytes_per_key"] <= budget * (1 + 1e-9)]
            best[f] = min(fits, key=lambda r: r["loss_increase"]) if fits else None
        found = sorted((f for f in best if best[f] is not None), key=lambda f: best[f]["loss_increase"])
        entry = {
            "bytes_per_key": budget,
            "families": {f: None if r is None else {k: r[k] for k in ("method", "bits", "loss_increase",
                         "bytes_per_key")} for f, r in best.items()},
            "winner": found[0], "word": "only one fits",
        }  # fmt: skip
        if len(found) > 1:
            diff, ci = paired_ci95(best[found[0]]["window_loss"], best[found[1]]["window_loss"])
            entry |= {"runner_up": found[1], "diff": diff, "ci95": ci,
                      "word": "smaller" if ci[1] < 0 else "no measurable difference"}  # fmt: skip
        out.append(entry)
    return out


def summary_words(models: list[dict]) -> str:
    """How many (model, byte budget) points each family wins (95% interval below the runner-up), is alone
    in, or ties, in words."""
    points = [w for m in models for w in m["winners"]]

    def counted(word: str) -> str:
        counts = {f: sum(w["winner"] == f and w["word"] == word for w in points) for f in FAMILIES}
        return ", ".join(f"{f} at {n}" for f, n in sorted(counts.items(), key=lambda t: -t[1]) if n) or "none"

    ties = sum(w["word"] == "no measurable difference" for w in points)
    return (
        f"of {len(points)} (model, bytes-per-key budget) points: the smallest held-out nats increase, beyond the "
        f"windows' spread: {counted('smaller')}; the only family within the budget: {counted('only one fits')}; "
        f"no measurable difference: {ties}"
    )


def kv_study(report: dict, folder: str | Path, *, windows: int | None = None, workers: int | None = None,
             progress=None) -> dict:  # fmt: skip
    """The module doc's report for a finished study ``report`` whose runs live in ``folder``."""
    folder = Path(folder)
    say = progress or (lambda line: None)
    entries = {}  # run key -> (the study's seed-0 run at the best rate, its held-out nats, checkpoint path)
    for size in report["sizes"]:
        s = StudySize(name=size["name"], **size["config"])
        for kind, k in size["kinds"].items():
            seed0 = next(r for r in k["seeds"] if r["seed"] == 0)
            run = Run(s, kind, k["best_lr"], 0, s.steps)
            entries[run.key] = (run, seed0["test_nats"], folder / "checkpoints" / f"{run.key}.pt")
    # 1. the tuned models again, checkpoints kept (skipped where a checkpoint is already there)
    configs = {key: run.config() | {"checkpoint": str(path)} for key, (run, _, path) in entries.items()
               if not path.exists()}  # fmt: skip
    run_jobs(f"{run_jobs.__module__}:run_job", configs, folder / "jobs", workers=workers,
             on_result=lambda key, result, done, total: say(
                 f"[{done}/{total}] trained {key}: held-out {result['test_nats']:.4f} nats"))  # fmt: skip
    # 2. every quantiser on each checkpoint
    sweeps = {}

    def swept(key, result, done, total):
        sweeps[key] = result
        say(f"[{done}/{total}] swept {key}: float {result['float_loss']:.4f} nats")

    run_jobs(f"{__name__}:kv_job", {key: {"checkpoint": str(path), "windows": windows}
                                    for key, (_, _, path) in entries.items()},
             folder / "jobs", workers=workers, on_result=swept)  # fmt: skip
    models = []
    for key, (run, study_nats, _) in entries.items():
        sweep = sweeps[key]
        models.append({
            "size": run.size.name, "kind": run.kind, "best_lr": run.lr, "study_test_nats": study_nats,
            # the float-key loss on the held-out windows is the retrained run's test nats
            "reproduced_test_nats": sweep["float_loss"] if windows is None else None,
            **sweep,
        })  # fmt: skip
    page = next((m for m in models if (m["size"], m["kind"]) == PAGE_MODEL), None)
    page = page or next((m for m in models if m["kind"] == PAGE_MODEL[1]), models[0])  # another size's IDA
    top = {k: page[k] for k in ("model", "steps", "windows", "split", "context", "corpus", "float_loss",
                                "float_bits_per_char", "rows")}  # fmt: skip
    return {"schema": KV_SCHEMA, **top, "page_model": {"size": page["size"], "kind": page["kind"]},
            "families": {f: list(m) for f, m in FAMILIES.items()}, "models": models,
            "summary": summary_words(models)}  # fmt: skip


@dataclass(frozen=True)
class KVModel:
    """One tuned model of a KV-study report, as a page reads it."""

    label: str  # "size / kind"
    float_loss: float  # held-out nats per character with float keys (this model trained again)
    study_test_nats: float  # the study's seed-0 held-out nats of the same configuration
    winners: list[dict]  # ``winners``: per bytes-per-key budget, each family's best row and the word


@dataclass(frozen=True)
class KVStudy:
    """The tuned models of a KV-study report and the sentence that sums them up."""

    summary: str
    models: tuple[KVModel, ...]


def kv_study_view(report: dict) -> KVStudy | None:
    """The named fields of a ``kv_study`` report; None for a report of one checkpoint (it has no models)."""
    if not report.get("models"):
        return None
    models = tuple(
        KVModel(f"{m['size']} / {m['kind']}", m["float_loss"], m["study_test_nats"], m["winners"])
        for m in report["models"]
    )
    return KVStudy(report["summary"], models)


def _cell(family: str, row: dict | None) -> str:
    if row is None:
        return f"{family} -"
    return f"{family} +{row['loss_increase']:.4f} ({row['method']} {row['bits']})"


def format_kv(report: dict) -> str:
    """Per model and byte budget: the best each family does within it, and the winner."""
    lines = [report["summary"]]
    for m in report["models"]:
        again = m["reproduced_test_nats"]
        lines.append(
            f"{m['size']} / {m['kind']} (lr {m['best_lr']:g}): study {m['study_test_nats']:.4f} held-out nats"
            + ("" if again is None else f", trained again {again:.4f}")
        )
        for w in m["winners"]:
            cells = ", ".join(_cell(f, r) for f, r in w["families"].items())
            lines.append(f"  <= {w['bytes_per_key']:6.2f} B/key: {cells}  -> {w['winner']} ({w['word']})")
    return "\n".join(lines)
