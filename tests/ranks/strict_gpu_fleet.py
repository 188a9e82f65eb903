"""The fleet part of strict_gpu_training.py (2 ranks, GPU tensors on the strict CuPy stand-in),
each against the same model trained on CPU tensors in one process on the whole batch:

- mp_degree=2: VocabParallelEmbedding -> ColumnParallelLinear -> RowParallelLinear -> a
  ColumnParallelLinear head -> ParallelCrossEntropy, wrapped by fleet.distributed_model
  (TensorParallel) and trained through fleet.distributed_optimizer (Momentum, ClipGradByGlobalNorm);
  then sequence_parallel_utils' ScatterOp / Column- and RowSequenceParallelLinear / GatherOp with
  a sequence-parallel LayerNorm and its allreduce hooks;
- pp_degree=2: a PipelineLayer trained by train_batch (micro-batches sent between the stages
  over NCCL's send/recv), Momentum;
- sharding_degree=2: ShardingParallel from fleet.distributed_model, stage 1, Adam.
"""
import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
import pycoll.nn.functional as F
from pycoll.distributed import fleet
from pycoll.distributed.fleet import meta_parallel as mpu
from pycoll.distributed.fleet.utils import sequence_parallel_utils as spu
from fleet_afresh import init_afresh
from strict_gpu_device import on, same

V, H, FFN, TOKENS = 8, 4, 8, 6


def start(**degrees):
    strategy = fleet.DistributedStrategy()
    strategy.hybrid_configs = {"dp_degree": 1, **degrees}
    strategy.pipeline_configs = {"accumulate_steps": 2, "micro_batch_size": 2}
    strategy.sharding_configs = {"stage": 1}
    init_afresh(strategy)  # a second fleet.init would keep the first groups
    return fleet.get_hybrid_communicate_group()


def weights(shapes, seed):
    init = np.random.default_rng(seed)
    return {name: (init.standard_normal(shape) * 0.5).astype("float32") for name, shape in shapes.items()}


class Vocab(nn.Layer):
    """Embedding -> column -> tanh -> row (+ residual) -> head -> cross-entropy, split or plain."""

    SHAPES = {"embed.weight": (V, H), "col.weight": (H, FFN), "col.bias": (FFN,), "row.weight": (FFN, H),
              "row.bias": (H,), "head.weight": (H, V)}
    SPLIT = {"embed.weight": 0, "col.weight": 1, "col.bias": 0, "row.weight": 0, "head.weight": 1}

    def __init__(self, parallel, rank, n):
        super().__init__()
        self.parallel = parallel
        if parallel:
            self.embed = mpu.VocabParallelEmbedding(V, H)
            self.col = mpu.ColumnParallelLinear(H, FFN, has_bias=True, gather_output=False)
            self.row = mpu.RowParallelLinear(FFN, H, has_bias=True, input_is_parallel=True)
            self.head = mpu.ColumnParallelLinear(H, V, has_bias=False, gather_output=False)
            self.loss = mpu.ParallelCrossEntropy()
        else:
            self.embed, self.col, self.row = nn.Embedding(V, H), nn.Linear(H, FFN), nn.Linear(FFN, H)
            self.head = nn.Linear(H, V, bias_attr=False)
        for name, p in self.named_parameters():
            value = WEIGHTS[name]
            p.set_value(np.split(value, n, axis=self.SPLIT[name])[rank] if parallel and name in self.SPLIT else value)

    def forward(self, ids, labels):
        h = self.embed(ids)
        h = self.row(pycoll.tanh(self.col(h))) + h
        logits = self.head(h)
        if self.parallel:
            return self.loss(logits, labels).mean()
        return F.cross_entropy(logits, labels.unsqueeze(-1))


WEIGHTS = weights(Vocab.SHAPES, 3)


def whole(p, name, axes, group):
    """A parameter whole again: its blocks gathered over ``group`` along its split axis."""
    if name not in axes:
        return p
    parts = []
    dist.all_gather(parts, p, group=group)
    return pycoll.concat(parts, axis=axes[name])


