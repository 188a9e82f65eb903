"""A sharded optimizer's state through paddle's distributed checkpoint on 2 ranks (folder argv[1]):
``dist.save_state_dict(opt.state_dict(), path)`` after group_sharded_parallel writes every rank's
own piece of each moment (a parameter of 3 elements splits 2 + 1; one of 1 element is held by rank
0 alone, so the ranks save different keys). Loaded in place into ``opt.state_dict()`` each rank
gets its own piece back; read merged (one process's view, as a fresh run resumes) and given to a
new sharded optimizer, or read in place into a new one's state_dict() before its first step,
training goes on exactly as without the break (level os; p_g_os round trips).
Then a p_g_os model's own state_dict / set_state_dict."""
import os
import sys

import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
from pycoll.distributed.sharding import group_sharded_parallel

folder = sys.argv[1]
dist.init_parallel_env()
rank = dist.get_rank()
data = np.random.default_rng(3)
batches = [data.standard_normal((2, 4)).astype("float32") + rank for _ in range(4)]


def wrapped(level, weights=None, segment_size=1, dtype="float32"):  # p_g_os: every parameter as pieces
    pycoll.seed(5)
    with pycoll.utils.unique_name.guard():  # the names a fresh process gives them
        model = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 1))
    model.to(dtype=dtype)
    if weights is not None:
        model.set_state_dict(weights)
    opt = pycoll.optimizer.AdamW(learning_rate=0.05, parameters=model.parameters(), multi_precision=True)
    return (model, *group_sharded_parallel(model, opt, level, segment_size=segment_size)[:2])


def train(gm, go, steps):
    losses = []
    for x in steps:
        loss = (gm(pycoll.to_tensor(x).astype(gm.parameters()[0].dtype)).astype("float32") ** 2).mean()
        loss.backward()
        go.step()
        go.clear_grad()
        losses.append(float(loss))
    return losses


for level in ("os", "p_g_os"):
    path = os.path.join(folder, level)
    _, gm, go = wrapped(level)
    straight = train(gm, go, batches)

    model, gm, go = wrapped(level)
    train(gm, go, batches[:2])
    state = go.state_dict()
    keys = sorted(k for k in state if "moment1" in k)
    held = [model[0].weight, model[0].bias, model[2].weight] + ([model[2].bias] if rank == 0 else [])
    assert keys == sorted(f"{p.name}_moment1_0" for p in held), keys
    assert state[f"{model[0].bias.name}_moment1_0"].shape == [2 - rank]
    saved = {k: v.numpy().copy() for k, v in state.items()}
    dist.save_state_dict(state, path)
    for value in state.values():
        value._array[...] = 0
    dist.load_state_dict(state, path)  # in place: this rank's own pieces come back
    for key, value in state.items():
        np.testing.assert_array_equal(value.numpy(), saved[key], err_msg=key)

    merged = dist.load_merged_state_dict(path)
    whole = go.whole_state_dict()
    for key, value in whole.items():
        np.testing.assert_array_equal(merged[key].numpy().reshape(-1), value.numpy().reshape(-1), err_msg=key)
    if level == "os":  # the parameters are whole on every rank here
        weights = {k: v.numpy().copy() for k, v in model.state_dict().items()}
        _, gm, go = wrapped(level, weights)
        go.set_state_dict(merged)
        np.testing.assert_allclose(train(gm, go, batches[2:]), straight[2:], rtol=1e-6, atol=1e-7)
        _, gm, go = wrapped(level, weights)  # paddle's resume: read in place before the first step
        dist.load_state_dict(go.state_dict(), path)
        np.testing.assert_allclose(train(gm, go, batches[2:]), straight[2:], rtol=1e-6, atol=1e-7)
        # the flattened pieces load into an unsharded optimizer in its parameters' shapes, and an
        # unsharded optimizer's checkpoint into the sharded one's pieces
        plain, _, _ = wrapped(level, weights)
        unsharded = pycoll.optimizer.AdamW(learning_rate=0.05, parameters=plain.parameters(), multi_precision=True)
        unsharded.set_state_dict(merged)  # as one process resumes from load_merged_state_dict's flat moments
        state = unsharded.state_dict()
        assert state[f"{plain[0].weight.name}_moment1_0"].shape == [4, 3]
        for value in state.values():
            value._array[...] = 0
        dist.load_state_dict(state, path)  # in place, each entry in its parameter's shape
        unsharded.set_state_dict(state)
        dist.save_state_dict(unsharded.state_dict(), os.path.join(folder, "unsharded"))
        # (each rank's unsharded optimizer then steps on its own batch alone: the first loss is the run's)
        np.testing.assert_allclose(train(plain, unsharded, batches[2:3]), straight[2:3], rtol=1e-6, atol=1e-7)
        _, gm, go = wrapped(level, weights)
        dist.load_state_dict(go.state_dict(), os.path.join(folder, "unsharded"))  # [4, 3] into flat pieces
        np.testing.assert_allclose(train(gm, go, batches[2:]), straight[2:], rtol=1e-6, atol=1e-7)
# level p_g_os holds the parameters as pieces between uses: state_dict() refuses to give their empty
# arrays; set_state_dict (every rank) loads whole values into the pieces, and the next forward uses them
model, gm, go = wrapped("p_g_os")
try:
    gm.state_dict()
    raise AssertionError("state_dict gave the released parameters")
except RuntimeError as exc:
    assert "get_all_parameters()" in str(exc), exc
ones = {k: np.full(v.shape, 0.1, np.float32) for k, v in
        {"0.weight": np.empty((4, 3)), "0.bias": np.empty(3), "2.weight": np.empty((3, 1)), "2.bias": np.empty(1)}.items()}
gm.set_state_dict({k: pycoll.to_tensor(v) for k, v in ones.items()})
x = np.ones((2, 4), np.float32)
want = np.tanh(x @ ones["0.weight"] + ones["0.bias"]) @ ones["2.weight"] + ones["2.bias"]
np.testing.assert_allclose(gm(pycoll.to_tensor(x)).numpy(), want, rtol=1e-6)
gm.get_all_parameters()
np.testing.assert_array_equal(gm.state_dict()["0.weight"].numpy(), ones["0.weight"])
# bfloat16 parameters with float32 master weights: an in-place resume before the first step reads
# the master weights and the float32 moments too (the parameters alone would lose their low bits)
path = os.path.join(folder, "bf16")
_, gm, go = wrapped("os", dtype="bfloat16")
straight = train(gm, go, batches)
model, gm, go = wrapped("os", dtype="bfloat16")
train(gm, go, batches[:2])
dist.save_state_dict(go.state_dict(), path)
weights = {k: v.numpy().copy() for k, v in model.state_dict().items()}
_, gm, go = wrapped("os", {k: pycoll.to_tensor(v) for k, v in weights.items()}, dtype="bfloat16")
state = go.state_dict()
assert state["master_weights"] and all(v.dtype == pycoll.float32 for v in state["master_weights"].values())
dist.load_state_dict(state, path)
assert train(gm, go, batches[2:]) == straight[2:]
print(f"OK rank={rank}", flush=True)
