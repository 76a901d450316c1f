"""Fuzz: awkward inputs over the library's public calls and the command line's flags.

Every draw must end in a ValueError (library) or an ``error:`` line with exit status 2 (command line), or in
a finite result; never a raw exception, a hang past its time, or an allocation past the memory budget (the
budget is set small, so a size the estimates miss would show as an allocation error, not a ValueError).
The draws are seeded: a failure names its draw, and rerunning reproduces it.
"""

from __future__ import annotations

import contextlib
import io
import math
import random
import time

import pytest
import torch

from georesolver_core import attention, compression, geometry, routing
from georesolver_core.__main__ import main
from georesolver_core.compression.baselines import kivi_quantize
from georesolver_core.routing.layer import capacity_of

pytestmark = pytest.mark.slow

LIBRARY_DRAWS = 1200
SECONDS_PER_CALL = 10.0
# Each knob draws from its good values, or, in a hostile draw, now and then from its bad ones: about half the
# draws are valid calls (which must return finite results) and half carry one or more bad arguments.
EPS = ([0.1, 1e-3, 1e-12, 1e6], [0.0, -0.1, math.nan, math.inf, 1e-300, 1e300, "0.1", None, True])
CURVATURE = ([1.0, 0.5, 2.0], [1e-8, 0.0, -1.0, math.nan, math.inf, "1", 1e8, None])
GEOMETRY = (["euclidean", "poincare", "sphere"], ["hyperbolic", "", None, 3])
SCALES = ([0.1, 0.3], [1.0, 0.0, 0.999, 1e20, math.nan, math.inf, -math.inf])
DTYPES = ([torch.float32, torch.float64], [torch.float16, torch.int64])


class Draw:
    """Seeded choices; in a hostile draw each knob takes a bad value with probability 0.3."""

    def __init__(self, rng: random.Random):
        self.rng, self.hostile = rng, rng.random() < 0.5

    def pick(self, knob):
        good, bad = knob
        return self.rng.choice(bad if self.hostile and self.rng.random() < 0.3 else good)

    def size(self, good: list[int], bad: list[int]) -> int:
        return self.pick((good, bad))


def _tensor(draw: Draw, shape, dtype=None, geo="euclidean") -> torch.Tensor:
    """A tensor of a drawn scale (small; or zero, on the ball's rim, huge, NaN or infinite entries), made a
    valid point of ``geo`` unless the draw says otherwise."""
    rng = draw.rng
    dtype = dtype or draw.pick(DTYPES)
    g = torch.Generator().manual_seed(rng.randrange(2**31))
    x = torch.randn(*shape, generator=g, dtype=torch.float64)
    scale = draw.pick(SCALES)
    if geo == "sphere" and x.numel() and x.shape[-1]:
        x = x / x.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    if scale == 0.999 and x.numel() and x.shape[-1]:  # unit directions times 0.999: the rim
        x = 0.999 * x / x.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    elif scale in (math.nan, math.inf, -math.inf) and x.numel():
        x = x.clone()
        x.view(-1)[rng.randrange(x.numel())] = scale
    elif geo != "sphere":
        x = x * scale
    return x.to(dtype) if dtype != torch.int64 else x.nan_to_num().clamp(-9, 9).to(torch.int64)


def _points(draw: Draw, geo="euclidean", dtype=None):
    n, m = draw.size([1, 4, 9], [0]), draw.size([1, 5, 8], [0])
    d = draw.size([2, 3, 8], [0, 1])
    lead = tuple(draw.size([1, 2], [0, 3]) for _ in range(draw.rng.choice([0, 0, 1, 2])))
    dtype = dtype or draw.pick(DTYPES)
    q = _tensor(draw, (*lead, n, d), dtype, geo)
    k = _tensor(draw, (*lead, m, d + draw.size([0], [1])), dtype, geo)
    v = _tensor(draw, (*lead, m + draw.size([0], [1]), draw.rng.choice([1, 3])), dtype)
    return q, k, v


