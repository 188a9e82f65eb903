"""paddle's auto-parallel front door: a layer with sharded weights, a loader, a loss and an optimizer
turned into one DistModel by ``dist.to_static``, then trained, evaluated and used for prediction.

    python -m pycoll.launch --nproc_per_node 2 examples/dist_model.py [--steps 8]

This is the usage of Paddle's ``to_static`` documentation, with paddle -> pycoll. On a mesh of two
ranks, ``linear_0``'s weight is split by columns (``Shard(1)``) and ``linear_1``'s by rows
(``Shard(0)``): the two layers compute as a column- and a row-parallel Linear, with one all-reduce
after the second. Each rank prints one line: its losses, the evaluation loss and what
``predict()`` returned (the same on both ranks: the model's output is whole on each).
"""
import argparse

import numpy as np

import pycoll
import pycoll.distributed as dist
from pycoll import nn
from pycoll.distributed import Replicate, Shard  # noqa: F401  (the documentation's imports)

BATCH_SIZE = 4
BATCH_NUM = 4
IMAGE_SIZE = 16
CLASS_NUM = 8


class RandomDataset(pycoll.io.Dataset):
    def __init__(self, images, labels, num_samples):
        self.images = images
        self.labels = labels
        self.num_samples = num_samples

    def __getitem__(self, idx):
        return self.images[idx], self.labels[idx]

    def __len__(self):
        return self.num_samples


class DemoNet(nn.Layer):
    def __init__(self, mesh):
        super().__init__()
        self._mesh = mesh
        self.linear_0 = nn.Linear(IMAGE_SIZE, IMAGE_SIZE)
        self.linear_1 = nn.Linear(IMAGE_SIZE, CLASS_NUM)
        self.relu = nn.ReLU()
        # shard the weights of this layer
        self.linear_0.weight = dist.shard_tensor(self.linear_0.weight, self._mesh, [Shard(1)],
                                                 stop_gradient=False)
        self.linear_1.weight = dist.shard_tensor(self.linear_1.weight, self._mesh, [Shard(0)],
                                                 stop_gradient=False)

    def forward(self, x):
        out = self.linear_0(x)
        out = self.relu(out)
        out = self.linear_1(out)
        return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=BATCH_NUM, help="batches per epoch")
    steps = parser.parse_args().steps

    pycoll.seed(2024)  # every rank builds the same weights and keeps its block
    rng = np.random.default_rng(2024)
    images = rng.random((BATCH_SIZE * steps, IMAGE_SIZE)).astype("float32")
    labels = rng.random((BATCH_SIZE * steps, CLASS_NUM)).astype("float32")
    dataset = RandomDataset(images, labels, BATCH_SIZE * steps)
    loader = pycoll.io.DataLoader(dataset, batch_size=BATCH_SIZE)

    mesh = dist.ProcessMesh([0, 1], dim_names=["x"])
    layer = DemoNet(mesh)
    opt = pycoll.optimizer.SGD(learning_rate=0.1, parameters=layer.parameters())
    loss_fn = nn.MSELoss()
    dist_loader = dist.shard_dataloader(loader, meshes=[mesh])
    dist_model = dist.to_static(layer, dist_loader, loss_fn, opt)

    # training: each call updates the parameters and returns the loss
    dist_model.train()
    losses = []
    for _ in range(2):
        for image, label in dist_loader():
            losses.append(float(dist_model(image, label)))

    # evaluation: each call returns the loss
    dist_model.eval()
    eval_losses = [float(dist_model(image, label)) for image, label in dist_loader()]

    # prediction: each call returns a dict of the outputs, "out0" the first (NumPy arrays, as the
    # losses: the strategy's return_numpy)
    dist_model.predict()
    outs = [dist_model(image) for image, _ in dist_loader()]
    out = outs[0]["out0"]

    print(f"rank {dist.get_rank()}: train loss {losses[0]:.6f} -> {losses[-1]:.6f} over {len(losses)} "
          f"steps, eval loss {np.mean(eval_losses):.6f}, predict out0 shape {list(out.shape)} "
          f"{type(out).__name__}, checksum {float(np.abs(out).sum()):.6f}", flush=True)


if __name__ == "__main__":
    main()
