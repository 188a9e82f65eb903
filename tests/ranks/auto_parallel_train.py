"""A 2-layer MLP through dist.to_static against the same MLP in one process, on every rank.

    dp      2 ranks, mesh [0, 1] ("dp"): weights replicated, each batch split over the ranks;
            then the same with strategy.gradient_merge (k_steps 2), strategy.sharding (stages 2, 3)
            and shard_optimizer(opt, ShardingStage2("dp", mesh))
    hybrid  4 ranks, mesh [[0, 1], [2, 3]] ("dp" x "mp"): fc1's weight Shard(1), fc2's Shard(0)
            along "mp", each batch split along "dp"

Every step's loss must equal the single-process loss of the whole batch (rtol 1e-5), and so must
the parameters after training; eval() returns the single-process loss and changes no parameter;
predict() returns the single-process outputs (this rank's rows as NumPy; with return_numpy
False distributed tensors, whole after unshard); the
programs list the collectives the plan inserts; state_dict()/set_state_dict() round-trip.
"""
import sys

import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
from pycoll.distributed import Replicate, Shard
from pycoll.distributed.fleet.gradient_merge import GradientMergeOptimizer

from expect import expect

IN, HIDDEN, OUT, BATCH, SAMPLES = 8, 16, 4, 8, 32
TOL = dict(rtol=1e-5, atol=1e-6)


class Data(pycoll.io.Dataset):
    def __init__(self):
        rng = np.random.default_rng(3)
        self.x = rng.standard_normal((SAMPLES, IN)).astype(np.float32)
        self.y = rng.standard_normal((SAMPLES, OUT)).astype(np.float32)

    def __getitem__(self, i):
        return self.x[i], self.y[i]

    def __len__(self):
        return SAMPLES


class MLP(nn.Layer):
    def __init__(self, mesh=None):
        super().__init__()
        self.fc1 = nn.Linear(IN, HIDDEN)
        self.fc2 = nn.Linear(HIDDEN, OUT)
        if mesh is not None:  # weights split along "mp": fc1 by columns, fc2 by rows
            self.fc1.weight = dist.shard_tensor(self.fc1.weight, mesh, [Replicate(), Shard(1)], stop_gradient=False)
            self.fc2.weight = dist.shard_tensor(self.fc2.weight, mesh, [Replicate(), Shard(0)], stop_gradient=False)

    def forward(self, x):
        return self.fc2(pycoll.tanh(self.fc1(x)))


def whole(p):
    return dist.unshard_dtensor(p).numpy() if p.is_dist() else p.numpy()


def pair(mesh, sharded, optimizer, strategy=None, wrap_reference=None):
    """(DistModel, loaders, reference, reference optimizer) built from the same seed."""
    pycoll.seed(11)
    layer = MLP(mesh if sharded else None)
    pycoll.seed(11)
    reference = MLP()
    opt = optimizer(layer.parameters())
    ref_opt = optimizer(reference.parameters())
    if wrap_reference is not None:
        ref_opt = wrap_reference(ref_opt)
    loader = pycoll.io.DataLoader(Data(), batch_size=BATCH)
    dist_loader = dist.shard_dataloader(loader, meshes=[mesh], shard_dims="dp")
    model = dist.to_static(layer, dist_loader, nn.MSELoss(), opt, strategy=strategy)
    return model, layer, loader, dist_loader, reference, ref_opt


def train_like_one_process(model, layer, loader, dist_loader, reference, ref_opt, epochs=2, ref_loss_fn=None):
    """Every step's loss and then the parameters equal the reference's, trained on the whole batch
    with ``ref_loss_fn`` (MSELoss by default)."""
    assert model._mode == "train"
    ref_loss_fn = ref_loss_fn or nn.MSELoss()
    for epoch in range(epochs):
        for step, ((x, y), (dx, dy)) in enumerate(zip(loader, dist_loader)):
            assert dx.shape == [BATCH, IN] and dx._local_shape[0] == BATCH // dist_loader.mesh_and_axis()[0].get_dim_size("dp")
            loss = model(dx, dy)
            ref_loss = ref_loss_fn(reference(x), y)
            ref_loss.backward()
            ref_opt.step()
            ref_opt.clear_grad()
            np.testing.assert_allclose(float(loss), float(ref_loss), err_msg=f"epoch {epoch} step {step}", **TOL)
    for (name, p), q in zip(layer.named_parameters(), reference.parameters()):
        np.testing.assert_allclose(whole(p), q.numpy(), err_msg=f"parameter {name}", **TOL)


