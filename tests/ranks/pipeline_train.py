"""Pipeline parallelism through fleet against one process training the whole model on the whole
batch (same initial weights, NumPy-drawn by layer index), and against Paddle 3.3.1's CPU build.

``pp2`` (2 ranks): an MLP (with a lambda between layers) under Momentum and a global-norm clip:
losses, eval_batch and final weights equal the single-process reference and the numbers Paddle
gave for the same script (its last steps go through a GradScaler, which scales on GPUs only);
then a model whose embedding is tied to its output projection (``SharedLayerDesc`` on both
stages), a sequence length that changes between batches and a learning-rate scheduler: the
shared weight stays equal on both stages and matches the reference (whose clip counts it once).
A batch of the wrong size is refused by name. Then inputs given as a tuple and a tuple of two
tensors (one without gradient) sent between the stages, against gradients by hand (through a
gradient-merge optimizer from distributed_optimizer); last, a dict sent between the stages and a
batch given as an iterator of micro-batches, against one process.
In every mode: each stage raises alike, before anything is sent, for a batch the first and last
stages refuse, eval_batch on stage 0 against train_batch elsewhere, and an optimizer that skipped
distributed_optimizer on the last stage; and with a folder (argv[2]) save_state_dict writes
paddle's file names there, which set_state_dir loads into a fresh PipelineLayer.
``dp2pp2`` (4 ranks): two pipelines, each on half of every batch, gradients averaged over dp.
``pp2mp2`` (4 ranks): each stage split over two model-parallel ranks; the clip spans both.
``pp4`` (4 ranks): four stages, so two of them receive, compute and send in both directions.
"""
import os
import sys
import warnings

import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
from fleet_afresh import init_afresh
from pycoll.distributed import fleet
from pycoll.distributed.fleet.meta_parallel import (ColumnParallelLinear, LayerDesc, PipelineLayer, RowParallelLinear,
                                                    SharedLayerDesc)

TOL = dict(rtol=2e-6, atol=2e-6)
MBS, ACC = 2, 4
# Paddle 3.3.1 (CPU build, 2 ranks, pp_degree=2, pipeline_configs use_batch_p2p_comm=False, the
# ParallelEnv._device_id its CPU build lacks set to 0) on the pp2 MLP part of this script:
PADDLE_MLP_LOSSES = [1.46256471, 1.84175801, 1.40731561, 1.59247041]
PADDLE_MLP_EVAL = 1.50640070


def start(dp, pp, mp):
    strategy = fleet.DistributedStrategy()
    strategy.hybrid_configs = {"dp_degree": dp, "mp_degree": mp, "pp_degree": pp}
    strategy.pipeline_configs = {"accumulate_steps": ACC, "micro_batch_size": MBS}
    init_afresh(strategy)  # a second fleet.init would keep the first groups
    return fleet.get_hybrid_communicate_group()


def mlp_weights(extra):
    """Paddle's script's draws: per layer index, weight then bias (``extra``: a last Linear)."""
    init = np.random.default_rng(5)
    shapes = {0: [(4, 8), (8,)], 2: [(8, 8), (8,)], 5: [(8, 3), (3,)]}
    weights = {f"{i}.{kind}": init.standard_normal(s).astype("float32") * 0.5
               for i in range(6) for kind, s in zip(("weight", "bias"), shapes.get(i, []))}
    if extra:
        weights.update({"6.weight": init.standard_normal((3, 3)).astype("float32"), "6.bias": np.zeros(3, "float32")})
    return weights


def mlp_descs(split, extra):
    first = [LayerDesc(ColumnParallelLinear, 4, 8, gather_output=False, has_bias=True), LayerDesc(nn.Tanh),
             LayerDesc(RowParallelLinear, 8, 8, input_is_parallel=True)] if split else \
        [LayerDesc(nn.Linear, 4, 8), LayerDesc(nn.Tanh), LayerDesc(nn.Linear, 8, 8)]
    return first + [lambda x: x * 0.5, LayerDesc(nn.Tanh), LayerDesc(nn.Linear, 8, 3)] + \
        ([LayerDesc(nn.Linear, 3, 3)] if extra else [])


