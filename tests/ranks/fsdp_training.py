"""fully_shard trains exactly as DataParallel on 2 ranks (AdamW with a global-norm gradient clip,
the optimizer built before fully_shard as paddle's docstring does; float32; parameter sizes that
do not divide by the world size; one parameter in ignored_params): per-step losses and final
parameters equal to 1e-6. Between steps each rank holds only its piece of every sharded
parameter (the ignored one whole), after backward only its pieces of the gradients, and the
optimizer state of its pieces. An optimizer built just after fully_shard is taken over at the
first forward. A mesh of the two ranks as ``mesh`` and the global mesh give the same training."""
import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
from pycoll.distributed.fsdp import fully_shard

dist.init_parallel_env()
rank, n = dist.get_rank(), dist.get_world_size()
STEPS = 4
# the loss's target: LayerNorm's output always has mean 0 and variance 1, so a loss of its squares
# alone is constant and the layers before it would train on rounding noise
TARGET = pycoll.to_tensor(np.array([-1.0, 0.5, 1.0], np.float32))


def net():
    pycoll.seed(11)
    return nn.Sequential(nn.Linear(5, 7), nn.Tanh(), nn.Linear(7, 3), nn.LayerNorm(3))


def optimizer(model):
    return pycoll.optimizer.AdamW(learning_rate=0.05, parameters=model.parameters(), weight_decay=0.02,
                                  grad_clip=nn.ClipGradByGlobalNorm(0.5))


def nbytes(arrays):
    return sum(np.asarray(a).nbytes for a in arrays if a is not None)


def moments(opt):
    """Bytes of the optimizer's moments this rank holds (the beta powers are scalars every rank
    keeps); a taken-over optimizer's own state_dict() is the whole, so its pieces are asked for."""
    state = opt._fully_shard_optimizer.state_dict() if hasattr(opt, "_fully_shard_optimizer") else opt.state_dict()
    return nbytes(v.numpy() for k, v in state.items() if "_moment" in k)


def train(kind, built="before", **options):
    """``built``: the optimizer is made before fully_shard, just after it, or after the first
    forward and backward ("late")."""
    model = net()
    opt = optimizer(model) if built == "before" else None
    if kind == "dp":
        model = pycoll.DataParallel(model)
    else:
        ignored = [model[3].weight]
        model = fully_shard(model, ignored_params=ignored, **options)
        assert model._fully_shard_state.model.shard_group is not None or "mesh" not in options
    if built == "after":
        opt = optimizer(model)
    data = np.random.default_rng(rank)
    losses, held = [], []
    for _ in range(STEPS):
        x = pycoll.to_tensor(data.standard_normal((4, 5)).astype(np.float32))
        loss = ((model(x) - TARGET) ** 2).mean()
        loss.backward()
        if kind == "fsdp":
            state = model._fully_shard_state.model
            grads_now = state.gradient_bytes()
            assert all(p.grad is None for p in model.parameters())  # no whole gradient anywhere
        else:
            grads_now = nbytes(p.grad.numpy() for p in model.parameters())
            norm = np.sqrt(sum(float((p.grad.numpy().astype(np.float64) ** 2).sum()) for p in model.parameters()))
            assert norm > 0.5, norm  # the clip acts: the averaged gradients' global norm is above its 0.5
        if opt is None:
            opt = optimizer(model)
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
        if kind == "fsdp":  # between steps: pieces only, the ignored LayerNorm weight whole
            sizes = {p.name: p.array.size for p in model.parameters()}
            assert [s for s in sizes.values() if s] == [3], sizes
            held.append((grads_now, state.parameter_bytes(), moments(opt)))
        else:
            held.append((grads_now, nbytes(p.numpy() for p in model.parameters()), moments(opt)))
    params = [v.numpy().copy() for v in model.state_dict().values()]  # whole (collective)
    return losses, params, held, model, opt


def everyone(value):
    values = []
    dist.all_gather_object(values, value)
    return values