def eval_and_predict(model, layer, loader, dist_loader, reference, mesh):
    before = [p.numpy().copy() for p in layer.parameters()]
    model.eval()
    for (x, y), (dx, dy) in zip(loader, dist_loader):
        with pycoll.no_grad():
            ref_loss = nn.MSELoss()(reference(x), y)
        np.testing.assert_allclose(float(model(dx, dy)), float(ref_loss), **TOL)
    for p, b in zip(layer.parameters(), before):
        np.testing.assert_array_equal(p.numpy(), b, err_msg="eval() changed a parameter")
    model.predict()
    dp_rank, dp = mesh.coordinate()[0], mesh.get_dim_size("dp")
    for (x, _), (dx, dy) in zip(loader, dist_loader):
        out = model(dx)
        assert list(out) == ["out0"], out
        with pycoll.no_grad():
            want = reference(x).numpy()
        rows = BATCH // dp
        got = out["out0"]  # this rank's rows as NumPy: the strategy's return_numpy
        assert isinstance(got, np.ndarray) and got.shape == (rows, OUT), got
        np.testing.assert_allclose(got, want[dp_rank * rows:(dp_rank + 1) * rows], **TOL)
    expect(ValueError, ["predict", "labels"], model, dx, dy)


def check_programs(model, expected, absent, whole_shapes):
    text = str(model.dist_main_program("train"))
    for word in expected:
        assert word in text, f"{word!r} not in\n{text}"
    for word in absent:
        assert word not in text, f"{word!r} in\n{text}"
    serial = model.serial_main_program("train")
    assert not serial.collectives() and all(w not in str(serial) for w in ("c_identity", "mp_allreduce")), serial
    for word in whole_shapes:
        assert word in str(serial), f"{word!r} not in\n{serial}"
    assert "dp" not in str(model.serial_startup_program())
    assert "predict" in str(model.dist_main_program("predict")) and "eval" in str(model.dist_main_program("eval"))


def check_state_round_trip(model, layer, loader, dist_loader, mode):
    saved = {k: (dist.unshard_dtensor(v) if v.is_dist() else v).numpy().copy()
             for k, v in model.state_dict(mode).items()}
    model.train()
    for (dx, dy) in dist_loader:
        model(dx, dy)
        break
    model.set_state_dict(saved)  # whole values: each rank takes its piece
    for k, v in model.state_dict(mode).items():
        np.testing.assert_array_equal(whole(v), saved[k], err_msg=k)
    expect(ValueError, ["nope"], model.set_state_dict, {"nope": np.zeros(3)})


def data_parallel():
    mesh = dist.ProcessMesh([0, 1], dim_names=["dp"])
    adam = lambda params: pycoll.optimizer.Adam(learning_rate=0.01, parameters=params)  # noqa: E731
    built = pair(mesh, False, adam)
    train_like_one_process(*built)
    eval_and_predict(*built[:5], mesh)
    check_programs(built[0], ["gradient_bucket", "all_reduce(avg) over 'dp' [0, 1]", "adam("],
                   ["c_identity", "c_concat"], ["input0[8, 8]", "fc1.weight[8, 16]"])
    check_state_round_trip(*built[:4], "all")

    strategy = dist.Strategy({"gradient_merge": {"enable": True, "k_steps": 2}})
    sgd = lambda params: pycoll.optimizer.SGD(learning_rate=0.1, parameters=params)  # noqa: E731
    train_like_one_process(*pair(mesh, False, sgd, strategy, lambda o: GradientMergeOptimizer(o, 2, True)))
    for stage in (2, 3):
        strategy = dist.Strategy()
        strategy.sharding.enable = True
        strategy.sharding.stage = stage
        built = pair(mesh, False, adam, strategy)
        train_like_one_process(*built)
        text = str(built[0].dist_main_program())
        assert "reduce_scatter(avg) over 'dp'" in text and "sharding: every parameter" in text, text
    # paddle's intermediate API: the stage given to shard_optimizer becomes the DistModel's sharding
    staged = lambda params: dist.shard_optimizer(adam(params), dist.ShardingStage2("dp", mesh))  # noqa: E731
    built = pair(mesh, False, staged, wrap_reference=lambda o: o._inner_opt)
    train_like_one_process(*built)
    assert "reduce_scatter(avg) over 'dp'" in str(built[0].dist_main_program())
    strategy = dist.Strategy({"sharding": {"enable": True, "degree": 4}})
    expect(ValueError, ["strategy.sharding.degree=4", "2 ranks"], pair, mesh, False, adam, strategy)
    summed_losses(mesh)
    dict_outputs(mesh)
    batch_norm(mesh)
    reshards_in_forward(mesh)


