"""Checkpoints: written atomically, read with ``torch.load(weights_only=True)``, checked for format.

A checkpoint is a plain dict of tensors, numbers and strings (no pickled classes), so the safe
loader reads it and a file from elsewhere cannot run code. The file is written to a temporary name
in the same folder and renamed over the target: a crash mid-write leaves the previous checkpoint.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import signal
import tempfile
import threading
from pathlib import Path

import torch

from georesolver_core.budget import memory_budget
from georesolver_core.train.config import MAX_STEPS, TrainConfig
from georesolver_core.uploads import read_torch

FORMAT = "georesolver-train/1"  # changes when the layout below changes
REQUIRED = ("format", "model_config", "model", "optimizer", "step", "train_config", "task", "history")
DICTS = ("model_config", "model", "optimizer", "train_config", "task")  # required fields that must be dicts
# Uploaded bytes are refused over this size before torch reads them (Streamlit's own upload limit is
# 200 MB); the page's models are a few MB at most.
MAX_CHECKPOINT_BYTES = 200 * 2**20
# What an upload may expand to when loaded (the sum of its zip entries' uncompressed sizes), refused
# before torch reads it: the page keeps the loaded checkpoint while the file sits in the uploader, once
# per session. A file read from disk (the command line) may expand to the memory budget instead.
MAX_UPLOAD_EXPANDED_BYTES = 256 * 2**20
HISTORY_NUMBERS = ("step", "loss", "accuracy", "test_loss", "test_accuracy", "seconds")  # numbers or None


# Before a GeoResolver block held a GeoAttention, its projections and kernel sat on the block itself:
# blocks.<i>.qkv.weight is now blocks.<i>.attn.qkv.weight (and likewise out.*, kernel.*).
_BLOCK_KEY = re.compile(r"^((?:.*\.)?blocks\.\d+\.)(qkv|out|kernel)\.")


def upgrade_model_keys(model: dict) -> dict:
    """A model state dict with the keys of this version, in the same order (``_BLOCK_KEY``)."""
    return {_BLOCK_KEY.sub(r"\1attn.\2.", key): value for key, value in model.items()}


# Before a run held a model config holding an attention config (RunSpec.model.attention), meta.spec
# was flat: these of its fields moved into the model config, and these (old name: new name) into its attention.
_FLAT_MODEL_FIELDS = ("n_layers", "gating", "memory")
_FLAT_ATTENTION_FIELDS = {
    "attention": "kernel", "d_model": "d_model", "n_heads": "n_heads", "eps": "eps", "c": "c"
}  # fmt: skip


def upgrade_spec(spec: dict) -> dict:
    """A run description (meta.spec) in the nested layout of this version; a nested one is returned as is.

    The one place where the flat layout of older checkpoints is read: any field it does not know stays
    at the top, where ``train.run.spec_from_checkpoint`` refuses it by name."""
    if "model" in spec:
        return spec
    flat = dict(spec)
    attention = {new: flat.pop(old) for old, new in _FLAT_ATTENTION_FIELDS.items() if old in flat}
    model = {name: flat.pop(name) for name in _FLAT_MODEL_FIELDS if name in flat}
    return {**flat, "model": {**model, "attention": attention}}


def optimizer_state_for(model: torch.nn.Module, data: dict) -> dict:
    """``data["optimizer"]`` with its parameters numbered in ``model``'s order.

    An optimiser state numbers the parameters in the order the model listed them when it was saved,
    which is the order of the parameter keys of ``data["model"]``. A checkpoint written before a layout
    change (``upgrade_model_keys``) listed them in another order: its numbers are mapped by name.
    """
    names = [name for name, _ in model.named_parameters()]
    position = {name: j for j, name in enumerate(names)}
    saved = [key for key in data["model"] if key in position]
    opt = data["optimizer"]
    if saved == names or sorted(saved) != sorted(names) or not set(opt["state"]) <= set(range(len(saved))):
        return opt  # the same order, or a mismatch that loading the weights reports by name
    new = {i: position[name] for i, name in enumerate(saved)}
    groups = [dict(g, params=sorted(new[i] for i in g.get("params", []))) for g in opt["param_groups"]]
    return {"state": {new[i]: state for i, state in opt["state"].items()}, "param_groups": groups}


def _umask() -> int:
    mask = os.umask(0o022)  # read by setting: the only portable way; restored at once
    os.umask(mask)
    return mask


def can_create_in(folder: str | os.PathLike) -> bool:
    """Whether this process can create a file in ``folder``, found by creating (and removing) one: permission
    bits alone do not tell (a read-only or virtual file system, or root, whom every mode lets through)."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".write-probe.", dir=folder)
    except OSError:
        return False
    os.close(fd)
    os.unlink(probe)
    return True


def write_atomic(path: str | os.PathLike, write) -> Path:
    """``write(binary file)`` into a temp file beside ``path``, then rename it over ``path``: a reader sees
    the old file or the new one, never half of one (``write_atomic_group`` with one file)."""
    return write_atomic_group([(path, write)])[0]


def write_atomic_group(files) -> list[Path]:
    """Several files written as one: each ``(path, write)`` into a temp file beside its path first (a
    failure or Ctrl-C there leaves every old file as it was), then all renamed over their targets back to
    back, in the order given, with Ctrl-C held until the last rename (``_sigint_held``). A checkpoint
    and the history of its step are one such group: the folder holds both old or both new files.

    Every file gets the mode an ordinary open() would give (0666 less the umask; the temp file's own
    0600 would leave checkpoints private beside public histories)."""
    files = list(files)
    targets = [Path(path) for path, _ in files]
    temps: list[str] = []
    try:
        for target, (_, write) in zip(targets, files, strict=True):
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
            temps.append(tmp)
            os.fchmod(fd, 0o666 & ~_umask())
            with os.fdopen(fd, "wb") as f:
                write(f)
                f.flush()
                os.fsync(f.fileno())
        with _sigint_held():
            for i, (tmp, target) in enumerate(zip(temps, targets, strict=True)):
                os.replace(tmp, target)
                temps[i] = ""
    except BaseException:
        for tmp in temps:
            if tmp:
                Path(tmp).unlink(missing_ok=True)
        raise
    return targets