dp_losses, dp_params, dp_held, dp_model, dp_opt = train("dp")
runs = {"before": train("fsdp"), "after": train("fsdp", built="after"), "late": train("fsdp", built="late"),
        "mesh": train("fsdp", mesh=dist.ProcessMesh([0, 1], dim_names=["x"]), reshard_after_forward=True,
                      shard_placement_fn=lambda p: dist.Shard(0), offload_policy=None,
                      enable_tensor_fusion_and_overlap=False)}
dist.auto_parallel.set_mesh(dist.ProcessMesh([0, 1], dim_names=["dp"]))
runs["global mesh"] = train("fsdp")
dist.auto_parallel.set_mesh(None)
for name, (losses, params, held, _, _) in runs.items():
    np.testing.assert_allclose(losses, dp_losses, rtol=1e-6, atol=1e-7, err_msg=name)
    for got, want in zip(params, dp_params):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7, err_msg=name)
    assert losses[-1] < losses[0], (name, losses)
    for (grads, params_b, state), (dp_grads, dp_params_b, dp_state) in zip(held, dp_held):
        totals = [sum(t) for t in zip(*everyone((grads, params_b, state)))]
        # the ranks' pieces add up to the whole; the ignored weight (3 floats) is whole on both ranks
        assert totals == [dp_grads, dp_params_b + 12, dp_state], (name, totals, dp_grads, dp_params_b, dp_state)
        shares = (grads / dp_grads, state / dp_state, (params_b - 12) / (dp_params_b - 12))
        assert max(shares) < 0.6, (name, held)  # about half each (a piece is rounded up per parameter)
# whole state dicts: the layer's (shapes as unsharded, values as DataParallel's) and the optimizer's
_, _, _, model, opt = runs["before"]
whole, dp_whole = model.state_dict(), dp_model.state_dict()
assert {k: v.shape for k, v in whole.items()} == {k: v.shape for k, v in dp_whole.items()}, whole
assert [p.shape for p in model.parameters()].count([0]) == 5  # the parameters themselves stay released
state, dp_state = opt.state_dict(), dp_opt.state_dict()
renamed = {f"{q.name}_": f"{p.name}_" for p, q in zip(model.parameters(), dp_model.parameters())}
dp_state = {next(new + k[len(old):] for old, new in renamed.items() if k.startswith(old)): v
            for k, v in dp_state.items()}  # the unsharded state under the sharded model's parameter names
assert sorted(state) == sorted(dp_state) and len(state) == 24, (sorted(state), sorted(dp_state))
for key, value in dp_state.items():
    assert state[key].shape == value.shape, (key, state[key].shape, value.shape)
    np.testing.assert_allclose(state[key].numpy(), value.numpy(), rtol=1e-6, atol=1e-7, err_msg=key)
# set_state_dict(whole) into a sharded layer: its next forward equals an unsharded layer loaded alike
pycoll.seed(23)
other = {k: pycoll.to_tensor(np.random.default_rng(7).standard_normal(v.shape).astype(np.float32))
         for k, v in dp_whole.items()}
missing, unexpected = model.set_state_dict(other)
assert (missing, unexpected) == ([], []), (missing, unexpected)
plain = net()
plain.set_state_dict(other)
x = pycoll.to_tensor(np.linspace(-2, 2, 20, dtype=np.float32).reshape(4, 5))
with pycoll.no_grad():
    np.testing.assert_allclose(model(x).numpy(), plain(x).numpy(), rtol=1e-6, atol=1e-7)
for key, value in model.state_dict().items():
    np.testing.assert_array_equal(value.numpy(), other[key].numpy(), err_msg=key)
# sub-layers sharded one by one, with one optimizer over the whole model: refused by name at its
# first step, on every rank, before anything is sent
children = net()
fully_shard(children[0])
fully_shard(children[2])
try:
    optimizer(children).step()
except ValueError as e:
    assert "also updates parameters outside it" in str(e) and "call fully_shard once, on the root" in str(e), e
else:
    raise AssertionError("one optimizer over two sharded sub-layers was not refused")
print(f"OK rank={rank} losses={dp_losses[0]:.6f}->{dp_losses[-1]:.6f}", flush=True)
