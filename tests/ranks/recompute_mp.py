"""fleet's model-parallel extras and recompute on 2 ranks.

* ``dp``: DataParallel over a model whose blocks are recomputed gives, step by step, the gradients
  and parameters of the same model run plainly (with and without ``find_unused_parameters``,
  dropout inside the blocks).
* ``mp``: after ``fleet.init`` with mp_degree=2 and a ``tensor_init_seed``, global draws
  agree across the ranks and the tracker's differ; ``ParallelCrossEntropy`` on class-split logits
  gives NumPy's softmax cross-entropy of the whole logits, and the gradient of each rank's block;
  a ColumnParallelLinear -> ParallelCrossEntropy model gets the gradients of the unsplit one; and
  ``recompute_hybrid`` of a block with dropout under the tracker matches the block run plainly.
"""
import sys

import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
from expect import expect
from pycoll.distributed import fleet
from pycoll.distributed.fleet.meta_parallel import ColumnParallelLinear, ParallelCrossEntropy, get_rng_state_tracker
from pycoll.distributed.fleet.recompute import recompute_hybrid
from pycoll.distributed.fleet.utils import recompute


class Blocks(nn.Layer):
    def __init__(self, recomputed):
        super().__init__()
        self.blocks = nn.LayerList([nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.3), nn.ReLU()) for _ in range(3)])
        self.unused = nn.Linear(4, 4)  # no step uses it
        self.head = nn.Linear(4, 1)
        self.recomputed = recomputed

    def forward(self, x):
        x.stop_gradient = False
        for b in self.blocks:
            x = recompute(b, x) if self.recomputed else b(x)
        return self.head(x)


def data_parallel(rank):
    for find_unused in (False, True):
        runs = []
        for recomputed in (False, True):
            pycoll.seed(11)
            model = pycoll.DataParallel(Blocks(recomputed), find_unused_parameters=find_unused)
            opt = pycoll.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
            trace = []
            pycoll.seed(100 + rank)  # each rank's own batches and dropout masks
            for _ in range(3):
                loss = (model(pycoll.rand([6, 4])) ** 2).mean()
                loss.backward()
                trace.append([None if p.grad is None else p.grad.numpy().copy() for p in model.parameters()])
                opt.step()
                opt.clear_grad()
            runs.append((trace, [p.numpy() for p in model.parameters()]))
        (plain, plain_params), (again, again_params) = runs
        for step, (g, h) in enumerate(zip(again, plain)):
            for a, b in zip(g, h):
                assert (a is None) == (b is None), f"step {step}: a gradient is missing on one side"
                if a is not None:
                    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8, err_msg=f"find_unused={find_unused}")
        for a, b in zip(again_params, plain_params):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8)
        theirs = []
        dist.all_gather(theirs, pycoll.to_tensor(again_params[0]))
        np.testing.assert_array_equal(theirs[0].numpy(), theirs[1].numpy())  # the ranks agree