@contextlib.contextmanager
def _sigint_held():
    """Ctrl-C (SIGINT) arriving inside the block is delivered when it ends, not in the middle. Only the
    main thread can set a handler, and only one set from Python can be put back; otherwise the block runs
    as is (in another thread Python runs the handler in the main thread anyway)."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is None:
        yield
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if caught:
            signal.raise_signal(signal.SIGINT)


def checkpoint_writer(payload: dict):
    """The ``write(binary file)`` of a checkpoint holding ``payload`` (see ``REQUIRED``), for ``write_atomic*``."""
    return lambda f: torch.save({"format": FORMAT, **payload}, f)


def save_checkpoint(path: str | os.PathLike, payload: dict) -> Path:
    """Write ``payload`` (see ``REQUIRED``) to ``path`` atomically (temp file + rename)."""
    return write_atomic(path, checkpoint_writer(payload))


def load_checkpoint(source, max_bytes: int = MAX_CHECKPOINT_BYTES, max_expanded: int | None = None) -> dict:
    """Read a checkpoint from a path, bytes or a binary file object; ``ValueError`` if it is not one of ours.

    A file over ``max_bytes``, or whose entries would expand to more than ``max_expanded`` bytes (default:
    the memory budget, ``budget.memory_budget()``), is refused before torch reads it
    (``uploads.read_torch``); then the format, the required keys and every field that ``resume`` and the
    Training page read are checked (finite weights and optimiser moments, numeric history), so that a
    foreign or damaged file is refused here, naming the field, rather than half-way through resuming.
    ``train.run.check_checkpoint`` checks what it would build.
    """
    limit = memory_budget() if max_expanded is None else max_expanded
    data = read_torch(source, what="checkpoint", max_bytes=max_bytes, max_expanded=limit)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise ValueError(f"not a training checkpoint of this library: expected format {FORMAT!r} (got {found!r})")
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        raise ValueError(f"checkpoint is missing {missing}; it was not written by this trainer")
    _check_fields(data)
    meta = data.get("meta", {})
    if "spec" in meta:
        meta = {**meta, "spec": upgrade_spec(meta["spec"])}
    return {**data, "model": upgrade_model_keys(data["model"]), "meta": meta}


def _check_fields(data: dict) -> None:
    """Types of the fields a resumed run reads (values such as tensor shapes are checked on resume)."""
    step, seconds = data["step"], data.get("seconds", 0.0)
    if not isinstance(step, int) or isinstance(step, bool) or not 0 <= step <= MAX_STEPS:
        raise ValueError(f"checkpoint step must be an integer in [0, {MAX_STEPS}] (got {str(step)[:40]!r})")
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or not math.isfinite(seconds):
        raise ValueError(f"checkpoint seconds must be a finite number (got {str(seconds)[:40]!r})")
    for key in DICTS:
        if not isinstance(data[key], dict):
            raise ValueError(f"checkpoint {key} must be a dict (got {type(data[key]).__name__})")
    if not all(isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in data["model"].items()):
        raise ValueError("checkpoint model must map parameter names to tensors")
    for name, t in data["model"].items():
        if t.is_floating_point() and not bool(torch.isfinite(t).all()):
            raise ValueError(f"checkpoint weights {name[:60]!r} hold NaN or infinite values: the run diverged")
    opt = data["optimizer"]
    groups = opt.get("param_groups")
    if (
        not isinstance(opt.get("state"), dict)
        or not isinstance(groups, list)
        or not all(isinstance(g, dict) for g in groups)
    ):
        raise ValueError("checkpoint optimizer must be an optimizer state dict (state, param_groups)")
    for pid, entry in opt["state"].items():
        moments = entry.values() if isinstance(entry, dict) else [None]
        if not all(isinstance(v, torch.Tensor) and bool(torch.isfinite(v).all()) for v in moments):
            raise ValueError(f"checkpoint optimizer state {str(pid)[:20]} must hold finite tensors only")
    if not isinstance(data["history"], list) or not all(isinstance(r, dict) for r in data["history"]):
        raise ValueError("checkpoint history must be a list of dicts (one per evaluation)")
    for i, row in enumerate(data["history"]):
        for key in HISTORY_NUMBERS:
            v = row.get(key)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
                raise ValueError(f"checkpoint history row {i}: {key} must be a number (got {str(v)[:40]!r})")
    gen = data.get("generator")
    size = torch.Generator().get_state().shape  # the batch sampler's CPU generator
    if gen is not None and not (isinstance(gen, torch.Tensor) and gen.dtype == torch.uint8 and gen.shape == size):
        raise ValueError(f"checkpoint generator must be a CPU random generator's state ({size[0]} bytes)")
    meta = data.get("meta", {})  # the run description; spec_from_checkpoint says when it is missing
    if not isinstance(meta, dict) or not isinstance(meta.get("spec", {}), dict):
        raise ValueError("checkpoint meta and meta.spec must be dicts (the run description)")
    try:
        TrainConfig(**data["train_config"])  # its own checks name the field (steps, lr, ...)
    except TypeError as err:
        raise ValueError(f"checkpoint train_config does not match this version: {err}") from None
