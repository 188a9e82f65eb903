"""paddle's dynamic semi-auto loop, eagerly: a batch split over the data-parallel mesh dimension
(shard_tensor / shard_dataloader), a model whose parameters are whole on every rank or split by
shard_layer, loss.backward(), optimizer.step() — against the same model trained in one process
on the whole batch, on every rank.

    dp      2 ranks, mesh [0, 1] ("dp"): a plain layer (its parameters never made distributed),
            AdamW; a mean loss, a sum loss, a mean loss plus an L2 penalty of the parameters;
            batches from shard_dataloader and from shard_tensor
    mp      2 ranks, mesh [0, 1]: paddle's tutorial MLP, its weights cut and used by matmul, on
            the whole batch; then Linears cut along the dimension that splits the batch; then
            dist.parallelize's plans on an Embedding (its vocabulary, then its embedding
            dimension) beside a Linear
    hybrid  4 ranks, mesh [[0, 1], [2, 3]] ("dp" x "mp"): fc1's weight Shard(1), fc2's Shard(0)
            along "mp", each batch split along "dp"; then with ShardingStage1 over "dp", and the
            same through dist.parallelize (ColWiseParallel, RowWiseParallel, sharding_level 1);
            the first two also with a gradient clip that acts (global norm, per-tensor norm)

Every step's loss, read as paddle reads it (float() of the Partial result), must equal the
single-process loss (rtol 1e-5), and so must the parameters after training (rtol 1e-5,
atol 1e-6); the loss's placements must be paddle's (Partial AVG / SUM along "dp").
"""
import copy
import sys

import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
import pycoll.nn.functional as F
from pycoll.distributed import Partial, ReduceType, Replicate, Shard

IN, HIDDEN, OUT, BATCH, STEPS = 8, 16, 4, 8, 4
TOL = dict(rtol=1e-5, atol=1e-6)
rng = np.random.default_rng(5)
X = rng.standard_normal((STEPS, BATCH, IN)).astype(np.float32)
Y = rng.standard_normal((STEPS, BATCH, OUT)).astype(np.float32)


class MLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(IN, HIDDEN)
        self.fc2 = nn.Linear(HIDDEN, OUT)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


LOSSES = {
    "mean": (lambda m, x, y: F.mse_loss(m(x), y), ReduceType.kRedAvg),
    "sum": (lambda m, x, y: F.mse_loss(m(x), y, reduction="sum"), ReduceType.kRedSum),
    # a sum with a Partial value makes it whole first (paddle's): the loss is Replicate
    "mean+l2": (lambda m, x, y: F.mse_loss(m(x), y) + 0.01 * sum((p * p).sum() for p in m.parameters()),
                None),
}


def whole(p):
    return dist.unshard_dtensor(p).numpy() if p.is_dist() else p.numpy()


