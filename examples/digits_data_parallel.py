"""Data-parallel training of a digit classifier on scikit-learn's bundled digits (8x8 images).

    pip install scikit-learn   # the digits come with it
    python -m pycoll.launch --nproc_per_node 2 examples/digits_data_parallel.py

Every rank trains on its share of each batch (DistributedBatchSampler); DataParallel averages the
gradients, so all ranks hold the same model. Rank 0 reports the held-out accuracy.
"""
import numpy as np

try:
    from sklearn.datasets import load_digits
except ImportError:
    raise SystemExit("this example trains on scikit-learn's bundled digits: pip install scikit-learn") from None

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
from pycoll.io import DistributedBatchSampler


def main(epochs: int = 30) -> float:
    dist.init_parallel_env()
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    order = np.random.default_rng(0).permutation(len(x))   # the same split on every rank
    test, train = order[:360], order[360:]

    pycoll.seed(0)
    model = pycoll.DataParallel(nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10)))
    optimizer = pycoll.optimizer.Adam(learning_rate=0.003, parameters=model.parameters())
    loss_fn = nn.CrossEntropyLoss()
    sampler = DistributedBatchSampler(train, batch_size=32, shuffle=True)

    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for batch in sampler:
            rows = train[batch]
            loss = loss_fn(model(pycoll.to_tensor(x[rows])), pycoll.to_tensor(y[rows]))
            loss.backward()
            optimizer.step()
            optimizer.clear_grad()

    model.eval()
    with pycoll.no_grad():
        predicted = model(pycoll.to_tensor(x[test])).numpy().argmax(axis=1)
    accuracy = float((predicted == y[test]).mean())
    if dist.get_rank() == 0:
        print(f"digits: {dist.get_world_size()} ranks, {epochs} epochs, held-out accuracy {accuracy:.3f}",
              flush=True)
    return accuracy


if __name__ == "__main__":
    assert main() >= 0.9