def tensor_parallel(rank, n):
    hcg = start(mp_degree=n)
    group = hcg.get_model_parallel_group()
    with on("gpu"):
        layer = Vocab(True, rank, n)
    with on("cpu"):
        reference = Vocab(False, 0, 1)
    model = fleet.distributed_model(layer)
    assert isinstance(model, mpu.TensorParallel), type(model)
    opt = fleet.distributed_optimizer(pycoll.optimizer.Momentum(
        learning_rate=0.5, parameters=model.parameters(), grad_clip=nn.ClipGradByGlobalNorm(0.1)))
    ref_opt = pycoll.optimizer.Momentum(learning_rate=0.5, parameters=reference.parameters(),
                                        grad_clip=nn.ClipGradByGlobalNorm(0.1))
    data = np.random.default_rng(4)
    for step in range(3):
        ids, labels = data.integers(0, V, (2, TOKENS)), data.integers(0, V, (2, TOKENS))
        loss = model(pycoll.to_tensor(ids), pycoll.to_tensor(labels))
        loss.backward()
        ref_loss = reference(pycoll.to_tensor(ids, place="cpu"), pycoll.to_tensor(labels, place="cpu"))
        ref_loss.backward()
        same(loss, ref_loss, f"TensorParallel loss, step {step}")
        assert sum(float((p.grad ** 2).sum()) for p in reference.parameters()) > 0.1 ** 2, "the clip does not act"
        for name, p in layer.named_parameters():
            same(whole(p.grad, name, Vocab.SPLIT, group), dict(reference.named_parameters())[name].grad,
                 f"TensorParallel step {step}: gradient of {name}")
        opt.step(), ref_opt.step()
        opt.clear_grad(), ref_opt.clear_grad()
    for name, p in layer.named_parameters():
        same(whole(p, name, Vocab.SPLIT, group), dict(reference.named_parameters())[name], f"TensorParallel: {name}")
    return "mp2(vocab,column,row,parallel_cross_entropy,TensorParallel,clip)"


S, B = 4, 2
SEQ = weights({"norm.weight": (H,), "norm.bias": (H,), "col.weight": (H, FFN), "col.bias": (FFN,),
               "row.weight": (FFN, H), "row.bias": (H,)}, 9)
SEQ_SPLIT = {"col.weight": 1, "col.bias": 0, "row.weight": 0}


class SequenceBlock(nn.Layer):
    def __init__(self, parallel, rank, n):
        super().__init__()
        self.parallel = parallel
        self.norm = nn.LayerNorm(H)
        if parallel:
            self.col = spu.ColumnSequenceParallelLinear(H, FFN, has_bias=True, gather_output=False)
            self.row = spu.RowSequenceParallelLinear(FFN, H, has_bias=True, input_is_parallel=True)
            spu.mark_as_sequence_parallel_parameter(self.norm.weight)
            spu.mark_as_sequence_parallel_parameter(self.norm.bias)
        else:
            self.col, self.row = nn.Linear(H, FFN), nn.Linear(FFN, H)
        for name, p in self.named_parameters():
            value = SEQ[name]
            p.set_value(np.split(value, n, axis=SEQ_SPLIT[name])[rank] if parallel and name in SEQ_SPLIT else value)

    def forward(self, x):
        if self.parallel:
            x = spu.ScatterOp.apply(x)
        out = self.row(pycoll.tanh(self.col(self.norm(x)))) + x
        return spu.GatherOp.apply(out) if self.parallel else out


def sequence_parallel(rank, n):
    group = fleet.get_hybrid_communicate_group().get_model_parallel_group()  # mp_degree=n still
    with on("gpu"):
        block = SequenceBlock(True, rank, n)
    with on("cpu"):
        reference = SequenceBlock(False, 0, 1)
    spu.register_sequence_parallel_allreduce_hooks(block, 1, False)
    opt = pycoll.optimizer.SGD(learning_rate=0.2, parameters=block.parameters())
    ref_opt = pycoll.optimizer.SGD(learning_rate=0.2, parameters=reference.parameters())
    data = np.random.default_rng(6)
    for step in range(2):
        x, target = (data.uniform(-1, 1, (S, B, H)).astype("float32") for _ in range(2))
        loss = ((block(pycoll.to_tensor(x)) - pycoll.to_tensor(target)) ** 2).mean()
        ref_loss = ((reference(pycoll.to_tensor(x, place="cpu")) - pycoll.to_tensor(target, place="cpu")) ** 2).mean()
        loss.backward(), ref_loss.backward()
        same(loss, ref_loss, f"sequence parallel loss, step {step}")
        opt.step(), ref_opt.step()
        opt.clear_grad(), ref_opt.clear_grad()
    for name, p in block.named_parameters():
        same(whole(p, name, SEQ_SPLIT, group), dict(reference.named_parameters())[name], f"sequence parallel: {name}")
    return "sequence_parallel"