def _draw_call(rng: random.Random):
    """(name, thunk) of one public call with drawn arguments."""
    draw = Draw(rng)
    which = rng.randrange(13)
    eps, c, geo = draw.pick(EPS), draw.pick(CURVATURE), draw.pick(GEOMETRY)
    q, k, v = _points(draw, geo if isinstance(geo, str) else "euclidean")
    if which == 0:
        return "pairwise_distance", lambda: geometry.pairwise_distance(q, k, geometry=geo, c=c)
    if which == 1:
        return "ida_weights", lambda: attention.ida_weights(q, k, eps=eps, geometry=geo, c=c)
    if which == 2:
        return "ida", lambda: attention.ida(q, k, v, eps=eps, geometry=geo, c=c)
    if which == 3:
        scale = draw.pick(([None, 1.0, 0.5], [0.0, -1.0, math.nan, 1e30]))
        return "softmax_attention", lambda: attention.softmax_attention(q, k, v, scale=scale)
    if which == 4:
        bits, radius = draw.pick(([2, 4, 8], [0, 33, -1, 2.5])), draw.pick(([4, 6], [0, 64]))
        return "hcc_quantize", lambda: compression.hcc_quantize(k, bits_dir=bits, bits_radius=radius)
    if which == 5:
        q, k, _ = _points(draw, "sphere")
        top = draw.pick(([1, 2], [0, -1, 99]))
        protos = k.reshape(-1, k.shape[-1]) if k.shape[-1] else k.new_zeros(0, 0)  # (n_pool, d)
        return "gsr_route", lambda: routing.gsr_route(q, protos, k=top, eps=eps)
    if which == 6:
        q, _, v = _points(draw, "poincare")
        v = v[..., : q.shape[-2], :] if v.shape[-2] >= q.shape[-2] else v
        window, n_global = draw.pick(([None, 1, 3], [0, -2, 64])), draw.pick(([None, 0, 1], [99, -1]))
        causal = rng.random() < 0.5
        return "fp_hida", lambda: attention.fp_hida(q, q, v, eps=eps, c=c, window=window, n_global=n_global, causal=causal)
    if which == 7:
        q, k, v = _points(draw, "poincare")
        anchors = _tensor(draw, (draw.size([1, 3], [0]), q.shape[-1]), q.dtype, "poincare")
        return "l_hida", lambda: attention.l_hida(q, k, v, anchors, eps=eps, c=c)
    if which == 8:
        n_sum, dim = draw.pick(([1, 2, 4], [0, -1])), draw.pick(([2, 3, 8], [0]))
        shape = (draw.size([1, 2], [0]), draw.size([1, 6], [0]), dim + draw.size([0], [1]))
        x = _tensor(draw, shape, geo="poincare")
        return "CHIDA", lambda: attention.CHIDA(n_sum, dim, eps=eps, c=c)(x, x, x)
    if which == 9:
        kernel = draw.pick((list(attention.ATTENTION), ["nope"]))
        width, heads = draw.pick(([8, 16], [7, 0])), draw.pick(([1, 2, 4], [3, 0]))
        x = _tensor(draw, (draw.size([1, 2], [0]), draw.size([1, 5], [0]), max(0, width + draw.size([0], [1, -1]))),
                    torch.float32)  # fmt: skip
        if rng.random() < 0.2 and len(x):
            x = x[0]  # 2-D

        def geo_attention():
            cfg = attention.AttentionConfig(d_model=width, n_heads=heads, kernel=kernel, eps=eps if eps else 0.1)
            return attention.GeoAttention(cfg)(x)

        return "GeoAttention", geo_attention
    if which == 10:
        args = [draw.pick(([64, 0, 7], [-1, 3.5])), draw.pick(([4, 1], [0, -2])), draw.pick(([1, 2], [0, 9])),
                draw.pick(([1.25, 2.0], [0.0, -1.0, math.inf, math.nan, "1"]))]  # fmt: skip
        return "capacity_of", lambda: capacity_of(*args)
    if which == 11:
        bits, group = draw.pick(([2, 4, 8], [0, 9])), draw.pick(([32, 4, 1], [0, -4]))
        axis = draw.pick((["channel", "token"], ["x"]))
        return "kivi_quantize", lambda: kivi_quantize(k, bits=bits, group=group, axis=axis)
    return "distance", lambda: geometry.distance(q, k[..., : q.shape[-2], :] if k.shape[-2] >= q.shape[-2] else k,
                                                  geometry=geo, c=c)  # fmt: skip


def _finite(result) -> bool:
    if isinstance(result, torch.Tensor):
        return not result.is_floating_point() or bool(torch.isfinite(result).all())
    if isinstance(result, (tuple, list)):
        return all(_finite(r) for r in result)
    if isinstance(result, (int, float)):
        return math.isfinite(result) and result >= 0
    if hasattr(result, "dequantize"):
        return _finite(result.dequantize())
    return result is not None


