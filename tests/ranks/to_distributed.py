"""dist.to_distributed on 2 ranks (paddle 3.3.1 picks data parallelism alone there): the model and
optimizer come back as they are, the dataloader's batches are split over "dp", and two SGD steps
give the weights of full-batch steps computed with NumPy. Then what is refused by name."""
import numpy as np
from expect import expect

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
from pycoll.io import DataLoader, Dataset

rank = dist.get_rank()  # from the launcher's variables: paddle's example never calls init_parallel_env
rs = np.random.RandomState(0)
X, Y = rs.randn(16, 4).astype("float32"), rs.randn(16, 1).astype("float32")


class Pairs(Dataset):
    def __getitem__(self, i):
        return X[i], Y[i]

    def __len__(self):
        return len(X)


pycoll.seed(1)
model = nn.Linear(4, 1)
w, b = model.weight.numpy().copy(), model.bias.numpy().copy()
opt = pycoll.optimizer.SGD(0.1, parameters=model.parameters())
loader = DataLoader(Pairs(), batch_size=8, shuffle=False)
got_model, got_opt, got_loader = dist.to_distributed(model, opt, loader, 2)
assert got_model is model and got_opt is opt
for step, (x, y) in enumerate(got_loader):
    assert x.shape == [8, 4] and x.placements == [dist.Shard(0)] and x._local_shape == [4, 4], x
    np.testing.assert_array_equal(x._local_value().numpy(), X[8 * step + 4 * rank:8 * step + 4 * rank + 4])
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    opt.clear_grad()
    err = X[8 * step:8 * step + 8] @ w + b - Y[8 * step:8 * step + 8]  # the full batch's step, by hand
    w, b = w - 0.1 * 2 * X[8 * step:8 * step + 8].T @ err / 8, b - 0.1 * 2 * err.mean(0)
assert step == 1
np.testing.assert_allclose(model.weight.numpy(), w, rtol=1e-5, atol=1e-6)
np.testing.assert_allclose(model.bias.numpy(), b, rtol=1e-5, atol=1e-6)

expect(NotImplementedError, ["4 devices", "tensor parallelism", "dist.parallelize"], dist.to_distributed,
       model, opt, loader, 4)
expect(ValueError, ["device_num=3", "2 ranks"], dist.to_distributed, model, opt, loader, 3)
expect(ValueError, ["node_num=2", "single node"], dist.to_distributed, model, opt, loader, 2, 2)
expect(TypeError, ["model", "Layer"], dist.to_distributed, "model", opt, loader, 2)
print(f"OK rank={rank}", flush=True)
