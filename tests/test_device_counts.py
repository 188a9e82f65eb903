"""What one training step on "gpu" tensors asks of the device: host syncs and device ops, counted
by tests/device_counts.py over the strict CuPy stand-in.

A plain step needs no device->host transfer (the loss is read only when the user asks for it), a
GradScaler step needs one (its found-inf check, as torch's), and the ops counted are what the step
launched when these tests were written: a change that adds a sync fails here; one that adds kernels
must raise the bound on purpose. The counts do not depend on the layer widths, so the MLP is the
bench's (bench/data_parallel_overhead.py: 5 Linear layers with ReLUs between) at small widths.
"""
from __future__ import annotations

import ast
import os
import sys
import warnings
from typing import Any, Callable, Dict

import numpy as np
import pytest

import pycoll
import pycoll.nn as nn
import pycoll.nn.functional as F
import pycoll.optimizer as opt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strict_cupy  # noqa: E402
from device_counts import PHASES, Counts, counting, step_counts  # noqa: E402

WIDTHS = [12, 16, 16, 10, 6]  # the bench's 1024-2048-2048-1536-512, small: the counts are the same
BATCH = 8


@pytest.fixture(scope="module", autouse=True)
def cupy():
    with strict_cupy.installed() as module:
        yield module


def mlp(norm: bool = False, dropout: bool = False) -> nn.Layer:
    """The bench's MLP; ``norm``/``dropout`` put a LayerNorm/Dropout after the first Linear."""
    layers: list = []
    for a, b in zip(WIDTHS, WIDTHS[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    extra = ([nn.LayerNorm(WIDTHS[1])] if norm else []) + ([nn.Dropout(0.1)] if dropout else [])
    return nn.Sequential(*(layers[:1] + extra + layers[1:-1]))


def _data(classes: bool = False) -> tuple:
    rng = np.random.default_rng(0)
    x = pycoll.to_tensor(rng.standard_normal((BATCH, WIDTHS[0])).astype(np.float32))
    if classes:
        return x, pycoll.to_tensor(rng.integers(0, WIDTHS[-1], (BATCH,)).astype(np.int64))
    return x, pycoll.to_tensor(rng.standard_normal((BATCH, WIDTHS[-1])).astype(np.float32))


def _case(optimizer: Callable[[list], Any] = lambda ps: opt.SGD(1e-3, parameters=ps),
          loss: Callable[[], Any] = nn.MSELoss, wrap: Callable[[Any], Any] = lambda m: m,
          amp: bool = False, classes: bool = False, **layers: bool) -> Callable[..., Counts]:
    def run(where: bool = False) -> Counts:
        pycoll.set_device("gpu")
        pycoll.seed(1)
        model = wrap(mlp(**layers))
        x, y = _data(classes)
        scaler = pycoll.amp.GradScaler(init_loss_scaling=1024.0) if amp else None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # auto_cast says it computes in float32
            return step_counts(model, loss(), optimizer(model.parameters()), x, y, scaler,
                               pycoll.amp.auto_cast if amp else None, where=where)
    return run


CASES: Dict[str, Callable[..., Counts]] = {
    "sgd+mse": _case(),
    "adam": _case(lambda ps: opt.Adam(1e-3, parameters=ps)),
    "adamw": _case(lambda ps: opt.AdamW(1e-3, parameters=ps)),
    "sgd+clip_global_norm": _case(lambda ps: opt.SGD(1e-3, parameters=ps, grad_clip=nn.ClipGradByGlobalNorm(1.0))),
    "sgd+amp(float16)+GradScaler": _case(amp=True),
    "sgd+cross_entropy": _case(loss=nn.CrossEntropyLoss, classes=True),
    "sgd+layer_norm": _case(norm=True),
    "sgd+dropout": _case(dropout=True),
    "DataParallel(1 rank)+sgd": _case(wrap=pycoll.DataParallel),
}


def _syncs(counts: Counts) -> Dict[str, int]:
    return {phase: n["sync"] for phase, n in counts.table().items() if n["sync"]}


@pytest.mark.parametrize("name", [n for n in CASES if "GradScaler" not in n and "cross_entropy" not in n])
def test_a_plain_training_step_on_gpu_tensors_makes_no_host_sync(name):
    """Forward, loss, backward, optimizer step (SGD, Adam, AdamW, with a global-norm clip),
    clear_grad, with LayerNorm, Dropout, DataParallel on one rank: nothing read back."""
    assert _syncs(CASES[name]()) == {}


def test_grad_scaler_step_makes_one_host_sync():
    """Its found-inf check is the one read (torch's GradScaler reads it once per step too)."""
    assert _syncs(CASES["sgd+amp(float16)+GradScaler"]()) == {"step": 1}


def test_a_global_norm_clip_reads_back_once_only_where_the_sums_go_across_ranks():
    """A clip completed across ranks (``sum_across``, which takes host sums) reads all the sums in
    one transfer, not one per gradient; the scales it gives back go up in one upload."""
    grads = [pycoll.randn([3, 4]).array, None, pycoll.randn([5]).array]
    with counting() as counts:
        clipped = nn.ClipGradByGlobalNorm(0.5).clip(grads, sum_across=lambda sums: sums * 2)
    assert counts.total("sync") == 1 and counts.total("upload") == 1
    want = [g.get() for g in (grads[0], grads[2])]
    norm = np.sqrt(2 * sum(float((w.astype(np.float64) ** 2).sum()) for w in want))
    assert clipped[1] is None
    for got, w in zip((clipped[0], clipped[2]), want):
        np.testing.assert_allclose(got.get(), w * np.float32(0.5 / norm), rtol=1e-6)


def test_cross_entropy_on_gpu_reads_nothing_back_and_gives_nan_for_a_bad_label():
    """Valid labels: no sync (and nothing uploaded), the loss equal to the CPU's (which still
    raises for an id out of range: a check it can make for free); a bad id on the GPU makes the
    loss NaN instead of stalling the device to raise (paddle's and torch's GPU kernels assert on
    the device)."""
    logits = np.random.default_rng(3).standard_normal((4, 5)).astype(np.float32)
    labels = np.array([0, 4, -100, 2], np.int64)  # -100: the default ignore_index
    pycoll.set_device("cpu")
    want = F.cross_entropy(pycoll.to_tensor(logits), pycoll.to_tensor(labels)).numpy()
    with pytest.raises(ValueError, match=r"label ids must lie in \[0, 5\)"):
        F.cross_entropy(pycoll.to_tensor(logits), pycoll.to_tensor(np.array([0, 5, 1, 1])))
    pycoll.set_device("gpu")
    x, y, bad = pycoll.to_tensor(logits), pycoll.to_tensor(labels), pycoll.to_tensor(np.array([0, 5, 1, 1]))
    with counting() as counts:
        loss = F.cross_entropy(x, y)
        poisoned = F.cross_entropy(x, bad, reduction="none")
        nll = F.nll_loss(x, bad)
    assert counts.total("sync") == 0 and counts.total("upload") == 0
    np.testing.assert_array_equal(loss.numpy(), want)
    assert np.isnan(poisoned.numpy()).tolist() == [False, True, False, False]
    assert np.isnan(nll.numpy())


# Device ops per phase of one steady step of the 5-Linear MLP (4 Linear+bias, 3 ReLU; 8 parameters),
# as reached; each is an upper bound. forward 11: 4 matmuls, 4 bias adds, 3 relus. loss 3
# (MSELoss: subtract, square, mean). backward 29: the seed, mean's and square's 3, 4 bias sums,
# 3 input and 4 weight matmuls, 3 x 2 for the relus, and 8 adds of the gradients into the .grad
# that clear_grad zeroed (paddle's clear_grad zeroes in place; see the report of this test's
# commit). step: SGD's 2 per parameter (16); Adam's 12 (96), AdamW's 13 (its decay); the global-norm
# clip adds 30 (a cast and a dot per gradient, stack, sum, sqrt, maximum, divide, one cast of the
# scale, a multiply per gradient); GradScaler's unscale 26 (a multiply, isfinite and all per
# gradient, stack, all). clear_grad: one fill per parameter. cross_entropy's loss 20 (its label
# check on the device, 9, and the log-softmax, gather and mean); LayerNorm 10 forward, 13 backward.
OP_BOUNDS = {
    "sgd+mse": {"forward": 11, "loss": 3, "backward": 29, "step": 16, "clear_grad": 8},
    "adam": {"forward": 11, "loss": 3, "backward": 29, "step": 96, "clear_grad": 8},
    "adamw": {"forward": 11, "loss": 3, "backward": 29, "step": 104, "clear_grad": 8},
    "sgd+clip_global_norm": {"forward": 11, "loss": 3, "backward": 29, "step": 46, "clear_grad": 8},
    "sgd+amp(float16)+GradScaler": {"forward": 11, "loss": 3, "backward": 31, "step": 42, "clear_grad": 8},
    "sgd+cross_entropy": {"forward": 11, "loss": 20, "backward": 33, "step": 16, "clear_grad": 8},
    "sgd+layer_norm": {"forward": 21, "loss": 3, "backward": 42, "step": 20, "clear_grad": 10},
    "sgd+dropout": {"forward": 12, "loss": 3, "backward": 30, "step": 16, "clear_grad": 8},
    "DataParallel(1 rank)+sgd": {"forward": 11, "loss": 3, "backward": 29, "step": 16, "clear_grad": 8},
}


@pytest.mark.parametrize("name", list(CASES))
def test_device_ops_of_a_training_step_stay_within_what_was_reached(name):
    table = CASES[name]().table()
    ops = {phase: table[phase]["op"] for phase in table}
    assert all(ops[phase] <= bound for phase, bound in OP_BOUNDS[name].items()), (ops, OP_BOUNDS[name])
    assert all(ops[phase] > 0 for phase in PHASES), ops  # the counter saw every phase
    uploads = {phase: table[phase]["upload"] for phase in table if table[phase]["upload"]}
    assert uploads == ({"forward": 1} if "dropout" in name else {})  # dropout's mask: drawn on the host


def test_a_data_parallel_step_on_two_ranks_of_gpu_tensors_makes_no_host_sync():
    from conftest import assert_ok, launch

    result = launch(2, "strict_gpu_counts.py", env={"PYCOLL_BACKEND": "nccl", "NCCL_SOCKET_IFNAME": "lo",
                                                    "NCCL_IB_DISABLE": "1"}, timeout=120)
    assert_ok(result)
    lines = [line for line in result.stdout.splitlines() if line.startswith("counts rank=")]
    assert len(lines) == 2, result.stdout
    for line in lines:
        table = ast.literal_eval(line.split(" ", 2)[2])  # the rank's printed {phase: {kind: n}}
        assert {phase: n["sync"] for phase, n in table.items()} == dict.fromkeys(PHASES, 0), line
        assert table["backward"]["op"] > 0, line


def test_the_stand_in_counts_transfers_and_kernels_not_views(cupy):
    a = cupy.arange(6, dtype=np.float32)
    with counting() as counts:
        a.reshape(2, 3), a[1:], a.T, a.astype(np.float32, copy=False), cupy.ascontiguousarray(a)  # views: free
    assert counts.table() == {}
    with counting() as counts:
        b = a + 1                      # a kernel
        b.astype(np.float32)           # a copy, even to the same dtype
        cupy.zeros(3)                  # an allocation (and its fill)
        b[0] = 5                       # an index write
        float(b[0]), b.tolist(), bool(b.any()), cupy.asnumpy(b)  # 4 reads (any() is a kernel)
        b[b > 2]                       # greater, the gather, and the mask count read back
        cupy.asarray(np.ones(2))       # an upload
    assert counts.table() == {"other": {"sync": 5, "op": 7, "upload": 1}}


def test_a_step_that_drops_the_grads_takes_backward_gradients_without_copying_them():
    """``clear_grad(set_to_zero=False)`` (torch's set_to_none): the next backward's gradients
    become the ``.grad``s as the walk made them: 21 ops, the 29 of a zeroing step less its 8 adds,
    and no copy (an id of a freed gradient, reused, made 2 of them look shared before)."""
    pycoll.set_device("gpu")
    pycoll.seed(1)
    model = mlp()
    x, y = _data()
    sgd = opt.SGD(1e-3, parameters=model.parameters())
    loss = nn.MSELoss()
    for _ in range(2):
        loss(model(x), y).backward()
        sgd.step()
        sgd.clear_grad(set_to_zero=False)
    with counting(where=True) as counts:
        with counts.phase("backward"):
            loss(model(x), y).backward()
    assert counts.table()["backward"] == {"sync": 0, "op": 3 + 11 + 21, "upload": 0}  # loss, forward, backward
    assert not [site for site in counts.sites["backward"] if site[1] == "copy"]