def test_library_calls_refuse_clearly_or_return_finite_results(monkeypatch):
    monkeypatch.setenv("GEORESOLVER_MEMORY_BUDGET", "256MiB")
    rng = random.Random(20261204)
    raw, garbage, slow, counts = [], [], [], {"value_error": 0, "finite": 0}
    for i in range(LIBRARY_DRAWS):
        name, call = _draw_call(rng)
        t0 = time.perf_counter()
        try:
            result = call()
        except ValueError:
            counts["value_error"] += 1
        except Exception as err:  # noqa: BLE001 - exactly what the fuzz looks for
            raw.append(f"draw {i} {name}: {type(err).__name__}: {str(err)[:160]}")
        else:
            if _finite(result):
                counts["finite"] += 1
            else:
                garbage.append(f"draw {i} {name}: a non-finite or negative result")
        if time.perf_counter() - t0 > SECONDS_PER_CALL:
            slow.append(f"draw {i} {name}: {time.perf_counter() - t0:.1f} s")
    assert not raw, f"{len(raw)} raw exceptions:\n" + "\n".join(raw[:20])
    assert not garbage, f"{len(garbage)} silent garbage results:\n" + "\n".join(garbage[:20])
    assert not slow, slow
    assert counts["finite"] >= 100 and counts["value_error"] >= 100, counts  # both sides were drawn


# Each command's quick base (so a draw that is valid ends in seconds) and the flags drawn bad one at a time.
COMMANDS = {
    "train": (["train", "--task", "recall", "--size", "4", "--d-model", "16", "--layers", "1", "--steps", "2",
               "--batch-size", "4", "--eval-every", "2"],
              ["--steps", "--lr", "--eps", "--d-model", "--size", "--heads", "--layers", "--batch-size", "--task",
               "--attention", "--eval-every", "--max-seconds", "--target-accuracy", "--window", "--anchors",
               "--memory", "--checkpoint-every", "--device", "--resume"]),
    "embed": (["embed", "--dataset", "wordnet-mammals", "--budget", "1", "--epochs", "1"],
              ["--dim", "--lr", "--budget", "--epochs", "--dataset", "--geometry", "--dtype", "--burn-in", "--seed"]),
    "bench": (["bench", "--quick", "--seq-lens", "16", "--repeats", "1", "--kernels", "sdpa", "ida"],
              ["--seq-lens", "--repeats", "--eps", "--threads", "--naive-max-len", "--memory-check-len",
               "--headline-lens", "--device"]),
    "routing": (["routing", "--world-size", "1", "--batch-sizes", "8"],
                ["--world-size", "--batch-sizes", "--dim", "--k", "--eps", "--n-pool", "--capacity-factor"]),
    "claims": (["claims", "--quick", "--only", "lemma2.3-exact-retrieval-euclidean"], ["--only"]),
}  # fmt: skip
BAD = ["-1", "0", "nan", "inf", "-inf", "1e30", "abc", "", "99999999999999999999", "0.5", "/nonexistent/x"]
CLI_DRAWS = 160


def test_command_line_flags_refuse_with_one_error_line(monkeypatch, tmp_path):
    monkeypatch.setenv("GEORESOLVER_MEMORY_BUDGET", "256MiB")
    monkeypatch.chdir(tmp_path)
    rng = random.Random(4122026)
    raw, unclear = [], []
    for i in range(CLI_DRAWS):
        command = rng.choice(list(COMMANDS))
        base, flags = COMMANDS[command]
        flag, value = rng.choice(flags), rng.choice(BAD)
        argv = [*base, flag, value]
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                code = main(argv)
            except SystemExit as stop:  # argparse's own refusal of a value of the wrong type
                code = stop.code
            except Exception as exc:  # noqa: BLE001 - exactly what the fuzz looks for
                raw.append(f"draw {i} {argv}: {type(exc).__name__}: {str(exc)[:160]}")
                continue
        text = err.getvalue()
        if "Traceback" in text or (code == 2 and "error:" not in text) or code not in (0, 1, 2):
            unclear.append(f"draw {i} {argv}: exit {code}: {text[-300:]}")
    assert not raw, f"{len(raw)} raw exceptions:\n" + "\n".join(raw[:20])
    assert not unclear, "\n".join(unclear[:20])