class RefMLP(nn.Layer):
    def __init__(self, weights):
        super().__init__()
        self.l0, self.l2, self.l5, self.l6 = nn.Linear(4, 8), nn.Linear(8, 8), nn.Linear(8, 3), nn.Linear(3, 3)
        self.extra = "6.weight" in weights
        for name, value in weights.items():
            getattr(getattr(self, "l" + name.split(".")[0]), name.split(".")[1]).set_value(value)

    def named(self):
        return {f"{i}.{k}": getattr(getattr(self, f"l{i}"), k) for i in (0, 2, 5, 6) for k in ("weight", "bias")}

    def forward(self, x):
        out = self.l5(pycoll.tanh(self.l2(pycoll.tanh(self.l0(x))) * 0.5))
        return self.l6(out) if self.extra else out

    def parameters(self):
        return [p for name, p in self.named().items() if self.extra or not name.startswith("6.")]


def tied_head(embed, x):
    return pycoll.matmul(x, embed.weight, transpose_y=True)


class RefTied(nn.Layer):
    def __init__(self, weights):
        super().__init__()
        self.embed, self.l1, self.l3 = nn.Embedding(10, 6), nn.Linear(6, 6), nn.Linear(6, 6)
        for name, value in weights.items():
            target = self.embed.weight if name.startswith("shared") else \
                getattr(getattr(self, "l" + name.split(".")[0]), name.split(".")[1])
            target.set_value(value)

    def named(self):
        return {"shared_layers.embed.weight": self.embed.weight,
                **{f"{i}.{k}": getattr(getattr(self, f"l{i}"), k) for i in (1, 3) for k in ("weight", "bias")}}

    def forward(self, ids):
        return tied_head(self.embed, self.l3(pycoll.tanh(self.l1(self.embed(ids)))))


def tied_weights():
    init = np.random.default_rng(7)
    weights = {"shared_layers.embed.weight": init.standard_normal((10, 6)).astype("float32")}
    for i in (1, 3):
        weights[f"{i}.weight"] = init.standard_normal((6, 6)).astype("float32") * 0.5
        weights[f"{i}.bias"] = init.standard_normal(6).astype("float32") * 0.1
    return weights


def place(model, weights, hcg):
    """Set each of this rank's parameters from the whole weights (a split one gets its block)."""
    mp_rank, mp = hcg.get_model_parallel_rank(), hcg.get_model_parallel_world_size()
    for name, p in model.named_parameters():
        value = weights[name]
        if getattr(p, "is_distributed", False):
            axis = 1 if name.startswith("0.") and name.endswith("weight") else 0
            value = np.split(value, mp, axis=axis if value.ndim > 1 else 0)[mp_rank]
        p.set_value(value)


def whole(name, p, hcg, of_grad=False):
    t = p.grad if of_grad else p
    if not getattr(p, "is_distributed", False):
        return t.numpy()
    parts = []
    dist.all_gather(parts, t, group=hcg.get_model_parallel_group())
    axis = 1 if name.startswith("0.") and name.endswith("weight") else 0
    return np.concatenate([x.numpy() for x in parts], axis=axis)


def compare_weights(model, ref, hcg, when):
    named = ref.named()
    for name, p in model.named_parameters():
        np.testing.assert_allclose(whole(name, p, hcg), named[name].numpy(), err_msg=f"{when}: {name}", **TOL)


def check_loss_shape(loss, hcg):
    # paddle's: the last stage's loss keeps its shape ([]), the others receive it as [1]
    assert loss.shape == ([] if hcg.is_last_stage else [1]), loss.shape