class Temperature(nn.Layer):
    """A loss with a learnable parameter of its own, in and out of the batch's terms."""

    def __init__(self):
        super().__init__()
        self.t = self.create_parameter([1], default_initializer=nn.initializer.Constant(0.5))

    def forward(self, out, y):
        return (((out - y) ** 2) * self.t).sum() + (self.t * self.t).sum()


def summed_losses(mesh):
    """A loss summed over the batch is the whole batch's sum, as paddle's DistModel computes it on
    distributed tensors (it was each rank's sum averaged: half the loss and half the gradient),
    for a loss layer and a plain function alike; a term that uses no rows (a penalty on the
    weights, a parameter of the loss) keeps its own gradient (a first fix doubled it)."""
    sgd = lambda params: pycoll.optimizer.SGD(learning_rate=0.01, parameters=params)  # noqa: E731
    losses = [lambda layer: nn.MSELoss(reduction="sum"),
              lambda layer: lambda out, y: ((out - y) ** 2).sum(),
              lambda layer: lambda out, y: ((out - y) ** 2).mean() + (layer.fc1.weight ** 2).sum(),
              lambda layer: Temperature()]
    for make_loss in losses:
        pycoll.seed(11)
        layer = MLP()
        pycoll.seed(11)
        reference = MLP()
        loss_fn, ref_loss_fn = make_loss(layer), make_loss(reference)
        extra = lambda fn: list(fn.parameters()) if isinstance(fn, nn.Layer) else []  # noqa: E731
        opt = sgd(layer.parameters() + extra(loss_fn))
        ref_opt = sgd(reference.parameters() + extra(ref_loss_fn))
        loader = pycoll.io.DataLoader(Data(), batch_size=BATCH)
        dist_loader = dist.shard_dataloader(loader, meshes=[mesh], shard_dims="dp")
        model = dist.to_static(layer, dist_loader, loss_fn, opt)
        train_like_one_process(model, layer, loader, dist_loader, reference, ref_opt, 1, ref_loss_fn)
        for p, q in zip(extra(loss_fn), extra(ref_loss_fn)):
            np.testing.assert_allclose(p.numpy(), q.numpy(), err_msg=f"the loss's parameter {q.name}", **TOL)


class Named(nn.Layer):
    """An MLP whose forward returns a dict."""

    def __init__(self):
        super().__init__()
        self.mlp = MLP()

    def forward(self, x):
        return {"logits": self.mlp(x), "features": x}


def dict_outputs(mesh):
    """A model returning a dict: its loss (summed) is the whole batch's, as for a tensor output
    (it was taken as a mean, with a warning), and predict() gives its values flattened by sorted
    key, as paddle's engine flattens them (it crashed)."""
    pycoll.seed(11)
    layer = Named()
    pycoll.seed(11)
    reference = Named()
    loss_fn = lambda out, y: ((out["logits"] - y) ** 2).sum()  # noqa: E731
    loader = pycoll.io.DataLoader(Data(), batch_size=BATCH)
    dist_loader = dist.shard_dataloader(loader, meshes=[mesh], shard_dims="dp")
    model = dist.to_static(layer, dist_loader, loss_fn, strategy=dist.Strategy({"return_numpy": False}))
    for (x, y), (dx, dy) in zip(loader, dist_loader):
        with pycoll.no_grad():
            want = reference(x)
            np.testing.assert_allclose(float(model(dx, dy)), float(loss_fn(want, y)), **TOL)
    model.predict()
    out = model(dx)
    assert list(out) == ["out0", "out1"], out
    np.testing.assert_allclose(dist.unshard_dtensor(out["out0"]).numpy(), want["features"].numpy(), **TOL)
    np.testing.assert_allclose(dist.unshard_dtensor(out["out1"]).numpy(), want["logits"].numpy(), **TOL)