def softmax_cross_entropy(logits, labels, ignore_index):
    shifted = logits - logits.max(axis=-1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    kept = labels != ignore_index
    loss = -np.take_along_axis(logp, np.where(kept, labels, 0)[:, None], axis=-1)[:, 0] * kept
    grad = np.exp(logp)
    grad[np.arange(len(labels)), np.where(kept, labels, 0)] -= 1
    return loss, grad * kept[:, None]


def model_parallel(rank):
    strategy = fleet.DistributedStrategy()
    strategy.hybrid_configs = {"dp_degree": 1, "mp_degree": 2}
    strategy.tensor_parallel_configs = {"tensor_init_seed": 42}  # fleet.init: model_parallel_random_seed(42)
    fleet.init(is_collective=True, strategy=strategy)
    mp = fleet.get_hybrid_communicate_group().get_model_parallel_group()
    tracker = get_rng_state_tracker()
    alike = pycoll.rand([4]).numpy()
    with tracker.rng_state():
        own = pycoll.rand([4]).numpy()
    gathered = []
    dist.all_gather(gathered, pycoll.to_tensor(np.stack([alike, own])))
    np.testing.assert_array_equal(gathered[0].numpy()[0], gathered[1].numpy()[0])
    assert not np.array_equal(gathered[0].numpy()[1], gathered[1].numpy()[1]), "tracker draws must differ by mp rank"
    np.testing.assert_array_equal(own, np.random.default_rng(42 + 1 + rank).random(4, dtype=np.float32))

    # ParallelCrossEntropy against the whole logits, float64, with ignored labels and both label shapes
    rng = np.random.default_rng(5)
    whole = rng.standard_normal((7, 10))
    labels = rng.integers(0, 10, 7)
    labels[[1, 4]] = -100
    expected_loss, expected_grad = softmax_cross_entropy(whole, labels, -100)
    for label in (labels, labels[:, None]):
        block = pycoll.to_tensor(whole[:, rank * 5:(rank + 1) * 5].copy(), stop_gradient=False)
        loss = ParallelCrossEntropy()(block, pycoll.to_tensor(label))
        assert loss.shape == [7, 1], loss.shape
        np.testing.assert_allclose(loss.numpy()[:, 0], expected_loss, rtol=1e-12)
        (loss * pycoll.to_tensor(np.arange(1.0, 8.0)[:, None])).sum().backward()
        np.testing.assert_allclose(block.grad.numpy(), (expected_grad * np.arange(1.0, 8.0)[:, None])
                                   [:, rank * 5:(rank + 1) * 5], rtol=1e-10, atol=1e-14)
    expect(ValueError, ["label holds ids in [0, 12]", "[0, 10)"], ParallelCrossEntropy(),
           pycoll.to_tensor(whole[:, :5].copy()), pycoll.to_tensor(np.array([0, 1, 2, 3, 4, 5, 12])))
    expect(ValueError, ["label has shape [7, 2]"], ParallelCrossEntropy(),
           pycoll.to_tensor(whole[:, :5].copy()), pycoll.to_tensor(np.zeros((7, 2), np.int64)))

    # a column-parallel head trained through ParallelCrossEntropy, against the unsplit head
    pycoll.seed(9)
    head = ColumnParallelLinear(6, 10, has_bias=True, gather_output=False)
    pycoll.seed(9)
    ref = nn.Linear(6, 10)
    x = pycoll.to_tensor(rng.standard_normal((7, 6)).astype(np.float32))
    ParallelCrossEntropy()(head(x), pycoll.to_tensor(labels)).mean().backward()
    pycoll.nn.functional.cross_entropy(ref(x), pycoll.to_tensor(labels[:, None]), reduction="none").mean().backward()
    np.testing.assert_allclose(head.weight.grad.numpy(), ref.weight.grad.numpy()[:, rank * 5:(rank + 1) * 5],
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(head.bias.grad.numpy(), ref.bias.grad.numpy()[rank * 5:(rank + 1) * 5],
                               rtol=1e-5, atol=1e-6)

    # recompute_hybrid: dropout under the tracker, drawn again alike in backward
    drop = nn.Dropout(0.5)
    lin = ColumnParallelLinear(6, 8, gather_output=False)

    def block(v):
        with tracker.rng_state():
            return drop(lin(v))
    grads = []
    saved = tracker.get_states_tracker()
    for recomputed in (False, True):
        tracker.set_states_tracker(saved)  # the same masks for both runs
        v = x.detach()
        v.stop_gradient = False
        out = recompute_hybrid({"mp_group": mp}, block, v) if recomputed else block(v)
        out.sum().backward()
        grads.append((out.numpy(), v.grad.numpy(), lin.weight.grad.numpy().copy()))
        lin.clear_gradients()
    for a, b in zip(*grads):
        np.testing.assert_array_equal(a, b)


def main():
    dist.init_parallel_env()
    rank = dist.get_rank()
    {"dp": data_parallel, "mp": model_parallel}[sys.argv[1]](rank)
    print(f"OK rank={rank}", flush=True)


if __name__ == "__main__":
    main()