def train_mlp(hcg, dp_parts, split=False, paddle=False, stages=2, ckpt=None):
    extra = stages == 4  # four Linears, one per stage: the middle stages receive and send
    weights = mlp_weights(extra)
    layer = PipelineLayer(layers=mlp_descs(split, extra), loss_fn=nn.MSELoss(), topology=hcg.topology(),
                          seg_method="layer:Linear" if extra else "uniform")
    assert layer.segment_parts == ([0, 1, 3, 6, 7] if extra else [0, 3, 6]), layer.segment_parts
    place(layer, weights, hcg)
    ref = RefMLP(weights)
    clip = nn.ClipGradByGlobalNorm(0.5)
    opt = fleet.distributed_optimizer(pycoll.optimizer.Momentum(learning_rate=0.1, momentum=0.9,
                                                                 parameters=layer.parameters(), grad_clip=clip))
    ref_opt = pycoll.optimizer.Momentum(learning_rate=0.1, momentum=0.9, parameters=ref.parameters(), grad_clip=clip)
    model = fleet.distributed_model(layer)
    assert isinstance(model, fleet.meta_parallel.PipelineParallel)
    data, dp_rank = np.random.default_rng(0), hcg.get_data_parallel_rank()
    # the last two steps through a loss scaler (a power of two: scaling and unscaling are exact; on
    # the CPU a GradScaler is off, as paddle's, so only its GPU run scales)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scaler = fleet.distributed_scaler(pycoll.amp.GradScaler(init_loss_scaling=1024.0))
    clipped = False
    for step in range(4):
        xs = [data.standard_normal((8, 4)).astype("float32") for _ in range(dp_parts)]
        ys = [data.standard_normal((8, 3)).astype("float32") for _ in range(dp_parts)]
        x, y = pycoll.to_tensor(np.concatenate(xs)), pycoll.to_tensor(np.concatenate(ys))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # auto_cast computes in float32 (it says so)
            with pycoll.amp.auto_cast(enable=step >= 2):  # float16: the scaler scales after it (paddle's rule)
                loss = model.train_batch([pycoll.to_tensor(xs[dp_rank]), pycoll.to_tensor(ys[dp_rank])], opt,
                                         scaler=scaler if step >= 2 else None)
        check_loss_shape(loss, hcg)
        ref_loss = nn.MSELoss()(ref(x), y)
        ref_loss.backward()
        clipped |= float(np.sqrt(sum(float((p.grad.numpy() ** 2).sum()) for p in ref.parameters()))) > 0.5
        ref_opt.step()
        ref_opt.clear_grad()
        mean = loss.detach().clone()
        dist.all_reduce(mean, op=dist.ReduceOp.AVG, group=hcg.get_data_parallel_group())
        np.testing.assert_allclose(float(mean.numpy().reshape(-1)[0]), float(ref_loss), err_msg=f"loss {step}", **TOL)
        if paddle:
            np.testing.assert_allclose(float(loss.numpy().reshape(-1)[0]), PADDLE_MLP_LOSSES[step], rtol=1e-6)
        compare_weights(layer, ref, hcg, f"step {step}")
    assert clipped, "the clip never acted: make it tighter"
    with pycoll.no_grad():
        ref_out = ref(pycoll.to_tensor(xs[dp_rank]))
        ref_eval = float(nn.MSELoss()(ref_out, pycoll.to_tensor(ys[dp_rank])))
    x_mine, y_mine = pycoll.to_tensor(xs[dp_rank]), pycoll.to_tensor(ys[dp_rank])
    evaluated = model.eval_batch([x_mine, y_mine], compute_loss=True)
    np.testing.assert_allclose(float(evaluated.numpy().reshape(-1)[0]), ref_eval, **TOL)
    if paddle:
        np.testing.assert_allclose(ref_eval, PADDLE_MLP_EVAL, rtol=1e-6)
    outputs = model.eval_batch([x_mine, y_mine])
    assert len(outputs) == ACC
    if hcg.is_last_stage:
        np.testing.assert_allclose(np.concatenate([o.numpy() for o in outputs]), ref_out.numpy(), **TOL)
    refuse_alike(model, hcg, opt, [x_mine, y_mine], stages)
    compare_weights(layer, ref, hcg, "after the refused batches")  # none of them changed a weight
    if ckpt:
        layer_checkpoint(layer, hcg, ckpt, extra, split)
    return float(loss.numpy().reshape(-1)[0])


def raises(fn, kind, *needles):
    try:
        fn()
    except kind as e:
        for needle in needles:
            assert needle in str(e), (needle, str(e))
    else:
        raise AssertionError(f"expected {kind.__name__} with {needles}")


def refuse_alike(model, hcg, opt, data, stages):
    """Every stage raises, none waits: a batch of 6 rows (the first and last stages refuse it, the
    middle ones are told so), eval_batch on stage 0 against train_batch elsewhere, and on the last
    stage an optimizer that skipped fleet.distributed_optimizer."""
    x, y = data
    if hcg.is_first_stage or hcg.is_last_stage:
        raises(lambda: model.train_batch([x[:6], y[:6]], opt), ValueError, "batch size 6",
               "micro_batch_size=2 x accumulate_steps=4 = 8")
    else:
        raises(lambda: model.train_batch(None, opt), ValueError, f"stage(s) [0, {stages - 1}] refused this batch")
    call = (lambda: model.eval_batch(data, compute_loss=True)) if hcg.is_first_stage else \
        (lambda: model.train_batch(data, opt))
    raises(call, ValueError, "stages made different calls", "stage 0 called eval_batch, stage 1 called train_batch")
    raw = pycoll.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
    raises(lambda: model.train_batch(data, raw if hcg.is_last_stage else opt), TypeError,
           f"the optimizer of stage(s) [{stages - 1}] did not go through fleet.distributed_optimizer",
           "fleet.distributed_optimizer(optimizer)")


