"""MoELayer on the ranks of the job against one process that sends every token to its experts
directly (float64): every expert runs on all the tokens and its output is weighed by the gate
value where the expert was chosen (and kept), zero elsewhere. No sorting, counting or exchange.

Each rank holds E experts of the W * E; all ranks build all of them from one seed, and rank w
keeps experts w*E .. w*E+E-1. The reference draws the same random numbers as each rank's gate
(seed BASE + w), so GShard's random routing and Switch's jitter are those of the ranks; capacity
is applied as paddle's: per expert over all ranks, rank 0's choices first, in token order.

Checked: the output, the balance loss (by hand), the gradients of the input, of the gate (summed
over the ranks, each rank's gate sees its own tokens) and of each expert; with ``mp_group`` the
ranks split the tokens instead. Also ClipGradForMOEByGlobalNorm against a hand computation.
Run alone (``python moe_layer.py``) it checks a world of one rank with moe_group=None.
"""
import math
import sys

import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
from pycoll.incubate.distributed.models.moe import (ClipGradForMOEByGlobalNorm, GShardGate, MoELayer, NaiveGate,
                                                   SwitchGate)

D, HIDDEN, E, BATCH, SEQ, SEED = 4, 6, 2, 2, 5, 1234
TOL = dict(rtol=1e-9, atol=1e-11)