def train(model, batches, loss_fn, wrap=None, clip=None):
    opt = pycoll.optimizer.AdamW(learning_rate=0.05, parameters=model.parameters(), grad_clip=clip)
    opt = opt if wrap is None else wrap(opt)
    losses, placements = [], None
    for x, y in batches:
        loss = loss_fn(model, x, y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
        placements = getattr(loss, "placements", None)
    state = {k: (v, getattr(v, "placements", None), v.numpy()) for k, v in opt.state_dict().items()}
    return losses, [whole(p) for p in model.parameters()], placements, state


def twin(layer):
    """A deep copy of ``layer`` under its parameters' names, so that optimizer states key alike
    (paddle's deepcopy renames a parameter <name>_deepcopy_N, and so does pycoll's)."""
    copied = copy.deepcopy(layer)
    for mine, theirs in zip(copied.parameters(), layer.parameters()):
        mine.name = theirs.name
    return copied


def compare(what, model, reference, batches, loss_kind, wrap=None, state_placements=None, loss_placements=None,
            clip=None):
    """Train ``model`` on ``batches`` (optimizer ``wrap``ped) and ``reference`` in one process,
    both with gradient ``clip``; ``state_placements`` maps parameter names to the placements their
    moments must have."""
    loss_fn, reduce_type = LOSSES[loss_kind]
    ref_losses, ref_params, _, ref_state = train(
        reference, [(pycoll.to_tensor(x), pycoll.to_tensor(y)) for x, y in zip(X, Y)], loss_fn, clip=clip)
    losses, params, placements, state = train(model, batches, loss_fn, wrap, clip)
    if state_placements is not None:  # the moments, whole, are the reference's; sharded as asked
        assert sorted(state) == sorted(ref_state), (sorted(state), sorted(ref_state))
        for key, (value, where, array) in state.items():
            np.testing.assert_allclose(array, ref_state[key][2], **TOL, err_msg=f"{what}: state {key}")
            name = next((n for n in state_placements if key.startswith(n + "_moment")), None)
            want = None if name is None else state_placements[name]
            assert where == want, f"{what}: state {key} has placements {where}, want {want}"
        # the state loads back: this optimizer's own (distributed) entries, and the whole state
        for saved in ({k: v for k, (v, _, _) in state.items()}, {k: v for k, (v, _, _) in ref_state.items()}):
            fresh = wrap(pycoll.optimizer.AdamW(learning_rate=0.05, parameters=model.parameters(), grad_clip=clip))
            fresh.set_state_dict(saved)
            for key, value in fresh.state_dict().items():
                np.testing.assert_allclose(value.numpy(), ref_state[key][2], **TOL, err_msg=f"{what}: loaded {key}")
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-5, err_msg=f"{what}: losses")
    for p, ref in zip(params, ref_params):
        np.testing.assert_allclose(p, ref, **TOL, err_msg=f"{what}: parameters")
    mesh_ndim = len(placements)
    want = loss_placements or [Partial(reduce_type) if reduce_type is not None else Replicate()] + [Replicate()] * (mesh_ndim - 1)
    if placements != want:
        raise AssertionError(f"{what}: the loss's placements are {placements}, paddle's {want}")


def split(mesh, placements):
    return [(dist.shard_tensor(x, mesh, placements), dist.shard_tensor(y, mesh, placements)) for x, y in zip(X, Y)]


def dp():
    mesh = dist.ProcessMesh([0, 1], dim_names=["dp"])
    for loss_kind in LOSSES:
        pycoll.seed(1)
        reference = MLP()
        compare(f"shard_tensor, {loss_kind} loss", twin(reference), reference, split(mesh, [Shard(0)]),
                loss_kind)

    class Pairs(pycoll.io.Dataset):
        def __getitem__(self, i):
            return X.reshape(-1, IN)[i], Y.reshape(-1, OUT)[i]

        def __len__(self):
            return STEPS * BATCH

    # ShardingStage1 leaves plain parameters alone (paddle's rule) and shards those of shard_layer;
    # ShardingStage2 and 3 in the eager loop update alike (their gradients and parameters stay whole
    # there; paddle's stage 3 gives the same updates, a probe ran its documented example)
    for stage, layered in ((dist.ShardingStage1, False), (dist.ShardingStage1, True), (dist.ShardingStage2, True),
                           (dist.ShardingStage3, True), (dist.ShardingStage3, False)):
        pycoll.seed(1)
        reference = MLP()
        model = twin(reference)
        if layered:
            dist.shard_layer(model, mesh)
        placements = {p.name: [Shard(0)] for p in model.parameters()} if layered else {}
        compare(f"{stage.__name__}, {'shard_layer' if layered else 'plain'} parameters", model, reference,
                split(mesh, [Shard(0)]), "mean", lambda opt: dist.shard_optimizer(opt, stage("dp", mesh)),
                placements)

    # a bias of 3 cut 2 + 1: rank 1's block has one element, and its beta powers stay one value
    small = dist.shard_layer(nn.Linear(4, 3), mesh)
    opt = dist.shard_optimizer(pycoll.optimizer.AdamW(0.1, parameters=small.parameters()), dist.ShardingStage1("dp", mesh))
    small(dist.shard_tensor(pycoll.ones([4, 4]), mesh, [Shard(0)])).mean().backward()
    opt.step()
    state = opt.state_dict()
    assert state[f"{small.bias.name}_moment1_0"].placements == [Shard(0)]
    beta = state[f"{small.bias.name}_beta1_pow_acc_0"]
    assert beta.placements is None and beta.shape == [1], (beta.placements, beta.shape)

    loader = dist.shard_dataloader(pycoll.io.DataLoader(Pairs(), batch_size=BATCH), meshes=[mesh], shard_dims="dp")
    pycoll.seed(1)
    reference = MLP()
    compare("shard_dataloader", twin(reference), reference, loader(), "mean")