def layer_checkpoint(layer, hcg, ckpt, extra, split):
    """save_state_dict writes paddle's file names (a function has none; each model-parallel rank
    its own); set_state_dir loads them into a PipelineLayer built afresh."""
    layer.save_state_dict(ckpt)
    dist.barrier()
    held = (0, 1, 2, 4, 5, 6) if extra else (0, 1, 2, 4, 5)  # layers[3] is a lambda
    mp = hcg.get_model_parallel_world_size()
    assert sorted(os.listdir(ckpt)) == [f"layer_{i:02d}-tensor_{m:02d}-model_states.pdparams"
                                        for i in held for m in range(mp)], sorted(os.listdir(ckpt))
    again = PipelineLayer(layers=mlp_descs(split, extra), loss_fn=nn.MSELoss(), topology=hcg.topology(),
                          seg_method="layer:Linear" if extra else "uniform")
    assert any(not np.array_equal(a.numpy(), b.numpy()) for a, b in zip(layer.parameters(), again.parameters()))
    again.set_state_dir(ckpt)
    for (name, a), (_, b) in zip(layer.named_parameters(), again.named_parameters()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=name)


def train_tied(hcg):
    weights = tied_weights()
    descs = [SharedLayerDesc("embed", nn.Embedding, None, "weight", 10, 6), LayerDesc(nn.Linear, 6, 6),
             LayerDesc(nn.Tanh), LayerDesc(nn.Linear, 6, 6),
             SharedLayerDesc("embed", nn.Embedding, tied_head, "weight", 10, 6)]
    layer = PipelineLayer(layers=descs, loss_fn=nn.CrossEntropyLoss(), topology=hcg.topology())
    embed = layer.shared_layers["embed"].weight
    # built from seeds 1234 + index on each stage, then made the first stage's: equal already
    gathered = []
    dist.all_gather(gathered, embed, group=hcg.get_pipe_parallel_group())
    np.testing.assert_array_equal(gathered[0].numpy(), gathered[1].numpy())
    place(layer, weights, hcg)
    ref = RefTied(weights)
    clip = nn.ClipGradByGlobalNorm(0.3)
    sched, ref_sched = (pycoll.optimizer.lr.StepDecay(learning_rate=0.2, step_size=2, gamma=0.5) for _ in range(2))
    opt = fleet.distributed_optimizer(pycoll.optimizer.Momentum(learning_rate=sched, momentum=0.9,
                                                                 parameters=layer.parameters(), grad_clip=clip))
    ref_opt = pycoll.optimizer.Momentum(learning_rate=ref_sched, momentum=0.9, parameters=ref.parameters(),
                                        grad_clip=clip)
    model = fleet.distributed_model(layer)
    data = np.random.default_rng(1)
    for step in range(4):
        length = 3 if step < 2 else 5  # the activations sent change shape between batches
        ids = pycoll.to_tensor(data.integers(0, 10, (8, length)).astype("int64"))
        labels = pycoll.to_tensor(data.integers(0, 10, (8, length)).astype("int64"))
        loss = model.train_batch([ids, labels], opt, lr_scheduler=sched)
        ref_loss = nn.CrossEntropyLoss()(ref(ids), labels)
        ref_loss.backward()
        ref_opt.step()
        ref_opt.clear_grad()
        ref_sched.step()
        np.testing.assert_allclose(float(loss.numpy().reshape(-1)[0]), float(ref_loss), err_msg=f"tied loss {step}",
                                   **TOL)
        compare_weights(layer, ref, hcg, f"tied step {step}")
    assert sched.get_lr() == ref_sched.get_lr() == 0.05, sched.get_lr()
    gathered = []
    dist.all_gather(gathered, embed, group=hcg.get_pipe_parallel_group())
    np.testing.assert_array_equal(gathered[0].numpy(), gathered[1].numpy())