class Normed(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1, self.norm, self.fc2 = nn.Linear(IN, HIDDEN), nn.BatchNorm1D(HIDDEN), nn.Linear(HIDDEN, OUT)

    def forward(self, x):
        return self.fc2(pycoll.tanh(self.norm(self.fc1(x))))


def trained_by_sgd_as_one_process(mesh, make_layer, make_reference):
    """A DistModel of ``make_layer()`` trained by SGD for an epoch, each step's loss and the
    parameters against ``make_reference()`` in one process (the same seed); returns both layers."""
    sgd = lambda params: pycoll.optimizer.SGD(learning_rate=0.1, parameters=params)  # noqa: E731
    pycoll.seed(11)
    layer = make_layer()
    pycoll.seed(11)
    reference = make_reference()
    ref_opt = sgd(reference.parameters())
    loader = pycoll.io.DataLoader(Data(), batch_size=BATCH)
    dist_loader = dist.shard_dataloader(loader, meshes=[mesh], shard_dims="dp")
    model = dist.to_static(layer, dist_loader, nn.MSELoss(), sgd(layer.parameters()))
    train_like_one_process(model, layer, loader, dist_loader, reference, ref_opt, 1)
    return layer, reference


def batch_norm(mesh):
    """A BatchNorm in a DistModel normalises by the whole batch's statistics (paddle's rule makes
    the batch whole; it used each rank's rows, and the ranks' running statistics drifted apart)."""
    layer, reference = trained_by_sgd_as_one_process(mesh, Normed, Normed)
    for name in ("_mean", "_variance"):  # the running statistics too
        np.testing.assert_allclose(getattr(layer.norm, name).numpy(), getattr(reference.norm, name).numpy(),
                                   err_msg=name, **TOL)


class Annotated(MLP):
    """The MLP with paddle's sequence-parallel annotations in its forward: reshards of its input
    and hidden state (in a DistModel, hints its plan has taken: the values stay where they are)."""

    def __init__(self, mesh):
        super().__init__()
        self.mesh = mesh

    def forward(self, x):
        x = dist.reshard(x, self.mesh, [Shard(1)])
        hidden = dist.reshard(pycoll.tanh(self.fc1(x)), self.mesh, [Replicate()])
        return self.fc2(hidden)


def reshards_in_forward(mesh):
    trained_by_sgd_as_one_process(mesh, lambda: Annotated(mesh), MLP)


def hybrid():
    mesh = dist.ProcessMesh([[0, 1], [2, 3]], dim_names=["dp", "mp"])
    adam = lambda params: pycoll.optimizer.Adam(learning_rate=0.01, parameters=params)  # noqa: E731
    built = pair(mesh, True, adam)
    model = built[0]
    train_like_one_process(*built)
    eval_and_predict(*built[:5], mesh)
    mp = "[0, 1]" if dist.get_rank() < 2 else "[2, 3]"
    dp = "[0, 2]" if dist.get_rank() % 2 == 0 else "[1, 3]"
    # after the first step fc1's block of columns feeds fc2 directly: no gather, no split
    check_programs(model, [f"c_identity", f"mp_allreduce", f"all_reduce over 'mp' {mp}",
                           f"all_gather(last dim) over 'mp' {mp}", f"all_reduce(avg) over 'dp' {dp}",
                           "fc1.weight[8, 8]", "fc2.weight[8, 4]"],
                   ["c_concat", "c_split(tmp"], ["fc1.weight[8, 16]", "fc2.weight[16, 4]", "input0[8, 8]"])
    opt_state = {k: v for k, v in model.state_dict("opt").items() if k.startswith(built[1].fc1.weight.name)}
    assert opt_state and all(v.placements == [Replicate(), Shard(1)] for v in opt_state.values()
                             if v.shape == [IN, HIDDEN]), opt_state
    check_state_round_trip(*built[:4], "all")  # the optimizer state of split weights too
    strategy = dist.Strategy({"sharding": {"enable": True}})
    expect(ValueError, ["strategy.sharding", "sharded weights"], pair, mesh, True, adam, strategy)


if __name__ == "__main__":
    {"dp": data_parallel, "hybrid": hybrid}[sys.argv[1]]()
    print(f"OK rank={dist.get_rank()}", flush=True)