class Expert(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(D, HIDDEN), nn.Linear(HIDDEN, D)

    def forward(self, x):
        return self.fc2(pycoll.tanh(self.fc1(x)))


def build(world, kind, capacity):
    """(the gate, all world*E experts), the same on every rank and every call."""
    pycoll.seed(SEED)
    options = {} if kind == "naive" else {"capacity": capacity}
    if kind == "gshard":
        options["random_routing"] = True
    gate = {"naive": NaiveGate, "gshard": GShardGate, "switch": SwitchGate}[kind](
        D, E, world, topk=1 if kind == "switch" else 2, **options)
    return gate, [Expert() for _ in range(world * E)]


def data(world):
    rng = np.random.default_rng(7)
    return rng.standard_normal((world, BATCH, SEQ, D)), rng.standard_normal((world, BATCH, SEQ, D))


def _kept(choices, cap):
    """choices [W, N, k] -> -1 where an expert is over ``cap``, rank 0's first, in flat order."""
    out, taken = choices.copy(), {}
    for w in range(choices.shape[0]):
        flat = out[w].reshape(-1)
        for i, g in enumerate(flat):
            taken[g] = taken.get(g, 0) + 1
            if taken[g] > cap:
                flat[i] = -1
    return out


def reference(world, kind, capacity, training, xs, grads_out):
    """The one-process MoE: (gate, experts, x, out, per-rank balance losses by hand)."""
    gate, experts = build(world, kind, capacity)
    gate.train() if training else gate.eval()
    n = xs.shape[1] * xs.shape[2]
    x = pycoll.to_tensor(xs.reshape(world * n, D), stop_gradient=False)
    scores = gate.gate(x)
    draws = []
    for w in range(world):  # each rank's gate draws its random numbers from seed SEED + 1 + w
        pycoll.seed(SEED + 1 + w)
        if kind == "switch" and training:
            draws.append(pycoll.rand([n, world * E]).numpy())  # the jitter, of the scores' dtype
        elif kind == "gshard":
            draws.append(pycoll.rand([n], dtype="float32").numpy())  # the random routing's, float32 as paddle's
    if kind == "switch":
        if training:
            noise = np.concatenate(draws) * 2 * gate.switch_eps + 1 - gate.switch_eps
            scores = scores + pycoll.to_tensor(noise)
        scores = pycoll.nn.functional.softmax(scores, axis=-1)
    k = gate.top_k
    raw = scores.numpy()
    chosen = np.argsort(-raw, axis=1, kind="stable")[:, :k]
    values = [(scores * pycoll.to_tensor(np.eye(world * E)[chosen[:, j]])).sum(axis=-1) for j in range(k)]
    picks = chosen.reshape(world, n, k)
    if kind != "naive":
        picks = _kept(picks, math.ceil(gate.capacity[0 if training else 1] * n))
    if kind == "gshard":
        second = raw[np.arange(world * n), chosen[:, 1]].reshape(world, n)
        picks[:, :, 1] = np.where(2 * second < np.stack(draws), -1, picks[:, :, 1])
    picks = picks.reshape(world * n, k)
    out = 0
    for g, expert in enumerate(experts):
        weight = sum(values[j] * pycoll.to_tensor((picks[:, j] == g).astype(np.float64)) for j in range(k))
        out = out + weight.reshape([-1, 1]) * expert(x)
    (out * pycoll.to_tensor(grads_out.reshape(world * n, D))).sum().backward()
    losses = balance_losses(kind, raw.reshape(world, n, -1), chosen.reshape(world, n, k), picks.reshape(world, n, k), E)
    return gate, experts, x, out.numpy(), picks, losses


def balance_losses(kind, raw, chosen, picks, num_expert):
    """paddle's balance loss of each rank, by hand from its scores and choices."""
    losses = []
    tot = raw.shape[2]
    for w in range(raw.shape[0]):
        if kind == "gshard":
            probs = np.exp(raw[w] - raw[w].max(1, keepdims=True))
            probs /= probs.sum(1, keepdims=True)
            c_e = np.bincount(chosen[w].reshape(-1), minlength=tot) / raw.shape[1]
            losses.append(np.mean(c_e * probs.mean(0)) * num_expert ** 2)
        elif kind == "switch":
            valid = picks[w][picks[w] > -1]
            losses.append((np.bincount(valid, minlength=tot) / valid.size * raw[w].sum(0) / valid.size).sum() * tot)
        else:
            losses.append(None)
    return losses


def check_layer(world, rank, group, kind, capacity=(1.2, 2.4), training=True, mp_group=None):
    pycoll.set_default_dtype("float64")
    xs, gs = data(world)
    routed_world = 1 if mp_group is not None else world  # with mp_group the ranks share tokens, not experts
    ref_gate, ref_experts, ref_x, ref_out, ref_picks, ref_losses = reference(routed_world, kind, capacity, training,
                                                                  xs.reshape(routed_world, -1, SEQ, D), gs)
    gate, experts = build(routed_world, kind, capacity)
    mine = experts if mp_group is not None else experts[rank * E:(rank + 1) * E]
    layer = MoELayer(D, nn.LayerList(mine), gate=gate, moe_group=group, mp_group=mp_group)
    layer.train() if training else layer.eval()
    x_all = xs.reshape(routed_world, -1, SEQ, D)
    x = pycoll.to_tensor(x_all[rank if mp_group is None else 0], stop_gradient=False)
    pycoll.seed(SEED + 1 + (rank if mp_group is None else 0))
    out = layer(x)
    where = f"{kind} training={training} mp={mp_group is not None}"
    g_all = gs.reshape(routed_world, -1, SEQ, D)
    (out * pycoll.to_tensor(g_all[rank if mp_group is None else 0])).sum().backward()
    rows = slice(rank * BATCH * SEQ, (rank + 1) * BATCH * SEQ) if mp_group is None else slice(None)
    np.testing.assert_allclose(out.numpy().reshape(-1, D), ref_out[rows], err_msg=f"{where}: output", **TOL)
    np.testing.assert_allclose(x.grad.numpy().reshape(-1, D), ref_x.grad.numpy()[rows], err_msg=f"{where}: x grad",
                               **TOL)
    loss = gate.get_loss()
    if ref_losses[0] is not None and mp_group is None:
        np.testing.assert_allclose(float(loss), ref_losses[rank], err_msg=f"{where}: balance loss", **TOL)
    assert gate.get_loss() is None, "get_loss() clears the loss"

    def total(p, shared_by):  # a parameter's gradient, summed over the ranks that each saw some tokens
        grad = np.zeros(p.shape) if p.grad is None else p.grad.numpy().copy()
        if shared_by is not None and world > 1:
            dist.all_reduce(grad, group=shared_by)
        return grad

    for name, p in gate.named_parameters():  # each rank's gate saw its own tokens
        ref = dict(ref_gate.named_parameters())[name].grad.numpy()
        np.testing.assert_allclose(total(p, group if mp_group is None else mp_group), ref,
                                   err_msg=f"{where}: gate {name}", **TOL)
    first = rank * E if mp_group is None else 0
    for e, expert in enumerate(mine):  # with mp_group every rank holds every expert and routes 1/n of the tokens
        for (name, p), q in zip(expert.named_parameters(), ref_experts[first + e].parameters()):
            want = np.zeros(q.shape) if q.grad is None else q.grad.numpy()
            np.testing.assert_allclose(total(p, mp_group), want, err_msg=f"{where}: expert {first + e} {name}", **TOL)
    return int((ref_picks == -1).sum())


def check_clip(rank, group):
    """Expert gradients' squares summed over the group, the others this rank's only."""
    rng = np.random.default_rng(3)
    grads = [rng.standard_normal((3, 2)) * (1 + r) for r in range(2) for _ in range(2)]  # [rank][expert, shared]
    mine = grads[2 * rank:2 * rank + 2]
    expert_p, shared_p = pycoll.to_tensor(np.zeros((3, 2))), pycoll.to_tensor(np.zeros((3, 2)))
    expert_p.name, shared_p.name = "expert_w", "gate_w"
    clip = ClipGradForMOEByGlobalNorm(1.0, is_expert_param_func=lambda p: p.name.startswith("expert"),
                                      moe_group=group)
    out = clip([(expert_p, pycoll.to_tensor(mine[0])), (shared_p, pycoll.to_tensor(mine[1]))])
    norm = math.sqrt(sum((grads[2 * r] ** 2).sum() for r in range(2)) + (mine[1] ** 2).sum())
    for (p, g), want in zip(out, mine):
        np.testing.assert_allclose(g.numpy(), want * (1.0 / max(norm, 1.0)), err_msg=f"clip {p.name}", **TOL)
    # as an optimizer's grad_clip: the optimizer gives the clip each gradient's parameter
    expert_p.stop_gradient = shared_p.stop_gradient = False
    expert_p.grad, shared_p.grad = pycoll.to_tensor(mine[0]), pycoll.to_tensor(mine[1])
    pycoll.optimizer.SGD(1.0, parameters=[expert_p, shared_p], grad_clip=clip).step()
    for p, want in zip((expert_p, shared_p), mine):
        np.testing.assert_allclose(p.numpy(), -want / max(norm, 1.0), err_msg=f"step {p.name}", **TOL)
    try:
        clip.clip([mine[0], mine[1]])
    except ValueError as e:
        assert "params_grads" in str(e), e
    else:
        raise AssertionError("clip without parameters over a spread moe_group must refuse")


def check_all_dropped(rank, world, group):
    """Rank 0's tokens use up every expert's capacity, so every choice of rank 1 is dropped: its
    output is zeros, and its backward still makes the exchanges rank 0's makes (before, it made
    none and rank 0's alltoall failed)."""
    experts = pycoll.nn.LayerList([pycoll.nn.Linear(4, 4) for _ in range(2)])
    gate = GShardGate(4, 2, world, topk=2, capacity=(0.25, 0.25), random_routing=False, group=group)
    moe = MoELayer(d_model=4, experts=experts, gate=gate, moe_group=group)
    x = pycoll.to_tensor(np.random.RandomState(10 + rank).randn(1, 8, 4))  # float64, as the Linears (the default dtype)
    x.stop_gradient = False
    y = moe(x)
    kept = int((y.abs().sum(-1) > 0).sum())
    assert (kept > 0) == (rank == 0), (rank, kept)
    (y.sum() + moe.gate.get_loss()).backward()  # rank 0's backward exchanges with rank 1's
    assert x.grad is not None and list(x.grad.shape) == [1, 8, 4]
    dist.barrier()


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "alone":
        for kind in ("naive", "gshard", "switch"):
            assert (check_layer(1, 0, None, kind, capacity=(0.3, 0.3)) > 0) == (kind != "naive"), kind
        print("moe one rank OK rank=0", flush=True)
        return
    dist.init_parallel_env()
    rank, world = dist.get_rank(), dist.get_world_size()
    group = dist.new_group(list(range(world)))
    assert check_layer(world, rank, group, "naive") == 0
    # the choices dropped (by capacity, by GShard's random policy) are checked too: some are
    assert check_layer(world, rank, group, "gshard", capacity=(0.6, 2.4)) > 0       # random routing
    assert check_layer(world, rank, group, "switch", capacity=(0.4, 2.4)) > 0       # jitter
    assert check_layer(world, rank, group, "switch", capacity=(0.4, 0.5), training=False) > 0
    check_layer(world, rank, None, "naive", mp_group=group)
    check_all_dropped(rank, world, group)
    check_clip(rank, group)
    print(f"moe layer OK rank={rank}", flush=True)


if __name__ == "__main__":
    main()