class TupleFirst(nn.Layer):
    """Takes (x, scale) and passes the scale on: a stage output of two tensors, one without grad."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, inputs):
        x, scale = inputs
        return self.fc(x), scale


def train_tuple(hcg):
    """Inputs given as a tuple, and a tuple sent between the stages (only one of them needs a grad)."""
    layer = PipelineLayer([LayerDesc(TupleFirst), lambda t: t[0] * t[1], LayerDesc(nn.Linear, 4, 2)],
                          loss_fn=nn.MSELoss(), topology=hcg.topology())
    init = np.random.default_rng(3)
    weights = {"0.fc.weight": init.standard_normal((4, 4)), "0.fc.bias": init.standard_normal(4),
               "2.weight": init.standard_normal((4, 2)), "2.bias": init.standard_normal(2)}
    weights = {k: v.astype("float32") for k, v in weights.items()}
    place(layer, weights, hcg)
    model = fleet.distributed_model(layer)
    # gradient merge over 2 batches, through distributed_optimizer: its wrapper carries fleet's mark.
    # Twice the same batch from the same weights: one SGD step on the averaged (equal) gradients.
    merge = fleet.DistributedStrategy()
    merge.gradient_merge = True
    merge.gradient_merge_configs = {"k_steps": 2, "avg": True}
    opt = fleet.distributed_optimizer(pycoll.optimizer.SGD(learning_rate=0.1, parameters=layer.parameters()), merge)
    x, scale, y = (init.standard_normal(shape).astype("float32") for shape in ((8, 4), (8, 1), (8, 2)))
    for _ in range(2):
        loss = model.train_batch([(pycoll.to_tensor(x), pycoll.to_tensor(scale)), pycoll.to_tensor(y)], opt)
    w1, b1, w2, b2 = (weights[k] for k in ("0.fc.weight", "0.fc.bias", "2.weight", "2.bias"))
    h = (x @ w1 + b1) * scale
    out = h @ w2 + b2
    np.testing.assert_allclose(float(loss.numpy().reshape(-1)[0]), float(((out - y) ** 2).mean()), **TOL)
    d_out = 2 * (out - y) / out.size  # the mean over the batch, by hand
    expect = {"2.weight": w2 - 0.1 * h.T @ d_out, "2.bias": b2 - 0.1 * d_out.sum(0)}
    d_pre = (d_out @ w2.T) * scale
    expect.update({"0.fc.weight": w1 - 0.1 * x.T @ d_pre, "0.fc.bias": b1 - 0.1 * d_pre.sum(0)})
    for name, p in layer.named_parameters():
        np.testing.assert_allclose(p.numpy(), expect[name], err_msg=name, rtol=1e-5, atol=1e-6)


class DictOut(nn.Layer):
    """A stage output that is a dict, one key holding a list (paddle sends its tensors with keys)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 6)

    def forward(self, x):
        h = self.fc(x)
        return {"hidden": h, "aux": [pycoll.tanh(h), h * 2.0]}


class DictIn(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 3)

    def forward(self, d):
        assert list(d) == ["hidden", "aux"] and isinstance(d["aux"], list) and len(d["aux"]) == 2, d
        return self.fc(d["hidden"] + d["aux"][0] * d["aux"][1])


def train_dict(hcg):
    """A dict sent between the stages, against the same model in one process; the second batch
    comes as an iterator of [inputs, labels] micro-batches, under schedule_mode FThenB (run as 1F1B)."""
    strategy = fleet.DistributedStrategy()
    strategy.pipeline_configs = {"accumulate_steps": 3, "micro_batch_size": 2, "schedule_mode": "FThenB"}
    layer = PipelineLayer([LayerDesc(DictOut), LayerDesc(DictIn)], loss_fn=nn.MSELoss(), topology=hcg.topology())
    init = np.random.default_rng(4)
    weights = {"0.fc.weight": init.standard_normal((4, 6)), "0.fc.bias": init.standard_normal(6),
               "1.fc.weight": init.standard_normal((6, 3)), "1.fc.bias": init.standard_normal(3)}
    weights = {k: (v * 0.5).astype("float32") for k, v in weights.items()}
    place(layer, weights, hcg)
    model = fleet.meta_parallel.PipelineParallel(layer, hcg, strategy)
    opt = fleet.distributed_optimizer(pycoll.optimizer.SGD(learning_rate=0.1, parameters=layer.parameters()))
    ref_first, ref_second = DictOut(), DictIn()
    for name, value in weights.items():
        getattr((ref_first if name[0] == "0" else ref_second).fc, name.split(".")[-1]).set_value(value)
    ref_params = ref_first.parameters() + ref_second.parameters()
    ref_opt = pycoll.optimizer.SGD(learning_rate=0.1, parameters=ref_params)
    for step in range(2):
        x, y = (init.standard_normal(shape).astype("float32") for shape in ((6, 4), (6, 3)))
        data = [pycoll.to_tensor(x), pycoll.to_tensor(y)] if step == 0 else \
            iter([[pycoll.to_tensor(x[i:i + 2]), pycoll.to_tensor(y[i:i + 2])] for i in range(0, 6, 2)])
        loss = model.train_batch(data, opt)
        ref_loss = nn.MSELoss()(ref_second(ref_first(pycoll.to_tensor(x))), pycoll.to_tensor(y))
        ref_loss.backward()
        ref_opt.step()
        ref_opt.clear_grad()
        np.testing.assert_allclose(float(loss.numpy().reshape(-1)[0]), float(ref_loss), err_msg=f"dict {step}", **TOL)
        mine = ref_first if hcg.is_first_stage else ref_second
        for (name, p), q in zip(layer.named_parameters(), mine.parameters()):
            np.testing.assert_allclose(p.numpy(), q.numpy(), err_msg=f"dict {step}: {name}", **TOL)
    short = iter([[pycoll.to_tensor(x[:2]), pycoll.to_tensor(y[:2])]])
    if hcg.is_first_stage or hcg.is_last_stage:
        raises(lambda: model.train_batch(short, opt), ValueError, "ended after 1; accumulate_steps=3 needs 3")