class TutorialMLP(nn.Layer):
    """paddle's auto-parallel tutorial: the weights cut for model parallelism, used by matmul."""

    def __init__(self, mesh=None):
        super().__init__()
        self.w0 = self.create_parameter([IN, HIDDEN])
        self.w1 = self.create_parameter([HIDDEN, OUT])
        if mesh is not None:
            self.w0 = dist.shard_tensor(self.w0, mesh, [Shard(1)])
            self.w1 = dist.shard_tensor(self.w1, mesh, [Shard(0)])

    def forward(self, x):
        return pycoll.matmul(F.relu(pycoll.matmul(x, self.w0)), self.w1)


def mp():
    mesh = dist.ProcessMesh([0, 1], dim_names=["x"])
    pycoll.seed(2)
    reference = TutorialMLP()
    model = TutorialMLP(mesh)
    model.w0.set_value(reference.w0)  # the whole values: each rank keeps its block
    model.w1.set_value(reference.w1)
    whole = [(pycoll.to_tensor(x), pycoll.to_tensor(y)) for x, y in zip(X, Y)]
    compare("matmul by cut weights", model, reference, whole, "mean", loss_placements=[Replicate()])

    # a Linear cut along the very mesh dimension that splits the batch: the batch is made whole
    # there first (paddle's reshard), the layer computes as column / row parallel, and its result
    # is split back like the batch
    pycoll.seed(1)
    reference = MLP()
    model = twin(reference)

    def shard_fn(name, layer, process_mesh):
        if name in ("fc1", "fc2"):
            layer.weight = dist.shard_tensor(layer.weight, process_mesh, [Shard(1 if name == "fc1" else 0)])

    dist.shard_layer(model, mesh, shard_fn)
    compare("a Linear cut along the batch's dimension", model, reference, split(mesh, [Shard(0)]), "mean")
    embedding_plans()


class Tagger(nn.Layer):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.fc = nn.Linear(4, 3)

    def forward(self, ids):
        return self.fc(self.emb(ids))


def embedding_plans():
    """parallelize's RowWiseParallel / ColWiseParallel on an nn.Embedding split its vocabulary /
    its embedding dimension (paddle's; they were refused) and train as one process does."""
    mesh = dist.ProcessMesh([0, 1], dim_names=["mp"])
    ids = [pycoll.to_tensor(rng.integers(0, 10, (4, 5)).astype(np.int64)) for _ in range(STEPS)]
    targets = [pycoll.to_tensor(rng.standard_normal((4, 5, 3)).astype(np.float32)) for _ in range(STEPS)]
    for plan, dim in ((dist.RowWiseParallel, 0), (dist.ColWiseParallel, 1)):
        pycoll.seed(3)
        reference = Tagger()
        model = twin(reference)
        config = {"mp_config": {"parallelize_plan": {"emb": plan(), "fc": dist.ColWiseParallel()}}}
        model, opt = dist.parallelize(model, pycoll.optimizer.SGD(0.1, parameters=model.parameters()), mesh, config)
        assert model.emb.weight.placements == [Shard(dim)], model.emb.weight.placements
        ref_opt = pycoll.optimizer.SGD(0.1, parameters=reference.parameters())
        for step, (x, y) in enumerate(zip(ids, targets)):
            for net, optimizer in ((model, opt), (reference, ref_opt)):
                loss = F.mse_loss(net(x), y)
                loss.backward()
                optimizer.step()
                optimizer.clear_grad()
                if net is model:
                    got = float(loss)
            np.testing.assert_allclose(got, float(loss), **TOL, err_msg=f"{plan.__name__} step {step}")
        for p, q in zip(model.parameters(), reference.parameters()):
            np.testing.assert_allclose(whole(p), q.numpy(), **TOL, err_msg=f"{plan.__name__}: {q.name}")