PIPE = weights({"0.weight": (4, 8), "0.bias": (8,), "2.weight": (8, 8), "2.bias": (8,),
                "4.weight": (8, 3), "4.bias": (3,)}, 5)


def pipe_layers(desc):
    make = (lambda cls, *a: mpu.LayerDesc(cls, *a)) if desc else (lambda cls, *a: cls(*a))
    return [make(nn.Linear, 4, 8), make(nn.Tanh), make(nn.Linear, 8, 8), make(nn.Tanh), make(nn.Linear, 8, 3)]


def pipeline(rank, n):
    hcg = start(pp_degree=n)
    with on("gpu"):
        layer = mpu.PipelineLayer(layers=pipe_layers(True), loss_fn=nn.MSELoss(), topology=hcg.topology())
    with on("cpu"):
        reference = nn.Sequential(*pipe_layers(False))
    for name, p in list(layer.named_parameters()) + list(reference.named_parameters()):
        p.set_value(PIPE[name])
    model = fleet.distributed_model(layer)
    assert isinstance(model, mpu.PipelineParallel), type(model)
    opt = fleet.distributed_optimizer(pycoll.optimizer.Momentum(learning_rate=0.1, parameters=layer.parameters()))
    ref_opt = pycoll.optimizer.Momentum(learning_rate=0.1, parameters=reference.parameters())
    data = np.random.default_rng(8)
    for step in range(3):
        x, y = data.standard_normal((4, 4)).astype("float32"), data.standard_normal((4, 3)).astype("float32")
        loss = model.train_batch([pycoll.to_tensor(x), pycoll.to_tensor(y)], opt)
        ref_loss = nn.MSELoss()(reference(pycoll.to_tensor(x, place="cpu")), pycoll.to_tensor(y, place="cpu"))
        ref_loss.backward()
        ref_opt.step()
        ref_opt.clear_grad()
        same(loss.reshape([]), ref_loss, f"pipeline loss, step {step}")
    named = dict(reference.named_parameters())
    for name, p in layer.named_parameters():
        same(p, named[name], f"pipeline: {name}")
    return "pp2(train_batch)"


def sharding_parallel(rank, n):
    hcg = start(sharding_degree=n)
    with on("gpu"):
        pycoll.seed(11)
        layer = nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 3))
    with on("cpu"):
        pycoll.seed(11)
        reference = nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 3))
    model = fleet.distributed_model(layer)
    assert isinstance(model, mpu.ShardingParallel), type(model)
    opt = fleet.distributed_optimizer(pycoll.optimizer.Adam(learning_rate=0.05, parameters=model.parameters()))
    ref_opt = pycoll.optimizer.Adam(learning_rate=0.05, parameters=reference.parameters())
    data = np.random.default_rng(2)
    for step in range(3):
        x = data.standard_normal((2 * n, 4)).astype("float32")
        (model(pycoll.to_tensor(np.split(x, n)[rank])) ** 2).mean().backward()
        (reference(pycoll.to_tensor(x, place="cpu")) ** 2).mean().backward()
        opt.step(), ref_opt.step()
        opt.clear_grad(), ref_opt.clear_grad()
    state = [v.numpy().nbytes for v in opt.state_dict().values() if hasattr(v, "numpy")]
    shares = []
    dist.all_gather_object(shares, sum(state), group=hcg.get_sharding_parallel_group())
    assert min(shares) > 0 and max(shares) < sum(shares), shares  # each rank holds its share
    for (name, p), q in zip(layer.named_parameters(), reference.parameters()):
        same(p, q, f"ShardingParallel: {name}")
    return "sharding2(ShardingParallel)"


def run(rank, n):
    return " ".join(part(rank, n) for part in (tensor_parallel, sequence_parallel, pipeline, sharding_parallel))