def main():
    mode = sys.argv[1]
    ckpt = os.path.join(sys.argv[2], mode) if len(sys.argv) > 2 else None  # where save_state_dict writes
    rank = None
    if mode == "pp2":
        hcg = start(1, 2, 1)
        rank = dist.get_rank()
        assert (hcg.get_stage_id(), hcg.is_first_stage, hcg.is_last_stage) == (rank, rank == 0, rank == 1)
        assert hcg.get_parallel_mode() == dist.ParallelMode.PIPELINE_PARALLEL
        assert hcg.get_pipe_parallel_group().ranks == [0, 1] and hcg.get_rank_from_stage(1) == 1
        try:
            fleet.distributed_model(nn.Linear(2, 2))
        except TypeError as e:
            assert "pp_degree=2 the model must be a meta_parallel.PipelineLayer, got Linear" in str(e), e
        else:
            raise AssertionError("a plain layer must be refused with pp_degree=2")
        # paddle's axis names and getters (its CPU build printed the same for this job)
        assert hcg.topology().get_hybrid_group_names() == ["data", "pipe", "sharding", "sep", "context", "model"]
        assert (hcg.get_sep_parallel_rank(), hcg.get_sep_parallel_world_size()) == (0, 1)
        assert hcg.get_check_parallel_group().ranks == [0, 1]
        raises(hcg.get_sep_parallel_group, RuntimeError, "sep_degree is 1, so there is no sep group")
        raises(hcg.get_p2p_groups, RuntimeError, "PADDLE_USE_FOUR_DIRECTIONS_P2P")
        last = train_mlp(hcg, 1, paddle=True, ckpt=ckpt)
        train_tied(hcg)
        train_tuple(hcg)
        train_dict(hcg)
    elif mode == "dp2pp2":
        hcg = start(2, 2, 1)
        rank = dist.get_rank()
        assert hcg.topology().get_comm_list("pipe") == [[0, 1], [2, 3]]
        assert hcg.get_data_parallel_group().ranks == [rank % 2, rank % 2 + 2]
        # paddle's check group: the ranks of one data index (both stages of one pipeline)
        assert hcg.get_check_parallel_group().ranks == [rank - rank % 2, rank - rank % 2 + 1]
        last = train_mlp(hcg, 2, ckpt=ckpt)
    elif mode == "pp4":
        hcg = start(1, 4, 1)
        rank = dist.get_rank()
        # launched with PADDLE_USE_FOUR_DIRECTIONS_P2P=1: send_next, send_prev, recv_next, recv_prev
        nxt, prev = (rank + 1) % 4, (rank - 1) % 4
        assert [g.ranks for g in hcg.get_p2p_groups()] == [sorted(p) for p in ((rank, nxt), (prev, rank), (rank, nxt),
                                                                                (prev, rank))]
        last = train_mlp(hcg, 1, stages=4, ckpt=ckpt)
    else:
        hcg = start(1, 2, 2)
        rank = dist.get_rank()
        assert hcg.get_pipe_parallel_group().ranks == [rank % 2, rank % 2 + 2]
        assert hcg.get_model_parallel_group().ranks == [rank - rank % 2, rank - rank % 2 + 1]
        last = train_mlp(hcg, 1, split=True, ckpt=ckpt)
    print(f"pipeline OK rank={rank} mode={mode} last_loss={last:.8f}", flush=True)


if __name__ == "__main__":
    main()