def hybrid():
    mesh = dist.ProcessMesh([[0, 1], [2, 3]], dim_names=["dp", "mp"])
    pycoll.seed(1)
    reference = MLP()
    model = twin(reference)

    def shard_fn(name, layer, process_mesh):
        if name == "fc1":
            layer.weight = dist.shard_tensor(layer.weight, process_mesh, [Replicate(), Shard(1)])
        elif name == "fc2":
            layer.weight = dist.shard_tensor(layer.weight, process_mesh, [Replicate(), Shard(0)])

    dist.shard_layer(model, mesh, shard_fn)
    compare("dp x mp", model, reference, split(mesh, [Shard(0), Replicate()]), "mean")
    # a global-norm clip that acts: the norm is the whole gradients', the cut weights' pieces included
    pycoll.seed(1)
    reference = MLP()
    model = twin(reference)
    dist.shard_layer(model, mesh, shard_fn)
    compare("dp x mp, clipped", model, reference, split(mesh, [Shard(0), Replicate()]), "mean",
            clip=nn.ClipGradByGlobalNorm(0.05))

    # ShardingStage1 over "dp": the moments of fc1.weight ([Replicate(), Shard(1)]) are cut by rows,
    # those of fc2.weight ([Replicate(), Shard(0)]) by columns, the biases' by their one dimension
    pycoll.seed(1)
    reference = MLP()
    model = twin(reference)
    dist.shard_layer(model, mesh, shard_fn)
    names = {p.name: p for p in model.parameters()}
    placements = {name: [Shard(1 if p.placements[1] == Shard(0) else 0), p.placements[1]] for name, p in names.items()}
    compare("dp x mp, ShardingStage1('dp')", model, reference, split(mesh, [Shard(0), Replicate()]), "mean",
            lambda opt: dist.shard_optimizer(opt, dist.ShardingStage1("dp", mesh)), placements)
    pycoll.seed(1)  # each gradient clipped by its whole norm, over the blocks and the cut pieces
    reference = MLP()
    model = twin(reference)
    dist.shard_layer(model, mesh, shard_fn)
    placements = {p.name: placements[name] for p, name in zip(model.parameters(), names)}
    compare("dp x mp, ShardingStage1('dp'), clipped", model, reference, split(mesh, [Shard(0), Replicate()]), "mean",
            lambda opt: dist.shard_optimizer(opt, dist.ShardingStage1("dp", mesh)), placements,
            clip=nn.ClipGradByNorm(0.05))

    # the intermediate API: parallelize with a plan per layer and sharding_level 1, on set_mesh's mesh
    pycoll.seed(1)
    reference = MLP()
    model = twin(reference)
    seen = []
    dist.auto_parallel.set_mesh(mesh)
    config = {"dp_config": {"sharding_level": 1},
              "mp_config": {"parallelize_plan": {
                  "fc1": [dist.ColWiseParallel(), dist.PrepareLayerInput(lambda process_mesh: lambda layer, args: seen.append(process_mesh))],
                  "fc[2]": dist.RowWiseParallel()}}}  # keys are regular expressions
    model, opt = dist.parallelize(model, pycoll.optimizer.AdamW(0.05, parameters=model.parameters()), config=config)
    assert (model.fc1.weight.placements, model.fc1.bias.placements) == ([Replicate(), Shard(1)], [Replicate(), Shard(0)])
    assert (model.fc2.weight.placements, model.fc2.bias.placements) == ([Replicate(), Shard(0)], [Replicate()] * 2)
    assert isinstance(opt, dist.auto_parallel.ShardOptimizer) and isinstance(opt.sharding_stage, dist.ShardingStage1)
    placements = {model.fc1.weight.name: [Shard(0), Shard(1)],
                  model.fc1.bias.name: [Replicate(), Shard(0)],  # already cut along its one dimension
                  model.fc2.weight.name: [Shard(1), Shard(0)], model.fc2.bias.name: [Shard(0), Replicate()]}
    compare("parallelize", model, reference, split(mesh, [Shard(0), Replicate()]), "mean",
            lambda _: opt, placements)
    assert seen and all(m is mesh for m in seen), seen


if __name__ == "__main__":
    {"dp": dp, "mp": mp, "hybrid": hybrid}[sys.argv[1]]()
    print(f"OK rank={dist.get_rank()}", flush=True)
